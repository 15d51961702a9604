//! Each sequence's audio: the span of time its frames are shown (`span`), and the video's audio track that
//! cuts it ([`VideoAudio`]), attached to the video's sequences as their batches leave (and to those a packed
//! batch keeps when the video ends).

use std::sync::Arc;

use crate::assembly::batch::SequenceMeta;
use crate::decode::audio::{AudioClip, AudioTrack};
use crate::demux::AudioTap;
use crate::video::VideoId;

/// The time the frames at `pts` (seconds, in display order) are shown: from the first's start to the last's
/// end, `frame` seconds after it starts (the stream's frame duration); without one, the median gap between
/// the frames, or nothing past the last for a single frame.
pub(crate) fn span(pts: &[f64], frame: Option<f64>) -> Option<(f64, f64)> {
    let (&first, &last) = (pts.first()?, pts.last()?);
    let duration = frame
        .filter(|d| d.is_finite() && *d > 0.0)
        .unwrap_or_else(|| {
            let mut gaps: Vec<f64> = pts
                .windows(2)
                .map(|w| w[1] - w[0])
                .filter(|g| *g > 0.0)
                .collect();
            gaps.sort_by(f64::total_cmp);
            gaps.get(gaps.len() / 2).copied().unwrap_or(0.0)
        });
    Some((first, last + duration))
}

/// A frame's duration: a frame period of `fps`, on the stream's timestamp grid of `tick` seconds (a Matroska
/// stream's 1 ms: 30 fps frames are 33 ms apart there, not 33.3), so that it ends where the next frame starts.
pub(crate) fn frame_duration(fps: Option<f64>, tick: f64) -> Option<f64> {
    let period = 1.0 / fps.filter(|f| f.is_finite() && *f > 0.0)?;
    if tick > 0.0 && tick < period {
        Some((period / tick).round() * tick)
    } else {
        Some(period)
    }
}

/// The audio of the video being decoded.
pub(crate) struct VideoAudio {
    video: VideoId,
    /// `None`: the video has no audio (its sequences carry empty audio).
    track: Option<AudioTrack>,
    /// The video stream's frame duration, in seconds, when it has a frame rate.
    frame: Option<f64>,
    /// The last display index and end time of the sequence cut last: a sequence that starts at the next
    /// index starts its sound there, so that consecutive sequences' sound neither overlaps nor leaves a gap.
    last: Option<(u64, f64)>,
    /// For a video read once (live, a URL): the packets its demuxer sets aside; its batches wait for their
    /// sound ([`ready`](Self::ready)).
    tap: Option<Arc<AudioTap>>,
    /// The latest frame time seen, for [`MAX_LAG`].
    latest: f64,
}

/// How far a video read once may get ahead of its audio, in seconds: a batch whose sound has not come by
/// the time the frames are this far past its end goes with the sound there is (a stream whose audio stalls
/// or stops does not hold its frames back more than this).
pub(crate) const MAX_LAG: f64 = 2.0;

impl VideoAudio {
    /// `fps` and `tick` (seconds a timestamp unit) are the video stream's.
    pub(crate) fn new(
        video: VideoId,
        track: Option<AudioTrack>,
        fps: Option<f64>,
        tick: f64,
    ) -> Self {
        Self {
            video,
            track,
            frame: frame_duration(fps, tick),
            last: None,
            tap: None,
            latest: f64::NEG_INFINITY,
        }
    }

    /// The audio of a video read once, its packets set aside by `tap`: its batches wait for their sound.
    pub(crate) fn with_tap(mut self, tap: Arc<AudioTap>) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Whether batches wait for their sound (a video read once, with an audio track).
    pub(crate) fn waits(&self) -> bool {
        self.tap.is_some() && self.track.is_some()
    }

    /// A frame at `pts` seconds was decoded.
    pub(crate) fn note_frame(&mut self, pts: f64) {
        self.latest = self.latest.max(pts);
    }

    /// No more packets will come: the video's reading ended (its waiting batches can all go).
    pub(crate) fn finish(&self) {
        if let Some(tap) = &self.tap {
            tap.close();
        }
    }

    /// Whether the sound of `sequences` (those of this video without any yet) can be cut now: decoded to
    /// their ends, or never to be (the stream ended), or the frames are [`MAX_LAG`] past them.
    pub(crate) fn ready<'a>(
        &mut self,
        sequences: impl IntoIterator<Item = &'a SequenceMeta>,
    ) -> bool {
        let Some(track) = &mut self.track else {
            return true;
        };
        for seq in sequences {
            if seq.audio.is_some() || seq.video.id != self.video {
                continue;
            }
            let Some((_, end)) = span(&seq.pts, self.frame) else {
                continue;
            };
            if end + MAX_LAG < self.latest {
                continue;
            }
            if !track.has_until(end) {
                return false;
            }
        }
        true
    }

    /// Gives each of `sequences` of this video that has none yet its audio.
    pub(crate) fn attach<'a>(&mut self, sequences: impl IntoIterator<Item = &'a mut SequenceMeta>) {
        for seq in sequences {
            if seq.audio.is_some() || seq.video.id != self.video {
                continue;
            }
            let span = span(&seq.pts, self.frame).map(|(start, end)| {
                let follows = self
                    .last
                    .filter(|(index, _)| Some(&(index + 1)) == seq.indices.first());
                (follows.map_or(start, |(_, end)| end), end)
            });
            if let (Some((_, end)), Some(&index)) = (span, seq.indices.last()) {
                self.last = Some((index, end));
            }
            let clip = match (&mut self.track, span) {
                (Some(track), Some((start, end))) => track.cut(start, end.max(start)),
                _ => AudioClip::default(),
            };
            seq.audio = Some(Arc::new(clip));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequence_spans_its_first_frames_start_to_its_last_frames_end() {
        assert_eq!(span(&[1.0, 1.5, 2.0], Some(0.25)), Some((1.0, 2.25)));
        // No frame rate: the median gap.
        assert_eq!(span(&[0.0, 0.1, 0.2, 0.5], None), Some((0.0, 0.6)));
        assert_eq!(span(&[3.0], None), Some((3.0, 3.0)));
        assert_eq!(span(&[], Some(0.1)), None);
    }

    #[test]
    fn frame_durations_fall_on_the_timestamp_grid() {
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12;
        assert!(close(frame_duration(Some(30.0), 0.001), 0.033));
        assert!(close(
            frame_duration(Some(30.0), 1.0 / 90_000.0),
            1.0 / 30.0
        ));
        assert!(close(frame_duration(Some(25.0), 0.0), 0.04));
        assert_eq!(frame_duration(None, 0.001), None);
        assert_eq!(frame_duration(Some(0.0), 0.001), None);
    }
}
