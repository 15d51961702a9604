//! Random access ([`VideoReader`]): every method's frames are the `ffmpeg` CLI's at the indices they report (open
//! GOPs, a B-pyramid, an edit list, variable frame rate, rotation, 10-bit, a change of size, a damaged start);
//! times map to the frames shown then; reading forward goes on without decoding a packet twice; one reader is
//! shared by threads; bad input and bad requests fail with clear errors; the shared corpus's real clips read at
//! random are the CLI's frames, and its damaged one fails only the reads that ask for its missing frame.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use framefeed::{
    Config, Crop, Encoded, Error, Orientation, Resize, Transforms, VideoError, VideoReader,
};

/// The fixtures random access must get right, each with its frame count's source (the CLI's frames).
const VIDEOS: [&str; 9] = [
    "sampling_h264_open_gop.mp4",
    "sampling_hevc_open_gop.mp4",
    "sampling_edit_list.mp4",
    "sampling_vfr.mp4",
    "sampling_hevc10_open_gop_192x144.mp4",
    "rotated_90.mp4",
    "transverse.mp4",
    "cut_start.ts",
    "vp9.webm",
];

fn open(path: &Path) -> VideoReader {
    VideoReader::open(Encoded::file(path).unwrap(), &Config::new(1, 1)).unwrap()
}

/// The MD5 of each frame a read gave, in order.
/// Each frame of a read is the CLI's frame at its index (`reference`: the CLI's MD5s in display order).
fn assert_frames_are(reference: &[String], frames: &framefeed::Frames, what: &str) {
    let want: Vec<&String> = frames
        .indices()
        .iter()
        .map(|&i| &reference[i as usize])
        .collect();
    assert_eq!(md5s(frames).iter().collect::<Vec<_>>(), want, "{what}");
}

fn md5s(frames: &framefeed::Frames) -> Vec<String> {
    let [n, ..] = frames.shape();
    let per = frames.data().len() / n.max(1);
    frames
        .data()
        .chunks(per.max(1))
        .take(n)
        .map(md5_hex)
        .collect()
}

#[test]
fn every_read_gives_ffmpegs_frames_at_its_indices() {
    if skip_without_ffmpeg("the random access conformance") {
        return;
    }
    for name in VIDEOS {
        let path = fixture(name);
        let reference = ffmpeg_md5s(&path, &[], None);
        let reader = open(&path);
        let n = reference.len() as u64;
        assert_eq!(reader.len(), n, "{name}: frame count");
        let check = |what: &str, frames: framefeed::Frames| {
            assert_frames_are(&reference, &frames, &format!("{name}: {what}"))
        };
        // Every frame in order, one at a time (reads going on forward), then all at once.
        for i in 0..n {
            let one = reader.frames_at(&[i]).unwrap();
            assert_eq!(one.indices(), &[i]);
            check("one at a time", one);
        }
        check("all", reader.frames_in_range(0, n, 1).unwrap());
        // Any order, repeats, backwards, a stride.
        let scattered = [n - 1, 0, n / 2, n / 2, 1, n - 2, 3];
        check("scattered", reader.frames_at(&scattered).unwrap());
        check("strided", reader.frames_in_range(1, n, 3).unwrap());
        // By time: each frame's own time gives it back; the range of the whole video, every frame.
        let all = reader.frames_in_range(0, n, 1).unwrap();
        let times: Vec<f64> = all.pts_seconds().to_vec();
        let at = reader.frames_played_at(&times).unwrap();
        assert_eq!(at.indices(), all.indices(), "{name}: a frame's own time");
        check("played at", at);
        let meta = reader.metadata();
        let whole = reader
            .frames_played_in_range(meta.begin_stream_seconds, meta.end_stream_seconds())
            .unwrap();
        assert_eq!(
            whole.indices(),
            all.indices(),
            "{name}: the whole time range"
        );
        // Halfway through a frame's display: that frame.
        let mid: Vec<f64> = times.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
        let shown = reader.frames_played_at(&mid).unwrap();
        assert_eq!(shown.indices(), &all.indices()[..mid.len()], "{name}");
        println!("{name}: {n} frames, every read exact");
    }
}

#[test]
fn metadata_is_known_without_decoding_and_turned_videos_report_their_shown_size() {
    let reader = VideoReader::open(framefeed::SAMPLE_MP4, &Config::new(1, 1)).unwrap();
    let m = reader.metadata();
    assert_eq!((m.num_frames, m.width, m.height), (60, 320, 240));
    assert_eq!(m.codec, "h264");
    assert!((m.average_fps - 30.0).abs() < 1e-9);
    assert!(
        (m.duration_seconds - 2.0).abs() < 1e-6,
        "{}",
        m.duration_seconds
    );
    assert_eq!(m.key_frame_indices, vec![0, 30]);
    assert_eq!((m.rotation, m.orientation), (None, Orientation::Upright));
    assert_eq!(reader.packets_decoded(), 0, "opening decodes nothing");
    let turned = open(&fixture("rotated_90.mp4"));
    let m = turned.metadata();
    assert_eq!(
        (m.width, m.height, m.orientation),
        (60, 100, Orientation::Rotate270)
    );
    assert_eq!(m.rotation, Some(90.0));
    assert_eq!(turned.frames_at(&[0]).unwrap().shape(), [1, 100, 60, 3]);
    let coded = VideoReader::open(
        Encoded::file(fixture("rotated_90.mp4")).unwrap(),
        &Config::new(1, 1).autorotate(false),
    )
    .unwrap();
    assert_eq!((coded.metadata().width, coded.metadata().height), (100, 60));
    // A damaged start: the frames a full decode gives, from the first keyframe's.
    let cut = open(&fixture("cut_start.ts"));
    assert_eq!(cut.len(), 36);
}

/// Reading forward goes on where the decoder stands: every frame one read at a time decodes each packet once,
/// as one read of them all does; going back seeks (to the GOP's keyframe, not the video's start).
#[test]
fn reading_forward_goes_on_without_a_seek() {
    let reader = VideoReader::open(framefeed::SAMPLE_MP4, &Config::new(1, 1)).unwrap();
    for i in 0..60 {
        reader.frames_at(&[i]).unwrap();
    }
    assert_eq!(reader.packets_decoded(), 60, "each packet once");
    let before = reader.packets_decoded();
    reader.frames_at(&[35]).unwrap(); // back, into the second GOP (keyframe 30)
    let sought = reader.packets_decoded() - before;
    // Frames 30..35 and the reorder and thread delay, and a few more: with frame threads a frame is held
    // until the packets before it in decode order have given their pictures (`decode::steady`): from the
    // start it would be 36 or more.
    assert!(
        (6..=14).contains(&sought),
        "{sought} packets for a frame 5 after its keyframe"
    );
    let before = reader.packets_decoded();
    reader.frames_at(&[36, 37]).unwrap();
    // On from 35, no seek: two packets at most (none when the frames held past 35 already gave them).
    let on = reader.packets_decoded() - before;
    assert!(on <= 2, "on from 35: {on} packets");
}

#[test]
fn transforms_type_and_layout_apply_to_reads_as_to_the_operator() {
    let t = Transforms::new()
        .resize(Resize::Shorter(120))
        .crop(Crop::new(96, 96))
        .dtype(framefeed::DType::F32)
        .layout(framefeed::Layout::Cfhw);
    let reader = VideoReader::open(
        framefeed::SAMPLE_MP4,
        &Config::new(1, 1).transforms(t.clone()),
    )
    .unwrap();
    let frames = reader.frames_at(&[0, 1, 2]).unwrap();
    assert_eq!(frames.shape(), [3, 3, 96, 96]);
    // The operator's sequence of the same frames (one window for the sequence, the same first frame).
    let input = framefeed::VideoInput::new(Config::new(3, 1).transforms(t)).unwrap();
    input.feed(framefeed::SAMPLE_MP4).unwrap();
    input.close();
    let batch = input.next_batch().unwrap().unwrap();
    assert_eq!(
        batch.data_f32().unwrap(),
        frames.batch().data_f32().unwrap()
    );
}

#[test]
fn one_reader_shared_by_threads_gives_each_its_frames() {
    let reader = Arc::new(VideoReader::open(framefeed::SAMPLE_MP4, &Config::new(1, 1)).unwrap());
    let alone: Vec<Vec<u8>> = (0..4u64)
        .map(|t| {
            reader
                .frames_at(&[t * 13, t * 13 + 2])
                .unwrap()
                .data()
                .to_vec()
        })
        .collect();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let reader = reader.clone();
            std::thread::spawn(move || {
                (0..5)
                    .map(|_| {
                        reader
                            .frames_at(&[t * 13, t * 13 + 2])
                            .unwrap()
                            .data()
                            .to_vec()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (t, handle) in threads.into_iter().enumerate() {
        for got in handle.join().unwrap() {
            assert!(got == alone[t], "thread {t}");
        }
    }
}

#[test]
fn bad_input_and_bad_requests_fail_clearly() {
    let sampling = |e: Error| match e {
        Error::Video {
            error: VideoError::Sampling { reason },
            ..
        } => reason,
        other => panic!("{other:?}"),
    };
    let reader = VideoReader::open(
        Encoded::new(framefeed::SAMPLE_MP4).label("sample"),
        &Config::new(1, 1),
    )
    .unwrap();
    let past = sampling(reader.frames_at(&[3, 60]).unwrap_err());
    assert_eq!(
        past,
        "frame index 60 is past the video's last frame (60 frames: 0 to 59)"
    );
    assert!(sampling(reader.frames_in_range(5, 61, 1).unwrap_err()).contains("stop <= 60"));
    assert!(sampling(reader.frames_in_range(0, 5, 0).unwrap_err()).contains("step >= 1"));
    assert!(sampling(reader.frames_played_at(&[2.5]).unwrap_err())
        .contains("no frame is shown at 2.5 s"));
    assert!(
        sampling(reader.frames_played_in_range(1.0, 0.5).unwrap_err()).contains("start <= stop")
    );
    assert!(reader.frames_at(&[]).unwrap().is_empty());
    assert_eq!(reader.frames_at(&[]).unwrap().shape(), [0, 240, 320, 3]);
    // Still reads after refusals.
    assert_eq!(reader.frames_at(&[59]).unwrap().indices(), &[59]);
    // Not a video.
    match VideoReader::open(&b"not a video at all"[..], &Config::new(1, 1)) {
        Err(Error::Video {
            error: VideoError::NotAVideo(_),
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // A change of size in one read, without a resize to one size.
    let two = open(&fixture("res_change.ts"));
    assert!(sampling(two.frames_at(&[0, 40]).unwrap_err()).contains("two sizes"));
    assert_eq!(two.frames_at(&[40, 41]).unwrap().shape(), [2, 48, 64, 3]);
}

/// Raw elementary streams (Annex-B H.264 and HEVC, no timestamps; one changing size): indexed by decoding them
/// once, read by index in any order, each frame the CLI's at that index and at the plain run's time, with the
/// plain run's length.
#[test]
fn raw_elementary_streams_read_by_index() {
    if skip_without_ffmpeg("raw streams read by index") {
        return;
    }
    for name in ["h264.h264", "hevc.hevc", "res_change.h264"] {
        let path = fixture(name);
        let reference = ffmpeg_md5s(&path, &[], None);
        let plain = decode_file(&path, Config::new(1000, 1));
        let indices: Vec<u64> = plain.iter().flat_map(|s| s.indices.clone()).collect();
        let n = reference.len() as u64;
        assert_eq!(
            indices,
            (0..n).collect::<Vec<_>>(),
            "{name}: the plain run's numbering"
        );
        let reader = open(&path);
        assert_eq!(reader.len(), n, "{name}: length");
        let size_of = |i: u64| reader.frames_at(&[i]).unwrap().shape();
        for read in [
            vec![n - 1, 0, n / 2, n / 3, n / 3, 1],
            (0..n).rev().step_by(4).collect::<Vec<_>>(),
        ] {
            for &i in &read {
                assert_frames_are(
                    &reference,
                    &reader.frames_at(&[i]).unwrap(),
                    &format!("{name} {i}"),
                );
            }
            // Several at once where they share a size.
            let same: Vec<u64> = read
                .iter()
                .copied()
                .filter(|&i| size_of(i) == size_of(0))
                .collect();
            assert_frames_are(&reference, &reader.frames_at(&same).unwrap(), name);
        }
        let input = framefeed::VideoInput::new(Config::new(1000, 1)).unwrap();
        input.feed(Encoded::file(&path).unwrap()).unwrap();
        input.close();
        let batch = input.next_batch().unwrap().unwrap();
        let times = batch.sequence(0).pts().to_vec();
        let read = reader.frames_at(&[0, 5, 9]).unwrap();
        for (k, &i) in [0usize, 5, 9].iter().enumerate() {
            assert!(
                (read.pts_seconds()[k] - times[i]).abs() < 1e-6,
                "{name}: frame {i} at {} s, the plain run's at {} s",
                read.pts_seconds()[k],
                times[i]
            );
        }
        println!("{name}: {n} frames, read by index exactly");
    }
}

/// A video that changes size (26 frames of 96x64, then 22 of 64x48): each read within one size gives the CLI's
/// frames at their own size, by index, by range and by time, read one at a time, all at once, and across the
/// change from either side.
#[test]
fn a_change_of_size_gives_each_frame_at_its_own_size() {
    if skip_without_ffmpeg("the size change conformance") {
        return;
    }
    let path = fixture("res_change.ts");
    let reference = ffmpeg_md5s(&path, &[], None);
    let reader = open(&path);
    assert_eq!(reader.len(), reference.len() as u64);
    let n = reader.len();
    let expect = |frames: &framefeed::Frames, size: [usize; 2]| {
        assert_eq!(frames.shape()[1..3], size);
        let want: Vec<&String> = frames
            .indices()
            .iter()
            .map(|&i| &reference[i as usize])
            .collect();
        assert_eq!(md5s(frames).iter().collect::<Vec<_>>(), want);
    };
    let size_of = |i: u64| if i < 26 { [64, 96] } else { [48, 64] };
    for i in 0..n {
        expect(&reader.frames_at(&[i]).unwrap(), size_of(i));
    }
    // Backwards over the change, one at a time: each from its own keyframe.
    for i in (0..n).rev().step_by(5) {
        expect(&reader.frames_at(&[i]).unwrap(), size_of(i));
    }
    expect(&reader.frames_in_range(0, 26, 1).unwrap(), [64, 96]);
    expect(&reader.frames_in_range(26, n, 3).unwrap(), [48, 64]);
    expect(&reader.frames_at(&[47, 30, 26, 30]).unwrap(), [48, 64]);
    let times = reader.frames_in_range(20, 32, 1).unwrap_err();
    assert!(times.to_string().contains("two sizes"), "{times}");
    let before = reader.frames_in_range(0, 26, 1).unwrap();
    let again = reader.frames_played_at(before.pts_seconds()).unwrap();
    assert_eq!(again.indices(), before.indices());
    expect(&again, [64, 96]);
}

/// The shared corpus (`../shared/videos`, real clips from other projects' tests: AV1, VP8, VP9, MPEG-4 Part 2,
/// HEVC, 10-bit H.264, odd sizes, 9,000 frames, phone clips turned by a display matrix): each video's frame count
/// is the CLI's, and reads at random (backwards, repeats, a stride, one frame at a time going on forward) give the
/// CLI's frames byte for byte; the damaged clip gives the frames before its damage and fails clearly past it.
#[test]
fn corpus_videos_read_at_random_are_the_clis_frames() {
    let Some(dir) = corpus("the corpus random access conformance") else {
        return;
    };
    if skip_without_ffmpeg("the corpus random access conformance") {
        return;
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap()).unwrap();
    let mut names: Vec<String> = manifest
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap().to_owned())
        .collect();
    names.extend([
        "rotated/video_180.mov".into(),
        "rotated/video_270.mov".into(),
    ]);
    for name in names {
        let path = dir.join(&name);
        let reference = ffmpeg_md5s(&path, &[], None);
        let reader = open(&path);
        let n = reference.len() as u64;
        let check = |what: &str, frames: framefeed::Frames| {
            assert_frames_are(&reference, &frames, &format!("{name}: {what}"))
        };
        if name.starts_with("corrupted") {
            // decord's damaged clip: the container has 50 pictures; the decoder rejects the packet of display
            // index 30 (the CLI decodes 49). The frames before it that do not refer to it are the CLI's (29, a
            // B-frame predicted from 30, is concealed as the decoder can); a read that asks for frame 30 fails
            // naming it, alone or in a range; the frames after it still read, and so does all before.
            assert_eq!(reader.len(), n + 1, "{name}: the container's pictures");
            check(
                "before the damage",
                reader.frames_in_range(0, 29, 1).unwrap(),
            );
            let missing = "display index 30 (3.000 s) has no picture";
            for read in [reader.frames_in_range(0, n + 1, 1), reader.frames_at(&[30])] {
                let error = read.unwrap_err().to_string();
                assert!(error.contains(missing), "{name}: {error}");
            }
            let after = reader.frames_at(&[31, n]).unwrap();
            assert_eq!(after.shape(), [2, 720, 1280, 3]);
            check(
                "again after the failure",
                reader.frames_at(&[28, 3, 0]).unwrap(),
            );
            println!("{name}: the frames before its damage exact, frame 30 missing, the rest read");
            continue;
        }
        assert_eq!(reader.len(), n, "{name}: frame count");
        check(
            "scattered",
            reader
                .frames_at(&[n - 1, 0, n / 2, n / 3, n / 3, 1, n - 2])
                .unwrap(),
        );
        check(
            "strided",
            reader.frames_in_range(n / 4, n, (n / 9).max(1)).unwrap(),
        );
        for i in n / 2..(n / 2 + 12).min(n) {
            check("going on forward", reader.frames_at(&[i]).unwrap());
        }
        println!("{name}: {n} frames, reads exact");
    }
}

/// A file served over HTTP is read like the file, by byte ranges (`source::remote`; tests/remote_videos.rs
/// counts the bytes on a real server), from a server that takes range requests and from one that ignores them
/// (read through once).
#[test]
fn a_url_served_with_range_requests_reads_like_the_file() {
    use framefeed::{Scheme, UrlOptions};
    let path = fixture("sampling_h264_open_gop.mp4");
    let data = std::fs::read(&path).unwrap();
    let file = open(&path);
    let want = file.frames_at(&[140, 3, 77]).unwrap();
    let want = want.data();
    let options = || UrlOptions::new().schemes([Scheme::Http]);
    let (port, _) = serve_http(data.clone(), true);
    let url = format!("http://127.0.0.1:{port}/clip.mp4");
    let reader = VideoReader::open_url(&url, options(), &Config::new(1, 1)).unwrap();
    assert_eq!(reader.len(), 150);
    // The last GOP, then back to the first.
    let last = reader.frames_at(&[140]).unwrap();
    let back = reader.frames_at(&[3, 77]).unwrap();
    assert!([last.data(), back.data()].concat() == want);
    // A server that ignores Range: read through once, the same frames.
    let (port, _) = serve_http(data, false);
    let through = VideoReader::open_url(
        format!("http://127.0.0.1:{port}/clip.mp4"),
        options(),
        &Config::new(1, 1),
    )
    .unwrap();
    assert!(through.frames_at(&[140, 3, 77]).unwrap().data() == want);
}
