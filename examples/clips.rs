//! Clip sampling: which frames become sequences. Random clips (new ones each epoch, the same for the same
//! seed), evenly spaced clips, and a resampled frame rate; framefeed seeks to the keyframe before each clip
//! and decodes only the GOPs the clips need.
//!
//! Run: `cargo run --example clips -- video.mp4` (no argument: the built-in sample, 60 frames at 30 fps).

use framefeed::{ClipSampler, Config, Encoded, Sampling, VideoInput};

/// The display indices of each sequence `sampling` gives for the video at `position` in `epoch`.
fn sample(video: &Encoded, sampling: Sampling, epoch: u64) -> framefeed::Result<Vec<Vec<u64>>> {
    let input = VideoInput::new(Config::new(8, 4).sampling(sampling))?;
    // The position (in the dataset) and the epoch decide random clips, with the seed.
    input.feed(video.clone().position(0, epoch))?;
    input.close();
    let mut sequences = Vec::new();
    while let Some(batch) = input.next_batch()? {
        for seq in batch.sequences() {
            sequences.push(seq.indices().to_vec());
        }
    }
    Ok(sequences)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let video = match std::env::args().nth(1) {
        Some(path) => Encoded::file(&path)?.label(path), // read from disk as decoded, never whole
        None => Encoded::new(framefeed::SAMPLE_MP4).label("sample.mp4"),
    };

    // 3 random clips of 8 frames, every other frame (a clip spans 15 frames).
    let random = Sampling::new()
        .clips(3, ClipSampler::Random)
        .stride(2)
        .seed(42);
    for epoch in 0..2 {
        let clips = sample(&video, random.clone(), epoch)?;
        let starts: Vec<u64> = clips.iter().map(|c| c[0]).collect();
        println!("random clips, epoch {epoch}: start at {starts:?}");
    }
    // The same seed and epoch give the same clips, whichever process decodes the video.
    assert_eq!(
        sample(&video, random.clone(), 1)?,
        sample(&video, random, 1)?
    );

    // 4 clips evenly spaced from the first frame to the last start that leaves room for a whole clip.
    let regular = sample(
        &video,
        Sampling::new().clips(4, ClipSampler::Regular).stride(2),
        0,
    )?;
    println!("regular clips: {regular:?}");

    // The video resampled to 10 frames per second: the frame shown at each tick of 0.1 s.
    let at_10_fps = sample(&video, Sampling::new().fps(10.0), 0)?;
    println!("at 10 fps: {at_10_fps:?}");

    // Frames shown in [0.5 s, 1.0 s), in sequences overlapping by half (a new one every 4 frames).
    let range = sample(&video, Sampling::new().time_range(0.5, 1.0).step(4), 0)?;
    println!("0.5 s to 1.0 s, step 4: {range:?}");
    Ok(())
}
