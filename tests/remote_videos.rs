//! Remote videos read by byte ranges (`source::remote`), against real servers the tests start on loopback:
//! nginx over HTTP and over HTTPS with a private CA, and a server of our own that plays the faults (ignores
//! `Range`, throttles with 503, changes the object mid-read, stalls, stops). Frames equal the local file's in
//! the reader, a plain run and clip sampling; the bytes and requests are read from the server's log: only the
//! index and the needed GOPs, every request bounded. Skipped, with the reason printed, without the `ffmpeg` CLI
//! (which makes the videos) or nginx.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::object_server::{fault_server, nginx_binary, Logged, Nginx};
use common::{frames_of, missing, skip_without_ffmpeg, Need};
use framefeed::{
    Batch, ClipSampler, Config, Encoded, Error, RemoteOptions, Sampling, SeekMode, UrlOptions,
    VideoError, VideoInput, VideoReader,
};

/// The two test videos (20 s of 640x360 H.264 with B-frames, a keyframe a second): the `moov` first and last.
fn videos() -> &'static (tempfile::TempDir, PathBuf, PathBuf) {
    static VIDEOS: OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = OnceLock::new();
    VIDEOS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let last = dir.path().join("moov_last.mp4");
        let first = dir.path().join("moov_first.mp4");
        let encode = |path: &Path, faststart: bool| {
            let mut args = vec![
                "-f",
                "lavfi",
                "-i",
                "testsrc2=size=640x360:rate=30",
                "-frames:v",
                "600",
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-crf",
                "12",
                "-g",
                "30",
                "-bf",
                "2",
                "-pix_fmt",
                "yuv420p",
            ];
            if faststart {
                args.extend(["-movflags", "+faststart"]);
            }
            args.push(path.to_str().unwrap());
            common::ffmpeg(&args);
        };
        encode(&last, false);
        encode(&first, true);
        (dir, first, last)
    })
}

fn skip(what: &str) -> bool {
    if skip_without_ffmpeg(what) {
        return true;
    }
    nginx_binary().is_none() && missing(Need::Nginx, what, "nginx is not installed")
}

/// The videos served by nginx (the first two names: `moov_first.mp4`, `moov_last.mp4`).
fn nginx() -> Nginx {
    let (dir, ..) = videos();
    Nginx::start(dir.path(), None)
}

fn config() -> Config {
    Config::new(4, 2)
}

/// Bytes the server sent for ranged GETs, and whether every request named its end.
fn sent(log: &[Logged]) -> (u64, bool) {
    let bytes = log.iter().map(|l| l.bytes).sum();
    let bounded = log
        .iter()
        .filter(|l| l.method == "GET")
        .all(|l| l.range.as_deref().is_some_and(|r| !r.ends_with('-')));
    (bytes, bounded)
}

/// The URL and reason of the `source_unavailable` error `result` holds; panics, showing it, on anything else.
fn unavailable<T: std::fmt::Debug>(result: Result<T, Error>) -> (String, String) {
    match result {
        Err(Error::Video {
            error: VideoError::SourceUnavailable { url, reason, .. },
            ..
        }) => (url, reason),
        other => panic!("not source_unavailable: {other:?}"),
    }
}

fn frames(reader: &VideoReader, indices: &[u64]) -> Vec<u8> {
    reader.frames_at(indices).unwrap().data().to_vec()
}

#[test]
fn reader_clips_over_http_equal_the_files_and_fetch_only_the_index_and_their_gops() {
    if skip("the remote reader test") {
        return;
    }
    let server = nginx();
    let (_, first, last) = videos();
    // Ten scattered clips of 4 frames.
    let indices: Vec<u64> = [37, 101, 166, 230, 288, 333, 402, 455, 519, 580]
        .iter()
        .flat_map(|&s| s..s + 4)
        .collect();
    for path in [first, last] {
        let name = path.file_name().unwrap().to_str().unwrap();
        let local = VideoReader::open(Encoded::file(path).unwrap(), &config()).unwrap();
        let want = frames(&local, &indices);
        server.clear_log();
        let url = format!("http://127.0.0.1:{}/{name}", server.http);
        let (video, stats) = Encoded::remote_with_stats(&url, &RemoteOptions::new()).unwrap();
        let reader = VideoReader::open(video, &config()).unwrap();
        assert_eq!(reader.len(), 600);
        assert!(
            frames(&reader, &indices) == want,
            "{name}: frames differ from the file's"
        );
        let log = server.log();
        let (bytes, bounded) = sent(&log);
        let size = std::fs::metadata(path).unwrap().len();
        assert!(bounded, "{name}: an open-ended range: {log:?}");
        // Opened by its first bytes, no HEAD: the answer to that GET gave its length and version.
        assert_eq!(
            log.iter().filter(|l| l.method == "HEAD").count(),
            0,
            "{log:?}"
        );
        assert_eq!(
            bytes,
            stats.bytes(),
            "{name}: the counters agree with the server"
        );
        // Ten GOPs of twenty (and the index): well under the file.
        assert!(
            bytes * 10 < size * 7,
            "{name}: {bytes} of {size} bytes fetched: {log:?}"
        );
        eprintln!("{name}: {bytes} of {size} bytes in {} requests", log.len());
    }
}

#[test]
fn a_plain_run_over_http_streams_every_frame_in_bounded_requests() {
    if skip("the remote plain run test") {
        return;
    }
    let server = nginx();
    let (_, _, last) = videos();
    let decode = |video: Encoded| {
        let input = VideoInput::new(config()).unwrap();
        input.feed(video).unwrap();
        input.close();
        let batches: Vec<Batch> = input.iter().map(|b| b.unwrap()).collect();
        frames_of(&batches)
    };
    let want = decode(Encoded::file(last).unwrap());
    let url = format!("http://127.0.0.1:{}/moov_last.mp4", server.http);
    // Small requests and memory: many requests, each bounded, the memory held under its budget.
    let options = RemoteOptions::new()
        .request_bytes(256 << 10)
        .memory_bytes(1 << 20);
    let got = decode(Encoded::remote(&url, &options).unwrap());
    assert_eq!(got.len(), 600);
    assert!(got == want, "frames differ from the file's");
    let log = server.log();
    let (bytes, bounded) = sent(&log);
    let size = std::fs::metadata(last).unwrap().len();
    assert!(bounded, "an open-ended range: {log:?}");
    assert!(
        bytes >= size && bytes < size + size / 10,
        "{bytes} bytes for a file of {size}"
    );
    assert!(
        log.iter().all(|l| l.bytes <= 256 << 10),
        "a request over 256 KiB"
    );
    // And by feed_url, as every URL API does.
    let input = VideoInput::new(config()).unwrap();
    input.feed_url(&url, UrlOptions::new()).unwrap();
    input.close();
    let batches: Vec<Batch> = input.iter().map(|b| b.unwrap()).collect();
    assert!(frames_of(&batches) == want, "feed_url: frames differ");
}

#[test]
fn sampled_clips_by_url_equal_the_files() {
    if skip("the remote sampling test") {
        return;
    }
    let server = nginx();
    let (_, first, _) = videos();
    let sampling = || Sampling::new().clips(6, ClipSampler::Random).seed(7);
    let decode = |feed: &dyn Fn(&VideoInput)| {
        let input = VideoInput::new(config().sampling(sampling())).unwrap();
        feed(&input);
        input.close();
        let batches: Vec<Batch> = input.iter().map(|b| b.unwrap()).collect();
        frames_of(&batches)
    };
    let want = decode(&|input| {
        input.feed(Encoded::file(first).unwrap()).unwrap();
    });
    server.clear_log();
    let url = format!("http://127.0.0.1:{}/moov_first.mp4", server.http);
    let got = decode(&|input| {
        input.feed_url(&url, UrlOptions::new()).unwrap();
    });
    assert_eq!(got.len(), 24);
    assert!(got == want, "sampled frames differ from the file's");
    let (bytes, bounded) = sent(&server.log());
    assert!(bounded);
    assert!(bytes < std::fs::metadata(first).unwrap().len(), "{bytes}");
}

#[test]
fn https_needs_the_private_ca_and_then_reads_like_the_file() {
    if skip("the HTTPS test") {
        return;
    }
    let server = nginx();
    let (_, first, _) = videos();
    let url = format!("https://127.0.0.1:{}/moov_first.mp4", server.https);
    // An unknown CA is not trusted.
    let (shown, reason) = unavailable(Encoded::remote(&url, &RemoteOptions::new().retries(0)));
    assert_eq!(shown, url);
    assert!(
        reason.to_lowercase().contains("certificate") || reason.contains("error sending request"),
        "{reason}"
    );
    let options = RemoteOptions::new().ca_file(&server.ca);
    let reader = VideoReader::open_remote(&url, &options, &config()).unwrap();
    let local = VideoReader::open(Encoded::file(first).unwrap(), &config()).unwrap();
    assert!(frames(&reader, &[0, 299, 599]) == frames(&local, &[0, 299, 599]));
}

/// The moov-last video's bytes, and a reader of them on the fault server with `options`.
fn on_fault_server(
    options: RemoteOptions,
) -> (common::object_server::FaultServer, String, VideoReader) {
    let (_, _, last) = videos();
    let server = fault_server(std::fs::read(last).unwrap());
    let url = format!("http://127.0.0.1:{}/videos/moov_last.mp4", server.port);
    let reader = VideoReader::open_remote(&url, &options, &config()).unwrap();
    (server, url, reader)
}

/// The ranged GETs the fault server answered so far (its faults start after a count of them).
fn ranged_gets(server: &common::object_server::FaultServer) -> u64 {
    let log = server.log.lock().unwrap();
    log.iter()
        .filter(|l| l.method == "GET" && l.range.is_some())
        .count() as u64
}

fn local_frames(indices: &[u64]) -> Vec<u8> {
    let (_, _, last) = videos();
    frames(
        &VideoReader::open(Encoded::file(last).unwrap(), &config()).unwrap(),
        indices,
    )
}

#[test]
fn a_server_that_ignores_range_is_read_through_once() {
    if skip_without_ffmpeg("the Range-ignored test") {
        return;
    }
    let (_, _, last) = videos();
    let server = fault_server(std::fs::read(last).unwrap());
    server.faults.ignore_range.store(true, Ordering::Relaxed);
    let url = format!("http://127.0.0.1:{}/v.mp4", server.port);
    let reader = VideoReader::open_remote(&url, &RemoteOptions::new(), &config()).unwrap();
    assert!(frames(&reader, &[5, 400, 17]) == local_frames(&[5, 400, 17]));
    let log = server.log.lock().unwrap().clone();
    let whole = log
        .iter()
        .filter(|l| l.status == 200 && l.method == "GET")
        .count();
    assert_eq!(
        whole, 2,
        "the first range (answered whole), then one read through: {log:?}"
    );
    assert_eq!(
        log.iter().filter(|l| l.method == "HEAD").count(),
        1,
        "a HEAD after the first range came whole: {log:?}"
    );
}

#[test]
fn throttling_is_retried_and_a_range_that_still_fails_names_the_url_and_bytes() {
    if skip_without_ffmpeg("the throttling test") {
        return;
    }
    let (server, _, reader) = on_fault_server(RemoteOptions::new());
    server.faults.throttle.store(3, Ordering::Relaxed);
    assert!(frames(&reader, &[300, 301]) == local_frames(&[300, 301]));
    let throttled = server
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.status == 503)
        .count();
    assert_eq!(throttled, 3, "three 503s answered, then retried");

    // No retries left: the read fails, the video's error names the URL (credentials hidden) and the range.
    let (_, _, last) = videos();
    let server = fault_server(std::fs::read(last).unwrap());
    let url = format!("http://user:secret@127.0.0.1:{}/v.mp4", server.port);
    let options = RemoteOptions::new().retries(1);
    let reader = VideoReader::open_remote(&url, &options, &config()).unwrap();
    server.faults.throttle.store(1000, Ordering::Relaxed);
    match reader.frames_at(&[450]) {
        Err(Error::Video {
            error: VideoError::SourceUnavailable { url, reason, .. },
            ..
        }) => {
            assert_eq!(url, format!("http://…@127.0.0.1:{}/v.mp4", server.port));
            assert!(reason.starts_with("bytes "), "{reason}");
            assert!(
                reason.contains("503") || reason.contains("Slow Down"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_object_that_changes_during_the_read_fails_the_video() {
    if skip_without_ffmpeg("the changed object test") {
        return;
    }
    let (server, url, reader) = on_fault_server(RemoteOptions::new());
    let done = ranged_gets(&server);
    server
        .faults
        .change_after
        .store(done.max(1), Ordering::Relaxed);
    let (shown, reason) = unavailable(reader.frames_at(&[500]));
    assert_eq!(shown, url);
    assert!(reason.contains("changed"), "{reason}");
}

#[test]
fn a_stalled_or_stopped_server_fails_the_video_within_its_timeouts() {
    if skip_without_ffmpeg("the stalled server test") {
        return;
    }
    let options = RemoteOptions::new()
        .timeout(Duration::from_millis(500))
        .retries(1);
    for stop in [false, true] {
        let (server, url, reader) = on_fault_server(options.clone());
        let done = ranged_gets(&server);
        let fault = if stop {
            &server.faults.stop_after
        } else {
            &server.faults.stall_after
        };
        fault.store(done.max(1), Ordering::Relaxed);
        let began = Instant::now();
        match reader.frames_at(&[520]) {
            Err(Error::Video {
                error: VideoError::SourceUnavailable { url: shown, .. },
                ..
            }) => assert_eq!(shown, url),
            other => panic!("stop {stop}: {other:?}"),
        }
        assert!(
            began.elapsed() < Duration::from_secs(60),
            "stop {stop}: {:?}",
            began.elapsed()
        );
    }
    // A video fed to an operator fails alone: the next one decodes.
    let (server, url, _) = on_fault_server(options);
    server.faults.stop_after.store(1, Ordering::Relaxed);
    let input = VideoInput::new(config()).unwrap();
    input
        .feed_url(
            &url,
            UrlOptions::new().remote(RemoteOptions::new().retries(0)),
        )
        .unwrap();
    input.feed(framefeed::SAMPLE_MP4).unwrap();
    input.close();
    let results: Vec<_> = input.iter().collect();
    assert!(results.iter().any(|r| matches!(
        r,
        Err(Error::Video {
            error: VideoError::SourceUnavailable { .. },
            ..
        })
    )));
    assert!(
        results.iter().filter_map(|r| r.as_ref().ok()).count() > 0,
        "the next video decoded"
    );
}

#[test]
fn the_index_cache_opens_a_video_again_with_one_head() {
    if skip("the index cache test") {
        return;
    }
    let server = nginx();
    let cache = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/moov_last.mp4", server.http);
    let options = RemoteOptions::new().index_cache(cache.path());
    let first = VideoReader::open_remote(&url, &options, &config()).unwrap();
    let want = frames(&first, &[123]);
    server.clear_log();
    let again = VideoReader::open_remote(&url, &options, &config()).unwrap();
    let log = server.log();
    assert_eq!(
        log.iter().map(|l| l.method.as_str()).collect::<Vec<_>>(),
        ["HEAD"],
        "opening again: {log:?}"
    );
    assert!(frames(&again, &[123]) == want);
}

#[test]
fn dropping_the_operator_ends_a_wait_on_a_stalled_remote_read_at_once() {
    if skip_without_ffmpeg("the stalled remote drop test") {
        return;
    }
    let (_, _, last) = videos();
    for when in ["head", "read"] {
        let server = fault_server(std::fs::read(last).unwrap());
        // Silent from the first ranged GET on (reading), or from the first request on (opening).
        server.faults.stall_after.store(1, Ordering::Relaxed);
        if when == "head" {
            server.faults.stall_all.store(true, Ordering::Relaxed);
        }
        let url = format!("http://127.0.0.1:{}/v.mp4", server.port);
        let input = VideoInput::new(config()).unwrap();
        // A minute a request: without the cancel, the drop would wait that long.
        let options = RemoteOptions::new().timeout(Duration::from_secs(60));
        input
            .feed_url(&url, UrlOptions::new().remote(options))
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while server.stalled.load(Ordering::Relaxed) == 0 {
            assert!(
                Instant::now() < deadline,
                "{when}: the server was never asked"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let start = Instant::now();
        drop(input);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{when}: {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn a_container_without_an_index_read_by_ranges_is_read_through_once_and_counted() {
    // Matroska: its Cues list keyframes only, so framefeed indexes it by reading its packets.
    let path = common::fixture("h264.mkv");
    let server = fault_server(std::fs::read(&path).unwrap());
    let url = format!("http://127.0.0.1:{}/h264.mkv", server.port);
    let before = framefeed::remote_index_scans();
    let reader = VideoReader::open_remote(&url, &RemoteOptions::new(), &config()).unwrap();
    assert!(
        framefeed::remote_index_scans() > before,
        "the scan was counted"
    );
    let local = VideoReader::open(Encoded::file(&path).unwrap(), &config()).unwrap();
    let last = reader.len() - 1;
    assert!(frames(&reader, &[0, last]) == frames(&local, &[0, last]));
    // An MP4 is listed from its moov: no scan.
    let (_, first, _) =
        videos_if_ffmpeg().unwrap_or((PathBuf::new(), PathBuf::new(), PathBuf::new()));
    if first.as_os_str().is_empty() {
        return;
    }
    let mp4 = fault_server(std::fs::read(&first).unwrap());
    let before = framefeed::remote_index_scans();
    VideoReader::open_remote(
        &format!("http://127.0.0.1:{}/v.mp4", mp4.port),
        &RemoteOptions::new(),
        &config(),
    )
    .unwrap();
    assert_eq!(
        framefeed::remote_index_scans(),
        before,
        "an MP4's index is its moov"
    );
}

#[test]
fn a_video_read_through_once_opens_again_from_the_index_cache_by_ranges() {
    if skip_without_ffmpeg("the index cache test of containers read through") {
        return;
    }
    // The 20 s video, a keyframe a second, stream-copied into the containers framefeed indexes by reading.
    let (_, first, _) = videos();
    let dir = tempfile::tempdir().unwrap();
    for container in ["mkv", "ts"] {
        let copy = dir.path().join(format!("v.{container}"));
        common::ffmpeg(&[
            "-i",
            first.to_str().unwrap(),
            "-c",
            "copy",
            copy.to_str().unwrap(),
        ]);
        let data = std::fs::read(&copy).unwrap();
        let len = data.len() as u64;
        let server = fault_server(data);
        let url = format!("http://127.0.0.1:{}/v.{container}", server.port);
        let cache = tempfile::tempdir().unwrap();
        let options = RemoteOptions::new().index_cache(cache.path());
        let local = VideoReader::open(Encoded::file(&copy).unwrap(), &config()).unwrap();
        let wanted = [0, 300, local.len() - 1];
        let want = frames(&local, &wanted);
        let sent = |server: &common::object_server::FaultServer| -> u64 {
            server.log.lock().unwrap().iter().map(|l| l.bytes).sum()
        };

        let first_open = VideoReader::open_remote(&url, &options, &config()).unwrap();
        assert!(
            sent(&server) >= len * 9 / 10,
            "{container}: the first opening reads it through"
        );
        assert!(frames(&first_open, &wanted) == want, "{container}");
        drop(first_open);

        server.log.lock().unwrap().clear();
        let again = VideoReader::open_remote(&url, &options, &config()).unwrap();
        assert_eq!(again.len(), local.len(), "{container}");
        assert!(
            frames(&again, &wanted) == want,
            "{container}: the same frames"
        );
        let log = server.log.lock().unwrap();
        let bytes: u64 = log.iter().map(|l| l.bytes).sum();
        // Three GOPs of twenty, and what the seeks read: a fraction of the file.
        assert!(
            bytes < len / 3,
            "{container}: opening again and reading 3 frames took {bytes} of {len} bytes: {log:?}"
        );
        assert_eq!(
            log.first().map(|l| l.method.as_str()),
            Some("HEAD"),
            "{container}"
        );
    }
}

#[test]
fn real_and_damaged_videos_read_through_give_the_local_frames_from_the_index_cache() {
    // The corpus's containers that framefeed indexes by reading them (Matroska, WebM, AVI) and the damaged
    // fixtures (Matroska, WebM, MPEG-TS): every frame and damage mark, opened twice with an index cache (the
    // second time from its kept packet index), equals the local file's.
    let Some(corpus) = common::corpus("the index cache test of real and damaged videos") else {
        return;
    };
    let mut paths: Vec<PathBuf> = [
        "av1_video.mkv",
        "testsrc2_vp8.webm",
        "testsrc2_vp9.webm",
        "testsrc2_mpeg4.avi",
    ]
    .iter()
    .map(|name| corpus.join(name))
    .collect();
    for name in [
        "damage_h264.mkv",
        "damage_hevc.mkv",
        "damage_h264.ts",
        "damage_vp9.webm",
    ] {
        paths.push(common::fixture(name));
    }
    for path in paths {
        let local = VideoReader::open(Encoded::file(&path).unwrap(), &config()).unwrap();
        let all = |reader: &VideoReader| {
            let frames = reader.frames_in_range(0, reader.len(), 1).unwrap();
            (frames.data().to_vec(), frames.damaged().to_vec())
        };
        let want = all(&local);
        let server = fault_server(std::fs::read(&path).unwrap());
        let url = format!("http://127.0.0.1:{}/video", server.port);
        let cache = tempfile::tempdir().unwrap();
        let options = RemoteOptions::new().index_cache(cache.path());
        for opening in ["first", "again"] {
            let reader = VideoReader::open_remote(&url, &options, &config()).unwrap();
            assert_eq!(reader.len(), local.len(), "{}, {opening}", path.display());
            assert!(all(&reader) == want, "{}, {opening}", path.display());
        }
        let kept = std::fs::read_dir(cache.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "ffpkt")
            })
            .count();
        assert_eq!(kept, 1, "{}: its packet index was kept", path.display());
    }
}

/// The test videos' paths when the `ffmpeg` CLI can make them.
fn videos_if_ffmpeg() -> Option<(PathBuf, PathBuf, PathBuf)> {
    common::ffmpeg_available().then(|| {
        let (dir, first, last) = videos();
        (dir.path().to_owned(), first.clone(), last.clone())
    })
}

#[test]
fn the_approximate_seek_mode_numbers_a_matroska_video_by_its_cues_and_fetches_only_their_gops() {
    if skip_without_ffmpeg("the approximate seek mode test") {
        return;
    }
    // The 20 s video (30 fps, B-frames, a keyframe a second) stream-copied into Matroska: a constant frame
    // rate, so the frames by time are the exact ones.
    let (_, first, _) = videos();
    let dir = tempfile::tempdir().unwrap();
    let mkv = dir.path().join("v.mkv");
    common::ffmpeg(&[
        "-i",
        first.to_str().unwrap(),
        "-c",
        "copy",
        mkv.to_str().unwrap(),
    ]);
    let data = std::fs::read(&mkv).unwrap();
    let len = data.len() as u64;
    let server = fault_server(data);
    let url = format!("http://127.0.0.1:{}/v.mkv", server.port);
    let approximate = RemoteOptions::new().seek_mode(SeekMode::Approximate);
    let local = VideoReader::open(Encoded::file(&mkv).unwrap(), &config()).unwrap();
    let wanted = [0, 1, 29, 30, 299, 300, 301, 452, 598, 599];
    let want = frames(&local, &wanted);

    let reader = VideoReader::open_remote(&url, &approximate, &config()).unwrap();
    assert_eq!(
        reader.len(),
        local.len(),
        "as many frames as the duration holds"
    );
    assert!(frames(&reader, &wanted) == want, "the exact frames");
    let log = server.log.lock().unwrap().clone();
    let (bytes, bounded) = sent(&log);
    assert!(bounded, "every GET bounded: {log:?}");
    // The header, the Cues at the end and seven GOPs of twenty: well under half the file (read through, it
    // is all of it).
    assert!(
        bytes < len / 2,
        "opening and reading {} frames took {bytes} of {len} bytes: {log:?}",
        wanted.len()
    );
    drop(reader);

    // The same video read exactly reads it through.
    server.log.lock().unwrap().clear();
    let exact = VideoReader::open_remote(&url, &RemoteOptions::new(), &config()).unwrap();
    assert!(frames(&exact, &wanted) == want);
    assert!(sent(&server.log.lock().unwrap()).0 >= len * 9 / 10);

    // Clip sampling through the operator, by time too: the local file's exact clips.
    let clips = |video: Encoded| {
        let sampling = Sampling::new().clips(3, ClipSampler::Random).seed(7);
        let input = VideoInput::new(config().sampling(sampling)).unwrap();
        input.feed(video).unwrap();
        input.close();
        let batches: Vec<Batch> = input.iter().map(|b| b.unwrap()).collect();
        frames_of(&batches)
    };
    server.log.lock().unwrap().clear();
    let remote = clips(Encoded::remote(&url, &approximate).unwrap());
    assert!(
        remote == clips(Encoded::file(&mkv).unwrap()),
        "the same clips"
    );
    let (bytes, _) = sent(&server.log.lock().unwrap());
    assert!(bytes < len / 2, "three clips took {bytes} of {len} bytes");
}

#[test]
fn the_approximate_seek_mode_gives_the_frame_at_each_time_and_a_hole_where_none_is() {
    if skip_without_ffmpeg("the approximate seek mode test of a dropped frame") {
        return;
    }
    // 300 frames at 30 fps, frame 100 dropped (its time left empty): 299 frames over the duration of 300.
    let dir = tempfile::tempdir().unwrap();
    let mkv = dir.path().join("dropped.mkv");
    common::ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=320x240:rate=30:duration=10",
        "-vf",
        "select=not(eq(n\\,100))",
        "-fps_mode",
        "passthrough",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-g",
        "30",
        "-bf",
        "2",
        mkv.to_str().unwrap(),
    ]);
    let server = fault_server(std::fs::read(&mkv).unwrap());
    let url = format!("http://127.0.0.1:{}/dropped.mkv", server.port);
    let local = VideoReader::open(Encoded::file(&mkv).unwrap(), &config()).unwrap();
    assert_eq!(local.len(), 299, "exact: the frames there are");
    let options = RemoteOptions::new().seek_mode(SeekMode::Approximate);
    let by_time = VideoReader::open_remote(&url, &options, &config()).unwrap();
    assert_eq!(by_time.len(), 300, "by time: the slots the duration holds");
    // Before the gap the same frames; after it, frame i by time is exact frame i - 1 (shown at i / 30 s).
    assert!(frames(&by_time, &[0, 50, 99]) == frames(&local, &[0, 50, 99]));
    assert!(frames(&by_time, &[101, 200, 299]) == frames(&local, &[100, 199, 298]));
    match by_time.frames_at(&[100]) {
        Err(Error::Video {
            error: VideoError::Hole { index, .. },
            ..
        }) => assert_eq!(index, 100),
        other => panic!("no frame is shown at 100 / 30 s: {other:?}"),
    }
}

#[test]
fn real_matroska_and_webm_videos_by_time_give_their_exact_frames() {
    // The corpus's Matroska and WebM clips (AV1, VP8, VP9 at constant frame rates): every frame by time from
    // their Cues equals the local file's exact frame.
    let Some(corpus) = common::corpus("the approximate seek mode test of real videos") else {
        return;
    };
    for name in ["av1_video.mkv", "testsrc2_vp8.webm", "testsrc2_vp9.webm"] {
        let path = corpus.join(name);
        let local = VideoReader::open(Encoded::file(&path).unwrap(), &config()).unwrap();
        let want = local.frames_in_range(0, local.len(), 1).unwrap();
        let server = fault_server(std::fs::read(&path).unwrap());
        let url = format!("http://127.0.0.1:{}/{name}", server.port);
        let options = RemoteOptions::new().seek_mode(SeekMode::Approximate);
        let reader = VideoReader::open_remote(&url, &options, &config()).unwrap();
        assert_eq!(reader.len(), local.len(), "{name}");
        let got = reader.frames_in_range(0, reader.len(), 1).unwrap();
        assert!(got.data() == want.data(), "{name}: every frame");
        // Backwards, one at a time: each from its keyframe.
        for i in (0..reader.len()).rev().step_by(7) {
            assert!(
                frames(&reader, &[i]) == frames(&local, &[i]),
                "{name}: frame {i}"
            );
        }
    }
}

#[test]
fn a_reader_whose_server_refuses_connections_fails_after_its_retries_in_one_attempt() {
    // Nothing listens: the store's requests are retried as `RemoteOptions` says (none here), then FFmpeg's
    // pull is tried once, since a whole video has no live source to wait for (no reconnect policy).
    let port = common::object_server::free_port();
    let url = format!("http://user:secret@127.0.0.1:{port}/a.mp4?sig=secret");
    let options = UrlOptions::new().remote(RemoteOptions::new().retries(0));
    match VideoReader::open_url(&url, options, &config()) {
        Err(Error::Video {
            error:
                VideoError::SourceUnavailable {
                    url: shown,
                    attempts,
                    reason,
                },
            ..
        }) => {
            assert_eq!(attempts, 1, "{reason}");
            assert_eq!(shown, format!("http://…@127.0.0.1:{port}/a.mp4?…"));
            assert!(!reason.contains("secret"), "{reason}");
        }
        other => panic!("not source_unavailable: {other:?}"),
    }
}
