//! A damaged start, found by decoding it: when a whole video's index lists frames a full decode may not give
//! (packets before its first keyframe, as in a recording cut in the middle of a GOP, or an open GOP's leading
//! pictures; [`FrameIndex::leading_frames`]), its start is decoded up to that keyframe, and the frames that
//! did not come out are left out of the index. Display indices then count the frames a full decode gives, as a
//! plain run and the `ffmpeg` CLI number them, whatever is sampled and wherever a decode starts; time ranges
//! and target frame rates count from the first frame given. A video that starts with its keyframe, shown
//! first (nearly every file), is not decoded here at all.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::index::FrameIndex;
use crate::decode::{Decoder, Stop};
use crate::demux::Demuxer;
use crate::ffi::packet::Packet;

/// Decodes `demuxer` (at its first packet) with `decoder` until the frames shown before `index`'s first
/// keyframe are known, and leaves out of `index` those that did not come out; returns how many. Only where
/// [`FrameIndex::leading_frames`] says the start may be damaged (else 0, nothing read).
pub(crate) fn leave_out_undecodable_start(
    index: &mut FrameIndex,
    demuxer: &mut Demuxer,
    decoder: &mut dyn Decoder,
    stop: &AtomicBool,
) -> Result<usize, Stop> {
    let Some(key_pts) = index.leading_frames() else {
        return Ok(0);
    };
    let mut packet = Packet::new().map_err(|e| Stop::Video(e.into()))?;
    // The times of the frames the decoder gave before the keyframe's, in the order it gave them.
    let mut shown = Vec::new();
    let past_key = Cell::new(false);
    let mut on_frame = |info: crate::decode::FrameInfo, _: crate::decode::frame::FrameRef<'_>| {
        match info.packet_pts {
            Some(pts) if pts < key_pts => shown.push(pts),
            // Frames come out in display order: once one shown from the keyframe on came out, every earlier
            // one that will has.
            _ => past_key.set(true),
        }
        Ok(())
    };
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Stop::Shutdown);
        }
        // A packet the demuxer cannot read ends the start's decode: what came out is what a full decode gives
        // of it (the decode proper reports the demuxer's failure).
        let more = demuxer.next_packet(&mut packet).unwrap_or(false);
        // Rejected packets are what a damaged start is made of: decoding goes on.
        decoder.decode(more.then_some(&packet), &mut on_frame)?;
        if past_key.get() || !more {
            break;
        }
    }
    let left_out = index.leave_out_undecodable(key_pts, &shown);
    if left_out > 0 {
        tracing::info!(
            left_out,
            "frames before the first keyframe that decoding does not give are not numbered"
        );
    }
    Ok(left_out)
}
