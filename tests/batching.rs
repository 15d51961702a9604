//! Real videos come out in exactly the reference batching outline, videos never share a batch, and a
//! resolution change starts a new sequence and batch.

mod common;

use common::*;
use framefeed::{BatchOutline, Config, LastSequencePolicy, VideoInput};

fn outline_of(
    name: &str,
    l: usize,
    b: usize,
    policy: LastSequencePolicy,
) -> Vec<Vec<(usize, usize)>> {
    decode_all(
        Config::new(l, b).last_sequence_policy(policy),
        vec![read_fixture(name)],
    )
    .into_iter()
    .map(|r| {
        r.unwrap()
            .sequences()
            .iter()
            .map(|s| (s.shape()[0], s.valid_frames()))
            .collect()
    })
    .collect()
}

#[test]
fn real_video_follows_the_reference_outline() {
    // 23 frames against many (L, B), both policies.
    for (l, b) in [
        (1, 1),
        (4, 2),
        (5, 3),
        (7, 1),
        (23, 1),
        (24, 2),
        (2, 11),
        (3, 8),
        (50, 4),
    ] {
        for policy in [LastSequencePolicy::Partial, LastSequencePolicy::Pad] {
            let got = outline_of("h264.mp4", l, b, policy);
            let expected = BatchOutline::new(23, l, b).sequence_lengths(l, b, policy);
            let shapes: Vec<Vec<usize>> = got
                .iter()
                .map(|b| b.iter().map(|s| s.0).collect())
                .collect();
            assert_eq!(shapes, expected, "L={l} B={b} {policy:?}");
            let real: usize = got.iter().flatten().map(|s| s.1).sum();
            assert_eq!(real, 23, "L={l} B={b} {policy:?}: valid frames");
        }
    }
}

#[test]
fn padding_is_zero_and_reported() {
    let batches: Vec<_> = decode_all(
        Config::new(5, 3).last_sequence_policy(LastSequencePolicy::Pad),
        vec![read_fixture("h264.mp4")],
    )
    .into_iter()
    .map(Result::unwrap)
    .collect();
    // 23 = 15 + 5 + 3: the second batch is [5], [5 with 3 real].
    let last = batches.last().unwrap();
    assert!(last.is_last());
    assert_eq!(last.shape(), Some([2, 5, 64, 96, 3]));
    let seq = last.sequence(1);
    assert_eq!(
        (seq.valid_frames(), seq.padded_frames(), seq.first_frame()),
        (3, 2, 20)
    );
    let frame = 64 * 96 * 3;
    assert!(seq.data()[3 * frame..].iter().all(|&x| x == 0));
    assert!(seq.data()[..3 * frame].iter().any(|&x| x != 0));
    assert_eq!(seq.pts().len(), 3);
}

#[test]
fn batches_never_span_videos_and_carry_ids_and_labels() {
    let input = VideoInput::new(Config::new(4, 4)).unwrap();
    let a = input.feed((read_fixture("h264.mp4"), "a.mp4")).unwrap();
    let b = input.feed((read_fixture("vp9.webm"), 7u64)).unwrap();
    let c = input.feed(read_fixture("hevc.hevc")).unwrap();
    input.close();
    let batches: Vec<_> = input.iter().map(Result::unwrap).collect();
    // 23 frames, L=4, B=4: batches of 16 then 7 frames, for each video.
    let summary: Vec<(u64, u64, bool, usize)> = batches
        .iter()
        .map(|x| (x.video_id().0, x.index(), x.is_last(), x.valid_frames()))
        .collect();
    assert_eq!(
        summary,
        [
            (a.0, 0, false, 16),
            (a.0, 1, true, 7),
            (b.0, 0, false, 16),
            (b.0, 1, true, 7),
            (c.0, 0, false, 16),
            (c.0, 1, true, 7)
        ]
    );
    assert_eq!(
        batches[0].label().map(|l| l.to_string()).as_deref(),
        Some("a.mp4")
    );
    assert_eq!(batches[2].label(), Some(&framefeed::Label::Number(7)));
    assert_eq!(batches[4].label(), None);
    // Frame indices restart at 0 for each video.
    assert_eq!(batches[2].sequence(0).first_frame(), 0);
}

#[test]
fn the_same_video_twice_gives_identical_frames() {
    let data = read_fixture("h264.mkv");
    let results = decode_all(Config::new(23, 1), vec![data.clone(), data]);
    let batches: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    assert_eq!(batches.len(), 2);
    assert_eq!(batches[0].data(), batches[1].data());
}

#[test]
fn resolution_change_starts_a_new_sequence_and_batch() {
    // res_change.h264: 10 frames of 96x64, then 7 of 64x48. L=4, B=2.
    for policy in [LastSequencePolicy::Partial, LastSequencePolicy::Pad] {
        let batches: Vec<_> = decode_all(
            Config::new(4, 2).last_sequence_policy(policy),
            vec![read_fixture("res_change.h264")],
        )
        .into_iter()
        .map(Result::unwrap)
        .collect();
        type Row = ([usize; 3], Vec<(usize, usize, u64)>, bool);
        let got: Vec<Row> = batches
            .iter()
            .map(|b| {
                (
                    b.frame_shape(),
                    b.sequences()
                        .iter()
                        .map(|s| (s.shape()[0], s.valid_frames(), s.first_frame()))
                        .collect(),
                    b.is_last(),
                )
            })
            .collect();
        let (cut, tail) = match policy {
            LastSequencePolicy::Partial => (2, 3),
            LastSequencePolicy::Pad => (4, 4),
        };
        assert_eq!(
            got,
            vec![
                ([64, 96, 3], vec![(4, 4, 0), (4, 4, 4)], false),
                ([64, 96, 3], vec![(cut, 2, 8)], false),
                ([48, 64, 3], vec![(4, 4, 10), (tail, 3, 14)], true),
            ],
            "{policy:?}"
        );
    }
}
