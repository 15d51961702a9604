//! The operator's async surface: futures for the next batch, readiness and room in the feed queue, and the
//! batches as a stream; each registers its task's waker with the operator's signals.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::thread::JoinHandle;

use crossbeam_channel::TryRecvError;

use super::handle::VideoInput;
use crate::assembly::batch::Batch;
use crate::error::{Error, Result};

impl VideoInput {
    /// The next batch, as a future: like blocking [`next_batch`](Self::next_batch) (it waits for feeds in
    /// both blocking and non-blocking mode), but it parks the task, not the thread, and wakes it when the
    /// decoding thread sends a batch or an error, or when the input is closed. No thread is blocked and no
    /// polling loop runs while it waits; it works on any executor (tokio's current-thread and multi-thread
    /// runtimes included).
    ///
    /// Cancel-safe: a batch is taken from the queue only in the poll that returns it, so dropping a pending
    /// future (e.g. in `tokio::select!` or on a timeout) loses nothing.
    pub fn next_batch_async(&self) -> NextBatch<'_> {
        NextBatch { input: self }
    }

    /// A future that completes when a poll would not wait: a batch or a video's error is ready, or nothing
    /// more will come (the input is closed and every video delivered, or the decoding thread ended). It takes
    /// nothing: for bridges to other event loops, which then take the batch with
    /// [`try_next_batch`](Self::try_next_batch) where their own cancellation cannot interleave (the Python
    /// package's `next_batch_async` does so on the asyncio loop). Another poller may take the batch first.
    pub fn ready(&self) -> Ready<'_> {
        Ready { input: self }
    }

    /// A future that completes when [`try_feed`](Self::try_feed) of a video of `bytes` bytes would not find the
    /// queue full, or the input is closed (a feed would fail at once). It queues nothing; see
    /// [`ready`](Self::ready) for what it is for. Another feeder may take the room first.
    pub fn feed_ready(&self, bytes: usize) -> FeedReady<'_> {
        FeedReady { input: self, bytes }
    }

    /// The batches as a [`futures_core::Stream`] of `Result<Batch>`, ending after close and the last batch.
    /// Video errors are items and the stream goes on; any other error is yielded once and ends it. Cancel-safe
    /// like [`next_batch_async`](Self::next_batch_async).
    pub fn batches(&self) -> BatchStream<'_> {
        BatchStream {
            input: self,
            done: false,
        }
    }

    /// One async poll: a message if there is one, the end if there is none to come, else `Pending` with the
    /// task registered for a wake-up.
    pub(super) fn poll_next_batch(&self, cx: &mut Context<'_>) -> Poll<Result<Option<Batch>>> {
        let mut attempt = 0;
        while attempt < 2 {
            match self.out.try_recv() {
                Ok(item) => match self.take(item) {
                    Some(result) => return Poll::Ready(result),
                    // An end-of-video marker: look again.
                    None => continue,
                },
                Err(TryRecvError::Disconnected) => return Poll::Ready(self.disconnected()),
                Err(TryRecvError::Empty) if self.is_closed() && !self.work_pending() => {
                    return Poll::Ready(Ok(None))
                }
                Err(TryRecvError::Empty) if attempt == 0 => {
                    // Register, then look again: a message sent in between is not missed.
                    self.shared.register(cx.waker());
                }
                Err(TryRecvError::Empty) => {}
            }
            attempt += 1;
        }
        Poll::Pending
    }

    /// Whether a poll would not wait now: a message is ready, everything was delivered after close, or the
    /// decoding thread ended.
    pub(super) fn would_not_wait(&self) -> bool {
        !self.out.is_empty()
            || (self.is_closed() && !self.work_pending())
            || self.worker.as_ref().is_none_or(JoinHandle::is_finished)
    }

    pub(super) fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.would_not_wait() {
            return Poll::Ready(());
        }
        self.shared.register(cx.waker());
        // A message sent between the check and the registration is not missed.
        if self.would_not_wait() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// The future of [`VideoInput::next_batch_async`].
#[must_use = "futures do nothing unless polled"]
pub struct NextBatch<'a> {
    input: &'a VideoInput,
}

impl Future for NextBatch<'_> {
    type Output = Result<Option<Batch>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.input.poll_next_batch(cx)
    }
}

/// The future of [`VideoInput::ready`].
#[must_use = "futures do nothing unless polled"]
pub struct Ready<'a> {
    input: &'a VideoInput,
}

impl Future for Ready<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.input.poll_ready(cx)
    }
}

/// The future of [`VideoInput::feed_ready`].
#[must_use = "futures do nothing unless polled"]
pub struct FeedReady<'a> {
    input: &'a VideoInput,
    bytes: usize,
}

impl Future for FeedReady<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.input.feed.poll_room(cx, self.bytes)
    }
}

/// The stream of [`VideoInput::batches`].
#[must_use = "streams do nothing unless polled"]
pub struct BatchStream<'a> {
    input: &'a VideoInput,
    done: bool,
}

impl futures_core::Stream for BatchStream<'_> {
    type Item = Result<Batch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        let item = match self.input.poll_next_batch(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(Some(batch))) => Some(Ok(batch)),
            Poll::Ready(Ok(None)) => None,
            Poll::Ready(Err(e)) => Some(Err(e)),
        };
        if !matches!(item, Some(Ok(_)) | Some(Err(Error::Video { .. }))) {
            self.done = true;
        }
        Poll::Ready(item)
    }
}
