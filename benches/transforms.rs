//! Fused transforms against the decode-only floor and against doing the same work afterwards (issue 4).
//! Interleaved rounds (ROUNDS, default 3), medians; 2 decoder threads, L=8, B=2, every batch polled and dropped.
//!
//! - floor: `ffmpeg -threads 2 -i X -f null -` (decoding alone);
//! - crop: centre crop 224x224, f32, ImageNet normalization, CFHW, fused;
//! - resize+crop: shorter side to 256, then centre crop 224x224, same output, fused;
//! - unfused crop: full-frame RGB u8 output, then the same crop, cast, normalization and transpose in Rust.
//!
//! Clips: `bash benches/clips.sh`. Run: `cargo bench --bench transforms`.

mod common;

use std::time::Instant;

use common::{ffmpeg_threads2, h264_clips, median, rounds};
use framefeed::{Config, Crop, DType, Layout, Resize, Transforms, VideoInput};

const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
const STD: [f32; 3] = [0.229, 0.224, 0.225];

fn fused(data: &bytes::Bytes, transforms: Transforms) -> (f64, u64) {
    let start = Instant::now();
    let input =
        VideoInput::new(Config::new(8, 2).decoder_threads(2).transforms(transforms)).unwrap();
    input.feed(data.clone()).unwrap();
    input.close();
    let mut frames = 0;
    for batch in input.iter() {
        let batch = batch.unwrap();
        assert!(batch.data_f32().is_some());
        frames += batch.valid_frames() as u64;
    }
    (start.elapsed().as_secs_f64(), frames)
}

/// Full frames out, then crop 224 at the centre, cast, normalize and transpose to CFHW, per sequence.
fn unfused(data: &bytes::Bytes) -> (f64, u64) {
    let start = Instant::now();
    let input = VideoInput::new(Config::new(8, 2).decoder_threads(2)).unwrap();
    input.feed(data.clone()).unwrap();
    input.close();
    let mut frames = 0;
    let mut out = Vec::new();
    for batch in input.iter() {
        let batch = batch.unwrap();
        let [h, w, _] = batch.frame_shape();
        let (x0, y0) = ((w - 224) / 2, (h - 224) / 2);
        for seq in batch.sequences() {
            let f = seq.shape()[0];
            out.clear();
            out.resize(3 * f * 224 * 224, 0f32);
            for (fi, frame) in seq.frames().enumerate() {
                let d = frame.data();
                for y in 0..224 {
                    for x in 0..224 {
                        let p = ((y0 + y) * w + x0 + x) * 3;
                        for c in 0..3 {
                            out[((c * f + fi) * 224 + y) * 224 + x] =
                                (f32::from(d[p + c]) / 255.0 - MEAN[c]) / STD[c];
                        }
                    }
                }
            }
            std::hint::black_box(&out);
        }
        frames += batch.valid_frames() as u64;
    }
    (start.elapsed().as_secs_f64(), frames)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rounds = rounds(3);
    let output = |t: Transforms| {
        t.crop(Crop::new(224, 224))
            .dtype(DType::F32Unit)
            .normalize(MEAN, STD)
            .layout(Layout::Cfhw)
    };
    println!("| clip | frames | floor fps | crop fps (ratio) | resize+crop fps (ratio) | unfused crop fps | fused / unfused |");
    println!("|---|---|---|---|---|---|---|");
    for (name, path, data) in h264_clips() {
        let (mut floor, mut crop, mut resize, mut late, mut frames) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), 0);
        for _ in 0..rounds {
            let start = Instant::now();
            ffmpeg_threads2(&path, &["-f", "null", "-"]);
            floor.push(start.elapsed().as_secs_f64());
            let (t, n) = fused(&data, output(Transforms::new()));
            crop.push(t);
            frames = n;
            let (t, n) = fused(
                &data,
                output(Transforms::new().resize(Resize::Shorter(256))),
            );
            assert_eq!(n, frames);
            resize.push(t);
            let (t, n) = unfused(&data);
            assert_eq!(n, frames);
            late.push(t);
        }
        let fps = |v: Vec<f64>| frames as f64 / median(v);
        let (f, c, r, u) = (fps(floor), fps(crop), fps(resize), fps(late));
        println!(
            "| {name} | {frames} | {f:.1} | {c:.1} ({:.2}) | {r:.1} ({:.2}) | {u:.1} | {:.2} |",
            c / f,
            r / f,
            c / u
        );
    }
}
