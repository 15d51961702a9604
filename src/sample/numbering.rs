//! The one numbering of a video's frames, for videos read in order (a plain run, a live video, a stream with
//! no index), as the frames come out of the decoder.
//!
//! **The rule** (docs/guide/damaged-videos.md, "One numbering"): a frame's display index is its place in the
//! display order of the stream's packets, the order of their presentation times, leaving out packets marked
//! for reference only (an edit list's pre-roll). A picture that does not decode leaves a **hole** at its index
//! (reported with its time), and the frames after it keep theirs: a damaged picture never renumbers what
//! follows. Packets shown before the first keyframe (in decode order) whose pictures do not come out (a
//! recording cut in the middle of a GOP, an open GOP's leading pictures) are not numbered at all (they were
//! never shown).
//!
//! A whole video's index ([`FrameIndex`](super::index::FrameIndex)) gives the same numbers by sorting every
//! packet's time up front (`tests` below hold the two to each other); here they are found as the decoder
//! gives frames in display order: when a frame at time `t` comes out, every packet with an earlier time has
//! been read (a decoder shows a picture only once every picture shown before it was sent), so the packets
//! still waiting before `t` are the holes. Where packets give no display order (a timestamp missing or
//! repeated, a keyframe that goes back in time: streams joined end to end, a clock that wrapped), frames are
//! counted as the decoder gives them from there on, as the index does without one.

use std::collections::BTreeSet;

/// At most this many packets wait for their frames: a stream whose decoder gives nothing for longer has its
/// oldest waiting packets counted as holes (a decoder's delay is some tens of packets at most).
const MAX_WAITING: usize = 1 << 14;

/// A display index left empty: no picture came out for the packet shown there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HoleAt {
    /// The display index.
    pub(crate) index: u64,
    /// Its packet's presentation time (stream time base).
    pub(crate) pts: i64,
}

/// The numbering of one video read in order.
#[derive(Debug, Default)]
pub(crate) struct Numbering {
    /// Presentation times of packets read whose frames have not come out.
    waiting: BTreeSet<i64>,
    /// The next display index.
    next: u64,
    /// The presentation time of the first keyframe read (decode order), once read.
    first_key: Option<i64>,
    /// The latest presentation time read so far.
    latest: Option<i64>,
    /// The packets give no display order: frames are counted.
    counting: bool,
    /// The presentation times numbered lately (frames and holes), oldest first: a frame that comes out for
    /// one of them again (a damaged stream's decoder giving a picture after a later one) is not numbered twice.
    numbered: std::collections::VecDeque<i64>,
    /// Holes forced out by packets read (too many waiting), handed out with the next frame.
    forced: Vec<HoleAt>,
}

/// How many numbered times [`Numbering`] remembers (a decoder's reordering is far shorter).
const REMEMBERED: usize = 256;

impl Numbering {
    /// A numbering starting at display index 0.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A numbering whose first frame takes display index `next` (a source reopened after frames were
    /// numbered: its timestamps start anew).
    pub(crate) fn starting_at(next: u64) -> Self {
        Self {
            next,
            ..Self::default()
        }
    }

    /// The display index the next frame or hole takes.
    pub(crate) fn next_index(&self) -> u64 {
        self.next
    }

    /// A packet of the stream was read (before it is decoded). When too many packets wait, the oldest are
    /// holes, handed out with the next frame.
    pub(crate) fn packet(&mut self, pts: Option<i64>, key: bool, discard: bool) {
        if discard || self.counting {
            return;
        }
        let Some(pts) = pts else {
            self.count_from_here();
            return;
        };
        if key && self.first_key.is_none() {
            self.first_key = Some(pts);
        }
        // A keyframe is shown after every picture read before it: one that is not starts new times (streams
        // joined end to end, a clock that wrapped): no display order across them.
        if key && self.latest.is_some_and(|latest| pts <= latest) {
            self.count_from_here();
            return;
        }
        self.latest = Some(self.latest.map_or(pts, |latest| latest.max(pts)));
        if !self.waiting.insert(pts) {
            self.count_from_here(); // two packets at one time: no display order
            return;
        }
        while self.waiting.len() > MAX_WAITING {
            let oldest = self.waiting.pop_first().expect("not empty");
            if let Some(hole) = self.hole(oldest) {
                self.forced.push(hole);
            }
        }
    }

    /// A frame came out, from the packet with presentation time `packet_pts`: its display index (`None`: the
    /// frame is not the video's to give, see below), after the holes before it (in display order).
    ///
    /// A frame for a time already numbered (a damaged stream's decoder giving a picture after one shown later,
    /// whose index was then left a hole, or giving one twice) is not given: its index stays what it was, as the
    /// seeking path, which takes each index's first picture, leaves it.
    pub(crate) fn frame(&mut self, packet_pts: Option<i64>) -> (Option<u64>, Vec<HoleAt>) {
        let mut holes = std::mem::take(&mut self.forced);
        match packet_pts {
            Some(pts) if !self.counting && self.waiting.contains(&pts) => {
                while let Some(&earlier) = self.waiting.first().filter(|&&p| p < pts) {
                    self.waiting.remove(&earlier);
                    holes.extend(self.hole(earlier));
                }
                self.waiting.remove(&pts);
                self.remember(pts);
            }
            Some(pts) if !self.counting && self.numbered.contains(&pts) => return (None, holes),
            // A frame the packets do not place (no timestamp, or one no packet read had): counted.
            _ => {}
        }
        let index = self.next;
        self.next += 1;
        (Some(index), holes)
    }

    fn remember(&mut self, pts: i64) {
        if self.numbered.len() == REMEMBERED {
            self.numbered.pop_front();
        }
        self.numbered.push_back(pts);
    }

    /// The stream ended (every packet was decoded and the decoder drained): the packets still waiting are
    /// holes at the end.
    pub(crate) fn finish(&mut self) -> Vec<HoleAt> {
        let mut holes = std::mem::take(&mut self.forced);
        let waiting = std::mem::take(&mut self.waiting);
        holes.extend(waiting.into_iter().filter_map(|p| self.hole(p)));
        holes
    }

    /// The packet at `pts` gave no picture: a hole, unless it is shown before the first keyframe (or no
    /// keyframe was read yet), where undecodable pictures are not numbered.
    fn hole(&mut self, pts: i64) -> Option<HoleAt> {
        if self.first_key.is_none_or(|key| pts < key) {
            return None;
        }
        self.remember(pts);
        let index = self.next;
        self.next += 1;
        Some(HoleAt { index, pts })
    }

    fn count_from_here(&mut self) {
        self.counting = true;
        self.waiting.clear();
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::sample::index::{FrameIndex, PacketEntry};

    /// Packets `(pts, key)` in decode order, decoded with a reorder delay of `delay` frames: frames come out
    /// in display order once `delay` later packets were read, except those in `lost`. Returns each frame's
    /// `(pts, index)` and the holes.
    fn run(packets: &[(i64, bool)], delay: usize, lost: &[i64]) -> (Vec<(i64, u64)>, Vec<HoleAt>) {
        let mut n = Numbering::new();
        let mut frames = Vec::new();
        let mut holes = Vec::new();
        let mut buffer: BTreeSet<i64> = BTreeSet::new();
        let mut out = |n: &mut Numbering, pts: i64, frames: &mut Vec<(i64, u64)>| {
            let (i, h) = n.frame(Some(pts));
            holes.extend(h);
            frames.push((pts, i.expect("numbered")));
        };
        for &(pts, key) in packets {
            n.packet(Some(pts), key, false);
            if !lost.contains(&pts) {
                buffer.insert(pts);
            }
            if buffer.len() > delay {
                let p = buffer.pop_first().unwrap();
                out(&mut n, p, &mut frames);
            }
        }
        while let Some(p) = buffer.pop_first() {
            out(&mut n, p, &mut frames);
        }
        holes.extend(n.finish());
        (frames, holes)
    }

    /// I0 P3 B1 B2 P6 B4 B5 (a GOP with B-frames).
    const GOP: [(i64, bool); 7] = [
        (0, true),
        (3, false),
        (1, false),
        (2, false),
        (6, false),
        (4, false),
        (5, false),
    ];

    #[test]
    fn undamaged_frames_are_counted() {
        let (frames, holes) = run(&GOP, 2, &[]);
        assert!(holes.is_empty());
        assert_eq!(frames, (0..7).map(|p| (p, p as u64)).collect::<Vec<_>>());
    }

    #[test]
    fn a_picture_that_does_not_decode_leaves_a_hole_and_renumbers_nothing() {
        let (frames, holes) = run(&GOP, 2, &[2]);
        assert_eq!(holes, vec![HoleAt { index: 2, pts: 2 }]);
        assert_eq!(frames, vec![(0, 0), (1, 1), (3, 3), (4, 4), (5, 5), (6, 6)]);
        // At the end: a hole all the same.
        let (frames, holes) = run(&GOP, 2, &[6]);
        assert_eq!(holes, vec![HoleAt { index: 6, pts: 6 }]);
        assert_eq!(frames.len(), 6);
    }

    #[test]
    fn undecodable_pictures_before_the_first_keyframe_are_not_numbered() {
        // A recording cut mid-GOP: B-frames shown before the keyframe at 2, which do not decode.
        let packets = [
            (2, true),
            (0, false),
            (1, false),
            (5, false),
            (3, false),
            (4, false),
        ];
        let (frames, holes) = run(&packets, 2, &[0, 1]);
        assert!(holes.is_empty());
        assert_eq!(frames, vec![(2, 0), (3, 1), (4, 2), (5, 3)]);
        // One of them decodes (concealed): it is numbered, the other is not.
        let (frames, holes) = run(&packets, 2, &[0]);
        assert!(holes.is_empty());
        assert_eq!(frames, vec![(1, 0), (2, 1), (3, 2), (4, 3), (5, 4)]);
    }

    #[test]
    fn packets_without_a_display_order_are_counted() {
        let mut n = Numbering::new();
        n.packet(Some(0), true, false);
        n.packet(None, false, false);
        assert_eq!(n.frame(Some(0)), (Some(0), vec![]));
        assert_eq!(n.frame(None), (Some(1), vec![]));
        assert!(n.finish().is_empty());
        // Discarded packets (an edit list's pre-roll) are not numbered.
        let mut n = Numbering::new();
        n.packet(Some(-2), true, true);
        n.packet(Some(0), false, false);
        assert_eq!(n.frame(Some(0)), (Some(0), vec![]));
        assert!(n.finish().is_empty());
    }

    #[test]
    fn a_picture_given_after_its_index_was_passed_is_not_numbered_again() {
        let mut n = Numbering::new();
        for (pts, key) in [(0, true), (2, false), (1, false), (3, false)] {
            n.packet(Some(pts), key, false);
        }
        assert_eq!(n.frame(Some(0)), (Some(0), vec![]));
        // 2 before 1 (damage): 1 is a hole...
        assert_eq!(
            n.frame(Some(2)),
            (Some(2), vec![HoleAt { index: 1, pts: 1 }])
        );
        // ...and stays one when its picture comes after all; a picture given twice is given once.
        assert_eq!(n.frame(Some(1)), (None, vec![]));
        assert_eq!(n.frame(Some(2)), (None, vec![]));
        assert_eq!(n.frame(Some(3)), (Some(3), vec![]));
    }

    #[test]
    fn times_that_start_again_are_counted_from_there() {
        // A stream joined to itself: I0 P2 B1 | I0 P2 B1 (the second copy's times repeat the first's).
        let mut n = Numbering::new();
        for (pts, key) in [(0, true), (2, false), (1, false)] {
            n.packet(Some(pts), key, false);
        }
        assert_eq!(n.frame(Some(0)), (Some(0), vec![]));
        n.packet(Some(0), true, false); // back in time: counted from here
        assert_eq!(n.frame(Some(1)), (Some(1), vec![]));
        n.packet(Some(2), false, false);
        n.packet(Some(1), false, false);
        let given: Vec<Option<u64>> = [2, 0, 1, 2].iter().map(|&p| n.frame(Some(p)).0).collect();
        assert_eq!(given, [Some(2), Some(3), Some(4), Some(5)]);
        assert!(n.finish().is_empty());
    }

    #[test]
    fn a_decoder_that_gives_nothing_has_its_waiting_packets_bounded() {
        let mut n = Numbering::new();
        for p in 0..(MAX_WAITING as i64 + 100) {
            n.packet(Some(p), p == 0, false);
        }
        // The 100 oldest are holes at once, handed out with the next frame, the rest at the end.
        let (index, holes) = n.frame(None);
        assert_eq!((index, holes.len()), (Some(100), 100));
        assert_eq!(n.finish().len(), MAX_WAITING);
    }

    proptest! {
        /// For any GOP structure, reorder delay and lost pictures, the numbering in order equals the whole
        /// video's index: each frame's index is its display position, each hole's the missing one's.
        #[test]
        fn in_order_numbering_is_the_index_numbering(
            gops in prop::collection::vec(1usize..8, 1..6),
            delay in 0usize..4,
            lost_mask in prop::collection::vec(any::<bool>(), 40),
        ) {
            // Each GOP: a keyframe, then its other frames shown before the next GOP, in a shuffled decode order.
            let mut packets = Vec::new();
            let mut t = 0_i64;
            for (g, &len) in gops.iter().enumerate() {
                packets.push((t, true));
                let mut rest: Vec<i64> = (t + 1..t + len as i64).collect();
                rest.rotate_left(g % len.max(1));
                packets.extend(rest.into_iter().map(|p| (p, false)));
                t += len as i64;
            }
            let lost: Vec<i64> = (0..t).filter(|&p| p > 0 && lost_mask[p as usize % 40]).collect();
            // A decoder's delay covers the stream's reordering (here at most a GOP's length).
            let reorder = gops.iter().copied().max().unwrap_or(1);
            let (frames, holes) = run(&packets, reorder + delay, &lost);
            let entries: Vec<PacketEntry> = packets
                .iter()
                .map(|&(pts, key)| PacketEntry {
                    pts: Some(pts),
                    dts: None,
                    pos: None,
                    duration: 1,
                    key,
                    discard: false,
                })
                .collect();
            let index = FrameIndex::new(entries, 1.0).unwrap();
            for (pts, i) in frames {
                prop_assert_eq!(index.display_of(pts), Some(i));
            }
            for hole in &holes {
                prop_assert_eq!(index.display_of(hole.pts), Some(hole.index));
            }
            prop_assert_eq!(holes.len(), lost.len());
        }
    }
}
