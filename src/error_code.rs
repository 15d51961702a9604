//! Every error code framefeed gives, in one table ([`ErrorCode`]): the library's (what [`Error::code`] and
//! [`VideoError::code`] say, and Python exceptions' `code`) and the service's own refusals, each with the HTTP
//! status the service answers with where it refuses a request for it. A leaf module: the service, the Python
//! binding and the guide's list (docs/guide/errors.md, held by a test) all read this table.
//!
//! [`Error::code`]: crate::Error::code
//! [`VideoError::code`]: crate::VideoError::code

use std::fmt;

/// Who gives a code: the library (an [`Error`](crate::Error) or a video's [`VideoError`](crate::VideoError),
/// so also Python's exceptions and the service's lines), or the service alone (a refusal, or why it cut an
/// upload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeSource {
    /// [`Error::code`](crate::Error::code) can give it.
    Library,
    /// Only the service gives it.
    Service,
}

macro_rules! error_codes {
    ($($variant:ident => $name:literal, $source:ident, $status:expr, $doc:literal;)+) => {
        /// A short, stable name for what went wrong: the `code` of the service's JSON errors and of Python's
        /// exceptions.
        ///
        /// ```
        /// use framefeed::ErrorCode;
        /// assert_eq!(ErrorCode::NotAVideo.as_str(), "not_a_video");
        /// assert_eq!(ErrorCode::from_name("too_slow"), Some(ErrorCode::TooSlow));
        /// assert_eq!(ErrorCode::ServerBusy.status(), Some(503));
        /// assert_eq!(ErrorCode::Corrupt.status(), None);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $(
                #[doc = $doc]
                $variant,
            )+
        }

        impl ErrorCode {
            /// Every code, in the table's order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The code as the JSON errors and Python spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)+
                }
            }

            /// What went wrong, in a sentence (docs/guide/errors.md's table shows it).
            pub fn description(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $doc,)+
                }
            }

            /// Who gives it.
            pub fn source(self) -> CodeSource {
                match self {
                    $(ErrorCode::$variant => CodeSource::$source,)+
                }
            }

            /// The HTTP status of the service's refusal of a request with this code; `None` for a code that
            /// only comes as a line inside a 200 answer (a video's failure, an upload the service cut).
            pub fn status(self) -> Option<u16> {
                match self {
                    $(ErrorCode::$variant => $status,)+
                }
            }

            /// The code named `name`, if any.
            pub fn from_name(name: &str) -> Option<ErrorCode> {
                ErrorCode::ALL.iter().copied().find(|c| c.as_str() == name)
            }
        }
    };
}

error_codes! {
    // The library's: a video's failure (an `Error::Video`).
    Empty => "empty", Library, None, "The video is empty.";
    NotAVideo => "not_a_video", Library, None, "Not a container FFmpeg reads, or one whose claims cannot be true.";
    NoVideoStream => "no_video_stream", Library, None, "No video stream (or not the one asked for).";
    NoAudioStream => "no_audio_stream", Library, None, "A reader's audio asked of a video with no audio stream.";
    UnsupportedCodec => "unsupported_codec", Library, None, "No decoder for the stream's codec.";
    FrameTooLarge => "frame_too_large", Library, None, "Frames larger than the limits.";
    NoFrames => "no_frames", Library, None, "The stream holds no decodable frame.";
    BadSampling => "bad_sampling", Library, None, "The sampling asks for frames the video does not have.";
    Corrupt => "corrupt", Library, None, "Truncated or broken data, or frames that could not be decoded.";
    Aborted => "aborted", Library, None, "A live video aborted by its producer.";
    Stalled => "stalled", Library, None, "A live video that gave no data for too long.";
    SourceUnavailable => "source_unavailable", Library, None, "A URL that could not be opened.";
    SourceLost => "source_lost", Library, None, "A URL that dropped and could not be reopened.";
    MoovAtEnd => "moov_at_end", Library, None, "An MP4 with its index at the end that cannot be buffered.";
    BodyTooLarge => "body_too_large", Library, Some(413), "More bytes than the limit (a whole video, or an upload's body).";
    CropOutOfBounds => "crop_out_of_bounds", Library, None, "A crop window outside the frame.";
    OverMemoryBudget => "over_memory_budget", Library, Some(400), "A batch larger than the memory allowed for it.";
    DecodeFailed => "decode_failed", Library, None, "FFmpeg failed otherwise.";
    NvdecUnsupported => "nvdec_unsupported", Library, None, "NVDEC cannot decode the stream and CPU fallback is off.";
    // The library's: the operator's own.
    InvalidConfig => "invalid_config", Library, None, "A setting out of its range.";
    NoData => "no_data", Library, None, "A non-blocking poll found nothing fed.";
    NotReady => "not_ready", Library, None, "No batch ready yet.";
    Timeout => "timeout", Library, None, "A poll's timeout passed.";
    Closed => "closed", Library, None, "The operator (or live video) is closed.";
    LiveEnded => "live_ended", Library, None, "A push to a live video that has ended.";
    Forked => "forked", Library, None, "An operator fed before the process forked, used in the forked child (Python).";
    CudaUnavailable => "cuda_unavailable", Library, None, "The GPU was asked for but cannot be used here.";
    Cuda => "cuda", Library, None, "A CUDA call failed.";
    OutOfMemory => "out_of_memory", Library, None, "An allocation failed.";
    Internal => "internal", Library, Some(500), "framefeed's own failure (a worker died); report it.";
    // The service's own.
    BadRequest => "bad_request", Service, Some(400), "A request's parameters or body are not what the route takes.";
    Unauthorized => "unauthorized", Service, Some(401), "No valid token.";
    NotFound => "not_found", Service, Some(404), "No such route.";
    NoSuchStream => "no_such_stream", Service, Some(404), "No stream with that id.";
    StreamExists => "stream_exists", Service, Some(409), "A stream with that id exists.";
    RefusedUrl => "refused_url", Service, Some(400), "A URL the service does not pull (its scheme or host).";
    TooManyUploads => "too_many_uploads", Service, Some(429), "The client holds its share of the service.";
    ServerBusy => "server_busy", Service, Some(503), "The service's slots or memory are taken.";
    ShuttingDown => "shutting_down", Service, Some(503), "The service is shutting down.";
    TooSlow => "too_slow", Service, None, "An upload slower than the minimum rate.";
    Shed => "shed", Service, None, "An upload cut so that another could be served: of those in progress, it held the most slots or memory for the bytes a second it delivered.";
    BodyUnreadable => "body_unreadable", Service, None, "A request body that could not be read.";
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case_and_read_back() {
        for (i, code) in ErrorCode::ALL.iter().enumerate() {
            let name = code.as_str();
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{name}"
            );
            assert!(
                !ErrorCode::ALL[..i].iter().any(|c| c.as_str() == name),
                "{name} twice"
            );
            assert_eq!(ErrorCode::from_name(name), Some(*code));
            if let Some(status) = code.status() {
                assert!((400..600).contains(&status), "{name}");
            }
        }
        assert_eq!(ErrorCode::from_name("nothing_of_the_kind"), None);
    }
}
