//! asyncio support: `next_batch_async`, `feed_async`, `push_async` and `Mux.next_event_async` as
//! `asyncio.Future`s, with one thread for
//! the whole process (not one per waiting task).
//!
//! The bridge thread only waits for *readiness* (framefeed's `ready`, `feed_ready` and `push_ready`, which take
//! nothing; the mux's `ready`) for every waiting task at once. When one is ready it schedules a delivery on the
//! task's event loop (`call_soon_threadsafe`), and the delivery, on the loop's thread, takes the batch
//! (`try_next_batch`, the mux's `try_next_event`) or
//! queues the data (`try_feed`, `try_push`) only if the task's future is not cancelled. Cancellation and taking
//! both happen on the loop's thread, so a cancelled `next_batch_async` never loses a batch and a cancelled
//! `feed_async` never feeds. If another poller took the batch or the room first, the task waits again.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::Duration;

use bytes::Bytes;
use framefeed::{Encoded, Error, LiveVideo, Mux, TryFeedError, VideoInput};
use parking_lot::{Mutex, RwLock};
use pyo3::prelude::*;

use crate::batch::PyBatch;
use crate::errors::to_py;

/// A live video's producer handle, shared by its Python object and the bridge (`None` once finished).
pub(crate) type LiveSlot = Arc<RwLock<Option<LiveVideo>>>;

/// What a waiting task wants.
enum Want {
    Batch(Weak<VideoInput>),
    Feed {
        input: Weak<VideoInput>,
        video: Encoded,
        /// Its bytes in memory, which the queue must have room for.
        len: usize,
    },
    Push {
        live: Weak<RwLock<Option<LiveVideo>>>,
        chunk: Bytes,
    },
    /// A mux's next batch or camera end.
    Event(Weak<Mux>),
}

/// One awaiting task: what it wants, its future and the loop to deliver on.
struct Waiter {
    want: Want,
    future: Py<PyAny>,
    event_loop: Py<PyAny>,
    /// Set by the future's done callback (cancelled, or delivered).
    done: Arc<AtomicBool>,
}

impl Waiter {
    /// Ready when the wanted operation would not wait (or cannot happen any more: it then fails at delivery).
    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        match &self.want {
            Want::Batch(input) => match input.upgrade() {
                Some(input) => Pin::new(&mut input.ready()).poll(cx),
                None => Poll::Ready(()),
            },
            Want::Feed { input, len, .. } => match input.upgrade() {
                Some(input) => Pin::new(&mut input.feed_ready(*len)).poll(cx),
                None => Poll::Ready(()),
            },
            Want::Push { live, chunk } => match live.upgrade() {
                Some(slot) => match slot.read().as_ref() {
                    Some(live) => Pin::new(&mut live.push_ready(chunk.len())).poll(cx),
                    None => Poll::Ready(()),
                },
                None => Poll::Ready(()),
            },
            Want::Event(mux) => match mux.upgrade() {
                Some(mux) => Pin::new(&mut mux.ready()).poll(cx),
                None => Poll::Ready(()),
            },
        }
    }
}

/// Unparks the bridge thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// The waiting tasks of the process and the thread watching them.
struct Bridge {
    waiters: Mutex<Vec<Waiter>>,
    /// Set once the thread is started (before any waiter is queued).
    thread: OnceLock<Thread>,
}

/// This process's bridge, started by the first task that waits. A process forked after it started has its
/// memory but not its thread: the child starts a bridge of its own (the parent's, and the parent's waiters, are
/// left alone there).
fn bridge() -> &'static Bridge {
    static BRIDGE: Mutex<Option<(u32, &'static Bridge)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut current = BRIDGE.lock();
    if let Some((owner, bridge)) = *current {
        if owner == pid {
            return bridge;
        }
    }
    // One bridge a process, for the process's life: leaked on purpose (a fork child's copy of the parent's
    // bridge is never dropped either).
    let bridge: &'static Bridge = Box::leak(Box::new(Bridge {
        waiters: Mutex::new(Vec::new()),
        thread: OnceLock::new(),
    }));
    let thread = std::thread::Builder::new()
        .name("framefeed-asyncio".into())
        .spawn(move || watch(bridge))
        .expect("start the asyncio bridge thread")
        .thread()
        .clone();
    let _ = bridge.thread.set(thread);
    *current = Some((pid, bridge));
    bridge
}

fn enqueue(waiter: Waiter) {
    let bridge = bridge();
    bridge.waiters.lock().push(waiter);
    if let Some(thread) = bridge.thread.get() {
        thread.unpark();
    }
}

/// The bridge thread: polls every waiter's readiness with a waker that unparks it, schedules deliveries for
/// those ready, forgets those done, and sleeps until woken (or 100 ms, a safety net).
fn watch(bridge: &'static Bridge) {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        let pending = std::mem::take(&mut *bridge.waiters.lock());
        let mut ready = Vec::new();
        let mut waiting = Vec::new();
        for waiter in pending {
            if waiter.done.load(Ordering::Acquire) {
                continue; // cancelled: nothing was taken
            }
            match waiter.poll_ready(&mut cx) {
                Poll::Ready(()) => ready.push(waiter),
                Poll::Pending => waiting.push(waiter),
            }
        }
        bridge.waiters.lock().extend(waiting);
        if ready.is_empty() {
            std::thread::park_timeout(Duration::from_millis(100));
            continue;
        }
        let delivered = crate::exiting::attach(|py| {
            for waiter in ready {
                let event_loop = waiter.event_loop.clone_ref(py);
                // A closed loop cannot resume its task; nothing was taken for it, so it is dropped.
                let _ = Py::new(py, Delivery(Mutex::new(Some(waiter))))
                    .and_then(|d| event_loop.call_method1(py, "call_soon_threadsafe", (d,)));
            }
        });
        if delivered.is_none() {
            return; // the interpreter is exiting: no loop runs any more
        }
    }
}

/// A delivery, run by the event loop on its own thread.
#[pyclass(module = "framefeed")]
struct Delivery(Mutex<Option<Waiter>>);

/// What a delivery did: a result for the future, an error, or nothing to take yet (wait again).
enum Delivered {
    Value(Py<PyAny>),
    Failed(PyErr),
    Again(Want),
}

fn take(py: Python<'_>, want: Want) -> PyResult<Delivered> {
    let closed = |py| Delivered::Failed(to_py(py, Error::Closed));
    Ok(match want {
        Want::Batch(weak) => {
            let Some(input) = weak.upgrade() else {
                return Ok(closed(py));
            };
            match input.try_next_batch() {
                Ok(Some(batch)) => Delivered::Value(
                    Py::new(
                        py,
                        PyBatch {
                            inner: Arc::new(batch),
                        },
                    )?
                    .into_any(),
                ),
                Ok(None) => Delivered::Value(py.None()),
                // Taken by another poller since it was ready.
                Err(Error::NotReady | Error::NoData) => Delivered::Again(Want::Batch(weak)),
                Err(e) => Delivered::Failed(to_py(py, e)),
            }
        }
        Want::Feed {
            input: weak,
            video,
            len,
        } => {
            let Some(input) = weak.upgrade() else {
                return Ok(closed(py));
            };
            // A clone shares the bytes: handed back whole (with its label and place) when the queue is full.
            match input.try_feed(video.clone()) {
                Ok(id) => Delivered::Value(id.0.into_pyobject(py)?.into_any().unbind()),
                Err(TryFeedError::Full(_)) => Delivered::Again(Want::Feed {
                    input: weak,
                    video,
                    len,
                }),
                Err(_) => closed(py),
            }
        }
        Want::Push { live: weak, chunk } => {
            let Some(slot) = weak.upgrade() else {
                return Ok(closed(py));
            };
            let guard = slot.read();
            let Some(live) = guard.as_ref() else {
                return Ok(closed(py));
            };
            match live.try_push(chunk) {
                Ok(()) => Delivered::Value(py.None()),
                Err(TryFeedError::Full(chunk)) => {
                    Delivered::Again(Want::Push { live: weak, chunk })
                }
                Err(_) => Delivered::Failed(to_py(
                    py,
                    Error::LiveEnded {
                        video: live_ref(live),
                    },
                )),
            }
        }
        Want::Event(weak) => {
            let Some(mux) = weak.upgrade() else {
                return Ok(closed(py));
            };
            match mux.try_next_event() {
                Ok(event) => Delivered::Value(crate::events::event_object(py, event)?),
                // Taken by another poller since it was ready.
                Err(Error::NotReady) => Delivered::Again(Want::Event(weak)),
                Err(e) => Delivered::Failed(to_py(py, e)),
            }
        }
    })
}

fn live_ref(live: &LiveVideo) -> framefeed::VideoRef {
    framefeed::VideoRef {
        id: live.id(),
        label: None,
    }
}

#[pymethods]
impl Delivery {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let Some(Waiter {
            want,
            future,
            event_loop,
            done,
        }) = self.0.lock().take()
        else {
            return Ok(());
        };
        let bound = future.bind(py);
        if bound.call_method0("done")?.is_truthy()? {
            return Ok(()); // cancelled before anything was taken
        }
        match take(py, want)? {
            Delivered::Value(value) => {
                bound.call_method1("set_result", (value,))?;
            }
            Delivered::Failed(error) => set_exception(bound, error)?,
            Delivered::Again(want) => enqueue(Waiter {
                want,
                future,
                event_loop,
                done,
            }),
        }
        Ok(())
    }
}

fn set_exception(future: &Bound<'_, PyAny>, error: PyErr) -> PyResult<()> {
    future.call_method1("set_exception", (error.into_value(future.py()),))?;
    Ok(())
}

/// Marks a waiter done when its future is (cancelled or delivered), and wakes the bridge to forget it.
#[pyclass(module = "framefeed")]
struct OnDone(Arc<AtomicBool>);

#[pymethods]
impl OnDone {
    fn __call__(&self, _future: &Bound<'_, PyAny>) {
        self.0.store(true, Ordering::Release);
        if let Some(thread) = bridge().thread.get() {
            thread.unpark();
        }
    }
}

/// A future on the running event loop that completes when `want` is done.
fn submit(py: Python<'_>, want: Want) -> PyResult<Py<PyAny>> {
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    let future = event_loop.call_method0("create_future")?;
    let done = Arc::new(AtomicBool::new(false));
    future.call_method1("add_done_callback", (OnDone(done.clone()),))?;
    enqueue(Waiter {
        want,
        future: future.clone().unbind(),
        event_loop: event_loop.unbind(),
        done,
    });
    Ok(future.unbind())
}

/// `VideoInput.next_batch_async()`.
pub(crate) fn next_batch(py: Python<'_>, input: &Arc<VideoInput>) -> PyResult<Py<PyAny>> {
    submit(py, Want::Batch(Arc::downgrade(input)))
}

/// `VideoInput.feed_async()`.
pub(crate) fn feed(
    py: Python<'_>,
    input: &Arc<VideoInput>,
    video: Encoded,
    len: usize,
) -> PyResult<Py<PyAny>> {
    submit(
        py,
        Want::Feed {
            input: Arc::downgrade(input),
            video,
            len,
        },
    )
}

/// `LiveVideo.push_async()`.
pub(crate) fn push(py: Python<'_>, live: &LiveSlot, chunk: Bytes) -> PyResult<Py<PyAny>> {
    submit(
        py,
        Want::Push {
            live: Arc::downgrade(live),
            chunk,
        },
    )
}

/// `Mux.next_event_async()`.
pub(crate) fn next_event(py: Python<'_>, mux: &Arc<Mux>) -> PyResult<Py<PyAny>> {
    submit(py, Want::Event(Arc::downgrade(mux)))
}
