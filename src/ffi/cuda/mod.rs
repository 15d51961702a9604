//! The CUDA side of the FFI layer (feature `cuda`): probing the driver without panicking ([`probe`]), the
//! libavcodec CUDA device built around framefeed's own context and stream ([`hw::HwDevice`]), NVDEC frames'
//! device planes ([`hw::Surface`]), and launching the conversion kernel ([`kernel`]).

pub(crate) mod hw;
pub(crate) mod kernel;
pub(crate) mod probe;
