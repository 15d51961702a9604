//! Throughput: framefeed (2 decoder threads, RGB batches) against the `ffmpeg` CLI on the same file, measured
//! side by side in one criterion run:
//! - `ffmpeg -threads 2 -i X -f rawvideo -pix_fmt rgb24 -y /dev/null` (same output: the target is ratio >= 1.0)
//! - `ffmpeg -threads 2 -i X -f null -` (decode only: the floor)
//!
//! Clips: `bash benches/clips.sh` (1080p and 4K H.264, see the script). Run: `cargo bench --bench decode`.
//! Results and ratios: benches/RESULTS.md.

mod common;

use std::time::Duration;

use common::{ffmpeg_threads2, framefeed_frames, h264_clips};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn bench(c: &mut Criterion) {
    for (name, path, data) in h264_clips() {
        let frames = framefeed_frames(&data);
        let mut group = c.benchmark_group(name);
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(20))
            .throughput(Throughput::Elements(frames));
        group.bench_function("framefeed_L8_B2_threads2", |b| {
            b.iter(|| assert_eq!(framefeed_frames(&data), frames))
        });
        group.bench_function("ffmpeg_rgb24_threads2", |b| {
            b.iter(|| {
                ffmpeg_threads2(
                    &path,
                    &["-f", "rawvideo", "-pix_fmt", "rgb24", "-y", "/dev/null"],
                )
            })
        });
        group.bench_function("ffmpeg_decode_only_threads2", |b| {
            b.iter(|| ffmpeg_threads2(&path, &["-f", "null", "-"]))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
