//! A check of an MP4/MOV file's claims before libavformat acts on them (demux stage, safe code).
//!
//! libavformat's MOV demuxer (FFmpeg 5.1) allocates memory in proportion to counts its boxes merely claim, and
//! fills it, before it reads a single sample: an index entry (24 bytes) and a composition offset (8) for every
//! sample a track's `stsz`/`stz2` or a fragment's `trun` claims, an index entry for every 160 to 1024 samples
//! an audio track's `stsc` says its chunks hold, a zeroed byte per `sgpd` sync group, 8 bytes per `keys` key,
//! and, for HEVC with open GOPs, 4 bytes per sample that its `sbgp` sync groups and `ctts` offsets count.
//! Nothing bounds these counts: an 18 KB file claiming 80 million `trun` samples took 2.2 GB, a `sgpd` box of
//! 20 bytes 2.1 GB. The demuxer also reads a sample description (`stsd` entry) to whatever length it claims,
//! beyond its table, and one shorter than its own fields makes it read the next entries from the wrong place.
//!
//! [`Claims`] walks the boxes as the demuxer does (the same containers, each child clamped to its parent, the
//! `meta` handler scan, `hoov`, QuickTime `wave`, sample descriptions read with the demuxer's own codec tables)
//! and refuses a file whose claims cannot be true: every class of claimed samples at most
//! [`Bound::samples`] (one per byte for a whole buffer, and never more than the configured
//! `max_container_samples`), a `sgpd`/`keys` count within its box, a sample description within its table and
//! as long as its fields, and no compressed movie header (`cmov`, which the demuxer inflates to any size before
//! anything can be checked). Anything that does not parse as boxes is left to libavformat, as it would stop
//! there too. Whole buffers are checked at once ([`check_buffer`]); live MP4 streams one top-level box at a
//! time as they arrive (`demux::mp4::live`), before the demuxer sees the box.

use crate::demux::mp4::boxes::{be16, be32, id3v2_len, kind_name, movie_boxes};
use crate::ffi::format::{codec_tag_known, TagTable};
use crate::video::WholeFile;

/// Bytes of demuxer memory counted for every sample an index may claim (measured: 47 bytes a sample on a
/// million-frame faststart MP4, before composition offsets and edit-list copies).
#[cfg_attr(not(feature = "server"), allow(dead_code))] // the service's memory budget counts with it
pub(crate) const BYTES_PER_SAMPLE: u64 = 64;

/// How deep the demuxer nests boxes (FFmpeg 5.1 refuses an eleventh level).
const MAX_DEPTH: u32 = 10;

/// A sample description that lavf reads past this many bytes of extra boxes without skipping what is left.
const STSD_TAIL_SKIP_LIMIT: usize = 0x7ffff;

/// Boxes the demuxer reads as lists of boxes.
const CONTAINERS: [&[u8; 4]; 15] = [
    b"moov", b"mdia", b"minf", b"stbl", b"moof", b"traf", b"mvex", b"edts", b"dinf", b"udta",
    b"tref", b"sinf", b"schi", b"ilst", b"wave",
];

/// What the numbers of claimed samples are held to, and why (for the message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bound {
    /// The most samples of each class.
    pub(crate) samples: u64,
    /// The bound is the size of a whole buffer (one sample a byte), not the configured limit.
    pub(crate) by_size: bool,
}

impl Bound {
    /// The bound of a whole buffer of `len` bytes: one sample a byte, at most `max_samples`.
    pub(crate) fn whole(len: usize, max_samples: u64) -> Self {
        let len = len as u64;
        Self {
            samples: len.min(max_samples),
            by_size: len < max_samples,
        }
    }

    /// The bound of a live stream, whose length is not known: `max_samples`.
    pub(crate) fn live(max_samples: u64) -> Self {
        Self {
            samples: max_samples,
            by_size: false,
        }
    }

    fn describe(&self) -> String {
        if self.by_size {
            format!("a file of {} bytes can hold", self.samples)
        } else {
            format!("max_container_samples allows {}", self.samples)
        }
    }
}

/// How the demuxer reads a sample description: as a video, an audio, or another kind of track.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Media {
    #[default]
    Unknown,
    Video,
    Audio,
    Subtitle,
}

/// libavformat's codec tag tables, which decide how the demuxer reads a sample description.
pub(crate) trait CodecTags: Sync {
    /// Whether `table` knows the tag (a fourcc packed little-endian, as `MKTAG` does).
    fn known(&self, table: TagTable, tag: u32) -> bool;
}

/// The tables of the linked libavformat.
pub(crate) struct LavfTags;

impl CodecTags for LavfTags {
    fn known(&self, table: TagTable, tag: u32) -> bool {
        codec_tag_known(table, tag)
    }
}

/// The state of the demuxer's last track (its "last stream", which boxes outside a `trak` apply to).
#[derive(Debug, Default)]
struct Track {
    media: Media,
    /// The fourcc of its first sample description read (the demuxer skips later ones of another code).
    codec_tag: Option<[u8; 4]>,
    /// Chunks its first `stco`/`co64` claims.
    chunks: Option<u64>,
    /// The most samples a chunk of its first `stsc` holds.
    max_chunk_samples: Option<u64>,
}

/// Claims gathered over one file's boxes, checked as they are met.
pub(crate) struct Claims<'t> {
    bound: Bound,
    tags: &'t dyn CodecTags,
    /// Samples of `stsz`/`stz2` tables and `trun` fragments.
    samples: u64,
    /// Index entries the audio chunk path would make.
    chunk_entries: u64,
    /// Samples counted by `sbgp` sync groups.
    group_samples: u64,
    /// Samples counted by `ctts` entries.
    offset_samples: u64,
    /// A `trak` was met (the demuxer has a stream that later boxes apply to).
    has_track: bool,
    /// Inside a `trak` (its `hdlr` sets the track's kind).
    trak_depth: u32,
    track: Track,
}

impl<'t> Claims<'t> {
    /// No claims yet; samples held to `bound`.
    pub(crate) fn new(bound: Bound, tags: &'t dyn CodecTags) -> Self {
        Self {
            bound,
            tags,
            samples: 0,
            chunk_entries: 0,
            group_samples: 0,
            offset_samples: 0,
            has_track: false,
            trak_depth: 0,
            track: Track::default(),
        }
    }

    /// Checks top-level boxes (a whole file after its ID3v2 tags, or one box of a live stream): `Err` says
    /// which claim cannot be true.
    pub(crate) fn top_level(&mut self, data: &[u8]) -> Result<(), String> {
        self.walk(data, b"root", 0).map(|_| ())
    }

    /// Adds `n` to one class of claimed samples and checks it against the bound.
    fn claim(&self, total: &mut u64, n: u64, what: &str) -> Result<(), String> {
        *total = total.saturating_add(n);
        if *total > self.bound.samples {
            return Err(format!(
                "{what} claim {} samples in all (this one {n}), more than {}",
                *total,
                self.bound.describe()
            ));
        }
        Ok(())
    }

    /// Walks a list of boxes as `mov_read_default` does; returns where it stopped and whether it left the
    /// list early (a `trak` or `mdat` where none may be, after which the demuxer does not skip the rest).
    fn walk(&mut self, data: &[u8], parent: &[u8; 4], depth: u32) -> Result<(usize, bool), String> {
        if depth > MAX_DEPTH {
            // The demuxer refuses the file here: nothing below is read.
            return Ok((data.len(), false));
        }
        let mut pos = 0usize;
        while pos + 8 <= data.len() {
            let size32 = be32(data, pos);
            let mut kind: [u8; 4] = data[pos + 4..pos + 8].try_into().expect("4 bytes");
            // A `hoov` (or `free`) box holding a movie header is read as the movie box.
            if (&kind == b"hoov" || &kind == b"free") && size32 >= 8 && pos + 16 <= data.len() {
                let first_child = &data[pos + 12..pos + 16];
                if first_child == b"mvhd" || first_child == b"cmov" {
                    kind = *b"moov";
                }
            }
            if parent != b"root" && parent != b"moov" && (&kind == b"trak" || &kind == b"mdat") {
                return Ok((pos, true));
            }
            let (header, size) = match size32 {
                1 if pos + 16 <= data.len() => (
                    16,
                    u64::from_be_bytes(data[pos + 8..pos + 16].try_into().expect("8 bytes")),
                ),
                // A 64-bit size with no room for it reads as 1: too small.
                1 => (8, 1),
                0 => (8, (data.len() - pos) as u64),
                n => (8, u64::from(n)),
            };
            if size < header as u64 {
                break;
            }
            // Clamped to the parent, as the demuxer clamps it.
            let avail = data.len() - pos - header;
            let len = usize::try_from(size - header as u64).map_or(avail, |n| n.min(avail));
            let payload = &data[pos + header..pos + header + len];
            self.visit(
                &kind,
                &data[pos..pos + header + len],
                header,
                payload,
                parent,
                depth,
            )?;
            pos += header + len;
        }
        Ok((pos, false))
    }

    fn visit(
        &mut self,
        kind: &[u8; 4],
        whole: &[u8],
        header: usize,
        payload: &[u8],
        parent: &[u8; 4],
        depth: u32,
    ) -> Result<(), String> {
        match kind {
            b"cmov" => Err(
                "the movie header is compressed (cmov): it would be inflated to a size it claims before \
                 anything in it could be checked"
                    .into(),
            ),
            b"trak" => {
                self.has_track = true;
                self.track = Track::default();
                self.trak_depth += 1;
                let walked = self.walk(payload, kind, depth + 1);
                self.trak_depth -= 1;
                walked?;
                self.end_track()
            }
            k if CONTAINERS.contains(&k) => {
                if k == b"wave" && payload.len() > 1 << 30 {
                    return Ok(()); // the demuxer refuses it
                }
                self.walk(payload, kind, depth + 1).map(|_| ())
            }
            b"meta" => self.meta(whole, header, payload, depth),
            b"glbl" | b"avcC" | b"hvcC" | b"av1C" => {
                // A legacy `fiel` box wrapped whole in the extradata box is read as a list of boxes.
                let wraps_fiel = payload.len() >= 10
                    && payload.len() <= 1 << 30
                    && &payload[4..8] == b"fiel"
                    && be32(payload, 0) as usize == payload.len();
                if wraps_fiel {
                    self.walk(payload, kind, depth + 1)?;
                }
                Ok(())
            }
            b"hdlr" => {
                if self.trak_depth > 0 && payload.len() >= 12 {
                    match &payload[8..12] {
                        b"vide" => self.track.media = Media::Video,
                        b"soun" => self.track.media = Media::Audio,
                        b"subp" | b"clcp" => self.track.media = Media::Subtitle,
                        _ => {}
                    }
                }
                Ok(())
            }
            b"stsd" => self.stsd(payload, depth),
            b"stsz" | b"stz2" => {
                let count = self.field(kind, payload, 8)?;
                // A table of sizes follows unless stsz gives one size for all (stz2 always has one).
                let bits = match kind {
                    b"stsz" if be32(payload, 4) != 0 => 0,
                    b"stsz" => 32,
                    _ => u64::from(payload[7]),
                };
                fits(kind, payload, 12, count, bits)?;
                let mut total = self.samples;
                self.claim(&mut total, count, "sample size tables (stsz)")?;
                self.samples = total;
                Ok(())
            }
            b"trun" => {
                let count = self.field(kind, payload, 4)?;
                // Per-sample fields (duration, size, flags, composition offset), 4 bytes each, after an
                // optional data offset and first-sample flags.
                let flags = be32(payload, 0) & 0xFF_FFFF;
                let at = 8 + 4 * usize::from(flags & 0x1 != 0) + 4 * usize::from(flags & 0x4 != 0);
                fits(kind, payload, at, count, 32 * u64::from((flags & 0xF00).count_ones()))?;
                let mut total = self.samples;
                self.claim(&mut total, count, "sample tables and fragments (stsz, trun)")?;
                self.samples = total;
                Ok(())
            }
            b"stsc" => {
                let entries = self.field(kind, payload, 4)?;
                // The demuxer refuses a table of more than (size - 4) / 12 entries (so each entry's count lies
                // in the box), and reads only a track's first one.
                let fits = entries * 12 + 4 <= payload.len() as u64;
                if self.has_track && entries > 0 && fits && self.track.max_chunk_samples.is_none() {
                    let most = (0..entries as usize)
                        .map(|i| u64::from(be32(payload, 8 + 12 * i + 4)).max(1))
                        .max()
                        .unwrap_or(1);
                    self.track.max_chunk_samples = Some(most);
                }
                Ok(())
            }
            b"stco" | b"co64" => {
                let entries = self.field(kind, payload, 4)?;
                fits(kind, payload, 8, entries, if kind == b"co64" { 64 } else { 32 })?;
                if self.has_track && entries > 0 && self.track.chunks.is_none() {
                    self.track.chunks = Some(entries);
                }
                Ok(())
            }
            // Tables the demuxer allocates for their whole count, then reads past their box's end.
            b"stss" | b"stps" | b"stts" => {
                let entries = self.field(kind, payload, 4)?;
                fits(kind, payload, 8, entries, if kind == b"stts" { 64 } else { 32 })
            }
            b"elst" => {
                let entries = self.field(kind, payload, 4)?;
                fits(kind, payload, 8, entries, if payload[0] == 1 { 160 } else { 96 })
            }
            b"sgpd" => self.sgpd(payload),
            b"sbgp" => self.sbgp(payload),
            b"ctts" => {
                let entries = self.field(kind, payload, 4)?;
                let counts = self.table(kind, payload, 8, entries, 8)?;
                let mut total = self.offset_samples;
                self.claim(&mut total, counts, "composition offset tables (ctts)")?;
                self.offset_samples = total;
                Ok(())
            }
            b"keys" if parent == b"meta" => {
                let count = self.field(kind, payload, 4)?;
                let room = (payload.len() as u64).saturating_sub(8) / 8;
                if count > room {
                    return Err(format!(
                        "a metadata key table (keys) claims {count} keys in {} bytes",
                        payload.len()
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The big-endian u32 at `at` of a claim box; a box too short to hold it is refused (the demuxer would
    /// read the count from the bytes after it).
    fn field(&self, kind: &[u8; 4], payload: &[u8], at: usize) -> Result<u64, String> {
        if payload.len() < at + 4 {
            return Err(format!(
                "a {} box of {} bytes is too short for its own fields",
                kind_name(kind),
                payload.len() + 8
            ));
        }
        Ok(u64::from(be32(payload, at)))
    }

    /// Sums the first u32 of each of `entries` entries of `size` bytes from `at`: the demuxer reads them past
    /// the box's end, so a table longer than its box is refused.
    fn table(
        &self,
        kind: &[u8; 4],
        payload: &[u8],
        at: usize,
        entries: u64,
        size: usize,
    ) -> Result<u64, String> {
        fits(kind, payload, at, entries, 8 * size as u64)?;
        Ok((0..entries as usize)
            .map(|i| u64::from(be32(payload, at + size * i)))
            .fold(0u64, u64::saturating_add))
    }

    /// `sgpd`: the demuxer zeroes a byte per entry of a sync group description before reading them.
    fn sgpd(&mut self, payload: &[u8]) -> Result<(), String> {
        if payload.len() < 8 || &payload[4..8] != b"sync" {
            return Ok(());
        }
        let version = payload[0];
        let at = 8 + if version >= 1 { 4 } else { 0 } + if version >= 2 { 4 } else { 0 };
        let count = self.field(b"sgpd", payload, at)?;
        let room = payload.len().saturating_sub(at + 4) as u64;
        if count > room {
            return Err(format!(
                "a sample group description (sgpd) claims {count} entries in {room} bytes"
            ));
        }
        Ok(())
    }

    /// `sbgp`: sync groups count samples the demuxer lists one by one for HEVC open GOPs.
    fn sbgp(&mut self, payload: &[u8]) -> Result<(), String> {
        if payload.len() < 8 {
            return Ok(());
        }
        let grouping = &payload[4..8];
        if grouping != b"sync" && grouping != b"rap " {
            return Ok(());
        }
        let at = 8 + if payload[0] == 1 { 4 } else { 0 };
        let entries = self.field(b"sbgp", payload, at)?;
        let counts = self.table(b"sbgp", payload, at + 4, entries, 8)?;
        if grouping == b"sync" {
            let mut total = self.group_samples;
            self.claim(&mut total, counts, "sample-to-group tables (sbgp)")?;
            self.group_samples = total;
        }
        Ok(())
    }

    /// The demuxer builds a track's index when its `trak` ends; an audio track of raw samples is indexed by
    /// chunk, one entry for every 160 to 1024 samples a chunk holds.
    fn end_track(&mut self) -> Result<(), String> {
        let (Some(chunks), Some(most)) = (self.track.chunks, self.track.max_chunk_samples) else {
            return Ok(());
        };
        let entries = chunks.saturating_mul(most.div_ceil(160));
        let mut total = self.chunk_entries;
        self.claim(&mut total, entries, "audio chunk tables (stco, stsc)")?;
        self.chunk_entries = total;
        Ok(())
    }

    /// `meta`: the demuxer looks for `hdlr` 4 bytes at a time and reads the boxes from the one before it.
    fn meta(
        &mut self,
        whole: &[u8],
        header: usize,
        payload: &[u8],
        depth: u32,
    ) -> Result<(), String> {
        let mut at = 0usize;
        while payload.len() - at > 8 {
            let tag = &payload[at..at + 4];
            at += 4;
            if tag == b"hdlr" {
                // From the 4 bytes before the `hdlr` tag (which may be the meta box's own header).
                let start = header + at - 8;
                return self.walk(&whole[start..], b"meta", depth + 1).map(|_| ());
            }
        }
        Ok(())
    }

    /// `stsd`: sample descriptions, read as the demuxer reads them (its own sizes, not clamped to the table,
    /// then the codec's fields by the track's kind, then boxes to the end of the description).
    fn stsd(&mut self, payload: &[u8], depth: u32) -> Result<(), String> {
        if !self.has_track {
            return Ok(()); // no stream yet: the demuxer ignores it
        }
        let declared = self.field(b"stsd", payload, 4)?;
        if declared == 0 || declared > (payload.len() / 8) as u64 || declared > 1024 {
            return Ok(()); // the demuxer refuses the file
        }
        let mut pos = 8usize;
        for index in 0..declared {
            if pos + 8 > payload.len() {
                return Err(format!(
                    "the sample description table (stsd) claims {declared} entries, its bytes hold {index}"
                ));
            }
            let size = u64::from(be32(payload, pos));
            if size <= 7 {
                return Ok(()); // the demuxer refuses the file
            }
            let room = (payload.len() - pos) as u64;
            if size > room {
                return Err(format!(
                    "a sample description claims {size} bytes, past the end of its table ({room} bytes left)"
                ));
            }
            let entry = &payload[pos..pos + size as usize];
            let format: [u8; 4] = entry[4..8].try_into().expect("4 bytes");
            pos += size as usize;
            if self
                .track
                .codec_tag
                .is_some_and(|tag| skips_description(tag, format))
            {
                continue; // read past unparsed
            }
            self.track.codec_tag = Some(format);
            self.track.media = self.entry_media(format);
            let read = match self.track.media {
                Media::Video => video_fields(entry),
                Media::Audio => audio_fields(entry),
                // Subtitle and data descriptions are read to their end, or their boxes after 16 bytes.
                Media::Unknown | Media::Subtitle => 16.min(entry.len()),
            };
            if read > entry.len() {
                return Err(format!(
                    "a {} sample description of {} bytes is shorter than the {read} bytes of fields the \
                     demuxer reads from it",
                    kind_name(&format),
                    entry.len()
                ));
            }
            let tail = &entry[read..];
            if tail.len() > 8 {
                let (stopped, left_early) = self.walk(tail, b"stsd", depth + 1)?;
                if stopped < tail.len() && (left_early || tail.len() >= STSD_TAIL_SKIP_LIMIT) {
                    return Err(format!(
                        "the boxes of a {} sample description stop {} bytes before its end",
                        kind_name(&format),
                        tail.len() - stopped
                    ));
                }
            }
        }
        Ok(())
    }

    /// The track kind after the demuxer's `mov_codec_id` has seen a description's fourcc.
    fn entry_media(&self, format: [u8; 4]) -> Media {
        let current = self.track.media;
        let tag = u32::from_le_bytes(format);
        let mut audio = self.tags.known(TagTable::MovAudio, tag);
        let low = tag & 0xFFFF;
        if !audio
            && (low == u32::from_le_bytes(*b"ms\0\0") || low == u32::from_le_bytes(*b"TS\0\0"))
        {
            audio = self
                .tags
                .known(TagTable::RiffAudio, tag.swap_bytes() & 0xFFFF);
        }
        if current != Media::Video && audio {
            return Media::Audio;
        }
        if current != Media::Audio && tag != 0 && &format != b"mp4s" {
            let video = self.tags.known(TagTable::MovVideo, tag)
                || self.tags.known(TagTable::RiffVideo, tag);
            if video {
                return Media::Video;
            }
        }
        current
    }
}

/// A table of `entries` entries of `bits` bits each from byte `at` must lie in its box: the demuxer allocates
/// for the whole count at once and reads on past the box's end.
fn fits(kind: &[u8; 4], payload: &[u8], at: usize, entries: u64, bits: u64) -> Result<(), String> {
    let room = payload.len().saturating_sub(at) as u64 * 8;
    if entries.saturating_mul(bits) > room {
        return Err(format!(
            "a {} table claims {entries} entries, its box holds {}",
            kind_name(kind),
            room / bits.max(1)
        ));
    }
    Ok(())
}

/// Whether the demuxer skips a sample description of code `format` in a track whose first one was `tag`
/// (FFmpeg 5.1's `mov_skip_multiple_stsd`, no forced video codec).
fn skips_description(tag: [u8; 4], format: [u8; 4]) -> bool {
    tag != format
        && !(&tag == b"AV1x" && &format == b"AVup")
        && ![b"apcn", b"apch", b"dvpp", b"dvcp", b"jpeg"].contains(&&tag)
}

/// Bytes the demuxer reads of a video sample description: 86 of fields, and an inline colour table.
fn video_fields(entry: &[u8]) -> usize {
    const FIELDS: usize = 86;
    if entry.len() < FIELDS {
        return FIELDS;
    }
    let depth_flags = be16(entry, 82);
    let bit_depth = depth_flags & 0x1F;
    let table_id = be16(entry, 84);
    if !matches!(bit_depth, 1 | 2 | 4 | 8) || table_id != 0 {
        return FIELDS;
    }
    // The table is in the description: start (4), flags (2), end (2), then 8 bytes a colour.
    if entry.len() < FIELDS + 8 {
        return FIELDS + 8;
    }
    let start = be32(entry, 86);
    let end = u32::from(be16(entry, 92));
    let colours = if start <= 255 && end <= 255 && end >= start {
        (end - start + 1) as usize
    } else {
        0
    };
    FIELDS + 8 + 8 * colours
}

/// Bytes the demuxer reads of an audio sample description: 36, and the QuickTime version 1 or 2 fields.
fn audio_fields(entry: &[u8]) -> usize {
    const FIELDS: usize = 36;
    if entry.len() < 18 {
        return FIELDS;
    }
    FIELDS
        + match be16(entry, 16) {
            1 => 16,
            2 => 36,
            _ => 0,
        }
}

/// Checks a whole buffer as libavformat's MOV demuxer would read it: `Err` says which claim cannot be true.
/// Buffers that are not MP4/MOV pass (nothing in them parses as the boxes the demuxer acts on).
pub(crate) fn check_buffer(data: &[u8], max_samples: u64) -> Result<(), String> {
    check_buffer_with(data, max_samples, &LavfTags)
}

pub(crate) fn check_buffer_with(
    data: &[u8],
    max_samples: u64,
    tags: &dyn CodecTags,
) -> Result<(), String> {
    let data = &data[id3v2_len(data).min(data.len())..];
    Claims::new(Bound::whole(data.len(), max_samples), tags).top_level(data)
}

/// Checks a whole video file as [`check_buffer`] checks a buffer, reading only what the demuxer parses
/// before its first packet ([`movie_boxes`]). An I/O error leaves the file to the demuxer, whose read fails the
/// same way.
pub(crate) fn check_file(file: &WholeFile, max_samples: u64) -> Result<(), String> {
    let Some(gathered) = movie_boxes(file)? else {
        return Ok(());
    };
    let len = usize::try_from(file.len).unwrap_or(usize::MAX);
    Claims::new(Bound::whole(len, max_samples), &LavfTags).top_level(&gathered)
}

#[cfg(test)]
mod tests;
