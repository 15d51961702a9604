//! What the operator targets share: a configuration chosen by the input's first bytes, and a drain of the
//! batches that checks the batching contract on whatever comes out.

use framefeed::{
    Config, Crop, CropPosition, DType, Error, LastSequencePolicy, Layout, Resize, Transforms,
    VideoInput,
};

/// Bytes of the input spent on the configuration.
pub const KNOBS: usize = 4;

/// A small configuration from `knobs`: 1-8 frames a sequence, 1-4 sequences a batch, either policy, and
/// one of: no transform, a random crop, a resize with f32 normalized CFHW output, packed batches. Frames are
/// capped at 1024x1024 and MP4 indexes at 65536 samples (4 MiB) so that no input may legitimately take the
/// fuzzer's memory: past `run.sh`'s memory limits, an input has found a claim the checks do not bound.
pub fn config(knobs: &[u8; KNOBS]) -> Config {
    let length = 1 + usize::from(knobs[0] % 8);
    let batch = 1 + usize::from(knobs[1] % 4);
    let policy = if knobs[2] & 1 == 0 {
        LastSequencePolicy::Partial
    } else {
        LastSequencePolicy::Pad
    };
    let mut config = Config::new(length, batch)
        .last_sequence_policy(policy)
        .decoder_threads(1)
        .max_frame_size(1024, 1 << 20)
        .max_batch_bytes(256 << 20)
        .max_container_samples(1 << 16);
    config = match knobs[3] % 4 {
        0 => config,
        1 => config.transforms(
            Transforms::new()
                .crop(Crop::new(16, 16).position(CropPosition::Random))
                .seed(u64::from(knobs[2])),
        ),
        2 => config.transforms(
            Transforms::new()
                .resize(Resize::Fill {
                    width: 24,
                    height: 16,
                })
                .dtype(DType::F32)
                .normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
                .layout(Layout::Cfhw),
        ),
        _ => config
            .pack_batches(true)
            .transforms(Transforms::new().resize(Resize::Fill {
                width: 8,
                height: 8,
            })),
    };
    config
}

/// Polls every batch until the input is depleted, checking each against the configuration. A failed video
/// is fine (the input is random); anything but a video's failure is a bug.
pub fn drain(input: &VideoInput) {
    let length = input.config().get_sequence_length();
    let batch_size = input.config().get_max_batch_size();
    loop {
        match input.next_batch() {
            Ok(Some(batch)) => {
                assert!(!batch.is_empty() && batch.len() <= batch_size);
                for seq in batch.sequences() {
                    assert!(seq.valid_frames() >= 1 && seq.valid_frames() <= length);
                    assert_eq!(seq.pts().len(), seq.valid_frames());
                    assert_eq!(seq.damaged().len(), seq.valid_frames());
                    // One numbering: a hole is never also a frame's index.
                    for hole in seq.holes() {
                        assert!(!seq.indices().contains(&hole.index), "hole {}", hole.index);
                    }
                }
                let _ = batch.data();
            }
            Ok(None) => return,
            Err(Error::Video { .. }) => {}
            Err(e) => panic!("not a video's failure: {e}"),
        }
    }
}
