//! Reading MP4 boxes (demux stage, safe code): the box types libavformat's MOV demuxer parses, big-endian
//! fields, the ID3v2 tags it skips before the boxes, and a file's top-level boxes gathered as the demuxer reads
//! them before its first packet, for the claim checker (`claims`) and the sample tables (`tables`).

use crate::video::WholeFile;

/// Box types the demuxer parses wherever it meets them (FFmpeg 5.1's `mov_default_parse_table`); any other
/// top-level box is skipped unread.
pub(crate) const PARSED: [&[u8; 4]; 104] = [
    b"ACLR", b"APRG", b"AALP", b"ARES", b"avss", b"av1C", b"chpl", b"co64", b"colr", b"ctts",
    b"dinf", b"DpxE", b"dref", b"edts", b"elst", b"enda", b"fiel", b"adrm", b"ftyp", b"glbl",
    b"hdlr", b"ilst", b"jp2h", b"mdat", b"mdhd", b"mdia", b"meta", b"minf", b"moof", b"moov",
    b"mvex", b"mvhd", b"SMI ", b"alac", b"avcC", b"pasp", b"sidx", b"stbl", b"stco", b"stps",
    b"strf", b"stsc", b"stsd", b"stss", b"stsz", b"stts", b"stz2", b"sdtp", b"tkhd", b"tfdt",
    b"tfhd", b"trak", b"traf", b"tref", b"tmcd", b"chap", b"trex", b"trun", b"udta", b"wave",
    b"esds", b"dac3", b"dec3", b"ddts", b"wide", b"wfex", b"cmov", b"chan", b"dvc1", b"sgpd",
    b"sbgp", b"hvcC", b"uuid", b"Cin\x8e", b"free", b"----", b"sinf", b"frma", b"senc", b"saiz",
    b"saio", b"pssh", b"schm", b"schi", b"tenc", b"dfLa", b"st3d", b"sv3d", b"dOps", b"dmlp",
    b"SmDm", b"CoLL", b"vpcC", b"mdcv", b"clli", b"dvcC", b"dvvC", b"dvwC", b"kind", b"SA3D",
    b"SAND", b"iloc", b"pcmC", b"pitm",
];

/// Reads a big-endian u32 at `at` (the caller checked the length).
pub(crate) fn be32(data: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(data[at..at + 4].try_into().expect("4 bytes"))
}

/// Reads a big-endian u16 at `at` (the caller checked the length).
pub(crate) fn be16(data: &[u8], at: usize) -> u16 {
    u16::from_be_bytes(data[at..at + 2].try_into().expect("2 bytes"))
}

/// A box type as text for a message (`?` for bytes that are not printable).
pub(crate) fn kind_name(kind: &[u8; 4]) -> String {
    kind.iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '?'
            }
        })
        .collect()
}

/// Bytes of ID3v2 tags at the start of `data`, which libavformat skips before it demuxes.
pub(crate) fn id3v2_len(data: &[u8]) -> usize {
    let mut at = 0usize;
    while let Some(h) = data.get(at..at + 10) {
        let is_tag = &h[..3] == b"ID3"
            && h[3] != 0xff
            && h[4] != 0xff
            && h[6..10].iter().all(|b| b & 0x80 == 0);
        if !is_tag {
            break;
        }
        let len = h[6..10]
            .iter()
            .fold(0usize, |acc, &b| (acc << 7) | usize::from(b));
        let footer = if h[3] == 4 && h[5] & 0x10 != 0 { 10 } else { 0 };
        at = at.saturating_add(10 + len + footer);
    }
    at
}

/// A video file's top-level boxes as the demuxer parses them before its first packet: the boxes it parses,
/// whole (`moov` above all), and no media data (an `mdat`, or a box it skips, as its header alone, an empty
/// box of its kind), after any ID3v2 tags. `Ok(None)`: the file could not be read; `Err`: a box it parses is
/// too large for memory.
pub(crate) fn movie_boxes(file: &WholeFile) -> Result<Option<Vec<u8>>, String> {
    let read = |at: u64, buf: &mut [u8]| -> Option<usize> {
        let mut done = 0;
        while done < buf.len() {
            match file.file.read_at(&mut buf[done..], at + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        Some(done)
    };
    // ID3v2 tags before the boxes are skipped as in a buffer, one header at a time.
    let mut pos = 0u64;
    loop {
        let mut tag = [0u8; 10];
        if read(pos, &mut tag) != Some(10) {
            break;
        }
        match id3v2_len(&tag) {
            0 => break,
            skip => pos = pos.saturating_add(skip as u64),
        }
    }
    let mut gathered: Vec<u8> = Vec::new();
    while pos + 8 <= file.len {
        let mut header = [0u8; 16];
        let got = read(pos, &mut header).unwrap_or(0);
        if got < 8 {
            break;
        }
        let size32 = be32(&header, 0);
        let kind: [u8; 4] = header[4..8].try_into().expect("4 bytes");
        let size = match size32 {
            1 if got >= 16 => u64::from_be_bytes(header[8..16].try_into().expect("8 bytes")),
            0 => file.len - pos,
            n => u64::from(n),
        };
        if size < 8 {
            // As the buffer walk: a box too small ends the list (its bytes are passed on for it to see).
            gathered.extend_from_slice(&header[..got.min(16)]);
            break;
        }
        let size = size.min(file.len - pos);
        let movie_in_free = (&kind == b"free" || &kind == b"hoov")
            && got >= 16
            && (&header[12..16] == b"mvhd" || &header[12..16] == b"cmov");
        let parsed = &kind != b"mdat" && (PARSED.contains(&&kind) || movie_in_free);
        if parsed {
            let len = usize::try_from(size)
                .map_err(|_| format!("a {} box of {size} bytes", kind_name(&kind)))?;
            let at = gathered.len();
            gathered.try_reserve(len).map_err(|_| {
                format!(
                    "a {} box of {size} bytes does not fit in memory",
                    kind_name(&kind)
                )
            })?;
            gathered.resize(at + len, 0);
            let Some(done) = read(pos, &mut gathered[at..]) else {
                return Ok(None);
            };
            gathered.truncate(at + done);
        } else {
            // Its header alone, as an empty box of its kind.
            gathered.extend_from_slice(&8u32.to_be_bytes());
            gathered.extend_from_slice(&kind);
        }
        pos += size;
    }
    Ok(Some(gathered))
}
