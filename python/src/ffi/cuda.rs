//! A consumer's CUDA stream, given as a raw handle through the DLPack protocol, made to wait for a batch.

use cudarc::driver::sys;
use cudarc::driver::{result, CudaEvent, DriverError};

/// Makes the stream of raw handle `stream` (DLPack's numbering: 1 the legacy default stream, 2 the per-thread
/// default stream, others a `CUstream`) wait for the work recorded in `event`.
pub(crate) fn wait(stream: usize, event: &CudaEvent) -> Result<(), DriverError> {
    // SAFETY: the handle comes from the consumer, which promises a live stream of the batch's device for the
    // export (the DLPack protocol's contract); 1 and 2 are the driver's own CU_STREAM_LEGACY and
    // CU_STREAM_PER_THREAD. The event lives until the call returns; a wait may outlive the event.
    unsafe {
        result::stream::wait_event(
            stream as sys::CUstream,
            event.cu_event(),
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
        )
    }
}
