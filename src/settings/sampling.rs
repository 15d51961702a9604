//! Which frames of a video become sequences ([`Sampling`]): every frame by default; a stride between the frames
//! of a sequence and a step between sequences (DALI `readers.video`); a few clips per video at random or evenly
//! spaced starts (TorchCodec's samplers, decord's `get_batch`); a target frame rate; a time range; or an
//! explicit list of frame indices. Plain values, validated with the rest of the [`Config`](crate::Config).

use crate::error::{Error, Result};

/// How the start frames of [clips](Sampling::clips) are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClipSampler {
    /// Uniformly random start frames, drawn with replacement (clips may overlap) from the seed, the video's
    /// position and the epoch ([`Encoded::position`](crate::Encoded::position)): new clips every epoch, the
    /// same clips for the same seed.
    #[default]
    Random,
    /// Start frames evenly spaced from the first frame to the last start that leaves room for a whole clip.
    Regular,
}

super::choice::choices!(ClipSampler, "clip_sampler", [
    ClipSampler::Random => "random",
    ClipSampler::Regular => "regular",
]);

/// What a [clip](Sampling::clips) holds when it cannot fit: the video (or its time range, or its resampled
/// frames) is shorter than one clip's span (`(sequence_length - 1) * stride + 1` frames). A video gives the
/// clips asked for whatever its length; those that cannot fit all start at its first frame and hold what this
/// says. After TorchCodec's samplers' `policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClipPolicy {
    /// The clip stops at the video's last frame and follows the
    /// [`LastSequencePolicy`](crate::LastSequencePolicy): shorter (`partial`), or padded with zero frames
    /// (`pad`; [`Sequence::valid_frames`](crate::Sequence::valid_frames) tells how many are real).
    #[default]
    Cut,
    /// The clip's last frame repeated up to the clip's length (TorchCodec's `repeat_last`): every frame is a
    /// real one, and the sequence reports the repeated index.
    RepeatLast,
    /// The clip's frames taken again from its first up to its length (TorchCodec's `wrap`).
    Wrap,
    /// The video fails with a sampling error naming its length and the clip's span.
    Error,
}

super::choice::choices!(ClipPolicy, "clip_policy", [
    ClipPolicy::Cut => "cut",
    ClipPolicy::RepeatLast => "repeat_last" | "repeat-last",
    ClipPolicy::Wrap => "wrap",
    ClipPolicy::Error => "error",
]);

/// The most clips asked for per video.
pub const MAX_CLIPS: usize = 1 << 16;
/// The longest explicit list of frame indices.
pub const MAX_INDICES: usize = 1 << 20;
/// The largest stride or step, in frames.
pub const MAX_STRIDE: usize = 1 << 24;
/// The highest target frame rate.
pub const MAX_FPS: f64 = 1000.0;

/// Which frames of each video become sequences. The default takes every frame, `sequence_length` at a time.
///
/// Indices are display indices: a frame's position in display order, as `ffmpeg -fps_mode passthrough`
/// outputs frames (0-based); every [`Sequence`](crate::Sequence) reports its frames'
/// ([`Sequence::indices`](crate::Sequence::indices)). On a whole video (fed from memory, a file list) only the
/// GOPs that the chosen frames need are decoded, and only the chosen frames are converted; on a live video
/// every frame is decoded and only the chosen ones converted.
///
/// ```
/// use framefeed::{ClipSampler, Config, Sampling};
/// // 10 random 8-frame clips per video, every other frame.
/// let config = Config::new(8, 4).sampling(Sampling::new().clips(10, ClipSampler::Random).stride(2).seed(7));
/// config.validate()?;
/// // Sequences of 16 frames at 5 frames per second, between 10 s and 70 s.
/// let config = Config::new(16, 2).sampling(Sampling::new().fps(5.0).time_range(10.0, 70.0));
/// config.validate()?;
/// # Ok::<(), framefeed::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sampling {
    pub(crate) stride: Option<usize>,
    pub(crate) step: Option<usize>,
    pub(crate) clips: Option<(usize, ClipSampler)>,
    pub(crate) clip_policy: ClipPolicy,
    pub(crate) seed: u64,
    pub(crate) fps: Option<f64>,
    pub(crate) start: Option<f64>,
    pub(crate) end: Option<f64>,
    pub(crate) indices: Option<Vec<u64>>,
    pub(crate) segment: Option<(u64, u64)>,
}

/// The sampling settings as the front ends take them, each one optional and by name (the CLI's flags,
/// Python's keywords, the service's query parameters): one place turns them into a [`Sampling`].
///
/// ```
/// use framefeed::{ClipSampler, Sampling, SamplingOptions};
/// let options = SamplingOptions { clips: Some(4), clip_sampler: Some(ClipSampler::Regular), ..Default::default() };
/// assert_eq!(Sampling::from(options), Sampling::new().clips(4, ClipSampler::Regular));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SamplingOptions {
    /// [`Sampling::stride`].
    pub stride: Option<usize>,
    /// [`Sampling::step`].
    pub step: Option<usize>,
    /// The count of [`Sampling::clips`].
    pub clips: Option<usize>,
    /// How clips are placed (default [`ClipSampler::Random`]); only with `clips`.
    pub clip_sampler: Option<ClipSampler>,
    /// What a clip that cannot fit holds (default [`ClipPolicy::Cut`]); only with `clips`.
    pub clip_policy: Option<ClipPolicy>,
    /// [`Sampling::seed`] (default 0).
    pub seed: Option<u64>,
    /// [`Sampling::fps`].
    pub fps: Option<f64>,
    /// [`Sampling::start`].
    pub start: Option<f64>,
    /// [`Sampling::end`].
    pub end: Option<f64>,
    /// [`Sampling::indices`].
    pub indices: Option<Vec<u64>>,
}

impl From<SamplingOptions> for Sampling {
    fn from(o: SamplingOptions) -> Self {
        Sampling {
            stride: o.stride,
            step: o.step,
            clips: o
                .clips
                .map(|n| (n, o.clip_sampler.unwrap_or(ClipSampler::Random))),
            clip_policy: o.clip_policy.unwrap_or_default(),
            seed: o.seed.unwrap_or(0),
            fps: o.fps,
            start: o.start,
            end: o.end,
            indices: o.indices,
            segment: None,
        }
    }
}

impl Sampling {
    /// Every frame (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Frames between consecutive frames of a sequence (1: consecutive frames; the default).
    #[must_use]
    pub fn stride(mut self, stride: usize) -> Self {
        self.stride = Some(stride);
        self
    }

    /// Frames between the first frames of consecutive sequences (default: `sequence_length`, DALI's default).
    /// Smaller than a sequence's span, sequences overlap; each frame is still decoded once.
    #[must_use]
    pub fn step(mut self, step: usize) -> Self {
        self.step = Some(step);
        self
    }

    /// `count` clips per video, each one sequence (`sequence_length` frames, with the stride), their starts
    /// chosen by `sampler`; delivered in display order. Every video with a frame gives `count` clips: in a
    /// video shorter than one clip's span they all start at its first frame and hold what
    /// [`clip_policy`](Self::clip_policy) says (by default the frames it has, under the
    /// [`LastSequencePolicy`](crate::LastSequencePolicy)). Only whole videos can be sampled this way: a live
    /// video fed with clips fails with a configuration error.
    #[must_use]
    pub fn clips(mut self, count: usize, sampler: ClipSampler) -> Self {
        self.clips = Some((count, sampler));
        self
    }

    /// What a clip holds when the video is shorter than its span (default [`ClipPolicy::Cut`]).
    #[must_use]
    pub fn clip_policy(mut self, policy: ClipPolicy) -> Self {
        self.clip_policy = policy;
        self
    }

    /// The seed of random clips (default 0).
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Resamples to `fps` frames per second: for each time `t = k / fps` from the first frame, the frame
    /// displayed at `t` (the last one whose time is at or before it); variable-frame-rate files included.
    /// Stride, step and clips then count frames of the resampled video.
    #[must_use]
    pub fn fps(mut self, fps: f64) -> Self {
        self.fps = Some(fps);
        self
    }

    /// Only frames displayed from `start` seconds (from the first frame) on.
    #[must_use]
    pub fn start(mut self, start: f64) -> Self {
        self.start = Some(start);
        self
    }

    /// Only frames displayed before `end` seconds (from the first frame).
    #[must_use]
    pub fn end(mut self, end: f64) -> Self {
        self.end = Some(end);
        self
    }

    /// Only frames displayed in `[start, end)` seconds from the first frame.
    #[must_use]
    pub fn time_range(self, start: f64, end: f64) -> Self {
        self.start(start).end(end)
    }

    /// Exactly these display indices, in this (non-decreasing) order, `sequence_length` at a time; an index
    /// past the video's end fails the video, naming it. Excludes the other options.
    #[must_use]
    pub fn indices(mut self, indices: impl Into<Vec<u64>>) -> Self {
        self.indices = Some(indices.into());
        self
    }

    /// Only the sequences whose first frame's display index is in `first..end`: one segment of a long video
    /// (see [`segments`](crate::segments)), which one worker decodes while others decode the rest. The
    /// segments of a video, decoded apart, give together exactly the sequences of the whole video (the same
    /// frames, indices and pts), each once: a sequence that straddles a boundary belongs to the segment its
    /// first frame is in, which decodes on past its end to finish it. Decoding seeks to the keyframe the
    /// segment's first frame needs. A segment no sequence starts in gives none (no error). Whole videos only,
    /// like clips; works with stride, step, clips, fps and time ranges (with fps, a sequence's first frame is
    /// the real frame it shows first).
    #[must_use]
    pub fn segment(mut self, first: u64, end: u64) -> Self {
        self.segment = Some((first, end));
        self
    }

    /// The stride (1 unless set).
    pub fn stride_frames(&self) -> usize {
        self.stride.unwrap_or(1)
    }

    /// The step for sequences of `sequence_length` frames.
    pub fn step_frames(&self, sequence_length: usize) -> usize {
        self.step.unwrap_or(sequence_length)
    }

    /// Whether every frame is taken (nothing was set).
    pub fn is_everything(&self) -> bool {
        self.indices.is_none() && !self.chooses_frames()
    }

    /// Whether anything but indices chooses the frames (the seed alone chooses nothing).
    fn chooses_frames(&self) -> bool {
        self.stride_frames() != 1
            || self.step.is_some()
            || self.clips.is_some()
            || self.fps.is_some()
            || self.start.is_some()
            || self.end.is_some()
            || self.segment.is_some()
    }

    /// Whether the choice of frames needs the whole video known first (clips, a segment), which a live video
    /// cannot give.
    pub fn needs_whole_video(&self) -> bool {
        self.clips.is_some() || self.segment.is_some()
    }

    /// Checks the settings; the messages name the allowed values.
    pub(crate) fn validate(&self) -> Result<()> {
        let err = |m: String| Err(Error::Config(m));
        for (name, value) in [("stride", self.stride), ("step", self.step)] {
            if let Some(v) = value {
                if !(1..=MAX_STRIDE).contains(&v) {
                    return err(format!("{name} is {v}; allowed: 1 to {MAX_STRIDE}"));
                }
            }
        }
        if let Some((count, _)) = self.clips {
            if !(1..=MAX_CLIPS).contains(&count) {
                return err(format!("clips is {count}; allowed: 1 to {MAX_CLIPS}"));
            }
            if self.step.is_some() {
                return err(
                    "step is set with clips; allowed: one of them (a clip is one sequence)".into(),
                );
            }
        }
        if let Some(fps) = self.fps {
            if !(fps.is_finite() && fps > 0.0 && fps <= MAX_FPS) {
                return err(format!("fps is {fps}; allowed: above 0, at most {MAX_FPS}"));
            }
        }
        for (name, value) in [("start", self.start), ("end", self.end)] {
            if let Some(v) = value {
                if !(v.is_finite() && v >= 0.0) {
                    return err(format!("{name} is {v} seconds; allowed: 0 or more, finite"));
                }
            }
        }
        if let (Some(start), Some(end)) = (self.start, self.end) {
            if end <= start {
                return err(format!(
                    "end ({end} s) is not after start ({start} s); allowed: end > start"
                ));
            }
        }
        if let Some((first, end)) = self.segment {
            if end <= first {
                return err(format!(
                    "the segment's end (frame {end}) is not after its first frame ({first}); allowed: end > first"
                ));
            }
        }
        if let Some(indices) = &self.indices {
            if indices.is_empty() || indices.len() > MAX_INDICES {
                return err(format!(
                    "indices has {} entries; allowed: 1 to {MAX_INDICES}",
                    indices.len()
                ));
            }
            if let Some(w) = indices.windows(2).find(|w| w[1] < w[0]) {
                return err(format!(
                    "indices go back from {} to {}; allowed: a non-decreasing list",
                    w[0], w[1]
                ));
            }
            if self.chooses_frames() {
                return err(
                    "indices are set with stride, step, clips, fps, a time range or a segment; allowed: indices alone"
                        .into(),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(s: Sampling) -> String {
        match s.validate() {
            Err(Error::Config(m)) => m,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn defaults_take_everything() {
        assert!(Sampling::new().is_everything());
        assert!(Sampling::new().stride(1).is_everything());
        assert!(!Sampling::new().stride(2).is_everything());
        assert!(!Sampling::new()
            .clips(1, ClipSampler::Regular)
            .is_everything());
        assert_eq!(Sampling::new().step_frames(16), 16);
        assert!(Sampling::new().validate().is_ok());
    }

    #[test]
    fn bad_settings_name_the_allowed_values() {
        assert_eq!(
            message(Sampling::new().stride(0)),
            "stride is 0; allowed: 1 to 16777216"
        );
        assert_eq!(
            message(Sampling::new().step(0)),
            "step is 0; allowed: 1 to 16777216"
        );
        assert_eq!(
            message(Sampling::new().clips(0, ClipSampler::Random)),
            "clips is 0; allowed: 1 to 65536"
        );
        assert!(
            message(Sampling::new().clips(3, ClipSampler::Random).step(2)).contains("one of them")
        );
        assert!(message(Sampling::new().fps(0.0)).starts_with("fps is 0; allowed"));
        assert!(message(Sampling::new().fps(f64::NAN)).starts_with("fps is NaN"));
        assert!(message(Sampling::new().start(-1.0)).starts_with("start is -1 seconds"));
        assert_eq!(
            message(Sampling::new().time_range(5.0, 2.0)),
            "end (2 s) is not after start (5 s); allowed: end > start"
        );
        assert!(message(Sampling::new().indices(vec![])).starts_with("indices has 0 entries"));
        assert_eq!(
            message(Sampling::new().indices(vec![3, 9, 4])),
            "indices go back from 9 to 4; allowed: a non-decreasing list"
        );
        assert!(message(Sampling::new().indices(vec![1]).stride(2)).contains("indices alone"));
        assert!(message(Sampling::new().indices(vec![1]).fps(2.0)).contains("indices alone"));
        assert!(Sampling::new()
            .indices(vec![1, 1, 5])
            .seed(3)
            .validate()
            .is_ok());
    }

    #[test]
    fn clip_policy_names() {
        assert_eq!(
            "repeat_last".parse::<ClipPolicy>(),
            Ok(ClipPolicy::RepeatLast)
        );
        assert_eq!("Wrap".parse::<ClipPolicy>(), Ok(ClipPolicy::Wrap));
        assert_eq!(ClipPolicy::default().to_string(), "cut");
        assert_eq!(
            "loop".parse::<ClipPolicy>().unwrap_err(),
            "clip_policy is 'loop'; allowed: 'cut', 'repeat_last', 'wrap', 'error'"
        );
    }

    #[test]
    fn clip_sampler_names() {
        assert_eq!("regular".parse::<ClipSampler>(), Ok(ClipSampler::Regular));
        assert_eq!(ClipSampler::Random.to_string(), "random");
        assert_eq!(
            "uniform".parse::<ClipSampler>().unwrap_err(),
            "clip_sampler is 'uniform'; allowed: 'random', 'regular'"
        );
    }
}
