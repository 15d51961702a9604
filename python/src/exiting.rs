//! Calls into Python from framefeed's own threads (the asyncio bridge's deliveries, file-object reads on the
//! decoding threads) end before the interpreter finalizes. CPython ends a thread that takes the GIL once
//! finalizing has begun with `pthread_exit`, and that forced unwind cannot cross Rust frames: the process
//! would abort at exit. So such calls go through [`attach`], and an `atexit` hook (run before finalizing)
//! closes it and waits, the GIL released, for the calls already inside (at most [`DRAIN`]).

use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use pyo3::prelude::*;
use pyo3::types::PyCFunction;

/// The longest the exit hook waits for calls inside Python to return (a file object's read over a slow
/// network); past it, the interpreter finalizes anyway.
const DRAIN: Duration = Duration::from_secs(5);

/// Whether the interpreter is exiting, and how many calls are inside.
struct Gate {
    closed: bool,
    inside: usize,
}

static GATE: Mutex<Gate> = Mutex::new(Gate {
    closed: false,
    inside: 0,
});
static LEFT: Condvar = Condvar::new();

/// `f` run attached to the interpreter, from a thread of framefeed's own; `None` once the interpreter exits
/// (or cannot be attached to).
pub(crate) fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    {
        let mut gate = GATE.lock();
        if gate.closed {
            return None;
        }
        gate.inside += 1;
    }
    let result = Python::try_attach(f);
    let mut gate = GATE.lock();
    gate.inside -= 1;
    if gate.inside == 0 {
        LEFT.notify_all();
    }
    result
}

/// Closes the gate and waits, the GIL released, for the calls inside to return.
fn close(py: Python<'_>) {
    py.detach(|| {
        let deadline = Instant::now() + DRAIN;
        let mut gate = GATE.lock();
        gate.closed = true;
        while gate.inside > 0 && !LEFT.wait_until(&mut gate, deadline).timed_out() {}
    });
}

/// Registers the exit hook (`atexit`, which runs before the interpreter finalizes).
pub(crate) fn register(py: Python<'_>) -> PyResult<()> {
    let hook = PyCFunction::new_closure(py, None, None, |args, _kwargs| {
        close(args.py());
    })?;
    py.import("atexit")?.call_method1("register", (hook,))?;
    Ok(())
}
