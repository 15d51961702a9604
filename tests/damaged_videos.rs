//! Damaged videos read through every API: one numbering (an index names a presentation time; a picture that
//! does not decode leaves a hole and renumbers nothing), damage reported per frame, and one damage policy
//! (deliver what decodes by default, fail at the first damage with `strict`).
//!
//! The damage is deterministic, made here on copies of committed fixtures (`tests/fixtures/make.sh`:
//! `damage_*`): bytes overwritten mid-stream, runs zeroed, bit flips, MPEG-TS packets cut out, a file cut
//! short. For each damaged file, the plain run, sampled reads (indices, stride, segments) and the
//! `VideoReader` are asked for the same indices and compared by index, time and picture with each other and
//! with the `ffmpeg` CLI; the guarantee checked: every frame not marked damaged is the same picture in every
//! API and equals the CLI's at the same time.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fixture, md5_hex, missing, skip_without_ffmpeg, Need};
use framefeed::{
    ClipSampler, Config, Encoded, Error, Sampling, VideoError, VideoInput, VideoReader,
};

/// A deterministic generator (xorshift64*): the same damage on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// How a copy is damaged.
#[derive(Debug, Clone, Copy)]
enum Damage {
    /// `len` random bytes written at `at` (a fraction of the file).
    Overwrite { at: f64, len: usize, seed: u64 },
    /// `len` bytes zeroed at `at`.
    Zeroes { at: f64, len: usize },
    /// `count` bits flipped between `from` and the end (fractions of the file).
    BitFlips { from: f64, count: usize, seed: u64 },
    /// `count` MPEG-TS packets (188 bytes) cut out at `at`.
    CutTsPackets { at: f64, count: usize },
    /// Only the first `keep` of the file.
    Truncate { keep: f64 },
}

fn damage(data: &[u8], how: Damage) -> Vec<u8> {
    let mut out = data.to_vec();
    let pos = |f: f64| (out.len() as f64 * f) as usize;
    match how {
        Damage::Overwrite { at, len, seed } => {
            let mut rng = Rng(seed | 1);
            let start = pos(at);
            for b in &mut out[start..start + len] {
                *b = rng.next() as u8;
            }
        }
        Damage::Zeroes { at, len } => {
            let start = pos(at);
            out[start..start + len].fill(0);
        }
        Damage::BitFlips { from, count, seed } => {
            let mut rng = Rng(seed | 1);
            let start = pos(from);
            let span = (out.len() - start) as u64;
            for _ in 0..count {
                let i = start + (rng.next() % span) as usize;
                out[i] ^= 1 << (rng.next() % 8);
            }
        }
        Damage::CutTsPackets { at, count } => {
            let start = pos(at) / 188 * 188;
            out.drain(start..(start + 188 * count).min(out.len()));
        }
        Damage::Truncate { keep } => out.truncate(pos(keep)),
    }
    out
}

/// The damaged copies every test reads: (name, fixture, damage).
fn cases() -> Vec<(&'static str, &'static str, Damage)> {
    vec![
        (
            "mp4_overwritten",
            "damage_h264.mp4",
            Damage::Overwrite {
                at: 0.55,
                len: 400,
                seed: 7,
            },
        ),
        (
            "mp4_zeroed",
            "damage_h264.mp4",
            Damage::Zeroes { at: 0.4, len: 1500 },
        ),
        (
            "mp4_truncated",
            "damage_h264.mp4",
            Damage::Truncate { keep: 0.75 },
        ),
        (
            "mkv_bit_flips",
            "damage_h264.mkv",
            Damage::BitFlips {
                from: 0.3,
                count: 12,
                seed: 3,
            },
        ),
        (
            "ts_packets_cut",
            "damage_h264.ts",
            Damage::CutTsPackets { at: 0.3, count: 2 },
        ),
        (
            "hevc_hit_twice",
            "damage_hevc.mkv",
            Damage::Overwrite {
                at: 0.35,
                len: 150,
                seed: 11,
            },
        ),
        // The same HEVC stream raw (Annex B, no timestamps: frames numbered as the decoder gives them, the
        // reader's index built by decoding it once), hit twice too.
        (
            "hevc_raw_hit_twice",
            "damage_hevc.hevc",
            Damage::Zeroes { at: 0.3, len: 400 },
        ),
        // Bytes of a WebM cluster overwritten: the demuxer skips the blocks it cannot read (their frames are
        // not the video's: nothing indexes them), and libavcodec's VP9 decoder reports nothing of what it
        // decodes from the rest; every API still gives the same pictures as the CLI.
        (
            "vp9_overwritten",
            "damage_vp9.webm",
            Damage::Overwrite {
                at: 0.45,
                len: 150,
                seed: 5,
            },
        ),
        // Damage only the demuxer sees: a Matroska cluster's element sizes overwritten (the demuxer logs an
        // error and skips to the next cluster, losing the rest of this one's frames), and MPEG-TS packets
        // overwritten (continuity errors: lavf marks the PES corrupt, the decoder takes it without a word).
        (
            "mkv_cluster_overwritten",
            "damage_h264.mkv",
            Damage::Overwrite {
                at: 0.45,
                len: 600,
                seed: 1,
            },
        ),
        (
            "webm_cluster_overwritten",
            "damage_vp9.webm",
            Damage::Overwrite {
                at: 0.45,
                len: 600,
                seed: 1,
            },
        ),
        (
            "ts_overwritten",
            "damage_h264.ts",
            Damage::Overwrite {
                at: 0.45,
                len: 600,
                seed: 1,
            },
        ),
    ]
}

/// The damage cases whose every damaged picture is reported (the decoder or the demuxer says so, the data it
/// came from was lost, or its Matroska Cluster's checksum does not match), so that a frame not marked is the
/// picture of the undamaged video: all but a raw stream (no container to say what was lost) and damage
/// that decodes to other pixels without a word where nothing checks the bytes.
const REPORTED: [&str; 8] = [
    "mp4_overwritten",
    // Bits flipped inside a Matroska Cluster: its CRC-32 no longer matches (`demux::matroska_crc`).
    "mkv_bit_flips",
    "mp4_zeroed",
    "mp4_truncated",
    "ts_packets_cut",
    "mkv_cluster_overwritten",
    "webm_cluster_overwritten",
    "ts_overwritten",
];

/// Writes the damaged copy of case `name` into a temporary folder.
fn damaged_file(dir: &Path, name: &str, fixture_name: &str, how: Damage) -> PathBuf {
    let data = std::fs::read(fixture(fixture_name)).unwrap();
    let mut out = damage(&data, how);
    if name.ends_with("hit_twice") {
        // A second hit, further on, in a slice the decoder cannot read.
        out = damage(&out, Damage::Zeroes { at: 0.65, len: 64 });
    }
    let ext = Path::new(fixture_name)
        .extension()
        .unwrap()
        .to_str()
        .unwrap();
    let path = dir.join(format!("{name}.{ext}"));
    std::fs::write(&path, out).unwrap();
    path
}

/// One frame as an API gave it.
#[derive(Debug, Clone, PartialEq)]
struct Got {
    pts: f64,
    md5: String,
    damaged: bool,
}

/// What a decode through `VideoInput` gave: frames by display index, holes, the error and why it ended early.
#[derive(Debug, Default)]
struct Decoded {
    frames: BTreeMap<u64, Got>,
    holes: BTreeSet<u64>,
    error: Option<VideoError>,
    ended_early: Option<String>,
}

fn decode(path: &Path, config: Config) -> Decoded {
    let input = VideoInput::new(config).unwrap();
    input.feed(Encoded::file(path).unwrap()).unwrap();
    input.close();
    let mut out = Decoded::default();
    while let Some(result) = input.next_batch().transpose() {
        match result {
            Ok(batch) => {
                for seq in batch.sequences() {
                    for frame in seq.frames() {
                        let got = Got {
                            pts: frame.pts(),
                            md5: md5_hex(frame.data()),
                            damaged: frame.damaged(),
                        };
                        out.frames.insert(frame.index(), got);
                    }
                    out.holes.extend(seq.holes().iter().map(|h| h.index));
                    if let Some(why) = seq.ended_early() {
                        out.ended_early = Some(why.to_owned());
                    }
                }
            }
            Err(Error::Video { error, .. }) => out.error = Some(error),
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }
    out
}

/// The `ffmpeg` CLI's frames of `path` (rgb24 MD5s) by presentation time in seconds.
fn ffmpeg_by_time(path: &Path) -> Vec<(f64, String)> {
    ffmpeg_by_time_with(path, "2")
}

/// The `ffmpeg` CLI's frames of `path` decoded with `threads` threads, by time.
fn ffmpeg_by_time_with(path: &Path, threads: &str) -> Vec<(f64, String)> {
    let out = Command::new("ffmpeg")
        // `-copyts`: times as the file gives them (an MPEG-TS starts at 1.4 s), as framefeed reports them.
        .args(["-v", "quiet", "-threads", threads, "-copyts", "-i"])
        .arg(path)
        .args(["-fps_mode", "passthrough", "-an", "-pix_fmt", "rgb24"])
        .args(["-f", "framemd5", "-"])
        .output()
        .expect("run ffmpeg");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut tb = 1.0;
    let mut frames = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("#tb 0:") {
            let (n, d) = rest.trim().split_once('/').unwrap();
            tb = n.parse::<f64>().unwrap() / d.parse::<f64>().unwrap();
        } else if !line.starts_with('#') {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let pts: f64 = fields[2].parse().unwrap();
            frames.push((pts * tb, fields[5].to_owned()));
        }
    }
    frames
}

fn same_time(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-3
}

/// The plain run of each damaged copy: no failure by default, every frame not marked damaged equal to the
/// CLI's at its time, the numbering the index's (frames after a hole keep their indices), and the same
/// numbering and pictures through sampled reads and the reader.
#[test]
fn every_door_gives_one_index_one_picture() {
    if skip_without_ffmpeg("damaged videos against the ffmpeg CLI") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut damage_seen = 0;
    for (name, fixture_name, how) in cases() {
        let path = damaged_file(dir.path(), name, fixture_name, how);
        let plain = decode(&path, Config::new(8, 2));
        assert!(
            plain.error.is_none(),
            "{name}: the default delivers what decodes, no failure: {:?}",
            plain.error
        );
        assert!(!plain.frames.is_empty(), "{name}: frames");
        let damaged: Vec<u64> = plain
            .frames
            .iter()
            .filter(|(_, g)| g.damaged)
            .map(|(&i, _)| i)
            .collect();
        if !damaged.is_empty() || !plain.holes.is_empty() || plain.ended_early.is_some() {
            damage_seen += 1;
        }
        // Holes and frames never share an index; a frame's index is never renumbered past a hole: the frames
        // and holes together are 0..n.
        assert!(
            plain.frames.keys().all(|i| !plain.holes.contains(i)),
            "{name}"
        );
        let numbered: BTreeSet<u64> = plain
            .frames
            .keys()
            .chain(plain.holes.iter())
            .copied()
            .collect();
        assert_eq!(
            numbered,
            (0..numbered.len() as u64).collect(),
            "{name}: frames and holes number 0..n"
        );

        // Against the CLI, by time: every frame not marked is the CLI's picture at that time.
        let reference = ffmpeg_by_time(&path);
        let mut compared = 0;
        for (i, got) in plain.frames.iter().filter(|(_, g)| !g.damaged) {
            let theirs = reference.iter().find(|(t, _)| same_time(*t, got.pts));
            let (_, md5) = theirs.unwrap_or_else(|| {
                panic!(
                    "{name}: the CLI has no frame at {:.3} s (index {i})",
                    got.pts
                )
            });
            assert_eq!(
                &got.md5, md5,
                "{name}: frame {i} ({:.3} s), not marked damaged, differs from the CLI's",
                got.pts
            );
            compared += 1;
        }
        assert!(compared > 0, "{name}: undamaged frames compared");

        // Sampled reads (the seeking path): the same indices give the same times, and frames marked in
        // neither give the same pictures; a hole gives no frame.
        let all: Vec<u64> = (0..numbered.len() as u64).collect();
        let apis = [
            ("indices", Sampling::new().indices(all.clone())),
            ("stride", Sampling::new().stride(3).step(8)),
            ("segment", Sampling::new().segment(20, 70)),
        ];
        for (api, sampling) in apis {
            let sampled = decode(&path, Config::new(4, 2).sampling(sampling));
            if api == "segment" && fixture_name.ends_with(".hevc") {
                // Segments need the display order in advance, which a raw stream's packets do not give: a
                // clear refusal (the reader indexes such a stream by decoding it once instead).
                assert!(
                    matches!(sampled.error, Some(VideoError::Sampling { .. })),
                    "{name}: {:?}",
                    sampled.error
                );
                continue;
            }
            assert!(sampled.error.is_none(), "{name} {api}: {:?}", sampled.error);
            assert!(!sampled.frames.is_empty(), "{name} {api}: frames");
            for (i, got) in &sampled.frames {
                assert!(
                    !plain.holes.contains(i),
                    "{name} {api}: a frame at hole {i}"
                );
                let theirs = plain
                    .frames
                    .get(i)
                    .unwrap_or_else(|| panic!("{name} {api}: index {i} is not the plain run's"));
                assert!(
                    same_time(theirs.pts, got.pts),
                    "{name} {api}: index {i} at {:.3} s, the plain run's at {:.3} s",
                    got.pts,
                    theirs.pts
                );
                if !got.damaged && !theirs.damaged {
                    assert_eq!(got.md5, theirs.md5, "{name} {api}: frame {i} differs");
                }
            }
        }

        // The reader: the same length, times and pictures; a hole fails a read naming it.
        let reader = VideoReader::open(Encoded::file(&path).unwrap(), &Config::new(1, 1)).unwrap();
        assert_eq!(reader.len(), numbered.len() as u64, "{name}: reader length");
        let undamaged: Vec<u64> = plain
            .frames
            .iter()
            .filter(|(_, g)| !g.damaged)
            .map(|(&i, _)| i)
            .collect();
        let read = reader.frames_at(&undamaged).unwrap();
        let frame_bytes = read.data().len() / undamaged.len();
        for (k, &i) in undamaged.iter().enumerate() {
            let bytes = &read.data()[k * frame_bytes..(k + 1) * frame_bytes];
            assert!(
                same_time(read.pts_seconds()[k], plain.frames[&i].pts),
                "{name} reader: index {i} time"
            );
            if !read.damaged()[k] {
                assert_eq!(
                    md5_hex(bytes),
                    plain.frames[&i].md5,
                    "{name} reader: frame {i} differs"
                );
            }
        }
        for &hole in &plain.holes {
            let error = reader.frames_at(&[hole]).unwrap_err().to_string();
            assert!(
                error.contains(&format!("display index {hole} (")) && error.contains("no picture"),
                "{name}: reading hole {hole}: {error}"
            );
            assert!(reader.holes().iter().any(|h| h.index == hole), "{name}");
        }
        println!(
            "{name}: {} frames ({} damaged), holes {:?}, ended early: {}; {compared} compared with ffmpeg",
            plain.frames.len(),
            damaged.len(),
            plain.holes,
            plain.ended_early.is_some()
        );
    }
    assert!(
        damage_seen >= 5,
        "the damage shows in most cases ({damage_seen})"
    );
}

/// A frame not marked damaged is the picture the undamaged video has at its time: every damaged picture is
/// marked, where the decoder or the demuxer reports the damage (concealment, rejected data, packets the demuxer
/// marks corrupt or skipped).
#[test]
fn frames_not_marked_damaged_are_the_undamaged_videos_pictures() {
    let dir = tempfile::tempdir().unwrap();
    for (name, fixture_name, how) in cases() {
        if !REPORTED.contains(&name) {
            continue;
        }
        let path = damaged_file(dir.path(), name, fixture_name, how);
        let damaged = decode(&path, Config::new(8, 2));
        let whole = decode(&fixture(fixture_name), Config::new(8, 2));
        let by_time: Vec<&Got> = whole.frames.values().collect();
        let (mut compared, mut marked) = (0, 0);
        for (i, got) in &damaged.frames {
            if got.damaged {
                marked += 1;
                continue;
            }
            let Some(original) = by_time.iter().find(|o| same_time(o.pts, got.pts)) else {
                panic!(
                    "{name}: frame {i} at {:.3} s is no time of the undamaged video",
                    got.pts
                );
            };
            assert_eq!(
                got.md5, original.md5,
                "{name}: frame {i} ({:.3} s), not marked damaged, is not the undamaged video's picture",
                got.pts
            );
            compared += 1;
        }
        assert!(compared > 0, "{name}: frames compared");
        assert!(
            marked > 0 || !damaged.holes.is_empty() || damaged.ended_early.is_some(),
            "{name}: the damage shows"
        );
        println!(
            "{name}: {compared} frames equal to the undamaged video's, {marked} marked damaged"
        );
    }
}

/// `strict`: the video fails at its first damage, after the frames before it; the same in the plain run,
/// sampled reads and the reader.
#[test]
fn strict_fails_at_the_first_damage() {
    if skip_without_ffmpeg("strict decoding of damaged videos") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (name, fixture_name, how) = cases()[0];
    let path = damaged_file(dir.path(), name, fixture_name, how);
    for (api, sampling) in [
        ("plain", Sampling::new()),
        (
            "indices",
            Sampling::new().indices((0..90).collect::<Vec<_>>()),
        ),
    ] {
        // The API's own damage, by default: where strict must stop.
        let lenient = decode(&path, Config::new(8, 2).sampling(sampling.clone()));
        assert!(lenient.error.is_none(), "{api}: {:?}", lenient.error);
        let first_damage = lenient
            .frames
            .iter()
            .filter(|(_, g)| g.damaged)
            .map(|(&i, _)| i)
            .chain(lenient.holes.iter().copied())
            .min()
            .expect("the case is damaged");
        let strict = decode(&path, Config::new(8, 2).strict(true).sampling(sampling));
        let error = strict
            .error
            .unwrap_or_else(|| panic!("{api}: strict fails"));
        assert!(
            matches!(
                error,
                VideoError::Damaged { .. } | VideoError::Corrupt { .. } | VideoError::Demux { .. }
            ),
            "{api}: {error:?}"
        );
        // What frame threading reports of a damaged picture reaches the frames decoded before it as they come
        // (the mark errs on the safe side): the first damaged frame varies a little from run to run, the hole
        // (a picture that does not decode) does not.
        let hole = *lenient.holes.first().expect("the case has a hole");
        assert!(first_damage <= hole, "{api}");
        assert!(
            strict.frames.keys().all(|&i| i < hole),
            "{api}: only frames before the first damage are delivered"
        );
        assert!(
            strict.frames.values().all(|g| !g.damaged),
            "{api}: no damaged frame delivered"
        );
        assert!(
            strict.holes.is_empty(),
            "{api}: no hole reported, the video failed there"
        );
    }
    let reader = VideoReader::open(
        Encoded::file(&path).unwrap(),
        &Config::new(1, 1).strict(true),
    )
    .unwrap();
    assert!(reader.frames_at(&[0, 1]).is_ok(), "undamaged frames read");
    let all: Vec<u64> = (0..reader.len()).collect();
    assert!(
        reader.frames_at(&all).is_err(),
        "a read meeting damage fails"
    );
}

/// A file cut short: the reader counts only the samples whose data is there, and the plain run numbers
/// frames the same way.
#[test]
fn lengths_hold_for_a_file_cut_short() {
    let data = std::fs::read(fixture("damage_h264.mp4")).unwrap();
    let cut = damage(&data, Damage::Truncate { keep: 0.6 });
    let reader = VideoReader::open(cut.clone(), &Config::new(1, 1)).unwrap();
    let full = VideoReader::open(data, &Config::new(1, 1)).unwrap();
    assert_eq!(full.len(), 100);
    assert!(
        reader.len() < 75,
        "samples past the end are not counted: {}",
        reader.len()
    );
    let input = VideoInput::new(Config::new(200, 1)).unwrap();
    input.feed(cut).unwrap();
    input.close();
    let batch = input.next_batch().unwrap().expect("a batch");
    let seq = batch.sequence(0);
    let last = seq.indices().last().copied().unwrap();
    let holes = seq.holes().len() as u64;
    assert!(
        last < reader.len(),
        "plain run's last index {last} within the reader's {}",
        reader.len()
    );
    assert_eq!(
        seq.valid_frames() as u64 + holes,
        last + 1 + seq.holes().iter().filter(|h| h.index > last).count() as u64,
        "frames and holes number 0..n"
    );
    // Every undamaged frame of the plain run reads the same through the reader.
    let undamaged: Vec<u64> = seq
        .indices()
        .iter()
        .zip(seq.damaged())
        .filter(|(_, &d)| !d)
        .map(|(&i, _)| i)
        .collect();
    let read = reader.frames_at(&undamaged).unwrap();
    let n = undamaged.len();
    let bytes = read.data().len() / n;
    for (k, &i) in undamaged.iter().enumerate() {
        let pos = seq.indices().iter().position(|&x| x == i).unwrap();
        let plain = seq.frames().nth(pos).unwrap();
        assert_eq!(
            md5_hex(&read.data()[k * bytes..(k + 1) * bytes]),
            md5_hex(plain.data()),
            "frame {i}"
        );
    }
    if !common::ffmpeg_available() {
        missing(
            Need::Ffmpeg,
            "the cut file against ffmpeg",
            "ffmpeg is absent",
        );
    }
}

/// The `ffmpeg` CLI's frames of `path` decoded on one thread (`-threads 1`: the decode that gives the same
/// pictures every run), rgb24 MD5s by presentation time in seconds.
fn ffmpeg_one_thread(path: &Path) -> Vec<(f64, String)> {
    ffmpeg_by_time_with(path, "1")
}

/// Everything one decode gave, to compare run with run: (index, time in µs, MD5, damaged) of each frame, then
/// the holes, then the error.
fn signature(decoded: &Decoded) -> String {
    let mut out = String::new();
    for (i, g) in &decoded.frames {
        out += &format!("{i} {} {} {}\n", (g.pts * 1e6).round(), g.md5, g.damaged);
    }
    out += &format!("holes {:?}\nerror {:?}\n", decoded.holes, decoded.error);
    out
}

/// What the reader gave for every index it has: (index, time in µs, MD5, damaged), holes skipped.
fn reader_signature(path: &Path, threads: usize) -> String {
    let reader = VideoReader::open(
        Encoded::file(path).unwrap(),
        &Config::new(1, 1).decoder_threads(threads),
    )
    .unwrap();
    // Holes show as a read meets them: each read that fails at one is tried again without it, on the same reader
    // (a read after a failed one decodes as a new reader would: `hevc_hit_twice` differed here before).
    let mut holes: BTreeSet<u64> = reader.holes().iter().map(|h| h.index).collect();
    let (indices, read) = loop {
        let indices: Vec<u64> = (0..reader.len()).filter(|i| !holes.contains(i)).collect();
        match reader.frames_at(&indices) {
            Ok(read) => break (indices, read),
            Err(Error::Video {
                error: VideoError::Hole { index, .. },
                ..
            }) if holes.insert(index) => {}
            Err(e) => panic!("{}: {e}", path.display()),
        }
    };
    let bytes = read.data().len() / indices.len().max(1);
    let mut out = String::new();
    for (k, &i) in indices.iter().enumerate() {
        let md5 = md5_hex(&read.data()[k * bytes..(k + 1) * bytes]);
        let pts = (read.pts_seconds()[k] * 1e6).round();
        out += &format!("{i} {pts} {md5} {}\n", read.damaged()[k]);
    }
    out + &format!("holes {holes:?}\n")
}

/// Runs of each API, with two and with four decoder threads.
const RUNS: usize = 20;

/// The same output every run (issue 73): every damaged copy decoded 20 times through every API with two and
/// with four frame threads gives the same pictures, the same damage marks and the same holes every time, and
/// every picture, marked or not, is the `ffmpeg` CLI's single-threaded decode's at its time (the decode
/// frame threads reach when damage is seen: that GOP is decoded again on one thread).
#[test]
fn damaged_output_is_the_same_every_run_and_is_the_one_thread_decode() {
    if skip_without_ffmpeg("damaged videos against the ffmpeg CLI's one-thread decode") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, fixture_name, how) in cases() {
        let path = damaged_file(dir.path(), name, fixture_name, how);
        let reference = ffmpeg_one_thread(&path);
        let mut plain_runs = BTreeSet::new();
        let mut first: Option<Decoded> = None;
        for threads in [2, 4] {
            for _ in 0..RUNS {
                let plain = decode(&path, Config::new(8, 2).decoder_threads(threads));
                plain_runs.insert(signature(&plain));
                first.get_or_insert(plain);
            }
        }
        let plain = first.unwrap();
        assert_eq!(
            plain_runs.len(),
            1,
            "{name}: {} different outputs of the plain run in {} runs:\n{}",
            plain_runs.len(),
            2 * RUNS,
            plain_runs
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join("\n---\n")
        );
        // Every picture, marked damaged or not, is the one-thread decode's at its time.
        for (i, got) in &plain.frames {
            let theirs = reference.iter().find(|(t, _)| same_time(*t, got.pts));
            let (_, md5) = theirs.unwrap_or_else(|| {
                panic!(
                    "{name}: ffmpeg -threads 1 has no frame at {:.3} s (index {i})",
                    got.pts
                )
            });
            assert_eq!(
                &got.md5, md5,
                "{name}: frame {i} ({:.3} s, damaged: {}) is not ffmpeg -threads 1's",
                got.pts, got.damaged
            );
        }
        // Sampled reads: the same every run, and the same frames as the plain run by index.
        let all: Vec<u64> = plain.frames.keys().copied().collect();
        let apis = [
            ("indices", Sampling::new().indices(all.clone())),
            (
                "clips",
                Sampling::new().clips(6, ClipSampler::Random).seed(9),
            ),
        ];
        for (api, sampling) in apis {
            let mut runs = BTreeSet::new();
            let mut one = None;
            for threads in [2, 4] {
                for _ in 0..RUNS {
                    let config = Config::new(5, 2).decoder_threads(threads);
                    let sampled = decode(&path, config.sampling(sampling.clone()));
                    runs.insert(signature(&sampled));
                    one.get_or_insert(sampled);
                }
            }
            assert_eq!(
                runs.len(),
                1,
                "{name} {api}: {} different outputs",
                runs.len()
            );
            for (i, got) in &one.unwrap().frames {
                assert_eq!(Some(got), plain.frames.get(i), "{name} {api}: frame {i}");
            }
        }
        // The reader: the same every run, and the plain run's frames.
        let mut runs = BTreeSet::new();
        for threads in [2, 4] {
            for _ in 0..RUNS {
                runs.insert(reader_signature(&path, threads));
            }
        }
        assert_eq!(
            runs.len(),
            1,
            "{name} reader: {} different outputs",
            runs.len()
        );
        let read = runs.into_iter().next().unwrap();
        let mut differ = Vec::new();
        for line in read.lines().filter(|l| !l.starts_with("holes")) {
            let mut f = line.split(' ');
            let i: u64 = f.next().unwrap().parse().unwrap();
            let (_, md5, damaged) = (f.next(), f.next().unwrap(), f.next().unwrap());
            let theirs = plain
                .frames
                .get(&i)
                .unwrap_or_else(|| panic!("{name} reader: index {i}"));
            if md5 != theirs.md5 || (damaged == "true") != theirs.damaged {
                assert!(
                    theirs.damaged || damaged == "true",
                    "{name} reader: frame {i}, undamaged in both, differs"
                );
                differ.push(i);
            }
        }
        assert!(
            differ.is_empty(),
            "{name} reader: damaged frames {differ:?} differ from the plain run's"
        );
        let marked = plain.frames.values().filter(|g| g.damaged).count();
        println!(
            "{name}: {} frames ({marked} damaged), holes {:?}: the same in {} runs of each API, all ffmpeg -threads 1's",
            plain.frames.len(),
            plain.holes,
            4 * RUNS
        );
    }
}
