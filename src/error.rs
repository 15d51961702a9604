//! The one error type of framefeed.

use std::fmt;
use std::time::Duration;

use crate::device_kind::Device;
use crate::error_code::ErrorCode;
use crate::video::VideoRef;

/// A result whose error is framefeed's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure code returned by an FFmpeg function, with FFmpeg's own text for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvError {
    /// The FFmpeg call that failed (e.g. `avformat_open_input`).
    pub operation: &'static str,
    /// The negative `AVERROR` code.
    pub code: i32,
    /// FFmpeg's description of `code` (`av_strerror`).
    pub message: String,
}

impl fmt::Display for AvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed: {} (code {})",
            self.operation, self.message, self.code
        )
    }
}

impl std::error::Error for AvError {}

/// FFmpeg's `FFERRTAG`: an error code made of four characters.
const fn fferrtag(tag: &[u8; 4]) -> i32 {
    -(i32::from_le_bytes(*tag))
}

impl AvError {
    /// What went wrong, in framefeed's own words for a client: no FFmpeg function name, code or wording.
    ///
    /// ```
    /// let e = framefeed::AvError { operation: "avcodec_send_packet", code: -1_094_995_529, message: "Invalid data found when processing input".into() };
    /// assert_eq!(e.plain_reason(), "its data is not valid for its codec");
    /// ```
    pub fn plain_reason(&self) -> &'static str {
        const INVALIDDATA: i32 = fferrtag(b"INDA");
        const PATCHWELCOME: i32 = fferrtag(b"PAWE");
        const EOF: i32 = fferrtag(b"EOF ");
        const ENOMEM: i32 = -12;
        const ENOSYS: i32 = -38;
        match self.code {
            INVALIDDATA => "its data is not valid for its codec",
            PATCHWELCOME | ENOSYS => "it uses a feature the decoder does not implement",
            EOF => "it ended in the middle of its data",
            ENOMEM => "memory ran out while decoding it",
            _ => "the decoder failed on it",
        }
    }
}

/// Why one fed video could not be (fully) decoded. Carried by [`Error::Video`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VideoError {
    /// The buffer was empty.
    #[error("the buffer is empty")]
    Empty,
    /// No demuxer recognised the bytes (random data, text, a truncated header...).
    #[error("not a recognised video container ({0})")]
    NotAVideo(AvError),
    /// The container holds no video stream (audio only, subtitles...).
    #[error("the container has no video stream")]
    NoVideoStream,
    /// A reader's audio was asked of a video with no audio stream (or none that can be decoded).
    #[error("the container has no audio stream framefeed can decode")]
    NoAudioStream,
    /// The requested stream index does not exist or is not a video stream.
    #[error("stream {index} is not a video stream of this container ({streams} streams)")]
    StreamNotFound {
        /// The index that was asked for.
        index: usize,
        /// How many streams the container has.
        streams: usize,
    },
    /// The system's FFmpeg has no decoder for the stream's codec.
    #[error("no decoder for codec '{codec}' in this FFmpeg build")]
    UnsupportedCodec {
        /// FFmpeg's name for the codec (`none` when the container's codec tag is unknown).
        codec: String,
    },
    /// The frame size is zero or larger than the configured limit.
    #[error("absurd frame size {width}x{height} (allowed: 1..={max_dimension} per side and at most {max_pixels} pixels)")]
    AbsurdDimensions {
        /// Width in pixels.
        width: i64,
        /// Height in pixels.
        height: i64,
        /// Largest allowed side.
        max_dimension: u32,
        /// Largest allowed width * height.
        max_pixels: u64,
    },
    /// The container was read to its end without one decodable frame.
    #[error("the video stream holds no decodable frame")]
    NoFrames,
    /// The [sampling](crate::Sampling) asks for frames this video does not have (an index past its end), or
    /// for clips of a video whose length cannot be known in advance.
    #[error("cannot sample this video: {reason}")]
    Sampling {
        /// What was asked, and what the video has.
        reason: String,
    },
    /// A frame asked for by index (a [`VideoReader`](crate::VideoReader) read; with
    /// [`Config::strict`](crate::Config::strict), any) is a hole: its picture does not decode (damaged data).
    /// The indices around it keep their pictures.
    #[error("display index {index} ({:.3} s) has no picture: its data does not decode (a hole in the video)", *pts_us as f64 / 1e6)]
    Hole {
        /// The display index.
        index: u64,
        /// Its time in microseconds (the error is `Eq`: no float).
        pts_us: i64,
    },
    /// With [`Config::strict`](crate::Config::strict): the video's data is damaged (as `ffmpeg -xerror`); the
    /// frames before the damage were delivered.
    #[error("damaged data after {frames} frames (strict): {what}")]
    Damaged {
        /// Frames delivered before it.
        frames: u64,
        /// What was damaged, and where.
        what: String,
    },
    /// Reading the container failed part way (truncated file, broken structure).
    /// Frames decoded before the failure were delivered.
    #[error("demuxing failed after {frames} frames: {source}")]
    Demux {
        /// Frames delivered before the failure.
        frames: u64,
        /// FFmpeg's error.
        source: AvError,
    },
    /// With [`Config::strict`](crate::Config::strict): some packets could not be decoded (corrupt data); the
    /// frames decoded before were delivered.
    #[error("{failed_packets} packets could not be decoded ({frames} frames were decoded); first failure: {first}")]
    Corrupt {
        /// Packets the decoder rejected.
        failed_packets: u64,
        /// Frames delivered.
        frames: u64,
        /// The first rejection.
        first: AvError,
    },
    /// The live video was aborted by its producer ([`LiveVideo::abort`](crate::LiveVideo::abort), or the handle
    /// was dropped without [`finish`](crate::LiveVideo::finish)). Frames decoded before were delivered.
    #[error("the live upload was aborted after {received} bytes: {reason}")]
    LiveAborted {
        /// The reason the producer gave.
        reason: String,
        /// Bytes received before the abort.
        received: u64,
    },
    /// No chunk of the live video arrived for the configured
    /// [`stall_timeout`](crate::Config::stall_timeout). Frames decoded before were delivered.
    #[error(
        "the live upload stalled: no data for {waited:?} after {received} bytes (stall_timeout)"
    )]
    LiveStalled {
        /// How long the decoder waited.
        waited: Duration,
        /// Bytes received before the stall.
        received: u64,
    },
    /// A source pulled by URL ([`VideoInput::feed_url`](crate::VideoInput::feed_url)) could not be opened,
    /// after every attempt its [`Reconnect`](crate::Reconnect) policy allows; or a remote object could not be
    /// opened or read (a byte range that still failed after the [`RemoteOptions`](crate::RemoteOptions)'
    /// retries, named in `reason`).
    #[error("could not read {url}{}: {reason}", attempts_said(*attempts))]
    SourceUnavailable {
        /// The URL, without any credentials it held.
        url: String,
        /// Attempts made (a remote object's request retries are within one attempt; its `reason` says them).
        attempts: u32,
        /// Why the last attempt failed (FFmpeg's message, the open timeout, or the object store's answer).
        reason: String,
    },
    /// A source pulled by URL dropped (a read failed or waited past its read timeout) and its
    /// [`Reconnect`](crate::Reconnect) policy allows no more reopening. Frames decoded before were delivered.
    #[error(
        "the source {url} dropped after {frames} frames and {reconnects} reconnects: {reason}"
    )]
    SourceLost {
        /// The URL, without any credentials it held.
        url: String,
        /// Frames decoded before.
        frames: u64,
        /// Times the source was reopened before.
        reconnects: u32,
        /// Why (FFmpeg's message, or the read timeout).
        reason: String,
    },
    /// A live video is an MP4 whose index (`moov`) comes after its media data (`mdat`), and strictly-live mode
    /// ([`MoovAtEnd::Fail`](crate::MoovAtEnd)) was asked for.
    #[error("this MP4 has its index (moov) after its media data (mdat), so it cannot be decoded before the upload ends, and strictly-live mode (MoovAtEnd::Fail) was asked for; send it fragmented or with -movflags +faststart, or allow MoovAtEnd::Buffer")]
    MoovAtEndLive,
    /// A live MP4 with its index at the end grew past the buffering limit before its upload ended.
    #[error("this MP4 has its index (moov) after its media data (mdat), so it is buffered until the upload ends, but it grew past the limit of {max_bytes} bytes (MoovAtEnd::Buffer max_bytes); send it fragmented or with -movflags +faststart, or raise the limit")]
    MoovAtEndTooLarge {
        /// The configured limit.
        max_bytes: u64,
    },
    /// A video fed in chunks to be decoded whole ([`VideoInput::feed_live_whole`](crate::VideoInput::feed_live_whole),
    /// an upload with clips) grew past its limit before it ended.
    #[error("this video is collected whole before it is decoded (clips need its whole length), but it grew past the limit of {max_bytes} bytes; send a shorter video, sample it with stride, step, fps or a time range instead of clips, or raise the limit")]
    WholeTooLarge {
        /// The limit.
        max_bytes: u64,
    },
    /// The configured crop is larger than the (resized) frame and its out-of-bounds policy is `Error`.
    #[error("crop {}x{} does not fit in the {}x{} frame (out_of_bounds policy: error)", crop.0, crop.1, frame.0, frame.1)]
    CropOutOfBounds {
        /// The crop's width and height.
        crop: (u32, u32),
        /// The (resized) frame's width and height.
        frame: (u32, u32),
    },
    /// The container claims what would make the demuxer take memory out of all proportion to the input: an
    /// MP4/MOV index of more samples than the file has bytes or than
    /// [`Config::max_container_samples`](crate::Config::max_container_samples) allows, a table longer than its
    /// box, a sample description past its table, a compressed movie header, or (live) an index box too large to
    /// hold. Refused before the demuxer reads the claim; the message names it.
    #[error("implausible container: {reason}")]
    ImplausibleContainer {
        /// Which claim, with its numbers.
        reason: String,
    },
    /// One batch of this video's output frames would take more than
    /// [`Config::max_batch_bytes`](crate::Config::max_batch_bytes): nothing was allocated for it.
    #[error(
        "a batch of {max_batch_size} sequences of {sequence_length} frames of {}x{} ({bytes_per_pixel} bytes per pixel) would take {}, over max_batch_bytes {limit}; lower sequence_length or max_batch_size, crop or resize the frames, or raise max_batch_bytes",
        frame.0, frame.1, bytes.map_or("more than 2^64 bytes".to_owned(), |b| format!("{b} bytes"))
    )]
    BatchTooLarge {
        /// The configured `max_batch_size`.
        max_batch_size: usize,
        /// The configured `sequence_length`.
        sequence_length: usize,
        /// The output frame's width and height.
        frame: (usize, usize),
        /// Bytes per output pixel (3 channels times the element size).
        bytes_per_pixel: usize,
        /// The batch's bytes (`None`: more than fits in 64 bits).
        bytes: Option<u64>,
        /// The configured `max_batch_bytes`.
        limit: u64,
    },
    /// Memory for this video's output could not be allocated (the system refused it); the process goes on.
    #[error("could not allocate {bytes} bytes for {what}")]
    OutOfMemory {
        /// What the memory was for.
        what: &'static str,
        /// How many bytes were asked for.
        bytes: usize,
    },
    /// NVDEC cannot decode this stream (codec, profile, bit depth, chroma format or size) and the
    /// configuration forbids falling back to the CPU ([`Config::cpu_fallback`](crate::Config::cpu_fallback)).
    #[error("NVDEC cannot decode this stream ({reason}) and CPU fallback is disabled")]
    NvdecUnsupported {
        /// What NVDEC does not support.
        reason: String,
    },
    /// A CUDA call failed while decoding or converting on the GPU.
    #[error("CUDA error while {operation}: {message}")]
    Cuda {
        /// What was being done.
        operation: &'static str,
        /// The driver's message.
        message: String,
    },
    /// Another FFmpeg failure (opening the codec, creating the colour converter...).
    #[error(transparent)]
    Ffmpeg(#[from] AvError),
}

/// Every error framefeed returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration was rejected by [`VideoInput::new`](crate::VideoInput::new); the message names the
    /// field and its allowed range.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A non-blocking [`next_batch`](crate::VideoInput::next_batch) found nothing fed and nothing ready.
    #[error("No data was provided to the video input: nothing is fed and no batch is ready. Feed a video first, or poll in blocking mode.")]
    NoData,
    /// [`try_next_batch`](crate::VideoInput::try_next_batch) found no batch ready yet, though videos are still
    /// being decoded.
    #[error("no batch is ready yet (videos are still being decoded)")]
    NotReady,
    /// [`next_batch_timeout`](crate::VideoInput::next_batch_timeout) waited this long without a batch.
    #[error("no batch became ready within {0:?}")]
    Timeout(Duration),
    /// [`feed`](crate::VideoInput::feed) was called after [`close`](crate::VideoInput::close).
    #[error("the input is closed: no more videos can be fed")]
    Closed,
    /// A chunk was pushed to a live video that no longer takes data: it failed (its error comes through the
    /// batch polls), or its operator was dropped.
    #[error("{video} no longer takes data: it has failed or its operator was dropped")]
    LiveEnded {
        /// Which video.
        video: VideoRef,
    },
    /// One video failed; the operator goes on with the next one.
    #[error("{video}: {error}")]
    Video {
        /// Which video.
        video: VideoRef,
        /// What went wrong.
        error: VideoError,
    },
    /// [`Device::Cuda`] was asked for, but CUDA cannot be used here: the `cuda` feature is
    /// not built, the NVIDIA driver or NVDEC's library is missing, or the device does not exist.
    /// ([`Device::Auto`] picks the CPU instead.)
    #[error("cannot use {device}: {reason}")]
    CudaUnavailable {
        /// The device asked for.
        device: Device,
        /// Why it cannot be used.
        reason: String,
    },
    /// A CUDA call on a batch in GPU memory failed (copying it to the host, for instance).
    #[error("CUDA error while {operation}: {message}")]
    Cuda {
        /// What was being done.
        operation: &'static str,
        /// The driver's message.
        message: String,
    },
    /// Memory for a copy the caller asked for (a GPU batch to the host) could not be allocated.
    #[error("could not allocate {bytes} bytes for {what}")]
    OutOfMemory {
        /// What the memory was for.
        what: &'static str,
        /// How many bytes were asked for.
        bytes: usize,
    },
    /// The decoding thread stopped unexpectedly (a bug: please report it).
    #[error("the decoding thread stopped unexpectedly: {0}")]
    WorkerDied(String),
}

/// Why [`VideoInput::try_feed`](crate::VideoInput::try_feed) or
/// [`LiveVideo::try_push`](crate::LiveVideo::try_push) did not take a buffer; the buffer is handed back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TryFeedError {
    /// The queue (or the live video's buffer) is full now; try again after a batch is consumed.
    #[error("the queue is full; the buffer was handed back")]
    Full(bytes::Bytes),
    /// The input is closed, or the live video no longer takes data.
    #[error("the input no longer takes data; the buffer was handed back")]
    Closed(bytes::Bytes),
}

impl TryFeedError {
    /// The buffer that was not taken.
    pub fn into_inner(self) -> bytes::Bytes {
        match self {
            TryFeedError::Full(b) | TryFeedError::Closed(b) => b,
        }
    }

    /// Whether the queue was full (rather than closed).
    pub fn is_full(&self) -> bool {
        matches!(self, TryFeedError::Full(_))
    }
}

impl VideoError {
    /// A short, stable name for what went wrong: the one vocabulary of the service's JSON errors (`code`) and
    /// Python's exceptions (`code`). Several variants may share a code when a client would handle them alike.
    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    /// [`code`](Self::code) as its entry in the table of codes.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            VideoError::Empty => ErrorCode::Empty,
            VideoError::NotAVideo(_) | VideoError::ImplausibleContainer { .. } => {
                ErrorCode::NotAVideo
            }
            VideoError::NoVideoStream | VideoError::StreamNotFound { .. } => {
                ErrorCode::NoVideoStream
            }
            VideoError::NoAudioStream => ErrorCode::NoAudioStream,
            VideoError::UnsupportedCodec { .. } => ErrorCode::UnsupportedCodec,
            VideoError::AbsurdDimensions { .. } => ErrorCode::FrameTooLarge,
            VideoError::NoFrames => ErrorCode::NoFrames,
            VideoError::Sampling { .. } => ErrorCode::BadSampling,
            VideoError::Hole { .. } | VideoError::Damaged { .. } => ErrorCode::Corrupt,
            VideoError::Demux { .. } | VideoError::Corrupt { .. } => ErrorCode::Corrupt,
            VideoError::LiveAborted { .. } => ErrorCode::Aborted,
            VideoError::LiveStalled { .. } => ErrorCode::Stalled,
            VideoError::SourceUnavailable { .. } => ErrorCode::SourceUnavailable,
            VideoError::SourceLost { .. } => ErrorCode::SourceLost,
            VideoError::MoovAtEndLive | VideoError::MoovAtEndTooLarge { .. } => {
                ErrorCode::MoovAtEnd
            }
            VideoError::WholeTooLarge { .. } => ErrorCode::BodyTooLarge,
            VideoError::CropOutOfBounds { .. } => ErrorCode::CropOutOfBounds,
            VideoError::BatchTooLarge { .. } => ErrorCode::OverMemoryBudget,
            VideoError::OutOfMemory { .. } => ErrorCode::OutOfMemory,
            VideoError::NvdecUnsupported { .. } => ErrorCode::NvdecUnsupported,
            VideoError::Cuda { .. } => ErrorCode::Cuda,
            VideoError::Ffmpeg(_) => ErrorCode::DecodeFailed,
        }
    }
}

impl Error {
    /// What went wrong, in words for the one who gave the input: for an [`Error::Config`], its message
    /// without the `invalid configuration: ` prefix (a front end that names the setting's source itself,
    /// such as a 400 reply or a Python `ValueError`, shows just the reason); for every other error, its
    /// [`Display`](std::fmt::Display) text.
    pub fn into_reason(self) -> String {
        match self {
            Error::Config(message) => message,
            other => other.to_string(),
        }
    }

    /// A short, stable name for what went wrong, in the vocabulary of [`VideoError::code`] (which an
    /// [`Error::Video`] gives).
    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    /// [`code`](Self::code) as its entry in the table of codes.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            Error::Config(_) => ErrorCode::InvalidConfig,
            Error::NoData => ErrorCode::NoData,
            Error::NotReady => ErrorCode::NotReady,
            Error::Timeout(_) => ErrorCode::Timeout,
            Error::Closed => ErrorCode::Closed,
            Error::LiveEnded { .. } => ErrorCode::LiveEnded,
            Error::Video { error, .. } => error.error_code(),
            Error::CudaUnavailable { .. } => ErrorCode::CudaUnavailable,
            Error::Cuda { .. } => ErrorCode::Cuda,
            Error::OutOfMemory { .. } => ErrorCode::OutOfMemory,
            Error::WorkerDied(_) => ErrorCode::Internal,
        }
    }

    /// The video this error is about, for [`Error::Video`].
    pub fn video(&self) -> Option<&VideoRef> {
        match self {
            Error::Video { video, .. } => Some(video),
            _ => None,
        }
    }
}

/// `SourceUnavailable`'s attempts as its message says them: nothing for one.
fn attempts_said(attempts: u32) -> String {
    if attempts == 1 {
        String::new()
    } else {
        format!(" ({attempts} attempts)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_name_the_failure() {
        let video = |error| Error::Video {
            video: VideoRef {
                id: crate::video::VideoId(0),
                label: None,
            },
            error,
        };
        assert_eq!(video(VideoError::Empty).code(), "empty");
        assert_eq!(video(VideoError::NoFrames).code(), "no_frames");
        assert_eq!(Error::Closed.code(), "closed");
        assert_eq!(Error::Config("x".into()).code(), "invalid_config");
        assert_eq!(Error::Config("x is 0".into()).into_reason(), "x is 0");
        assert_eq!(Error::Closed.into_reason(), Error::Closed.to_string());
    }
}
