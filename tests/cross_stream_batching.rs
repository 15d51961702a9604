//! [`Mux`]: batches across live cameras with a deadline. Every camera's frames arrive once and in order
//! (MD5 against a file decode of the same bytes), batches never mix frame sizes nor exceed their size, a dead
//! camera fails alone, a camera joins late, a silent camera does not hold the others' batches, latest-only
//! counts what it drops, the async stream gives the same, a pulled camera whose sender dies is reopened by its
//! URL rules while the others go on, a camera's buffers are reused when a batch gives many back at once, and
//! dropping the mux mid-batch frees everything.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::{live_ts_clip, read_fixture, skip_without_ffmpeg};
use framefeed::{
    CameraId, Config, Error, Gap, LiveVideo, Mux, MuxConfig, MuxEvent, MuxPolicy, Reconnect,
    UrlOptions, VideoInput,
};
use md5::{Digest, Md5};

const DEADLINE: Duration = Duration::from_millis(30);

/// Per-frame MD5s of `video` decoded whole by a plain operator of `config`.
fn file_frames(video: &[u8], config: Config) -> Vec<String> {
    let input = VideoInput::new(config).unwrap();
    input.feed(video.to_vec()).unwrap();
    input.close();
    let mut frames = Vec::new();
    while let Some(batch) = input.next_batch().unwrap() {
        for s in batch.sequences() {
            frames.extend(s.frames().map(|f| format!("{:x}", Md5::digest(f.data()))));
        }
    }
    frames
}

/// Pushes `video` into `live` in `chunk`-byte pieces, `every` apart, then finishes it.
fn push_paced(
    live: LiveVideo,
    video: Vec<u8>,
    chunk: usize,
    every: Duration,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        for piece in video.chunks(chunk) {
            if live.push(piece.to_vec()).is_err() {
                return;
            }
            thread::sleep(every);
        }
        live.finish();
    })
}

/// A current-thread tokio runtime for the async polls.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Cameras "a" and "b" (sequences of 2 frames), each pushed `video` in 3000-byte chunks 2 ms apart.
fn two_paced_cameras(mux: &Mux, video: &[u8]) -> Vec<thread::JoinHandle<()>> {
    ["a", "b"]
        .into_iter()
        .map(|name| {
            let (_, live) = mux.add_live(name, Config::new(2, 1)).unwrap();
            push_paced(live, video.to_vec(), 3000, Duration::from_millis(2))
        })
        .collect()
}

/// What a run of the mux gave: each camera's frame MD5s and frame indices in order, the batches' sizes and
/// shapes, and each camera's end.
#[derive(Default, Debug)]
struct Seen {
    frames: BTreeMap<CameraId, Vec<String>>,
    indices: BTreeMap<CameraId, Vec<u64>>,
    batches: Vec<(usize, [usize; 4])>,
    ended: BTreeMap<CameraId, Option<String>>,
}

impl Seen {
    fn record(&mut self, event: &MuxEvent) {
        match event {
            MuxEvent::Batch(batch) => {
                self.batches.push((batch.len(), batch.sequence_shape()));
                for e in batch.entries() {
                    assert_eq!(
                        e.sequence().shape(),
                        batch.sequence_shape(),
                        "one shape a batch"
                    );
                    let s = e.sequence();
                    self.frames
                        .entry(e.camera())
                        .or_default()
                        .extend(s.frames().map(|f| format!("{:x}", Md5::digest(f.data()))));
                    self.indices
                        .entry(e.camera())
                        .or_default()
                        .extend_from_slice(s.indices());
                }
            }
            MuxEvent::Ended { camera, error, .. } => {
                assert!(
                    self.ended
                        .insert(*camera, error.as_ref().map(|e| e.to_string()))
                        .is_none(),
                    "camera {camera:?} ended twice"
                );
            }
        }
    }
}

fn drain(mux: &Mux) -> Seen {
    let mut seen = Seen::default();
    while let Some(event) = mux.next_event().unwrap() {
        seen.record(&event);
    }
    seen
}

#[test]
fn every_cameras_frames_arrive_once_and_in_order_in_batches_of_one_shape() {
    let mux = Mux::new(MuxConfig::new(4, DEADLINE)).unwrap();
    let videos = [
        ("h264_live.ts", 2000),
        ("h264.ts", 3000),
        ("h264_fragmented.mp4", 5000),
    ];
    let mut feeders = Vec::new();
    let mut expected = BTreeMap::new();
    for (name, chunk) in videos {
        let video = read_fixture(name);
        expected.insert(name, file_frames(&video, Config::new(2, 1)));
        let (camera, live) = mux.add_live(name, Config::new(2, 1)).unwrap();
        feeders.push((
            camera,
            name,
            push_paced(live, video, chunk, Duration::from_millis(2)),
        ));
    }
    mux.close();
    let seen = drain(&mux);
    for (camera, name, feeder) in feeders {
        feeder.join().unwrap();
        assert_eq!(
            seen.frames[&camera], expected[name],
            "{name}: every frame once, in order"
        );
        let indices = &seen.indices[&camera];
        assert!(
            indices.windows(2).all(|w| w[0] + 1 == w[1]),
            "{name}: {indices:?}"
        );
        assert_eq!(seen.ended[&camera], None, "{name} ended cleanly");
    }
    assert!(seen.batches.iter().all(|(n, _)| (1..=4).contains(n)));
    let stats = mux.stats();
    assert!(stats.iter().all(|s| s.dropped == 0 && s.ended), "{stats:?}");
}

#[test]
fn a_dead_camera_fails_alone_and_a_late_one_joins() {
    let mux = Mux::new(MuxConfig::new(8, DEADLINE)).unwrap();
    let video = read_fixture("h264_live.ts");
    let expected = file_frames(&video, Config::new(1, 1));
    let (good, live) = mux.add_live("good", Config::new(1, 1)).unwrap();
    let good_feeder = push_paced(live, video.clone(), 4000, Duration::from_millis(5));
    let (dead, live) = mux.add_live("dead", Config::new(1, 1)).unwrap();
    let dead_feeder = push_paced(
        live,
        (0..50_000u32).map(|i| (i * 7919 % 251) as u8).collect(),
        4000,
        Duration::from_millis(1),
    );
    // The late camera joins once the first batch is out.
    let mut seen = Seen::default();
    seen.record(&mux.next_event().unwrap().unwrap());
    let (late, live) = mux.add_live("late", Config::new(1, 1)).unwrap();
    let late_feeder = push_paced(live, video, 4000, Duration::from_millis(1));
    mux.close();
    assert!(matches!(
        mux.add_live("too late", Config::new(1, 1)),
        Err(Error::Config(_))
    ));
    while let Some(event) = mux.next_event().unwrap() {
        seen.record(&event);
    }
    for f in [good_feeder, dead_feeder, late_feeder] {
        f.join().unwrap();
    }
    assert_eq!(seen.frames[&good], expected);
    assert_eq!(seen.frames[&late], expected);
    assert!(seen.ended[&dead].is_some(), "{:?}", seen.ended);
    assert!(seen.frames.get(&dead).is_none_or(Vec::is_empty));
    assert_eq!(seen.ended[&good], None);
    assert_eq!(seen.ended[&late], None);
}

#[test]
fn a_silent_camera_does_not_hold_the_others_batches() {
    let mux = Mux::new(MuxConfig::new(16, DEADLINE)).unwrap();
    let video = read_fixture("h264_live.ts");
    let frames = file_frames(&video, Config::new(1, 1)).len();
    let (_silent, silent) = mux.add_live("silent", Config::new(1, 1)).unwrap();
    let (talking, live) = mux.add_live("talking", Config::new(1, 1)).unwrap();
    let feeder = push_paced(live, video, 1000, Duration::from_millis(5));
    // Every frame of the talking camera comes out while the silent one sends nothing: the batch holding the
    // last frames cannot fill (the frame count is not a multiple of 16), so only the deadline releases it.
    assert_ne!(frames % 16, 0);
    let mut seen = Seen::default();
    while seen.frames.get(&talking).map_or(0, Vec::len) < frames {
        seen.record(&mux.next_event().unwrap().expect("the mux goes on"));
    }
    assert!(
        seen.batches.iter().any(|(n, _)| *n < 16),
        "{:?}",
        seen.batches
    );
    feeder.join().unwrap();
    silent.finish();
    mux.close();
    let rest = drain(&mux);
    assert_eq!(rest.ended.len() + seen.ended.len(), 2);
}

#[test]
fn latest_only_gives_the_newest_and_counts_what_it_dropped() {
    let mux = Mux::new(MuxConfig::new(1, DEADLINE).policy(MuxPolicy::LatestOnly)).unwrap();
    let video = read_fixture("h264_live.ts");
    let frames = file_frames(&video, Config::new(1, 1)).len() as u64;
    let (camera, live) = mux.add_live("cam", Config::new(1, 1)).unwrap();
    push_paced(live, video, 100_000, Duration::ZERO)
        .join()
        .unwrap();
    mux.close();
    // A consumer that falls behind: it reads only once the camera has ended.
    let deadline = Instant::now() + Duration::from_secs(60);
    while mux.stats()[0].sequences < frames {
        assert!(Instant::now() < deadline, "{:?}", mux.stats());
        thread::sleep(Duration::from_millis(10));
    }
    let seen = drain(&mux);
    let delivered = seen.frames.get(&camera).map_or(0, Vec::len) as u64;
    let stats = &mux.stats()[0];
    assert_eq!(stats.sequences, frames);
    assert!(stats.dropped > 0, "{stats:?}");
    assert_eq!(delivered + stats.dropped, frames, "{stats:?}");
    assert_eq!(
        seen.indices[&camera].last(),
        Some(&(frames - 1)),
        "the newest is kept"
    );
}

#[test]
fn the_async_stream_gives_what_the_blocking_polls_give() {
    let video = read_fixture("h264_live.ts");
    let expected = file_frames(&video, Config::new(2, 1));
    let runtime = runtime();
    let mux = Arc::new(Mux::new(MuxConfig::new(3, DEADLINE)).unwrap());
    let feeders = two_paced_cameras(&mux, &video);
    mux.close();
    let seen = runtime.block_on(async {
        let mut seen = Seen::default();
        while let Some(event) = mux.next_event_async().await.unwrap() {
            seen.record(&event);
        }
        seen
    });
    for f in feeders {
        f.join().unwrap();
    }
    assert_eq!(seen.frames.len(), 2);
    assert!(seen.frames.values().all(|f| *f == expected));
    assert!(seen.ended.values().all(Option::is_none));
}

/// The bridge's path (Python's asyncio): wait for readiness, which takes nothing, then take without waiting.
#[test]
fn readiness_then_a_try_gives_what_the_blocking_polls_give() {
    let video = read_fixture("h264_live.ts");
    let expected = file_frames(&video, Config::new(2, 1));
    let runtime = runtime();
    let mux = Mux::new(MuxConfig::new(3, DEADLINE)).unwrap();
    assert!(matches!(mux.try_next_event(), Err(Error::NotReady)));
    let feeders = two_paced_cameras(&mux, &video);
    mux.close();
    let mut seen = Seen::default();
    loop {
        runtime.block_on(mux.ready());
        match mux.try_next_event() {
            Ok(Some(event)) => seen.record(&event),
            Ok(None) => break,
            Err(e) => panic!("ready, then {e}"),
        }
    }
    for f in feeders {
        f.join().unwrap();
    }
    assert_eq!(seen.frames.len(), 2);
    assert!(seen.frames.values().all(|f| *f == expected));
    assert_eq!(seen.ended.len(), 2);
}

/// A camera pulled over SRT whose sender is killed mid-stream (the connection goes silent) and restarted: the
/// mux's camera is reopened by its URL options, its first sequence after the drop reports the gap, the frames
/// before are the first stream's start and those after the second stream's; a pushed camera goes on meanwhile.
#[test]
fn a_pulled_camera_whose_sender_dies_is_reopened_and_the_others_go_on() {
    if skip_without_ffmpeg("the mux reconnect test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let first = live_ts_clip(dir.path(), "first.ts", "testsrc2=size=320x240:rate=30", 300);
    let second = live_ts_clip(
        dir.path(),
        "second.ts",
        "smptebars=size=320x240:rate=30",
        45,
    );
    let first_frames = file_frames(&std::fs::read(&first).unwrap(), Config::new(1, 1));
    let second_frames = file_frames(&std::fs::read(&second).unwrap(), Config::new(1, 1));
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("srt://127.0.0.1:{port}?mode=listener");
    let sender = |path: &std::path::Path| {
        std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-re", "-i"])
            .arg(path)
            .args(["-c", "copy", "-f", "mpegts", &listen])
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("run ffmpeg")
    };
    let mut peer = Some(sender(&first));
    let mux = Mux::new(MuxConfig::new(4, DEADLINE)).unwrap();
    let options = UrlOptions::new()
        .reconnect(Reconnect::Backoff {
            max_tries: 40,
            initial: Duration::from_millis(100),
            max: Duration::from_millis(250),
        })
        .read_timeout(Duration::from_millis(1500));
    let pulled = mux
        .add_url(
            format!("srt://127.0.0.1:{port}"),
            options,
            Config::new(1, 1).low_latency(),
        )
        .unwrap();
    let video = read_fixture("h264_live.ts");
    let pushed_frames = file_frames(&video, Config::new(1, 1));
    let (pushed, live) = mux.add_live("pushed", Config::new(1, 1)).unwrap();
    let pusher = push_paced(live, video, 500, Duration::from_millis(20));
    mux.close();
    let mut frames: BTreeMap<CameraId, Vec<String>> = BTreeMap::new();
    let mut gap: Option<(usize, Gap)> = None;
    let mut ended = BTreeMap::new();
    let mut restarted = None;
    while let Some(event) = mux.next_event().unwrap() {
        match event {
            MuxEvent::Batch(batch) => {
                for e in batch.entries() {
                    let got = frames.entry(e.camera()).or_default();
                    if let (true, Some(g)) = (e.camera() == pulled, e.batch().gap()) {
                        gap.get_or_insert((got.len(), *g));
                    }
                    got.extend(
                        e.sequence()
                            .frames()
                            .map(|f| format!("{:x}", Md5::digest(f.data()))),
                    );
                }
                // Some frames arrived: the sender dies without closing, and another starts.
                if restarted.is_none() && frames.get(&pulled).is_some_and(|f| f.len() >= 20) {
                    if let Some(mut first_peer) = peer.take() {
                        first_peer.kill().unwrap();
                        let _ = first_peer.wait();
                    }
                    restarted = Some(sender(&second));
                }
            }
            MuxEvent::Ended { camera, error, .. } => {
                ended.insert(camera, error.map(|e| e.to_string()));
            }
        }
    }
    for mut child in peer.into_iter().chain(restarted.take()) {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(
        gap.is_some() || frames[&pulled].len() < 20,
        "the sender was restarted"
    );
    pusher.join().unwrap();
    assert_eq!(ended[&pulled], None, "the pulled camera ended cleanly");
    assert_eq!(ended[&pushed], None);
    assert_eq!(frames[&pushed], pushed_frames, "the other camera went on");
    let (at, gap) = gap.expect("a sequence reports the gap");
    assert_eq!(gap.reconnects, 1);
    assert_eq!(gap.frames_before, at as u64);
    let (before, after) = frames[&pulled].split_at(at);
    assert!(before.len() < first_frames.len());
    assert_eq!(
        before,
        &first_frames[..before.len()],
        "frames before the gap"
    );
    // The second stream from its start (less, at most, the frames SRT's close drops at its end).
    assert!(after.len() + 4 >= second_frames.len(), "{}", after.len());
    assert_eq!(after, &second_frames[..after.len()], "frames after the gap");
}

#[test]
fn a_camera_reuses_its_buffers_when_a_batch_gives_many_back_at_once() {
    // Cameras that decode faster than the consumer takes their sequences fill their queues (16 deep), and each
    // batch of 16, held while the consumer asks for the next, gives up to 16 of a camera's buffers back at
    // once. The camera's pool keeps them for its next sequences: a buffer freed and allocated again costs the
    // kernel a fault and a zeroed page for every 4 KiB on its first write (issue 37: about half the start-up
    // page faults of 30 paced 720p cameras, while they caught up).
    let batch = 16;
    let mux = Mux::new(MuxConfig::new(batch, DEADLINE)).unwrap();
    let video = read_fixture("h264_live.ts"); // 100 frames
    let (videos, per_video) = (24, 100);
    let inputs: Vec<(CameraId, Arc<VideoInput>)> = (0..2u64)
        .map(|i| {
            let input = Arc::new(VideoInput::new(Config::new(1, 1)).unwrap());
            for _ in 0..videos {
                input.feed(video.clone()).unwrap();
            }
            input.close();
            (mux.add_input(i, input.clone()).unwrap(), input)
        })
        .collect();
    mux.close();
    let mut seen = Seen::default();
    let mut held = None;
    while let Some(event) = mux.next_event().unwrap() {
        seen.record(&event);
        // The consumer keeps the event it has until the next one comes, as a loop over the events does.
        held = Some(event);
    }
    drop(held);
    // What one camera may have alive at once: its operator's own (the prefetched batch, the one being built
    // and the few the default pool keeps: 1 + 4), the one its feeder holds, its queue (16) and two whole
    // batches in the consumer's hands (the one it keeps while the next comes).
    let bound = 1 + 4 + 1 + batch + 2 * batch;
    for (camera, input) in &inputs {
        assert_eq!(seen.frames[camera].len(), videos * per_video);
        assert!(
            input.buffer_allocations() <= bound as u64,
            "{} buffers allocated for {} sequences: freed and allocated again (at most {bound} are alive at once)",
            input.buffer_allocations(),
            videos * per_video
        );
    }
}

#[test]
fn dropping_the_mux_mid_batch_frees_every_camera() {
    let mux = Mux::new(MuxConfig::new(64, Duration::from_secs(3600))).unwrap();
    let video = read_fixture("h264_live.ts");
    let mut lives = Vec::new();
    for i in 0..4u64 {
        let (_, live) = mux.add_live(i, Config::new(1, 1)).unwrap();
        live.push(video.clone()).unwrap();
        lives.push(live);
    }
    // Wait until sequences are queued for a batch that will not fill before the hour's deadline.
    let deadline = Instant::now() + Duration::from_secs(60);
    while mux.stats().iter().map(|s| s.sequences).sum::<u64>() < 8 {
        assert!(Instant::now() < deadline, "{:?}", mux.stats());
        thread::sleep(Duration::from_millis(10));
    }
    drop(mux); // joins every camera's thread, whose operator is dropped
    for live in lives {
        assert!(
            live.push(video.clone()).is_err(),
            "the camera's decoder is gone"
        );
    }
}

#[test]
fn bad_settings_name_what_is_allowed() {
    let err = Mux::new(MuxConfig::new(0, DEADLINE))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("max_batch_size is 0; allowed: 1 to 65536"),
        "{err}"
    );
    let err = Mux::new(MuxConfig::new(4, Duration::ZERO))
        .unwrap_err()
        .to_string();
    assert!(err.contains("deadline"), "{err}");
    let mux = Mux::new(MuxConfig::new(4, DEADLINE)).unwrap();
    let err = mux
        .add_live("x", Config::new(4, 2))
        .unwrap_err()
        .to_string();
    assert!(err.contains("max_batch_size is 2; allowed: 1"), "{err}");
}

#[test]
fn a_removed_camera_stops_and_tells_nothing_while_the_others_go_on() {
    let mux = Mux::new(MuxConfig::new(4, DEADLINE)).unwrap();
    let video = read_fixture("h264_live.ts");
    let expected = file_frames(&video, Config::new(1, 1));
    let (gone, gone_live) = mux.add_live("gone", Config::new(1, 1)).unwrap();
    let (kept, live) = mux.add_live("kept", Config::new(1, 1)).unwrap();
    assert!(mux.remove(gone));
    assert!(!mux.remove(gone), "removed once");
    // The removed camera's decoder is dropped: pushing to it fails (within the bound).
    let deadline = Instant::now() + Duration::from_secs(60);
    while gone_live.push(video[..1000].to_vec()).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the removed camera still takes data"
        );
        thread::sleep(Duration::from_millis(10));
    }
    let feeder = push_paced(live, video, 4000, Duration::from_millis(1));
    mux.close();
    let seen = drain(&mux);
    feeder.join().unwrap();
    assert_eq!(seen.frames[&kept], expected);
    assert!(!seen.ended.contains_key(&gone), "{:?}", seen.ended);
    assert!(!seen.frames.contains_key(&gone));
    assert!(mux.stats().iter().all(|s| s.ended));
}
