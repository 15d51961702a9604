//! Shared by the benchmarks: the clips, one framefeed run and one ffmpeg run.
#![allow(dead_code)] // each benchmark uses part of these

use std::path::{Path, PathBuf};
use std::process::Command;

use framefeed::{Config, VideoInput};

/// A clip made by `benches/clips.sh`, when it exists.
pub fn clip(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/bench-clips")
        .join(name);
    path.is_file().then_some(path)
}

/// The 1080p and 4K H.264 clips that exist, as (name, path, bytes); a missing one is reported and skipped.
pub fn h264_clips() -> Vec<(&'static str, PathBuf, bytes::Bytes)> {
    ["1080p.mp4", "4k.mp4"]
        .into_iter()
        .filter_map(|name| {
            let Some(path) = clip(name) else {
                eprintln!("skipping {name}: run `bash benches/clips.sh` first");
                return None;
            };
            let data = bytes::Bytes::from(std::fs::read(&path).expect("read the clip"));
            Some((name, path, data))
        })
        .collect()
}

/// Decodes `data` with one operator (L=8, B=2, 2 decoder threads), polling and dropping every batch.
/// Returns the number of frames.
pub fn framefeed_frames(data: &bytes::Bytes) -> u64 {
    let input = VideoInput::new(Config::new(8, 2).decoder_threads(2)).unwrap();
    input.feed(data.clone()).unwrap();
    input.close();
    input
        .iter()
        .map(|batch| batch.unwrap().valid_frames() as u64)
        .sum()
}

/// Runs `ffmpeg -threads 2 -i path TAIL...`.
pub fn ffmpeg_threads2(path: &Path, tail: &[&str]) {
    let status = Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-threads", "2", "-i"])
        .arg(path)
        .args(tail)
        .status()
        .expect("run ffmpeg");
    assert!(status.success());
}

/// The median of some timings.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The number of interleaved rounds: `ROUNDS` from the environment, else `default`.
pub fn rounds(default: usize) -> usize {
    std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default)
}
