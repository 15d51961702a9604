//! Conformance against the shared corpus (`../shared/videos`): frame counts equal MANIFEST.json and every
//! frame matches the `ffmpeg` CLI's own rgb24 decode (PSNR >= 35 dB for 8-bit sources, >= 25 dB for 10-bit).

mod common;

use common::*;
use framefeed::{Config, Error, VideoError, VideoInput};
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
    let Some(dir) = shared_videos() else {
        println!("skipped: ../shared/videos is absent");
        return;
    };
    assert!(
        ffmpeg_available(),
        "the ffmpeg CLI is needed for conformance (apt-get install ffmpeg)"
    );
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
                for frame in seq.frames() {
                    assert_eq!(frame.index(), frames, "{name}: frame index");
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
        if name.starts_with("corrupted") {
            assert!(
                matches!(error, Some(VideoError::Corrupt { frames: 49, .. })),
                "{name}: the decodable frames, then an error; got {error:?}"
            );
        } else {
            assert!(error.is_none(), "{name}: {error:?}");
        }
        println!("{name}: {frames} frames, min PSNR {min_db:.1} dB");
        checked += 1;
    }
    assert_eq!(checked, manifest.as_array().unwrap().len());
}
