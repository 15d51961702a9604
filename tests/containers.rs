//! Every container and codec fixture decodes completely, matching the `ffmpeg` CLI's own rgb24 decode.

mod common;

use common::*;
use framefeed::{Config, LastSequencePolicy};

/// Decodes a fixture with the operator and compares every frame with ffmpeg's; returns (frames, min PSNR).
fn compare_with_ffmpeg(name: &str) -> (usize, f64, [usize; 3]) {
    let results = decode_all(
        Config::new(4, 2).decoder_threads(2),
        vec![read_fixture(name)],
    );
    let batches: Vec<_> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect();
    let shape = batches[0].frame_shape();
    let frames = frames_of(&batches);
    let mut reference = FfmpegFrames::open(&fixture(name));
    let mut min_psnr = f64::INFINITY;
    for (i, frame) in frames.iter().enumerate() {
        let expected = reference
            .next_frame(frame.len())
            .unwrap_or_else(|| panic!("{name}: ffmpeg has no frame {i}"));
        min_psnr = min_psnr.min(psnr(frame, &expected));
    }
    assert_eq!(
        reference.remaining(),
        0,
        "{name}: ffmpeg decoded more frames than framefeed"
    );
    (frames.len(), min_psnr, shape)
}

fn check(name: &str, frames: usize, shape: [usize; 3], min_db: f64) {
    if skip_without_ffmpeg(&format!("the {name} comparison with ffmpeg")) {
        return;
    }
    let (n, db, got_shape) = compare_with_ffmpeg(name);
    assert_eq!(n, frames, "{name}: frame count");
    assert_eq!(got_shape, shape, "{name}: frame shape");
    assert!(
        db >= min_db,
        "{name}: PSNR {db:.1} dB < {min_db} dB against ffmpeg"
    );
}

#[test]
fn mp4_faststart() {
    check("h264.mp4", 23, [64, 96, 3], 40.0);
}

#[test]
fn mp4_with_moov_at_the_end() {
    let data = read_fixture("h264_moov_at_end.mp4");
    let moov = data.windows(4).position(|w| w == b"moov").unwrap();
    let mdat = data.windows(4).position(|w| w == b"mdat").unwrap();
    assert!(moov > mdat, "the fixture must have its moov after mdat");
    check("h264_moov_at_end.mp4", 23, [64, 96, 3], 40.0);
}

#[test]
fn mov() {
    check("h264.mov", 23, [64, 96, 3], 40.0);
}

#[test]
fn matroska() {
    check("h264.mkv", 23, [64, 96, 3], 40.0);
}

#[test]
fn mpeg_ts() {
    check("h264.ts", 23, [64, 96, 3], 40.0);
}

#[test]
fn raw_annex_b_h264() {
    check("h264.h264", 23, [64, 96, 3], 40.0);
}

#[test]
fn raw_annex_b_hevc() {
    check("hevc.hevc", 23, [64, 96, 3], 40.0);
}

#[test]
fn avi_mpeg4() {
    check("mpeg4.avi", 23, [64, 96, 3], 40.0);
}

#[test]
fn webm_vp8() {
    check("vp8.webm", 23, [64, 96, 3], 40.0);
}

#[test]
fn webm_vp9() {
    check("vp9.webm", 23, [64, 96, 3], 40.0);
}

#[test]
fn matroska_av1() {
    check("av1.mkv", 23, [64, 96, 3], 40.0);
}

#[test]
fn hevc_10_bit() {
    check("hevc_10bit.mp4", 23, [64, 96, 3], 25.0);
}

#[test]
fn odd_size_35x19() {
    check("vp9_odd_35x19.webm", 23, [19, 35, 3], 40.0);
}

/// Widths that swscale's x86 fast path cannot finish at a tight row stride (not a multiple of 8): its last
/// pixels used to stay unwritten (stale pool memory), e.g. the last 6 columns of 1366-wide video. Every path
/// (fast, scaled, 10-bit, odd sizes) must give exactly the CLI's bytes.
#[test]
fn widths_not_a_multiple_of_8_convert_every_column() {
    let exact = f64::INFINITY;
    check("h264_100x60.mp4", 23, [60, 100, 3], exact);
    check("vp9_odd_35x20.webm", 23, [20, 35, 3], exact);
    check("vp9_odd_35x19.webm", 23, [19, 35, 3], exact);
    check("vp9_10bit_35x20.webm", 23, [20, 35, 3], exact);
    check("vp9_10bit_35x19.webm", 23, [19, 35, 3], exact);
    check("hevc_10bit_146x144.mp4", 23, [144, 146, 3], exact);
    check("vp9_odd_129x129.webm", 23, [129, 129, 3], exact);
}

#[test]
fn bt709_matrix_is_honoured() {
    // The same picture tagged BT.709: matches ffmpeg (which honours the tag), and differs from the untagged
    // (BT.601) decode of the same pixels.
    check("h264_bt709.mp4", 23, [64, 96, 3], 40.0);
    let tagged = frames_of(
        &decode_all(Config::new(23, 1), vec![read_fixture("h264_bt709.mp4")])
            .into_iter()
            .map(Result::unwrap)
            .collect::<Vec<_>>(),
    );
    let untagged = frames_of(
        &decode_all(Config::new(23, 1), vec![read_fixture("h264.mp4")])
            .into_iter()
            .map(Result::unwrap)
            .collect::<Vec<_>>(),
    );
    assert!(
        psnr(&tagged[0], &untagged[0]) < 40.0,
        "BT.709 and BT.601 conversions should differ"
    );
}

#[test]
fn timestamps_and_indices_follow_the_stream() {
    let results = decode_all(
        Config::new(5, 2).last_sequence_policy(LastSequencePolicy::Pad),
        vec![read_fixture("h264.mkv")],
    );
    let mut index = 0;
    for batch in results.into_iter().map(Result::unwrap) {
        for seq in batch.sequences() {
            for frame in seq.frames() {
                assert_eq!(frame.index(), index);
                // 25 fps.
                assert!(
                    (frame.pts() - index as f64 / 25.0).abs() < 1e-3,
                    "frame {index} at {}",
                    frame.pts()
                );
                index += 1;
            }
        }
    }
    assert_eq!(index, 23);
}

#[test]
fn best_stream_or_a_chosen_one() {
    let Some(dir) = corpus("the stream selection test (nasa_13013.mp4, two video streams)") else {
        return;
    };
    let data = std::fs::read(dir.join("nasa_13013.mp4")).unwrap();
    let count = |selection| {
        let results = decode_all(Config::new(16, 4).stream(selection), vec![data.clone()]);
        let batches: Vec<_> = results.into_iter().map(Result::unwrap).collect();
        (
            batches[0].frame_shape(),
            batches.iter().map(|b| b.valid_frames()).sum::<usize>(),
        )
    };
    // Like the ffmpeg CLI: the larger stream (#3, 480x270, 390 frames), audio and subtitles ignored.
    assert_eq!(
        count(framefeed::StreamSelection::Best),
        ([270, 480, 3], 390)
    );
    assert_eq!(
        count(framefeed::StreamSelection::Index(0)),
        ([180, 320, 3], 325)
    );
    let err = decode_all(
        Config::new(16, 4).stream(framefeed::StreamSelection::Index(1)),
        vec![data.clone()],
    );
    assert!(
        matches!(
            &err[0],
            Err(framefeed::Error::Video {
                error: framefeed::VideoError::StreamNotFound {
                    index: 1,
                    streams: 6
                },
                ..
            })
        ),
        "{err:?}"
    );
}
