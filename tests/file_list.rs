//! The file-list source: two shards together decode every file of an epoch exactly once, in the epoch's
//! shuffled order, labelled with their paths; unreadable files are reported and skipped.

mod common;

use std::collections::BTreeMap;

use common::fixture;
use framefeed::{Config, FileList, VideoInput};

#[test]
fn shards_feed_every_file_once_per_epoch() {
    let names = [
        "h264.mp4",
        "h264.mkv",
        "vp9.webm",
        "hevc.hevc",
        "h264.ts",
        "av1.mkv",
    ];
    let mut paths: Vec<_> = names.iter().map(|n| fixture(n)).collect();
    paths.push(fixture("does_not_exist.mp4"));
    let list = FileList::new(paths.clone()).shuffle(11);
    for epoch in 0..2 {
        let mut frames_by_label = BTreeMap::new();
        let mut missing = 0;
        for shard in 0..2 {
            let files = list.clone().shard(shard, 2).unwrap();
            let input = VideoInput::new(Config::new(8, 2)).unwrap();
            let report = std::thread::scope(|s| {
                let feeder = s.spawn(|| {
                    let report = files.feed_epoch(&input, epoch).unwrap();
                    input.close();
                    report
                });
                let mut order = Vec::new();
                for batch in input.iter() {
                    let batch = batch.unwrap();
                    let label = batch.label().unwrap().to_string();
                    if order.last() != Some(&label) {
                        order.push(label.clone());
                    }
                    *frames_by_label.entry(label).or_insert(0) += batch.valid_frames();
                }
                // Videos come out in the epoch's order.
                let expected: Vec<String> = files
                    .epoch(epoch)
                    .iter()
                    .filter(|p| p.exists())
                    .map(|p| p.display().to_string())
                    .collect();
                assert_eq!(order, expected);
                feeder.join().unwrap()
            });
            missing += report.unreadable.len();
            for (path, _) in &report.unreadable {
                assert!(path.ends_with("does_not_exist.mp4"));
            }
        }
        assert_eq!(missing, 1);
        assert_eq!(
            frames_by_label.len(),
            names.len(),
            "every readable file once"
        );
        assert!(
            frames_by_label.values().all(|&f| f == 23),
            "{frames_by_label:?}"
        );
    }
    assert_ne!(list.epoch(0), list.epoch(1));
}
