//! Which decoded pictures are damaged: concealed by the decoder, or decoded from damaged data. Pure state,
//! fed by the libavcodec loop (`backend::DecodeLoop`) with each packet it sends, each packet the decoder
//! rejects and each frame it gives, so every API (a plain run, sampled reads, the reader) marks frames by
//! the same rule.
//!
//! **The rule.** A picture is damaged when libavcodec says so (`AV_FRAME_FLAG_CORRUPT`, or any
//! `decode_error_flags`: concealment, missing references, invalid bitstream), or when it was decoded after
//! damage in its own GOP: after a packet of that GOP the demuxer marked damaged (`AV_PKT_FLAG_CORRUPT`: MPEG-TS
//! continuity errors; its own picture too), after packets of that GOP the demuxer lost (it logged an error and
//! skipped damaged data, as Matroska's resync does: counted from the oldest packet whose frame has not come
//! out), after a packet the decoder rejected, or an error it logged (with frame
//! threading an error surfaces some packets late, so damage counts from the oldest packet whose frame has not
//! come out), or after a picture of that GOP it flagged (damage travels through references, which do not cross
//! a keyframe: libavcodec flags nothing on the pictures that refer to a concealed one). An open GOP's leading
//! pictures (decoded after its keyframe, shown before it) refer to the GOP before and take its damage too. What
//! the rule cannot see: a picture shown before a flagged one that it refers to (a B-frame ahead of a damaged
//! P-frame in display order) is marked only if the P-frame's damage was reported before it came out; damage no
//! decoder reports (flipped bits that decode to other pixels) is not marked, and decodes the same everywhere.
//!
//! A frame not marked is decoded from data whose GOP was whole up to it: it is the same picture whichever API
//! decodes it and wherever decoding started (a keyframe), and the same as the `ffmpeg` CLI's.

use std::collections::BTreeMap;

use crate::error::{AvError, VideoError};

/// Packets remembered for the frames still to come out (a decoder's delay is some tens of packets at most;
/// past this the oldest are forgotten and their frames take the current GOP's state).
const MAX_IN_FLIGHT: usize = 4096;

/// Where a packet stands: its GOP (a count of keyframes sent) and its place in decode order.
#[derive(Debug, Clone, Copy)]
struct Sent {
    gop: u64,
    seq: u64,
    /// Shown before its GOP's keyframe (an open GOP's leading picture).
    leading: bool,
}

/// The damage state of one decode, from its last start (a seek or the stream's start).
#[derive(Debug, Default)]
pub(crate) struct DamageWatch {
    /// Packets sent, by presentation time, until their frames come out (or a frame shown after them does:
    /// frames come out in display order, so theirs never will).
    in_flight: BTreeMap<i64, Sent>,
    /// Packets sent so far.
    seq: u64,
    /// Keyframes sent so far (the current GOP's number).
    gop: u64,
    /// The current GOP's keyframe's presentation time.
    key_pts: Option<i64>,
    /// The GOPs with damage, each from the first packet (decode order) after it: `(gop, seq)`; at most the
    /// current one and the one before matter.
    damaged_from: Vec<(u64, u64)>,
    /// Every damage signal taken since the watch was made (restarts included): what `decode::steady` watches
    /// to decode again on one thread.
    signals: u64,
}

impl DamageWatch {
    /// A watch over a decode starting now.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Decoding starts again elsewhere (a seek; the decoder was flushed): nothing carries over.
    pub(crate) fn restart(&mut self) {
        *self = Self {
            signals: self.signals,
            ..Self::default()
        };
    }

    /// The damage signals taken so far (each packet rejected or lost, each error, each picture flagged), over
    /// restarts: a count that moves is damage seen.
    pub(crate) fn signals(&self) -> u64 {
        self.signals
    }

    /// A packet is about to be sent to the decoder.
    pub(crate) fn sent(&mut self, pts: Option<i64>, key: bool) {
        if key {
            self.gop += 1;
            self.key_pts = pts;
            self.damaged_from.retain(|&(g, _)| g + 1 >= self.gop);
        }
        self.seq += 1;
        if let Some(pts) = pts {
            if self.in_flight.len() >= MAX_IN_FLIGHT {
                self.in_flight.pop_first();
            }
            let leading = !key && self.key_pts.is_some_and(|k| pts < k);
            self.in_flight.insert(
                pts,
                Sent {
                    gop: self.gop,
                    seq: self.seq,
                    leading,
                },
            );
        }
    }

    /// The decoder rejected the packet just sent: what follows in its GOP is decoded from damaged data.
    fn rejected(&mut self) {
        self.damage(self.gop, self.seq);
    }

    /// The demuxer lost packets before the one about to be sent (it skipped damaged data): the pictures still
    /// to come out of the GOP the loss is in (those of the oldest packet waiting on, and after) are decoded from
    /// damaged data, and the rest of that GOP; a keyframe sent next starts whole.
    pub(crate) fn lost_before_next(&mut self) {
        self.rejected_in_flight();
    }

    /// The packet just sent is damaged by the demuxer's account (`AV_PKT_FLAG_CORRUPT`: an MPEG-TS packet lost
    /// or cut, which the decoder may take without a word): its picture and what follows in its GOP are decoded
    /// from damaged data.
    pub(crate) fn sent_damaged(&mut self) {
        self.rejected();
    }

    /// The decoder reported an error (sending a packet or giving frames): with frame threading, the error of
    /// a packet sent some packets ago. Damage is counted from the oldest packet whose frame has not come out
    /// (a few pictures decoded before the damaged one may be marked too: the mark errs on the safe side).
    pub(crate) fn rejected_in_flight(&mut self) {
        match self.in_flight.values().min_by_key(|s| s.seq).copied() {
            // Every GOP from the oldest packet waiting on (a keyframe sent since may be the damaged one).
            Some(oldest) => {
                for gop in oldest.gop..=self.gop {
                    self.damage(gop, oldest.seq);
                }
            }
            None => self.rejected(),
        }
    }

    /// A frame came out of the packet with presentation time `packet_pts`, `flagged` damaged by libavcodec.
    /// Returns whether it is damaged.
    pub(crate) fn frame(&mut self, packet_pts: Option<i64>, flagged: bool) -> bool {
        let sent = packet_pts.and_then(|pts| {
            // Packets shown before this frame whose frames did not come out never will.
            while self
                .in_flight
                .first_key_value()
                .is_some_and(|(&k, _)| k < pts)
            {
                self.in_flight.pop_first();
            }
            self.in_flight.remove(&pts)
        });
        let sent = sent.unwrap_or(Sent {
            gop: self.gop,
            seq: self.seq,
            leading: false,
        });
        if flagged {
            self.damage(sent.gop, sent.seq);
            return true;
        }
        self.damaged_from.iter().any(|&(gop, from)| {
            (gop == sent.gop && from <= sent.seq) || (sent.leading && gop + 1 == sent.gop)
        })
    }

    fn damage(&mut self, gop: u64, seq: u64) {
        self.signals += 1;
        match self.damaged_from.iter_mut().find(|(g, _)| *g == gop) {
            Some((_, from)) => *from = (*from).min(seq),
            None => self.damaged_from.push((gop, seq)),
        }
    }
}

/// With [`Config::strict`](crate::Config::strict): the error of a damaged frame at display index `index`
/// (`pts` seconds), after `frames` frames.
pub(crate) fn damaged_frame(frames: u64, index: u64, pts: f64) -> VideoError {
    VideoError::Damaged {
        frames,
        what: format!(
            "frame {index} ({pts:.3} s) is damaged (concealed by the decoder, or decoded from damaged data)"
        ),
    }
}

/// With [`Config::strict`](crate::Config::strict): the error of a hole at display index `index` (`pts`
/// seconds), after `frames` frames.
pub(crate) fn hole(frames: u64, index: u64, pts: f64) -> VideoError {
    VideoError::Damaged {
        frames,
        what: format!(
            "display index {index} ({pts:.3} s) has no picture: its data does not decode"
        ),
    }
}

/// With [`Config::strict`](crate::Config::strict): the error of `count` packets the decoder rejected, the
/// first with `first`, after `frames` frames.
pub(crate) fn rejected(frames: u64, count: u64, first: &AvError) -> VideoError {
    VideoError::Corrupt {
        failed_packets: count,
        frames,
        first: first.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `(pts, key)` packets; `reject` those at these times; frames out at once (no delay).
    fn decode(packets: &[(i64, bool)], reject: &[i64], flagged: &[i64]) -> Vec<(i64, bool)> {
        let mut w = DamageWatch::new();
        packets
            .iter()
            .map(|&(pts, key)| {
                w.sent(Some(pts), key);
                if reject.contains(&pts) {
                    w.rejected();
                }
                (pts, w.frame(Some(pts), flagged.contains(&pts)))
            })
            .collect()
    }

    fn damaged(out: &[(i64, bool)]) -> Vec<i64> {
        out.iter().filter(|f| f.1).map(|f| f.0).collect()
    }

    #[test]
    fn whole_data_is_not_damaged() {
        let gops = [(0, true), (1, false), (2, false), (3, true), (4, false)];
        assert!(damaged(&decode(&gops, &[], &[])).is_empty());
    }

    #[test]
    fn damage_runs_to_the_end_of_its_gop() {
        let gops = [
            (0, true),
            (1, false),
            (2, false),
            (3, false),
            (4, true),
            (5, false),
        ];
        // A rejected packet: what follows it in the GOP (its own picture, if one comes, too).
        assert_eq!(damaged(&decode(&gops, &[1], &[])), vec![1, 2, 3]);
        // A flagged picture: it and what follows.
        assert_eq!(damaged(&decode(&gops, &[], &[2])), vec![2, 3]);
        // A flagged keyframe: its GOP.
        assert_eq!(damaged(&decode(&gops, &[], &[4])), vec![4, 5]);
    }

    #[test]
    fn a_packet_the_demuxer_marks_damaged_damages_its_picture_and_the_rest_of_its_gop() {
        // I0 P3 B1 B2 | I4 P5: B1's packet is marked corrupt (decode order: after P3, which it refers to).
        let mut w = DamageWatch::new();
        let mut out = Vec::new();
        for (pts, key) in [
            (0, true),
            (3, false),
            (1, false),
            (2, false),
            (4, true),
            (5, false),
        ] {
            w.sent(Some(pts), key);
            if pts == 1 {
                w.sent_damaged();
            }
            out.push((pts, w.frame(Some(pts), false)));
        }
        // B1 itself and what was decoded after it in its GOP; not P3 (decoded before), not the next GOP.
        assert_eq!(damaged(&out), vec![1, 2]);
    }

    #[test]
    fn packets_lost_before_a_keyframe_damage_what_is_still_to_come_of_the_gop_before() {
        // I0 P3 B1 | (lost: B2) | I4 P5: B1 has not come out when the loss is found, before I4.
        let mut w = DamageWatch::new();
        w.sent(Some(0), true);
        assert!(!w.frame(Some(0), false));
        w.sent(Some(3), false);
        w.sent(Some(1), false);
        w.lost_before_next();
        w.sent(Some(4), true);
        assert!(w.frame(Some(1), false));
        assert!(w.frame(Some(3), false));
        assert!(!w.frame(Some(4), false));
        w.sent(Some(5), false);
        assert!(!w.frame(Some(5), false));
        // Lost in the middle of a GOP, nothing waiting: the rest of the GOP.
        let mut w = DamageWatch::new();
        w.sent(Some(0), true);
        assert!(!w.frame(Some(0), false));
        w.lost_before_next();
        w.sent(Some(1), false);
        assert!(w.frame(Some(1), false));
    }

    #[test]
    fn leading_pictures_take_the_damage_of_the_gop_before() {
        // Open GOP: I0 P3 B1 B2 | I6 B4 B5 (B4, B5 refer to P3).
        let gops = [
            (0, true),
            (3, false),
            (1, false),
            (2, false),
            (6, true),
            (4, false),
            (5, false),
            (9, false),
        ];
        assert_eq!(damaged(&decode(&gops, &[3], &[])), vec![3, 1, 2, 4, 5]);
        // Damage two GOPs back does not reach them.
        let mut w = DamageWatch::new();
        w.sent(Some(0), true);
        w.rejected();
        w.sent(Some(10), true);
        w.sent(Some(20), true);
        w.sent(Some(15), false);
        assert!(!w.frame(Some(15), false));
    }

    #[test]
    fn an_error_reported_late_counts_from_the_oldest_packet_waiting() {
        // Frame threading: I0 P3 B1 B2 sent, P3's error reported when frames are received, after B1 was sent.
        let mut w = DamageWatch::new();
        w.sent(Some(0), true);
        assert!(!w.frame(Some(0), false));
        w.sent(Some(3), false);
        w.sent(Some(1), false);
        w.rejected_in_flight();
        w.sent(Some(2), false);
        assert!(w.frame(Some(1), false));
        assert!(w.frame(Some(2), false));
        // An error reported after a keyframe was sent may be the keyframe's: its GOP is damaged too.
        let mut w = DamageWatch::new();
        w.sent(Some(0), true);
        w.sent(Some(2), false);
        w.sent(Some(1), false);
        w.sent(Some(3), true);
        w.rejected_in_flight();
        assert!(w.frame(Some(0), false));
        assert!(w.frame(Some(3), false));
        // A packet whose frame never came out is not waiting once a later frame came out.
        let mut w = DamageWatch::new();
        w.sent(Some(0), true);
        w.sent(Some(1), false);
        w.sent(Some(2), false);
        w.frame(Some(2), false); // 0 and 1 gave nothing
        w.sent(Some(5), true);
        w.sent(Some(6), false);
        assert!(!w.frame(Some(5), false));
        w.rejected_in_flight();
        assert!(w.frame(Some(6), false));
    }

    #[test]
    fn a_restart_forgets_the_damage() {
        let mut w = DamageWatch::new();
        w.sent(Some(0), true);
        w.rejected();
        w.restart();
        w.sent(Some(0), true);
        w.sent(Some(1), false);
        assert!(!w.frame(Some(0), false));
        assert!(!w.frame(Some(1), false));
    }
}
