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

on_both_runtimes!(
    stream_ends_after_close,
    waits_for_a_later_feed_without_blocking_the_runtime,
    cancelled_polls_lose_nothing,
    select_with_a_stream
);
