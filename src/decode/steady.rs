//! The same pictures every run with frame threads: the CPU backend's libavcodec loop, held to the
//! single-threaded decode wherever damage is seen.
//!
//! libavcodec's frame threads decode undamaged video bit for bit as one thread does, but not damaged video:
//! what a frame thread conceals, and which errors it reports while other threads run, depends on timing, so
//! the pictures and the damage marks of a damaged GOP change from run to run (the `ffmpeg` CLI's do too). One
//! thread decodes them the same every time. So [`SteadyLoop`] decodes with frame threads, and:
//!
//! - **Holds each frame** until every packet sent before its own (in decode order) has given its picture, or
//!   never will (a picture shown after it came out): by then every damage signal of those packets is in
//!   (a frame thread reports its errors before its picture comes out, and pictures come out of finished
//!   threads in order). A frame is handed on only while no signal came: it is decoded from whole data, and
//!   is the single-threaded decode's picture.
//! - **At any damage signal** (a packet rejected, an error logged, a picture flagged, data the demuxer lost or
//!   marked corrupt) drops what it holds and decodes again, on one thread, from the keyframe of the GOP before
//!   the oldest frame not handed on, from the packets it kept (skipping that GOP's leading pictures, which
//!   refer to a GOP further back and were handed on already); the frames already handed on are not handed on
//!   again. A signal that frame threads raced on (an error of a later packet seen early) only makes that
//!   decode happen sooner: the one-thread decode of a whole GOP gives the same pictures, so the output is the
//!   same wherever it started.
//! - **Goes on with one thread** until a GOP decodes without damage, then goes back to frame threads at the
//!   next keyframe, decoding that clean GOP again with them (its pictures are the same; the next GOP's leading
//!   pictures refer to it).
//!
//! The damage marks then come from one decode that gives them the same every run (the single-threaded one;
//! frames threads hand on only frames without any signal). The cost: a damaged GOP, the one before it and the
//! one after it are decoded twice, once with frame threads and once on one thread; undamaged video is decoded
//! once, with frame threads, its frames held a few pictures longer (references, no copies). Packets are kept
//! (references to the demuxer's data) from the GOP before the oldest frame not handed on, at most
//! [`MAX_KEPT_BYTES`]: a GOP larger than that (keyframes hours apart) is decoded as frame threads give it,
//! with a warning.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};

use super::backend::{DecodeLoop, FrameInfo, Stop};
use crate::error::{AvError, VideoError};
use crate::ffi::frame::AvFrame;
use crate::ffi::packet::Packet;

/// The most packet bytes kept to decode again (about a minute of 4K at 30 Mbit/s; a GOP is seconds).
pub(crate) const MAX_KEPT_BYTES: usize = 256 << 20;

/// Frames held at most: past this (a stream whose packets never give their pictures) the decode is taken as
/// damaged and goes on one thread.
const MAX_HELD: usize = 64;

/// A packet kept to decode again.
struct Kept {
    packet: Packet,
    gop: u64,
    /// Shown before its GOP's keyframe: an open GOP's leading picture.
    leading: bool,
    /// `skip_unreferenced` as it was when the packet was sent.
    skip: bool,
}

/// A frame held until it is known whole.
struct Held {
    frame: AvFrame,
    info: FrameInfo,
    /// The decode-order number of its packet.
    seq: u64,
    gop: u64,
}

/// Which decoder the packets go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Frame threads, frames held.
    Threaded,
    /// One thread, since damage was seen; `signals` is the one-thread decoder's count at the current GOP's
    /// keyframe (unchanged at the next keyframe: that GOP was whole).
    Single { signals: u64 },
}

/// The packet times of the frames handed on, for the GOPs kept: a frame decoded again is not handed on twice.
#[derive(Default)]
struct Handed {
    /// By GOP, to forget the old ones.
    by_gop: BTreeSet<(u64, i64)>,
    times: HashSet<i64>,
}

impl Handed {
    /// Notes a frame of GOP `gop` with packet time `pts`; false when one with that time was handed on already.
    fn first_time(&mut self, gop: u64, pts: i64) -> bool {
        if !self.times.insert(pts) {
            return false;
        }
        self.by_gop.insert((gop, pts));
        true
    }

    /// Forgets the frames of GOPs before `gop`.
    fn forget_before(&mut self, gop: u64) {
        while let Some(&(_, pts)) = self.by_gop.first().filter(|&&(g, _)| g < gop) {
            self.by_gop.pop_first();
            self.times.remove(&pts);
        }
    }

    fn clear(&mut self) {
        self.by_gop.clear();
        self.times.clear();
    }
}

/// What a frame is handed to.
type OnFrame<'a> = dyn FnMut(&AvFrame, FrameInfo) -> Result<(), Stop> + 'a;

/// The libavcodec loop with frame threads held to the one-thread decode (see the module's documentation).
pub(crate) struct SteadyLoop {
    /// The frame-threaded decoder; `None`: the decoder runs one thread (or slices) only.
    threaded: Option<DecodeLoop>,
    single: DecodeLoop,
    mode: Mode,
    /// One thread for the rest of this decode: no frame threads, or a stream without timestamps (whose
    /// frames a decode again could not tell from those handed on).
    pinned: bool,
    /// The packet the one-thread decoder gets next, held back one packet: when the demuxer lost data right
    /// after it, it is sent as damaged (its own data may be where the damage starts).
    lagging: Option<(Packet, bool)>,
    kept: VecDeque<Kept>,
    kept_bytes: usize,
    /// The most packet bytes kept ([`MAX_KEPT_BYTES`]).
    max_kept: usize,
    /// The GOP too large to keep (decoded as frame threads give it).
    unkept_gop: Option<u64>,
    held: VecDeque<Held>,
    /// Packets sent to the frame-threaded decoder whose pictures have not come out: pts -> (seq, gop).
    pending: BTreeMap<i64, (u64, u64)>,
    /// The packet times of frames handed on, by GOP, for the GOPs kept.
    handed: Handed,
    /// Packets sent since the start (decode order), keyframes sent (the current GOP), the current keyframe's
    /// time, and the GOP decoding started in (after a flush).
    seq: u64,
    gop: u64,
    key_pts: Option<i64>,
    first_gop: Option<u64>,
    skip: bool,
    warned: bool,
}

impl SteadyLoop {
    /// `threaded` runs frame threads (`None`: none); `single` is the same decoder on one thread.
    pub(crate) fn new(threaded: Option<DecodeLoop>, single: DecodeLoop) -> Self {
        Self {
            pinned: threaded.is_none(),
            mode: if threaded.is_some() {
                Mode::Threaded
            } else {
                Mode::Single { signals: 0 }
            },
            threaded,
            single,
            lagging: None,
            kept: VecDeque::new(),
            kept_bytes: 0,
            max_kept: MAX_KEPT_BYTES,
            unkept_gop: None,
            held: VecDeque::new(),
            pending: BTreeMap::new(),
            handed: Handed::default(),
            seq: 0,
            gop: 0,
            key_pts: None,
            first_gop: None,
            skip: false,
            warned: false,
        }
    }

    /// Keeps at most `bytes` of packets to decode again (tests: the fallback of a GOP too large to keep).
    #[cfg(test)]
    pub(crate) fn keep_at_most(&mut self, bytes: usize) {
        self.max_kept = bytes;
    }

    /// Whether a GOP was too large to keep (and was decoded as frame threads gave it).
    #[cfg(test)]
    pub(crate) fn fell_back(&self) -> bool {
        self.warned
    }

    /// The frame-threaded decoder; it is there in `Threaded` mode.
    fn threads(&mut self) -> &mut DecodeLoop {
        self.threaded
            .as_mut()
            .expect("frame threads in Threaded mode")
    }

    /// Damage marked by decode order (both decoders; see `Decoder::damage_by_order`).
    pub(crate) fn damage_by_order(&mut self) {
        self.single.damage_by_order();
        if let Some(threaded) = &mut self.threaded {
            threaded.damage_by_order();
        }
    }

    /// Skips unreferenced pictures from the next packet on (both decoders).
    pub(crate) fn skip_unreferenced(&mut self, skip: bool) -> bool {
        self.skip = skip;
        let applies = self.single.codec.skip_unreferenced(skip);
        if let Some(threaded) = &mut self.threaded {
            threaded.codec.skip_unreferenced(skip);
        }
        applies
    }

    /// Sends `packet` (`None`: drain) and hands every frame known whole, or decoded on one thread, to
    /// `on_frame`, in display order. `Ok(Some(e))`: the decoder rejected data.
    pub(crate) fn decode(
        &mut self,
        packet: Option<&Packet>,
        on_frame: &mut OnFrame<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let Some(packet) = packet else {
            return self.drain(on_frame);
        };
        let key = packet.is_key();
        if self.first_gop.is_none() && packet.pts().is_none() && !self.pinned {
            // No timestamps: frames decoded again could not be told from those handed on.
            self.pinned = true;
            self.mode = Mode::Single { signals: 0 };
        }
        if key && self.first_gop.is_some() && !self.pinned {
            // The GOP ending here was whole on one thread: back to frame threads from its keyframe.
            if let Mode::Single { signals } = self.mode {
                if self.single.signals() == signals && self.unkept_gop != Some(self.gop) {
                    self.back_to_threads(on_frame)?;
                }
            }
        }
        self.seq += 1;
        if key || self.first_gop.is_none() {
            if key {
                self.gop += 1;
                self.key_pts = packet.pts();
            }
            self.first_gop.get_or_insert(self.gop);
            if let Mode::Single { signals } = &mut self.mode {
                *signals = self.single.signals();
            }
        }
        let leading = !key
            && packet
                .pts()
                .zip(self.key_pts)
                .is_some_and(|(pts, key)| pts < key);
        self.keep(packet, leading)?;
        match self.mode {
            Mode::Single { .. } => self.single_step(packet, on_frame),
            Mode::Threaded => self.threaded_step(packet, self.seq, self.gop, on_frame),
        }
    }

    /// Drops every frame, packet and reference held, to decode from a new point (after a seek).
    pub(crate) fn flush(&mut self) {
        if let Some(threaded) = &mut self.threaded {
            threaded.flush();
        }
        self.single.flush();
        self.lagging = None;
        self.pinned = self.threaded.is_none();
        self.mode = if self.pinned {
            Mode::Single { signals: 0 }
        } else {
            Mode::Threaded
        };
        self.kept.clear();
        self.kept_bytes = 0;
        self.unkept_gop = None;
        self.held.clear();
        self.pending.clear();
        self.handed.clear();
        self.key_pts = None;
        self.first_gop = None;
    }

    /// Keeps a reference to `packet` to decode it again, forgetting the GOPs no decode again can need.
    fn keep(&mut self, packet: &Packet, leading: bool) -> Result<(), Stop> {
        if self.unkept_gop == Some(self.gop) || self.pinned {
            return Ok(());
        }
        self.kept.push_back(Kept {
            packet: packet.new_ref().map_err(VideoError::from)?,
            gop: self.gop,
            leading,
            skip: self.skip,
        });
        self.kept_bytes += packet.size();
        self.forget_old();
        if self.kept_bytes > self.max_kept {
            // Even the GOPs still needed are too large: this one is decoded as frame threads give it.
            if !self.warned {
                self.warned = true;
                tracing::warn!(
                    bytes = self.kept_bytes,
                    "a GOP over {} MiB: damage in it is decoded as frame threads give it (may vary from run to run)",
                    self.max_kept >> 20
                );
            }
            // Its held frames go on as they are (`threaded_step`).
            self.unkept_gop = Some(self.gop);
            self.kept.clear();
            self.kept_bytes = 0;
        }
        Ok(())
    }

    /// The oldest GOP a frame not handed on may come from.
    fn oldest_open_gop(&self) -> u64 {
        let held = self.held.front().map(|h| h.gop);
        let pending = self.pending.values().map(|&(_, gop)| gop).min();
        [held, pending]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(self.gop)
            .min(self.gop)
    }

    /// Forgets the packets of GOPs before the one before the oldest GOP with frames to come.
    fn forget_old(&mut self) {
        let keep_from = self.oldest_open_gop().saturating_sub(1);
        while self.kept.front().is_some_and(|k| k.gop < keep_from) {
            let old = self.kept.pop_front().expect("checked");
            self.kept_bytes -= old.packet.size();
        }
        self.handed.forget_before(keep_from);
    }

    /// Sends a packet to the frame-threaded decoder; holds what comes out; on damage, decodes again on one
    /// thread.
    fn threaded_step(
        &mut self,
        packet: &Packet,
        seq: u64,
        gop: u64,
        on_frame: &mut OnFrame<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let before = self.threads().signals();
        if let Some(pts) = packet.pts() {
            self.pending.insert(pts, (seq, gop));
        }
        let mut out = Vec::new();
        let rejected = self.threads().decode(Some(packet), &mut |frame, info| {
            out.push((frame.new_ref().map_err(VideoError::from)?, info));
            Ok(())
        })?;
        self.hold(out);
        if self.unkept_gop == Some(self.gop) {
            self.release_all(on_frame)?;
            return Ok(rejected);
        }
        if self.threads().signals() != before || self.held.len() > MAX_HELD {
            return self.again_on_one_thread(on_frame);
        }
        self.release(on_frame, seq)?;
        Ok(rejected)
    }

    /// Sends the packet held back to the one-thread decoder (damaged when the demuxer lost data before
    /// `packet`), and holds `packet` back: its frames go on as they come, but for those handed on already.
    fn single_step(
        &mut self,
        packet: &Packet,
        on_frame: &mut OnFrame<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let next = (packet.new_ref().map_err(VideoError::from)?, self.skip);
        let rejected = self.send_lagging(packet.follows_lost_data(), on_frame)?;
        self.lagging = Some(next);
        Ok(rejected)
    }

    /// Sends the packet held back to the one-thread decoder, if any.
    fn send_lagging(
        &mut self,
        lost_after: bool,
        on_frame: &mut OnFrame<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let Some((packet, skip)) = self.lagging.take() else {
            return Ok(None);
        };
        let (handed, gop) = (&mut self.handed, self.gop);
        self.single.codec.skip_unreferenced(skip);
        let rejected = self
            .single
            .decode_marked(Some(&packet), lost_after, &mut |frame, info| {
                Self::hand_new(handed, gop, frame, info, on_frame)
            });
        self.single.codec.skip_unreferenced(self.skip);
        rejected
    }

    /// Hands `frame` on unless a frame of its packet was handed on already.
    fn hand_new(
        handed: &mut Handed,
        gop: u64,
        frame: &AvFrame,
        info: FrameInfo,
        on_frame: &mut OnFrame<'_>,
    ) -> Result<(), Stop> {
        if let Some(pts) = info.packet_pts {
            if !handed.first_time(gop, pts) {
                return Ok(());
            }
        }
        on_frame(frame, info)
    }

    /// Takes the frames the frame-threaded decoder gave, with their packets' places.
    fn hold(&mut self, out: Vec<(AvFrame, FrameInfo)>) {
        for (frame, info) in out {
            let (seq, gop) = match info.packet_pts {
                Some(pts) => {
                    // Packets shown before this frame whose pictures did not come out never will.
                    while self
                        .pending
                        .first_key_value()
                        .is_some_and(|(&k, _)| k < pts)
                    {
                        self.pending.pop_first();
                    }
                    self.pending.remove(&pts).unwrap_or((self.seq, self.gop))
                }
                None => (self.seq, self.gop),
            };
            self.held.push_back(Held {
                frame,
                info,
                seq,
                gop,
            });
        }
    }

    /// Hands on the held frames whose earlier packets (decode order) have all given their pictures.
    /// The frame of the packet just sent (`sent`) stays held too: data the demuxer loses after it damages it.
    fn release(&mut self, on_frame: &mut OnFrame<'_>, sent: u64) -> Result<(), Stop> {
        let waiting = self.pending.values().map(|&(seq, _)| seq).min();
        while let Some(front) = self.held.front() {
            if waiting.is_some_and(|w| w < front.seq) || front.seq >= sent {
                break;
            }
            let held = self.held.pop_front().expect("checked");
            self.hand(held, on_frame)?;
        }
        self.forget_old();
        Ok(())
    }

    /// Hands on every held frame.
    fn release_all(&mut self, on_frame: &mut OnFrame<'_>) -> Result<(), Stop> {
        while let Some(held) = self.held.pop_front() {
            self.hand(held, on_frame)?;
        }
        Ok(())
    }

    fn hand(&mut self, held: Held, on_frame: &mut OnFrame<'_>) -> Result<(), Stop> {
        Self::hand_new(&mut self.handed, held.gop, &held.frame, held.info, on_frame)
    }

    /// Damage seen with frame threads: drops what they hold and decodes again on one thread from the
    /// keyframe of the GOP before the oldest frame not handed on.
    fn again_on_one_thread(&mut self, on_frame: &mut OnFrame<'_>) -> Result<Option<AvError>, Stop> {
        let oldest = self.oldest_open_gop();
        self.threads().flush();
        self.held.clear();
        self.pending.clear();
        let first = self.first_gop.unwrap_or(0);
        let kept_from = self.kept.front().map_or(self.gop, |k| k.gop);
        let start = oldest.saturating_sub(1).max(first).max(kept_from);
        tracing::debug!(gop = start, "damage seen: decoding again on one thread");
        self.single.flush();
        self.lagging = None;
        let mut rejected = None;
        // The one-thread decoder's signals at the current GOP's keyframe: the damage of that GOP is what comes
        // after.
        let mut at_current = None;
        let (handed, single) = (&mut self.handed, &mut self.single);
        let replay: Vec<&Kept> = self
            .kept
            .iter()
            .filter(|k| k.gop >= start && !(k.leading && k.gop == start && start != first))
            .collect();
        // The last packet (the one just sent) is held back, as the one-thread decoder's packets are.
        let Some((last, replay)) = replay.split_last() else {
            return Ok(None);
        };
        for (i, kept) in replay.iter().enumerate() {
            if kept.gop == self.gop && at_current.is_none() {
                at_current = Some(single.signals());
            }
            let lost_after = replay
                .get(i + 1)
                .map_or(*last, |k| *k)
                .packet
                .follows_lost_data();
            single.codec.skip_unreferenced(kept.skip);
            let gop = kept.gop;
            let err =
                single.decode_marked(Some(&kept.packet), lost_after, &mut |frame, info| {
                    Self::hand_new(handed, gop, frame, info, on_frame)
                })?;
            if let Some(e) = err {
                rejected.get_or_insert(e);
            }
        }
        if last.gop == self.gop && at_current.is_none() {
            at_current = Some(single.signals());
        }
        single.codec.skip_unreferenced(self.skip);
        self.lagging = Some((last.packet.new_ref().map_err(VideoError::from)?, last.skip));
        self.mode = Mode::Single {
            signals: at_current.unwrap_or_else(|| single.signals()),
        };
        Ok(rejected)
    }

    /// The GOP just decoded on one thread was whole: frame threads take over, decoding it again (skipping
    /// its leading pictures) so that the next keyframe's leading pictures have their references.
    fn back_to_threads(&mut self, on_frame: &mut OnFrame<'_>) -> Result<(), Stop> {
        // The packet held back is the clean GOP's last: decoded again with the rest of it.
        self.lagging = None;
        self.threads().flush();
        self.held.clear();
        self.pending.clear();
        self.mode = Mode::Threaded;
        let gop = self.gop;
        let first = self.first_gop.unwrap_or(0);
        let replay: Vec<(Packet, bool)> = self
            .kept
            .iter()
            .filter(|k| k.gop == gop && !(k.leading && gop != first))
            .map(|k| Ok((k.packet.new_ref()?, k.skip)))
            .collect::<Result<_, AvError>>()
            .map_err(VideoError::from)?;
        tracing::debug!(gop, "a whole GOP on one thread: back to frame threads");
        for (i, (packet, skip)) in replay.iter().enumerate() {
            self.threads().codec.skip_unreferenced(*skip);
            self.threaded_step(packet, i as u64, gop, on_frame)?;
            if self.mode != Mode::Threaded {
                break; // damage again (the decode again on one thread covers the rest)
            }
        }
        let skip = self.skip;
        self.threads().codec.skip_unreferenced(skip);
        Ok(())
    }

    /// The stream ended: everything still in the decoder comes out.
    fn drain(&mut self, on_frame: &mut OnFrame<'_>) -> Result<Option<AvError>, Stop> {
        let mut rejected = None;
        if self.mode == Mode::Threaded {
            let before = self.threads().signals();
            let mut out = Vec::new();
            let drained = self.threads().decode(None, &mut |frame, info| {
                out.push((frame.new_ref().map_err(VideoError::from)?, info));
                Ok(())
            })?;
            self.hold(out);
            self.pending.clear();
            if self.threads().signals() == before || self.unkept_gop == Some(self.gop) {
                self.release_all(on_frame)?;
                return Ok(drained);
            }
            rejected = self.again_on_one_thread(on_frame)?;
        }
        let last = self.send_lagging(false, on_frame)?;
        let (handed, gop) = (&mut self.handed, self.gop);
        let drained = self.single.decode(None, &mut |frame, info| {
            Self::hand_new(handed, gop, frame, info, on_frame)
        })?;
        Ok(rejected.or(last).or(drained))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    use std::path::Path;

    use crate::decode::backend::Decoder;
    use crate::decode::cpu::CpuDecoder;
    use crate::decode::frame::FrameRef;
    use crate::demux::Demuxer;
    use crate::ffi::packet::Packet;
    use crate::settings::config::Threading;
    use crate::Config;

    /// An H.264 fixture with 400 bytes overwritten in its middle.
    fn damaged() -> bytes::Bytes {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/damage_h264.mp4");
        let mut data = std::fs::read(path).unwrap();
        let at = data.len() / 2;
        data[at..at + 400].fill(0x55);
        data.into()
    }

    /// Each frame's packet time, damage mark and a hash of its luma, decoded with two frame threads, keeping
    /// at most `kept` packet bytes to decode again (`None`: the default); and whether a GOP was too large.
    fn decode(data: &bytes::Bytes, kept: Option<usize>) -> (Vec<(Option<i64>, bool, u64)>, bool) {
        let config = Config::new(8, 1);
        let mut demuxer = Demuxer::open(data.clone(), &config).unwrap();
        let mut decoder = CpuDecoder::open(&demuxer, 2, Threading::FrameAndSlice).unwrap();
        if let Some(kept) = kept {
            decoder.steady().unwrap().keep_at_most(kept);
        }
        let mut frames = Vec::new();
        let mut sink = |info: crate::decode::backend::FrameInfo, frame: FrameRef<'_>| {
            let FrameRef::Host(frame) = frame else {
                panic!("a CPU frame")
            };
            let [luma, _, _] = frame.yuv_planes().expect("8-bit 4:2:0");
            let mut hash = DefaultHasher::new();
            for row in luma.data.chunks(luma.stride).take(luma.height) {
                row[..luma.width].hash(&mut hash);
            }
            frames.push((info.packet_pts, info.damaged, hash.finish()));
            Ok(())
        };
        let mut packet = Packet::new().unwrap();
        while demuxer.next_packet(&mut packet).unwrap() {
            if packet.stream_index() == demuxer.stream().index {
                decoder.decode(Some(&packet), &mut sink).unwrap();
            }
        }
        decoder.decode(None, &mut sink).unwrap();
        let fell_back = decoder.steady().unwrap().fell_back();
        (frames, fell_back)
    }

    /// A GOP too large to keep (keyframes hours apart: here, a limit of one byte) is decoded as frame threads
    /// give it: every frame still comes, in order, damage is still marked, and every frame left unmarked is the
    /// picture the default decode gives.
    #[test]
    fn a_gop_too_large_to_keep_is_decoded_as_frame_threads_give_it() {
        let data = damaged();
        let (steady, fell_back) = decode(&data, None);
        assert!(!fell_back, "the fixture's GOPs are kept by default");
        assert!(
            steady.iter().any(|f| f.1),
            "the overwritten bytes damage frames"
        );
        let (threaded, fell_back) = decode(&data, Some(1));
        assert!(fell_back, "no GOP can be kept within one byte");
        let times =
            |frames: &[(Option<i64>, bool, u64)]| frames.iter().map(|f| f.0).collect::<Vec<_>>();
        assert_eq!(
            times(&threaded),
            times(&steady),
            "the same frames, in order"
        );
        assert!(threaded.iter().any(|f| f.1), "damage is still marked");
        for (a, b) in steady.iter().zip(&threaded) {
            if !a.1 && !b.1 {
                assert_eq!(
                    a.2, b.2,
                    "frame at {:?}: unmarked in both, the same picture",
                    a.0
                );
            }
        }
    }
}
