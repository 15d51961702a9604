//! End-to-end tests inside the crate (test builds only), on top of every layer: those that need private items
//! and so cannot live in `tests/`. `kernel_on_cpu` runs the CUDA kernel's own code, compiled for the CPU
//! (`ffi::cuda::host`), against the CPU backend on the same decoded planes: what NVDEC's surfaces hold is what
//! libavcodec decodes (bit-exact decoders), so given the same planes both paths must agree.

mod kernel_on_cpu;
