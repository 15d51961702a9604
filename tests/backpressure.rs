//! The bounded feed queue: a full queue makes `feed` block, `try_feed` hand the buffer back and `feed_async`
//! wait (on both tokio runtimes) until the decoder takes a video, which it does once the consumer has taken
//! the batches before it. Closing releases waiting feeders.

#[macro_use]
mod common;

use std::pin::pin;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use bytes::Bytes;
use common::*;
use framefeed::{Config, Error, TryFeedError, VideoInput};

/// An operator whose queue holds one video, with video A (6 batches) being decoded — the decoder blocked on
/// the full output — and video B waiting in the queue: the queue is full.
fn full_queue() -> VideoInput {
    let input = VideoInput::new(Config::new(4, 1).max_queued(1, usize::MAX)).unwrap();
    input.feed(read_fixture("h264.mkv")).unwrap();
    wait_until(|| input.feed_queue_len().0 == 0);
    input.feed(read_fixture("h264.mp4")).unwrap();
    assert_eq!(input.feed_queue_len().0, 1);
    input
}

fn wait_until(cond: impl Fn() -> bool) {
    for _ in 0..1000 {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("condition not reached in 5 s");
}

/// Polls the 6 batches of video A.
fn consume_first_video(input: &VideoInput) {
    for i in 0..6 {
        let batch = input.next_batch().unwrap().unwrap();
        assert_eq!(batch.video_id().0, 0);
        assert_eq!(batch.is_last(), i == 5);
    }
}

#[test]
fn try_feed_hands_the_buffer_back_when_full() {
    let input = full_queue();
    let data = Bytes::from(read_fixture("vp9.webm"));
    match input.try_feed(data.clone()) {
        Err(TryFeedError::Full(back)) => {
            assert_eq!(back.as_ptr(), data.as_ptr(), "the same buffer, not a copy");
            assert!(TryFeedError::Full(back).is_full());
        }
        other => panic!("{other:?}"),
    }
    consume_first_video(&input);
    wait_until(|| input.feed_queue_len().0 == 0);
    assert_eq!(input.try_feed(data).unwrap().0, 2);
    input.close();
    assert!(matches!(
        input.try_feed(vec![1u8]),
        Err(TryFeedError::Closed(_))
    ));
}

#[test]
fn blocking_feed_waits_for_room() {
    let input = Arc::new(full_queue());
    let (done_tx, done) = mpsc::channel();
    let feeder = {
        let input = input.clone();
        std::thread::spawn(move || {
            let id = input.feed(read_fixture("vp9.webm")).unwrap();
            done_tx.send(id).unwrap();
        })
    };
    assert!(
        done.recv_timeout(Duration::from_millis(300)).is_err(),
        "feed returned while the queue was full"
    );
    consume_first_video(&input);
    let id = done
        .recv_timeout(Duration::from_secs(10))
        .expect("feed proceeds");
    assert_eq!(id.0, 2);
    feeder.join().unwrap();
    input.close();
    let frames: usize = input.iter().map(|b| b.unwrap().valid_frames()).sum();
    assert_eq!(frames, 46, "videos B and C follow");
}

#[test]
fn byte_limit_counts_queued_bytes_and_an_empty_queue_takes_any_video() {
    let mkv = read_fixture("h264.mkv"); // 9958 bytes
    let input = VideoInput::new(Config::new(4, 1).max_queued(10, 15_000)).unwrap();
    input.feed(mkv.clone()).unwrap();
    wait_until(|| input.feed_queue_len().0 == 0);
    // Larger than the byte limit, but the queue is empty: taken.
    input.try_feed(vec![0u8; 20_000]).unwrap();
    assert!(input.try_feed(mkv.clone()).unwrap_err().is_full());
    assert_eq!(input.feed_queue_len(), (1, 20_000));
}

async fn feed_async_waits_while_full_and_proceeds_when_batches_are_consumed() {
    let input = full_queue();
    let mut feed_c = pin!(input.feed_async((read_fixture("vp9.webm"), "C")));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), feed_c.as_mut())
            .await
            .is_err(),
        "feed_async completed while the queue was full"
    );
    // Consuming A's batches lets the decoder finish A and take B, which makes room for C.
    for _ in 0..6 {
        input.next_batch_async().await.unwrap().unwrap();
    }
    let id = tokio::time::timeout(Duration::from_secs(10), feed_c)
        .await
        .expect("feed_async proceeds once there is room")
        .unwrap();
    assert_eq!(id.0, 2);
    input.close();
    let mut frames = 0;
    while let Some(batch) = input.next_batch_async().await.unwrap() {
        frames += batch.valid_frames();
    }
    assert_eq!(frames, 46);
}

async fn close_releases_a_waiting_feed_async() {
    let input = full_queue();
    let mut feed_c = pin!(input.feed_async(read_fixture("vp9.webm")));
    assert!(
        tokio::time::timeout(Duration::from_millis(100), feed_c.as_mut())
            .await
            .is_err()
    );
    input.close();
    let result = tokio::time::timeout(Duration::from_secs(5), feed_c)
        .await
        .expect("close wakes the feeder");
    assert_eq!(result, Err(Error::Closed));
}

async fn dropped_feed_async_feeds_nothing() {
    let input = full_queue();
    {
        let feed_c = input.feed_async(read_fixture("vp9.webm"));
        let _ = tokio::time::timeout(Duration::from_millis(50), feed_c).await;
    }
    input.close();
    let mut videos = std::collections::BTreeSet::new();
    while let Some(batch) = input.next_batch_async().await.unwrap() {
        videos.insert(batch.video_id().0);
    }
    assert_eq!(videos.into_iter().collect::<Vec<_>>(), [0, 1]);
}

on_both_runtimes!(
    feed_async_waits_while_full_and_proceeds_when_batches_are_consumed,
    close_releases_a_waiting_feed_async,
    dropped_feed_async_feeds_nothing
);
