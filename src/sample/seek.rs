//! Decoding only the frames a whole video's samples need: for each needed frame (display order), decoding
//! starts at its keyframe ([`FrameIndex::start_for`]) unless the decoder is already running toward it, and
//! goes forward until the frame comes out; GOPs no needed frame lies in are never read past the demuxer.
//!
//! Frame-exact by construction and checked as it goes: every frame the decoder gives is identified by its
//! presentation time, frames shown before the start keyframe (leading pictures of an open GOP) are never
//! taken, and when a needed frame does not come out (a decoder that waits for a recovery point, an open GOP
//! whose leading picture refers to the GOP before, a picture flagged damaged) decoding starts again one
//! keyframe earlier, up to [`EARLIER_STARTS`] times, before the frame is given up: a picture that still comes
//! out flagged is delivered marked damaged, one that never comes out is a hole ([`Needed::Missing`]).

use std::sync::atomic::{AtomicBool, Ordering};

use super::index::FrameIndex;
use crate::decode::frame::FrameRef;
use crate::decode::{damage, Decoder, Stop};
use crate::demux::Demuxer;
use crate::error::{AvError, VideoError};
use crate::ffi::packet::Packet;

/// How many keyframes further back a needed frame that did not come out is tried from.
pub(crate) const EARLIER_STARTS: usize = 2;

/// How many keyframes further back a needed frame that came out damaged is tried from while the GOP decoding
/// started in is damaged too: the decode from a whole GOP gives the pictures the plain run gives, damaged ones
/// included (damage spanning more GOPs than this before a needed frame gives its picture from that far back,
/// the same every run).
pub(crate) const DAMAGED_EARLIER_STARTS: usize = 8;

/// What went wrong, short of stopping, while decoding the needed frames.
#[derive(Debug, Default)]
pub(crate) struct SeekOutcome {
    /// Needed frames that never came out (their display indices).
    pub(crate) missing: Vec<u64>,
    /// Packets the decoder rejected, and the first rejection.
    pub(crate) rejected: u64,
    pub(crate) first_rejection: Option<AvError>,
    /// The demuxer failed (a truncated file).
    pub(crate) demux_error: Option<AvError>,
    /// Packets sent to the decoder (for the benchmarks and tests: fewer than the video's when GOPs are
    /// skipped).
    pub(crate) packets_decoded: u64,
}

impl SeekOutcome {
    /// The error the decode ended with, after `frames` frames of the video were given. By default none but a
    /// demuxer's failure before any frame (damage is reported on the frames: holes, damaged frames,
    /// [`ended_early`](Self::ended_early)); `strict`, the demuxer's failure, then rejected packets.
    pub(crate) fn error(self, frames: u64, strict: bool) -> Option<VideoError> {
        if let Some(source) = self.demux_error.filter(|_| strict || frames == 0) {
            return Some(VideoError::Demux { frames, source });
        }
        let first = self.first_rejection.filter(|_| strict)?;
        Some(damage::rejected(frames, self.rejected, &first))
    }

    /// Why reading stopped before the end of the video's data, if it did (the demuxer's failure).
    pub(crate) fn ended_early(&self) -> Option<String> {
        self.demux_error.as_ref().map(ToString::to_string)
    }

    /// A read's error: only where a needed frame is missing (a demuxer error or a rejected packet that cost no
    /// frame asked for is not a read's failure, unless `strict`): the demuxer's after the `given` frames the
    /// read gave, else the first hole, named with its time from `index`.
    pub(crate) fn read_error(
        self,
        given: u64,
        index: &FrameIndex,
        strict: bool,
    ) -> Option<VideoError> {
        let Some(&first) = self.missing.first() else {
            return self
                .first_rejection
                .filter(|_| strict)
                .map(|first| damage::rejected(given, self.rejected, &first));
        };
        Some(match self.demux_error {
            Some(source) => VideoError::Demux {
                frames: given,
                source,
            },
            None => VideoError::Hole {
                index: first,
                pts_us: (index.seconds_of(first) * 1e6).round() as i64,
            },
        })
    }
}

/// Where a decoder stands between two calls of [`decode_needed`]: a reader keeps it, so that a read that goes on
/// forward within the GOP the decoder is in continues without a seek; the operator starts each video afresh.
#[derive(Debug, Default)]
pub(crate) struct Position {
    /// The packet index the next read gives, while the decoder runs on from a keyframe (`None`: seek first).
    reading: Option<usize>,
    /// Whether the decoder gave a whole frame shown from its start keyframe on since it last started there
    /// (it has recovered: pictures may be skipped).
    gave_frame: bool,
    /// The highest display index the decoder gave since it last started: a frame at or before it is behind.
    last_out: Option<u64>,
    /// Frames after `last_out` whose pictures may have been skipped (not needed then, nothing refers to
    /// them): a later read that needs one seeks.
    skipped: Vec<u64>,
    /// The packet index of the keyframe the decoder started at, and whether a frame of its GOP came out
    /// damaged (a damaged picture then depends on where decoding started).
    start: Option<usize>,
    start_damaged: bool,
    /// Whether a picture was skipped since the decoder started (`Decoder::skip_unreferenced`): on damaged
    /// data, skipping one may change the pictures after it.
    skipped_any: bool,
}

/// Decodes the frames at the display indices `needed` (ascending, unique) and hands each to `deliver`, in
/// order, with its display index, from where `at` says the decoder stands (and leaves it there); `seen` sees
/// every frame the decoder gives first, needed or not (what a frame carries for those after it: a display
/// matrix). Any backend: frames are told apart by the timestamp of the packet that carried them, which the
/// CPU and NVDEC backends both give back.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_needed(
    demuxer: &mut Demuxer,
    decoder: &mut dyn Decoder,
    index: &FrameIndex,
    needed: &[u64],
    stop: &AtomicBool,
    at: &mut Position,
    seen: &mut dyn FnMut(&FrameRef<'_>, bool),
    deliver: &mut Deliver<'_>,
) -> Result<SeekOutcome, Stop> {
    // A remote video fetches the packets these frames take ahead, in parallel (`source::remote`).
    if let Some((source, len)) = demuxer.whole_source() {
        source.will_need(&index.byte_ranges(needed, len));
    }
    if index.is_synthetic() {
        decoder.damage_by_order();
    }
    let mut run = Run {
        demuxer,
        decoder,
        seen,
        index,
        needed,
        next: 0,
        earlier: 0,
        no_skip: false,
        at: std::mem::take(at),
        outcome: SeekOutcome::default(),
    };
    let result = run.all(stop, deliver);
    // A failed or stopped decode leaves the decoder anywhere: the next one seeks.
    *at = match result {
        Ok(()) => run.at,
        Err(_) => Position::default(),
    };
    result.map(|()| run.outcome)
}

/// What became of a needed frame.
pub(crate) enum Needed<'f> {
    /// It came out: its picture, and whether it is damaged (`decode::damage`).
    Frame { frame: FrameRef<'f>, damaged: bool },
    /// It did not come out, from any start tried: a hole.
    Missing,
}

/// Receives each needed frame in order, with its display index.
pub(crate) type Deliver<'a> = dyn FnMut(u64, Needed<'_>) -> Result<(), Stop> + 'a;

struct Run<'a> {
    demuxer: &'a mut Demuxer,
    decoder: &'a mut dyn Decoder,
    seen: &'a mut dyn FnMut(&FrameRef<'_>, bool),
    index: &'a FrameIndex,
    needed: &'a [u64],
    /// The next needed frame (an index into `needed`).
    next: usize,
    /// How many keyframes before its own the next needed frame is tried from.
    earlier: usize,
    /// Damage was seen: no picture is skipped from now on (the plain run decodes them all, and on damaged
    /// data the pictures after one skipped may differ).
    no_skip: bool,
    /// Where the decoder stands.
    at: Position,
    outcome: SeekOutcome,
}

/// What the frames of one decode call said.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Going,
    /// The next needed frame did not come out: try it from an earlier keyframe.
    Retry,
}

impl Run<'_> {
    fn all(&mut self, stop: &AtomicBool, deliver: &mut Deliver<'_>) -> Result<(), Stop> {
        let mut packet = Packet::new().map_err(|e| Stop::Video(e.into()))?;
        while let Some(&n) = self.needed.get(self.next) {
            if stop.load(Ordering::Relaxed) {
                return Err(Stop::Shutdown);
            }
            let start = self.index.start_for(n, self.earlier);
            let first_pts = self.index.packet(start).pts;
            // The decoder runs on toward `n` when it started at or before the keyframe `n` needs and has not
            // given `n`'s place yet (a reader's earlier read may have gone past it).
            let ahead = self.at.last_out.is_none_or(|out| out < n) && !self.at.skipped.contains(&n);
            if !self
                .at
                .reading
                .is_some_and(|r| start <= r && self.earlier == 0 && ahead)
            {
                self.decoder.flush()?;
                self.at = Position::default();
                match self.position(start, &mut packet) {
                    Ok(()) => {
                        self.at.reading = Some(start);
                        self.at.start = Some(start);
                    }
                    Err(e) => {
                        // The container cannot go back there: what is left is missing.
                        self.outcome.demux_error.get_or_insert(e);
                        return self.miss_the_rest(deliver);
                    }
                }
                // `packet` holds the start keyframe: decode it first.
                let verdict = self.decode(Some(&packet), first_pts, deliver)?;
                *self.at.reading.as_mut().expect("set above") += 1;
                if verdict == Verdict::Retry {
                    self.at.reading = None;
                    continue;
                }
            }
            // Decode on until the needed frame came out, or the next one starts from a keyframe ahead.
            loop {
                if stop.load(Ordering::Relaxed) {
                    return Err(Stop::Shutdown);
                }
                let Some(&n) = self.needed.get(self.next) else {
                    return Ok(());
                };
                let r = self.at.reading.expect("decoding");
                if self.earlier == 0 && self.index.start_for(n, 0) > r {
                    self.at.reading = None; // skip the GOPs between: seek
                    break;
                }
                let verdict = match self.next_packet(&mut packet) {
                    Ok(true) => {
                        self.at.reading = Some(r + 1);
                        self.decode(Some(&packet), first_pts, deliver)?
                    }
                    end => {
                        if let Err(e) = end {
                            self.outcome.demux_error.get_or_insert(e);
                        }
                        let verdict = self.decode(None, first_pts, deliver)?;
                        // Drained: the decoder starts again from a seek.
                        self.at.reading = None;
                        if verdict == Verdict::Going {
                            // The end: what was not given is missing.
                            self.miss_the_rest(deliver)?;
                        }
                        verdict
                    }
                };
                if verdict == Verdict::Retry {
                    self.at.reading = None;
                    break;
                }
            }
        }
        Ok(())
    }

    /// Every needed frame not given yet is missing.
    fn miss_the_rest(&mut self, deliver: &mut Deliver<'_>) -> Result<(), Stop> {
        for &n in &self.needed[self.next..] {
            self.outcome.missing.push(n);
            deliver(n, Needed::Missing)?;
        }
        self.next = self.needed.len();
        Ok(())
    }

    /// Sends `packet` (`None`: drain) and sorts the frames it gives: the next needed one is delivered, others
    /// are dropped unconverted; a frame past the next needed one means that one was missed.
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        first_pts: Option<i64>,
        deliver: &mut Deliver<'_>,
    ) -> Result<Verdict, Stop> {
        // A picture that no needed frame is and none refers to is not decoded at all (H.264's non-reference
        // pictures: B-frames between the start keyframe and a clip, or between strided frames), and is
        // remembered as skipped. Only once the
        // decoder gave a whole frame shown from its start keyframe on: until then its recovery from an
        // open-GOP keyframe is pending, and libavcodec's H.264 decoder, when it drains, drops a picture decoded
        // before that recovery was shown (which skipping pictures would bring about). Never while it drains.
        // Only pictures before the last needed frame: one past it stays for what a reader's next read may need
        // of it (the decode stops at the last needed frame anyway).
        let last_needed = self.needed.last().copied().unwrap_or(0);
        let unneeded = packet
            .and_then(|packet| packet.pts())
            .and_then(|pts| self.index.display_of(pts))
            .filter(|&d| d < last_needed && self.needed.binary_search(&d).is_err());
        let skip = self.at.gave_frame && unneeded.is_some() && !self.no_skip;
        if self.decoder.skip_unreferenced(skip) && skip {
            self.at.skipped.extend(unneeded);
            self.at.skipped_any = true;
        }
        if packet.is_some() {
            self.outcome.packets_decoded += 1;
        }
        let mut verdict = Verdict::Going;
        let index = self.index;
        let needed = self.needed;
        let (next, earlier) = (&mut self.next, &mut self.earlier);
        let gave_frame = &mut self.at.gave_frame;
        let last_out = &mut self.at.last_out;
        let skipped = &mut self.at.skipped;
        let (start, start_damaged) = (self.at.start, &mut self.at.start_damaged);
        let (skipped_any, no_skip) = (self.at.skipped_any, &mut self.no_skip);
        let missing = &mut self.outcome.missing;
        let seen = &mut *self.seen;
        let rejected = self.decoder.decode(packet, &mut |info, frame| {
            seen(&frame, info.damaged);
            if verdict == Verdict::Retry {
                return Ok(());
            }
            let Some(d) = info.packet_pts.and_then(|pts| index.display_of(pts)) else {
                return Ok(()); // not a frame the index knows (a discarded one)
            };
            *last_out = Some(last_out.map_or(d, |out| out.max(d)));
            let out = last_out.expect("set above");
            skipped.retain(|&s| s > out);
            if first_pts.is_some_and(|k| index.pts_of(d) < k) {
                return Ok(()); // shown before the start keyframe: a leading picture
            }
            // The start keyframe or a frame after it came out whole: the decoder has recovered.
            *gave_frame |= !info.corrupt;
            *start_damaged |= info.damaged && start == Some(index.start_for(d, 0));
            while let Some(&n) = needed.get(*next) {
                if d < n {
                    return Ok(());
                }
                // `n` came out flagged: from further back, if there is further back (a decoder recovering
                // from an open GOP's keyframe flags what it gives before the recovery).
                // `n` came out damaged, and so did the GOP decoding started in: from further back, where a
                // whole GOP gives the pictures the plain run gives; and without skipping pictures.
                let limit = if info.corrupt {
                    EARLIER_STARTS
                } else {
                    DAMAGED_EARLIER_STARTS
                };
                // Further back than where this decode started (a decode that runs on from an earlier read
                // may have started before `n`'s own keyframe).
                let started = start.unwrap_or_else(|| index.start_for(n, *earlier));
                let further_back = *earlier < limit && index.start_for(n, *earlier + 1) < started;
                let damaged_start = info.damaged && *start_damaged;
                if d == n && info.damaged && skipped_any && !*no_skip {
                    // Decoded with pictures skipped: again without (from further back if the start GOP was
                    // damaged too).
                    *no_skip = true;
                    if damaged_start && further_back {
                        *earlier += 1;
                    }
                    verdict = Verdict::Retry;
                    return Ok(());
                }
                if d == n && damaged_start && further_back {
                    *no_skip = true;
                    *earlier += 1;
                    verdict = Verdict::Retry;
                    return Ok(());
                }
                if d == n && (!info.corrupt || !further_back) {
                    // Whole, or damaged however far back decoding starts: delivered, marked.
                    let damaged = info.damaged;
                    deliver(d, Needed::Frame { frame, damaged })?;
                    *next += 1;
                    *earlier = 0;
                    return Ok(());
                }
                // `n` did not come out: from further back, if there is further back; else it is missing (a
                // hole) and the frame is weighed against the next needed one. In an index by time, a whole
                // frame past `n` means no frame is near `n`'s time: a hole, whatever the start.
                let empty_time = index.is_by_time() && d > n && !info.corrupt;
                if further_back && !empty_time {
                    *earlier += 1;
                    verdict = Verdict::Retry;
                    return Ok(());
                }
                missing.push(n);
                deliver(n, Needed::Missing)?;
                *next += 1;
                *earlier = 0;
            }
            Ok(())
        })?;
        if let Some(e) = rejected {
            self.outcome.rejected += 1;
            self.outcome.first_rejection.get_or_insert(e);
        }
        Ok(verdict)
    }

    /// Moves the demuxer to packet `start` and reads it into `packet`: a seek by timestamp, else by byte
    /// position, else from the beginning; then packets before it are read past (demuxed, not decoded).
    fn position(&mut self, start: usize, packet: &mut Packet) -> Result<(), AvError> {
        let target = *self.index.packet(start);
        let stream = self.demuxer.stream().index;
        let first = *self.index.packet(0);
        // Times framefeed gave a stream without any are not the demuxer's: only byte positions seek there.
        let times = !self.index.is_synthetic();
        // By the keyframe's presentation time first: a demuxer that indexes shifted decode times (the MOV
        // demuxer with B-frames' edit list) lands one GOP early when asked for the decode time, and a remote
        // video would fetch that GOP for nothing. A landing past the keyframe is caught by `read_to`.
        let attempts = [
            target
                .pts
                .filter(|&pts| times && target.dts.is_some_and(|dts| dts < pts))
                .map(|ts| (ts, false)),
            target
                .dts
                .or(target.pts)
                .filter(|_| times)
                .map(|ts| (ts, false)),
            target.pos.map(|pos| (pos, true)),
            first
                .dts
                .or(first.pts)
                .filter(|_| times)
                .map(|ts| (ts, false)),
            Some((0, true)),
        ];
        let mut last_error = None;
        for (ts, bytes) in attempts.into_iter().flatten() {
            if let Err(e) = self.demuxer.seek(stream, ts, bytes) {
                last_error = Some(e);
                continue;
            }
            match self.read_to(start, packet) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(|| AvError {
            operation: "av_seek_frame",
            code: -1,
            message: format!("could not find packet {start} again after seeking"),
        }))
    }

    /// Reads the next packet; in a stream whose times are framefeed's, gives it its time from the index.
    fn next_packet(&mut self, packet: &mut Packet) -> Result<bool, AvError> {
        let read = self.demuxer.next_packet(packet)?;
        if read && self.index.is_synthetic() {
            packet.set_pts(self.index.time_of_read(packet.pos()));
        }
        Ok(read)
    }

    /// Reads until packet `start` (identified by its byte position, or in an index by time by its time);
    /// `false` when the seek landed past it or where packets cannot be told apart.
    fn read_to(&mut self, start: usize, packet: &mut Packet) -> Result<bool, AvError> {
        loop {
            if !self.next_packet(packet)? {
                return Ok(false);
            }
            let Some(i) = self.index.packet_read(packet.pos(), packet.pts()) else {
                return Ok(false);
            };
            if i == start {
                return Ok(true);
            }
            if i > start {
                return Ok(false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::cpu::CpuDecoder;
    use crate::sample::index::scan;
    use crate::settings::config::{Config, Threading};

    /// Decodes the built-in sample's frames `needed` (60 frames, keyframes at 0 and 30) with the decoder `open`
    /// makes; returns what came out and how many packets were decoded.
    fn run_with(
        needed: &[u64],
        open: &dyn Fn(&Demuxer) -> Box<dyn Decoder>,
    ) -> (Vec<u64>, SeekOutcome) {
        let config = Config::new(4, 1);
        let data = bytes::Bytes::from_static(crate::SAMPLE_MP4);
        let mut demuxer = Demuxer::open(data.clone(), &config).unwrap();
        let packets = scan(&mut demuxer, 1000).unwrap().unwrap();
        let index = FrameIndex::new(packets, 1.0 / 15360.0).unwrap();
        let mut demuxer = Demuxer::open(data, &config).unwrap();
        let mut decoder = open(&demuxer);
        let mut got = Vec::new();
        let outcome = decode_needed(
            &mut demuxer,
            &mut *decoder,
            &index,
            needed,
            &AtomicBool::new(false),
            &mut Position::default(),
            &mut |_, _| {},
            &mut |d, needed| {
                let Needed::Frame { frame, damaged } = needed else {
                    return Ok(());
                };
                assert!(!damaged, "frame {d} of an undamaged video");
                if let FrameRef::Host(frame) = frame {
                    assert_eq!(frame.pts().and_then(|p| index.display_of(p)), Some(d));
                }
                got.push(d);
                Ok(())
            },
        )
        .unwrap();
        (got, outcome)
    }

    fn run(needed: &[u64]) -> (Vec<u64>, SeekOutcome) {
        run_with(needed, &|demuxer| {
            Box::new(CpuDecoder::open(demuxer, 1, Threading::Slice).unwrap())
        })
    }

    /// What a decode of some needed frames gave: the frames, and the outcome.
    type Decoded = (Vec<u64>, SeekOutcome);

    /// The same checks over the CPU decoder and, with a GPU, both NVDEC drivers.
    fn only_needed_gops(run: &dyn Fn(&[u64]) -> Decoded) {
        let (got, outcome) = run(&[40, 45]);
        assert_eq!(got, [40, 45]);
        assert!(outcome.missing.is_empty());
        assert!(
            outcome.packets_decoded <= 30,
            "the first GOP is skipped: {} packets decoded",
            outcome.packets_decoded
        );
        let (got, outcome) = run(&[2, 58]);
        assert_eq!(got, [2, 58]);
        assert!(
            outcome.packets_decoded < 60,
            "the rest of the first GOP is skipped: {} packets decoded",
            outcome.packets_decoded
        );
        // Back and forth: a seek back to the first GOP after the second (the decoder restarts cleanly).
        let (got, outcome) = run(&[1, 31, 59]);
        assert_eq!(got, [1, 31, 59]);
        assert!(outcome.missing.is_empty());
        let (got, all) = run(&(0..60).collect::<Vec<_>>());
        assert_eq!(got, (0..60).collect::<Vec<_>>());
        assert_eq!(
            all.packets_decoded, 60,
            "every frame needed: each packet decoded once"
        );
    }

    #[test]
    fn only_the_gops_of_needed_frames_are_decoded() {
        only_needed_gops(&run);
    }

    /// On NVDEC (a `cuda` build and a GPU; skips with the reason printed otherwise, fails where
    /// `FRAMEFEED_REQUIRE` names `gpu` or `REQUIRE_GPU=1`): the same frames come out and the same GOPs are
    /// skipped, with either driver.
    #[test]
    fn on_nvdec_only_the_gops_of_needed_frames_are_decoded() {
        use crate::settings::config::NvdecDriver;
        let gpu = match crate::device::runtime(0, 4) {
            Ok(gpu) => gpu,
            Err(why) => {
                let required = std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1")
                    || std::env::var("FRAMEFEED_REQUIRE")
                        .is_ok_and(|v| v.split(',').any(|n| matches!(n.trim(), "gpu" | "all")));
                assert!(!required, "a GPU is required but none is usable: {why}");
                eprintln!("SKIPPED NVDEC seeking: no usable GPU ({why})");
                return;
            }
        };
        for driver in [NvdecDriver::Direct, NvdecDriver::Hwaccel] {
            eprintln!("NVDEC seeking with the {driver:?} driver");
            only_needed_gops(&|needed| {
                run_with(needed, &|demuxer| {
                    crate::decode::open_nvdec(demuxer, &gpu, driver).unwrap()
                })
            });
        }
    }
}
