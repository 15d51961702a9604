//! Blocking, non-blocking and timeout polls; feeding from several threads; shutting down mid-video; bounded
//! prefetch and recycled buffers.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use framefeed::{Config, Error, VideoInput};

#[test]
fn non_blocking_poll_without_data_fails_at_once() {
    let input = VideoInput::new(Config::new(4, 2).blocking(false)).unwrap();
    let start = Instant::now();
    assert_eq!(input.next_batch().unwrap_err(), Error::NoData);
    assert_eq!(input.try_next_batch().unwrap_err(), Error::NoData);
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(Error::NoData.to_string().contains("No data was provided"));
    // Once fed, a non-blocking poll waits for the fed video's batches.
    input.feed(read_fixture("h264.mp4")).unwrap();
    let mut frames = 0;
    loop {
        match input.next_batch() {
            Ok(Some(b)) => frames += b.valid_frames(),
            Ok(None) => panic!("not closed yet"),
            Err(Error::NoData) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(frames, 23);
    assert!(input.is_depleted());
    input.close();
    assert!(input.next_batch().unwrap().is_none());
}

#[test]
fn blocking_poll_waits_for_a_feed_from_another_thread() {
    let input = Arc::new(VideoInput::new(Config::new(23, 1)).unwrap());
    let feeder = {
        let input = input.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            input.feed(read_fixture("h264.mp4")).unwrap();
            input.close();
        })
    };
    let start = Instant::now();
    let batch = input.next_batch().unwrap().expect("a batch");
    assert!(
        start.elapsed() >= Duration::from_millis(150),
        "next_batch returned before anything was fed"
    );
    assert_eq!(batch.valid_frames(), 23);
    assert!(input.next_batch().unwrap().is_none());
    feeder.join().unwrap();
}

#[test]
fn timeout_and_try_polls() {
    let input = VideoInput::new(Config::new(4, 2)).unwrap();
    let start = Instant::now();
    assert_eq!(
        input
            .next_batch_timeout(Duration::from_millis(100))
            .unwrap_err(),
        Error::Timeout(Duration::from_millis(100))
    );
    assert!(start.elapsed() >= Duration::from_millis(90));
    assert_eq!(input.try_next_batch().unwrap_err(), Error::NoData);
    input.feed(read_fixture("h264.mp4")).unwrap();
    // Either not ready yet or a batch: never a wait.
    match input.try_next_batch() {
        Err(Error::NotReady) | Ok(Some(_)) => {}
        other => panic!("unexpected {other:?}"),
    }
    let batch = input.next_batch_timeout(Duration::from_secs(30)).unwrap();
    assert!(batch.is_some());
    input.close();
    let rest: Vec<_> = input.iter().map(Result::unwrap).collect();
    assert!(rest.last().unwrap().is_last());
    assert!(input.try_next_batch().unwrap().is_none());
    assert!(input
        .next_batch_timeout(Duration::from_millis(10))
        .unwrap()
        .is_none());
    assert_eq!(
        input.feed(read_fixture("h264.mp4")).unwrap_err(),
        Error::Closed
    );
}

#[test]
fn status_queries() {
    let input = VideoInput::new(Config::new(4, 1).prefetch_batches(1)).unwrap();
    assert_eq!(input.queued_videos(), 0);
    assert!(input.is_depleted());
    input.feed(read_fixture("h264.mp4")).unwrap();
    input.feed(read_fixture("h264.mkv")).unwrap();
    assert_eq!(input.queued_videos(), 2);
    let first = input.next_batch().unwrap().unwrap();
    assert!(!input.is_depleted());
    assert_eq!(first.valid_frames(), 4);
    // 23 frames, L=4, B=1: 6 batches per video.
    for _ in 1..6 {
        input.next_batch().unwrap().unwrap();
    }
    assert!(input.is_depleted());
    assert_eq!(input.queued_videos(), 1);
}

#[test]
fn feeding_from_several_threads_while_polling() {
    let input = Arc::new(VideoInput::new(Config::new(8, 2)).unwrap());
    let names = ["h264.mp4", "vp9.webm", "hevc.hevc", "h264.ts"];
    let feeders: Vec<_> = (0..4)
        .map(|t| {
            let input = input.clone();
            std::thread::spawn(move || {
                for k in 0..3u64 {
                    input
                        .feed((read_fixture(names[t]), t as u64 * 100 + k))
                        .unwrap();
                }
            })
        })
        .collect();
    let poller = {
        let input = input.clone();
        std::thread::spawn(move || {
            let mut per_video = std::collections::BTreeMap::new();
            while let Some(batch) = input.next_batch().unwrap() {
                *per_video.entry(batch.video_id().0).or_insert(0) += batch.valid_frames();
            }
            per_video
        })
    };
    for f in feeders {
        f.join().unwrap();
    }
    input.close();
    let per_video = poller.join().unwrap();
    assert_eq!(per_video.len(), 12);
    assert!(per_video.values().all(|&n| n == 23), "{per_video:?}");
    assert_eq!(
        per_video.keys().copied().collect::<Vec<_>>(),
        (0..12).collect::<Vec<_>>()
    );
}

#[test]
fn dropping_mid_video_stops_promptly() {
    let Some(dir) = corpus("the prompt drop test (long_640x480_9000f.mp4)") else {
        return;
    };
    let data = std::fs::read(dir.join("long_640x480_9000f.mp4")).unwrap();
    for _ in 0..3 {
        let input = VideoInput::new(Config::new(8, 2)).unwrap();
        input.feed(data.clone()).unwrap();
        input.feed(data.clone()).unwrap();
        // Take one batch, leave the decoder mid-video with a full prefetch queue.
        input.next_batch().unwrap().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let start = Instant::now();
        drop(input);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "drop took {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn batches_outliving_the_operator_stay_valid() {
    let input = VideoInput::new(Config::new(4, 2)).unwrap();
    input.feed(read_fixture("h264.mp4")).unwrap();
    let batch = input.next_batch().unwrap().unwrap();
    drop(input);
    assert_eq!(batch.valid_frames(), 8);
    assert_eq!(batch.data().len(), 8 * 64 * 96 * 3);
}

#[test]
fn buffers_are_recycled_in_the_steady_state() {
    let input = VideoInput::new(Config::new(2, 2).prefetch_batches(2)).unwrap();
    for _ in 0..5 {
        input.feed(read_fixture("h264.mkv")).unwrap();
    }
    input.close();
    let mut batches = 0;
    for b in input.iter() {
        b.unwrap();
        batches += 1;
    }
    // 5 videos x 6 batches; buffers: prefetch (2) + one being built + one held + one the consumer holds.
    assert_eq!(batches, 30);
    assert!(
        input.buffer_allocations() <= 6,
        "{} buffers for {batches} batches",
        input.buffer_allocations()
    );
}

#[test]
fn invalid_config_is_rejected_at_construction() {
    match VideoInput::new(Config::new(16, 0)) {
        Err(Error::Config(msg)) => assert!(
            msg.contains("max_batch_size is 0; allowed: 1 to 65536"),
            "{msg}"
        ),
        other => panic!("unexpected {:?}", other.map(|_| ())),
    }
}

/// Resident memory of this process, from /proc (Linux).
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn repeated_shutdown_mid_video_frees_everything() {
    // Each operator here holds ~60 MB of batch buffers plus decoder state when dropped mid-video: a leak
    // of any of it shows within a few rounds.
    let round = || {
        let input =
            VideoInput::new(Config::new(16, 4).prefetch_batches(2).decoder_threads(2)).unwrap();
        for _ in 0..3 {
            input.feed(framefeed::SAMPLE_MP4).unwrap();
        }
        input.next_batch().unwrap().unwrap();
        drop(input);
    };
    for _ in 0..5 {
        round();
    }
    let before = rss_bytes();
    for _ in 0..25 {
        round();
    }
    let grown = rss_bytes().saturating_sub(before);
    assert!(
        grown < 40 << 20,
        "resident memory grew by {} MiB over 25 operators",
        grown >> 20
    );
}
