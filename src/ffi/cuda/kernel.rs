//! The conversion kernel (`kernels/convert.cu`, shipped as PTX): loading it into a context and launching it
//! with a [`ConvertParams`] block. In tests, the same source compiled as C++ runs the kernel's per-pixel code
//! on the CPU ([`host`]).

use std::sync::Arc;

use cudarc::driver::PushKernelArg;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DeviceRepr, DriverError, LaunchConfig,
};
use cudarc::nvrtc::Ptx;

use crate::transform::gpu::ConvertParams;

// SAFETY: ConvertParams is #[repr(C)], made of integers and floats only, with the layout of the kernel's
// `struct ConvertParams` (checked against the PTX's parameter size in the tests).
unsafe impl DeviceRepr for ConvertParams {}

/// The PTX made from `kernels/convert.cu` by `kernels/build.sh`.
pub(crate) const PTX: &str = include_str!("../../transform/convert.ptx");
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

/// The kernel's per-pixel code compiled for the CPU, to test its arithmetic where there is no GPU.
#[cfg(test)]
pub(crate) mod host {
    use super::ConvertParams;
    use std::path::Path;

    /// `kernels/convert.cu` built as a shared library with the system's C++ compiler and loaded.
    pub(crate) struct HostKernel {
        _lib: libloading::Library,
        entry: unsafe extern "C" fn(*const ConvertParams),
    }

    impl HostKernel {
        /// Compiles the kernel source (once per call) into `dir`. `Err` when no C++ compiler is found.
        pub(crate) fn build(dir: &Path) -> Result<Self, String> {
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/convert.cu");
            let lib = dir.join("framefeed_convert_host.so");
            let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
            let out = std::process::Command::new(&cxx)
                .args(["-x", "c++", "-O2", "-shared", "-fPIC", "-o"])
                .arg(&lib)
                .arg(&src)
                .output()
                .map_err(|e| format!("{cxx}: {e}"))?;
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).into_owned());
            }
            // SAFETY: the library is the kernel source we just compiled; it has no initialisers of its own.
            let lib = unsafe { libloading::Library::new(&lib) }.map_err(|e| e.to_string())?;
            // SAFETY: `framefeed_convert_host` has this signature in kernels/convert.cu.
            let entry = unsafe {
                *lib.get::<unsafe extern "C" fn(*const ConvertParams)>(b"framefeed_convert_host\0")
                    .map_err(|e| e.to_string())?
            };
            Ok(Self { _lib: lib, entry })
        }

        /// Runs the kernel's grid on the CPU. `params`' addresses are host addresses here: `luma`/`chroma`
        /// of `src` planes with their pitches, `out` of a buffer of the sequence's output size.
        pub(crate) fn run(&self, params: &ConvertParams, planes: (&[u8], &[u8]), out: &mut [u8]) {
            let (luma, chroma) = planes;
            let rows = |pitch: i32, h: i32| pitch as usize * h as usize;
            assert!(luma.len() >= rows(params.luma_pitch, params.src_h));
            assert!(chroma.len() >= rows(params.chroma_pitch, (params.src_h + 1) / 2));
            assert!(out.len() >= params.output_bytes());
            let mut p = *params;
            p.luma = luma.as_ptr() as u64;
            p.chroma = chroma.as_ptr() as u64;
            p.out = out.as_mut_ptr() as u64;
            // SAFETY: every address points into a live slice of the size the kernel reads or writes (asserted
            // above from the same parameters the kernel uses).
            unsafe { (self.entry)(&p) }
        }
    }
}
