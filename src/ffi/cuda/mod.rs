//! The CUDA side of the FFI layer. In both builds: the conversion kernel's parameter block ([`params`]) and,
//! for the tests, the kernel's code compiled for the CPU (`host`). With the `cuda` feature: probing the driver
//! without panicking (`probe`), libavcodec's CUDA device built around framefeed's own context and stream and
//! the NVDEC decoder opened on it (`hw`), loading and launching the kernel (`kernel`), and for the direct
//! NVDEC decoder, NVIDIA's parser and decoder (`nvcuvid`) and the Annex B bitstream they read (`bitstream`), and copying a
//! decoded picture's planes out of NVDEC's surface (`copy`).

#[cfg(feature = "cuda")]
pub(crate) mod bitstream;
#[cfg(feature = "cuda")]
pub(crate) mod copy;
#[cfg(test)]
pub(crate) mod host;
#[cfg(feature = "cuda")]
pub(crate) mod hw;
#[cfg(feature = "cuda")]
pub(crate) mod kernel;
#[cfg(feature = "cuda")]
pub(crate) mod nvcuvid;
pub(crate) mod params;
#[cfg(feature = "cuda")]
pub(crate) mod probe;
