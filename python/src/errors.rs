//! framefeed's errors as Python exceptions. The classes live in the public `framefeed/exceptions.py` (so that
//! they can also derive from Python's own `TimeoutError` and `MemoryError`); this module holds a typed handle on
//! each (`import_exception!`, imported once) and builds them from Rust errors.

use framefeed::{Error, ErrorCode, Label};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::PyTypeInfo;

/// Typed handles on the classes of `framefeed.exceptions`.
mod classes {
    pyo3::import_exception!(framefeed.exceptions, FramefeedError);
    pyo3::import_exception!(framefeed.exceptions, VideoError);
    pyo3::import_exception!(framefeed.exceptions, NoDataError);
    pyo3::import_exception!(framefeed.exceptions, NotReadyError);
    pyo3::import_exception!(framefeed.exceptions, FramefeedTimeoutError);
    pyo3::import_exception!(framefeed.exceptions, ClosedError);
    pyo3::import_exception!(framefeed.exceptions, DeviceError);
    pyo3::import_exception!(framefeed.exceptions, OutOfMemoryError);
}

/// An instance of the exception class `T`, made as `T(message, **attributes)`, as a `PyErr`.
fn raise<T: PyTypeInfo>(py: Python<'_>, message: String, attributes: &Bound<'_, PyDict>) -> PyErr {
    match T::type_object(py).call((message,), Some(attributes)) {
        Ok(instance) => PyErr::from_value(instance),
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

/// The Python exception for a framefeed error: its class, and its `code` (the service's vocabulary).
pub(crate) fn to_py(py: Python<'_>, error: Error) -> PyErr {
    if let Error::Config(m) = &error {
        return PyValueError::new_err(m.clone());
    }
    let message = error.to_string();
    let attributes = PyDict::new(py);
    let set = || -> PyResult<()> {
        attributes.set_item("code", error.code())?;
        if let Error::Video { video, error } = &error {
            attributes.set_item("video_id", video.id.0)?;
            attributes.set_item("label", label_object(py, video.label.as_ref())?)?;
            attributes.set_item("reason", error.to_string())?;
        }
        Ok(())
    };
    if let Err(e) = set() {
        return e;
    }
    // The class follows the code (the table's), but for a video's failure, whatever its code.
    if matches!(error, Error::Video { .. }) {
        return raise::<classes::VideoError>(py, message, &attributes);
    }
    match error.error_code() {
        ErrorCode::NoData => raise::<classes::NoDataError>(py, message, &attributes),
        ErrorCode::NotReady => raise::<classes::NotReadyError>(py, message, &attributes),
        ErrorCode::Timeout => raise::<classes::FramefeedTimeoutError>(py, message, &attributes),
        ErrorCode::Closed | ErrorCode::LiveEnded => {
            raise::<classes::ClosedError>(py, message, &attributes)
        }
        ErrorCode::CudaUnavailable | ErrorCode::Cuda => {
            raise::<classes::DeviceError>(py, message, &attributes)
        }
        ErrorCode::OutOfMemory => raise::<classes::OutOfMemoryError>(py, message, &attributes),
        _ => raise::<classes::FramefeedError>(py, message, &attributes),
    }
}

/// A `FramefeedError` with this message and `code`, for failures the binding itself finds.
pub(crate) fn framefeed_error(py: Python<'_>, message: &str, code: &str) -> PyErr {
    binding_error::<classes::FramefeedError>(py, message, code)
}

/// A `ClosedError` with this message (code `closed`), for an object of the binding's that was closed.
pub(crate) fn closed_error(py: Python<'_>, message: &str) -> PyErr {
    binding_error::<classes::ClosedError>(py, message, "closed")
}

/// An instance of `T` with this message and `code`.
fn binding_error<T: PyTypeInfo>(py: Python<'_>, message: &str, code: &str) -> PyErr {
    let attributes = PyDict::new(py);
    match attributes.set_item("code", code) {
        Ok(()) => raise::<T>(py, message.to_owned(), &attributes),
        Err(e) => e,
    }
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
