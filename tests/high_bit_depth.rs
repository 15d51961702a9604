//! Lossless output of high bit depth (issue 62): `DType::U16` is byte for byte the `ffmpeg` CLI's `-pix_fmt
//! rgb48le` decode of 9 to 16-bit sources (4:2:0, 4:2:2 and 4:4:4, odd sizes, turned ones, the corpus's 10-bit
//! H.264) and the exact widening (`level * 257`) of 8-bit ones; the float types are computed from the same
//! 16-bit levels (`/ 65535`, `/ 257`), not from 8-bit RGB; and every transform (crop, resize, layouts,
//! normalization, turns) keeps the precision: a crop is the same pixels of the whole frame's RGB48, the
//! layouts are its transposes, a resize keeps more than 256 levels.

mod common;

use std::path::Path;

use common::{corpus, ffmpeg_md5s_as, fixture, md5_hex, skip_without_ffmpeg};
use framefeed::{
    Batch, Config, Crop, CropPosition, DType, Encoded, Layout, Resize, Transforms, VideoInput,
};

/// The high-bit-depth fixtures (`tests/fixtures/make.sh`): PQ and HLG, 10 and 12 bits, 4:2:0, 4:2:2 and 4:4:4,
/// HEVC and VP9, odd sizes, and a 10-bit HEVC turned by its display matrix.
const DEEP: [&str; 7] = [
    "hdr_pq_hevc10.mp4",
    "hdr_pq_hevc12.mkv",
    "hdr_hlg_hevc10_422.mp4",
    "hdr_hlg_vp9_10.webm",
    "hdr_pq_hevc444_odd.mp4",
    "hdr_hlg_vp9_10_odd.webm",
    "rotated_90_hevc10.mp4",
];

fn batches(path: &Path, transforms: Transforms) -> Vec<Batch> {
    let input = VideoInput::new(Config::new(4, 2).transforms(transforms)).unwrap();
    input.feed(Encoded::file(path).unwrap()).unwrap();
    input.close();
    input
        .iter()
        .map(|b| b.unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .collect()
}

/// Every real frame's bytes, in order, with the frame shape `[h, w, 3]`.
fn frames(path: &Path, transforms: Transforms) -> Vec<([usize; 3], Vec<u8>)> {
    batches(path, transforms)
        .iter()
        .flat_map(|b| {
            let shape = b.frame_shape();
            b.sequences()
                .into_iter()
                .flat_map(move |s| s.frames().map(move |f| (shape, f.data().to_vec())))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The elements of every real frame of a batch list (any layout), as `T` read from the bytes.
fn values<T: Copy>(path: &Path, transforms: Transforms, read: fn(&[u8]) -> T) -> Vec<T> {
    let size = std::mem::size_of::<T>();
    frames(path, transforms)
        .into_iter()
        .flat_map(|(_, bytes)| bytes.chunks_exact(size).map(read).collect::<Vec<_>>())
        .collect()
}

fn u16_of(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}

fn f32_of(b: &[u8]) -> f32 {
    f32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn u16s() -> Transforms {
    Transforms::new().dtype(DType::U16)
}

#[test]
fn uint16_is_the_ffmpeg_clis_rgb48le_byte_for_byte() {
    if skip_without_ffmpeg("the rgb48le conformance test") {
        return;
    }
    let mut paths: Vec<_> = DEEP.iter().map(|n| fixture(n)).collect();
    if let Some(dir) = corpus("the rgb48le conformance test on the corpus's 10-bit clip") {
        paths.push(dir.join("h264_10bits.mp4"));
    }
    for path in paths {
        let got: Vec<String> = frames(&path, u16s())
            .iter()
            .map(|(_, bytes)| md5_hex(bytes))
            .collect();
        let want = ffmpeg_md5s_as(&path, &[], None, "rgb48le");
        assert!(!want.is_empty(), "{}: no frame", path.display());
        assert_eq!(got, want, "{}: frames differ from rgb48le", path.display());
    }
}

#[test]
fn eight_bit_sources_give_their_levels_widened_exactly() {
    let path = fixture("h264.mp4");
    let eight = frames(&path, Transforms::new());
    let sixteen = frames(&path, u16s());
    assert_eq!(eight.len(), sixteen.len());
    for ((shape8, a), (shape16, b)) in eight.iter().zip(&sixteen) {
        assert_eq!(shape8, shape16);
        let widened: Vec<u16> = a.iter().map(|&v| u16::from(v) * 257).collect();
        let got: Vec<u16> = b.chunks_exact(2).map(u16_of).collect();
        assert!(got == widened, "a frame is not its 8-bit levels times 257");
    }
}

#[test]
fn floats_come_from_the_sixteen_bit_levels() {
    for name in ["hdr_pq_hevc10.mp4", "hdr_hlg_hevc10_422.mp4"] {
        let path = fixture(name);
        let levels = values(&path, u16s(), u16_of);
        let unit = values(&path, Transforms::new().dtype(DType::F32Unit), f32_of);
        let scaled = values(&path, Transforms::new().dtype(DType::F32), f32_of);
        let half = values(&path, Transforms::new().dtype(DType::F16Unit), |b| {
            half::f16::from_bits(u16_of(b))
        });
        assert_eq!(levels.len(), unit.len());
        for (i, &v) in levels.iter().enumerate() {
            assert_eq!(unit[i], f32::from(v) / 65535.0, "{name}: element {i}");
            assert_eq!(scaled[i], f32::from(v) / 257.0, "{name}: element {i}");
            assert_eq!(half[i], half::f16::from_f32(f32::from(v) / 65535.0));
        }
        // More than the 256 levels of 8-bit RGB.
        let mut distinct = levels.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() > 256, "{name}: {} levels", distinct.len());
        let mean = [0.5, 0.4, 0.3];
        let std = [0.2, 0.25, 0.3];
        let normalized = values(
            &path,
            Transforms::new().dtype(DType::F32Unit).normalize(mean, std),
            f32_of,
        );
        for (i, &v) in levels.iter().enumerate() {
            let c = i % 3;
            let want = (f32::from(v) / 65535.0 - mean[c]) / std[c];
            assert_eq!(normalized[i], want, "{name}: normalized element {i}");
        }
    }
}

/// The window `(x, y, w, h)` of a frame `fw` pixels wide, of `size`-byte channels.
fn window(
    frame: &[u8],
    fw: usize,
    (x, y, w, h): (usize, usize, usize, usize),
    size: usize,
) -> Vec<u8> {
    let px = 3 * size;
    (y..y + h)
        .flat_map(|row| frame[(row * fw + x) * px..(row * fw + x + w) * px].to_vec())
        .collect()
}

#[test]
fn a_uint16_crop_is_the_same_pixels_of_the_whole_frame() {
    for name in DEEP {
        let path = fixture(name);
        let whole = frames(&path, u16s());
        let [fh, fw, _] = whole[0].0;
        for (w, h) in [(1, 1), (17, 9), (fw - 1, fh - 1), (fw, fh)] {
            for (px, py) in [(0.0, 0.0), (0.37, 0.61), (1.0, 1.0)] {
                let crop =
                    Crop::new(w as u32, h as u32).position(CropPosition::Fixed { x: px, y: py });
                let batches = batches(&path, u16s().crop(crop));
                let mut n = 0;
                for batch in &batches {
                    for seq in batch.sequences() {
                        let win = seq.crop_window().expect("a window");
                        for f in seq.frames() {
                            let (_, full) = &whole[f.index() as usize];
                            let at = (win.x as usize, win.y as usize, w, h);
                            assert!(
                                f.data() == window(full, fw, at, 2).as_slice(),
                                "{name}: crop {w}x{h} at {at:?}, frame {} differs",
                                f.index()
                            );
                            n += 1;
                        }
                    }
                }
                assert_eq!(n, whole.len(), "{name}");
            }
        }
    }
}

#[test]
fn uint16_layouts_are_transposes_of_fhwc() {
    let path = fixture("hdr_hlg_hevc10_422.mp4");
    let fhwc = batches(&path, u16s());
    for layout in [Layout::Fchw, Layout::Cfhw] {
        let other = batches(&path, u16s().layout(layout));
        for (a, b) in fhwc.iter().zip(&other) {
            for (sa, sb) in a.sequences().iter().zip(b.sequences()) {
                let (x, y) = (sa.data_u16().unwrap(), sb.data_u16().unwrap());
                let [f, h, w, c] = sa.shape();
                for fi in 0..f {
                    for yi in 0..h {
                        for xi in 0..w {
                            for ci in 0..c {
                                let want = x[((fi * h + yi) * w + xi) * c + ci];
                                let at = match layout {
                                    Layout::Fchw => ((fi * c + ci) * h + yi) * w + xi,
                                    _ => ((ci * f + fi) * h + yi) * w + xi,
                                };
                                assert_eq!(y[at], want, "{layout:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// PSNR in dB of two runs of 16-bit levels (peak 65535; infinite when equal).
fn psnr16(a: &[u16], b: &[u16]) -> f64 {
    assert_eq!(a.len(), b.len());
    let se: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
        .sum();
    if se == 0.0 {
        return f64::INFINITY;
    }
    10.0 * (65535.0f64.powi(2) / (se / a.len() as f64)).log10()
}

#[test]
fn a_uint16_resize_keeps_the_precision() {
    // framefeed resizes the YUV planes at 16 bits (4:2:0, as the 8-bit path does), then converts only the window
    // to RGB48. Against the ffmpeg CLI doing the same (`scale` in yuv420p16le, then rgb48le): the same bytes
    // (a PSNR, 16-bit peak, reported when not); and finer than 8 bits: most levels off the 8-bit grid.
    if skip_without_ffmpeg("the 16-bit resize test") {
        return;
    }
    let cases = [
        ("hdr_pq_hevc10.mp4", (61, 33)),
        ("hdr_pq_hevc10.mp4", (64, 36)),
        ("hdr_hlg_hevc10_422.mp4", (96, 54)),
        ("hdr_pq_hevc444_odd.mp4", (61, 33)),
        ("hdr_hlg_vp9_10_odd.webm", (66, 38)),
    ];
    for (name, (w, h)) in cases {
        let resize = Resize::Exact {
            width: w as u32,
            height: h as u32,
        };
        let path = fixture(name);
        let cli: Vec<u16> = common::ffmpeg_stdout(
            &path,
            &[
                "-vf",
                &format!("scale={w}:{h}:flags=bilinear,format=yuv420p16le"),
                "-pix_fmt",
                "rgb48le",
                "-f",
                "rawvideo",
                "-",
            ],
        )
        .chunks_exact(2)
        .map(u16_of)
        .collect();
        let whole = frames(&path, u16s().resize(resize));
        let len = w * h * 3;
        assert_eq!(cli.len(), whole.len() * len, "{name}: frame count");
        for (i, (_, bytes)) in whole.iter().enumerate() {
            let got: Vec<u16> = bytes.chunks_exact(2).map(u16_of).collect();
            let psnr = psnr16(&got, &cli[i * len..(i + 1) * len]);
            assert!(
                psnr.is_infinite(),
                "{name}, frame {i} vs ffmpeg: {psnr:.1} dB"
            );
            let off = got.iter().filter(|&&v| v % 257 != 0).count();
            assert!(
                off > len / 2,
                "{name}: only {off} levels off the 8-bit grid"
            );
        }
        // A crop of the resized frame is the same pixels of the whole resized frame.
        for (cw, ch) in [(20, 11), (1, 1), (w - 3, h - 2)] {
            for (px, py) in [(0.7, 0.3), (0.0, 1.0)] {
                let crop =
                    Crop::new(cw as u32, ch as u32).position(CropPosition::Fixed { x: px, y: py });
                for batch in batches(&path, u16s().resize(resize).crop(crop)) {
                    for seq in batch.sequences() {
                        let win = seq.crop_window().unwrap();
                        for f in seq.frames() {
                            let (_, full) = &whole[f.index() as usize];
                            let at = (win.x as usize, win.y as usize, cw, ch);
                            let want = window(full, w, at, 2);
                            assert!(f.data() == want.as_slice(), "{name} at {w}x{h}: {at:?}");
                        }
                    }
                }
            }
        }
    }
}
