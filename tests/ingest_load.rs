//! The ingest service (`framefeed::server`, what `framefeed serve` runs) under load, on loopback only: 16 concurrent chunked uploads of different files,
//! every frame of every upload accounted for (against framefeed's own whole-buffer decode), no errors, while a
//! stalled upload stays open beside them without holding them up; then the limits (400, 413, 429, 503), the
//! stall timeout, malformed bodies and shutdown. Every wait is bounded, so the test stops by itself.

#[macro_use]
mod common;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use common::http_client::{chunks_of, get, send, upload, Upload};
use common::{decode_all, read_fixture};
use framefeed::server::{ServeConfig, Server, ServerHandle};
use framefeed::Config;
use hyper::{Request, StatusCode};
use serde_json::Value;

/// Every fixture made by `tests/fixtures/make.sh` that holds frames: 16 different files and containers.
const FILES: [&str; 16] = [
    "h264.ts",
    "h264_live.ts",
    "h264_fragmented.mp4",
    "h264.mp4",
    "h264_moov_at_end.mp4",
    "h264_bt709.mp4",
    "h264.mov",
    "h264.mkv",
    "h264.h264",
    "hevc.hevc",
    "hevc_10bit.mp4",
    "vp8.webm",
    "vp9.webm",
    "vp9_odd_35x19.webm",
    "av1.mkv",
    "mpeg4.avi",
];

/// Every wait in this file is bounded by this.
const BOUND: Duration = Duration::from_secs(120);

/// The service's defaults on a loopback port the system chooses, with the memory pool set (so that the test
/// does not depend on the machine's memory) and no rate rule (tested in `tests/serve_abuse.rs`), changed by
/// `adjust`.
async fn start(adjust: impl FnOnce(&mut ServeConfig)) -> (SocketAddr, ServerHandle) {
    let mut config = ServeConfig::default();
    config.addr = "127.0.0.1:0".parse().unwrap();
    config.max_memory = Some(64 << 30);
    config.min_upload_rate = 0;
    adjust(&mut config);
    let server = Server::bind(config).await.unwrap();
    let addr = server.local_addr();
    let handle = server.handle();
    tokio::spawn(server.run(std::future::pending()));
    (addr, handle)
}

/// (frames, batches, first frames of the sequences) of a response's batch lines.
fn account(lines: &[Value]) -> (u64, u64, Vec<u64>) {
    let batches: Vec<&Value> = lines.iter().filter(|l| l.get("batch").is_some()).collect();
    let frames = batches
        .iter()
        .flat_map(|b| b["sequences"].as_array().unwrap())
        .map(|s| s["valid_frames"].as_u64().unwrap())
        .sum();
    let firsts = batches
        .iter()
        .flat_map(|b| b["sequences"].as_array().unwrap())
        .map(|s| s["first_frame"].as_u64().unwrap())
        .collect();
    (frames, batches.len() as u64, firsts)
}

fn metric(text: &str, name: &str) -> u64 {
    common::serve::metric_value(text, name)
}

async fn sixteen_concurrent_uploads_beside_a_stalled_one() {
    let (addr, _service) = start(|c| c.max_streams_per_client = 32).await;
    let query = "sequence_length=4&batch_size=2&policy=pad";

    // A client that sends 3 KB of a stream and then nothing, keeping its connection open.
    let (release_stalled, hold) = tokio::sync::oneshot::channel();
    let stalled_data = read_fixture("h264_live.ts");
    let stalled = upload(
        addr,
        "127.0.0.1",
        query,
        chunks_of(&stalled_data[..3008], 1504),
        Duration::ZERO,
        Some(hold),
    )
    .await;

    let mut uploads = Vec::new();
    for name in FILES {
        let data = read_fixture(name);
        let up = upload(
            addr,
            "127.0.0.1",
            query,
            chunks_of(&data, 2048),
            Duration::from_millis(2),
            None,
        )
        .await;
        uploads.push((name, data, up));
    }
    let mut total_frames = 0;
    for (name, data, up) in uploads {
        let (status, lines) = tokio::time::timeout(BOUND, up.response)
            .await
            .unwrap_or_else(|_| panic!("{name}: no complete response"))
            .unwrap();
        assert_eq!(status, StatusCode::OK, "{name}");
        let summary = &lines.last().unwrap()["summary"];
        assert_eq!(
            summary["errors"],
            serde_json::json!([]),
            "{name}: {lines:?}"
        );
        // The reference: framefeed's own decode of the whole file with the same batching.
        let reference: Vec<framefeed::Batch> = decode_all(
            Config::new(4, 2).last_sequence_policy(framefeed::LastSequencePolicy::Pad),
            vec![data],
        )
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
        let ref_frames: usize = reference.iter().map(|b| b.valid_frames()).sum();
        let ref_firsts: Vec<u64> = reference
            .iter()
            .flat_map(|b| b.sequences())
            .map(|s| s.first_frame())
            .collect();
        let (frames, batches, firsts) = account(&lines);
        assert_eq!(frames, ref_frames as u64, "{name}: frames");
        assert_eq!(batches, reference.len() as u64, "{name}: batches");
        assert_eq!(firsts, ref_firsts, "{name}: sequences in order");
        assert_eq!(summary["frames"].as_u64(), Some(frames), "{name}");
        assert_eq!(summary["batches"].as_u64(), Some(batches), "{name}");
        total_frames += frames;
    }
    assert_eq!(total_frames, 15 * 23 + 100);
    // All 16 finished while the stalled upload is still open and undecided.
    assert!(
        !stalled.response.is_finished(),
        "the stalled upload should still be waiting"
    );
    let (_, metrics) = get(addr, "/metrics").await;
    assert_eq!(metric(&metrics, "framefeed_streams_active"), 1);
    assert_eq!(metric(&metrics, "framefeed_frames_total"), total_frames);
    assert_eq!(metric(&metrics, "framefeed_errors_total"), 0);
    // The stalled client gives up: its slot is freed.
    drop(release_stalled);
    stalled.response.abort();
    wait_for_active(addr, 0).await;
}

async fn a_stalled_upload_fails_alone_with_a_clear_error() {
    let (addr, _service) = start(|c| c.stall_timeout = Duration::from_millis(300)).await;
    let data = read_fixture("h264_live.ts");
    let (_keep_open, hold) = tokio::sync::oneshot::channel::<()>();
    let stalled = upload(
        addr,
        "127.0.0.1",
        "sequence_length=4",
        chunks_of(&data[..40_000], 4000),
        Duration::ZERO,
        Some(hold),
    )
    .await;
    let good = upload(
        addr,
        "127.0.0.1",
        "sequence_length=4",
        chunks_of(&read_fixture("h264.mkv"), 1000),
        Duration::ZERO,
        None,
    )
    .await;
    let (status, lines) = tokio::time::timeout(BOUND, stalled.response)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let (frames, _, _) = account(&lines);
    assert!(frames > 0, "frames decoded before the stall are delivered");
    let error = lines
        .iter()
        .find_map(|l| l.get("error"))
        .expect("an error line");
    assert_eq!(error["code"], "stalled", "{error}");
    let (_, good_lines) = tokio::time::timeout(BOUND, good.response)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(account(&good_lines).0, 23);
}

async fn malformed_bodies_get_an_error_line_and_a_summary() {
    let (addr, _service) = start(|_| {}).await;
    // A body cut short gives its frames and ends early by default; `strict=1` fails it at the damage.
    for (body, query, code) in [
        (
            &b"this is not a video"[..],
            "sequence_length=4",
            "not_a_video",
        ),
        (&b""[..], "sequence_length=4", "not_a_video"),
        (
            &read_fixture("h264.mp4")[..3000],
            "sequence_length=4&strict=1",
            "corrupt",
        ),
    ] {
        let up = upload(
            addr,
            "127.0.0.1",
            query,
            chunks_of(body, 1000),
            Duration::ZERO,
            None,
        )
        .await;
        let (status, lines) = tokio::time::timeout(BOUND, up.response)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status, StatusCode::OK);
        let error = lines
            .iter()
            .find_map(|l| l.get("error"))
            .unwrap_or_else(|| panic!("no error line in {lines:?}"));
        assert_eq!(error["code"], code, "{error}");
        assert!(error["request_id"]
            .as_str()
            .is_some_and(|id| !id.is_empty()));
        let summary = &lines.last().unwrap()["summary"];
        assert_eq!(summary["errors"].as_array().unwrap().len(), 1);
    }
}

/// A damaged upload (bytes overwritten mid-stream): by default its lines carry the holes and damaged frames and no
/// error (the same numbering as the library's: frames and holes are the video's 100 indices); `strict=1` fails
/// it at its first damage, after the frames before.
async fn damaged_uploads_report_their_damage_and_fail_only_when_strict() {
    let (addr, _service) = start(|_| {}).await;
    let mut data = read_fixture("damage_h264.mp4");
    let at = data.len() * 11 / 20;
    data[at..at + 1500].fill(0xFF);
    let lines_of = |query: &'static str| {
        let data = data.clone();
        async move {
            let up = upload(
                addr,
                "127.0.0.1",
                query,
                chunks_of(&data, 4000),
                Duration::ZERO,
                None,
            )
            .await;
            tokio::time::timeout(BOUND, up.response)
                .await
                .unwrap()
                .unwrap()
        }
    };
    let (status, lines) = lines_of("sequence_length=8").await;
    assert_eq!(status, StatusCode::OK);
    assert!(lines.iter().all(|l| l.get("error").is_none()), "{lines:?}");
    let (frames, _, _) = account(&lines);
    let holes: usize = lines
        .iter()
        .filter_map(|l| l["sequences"].as_array())
        .flatten()
        .filter_map(|s| s["holes"].as_array())
        .map(Vec::len)
        .sum();
    assert!(holes > 0, "{lines:?}");
    assert_eq!(frames + holes as u64, 100);
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["holes"], holes as u64, "{summary}");
    assert!(summary["damaged_frames"].as_u64().is_some(), "{summary}");
    let (status, lines) = lines_of("sequence_length=8&strict=1").await;
    assert_eq!(status, StatusCode::OK);
    let error = lines
        .iter()
        .find_map(|l| l.get("error"))
        .expect("an error line");
    assert_eq!(error["code"], "corrupt", "{error}");
    assert!(account(&lines).0 < frames);
}

async fn limits_are_answered_with_400_413_429_and_503() {
    let (addr, service) = start(|c| {
        c.max_streams = 2;
        c.max_streams_per_client = 1;
        c.max_body_bytes = 50_000;
    })
    .await;
    let data = read_fixture("h264_live.ts"); // 81968 bytes
    let status_of = |up: Upload| async move {
        let (status, lines) = tokio::time::timeout(BOUND, up.response)
            .await
            .unwrap()
            .unwrap();
        (status, lines)
    };

    // 400: a bad query names what is wrong.
    let up = upload(
        addr,
        "127.0.0.1",
        "sequence_length=0",
        vec![],
        Duration::ZERO,
        None,
    )
    .await;
    let (status, lines) = status_of(up).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(lines[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("sequence_length is 0"));

    // A chunked body growing past the limit is cut with an error line.
    let up = upload(
        addr,
        "127.0.0.1",
        "sequence_length=4",
        chunks_of(&data, 8192),
        Duration::ZERO,
        None,
    )
    .await;
    let (status, lines) = status_of(up).await;
    assert_eq!(status, StatusCode::OK);
    let error = lines
        .iter()
        .find_map(|l| l.get("error"))
        .expect("an error line");
    assert_eq!(error["code"], "body_too_large", "{error}");

    // 413: a declared length over the limit.
    let request = Request::post(format!("http://{addr}/videos"));
    let body = http_body_util::Full::new(Bytes::from(data.clone()));
    let (status, text) = send(addr, request, body).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(text.contains("the limit is 50000"), "{text}");

    // 429: a second upload from a client that already has one open.
    let open1 = hold_open(addr, "127.0.0.1", &data[..1000], 1).await;
    assert_eq!(
        refused(addr, "127.0.0.1").await,
        StatusCode::TOO_MANY_REQUESTS
    );

    // 503: the server-wide limit, reached from a second client address.
    let open2 = hold_open(addr, "127.0.0.2", &data[..1000], 2).await;
    assert_eq!(
        refused(addr, "127.0.0.3").await,
        StatusCode::SERVICE_UNAVAILABLE
    );

    // Shutting down: health says so and new uploads get 503.
    service.begin_shutdown();
    let (status, body) = get(addr, "/health").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let (_, metrics) = get(addr, "/metrics").await;
    assert!(
        metrics.contains("framefeed_requests_rejected_total{status=\"429\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("framefeed_requests_rejected_total{status=\"413\"} 1"),
        "{metrics}"
    );
    open1.0.response.abort();
    open2.0.response.abort();
}

/// Starts an upload from `from` that sends `data` and then holds its body open (until the returned sender is
/// dropped), and waits until the server counts `active` uploads.
async fn hold_open(
    addr: SocketAddr,
    from: &str,
    data: &[u8],
    active: u64,
) -> (Upload, tokio::sync::oneshot::Sender<()>) {
    let (keep, hold) = tokio::sync::oneshot::channel();
    let up = upload(
        addr,
        from,
        "",
        chunks_of(data, data.len()),
        Duration::ZERO,
        Some(hold),
    )
    .await;
    wait_for_active(addr, active).await;
    (up, keep)
}

/// The status of an empty upload from `from` (expected to be refused).
async fn refused(addr: SocketAddr, from: &str) -> StatusCode {
    let up = upload(addr, from, "", vec![], Duration::ZERO, None).await;
    tokio::time::timeout(BOUND, up.response)
        .await
        .unwrap()
        .unwrap()
        .0
}

async fn wait_for_active(addr: SocketAddr, n: u64) {
    for _ in 0..400 {
        let (_, metrics) = get(addr, "/metrics").await;
        if metric(&metrics, "framefeed_streams_active") == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the number of active uploads never became {n}");
}

on_both_runtimes!(
    sixteen_concurrent_uploads_beside_a_stalled_one,
    a_stalled_upload_fails_alone_with_a_clear_error,
    malformed_bodies_get_an_error_line_and_a_summary,
    damaged_uploads_report_their_damage_and_fail_only_when_strict,
    limits_are_answered_with_400_413_429_and_503
);
