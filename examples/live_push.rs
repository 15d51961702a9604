//! A live source: the video's bytes are pushed chunk by chunk as they "arrive" (a file read in 64 KiB chunks,
//! with a pause between them), and batches come out while the video is still arriving.
//!
//! Run: `cargo run --example live_push -- clip.ts [chunk_bytes]` (no arguments: the repository's live MPEG-TS
//! test clip, 100 frames of 96x64, in 4 KiB chunks). Live input reads MPEG-TS (what encoders and cameras send),
//! fragmented or faststart MP4, Matroska/WebM and raw H.264/HEVC.

/// A short MPEG-TS stream, as an encoder sends it (`tests/fixtures/make.sh`).
static LIVE_TS: &[u8] = include_bytes!("../tests/fixtures/h264_live.ts");

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use framefeed::{Config, VideoInput};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut source, chunk): (Box<dyn Read + Send>, usize) = match args.next() {
        Some(path) => (Box::new(std::fs::File::open(path)?), 64 << 10),
        None => (Box::new(LIVE_TS), 4 << 10),
    };
    let chunk = args.next().map_or(Ok(chunk), |c| c.parse())?;

    // `low_latency`: frames leave the decoder as soon as they are decoded; full batches go out at once. Its
    // probe of 64 KiB suits a camera's bitrate; a small clip is identified from its first 8 KiB.
    let input = VideoInput::new(Config::new(8, 1).low_latency().probe_size(8 << 10))?;
    let live = input.feed_live_with_label("camera-1")?;
    input.close(); // no other video will be fed: polls end after this one

    let pushed = Arc::new(AtomicU64::new(0));
    let pusher = {
        let pushed = pushed.clone();
        std::thread::spawn(
            move || -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
                let mut buffer = vec![0; chunk];
                loop {
                    let n = source.read(&mut buffer)?;
                    if n == 0 {
                        live.finish(); // the end of the stream: the last sequence is delivered
                        return Ok(());
                    }
                    // `push` waits while the decoder is `live_buffer_bytes` (8 MiB) behind: memory stays bounded.
                    live.push(buffer[..n].to_vec())?;
                    pushed.fetch_add(n as u64, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(5)); // the network's pace
                }
            },
        )
    };

    let mut frames = 0;
    while let Some(batch) = input.next_batch()? {
        let seq = batch.sequence(0);
        frames += seq.valid_frames();
        println!(
            "frames {:?} out after {} bytes pushed, {:?} since the last one arrived",
            seq.indices(),
            pushed.load(Ordering::Relaxed),
            batch.latency().unwrap_or_default()
        );
    }
    pusher
        .join()
        .expect("pusher thread")
        .map_err(|e| e.to_string())?;
    println!("total: {frames} frames");
    Ok(())
}
