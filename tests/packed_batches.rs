//! Packed batches: sequences of consecutive queued videos fill each batch when their shapes match, each tagged
//! with its video; every frame of every video comes once and in order; a shape change, a failing video or an
//! empty queue delivers the batch being filled; the default stays the reference contract.

mod common;

use common::read_fixture;
use framefeed::{Batch, Config, Crop, Error, Transforms, VideoInput};

/// Feeds `videos` (fixture names or raw bytes), closes, and returns every poll result.
fn run(config: Config, videos: Vec<Vec<u8>>) -> Vec<Result<Batch, Error>> {
    common::decode_all(config, videos)
}

/// (video id, first frame, frames) of every sequence, in delivery order.
fn sequences(results: &[Result<Batch, Error>]) -> Vec<(u64, u64, usize)> {
    results
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .flat_map(|b| {
            b.sequences()
                .iter()
                .map(|s| (s.video().id.0, s.first_frame(), s.valid_frames()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn short_clips_fill_whole_batches() {
    // Four 23-frame 96x64 clips, L=4, B=4, partial: 6 sequences each (5 of 4 frames, 1 of 3).
    let names = ["h264.mp4", "h264.mkv", "h264.ts", "hevc.hevc"];
    let videos: Vec<Vec<u8>> = names.iter().map(|n| read_fixture(n)).collect();
    let plain = run(Config::new(4, 4), videos.clone());
    let packed = run(Config::new(4, 4).pack_batches(true), videos);
    assert_eq!(plain.len(), 8, "unpacked: 2 batches per video");
    assert_eq!(packed.len(), 6, "packed: 24 sequences in 6 full batches");
    assert_eq!(
        sequences(&plain),
        sequences(&packed),
        "the same sequences, in order"
    );
    let batches: Vec<&Batch> = packed.iter().map(|r| r.as_ref().unwrap()).collect();
    assert!(batches.iter().all(|b| b.len() == 4));
    // Batch 1 holds video 0's last two sequences and video 1's first two.
    let b1 = batches[1];
    assert!(b1.is_packed());
    let ids: Vec<u64> = b1.sequences().iter().map(|s| s.video().id.0).collect();
    assert_eq!(ids, [0, 0, 1, 1]);
    assert!(b1.sequence(1).ends_video() && !b1.sequence(0).ends_video());
    assert_eq!(b1.sequence(1).valid_frames(), 3);
    // The frames are the same bytes as unpacked.
    let frames = |r: Vec<Result<Batch, Error>>| {
        common::frames_of(&r.into_iter().map(Result::unwrap).collect::<Vec<_>>())
    };
    assert!(frames(plain) == frames(packed));
}

#[test]
fn shapes_that_differ_are_not_packed_unless_a_transform_unifies_them() {
    let videos = vec![
        read_fixture("h264.mp4"),
        read_fixture("vp9_odd_35x19.webm"),
        read_fixture("h264.mkv"),
    ];
    let packed = run(Config::new(4, 4).pack_batches(true), videos.clone());
    for b in packed.iter().map(|r| r.as_ref().unwrap()) {
        let shapes: std::collections::HashSet<_> =
            b.sequences().iter().map(|s| s.shape()).collect();
        assert!(
            shapes.len() <= 2,
            "partial sequences aside, one frame shape per batch"
        );
        assert!(b
            .sequences()
            .iter()
            .all(|s| s.shape()[1..] == b.sequence(0).shape()[1..]));
    }
    // With a 32x16 crop every video has one shape: 18 sequences in ceil(18/4) = 5 batches.
    let crop = Transforms::new().crop(Crop::new(32, 16));
    let unified = run(
        Config::new(4, 4).pack_batches(true).transforms(crop),
        videos,
    );
    assert_eq!(sequences(&unified).len(), 18);
    assert_eq!(unified.len(), 5);
}

#[test]
fn a_failing_video_delivers_the_batch_before_its_error_and_packing_goes_on() {
    let videos = vec![
        read_fixture("h264.mp4"),
        b"not a video".to_vec(),
        read_fixture("h264.mkv"),
        read_fixture("h264.ts"),
    ];
    let results = run(Config::new(4, 4).pack_batches(true), videos);
    let error_at = results.iter().position(|r| r.is_err()).unwrap();
    let before = sequences(&results[..error_at]);
    assert!(
        before.iter().all(|s| s.0 == 0) && before.len() == 6,
        "{before:?}"
    );
    assert_eq!(
        results[error_at]
            .as_ref()
            .unwrap_err()
            .video()
            .unwrap()
            .id
            .0,
        1
    );
    let after = sequences(&results[error_at + 1..]);
    assert_eq!(after.len(), 12);
    assert!(results[error_at + 1..].iter().all(|r| r.is_ok()));
    assert_eq!(
        results[error_at + 1..].len(),
        3,
        "videos 2 and 3 packed in 3 batches"
    );
}

#[test]
fn a_batch_with_room_waits_for_the_next_video_until_close() {
    let input = VideoInput::new(Config::new(4, 4).pack_batches(true)).unwrap();
    input.feed(read_fixture("h264.mp4")).unwrap();
    let first = input.next_batch().unwrap().unwrap();
    assert_eq!(first.len(), 4);
    // Video 0's last 2 sequences wait for the next video's.
    assert!(matches!(
        input.next_batch_timeout(std::time::Duration::from_millis(300)),
        Err(Error::Timeout(_))
    ));
    input.feed(read_fixture("h264.mkv")).unwrap();
    let second = input.next_batch().unwrap().unwrap();
    let ids: Vec<u64> = second.sequences().iter().map(|s| s.video().id.0).collect();
    assert_eq!(ids, [0, 0, 1, 1]);
    assert_eq!(
        input.queued_videos(),
        1,
        "video 0 has ended; video 1 has not"
    );
    // Closing delivers the rest, short.
    input.close();
    let rest: Vec<Batch> = input.iter().map(|r| r.unwrap()).collect();
    assert_eq!(rest.iter().map(|b| b.len()).collect::<Vec<_>>(), [4]);
    assert!(rest[0].is_last());
    assert_eq!(input.queued_videos(), 0);
}
