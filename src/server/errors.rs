//! What clients are told when something fails: a stable `code` and a short `message`, with the request id,
//! and never FFmpeg's function names, numeric codes or hyper's internals (those go to the server log under
//! the same request id).
//!
//! ```text
//! {"error":{"code":"not_a_video","message":"the upload is not a video container this server reads","request_id":"5f0c1a2e-00000003"}}
//! ```

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::budget::Short;
use super::shedding::Pressure;
use crate::error::{Error, VideoError};
use crate::error_code::ErrorCode;
use crate::settings::config::limits;

/// Why an upload's body was cut by the server (the video then fails with [`VideoError::LiveAborted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CutReason {
    /// The body grew past `--max-body-bytes`.
    BodyTooLarge,
    /// The client sent more slowly than `--min-upload-rate`.
    TooSlow,
    /// The body could not be read (the client went away, or broke the chunked encoding).
    BodyUnreadable,
    /// What the upload became known to need was more than the pool, or the client's share of it, had free.
    NoMemory(Short),
    /// It was shed for another upload (`shedding.rs`): it held a slot, or memory, for the fewest bytes a
    /// second.
    Shed(Pressure),
}

/// A client-facing error: the HTTP status for a refusal, the code and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
}

impl ApiError {
    /// A refusal with `code`, answered with the code's status (500 for a code that has none: a refusal
    /// always has one, held by a test).
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status: code
                .status()
                .and_then(|s| StatusCode::from_u16(s).ok())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            code,
            message: message.into(),
        }
    }

    /// The JSON object of an error line.
    pub(crate) fn line(&self, request_id: &str) -> Value {
        error_line(self.code, &self.message, request_id)
    }

    /// The refusal as a response: one error line, `Retry-After` on 429 and 503, `WWW-Authenticate` on 401.
    pub(crate) fn into_response(self, request_id: &str) -> Response {
        let mut response = (self.status, format!("{}\n", self.line(request_id))).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-ndjson"),
        );
        if matches!(
            self.status,
            StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS
        ) {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"framefeed\""),
            );
        }
        response
    }
}

/// `{"error":{"code":..,"message":..,"request_id":..}}`.
pub(crate) fn error_line(code: ErrorCode, message: &str, request_id: &str) -> Value {
    json!({"error": {"code": code.as_str(), "message": message, "request_id": request_id}})
}

/// The code and client-facing message of an operator error for an upload. `cut` says why the server cut the
/// body, when it did; `upload_budget` is the per-upload memory budget (named when a video needs more).
pub(crate) fn describe(
    error: &Error,
    cut: Option<CutReason>,
    upload_budget: u64,
) -> (ErrorCode, String) {
    let Error::Video { error, .. } = error else {
        return (
            ErrorCode::Internal,
            "the server could not decode this upload".into(),
        );
    };
    // The code is the core vocabulary's (`VideoError::code`), but for an upload the server cut (its own
    // codes say why); the message is the service's, with no FFmpeg internals.
    let code = error.error_code();
    match error {
        VideoError::Empty => (code, "the upload is empty".into()),
        VideoError::NotAVideo(_) | VideoError::ImplausibleContainer { .. } => (
            code,
            "the upload is not a video container this server reads".into(),
        ),
        VideoError::NoVideoStream | VideoError::StreamNotFound { .. } => {
            (code, "the container holds no video stream".into())
        }
        VideoError::NoFrames => (code, "the video stream holds no decodable frame".into()),
        VideoError::NoAudioStream => (code, "the container holds no audio stream".into()),
        VideoError::UnsupportedCodec { codec } => (
            code,
            format!("this server has no decoder for the codec '{codec}'"),
        ),
        // Sides within the limit and a pixel limit below the library's: the upload's memory set it.
        VideoError::AbsurdDimensions {
            width,
            height,
            max_dimension,
            max_pixels,
        } if *width > 0
            && *height > 0
            && *width <= i64::from(*max_dimension)
            && *height <= i64::from(*max_dimension)
            && *max_pixels < limits::DEFAULT_MAX_FRAME_PIXELS =>
        {
            (
                ErrorCode::OverMemoryBudget,
                format!("frames of {width}x{height} cannot fit this server's {upload_budget} bytes per upload at this sequence_length and batch_size (it fits frames of at most {max_pixels} pixels): lower sequence_length or batch_size, or send smaller frames"),
            )
        }
        VideoError::AbsurdDimensions {
            width,
            height,
            max_dimension,
            max_pixels,
        } => (
            code,
            format!("frames of {width}x{height} are outside what this server takes (at most {max_dimension} a side and {max_pixels} pixels)"),
        ),
        VideoError::Demux { frames, .. } => (
            code,
            format!("the container is truncated or broken after {frames} frames"),
        ),
        VideoError::Corrupt {
            failed_packets,
            frames,
            ..
        } => (
            code,
            format!("{failed_packets} packets could not be decoded ({frames} frames were decoded)"),
        ),
        VideoError::LiveAborted { received, .. } => match cut {
            Some(CutReason::BodyTooLarge) => (
                ErrorCode::BodyTooLarge,
                format!("the upload grew past this server's limit after {received} bytes"),
            ),
            Some(CutReason::TooSlow) => (
                ErrorCode::TooSlow,
                format!("the upload was slower than this server's minimum rate (after {received} bytes)"),
            ),
            Some(CutReason::NoMemory(Short::Pool)) => (
                ErrorCode::ServerBusy,
                format!("the server's memory for uploads was taken when this upload's video needed it (after {received} bytes); retry later"),
            ),
            Some(CutReason::NoMemory(Short::Client)) => (
                ErrorCode::TooManyUploads,
                format!("this client's uploads held their share of the server's memory when this one's video needed more (after {received} bytes); retry later"),
            ),
            Some(CutReason::Shed(Pressure::Slots)) => (
                ErrorCode::Shed,
                format!("every upload slot was taken and another client needed one: this upload delivered the fewest bytes a second of those in progress (after {received} bytes); retry, sending faster"),
            ),
            Some(CutReason::Shed(Pressure::Memory)) => (
                ErrorCode::Shed,
                format!("the server's memory for uploads was spent and another upload needed it: this one held the most memory for the bytes a second it delivered (after {received} bytes); retry later"),
            ),
            Some(CutReason::BodyUnreadable) | None => (
                ErrorCode::BodyUnreadable,
                format!("the request body could not be read after {received} bytes"),
            ),
        },
        VideoError::LiveStalled { waited, received } => (
            code,
            format!("the upload stalled: no data for {:.1} s after {received} bytes", waited.as_secs_f64()),
        ),
        VideoError::MoovAtEndLive => (
            code,
            "this MP4 has its index at the end and this server decodes uploads live; send it fragmented or with -movflags +faststart".into(),
        ),
        VideoError::MoovAtEndTooLarge { max_bytes } => (
            code,
            format!("this MP4 has its index at the end and is larger than the {max_bytes} bytes this server buffers for such files; send it fragmented or with -movflags +faststart"),
        ),
        VideoError::BatchTooLarge {
            max_batch_size,
            sequence_length,
            frame,
            bytes,
            ..
        } => (
            code,
            format!(
                "a batch of {max_batch_size} sequences of {sequence_length} frames of {}x{} takes {}; with what decoding it needs, this is over this server's {upload_budget} bytes per upload: lower sequence_length or batch_size",
                frame.0,
                frame.1,
                bytes.map_or("more than 2^64 bytes".to_owned(), |b| format!("{b} bytes"))
            ),
        ),
        VideoError::OutOfMemory { .. } => (
            code,
            "the server could not allocate memory for this upload; retry later".into(),
        ),
        VideoError::SourceUnavailable { attempts, .. } => (
            code,
            format!("the source could not be opened ({attempts} attempts)"),
        ),
        VideoError::SourceLost {
            frames, reconnects, ..
        } => (
            code,
            format!("the source dropped after {frames} frames and could not be reopened ({reconnects} reconnects before)"),
        ),
        VideoError::Sampling { reason } => (
            code,
            format!("this video cannot be sampled as asked: {reason}"),
        ),
        VideoError::Damaged { frames, what } => (
            code,
            format!("the video's data is damaged after {frames} frames (strict=1): {what}"),
        ),
        VideoError::Hole { .. } | VideoError::CropOutOfBounds { .. } => {
            (code, error.to_string())
        }
        VideoError::WholeTooLarge { max_bytes } => (
            code,
            format!("a clips upload is held whole until it ends (clips need the video's length), and this one grew past the {max_bytes} bytes this server holds for it (a quarter of its memory per upload, less the index's share); send a shorter video, or sample with stride, step, fps or a time range"),
        ),
        VideoError::NvdecUnsupported { .. } => (
            code,
            "the GPU's decoder cannot decode this stream and CPU fallback is off".into(),
        ),
        VideoError::Cuda { .. } => (
            code,
            "a GPU error stopped this upload's decoding; retry later".into(),
        ),
        VideoError::Ffmpeg(av) => (
            code,
            format!("the video could not be decoded: {}", av.plain_reason()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AvError;
    use crate::video::{VideoId, VideoRef};

    fn video(error: VideoError) -> Error {
        Error::Video {
            video: VideoRef {
                id: VideoId(0),
                label: None,
            },
            error,
        }
    }

    #[test]
    fn messages_carry_no_ffmpeg_internals() {
        let av = AvError {
            operation: "avformat_open_input",
            code: -1_094_995_529,
            message: "Invalid data found when processing input".into(),
        };
        for error in [
            VideoError::NotAVideo(av.clone()),
            VideoError::Demux {
                frames: 3,
                source: av.clone(),
            },
            VideoError::Corrupt {
                failed_packets: 2,
                frames: 5,
                first: av.clone(),
            },
            VideoError::Ffmpeg(av.clone()),
        ] {
            let (code, message) = describe(&video(error), None, 1);
            assert_ne!(code, ErrorCode::Internal);
            for internal in ["avformat", "1094995529", "Invalid data"] {
                assert!(!message.contains(internal), "{message}");
            }
        }
    }

    /// Every failure a client can meet says why, not only "could not be decoded".
    #[test]
    fn each_failure_names_its_reason() {
        let av = AvError {
            operation: "avcodec_send_packet",
            code: -1_094_995_529,
            message: "Invalid data found when processing input".into(),
        };
        for (error, code, reason) in [
            (
                VideoError::Sampling {
                    reason: "clips need the frames' times in advance".into(),
                },
                ErrorCode::BadSampling,
                "clips need the frames' times in advance",
            ),
            (
                VideoError::Ffmpeg(av),
                ErrorCode::DecodeFailed,
                "its data is not valid for its codec",
            ),
            (
                VideoError::WholeTooLarge { max_bytes: 111 },
                ErrorCode::BodyTooLarge,
                "grew past the 111 bytes",
            ),
            (
                VideoError::CropOutOfBounds {
                    crop: (64, 64),
                    frame: (32, 32),
                },
                ErrorCode::CropOutOfBounds,
                "crop 64x64 does not fit in the 32x32 frame",
            ),
        ] {
            let (got, message) = describe(&video(error), None, 1);
            assert_eq!(got, code);
            assert!(message.contains(reason), "{message}");
        }
    }

    #[test]
    fn a_cut_body_says_why() {
        let aborted = video(VideoError::LiveAborted {
            reason: "internal detail".into(),
            received: 10,
        });
        assert_eq!(
            describe(&aborted, Some(CutReason::TooSlow), 1).0,
            ErrorCode::TooSlow
        );
        assert_eq!(
            describe(&aborted, Some(CutReason::BodyTooLarge), 1).0,
            ErrorCode::BodyTooLarge
        );
        assert!(!describe(&aborted, None, 1).1.contains("internal detail"));
    }
}
