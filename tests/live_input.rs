//! Live chunked input: a video pushed chunk by chunk (with pauses) decodes to exactly what the whole buffer
//! decodes to, batches come out before the last chunk, MP4 with its index at the end is buffered (or failed
//! fast in strictly-live mode), aborted and stalled streams fail alone, and memory stays bounded.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use bytes::Bytes;
use common::{decode_all, frames_of, read_fixture};
use framefeed::{Batch, Config, Error, LastSequencePolicy, MoovAtEnd, VideoError, VideoInput};

/// Pushes `data` in `chunk`-byte pieces with a pause after each, then finishes (on the caller's thread).
fn push_all(live: framefeed::LiveVideo, data: &[u8], chunk: usize, pause: Duration) {
    for piece in data.chunks(chunk) {
        live.push(Bytes::copy_from_slice(piece)).expect("push");
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    live.finish();
}

/// Decodes `name` as a live video pushed in small chunks, alongside a thread polling batches.
fn decode_live(config: Config, name: &str, chunk: usize, pause: Duration) -> Vec<Batch> {
    let data = read_fixture(name);
    let input = VideoInput::new(config).unwrap();
    let live = input.feed_live_with_label(name).unwrap();
    input.close();
    let pusher = std::thread::spawn(move || push_all(live, &data, chunk, pause));
    let batches: Vec<Batch> = input
        .iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect();
    pusher.join().unwrap();
    batches
}

fn whole(config: Config, name: &str) -> Vec<Batch> {
    decode_all(config, vec![read_fixture(name)])
        .into_iter()
        .map(|r| r.unwrap())
        .collect()
}

fn shapes(batches: &[Batch]) -> Vec<Vec<(usize, usize)>> {
    batches
        .iter()
        .map(|b| {
            b.sequences()
                .iter()
                .map(|s| (s.shape()[0], s.valid_frames()))
                .collect()
        })
        .collect()
}

#[test]
fn chunked_with_pauses_equals_whole_buffer_decode_for_every_live_container() {
    for name in [
        "h264.ts",
        "h264_fragmented.mp4",
        "h264.mp4", // faststart
        "h264.mkv",
        "vp9.webm",
        "h264.h264",
        "hevc.hevc",
    ] {
        let config = Config::new(4, 2).last_sequence_policy(LastSequencePolicy::Pad);
        let live = decode_live(config.clone(), name, 700, Duration::from_millis(1));
        let reference = whole(config, name);
        assert!(!reference.is_empty(), "{name}");
        assert_eq!(shapes(&live), shapes(&reference), "{name}: batch structure");
        let (a, b) = (frames_of(&live), frames_of(&reference));
        assert_eq!(a.len(), b.len(), "{name}: frame count");
        assert!(a == b, "{name}: frames differ from the whole-buffer decode");
        assert!(live.last().unwrap().is_last(), "{name}");
    }
}

#[test]
fn tiny_chunks_and_low_latency_settings_give_the_same_frames() {
    let name = "h264_live.ts";
    let reference = frames_of(&whole(Config::new(8, 1), name));
    assert_eq!(reference.len(), 100);
    let live = decode_live(Config::new(8, 1).low_latency(), name, 188, Duration::ZERO);
    assert!(frames_of(&live) == reference);
}

#[test]
fn the_first_batch_arrives_before_the_last_chunk_is_fed() {
    for config in [Config::new(8, 1), Config::new(8, 1).low_latency()] {
        let data = read_fixture("h264_live.ts");
        let input = VideoInput::new(config).unwrap();
        let live = input.feed_live().unwrap();
        input.close();
        let (got_first, first_seen) = mpsc::channel::<()>();
        let pusher = std::thread::spawn(move || {
            let (body, last) = data.split_at(data.len() - 188);
            for piece in body.chunks(1024) {
                live.push(Bytes::copy_from_slice(piece)).unwrap();
            }
            // Hold the last chunk back until the consumer has its first batch.
            let before_last = first_seen.recv_timeout(Duration::from_secs(20)).is_ok();
            live.push(Bytes::copy_from_slice(last)).unwrap();
            live.finish();
            before_last
        });
        let mut frames = 0;
        for (i, batch) in input.iter().enumerate() {
            let batch = batch.unwrap();
            if i == 0 {
                got_first.send(()).unwrap();
            }
            frames += batch
                .sequences()
                .iter()
                .map(|s| s.valid_frames())
                .sum::<usize>();
        }
        assert!(
            pusher.join().unwrap(),
            "no batch came out before the last chunk was fed"
        );
        assert_eq!(frames, 100);
    }
}

#[test]
fn moov_at_end_mp4_is_buffered_until_finished_then_decoded() {
    let config = Config::new(4, 2);
    let live = decode_live(
        config.clone(),
        "h264_moov_at_end.mp4",
        500,
        Duration::from_millis(1),
    );
    let reference = whole(config, "h264_moov_at_end.mp4");
    assert_eq!(frames_of(&live).len(), 23);
    assert!(frames_of(&live) == frames_of(&reference));
}

#[test]
fn moov_at_end_fails_fast_in_strictly_live_mode_and_the_next_video_decodes() {
    let data = read_fixture("h264_moov_at_end.mp4");
    let input = VideoInput::new(Config::new(4, 2).moov_at_end(MoovAtEnd::Fail)).unwrap();
    let live = input.feed_live_with_label("upload").unwrap();
    input.feed(read_fixture("h264.mp4")).unwrap();
    input.close();
    // Only the first 1000 bytes are pushed: the failure must not wait for the rest.
    live.push(Bytes::copy_from_slice(&data[..1000])).unwrap();
    let err = input
        .next_batch_timeout(Duration::from_secs(10))
        .unwrap_err();
    let Error::Video { video, error } = &err else {
        panic!("{err}")
    };
    assert_eq!(video.id, live.id());
    assert_eq!(error, &VideoError::MoovAtEndLive);
    assert!(err.to_string().contains("moov"), "{err}");
    // The failed video takes no more data; the next video is unaffected.
    assert!(matches!(
        live.push(Bytes::copy_from_slice(&data[1000..])),
        Err(Error::LiveEnded { .. })
    ));
    let rest: Vec<Batch> = input.iter().map(|r| r.unwrap()).collect();
    assert_eq!(frames_of(&rest).len(), 23);
}

#[test]
fn moov_at_end_past_the_buffer_limit_fails_with_the_reason() {
    let data = read_fixture("h264_moov_at_end.mp4");
    let input =
        VideoInput::new(Config::new(4, 2).moov_at_end(MoovAtEnd::Buffer { max_bytes: 4000 }))
            .unwrap();
    let live = input.feed_live().unwrap();
    input.close();
    let pusher = std::thread::spawn(move || {
        for piece in data.chunks(500) {
            if live.push(Bytes::copy_from_slice(piece)).is_err() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    });
    let results: Vec<_> = input.iter().collect();
    assert_eq!(results.len(), 1);
    let err = results[0].as_ref().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Video {
                error: VideoError::MoovAtEndTooLarge { max_bytes: 4000 },
                ..
            }
        ),
        "{err}"
    );
    assert!(pusher.join().unwrap(), "pushes should fail after the limit");
}

/// Pushes the first `keep` bytes of `name`, then runs `end` on the handle; returns every poll result of that
/// video followed by a good video's.
fn fail_midway(
    config: Config,
    keep: usize,
    end: impl FnOnce(framefeed::LiveVideo) + Send + 'static,
) -> Vec<Result<Batch, Error>> {
    let data = read_fixture("h264_live.ts");
    let input = VideoInput::new(config).unwrap();
    let live = input.feed_live_with_label("cut").unwrap();
    input.feed(read_fixture("h264.mkv")).unwrap();
    input.close();
    let pusher = std::thread::spawn(move || {
        live.push(Bytes::copy_from_slice(&data[..keep])).unwrap();
        end(live);
    });
    let results = input.iter().collect();
    pusher.join().unwrap();
    results
}

/// Splits poll results at the first error: (batches before it, the error, what follows).
fn split_at_error(results: Vec<Result<Batch, Error>>) -> (Vec<Batch>, Error, Vec<Batch>) {
    let pos = results.iter().position(|r| r.is_err()).expect("an error");
    let mut results = results;
    let after: Vec<Batch> = results
        .split_off(pos + 1)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let err = results.pop().unwrap().unwrap_err();
    let before = results.into_iter().map(|r| r.unwrap()).collect();
    (before, err, after)
}

#[test]
fn an_aborted_stream_fails_alone_after_its_decoded_frames() {
    let results = fail_midway(Config::new(4, 1), 50_000, |live| {
        std::thread::sleep(Duration::from_millis(300));
        live.abort("client went away");
    });
    let (before, err, after) = split_at_error(results);
    assert!(
        !before.is_empty(),
        "frames decoded before the abort are delivered"
    );
    match &err {
        Error::Video {
            error: VideoError::LiveAborted { reason, received },
            ..
        } => {
            assert_eq!(reason, "client went away");
            assert_eq!(*received, 50_000);
        }
        other => panic!("{other}"),
    }
    assert_eq!(frames_of(&after).len(), 23, "the next video decodes fully");
}

#[test]
fn dropping_the_handle_without_finish_aborts() {
    let results = fail_midway(Config::new(4, 1), 20_000, drop);
    let (_, err, after) = split_at_error(results);
    assert!(
        matches!(
            &err,
            Error::Video {
                error: VideoError::LiveAborted { .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("dropped before finish"), "{err}");
    assert_eq!(frames_of(&after).len(), 23);
}

#[test]
fn a_stalled_stream_fails_after_the_stall_timeout() {
    let (tx, rx) = mpsc::channel::<framefeed::LiveVideo>();
    let results = fail_midway(
        Config::new(4, 1).stall_timeout(Duration::from_millis(300)),
        30_000,
        move |live| tx.send(live).unwrap(), // kept alive, never finished
    );
    let (before, err, after) = split_at_error(results);
    assert!(!before.is_empty());
    match &err {
        Error::Video {
            error: VideoError::LiveStalled { waited, received },
            ..
        } => {
            assert_eq!(*waited, Duration::from_millis(300));
            assert_eq!(*received, 30_000);
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("stall"), "{err}");
    assert_eq!(frames_of(&after).len(), 23);
    let live = rx.recv().unwrap();
    assert!(matches!(
        live.push(vec![0u8; 10]),
        Err(Error::LiveEnded { .. })
    ));
}

/// A chunk whose drop is counted.
fn counted_chunk(data: &[u8], dropped: &Arc<AtomicUsize>) -> Bytes {
    struct Owner(Vec<u8>, Arc<AtomicUsize>);
    impl AsRef<[u8]> for Owner {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }
    impl Drop for Owner {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
    Bytes::from_owner(Owner(data.to_vec(), dropped.clone()))
}

#[test]
fn memory_stays_bounded_and_consumed_chunks_are_dropped() {
    // A long stream (the 4 s clip pushed 10 times over, as one MPEG-TS stream) through a 16 KiB live buffer,
    // with a slow consumer: at no time are more than the buffer's worth of chunks alive.
    let clip = read_fixture("h264_live.ts");
    let chunk = 1024;
    let limit = 16 * 1024;
    let input = VideoInput::new(Config::new(8, 1).live_buffer_bytes(limit)).unwrap();
    let live = input.feed_live().unwrap();
    input.close();
    let dropped = Arc::new(AtomicUsize::new(0));
    let counter = dropped.clone();
    let pusher = std::thread::spawn(move || {
        let mut pushed = 0usize;
        let mut most_alive = 0usize;
        for _ in 0..10 {
            for piece in clip.chunks(chunk) {
                live.push(counted_chunk(piece, &counter)).unwrap();
                pushed += 1;
                most_alive = most_alive.max(pushed - counter.load(Ordering::SeqCst));
            }
        }
        live.finish();
        (pushed, most_alive)
    });
    let mut frames = 0;
    for batch in input.iter() {
        frames += batch.unwrap().sequences()[0].valid_frames();
        std::thread::sleep(Duration::from_millis(2));
    }
    let (pushed, most_alive) = pusher.join().unwrap();
    assert_eq!(frames, 1000);
    // The buffer's worth, plus the chunk being read and the one being pushed.
    assert!(
        most_alive <= limit / chunk + 2,
        "{most_alive} chunks alive at once with a {limit}-byte buffer"
    );
    assert_eq!(dropped.load(Ordering::SeqCst), pushed, "every chunk freed");
}

#[test]
fn try_push_hands_the_chunk_back_when_the_live_buffer_is_full() {
    let input = VideoInput::new(Config::new(8, 1).live_buffer_bytes(4096)).unwrap();
    // A first video that is never finished keeps the decoder busy, so the second's buffer fills up.
    let first = input.feed_live().unwrap();
    let second = input.feed_live().unwrap();
    second.try_push(vec![1u8; 4000]).unwrap();
    let chunk = Bytes::from(vec![2u8; 200]);
    match second.try_push(chunk.clone()) {
        Err(framefeed::TryFeedError::Full(back)) => assert_eq!(back, chunk),
        other => panic!("{other:?}"),
    }
    first.abort("test over");
    drop(second);
    drop(input); // shuts down mid-way without hanging
}

#[test]
fn dropping_the_operator_mid_live_video_ends_the_producer_side() {
    let data = read_fixture("h264_live.ts");
    let input = VideoInput::new(Config::new(4, 1)).unwrap();
    let live = input.feed_live().unwrap();
    live.push(Bytes::copy_from_slice(&data[..40_000])).unwrap();
    let first = input.next_batch().unwrap().unwrap();
    assert_eq!(first.sequences()[0].valid_frames(), 4);
    let started = std::time::Instant::now();
    drop(input);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(
        live.push(Bytes::copy_from_slice(&data[40_000..])),
        Err(Error::LiveEnded { .. })
    ));
}

#[test]
fn eager_delivery_ends_videos_whose_last_batch_is_full() {
    // 23 frames with L=23, B=1: one full batch, delivered at once and not marked last; the video still ends
    // (queued_videos drops to 0) and the next video follows.
    let input = VideoInput::new(Config::new(23, 1).hold_last_batch(false)).unwrap();
    input.feed(read_fixture("h264.mkv")).unwrap();
    input.feed(read_fixture("vp9.webm")).unwrap();
    input.close();
    let first = input.next_batch().unwrap().unwrap();
    assert_eq!((first.video_id().0, first.valid_frames()), (0, 23));
    assert!(!first.is_last());
    let second = input.next_batch().unwrap().unwrap();
    assert_eq!((second.video_id().0, second.valid_frames()), (1, 23));
    assert!(input.next_batch().unwrap().is_none());
    assert_eq!(input.queued_videos(), 0);
    // The same frames as with the default holding.
    let held = whole(Config::new(23, 1), "h264.mkv");
    assert!(held[0].is_last());
    assert_eq!(held[0].data(), first.data());
}

#[test]
fn a_frame_size_gate_runs_before_decoding_and_its_refusal_fails_the_video_alone() {
    let input = VideoInput::new(Config::new(4, 1)).unwrap();
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    // The first is refused by its gate; the second's gate lets it through.
    for admit in [false, true] {
        let live = input.feed_live_with_label("gated").unwrap();
        let record = seen.clone();
        live.on_frame_size(move |width, height| {
            record.lock().push((width, height));
            if admit {
                Ok(())
            } else {
                Err(format!("no memory for {width}x{height}"))
            }
        });
        let data = read_fixture("h264_live.ts");
        std::thread::spawn(move || push_all(live, &data, 4096, Duration::ZERO));
    }
    input.close();
    let results: Vec<_> = input.iter().collect();
    match &results[0] {
        Err(Error::Video {
            error: VideoError::LiveAborted { reason, .. },
            ..
        }) => assert_eq!(reason, "no memory for 96x64"),
        other => panic!("the refused video should fail first, with no batch: {other:?}"),
    }
    let frames: usize = results[1..]
        .iter()
        .map(|r| r.as_ref().unwrap().valid_frames())
        .sum();
    assert_eq!(
        frames,
        whole(Config::new(4, 1), "h264_live.ts")
            .iter()
            .map(Batch::valid_frames)
            .sum::<usize>()
    );
    assert_eq!(*seen.lock(), [(96, 64), (96, 64)]);
}
