//! Polling the operator's batches: blocking, non-blocking, with a timeout, or as an iterator; and the
//! accounting every poll (also the async ones in `futures`) shares.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_channel::{RecvTimeoutError, TryRecvError};

use super::handle::VideoInput;
use super::worker::Item;
use crate::assembly::batch::Batch;
use crate::error::{Error, Result};

impl VideoInput {
    /// The next batch.
    ///
    /// Blocking mode (the default): waits until a batch is ready; after [`close`](Self::close) and the last
    /// batch, `Ok(None)`. Non-blocking mode: when nothing is fed and nothing is ready, returns
    /// [`Error::NoData`] at once; when videos are fed but still decoding, waits for their next result.
    ///
    /// A video that fails gives its batches decoded so far, then one `Err(Error::Video { .. })`; the next
    /// poll goes on with the next video.
    pub fn next_batch(&self) -> Result<Option<Batch>> {
        loop {
            let item = if !self.config.blocking && !self.work_pending() {
                match self.out.try_recv() {
                    Ok(item) => item,
                    Err(_) if self.is_closed() => return Ok(None),
                    Err(_) => return Err(Error::NoData),
                }
            } else {
                match self.out.recv() {
                    Ok(item) => item,
                    Err(_) => return self.disconnected(),
                }
            };
            if let Some(result) = self.take(item) {
                return result;
            }
        }
    }

    /// The next batch if one is ready now; never waits. `Ok(None)` after close and the last batch;
    /// [`Error::NotReady`] while videos are still decoding; [`Error::NoData`] when nothing is fed.
    pub fn try_next_batch(&self) -> Result<Option<Batch>> {
        loop {
            let item = match self.out.try_recv() {
                Ok(item) => item,
                Err(TryRecvError::Disconnected) => return self.disconnected(),
                Err(TryRecvError::Empty) if self.work_pending() => return Err(Error::NotReady),
                Err(TryRecvError::Empty) if self.is_closed() => return Ok(None),
                Err(TryRecvError::Empty) => return Err(Error::NoData),
            };
            if let Some(result) = self.take(item) {
                return result;
            }
        }
    }

    /// Like blocking [`next_batch`](Self::next_batch), waiting at most `timeout`: [`Error::Timeout`] when no
    /// batch came in time.
    pub fn next_batch_timeout(&self, timeout: Duration) -> Result<Option<Batch>> {
        let deadline = Instant::now() + timeout;
        loop {
            let item = match self.out.recv_deadline(deadline) {
                Ok(item) => item,
                Err(RecvTimeoutError::Disconnected) => return self.disconnected(),
                Err(RecvTimeoutError::Timeout) => return Err(Error::Timeout(timeout)),
            };
            if let Some(result) = self.take(item) {
                return result;
            }
        }
    }

    /// An iterator over batches, calling [`next_batch`](Self::next_batch) until `Ok(None)`. In non-blocking
    /// mode it also ends when nothing more is fed ([`Error::NoData`]). Video errors are yielded as `Err` and
    /// iteration goes on; any other error is yielded once and ends the iteration.
    pub fn iter(&self) -> Batches<'_> {
        Batches {
            input: self,
            done: false,
        }
    }

    /// Fed videos not fully delivered yet.
    pub(super) fn work_pending(&self) -> bool {
        self.queued_videos() > 0
    }

    /// Accounts for a message; `None` for an end-of-video marker (nothing to return: poll again).
    pub(super) fn take(&self, item: Item) -> Option<Result<Option<Batch>>> {
        if item.ended > 0 {
            self.finished.fetch_add(item.ended, Ordering::AcqRel);
        }
        self.depleted.store(item.ended > 0, Ordering::Release);
        item.result.map(|r| {
            r.map(|mut batch| {
                batch.delivered = Some(Instant::now());
                Some(batch)
            })
        })
    }

    /// The thread has ended: normally only after close, once everything was delivered.
    pub(super) fn disconnected(&self) -> Result<Option<Batch>> {
        if self.shared.exited_cleanly.load(Ordering::Acquire) && !self.work_pending() {
            Ok(None)
        } else {
            Err(Error::WorkerDied(
                "the decoding thread ended before delivering every video".into(),
            ))
        }
    }
}

/// Iterator over an operator's batches; see [`VideoInput::iter`].
pub struct Batches<'a> {
    input: &'a VideoInput,
    /// Set after an error that is not one video's: nothing more can come.
    done: bool,
}

impl Iterator for Batches<'_> {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.input.next_batch() {
            Ok(Some(batch)) => Some(Ok(batch)),
            Ok(None) | Err(Error::NoData) => None,
            Err(e @ Error::Video { .. }) => Some(Err(e)),
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<'a> IntoIterator for &'a VideoInput {
    type Item = Result<Batch>;
    type IntoIter = Batches<'a>;

    fn into_iter(self) -> Batches<'a> {
        self.iter()
    }
}
