//! Throughput: framefeed (2 decoder threads, RGB batches) against the `ffmpeg` CLI on the same file, measured
//! side by side in one criterion run:
//! - `ffmpeg -threads 2 -i X -f rawvideo -pix_fmt rgb24 -y /dev/null` (same output: the target is ratio >= 1.0)
//! - `ffmpeg -threads 2 -i X -f null -` (decode only: the floor)
//!
//! Clips: `bash benches/clips.sh` (1080p and 4K H.264, see the script). Run: `cargo bench --bench decode`.
//! Results and ratios: benches/RESULTS.md.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use framefeed::{Config, VideoInput};

fn clip(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/bench-clips")
        .join(name);
    path.is_file().then_some(path)
}

fn frame_count(data: &[u8]) -> u64 {
    let input = VideoInput::new(Config::new(1, 1).decoder_threads(2)).unwrap();
    input.feed(data.to_vec()).unwrap();
    input.close();
    input.iter().map(|b| b.unwrap().valid_frames() as u64).sum()
}

fn ffmpeg(args: &[&str], path: &Path, tail: &[&str]) {
    let status = Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error"])
        .args(args)
        .arg("-i")
        .arg(path)
        .args(tail)
        .status()
        .expect("run ffmpeg");
    assert!(status.success());
}

fn bench(c: &mut Criterion) {
    for name in ["1080p.mp4", "4k.mp4"] {
        let Some(path) = clip(name) else {
            eprintln!("skipping {name}: run `bash benches/clips.sh` first");
            continue;
        };
        let data = bytes::Bytes::from(std::fs::read(&path).unwrap());
        let frames = frame_count(&data);
        let mut group = c.benchmark_group(name);
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(20))
            .throughput(Throughput::Elements(frames));
        group.bench_function("framefeed_L8_B2_threads2", |b| {
            b.iter(|| {
                let input = VideoInput::new(Config::new(8, 2).decoder_threads(2)).unwrap();
                input.feed(data.clone()).unwrap();
                input.close();
                let mut n = 0;
                for batch in input.iter() {
                    n += batch.unwrap().valid_frames() as u64;
                }
                assert_eq!(n, frames);
            })
        });
        group.bench_function("ffmpeg_rgb24_threads2", |b| {
            b.iter(|| {
                ffmpeg(
                    &["-threads", "2"],
                    &path,
                    &["-f", "rawvideo", "-pix_fmt", "rgb24", "-y", "/dev/null"],
                )
            })
        });
        group.bench_function("ffmpeg_decode_only_threads2", |b| {
            b.iter(|| ffmpeg(&["-threads", "2"], &path, &["-f", "null", "-"]))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
