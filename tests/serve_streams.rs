//! `framefeed serve`'s streams (the real binary, on loopback): a camera pulled by URL (`POST /streams`; the
//! `ffmpeg` CLI serving RTMP is the camera) fanned out to consumers (`GET /streams/{id}/batches`), a consumer
//! that stops reading, `DELETE`, a detached upload from an `ffmpeg -method POST` encoder that never reads its
//! response, and URLs the server must refuse (SSRF). Skipped, with the reason printed, where the `ffmpeg` CLI
//! is absent. Every wait is bounded.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::serve::{
    camera, exchange, get, metric, parse_response, post_json, request, serve, serve_with_env,
    until, Response, BOUND,
};
use common::{live_ts_clip, skip_without_ffmpeg};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

fn skip() -> bool {
    skip_without_ffmpeg("the stream service tests")
}

/// A `size` H.264 MPEG-TS clip of `frames` frames at `rate` fps, as a live encoder makes it.
fn clip(dir: &Path, frames: u32, size: &str, rate: u32) -> PathBuf {
    live_ts_clip(
        dir,
        &format!("clip-{frames}-{size}-{rate}.ts"),
        &format!("testsrc2=size={size}:rate={rate}"),
        frames,
    )
}

/// A consumer connected now, reading its whole response when it ends.
fn consumer(addr: SocketAddr, id: &str) -> tokio::task::JoinHandle<Response> {
    let path = format!("/streams/{id}/batches?wait=30");
    tokio::spawn(async move { get(addr, &path).await })
}

/// The batch lines of a consumer's response, and its summary.
fn batches_and_summary(response: &Response) -> (Vec<Value>, Value) {
    assert_eq!(response.status, 200, "{}", response.body);
    let mut lines = response.lines();
    let summary = lines.pop().expect("a summary line");
    assert!(summary.get("summary").is_some(), "{summary}");
    assert!(
        lines.iter().all(|l| l.get("sequences").is_some()),
        "{lines:?}"
    );
    (lines, summary["summary"].clone())
}

fn frames_in(lines: &[Value]) -> u64 {
    lines
        .iter()
        .flat_map(|l| l["sequences"].as_array().unwrap())
        .map(|s| s["valid_frames"].as_u64().unwrap())
        .sum()
}

async fn stream_info(addr: SocketAddr, id: &str) -> Value {
    let response = get(addr, &format!("/streams/{id}")).await;
    assert_eq!(response.status, 200, "{}", response.body);
    response.lines()[0]["stream"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_consumers_of_one_camera_get_the_same_batches() {
    if skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = clip(dir.path(), 60, "320x240", 30);
    let server = serve(&["--allow-hosts", "127.0.0.1"]);
    let addr = server.addr;
    let (mut camera, url) = camera(&path);
    // Both consumers connect before the stream exists; they join it before its first batch.
    let a = consumer(addr, "cam");
    let b = consumer(addr, "cam");
    until("two waiting consumers", || async {
        metric(addr, "framefeed_stream_consumers_waiting").await == 2
    })
    .await;
    let created = post_json(
        addr,
        "/streams",
        &json!({"url": url, "id": "cam", "label": "door", "sequence_length": 8, "reconnect": 20}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.header("location"), Some("/streams/cam"));
    let info = &created.lines()[0]["stream"];
    assert_eq!(info["id"], "cam");
    assert_eq!(info["state"], "running");
    // The URL is shown without its query or credentials.
    assert_eq!(info["source"], url.as_str());

    let (a, b) = (a.await.unwrap(), b.await.unwrap());
    let _ = camera.wait();
    let (lines_a, summary_a) = batches_and_summary(&a);
    let (lines_b, summary_b) = batches_and_summary(&b);
    // Every frame the camera sent, in order, to both; the same lines.
    assert_eq!(frames_in(&lines_a), 60);
    assert_eq!(lines_a, lines_b);
    let pts: Vec<f64> = lines_a
        .iter()
        .flat_map(|l| l["sequences"][0]["pts"].as_array().unwrap().clone())
        .map(|p| p.as_f64().unwrap())
        .collect();
    assert!(pts.windows(2).all(|w| w[0] < w[1]), "{pts:?}");
    for line in &lines_a {
        assert_eq!(line["label"], "door");
        assert!(
            line["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0),
            "{line}"
        );
        assert!(line.get("missed").is_none(), "{line}");
    }
    for summary in [&summary_a, &summary_b] {
        assert_eq!(summary["frames"], 60);
        assert_eq!(summary["missed"], 0);
        assert_eq!(summary["errors"], json!([]));
    }
    // The list shows the stream, ended, with its counts and latency.
    let listed = get(addr, "/streams").await.lines()[0]["streams"].clone();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let info = &listed[0];
    assert_eq!(info["state"], "ended");
    assert_eq!(info["frames"], 60);
    assert_eq!(info["batches"], lines_a.len());
    assert!(info["latency_ms"].as_f64().is_some(), "{info}");
    assert_eq!(metric(addr, "framefeed_streams_active").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_that_stops_reading_slows_neither_the_other_nor_the_decoder() {
    if skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 2400 frames at 120 fps, one frame a batch: 2400 lines in 20 s, far more than the socket buffers of a
    // consumer that does not read can hold.
    let path = clip(dir.path(), 2400, "64x64", 120);
    let server = serve(&["--allow-hosts", "127.0.0.1"]);
    let addr = server.addr;
    let (mut camera, url) = camera(&path);
    // The slow consumer: a small receive buffer, and it reads nothing until the stream has ended.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(1024).unwrap();
    let mut slow = socket.connect(addr).await.unwrap();
    slow.write_all(
        b"GET /streams/bulk/batches?wait=30 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    let fast = consumer(addr, "bulk");
    until("two waiting consumers", || async {
        metric(addr, "framefeed_stream_consumers_waiting").await == 2
    })
    .await;
    let label = "x".repeat(200);
    let created = post_json(
        addr,
        "/streams",
        &json!({"url": url, "id": "bulk", "label": label, "sequence_length": 1, "reconnect": 20}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);

    let fast = tokio::time::timeout(BOUND, fast).await.unwrap().unwrap();
    let _ = camera.wait();
    let (lines, summary) = batches_and_summary(&fast);
    assert_eq!(frames_in(&lines), 2400);
    assert_eq!(summary["missed"], 0);
    // The decoder finished while the slow consumer had read nothing.
    until("the stream to end", || async {
        stream_info(addr, "bulk").await["state"] == "ended"
    })
    .await;
    assert_eq!(stream_info(addr, "bulk").await["frames"], 2400);

    // The slow consumer now reads: what it got and what it was told it missed add up to every batch.
    let mut raw = Vec::new();
    tokio::time::timeout(BOUND, slow.read_to_end(&mut raw))
        .await
        .unwrap()
        .unwrap();
    let (got, slow_summary) = batches_and_summary(&parse_response(&raw));
    // Lines carry what was missed before them; the summary, what was missed in all (the last drop may come
    // right before it).
    let told: u64 = got.iter().filter_map(|l| l["missed"].as_u64()).sum();
    let missed = slow_summary["missed"].as_u64().unwrap();
    assert!(told <= missed, "{told} > {missed}");
    assert!(
        missed > 0,
        "the slow consumer missed nothing: {}",
        got.len()
    );
    assert_eq!(got.len() as u64 + missed, 2400);
    assert_eq!(slow_summary["frames"], 2400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_stops_a_running_stream_and_its_consumers_get_the_summary() {
    if skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = clip(dir.path(), 900, "320x240", 30);
    let server = serve(&["--allow-hosts", "127.0.0.1"]);
    let addr = server.addr;
    let (mut camera, url) = camera(&path);
    let created = post_json(
        addr,
        "/streams",
        &json!({"url": url, "sequence_length": 4, "reconnect": 20}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.lines()[0]["stream"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let watcher = consumer(addr, &id);
    until("a batch", || async {
        stream_info(addr, &id).await["batches"].as_u64().unwrap() >= 2
    })
    .await;
    assert_eq!(stream_info(addr, &id).await["consumers"], 1);
    let deleted = request(
        addr,
        &format!("DELETE /streams/{id} HTTP/1.1\r\n"),
        &[],
        b"",
    )
    .await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    let watched = tokio::time::timeout(Duration::from_secs(10), watcher)
        .await
        .expect("the consumer's response ends when its stream is deleted")
        .unwrap();
    let (lines, summary) = batches_and_summary(&watched);
    assert_eq!(summary["stopped"], "deleted");
    assert!(frames_in(&lines) < 900);
    assert_eq!(get(addr, &format!("/streams/{id}")).await.status, 404);
    until("the slot to be freed", || async {
        metric(addr, "framefeed_streams_active").await == 0
    })
    .await;
    let _ = camera.kill();
    let _ = camera.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_upload_from_an_encoder_reaches_a_separate_consumer() {
    if skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = clip(dir.path(), 90, "320x240", 30);
    let server = serve(&[]);
    let addr = server.addr;
    let watcher = consumer(addr, "enc");
    until("a waiting consumer", || async {
        metric(addr, "framefeed_stream_consumers_waiting").await == 1
    })
    .await;
    // The encoder streams its output as a chunked POST and never reads the response.
    let status = tokio::task::spawn_blocking(move || {
        Command::new("ffmpeg")
            .args(["-v", "error", "-re", "-i"])
            .arg(&path)
            .args(["-c", "copy", "-f", "mpegts", "-method", "POST"])
            .args(["-chunked_post", "1"])
            .arg(format!(
                "http://{addr}/videos?detach=true&id=enc&label=encoder&sequence_length=8"
            ))
            .stdin(Stdio::null())
            .status()
            .expect("run ffmpeg")
    })
    .await
    .unwrap();
    assert!(status.success());
    let watched = tokio::time::timeout(BOUND, watcher).await.unwrap().unwrap();
    let (lines, summary) = batches_and_summary(&watched);
    assert_eq!(frames_in(&lines), 90);
    assert_eq!(summary["frames"], 90);
    assert_eq!(summary["errors"], json!([]));
    assert_eq!(lines[0]["label"], "encoder");
    let info = stream_info(addr, "enc").await;
    assert_eq!(info["source"], "upload");
    assert_eq!(info["state"], "ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_under_a_listed_prefix_are_read_with_the_servers_store_and_others_refused() {
    if skip() {
        return;
    }
    // An S3 endpoint of the server's own (the fault server answers path-style GETs by ranges), named by the
    // environment as the clouds' tools read it; the client names only the object.
    let dir = tempfile::tempdir().unwrap();
    let video = dir.path().join("clip.mp4");
    common::ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=320x240:rate=30",
        "-frames:v",
        "60",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        video.to_str().unwrap(),
    ]);
    let store = common::object_server::fault_server(std::fs::read(&video).unwrap());
    let endpoint = format!("http://127.0.0.1:{}", store.port);
    let env = [
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", "server-key"),
        ("AWS_SECRET_ACCESS_KEY", "server-secret"),
        ("AWS_REGION", "us-east-1"),
    ];
    let server = serve_with_env(&["--allow-remote", "s3://videos/train"], &env);
    let addr = server.addr;
    let created = post_json(
        addr,
        "/streams",
        &json!({"url": "s3://videos/train/clip.mp4", "id": "obj", "sequence_length": 8}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let (lines, summary) = batches_and_summary(&consumer(addr, "obj").await.unwrap());
    assert_eq!(frames_in(&lines), 60);
    assert_eq!(summary["errors"], json!([]));
    // Read by bounded ranges, never whole in one request.
    let log = store.log.lock().unwrap().clone();
    assert!(
        log.iter()
            .filter(|l| l.method == "GET")
            .all(|l| l.range.as_deref().is_some_and(|r| !r.ends_with('-'))),
        "{log:?}"
    );
    for url in [
        "s3://videos/training.mp4",
        "s3://videos/train/../secret.mp4",
        "s3://videos/train/%2E%2E/secret.mp4",
        "s3://videos/train/",
        "s3://other/train/clip.mp4",
        "gs://videos/train/clip.mp4",
        "s3a://videos/train/clip.mp4",
    ] {
        let response = post_json(addr, "/streams", &json!({ "url": url })).await;
        assert_eq!(response.status, 400, "{url}: {}", response.body);
        assert_eq!(response.error()["code"], "refused_url", "{url}");
    }
    drop(server);
    // Without --allow-remote, none.
    let server = serve_with_env(&[], &env);
    let response = post_json(
        server.addr,
        "/streams",
        &json!({"url": "s3://videos/train/clip.mp4"}),
    )
    .await;
    assert_eq!(response.status, 400, "{}", response.body);
    assert!(
        response.error()["message"]
            .as_str()
            .is_some_and(|m| m.contains("--allow-remote")),
        "{}",
        response.body
    );
    // A prefix that is no object store's is refused at startup.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_framefeed"))
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--allow-remote",
            "http://example.com/",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("not an object-store prefix"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_to_refused_hosts_or_schemes_are_400_and_streams_need_a_token() {
    let server = serve(&[]);
    let addr = server.addr;
    for url in [
        "rtsp://127.0.0.1:8554/cam",
        "http://169.254.169.254/latest/meta-data",
        "http://10.1.2.3/live.m3u8",
        "rtmp://192.168.0.10/live/x",
        "http://[::1]:8080/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://localhost:9/x",
        "srt://0.0.0.0:9000",
        "srt://8.8.8.8:9000?mode=listener",
        "file:///etc/passwd",
        "/etc/passwd",
        "ftp://example.com/x.ts",
        "gopher://example.com/",
    ] {
        let response = post_json(addr, "/streams", &json!({ "url": url })).await;
        assert_eq!(response.status, 400, "{url}: {}", response.body);
        let error = response.error();
        assert_eq!(error["code"], "refused_url", "{url}: {error}");
    }
    let response = post_json(addr, "/streams", &json!({"url": "rtsp://h/", "x": 1})).await;
    assert_eq!(response.status, 400);
    assert_eq!(get(addr, "/streams").await.lines()[0]["streams"], json!([]));
    assert_eq!(get(addr, "/streams/nope").await.status, 404);
    assert_eq!(get(addr, "/health").await.status, 200);
    drop(server);

    // With tokens, every stream route needs one.
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "ops:s3cret-token-0123456789\n").unwrap();
    let server = serve(&["--auth-tokens", tokens.to_str().unwrap()]);
    let addr = server.addr;
    let body = json!({"url": "rtsp://8.8.8.8/cam"}).to_string();
    let length = format!("Content-Length: {}", body.len());
    let refused = request(
        addr,
        "POST /streams HTTP/1.1\r\n",
        &[&length],
        body.as_bytes(),
    )
    .await;
    assert_eq!(refused.status, 401);
    for path in ["/streams", "/streams/x", "/streams/x/batches"] {
        assert_eq!(get(addr, path).await.status, 401, "{path}");
    }
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let listed = exchange(
        stream,
        "GET /streams HTTP/1.1\r\n",
        &["Authorization: Bearer s3cret-token-0123456789"],
        b"",
    )
    .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
}

/// The request plumbing (tower-http and the serde request types): a declared body over a route's limit is a
/// 413 in the service's error format, a chunked one growing past it a 400 naming the limit; unknown and
/// mistyped fields name what is allowed; request ids are the server's own, and the error line carries the
/// same id as the `X-Request-Id` header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_fields_and_ids_are_checked_by_the_routers_layers() {
    let server = serve(&[]);
    let addr = server.addr;
    let big = format!("{{\"url\": \"rtsp://h/{}\"}}", "a".repeat(70_000));
    // Refused on its header alone (no body sent, so none is left unread when the server answers).
    let declared = request(
        addr,
        "POST /streams HTTP/1.1\r\n",
        &[&format!("Content-Length: {}", big.len())],
        b"",
    )
    .await;
    assert_eq!(declared.status, 413, "{}", declared.body);
    let error = declared.error();
    assert_eq!(error["code"], "body_too_large", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .ends_with("the limit is 65536"),
        "{error}"
    );
    assert_eq!(
        error["request_id"].as_str(),
        declared.header("x-request-id"),
        "the error line and the header carry one id"
    );

    let chunked = format!("{:x}\r\n{big}\r\n0\r\n\r\n", big.len());
    let grown = request(
        addr,
        "POST /streams HTTP/1.1\r\n",
        &["Transfer-Encoding: chunked"],
        chunked.as_bytes(),
    )
    .await;
    assert_eq!(grown.status, 400, "{}", grown.body);
    assert!(grown.error()["message"]
        .as_str()
        .unwrap()
        .contains("at most 65536 bytes"));

    let unknown = post_json(addr, "/streams", &json!({"url": "rtsp://h/", "colour": 1})).await;
    assert_eq!(unknown.status, 400);
    assert!(
        unknown.error()["message"]
            .as_str()
            .unwrap()
            .starts_with("unknown field 'colour'; allowed: url, id, label, sequence_length"),
        "{}",
        unknown.body
    );
    let mistyped = post_json(
        addr,
        "/streams",
        &json!({"url": "rtsp://h/", "batch_size": "2"}),
    )
    .await;
    assert_eq!(
        mistyped.error()["message"],
        "batch_size must be an integer from 0 to 4294967295"
    );
    let query = request(
        addr,
        "POST /videos?batch_size=two HTTP/1.1\r\n",
        &["Content-Length: 0"],
        b"",
    )
    .await;
    assert_eq!(
        query.error()["message"],
        "batch_size must be a positive integer, got 'two'"
    );

    // An id a client sends is not taken: ids key the server's log lines.
    let health = request(
        addr,
        "GET /health HTTP/1.1\r\n",
        &["X-Request-Id: forged"],
        b"",
    )
    .await;
    assert_eq!(health.status, 200);
    let id = health.header("x-request-id").expect("an id");
    assert!(!id.contains("forged") && id.len() == 17, "{id}");
}
