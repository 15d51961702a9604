//! The SIMD kernels of the unsafe layer, each with a scalar twin its vector code is tested against: the
//! kernel choice detected once per process (`kernel`), YUV to RGB rows (`yuv2rgb`), the resampler's passes
//! (`filter_rows`), the float writer's channel split (`split_channels`) and squares of pixels transposed for a
//! picture's quarter turn (`transpose`).

pub(crate) mod filter_rows;
pub(crate) mod kernel;
pub(crate) mod split_channels;
pub(crate) mod transpose;
pub(crate) mod yuv2rgb;
