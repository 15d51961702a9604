//! The service's output types (issue 62): `POST /videos` and `POST /streams` take `dtype` and `tonemap` as
//! every other API does, `md5=true` puts each frame's MD5 on the lines (so a client can check the pixels it
//! never receives), the lines name the type, and the memory budget counts the type's bytes: an upload whose
//! frames fit in `uint8` but not in `float32` fails with `over_memory_budget` before its frames exist.

mod common;

use std::net::SocketAddr;
use std::path::Path;

use common::serve::{get, metric, request, serve, until, Response, BOUND};
use common::{ffmpeg_md5s_as, fixture, live_ts_clip, md5_hex, skip_without_ffmpeg};
use framefeed::{Config, Encoded, Layout, Transforms, VideoInput};
use serde_json::Value;

/// `POST /videos?QUERY` with the whole file at `path` as its body.
async fn upload(addr: SocketAddr, query: &str, path: &Path) -> Response {
    let body = std::fs::read(path).unwrap();
    let start = format!("POST /videos?{query} HTTP/1.1\r\n");
    let length = format!("Content-Length: {}", body.len());
    request(addr, &start, &[&length], &body).await
}

/// The batch lines of a 200 response (its summary must report no error).
fn batch_lines(response: &Response) -> Vec<Value> {
    assert_eq!(response.status, 200, "{}", response.body);
    let mut lines = response.lines();
    let summary = lines.pop().expect("a summary line");
    assert_eq!(
        summary["summary"]["errors"],
        serde_json::json!([]),
        "{summary}"
    );
    lines
}

/// Every frame's MD5 on `lines`, in order.
fn md5s(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .flat_map(|l| l["sequences"].as_array().unwrap().iter())
        .flat_map(|s| {
            let sums = s["md5"].as_array().unwrap_or_else(|| panic!("no md5: {s}"));
            sums.iter().map(|m| m.as_str().unwrap().to_owned())
        })
        .collect()
}

/// The MD5 of each frame the library gives for `path` under `transforms` (FHWC, so each frame's bytes are
/// contiguous).
fn library_md5s(path: &Path, transforms: Transforms) -> Vec<String> {
    let input = VideoInput::new(Config::new(4, 1).transforms(transforms)).unwrap();
    input.feed(Encoded::file(path).unwrap()).unwrap();
    input.close();
    let mut sums = Vec::new();
    for batch in input.iter() {
        let batch = batch.unwrap();
        assert_eq!(batch.layout(), Layout::Fhwc);
        for seq in batch.sequences() {
            sums.extend(seq.frames().map(|f| md5_hex(f.data())));
        }
    }
    sums
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uint16_uploads_hash_the_clis_rgb48le_frames() {
    if skip_without_ffmpeg("the service's uint16 test") {
        return;
    }
    let server = serve(&[]);
    for name in ["hdr_pq_hevc10.mp4", "hdr_hlg_vp9_10_odd.webm"] {
        let path = fixture(name);
        let query = "sequence_length=3&batch_size=2&dtype=uint16&md5=true";
        let lines = batch_lines(&upload(server.addr, query, &path).await);
        assert!(lines.iter().all(|l| l["dtype"] == "uint16"), "{lines:?}");
        let color = &lines[0]["sequences"][0]["color"];
        assert_eq!(color["bit_depth"], 10, "{name}: {color}");
        assert_eq!(
            md5s(&lines),
            ffmpeg_md5s_as(&path, &[], None, "rgb48le"),
            "{name}"
        );
    }
    // Without `md5`, no sums; the default type is named too.
    let lines = batch_lines(&upload(server.addr, "", &fixture("h264.mp4")).await);
    assert_eq!(lines[0]["dtype"], "uint8");
    assert!(lines[0]["sequences"][0].get("md5").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tone_mapped_uploads_are_the_librarys_tone_mapped_frames() {
    if skip_without_ffmpeg("the service's tone mapping test") {
        return;
    }
    let server = serve(&[]);
    let path = fixture("tonemap_pq_hevc10.mp4");
    for spec in ["hable", "mobius:param=0.5"] {
        let query = format!("tonemap={spec}&md5=1");
        let served = md5s(&batch_lines(&upload(server.addr, &query, &path).await));
        let tonemap = spec.parse().unwrap();
        assert_eq!(
            served,
            library_md5s(&path, Transforms::new().tonemap(tonemap)),
            "{spec}"
        );
        assert_ne!(served, library_md5s(&path, Transforms::new()), "{spec}");
    }
    // A value out of range is a 400 naming what is allowed, before anything is decoded.
    for (query, names) in [
        ("tonemap=hable:param=0.5", "hable takes no param"),
        ("tonemap=filmic", "allowed: 'hable'"),
        ("dtype=int8", "allowed: 'uint8'"),
        ("md5=yes", "md5 must be 'true' or 'false'"),
    ] {
        let response = upload(server.addr, query, &path).await;
        assert_eq!(response.status, 400, "{query}: {}", response.body);
        let error = response.error();
        assert_eq!(error["code"], "bad_request");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(names), "{query}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_uploads_consumers_get_its_type_and_tone_mapping() {
    if skip_without_ffmpeg("the service's stream output type test") {
        return;
    }
    let server = serve(&[]);
    let addr = server.addr;
    let watcher = tokio::spawn(async move { get(addr, "/streams/hdr/batches?wait=30").await });
    until("a waiting consumer", || async {
        metric(addr, "framefeed_stream_consumers_waiting").await == 1
    })
    .await;
    let path = fixture("tonemap_hlg_hevc10.mp4");
    let query = "detach=true&id=hdr&sequence_length=4&dtype=float32_unit&tonemap=reinhard&md5=true";
    let created = upload(addr, query, &path).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let watched = tokio::time::timeout(BOUND, watcher).await.unwrap().unwrap();
    let lines = batch_lines(&watched);
    assert!(lines.iter().all(|l| l["dtype"] == "float32_unit"));
    let transforms = Transforms::new()
        .dtype(framefeed::DType::F32Unit)
        .tonemap("reinhard".parse().unwrap());
    assert_eq!(md5s(&lines), library_md5s(&path, transforms));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wider_types_are_counted_in_the_memory_budget() {
    if skip_without_ffmpeg("the service's output type budget test") {
        return;
    }
    // 256 frames a batch of 320x240: in uint8 (3 bytes a pixel) the upload's three batches in flight take
    // 177 MiB and fit its 512 MiB; in float32 (12 bytes a pixel) they would take 708 MiB. The float32 upload
    // fails once its header gives the frame size, before a frame of it is decoded; the uint8 one is served.
    let server = serve(&["--max-upload-memory", "512M"]);
    let dir = tempfile::tempdir().unwrap();
    let path = live_ts_clip(dir.path(), "c.ts", "testsrc2=size=320x240:rate=30", 8);
    let query = "sequence_length=64&batch_size=4";
    let lines = batch_lines(&upload(server.addr, query, &path).await);
    assert_eq!(lines[0]["sequences"][0]["shape"][2], 320);
    let wide = upload(server.addr, &format!("{query}&dtype=float32"), &path).await;
    assert_eq!(wide.status, 200, "{}", wide.body);
    let error = wide.error();
    assert_eq!(error["code"], "over_memory_budget", "{error}");
    assert!(
        !wide.lines().iter().any(|l| l.get("sequences").is_some()),
        "{}",
        wide.body
    );
}
