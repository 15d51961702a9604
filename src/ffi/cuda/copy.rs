//! Copying a picture's plane from one pitched device allocation to another (feature `cuda`):
//! `cuMemcpy2DAsync`, which cudarc's safe layer does not offer. The sampling stage copies an NVDEC picture out
//! of its decoder surface with it, so that the surface goes back to the decoder while later sequences still
//! take the picture.

use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DriverError};

/// A plane in device memory: its first row's address and the bytes from one row to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PitchedPlane {
    pub(crate) ptr: u64,
    pub(crate) pitch: usize,
}

/// Enqueues on `stream` a copy of `rows` rows of `row_bytes` bytes from `src` (a device plane: a mapped NVDEC
/// surface, whose address comes from the driver, as the conversion kernel takes its planes) into `dst` from
/// byte `offset` on, at `dst_pitch`. Errors, never writes, when the rows do not fit in `dst`.
pub(crate) fn copy_plane(
    stream: &Arc<CudaStream>,
    src: PitchedPlane,
    dst: &mut CudaSlice<u8>,
    offset: usize,
    dst_pitch: usize,
    row_bytes: usize,
    rows: usize,
) -> Result<(), DriverError> {
    if rows == 0 || row_bytes == 0 {
        return Ok(());
    }
    let end = (rows - 1)
        .checked_mul(dst_pitch)
        .and_then(|n| n.checked_add(offset)?.checked_add(row_bytes));
    if row_bytes > dst_pitch || row_bytes > src.pitch || end.is_none_or(|end| end > dst.len()) {
        return Err(DriverError(sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE));
    }
    stream.context().bind_to_thread()?;
    let (base, _record_write) = dst.device_ptr_mut(stream);
    let copy = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: src.ptr,
        srcArray: std::ptr::null_mut(),
        srcPitch: src.pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: base + offset as u64,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: row_bytes,
        Height: rows,
    };
    // SAFETY: the descriptor is fully initialised and read during the call; the destination rows lie inside
    // `dst` (checked above), which stays alive until the copy is done (its drop frees it on the same stream);
    // the source is a live device plane of at least `rows` rows at its pitch, as the caller's decoder mapped it,
    // and the copy is ordered on `stream` before the surface is unmapped.
    unsafe { sys::cuMemcpy2DAsync_v2(&copy, stream.cu_stream()) }.result()
}
