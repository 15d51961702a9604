//! # framefeed
//!
//! A streaming video input operator: an application feeds encoded videos into a bounded queue (whole files in
//! memory, files by path ([`Encoded::file`], [`FileList`]), any source read at offsets ([`ReadAt`]), live
//! streams chunk by chunk through a [`LiveVideo`], or URLs: cameras and streams through FFmpeg's protocols,
//! objects in S3, GCS, Azure or on an HTTP(S) server read by byte ranges); framefeed demuxes and decodes them incrementally on its decoding thread (FFmpeg's libavcodec, or
//! NVDEC with the `cuda` feature) and yields **batches of up to `max_batch_size` sequences of `sequence_length`
//! frames** (consecutive by default; [`Sampling`] picks strided frames, clips, time ranges or indices), RGB
//! laid out (F,H,W,3) in `u8` by default ([`Transforms`]: size, crop, element type, normalization, layout),
//! following the batching contract of NVIDIA DALI's `fn.experimental.inputs.video`, and telling always how
//! many frames of a padded sequence are real. [`VideoReader`] reads frames of one video by index or time.
//!
//! ```
//! use framefeed::{Config, LastSequencePolicy, VideoInput};
//!
//! let input = VideoInput::new(Config::new(16, 2).last_sequence_policy(LastSequencePolicy::Pad))?;
//! input.feed((framefeed::SAMPLE_MP4, "sample.mp4"))?; // 60 frames of 320x240, zero-copy
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
//! ## Cargo features
//! None is on by default: `cargo add framefeed` gives the library alone (FFmpeg linked through `pkg-config`).
//!
//! - `cli`: the `framefeed` command-line tool (`framefeed run`, `framefeed serve`), with `json` and `server`
//!   and the tool's own dependencies (clap, indicatif, tracing-subscriber):
//!   `cargo install framefeed --features cli`.
//! - `server`: [`server`], the HTTP ingest service that `framefeed serve` runs, to embed in a program.
//! - `json`: `report`, batches and errors as the JSON objects the CLI and the service print.
//! - `cuda`: NVDEC decoding with frames kept on the GPU ([`Device::Cuda`]). It builds without a CUDA toolkit
//!   or driver: the CUDA libraries are loaded at run time, and their absence is an error value.
//! - `static-ffmpeg`: links FFmpeg's static libraries (`pkg-config --static`), as the self-contained Python
//!   wheel does.
//!
//! On docs.rs, an item that needs a feature is labelled with it.
//!
//! ## The pipeline, one folder per stage
//! In pipeline order; each stage imports only the stages before it and the layers below them
//! (`tests/architecture.rs` checks it), and each folder's module doc says what it takes and hands on:
//!
//! 1. `source`: what comes in: the bounded feed queue ([`feed`](crate::VideoInput::feed), with
//!    backpressure), a live video's chunks ([`feed_live`](crate::VideoInput::feed_live)), URLs and their
//!    reconnect policy ([`UrlOptions`]), file lists ([`FileList`]).
//! 2. `demux`: opening a source (AVIO over memory, live chunks or FFmpeg's protocols), choosing its video
//!    stream, reading its packets; `demux::mp4` checks an MP4's claims before the demuxer acts on them and
//!    reads a live MP4 one checked box at a time.
//! 3. `decode`: decoder backends behind one trait (CPU libavcodec; NVDEC, direct or through libavcodec's
//!    hwaccel); hands on each frame in host or GPU memory (`decode::frame`).
//! 4. `sample`: which frames become which sequences ([`Sampling`]: stride, step, clips, fps, time ranges,
//!    indices, segments), a whole video's frame index (`index`, `start`) and a decode of only the frames they
//!    need, seeking to each one's keyframe (`seek`; `live` for videos read in order).
//! 5. `transform`: conversion and transforms, per-sequence geometry (`plan`), the CPU path over swscale
//!    (`host`, `resample`), the CUDA kernel's parameters (`gpu`), type and layout (`write`).
//! 6. `assembly`: sequences and batches written in place (`assembler`), [`Batch`] (`batch`), pooled host
//!    buffers (`pool`), the reference arithmetic ([`BatchOutline`], `outline`).
//! 7. `operator`: the handle, [`VideoInput`] (blocking, non-blocking, timeout, iterator, async future and
//!    stream), and its decoding thread (`worker`, whose module doc walks one frame through the stages).
//! 8. `reader`: random access to one whole video ([`VideoReader`]): frames by index, range and time, on the
//!    sampling stage's index and seeker.
//! 9. `mux`: batching across live cameras ([`Mux`]): a deadline, one shape a batch, oldest first, every frame
//!    or latest only.
//!
//! Below the stages: leaf types every stage may use (`settings`: [`Config`], [`Transforms`], [`MuxConfig`],
//! [`UrlOptions`], the one vocabulary of settings the front ends parse; `device_kind`: [`Device`]; `error`, and
//! `error_code`: the one table of codes, [`ErrorCode`]; `video`: ids and labels; `signal`: stop and wake
//! signals; `info`: what a container holds, and the FFmpeg linked), the FFI layer (`ffi`: FFmpeg, behind
//! version `cfg`s from `build.rs` where releases differ, its SIMD kernels in `ffi::simd` and, in `ffi::cuda`,
//! the CUDA driver, nvcuvid and the kernel's parameter block), where all `unsafe` code lives, and the device layer (`device`: the GPU runtime and device buffers, real with the `cuda` feature and
//! uninhabited without it, so shared code has no `cfg`). Above them, the front ends: [`server`] (the
//! `framefeed serve` service), `report` (JSON), the CLI in `src/bin`.
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
//! two videos (unless [`Config::pack_batches`] packs consecutive videos' sequences of one shape into full
//! batches). framefeed needs no frame count: it finds the last sequence by reaching the end of the stream.
//! If the frame size changes inside a stream, the frames before the change end their sequence (which follows
//! the policy, like a last one) and their batch; the frames after it start a new batch.
//!
//! ## Colour
//! Frames are converted to RGB with the stream's own matrix (BT.601, BT.709, BT.2020...) and range (limited
//! or full). Where the stream leaves the matrix unspecified, BT.601 is used, as FFmpeg does, so the output
//! matches `ffmpeg -pix_fmt rgb24`; an unspecified range is taken as limited (full for the `yuvj*` formats).
//! Sources of more than 8 bits a sample (10 or 12 bits, HDR or not) are converted to 8-bit RGB by default;
//! [`DType::U16`] keeps them at 16 bits (exactly the values of `ffmpeg -pix_fmt rgb48le`), and the float types
//! ([`DType::F32`], [`DType::F16`] and their `Unit` forms) keep their precision. PQ and HLG frames keep their
//! transfer unless [`Transforms::tonemap`] maps them to SDR ([`ToneMap`]).
//!
//! ## Bad input
//! An empty or unreadable video, one with no video stream, an unsupported codec, absurd dimensions or no frame
//! fails alone: its batches decoded so far are delivered, then one [`Error::Video`] naming it and why; the
//! operator goes on with the next video.
//!
//! ## Damaged videos
//! One numbering in every API (the operator, the reader, the service, Python): a frame's display index is its
//! place in the stream's display order, and a picture that does not decode leaves a [`Hole`]
//! ([`Sequence::holes`]) that renumbers nothing. Each frame says whether it is damaged ([`Frame::damaged`]); a
//! frame not damaged is the same picture in every API and the `ffmpeg` CLI's at its time. By default damage
//! fails nothing (as the CLI); [`Config::strict`] fails the video at its first damage (as `ffmpeg -xerror`).
//!
// `[`server`]` above: the module where it is built, else its page on docs.rs (built with every feature).
#![cfg_attr(feature = "server", doc = "[`server`]: server")]
#![cfg_attr(
    not(feature = "server"),
    doc = "[`server`]: <https://docs.rs/framefeed/latest/framefeed/server/index.html>"
)]
#![deny(unsafe_code)]
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, nightly rustdoc): each item gated on a feature is labelled with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod assembly;
mod decode;
mod demux;
mod device;
mod device_kind;
mod error;
mod error_code;
mod ffi;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod guide_doctests;
mod info;
mod mux;
mod operator;
mod orientation;
mod reader;
#[cfg(feature = "json")]
pub mod report;
mod sample;
#[cfg(feature = "server")]
pub mod server;
mod settings;
mod signal;
mod source;
#[cfg(test)]
mod testing;
mod transform;
mod video;

pub use assembly::batch::{Batch, CropWindow, Frame, Gap, Hole, Sequence};
pub use assembly::outline::BatchOutline;
pub use decode::audio::{decode_audio, AudioClip};
pub use demux::{ffmpeg_build, probe};
pub use device::{cuda_status, DecodedOn, Device};
pub use error::{AvError, Error, Result, TryFeedError, VideoError};
pub use error_code::{CodeSource, ErrorCode};
/// The 16-bit float type of [`DType::F16`] output (from the `half` crate).
pub use half::f16;
pub use info::{
    ColorInfo, ContainerInfo, ContentLight, DynamicRange, FfmpegBuild, MasteringDisplay, MediaKind,
    StreamInfo,
};
pub use mux::futures::{MuxEvents, MuxReady, NextEvent};
pub use mux::{CameraId, CameraStats, Mux, MuxBatch, MuxConfig, MuxEntry, MuxEvent, MuxPolicy};
pub use operator::epoch_feed::EpochFeed;
pub use operator::feeding::FeedVideo;
pub use operator::futures::{BatchStream, FeedReady, NextBatch, Ready};
pub use operator::handle::VideoInput;
pub use operator::polling::Batches;
pub use orientation::{display_rotation, Orientation};
pub use reader::{AudioMetadata, Frames, VideoMetadata, VideoReader};
pub use sample::segments::{segments, segments_from_index};
pub use settings::audio::Audio;
pub use settings::choice::Choice;
pub use settings::config::{
    limits, Config, LastSequencePolicy, MoovAtEnd, NvdecDriver, StreamSelection, Threading,
};
pub use settings::remote::{is_remote_url, RemoteOptions, SeekMode};
pub use settings::sampling::{ClipPolicy, ClipSampler, Sampling, SamplingOptions};
pub use settings::seconds::seconds_setting;
pub use settings::url::{Reconnect, RtspTransport, Scheme, UrlOptions};
pub use source::files::FileList;
pub use source::live::{LiveVideo, PushChunk, PushReady};
pub use source::remote::{remote_index_scans, RemoteStats};
pub use source::store::list_remote;
pub use source::url::redact_url;
pub use transform::{
    Crop, CropPosition, DType, Interpolation, Layout, Normalize, OutOfBounds, OutOfBoundsMode,
    Resize, ResizeMode, ResizeStage, ToneMap, ToneMapOp, TransformOptions, Transforms, CHANNELS,
};
pub use video::{Encoded, Label, ReadAt, SourceFailure, VideoId, VideoRef};

/// A small sample video built into the library and the CLI: 2 s of FFmpeg's `testsrc2` pattern, 320x240 at
/// 30 fps (60 frames), H.264 in MP4 (made by `tests/fixtures/make.sh`).
pub static SAMPLE_MP4: &[u8] = include_bytes!("../assets/sample.mp4");
