//! The transforms on the GPU: one [`ConvertParams`] block per frame tells framefeed's CUDA kernel
//! (`kernels/convert.cu`) how to turn an NVDEC surface into its slot of the batch: resize, crop window, colour
//! matrix and range, rounding to 8-bit levels (as the CPU path does), type, normalization and layout.
//!
//! Pure arithmetic: no CUDA here, so it is tested on any machine (with the kernel's own code compiled for the
//! CPU, see `ffi::cuda::kernel::host`).

use super::plan::Geometry;
use super::write::affine;
use super::{DType, Interpolation, Layout, Transforms};
use crate::batch::CHANNELS;

/// The kernel's parameter block: the layout of `struct ConvertParams` in `kernels/convert.cu`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ConvertParams {
    pub(crate) luma: u64,
    pub(crate) chroma: u64,
    pub(crate) out: u64,
    pub(crate) luma_pitch: i32,
    pub(crate) chroma_pitch: i32,
    pub(crate) src_w: i32,
    pub(crate) src_h: i32,
    pub(crate) high_depth: i32,
    pub(crate) resized: i32,
    pub(crate) frame_w: i32,
    pub(crate) frame_h: i32,
    pub(crate) filter: i32,
    pub(crate) win_x: i32,
    pub(crate) win_y: i32,
    pub(crate) out_w: i32,
    pub(crate) out_h: i32,
    pub(crate) dtype: i32,
    pub(crate) layout: i32,
    pub(crate) frames: i32,
    pub(crate) frame_index: i32,
    pub(crate) chroma_cubic: i32,
    pub(crate) matrix: [f32; 9],
    pub(crate) offset: [f32; 3],
    pub(crate) fill: [f32; 3],
    pub(crate) scale: [f32; 3],
    pub(crate) bias: [f32; 3],
}

/// The decoded picture the kernel reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Source {
    /// Device (or, in tests, host) addresses and pitches of the luma and interleaved chroma planes.
    pub(crate) luma: u64,
    pub(crate) chroma: u64,
    pub(crate) luma_pitch: i32,
    pub(crate) chroma_pitch: i32,
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// 16-bit samples (P010/P016).
    pub(crate) high_depth: bool,
    pub(crate) colour: Colour,
}

/// A stream's colour matrix and range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Colour {
    /// `AVColorSpace` as an integer.
    pub(crate) colorspace: i32,
    pub(crate) full_range: bool,
}

impl Colour {
    /// The luma weights (Kr, Kb) of the matrix, with the same choices as the CPU path's swscale: BT.601 when
    /// unspecified or unknown.
    fn weights(self) -> (f32, f32) {
        match self.colorspace {
            1 => (0.2126, 0.0722),      // BT.709
            4 => (0.30, 0.11),          // FCC
            7 => (0.212, 0.087),        // SMPTE 240M
            9 | 10 => (0.2627, 0.0593), // BT.2020
            _ => (0.299, 0.114),        // BT.601 (BT470BG, SMPTE170M, unspecified)
        }
    }

    /// `RGB = matrix * (YUV - offset)`, in 8-bit level units: rows R, G, B.
    pub(crate) fn matrix(self) -> ([f32; 9], [f32; 3]) {
        let (kr, kb) = self.weights();
        let kg = 1.0 - kr - kb;
        let (ys, cs, yo) = if self.full_range {
            (1.0, 1.0, 0.0)
        } else {
            (255.0 / 219.0, 255.0 / 224.0, 16.0)
        };
        let rv = 2.0 * (1.0 - kr) * cs;
        let bu = 2.0 * (1.0 - kb) * cs;
        let gu = -2.0 * kb * (1.0 - kb) / kg * cs;
        let gv = -2.0 * kr * (1.0 - kr) / kg * cs;
        ([ys, 0.0, rv, ys, gu, gv, ys, bu, 0.0], [yo, 128.0, 128.0])
    }
}

fn dtype_code(d: DType) -> i32 {
    match d {
        DType::U8 => 0,
        DType::F32 | DType::F32Unit => 1,
        DType::F16 | DType::F16Unit => 2,
    }
}

fn layout_code(l: Layout) -> i32 {
    match l {
        Layout::Fhwc => 0,
        Layout::Fchw => 1,
        Layout::Cfhw => 2,
    }
}

fn filter_code(i: Interpolation) -> i32 {
    match i {
        Interpolation::Nearest => 0,
        Interpolation::Bilinear => 1,
        Interpolation::Bicubic => 2,
        Interpolation::Area => 3,
    }
}

fn int(v: usize) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

impl ConvertParams {
    /// The block converting `src` into frame `f` of a sequence of `frames` frames at device address `out`,
    /// per `geometry` and `transforms`.
    pub(crate) fn new(
        src: &Source,
        geometry: &Geometry,
        transforms: &Transforms,
        out: u64,
        f: usize,
        frames: usize,
    ) -> Self {
        let (matrix, offset) = src.colour.matrix();
        let (scale, bias) = affine(transforms);
        let (out_w, out_h) = geometry.out();
        Self {
            luma: src.luma,
            chroma: src.chroma,
            out,
            luma_pitch: src.luma_pitch,
            chroma_pitch: src.chroma_pitch,
            src_w: int(src.width),
            src_h: int(src.height),
            high_depth: i32::from(src.high_depth),
            resized: i32::from(geometry.resized),
            frame_w: int(geometry.frame.0),
            frame_h: int(geometry.frame.1),
            filter: filter_code(transforms.interpolation),
            win_x: geometry
                .window
                .x
                .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            win_y: geometry
                .window
                .y
                .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            out_w: int(out_w),
            out_h: int(out_h),
            dtype: dtype_code(transforms.dtype),
            layout: layout_code(transforms.layout),
            frames: int(frames),
            frame_index: int(f),
            // As the CPU backend: swscale's fast path (8-bit 4:2:0 at an even height) repeats chroma; deeper
            // samples and odd heights go through its scaled path, which interpolates.
            chroma_cubic: i32::from(src.high_depth || src.height % 2 == 1),
            matrix,
            offset,
            fill: geometry.fill,
            scale,
            bias,
        }
    }

    /// Bytes of the whole sequence output the kernel indexes into.
    pub(crate) fn output_bytes(&self) -> usize {
        let size = match self.dtype {
            0 => 1,
            1 => 4,
            _ => 2,
        };
        self.frames as usize * self.out_w as usize * self.out_h as usize * CHANNELS * size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_size_matches_the_kernels() {
        // 3 addresses (24 bytes), 18 ints (72), 21 floats (84): 180, padded to 184 for the addresses'
        // alignment, as the PTX declares it.
        assert_eq!(std::mem::size_of::<ConvertParams>(), 184);
        let ptx = include_str!("convert.ptx");
        assert!(
            ptx.contains(".param .align 8 .b8 framefeed_convert_param_0[184]"),
            "the PTX's parameter block differs from ConvertParams: regenerate it (kernels/build.sh)"
        );
    }

    #[test]
    fn committed_ptx_is_built_from_the_kernel_source() {
        let out = std::env::temp_dir().join(format!("framefeed-{}.ptx", std::process::id()));
        let root = env!("CARGO_MANIFEST_DIR");
        let built = std::process::Command::new("bash")
            .arg(format!("{root}/kernels/build.sh"))
            .arg(&out)
            .output();
        match built {
            Ok(o) if o.status.success() => {
                let fresh = std::fs::read_to_string(&out).unwrap();
                let _ = std::fs::remove_file(&out);
                assert!(
                    fresh == include_str!("convert.ptx"),
                    "src/transform/convert.ptx is stale: run kernels/build.sh"
                );
            }
            Ok(o) => eprintln!(
                "SKIPPED: clang cannot build the PTX here ({})",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            ),
            Err(e) => eprintln!("SKIPPED: bash/clang not found ({e})"),
        }
    }

    #[test]
    fn matrices_map_black_white_and_grey() {
        for colorspace in [1, 5, 9] {
            for full_range in [false, true] {
                let (m, o) = Colour {
                    colorspace,
                    full_range,
                }
                .matrix();
                let rgb = |y: f32, u: f32, v: f32| -> [f32; 3] {
                    let d = [y - o[0], u - o[1], v - o[2]];
                    [0, 1, 2].map(|r| m[3 * r] * d[0] + m[3 * r + 1] * d[1] + m[3 * r + 2] * d[2])
                };
                let (black, white) = if full_range {
                    (0.0, 255.0)
                } else {
                    (16.0, 235.0)
                };
                for (y, want) in [(black, 0.0), (white, 255.0)] {
                    for c in rgb(y, 128.0, 128.0) {
                        assert!((c - want).abs() < 1e-3, "{colorspace} {full_range}: {c}");
                    }
                }
                // Pure red in BT.601 limited: Y 81, U 90, V 240.
                if colorspace == 5 && !full_range {
                    let [r, g, b] = rgb(81.0, 90.0, 240.0);
                    assert!(
                        (r - 255.0).abs() < 2.0 && g.abs() < 2.0 && b.abs() < 2.0,
                        "{r} {g} {b}"
                    );
                }
            }
        }
    }
}

/// The kernel's code, compiled for the CPU, against the CPU backend on the same files: what NVDEC's surfaces
/// hold is what libavcodec decodes (bit-exact decoders), so given the same planes both paths must agree.
#[cfg(test)]
mod kernel_on_cpu {
    use super::*;
    use crate::ffi::cuda::kernel::host::HostKernel;
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
        let out = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-i"])
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
        )
    }

    /// [`compare`] on any file, over its first `limit` frames (whole sequences).
    fn compare_file(
        path: &Path,
        pix_fmt: &str,
        (w, h): (usize, usize),
        colour: Colour,
        transforms: &Transforms,
        limit: usize,
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
        let dir = std::env::temp_dir().join(format!("framefeed-kernel-{}", std::process::id()));
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
                let geometry = planner.plan(w, h).unwrap();
                let mut params = ConvertParams::new(
                    &Source {
                        luma: 0,
                        chroma: 0,
                        luma_pitch: (w * sample) as i32,
                        chroma_pitch: (w.div_ceil(2) * 2 * sample) as i32,
                        width: w,
                        height: h,
                        high_depth,
                        colour,
                    },
                    &geometry,
                    transforms,
                    0,
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
        (sum / count as f64, max)
    }

    fn values(bytes: &[u8], dtype: DType) -> Vec<f64> {
        match dtype {
            DType::U8 => bytes.iter().map(|&b| f64::from(b)).collect(),
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
            // The CPU path resizes the YUV planes with swscale's fixed-point filters: close, not equal.
            assert!(
                mean <= 1.5 && max <= 8.0,
                "{resize:?}: mean {mean} max {max}"
            );
        }
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
            if let Err(why) = crate::decode::cuda::nvdec_support(&info) {
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
            );
            assert!(mean <= 1.5, "{file}: mean {mean} max {max}");
            checked += 1;
        }
        assert!(checked >= 10, "only {checked} corpus files checked");
    }
}
