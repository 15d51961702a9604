//! The set of async tasks waiting for one event (a batch sent, room in a queue): each registers its waker,
//! and the event wakes them all. Shared by the output polls, the feed queue and live videos.

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
