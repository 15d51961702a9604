//! The mux's async surface: futures for the next event and for readiness, and the events as a stream; each
//! polls the [`Mux`] as its blocking twin does, registering its task's waker with the mux's.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::{Mux, MuxEvent};
use crate::error::Result;

/// The future of [`Mux::next_event_async`].
#[must_use = "futures do nothing unless polled"]
pub struct NextEvent<'a> {
    pub(super) mux: &'a Mux,
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
    pub(super) mux: &'a Mux,
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
    pub(super) mux: &'a Mux,
}

impl futures_core::Stream for MuxEvents<'_> {
    type Item = Result<MuxEvent>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.mux.poll_event(cx).map(Result::transpose)
    }
}
