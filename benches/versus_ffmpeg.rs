//! Side-by-side throughput against the `ffmpeg` CLI, interleaved: every round runs framefeed (in process,
//! 2 decoder threads, L=8, B=2), then `ffmpeg -threads 2 -i X -f rawvideo -pix_fmt rgb24 -y /dev/null`, then
//! `ffmpeg -threads 2 -i X -f null -`, so that the machine's drifting speed hits all three alike. Prints the
//! median wall time and frames/s of each and the ratios.
//!
//! Clips: `bash benches/clips.sh`. Run: `cargo bench --bench versus_ffmpeg` (ROUNDS=N to change the default 7).

mod common;

use std::path::Path;
use std::time::Instant;

use common::{ffmpeg_threads2, framefeed_frames, h264_clips, median, rounds};

fn time_ffmpeg(path: &Path, tail: &[&str]) -> f64 {
    let start = Instant::now();
    ffmpeg_threads2(path, tail);
    start.elapsed().as_secs_f64()
}

fn time_framefeed(data: &bytes::Bytes) -> (f64, u64) {
    let start = Instant::now();
    let frames = framefeed_frames(data);
    (start.elapsed().as_secs_f64(), frames)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run only under cargo bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rounds = rounds(7);
    println!("| clip | frames | framefeed s (fps) | ffmpeg rgb24 s (fps) | ffmpeg null s (fps) | ratio vs rgb24 | ratio vs null |");
    println!("|---|---|---|---|---|---|---|");
    for (name, path, data) in h264_clips() {
        let (mut ours, mut rgb, mut null, mut frames) = (Vec::new(), Vec::new(), Vec::new(), 0);
        for _ in 0..rounds {
            let (t, n) = time_framefeed(&data);
            ours.push(t);
            frames = n;
            rgb.push(time_ffmpeg(
                &path,
                &["-f", "rawvideo", "-pix_fmt", "rgb24", "-y", "/dev/null"],
            ));
            null.push(time_ffmpeg(&path, &["-f", "null", "-"]));
        }
        let (o, r, n) = (median(ours), median(rgb), median(null));
        let fps = |t: f64| frames as f64 / t;
        println!(
            "| {name} | {frames} | {o:.2} ({:.1}) | {r:.2} ({:.1}) | {n:.2} ({:.1}) | {:.2} | {:.2} |",
            fps(o),
            fps(r),
            fps(n),
            r / o,
            n / o
        );
    }
}
