//! Many cameras, one model: a `Mux` batches sequences across live sources, out when a batch is full or once
//! its deadline has passed since its oldest sequence was ready, so a slow or dead camera never holds the others
//! back. Three "cameras" here push the built-in sample (60 frames each) as live streams, at their own pace.
//!
//! Run: `cargo run --example cameras_mux` (real cameras: `mux.add_url("rtsp://...", UrlOptions::new(), config)`).

use std::time::Duration;

use framefeed::{Config, Mux, MuxConfig, MuxEvent, MuxPolicy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Batches of up to 4 sequences, out at most 33 ms after their oldest sequence; lose no frame.
    let mux = Mux::new(MuxConfig::new(4, Duration::from_millis(33)).policy(MuxPolicy::EveryFrame))?;
    let mut pushers = Vec::new();
    for (n, pace) in [1u64, 3, 7].into_iter().enumerate() {
        // Each camera's operator gives batches of one sequence (here 8 frames).
        let (camera, live) =
            mux.add_live(format!("camera-{n}"), Config::new(8, 1).low_latency())?;
        println!("camera {} joined", camera.0);
        pushers.push(std::thread::spawn(move || -> framefeed::Result<()> {
            for chunk in framefeed::SAMPLE_MP4.chunks(4096) {
                live.push(chunk)?;
                std::thread::sleep(Duration::from_millis(pace));
            }
            live.finish();
            Ok(())
        }));
    }
    mux.close(); // no more cameras: polls end once every camera has ended

    let mut sequences = 0;
    while let Some(event) = mux.next_event()? {
        match event {
            MuxEvent::Batch(batch) => {
                let from: Vec<String> = batch
                    .entries()
                    .iter()
                    .map(|e| format!("{}:{:?}", e.label(), e.sequence().indices().first()))
                    .collect();
                println!(
                    "batch of {} sequences {:?}: {from:?}",
                    batch.len(),
                    batch.sequence_shape()
                );
                sequences += batch.len();
                let _tensor: Vec<u8> = batch.to_contiguous(); // N x the batch's one sequence shape
            }
            MuxEvent::Ended { label, error, .. } => println!("{label} ended ({error:?})"),
        }
    }
    for pusher in pushers {
        pusher.join().expect("pusher thread")?;
    }
    for camera in mux.stats() {
        println!(
            "{}: {} sequences, {} dropped",
            camera.label, camera.sequences, camera.dropped
        );
    }
    println!("total: {sequences} sequences");
    Ok(())
}
