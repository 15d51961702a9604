//! A whole video's frame index, built once by demuxing without decoding (an MP4's from its index, without
//! reading its media data: `demux::indexed`): every packet of the chosen stream in
//! decode order (timestamps, keyframe and discard flags, byte position), the display order they give, and
//! for a display index the keyframes decoding may start from.
//!
//! Display order is the order of the packets' presentation times, leaving out the packets the demuxer marks
//! as decoded for reference only (an MP4 edit list cuts their frames): the order `ffmpeg -fps_mode
//! passthrough` outputs frames in. A stream whose packets lack presentation times, or repeat one, has no such
//! index: its frames are counted as the decoder gives them instead (the reader indexes such a stream by
//! decoding it once: `decoded_order`).
//!
//! [`IndexCache`] keeps a decoding thread's last file index for the next video from the same file: the
//! segments of one long video, fed one after another, scan it once, not once each.

use std::cell::RefCell;
use std::sync::Arc;

use super::plan::Timeline;
use crate::demux::cues::CueGrid;
pub(crate) use crate::demux::indexed::PacketEntry;
use crate::demux::Demuxer;
use crate::error::AvError;
use crate::video::FileIdentity;

/// Every packet of the demuxer's stream, in decode order: listed from the container's index where that gives
/// exactly what reading them would (`Demuxer::indexed_packets`: an MP4's `moov`, not its media data), else
/// read (not decoded). At most `max` packets (`Ok(None)`: too many to index).
///
/// A video read through whose packet index is kept between openings (a remote video's index cache:
/// [`KeepIndex`](crate::video::KeepIndex)) is listed from there the next time, and keeps what the reading gave.
pub(crate) fn scan(demuxer: &mut Demuxer, max: usize) -> Result<Option<Vec<PacketEntry>>, AvError> {
    if let Some(packets) = listed(demuxer, max) {
        return Ok(packets);
    }
    let stream = demuxer.stream().index;
    if let Some(kept) = demuxer.kept_index().and_then(|kept| kept.load()) {
        match kept_packets(&kept, stream, max) {
            Some(packets) => return Ok(packets),
            None => tracing::warn!(
                "a kept packet index is another build's or damaged: reading the video afresh"
            ),
        }
    }
    if demuxer.whole_source().is_some() {
        // A remote video without an index framefeed reads by ranges (not an MP4's moov): read through.
        crate::source::remote::count_index_scan();
        tracing::warn!(
            "a remote video has no container index framefeed reads by ranges: reading it through once to \
             index it{}",
            if demuxer.kept_index().is_some() {
                " (kept in the index cache for its next opening)"
            } else {
                ""
            }
        );
    }
    let packets = demuxer.read_packets(max)?;
    if let (Some(kept), Some(packets)) = (demuxer.kept_index(), &packets) {
        kept.store(&kept_bytes(packets, stream));
    }
    Ok(packets)
}

/// The index by time of a Matroska or WebM video read with [`SeekMode::Approximate`](crate::SeekMode::Approximate)
/// (`demux::cues`: its Cues, frame rate and duration), at most `max` frames; `None` where those do not index it
/// (it is then read through for its exact index, with [`scan`]'s warning).
pub(crate) fn by_time(demuxer: &mut Demuxer, max: usize) -> Option<FrameIndex> {
    let time_base = demuxer.stream().seconds_per_unit();
    let index = demuxer
        .cue_grid(max)
        .and_then(|grid| FrameIndex::from_cues(&grid, time_base));
    match &index {
        Some(index) => tracing::debug!(
            "numbering a Matroska video's {} frames by time from its Cues (seek mode approximate)",
            index.frames()
        ),
        None if demuxer.format().is_matroska() => tracing::warn!(
            "seek mode approximate: this Matroska video's Cues, frame rate or duration do not index it; \
             indexing it exactly instead"
        ),
        None => {}
    }
    index
}

/// What a kept packet index starts with: its format, then the framefeed and FFmpeg releases that read it (their
/// demuxing is what it records: another build reads the video afresh).
const KEPT_MAGIC: &[u8] = b"framefeed packet index 1\n";
/// Bytes a packet takes in a kept index: flags, then pts, dts, pos and duration.
const KEPT_PACKET: usize = 1 + 4 * 8;

/// The build a kept index must be from: framefeed's version and the linked FFmpeg's release.
fn kept_build() -> String {
    format!(
        "{} {}",
        env!("CARGO_PKG_VERSION"),
        crate::ffi::version::linked().0
    )
}

/// `packets`, the index of stream `stream`, as kept (read back by [`kept_packets`]).
fn kept_bytes(packets: &[PacketEntry], stream: usize) -> Vec<u8> {
    let build = kept_build();
    let mut out =
        Vec::with_capacity(KEPT_MAGIC.len() + build.len() + 20 + packets.len() * KEPT_PACKET);
    out.extend_from_slice(KEPT_MAGIC);
    out.extend_from_slice(&(build.len() as u32).to_le_bytes());
    out.extend_from_slice(build.as_bytes());
    out.extend_from_slice(&(stream as u64).to_le_bytes());
    out.extend_from_slice(&(packets.len() as u64).to_le_bytes());
    for p in packets {
        let flags = u8::from(p.pts.is_some())
            | u8::from(p.dts.is_some()) << 1
            | u8::from(p.pos.is_some()) << 2
            | u8::from(p.key) << 3
            | u8::from(p.discard) << 4;
        out.push(flags);
        for value in [p.pts, p.dts, p.pos, Some(p.duration)] {
            out.extend_from_slice(&value.unwrap_or(0).to_le_bytes());
        }
    }
    out
}

/// The packets a kept index of stream `stream` holds (`Some(None)`: more than `max`); `None` when it is not
/// one this build wrote for that stream, or is damaged.
fn kept_packets(data: &[u8], stream: usize, max: usize) -> Option<Option<Vec<PacketEntry>>> {
    fn take(data: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
        data.split_at_checked(n)
    }
    let rest = data.strip_prefix(KEPT_MAGIC)?;
    let (len, rest) = take(rest, 4)?;
    let (build, rest) = take(rest, u32::from_le_bytes(len.try_into().ok()?) as usize)?;
    if build != kept_build().as_bytes() {
        return None;
    }
    let (kept_stream, rest) = take(rest, 8)?;
    let (count, rest) = take(rest, 8)?;
    if u64::from_le_bytes(kept_stream.try_into().ok()?) != stream as u64 {
        return None;
    }
    let count = usize::try_from(u64::from_le_bytes(count.try_into().ok()?)).ok()?;
    if rest.len() != count.checked_mul(KEPT_PACKET)? {
        return None;
    }
    if count > max {
        return Some(None);
    }
    let packets = rest
        .chunks_exact(KEPT_PACKET)
        .map(|p| {
            let value =
                |i: usize| i64::from_le_bytes(p[1 + 8 * i..9 + 8 * i].try_into().expect("8 bytes"));
            let flags = p[0];
            let given = |bit: u8, i: usize| (flags & 1 << bit != 0).then(|| value(i));
            PacketEntry {
                pts: given(0, 0),
                dts: given(1, 1),
                pos: given(2, 2),
                duration: value(3),
                key: flags & 1 << 3 != 0,
                discard: flags & 1 << 4 != 0,
            }
        })
        .collect();
    Some(Some(packets))
}

/// The packets listed from the container's index, without reading them (`Demuxer::indexed_packets`);
/// `Some(None)`: more than `max`; `None`: this video's must be read.
pub(crate) fn listed(demuxer: &Demuxer, max: usize) -> Option<Option<Vec<PacketEntry>>> {
    demuxer
        .indexed_packets()
        .map(|packets| (packets.len() <= max).then_some(packets))
}

/// The most packets an index of a video holds under `config` (its container limit).
pub(crate) fn max_packets(config: &crate::settings::config::Config) -> usize {
    usize::try_from(config.max_container_samples).unwrap_or(usize::MAX)
}

/// The index of a whole video's frames.
#[derive(Debug)]
pub(crate) struct FrameIndex {
    /// Every packet, in decode order.
    packets: Vec<PacketEntry>,
    /// For each display index, its packet (so in ascending presentation time: a display index is found by
    /// its time with a binary search).
    display: Vec<u32>,
    /// `(byte position, packet)` by position (for equal positions in decode order).
    by_pos: Vec<(i64, u32)>,
    /// Seconds per timestamp unit.
    time_base: f64,
    /// The presentation times are framefeed's, not the container's (a stream without timestamps indexed by
    /// decoding it once, `decoded_order`): packets are found by byte position and given their time as read.
    synthetic: bool,
    /// An index by time ([`from_cues`](Self::from_cues)): the first frame's time and the time units a frame.
    /// A frame read is the one whose time is nearest its own, and only keyframes have a byte position.
    grid: Option<(i64, f64)>,
}

impl FrameIndex {
    /// The index of these packets (decode order), or `None` when their presentation times do not give a
    /// display order (one missing or repeated), or there is no keyframe.
    pub(crate) fn new(packets: Vec<PacketEntry>, time_base: f64) -> Option<Self> {
        if packets.len() > u32::MAX as usize || !packets.iter().any(|p| p.key) {
            return None;
        }
        let mut display: Vec<u32> = Vec::with_capacity(packets.len());
        for (i, p) in packets.iter().enumerate() {
            if !p.discard {
                p.pts?;
                display.push(i as u32);
            }
        }
        display.sort_by_key(|&i| packets[i as usize].pts);
        if display
            .windows(2)
            .any(|w| packets[w[0] as usize].pts == packets[w[1] as usize].pts)
        {
            return None; // two frames at one time: display order unknown
        }
        let mut by_pos: Vec<(i64, u32)> = packets
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((p.pos?, i as u32)))
            .collect();
        by_pos.sort_unstable();
        Some(Self {
            packets,
            display,
            by_pos,
            time_base,
            synthetic: false,
            grid: None,
        })
    }

    /// The approximate index of a Matroska video numbered by time from its Cues (`demux::cues`,
    /// [`SeekMode::Approximate`](crate::SeekMode::Approximate)): a packet a frame, in display order, each at its
    /// time on the grid, the keyframes the Cues list at their own times and with their clusters' positions.
    pub(crate) fn from_cues(grid: &CueGrid, time_base: f64) -> Option<Self> {
        let duration = grid.step.round().max(1.0) as i64;
        let mut keys = grid.keys.iter().peekable();
        let packets = (0..grid.frames)
            .map(|i| {
                let key = keys.next_if(|k| k.0 == i);
                let pts = key.map_or_else(
                    || {
                        grid.start
                            .saturating_add((i as f64 * grid.step).round() as i64)
                    },
                    |k| k.1,
                );
                PacketEntry {
                    pts: Some(pts),
                    dts: Some(pts),
                    pos: key.map(|k| k.2),
                    duration,
                    key: key.is_some(),
                    discard: false,
                }
            })
            .collect();
        let mut index = Self::new(packets, time_base)?;
        index.grid = Some((grid.start, grid.step));
        Some(index)
    }

    /// Whether the frames are numbered by time ([`from_cues`](Self::from_cues)).
    pub(crate) fn is_by_time(&self) -> bool {
        self.grid.is_some()
    }

    /// The index of a stream whose container gives no presentation times, with the times
    /// [`decoded_order`](super::decoded_order) gave its packets.
    pub(crate) fn with_synthetic_times(packets: Vec<PacketEntry>, time_base: f64) -> Option<Self> {
        let mut index = Self::new(packets, time_base)?;
        if index.by_pos.len() != index.packets.len() {
            return None; // every packet must be found by its position
        }
        index.synthetic = true;
        Some(index)
    }

    /// Whether the times are framefeed's (see [`with_synthetic_times`](Self::with_synthetic_times)): a packet
    /// read takes its time from here ([`time_of_read`](Self::time_of_read)), and seeking goes by byte position.
    pub(crate) fn is_synthetic(&self) -> bool {
        self.synthetic
    }

    /// The presentation time a packet read at byte position `pos` takes in a synthetic index.
    pub(crate) fn time_of_read(&self, pos: Option<i64>) -> Option<i64> {
        self.packet_at(pos?).and_then(|i| self.packets[i].pts)
    }

    /// How many frames the video displays.
    pub(crate) fn frames(&self) -> u64 {
        self.display.len() as u64
    }

    /// The packets, in decode order.
    pub(crate) fn packet(&self, i: usize) -> &PacketEntry {
        &self.packets[i]
    }

    /// The display times, from the first frame's.
    pub(crate) fn timeline(&self) -> Timeline {
        let pts = |i: u32| self.packets[i as usize].pts.unwrap_or(0);
        let Some(&first) = self.display.first() else {
            return Timeline {
                pts: Vec::new(),
                end: 0.0,
            };
        };
        let t0 = pts(first);
        let secs = |ts: i64| (ts - t0) as f64 * self.time_base;
        let last = *self.display.last().expect("not empty");
        Timeline {
            pts: self.display.iter().map(|&i| secs(pts(i))).collect(),
            end: secs(pts(last) + self.packets[last as usize].duration),
        }
    }

    /// The display index of the frame the decoder gave with presentation time `pts`.
    pub(crate) fn display_of(&self, pts: i64) -> Option<u64> {
        if let Some((start, step)) = self.grid {
            // The frame whose time on the grid is nearest.
            let slot = (pts.saturating_sub(start) as f64 / step).round();
            return (slot >= 0.0 && slot < self.display.len() as f64).then_some(slot as u64);
        }
        self.display
            .binary_search_by_key(&Some(pts), |&i| self.packets[i as usize].pts)
            .ok()
            .map(|d| d as u64)
    }

    /// The presentation time of the first keyframe (in decode order) when the index lists frames a full decode
    /// may not give, because decoding can only start at that keyframe: packets before it (a recording cut in
    /// the middle of a GOP), or shown before it (an open GOP's leading pictures). `None` when every listed
    /// frame is shown from the first keyframe on (an edit list's discarded pre-roll included).
    pub(crate) fn leading_frames(&self) -> Option<i64> {
        let first_key = self.packets.iter().position(|p| p.key)?;
        let key_pts = self.packets[first_key].pts?;
        let before = self.packets[..first_key].iter().any(|p| !p.discard);
        let shown_before = self.packets[first_key..]
            .iter()
            .any(|p| !p.discard && p.pts.is_some_and(|t| t < key_pts));
        (before || shown_before).then_some(key_pts)
    }

    /// Leaves out of the display order the frames shown before `key_pts` (see
    /// [`leading_frames`](Self::leading_frames)) that a full decode did not give (`shown`: the presentation
    /// times of those it gave); returns how many. Display indices then count the frames a full decode gives,
    /// as a plain run and the `ffmpeg` CLI number them.
    pub(crate) fn leave_out_undecodable(&mut self, key_pts: i64, shown: &[i64]) -> usize {
        let before = self.display.len();
        let packets = &self.packets;
        self.display.retain(|&i| {
            let pts = packets[i as usize].pts.expect("indexed frames have one");
            pts >= key_pts || shown.contains(&pts)
        });
        before - self.display.len()
    }

    /// The display indices of the keyframes, ascending.
    pub(crate) fn keyframes(&self) -> Vec<u64> {
        let mut keys: Vec<u64> = self
            .packets
            .iter()
            .filter(|p| p.key && !p.discard)
            .filter_map(|p| self.display_of(p.pts?))
            .collect();
        keys.sort_unstable();
        keys
    }

    /// The presentation time of display index `d`.
    pub(crate) fn pts_of(&self, d: u64) -> i64 {
        self.packets[self.display[d as usize] as usize]
            .pts
            .expect("indexed frames have one")
    }

    /// The presentation time of display index `d` in seconds (on the stream's clock, as frames report theirs).
    pub(crate) fn seconds_of(&self, d: u64) -> f64 {
        self.pts_of(d) as f64 * self.time_base
    }

    /// The packet a packet read is, by its byte position `pos` (or in an index by time, by its presentation
    /// time `pts`), if it is one of the stream's.
    pub(crate) fn packet_read(&self, pos: Option<i64>, pts: Option<i64>) -> Option<usize> {
        match self.grid {
            Some(_) => pts
                .and_then(|pts| self.display_of(pts))
                .map(|d| self.display[d as usize] as usize),
            None => self.packet_at(pos?),
        }
    }

    /// The packet at byte position `pos`, if it is one of the stream's.
    pub(crate) fn packet_at(&self, pos: i64) -> Option<usize> {
        // The last packet at `pos`, where several share it (as a map by position kept the last).
        let end = self.by_pos.partition_point(|&(p, _)| p <= pos);
        end.checked_sub(1)
            .map(|k| self.by_pos[k])
            .filter(|&(p, _)| p == pos)
            .map(|(_, i)| i as usize)
    }

    /// The byte ranges decoding the display indices `needed` reads (see `source::remote`'s hints): for each,
    /// from its start keyframe's packet to the end of the packet [`REORDER_SLACK`] after its own in decode
    /// order (a decoder gives a frame a few packets after its own), the end being where the next packet of the
    /// stream starts, else `len`. Ranges of packets without a byte position are left out.
    pub(crate) fn byte_ranges(&self, needed: &[u64], len: u64) -> Vec<std::ops::Range<u64>> {
        let mut ranges: Vec<std::ops::Range<u64>> = Vec::new();
        for &d in needed {
            let Some(&own) = self.display.get(d as usize) else {
                continue;
            };
            let start = self.start_for(d, 0);
            let last = (own as usize + REORDER_SLACK).min(self.packets.len() - 1);
            let span = if self.grid.is_some() {
                self.cluster_span(start.min(last), last, len)
            } else {
                self.packet_span(start.min(last), last, len)
            };
            let Some(std::ops::Range { start: lo, end }) = span else {
                continue;
            };
            match ranges.last_mut() {
                Some(r) if lo <= r.end && lo >= r.start => r.end = r.end.max(end),
                _ => ranges.push(lo..end),
            }
        }
        ranges
    }

    /// The bytes packets `first..=last` (decode order) lie in: from the lowest position to where the packet
    /// after the highest one starts (else `len`); `None` where one of them has no position.
    fn packet_span(&self, first: usize, last: usize, len: u64) -> Option<std::ops::Range<u64>> {
        let (lo, hi) =
            self.packets[first..=last]
                .iter()
                .try_fold((i64::MAX, i64::MIN), |(lo, hi), p| {
                    let pos = p.pos?;
                    Some((lo.min(pos), hi.max(pos)))
                })?;
        let (lo, hi_bytes) = (u64::try_from(lo).ok()?, u64::try_from(hi).ok()?);
        Some(lo..self.next_position(hi, len).max(hi_bytes + 1))
    }

    /// In an index by time, where only keyframes have a position (their clusters'): the bytes from keyframe
    /// `first`'s cluster to the cluster after that of the last keyframe at or before `last` (else `len`).
    fn cluster_span(&self, first: usize, last: usize, len: u64) -> Option<std::ops::Range<u64>> {
        let lo = u64::try_from(self.packets[first].pos?).ok()?;
        let hi = self.packets[first..=last]
            .iter()
            .rev()
            .find_map(|p| p.pos.filter(|_| p.key))?;
        Some(lo..self.next_position(hi, len).max(lo + 1))
    }

    /// Where the first packet by position after position `pos` starts, else `len`.
    fn next_position(&self, pos: i64, len: u64) -> u64 {
        let next = self.by_pos.partition_point(|&(p, _)| p <= pos);
        self.by_pos
            .get(next)
            .and_then(|&(p, _)| u64::try_from(p).ok())
            .unwrap_or(len)
    }

    /// The keyframe packet decoding display index `d` starts from: the last keyframe (in decode order, not
    /// after `d`'s own packet) displayed at or before it; `earlier` keyframes before that one. The first
    /// packet when there is none (frames shown before the first keyframe).
    pub(crate) fn start_for(&self, d: u64, earlier: usize) -> usize {
        let packet = self.display[d as usize] as usize;
        let pts = self.pts_of(d);
        let mut skipped = 0;
        for i in (0..=packet).rev() {
            let p = &self.packets[i];
            if p.key && p.pts.is_some_and(|k| k <= pts) {
                if skipped == earlier {
                    return i;
                }
                skipped += 1;
            }
        }
        0
    }
}

/// Packets after a frame's own, in decode order, that decoding may read before the frame comes out (B-frame
/// reordering), for [`FrameIndex::byte_ranges`].
pub(crate) const REORDER_SLACK: usize = 4;

/// The index of the file a decoding thread indexed last, kept for the next video from the same file (the same
/// device, inode, length and modification time, so a file rewritten or replaced is indexed again). One entry:
/// a long video's segments fed one after another hit it, and it holds at most one index (under 90 bytes a
/// frame) until a video from another file takes its place or the thread decodes a video it does not index.
#[derive(Default)]
pub(crate) struct IndexCache(RefCell<Option<(FileIdentity, Arc<FrameIndex>)>>);

impl IndexCache {
    /// The index kept for `file`, if it is the file last indexed.
    pub(crate) fn get(&self, file: &FileIdentity) -> Option<Arc<FrameIndex>> {
        match &*self.0.borrow() {
            Some((kept, index)) if kept == file => Some(index.clone()),
            _ => None,
        }
    }

    /// Keeps `index` as `file`'s, in place of any other.
    pub(crate) fn keep(&self, file: FileIdentity, index: Arc<FrameIndex>) {
        *self.0.borrow_mut() = Some((file, index));
    }

    /// Lets go of what it keeps.
    pub(crate) fn clear(&self) {
        self.0.borrow_mut().take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any_packet() -> impl Strategy<Value = PacketEntry> {
        (
            proptest::option::of(any::<i64>()),
            proptest::option::of(any::<i64>()),
            proptest::option::of(any::<i64>()),
            any::<i64>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(pts, dts, pos, duration, key, discard)| PacketEntry {
                pts,
                dts,
                pos,
                duration,
                key,
                discard,
            })
    }

    proptest! {
        #[test]
        fn a_kept_index_reads_back_as_it_was_read_and_only_for_its_stream(
            packets in proptest::collection::vec(any_packet(), 0..64),
            stream in 0_usize..4,
            cut in any::<prop::sample::Index>(),
        ) {
            let kept = kept_bytes(&packets, stream);
            prop_assert_eq!(kept_packets(&kept, stream, 64), Some(Some(packets.clone())));
            prop_assert_eq!(kept_packets(&kept, stream + 1, 64), None);
            if !packets.is_empty() {
                prop_assert_eq!(kept_packets(&kept, stream, packets.len() - 1), Some(None), "over the limit");
            }
            // Cut short anywhere: not an index.
            let cut = cut.index(kept.len());
            prop_assert_eq!(kept_packets(&kept[..cut], stream, 64), None);
        }
    }

    #[test]
    fn a_kept_index_of_another_build_is_not_read() {
        let packets = [packet(0, true), packet(1, false)];
        let mut kept = kept_bytes(&packets, 0);
        assert!(kept_packets(&kept, 0, 10).is_some());
        // The build's text follows the magic and its length: change one byte of it.
        kept[KEPT_MAGIC.len() + 4] ^= 1;
        assert_eq!(kept_packets(&kept, 0, 10), None);
    }

    fn packet(pts: i64, key: bool) -> PacketEntry {
        PacketEntry {
            pts: Some(pts),
            dts: None,
            pos: Some(pts * 100),
            duration: 1,
            key,
            discard: false,
        }
    }

    /// An open GOP in decode order: I0 P3 B1 B2 | I6 (non-IDR) B4 B5 P9 B7 B8.
    fn open_gop() -> Vec<PacketEntry> {
        [
            (0, true),
            (3, false),
            (1, false),
            (2, false),
            (6, true),
            (4, false),
            (5, false),
            (9, false),
            (7, false),
            (8, false),
        ]
        .iter()
        .map(|&(t, k)| packet(t, k))
        .collect()
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // lists of ranges, one here
    fn byte_ranges_run_from_the_start_keyframe_past_the_frames_packet() {
        // Packets at pts * 100 (here the bytes lie in display order): I0 P3 B1 B2 | I6 B4 B5 P9 B7 B8, the file
        // 1000 bytes long. A range spans the packets from the start keyframe to REORDER_SLACK past the frame's
        // own in decode order, lowest to highest byte, and ends where the next packet by position starts.
        let index = FrameIndex::new(open_gop(), 1.0).unwrap();
        // Frame 7 (decode position 8) from I6 (4) to the last packet (9): bytes 400 (B4) to the end.
        assert_eq!(index.byte_ranges(&[7], 1000), [400..1000]);
        // Frame 1 (decode position 2) from I0 to decode position 6: bytes 0 to I6's end (700).
        assert_eq!(index.byte_ranges(&[1], 1000), [0..700]);
        // Frames of one GOP make one range; an index past the end is left out.
        assert_eq!(index.byte_ranges(&[7, 8, 99], 1000), [400..1000]);
        // Every needed frame's own packet lies in a range (the rule the remote reads rely on).
        for d in 0..index.frames() {
            let own = index
                .packet(index.display[d as usize] as usize)
                .pos
                .unwrap() as u64;
            assert!(
                index
                    .byte_ranges(&[d], 1000)
                    .iter()
                    .any(|r| r.contains(&own)),
                "frame {d}"
            );
        }
    }

    #[test]
    fn display_order_follows_presentation_times() {
        let index = FrameIndex::new(open_gop(), 0.5).unwrap();
        assert_eq!(index.frames(), 10);
        assert_eq!(index.display_of(6), Some(6));
        assert_eq!(index.pts_of(4), 4);
        let t = index.timeline();
        assert_eq!(t.pts[2], 1.0);
        assert_eq!(t.end, 5.0);
        assert_eq!(index.packet_at(300), Some(1));
        assert_eq!(index.keyframes(), vec![0, 6]);
    }

    use proptest::prelude::*;

    proptest! {
        /// Looking a frame up by its time and a packet by its position gives what maps built from the
        /// packets give (for a position several packets share: the last of them).
        #[test]
        fn lookups_by_time_and_position_agree_with_maps(
            times in proptest::sample::subsequence((0i64..400).collect::<Vec<_>>(), 1..60)
                .prop_shuffle(),
            positions in proptest::collection::vec(0i64..80, 60),
        ) {
            let packets: Vec<PacketEntry> = times
                .iter()
                .zip(&positions)
                .enumerate()
                .map(|(i, (&t, &pos))| PacketEntry { pos: Some(pos), ..packet(t, i == 0) })
                .collect();
            let index = FrameIndex::new(packets.clone(), 1.0).unwrap();
            let mut sorted = times.clone();
            sorted.sort_unstable();
            for t in -1..401 {
                let expected = sorted.binary_search(&t).ok().map(|d| d as u64);
                prop_assert_eq!(index.display_of(t), expected);
            }
            let by_pos: std::collections::HashMap<i64, usize> =
                packets.iter().enumerate().map(|(i, p)| (p.pos.unwrap(), i)).collect();
            for pos in -1..81 {
                prop_assert_eq!(index.packet_at(pos), by_pos.get(&pos).copied());
            }
        }
    }

    #[test]
    fn leading_pictures_start_at_the_keyframe_before() {
        let index = FrameIndex::new(open_gop(), 1.0).unwrap();
        // B4 and B5 follow I6 in decode order but are shown before it: they need the GOP before.
        assert_eq!(index.start_for(4, 0), 0);
        assert_eq!(index.start_for(6, 0), 4);
        assert_eq!(index.start_for(8, 0), 4);
        assert_eq!(index.start_for(8, 1), 0);
        assert_eq!(index.start_for(8, 5), 0);
    }

    #[test]
    fn a_cut_start_leaves_out_what_the_decoder_did_not_give() {
        // A recording cut mid-GOP: P/B frames of a GOP whose keyframe is gone, then a closed GOP.
        let mut packets: Vec<PacketEntry> = [(2, false), (0, false), (1, false), (3, true)]
            .iter()
            .map(|&(t, k)| packet(t, k))
            .collect();
        packets.extend(open_gop().into_iter().skip(1).map(|p| PacketEntry {
            pts: p.pts.map(|t| t + 4),
            pos: p.pos.map(|pos| pos + 400),
            ..p
        }));
        let mut index = FrameIndex::new(packets, 1.0).unwrap();
        assert_eq!(index.frames(), 13);
        assert_eq!(index.leading_frames(), Some(3));
        // The decoder gave the damaged frame shown at 1 (concealed), not those at 0 and 2.
        assert_eq!(index.leave_out_undecodable(3, &[1]), 2);
        assert_eq!(index.frames(), 11);
        assert_eq!(index.display_of(1), Some(0));
        assert_eq!(index.display_of(3), Some(1));
        assert_eq!(index.display_of(0), None);
        assert_eq!(
            index.timeline().pts[1],
            2.0,
            "times count from the first frame given"
        );
        assert_eq!(index.keyframes()[0], 1);
        // A stream that starts with its keyframe, shown first, lists nothing of the kind.
        assert_eq!(
            FrameIndex::new(open_gop(), 1.0).unwrap().leading_frames(),
            None
        );
        // An edit list's pre-roll: discarded packets before the first shown frame.
        let mut edited = open_gop();
        edited[0].discard = true;
        assert_eq!(FrameIndex::new(edited, 1.0).unwrap().leading_frames(), None);
    }

    #[test]
    fn discarded_packets_are_not_displayed_and_bad_times_give_no_index() {
        let mut packets = open_gop();
        packets[0].discard = true; // an edit list cuts the first frame
        let index = FrameIndex::new(packets.clone(), 1.0).unwrap();
        assert_eq!(index.frames(), 9);
        assert_eq!(index.display_of(1), Some(0));
        packets[3].pts = None;
        assert!(FrameIndex::new(packets.clone(), 1.0).is_none());
        packets[3].pts = Some(1);
        assert!(FrameIndex::new(packets, 1.0).is_none(), "a repeated time");
        assert!(
            FrameIndex::new(vec![packet(0, false)], 1.0).is_none(),
            "no keyframe"
        );
    }

    /// An index by time: 300 frames at 30 fps in milliseconds from 7 ms, a keyframe cluster a second.
    fn by_time() -> FrameIndex {
        let grid = CueGrid {
            start: 7,
            step: 1000.0 / 30.0,
            frames: 300,
            keys: (0..10)
                .map(|s| (s * 30, 7 + s as i64 * 1000, 1000 + s as i64 * 50_000))
                .collect(),
        };
        FrameIndex::from_cues(&grid, 1e-3).unwrap()
    }

    #[test]
    fn an_index_by_time_finds_each_frame_nearest_its_time() {
        let index = by_time();
        assert!(index.is_by_time());
        assert_eq!(index.frames(), 300);
        assert_eq!(
            index.keyframes(),
            (0..10).map(|s| s * 30).collect::<Vec<_>>()
        );
        // A muxer's rounding either way, and a frame a third of a frame off, are the same frame.
        for (pts, d) in [
            (7, 0),
            (40, 1),
            (73, 2),
            (74, 2),
            (1007, 30),
            (1020, 30),
            (9974, 299),
        ] {
            assert_eq!(index.display_of(pts), Some(d), "{pts}");
        }
        assert_eq!(index.display_of(-10), None, "before the first frame");
        assert_eq!(index.display_of(7 + 300 * 34), None, "after the last");
        assert_eq!(index.display_of(i64::MIN), None);
        // Packets read are told by their time, not their position (only keyframes have one).
        assert_eq!(index.packet_read(None, Some(1007)), Some(30));
        assert_eq!(index.packet_read(Some(1), Some(74)), Some(2));
        assert_eq!(index.packet_read(Some(1000), None), None);
        assert_eq!(index.start_for(45, 0), 30);
        assert_eq!(index.start_for(45, 1), 0);
        assert_eq!(index.pts_of(30), 1007, "a keyframe at its own time");
        assert_eq!(index.leading_frames(), None);
    }

    #[test]
    fn an_index_by_time_fetches_from_a_keyframe_cluster_to_the_next() {
        let index = by_time();
        let len = 600_000;
        // Frame 45: the cluster of keyframe 30 (bytes 51 000 to 101 000).
        assert_eq!(index.byte_ranges(&[45], len), vec![51_000..101_000]);
        // A frame whose reorder slack reaches the next keyframe takes that cluster too; the last runs to the end.
        assert_eq!(index.byte_ranges(&[58], len), vec![51_000..151_000]);
        assert_eq!(index.byte_ranges(&[299], len), vec![451_000..len]);
        // Neighbours coalesce.
        assert_eq!(index.byte_ranges(&[0, 31, 45], len), vec![1000..101_000]);
    }
}
