//! The index of a whole stream whose packets carry no presentation times (a raw Annex-B H.264 or HEVC stream):
//! its display order is found by decoding it once, the way a plain run numbers it. Each packet read is stamped
//! with its place in decode order; the decoder gives the stamp back on the frame the packet makes, in display
//! order, so the frames' order is the packets' display order. Packets that give no frame (parameter sets alone,
//! damage) are left out of the display order, as the plain run, which counts the frames the decoder gives,
//! leaves them. Times are the nominal frame rate's, from the first frame (as a plain run's clock gives them).
//!
//! Random access then finds packets by byte position (the parser gives each its position): a packet read is
//! given its time from the index ([`FrameIndex::time_of_read`]). Opening costs one decode of the stream (nothing
//! converted); the index holds under 90 bytes a frame, as any.

use std::sync::atomic::{AtomicBool, Ordering};

use super::index::{FrameIndex, PacketEntry};
use crate::decode::{Decoder, Stop};
use crate::demux::Demuxer;
use crate::ffi::packet::Packet;

/// The index of `demuxer`'s stream (read from its start; at most `max` packets, else `Ok(None)`), its display
/// order found by decoding every packet with `decoder`. `Ok(None)` too when the order cannot be told (a packet
/// without a byte position, two packets at one, no keyframe, no frame).
pub(crate) fn index_by_decoding(
    demuxer: &mut Demuxer,
    decoder: &mut dyn Decoder,
    max: usize,
    stop: &AtomicBool,
) -> Result<Option<FrameIndex>, Stop> {
    let stream = demuxer.stream();
    let time_base = stream.seconds_per_unit();
    // One frame in stream units, at the nominal rate (25 fps when the stream says none).
    let frame = stream
        .fps()
        .filter(|f| *f > 0.0)
        .map_or(1.0 / 25.0, |f| 1.0 / f);
    let step = ((frame / time_base).round() as i64).max(1);
    let mut packet = Packet::new().map_err(|e| Stop::Video(e.into()))?;
    let mut packets: Vec<PacketEntry> = Vec::new();
    // The decode-order stamp of each frame the decoder gave, in the order it gave them.
    let mut shown: Vec<usize> = Vec::new();
    let mut on_frame = |info: crate::decode::FrameInfo, _: crate::decode::frame::FrameRef<'_>| {
        if let Some(stamp) = info.packet_pts.and_then(|p| usize::try_from(p).ok()) {
            shown.push(stamp);
        }
        Ok(())
    };
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Stop::Shutdown);
        }
        // A packet the demuxer cannot read ends the stream (as for a plain run).
        if !demuxer.next_packet(&mut packet).unwrap_or(false) {
            break;
        }
        if packets.len() == max {
            return Ok(None);
        }
        let stamp = packets.len() as i64;
        packets.push(PacketEntry {
            pts: None,
            dts: None,
            pos: packet.pos(),
            duration: step,
            key: packet.is_key(),
            discard: true, // until its frame comes out
        });
        packet.set_pts(Some(stamp));
        decoder.decode(Some(&packet), &mut on_frame)?;
    }
    decoder.decode(None, &mut on_frame)?;
    for (rank, &stamp) in shown.iter().enumerate() {
        if let Some(p) = packets.get_mut(stamp).filter(|p| p.discard) {
            p.pts = Some(rank as i64 * step);
            p.discard = false;
        }
    }
    Ok(FrameIndex::with_synthetic_times(packets, time_base))
}
