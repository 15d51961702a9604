//! Box-level edits of the MP4 fixtures, making the forged files a hostile client would send: each claims what
//! makes libavformat's MOV demuxer (FFmpeg 5.1) take memory out of all proportion to the file, measured before
//! the claims check (`benches/RESULTS.md`, "Forged MP4 claims").

use super::read_fixture;

/// Boxes whose payload is a list of boxes (enough of them to reach every box the forgeries touch).
const CONTAINERS: [&[u8; 4]; 10] = [
    b"moov", b"trak", b"mdia", b"minf", b"stbl", b"moof", b"traf", b"udta", b"dinf", b"edts",
];

/// Where the first box of type `kind` at the end of `path` starts, and its size (`path` walks containers).
fn find(data: &[u8], path: &[&[u8; 4]]) -> (usize, usize) {
    let (mut pos, mut end) = (0, data.len());
    let mut found = None;
    for (depth, kind) in path.iter().enumerate() {
        found = None;
        while pos + 8 <= end {
            let size = u32::from_be_bytes(data[pos..pos + 4].try_into().unwrap()) as usize;
            if &data[pos + 4..pos + 8] == *kind {
                found = Some((pos, size));
                break;
            }
            pos += size;
        }
        let (at, size) =
            found.unwrap_or_else(|| panic!("no {:?} box", String::from_utf8_lossy(*kind)));
        if depth + 1 < path.len() {
            assert!(CONTAINERS.contains(kind));
            pos = at + 8;
            end = at + size;
        }
    }
    found.unwrap()
}

fn put(data: &mut [u8], at: usize, value: u32) {
    data[at..at + 4].copy_from_slice(&value.to_be_bytes());
}

fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

/// A box of `kind` around `payload`.
pub fn mp4_box(kind: &[u8; 4], payload: &[u8]) -> Vec<u8> {
    [
        ((payload.len() + 8) as u32).to_be_bytes().to_vec(),
        kind.to_vec(),
        payload.to_vec(),
    ]
    .concat()
}

/// Appends `child` to the box at `path`, growing it and every box around it.
fn append(data: &mut Vec<u8>, path: &[&[u8; 4]], child: &[u8]) {
    let (at, size) = find(data, path);
    for depth in 1..=path.len() {
        let (pos, size) = find(data, &path[..depth]);
        put(data, pos, (size + child.len()) as u32);
    }
    data.splice(at + size..at + size, child.iter().copied());
}

/// One forged file: what it claims, and its bytes.
pub struct Forged {
    /// What the claim is, and what the demuxer did with it before the check.
    pub name: &'static str,
    /// A part of the refusal's message.
    pub refusal: &'static str,
    pub data: Vec<u8>,
    /// Whether a live stream of it reaches the claim (its index comes before its media).
    pub live: bool,
}

/// `h264.mp4` (faststart: ftyp, moov, free, mdat) with its `stsz` claiming 33 million samples of 100 bytes
/// and `stsc` 33 million samples a chunk (1.8 GB of index for a 10 KB file).
pub fn forged_sample_tables() -> Vec<u8> {
    let mut data = read_fixture("h264.mp4");
    let stbl = [b"moov", b"trak", b"mdia", b"minf", b"stbl"];
    let (stsz, _) = find(&data, &[&stbl[..], &[b"stsz"]].concat());
    put(&mut data, stsz + 12, 100);
    put(&mut data, stsz + 16, 33_000_000);
    let (stsc, _) = find(&data, &[&stbl[..], &[b"stsc"]].concat());
    put(&mut data, stsc + 20, 33_000_000);
    data
}

/// Every class of claim the check refuses, each in a file made from a fixture.
pub fn forgeries() -> Vec<Forged> {
    let faststart = read_fixture("h264.mp4");
    let stbl: [&[u8; 4]; 5] = [b"moov", b"trak", b"mdia", b"minf", b"stbl"];
    let in_stbl = |kind: &'static [u8; 4]| -> Vec<&'static [u8; 4]> {
        [b"moov", b"trak", b"mdia", b"minf", b"stbl", kind].to_vec()
    };
    let with_child = |path: &[&[u8; 4]], child: Vec<u8>| {
        let mut data = faststart.clone();
        append(&mut data, path, &child);
        data
    };
    let mut trun = read_fixture("h264_fragmented.mp4");
    let (at, _) = find(&trun, &[b"moof", b"traf", b"trun"]);
    put(&mut trun, at + 8, 0x000001); // a data offset, no per-sample fields: every claimed sample is written
    put(&mut trun, at + 12, 80_000_000);
    let mut stsc = faststart.clone();
    let (at, _) = find(&stsc, &in_stbl(b"stsc"));
    put(&mut stsc, at + 20, 0x7000_0000);
    // The first description claims 2 GB past its 175-byte table; its avcC becomes a dref of 2 GB claiming 17
    // million entries, which the demuxer reads without clamping it to the table and zeroes 2 GB for.
    let mut overrun = faststart.clone();
    let (stsd, _) = find(&overrun, &in_stbl(b"stsd"));
    put(&mut overrun, stsd + 16, 0x8000_0100);
    let avcc = stsd + 16 + 86;
    assert_eq!(&overrun[avcc + 4..avcc + 8], b"avcC");
    put(&mut overrun, avcc, 0x7fff_fff0);
    overrun[avcc + 4..avcc + 8].copy_from_slice(b"dref");
    put(&mut overrun, avcc + 8, 0);
    put(&mut overrun, avcc + 12, 17_000_000);
    // HEVC with a sync group for CRA pictures: the demuxer lists the samples its sbgp groups count.
    let mut open_gop = read_fixture("hevc_10bit.mp4");
    let cra = mp4_box(
        b"sgpd",
        &[words(&[0]), b"sync".to_vec(), words(&[1]), vec![21]].concat(),
    );
    let groups = mp4_box(
        b"sbgp",
        &[
            words(&[0]),
            b"sync".to_vec(),
            words(&[2, 0x07ff_ffff, 1, 0x07ff_ffff, 1]),
        ]
        .concat(),
    );
    append(&mut open_gop, &stbl, &cra);
    append(&mut open_gop, &stbl, &groups);
    let mut stco_count = faststart.clone();
    let (at, _) = find(&stco_count, &in_stbl(b"stco"));
    put(&mut stco_count, at + 12, 0x0211_0000);
    let mut short = faststart.clone();
    put(&mut short, stsd + 16, 40); // a video description of 40 bytes (its fields take 86)
    let mut id3 = b"ID3\x04\x00\x00\x00\x00\x00\x0a".to_vec();
    id3.extend([0; 10]);
    id3.extend(forged_sample_tables());
    let hdlr = mp4_box(
        b"hdlr",
        &[words(&[0, 0]), b"mdta".to_vec(), words(&[0, 0, 0])].concat(),
    );
    vec![
        Forged {
            name: "stsz claiming 33 million samples of 100 bytes (libavformat alone: 1.8 GB)",
            refusal: "33000000 samples",
            data: forged_sample_tables(),
            live: true,
        },
        Forged {
            name: "trun claiming 80 million samples without per-sample fields (2.2 GB)",
            refusal: "80000000 samples",
            data: trun,
            live: true,
        },
        Forged {
            name: "sgpd sync group with 2^31 - 16 entries (2.1 GB zeroed)",
            refusal: "sgpd",
            data: with_child(&stbl, mp4_box(b"sgpd", &[words(&[0]), b"sync".to_vec(), words(&[0x7fff_fff0])].concat())),
            live: true,
        },
        Forged {
            name: "mdta keys table claiming 2^27 keys (1.1 GB zeroed)",
            refusal: "keys",
            data: with_child(&[b"moov"], mp4_box(b"meta", &[hdlr, mp4_box(b"keys", &words(&[0, 0x07ff_ffff]))].concat())),
            live: true,
        },
        Forged {
            name: "sbgp sync groups counting 2^28 samples (HEVC open GOPs: 1.1 GB)",
            refusal: "sbgp",
            data: open_gop,
            live: true,
        },
        Forged {
            name: "ctts offsets counting 2^31 samples (listed one by one for HEVC open GOPs)",
            refusal: "ctts",
            data: with_child(&stbl, mp4_box(b"ctts", &words(&[0, 1, 0x7fff_ffff, 0]))),
            live: true,
        },
        Forged {
            name: "stsc chunks of 1.9 billion samples (in a raw audio track, a chunk index of 2.0 GB)",
            refusal: "audio chunk tables",
            data: stsc,
            live: true,
        },
        Forged {
            name: "a sample description claiming 2 GB past its table, holding a dref of 17 million entries (2.0 GB zeroed)",
            refusal: "past the end of its table",
            data: overrun,
            live: true,
        },
        Forged {
            name: "a video sample description shorter than its fields (the next ones read from the wrong place)",
            refusal: "shorter than the 86 bytes",
            data: short,
            live: true,
        },
        Forged {
            name: "stco claiming 34 million chunk offsets in a 16-byte box (a 277 MB allocation; found by fuzzing)",
            refusal: "stco table claims 34668544 entries",
            data: stco_count,
            live: true,
        },
        Forged {
            name: "a compressed movie header (inflated to any size)",
            refusal: "cmov",
            data: with_child(&[b"moov"], mp4_box(b"cmov", &[0; 32])),
            live: true,
        },
        Forged {
            name: "an ID3v2 tag before a forged file (libavformat skips it; a check from byte 0 would not)",
            refusal: "33000000 samples",
            data: id3,
            live: false,
        },
    ]
}
