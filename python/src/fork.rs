//! Native objects across `fork`: a reader or an operator runs threads (FFmpeg's frame threads, the operator's
//! decoder), and a forked process inherits the objects but none of those threads, so the first read there would
//! wait forever on a thread that does not exist. [`PerProcess`] remembers which process made its value and, in
//! any other, re-makes it (the caller says how) before it is used: DataLoader workers started by `fork`,
//! `multiprocessing`'s fork and `os.fork()` all get a working object of their own.
//!
//! The parent's copy is never dropped in the child: dropping it would join threads that are not there. It is
//! leaked instead (its memory is the parent's pages, shared copy-on-write, once per fork).
//!
//! [`process_threads`] gives the decoder threads a setting left to the default gets in the process that makes
//! (or re-makes) the object.

use std::sync::Arc;

use parking_lot::Mutex;
use pyo3::prelude::*;

/// A value made for one process, re-made in a process forked after it was made.
pub(crate) struct PerProcess<T> {
    slot: Mutex<Slot<T>>,
}

struct Slot<T> {
    /// The process the value belongs to.
    pid: u32,
    /// Always there but while the value is dropped or leaked.
    value: Option<Arc<T>>,
}

impl<T> Slot<T> {
    fn value(&self) -> Arc<T> {
        self.value
            .clone()
            .expect("a PerProcess value is always there")
    }

    /// Puts `value` in place for the calling process `pid`, and gives the old one back with whether it was
    /// inherited from another process.
    fn set(&mut self, pid: u32, value: Arc<T>) -> (Option<Arc<T>>, bool) {
        let inherited = self.pid != pid;
        self.pid = pid;
        (self.value.replace(value), inherited)
    }
}

/// Drops `old`, or leaks it when it was inherited across a fork (its threads are not in this process: dropping
/// would wait for them forever).
fn dispose<T>(old: Option<Arc<T>>, inherited: bool) {
    if inherited {
        std::mem::forget(old);
    } else {
        drop(old);
    }
}

impl<T> PerProcess<T> {
    /// `value`, made by the calling process.
    pub(crate) fn new(value: T) -> Self {
        Self {
            slot: Mutex::new(Slot {
                pid: std::process::id(),
                value: Some(Arc::new(value)),
            }),
        }
    }

    /// The value for this process: the one made here, or, in a forked child, `remake()`'s (made once, then
    /// kept). A `remake` that fails leaves the inherited value in place (never used) and returns its error.
    pub(crate) fn get(&self, remake: impl FnOnce() -> PyResult<T>) -> PyResult<Arc<T>> {
        let pid = std::process::id();
        {
            let slot = self.slot.lock();
            if slot.pid == pid {
                return Ok(slot.value());
            }
        }
        // Made without the lock held: `remake` may release the GIL, and another thread of this process may
        // ask meanwhile (the first to finish wins; the other's value is dropped: it never ran elsewhere).
        let fresh = Arc::new(remake()?);
        let mut slot = self.slot.lock();
        if slot.pid == pid {
            return Ok(slot.value()); // another thread of this process made it first
        }
        let (old, inherited) = slot.set(pid, fresh);
        let value = slot.value();
        drop(slot);
        dispose(old, inherited);
        Ok(value)
    }

    /// Puts `value` in place for this process (the old one dropped, or in a forked child leaked).
    pub(crate) fn replace(&self, value: T) {
        let (old, inherited) = self.slot.lock().set(std::process::id(), Arc::new(value));
        dispose(old, inherited);
    }

    /// The value as it is, in whatever process made it (for what needs none of its threads).
    pub(crate) fn current(&self) -> Arc<T> {
        self.slot.lock().value()
    }
}

impl<T> Drop for PerProcess<T> {
    /// In a process forked after the value was made, the value is leaked, not dropped.
    fn drop(&mut self) {
        let slot = self.slot.get_mut();
        let inherited = slot.pid != std::process::id();
        dispose(slot.value.take(), inherited);
    }
}

/// `config` with this process's share of the cores as its decoder threads when `auto` (the keyword was left to
/// its default: `framefeed._threads`' rule, which depends on the process: a DataLoader worker gets its share).
pub(crate) fn process_threads(
    py: Python<'_>,
    config: framefeed::Config,
    auto: bool,
) -> PyResult<framefeed::Config> {
    if !auto {
        return Ok(config);
    }
    let threads: usize = py
        .import("framefeed._threads")?
        .call_method0("default_threads")?
        .extract()?;
    Ok(config.decoder_threads(threads))
}
