//! Signals between the operator's handle, its decoding thread and its live videos: [`Signals`] (stop, exited,
//! wake the async pollers), and [`WakerSet`], the set of async tasks waiting for one event (a batch sent, room in
//! a queue): each registers its waker, and the event wakes them all. Used by the output polls, the feed queue,
//! live videos and the worker. A leaf module.

use std::sync::atomic::AtomicBool;
use std::task::Waker;

use parking_lot::Mutex;

/// Tasks to wake at the next event.
#[derive(Default)]
pub(crate) struct WakerSet(Mutex<Vec<Waker>>);

impl WakerSet {
    /// Registers a task to wake at the next event (once per task).
    pub(crate) fn register(&self, waker: &Waker) {
        let mut wakers = self.0.lock();
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            wakers.push(waker.clone());
        }
    }

    /// Wakes every registered task (outside the lock).
    pub(crate) fn wake_all(&self) {
        let wakers = std::mem::take(&mut *self.0.lock());
        for w in wakers {
            w.wake();
        }
    }
}

/// The signals between an operator's handle, its decoding thread and its live videos.
#[derive(Default)]
pub(crate) struct Signals {
    /// Tasks waiting in an async poll; woken when a message is sent, the input is closed or the thread ends.
    pub(crate) wakers: WakerSet,
    /// Set by the handle when it is dropped: the thread stops at the next frame or packet.
    pub(crate) stop: AtomicBool,
    /// Set by the thread when it ends normally (not by a panic).
    pub(crate) exited_cleanly: AtomicBool,
    /// The sources of the videos being read that a read may block on (remote objects): told to give up when
    /// the handle stops ([`cancel_sources`](Self::cancel_sources)).
    sources: Mutex<Vec<std::sync::Weak<crate::video::WholeFile>>>,
}

impl Signals {
    /// Wakes every task waiting in an async poll.
    pub(crate) fn wake_all(&self) {
        self.wakers.wake_all();
    }

    /// Keeps `file` to cancel at a stop, when it reads from a source that may block (not a file on disk).
    pub(crate) fn watch_source(&self, file: &std::sync::Arc<crate::video::WholeFile>) {
        if file.file.source().is_some() {
            let mut sources = self.sources.lock();
            sources.retain(|s| s.strong_count() > 0);
            sources.push(std::sync::Arc::downgrade(file));
        }
    }

    /// Tells every watched source that is still read to give up its blocked reads
    /// ([`ReadAt::cancel`](crate::ReadAt::cancel)).
    pub(crate) fn cancel_sources(&self) {
        let sources = std::mem::take(&mut *self.sources.lock());
        for file in sources.iter().filter_map(std::sync::Weak::upgrade) {
            if let Some(source) = file.file.source() {
                source.cancel();
            }
        }
    }

    /// Registers a task to wake at the next message (once per task).
    pub(crate) fn register(&self, waker: &std::task::Waker) {
        self.wakers.register(waker);
    }
}
