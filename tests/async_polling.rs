//! Async polling (`next_batch_async`, the `batches()` stream) on tokio's current-thread and multi-thread
//! runtimes: the stream ends after close, a poll waits for a later feed without blocking the runtime, and
//! cancelled polls lose no batch.

#[macro_use]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use framefeed::{Config, Error, VideoInput};
use futures_util::StreamExt;

async fn stream_ends_after_close() {
    let input = VideoInput::new(Config::new(4, 2)).unwrap();
    input.feed(read_fixture("h264.mp4")).unwrap();
    input.feed(b"not a video".to_vec()).unwrap();
    input.feed(read_fixture("vp9.webm")).unwrap();
    input.close();
    let results: Vec<_> = input.batches().collect().await;
    let frames: usize = results
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|b| b.valid_frames())
        .sum();
    assert_eq!(frames, 46);
    let errors: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(matches!(errors[..], [Error::Video { .. }]), "{errors:?}");
    assert!(input.next_batch_async().await.unwrap().is_none());
}

async fn waits_for_a_later_feed_without_blocking_the_runtime() {
    let input = Arc::new(VideoInput::new(Config::new(23, 1)).unwrap());
    let feeder = {
        let input = input.clone();
        tokio::spawn(async move {
            // On the current-thread runtime this timer only fires if the poll below yields the thread.
            tokio::time::sleep(Duration::from_millis(100)).await;
            input.feed(read_fixture("h264.mkv")).unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
            input.close();
        })
    };
    let batch = input.next_batch_async().await.unwrap().expect("a batch");
    assert_eq!(batch.valid_frames(), 23);
    // Nothing pending: the poll waits until close() wakes it with the end.
    assert!(input.next_batch_async().await.unwrap().is_none());
    feeder.await.unwrap();
}

async fn cancelled_polls_lose_nothing() {
    let input = VideoInput::new(Config::new(2, 1)).unwrap();
    for _ in 0..3 {
        input.feed(read_fixture("hevc.hevc")).unwrap();
    }
    input.close();
    let (mut frames, mut cancelled) = (0, 0);
    let mut next_index = 0;
    loop {
        // A very short timeout drops many polls while they are pending.
        match tokio::time::timeout(Duration::from_micros(200), input.next_batch_async()).await {
            Err(_) => cancelled += 1,
            Ok(Ok(Some(batch))) => {
                assert_eq!(
                    batch.sequence(0).first_frame(),
                    next_index,
                    "a batch was lost or reordered"
                );
                next_index = if batch.is_last() { 0 } else { next_index + 2 };
                frames += batch.valid_frames();
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => panic!("{e}"),
        }
    }
    assert_eq!(frames, 3 * 23, "({cancelled} polls were cancelled)");
}

async fn select_with_a_stream() {
    let input = VideoInput::new(Config::new(8, 1)).unwrap();
    input.feed(read_fixture("h264.ts")).unwrap();
    input.close();
    let mut stream = input.batches();
    let mut frames = 0;
    let mut ticks = 0;
    let mut tick = tokio::time::interval(Duration::from_micros(300));
    loop {
        tokio::select! {
            item = stream.next() => match item {
                Some(batch) => frames += batch.unwrap().valid_frames(),
                None => break,
            },
            _ = tick.tick() => ticks += 1,
        }
    }
    assert_eq!(frames, 23, "after {ticks} ticks");
}

/// `ready()` completes when a poll would not wait and takes nothing: the batch is then taken with
/// `try_next_batch`; at the end it completes for the `Ok(None)` that follows.
async fn ready_completes_without_taking() {
    let input = Arc::new(VideoInput::new(Config::new(23, 1)).unwrap());
    // Nothing fed: not ready (the wait is cut short by a timeout, which drops the future: harmless).
    assert!(
        tokio::time::timeout(Duration::from_millis(100), input.ready())
            .await
            .is_err()
    );
    let feeder = {
        let input = input.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            input.feed(read_fixture("h264.mkv")).unwrap();
            input.close();
        })
    };
    input.ready().await;
    input.ready().await; // still ready: nothing was taken
    let batch = input
        .try_next_batch()
        .unwrap()
        .expect("the batch ready() saw");
    assert_eq!(batch.valid_frames(), 23);
    input.ready().await;
    assert!(input.try_next_batch().unwrap().is_none());
    feeder.await.unwrap();
}

/// `feed_ready(bytes)` completes once the queue has room for that many bytes, and queues nothing.
async fn feed_ready_waits_for_room() {
    let input = Arc::new(VideoInput::new(Config::new(4, 1).max_queued(1, 1 << 20)).unwrap());
    let video = read_fixture("h264.mp4");
    // The decoder takes the live video and waits for its bytes; the whole one then fills the queue.
    let live = input.feed_live().unwrap();
    input.feed(video.clone()).unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(100), input.feed_ready(video.len()))
            .await
            .is_err()
    );
    assert_eq!(input.feed_queue_len().0, 1, "feed_ready queued nothing");
    let consumer = {
        let input = input.clone();
        std::thread::spawn(move || input.iter().filter(Result::is_ok).count())
    };
    live.push(read_fixture("h264.ts")).unwrap();
    live.finish();
    // Once the live video is decoded the decoder takes the queued one: room.
    tokio::time::timeout(Duration::from_secs(30), input.feed_ready(video.len()))
        .await
        .expect("room once the decoder takes the queued video");
    input.try_feed(video).unwrap();
    input.close();
    assert!(consumer.join().unwrap() >= 3);
}

/// `push_ready(bytes)` completes once the live buffer has room for the chunk, or the video no longer takes
/// data.
async fn push_ready_waits_for_the_decoder() {
    let input = VideoInput::new(Config::new(4, 1).live_buffer_bytes(4096)).unwrap();
    let first = input.feed_live().unwrap();
    let second = input.feed_live().unwrap(); // waits behind the first: its buffer is not read
    second.push(vec![0x47; 4096]).unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(100), second.push_ready(1000))
            .await
            .is_err()
    );
    second.push_ready(0).await; // an empty chunk always goes
    drop(first); // aborted: the decoder moves on and reads the second one's buffer
    tokio::time::timeout(Duration::from_secs(20), second.push_ready(1000))
        .await
        .expect("room once the decoder reads");
    drop(input);
    second.push_ready(1 << 20).await; // no longer takes data: ready at once (a push would fail)
}

on_both_runtimes!(
    stream_ends_after_close,
    waits_for_a_later_feed_without_blocking_the_runtime,
    cancelled_polls_lose_nothing,
    select_with_a_stream,
    ready_completes_without_taking,
    feed_ready_waits_for_room,
    push_ready_waits_for_the_decoder
);
