//! N NVDEC operators in one process (feature `cuda`), with each NVDEC driver (libavcodec's hwaccel and the direct nvcuvid decoder, rounds interleaved): the way an application runs several framefeed operators,
//! sharing the GPU's primary CUDA context (each operator has its own stream and NVDEC decoder), as opposed to
//! N processes with a context each, which the GPU time-slices (`benches/gpu.sh`).
//!
//!   cargo bench --features cuda --bench gpu_operators -- CLIP [N...]     (default N: 1 7 14)
//!
//! On a GPU machine without Rust, `benches/gpu-bundle.sh` packs this binary and `benches/gpu-run.sh operators`
//! runs it. Each round creates N operators (`Config::new(8, 2)`, `Device::Cuda(0)`, no CPU fallback), feeds each
//! the clip, and polls every batch on its own thread, waiting for the GPU to finish the last batch. Prints per N
//! and variant (full-frame RGB u8; crop 224 + f32 + CFHW): the median wall time of `REPS` rounds (default 3),
//! frames/s over all operators counted from before the operators are created, and frames/s counted from when
//! all of them are ready (after CUDA set-up, which a long-running application pays once).

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use framefeed::{Config, Crop, DType, Device, Layout, NvdecDriver, Transforms, VideoInput};

fn transforms(variant: &str) -> Transforms {
    match variant {
        "transforms" => Transforms::new()
            .crop(Crop::new(224, 224))
            .dtype(DType::F32)
            .layout(Layout::Cfhw),
        _ => Transforms::new(),
    }
}

/// One round: `n` operators decoding `clip` at once. Returns (wall time from creation, wall time from when
/// all are ready, frames decoded).
fn round(
    clip: &bytes::Bytes,
    n: usize,
    variant: &str,
    driver: NvdecDriver,
) -> (Duration, Duration, usize) {
    let start = Instant::now();
    let ready = Arc::new(Barrier::new(n + 1));
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let (clip, ready, t) = (clip.clone(), ready.clone(), transforms(variant));
            std::thread::spawn(move || {
                let config = Config::new(8, 2)
                    .device(Device::Cuda(0))
                    .nvdec_driver(driver)
                    .cpu_fallback(false)
                    .transforms(t);
                let input = VideoInput::new(config);
                ready.wait();
                let input = input.expect("a usable GPU");
                input.feed(clip).expect("feed");
                input.close();
                let mut frames = 0;
                let mut last = None;
                while let Some(batch) = input.next_batch().expect("decodes") {
                    frames += batch.valid_frames();
                    last = Some(batch);
                }
                // The batch is delivered when its kernels are queued: wait for the GPU to write the last one.
                if let Some(stream) = last.as_ref().and_then(|b| b.cuda_stream()) {
                    stream.synchronize().expect("the GPU finishes");
                }
                frames
            })
        })
        .collect();
    ready.wait();
    let set_up = start.elapsed();
    let frames = threads
        .into_iter()
        .map(|t| t.join().expect("no panic"))
        .sum();
    let total = start.elapsed();
    (total, total - set_up, frames)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(path) = args.first() else {
        eprintln!("usage: gpu_operators CLIP [N...]");
        return;
    };
    if let Err(e) = VideoInput::new(Config::new(1, 1).device(Device::Cuda(0))) {
        eprintln!("skipping: no usable GPU ({e})");
        return;
    }
    let clip = bytes::Bytes::from(std::fs::read(path).expect("read the clip"));
    let counts: Vec<usize> = match args[1..].iter().map(|a| a.parse()).collect() {
        Ok(c) if !args[1..].is_empty() => c,
        _ => vec![1, 7, 14],
    };
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let name = std::path::Path::new(path)
        .file_name()
        .map_or(path.clone(), |f| f.to_string_lossy().into_owned());
    for &n in &counts {
        for variant in ["plain", "transforms"] {
            // The two NVDEC drivers side by side, their rounds interleaved.
            let drivers = [NvdecDriver::Hwaccel, NvdecDriver::Direct];
            let mut total = [Vec::new(), Vec::new()];
            let mut decode = [Vec::new(), Vec::new()];
            let mut frames = [0, 0];
            for _ in 0..reps {
                for (i, &driver) in drivers.iter().enumerate() {
                    let (t, d, f) = round(&clip, n, variant, driver);
                    total[i].push(t.as_secs_f64());
                    decode[i].push(d.as_secs_f64());
                    frames[i] = f;
                }
            }
            for (i, driver) in drivers.iter().enumerate() {
                let (t, d) = (median(total[i].clone()), median(decode[i].clone()));
                println!(
                    "operators {name} x{n} {variant} {driver}: median {t:.3} s of {:.3?}, {:.0} frames/s in \
                     all; after set-up {:.0} frames/s",
                    total[i],
                    frames[i] as f64 / t,
                    frames[i] as f64 / d
                );
            }
        }
    }
}
