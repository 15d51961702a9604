//! Telling, from a stream's first bytes, whether it is an MP4 and where its index (`moov`) is: a live MP4 with
//! its index first is read as it arrives, through the box gate (`live`); one with its index at the end is
//! buffered or failed per [`MoovAtEnd`](crate::MoovAtEnd); anything else goes to the other demuxers.

use std::time::Duration;

use crate::signal::Signals;
use crate::source::live::{Failure, LiveShared};

/// The most bytes looked at to find where an MP4's `moov` is.
const SNIFF_LIMIT: usize = 1 << 20;

/// What a live video is, as far as streaming is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mp4Layout {
    /// An MP4 (ISO BMFF or QuickTime boxes) with `moov` (or fragments) before the media data: read as it
    /// arrives, through the box gate (`live`), by the MOV demuxer only.
    Mp4,
    /// An MP4 whose `mdat` comes before its `moov`.
    MoovAtEnd,
    /// Anything that does not start like MP4: read as it arrives, by any demuxer but the MOV one.
    Other,
}

/// What the first bytes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sniff {
    /// This many bytes from the start are needed to tell.
    NeedMore(usize),
    Layout(Mp4Layout),
}

/// Walks the top-level ISO BMFF box headers in `prefix` until a `moov`/`moof` (MP4 read as it arrives) or an
/// `mdat` (index at the end). A stream whose first box is not one an MP4 starts with is another container.
pub(crate) fn sniff_mp4(prefix: &[u8]) -> Sniff {
    const SKIPPABLE: [&[u8; 4]; 14] = [
        b"ftyp", b"styp", b"free", b"skip", b"wide", b"pdin", b"sidx", b"uuid", b"prft", b"emsg",
        b"junk", b"pnot", b"udta", b"meta",
    ];
    let mut pos = 0usize;
    loop {
        let Some(header) = prefix.get(pos..pos + 8) else {
            return Sniff::NeedMore(pos + 8);
        };
        let size32 = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        let kind: &[u8; 4] = header[4..8].try_into().expect("4 bytes");
        match kind {
            b"moov" | b"moof" | b"hoov" => return Sniff::Layout(Mp4Layout::Mp4),
            b"mdat" => return Sniff::Layout(Mp4Layout::MoovAtEnd),
            k if SKIPPABLE.contains(&k) => {}
            _ if pos == 0 => return Sniff::Layout(Mp4Layout::Other),
            // Later unknown boxes: an MP4 all the same, read through the box gate.
            _ => return Sniff::Layout(Mp4Layout::Mp4),
        }
        let size = match size32 {
            // The box runs to the end of the file: no moov before the data.
            0 => return Sniff::Layout(Mp4Layout::Mp4),
            1 => {
                let Some(large) = prefix.get(pos + 8..pos + 16) else {
                    return Sniff::NeedMore(pos + 16);
                };
                u64::from_be_bytes(large.try_into().expect("8 bytes"))
            }
            n => u64::from(n),
        };
        if size < 8 {
            return Sniff::Layout(Mp4Layout::Mp4);
        }
        pos = match usize::try_from(size).ok().and_then(|s| pos.checked_add(s)) {
            // Boxes this large before any moov or mdat are not worth waiting for: the gate reads on.
            Some(p) if p <= SNIFF_LIMIT => p,
            _ => return Sniff::Layout(Mp4Layout::Mp4),
        };
    }
}

/// Looks at a live video's first bytes (waiting for enough of them) to tell whether it is an MP4 with its
/// `moov` at the end.
pub(crate) fn sniff_live(
    live: &LiveShared,
    stop: &Signals,
    stall_timeout: Duration,
) -> Result<Mp4Layout, Failure> {
    let mut need = 8;
    loop {
        let (prefix, finished) =
            live.prefix(stop, stall_timeout, need, need.clamp(64, SNIFF_LIMIT))?;
        match sniff_mp4(&prefix) {
            Sniff::NeedMore(n) if n <= SNIFF_LIMIT.min(live.max_buffered()) && !finished => {
                need = n;
            }
            // Too far in, or the upload ended first: read as it comes (an MP4 through the box gate).
            Sniff::NeedMore(_) if prefix.len() >= 8 => return Ok(Mp4Layout::Mp4),
            Sniff::NeedMore(_) => return Ok(Mp4Layout::Other),
            Sniff::Layout(layout) => return Ok(layout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demux::mp4::test_boxes::mp4_box;

    /// A box of `kind`, `len` bytes long in all, zero-filled.
    fn bx(kind: &[u8; 4], len: u32) -> Vec<u8> {
        mp4_box(kind, &vec![0; len as usize - 8])
    }

    #[test]
    fn faststart_and_fragmented_mp4_are_streamable() {
        let mut faststart = bx(b"ftyp", 32);
        faststart.extend(bx(b"moov", 100));
        assert_eq!(sniff_mp4(&faststart), Sniff::Layout(Mp4Layout::Mp4));
        let mut fragmented = bx(b"ftyp", 24);
        fragmented.extend(bx(b"free", 8));
        fragmented.extend(bx(b"moof", 50));
        assert_eq!(sniff_mp4(&fragmented), Sniff::Layout(Mp4Layout::Mp4));
    }

    #[test]
    fn mdat_before_moov_is_moov_at_end() {
        let mut file = bx(b"ftyp", 32);
        file.extend(bx(b"free", 8));
        file.extend(bx(b"mdat", 8));
        assert_eq!(sniff_mp4(&file), Sniff::Layout(Mp4Layout::MoovAtEnd));
        // A 64-bit mdat size is read through.
        let mut wide = bx(b"ftyp", 16);
        wide.extend_from_slice(&1u32.to_be_bytes());
        wide.extend_from_slice(b"mdat");
        wide.extend_from_slice(&(1u64 << 33).to_be_bytes());
        assert_eq!(sniff_mp4(&wide), Sniff::Layout(Mp4Layout::MoovAtEnd));
    }

    #[test]
    fn needs_the_next_box_header() {
        let file = bx(b"ftyp", 32);
        assert_eq!(sniff_mp4(&file[..5]), Sniff::NeedMore(8));
        assert_eq!(sniff_mp4(&file), Sniff::NeedMore(40));
    }

    #[test]
    fn other_containers_are_not_mp4() {
        let ts = [0x47u8, 0x40, 0x00, 0x10, 0, 0, 0, 0, 0, 0];
        assert_eq!(sniff_mp4(&ts), Sniff::Layout(Mp4Layout::Other));
        let mkv = [0x1Au8, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81];
        assert_eq!(sniff_mp4(&mkv), Sniff::Layout(Mp4Layout::Other));
        let annexb = [0u8, 0, 0, 1, 0x67, 0x64, 0, 0x1f];
        assert_eq!(sniff_mp4(&annexb), Sniff::Layout(Mp4Layout::Other));
        let id3 = *b"ID3\x04\x00\x00\x00\x00\x00\x0a";
        assert_eq!(sniff_mp4(&id3), Sniff::Layout(Mp4Layout::Other));
        // An unknown box after an MP4's first one is still an MP4.
        let mut odd = bx(b"ftyp", 16);
        odd.extend(bx(b"abcd", 8));
        assert_eq!(sniff_mp4(&odd), Sniff::Layout(Mp4Layout::Mp4));
    }

    #[test]
    fn absurd_sizes_do_not_overflow() {
        let mut file = Vec::new();
        file.extend_from_slice(&1u32.to_be_bytes());
        file.extend_from_slice(b"ftyp");
        file.extend_from_slice(&u64::MAX.to_be_bytes());
        assert_eq!(sniff_mp4(&file), Sniff::Layout(Mp4Layout::Mp4));
    }
}
