//! An async ingest loop on tokio: one task feeds files (read from disk as they are decoded, never whole in
//! memory) while the main task awaits batches, without blocking a runtime thread.
//!
//! Run: `cargo run --example tokio_ingest -- a.mp4 b.mkv` (no arguments: the built-in sample, 60 frames).

use std::sync::Arc;

use framefeed::{Config, Encoded, Error, VideoInput};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    // Sequences of 8 frames, at most 4 per batch; the operator is shared by the two tasks.
    let input = Arc::new(VideoInput::new(Config::new(8, 4))?);

    let feeder = {
        let input = input.clone();
        tokio::spawn(async move {
            if paths.is_empty() {
                input
                    .feed_async((framefeed::SAMPLE_MP4, "sample.mp4"))
                    .await?;
            }
            for path in paths {
                // `feed_async` waits (as a future) while the bounded feed queue is full.
                match Encoded::file(&path) {
                    Ok(video) => {
                        input.feed_async(video.label(path)).await?;
                    }
                    Err(e) => eprintln!("{path}: {e}"),
                }
            }
            input.close(); // no more videos: the poll below ends after the last batch
            Ok::<(), Error>(())
        })
    };

    let (mut batches, mut frames) = (0, 0);
    loop {
        match input.next_batch_async().await {
            Ok(Some(batch)) => {
                let real: usize = batch.sequences().iter().map(|s| s.valid_frames()).sum();
                let label = batch.label().map(|l| l.to_string()).unwrap_or_default();
                println!(
                    "{label}: batch {} with {} sequences, {real} frames of {:?}",
                    batch.index(),
                    batch.len(),
                    batch.frame_shape()
                );
                batches += 1;
                frames += real;
            }
            Ok(None) => break, // closed, and every video delivered
            // One video failed (its error names it); the others go on.
            Err(e @ Error::Video { .. }) => eprintln!("error: {e}"),
            Err(e) => return Err(e.into()),
        }
    }
    feeder.await??;
    println!("total: {frames} frames in {batches} batches");
    Ok(())
}
