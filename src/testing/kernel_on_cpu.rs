//! The kernel's per-pixel code, compiled for the CPU from `kernels/convert.cu` (`ffi::cuda::host`), against the
//! CPU backend on the same decoded planes: the fixtures, the transforms, and the shared corpus. Runs on any
//! machine, in both builds; on a GPU the same comparison runs end to end in `tests/gpu_backend.rs`.

use crate::decode::frame::{Colour, DeviceFrame, Signal};
use crate::ffi::cuda::host::HostKernel;
use crate::orientation::Orientation;
use crate::settings::transforms::{DType, Layout, Transforms};
use crate::transform::gpu::kernel_params;
use crate::transform::plan::Planner;
use crate::{Batch, Config, Crop, CropPosition, LastSequencePolicy, Resize, VideoInput};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The file's frames as NV12 (or P010) planes, as NVDEC hands them over: the decoder's planar 4:2:0
/// samples from the ffmpeg CLI, interleaved here (not by swscale, whose planar-to-P010 path drops the last
/// chroma column of odd widths in FFmpeg 5.1).
///
/// `planar` is the decoder's own format (`yuv420p`, `yuvj420p` or `yuv420p10le`), so that the CLI hands
/// the samples over unchanged (asking for `yuv420p` from a `yuvj420p` stream would convert the range).
fn surfaces(path: &Path, planar: &str, w: usize, h: usize, limit: usize) -> Vec<Vec<u8>> {
    let high_depth = planar.contains("10");
    // As decoded: not turned by the file's display matrix (the kernel turns them).
    let out = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-noautorotate", "-i"])
        .arg(path)
        .args(["-fps_mode", "passthrough", "-frames:v", &limit.to_string()])
        .args(["-f", "rawvideo", "-pix_fmt", planar, "-"])
        .output()
        .expect("ffmpeg runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sample = if high_depth { 2 } else { 1 };
    let chroma = w.div_ceil(2) * h.div_ceil(2) * sample;
    let size = w * h * sample + 2 * chroma;
    // Samples as stored in the surface: 8-bit as is, 10-bit MSB-aligned in 16-bit words (P010).
    let put = |dst: &mut Vec<u8>, src: &[u8]| {
        if high_depth {
            let v = u16::from_le_bytes([src[0], src[1]]) << 6;
            dst.extend_from_slice(&v.to_ne_bytes());
        } else {
            dst.push(src[0]);
        }
    };
    out.stdout
        .chunks_exact(size)
        .map(|frame| {
            let (luma, rest) = frame.split_at(w * h * sample);
            let (u, v) = rest.split_at(chroma);
            let mut surface = Vec::with_capacity(size);
            for y in luma.chunks_exact(sample) {
                put(&mut surface, y);
            }
            for (u, v) in u.chunks_exact(sample).zip(v.chunks_exact(sample)) {
                put(&mut surface, u);
                put(&mut surface, v);
            }
            surface
        })
        .collect()
}

/// The CPU backend's batches of the file's first `limit` frames (rounded up to whole batches).
fn cpu_batches(path: &Path, transforms: &Transforms, l: usize, limit: usize) -> Vec<Batch> {
    let input = VideoInput::new(
        Config::new(l, 2)
            .last_sequence_policy(LastSequencePolicy::Pad)
            .transforms(transforms.clone()),
    )
    .unwrap();
    input.feed(std::fs::read(path).unwrap()).unwrap();
    input.close();
    let mut frames = 0;
    input
        .iter()
        .map(Result::unwrap)
        .take_while(|b| {
            let more = frames < limit;
            frames += b.valid_frames();
            more
        })
        .collect()
}

/// Runs the kernel on every frame (of planar format `pix_fmt`, see [`surfaces`]) with the geometry the CPU
/// path planned (same planner, same seed and
/// video id) and returns the mean and largest absolute difference, in output units.
fn compare(
    name: &str,
    pix_fmt: &str,
    size: (usize, usize),
    colour: Colour,
    transforms: &Transforms,
) -> (f64, f64) {
    compare_file(
        &fixture(name),
        pix_fmt,
        size,
        colour,
        transforms,
        usize::MAX,
        Orientation::Upright,
    )
}

/// [`compare`] on any file, over its first `limit` frames (whole sequences), its `(w, h)` frames (as decoded)
/// shown per `orientation`.
fn compare_file(
    path: &Path,
    pix_fmt: &str,
    size: (usize, usize),
    colour: Colour,
    transforms: &Transforms,
    limit: usize,
    orientation: Orientation,
) -> (f64, f64) {
    let untagged = (colour, Signal::default());
    compare_signal(
        path,
        pix_fmt,
        size,
        untagged,
        transforms,
        limit,
        orientation,
    )
}

/// [`compare_file`] for a stream of `signal` (what tone mapping reads).
fn compare_signal(
    path: &Path,
    pix_fmt: &str,
    (w, h): (usize, usize),
    (colour, signal): (Colour, Signal),
    transforms: &Transforms,
    limit: usize,
    orientation: Orientation,
) -> (f64, f64) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let has_ffmpeg = std::process::Command::new("ffmpeg")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_ffmpeg {
        eprintln!("SKIPPED {name}: no ffmpeg CLI");
        return (0.0, 0.0);
    }
    // A directory per build: tests run in parallel, and one must not load a library another is writing.
    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let build = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("framefeed-kernel-{}-{build}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kernel = HostKernel::build(&dir).expect("a C++ compiler builds kernels/convert.cu");
    let l = 4;
    let frames = surfaces(path, pix_fmt, w, h, limit.saturating_add(l).min(1 << 30));
    let batches = cpu_batches(path, transforms, l, limit);
    let mut planner = Planner::new(transforms, batches[0].video_id().0);
    let high_depth = pix_fmt.contains("10");
    let sample = if high_depth { 2 } else { 1 };
    let (mut sum, mut max, mut count) = (0.0f64, 0.0f64, 0usize);
    let mut frame = 0;
    for batch in &batches {
        for (i, seq) in batch.sequences().iter().enumerate() {
            assert_eq!(
                seq.orientation(),
                orientation,
                "{name}: the CPU path's turn"
            );
            let (shown_w, shown_h) = orientation.displayed_size(w, h);
            let geometry = planner.plan(shown_w, shown_h, seq.first_frame()).unwrap();
            let mut params = kernel_params(
                &DeviceFrame {
                    luma: 0,
                    chroma: 0,
                    luma_pitch: (w * sample) as i32,
                    chroma_pitch: (w.div_ceil(2) * 2 * sample) as i32,
                    width: w,
                    height: h,
                    high_depth,
                    colour,
                    signal,
                },
                orientation,
                &geometry,
                transforms,
                0,
                l,
            );
            let mut out = vec![0u8; params.output_bytes()];
            for f in 0..seq.valid_frames() {
                params.frame_index = f as i32;
                let planes = frames[frame].split_at(w * h * sample);
                kernel.run(&params, planes, &mut out);
                frame += 1;
            }
            let theirs = values(batch.sequence(i).data(), transforms.dtype);
            let ours = values(&out, transforms.dtype);
            assert_eq!(theirs.len(), ours.len(), "{name}: output sizes");
            for (a, b) in theirs.iter().zip(&ours) {
                let d = (a - b).abs();
                sum += d;
                max = max.max(d);
                count += 1;
            }
        }
    }
    assert!(
        frame == frames.len() || frame >= limit,
        "{name}: every frame compared"
    );
    eprintln!("{name}: mean {:.3} max {max}", sum / count as f64);
    drop(kernel);
    let _ = std::fs::remove_dir_all(&dir);
    (sum / count as f64, max)
}

fn values(bytes: &[u8], dtype: DType) -> Vec<f64> {
    match dtype {
        DType::U8 => bytes.iter().map(|&b| f64::from(b)).collect(),
        // In 8-bit levels, as the other types' tolerances are.
        DType::U16 => bytes
            .chunks_exact(2)
            .map(|c| f64::from(u16::from_ne_bytes([c[0], c[1]])) / 257.0)
            .collect(),
        DType::F32 | DType::F32Unit => bytes
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_ne_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        DType::F16 | DType::F16Unit => bytes
            .chunks_exact(2)
            .map(|c| f64::from(half::f16::from_ne_bytes([c[0], c[1]]).to_f32()))
            .collect(),
    }
}

const BT601: Colour = Colour {
    colorspace: 2,
    full_range: false,
};

#[test]
fn plain_rgb_matches_the_cpu_backend() {
    let t = Transforms::default();
    let bt709 = Colour {
        colorspace: 1,
        full_range: false,
    };
    for (name, pix_fmt, size, colour) in [
        ("h264.mp4", "yuv420p", (96, 64), BT601),
        ("h264_bt709.mp4", "yuv420p", (96, 64), bt709),
        ("hevc_10bit.mp4", "yuv420p10le", (96, 64), BT601),
        // Sizes that change swscale's path: a width not a multiple of 8 (fast path), odd widths (full
        // chroma interpolation) and odd heights (scaled path), 8 and 10 bits.
        ("h264_100x60.mp4", "yuv420p", (100, 60), BT601),
        ("vp9_odd_35x20.webm", "yuv420p", (35, 20), BT601),
        ("vp9_odd_35x19.webm", "yuv420p", (35, 19), BT601),
        ("vp9_10bit_35x20.webm", "yuv420p10le", (35, 20), BT601),
        ("vp9_10bit_35x19.webm", "yuv420p10le", (35, 19), BT601),
        // Sizes NVDEC decodes (the GPU tests' fixtures).
        ("hevc_10bit_146x144.mp4", "yuv420p10le", (146, 144), BT601),
        ("vp9_odd_129x129.webm", "yuv420p", (129, 129), BT601),
    ] {
        let (mean, max) = compare(name, pix_fmt, size, colour, &t);
        assert!(mean <= 1.5 && max <= 8.0, "{name}: mean {mean} max {max}");
    }
}

#[test]
fn crop_type_normalization_and_layouts_match_the_cpu_backend() {
    for (dtype, layout) in [
        (DType::U8, Layout::Fchw),
        (DType::F32Unit, Layout::Cfhw),
        (DType::F16Unit, Layout::Fhwc),
        (DType::F32, Layout::Fchw),
    ] {
        let mut t = Transforms::default()
            .crop(Crop::new(40, 30).position(CropPosition::Random))
            .dtype(dtype)
            .layout(layout)
            .seed(7);
        if dtype == DType::F32Unit {
            t = t.normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]);
        }
        let (mean, max) = compare("h264.mp4", "yuv420p", (96, 64), BT601, &t);
        // In levels: one level of difference is 1/255 in unit outputs (over std ~0.22 when normalized).
        let level = match dtype {
            DType::U8 | DType::F32 => 1.0,
            DType::F16Unit => 1.0 / 255.0,
            _ => 1.0 / 255.0 / 0.2,
        };
        assert!(mean <= 1.5 * level, "{dtype:?} {layout:?}: mean {mean}");
        assert!(max <= 8.0 * level + 1e-3, "{dtype:?} {layout:?}: max {max}");
    }
}

#[test]
fn resize_and_padded_crop_match_the_cpu_backend_closely() {
    for (resize, crop) in [
        (Resize::Shorter(48), Crop::new(40, 40)),
        (
            Resize::Exact {
                width: 160,
                height: 100,
            },
            Crop::new(64, 64),
        ),
        (
            Resize::Exact {
                width: 60,
                height: 40,
            },
            Crop::new(64, 48).out_of_bounds(crate::OutOfBounds::Pad([9.0, 99.0, 199.0])),
        ),
        // Odd resized sizes: the CPU path converts them as even ones (chroma over 2x2 pixels).
        (
            Resize::Exact {
                width: 35,
                height: 21,
            },
            Crop::new(30, 20),
        ),
        (
            Resize::Exact {
                width: 131,
                height: 85,
            },
            Crop::new(131, 85),
        ),
    ] {
        let t = Transforms::default().resize(resize).crop(crop);
        let (mean, max) = compare("h264.mp4", "yuv420p", (96, 64), BT601, &t);
        // The CPU path resizes the YUV planes with the kernel's filters in fixed point and rounds them to 8 bits
        // before converting: close, not equal (mean 0.68-0.94, max 4 levels on these).
        assert!(
            mean <= 1.5 && max <= 8.0,
            "{resize:?}: mean {mean} max {max}"
        );
    }
}

/// 16-bit output (P016 surfaces through the kernel's 16-bit levels) and floats from them, against the CPU
/// backend's RGB48: plain, cropped in every layout, normalized, resized, and the exact widening of 8-bit
/// surfaces.
#[test]
fn sixteen_bit_output_matches_the_cpu_backends_rgb48() {
    let cases = [
        (DType::U16, Layout::Fhwc, None, None),
        (DType::U16, Layout::Cfhw, Some(Crop::new(30, 16)), None),
        (DType::F32Unit, Layout::Fchw, Some(Crop::new(33, 17)), None),
        (DType::F32, Layout::Fhwc, None, Some(Resize::Shorter(48))),
        (DType::F32, Layout::Fhwc, None, Some(Resize::Shorter(32))),
        (DType::F32, Layout::Fhwc, None, Some(Resize::Shorter(128))),
        (
            DType::U16,
            Layout::Fhwc,
            Some(Crop::new(50, 40)),
            Some(Resize::Exact {
                width: 70,
                height: 50,
            }),
        ),
    ];
    for (dtype, layout, crop, resize) in cases {
        let mut t = Transforms::default().dtype(dtype).layout(layout).seed(5);
        if let Some(c) = crop {
            t = t.crop(c.position(CropPosition::Random));
        }
        if let Some(r) = resize {
            t = t.resize(r);
        }
        let level = match dtype {
            DType::F32Unit => 1.0 / 255.0,
            _ => 1.0,
        };
        for (name, size) in [
            ("hevc_10bit.mp4", (96, 64)),
            ("vp9_10bit_35x19.webm", (35, 19)),
        ] {
            let (mean, max) = compare(name, "yuv420p10le", size, BT601, &t);
            let what = format!("{name} {dtype:?} {layout:?} {crop:?} {resize:?}");
            // Measured: mean 0.19-0.35, max 1-6.3 levels (8-bit units): the kernel's float matrix against
            // swscale's fixed point, and its resize filter against swscale's.
            assert!(mean <= 0.5 * level, "{what}: mean {mean}");
            assert!(max <= 8.0 * level + 1e-3, "{what}: max {max}");
        }
    }
    // 8-bit surfaces as u16: the 8-bit levels widened, on both backends alike.
    let t = Transforms::default().dtype(DType::U16);
    let (mean, max) = compare("h264.mp4", "yuv420p", (96, 64), BT601, &t);
    assert!(
        mean <= 1.5 && max <= 8.0,
        "8-bit as u16: mean {mean} max {max}"
    );
}

/// Tone mapping in the kernel against the CPU backend's tone mapper, every curve, PQ (peak from the stream's
/// HDR10 metadata, as the CPU reads it from the frames) and HLG, plain and resized and cropped, u8 and floats.
#[test]
fn tone_mapping_matches_the_cpu_backend() {
    let bt2020 = Colour {
        colorspace: 9,
        full_range: false,
    };
    let pq = Signal {
        transfer: 16,
        primaries: 9,
        peak: Some(40.0),
    };
    let hlg = Signal {
        transfer: 18,
        primaries: 9,
        peak: None,
    };
    let cases = [
        ("hable", None, None, DType::U8),
        ("mobius:param=0.5", None, None, DType::U8),
        ("reinhard", Some(Crop::new(100, 60)), None, DType::F32Unit),
        ("clip:desat=0", None, Some(Resize::Shorter(96)), DType::U8),
        (
            "hable:peak=5",
            Some(Crop::new(64, 64)),
            Some(Resize::Shorter(100)),
            DType::U16,
        ),
    ];
    for (name, signal) in [
        ("tonemap_pq_hevc10.mp4", pq),
        ("tonemap_hlg_hevc10.mp4", hlg),
    ] {
        for (spec, crop, resize, dtype) in cases {
            let mut t = Transforms::default()
                .tonemap(spec.parse().unwrap())
                .dtype(dtype)
                .seed(9);
            if let Some(c) = crop {
                t = t.crop(c.position(CropPosition::Random));
            }
            if let Some(r) = resize {
                t = t.resize(r);
            }
            let (mean, max) = compare_signal(
                &fixture(name),
                "yuv420p10le",
                (256, 144),
                (bt2020, signal),
                &t,
                usize::MAX,
                Orientation::Upright,
            );
            let level = if dtype == DType::F32Unit {
                1.0 / 255.0
            } else {
                1.0
            };
            let what = format!("{name} {spec} {crop:?} {resize:?} {dtype:?}");
            // Measured: mean at most 0.004 levels and max 1-3 unresized and for hable resized; resized with
            // `clip:desat=0`, mean 0.7-1.3 and single pixels off by up to ~100 levels: out-of-gamut components
            // near 0 through the display transfer's infinite slope at 0, where the two resamplers differ a
            // little. The stated tolerance: mean 0.5 of a level (1.5 resized, as the 8-bit resize), max 8 unresized.
            assert!(
                mean <= if resize.is_some() { 1.5 } else { 0.5 } * level,
                "{what}: mean {mean}"
            );
            if resize.is_none() {
                assert!(max <= 8.0 * level + 1e-3, "{what}: max {max}");
            }
        }
    }
}

/// Frames turned by their display matrix (every orientation; 8-bit at a width not a multiple of 8, and 10-bit):
/// the kernel reading the surface turned against the CPU backend turning the planes, plain and resized and
/// cropped after the turn.
#[test]
fn turned_frames_match_the_cpu_backend() {
    let cases = [
        ("rotated_90.mp4", Orientation::Rotate270),
        ("rotated_180.mp4", Orientation::Rotate180),
        ("rotated_270.mp4", Orientation::Rotate90),
        ("hflip.mp4", Orientation::FlipHorizontal),
        ("vflip.mp4", Orientation::FlipVertical),
        ("transpose.mp4", Orientation::Transpose),
        ("transverse.mp4", Orientation::Transverse),
    ];
    let transforms = [
        Transforms::default(),
        Transforms::default()
            .resize(Resize::Shorter(48))
            .crop(Crop::new(40, 32).position(CropPosition::Random))
            .seed(3),
    ];
    for (name, orientation) in cases {
        for t in &transforms {
            let (mean, max) = compare_file(
                &fixture(name),
                "yuv420p",
                (100, 60),
                BT601,
                t,
                usize::MAX,
                orientation,
            );
            assert!(mean <= 1.5 && max <= 8.0, "{name}: mean {mean} max {max}");
        }
    }
    let (mean, max) = compare_file(
        &fixture("rotated_90_hevc10.mp4"),
        "yuv420p10le",
        (146, 144),
        BT601,
        &Transforms::default(),
        usize::MAX,
        Orientation::Rotate270,
    );
    assert!(
        mean <= 1.5 && max <= 8.0,
        "rotated 10-bit: mean {mean} max {max}"
    );
}

/// Every file of the shared corpus that NVDEC decodes (per `nvdec_support`), its first 12 frames: the
/// kernel on the decoder's planes against the CPU backend, plain RGB.
#[test]
fn shared_corpus_matches_the_cpu_backend() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/videos");
    let Ok(manifest) = std::fs::read(dir.join("MANIFEST.json")) else {
        eprintln!("SKIPPED shared corpus: ../shared/videos is not there");
        return;
    };
    let manifest: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    let mut checked = 0;
    for entry in manifest.as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        if file.contains("corrupted") {
            continue; // fails on purpose after 49 frames: the CPU conformance test covers it
        }
        // The stream both the CLI and framefeed pick: the largest.
        let streams = entry["video_streams"].as_array().unwrap();
        let stream = streams
            .iter()
            .max_by_key(|s| s["width"].as_u64().unwrap() * s["height"].as_u64().unwrap())
            .unwrap();
        let text = |k: &str| stream[k].as_str().unwrap_or("");
        let (w, h) = (
            stream["width"].as_u64().unwrap() as u32,
            stream["height"].as_u64().unwrap() as u32,
        );
        let info = crate::StreamInfo::video(text("codec_name"), text("pix_fmt"), w, h);
        if let Err(why) = crate::decode::nvdec_support(&info) {
            eprintln!("{file}: not for NVDEC ({why})");
            continue;
        }
        let colour = Colour {
            colorspace: match text("color_space") {
                "bt709" => 1,
                "smpte170m" => 6,
                "bt470bg" => 5,
                "bt2020nc" => 9,
                _ => 2,
            },
            full_range: text("color_range") == "pc" || text("pix_fmt").starts_with("yuvj"),
        };
        let (mean, max) = compare_file(
            &dir.join(file),
            text("pix_fmt"),
            (w as usize, h as usize),
            colour,
            &Transforms::default(),
            12,
            Orientation::Upright,
        );
        assert!(mean <= 1.5, "{file}: mean {mean} max {max}");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} corpus files checked");
}
