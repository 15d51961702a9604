//! The mux's async surface: futures for the next event and for readiness, and the events as a stream; each
//! polls the [`Mux`] as its blocking twin does, registering its task's waker with the mux's.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use super::{look, Look, Mux, MuxEvent, State, Step};
use crate::error::Result;

impl Mux {
    /// A future that completes when a poll would not wait: a batch is full or at its deadline, a camera's end
    /// is due, or nothing more will come. It takes nothing: for bridges to other event loops, which then take
    /// the event with [`try_next_event`](Self::try_next_event) where their own cancellation cannot
    /// interleave (the Python package does so on the asyncio loop). Another poller may take it first.
    pub fn ready(&self) -> MuxReady<'_> {
        MuxReady { mux: self }
    }

    /// [`next_event`](Self::next_event) as a future: it parks the task, not a thread (a clock thread wakes it
    /// at a batch's deadline). Cancel-safe: an event is taken only in the poll that returns it.
    pub fn next_event_async(&self) -> NextEvent<'_> {
        NextEvent { mux: self }
    }

    /// The events as a [`futures_core::Stream`], ending once closed and every camera has ended.
    pub fn events(&self) -> MuxEvents<'_> {
        MuxEvents { mux: self }
    }

    fn poll_event(&self, cx: &mut Context<'_>) -> Poll<Result<Option<MuxEvent>>> {
        let mut state = self.shared.state.lock();
        match self.poll_state(&mut state) {
            Step::Event(event) => {
                drop(state);
                self.shared.notify();
                Poll::Ready(Ok(event))
            }
            Step::Until(at) => self.park(&mut state, cx, Some(at)),
            Step::Wait => self.park(&mut state, cx, None),
        }
    }

    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.shared.state.lock();
        match look(&state, Instant::now()) {
            Look::Give => Poll::Ready(()),
            Look::Until(at) => self.park(&mut state, cx, Some(at)),
            Look::Wait => self.park(&mut state, cx, None),
        }
    }

    /// Registers the task for a wake-up on a change, and with the clock at `at` (a batch's deadline).
    fn park<T>(&self, state: &mut State, cx: &mut Context<'_>, at: Option<Instant>) -> Poll<T> {
        self.shared.wakers.register(cx.waker());
        if let Some(at) = at {
            if state.wake_at.is_none_or(|t| at < t) {
                state.wake_at = Some(at);
                self.shared.clock.notify_all();
            }
        }
        Poll::Pending
    }
}

/// The future of [`Mux::next_event_async`].
#[must_use = "futures do nothing unless polled"]
pub struct NextEvent<'a> {
    mux: &'a Mux,
}

impl Future for NextEvent<'_> {
    type Output = Result<Option<MuxEvent>>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.mux.poll_event(cx)
    }
}

/// The future of [`Mux::ready`].
#[must_use = "futures do nothing unless polled"]
pub struct MuxReady<'a> {
    mux: &'a Mux,
}

impl Future for MuxReady<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.mux.poll_ready(cx)
    }
}

/// The stream of [`Mux::events`].
#[must_use = "streams do nothing unless polled"]
pub struct MuxEvents<'a> {
    mux: &'a Mux,
}

impl futures_core::Stream for MuxEvents<'_> {
    type Item = Result<MuxEvent>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.mux.poll_event(cx).map(Result::transpose)
    }
}
