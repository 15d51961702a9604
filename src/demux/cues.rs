//! Matroska's Cues as an approximate frame index ([`SeekMode::Approximate`](crate::SeekMode::Approximate)): the
//! keyframes the Cues list (time and cluster position), the track's frame rate and its duration number the
//! frames by time, frame `i` being the one shown at `start + i / fps`, without reading the video's blocks.
//!
//! The Cues list keyframes only, so an exact numbering (every packet's time, as the `ffmpeg` CLI counts them)
//! still needs the video read through; this numbering is exact where the frames sit on the frame rate's grid
//! (a constant frame rate, no frame dropped), and otherwise takes the frame nearest each time.

use std::ffi::CStr;

use super::Demuxer;
use crate::ffi::format::IndexEntry;

/// A video's frames numbered by time: frame `i` is shown at `start + i * step` (stream time base).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CueGrid {
    /// The first keyframe's presentation time (stream time base).
    pub(crate) start: i64,
    /// Time base units a frame.
    pub(crate) step: f64,
    /// How many frames the duration holds.
    pub(crate) frames: u64,
    /// The keyframes the Cues list, by frame number ascending: (frame number, presentation time, byte
    /// position of its cluster).
    pub(crate) keys: Vec<(u64, i64, i64)>,
}

/// How far past the last keyframe the Cues list (in seconds) the video may go on, at least, and still be
/// taken as indexed by them: past it, the Cues must space keyframes at least as far apart somewhere else (a
/// file written without Cues has only the keyframes the demuxer met reading its first clusters).
const TAIL_SECONDS: f64 = 10.0;

/// The grid the keyframe entries `entries` (the demuxer's index of the stream: its Cues), the frame rate
/// `fps` and the time the stream ends (`end`, seconds) give, in time base `time_base` (seconds a unit); `None`
/// where they do not index the video: no keyframe, no frame rate, a duration not after the first keyframe,
/// more than `max` frames, or keyframes that stop well before the end.
pub(crate) fn grid(
    entries: &[IndexEntry],
    time_base: f64,
    fps: (i32, i32),
    end: f64,
    max: usize,
) -> Option<CueGrid> {
    let (num, den) = fps;
    if num <= 0 || den <= 0 || time_base.is_nan() || time_base <= 0.0 || !end.is_finite() {
        return None;
    }
    let seconds_a_frame = f64::from(den) / f64::from(num);
    let step = seconds_a_frame / time_base;
    if step.is_nan() || step < 1.0 || !step.is_finite() {
        return None; // frames closer than the clock ticks: times cannot tell them apart
    }
    let mut stamps: Vec<(i64, i64)> = entries
        .iter()
        .filter(|e| e.key && !e.discard && e.pos >= 0)
        .map(|e| (e.timestamp, e.pos))
        .collect();
    stamps.sort_unstable();
    let &(start, _) = stamps.first()?;
    let span = end - start as f64 * time_base;
    let frames = (span / seconds_a_frame).round();
    if frames.is_nan() || frames < 1.0 || frames > max as f64 {
        return None;
    }
    let frames = frames as u64;
    // The keyframes' gaps: the tail after the last one must be no longer than the longest of them (or
    // `TAIL_SECONDS`), else the Cues are missing (the demuxer's index holds the keyframes it met reading).
    let last = stamps.last().expect("not empty").0;
    let longest = stamps
        .windows(2)
        .map(|w| (w[1].0 - w[0].0) as f64 * time_base)
        .fold(TAIL_SECONDS, f64::max);
    if end - last as f64 * time_base > longest {
        return None;
    }
    let mut keys: Vec<(u64, i64, i64)> = Vec::with_capacity(stamps.len());
    for (ts, pos) in stamps {
        let slot = ((ts - start) as f64 / step).round();
        if slot >= frames as f64 {
            break;
        }
        let slot = slot as u64;
        // Two keyframes nearest one time: the first is that frame.
        if keys.last().is_some_and(|&(s, _, _)| s >= slot) {
            continue;
        }
        keys.push((slot, ts, pos));
    }
    Some(CueGrid {
        start,
        step,
        frames,
        keys,
    })
}

/// A Matroska track's `DURATION` tag (`HH:MM:SS.nnnnnnnnn`, FFmpeg's and mkvmerge's), in seconds: when the
/// track ends.
pub(crate) fn tag_seconds(tag: &str) -> Option<f64> {
    let mut parts = tag.trim().splitn(3, ':');
    let hours: f64 = parts.next()?.parse().ok()?;
    let minutes: f64 = parts.next()?.parse().ok()?;
    let seconds: f64 = parts.next()?.parse().ok()?;
    let total = hours * 3600.0 + minutes * 60.0 + seconds;
    (total.is_finite() && hours >= 0.0 && minutes >= 0.0 && seconds >= 0.0).then_some(total)
}

/// The tag a Matroska track's end is in.
const DURATION_TAG: &CStr = c"DURATION";

impl Demuxer {
    /// This Matroska or WebM video's frames numbered by time from its Cues ([`grid`]), at most `max`; `None`
    /// for another container, or where its Cues, frame rate or duration do not give them (the demuxer is then
    /// back at its first byte). Seeks (the demuxer reads the Cues at its first seek).
    pub(crate) fn cue_grid(&mut self, max: usize) -> Option<CueGrid> {
        if !self.format.is_matroska() {
            return None;
        }
        let stream = self.stream.index;
        let fps = self.stream.frame_rate?;
        let time_base = self.stream.seconds_per_unit();
        let sought = self.seek(stream, 0, false).is_ok();
        let end = self
            .format
            .stream_tag(stream, DURATION_TAG)
            .and_then(|tag| tag_seconds(&tag))
            .or_else(|| self.format.container_end());
        let grid = end
            .filter(|_| sought)
            .and_then(|end| grid(&self.format.index_entries(stream), time_base, fps, end, max));
        if grid.is_none() {
            // Back to the first byte, so that reading it through gives every packet (a seek to a time lands
            // on a keyframe, past any packet before it).
            let _ = self.seek(stream, 0, true);
        }
        grid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(timestamp: i64, pos: i64) -> IndexEntry {
        IndexEntry {
            pos,
            timestamp,
            key: true,
            discard: false,
        }
    }

    #[test]
    fn the_cues_of_a_constant_frame_rate_video_number_its_frames() {
        // 10 s at 30 fps in milliseconds, a keyframe a second, the first at 7 ms (an audio stream's shift).
        let entries: Vec<_> = (0..10)
            .map(|s| key(7 + s * 1000, 500 + s * 40_000))
            .collect();
        let grid = grid(&entries, 1e-3, (30, 1), 10.007, 100_000).unwrap();
        assert_eq!(grid.start, 7);
        assert_eq!(grid.frames, 300);
        assert_eq!(grid.keys.len(), 10);
        assert_eq!(grid.keys[3], (90, 3007, 120_500));
    }

    #[test]
    fn what_does_not_index_the_video_gives_no_grid() {
        let entries: Vec<_> = (0..10).map(|s| key(s * 1000, s * 1000)).collect();
        assert!(grid(&[], 1e-3, (30, 1), 10.0, 1000).is_none(), "no Cues");
        assert!(
            grid(&entries, 1e-3, (0, 1), 10.0, 1000).is_none(),
            "no frame rate"
        );
        assert!(
            grid(&entries, 1e-3, (30, 1), 0.0, 1000).is_none(),
            "no duration"
        );
        assert!(
            grid(&entries, 1e-3, (30, 1), 10.0, 299).is_none(),
            "over the limit"
        );
        assert!(grid(&entries, 1e-3, (30, 1), f64::NAN, 1000).is_none());
        assert!(
            grid(&entries, 1e-3, (2000, 1), 10.0, 100_000).is_none(),
            "frames closer than ticks"
        );
        // A file written without Cues: the demuxer's index holds the first two clusters' keyframes.
        let met = [key(0, 0), key(1000, 40_000)];
        assert!(grid(&met, 1e-3, (30, 1), 3600.0, 1 << 20).is_none());
        // Sparse Cues (one a minute) over an hour are an index.
        let sparse: Vec<_> = (0..60).map(|m| key(m * 60_000, m * 1000)).collect();
        assert!(grid(&sparse, 1e-3, (30, 1), 3600.0, 1 << 20).is_some());
    }

    #[test]
    fn durations_read_from_tags() {
        assert_eq!(tag_seconds("00:00:10.007000000"), Some(10.007));
        assert_eq!(tag_seconds("01:02:03.5"), Some(3723.5));
        assert_eq!(tag_seconds("10.0"), None);
        assert_eq!(tag_seconds("00:-1:00"), None);
        assert_eq!(tag_seconds("aa:bb:cc"), None);
    }

    proptest! {
        /// Whatever the entries, a grid's keyframes are in range, ascending and unique, the first at frame 0,
        /// and each is the frame nearest its time.
        #[test]
        fn a_grid_numbers_keyframes_in_range_and_in_order(
            stamps in proptest::collection::vec((0i64..100_000, 0i64..1 << 30, any::<bool>()), 0..40),
            fps in 1i32..240,
            end in 0.0f64..200.0,
        ) {
            let entries: Vec<IndexEntry> = stamps
                .iter()
                .map(|&(ts, pos, k)| IndexEntry { pos, timestamp: ts, key: k, discard: false })
                .collect();
            if let Some(g) = grid(&entries, 1e-3, (fps, 1), end, 1 << 20) {
                prop_assert!(g.frames >= 1);
                prop_assert_eq!(g.keys.first().map(|k| (k.0, k.1)), Some((0, g.start)));
                for w in g.keys.windows(2) {
                    prop_assert!(w[0].0 < w[1].0);
                }
                for &(slot, ts, _) in &g.keys {
                    prop_assert!(slot < g.frames);
                    let at = g.start as f64 + slot as f64 * g.step;
                    prop_assert!((ts as f64 - at).abs() <= g.step / 2.0 + 1e-9);
                }
            }
        }
    }
}
