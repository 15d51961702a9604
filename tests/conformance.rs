//! Conformance against the shared corpus (`../shared/videos`): frame counts equal MANIFEST.json and every
//! frame matches the `ffmpeg` CLI's own rgb24 decode (PSNR >= 35 dB for 8-bit sources, >= 25 dB for 10-bit).
//! Awkward videos (turned by a display matrix, a damaged start, a change of frame size), whole and in every
//! sampling mode: every frame byte for byte the CLI's at the index framefeed reports.

mod common;

use common::*;
use std::path::{Path, PathBuf};

use framefeed::{ClipSampler, Config, Encoded, Error, Sampling, VideoInput};
use serde_json::Value;

struct Expected {
    frames: u64,
    ten_bit: bool,
}

/// The manifest's entry for the stream framefeed decodes (the one with the decoded frame size).
fn expected(entry: &Value, width: usize, height: usize) -> Expected {
    let stream = entry["video_streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["width"].as_u64() == Some(width as u64) && s["height"].as_u64() == Some(height as u64)
        })
        .unwrap_or_else(|| panic!("{}: no manifest stream of {width}x{height}", entry["file"]));
    Expected {
        frames: stream["nb_read_frames"].as_str().unwrap().parse().unwrap(),
        ten_bit: stream["pix_fmt"].as_str().unwrap().contains("10"),
    }
}

#[test]
fn every_corpus_video_matches_ffmpeg() {
    let Some(dir) = corpus("the corpus conformance test") else {
        return;
    };
    if skip_without_ffmpeg("the corpus conformance test") {
        return;
    }
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap()).unwrap();
    let mut checked = 0;
    for entry in manifest.as_array().unwrap() {
        let name = entry["file"].as_str().unwrap();
        let path = dir.join(name);
        let long = name.contains("9000f");
        let input = VideoInput::new(Config::new(8, 4).decoder_threads(2)).unwrap();
        input.feed((std::fs::read(&path).unwrap(), name)).unwrap();
        input.close();
        let mut reference = FfmpegFrames::open(&path);
        let (mut frames, mut min_db, mut error, mut shape) = (0u64, f64::INFINITY, None, [0; 3]);
        // Holes met so far: a damaged video's frames after one keep their indices (one past the count).
        let mut holes: Vec<u64> = Vec::new();
        while let Some(result) = input.next_batch().transpose() {
            let batch = match result {
                Ok(batch) => batch,
                Err(Error::Video { error: e, .. }) => {
                    error = Some(e);
                    continue;
                }
                Err(e) => panic!("{name}: {e}"),
            };
            shape = batch.frame_shape();
            for seq in batch.sequences() {
                holes.extend(seq.holes().iter().map(|h| h.index));
                for frame in seq.frames() {
                    let before = holes.iter().filter(|&&h| h < frame.index()).count() as u64;
                    assert_eq!(frame.index(), frames + before, "{name}: frame index");
                    let theirs = reference
                        .next_frame(frame.data().len())
                        .unwrap_or_else(|| panic!("{name}: ffmpeg has no frame {frames}"));
                    // The 9000-frame video: every 10th frame keeps the debug-build test quick.
                    if !long || frames % 10 == 0 {
                        min_db = min_db.min(psnr(frame.data(), &theirs));
                    }
                    frames += 1;
                }
            }
        }
        assert_eq!(
            reference.remaining(),
            0,
            "{name}: ffmpeg decoded more frames than framefeed ({frames})"
        );
        let want = expected(entry, shape[1], shape[0]);
        assert_eq!(
            frames, want.frames,
            "{name}: frame count against MANIFEST.json"
        );
        let floor = if want.ten_bit { 25.0 } else { 35.0 };
        assert!(min_db >= floor, "{name}: PSNR {min_db:.1} dB < {floor} dB");
        assert!(error.is_none(), "{name}: {error:?}");
        if name.starts_with("corrupted") {
            // decord's damaged clip: the packet of display index 30 does not decode; its index is a hole and
            // the frames after keep theirs (the video does not fail: the default, as the CLI's).
            assert_eq!(holes, [30], "{name}: the hole");
        } else {
            assert!(holes.is_empty(), "{name}: holes {holes:?}");
        }
        println!("{name}: {frames} frames, min PSNR {min_db:.1} dB");
        checked += 1;
    }
    assert_eq!(checked, manifest.as_array().unwrap().len());
}

/// One decode's sequences: each frame's display index and the MD5 of its RGB bytes.
fn sequences(path: &Path, config: Config) -> Vec<Vec<(u64, String)>> {
    decode_file(path, config)
        .into_iter()
        .map(|s| {
            s.indices
                .into_iter()
                .zip(s.frames.iter().map(|f| md5_hex(f)))
                .collect()
        })
        .collect()
}

/// The awkward videos and the CLI's frames of each (MD5s at their own size): turned by a display matrix (every
/// angle and mirror, 10-bit, 4:2:2, the corpus's phone clips), a damaged start, a change of frame size with and
/// without timestamps, and a display matrix sent with each keyframe (which the CLI applies only to the frames
/// that carry it: the reference is the same turn applied to every frame).
fn awkward_videos() -> Vec<(PathBuf, Vec<String>)> {
    let mut videos: Vec<(PathBuf, Vec<String>)> = TURNED
        .iter()
        .chain(&[
            "rotated_270_yuv422.mp4",
            "cut_start.ts",
            "res_change.ts",
            "res_change.h264",
        ])
        .map(|name| {
            let path = fixture(name);
            let md5s = ffmpeg_md5s(&path, &[], None);
            (path, md5s)
        })
        .collect();
    let message = fixture("orientation_message.ts");
    let turned = ffmpeg_md5s(&message, &["-noautorotate"], Some("transpose=cclock_flip"));
    videos.push((message, turned));
    if let Some(dir) = corpus("the corpus's rotated clips") {
        for name in ["rotated/video_180.mov", "rotated/video_270.mov"] {
            let path = dir.join(name);
            let md5s = ffmpeg_md5s(&path, &[], None);
            videos.push((path, md5s));
        }
    }
    videos
}

#[test]
fn turned_damaged_and_resized_videos_match_ffmpeg_in_every_sampling_mode() {
    if skip_without_ffmpeg("the turned, damaged and resized videos' conformance") {
        return;
    }
    let l = 3;
    for (path, reference) in awkward_videos() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let n = reference.len() as u64;
        assert!(n >= 3, "{name}: {n} frames");
        // A plain run: every frame, numbered as the CLI numbers them.
        let plain: Vec<(u64, String)> = sequences(&path, Config::new(l, 2)).concat();
        let indices: Vec<u64> = plain.iter().map(|(i, _)| *i).collect();
        assert_eq!(indices, (0..n).collect::<Vec<_>>(), "{name}: plain indices");
        let samplings = [
            Sampling::new().stride(2),
            Sampling::new().stride(3).step(2),
            Sampling::new()
                .clips(4, ClipSampler::Random)
                .stride(2)
                .seed(5),
            Sampling::new().clips(3, ClipSampler::Regular),
            Sampling::new().fps(7.0),
            Sampling::new().start(0.03),
            Sampling::new().indices(vec![0, 1, 1, n / 2, n - 1]),
        ];
        for sampling in samplings.iter().cloned() {
            let seqs = sequences(&path, Config::new(l, 2).sampling(sampling.clone()));
            assert!(!seqs.is_empty(), "{name}: nothing sampled by {sampling:?}");
            for (index, md5) in seqs.iter().flatten() {
                assert!(
                    reference.get(*index as usize) == Some(md5),
                    "{name}: frame {index} under {sampling:?} is not the CLI's"
                );
            }
            // Strided sequences follow the stride (a change of size splits one, never reorders it).
            if sampling == Sampling::new().stride(2) {
                for seq in &seqs {
                    assert!(
                        seq.windows(2).all(|w| w[1].0 == w[0].0 + 2),
                        "{name}: {:?}",
                        seq.iter().map(|f| f.0).collect::<Vec<_>>()
                    );
                }
            }
        }
        // Segments, decoded apart, give the whole video's sequences (where the packets give a display order).
        let config = Config::new(l, 2).sampling(Sampling::new().stride(2));
        let whole = sequences(&path, config.clone());
        match framefeed::segments(&Encoded::file(&path).unwrap(), &config, 4) {
            Ok(parts) => {
                let joined: Vec<_> = parts
                    .iter()
                    .flat_map(|p| {
                        let sampling = Sampling::new().stride(2).segment(p.start, p.end);
                        sequences(&path, Config::new(l, 2).sampling(sampling))
                    })
                    .collect();
                assert_eq!(joined, whole, "{name}: segments against the whole video");
            }
            // Raw H.264 has no timestamps; the keyframe messages' stream has a packet without one: both are
            // decoded in order, which a segment cannot be.
            Err(e) => assert!(
                name.ends_with(".h264") || name == "orientation_message.ts",
                "{name}: {e}"
            ),
        }
        println!("{name}: {n} frames, every sampling mode exact");
    }
}

#[test]
fn autorotate_off_gives_the_frames_as_coded() {
    if skip_without_ffmpeg("the autorotate-off conformance") {
        return;
    }
    for name in [
        "rotated_90.mp4",
        "rotated_180.mp4",
        "transverse.mp4",
        "orientation_message.ts",
    ] {
        let path = fixture(name);
        let coded = ffmpeg_md5s(&path, &["-noautorotate"], None);
        let ours: Vec<String> = sequences(&path, Config::new(4, 1).autorotate(false))
            .concat()
            .into_iter()
            .map(|(_, md5)| md5)
            .collect();
        assert_eq!(ours, coded, "{name}");
    }
}
