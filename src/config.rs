//! The operator's configuration, validated once by [`VideoInput::new`](crate::VideoInput::new).

use crate::error::{Error, Result};

/// What to do with a video's last sequence when fewer than `sequence_length` frames are left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LastSequencePolicy {
    /// The last sequence is shorter: it holds only the frames that are left (the reference's default).
    #[default]
    Partial,
    /// The last sequence has `sequence_length` frames; the missing ones are all zeros.
    /// [`Sequence::valid_frames`](crate::Sequence::valid_frames) says how many are real.
    Pad,
}

/// Which stream of a container to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamSelection {
    /// The "best" video stream, chosen as the `ffmpeg` CLI (5.1) chooses: attached pictures (cover art) are
    /// skipped; the highest score `width * height + 5_000_000 * is_default` wins; ties go to the lower index.
    #[default]
    Best,
    /// This container stream index (as `ffprobe` numbers streams); it must be a video stream.
    Index(usize),
}

/// How the operator batches, decodes and polls. Build with [`Config::new`] and the setters; every value is
/// checked once, when the operator is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub(crate) sequence_length: usize,
    pub(crate) max_batch_size: usize,
    pub(crate) last_sequence_policy: LastSequencePolicy,
    pub(crate) blocking: bool,
    pub(crate) decoder_threads: usize,
    pub(crate) prefetch_batches: usize,
    pub(crate) stream: StreamSelection,
    pub(crate) max_dimension: u32,
    pub(crate) max_frame_pixels: u64,
}

/// Limits on the configuration, named in the validation messages.
pub mod limits {
    /// Largest `sequence_length`.
    pub const MAX_SEQUENCE_LENGTH: usize = 1 << 16;
    /// Largest `max_batch_size`.
    pub const MAX_BATCH_SIZE: usize = 1 << 16;
    /// Largest number of decoder threads.
    pub const MAX_DECODER_THREADS: usize = 256;
    /// Largest number of prefetched batches.
    pub const MAX_PREFETCH_BATCHES: usize = 64;
    /// Largest accepted frame side (`max_dimension`).
    pub const MAX_DIMENSION: u32 = 65_535;
}

impl Config {
    /// A configuration yielding batches of up to `max_batch_size` sequences of `sequence_length` frames, with
    /// the defaults: [`LastSequencePolicy::Partial`], blocking polls, one decoder thread per core, 1 finished
    /// batch kept ready ahead of the consumer (while the next one is decoded), the best video stream, frames up to 16384 pixels a side and 2^27 pixels (e.g. 16384x8192).
    pub fn new(sequence_length: usize, max_batch_size: usize) -> Self {
        Self {
            sequence_length,
            max_batch_size,
            last_sequence_policy: LastSequencePolicy::Partial,
            blocking: true,
            decoder_threads: 0,
            prefetch_batches: 1,
            stream: StreamSelection::Best,
            max_dimension: 16_384,
            max_frame_pixels: 1 << 27,
        }
    }

    /// What a video's last, incomplete sequence becomes (default [`LastSequencePolicy::Partial`]).
    pub fn last_sequence_policy(mut self, policy: LastSequencePolicy) -> Self {
        self.last_sequence_policy = policy;
        self
    }

    /// `true` (default): [`next_batch`](crate::VideoInput::next_batch) waits for videos to be fed. `false`: it
    /// returns [`Error::NoData`] at once when nothing is fed and nothing is ready.
    pub fn blocking(mut self, blocking: bool) -> Self {
        self.blocking = blocking;
        self
    }

    /// Decoder threads per video (frame and slice threading); `0` (default) uses one per core.
    /// Allowed: 0 to 256.
    pub fn decoder_threads(mut self, threads: usize) -> Self {
        self.decoder_threads = threads;
        self
    }

    /// How many finished batches the decoder may keep ready ahead of the consumer (default 1), besides the
    /// one it is decoding. Output memory is bounded by `prefetch + 1` batches plus those the consumer holds,
    /// whatever the video's length. Allowed: 1 to 64.
    pub fn prefetch_batches(mut self, batches: usize) -> Self {
        self.prefetch_batches = batches;
        self
    }

    /// Which video stream to decode (default [`StreamSelection::Best`]).
    pub fn stream(mut self, stream: StreamSelection) -> Self {
        self.stream = stream;
        self
    }

    /// Largest frame accepted: `max_dimension` pixels a side and `max_pixels` in all (defaults 16384 and
    /// 2^27). Larger frames fail their video with [`VideoError::AbsurdDimensions`](crate::VideoError).
    /// Allowed: 1 to 65535 a side, at least 1 pixel.
    pub fn max_frame_size(mut self, max_dimension: u32, max_pixels: u64) -> Self {
        self.max_dimension = max_dimension;
        self.max_frame_pixels = max_pixels;
        self
    }

    /// The number of frames in a full sequence.
    pub fn get_sequence_length(&self) -> usize {
        self.sequence_length
    }

    /// The number of sequences in a full batch.
    pub fn get_max_batch_size(&self) -> usize {
        self.max_batch_size
    }

    /// Checks every field, naming the first one out of range and its allowed range.
    pub(crate) fn validate(&self) -> Result<()> {
        use limits::*;
        fn range<T: PartialOrd + std::fmt::Display>(
            name: &str,
            value: T,
            lo: T,
            hi: T,
        ) -> Result<()> {
            if value < lo || value > hi {
                return Err(Error::Config(format!(
                    "{name} is {value}; allowed: {lo} to {hi}"
                )));
            }
            Ok(())
        }
        range(
            "sequence_length",
            self.sequence_length,
            1,
            MAX_SEQUENCE_LENGTH,
        )?;
        range("max_batch_size", self.max_batch_size, 1, MAX_BATCH_SIZE)?;
        range(
            "decoder_threads",
            self.decoder_threads,
            0,
            MAX_DECODER_THREADS,
        )?;
        range(
            "prefetch_batches",
            self.prefetch_batches,
            1,
            MAX_PREFETCH_BATCHES,
        )?;
        range("max_dimension", self.max_dimension, 1, MAX_DIMENSION)?;
        range(
            "max_frame_pixels",
            self.max_frame_pixels,
            1,
            u64::from(MAX_DIMENSION) * u64::from(MAX_DIMENSION),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        assert_eq!(Config::new(16, 4).validate(), Ok(()));
    }

    #[test]
    fn out_of_range_values_name_the_field_and_range() {
        let err = Config::new(0, 4).validate().unwrap_err().to_string();
        assert!(
            err.contains("sequence_length is 0; allowed: 1 to 65536"),
            "{err}"
        );
        let err = Config::new(4, 0).validate().unwrap_err().to_string();
        assert!(err.contains("max_batch_size is 0; allowed: 1 to"), "{err}");
        let err = Config::new(4, 4)
            .prefetch_batches(0)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("prefetch_batches is 0; allowed: 1 to 64"),
            "{err}"
        );
        let err = Config::new(4, 4)
            .decoder_threads(1000)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("decoder_threads is 1000; allowed: 0 to 256"),
            "{err}"
        );
        let err = Config::new(4, 4)
            .max_frame_size(0, 10)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_dimension is 0"), "{err}");
    }
}
