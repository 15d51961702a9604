//! Per-sequence transforms, fused into the frame conversion: the video's own turn (its display matrix,
//! `orient`, before anything else), resize, crop (one window for every frame of a sequence), element type,
//! normalization and layout. Configured once ([`Transforms`], in
//! `settings::transforms`), planned per sequence (`plan`) and applied per frame (`apply`): a frame in host memory through swscale, converting the
//! region `host` plans (resized first by `resample`), then `write`; a frame in GPU memory through the CUDA
//! kernel, whose parameters `gpu` fills. It takes what the decode stage hands on (`decode::frame`) and
//! hands converted frames to the assembly stage's buffers.

mod apply;
pub(crate) mod gpu;
pub(crate) mod host;
mod orient;
pub(crate) mod plan;
mod resample;
mod tonemap;
pub(crate) mod write;

pub use crate::settings::transforms::{
    Crop, CropPosition, DType, Interpolation, Layout, Normalize, OutOfBounds, OutOfBoundsMode,
    Resize, ResizeMode, ResizeStage, ToneMap, ToneMapOp, TransformOptions, Transforms, CHANNELS,
};
pub(crate) use apply::{apply, HostScratch};
pub(crate) use orient::Orienter;
