//! The device layer: where frames are decoded and batches live. [`Device`] and [`DecodedOn`] are plain values
//! (in `device_kind`, a leaf that the errors and the settings share); the GPU runtime (one per operator: the device's primary CUDA context, the operator's stream, the
//! conversion kernel, libavcodec's CUDA device) and its pooled device buffers are the implementation chosen by
//! the `cuda` feature, swapped as a whole module:
//!
//! - `cuda.rs` (feature `cuda`): the real runtime, on cudarc. A [`DeviceBuffer`] carries its runtime (and so
//!   its stream and kernel): whoever holds one can zero, move, convert into or copy out of it with no other
//!   context, and it goes back to its runtime's pool when dropped.
//! - `none.rs` (without it): the same names as uninhabited types. Shared code (assembly, batches, the worker)
//!   uses them without `cfg`: their fields and match arms exist in both builds, and in this one they cannot be
//!   reached, so they compile away; [`runtime`] says why there is no GPU.
//!
//! This layer sits below its users (decoders, transforms, assembly, batches) and above `ffi::cuda`.

pub use crate::device_kind::{DecodedOn, Device};

mod reuse;

pub(crate) use reuse::take_best_fit;

#[cfg_attr(feature = "cuda", path = "cuda.rs")]
#[cfg_attr(not(feature = "cuda"), path = "none.rs")]
mod imp;

/// CUDA driver errors as video errors, for the NVDEC backends (which exist with the feature only).
#[cfg(feature = "cuda")]
pub(crate) use imp::cuda_error;
pub use imp::cuda_status;
pub(crate) use imp::{runtime, DeviceBuffer, GpuRuntime};

/// Resolves `Auto` and sets up CUDA for an operator or a reader keeping at most `max_free` idle device buffers:
/// `Cuda(n)` that cannot be used is an error, `Auto` then picks the CPU.
pub(crate) fn resolve(
    device: Device,
    max_free: usize,
) -> crate::error::Result<(Device, Option<std::sync::Arc<GpuRuntime>>)> {
    let ordinal = match device {
        Device::Cpu => return Ok((Device::Cpu, None)),
        Device::Cuda(n) => n,
        Device::Auto => 0,
    };
    match runtime(ordinal, max_free) {
        Ok(gpu) => Ok((Device::Cuda(ordinal), Some(gpu))),
        Err(reason) if device == Device::Auto => {
            tracing::info!(%reason, "Device::Auto: no usable GPU, decoding on the CPU");
            Ok((Device::Cpu, None))
        }
        Err(reason) => Err(crate::error::Error::CudaUnavailable { device, reason }),
    }
}
