//! Feeds the files named on the command line (or the built-in sample) from a second thread and prints one
//! line per batch: `cargo run --example batches -- a.mp4 b.mkv`.

use std::sync::Arc;

use framefeed::{Config, Error, LastSequencePolicy, VideoInput};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    let input = Arc::new(VideoInput::new(
        Config::new(8, 2).last_sequence_policy(LastSequencePolicy::Pad),
    )?);

    // Feeding and polling on different threads.
    let feeder = {
        let input = input.clone();
        std::thread::spawn(move || -> Result<(), Error> {
            if files.is_empty() {
                input.feed((framefeed::SAMPLE_MP4, "sample.mp4"))?;
            }
            for file in files {
                match std::fs::read(&file) {
                    Ok(data) => {
                        input.feed((data, file))?;
                    }
                    Err(e) => eprintln!("{file}: {e}"),
                }
            }
            input.close();
            Ok(())
        })
    };

    for result in input.iter() {
        match result {
            Ok(batch) => {
                let label = batch.label().map(|l| l.to_string()).unwrap_or_default();
                let seqs: Vec<String> = batch
                    .sequences()
                    .iter()
                    .map(|s| format!("{}/{}", s.valid_frames(), s.shape()[0]))
                    .collect();
                println!(
                    "{label} batch {}{}: {} sequences of {:?} frames, real/total per sequence {:?}, {} bytes",
                    batch.index(),
                    if batch.is_last() { " (last)" } else { "" },
                    batch.len(),
                    batch.frame_shape(),
                    seqs,
                    batch.data().len()
                );
            }
            // One video failed; the others go on.
            Err(e) => eprintln!("error: {e}"),
        }
    }
    feeder.join().expect("feeder thread")?;
    Ok(())
}
