//! Decoder backends behind one trait, [`Decoder`]: the CPU backend ([`cpu::CpuDecoder`], libavcodec) and the
//! NVDEC backend (libavcodec's hwaccel on the operator's CUDA context), which the `cuda` feature swaps in as a
//! whole module: `cuda.rs` with it, `cuda_none.rs` (nothing to open: there is no GPU runtime) without.
//! With the feature, `nvcuvid.rs` is the direct NVDEC backend (NVIDIA's parser and decoder with a decode queue),
//! a module of `cuda.rs`, which opens it for the codecs it takes unless the config asks for the hwaccel. Each backend hands every decoded
//! frame to the transform stage as a [`FrameRef`](crate::decode::frame::FrameRef): in host or GPU memory.
//! `damage` marks the damaged pictures (concealed, or decoded after damage in their GOP), by one rule for every
//! API.

pub(crate) mod audio;
mod backend;
pub(crate) mod cpu;
pub(crate) mod damage;
pub(crate) mod frame;
#[cfg_attr(feature = "cuda", path = "cuda.rs")]
#[cfg_attr(not(feature = "cuda"), path = "cuda_none.rs")]
mod nvdec;
mod nvdec_support;
mod steady;

pub(crate) use backend::{Decoder, FrameInfo, FrameSink, Stop};
pub(crate) use nvdec::{hold_picture, open as open_nvdec, HeldPicture};
pub(crate) use nvdec_support::nvdec_support;
