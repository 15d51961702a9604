//! framefeed's errors as Python exceptions. The classes live in `framefeed/_errors.py` (so that they can also
//! derive from Python's own `TimeoutError` and `MemoryError`); this module builds them from Rust errors.

use framefeed::{Error, Label};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// An instance of `framefeed._errors.<class>(message, **attributes)`, as a `PyErr`.
fn raise(
    py: Python<'_>,
    class: &str,
    message: String,
    attributes: Option<Bound<'_, PyDict>>,
) -> PyErr {
    let built = py
        .import("framefeed._errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call((message.clone(),), attributes.as_ref()));
    match built {
        Ok(instance) => PyErr::from_value(instance),
        // The package's Python part is missing (a broken install): still an exception, with the message.
        Err(e) => e,
    }
}

/// A label as Python sees it: `str`, `int`, or `None`.
pub(crate) fn label_object(py: Python<'_>, label: Option<&Label>) -> PyResult<Py<PyAny>> {
    Ok(match label {
        Some(Label::Text(s)) => s.into_pyobject(py)?.into_any().unbind(),
        Some(Label::Number(n)) => n.into_pyobject(py)?.into_any().unbind(),
        None => py.None(),
    })
}

/// The Python exception for a framefeed error.
pub(crate) fn to_py(py: Python<'_>, error: Error) -> PyErr {
    let message = error.to_string();
    let class = match &error {
        Error::Config(m) => return PyValueError::new_err(m.clone()),
        Error::Video { video, error } => {
            let attributes = PyDict::new(py);
            let set = || -> PyResult<()> {
                attributes.set_item("video_id", video.id.0)?;
                attributes.set_item("label", label_object(py, video.label.as_ref())?)?;
                attributes.set_item("reason", error.to_string())?;
                attributes.set_item("code", error.code())?;
                Ok(())
            };
            if let Err(e) = set() {
                return e;
            }
            return raise(py, "VideoError", message, Some(attributes));
        }
        Error::NoData => "NoDataError",
        Error::NotReady => "NotReadyError",
        Error::Timeout(_) => "TimeoutError",
        Error::Closed | Error::LiveEnded { .. } => "ClosedError",
        Error::CudaUnavailable { .. } | Error::Cuda { .. } => "DeviceError",
        Error::OutOfMemory { .. } => "OutOfMemoryError",
        _ => "FramefeedError",
    };
    let attributes = PyDict::new(py);
    if let Err(e) = attributes.set_item("code", error.code()) {
        return e;
    }
    raise(py, class, message, Some(attributes))
}

/// `Result<T, framefeed::Error>` into `PyResult<T>`.
pub(crate) trait IntoPyResult<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
