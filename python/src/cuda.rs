//! GPU batches through DLPack (feature `cuda`): the device buffer's address, after ordering the consumer's
//! stream behind the batch's (`cuda_none.rs` is this module without the feature).

use cudarc::driver::DevicePtr;
use framefeed::Batch;
use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::prelude::*;

/// The CUDA device ordinal of a GPU batch.
pub(crate) fn gpu_ordinal(batch: &Batch) -> i32 {
    batch
        .cuda_stream()
        .map_or(0, |s| s.context().ordinal() as i32)
}

/// The device address of a GPU batch's buffer. `stream` is the consumer's (DLPack: `None` or 1 the legacy
/// default stream, 2 the per-thread default, -1 no ordering, otherwise a `CUstream` handle): it waits for the
/// work that wrote the batch.
pub(crate) fn device_address(batch: &Batch, stream: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    let (Some(slice), Some(own)) = (batch.cuda(), batch.cuda_stream()) else {
        return Err(PyBufferError::new_err("the batch is not in GPU memory"));
    };
    let consumer: i64 = match stream {
        None => 1,
        Some(s) if s.is_none() => 1,
        Some(s) => s.extract()?,
    };
    if consumer == 0 {
        return Err(PyBufferError::new_err(
            "stream 0 is ambiguous in the DLPack protocol: pass 1 (legacy default), 2 (per-thread) or a handle",
        ));
    }
    let address = {
        let (ptr, _recorded) = slice.device_ptr(own);
        ptr as usize
    };
    if consumer != -1 {
        let cuda_err =
            |e: cudarc::driver::DriverError| PyRuntimeError::new_err(format!("CUDA: {e}"));
        let event = own.record_event(None).map_err(cuda_err)?;
        crate::ffi::cuda::wait(consumer as usize, &event).map_err(cuda_err)?;
    }
    Ok(address)
}
