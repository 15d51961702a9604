//! Segments of a long video: its display indices cut at keyframes into parts of about `every` frames, each
//! decoded apart (by [`Sampling::segment`](crate::Sampling::segment)) by whichever worker is free. Cutting at
//! keyframes keeps what a segment decodes beyond its own frames small: it starts at its first frame's
//! keyframe (earlier only for an open GOP's leading pictures) and goes on past its end only to finish the
//! sequence that straddles it.

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use super::index::{self, FrameIndex};
use super::start::leave_out_undecodable_start;
use crate::decode::cpu::CpuDecoder;
use crate::decode::Stop;
use crate::demux::Demuxer;
use crate::error::{Error, Result, VideoError};
use crate::settings::config::Config;
use crate::video::{Encoded, VideoId, VideoRef};

/// The segments of the whole video `video`: its frames (display indices) cut at keyframes into parts of at
/// least `every` frames (the last one may be shorter; a video of `every` frames or fewer is one segment),
/// in order, covering every frame once. Read from an H.264 or HEVC MP4/MOV's index (its `moov`, not its media
/// data), other videos by demuxing without decoding, with `config`'s stream choice and
/// container limits. Feed each segment as its own video with [`Sampling::segment`](crate::Sampling::segment)
/// (and the same other settings, and for clips the same place in its dataset): together they give the
/// sequences of the whole video.
///
/// ```no_run
/// use framefeed::{segments, Config, Encoded, Sampling, VideoInput};
/// let video = Encoded::file("long.mp4").expect("a readable file");
/// let config = Config::new(16, 4);
/// for part in segments(&video, &config, 3000)? {
///     // On any worker: the sequences whose first frame is in `part`.
///     let input = VideoInput::new(config.clone().sampling(Sampling::new().segment(part.start, part.end)))?;
///     input.feed(video.clone())?;
/// }
/// # Ok::<(), framefeed::Error>(())
/// ```
pub fn segments(video: &Encoded, config: &Config, every: u64) -> Result<Vec<Range<u64>>> {
    // With `scan`, a cut is always made.
    Ok(segments_with(video, config, every, true)?.unwrap_or_default())
}

/// Like [`segments`], from the container's own index only (an H.264 or HEVC MP4/MOV's `moov`): `None` for a
/// video whose container does not list its packets, which [`segments`] would demux whole. For a planner that
/// should not read a remote Matroska or transport stream through just to cut it (it decodes it whole instead).
pub fn segments_from_index(
    video: &Encoded,
    config: &Config,
    every: u64,
) -> Result<Option<Vec<Range<u64>>>> {
    segments_with(video, config, every, false)
}

fn segments_with(
    video: &Encoded,
    config: &Config,
    every: u64,
    scan: bool,
) -> Result<Option<Vec<Range<u64>>>> {
    if every == 0 {
        return Err(Error::Config(
            "a segment of 0 frames; allowed: 1 frame or more".into(),
        ));
    }
    let failed = |error: VideoError| Error::Video {
        video: VideoRef {
            id: VideoId(0),
            label: video.label.clone(),
        },
        error,
    };
    let max = index::max_packets(config);
    let unknown = |reason: &str| {
        failed(VideoError::Sampling {
            reason: format!("cannot cut it into segments: {reason}"),
        })
    };
    // An MP4's header alone lists its packets (no frame decoded to complete its streams' parameters: the cut
    // needs their times and keyframes, not their durations); anything else is opened whole and indexed.
    let listed = Demuxer::open_header(video.data.clone(), config)
        .ok()
        .and_then(|d| Some((d.stream().seconds_per_unit(), index::listed(&d, max)?)));
    let (time_base, packets) = match listed {
        Some(listed) => listed,
        None if !scan => return Ok(None),
        None => {
            let mut demuxer = Demuxer::open(video.data.clone(), config).map_err(failed)?;
            let time_base = demuxer.stream().seconds_per_unit();
            let packets =
                index::scan(&mut demuxer, max).map_err(|e| failed(VideoError::NotAVideo(e)))?;
            (time_base, packets)
        }
    };
    let packets = packets.ok_or_else(|| unknown("too many packets to index"))?;
    let mut index = FrameIndex::new(packets, time_base)
        .ok_or_else(|| unknown("its packets do not give the frames' display order"))?;
    if index.leading_frames().is_some() {
        // A damaged start: numbered as the operator numbers it (`start`), from a demuxer at the first packet.
        let mut demuxer = Demuxer::open(video.data.clone(), config).map_err(failed)?;
        let mut decoder =
            CpuDecoder::open(&demuxer, config.decoder_threads, config.threading).map_err(failed)?;
        let stop = AtomicBool::new(false);
        match leave_out_undecodable_start(&mut index, &mut demuxer, &mut decoder, &stop) {
            Ok(_) => {}
            Err(Stop::Video(error)) => return Err(failed(error)),
            // Nothing sets `stop` here.
            Err(Stop::Shutdown) => return Err(Error::Closed),
        }
    }
    Ok(Some(cut(&index.keyframes(), index.frames(), every)))
}

/// Cuts `0..frames` at keyframes (display indices, ascending) into parts of at least `every` frames.
fn cut(keyframes: &[u64], frames: u64, every: u64) -> Vec<Range<u64>> {
    let mut parts = Vec::new();
    let mut start = 0u64;
    for &k in keyframes {
        if k < frames && k >= start.saturating_add(every) {
            parts.push(start..k);
            start = k;
        }
    }
    if start < frames {
        parts.push(start..frames);
    }
    parts
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn cuts_fall_on_keyframes_at_least_every_frames_apart() {
        let keys = [0, 30, 60, 90, 120, 150];
        assert_eq!(cut(&keys, 170, 50), vec![0..60, 60..120, 120..170]);
        assert_eq!(
            cut(&keys, 170, 30),
            vec![0..30, 30..60, 60..90, 90..120, 120..150, 150..170]
        );
        // Short videos stay whole; an empty one has no segment.
        assert_eq!(cut(&keys, 40, 50), vec![0..40]);
        assert_eq!(cut(&[0], 1000, 100), vec![0..1000]);
        assert_eq!(cut(&[0], 0, 100), Vec::<Range<u64>>::new());
    }

    proptest! {
        /// The segments cover every frame once, in order, each starting at 0 or a keyframe, each but the
        /// last at least `every` frames long.
        #[test]
        fn segments_partition_the_frames(
            keys in proptest::collection::btree_set(0u64..500, 0..40),
            frames in 0u64..500,
            every in 1u64..120,
        ) {
            let keys: Vec<u64> = keys.into_iter().collect();
            let parts = cut(&keys, frames, every);
            let mut next = 0;
            for (i, p) in parts.iter().enumerate() {
                prop_assert_eq!(p.start, next);
                prop_assert!(p.start < p.end);
                prop_assert!(p.start == 0 || keys.contains(&p.start));
                if i + 1 < parts.len() {
                    prop_assert!(p.end - p.start >= every);
                }
                next = p.end;
            }
            prop_assert_eq!(next, frames);
        }
    }
}
