//! `Mux`: batches across live cameras with a deadline (framefeed's [`Mux`]); what its polls give is
//! `events.rs`'s. Every wait releases the GIL; `next_event_async` goes through
//! the asyncio bridge (`aio`). The cameras' operators are `VideoInput`s of one sequence a batch; the package's
//! Python `Mux` adds `add_url` and `add_live`, which make them.

use std::sync::Arc;
use std::time::Duration;

use framefeed::{Choice, Label, Mux, MuxConfig, MuxPolicy};
use pyo3::exceptions::{PyStopIteration, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::aio;
use crate::config::choice;
use crate::errors::{label_object, to_py, IntoPyResult};
use crate::events::event_object;
use crate::input::PyVideoInput;

/// Seconds as a `Duration`, or the `ValueError` naming the setting (framefeed's one rule for seconds).
fn seconds(name: &str, value: f64) -> PyResult<Duration> {
    framefeed::seconds_setting(name, value).map_err(PyValueError::new_err)
}

/// A camera's label from Python: `str` or a non-negative `int`.
fn camera_label(value: &Bound<'_, PyAny>) -> PyResult<Label> {
    if let Ok(n) = value.extract::<u64>() {
        return Ok(Label::Number(n));
    }
    if let Ok(s) = value.extract::<String>() {
        return Ok(Label::Text(s));
    }
    Err(PyTypeError::new_err(
        "a camera's label is a str or a non-negative int",
    ))
}

/// The native mux under `framefeed.Mux`, whose docstring documents its keywords: cross-camera batching with a
/// deadline.
#[pyclass(module = "framefeed._framefeed", name = "Mux", frozen, subclass)]
pub(crate) struct PyMux {
    inner: Arc<Mux>,
    batch_size: usize,
    deadline: f64,
    policy: MuxPolicy,
}

#[pymethods]
impl PyMux {
    #[new]
    #[pyo3(signature = (batch_size, deadline, *, policy="every_frame"))]
    fn new(py: Python<'_>, batch_size: usize, deadline: f64, policy: &str) -> PyResult<Self> {
        let policy = choice::<MuxPolicy>(policy)?;
        let wait = seconds("deadline", deadline)?;
        let mux = py
            .detach(|| Mux::new(MuxConfig::new(batch_size, wait).policy(policy)))
            .py_err(py)?;
        Ok(Self {
            inner: Arc::new(mux),
            batch_size,
            deadline,
            policy,
        })
    }

    /// Adds a camera decoded by an operator of its own; the mux polls it from now on, and the camera ends when the
    /// operator has no more batches.
    ///
    /// Args:
    ///     input (VideoInput): The camera's operator: ``batch_size=1``, and closed (now or later) once its video
    ///         is fed.
    ///     label (str | int): The camera's label.
    ///
    /// Returns:
    ///     The camera's number.
    ///
    /// Raises:
    ///     ValueError: An operator whose batch size is not 1.
    ///     TypeError: A label that is not a ``str`` or a non-negative ``int``.
    fn add_input(
        &self,
        py: Python<'_>,
        input: &Bound<'_, PyVideoInput>,
        label: &Bound<'_, PyAny>,
    ) -> PyResult<u64> {
        let label = camera_label(label)?;
        let input = input.get().feeding(py)?;
        let mux = &self.inner;
        Ok(py.detach(|| mux.add_input(label, input)).py_err(py)?.0)
    }

    /// Stops a camera and forgets what it queued; it gives no :class:`CameraEnded`.
    ///
    /// Args:
    ///     camera (int): The camera's number.
    ///
    /// Returns:
    ///     Whether there was such a camera (``False`` also for one that ended).
    fn remove(&self, camera: u64) -> bool {
        self.inner.remove(framefeed::CameraId(camera))
    }

    /// No more cameras: polls end (``None``) once every camera has ended and its sequences are delivered.
    fn close(&self) {
        self.inner.close();
    }

    /// What each camera has done so far.
    ///
    /// Returns:
    ///     One ``framefeed.types.CameraStats`` a camera: ``camera``, ``label``, ``sequences`` given, ``dropped``
    ///     (``latest_only``) and ``ended``.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = self
            .inner
            .stats()
            .into_iter()
            .map(|s| {
                let row = PyDict::new(py);
                row.set_item("camera", s.camera.0)?;
                row.set_item("label", label_object(py, Some(&s.label))?)?;
                row.set_item("sequences", s.sequences)?;
                row.set_item("dropped", s.dropped)?;
                row.set_item("ended", s.ended)?;
                Ok(row)
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, rows)
    }

    /// The next batch or camera end, waiting (without the GIL) until one is due.
    ///
    /// Args:
    ///     timeout (float | None): The most seconds to wait. Default ``None``: no limit.
    ///
    /// Returns:
    ///     A :class:`MuxBatch` or a :class:`CameraEnded`; ``None`` once closed and every camera has ended.
    ///
    /// Raises:
    ///     TimeoutError: ``timeout`` passed (``framefeed.FramefeedTimeoutError``).
    #[pyo3(signature = (timeout=None))]
    fn next_event(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Py<PyAny>> {
        let mux = &self.inner;
        let event = match timeout {
            None => py.detach(|| mux.next_event()),
            Some(t) => {
                let wait = seconds("timeout", t.max(0.0))?;
                py.detach(|| mux.next_event_timeout(wait))
            }
        };
        event_object(py, event.py_err(py)?)
    }

    /// The next batch or camera end if one is due now; never waits.
    ///
    /// Returns:
    ///     A :class:`MuxBatch` or a :class:`CameraEnded`; ``None`` once closed and every camera has ended.
    ///
    /// Raises:
    ///     NotReadyError: None is due yet.
    fn try_next_event(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        event_object(py, self.inner.try_next_event().py_err(py)?)
    }

    /// :meth:`next_event` as an awaitable (asyncio), waiting without holding a thread. Cancelling it loses
    /// nothing.
    ///
    /// Returns:
    ///     An awaitable of a :class:`MuxBatch`, a :class:`CameraEnded`, or ``None`` at the end.
    fn next_event_async(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        aio::next_event(py, &self.inner)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let mux = &self.inner;
        match py.detach(|| mux.next_event()) {
            Ok(None) => Err(PyStopIteration::new_err(())),
            Ok(event) => event_object(py, event),
            Err(e) => Err(to_py(py, e)),
        }
    }

    /// The most sequences a batch holds.
    #[getter]
    fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Seconds a batch waits at most after its oldest sequence was ready.
    #[getter]
    fn deadline(&self) -> f64 {
        self.deadline
    }

    /// `"every_frame"` or `"latest_only"`.
    #[getter]
    fn policy(&self) -> &'static str {
        self.policy.name()
    }

    fn __repr__(&self) -> String {
        format!(
            "<framefeed.Mux batch_size {} deadline {}s {} with {} cameras>",
            self.batch_size,
            self.deadline,
            self.policy(),
            self.inner.stats().len()
        )
    }
}
