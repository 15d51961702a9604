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
}

impl Signals {
    /// Wakes every task waiting in an async poll.
    pub(crate) fn wake_all(&self) {
        self.wakers.wake_all();
    }

    /// Registers a task to wake at the next message (once per task).
    pub(crate) fn register(&self, waker: &std::task::Waker) {
        self.wakers.register(waker);
    }
}
