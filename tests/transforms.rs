//! Sequence transforms: the fused crop equals cropping the full-frame output (odd anchors on subsampled chroma
//! included), the fused resize matches a plain bilinear reference within a stated tolerance, one window per
//! sequence (random ones differ across sequences, the same seed repeats them), out-of-bounds policies, and
//! the layouts and float output are exactly the transpose and cast of the default output.

mod common;

use common::{decode_all, read_fixture};
use framefeed::{
    Batch, Config, Crop, CropPosition, DType, Error, LastSequencePolicy, Layout, OutOfBounds,
    Resize, Transforms, VideoError, VideoInput,
};

fn batches(config: Config, name: &str) -> Vec<Batch> {
    batches_of(config, read_fixture(name), name)
}

fn batches_of(config: Config, video: Vec<u8>, name: &str) -> Vec<Batch> {
    decode_all(config, vec![video])
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect()
}

/// Every real frame of the default (full-size, u8, FHWC) decode: (width, height, rgb bytes).
fn full_frames(name: &str) -> Vec<(usize, usize, Vec<u8>)> {
    full_frames_of(read_fixture(name), name)
}

fn full_frames_of(video: Vec<u8>, name: &str) -> Vec<(usize, usize, Vec<u8>)> {
    batches_of(Config::new(1, 1), video, name)
        .iter()
        .flat_map(|b| {
            let [h, w, _] = b.frame_shape();
            b.sequences()[0]
                .frames()
                .map(|f| (w, h, f.data().to_vec()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The window (x, y, w, h) of an RGB frame `fw` wide.
fn crop_ref(frame: &[u8], fw: usize, x: usize, y: usize, w: usize, h: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(w * h * 3);
    for row in y..y + h {
        out.extend_from_slice(&frame[(row * fw + x) * 3..(row * fw + x + w) * 3]);
    }
    out
}

/// Checks every sequence of `got` against the reference frames cropped with the sequence's reported window;
/// returns the windows.
fn check_crops(got: &[Batch], reference: &[(usize, usize, Vec<u8>)]) -> Vec<(i64, i64)> {
    let mut windows = Vec::new();
    for batch in got {
        for seq in batch.sequences() {
            let win = seq.crop_window().expect("a crop window");
            windows.push((win.x, win.y));
            for frame in seq.frames() {
                let (fw, _, full) = &reference[frame.index() as usize];
                let expected = crop_ref(
                    full,
                    *fw,
                    win.x as usize,
                    win.y as usize,
                    win.width,
                    win.height,
                );
                assert!(
                    frame.data() == expected.as_slice(),
                    "frame {} differs from the cropped full frame (window {win:?})",
                    frame.index()
                );
            }
        }
    }
    windows
}

/// Crop positions giving even and odd anchors on both axes.
const ANCHORS: [(f32, f32); 5] = [
    (0.0, 0.0),
    (1.0, 1.0),
    (0.5, 0.5),
    (0.37, 0.61),
    (0.13, 0.9),
];

#[test]
fn fused_crop_equals_cropping_the_full_frame_at_every_anchor_parity() {
    for name in [
        "h264.mp4",
        "hevc_10bit.mp4",
        "vp9_odd_35x19.webm",
        "vp9_odd_35x20.webm",
        "vp9_10bit_35x20.webm",
        "h264_100x60.mp4",
        "mpeg4.avi",
        "h264_bt709.mp4",
    ] {
        let reference = full_frames(name);
        let (fw, fh, _) = reference[0];
        for (px, py) in ANCHORS {
            let (cw, ch) = ((fw * 2 / 3) as u32 | 1, (fh / 2) as u32 | 1);
            let crop = Crop::new(cw, ch).position(CropPosition::Fixed { x: px, y: py });
            let got = batches(
                Config::new(4, 2).transforms(Transforms::new().crop(crop)),
                name,
            );
            let windows = check_crops(&got, &reference);
            let expected_x = (f64::from(px) * (fw as f64 - f64::from(cw))).round() as i64;
            assert!(
                windows.iter().all(|w| w.0 == expected_x),
                "{name}: {windows:?}"
            );
        }
    }
}

#[test]
fn random_windows_one_per_sequence_differ_across_sequences_and_repeat_with_the_seed() {
    let name = "h264_live.ts"; // 100 frames of 96x64
    let reference = full_frames(name);
    let transforms = |seed| {
        Transforms::new()
            .crop(Crop::new(41, 27).position(CropPosition::Random))
            .seed(seed)
    };
    let run = |seed| batches(Config::new(5, 2).transforms(transforms(seed)), name);
    // check_crops compares every frame with its sequence's one window.
    let a = check_crops(&run(3), &reference);
    assert_eq!(a.len(), 20);
    let distinct: std::collections::HashSet<_> = a.iter().collect();
    assert!(
        distinct.len() > 10,
        "windows should vary across sequences: {a:?}"
    );
    assert_eq!(
        check_crops(&run(3), &reference),
        a,
        "same seed, same windows"
    );
    assert_ne!(
        check_crops(&run(4), &reference),
        a,
        "another seed, other windows"
    );
}

/// A plain bilinear resize of RGB bytes: a triangle filter over source pixel centres, widened by the
/// downscale factor when shrinking (antialiased, as swscale's bilinear is), separable, edges clamped.
fn bilinear_ref(src: &[u8], sw: usize, sh: usize, dw: usize, dh: usize) -> Vec<u8> {
    fn weights(src: usize, dst: usize) -> Vec<Vec<(usize, f64)>> {
        let scale = src as f64 / dst as f64;
        let support = scale.max(1.0);
        (0..dst)
            .map(|d| {
                let centre = (d as f64 + 0.5) * scale - 0.5;
                let lo = (centre - support).floor() as i64;
                let hi = (centre + support).ceil() as i64;
                let mut taps: Vec<(usize, f64)> = (lo..=hi)
                    .map(|t| {
                        let w = (1.0 - (t as f64 - centre).abs() / support).max(0.0);
                        (t.clamp(0, src as i64 - 1) as usize, w)
                    })
                    .filter(|(_, w)| *w > 0.0)
                    .collect();
                let sum: f64 = taps.iter().map(|(_, w)| w).sum();
                taps.iter_mut().for_each(|(_, w)| *w /= sum);
                taps
            })
            .collect()
    }
    let (wx, wy) = (weights(sw, dw), weights(sh, dh));
    let mut rows = vec![0f64; sh * dw * 3];
    for y in 0..sh {
        for (x, taps) in wx.iter().enumerate() {
            for c in 0..3 {
                rows[(y * dw + x) * 3 + c] = taps
                    .iter()
                    .map(|&(t, w)| w * f64::from(src[(y * sw + t) * 3 + c]))
                    .sum();
            }
        }
    }
    let mut out = vec![0u8; dw * dh * 3];
    for (y, taps) in wy.iter().enumerate() {
        for x in 0..dw {
            for c in 0..3 {
                let v: f64 = taps
                    .iter()
                    .map(|&(t, w)| w * rows[(t * dw + x) * 3 + c])
                    .sum();
                out[(y * dw + x) * 3 + c] = v.round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    out
}

#[test]
fn fused_resize_then_crop_matches_ffmpeg_and_a_plain_bilinear_reference() {
    // framefeed resizes the YUV planes (bilinear, its own resampler), then converts only the window to RGB.
    // Against the ffmpeg CLI doing the same (scale in YUV 4:2:0, crop, convert): >= 45 dB. Against
    // a plain float bilinear of the full-size RGB frames: >= 25 dB, the stated tolerance, since the chroma is
    // scaled at half resolution before the conversion, so edges of saturated colours (testsrc2 is made of
    // them) differ by several levels.
    let name = "h264.mp4"; // 96x64
    let reference = full_frames(name);
    let ffmpeg = common::ffmpeg_stdout(
        &common::fixture(name),
        &[
            "-vf",
            "scale=72:48:flags=bilinear,format=yuv420p,crop=40:40:8:8",
            "-pix_fmt",
            "rgb24",
            "-f",
            "rawvideo",
            "-",
        ],
    );
    let transforms = Transforms::new()
        .resize(Resize::Shorter(48)) // 72x48
        .crop(Crop::new(40, 40).position(CropPosition::Fixed { x: 0.25, y: 1.0 }));
    for batch in batches(Config::new(4, 1).transforms(transforms), name) {
        for seq in batch.sequences() {
            assert_eq!(seq.resized(), Some((72, 48)));
            let win = seq.crop_window().unwrap();
            assert_eq!((win.x, win.y, win.width, win.height), (8, 8, 40, 40));
            for frame in seq.frames() {
                let i = frame.index() as usize;
                let cli = &ffmpeg[i * 4800..(i + 1) * 4800];
                let psnr = common::psnr(frame.data(), cli);
                assert!(psnr >= 45.0, "frame {i} vs ffmpeg: {psnr:.1} dB");
                let (fw, fh, full) = &reference[i];
                let resized = bilinear_ref(full, *fw, *fh, 72, 48);
                let expected = crop_ref(&resized, 72, 8, 8, 40, 40);
                let psnr = common::psnr(frame.data(), &expected);
                assert!(psnr >= 25.0, "frame {i} vs plain bilinear: {psnr:.1} dB");
            }
        }
    }
}

/// A clip of 3 frames of `testsrc2` at `size`, encoded by the ffmpeg CLI (x264) in `pix_fmt`, in a temporary
/// directory (returned with it, to keep it).
fn generated_clip(size: (u32, u32), pix_fmt: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mkv");
    let status = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg(format!("testsrc2=size={}x{}:rate=25", size.0, size.1))
        .args([
            "-frames:v",
            "3",
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-pix_fmt",
            pix_fmt,
        ])
        .arg(&clip)
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg could not encode a {pix_fmt} clip");
    (dir, clip)
}

#[test]
fn fused_crop_of_4_2_2_and_full_range_clips_equals_cropping_the_full_frame() {
    // The other formats whose full-frame conversion takes swscale's fast path (besides the fixtures' 4:2:0),
    // at an odd width: windows at every anchor parity are the full frame's pixels exactly.
    for pix_fmt in ["yuv422p", "yuvj420p"] {
        let (_dir, clip) = generated_clip((101, 64), pix_fmt);
        let video = std::fs::read(&clip).unwrap();
        let reference = full_frames_of(video.clone(), pix_fmt);
        for (px, py) in ANCHORS {
            let crop = Crop::new(37, 21).position(CropPosition::Fixed { x: px, y: py });
            let config = Config::new(3, 1).transforms(Transforms::new().crop(crop));
            let got = batches_of(config, video.clone(), pix_fmt);
            assert_eq!(got.iter().map(|b| b.sequences().len()).sum::<usize>(), 1);
            check_crops(&got, &reference);
        }
    }
}

/// Resizes a generated `size` clip in `pix_fmt` to shorter side `shorter`, crops `crop` at several positions, and
/// compares every frame with the ffmpeg CLI's resize (to YUV 4:2:0), conversion to RGB and crop of the same
/// frames (cropping after the conversion: on YUV 4:2:0, ffmpeg's crop would move an odd window to an even
/// column): at least 45 dB each. Each window is exactly those pixels of a whole-frame resize, so every position
/// must match as closely as the whole picture does.
fn resize_and_crop_match_ffmpeg(size: (u32, u32), pix_fmt: &str, shorter: u32, crop: (u32, u32)) {
    let (_dir, clip) = generated_clip(size, pix_fmt);
    let video = std::fs::read(&clip).unwrap();
    let resized = if size.0 >= size.1 {
        (
            (u64::from(size.0) * u64::from(shorter) + u64::from(size.1) / 2) / u64::from(size.1),
            u64::from(shorter),
        )
    } else {
        (
            u64::from(shorter),
            (u64::from(size.1) * u64::from(shorter) + u64::from(size.0) / 2) / u64::from(size.0),
        )
    };
    for (x, y) in [
        (0.0, 0.0),
        (1.0, 1.0),
        (0.5, 0.5),
        (0.37, 0.81),
        (0.9, 0.13),
    ] {
        let window = Crop::new(crop.0, crop.1).position(CropPosition::Fixed { x, y });
        let t = Transforms::new()
            .resize(Resize::Shorter(shorter))
            .crop(window);
        let got: Vec<Batch> = decode_all(Config::new(3, 1).transforms(t), vec![video.clone()])
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let seq = &got[0].sequences()[0];
        let (rw, rh) = seq.resized().unwrap();
        assert_eq!((rw as u64, rh as u64), resized, "{pix_fmt}");
        let win = seq.crop_window().unwrap();
        let filter = format!(
            "scale={rw}:{rh}:flags=bilinear,format=yuv420p,format=rgb24,crop={}:{}:{}:{}",
            win.width, win.height, win.x, win.y
        );
        let cli = common::ffmpeg_stdout(
            &clip,
            &["-vf", &filter, "-pix_fmt", "rgb24", "-f", "rawvideo", "-"],
        );
        let len = (crop.0 * crop.1 * 3) as usize;
        for frame in seq.frames() {
            let i = frame.index() as usize;
            let psnr = common::psnr(frame.data(), &cli[i * len..(i + 1) * len]);
            assert!(
                psnr >= 45.0,
                "{pix_fmt}, window at {win:?}, frame {i}: {psnr:.1} dB"
            );
        }
    }
}

#[test]
fn resize_then_crop_of_a_1080p_clip_matches_ffmpeg_at_every_window_position() {
    // The training geometry: 1920x1080 to 455x256 (shorter side 256, a ratio with no small whole-number grid),
    // then 224x224.
    resize_and_crop_match_ffmpeg((1920, 1080), "yuv420p", 256, (224, 224));
}

#[test]
fn resize_then_crop_of_4_2_2_and_4_4_4_clips_matches_ffmpeg() {
    for pix_fmt in ["yuv422p", "yuv444p"] {
        resize_and_crop_match_ffmpeg((640, 360), pix_fmt, 128, (100, 100));
    }
}

/// (frames, h, w) u8 FHWC data of each sequence under `config`, plus the sequences' data under `layout`/`dtype`.
#[test]
fn cfhw_and_fchw_f32_are_exactly_the_transpose_and_cast_of_fhwc_u8() {
    let name = "vp9.webm"; // 96x64, 23 frames: with L=5, Partial, the last sequence has 3 frames
    let inside = Crop::new(33, 21).position(CropPosition::Fixed { x: 0.3, y: 0.6 });
    // Larger than the frame both ways: fill columns on both sides of every row, and whole rows of fill.
    let padded = Crop::new(120, 80)
        .position(CropPosition::Fixed { x: 0.3, y: 0.6 })
        .out_of_bounds(OutOfBounds::Pad([10.0, 20.0, 30.0]));
    for (crop, policy) in [
        (inside, LastSequencePolicy::Partial),
        (inside, LastSequencePolicy::Pad),
        (padded, LastSequencePolicy::Partial),
    ] {
        let base = Transforms::new().crop(crop);
        let u8s = batches(
            Config::new(5, 2)
                .last_sequence_policy(policy)
                .transforms(base.clone()),
            name,
        );
        for layout in [Layout::Fchw, Layout::Cfhw] {
            for (dtype, unit) in [(DType::F32, 1.0f32), (DType::F32Unit, 1.0 / 255.0)] {
                if crop == padded && dtype == DType::F32Unit {
                    // The fill values are in the output's units, not levels to scale.
                    continue;
                }
                let t = base.clone().layout(layout).dtype(dtype);
                let floats = batches(
                    Config::new(5, 2).last_sequence_policy(policy).transforms(t),
                    name,
                );
                assert_eq!(floats.len(), u8s.len());
                for (a, b) in u8s.iter().zip(&floats) {
                    assert_eq!(b.layout(), layout);
                    for (sa, sb) in a.sequences().iter().zip(b.sequences()) {
                        let [f, h, w, c] = sa.shape();
                        assert_eq!(sb.shape(), layout.shape(f, h, w));
                        let src = sa.data();
                        let dst = sb.data_f32().unwrap();
                        assert_eq!(dst.len(), src.len());
                        for fi in 0..f {
                            for y in 0..h {
                                for x in 0..w {
                                    for ch in 0..c {
                                        let v = src[((fi * h + y) * w + x) * c + ch];
                                        let i = match layout {
                                            Layout::Fchw => ((fi * c + ch) * h + y) * w + x,
                                            _ => ((ch * f + fi) * h + y) * w + x,
                                        };
                                        assert_eq!(
                                            dst[i],
                                            f32::from(v) * unit,
                                            "{layout:?} {dtype:?}"
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn normalization_arithmetic() {
    let mean = [0.485, 0.456, 0.406];
    let std = [0.229, 0.224, 0.225];
    let crop = Crop::new(32, 32);
    let plain = batches(
        Config::new(4, 1).transforms(Transforms::new().crop(crop)),
        "h264.mkv",
    );
    let norm = batches(
        Config::new(4, 1).transforms(
            Transforms::new()
                .crop(crop)
                .dtype(DType::F32Unit)
                .normalize(mean, std),
        ),
        "h264.mkv",
    );
    for (a, b) in plain.iter().zip(&norm) {
        for (&level, (i, &v)) in a
            .data()
            .iter()
            .zip(b.data_f32().unwrap().iter().enumerate())
        {
            let c = i % 3;
            let expected = (f32::from(level) / 255.0 - mean[c]) / std[c];
            assert!((v - expected).abs() < 1e-5, "{v} vs {expected}");
        }
    }
}

#[test]
fn out_of_bounds_error_pad_and_trim() {
    // 96x64 frames, crop 120x40.
    let crop = Crop::new(120, 40);
    let input =
        VideoInput::new(Config::new(4, 1).transforms(Transforms::new().crop(crop))).unwrap();
    input.feed((read_fixture("h264.mp4"), "small")).unwrap();
    input.close();
    let err = input.next_batch().unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Video {
                error: VideoError::CropOutOfBounds {
                    crop: (120, 40),
                    frame: (96, 64)
                },
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("crop 120x40 does not fit in the 96x64 frame"),
        "{err}"
    );

    let reference = full_frames("h264.mp4");
    let fill = [10.0, 20.0, 30.0];
    let padded = batches(
        Config::new(4, 1)
            .transforms(Transforms::new().crop(crop.out_of_bounds(OutOfBounds::Pad(fill)))),
        "h264.mp4",
    );
    for batch in &padded {
        assert_eq!(batch.frame_shape(), [40, 120, 3]);
        for seq in batch.sequences() {
            let win = seq.crop_window().unwrap();
            assert_eq!((win.x, win.y), (-12, 12));
            for frame in seq.frames() {
                let (fw, _, full) = &reference[frame.index() as usize];
                let data = frame.data();
                for y in 0..40 {
                    for x in 0..120 {
                        let px = &data[(y * 120 + x) * 3..][..3];
                        if (12..108).contains(&x) {
                            let s = ((y + 12) * fw + x - 12) * 3;
                            assert_eq!(px, &full[s..s + 3]);
                        } else {
                            assert_eq!(px, [10, 20, 30]);
                        }
                    }
                }
            }
        }
    }

    let trimmed = batches(
        Config::new(4, 1).transforms(Transforms::new().crop(crop.out_of_bounds(OutOfBounds::Trim))),
        "h264.mp4",
    );
    assert_eq!(trimmed[0].frame_shape(), [40, 96, 3]);
    check_crops(&trimmed, &reference);
}

#[test]
fn invalid_transform_settings_are_rejected_with_the_allowed_range() {
    let bad = [
        (
            Transforms::new().crop(Crop::new(0, 10)),
            "crop width is 0; allowed: 1 to 16384",
        ),
        (
            Transforms::new()
                .crop(Crop::new(10, 10).position(CropPosition::Fixed { x: 1.5, y: 0.0 })),
            "crop position x is 1.5; allowed: 0 to 1",
        ),
        (
            Transforms::new().resize(Resize::Shorter(0)),
            "resize shorter side is 0",
        ),
        (
            Transforms::new().normalize([0.0; 3], [1.0; 3]),
            "normalize needs a float dtype",
        ),
        (
            Transforms::new()
                .dtype(DType::F32)
                .normalize([0.0; 3], [1.0, 0.0, 1.0]),
            "must be finite and non-zero",
        ),
    ];
    for (t, message) in bad {
        let err = VideoInput::new(Config::new(4, 1).transforms(t))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains(message), "{err}");
    }
}

#[test]
fn fill_and_letterbox_give_one_shape_for_videos_of_every_size() {
    let fill = [5.0, 6.0, 7.0];
    for resize in [
        Resize::Fill {
            width: 64,
            height: 48,
        },
        Resize::Letterbox {
            width: 64,
            height: 48,
            fill,
        },
    ] {
        let input = VideoInput::new(Config::new(4, 2).transforms(Transforms::new().resize(resize)))
            .unwrap();
        for name in ["h264.mp4", "vp9_odd_35x19.webm", "hevc.hevc"] {
            input.feed((read_fixture(name), name)).unwrap();
        }
        input.feed((framefeed::SAMPLE_MP4, "sample")).unwrap();
        input.close();
        let mut frames = 0;
        for batch in input.iter() {
            let batch = batch.unwrap();
            assert_eq!(batch.frame_shape(), [48, 64, 3], "{resize:?}");
            frames += batch.valid_frames();
            let seq = batch.sequence(0);
            let label = batch.label().unwrap().to_string();
            let (rw, rh) = seq.resized().unwrap();
            let win = seq.crop_window().unwrap();
            assert_eq!((win.width, win.height), (64, 48));
            match resize {
                Resize::Fill { .. } => {
                    // Covers the output, centred.
                    assert!(
                        rw >= 64 && rh >= 48 && (rw == 64 || rh == 48),
                        "{label}: {rw}x{rh}"
                    );
                    assert_eq!(win.x, ((rw as f64 - 64.0) / 2.0).round() as i64, "{label}");
                }
                _ => {
                    // Fits inside, centred, the rest padded with the fill values.
                    assert!(
                        rw <= 64 && rh <= 48 && (rw == 64 || rh == 48),
                        "{label}: {rw}x{rh}"
                    );
                    if label == "h264.mp4" {
                        assert_eq!((rw, rh, win.y), (64, 43, -3));
                        let data = seq.frames().next().unwrap().data();
                        let row = |y: usize| &data[y * 64 * 3..(y + 1) * 64 * 3];
                        for y in [0, 1, 2, 46, 47] {
                            assert!(row(y).chunks(3).all(|p| p == [5, 6, 7]), "row {y}");
                        }
                        assert!(!row(10).chunks(3).all(|p| p == [5, 6, 7]));
                    }
                }
            }
        }
        assert_eq!(frames, 23 + 23 + 23 + 60);
    }
}

#[test]
fn output_size_changes_while_running_from_the_next_sequence_on() {
    let t = Transforms::new().resize(Resize::Exact {
        width: 32,
        height: 32,
    });
    let input = VideoInput::new(Config::new(4, 2).transforms(t)).unwrap();
    input.feed(read_fixture("h264_live.ts")).unwrap(); // 100 frames
    input.close();
    let first = input.next_batch().unwrap().unwrap();
    assert_eq!(first.frame_shape(), [32, 32, 3]);
    input.set_output_size(16, 24).unwrap();
    let mut shapes = vec![first.frame_shape()];
    let mut frames = first.valid_frames();
    for batch in input.iter() {
        let batch = batch.unwrap();
        frames += batch.valid_frames();
        for seq in batch.sequences() {
            assert_eq!(
                seq.resized(),
                Some((batch.frame_shape()[1], batch.frame_shape()[0]))
            );
        }
        shapes.push(batch.frame_shape());
    }
    assert_eq!(frames, 100);
    // Once the new size appears it stays; the old one is only at the start (batches decoded ahead).
    let switch = shapes
        .iter()
        .position(|s| *s == [24, 16, 3])
        .expect("the new size");
    assert!(shapes[..switch].iter().all(|s| *s == [32, 32, 3]));
    assert!(shapes[switch..].iter().all(|s| *s == [24, 16, 3]));
    assert!(switch <= 4, "the change took effect late: {shapes:?}");

    let plain = VideoInput::new(Config::new(4, 2)).unwrap();
    let err = plain.set_output_size(16, 16).unwrap_err().to_string();
    assert!(err.contains("needs a sized resize"), "{err}");
    let err = input.set_output_size(0, 16).unwrap_err().to_string();
    assert!(
        err.contains("output width is 0; allowed: 1 to 16384"),
        "{err}"
    );
}

#[test]
fn f16_output_is_the_f32_output_rounded_to_half_precision() {
    for (f16_type, f32_type) in [(DType::F16, DType::F32), (DType::F16Unit, DType::F32Unit)] {
        let t = |dtype| {
            Transforms::new()
                .crop(Crop::new(40, 30))
                .dtype(dtype)
                .normalize([0.2, 0.3, 0.4], [0.5, 0.6, 0.7])
                .layout(Layout::Fchw)
        };
        let halves = batches(Config::new(4, 2).transforms(t(f16_type)), "h264.mkv");
        let floats = batches(Config::new(4, 2).transforms(t(f32_type)), "h264.mkv");
        for (h, f) in halves.iter().zip(&floats) {
            assert_eq!(h.dtype(), f16_type);
            assert!(h.data_f32().is_none());
            let (hv, fv) = (h.data_f16().unwrap(), f.data_f32().unwrap());
            assert_eq!(hv.len(), fv.len());
            assert_eq!(h.data().len(), fv.len() * 2);
            for (a, b) in hv.iter().zip(fv) {
                assert_eq!(*a, framefeed::f16::from_f32(*b));
            }
        }
    }
}

#[test]
fn a_resize_in_the_rgb_conversion_is_the_cli_scale_writing_rgb() {
    // `ResizeStage::Rgb`: one swscale pass from the decoded picture to RGB at the new size, as the CLI's
    // `-vf scale=W:H:flags=bilinear -pix_fmt rgb24` (and decord) do: byte for byte, down and up, odd sizes,
    // 8- and 10-bit sources, with a crop of the resized frame too.
    if common::skip_without_ffmpeg("the one-pass resize against the ffmpeg CLI") {
        return;
    }
    let md5s = |t: Transforms, name: &str| -> Vec<String> {
        common::frames_of(&batches(Config::new(4, 2).transforms(t), name))
            .iter()
            .map(|f| common::md5_hex(f))
            .collect()
    };
    for name in ["h264.mp4", "vp9.webm", "hevc_10bit.mp4", "mpeg4.avi"] {
        for (w, h) in [(72, 48), (171, 97), (33, 20)] {
            let resized = Transforms::new()
                .resize(Resize::Exact {
                    width: w,
                    height: h,
                })
                .resize_stage(framefeed::ResizeStage::Rgb);
            let cli =
                |filters: &str| common::ffmpeg_md5s(&common::fixture(name), &[], Some(filters));
            let scale = format!("scale={w}:{h}:flags=bilinear");
            assert_eq!(
                md5s(resized.clone(), name),
                cli(&scale),
                "{name} at {w}x{h}"
            );
            let (cw, ch) = (w / 2, h / 2);
            let cropped =
                resized.crop(Crop::new(cw, ch).position(CropPosition::Fixed { x: 1.0, y: 0.0 }));
            let (got, want) = (
                md5s(cropped, name),
                cli(&format!("{scale},crop={cw}:{ch}:{}:0", w - cw)),
            );
            assert_eq!(got, want, "{name} at {w}x{h}, cropped");
        }
    }
}
