//! GPU batches through DLPack, without the `cuda` feature: no batch is ever in GPU memory (`cuda.rs` is this
//! module with the feature).

use framefeed::Batch;
use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;

/// Never called: without the feature, batches are in host memory.
pub(crate) fn gpu_ordinal(_batch: &Batch) -> i32 {
    0
}

/// Never reached: without the feature, batches are in host memory.
pub(crate) fn device_address(
    _batch: &Batch,
    _stream: Option<&Bound<'_, PyAny>>,
) -> PyResult<usize> {
    Err(PyBufferError::new_err("this build has no CUDA support"))
}
