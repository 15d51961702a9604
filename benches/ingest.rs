//! Live ingest benchmarks (issue 3). Run with `cargo bench --bench ingest` after `bash benches/clips.sh`.
//!
//! 1. Latency: a 1080p30 H.264 MPEG-TS stream is pushed into a [`framefeed::LiveVideo`] at its real-time rate
//!    (each frame's packet at its 1/30 s slot, in decode order). For each batch (L=8, B=1) we take the time
//!    from the arrival of the last byte of its frames to its delivery. Also: time to the first batch.
//! 2. Service throughput: the ingest service (`framefeed::server`, in-process, loopback) with 8 concurrent uploads of 8
//!    different 1080p clips, total frames/s, against one `framefeed run` over the same 8 files, in interleaved
//!    rounds (`ROUNDS`, default 5), medians.

mod common;
#[path = "../tests/common/http_client.rs"]
mod http_client;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{clip, median, rounds};
use framefeed::{Config, VideoInput};

/// (byte position, pts in ms) of each video packet, in file (decode) order, from ffprobe.
fn packets(path: &Path) -> Vec<(usize, i64)> {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "packet=pos,pts_time",
        ])
        .args(["-of", "csv=p=0"])
        .arg(path)
        .output()
        .expect("run ffprobe");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut it = l.split(',');
            let pts: f64 = it.next()?.parse().ok()?;
            let pos: usize = it.next()?.parse().ok()?;
            Some((pos, (pts * 1000.0).round() as i64))
        })
        .collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct Latency {
    first_batch_ms: f64,
    first_batch_after_its_frames_ms: f64,
    batches: Vec<f64>,
}

/// Pushes `path` at 30 fps into a live video and measures each batch's delay past its frames' arrival.
fn live_latency(path: &Path, config: Config) -> Latency {
    let data = std::fs::read(path).unwrap();
    let packets = packets(path);
    assert!(
        packets.len() > 16,
        "ffprobe found no packets in {}",
        path.display()
    );
    let input = VideoInput::new(config).unwrap();
    let live = input.feed_live().unwrap();
    input.close();
    let (arrived_tx, arrived_rx) = mpsc::channel::<(i64, Instant)>();
    let start = Instant::now();
    let pusher = std::thread::spawn(move || {
        for (k, &(pos, pts)) in packets.iter().enumerate() {
            let end = packets.get(k + 1).map_or(data.len(), |p| p.0);
            let from = if k == 0 { 0 } else { pos };
            let slot = start + Duration::from_secs_f64(k as f64 / 30.0);
            if let Some(wait) = slot.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            live.push(Bytes::copy_from_slice(&data[from..end])).unwrap();
            arrived_tx.send((pts, Instant::now())).unwrap();
        }
        live.finish();
    });
    let mut arrival: HashMap<i64, Instant> = HashMap::new();
    let mut latencies = Vec::new();
    let mut first = None;
    for batch in input.iter() {
        let batch = batch.unwrap();
        let delivered = Instant::now();
        arrival.extend(arrived_rx.try_iter());
        let frames_in = batch
            .sequences()
            .iter()
            .flat_map(|s| s.pts().to_vec())
            .map(|pts| {
                *arrival
                    .get(&((pts * 1000.0).round() as i64))
                    .expect("a delivered frame's packet has arrived")
            })
            .max()
            .unwrap();
        let late = delivered.duration_since(frames_in).as_secs_f64() * 1000.0;
        if first.is_none() {
            first = Some((delivered.duration_since(start).as_secs_f64() * 1000.0, late));
        } else {
            latencies.push(late);
        }
    }
    pusher.join().unwrap();
    let (first_batch_ms, first_batch_after_its_frames_ms) = first.unwrap();
    latencies.sort_by(f64::total_cmp);
    Latency {
        first_batch_ms,
        first_batch_after_its_frames_ms,
        batches: latencies,
    }
}

/// One `framefeed run` over the files (release CLI, defaults but L=8 B=2): (frames, seconds).
fn cli_run(files: &[PathBuf]) -> (u64, f64) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_framefeed"))
        .args(["run", "--json", "-L", "8", "-B", "2"])
        .args(files)
        .output()
        .expect("run framefeed");
    let seconds = start.elapsed().as_secs_f64();
    assert!(out.status.success());
    let last = String::from_utf8(out.stdout).unwrap();
    let summary: serde_json::Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    (summary["summary"]["frames"].as_u64().unwrap(), seconds)
}

/// All files uploaded at once to the service (64 KiB chunks, as fast as it takes them): (frames, seconds).
fn service_run(
    rt: &tokio::runtime::Runtime,
    addr: std::net::SocketAddr,
    data: &[Vec<u8>],
) -> (u64, f64) {
    rt.block_on(async {
        let start = Instant::now();
        let mut uploads = Vec::new();
        for d in data {
            uploads.push(
                http_client::upload(
                    addr,
                    "127.0.0.1",
                    "sequence_length=8&batch_size=2",
                    http_client::chunks_of(d, 64 * 1024),
                    Duration::ZERO,
                    None,
                )
                .await,
            );
        }
        let mut frames = 0;
        for up in uploads {
            let (_, lines) = up.response.await.unwrap();
            let summary = &lines.last().unwrap()["summary"];
            assert_eq!(summary["errors"], serde_json::json!([]));
            frames += summary["frames"].as_u64().unwrap();
        }
        (frames, start.elapsed().as_secs_f64())
    })
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return; // `cargo test` builds benchmarks too; only `cargo bench` runs them.
    }
    let Some(live_clip) = clip("1080p_live.ts") else {
        eprintln!("skipped: run `bash benches/clips.sh` first");
        return;
    };
    println!("## Live latency: 1080p30 pushed at real-time rate, L=8 B=1\n");
    println!("| clip | config | first batch after start | first batch past its frames | batches after the first: median / p95 / max past their frames' arrival |");
    println!("|---|---|---|---|---|");
    let configs = [
        (
            "low_latency(), 2 slice threads",
            Config::new(8, 1).low_latency().decoder_threads(2),
        ),
        (
            "defaults (frame threads, 2)",
            Config::new(8, 1).decoder_threads(2),
        ),
    ];
    for name in ["1080p_live.ts", "1080p.ts"] {
        let path = if name == "1080p_live.ts" {
            live_clip.clone()
        } else if let Some(p) = clip(name) {
            p
        } else {
            continue;
        };
        for (label, config) in &configs {
            let l = live_latency(&path, config.clone());
            println!(
                "| {name} | {label} | {:.0} ms | {:.1} ms | {:.1} / {:.1} / {:.1} ms |",
                l.first_batch_ms,
                l.first_batch_after_its_frames_ms,
                percentile(&l.batches, 0.5),
                percentile(&l.batches, 0.95),
                percentile(&l.batches, 1.0)
            );
        }
    }

    let files: Vec<PathBuf> = (0..8)
        .filter_map(|i| clip(&format!("svc_{i}.ts")))
        .collect();
    if files.len() < 8 {
        eprintln!("skipped the service benchmark: svc_*.ts missing");
        return;
    }
    let data: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let addr = rt.block_on(async {
        let mut config = framefeed::server::ServeConfig::default();
        config.addr = "127.0.0.1:0".parse().unwrap();
        let server = framefeed::server::Server::bind(config).await.unwrap();
        let addr = server.local_addr();
        tokio::spawn(server.run(std::future::pending()));
        addr
    });
    let rounds = rounds(5);
    let (mut cli, mut svc) = (Vec::new(), Vec::new());
    let mut frames = (0, 0);
    for _ in 0..rounds {
        let (f, s) = cli_run(&files);
        cli.push(f as f64 / s);
        frames.0 = f;
        let (f, s) = service_run(&rt, addr, &data);
        svc.push(f as f64 / s);
        frames.1 = f;
    }
    assert_eq!(frames.0, frames.1, "both decode every frame");
    let (c, s) = (median(cli), median(svc));
    println!("\n## Service throughput: 8 concurrent uploads vs one `framefeed run` (medians of {rounds} interleaved rounds)\n");
    println!("| what | frames | frames/s |");
    println!("|---|---|---|");
    println!(
        "| `framefeed run -L 8 -B 2` over svc_0..7.ts (one operator, all cores) | {} | {c:.1} |",
        frames.0
    );
    println!(
        "| ingest server, 8 concurrent uploads (1 decoder thread each), L=8 B=2 | {} | {s:.1} |",
        frames.1
    );
    println!("\nratio service / CLI: **{:.2}**", s / c);
}
