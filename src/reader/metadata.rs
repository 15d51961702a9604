//! What a [`VideoReader`](super::VideoReader) knows of its video once opened, from the container and the index
//! (no frame decoded but a damaged start's), and the arithmetic from times to display indices.

use crate::info::{ColorInfo, StreamInfo};
use crate::orientation::Orientation;
use crate::sample::index::FrameIndex;
use crate::settings::config::Config;

/// A video's metadata, in TorchCodec's words: read when the [`VideoReader`](super::VideoReader) opened it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct VideoMetadata {
    /// The container's index of the video stream the reader decodes (the one the `ffmpeg` CLI picks).
    pub stream_index: usize,
    /// The frames a full decode gives (an edit list's hidden frames and a damaged start's undecodable ones are
    /// not counted).
    pub num_frames: u64,
    /// The stream's average frame rate (frames over the duration when the container does not say).
    pub average_fps: f64,
    /// From the first frame's time to the end of the last one's.
    pub duration_seconds: f64,
    /// The first frame's presentation time, in stream seconds.
    pub begin_stream_seconds: f64,
    /// The width frames are shown at (turned by the display matrix unless `autorotate` is off), before the
    /// reader's transforms.
    pub width: u32,
    /// The height frames are shown at.
    pub height: u32,
    /// FFmpeg's codec name (`h264`, `hevc`, `vp9`...).
    pub codec: String,
    /// The rotation the stream's display matrix describes, in degrees counter-clockwise (as ffprobe and
    /// TorchCodec give it); `None` without one.
    pub rotation: Option<f64>,
    /// How the reader turns the frames to show them ([`Orientation::Upright`] with `autorotate` off).
    pub orientation: Orientation,
    /// The display indices of the keyframes, ascending.
    pub key_frame_indices: Vec<u64>,
    /// The stream's colour: bit depth, primaries, transfer (SDR, PQ, HLG), matrix, range and HDR static
    /// metadata, as the container and the stream's parameters give them.
    pub color: ColorInfo,
    /// The audio stream the reader's audio reads (the one `ffmpeg` picks), when the video has one.
    pub audio: Option<AudioMetadata>,
    /// Each frame's presentation time, in stream seconds.
    pts: Vec<f64>,
    /// When the last frame's display ends.
    end: f64,
}

/// A video's audio stream, as its container describes it (TorchCodec's `AudioStreamMetadata`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AudioMetadata {
    /// Its index in the container.
    pub stream_index: usize,
    /// FFmpeg's codec name (`aac`, `mp3`, `opus`, `flac`, `pcm_s16le`...).
    pub codec: String,
    /// Samples a second, when the container says.
    pub sample_rate: Option<u32>,
    /// Channels, when the container says.
    pub num_channels: Option<u32>,
    /// Duration in seconds, when the container says.
    pub duration_seconds: Option<f64>,
}

impl AudioMetadata {
    pub(crate) fn of(stream: &StreamInfo) -> Self {
        Self {
            stream_index: stream.index,
            codec: stream.codec.clone(),
            sample_rate: stream.sample_rate,
            num_channels: stream.channels,
            duration_seconds: stream.duration,
        }
    }
}

impl VideoMetadata {
    pub(crate) fn new(index: &FrameIndex, stream: &StreamInfo, config: &Config) -> Self {
        let timeline = index.timeline();
        let begin = if index.frames() > 0 {
            index.pts_of(0) as f64 * stream.seconds_per_unit()
        } else {
            0.0
        };
        let pts: Vec<f64> = timeline.pts.iter().map(|t| begin + t).collect();
        let end = begin + timeline.end;
        let num_frames = index.frames();
        let duration = end - begin;
        let orientation = if config.autorotate {
            stream.orientation().unwrap_or_default()
        } else {
            Orientation::Upright
        };
        let (width, height) = orientation.displayed_size(stream.width, stream.height);
        let average_fps = stream
            .fps()
            .filter(|f| f.is_finite() && *f > 0.0)
            .unwrap_or(if duration > 0.0 {
                num_frames as f64 / duration
            } else {
                0.0
            });
        Self {
            stream_index: stream.index,
            num_frames,
            average_fps,
            duration_seconds: duration,
            begin_stream_seconds: begin,
            width,
            height,
            codec: stream.codec.clone(),
            rotation: stream.rotation(),
            orientation,
            key_frame_indices: index.keyframes(),
            color: stream.color(),
            audio: None,
            pts,
            end,
        }
    }

    /// When the last frame's display ends, in stream seconds.
    pub fn end_stream_seconds(&self) -> f64 {
        self.end
    }

    /// Frame `d`'s presentation time, in stream seconds (`d` below [`num_frames`](Self::num_frames)).
    pub fn pts_seconds(&self, d: u64) -> f64 {
        self.pts[d as usize]
    }

    /// Frame `d`'s duration: to the next frame's time, the last frame's to the end.
    pub fn duration_of(&self, d: u64) -> f64 {
        let d = d as usize;
        self.pts.get(d + 1).copied().unwrap_or(self.end) - self.pts[d]
    }

    /// The frame shown at `t` (stream seconds): the last whose time is at or before it; `None` outside
    /// `[begin_stream_seconds, end_stream_seconds)` (at the last frame's own time when its end is not known).
    pub fn frame_played_at(&self, t: f64) -> Option<u64> {
        let last = *self.pts.last()?;
        let inside = t >= self.pts[0] && (t < self.end || (self.end <= last && t == last));
        inside.then(|| self.pts.partition_point(|&p| p <= t) as u64 - 1)
    }

    /// The frames shown in `[start, stop)`: from the one shown at `start` to the last whose time is before
    /// `stop`; none when `stop <= start`.
    pub(crate) fn frames_played_in(&self, start: f64, stop: f64) -> Vec<u64> {
        if stop <= start {
            return Vec::new();
        }
        let Some(first) = self.frame_played_at(start) else {
            return Vec::new();
        };
        let end = self.pts.partition_point(|&p| p < stop) as u64;
        (first..end.max(first + 1)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(pts: &[f64], end: f64) -> VideoMetadata {
        VideoMetadata {
            stream_index: 0,
            num_frames: pts.len() as u64,
            average_fps: 0.0,
            duration_seconds: end - pts[0],
            begin_stream_seconds: pts[0],
            width: 1,
            height: 1,
            codec: "h264".into(),
            rotation: None,
            orientation: Orientation::Upright,
            key_frame_indices: vec![0],
            color: ColorInfo::default(),
            audio: None,
            pts: pts.to_vec(),
            end,
        }
    }

    #[test]
    fn times_map_to_the_frames_shown_then() {
        // Variable frame rate from 1.5 s: frames at 1.5, 1.6, 2.0, 2.05; the last ends at 2.1.
        let m = meta(&[1.5, 1.6, 2.0, 2.05], 2.1);
        assert_eq!(m.frame_played_at(1.5), Some(0));
        assert_eq!(m.frame_played_at(1.99), Some(1));
        assert_eq!(m.frame_played_at(2.0), Some(2));
        assert_eq!(m.frame_played_at(2.09), Some(3));
        assert_eq!(m.frame_played_at(2.1), None, "the end is outside");
        assert_eq!(m.frame_played_at(1.4), None, "before the first frame");
        assert_eq!(m.frames_played_in(1.55, 2.01), vec![0, 1, 2]);
        assert_eq!(m.frames_played_in(1.6, 1.6), Vec::<u64>::new());
        assert_eq!(
            m.frames_played_in(1.61, 1.62),
            vec![1],
            "inside one frame's display"
        );
        assert_eq!(m.frames_played_in(1.5, 2.1), vec![0, 1, 2, 3]);
        assert!((m.duration_of(1) - 0.4).abs() < 1e-9);
        assert!((m.duration_of(3) - 0.05).abs() < 1e-9);
    }
}
