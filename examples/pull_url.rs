//! Pulling a source by URL: a camera (`rtsp://`), a contribution feed (`srt://`, `rtmp://`), an HLS playlist or
//! a file over `http(s)://`, an object in a store (`s3://`, `gs://`, `az://`), or a local `file:`. framefeed's
//! decoding thread opens it, reads it, reopens it after a drop (the next batch reports the gap), and ends the
//! video when the source ends it.
//!
//! Run: `cargo run --example pull_url -- srt://192.0.2.7:9000` (no argument: the built-in sample written to a
//! temporary file and pulled as `file:`, which works offline).

use std::time::Duration;

use framefeed::{Config, Reconnect, Scheme, UrlOptions, VideoInput};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (url, temporary) = match std::env::args().nth(1) {
        Some(url) => (url, None),
        None => {
            let path =
                std::env::temp_dir().join(format!("framefeed-sample-{}.mp4", std::process::id()));
            std::fs::write(&path, framefeed::SAMPLE_MP4)?;
            (format!("file:{}", path.display()), Some(path))
        }
    };

    let input = VideoInput::new(Config::new(8, 1).low_latency())?;
    let options = UrlOptions::new()
        // The network schemes and object stores are allowed by default; `file:` only when listed (a URL from a
        // client must not read the server's files).
        .schemes(
            Scheme::NETWORK
                .into_iter()
                .chain(Scheme::OBJECT_STORES)
                .chain([Scheme::File]),
        )
        .open_timeout(Duration::from_secs(5))
        .read_timeout(Duration::from_secs(3)) // silence past this counts as a drop
        .reconnect(Reconnect::Backoff {
            max_tries: 5,
            initial: Duration::from_millis(500),
            max: Duration::from_secs(4),
        });
    input.feed_url(url.as_str(), options)?;
    input.close(); // one source: polls end when it does

    let mut frames = 0;
    while let Some(batch) = input.next_batch()? {
        if let Some(gap) = batch.gap() {
            eprintln!(
                "the source was away for {:?} and was reopened",
                gap.duration
            );
        }
        let seq = batch.sequence(0);
        frames += seq.valid_frames();
        println!(
            "{}: frames {:?}",
            framefeed::redact_url(&url),
            seq.indices()
        );
    }
    if let Some(path) = temporary {
        std::fs::remove_file(path)?;
    }
    println!("total: {frames} frames");
    Ok(())
}
