//! The audio a sequence carries beside its frames ([`Audio`]): opt-in, resampled to a rate and a channel count.

use crate::error::{Error, Result};

/// Decode a video's audio and give each sequence the samples played while its frames are shown
/// ([`Config::audio`](crate::Config::audio)): `f32` in [-1, 1], resampled by FFmpeg's libswresample exactly as
/// the `ffmpeg` CLI's `-ac N -ar R -f f32le` does.
///
/// ```
/// use framefeed::{Audio, Config};
/// let config = Config::new(16, 4).audio(Audio::new().sample_rate(16_000).channels(1));
/// config.validate()?;
/// # Ok::<(), framefeed::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Audio {
    pub(crate) sample_rate: Option<u32>,
    pub(crate) channels: Option<u32>,
    pub(crate) stream: Option<usize>,
}

impl Audio {
    /// Lowest sample rate.
    pub const MIN_SAMPLE_RATE: u32 = 1_000;
    /// Highest sample rate.
    pub const MAX_SAMPLE_RATE: u32 = 384_000;
    /// Most channels.
    pub const MAX_CHANNELS: u32 = 16;

    /// The stream's own rate and channels, FFmpeg's choice of audio stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Samples a second of the output (default: the stream's). Allowed: 1000 to 384000.
    pub fn sample_rate(mut self, rate: u32) -> Self {
        self.sample_rate = Some(rate);
        self
    }

    /// Channels of the output (default: the stream's; 1 mixes down, as `-ac 1` does). Allowed: 1 to 16.
    pub fn channels(mut self, channels: u32) -> Self {
        self.channels = Some(channels);
        self
    }

    /// The audio stream, by its index in the container (default: the one `ffmpeg` picks). A stream that is
    /// not audio gives the video no audio (its frames are not failed).
    pub fn stream(mut self, index: usize) -> Self {
        self.stream = Some(index);
        self
    }

    /// The rate set, if any.
    pub fn rate(&self) -> Option<u32> {
        self.sample_rate
    }

    /// The channel count set, if any.
    pub fn channel_count(&self) -> Option<u32> {
        self.channels
    }

    /// Checks the values, naming the first one out of range.
    pub(crate) fn validate(&self) -> Result<()> {
        if let Some(rate) = self.sample_rate {
            if !(Self::MIN_SAMPLE_RATE..=Self::MAX_SAMPLE_RATE).contains(&rate) {
                return Err(Error::Config(format!(
                    "audio sample_rate is {rate}; allowed: {} to {}",
                    Self::MIN_SAMPLE_RATE,
                    Self::MAX_SAMPLE_RATE
                )));
            }
        }
        if let Some(channels) = self.channels {
            if !(1..=Self::MAX_CHANNELS).contains(&channels) {
                return Err(Error::Config(format!(
                    "audio channels is {channels}; allowed: 1 to {}",
                    Self::MAX_CHANNELS
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_values_name_what_is_allowed() {
        assert!(Audio::new().validate().is_ok());
        let err = |a: Audio| a.validate().unwrap_err().to_string();
        assert!(err(Audio::new().sample_rate(999)).contains("allowed: 1000 to 384000"));
        assert!(err(Audio::new().channels(0)).contains("audio channels is 0; allowed: 1 to 16"));
        assert!(Audio::new()
            .sample_rate(384_000)
            .channels(16)
            .validate()
            .is_ok());
    }
}
