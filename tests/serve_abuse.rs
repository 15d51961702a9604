//! `framefeed serve` (the real binary, on loopback) against hostile clients, one class of abuse per test:
//! settings that would take the process down, settings that would hold gigabytes, connections that never send
//! their headers, an upload dripped to hold a slot, requests without a token, CL+TE smuggling, and error
//! lines that would leak internals; plus a TLS round trip. Each test starts its own server and checks that it
//! is still up and answering `/health` afterwards. Every wait is bounded.

#[macro_use]
mod common;

use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::read_fixture;
use common::serve::{
    exchange, metric, metric_value, parse_response, request, serve, wait_for_metric, Response,
    Serve, BOUND,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A token of the tokens file the auth tests write.
const TOKEN: &str = "s3cret-token-0123456789";

impl Serve {
    /// The peak resident memory of the server so far (Linux `VmHWM`), in bytes.
    fn peak_rss(&self) -> u64 {
        self.memory_status("VmHWM:")
    }

    /// The server's resident memory now (Linux `VmRSS`), in bytes.
    fn rss(&self) -> u64 {
        self.memory_status("VmRSS:")
    }

    fn memory_status(&self, key: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .map(|v| v.trim().parse::<u64>().unwrap() * 1024)
            .unwrap()
    }

    /// Checks that the process is alive and `/health` answers 200.
    async fn assert_up(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "the server process exited"
        );
        let response = request(self.addr, "GET /health HTTP/1.1\r\n", &[], b"").await;
        assert_eq!(response.status, 200, "{}", response.body);
    }
}

/// A POST of `body` with a `Content-Length`.
async fn post(addr: SocketAddr, query: &str, headers: &[&str], body: &[u8]) -> Response {
    let length = format!("Content-Length: {}", body.len());
    let mut all = vec![length.as_str()];
    all.extend_from_slice(headers);
    request(
        addr,
        &format!("POST /videos?{query} HTTP/1.1\r\n"),
        &all,
        body,
    )
    .await
}

/// Frames in the summary line.
fn frames(response: &Response) -> u64 {
    response
        .lines()
        .last()
        .and_then(|l| l["summary"]["frames"].as_u64())
        .unwrap_or_else(|| panic!("no summary in {response:?}"))
}

/// Nothing of FFmpeg's or hyper's internals in a client-facing text.
fn assert_no_internals(text: &str) {
    for internal in [
        "avformat_",
        "avcodec_",
        "AVERROR",
        "(code -",
        "hyper",
        "Failed to deserialize",
        "Invalid data found",
        "panicked",
    ] {
        assert!(!text.contains(internal), "{internal:?} leaked in {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_that_would_abort_or_hold_gigabytes_are_refused_and_the_server_stays_up() {
    let mut server = serve(&[]);
    let video = read_fixture("h264_live.ts"); // 96x64, 100 frames
                                              // L x B = 2^32 frames: once a SIGABRT of the whole process; now a 400 before anything is allocated.
    let response = post(
        server.addr,
        "sequence_length=65536&batch_size=65536",
        &[],
        &video,
    )
    .await;
    assert_eq!(response.status, 400, "{response:?}");
    let error = response.error();
    assert_eq!(error["code"], "over_memory_budget", "{error}");
    server.assert_up().await;
    // 65536-frame padded sequences of a small video (once 1.2 GB held per request): the video's real size
    // does not fit the upload's budget, so it fails with an error line naming it, and nothing is allocated.
    let hungry = "sequence_length=65536&batch_size=1&policy=pad";
    let responses =
        futures_util::future::join_all((0..4).map(|_| post(server.addr, hungry, &[], &video)))
            .await;
    for response in responses {
        assert_eq!(response.status, 200, "{response:?}");
        let error = response.error();
        assert_eq!(error["code"], "over_memory_budget", "{error}");
        assert!(
            error["message"].as_str().unwrap().contains("per upload"),
            "{error}"
        );
    }
    // The same video with sane settings is served in full.
    let response = post(server.addr, "sequence_length=8&batch_size=2", &[], &video).await;
    assert_eq!(frames(&response), 100, "{response:?}");
    server.assert_up().await;
    let peak = server.peak_rss();
    assert!(
        peak < 300 << 20,
        "the server's peak memory was {} MiB",
        peak >> 20
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_reserve_what_they_are_known_to_need_and_a_full_pool_fails_the_one_that_grows() {
    let mut server = serve(&[
        "--max-upload-memory",
        "16M",
        "--max-memory",
        "16M",
        "--min-upload-rate",
        "0",
    ]);
    // Two uploads that sent a few bytes, no stream header yet, hold almost nothing.
    let a = hold_upload(server.addr, "127.0.0.1", &[], 1, &[]).await;
    let b = hold_upload(server.addr, "127.0.0.2", &[], 2, &[]).await;
    let small = metric(server.addr, "framefeed_memory_reserved_bytes").await;
    assert!(small <= 2 * (66 << 10), "{small}");
    // An upload whose stream header gave its 96x64 frames holds what they need: about 11 MiB (its 8 MiB
    // body buffer, its index share, its batches and decoder frames), not its 16 MiB ceiling.
    let mut c = TcpStream::connect(server.addr).await.unwrap();
    let live = read_fixture("h264_live.ts");
    let head = format!(
        "POST /videos?sequence_length=4 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
        live.len()
    );
    c.write_all(head.as_bytes()).await.unwrap();
    c.write_all(&live).await.unwrap();
    c.write_all(b"\r\n").await.unwrap();
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("\"batch\"") {
        let mut buf = [0u8; 4096];
        let n = tokio::time::timeout(BOUND, c.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(
            n > 0,
            "the response ended early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    let reserved = metric(server.addr, "framefeed_memory_reserved_bytes").await;
    assert!(
        reserved > 8 << 20 && reserved < 12 << 20,
        "about 11 MiB for the one decoding and little for the two waiting: {reserved}"
    );
    // A fourth needs as much again, which the 16 MiB pool does not have: it fails alone, saying so.
    let video = read_fixture("h264.ts");
    let refused = post(server.addr, "sequence_length=4", &[], &video).await;
    assert_eq!(refused.status, 200, "{refused:?}");
    assert_eq!(refused.error()["code"], "server_busy", "{refused:?}");
    drop(c);
    wait_for_metric(server.addr, &[], "framefeed_streams_active", 2).await;
    // With the memory back, the same upload decodes.
    let served = post(server.addr, "sequence_length=4", &[], &video).await;
    assert_eq!(served.status, 200, "{served:?}");
    assert!(
        served.lines().iter().all(|l| l.get("error").is_none()),
        "{served:?}"
    );
    drop((a, b));
    // The reservations are given back.
    wait_for_metric(server.addr, &[], "framefeed_memory_reserved_bytes", 0).await;
    server.assert_up().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_connections_are_closed_after_the_header_timeout_while_health_answers() {
    let mut server = serve(&["--header-timeout", "1", "--max-connections", "40"]);
    let started = Instant::now();
    // 30 clients that open a connection and send part of a request head, and then nothing.
    let mut idle = Vec::new();
    for i in 0..30 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        if i % 2 == 0 {
            stream
                .write_all(b"POST /videos HTTP/1.1\r\nHost: x\r\n")
                .await
                .unwrap();
        }
        idle.push(stream);
    }
    server.assert_up().await;
    for mut stream in idle {
        let mut buf = [0u8; 256];
        // The server closes each (EOF, or a reset); a bounded wait, so a connection left open fails the test.
        let read = tokio::time::timeout(BOUND, stream.read(&mut buf))
            .await
            .expect("the server closed the half-open connection");
        if let Ok(n) = read {
            let text = String::from_utf8_lossy(&buf[..n]);
            assert!(n == 0 || text.starts_with("HTTP/1.1 408"), "{text}");
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "closed within the bound"
    );
    // A keep-alive connection idle between requests is closed too.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(BOUND, stream.read_to_end(&mut raw))
        .await
        .expect("the idle keep-alive connection was closed")
        .unwrap();
    assert!(String::from_utf8_lossy(&raw).starts_with("HTTP/1.1 200"));
    server.assert_up().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_cap_are_closed_at_once() {
    // The held connections stay open for the header timeout, long enough for the fifth to be refused even on
    // a loaded machine.
    let mut server = serve(&["--header-timeout", "6", "--max-connections", "4"]);
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(server.addr).await.unwrap());
    }
    // Let the server accept the four.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut extra = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(3), extra.read(&mut buf))
        .await
        .expect("the fifth connection is closed at once, long before the header timeout")
        .unwrap_or(0);
    assert_eq!(n, 0);
    // Once the held ones time out, the server takes connections again.
    drop(held);
    let deadline = Instant::now() + BOUND;
    loop {
        let stream = TcpStream::connect(server.addr).await.unwrap();
        let mut raw = Vec::new();
        let mut stream = stream;
        let _ = stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await;
        let _ = tokio::time::timeout(BOUND, stream.read_to_end(&mut raw)).await;
        let text = String::from_utf8_lossy(&raw);
        if text.starts_with("HTTP/1.1 200") {
            let refused = metric_value(&text, "framefeed_connections_refused_total");
            assert!(refused >= 1, "the fifth connection was counted: {text}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server never took connections again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.assert_up().await;
}

/// A connection from `from`.
async fn connect_from(addr: SocketAddr, from: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    socket.connect(addr).await.unwrap()
}

/// Whether `GET /health` on `connection` is answered 200 (the connection closed after it).
async fn health_answered(mut connection: TcpStream) -> bool {
    let _ = connection
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await;
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(BOUND, connection.read_to_end(&mut raw)).await;
    raw.starts_with(b"HTTP/1.1 200")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_take_every_connection() {
    // An address holding its cap of connections that never send their headers (as an unauthenticated
    // attacker would) has its next one closed at once; another address is served meanwhile, uploads
    // included, and the held ones are not refused service they already have.
    let mut server = serve(&[
        "--header-timeout",
        "6",
        "--max-connections",
        "40",
        "--max-connections-per-address",
        "4",
    ]);
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(connect_from(server.addr, "127.0.0.2").await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut extra = connect_from(server.addr, "127.0.0.2").await;
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(3), extra.read(&mut buf))
        .await
        .expect("the address's fifth connection is closed at once, long before the header timeout")
        .unwrap_or(0);
    assert_eq!(n, 0);
    assert_eq!(upload_status(server.addr, "127.0.0.3", &[]).await, 200);
    assert!(health_answered(connect_from(server.addr, "127.0.0.3").await).await);
    // A held connection still gets its answer.
    assert!(health_answered(held.remove(0)).await);
    // Its place given back (once the server has closed it), the address may connect again.
    let deadline = Instant::now() + BOUND;
    while !health_answered(connect_from(server.addr, "127.0.0.2").await).await {
        assert!(
            Instant::now() < deadline,
            "the address never got its place back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(held);
    server.assert_up().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drip_fed_upload_fails_by_the_rate_rule_while_a_normal_one_completes() {
    let mut server = serve(&["--min-upload-rate", "16K", "--upload-rate-window", "2"]);
    let video = read_fixture("h264_live.ts");
    // The drip: a chunked upload sending 100 bytes every 300 ms (333 B/s), from one client address.
    let drip = {
        let addr = server.addr;
        let video = video.clone();
        tokio::spawn(async move {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
            let mut stream = socket.connect(addr).await.unwrap();
            stream
                .write_all(
                    b"POST /videos?sequence_length=4 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
                )
                .await
                .unwrap();
            let started = Instant::now();
            let mut raw = Vec::new();
            for piece in video.chunks(100) {
                let chunk = [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
                if stream.write_all(&chunk).await.is_err() {
                    break;
                }
                // Stop dripping once the server has answered and closed.
                let mut buf = [0u8; 4096];
                match tokio::time::timeout(Duration::from_millis(300), stream.read(&mut buf)).await
                {
                    Ok(Ok(0)) | Ok(Err(_)) => break,
                    Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
                    Err(_) => {}
                }
                assert!(started.elapsed() < BOUND, "the drip was never cut");
            }
            let _ =
                tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut raw)).await;
            (parse_response(&raw), started.elapsed())
        })
    };
    // Meanwhile a normal upload from another address completes, and so does one paced like a live stream
    // (4 KB every 100 ms: 41 KB/s, a low-bitrate camera), which the rule must never trip.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let paced = common::http_client::upload(
        server.addr,
        "127.0.0.3",
        "sequence_length=4",
        common::http_client::chunks_of(&video, 4100),
        Duration::from_millis(100),
        None,
    )
    .await;
    let normal = post(server.addr, "sequence_length=4", &[], &video).await;
    assert_eq!(frames(&normal), 100, "{normal:?}");
    let (status, lines) = tokio::time::timeout(BOUND, paced.response)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, 200);
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["frames"], 100, "{lines:?}");
    assert_eq!(summary["errors"], serde_json::json!([]), "{lines:?}");
    let (dripped, took) = drip.await.unwrap();
    let error = dripped.error();
    assert_eq!(error["code"], "too_slow", "{error}");
    assert!(
        took >= Duration::from_secs(2),
        "not before the window: {took:?}"
    );
    server.assert_up().await;
}

/// Opens a chunked upload from `from` with `headers`, sends the first KB of a video, and keeps it open (the
/// returned stream); waits until the server counts `active` uploads (seen with `metrics_headers`).
async fn hold_upload(
    addr: SocketAddr,
    from: &str,
    headers: &[&str],
    active: u64,
    metrics_headers: &[&str],
) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let mut head =
        "POST /videos?sequence_length=4 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            .to_owned();
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let video = read_fixture("h264_live.ts");
    let chunk = [b"3e8\r\n", &video[..1000], b"\r\n"].concat();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&chunk).await.unwrap();
    wait_for_metric(addr, metrics_headers, "framefeed_streams_active", active).await;
    stream
}

/// The status of an upload of a small video from `from` with `headers`.
async fn upload_status(addr: SocketAddr, from: &str, headers: &[&str]) -> u16 {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let stream = socket.connect(addr).await.unwrap();
    let video = read_fixture("h264.ts");
    let length = format!("Content-Length: {}", video.len());
    let mut all = vec![length.as_str()];
    all.extend_from_slice(headers);
    exchange(
        stream,
        "POST /videos?sequence_length=4 HTTP/1.1\r\n",
        &all,
        &video,
    )
    .await
    .status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_required_and_the_per_client_limit_counts_by_name() {
    let dir = std::env::temp_dir().join(format!("framefeed-tokens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tokens = dir.join("tokens");
    std::fs::write(
        &tokens,
        format!("# test\nalice:{TOKEN}\nbob:another-token-9876543210\n"),
    )
    .unwrap();
    let mut server = serve(&[
        "--auth-tokens",
        tokens.to_str().unwrap(),
        "--max-streams-per-client",
        "1",
    ]);
    let video = read_fixture("h264.ts");
    let denied = post(server.addr, "sequence_length=4", &[], &video).await;
    assert_eq!(denied.status, 401, "{denied:?}");
    assert_eq!(denied.error()["code"], "unauthorized");
    assert!(denied.header("www-authenticate").is_some());
    let wrong = post(
        server.addr,
        "sequence_length=4",
        &["Authorization: Bearer not-the-token-0000000"],
        &video,
    )
    .await;
    assert_eq!(wrong.status, 401);
    let metrics = request(server.addr, "GET /metrics HTTP/1.1\r\n", &[], b"").await;
    assert_eq!(metrics.status, 401, "/metrics needs a token too");
    let bearer = format!("Authorization: Bearer {TOKEN}");
    let ok = post(server.addr, "sequence_length=4", &[&bearer], &video).await;
    assert_eq!(ok.status, 200, "{ok:?}");
    assert_eq!(frames(&ok), 23);
    let metrics = request(server.addr, "GET /metrics HTTP/1.1\r\n", &[&bearer], b"").await;
    assert_eq!(metrics.status, 200);
    server.assert_up().await; // /health stays open

    // The per-client limit counts by token name, whatever the address.
    let held = hold_upload(server.addr, "127.0.0.1", &[&bearer], 1, &[&bearer]).await;
    assert_eq!(
        upload_status(server.addr, "127.0.0.2", &[&bearer]).await,
        429
    );
    let bob = "Authorization: Bearer another-token-9876543210";
    assert_eq!(upload_status(server.addr, "127.0.0.1", &[bob]).await, 200);
    drop(held);
    std::fs::remove_dir_all(&dir).unwrap();

    // Without tokens, a non-loopback address is refused unless asked for explicitly.
    let output = Command::new(env!("CARGO_BIN_EXE_framefeed"))
        .args(["serve", "--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--auth-tokens"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_addresses_count_only_from_a_trusted_proxy() {
    let mut server = serve(&[
        "--trusted-proxy",
        "127.0.0.1",
        "--max-streams-per-client",
        "1",
    ]);
    // Through the trusted proxy (127.0.0.1), two users are two clients.
    let held = hold_upload(
        server.addr,
        "127.0.0.1",
        &["X-Forwarded-For: 192.0.2.1"],
        1,
        &[],
    )
    .await;
    assert_eq!(
        upload_status(server.addr, "127.0.0.1", &["X-Forwarded-For: 192.0.2.2"]).await,
        200
    );
    assert_eq!(
        upload_status(
            server.addr,
            "127.0.0.1",
            &["X-Forwarded-For: 10.9.9.9, 192.0.2.1"]
        )
        .await,
        429,
        "the address the proxy added (the last) is the client"
    );
    // From an address that is not a trusted proxy, X-Forwarded-For is ignored: the peer is the client.
    let held2 = hold_upload(
        server.addr,
        "127.0.0.2",
        &["X-Forwarded-For: 192.0.2.3"],
        2,
        &[],
    )
    .await;
    assert_eq!(
        upload_status(server.addr, "127.0.0.2", &["X-Forwarded-For: 192.0.2.4"]).await,
        429
    );
    drop((held, held2));
    server.assert_up().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_length_with_transfer_encoding_is_refused() {
    let mut server = serve(&[]);
    for headers in [
        ["Content-Length: 5", "Transfer-Encoding: chunked"],
        ["Transfer-Encoding: chunked", "Content-Length: 5"],
    ] {
        let response = request(
            server.addr,
            "POST /videos?sequence_length=4 HTTP/1.1\r\n",
            &headers,
            b"0\r\n\r\n",
        )
        .await;
        assert_eq!(response.status, 400, "{response:?}");
        assert_eq!(response.error()["code"], "bad_request");
    }
    // The same request with one framing header is taken (an empty chunked body: not a video).
    let response = request(
        server.addr,
        "POST /videos?sequence_length=4 HTTP/1.1\r\n",
        &["Transfer-Encoding: chunked"],
        b"0\r\n\r\n",
    )
    .await;
    assert_eq!(response.status, 200, "{response:?}");
    server.assert_up().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_lines_carry_a_code_and_a_request_id_and_no_internals() {
    let mut server = serve(&[]);
    let mut checked = 0;
    let cases: Vec<(String, Vec<u8>, &str)> = vec![
        (
            "sequence_length=4".into(),
            b"this is not a video at all".to_vec(),
            "not_a_video",
        ),
        // A body cut short fails only with `strict=1` (by default its frames are delivered, the end reported).
        (
            "sequence_length=4&strict=1".into(),
            read_fixture("h264.mp4")[..3000].to_vec(),
            "corrupt",
        ),
        ("sequence_length=x".into(), Vec::new(), "bad_request"),
        ("bogus=1".into(), Vec::new(), "bad_request"),
        ("sequence_length=%zz&&=".into(), Vec::new(), "bad_request"),
    ];
    for (query, body, code) in cases {
        let response = post(server.addr, &query, &[], &body).await;
        let error = response.error();
        assert_eq!(error["code"], code, "{query}: {error}");
        let id = error["request_id"].as_str().unwrap();
        assert_eq!(response.header("x-request-id"), Some(id), "{response:?}");
        assert_no_internals(&response.body);
        checked += 1;
    }
    // A broken chunked body: hyper's parse error stays in the server's log.
    let response = request(
        server.addr,
        "POST /videos?sequence_length=4 HTTP/1.1\r\n",
        &["Transfer-Encoding: chunked"],
        b"zz\r\nnot hex\r\n",
    )
    .await;
    if response.status == 200 {
        assert_eq!(response.error()["code"], "body_unreadable");
    }
    assert_no_internals(&response.body);
    // Unknown routes.
    let response = request(server.addr, "GET /admin HTTP/1.1\r\n", &[], b"").await;
    assert_eq!(response.status, 404);
    assert_eq!(response.error()["code"], "not_found");
    assert_eq!(checked, 5);
    server.assert_up().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_round_trip_with_a_certificate_the_test_makes() {
    let dir = std::env::temp_dir().join(format!("framefeed-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let (cert_pem, key_pem) = (cert.cert.pem(), cert.key_pair.serialize_pem());
    std::fs::write(dir.join("cert.pem"), &cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &key_pem).unwrap();
    let server = serve(&[
        "--tls-cert",
        dir.join("cert.pem").to_str().unwrap(),
        "--tls-key",
        dir.join("key.pem").to_str().unwrap(),
    ]);
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    roots.add(cert.cert.der().clone()).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let connect = || async {
        let tcp = TcpStream::connect(server.addr).await.unwrap();
        connector.connect(name.clone(), tcp).await.unwrap()
    };
    let health = exchange(connect().await, "GET /health HTTP/1.1\r\n", &[], b"").await;
    assert_eq!(health.status, 200, "{health:?}");
    let video = read_fixture("h264.ts");
    let length = format!("Content-Length: {}", video.len());
    let upload = exchange(
        connect().await,
        "POST /videos?sequence_length=4 HTTP/1.1\r\n",
        &[&length],
        &video,
    )
    .await;
    assert_eq!(frames(&upload), 23, "{upload:?}");
    // Plain HTTP to the TLS port gets no HTTP answer.
    let mut plain = TcpStream::connect(server.addr).await.unwrap();
    plain
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(BOUND, plain.read_to_end(&mut raw)).await;
    assert!(!String::from_utf8_lossy(&raw).contains("200 OK"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moov_at_end_uploads_are_buffered_within_the_budget_or_refused() {
    let video = read_fixture("h264_moov_at_end.mp4");
    let mut buffering = serve(&[]);
    let response = post(buffering.addr, "sequence_length=4", &[], &video).await;
    assert_eq!(frames(&response), 23, "{response:?}");
    buffering.assert_up().await;
    let mut strict = serve(&["--moov-at-end", "fail"]);
    let response = post(strict.addr, "sequence_length=4", &[], &video).await;
    assert_eq!(response.error()["code"], "moov_at_end", "{response:?}");
    strict.assert_up().await;
}

/// MP4 uploads whose boxes claim what makes the demuxer take gigabytes (a live faststart `stsz`, a fragmented
/// `trun`, and every other class of `tests/container_claims.rs`) are streamed into the gate, which checks each
/// index box before the demuxer reads it: each ends with a `not_a_video` error line, the server stays up and
/// small (a 10 KB forged upload once took it from 34 to 307 MB), and an honest fragmented upload still decodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_with_forged_mp4_claims_fail_before_the_demuxer_reads_them() {
    let mut server = serve(&[]);
    for forged in common::mp4_forge::forgeries().iter().filter(|f| f.live) {
        let response = post(server.addr, "sequence_length=8", &[], &forged.data).await;
        assert_eq!(response.status, 200, "{}: {response:?}", forged.name);
        let error = response.error();
        assert_eq!(error["code"], "not_a_video", "{}: {error}", forged.name);
        assert_no_internals(&response.body);
    }
    server.assert_up().await;
    let response = post(
        server.addr,
        "sequence_length=8",
        &[],
        &read_fixture("h264_fragmented.mp4"),
    )
    .await;
    assert_eq!(frames(&response), 23, "{response:?}");
    let peak = server.peak_rss();
    assert!(
        peak < 300 << 20,
        "the server's peak memory was {} MiB",
        peak >> 20
    );
}

/// The first 4 KiB of one 8192x8192 frame in `codec` (`libx264` or `libx265`), as a raw elementary stream:
/// parameter sets that announce 8K frames and the start of the first picture.
fn header_of_an_8k_stream(dir: &std::path::Path, codec: &str) -> Vec<u8> {
    let path = dir.join(format!("8k-{codec}.es"));
    let format = if codec == "libx265" { "hevc" } else { "h264" };
    common::ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=8192x8192:rate=25",
        "-frames:v",
        "1",
        "-c:v",
        codec,
        "-preset",
        "ultrafast",
        "-x265-params",
        "log-level=error",
        "-f",
        format,
        path.to_str().unwrap(),
    ]);
    let mut data = std::fs::read(&path).unwrap();
    data.truncate(4096);
    data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_announcing_frames_over_the_budget_fail_before_the_decoder_allocates_them() {
    if common::skip_without_ffmpeg("the 8K header test") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("framefeed-8k-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let streams = [
        header_of_an_8k_stream(&dir, "libx264"),
        header_of_an_8k_stream(&dir, "libx265"),
    ];
    let mut server = serve(&["--max-memory", "1G"]);
    let idle = server.peak_rss();
    // Eight at once from three addresses, twice: before the fix each made FFmpeg allocate 180-330 MB of 8K
    // frames (2.5 GB at the peak against a 1 GB pool) before its first batch showed the size.
    for round in 0..2 {
        let uploads = (0..8).map(|i| {
            let body = streams[i % 2].clone();
            let addr = server.addr;
            tokio::spawn(async move {
                let socket = tokio::net::TcpSocket::new_v4().unwrap();
                socket
                    .bind(format!("127.0.0.{}:0", 2 + i % 3).parse().unwrap())
                    .unwrap();
                let stream = socket.connect(addr).await.unwrap();
                let length = format!("Content-Length: {}", body.len());
                exchange(
                    stream,
                    "POST /videos?sequence_length=8&batch_size=2 HTTP/1.1\r\n",
                    &[length.as_str()],
                    &body,
                )
                .await
            })
        });
        for upload in uploads.collect::<Vec<_>>() {
            let response = upload.await.unwrap();
            assert_eq!(response.status, 200, "{response:?}");
            let error = response.error();
            assert_eq!(
                error["code"], "over_memory_budget",
                "round {round}: {error}"
            );
            let message = error["message"].as_str().unwrap();
            assert!(
                message.contains("8192x8192") && message.contains("lower sequence_length"),
                "{message}"
            );
            assert_no_internals(message);
        }
    }
    // The frame size is read from the parameter sets before any decoder sees them, so neither 8K frames nor
    // a decoder's 8K tables (15-20 MB a stream, 170 MiB for these 8) are ever allocated.
    let peak = server.peak_rss();
    assert!(
        peak < idle + (100 << 20),
        "peak RSS {} MiB, idle {} MiB",
        peak >> 20,
        idle >> 20
    );
    // Once idle, the server gives what FFmpeg freed back to the system (it stayed at 170-290 MiB before).
    let deadline = Instant::now() + BOUND;
    while server.rss() > idle + (100 << 20) {
        assert!(
            Instant::now() < deadline,
            "RSS stayed at {} MiB after the burst (idle {} MiB)",
            server.rss() >> 20,
            idle >> 20
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // An honest upload is served as before.
    let served = post(
        server.addr,
        "sequence_length=4",
        &[],
        &read_fixture("h264.ts"),
    )
    .await;
    assert!(frames(&served) > 0, "{served:?}");
    server.assert_up().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Opens a chunked upload of `query` from `from` and sends `head` as its first chunk; the stream, held open.
async fn open_upload(addr: SocketAddr, from: &str, query: &str, head: &[u8]) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let start = format!(
        "POST /videos?{query} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
        head.len()
    );
    stream.write_all(start.as_bytes()).await.unwrap();
    stream.write_all(head).await.unwrap();
    stream.write_all(b"\r\n").await.unwrap();
    stream
}

/// What a held upload's response says within `wait` (it may still be open then).
async fn response_so_far(stream: &mut TcpStream, wait: Duration) -> String {
    let mut seen = Vec::new();
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; 4096];
    while let Ok(Ok(n)) = tokio::time::timeout_at(deadline.into(), stream.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_slot_held_the_slowest_upload_is_shed_for_a_newcomer() {
    let mut server = serve(&["--max-streams", "4", "--max-streams-per-client", "2"]);
    let video = read_fixture("h264_live.ts");
    // Three uploads that sent a header and then nothing (dripping, as far as the rate rule can yet tell)...
    let mut drips = Vec::new();
    for from in ["127.0.0.2", "127.0.0.2", "127.0.0.3"] {
        drips.push(open_upload(server.addr, from, "sequence_length=4", &video[..1000]).await);
    }
    // ...and a camera sending in real time, 4 KB/s.
    let mut camera =
        open_upload(server.addr, "127.0.0.3", "sequence_length=4", &video[..400]).await;
    let paced = tokio::spawn(async move {
        for piece in video[400..].chunks(400) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let chunk = [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
            if camera.write_all(&chunk).await.is_err() {
                break;
            }
        }
        camera
    });
    wait_for_metric(server.addr, &[], "framefeed_streams_active", 4).await;
    // Every slot is taken: before, a newcomer got 503 `server_busy` for as long as the drips stayed. Once
    // their rates are known, it is served, and one drip is shed for it, saying why.
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    let served = upload_status(server.addr, "127.0.0.4", &[]).await;
    assert_eq!(served, 200);
    let mut shed = 0;
    for drip in &mut drips {
        let text = response_so_far(drip, Duration::from_millis(500)).await;
        if text.contains("\"code\":\"shed\"") {
            assert!(text.contains("fewest bytes a second"), "{text}");
            assert_no_internals(&text);
            shed += 1;
        }
    }
    assert_eq!(shed, 1, "one drip shed for the one newcomer");
    assert_eq!(metric(server.addr, "framefeed_uploads_shed_total").await, 1);
    // The camera was not: it is still sending.
    assert!(!paced.is_finished(), "the camera's upload was cut");
    paced.abort();
    drop(drips);
    server.assert_up().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_pool_spent_the_upload_holding_the_most_memory_per_byte_a_second_is_shed() {
    let mut server = serve(&[
        "--max-memory",
        "80M",
        "--max-upload-memory",
        "40M",
        "--max-client-memory",
        "40M",
    ]);
    let video = read_fixture("h264_live.ts");
    // Two uploads whose headers gave 96x64 frames at 64 x 8 frames a batch: about 37 MB reserved each, the
    // pool nearly spent, and then nothing more sent.
    let mut hogs = Vec::new();
    for from in ["127.0.0.2", "127.0.0.3"] {
        let query = "sequence_length=64&batch_size=8";
        hogs.push(open_upload(server.addr, from, query, &video[..40_000]).await);
    }
    let deadline = Instant::now() + BOUND;
    while metric(server.addr, "framefeed_memory_reserved_bytes").await < 70 << 20 {
        assert!(
            Instant::now() < deadline,
            "the hogs never reserved their frames"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    // A newcomer whose frames need about 9 MB: before, it failed with `server_busy` and 0 frames.
    let served = post(
        server.addr,
        "sequence_length=4",
        &[],
        &read_fixture("h264.ts"),
    )
    .await;
    assert!(
        served.lines().iter().all(|l| l.get("error").is_none()),
        "{served:?}"
    );
    assert!(frames(&served) > 0, "{served:?}");
    let mut shed = 0;
    for hog in &mut hogs {
        let text = response_so_far(hog, Duration::from_millis(500)).await;
        if text.contains("\"code\":\"shed\"") {
            assert!(text.contains("the most memory"), "{text}");
            shed += 1;
        }
    }
    assert_eq!(shed, 1, "one hog covers the newcomer's need");
    drop(hogs);
    server.assert_up().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_stops_reading_is_cut_after_the_send_timeout() {
    if common::skip_without_ffmpeg("the send-timeout test") {
        return;
    }
    // 3,000 frames at one a batch: about a megabyte of batch lines, more than the sockets' buffers hold.
    let dir = std::env::temp_dir().join(format!("framefeed-reader-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("long.ts");
    common::ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=64x48:rate=100",
        "-frames:v",
        "3000",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-f",
        "mpegts",
        path.to_str().unwrap(),
    ]);
    let video = std::fs::read(&path).unwrap();
    let mut server = serve(&["--send-timeout", "2"]);
    // A client that sends the whole upload and never reads its response, with the smallest receive buffer.
    // The timeout is the connection's, so a `/mux` or stream reader that stops reading is cut the same way.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(1).unwrap();
    let mut stream = socket.connect(server.addr).await.unwrap();
    let head = format!(
        "POST /videos?sequence_length=1 HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        video.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&video).await.unwrap();
    wait_for_metric(server.addr, &[], "framefeed_streams_active", 1).await;
    // Before the send timeout, such a reader held its upload (its slot and memory) for as long as it stayed.
    let started = Instant::now();
    wait_for_metric(server.addr, &[], "framefeed_streams_active", 0).await;
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "cut before the timeout: {:?}",
        started.elapsed()
    );
    drop(stream);
    server.assert_up().await;
    let _ = std::fs::remove_dir_all(&dir);
}
