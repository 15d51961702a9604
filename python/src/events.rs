//! What a `Mux` poll gives, as Python objects: `MuxBatch` (of `MuxEntry`s), `CameraEnded`, or `None` at the end.
//! Shared by the blocking polls (`mux.rs`) and the asyncio bridge (`aio.rs`), which both turn a framefeed
//! [`MuxEvent`] into one here.

use std::sync::Arc;
use std::time::Instant;

use framefeed::{Label, MuxEvent};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;

use crate::batch::{PyBatch, PySequence};
use crate::errors::{label_object, to_py};

/// A mux event as its Python object: a `MuxBatch`, a `CameraEnded`, or `None` (the end of everything).
pub(crate) fn event_object(py: Python<'_>, event: Option<MuxEvent>) -> PyResult<Py<PyAny>> {
    let now = Instant::now();
    Ok(match event {
        None => py.None(),
        Some(MuxEvent::Batch(batch)) => {
            let entries = batch
                .into_entries()
                .into_iter()
                .map(|entry| {
                    let waited = now
                        .saturating_duration_since(entry.ready_at())
                        .as_secs_f64();
                    PyMuxEntry {
                        camera: entry.camera().0,
                        label: entry.label().clone(),
                        waited,
                        batch: Arc::new(entry.into_batch()),
                    }
                })
                .map(|entry| Py::new(py, entry))
                .collect::<PyResult<Vec<_>>>()?;
            Py::new(py, PyMuxBatch { entries })?.into_any()
        }
        Some(MuxEvent::Ended {
            camera,
            label,
            error,
        }) => {
            let error = error.map(|error| to_py(py, error).into_value(py).into_any());
            Py::new(
                py,
                PyCameraEnded {
                    camera: camera.0,
                    label,
                    error,
                },
            )?
            .into_any()
        }
    })
}

/// One camera's sequence in a `MuxBatch`.
#[pyclass(module = "framefeed", name = "MuxEntry", frozen)]
pub(crate) struct PyMuxEntry {
    camera: u64,
    label: Label,
    waited: f64,
    batch: Arc<framefeed::Batch>,
}

#[pymethods]
impl PyMuxEntry {
    /// Its camera's number.
    #[getter]
    fn camera(&self) -> u64 {
        self.camera
    }

    /// Its camera's label.
    #[getter]
    fn label(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        label_object(py, Some(&self.label))
    }

    /// The sequence: its frames (`numpy()`, DLPack), `indices`, `pts` and `arrivals`.
    #[getter]
    fn sequence(&self) -> PySequence {
        PySequence {
            batch: self.batch.clone(),
            index: 0,
        }
    }

    /// The camera's batch of this one sequence (its `latency`, `device`, `dtype`, `gap`).
    #[getter]
    fn batch(&self) -> PyBatch {
        PyBatch {
            inner: self.batch.clone(),
        }
    }

    /// Seconds from when it was ready (decoded and converted) to when its batch was given.
    #[getter]
    fn waited(&self) -> f64 {
        self.waited
    }

    fn __repr__(&self) -> String {
        let seq = self.batch.sequence(0);
        format!(
            "<framefeed.MuxEntry camera {} first frame {} shape {:?}>",
            self.camera,
            seq.first_frame(),
            seq.shape()
        )
    }
}

/// A batch across cameras: up to `batch_size` sequences of one shape, oldest first.
#[pyclass(module = "framefeed", name = "MuxBatch", frozen)]
pub(crate) struct PyMuxBatch {
    entries: Vec<Py<PyMuxEntry>>,
}

#[pymethods]
impl PyMuxBatch {
    /// Its sequences with their cameras, oldest first.
    #[getter]
    fn entries(&self, py: Python<'_>) -> Vec<Py<PyMuxEntry>> {
        self.entries.iter().map(|e| e.clone_ref(py)).collect()
    }

    /// The camera of each entry, in order.
    #[getter]
    fn cameras(&self) -> Vec<u64> {
        self.entries.iter().map(|e| e.get().camera).collect()
    }

    /// The shape every sequence in it has (frames, then the layout's three dimensions).
    #[getter]
    fn sequence_shape(&self) -> (usize, usize, usize, usize) {
        let [a, b, c, d] = self.entries[0].get().batch.sequence(0).shape();
        (a, b, c, d)
    }

    fn __len__(&self) -> usize {
        self.entries.len()
    }

    fn __getitem__(&self, py: Python<'_>, index: isize) -> PyResult<Py<PyMuxEntry>> {
        let n = self.entries.len() as isize;
        let i = if index < 0 { index + n } else { index };
        if !(0..n).contains(&i) {
            return Err(PyIndexError::new_err(format!(
                "entry {index} of a mux batch of {n}"
            )));
        }
        Ok(self.entries[i as usize].clone_ref(py))
    }

    /// The batch as one NumPy array: a copy, since the cameras' sequences live in their own buffers.
    ///
    /// Returns:
    ///     An array of shape ``(N, *sequence_shape)``.
    ///
    /// Raises:
    ///     ValueError: Sequences in GPU memory (stack their DLPack exports instead: ``torch.stack``,
    ///         ``cupy.stack``).
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let arrays = self
            .entries
            .iter()
            .map(|e| {
                let sequence = Bound::new(py, e.get().sequence())?;
                sequence.call_method0("numpy")
            })
            .collect::<PyResult<Vec<_>>>()?;
        py.import("numpy")?.call_method1("stack", (arrays,))
    }

    fn __repr__(&self) -> String {
        format!(
            "<framefeed.MuxBatch {} sequences of shape {:?} from cameras {:?}>",
            self.entries.len(),
            self.sequence_shape(),
            self.cameras()
        )
    }
}

/// A camera ended, after its last sequence: its video ended (`error` is `None`) or failed (`error` is the
/// exception, e.g. a `VideoError` naming the URL).
#[pyclass(module = "framefeed", name = "CameraEnded", frozen)]
pub(crate) struct PyCameraEnded {
    camera: u64,
    label: Label,
    error: Option<Py<PyAny>>,
}

#[pymethods]
impl PyCameraEnded {
    /// The camera's number.
    #[getter]
    fn camera(&self) -> u64 {
        self.camera
    }

    /// The camera's label.
    #[getter]
    fn label(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        label_object(py, Some(&self.label))
    }

    /// Why it failed (the exception), or `None` if its video ended.
    #[getter]
    fn error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.error.as_ref().map(|e| e.clone_ref(py))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match &self.error {
            None => format!("<framefeed.CameraEnded camera {}>", self.camera),
            Some(error) => format!(
                "<framefeed.CameraEnded camera {} failed: {}>",
                self.camera,
                error.bind(py)
            ),
        }
    }
}
