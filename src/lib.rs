//! # framefeed
//!
//! A streaming video input operator: an application feeds encoded videos (whole files in memory, or live
//! streams chunk by chunk through a [`LiveVideo`]) into a bounded queue;
//! framefeed demuxes and decodes them incrementally on a worker thread (FFmpeg's libavcodec) and yields
//! **batches of up to `max_batch_size` sequences of `sequence_length` consecutive RGB frames**, laid out
//! (F,H,W,3), following the batching contract of NVIDIA DALI's `fn.experimental.inputs.video`, and telling
//! always how many frames of a padded sequence are real.
//!
//! ```
//! use framefeed::{Config, LastSequencePolicy, VideoInput};
//!
//! let input = VideoInput::new(Config::new(16, 2).last_sequence_policy(LastSequencePolicy::Pad))?;
//! input.feed_with_label(framefeed::SAMPLE_MP4, "sample.mp4")?; // 60 frames of 320x240, zero-copy
//! input.close(); // no more videos: polls end with Ok(None)
//!
//! let mut frames = 0;
//! while let Some(batch) = input.next_batch()? {
//!     assert_eq!(batch.frame_shape(), [240, 320, 3]);
//!     for seq in batch.sequences() {
//!         assert_eq!(seq.shape()[0], 16); // padded to 16 frames...
//!         frames += seq.valid_frames(); // ...of which these are real
//!     }
//! }
//! assert_eq!(frames, 60); // batches [16,16] [16,16(12 real)]
//! # Ok::<(), framefeed::Error>(())
//! ```
//!
//! ## The pipeline, one module per stage
//! feed queue (`feed`: [`feed`](crate::VideoInput::feed), bounded, with backpressure; `live`: chunks of a live
//! video, [`feed_live`](crate::VideoInput::feed_live)) → demux (`demux`: AVIO over memory, stream choice;
//! `mp4_claims`: an MP4's claims checked before the demuxer acts on them; `mp4_live`: a live MP4 read one
//! checked box at a time) →
//! decoder backend (`decode`: CPU libavcodec and NVDEC behind one trait, `decode::backend`) → conversion and
//! transforms (`transform`: the frame contract `frame`, the spec `spec`, per-sequence geometry `plan`, the CPU
//! plan `host` over swscale's `ffi::scale`, the CUDA kernel's parameters `gpu`, type and layout `write`) →
//! sequence & batch assembly (`assemble`, `batch`, pooled host buffers in `pool`) → output ([`VideoInput`] in
//! `input`: blocking, non-blocking, timeout, iterator, async future and stream), with the decoding thread in
//! `worker` (its module doc walks one frame through these stages).
//!
//! Beside the stages: the device layer (`device`: [`Device`], and the GPU runtime and device buffers, real with
//! the `cuda` feature and uninhabited without it, so shared code has no `cfg`), leaf types (`video`: ids and
//! labels; `signal`: stop and wake signals; `error`), and the FFI layer (`ffi`: FFmpeg and, in `ffi::cuda`, the
//! CUDA driver, libavcodec's CUDA device and the kernel's parameter block), where all `unsafe` code lives.
//! Layers point one way: `tests/architecture.rs` checks that the import graph of `src/` has no cycle.
//!
//! ## Transforms
//! [`Config::transforms`] takes [`Transforms`]: resize ([`Resize`]), crop ([`Crop`], one window per sequence,
//! seeded random positions), element type ([`DType`]), normalization and layout ([`Layout`]), applied while
//! converting from the decoder's planes (only the crop window's pixels are converted). [`FileList`] feeds
//! shuffled, sharded epochs of files for training loops.
//!
//! ## Live input
//! [`VideoInput::feed_live`] returns a [`LiveVideo`]: push chunks as they arrive (blocking, non-blocking or
//! async, with backpressure), then finish it. Batches come out while the video is still arriving, memory stays
//! bounded, a stalled or aborted stream fails alone, and an MP4 with its index at the end is buffered or
//! failed fast ([`MoovAtEnd`]). [`Config::low_latency`] trades throughput for latency. See
//! [`server`] (feature `server`, the `framefeed serve` command) for the HTTP service built on it.
//!
//! ## Batching contract
//! With N frames, L = `sequence_length`, B = `max_batch_size` ([`BatchOutline`] computes it):
//! `N / (L*B)` full batches, then, if frames remain, one short batch of the remaining full sequences plus a
//! last sequence of the frames left over: shorter ([`LastSequencePolicy::Partial`]) or padded with zero frames
//! to L ([`LastSequencePolicy::Pad`]; [`Sequence::valid_frames`] gives the real count). A batch never spans
//! two videos. framefeed needs no frame count: it finds the last sequence by reaching the end of the stream.
//! If the frame size changes inside a stream, the frames before the change end their sequence (which follows
//! the policy, like a last one) and their batch; the frames after it start a new batch.
//!
//! ## Colour
//! Frames are converted to RGB with the stream's own matrix (BT.601, BT.709, BT.2020...) and range (limited
//! or full). Where the stream leaves the matrix unspecified, BT.601 is used, as FFmpeg does, so the output
//! matches `ffmpeg -pix_fmt rgb24`; an unspecified range is taken as limited (full for the `yuvj*` formats).
//! 10-bit sources are converted to 8-bit RGB.
//!
//! ## Bad input
//! An empty, unreadable, truncated or corrupt video, one with no video stream, an unsupported codec, absurd
//! dimensions or no frame fails alone: its batches decoded so far are delivered, then one
//! [`Error::Video`] naming it and why; the operator goes on with the next video.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod assemble;
mod batch;
mod config;
mod decode;
mod demux;
mod device;
mod error;
mod feed;
mod ffi;
mod files;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod info;
mod input;
mod live;
mod mp4_claims;
mod mp4_live;
mod outline;
mod pool;
#[cfg(feature = "json")]
pub mod report;
#[cfg(feature = "server")]
pub mod server;
mod signal;
mod transform;
mod url;
mod video;
mod worker;

pub use batch::{Batch, CropWindow, Frame, Gap, Sequence};
pub use config::{
    limits, Config, LastSequencePolicy, MoovAtEnd, NvdecDriver, StreamSelection, Threading,
};
pub use demux::probe;
pub use device::{cuda_status, DecodedOn, Device};
pub use error::{AvError, Error, Result, TryFeedError, VideoError};
pub use files::{EpochFeed, FileList};
/// The 16-bit float type of [`DType::F16`] output (from the `half` crate).
pub use half::f16;
pub use info::{ContainerInfo, MediaKind, StreamInfo};
pub use input::{BatchStream, Batches, FeedReady, FeedVideo, NextBatch, Ready, VideoInput};
pub use live::{LiveVideo, PushChunk, PushReady};
pub use outline::BatchOutline;
pub use transform::{
    Crop, CropPosition, DType, Interpolation, Layout, Normalize, OutOfBounds, Resize, Transforms,
    CHANNELS,
};
pub use url::{redact_url, Reconnect, RtspTransport, Scheme, UrlOptions};
pub use video::{Label, VideoId, VideoRef};

/// A small sample video built into the library and the CLI: 2 s of FFmpeg's `testsrc2` pattern, 320x240 at
/// 30 fps (60 frames), H.264 in MP4 (made by `tests/fixtures/make.sh`).
pub static SAMPLE_MP4: &[u8] = include_bytes!("../assets/sample.mp4");
