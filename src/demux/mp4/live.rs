//! Live MP4 (ISO BMFF) streams, read by the demuxer one checked top-level box at a time (between the live feed
//! and demux).
//!
//! In a live stream the demuxer has no file size to hold a box's claims to, and it acts on a box's claims as
//! soon as it reads them. So every top-level box the MOV demuxer parses (`moov`, `moof`, `sidx`, ...) is held
//! until all of its bytes have arrived, at most 16 bytes per `max_container_samples`, and checked with
//! [`Claims`] (the samples of every box so far together held to
//! `max_container_samples`) before the demuxer sees a byte of it; the payloads it only skips or reads as media
//! (`mdat`, `free`, unknown boxes) pass straight through. A box with claims that cannot be true fails the video
//! with [`VideoError::ImplausibleContainer`].
//!
//! The demuxer goes back within what it reads (a box it read past the end of, a sample a little behind), so the
//! gate keeps the last held box and the last [`STREAM_KEEP`] bytes streamed, and serves seeks into them. A
//! seek before what is kept fails the video rather than letting the demuxer read on from a place the check did
//! not see as a box boundary.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::demux::mp4::boxes::PARSED;
use crate::demux::mp4::claims::{Bound, Claims, LavfTags};
use crate::error::VideoError;
use crate::ffi::io::{StreamRead, StreamSource};
use crate::settings::config::Config;
use crate::source::live::{LiveReader, LiveShared};

/// Bytes of streamed payload kept behind the demuxer for its backward seeks.
const STREAM_KEEP: u64 = 1 << 20;
/// Bytes kept before a held box (lavf refills its buffer from half a buffer behind the position it seeks to).
const MARGIN: u64 = 64 << 10;
/// The smallest limit on a held box.
const MIN_HELD_BOX: u64 = 1 << 20;
/// Bytes a held box grows by per read of the feed.
const READ_STEP: usize = 256 << 10;

static LAVF_TAGS: LavfTags = LavfTags;

/// What the bytes after those already taken from the live feed are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// A top-level box header.
    Boundary,
    /// The rest of a streamed box's payload, up to this stream offset (`None`: the end of the stream).
    Streaming(Option<u64>),
    /// Nothing more is read (the stream ended, or a top-level header the demuxer stops at).
    Done,
}

/// The demuxer's reader of a live MP4 stream.
pub(crate) struct Mp4Gate {
    source: LiveReader,
    live: Arc<LiveShared>,
    claims: Claims<'static>,
    max_box: u64,
    /// Bytes `[kept_start, kept_start + kept.len())` of the stream, taken from the feed.
    kept: VecDeque<u8>,
    kept_start: u64,
    /// The next byte the demuxer reads (within or at the end of `kept`).
    pos: u64,
    next: Next,
    /// Where the last held box starts and ends.
    held: (u64, u64),
    failed: bool,
}

impl Mp4Gate {
    pub(crate) fn new(source: LiveReader, live: Arc<LiveShared>, config: &Config) -> Self {
        let max_samples = config.max_container_samples;
        Self {
            source,
            live,
            claims: Claims::new(Bound::live(max_samples), &LAVF_TAGS),
            max_box: max_held_box(max_samples),
            kept: VecDeque::new(),
            kept_start: 0,
            pos: 0,
            next: Next::Boundary,
            held: (0, 0),
            failed: false,
        }
    }

    fn kept_end(&self) -> u64 {
        self.kept_start + self.kept.len() as u64
    }

    /// Fails the video with `reason`; nothing more is served.
    fn refuse(&mut self, reason: String) -> StreamRead {
        self.failed = true;
        self.live.fail(VideoError::ImplausibleContainer { reason });
        StreamRead::Failed
    }

    /// Takes the next bytes from the feed into `buf` until it is full or the stream ends; `Err` when the
    /// stream failed (aborted, stalled, shut down).
    fn take(&mut self, buf: &mut [u8]) -> Result<usize, ()> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.source.read(&mut buf[filled..]) {
                StreamRead::Data(n) => filled += n,
                StreamRead::End => break,
                StreamRead::Failed => return Err(()),
            }
        }
        Ok(filled)
    }

    /// Appends bytes taken from the feed, then drops what the demuxer will not come back to: all but the
    /// last held box (and a margin before it) while streaming has not gone [`STREAM_KEEP`] past it, else all
    /// but the last `STREAM_KEEP` bytes; never a byte not yet served.
    fn keep(&mut self, bytes: &[u8]) {
        self.kept.extend(bytes);
        let end = self.kept_end();
        let from = if end - self.held.1 <= STREAM_KEEP {
            self.held.0.saturating_sub(MARGIN)
        } else {
            end - STREAM_KEEP
        };
        let drop = from.clamp(self.kept_start, self.pos) - self.kept_start;
        if drop > 0 {
            self.kept.drain(..drop as usize);
            self.kept_start += drop;
        }
    }

    /// Reads the next top-level box header and holds and checks the box, or starts streaming it.
    fn next_unit(&mut self) -> Result<(), StreamRead> {
        let start = self.kept_end();
        let mut header = [0u8; 16];
        let got = self
            .take(&mut header[..8])
            .map_err(|()| StreamRead::Failed)?;
        if got < 8 {
            self.keep(&header[..got]);
            self.next = Next::Done;
            return Ok(());
        }
        let size32 = u32::from_be_bytes(header[..4].try_into().expect("4 bytes"));
        let kind: [u8; 4] = header[4..8].try_into().expect("4 bytes");
        let mut header_len = 8;
        let size = match size32 {
            0 => None,
            1 => {
                let got = self
                    .take(&mut header[8..16])
                    .map_err(|()| StreamRead::Failed)?;
                header_len += got;
                if got < 8 {
                    self.keep(&header[..header_len]);
                    self.next = Next::Done;
                    return Ok(());
                }
                Some(u64::from_be_bytes(
                    header[8..16].try_into().expect("8 bytes"),
                ))
            }
            n => Some(u64::from(n)),
        };
        if size.is_some_and(|s| s < header_len as u64) {
            // The demuxer stops at a header like this one, and reads no box after it.
            self.keep(&header[..header_len]);
            self.next = Next::Done;
            return Ok(());
        }
        let parsed = PARSED.contains(&&kind) || &kind == b"hoov";
        let streamed = !parsed || matches!(&kind, b"mdat" | b"free" | b"wide");
        if streamed {
            self.keep(&header[..header_len]);
            self.next = Next::Streaming(size.map(|s| start.saturating_add(s)));
            return Ok(());
        }
        let name = String::from_utf8_lossy(&kind).into_owned();
        let Some(size) = size else {
            return Err(self.refuse(format!(
                "a '{name}' box runs to the end of the stream: a live stream's index boxes must give their size"
            )));
        };
        if size > self.max_box {
            return Err(self.refuse(format!(
                "a '{name}' box of {size} bytes is larger than the {} bytes a live stream's index box may take \
                 (16 bytes per max_container_samples)",
                self.max_box
            )));
        }
        let mut held = Vec::new();
        if held.try_reserve_exact(size as usize).is_err() {
            self.failed = true;
            self.live.fail(VideoError::OutOfMemory {
                what: "a live MP4 index box",
                bytes: size as usize,
            });
            return Err(StreamRead::Failed);
        }
        held.extend_from_slice(&header[..header_len]);
        // Filled as its bytes arrive (a box that never completes takes only what was sent). A stream that ends
        // inside the box leaves it short, as the demuxer will read it.
        while (held.len() as u64) < size {
            let have = held.len();
            let more = (size as usize - have).min(READ_STEP);
            held.resize(have + more, 0);
            match self.source.read(&mut held[have..]) {
                StreamRead::Data(n) => held.truncate(have + n),
                StreamRead::End => {
                    held.truncate(have);
                    break;
                }
                StreamRead::Failed => return Err(StreamRead::Failed),
            }
        }
        if let Err(reason) = self.claims.top_level(&held) {
            return Err(self.refuse(reason));
        }
        self.held = (start, start + held.len() as u64);
        self.keep(&held);
        self.next = if held.len() as u64 == size {
            Next::Boundary
        } else {
            Next::Done
        };
        Ok(())
    }
}

/// The largest top-level box a live MP4 stream may have held: 16 bytes per sample of `max_samples`, at least
/// 1 MiB.
pub(crate) fn max_held_box(max_samples: u64) -> u64 {
    max_samples.saturating_mul(16).max(MIN_HELD_BOX)
}

impl StreamSource for Mp4Gate {
    fn read(&mut self, buf: &mut [u8]) -> StreamRead {
        loop {
            if self.failed {
                return StreamRead::Failed;
            }
            let end = self.kept_end();
            if self.pos < end {
                let from = (self.pos - self.kept_start) as usize;
                let n = buf.len().min((end - self.pos) as usize);
                let (front, back) = self.kept.as_slices();
                let in_front = front.len().saturating_sub(from).min(n);
                buf[..in_front].copy_from_slice(&front[from.min(front.len())..][..in_front]);
                let back_from = (from + in_front) - front.len().min(from + in_front);
                buf[in_front..n].copy_from_slice(&back[back_from..back_from + n - in_front]);
                self.pos += n as u64;
                return StreamRead::Data(n);
            }
            match self.next {
                Next::Done => return StreamRead::End,
                Next::Boundary => {
                    if let Err(read) = self.next_unit() {
                        return read;
                    }
                }
                Next::Streaming(until) if until == Some(end) => self.next = Next::Boundary,
                Next::Streaming(until) => {
                    let room = until.map_or(buf.len() as u64, |u| (u - end).min(buf.len() as u64));
                    match self.source.read(&mut buf[..room as usize]) {
                        StreamRead::Data(n) => self.keep(&buf[..n]),
                        StreamRead::End => self.next = Next::Done,
                        StreamRead::Failed => return StreamRead::Failed,
                    }
                }
            }
        }
    }

    fn seek(&mut self, pos: u64) -> bool {
        if (self.kept_start..=self.kept_end()).contains(&pos) && !self.failed {
            self.pos = pos;
            return true;
        }
        if !self.failed {
            let reason = format!(
                "the demuxer went back to byte {pos} of the stream, before the bytes kept for it (from byte \
                 {}): it read past the end of a box",
                self.kept_start
            );
            let _ = self.refuse(reason);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::demux::mp4::test_boxes::mp4_box;
    use crate::signal::Signals;
    use crate::source::live::{Failure, LiveVideo};

    /// A gate over `data`, pushed as one finished live video with `max_samples`.
    fn open_gate(data: &[u8], max_samples: u64) -> (Mp4Gate, Arc<LiveShared>) {
        let live = Arc::new(LiveShared::new(None, data.len().max(4096)));
        let producer = LiveVideo::new(live.clone());
        producer.push(data.to_vec()).unwrap();
        producer.finish();
        let reader = LiveReader::new(
            live.clone(),
            Arc::new(Signals::default()),
            Duration::from_secs(5),
        );
        let config = Config::new(1, 1).max_container_samples(max_samples);
        (Mp4Gate::new(reader, live.clone(), &config), live)
    }

    /// Everything the gate serves, read `step` bytes at a time.
    fn read_all(gate: &mut Mp4Gate, step: usize) -> Result<Vec<u8>, ()> {
        let mut out = Vec::new();
        let mut buf = vec![0; step];
        loop {
            match gate.read(&mut buf) {
                StreamRead::Data(n) => out.extend_from_slice(&buf[..n]),
                StreamRead::End => return Ok(out),
                StreamRead::Failed => return Err(()),
            }
        }
    }

    fn refusal(live: &LiveShared) -> String {
        match live.failure() {
            Some(Failure::Video(VideoError::ImplausibleContainer { reason })) => reason,
            other => panic!("expected an implausible container, got {other:?}"),
        }
    }

    fn stsz_box(count: u32) -> Vec<u8> {
        mp4_box(
            b"stsz",
            &[0u32, 1, count]
                .iter()
                .flat_map(|v| v.to_be_bytes())
                .collect::<Vec<_>>(),
        )
    }

    fn faststart(count: u32, media: usize) -> Vec<u8> {
        let moov = mp4_box(b"moov", &mp4_box(b"trak", &stsz_box(count)));
        [
            mp4_box(b"ftyp", b"isom\0\0\0\0"),
            moov,
            mp4_box(b"mdat", &vec![7; media]),
        ]
        .concat()
    }

    #[test]
    fn a_well_formed_stream_is_served_byte_for_byte() {
        let data = faststart(100, 3 << 20);
        for step in [1, 7, 4096, 1 << 16] {
            let (mut gate, _) = open_gate(&data, 1 << 22);
            assert_eq!(read_all(&mut gate, step).unwrap(), data, "step {step}");
            // What is kept for the demuxer stays bounded however long the media runs.
            assert!(
                gate.kept.len() as u64 <= STREAM_KEEP + (1 << 16),
                "{}",
                gate.kept.len()
            );
        }
    }

    #[test]
    fn claims_over_the_limit_fail_the_video_before_the_demuxer_reads_them() {
        let (mut gate, live) = open_gate(&faststart(5000, 100), 4000);
        let mut buf = [0u8; 64];
        // The ftyp box is served; the moov is refused before a byte of it is.
        let mut served = Vec::new();
        while let StreamRead::Data(n) = gate.read(&mut buf) {
            served.extend_from_slice(&buf[..n]);
        }
        assert_eq!(served.len(), 16);
        assert!(refusal(&live).contains("5000 samples"));
        // Across boxes: fragments add up.
        let frag = |count: u32| {
            let trun = mp4_box(
                b"trun",
                &[0u32, count]
                    .iter()
                    .flat_map(|v| v.to_be_bytes())
                    .collect::<Vec<_>>(),
            );
            mp4_box(b"moof", &mp4_box(b"traf", &trun))
        };
        let data = [
            faststart(0, 10),
            frag(2500),
            mp4_box(b"mdat", &[1; 10]),
            frag(2500),
        ]
        .concat();
        let (mut gate, live) = open_gate(&data, 4000);
        assert!(read_all(&mut gate, 4096).is_err());
        assert!(refusal(&live).contains("5000 samples in all"));
    }

    #[test]
    fn index_boxes_must_be_bounded_and_sized() {
        // Larger than 16 bytes per sample of the limit (and than 1 MiB).
        let big = [
            mp4_box(b"ftyp", b"isom\0\0\0\0"),
            mp4_box(b"moov", &vec![0; 2 << 20]),
        ]
        .concat();
        let (mut gate, live) = open_gate(&big, 1000);
        assert!(read_all(&mut gate, 4096).is_err());
        assert!(refusal(&live).contains("larger than the 1048576 bytes"));
        // A moov running to the end of the stream cannot be held.
        let mut open = mp4_box(b"moov", &[0; 32]);
        open[..4].copy_from_slice(&0u32.to_be_bytes());
        let (mut gate, live) = open_gate(&open, 1000);
        assert!(read_all(&mut gate, 4096).is_err());
        assert!(refusal(&live).contains("runs to the end of the stream"));
        // Media and unknown boxes are streamed whatever their size, a size-0 mdat to the end.
        let mut media = [
            mp4_box(b"ftyp", b"isom\0\0\0\0"),
            mp4_box(b"mdat", &vec![3; 3 << 20]),
        ]
        .concat();
        media[16..20].copy_from_slice(&0u32.to_be_bytes());
        let (mut gate, _) = open_gate(&media, 1000);
        assert_eq!(read_all(&mut gate, 1 << 16).unwrap(), media);
    }

    #[test]
    fn the_demuxer_goes_back_within_what_is_kept_and_no_further() {
        let data = faststart(10, 3 << 20);
        let (mut gate, live) = open_gate(&data, 1 << 22);
        let mut buf = vec![0u8; 100];
        // Into the moov, then back to its start: the same bytes again.
        let StreamRead::Data(n) = gate.read(&mut buf) else {
            panic!()
        };
        assert!(gate.seek(3));
        let mut again = vec![0u8; n - 3];
        let StreamRead::Data(m) = gate.read(&mut again) else {
            panic!()
        };
        assert_eq!(&again[..m], &data[3..3 + m]);
        // Far into the media: the moov is no longer kept, and going back to it fails the video.
        assert_eq!(
            read_all(&mut gate, 1 << 16).unwrap().len(),
            data.len() - 3 - m
        );
        assert!(gate.seek(data.len() as u64 - 1000));
        assert!(!gate.seek(20));
        assert!(refusal(&live).contains("went back to byte 20"));
        assert!(matches!(gate.read(&mut buf), StreamRead::Failed));
    }

    #[test]
    fn headers_the_demuxer_stops_at_end_the_stream() {
        let mut data = mp4_box(b"ftyp", b"isom\0\0\0\0");
        data.extend([0, 0, 0, 4, b'm', b'o', b'o', b'v']);
        data.extend(faststart(u32::MAX, 10)); // never reached by the demuxer: not served
        let (mut gate, live) = open_gate(&data, 1000);
        assert_eq!(read_all(&mut gate, 4096).unwrap(), data[..24].to_vec());
        assert!(live.failure().is_none());
    }
}
