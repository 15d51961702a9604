//! `framefeed serve` with its **default settings** against the cameras it exists for and the clients it must
//! contain (the real binary, on loopback): a 16 kbit/s camera paced in real time for 40 s, a camera whose
//! network pauses for 25 s (under the 30 s stall timeout), header-only uploads from three addresses beside an
//! honest one, and bytes dripped to hold slots. Every wait is bounded.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::read_fixture;
use common::serve::{metric, parse_response, serve, wait_for_metric, Response, BOUND};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The video every camera here sends: 2.3 s of 96x64 H.264 in MPEG-TS (81,968 bytes).
const VIDEO: &str = "h264_live.ts";

/// A connection from the loopback address `from`.
async fn connect(addr: SocketAddr, from: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    socket.connect(addr).await.unwrap()
}

/// Uploads `video` from `from` as a chunked body, `piece` bytes every `every`, with a `pause` after `pause_at`
/// bytes, and reads the whole response.
async fn paced_upload(
    addr: SocketAddr,
    from: &str,
    video: &[u8],
    piece: usize,
    every: Duration,
    pause: Option<(usize, Duration)>,
) -> Response {
    let mut stream = connect(addr, from).await;
    stream
        .write_all(b"POST /videos?sequence_length=1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut sent = 0;
    let start = tokio::time::Instant::now();
    for (i, part) in video.chunks(piece).enumerate() {
        if let Some((at, pause)) = pause {
            if sent < at && sent + part.len() >= at {
                tokio::time::sleep(pause).await;
            }
        }
        let chunk = [format!("{:x}\r\n", part.len()).as_bytes(), part, b"\r\n"].concat();
        stream.write_all(&chunk).await.unwrap();
        sent += part.len();
        // Real-time pace: each piece leaves at its own time, whatever the writes cost.
        tokio::time::sleep_until(start + every * (i as u32 + 1)).await;
    }
    stream.write_all(b"0\r\n\r\n").await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(BOUND, stream.read_to_end(&mut raw))
        .await
        .expect("the response ends")
        .unwrap();
    parse_response(&raw)
}

/// Frames in a response's batch lines, and its errors.
fn frames_and_errors(response: &Response) -> (u64, Vec<serde_json::Value>) {
    let lines = response.lines();
    let summary = &lines.last().expect("a summary")["summary"];
    (
        summary["frames"].as_u64().unwrap(),
        summary["errors"].as_array().unwrap().clone(),
    )
}

/// The frames of the video uploaded at once.
async fn all_frames(addr: SocketAddr) -> u64 {
    let video = read_fixture(VIDEO);
    let whole = paced_upload(addr, "127.0.0.9", &video, video.len(), Duration::ZERO, None).await;
    let (frames, errors) = frames_and_errors(&whole);
    assert!(errors.is_empty() && frames > 0, "{whole:?}");
    frames
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_16_kbit_camera_paced_in_real_time_for_40_s_is_never_cut() {
    let server = serve(&[]);
    let expected = all_frames(server.addr).await;
    // 2,000 bytes a second (16 kbit/s), 200 bytes every 100 ms: 41 s for the whole video.
    let video = read_fixture(VIDEO);
    let started = Instant::now();
    let response = paced_upload(
        server.addr,
        "127.0.0.2",
        &video,
        200,
        Duration::from_millis(100),
        None,
    )
    .await;
    assert!(
        started.elapsed() >= Duration::from_secs(30),
        "paced for 30 s at least"
    );
    assert_eq!(response.status, 200);
    let (frames, errors) = frames_and_errors(&response);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(frames, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_camera_pausing_under_the_stall_timeout_is_never_cut() {
    let server = serve(&[]);
    let expected = all_frames(server.addr).await;
    // 1 Mbit/s (12.5 KB every 100 ms), and 25 s of silence half-way (the stall timeout is 30 s).
    let video = read_fixture(VIDEO);
    let response = paced_upload(
        server.addr,
        "127.0.0.3",
        &video,
        12_500,
        Duration::from_millis(100),
        Some((video.len() / 2, Duration::from_secs(25))),
    )
    .await;
    assert_eq!(response.status, 200);
    let (frames, errors) = frames_and_errors(&response);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(frames, expected);
}

/// Opens an upload from `from` that sends its head and `bytes` of the video, and then holds the connection.
async fn held_upload(addr: SocketAddr, from: &str, bytes: usize) -> TcpStream {
    let mut stream = connect(addr, from).await;
    stream
        .write_all(b"POST /videos HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    if bytes > 0 {
        let video = read_fixture(VIDEO);
        let chunk = [
            format!("{bytes:x}\r\n").as_bytes(),
            &video[..bytes],
            b"\r\n",
        ]
        .concat();
        stream.write_all(&chunk).await.unwrap();
    }
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_only_uploads_from_six_addresses_leave_room_for_an_honest_one() {
    let server = serve(&[]);
    let addr = server.addr;
    let expected = all_frames(addr).await;
    let mut held = Vec::new();
    // Six addresses at their 4 slots each.
    for from in [
        "127.0.0.2",
        "127.0.0.3",
        "127.0.0.4",
        "127.0.0.5",
        "127.0.0.6",
        "127.0.0.7",
    ] {
        for _ in 0..4 {
            held.push(held_upload(addr, from, 0).await);
        }
    }
    wait_for_metric(addr, &[], "framefeed_streams_active", 24).await;
    // Contained: each holds what its connection buffer may, not the 512 MiB an upload may grow to...
    let reserved = metric(addr, "framefeed_memory_reserved_bytes").await;
    assert!(reserved <= 24 * (64 << 10), "{reserved}");
    // ... and an address holds at most its 4 slots.
    let ninth = {
        let mut stream = connect(addr, "127.0.0.2").await;
        stream
            .write_all(b"POST /videos HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut raw = Vec::new();
        tokio::time::timeout(BOUND, stream.read_to_end(&mut raw))
            .await
            .unwrap()
            .unwrap();
        parse_response(&raw)
    };
    assert_eq!(ninth.status, 429, "{ninth:?}");
    // An honest upload from another address gets 200 and all its frames.
    let video = read_fixture(VIDEO);
    let honest = paced_upload(
        addr,
        "127.0.0.8",
        &video,
        8192,
        Duration::from_millis(10),
        None,
    )
    .await;
    assert_eq!(honest.status, 200, "{honest:?}");
    let (frames, errors) = frames_and_errors(&honest);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(frames, expected);
    drop(held);
    wait_for_metric(addr, &[], "framefeed_memory_reserved_bytes", 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_dripped_to_hold_slots_hold_little_and_are_cut_by_the_rate_rule() {
    let server = serve(&[]);
    let addr = server.addr;
    let video = read_fixture(VIDEO);
    // Eight uploads from two addresses (4 each, their limit), each dripping one byte of a real video every
    // 500 ms (2 B/s).
    let mut drips = Vec::new();
    for i in 0..8 {
        let video = video.clone();
        let from = if i < 4 { "127.0.0.6" } else { "127.0.0.8" };
        let mut stream = held_upload(addr, from, 0).await;
        drips.push(tokio::spawn(async move {
            let started = Instant::now();
            for byte in video.iter().take(400) {
                let chunk = [b"1\r\n".as_slice(), &[*byte], b"\r\n"].concat();
                if stream.write_all(&chunk).await.is_err() {
                    break;
                }
                let mut buf = [0u8; 4096];
                match tokio::time::timeout(Duration::from_millis(500), stream.read(&mut buf)).await
                {
                    Ok(Ok(0)) | Ok(Err(_)) => break,
                    Ok(Ok(n)) if String::from_utf8_lossy(&buf[..n]).contains("too_slow") => {
                        return Some(started.elapsed())
                    }
                    _ => {}
                }
            }
            None
        }));
    }
    wait_for_metric(addr, &[], "framefeed_streams_active", 8).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let reserved = metric(addr, "framefeed_memory_reserved_bytes").await;
    assert!(
        reserved <= 8 * (66 << 10),
        "the drips hold almost nothing: {reserved}"
    );
    // Meanwhile an honest upload from another address decodes.
    let honest = paced_upload(
        addr,
        "127.0.0.7",
        &video,
        8192,
        Duration::from_millis(10),
        None,
    )
    .await;
    assert_eq!(honest.status, 200);
    assert!(frames_and_errors(&honest).1.is_empty(), "{honest:?}");
    // The rule (500 B/s over 60 s) cuts each drip after its minute.
    for drip in drips {
        let cut = drip.await.unwrap().expect("the drip was cut with too_slow");
        assert!(
            cut >= Duration::from_secs(55) && cut < Duration::from_secs(90),
            "{cut:?}"
        );
    }
    wait_for_metric(addr, &[], "framefeed_streams_active", 0).await;
}
