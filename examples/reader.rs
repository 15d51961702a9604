//! Random access to one video with `VideoReader`, the way a dataset's `__getitem__` reads: open it (it is
//! indexed, no frame decoded), ask its length and rate, then fetch frames by index, by range or by time. Each
//! read decodes only the GOPs its frames need; one reader may be shared by threads.
//!
//! Run: `cargo run --example reader -- video.mp4` (no argument: the built-in sample, 60 frames of 320x240).

use std::sync::Arc;

use framefeed::{Config, DType, Encoded, Layout, Resize, Transforms, VideoReader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let video = match std::env::args().nth(1) {
        Some(path) => Encoded::file(path)?, // read where the demuxer looks, never whole in memory
        None => Encoded::new(framefeed::SAMPLE_MP4),
    };
    // The reader's output: here the shorter side resized to 120 pixels, as floats in [0, 1], channels first.
    let transforms = Transforms::new()
        .resize(Resize::Shorter(120))
        .dtype(DType::F32Unit)
        .layout(Layout::Fchw);
    let reader = Arc::new(VideoReader::open(
        video,
        &Config::new(1, 1).transforms(transforms),
    )?);

    let meta = reader.metadata();
    println!(
        "{} frames of {}x{} at {:.2} fps, {:.2} s, {}, keyframes at {:?}",
        meta.num_frames,
        meta.width,
        meta.height,
        meta.average_fps,
        meta.duration_seconds,
        meta.codec,
        meta.key_frame_indices
    );

    // Any order, repeats allowed: one buffer of the frames in the order asked.
    let n = meta.num_frames;
    let frames = reader.frames_at(&[n - 1, 0, 0, n / 2])?;
    println!(
        "frames {:?}: shape {:?}, pts {:?}",
        frames.indices(),
        frames.shape(),
        frames.pts_seconds()
    );

    // Every 10th frame, and the frames shown in [0.5 s, 0.6 s).
    let every_tenth = reader.frames_in_range(0, n, 10)?;
    println!("every 10th: {:?}", every_tenth.indices());
    let shown = reader.frames_played_in_range(0.5, 0.6)?;
    println!("shown in [0.5 s, 0.6 s): {:?}", shown.indices());

    // Threads share one reader; each read is independent of the others. Here each reads 4 frames of its half.
    let workers: Vec<_> = (0..2u64)
        .map(|t| {
            let reader = reader.clone();
            std::thread::spawn(move || {
                reader
                    .frames_in_range(t * n / 2, (t * n / 2 + 4).min(n), 1)
                    .map(|f| f.indices().to_vec())
            })
        })
        .collect();
    for worker in workers {
        println!("a thread read {:?}", worker.join().expect("reader thread")?);
    }
    let first = reader.frames_at(&[0])?;
    let pixels = first.batch().data_f32().expect("F32Unit output");
    println!(
        "frame 0: {} floats, the first {:?}",
        pixels.len(),
        &pixels[..3]
    );
    println!("packets decoded so far: {}", reader.packets_decoded());
    Ok(())
}
