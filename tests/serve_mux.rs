//! `framefeed serve`'s `GET /mux` (the real binary, on loopback): batches across chosen live streams, two
//! cameras pulled by URL (the `ffmpeg` CLI serving RTMP at real-time pace) and a detached upload from an
//! `ffmpeg -method POST` encoder, with a stream whose address is dead ending alone; every stream's frames once
//! and in order, in batches of at most `batch_size` of one shape, each stream's end after its last sequence;
//! a silent stream does not hold the others' batches; the query checked, unknown streams 404, and the route
//! behind the tokens. Skipped, with the reason printed,
//! where the `ffmpeg` CLI is absent. Every wait is bounded.

mod common;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::process::{Command, Stdio};

use common::serve::{camera, dechunk, get, metric, post_json, request, serve, until, BOUND};
use common::{live_ts_clip, skip_without_ffmpeg};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mux_batches_across_pulled_and_uploaded_streams_and_a_dead_one_ends_alone() {
    if skip_without_ffmpeg("the mux route test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let clip = |frames: u32| {
        live_ts_clip(
            dir.path(),
            &format!("clip-{frames}.ts"),
            "testsrc2=size=320x240:rate=30",
            frames,
        )
    };
    let (a, b, c) = (clip(90), clip(60), clip(75));
    let server = serve(&["--allow-hosts", "127.0.0.1"]);
    let addr = server.addr;
    // The mux consumer connects first and waits for every stream to take its id.
    let mux = tokio::spawn(async move {
        get(
            addr,
            "/mux?streams=cam1,cam2,enc,dead&batch_size=4&deadline=50&wait=30",
        )
        .await
    });
    until("the mux waiting for its streams", || async {
        metric(addr, "framefeed_stream_consumers_waiting").await == 4
    })
    .await;
    let (mut camera1, url1) = camera(&a);
    let (mut camera2, url2) = camera(&b);
    for (id, url) in [("cam1", &url1), ("cam2", &url2)] {
        let body = json!({"url": url, "id": id, "label": id, "sequence_length": 1, "batch_size": 1, "reconnect": 20});
        let created = post_json(addr, "/streams", &body).await;
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let dead_port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port(); // closed again: nothing listens there
    let body = json!({"url": format!("rtmp://127.0.0.1:{dead_port}/live/x"), "id": "dead", "reconnect": 0, "sequence_length": 1, "batch_size": 1});
    assert_eq!(post_json(addr, "/streams", &body).await.status, 201);
    let encoder = tokio::task::spawn_blocking(move || {
        Command::new("ffmpeg")
            .args(["-v", "error", "-re", "-i"])
            .arg(&c)
            .args(["-c", "copy", "-f", "mpegts", "-method", "POST"])
            .args(["-chunked_post", "1"])
            .arg(format!(
                "http://{addr}/videos?detach=true&id=enc&label=encoder&sequence_length=1&batch_size=1"
            ))
            .stdin(Stdio::null())
            .status()
            .expect("run ffmpeg")
    });
    let response = tokio::time::timeout(BOUND, mux).await.unwrap().unwrap();
    assert!(encoder.await.unwrap().success());
    let _ = (camera1.wait(), camera2.wait());
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(
        response.header("content-type"),
        Some("application/x-ndjson")
    );

    let lines = response.lines();
    let mut frames: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut ended: BTreeMap<String, Value> = BTreeMap::new();
    let mut mixed = false;
    let (summary, body) = lines.split_last().expect("a summary");
    for (n, line) in body.iter().enumerate() {
        if let Some(end) = line.get("ended") {
            let id = end["stream"].as_str().unwrap().to_string();
            assert!(ended.insert(id, end.clone()).is_none(), "one end a stream");
            continue;
        }
        assert_eq!(line["batch"], n - ended.len(), "{line}");
        let sequences = line["sequences"].as_array().unwrap();
        assert!((1..=4).contains(&sequences.len()), "{line}");
        let shape = &sequences[0]["shape"];
        let mut streams = std::collections::BTreeSet::new();
        for s in sequences {
            assert_eq!(&s["shape"], shape, "one shape a batch: {line}");
            let id = s["stream"].as_str().unwrap().to_string();
            assert!(
                !ended.contains_key(&id),
                "a sequence after its stream's end"
            );
            assert!(s["wait_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{s}");
            let label = if id == "enc" { "encoder" } else { id.as_str() };
            assert_eq!(s["label"], label);
            streams.insert(id.clone());
            frames.entry(id).or_default().extend(
                s["frames"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f.as_u64().unwrap()),
            );
        }
        mixed |= streams.len() > 1;
    }
    assert!(mixed, "batches mix streams");
    // Every frame of every live stream, once and in order.
    for (id, count) in [("cam1", 90), ("cam2", 60), ("enc", 75)] {
        assert_eq!(frames[id], (0..count).collect::<Vec<u64>>(), "{id}");
        assert_eq!(ended[id]["errors"], json!([]), "{id}");
        assert_eq!(ended[id]["missed"], 0, "{id}");
    }
    // The dead address ends alone, with its error.
    assert!(!frames.contains_key("dead"));
    let errors = ended["dead"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{}", ended["dead"]);
    assert!(errors[0]["code"].as_str().is_some(), "{}", ended["dead"]);
    let summary = &summary["summary"];
    assert_eq!(summary["sequences"], 90 + 60 + 75);
    assert_eq!(summary["batches"], body.len() - 4);
    assert_eq!(summary["errors"].as_array().unwrap().len(), 1);
    assert_eq!(summary["errors"][0]["stream"], "dead");
    for s in summary["streams"].as_array().unwrap() {
        assert_eq!(s["dropped"], 0, "{s}");
        assert_eq!(s["missed"], 0, "{s}");
    }
    assert_eq!(metric(addr, "framefeed_stream_consumers_waiting").await, 0);
}

/// A stream that sends nothing does not hold the others' batches: every frame of an encoder's upload reaches
/// the mux consumer while a silent upload is still open, and once the silent one is deleted it ends alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_stream_does_not_hold_the_others_batches() {
    if skip_without_ffmpeg("the mux route's silent-stream test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let clip = live_ts_clip(dir.path(), "clip.ts", "testsrc2=size=320x240:rate=30", 60);
    let server = serve(&[]);
    let addr = server.addr;
    // The silent one: a detached upload that sends its first bytes, then nothing.
    let mut quiet = TcpStream::connect(addr).await.unwrap();
    let head =
        "POST /videos?detach=true&id=quiet&sequence_length=1&batch_size=1 HTTP/1.1\r\nHost: x\r\n\
                Transfer-Encoding: chunked\r\n\r\n";
    let first = &std::fs::read(&clip).unwrap()[..188 * 8];
    quiet.write_all(head.as_bytes()).await.unwrap();
    quiet
        .write_all(format!("{:x}\r\n", first.len()).as_bytes())
        .await
        .unwrap();
    quiet.write_all(first).await.unwrap();
    quiet.write_all(b"\r\n").await.unwrap();
    // The mux consumer, read as it comes.
    let mut mux = TcpStream::connect(addr).await.unwrap();
    mux.write_all(
        b"GET /mux?streams=fast,quiet&batch_size=8&deadline=50&wait=30 HTTP/1.1\r\nHost: x\r\n\
          Connection: close\r\n\r\n",
    )
    .await
    .unwrap();
    let encoder = tokio::task::spawn_blocking(move || {
        Command::new("ffmpeg")
            .args(["-v", "error", "-re", "-i"])
            .arg(&clip)
            .args(["-c", "copy", "-f", "mpegts", "-method", "POST"])
            .args(["-chunked_post", "1"])
            .arg(format!(
                "http://{addr}/videos?detach=true&id=fast&sequence_length=1&batch_size=1"
            ))
            .stdin(Stdio::null())
            .status()
            .expect("run ffmpeg")
    });
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    let sequences_of_fast = |raw: &[u8]| {
        String::from_utf8_lossy(raw)
            .matches("\"stream\":\"fast\"")
            .count()
    };
    let start = std::time::Instant::now();
    while sequences_of_fast(&raw) < 60 {
        assert!(
            start.elapsed() < BOUND,
            "the fast stream's frames did not all come"
        );
        let n = tokio::time::timeout(BOUND, mux.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(
            n > 0,
            "the answer ended early: {}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&buf[..n]);
    }
    assert!(encoder.await.unwrap().success());
    // Every frame of the fast one came while the silent one was still open; now it is deleted.
    let deleted = request(addr, "DELETE /streams/quiet HTTP/1.1\r\n", &[], b"").await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    tokio::time::timeout(BOUND, mux.read_to_end(&mut raw))
        .await
        .unwrap()
        .unwrap();
    drop(quiet);
    let text = String::from_utf8(raw).unwrap();
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    let lines: Vec<Value> = dechunk(body)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut frames = Vec::new();
    for line in &lines {
        for s in line["sequences"].as_array().into_iter().flatten() {
            assert_eq!(s["stream"], "fast", "{line}");
            frames.extend(
                s["frames"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f.as_u64().unwrap()),
            );
        }
    }
    assert_eq!(frames, (0..60).collect::<Vec<u64>>());
    let ended: Vec<&Value> = lines.iter().filter_map(|l| l.get("ended")).collect();
    assert_eq!(ended.len(), 2, "{lines:?}");
    let quiet_end = ended.iter().find(|e| e["stream"] == "quiet").unwrap();
    assert_eq!(quiet_end["stopped"], "deleted", "{quiet_end}");
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["sequences"], 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mux_queries_are_checked_unknown_streams_are_404_and_tokens_are_needed() {
    let server = serve(&[]);
    let addr = server.addr;
    for (query, expected) in [
        ("", "streams is required"),
        ("?streams=a,a", "names 'a' twice"),
        ("?streams=a&batch_size=0", "allowed: 1 to 1024"),
        ("?streams=a&deadline=0", "allowed: more than 0"),
        (
            "?streams=a&policy=newest",
            "allowed: 'every_frame', 'latest_only'",
        ),
        ("?streams=a&bogus=1", "unknown query parameter 'bogus'"),
    ] {
        let response = get(addr, &format!("/mux{query}")).await;
        assert_eq!(response.status, 400, "{query}: {}", response.body);
        let error = response.error();
        assert_eq!(error["code"], "bad_request");
        assert!(
            error["message"].as_str().unwrap().contains(expected),
            "{query}: {error}"
        );
    }
    let response = get(addr, "/mux?streams=nope").await;
    assert_eq!(response.status, 404, "{}", response.body);
    assert_eq!(response.error()["code"], "no_such_stream");
    drop(server);

    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "ops:s3cret-token-0123456789\n").unwrap();
    let server = serve(&["--auth-tokens", tokens.to_str().unwrap()]);
    assert_eq!(get(server.addr, "/mux?streams=a").await.status, 401);
}
