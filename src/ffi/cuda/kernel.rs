//! The conversion kernel (`kernels/convert.cu`, shipped as `kernels/convert.ptx`): loading it into a context
//! and launching it with a [`ConvertParams`] block (feature `cuda`).

use std::sync::Arc;

use cudarc::driver::PushKernelArg;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DeviceRepr, DriverError, LaunchConfig,
};
use cudarc::nvrtc::Ptx;

use super::params::ConvertParams;

// SAFETY: ConvertParams is #[repr(C)], made of integers and floats only, with the layout of the kernel's
// `struct ConvertParams` (checked against the PTX's parameter size in the tests).
unsafe impl DeviceRepr for ConvertParams {}

/// The PTX made from `kernels/convert.cu` by `kernels/build.sh`, beside it.
pub(crate) const PTX: &str = include_str!("../../../kernels/convert.ptx");
/// The kernel's entry point.
const ENTRY: &str = "framefeed_convert";
/// Threads per block: 32 x 8.
const BLOCK: (u32, u32) = (32, 8);

/// Loads the kernel into `ctx` (the driver JIT-compiles the PTX for the GPU once per context).
pub(crate) fn load(ctx: &Arc<CudaContext>) -> Result<CudaFunction, DriverError> {
    ctx.load_module(Ptx::from_src(PTX))?.load_function(ENTRY)
}

/// Enqueues one frame's conversion on `stream` (no host synchronisation).
pub(crate) fn launch(
    stream: &CudaStream,
    function: &CudaFunction,
    params: &ConvertParams,
) -> Result<(), DriverError> {
    let (w, h) = (params.out_w.max(1) as u32, params.out_h.max(1) as u32);
    let cfg = LaunchConfig {
        grid_dim: (w.div_ceil(BLOCK.0), h.div_ceil(BLOCK.1), 1),
        block_dim: (BLOCK.0, BLOCK.1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel's one parameter is a ConvertParams by value (same layout, see above); its device
    // addresses are a live NVDEC surface and a pooled output buffer of the size the kernel writes (the caller
    // built `params` from the buffer's region), both used in stream order on `stream`.
    unsafe { stream.launch_builder(function).arg(params).launch(cfg) }.map(|_| ())
}
