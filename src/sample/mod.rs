//! Sampling, the stage between demuxing and conversion: which frames of a video become which sequences
//! ([`Sampling`](crate::Sampling)), and decoding only what they need.
//!
//! - `plan`: pure arithmetic: the virtual frames (time range, target frame rate) and the sequences over them
//!   (stride and step, clips, a list of indices).
//! - `index`: a whole video's frame index, listed from an MP4's index or built by demuxing without decoding:
//!   display order and keyframes.
//! - `numbering`: the one numbering of a video's frames read in order (a plain run, a live video): display
//!   order, a picture that does not decode leaving a hole; the same numbers the index gives.
//! - `decoded_order`: the index of a stream whose packets carry no presentation times (a raw H.264 or HEVC
//!   stream), its display order found by decoding it once, for random access.
//! - `start`: a damaged start (frames before the first keyframe) decoded to leave out of the index what a full
//!   decode does not give, so that display indices count the frames a full decode gives.
//! - `seek`: decodes a whole video's needed frames only, seeking to the keyframe each needs.
//! - `live`: samples frames in the order the decoder gives them (live videos, and whole ones with no index).
//! - `segments`: a long video's frames cut at keyframes into parts decoded apart (`Sampling::segment`).
//! - `slots`: fills the sequences in order from frames arriving in display order, keeping a frame (a
//!   reference, no copy) only while a later slot still takes it.
//!
//! The worker (`operator::sampled`) drives them and hands the chosen frames to the transform and assembly
//! stages; frames no sequence takes are never converted.

pub(crate) mod decoded_order;
pub(crate) mod index;
mod live;
pub(crate) mod numbering;
pub(crate) mod plan;
pub(crate) mod seek;
pub(crate) mod segments;
pub(crate) mod slots;
pub(crate) mod start;

pub(crate) use live::InOrder;

use std::sync::Arc;

use self::index::{max_packets, FrameIndex};
use self::plan::{virtual_frames, Plan};
use crate::demux::Demuxer;
use crate::error::VideoError;
use crate::settings::config::Config;
use crate::video::ClipKey;

/// A whole video's sampling, planned from its index: decode the needed frames by seeking.
pub(crate) struct Planned {
    pub(crate) index: Arc<FrameIndex>,
    /// The display index of each virtual frame (non-decreasing).
    pub(crate) virtual_frames: Vec<u64>,
    /// The sequences, each frame's slots filled in display order by [`Slots`](slots::Slots) (of host or GPU pictures,
    /// whichever backend decodes).
    pub(crate) plan: Plan,
    /// The display indices of the frames some sequence takes, ascending.
    pub(crate) needed: Vec<u64>,
}

/// The virtual frames that display index `d` is, given each virtual frame's display index (non-decreasing).
pub(crate) fn virtual_range(virtual_frames: &[u64], d: u64) -> std::ops::Range<u64> {
    let v = virtual_frames;
    v.partition_point(|&x| x < d) as u64..v.partition_point(|&x| x <= d) as u64
}

/// How a whole video is sampled.
pub(crate) enum WholePlan {
    /// From its index, seeking.
    Seek(Box<Planned>),
    /// Its packets give no display order: decoded in order, counted as they come.
    InOrder(Box<InOrder>),
}

/// What indexing a whole video found.
pub(crate) enum Scanned {
    /// Its index.
    Index(Arc<FrameIndex>),
    /// Its packets give no display order, or there are too many to index: how many frames they hold, when
    /// they were counted.
    Unordered { count: Option<u64> },
}

/// Indexes a whole video through `demuxer`, a second demuxer over the same video (so that the one decoding
/// stays at its start): an MP4's from its index (`Demuxer::indexed_packets`), a Matroska video's read with the
/// approximate seek mode by time from its Cues (`index::by_time`), others by demuxing without decoding.
pub(crate) fn scan_whole(mut demuxer: Demuxer, config: &Config) -> Result<Scanned, VideoError> {
    let time_base = demuxer.stream().seconds_per_unit();
    if demuxer.approximate_index() {
        if let Some(index) = index::by_time(&mut demuxer, max_packets(config)) {
            return Ok(Scanned::Index(Arc::new(index)));
        }
    }
    let packets = index::scan(&mut demuxer, max_packets(config)).map_err(VideoError::NotAVideo)?;
    Ok(scanned(packets, time_base))
}

/// Indexes a whole MP4 through the demuxer that decodes it, from the container's index (no packet read, so
/// it stays where it is: `Demuxer::indexed_packets`); `None` where the video must be scanned instead.
pub(crate) fn list_whole(demuxer: &Demuxer, config: &Config) -> Option<Scanned> {
    let packets = index::listed(demuxer, max_packets(config))?;
    Some(scanned(packets, demuxer.stream().seconds_per_unit()))
}

/// What the packets of a whole video (`None`: too many) give.
fn scanned(packets: Option<Vec<index::PacketEntry>>, time_base: f64) -> Scanned {
    let count = packets
        .as_ref()
        .map(|p| p.iter().filter(|p| !p.discard).count() as u64);
    match packets.and_then(|p| FrameIndex::new(p, time_base)) {
        Some(index) => Scanned::Index(Arc::new(index)),
        None => Scanned::Unordered { count },
    }
}

/// Plans the sampling of a whole video from what [`scan_whole`] found (or a kept index of the same file).
pub(crate) fn plan_whole(
    scanned: Scanned,
    config: &Config,
    key: ClipKey,
) -> Result<WholePlan, VideoError> {
    let sampling = &config.sampling;
    let length = config.sequence_length;
    let bad = |reason: String| VideoError::Sampling { reason };
    let index = match scanned {
        Scanned::Index(index) => index,
        Scanned::Unordered { count } => {
            return plan_unordered(config, key, count);
        }
    };
    let timeline = index.timeline();
    let virtual_frames = virtual_frames(&timeline, sampling);
    let count = virtual_frames.len() as u64;
    let whole = sampling.segment.is_none() && key.segment.is_none();
    if count == 0 && index.frames() > 0 && whole {
        // A time range the video does not reach (a segment may hold none of the sequences: not this).
        let last = timeline.pts.last().copied().unwrap_or(0.0);
        let start = sampling.start.unwrap_or(0.0);
        let range = match sampling.end {
            Some(end) => format!("from {start} s to {end} s"),
            None => format!("from {start} s on"),
        };
        return Err(bad(format!(
            "no frame is shown {range} (counted from the first frame): its {} frames are shown from 0 to \
             {last:.3} s",
            index.frames()
        )));
    }
    let plan = Plan::whole(sampling, length, count, index.frames(), key).map_err(|e| bad(e.0))?;
    if let Some((first, end)) = key.segment.filter(|(first, end)| end <= first) {
        return Err(bad(format!(
            "the segment's end (frame {end}) is not after its first frame ({first}); allowed: end > first"
        )));
    }
    let plan = match [sampling.segment, key.segment] {
        [None, None] => plan,
        // The sequences whose first frame (the real frame its first virtual frame shows) is in the segment
        // (in both, when the operator and the video give one).
        segments => plan.restricted(count, |v| {
            let d = virtual_frames[v as usize];
            segments
                .iter()
                .flatten()
                .all(|&(first, end)| (first..end).contains(&d))
        }),
    };
    let mut needed: Vec<u64> = plan
        .needed(count)
        .into_iter()
        .map(|v| virtual_frames[v as usize])
        .collect();
    needed.dedup();
    Ok(WholePlan::Seek(Box::new(Planned {
        index,
        virtual_frames,
        plan,
        needed,
    })))
}

/// A whole video whose packets give no display order (or too many to index): decoded in order, its frames
/// counted as they come.
fn plan_unordered(
    config: &Config,
    key: ClipKey,
    count: Option<u64>,
) -> Result<WholePlan, VideoError> {
    let sampling = &config.sampling;
    let length = config.sequence_length;
    let bad = |reason: String| VideoError::Sampling { reason };
    if sampling.segment.is_some() || key.segment.is_some() {
        return Err(bad(
            "a segment needs the frames' display order in advance, and this video's packets do not give it"
                .into(),
        ));
    }
    let plan = if sampling.clips.is_some() {
        if sampling.fps.is_some() || sampling.start.is_some() || sampling.end.is_some() {
            return Err(bad(
                "clips with a frame rate or a time range need the frames' times in advance, and this \
                 video's packets do not give them"
                    .into(),
            ));
        }
        let count =
            count.ok_or_else(|| bad("too many packets to count its frames for clips".into()))?;
        Some(Plan::whole(sampling, length, count, count, key).map_err(|e| bad(e.0))?)
    } else {
        None
    };
    Ok(WholePlan::InOrder(Box::new(InOrder::new(
        sampling, length, plan,
    ))))
}
