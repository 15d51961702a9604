//! The ingest service itself: routes, admission limits, per-upload decoding and metrics. `main.rs` serves it;
//! `tests/ingest_load.rs` serves the same code on a loopback port.
//!
//! Each upload gets its own [`VideoInput`] fed through a [`framefeed::LiveVideo`]: the request body's chunks are
//! pushed as they arrive (zero-copy, with backpressure: a slow consumer slows the upload, it does not grow
//! memory), and the response streams one JSON line per batch as soon as it is decoded. Uploads are isolated:
//! one that stalls or fails ends only its own response.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::connect_info::IntoMakeServiceWithConnectInfo;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use framefeed::{report, Config, Error, LastSequencePolicy, LiveVideo, VideoInput};
use futures_util::StreamExt;
use parking_lot::Mutex;
use serde_json::{json, Value};

/// The service's limits.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Uploads decoded at once, server-wide; more are answered 503.
    pub max_streams: usize,
    /// Uploads at once from one client address; more are answered 429.
    pub max_streams_per_client: usize,
    /// Largest request body: a larger `Content-Length` is answered 413; a chunked body that grows past it is
    /// cut, with an error line.
    pub max_body_bytes: u64,
    /// libavcodec threads per upload. Threads in all: at most `max_streams * (1 + this)`.
    pub decoder_threads_per_stream: usize,
    /// An upload that sends nothing for this long fails (its response ends with the error).
    pub stall_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_streams: 32,
            max_streams_per_client: 8,
            max_body_bytes: 2 << 30,
            decoder_threads_per_stream: 1,
            stall_timeout: Duration::from_secs(30),
        }
    }
}

/// Counters for `/metrics`.
#[derive(Default)]
struct Metrics {
    streams_active: AtomicU64,
    streams_total: AtomicU64,
    frames: AtomicU64,
    batches: AtomicU64,
    errors: AtomicU64,
    bytes: AtomicU64,
    rejected: Mutex<HashMap<u16, u64>>,
}

/// The shared state of the service.
pub struct Service {
    limits: Limits,
    metrics: Metrics,
    /// Uploads in progress per client address (also the server-wide count, by sum).
    clients: Mutex<HashMap<IpAddr, usize>>,
    shutting_down: AtomicBool,
}

impl Service {
    /// A service with these limits.
    pub fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            metrics: Metrics::default(),
            clients: Mutex::new(HashMap::new()),
            shutting_down: AtomicBool::new(false),
        })
    }

    /// Refuses new uploads (503) from now on; uploads in progress go on to their end.
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    /// Uploads in progress.
    pub fn active_streams(&self) -> u64 {
        self.metrics.streams_active.load(Ordering::SeqCst)
    }

    /// Takes an upload slot for `client`, or says why not.
    fn admit(self: &Arc<Self>, client: IpAddr) -> Result<Slot, (StatusCode, String)> {
        let mut clients = self.clients.lock();
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err((
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down".into(),
            ));
        }
        let active: usize = clients.values().sum();
        let mine = clients.get(&client).copied().unwrap_or(0);
        if mine >= self.limits.max_streams_per_client {
            return Err((
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "this client already has {mine} uploads in progress (limit {})",
                    self.limits.max_streams_per_client
                ),
            ));
        }
        if active >= self.limits.max_streams {
            return Err((
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the server is decoding {active} uploads, its limit; retry later"),
            ));
        }
        *clients.entry(client).or_default() += 1;
        self.metrics.streams_active.fetch_add(1, Ordering::SeqCst);
        self.metrics.streams_total.fetch_add(1, Ordering::SeqCst);
        Ok(Slot {
            service: self.clone(),
            client,
        })
    }

    fn reject(&self, status: StatusCode, message: impl Into<String>) -> Response {
        *self
            .metrics
            .rejected
            .lock()
            .entry(status.as_u16())
            .or_default() += 1;
        let line = json!({"error": {"video": null, "label": null, "error": message.into()}});
        let mut response = (status, format!("{line}\n")).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/x-ndjson"),
        );
        if status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::TOO_MANY_REQUESTS {
            headers.insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        }
        response
    }

    fn metrics_text(&self) -> String {
        let m = &self.metrics;
        let mut out = String::new();
        let metrics: [(&str, &str, &str, &AtomicU64); 6] = [
            (
                "framefeed_streams_active",
                "gauge",
                "Uploads being decoded now.",
                &m.streams_active,
            ),
            (
                "framefeed_streams_total",
                "counter",
                "Uploads accepted.",
                &m.streams_total,
            ),
            (
                "framefeed_frames_total",
                "counter",
                "Real frames delivered.",
                &m.frames,
            ),
            (
                "framefeed_batches_total",
                "counter",
                "Batches delivered.",
                &m.batches,
            ),
            (
                "framefeed_errors_total",
                "counter",
                "Uploads that ended with an error.",
                &m.errors,
            ),
            (
                "framefeed_bytes_received_total",
                "counter",
                "Request body bytes received.",
                &m.bytes,
            ),
        ];
        for (name, kind, help, value) in metrics {
            let value = value.load(Ordering::SeqCst);
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
            ));
        }
        out.push_str("# HELP framefeed_requests_rejected_total Requests refused, by status.\n");
        out.push_str("# TYPE framefeed_requests_rejected_total counter\n");
        let mut rejected: Vec<(u16, u64)> =
            m.rejected.lock().iter().map(|(k, v)| (*k, *v)).collect();
        rejected.sort_unstable();
        for (status, count) in rejected {
            out.push_str(&format!(
                "framefeed_requests_rejected_total{{status=\"{status}\"}} {count}\n"
            ));
        }
        out
    }
}

/// One admitted upload; frees its slot when dropped (when the response ends or the client goes away).
struct Slot {
    service: Arc<Service>,
    client: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut clients = self.service.clients.lock();
        if let Some(n) = clients.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                clients.remove(&self.client);
            }
        }
        self.service
            .metrics
            .streams_active
            .fetch_sub(1, Ordering::SeqCst);
    }
}

/// The routes, as a make-service that knows each connection's peer address (for the per-client limit).
pub fn app(service: Arc<Service>) -> IntoMakeServiceWithConnectInfo<Router, SocketAddr> {
    Router::new()
        .route("/videos", post(post_video))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .with_state(service)
        .into_make_service_with_connect_info::<SocketAddr>()
}

async fn health(State(service): State<Arc<Service>>) -> Response {
    let status = if service.shutting_down.load(Ordering::SeqCst) {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down")
    } else {
        (StatusCode::OK, "ok")
    };
    let body = json!({"status": status.1, "streams_active": service.active_streams()});
    (status.0, axum::Json(body)).into_response()
}

async fn metrics(State(service): State<Arc<Service>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        service.metrics_text(),
    )
        .into_response()
}

/// The operator configuration from the query string: `sequence_length` (default 16), `batch_size` (default 1),
/// `policy` (`partial`, the default, or `pad`).
fn parse_query(query: &HashMap<String, String>, limits: &Limits) -> Result<Config, String> {
    const KNOWN: [&str; 3] = ["sequence_length", "batch_size", "policy"];
    if let Some(unknown) = query.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(format!(
            "unknown query parameter '{unknown}'; allowed: {}",
            KNOWN.join(", ")
        ));
    }
    let number = |name: &str, default: usize| -> Result<usize, String> {
        query.get(name).map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| format!("{name} must be a positive integer, got '{v}'"))
        })
    };
    let policy = match query.get("policy").map(String::as_str) {
        None | Some("partial") => LastSequencePolicy::Partial,
        Some("pad") => LastSequencePolicy::Pad,
        Some(other) => return Err(format!("policy must be 'pad' or 'partial', got '{other}'")),
    };
    Ok(
        Config::new(number("sequence_length", 16)?, number("batch_size", 1)?)
            .last_sequence_policy(policy)
            // Low latency: batches leave as soon as their frames are decoded.
            .low_latency()
            .decoder_threads(limits.decoder_threads_per_stream)
            .stall_timeout(limits.stall_timeout),
    )
}

async fn post_video(
    State(service): State<Arc<Service>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let config = match parse_query(&query, &service.limits) {
        Ok(config) => config,
        Err(message) => return service.reject(StatusCode::BAD_REQUEST, message),
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(length) = declared.filter(|&l| l > service.limits.max_body_bytes) {
        return service.reject(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body is {length} bytes; the limit is {}",
                service.limits.max_body_bytes
            ),
        );
    }
    // The configuration is checked before a slot is taken, so a bad one is a 400 whatever the load; the
    // operator (and its thread) is made only for an admitted upload.
    if let Err(e) = config.validate() {
        return service.reject(StatusCode::BAD_REQUEST, e.to_string());
    }
    let slot = match service.admit(peer.ip()) {
        Ok(slot) => slot,
        Err((status, message)) => return service.reject(status, message),
    };
    let input = match VideoInput::new(config) {
        Ok(input) => input,
        Err(e) => return service.reject(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    let live = match input.feed_live_with_label("upload") {
        Ok(live) => live,
        Err(e) => return service.reject(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    input.close();
    let received = Arc::new(AtomicU64::new(0));
    let upload = tokio::spawn(receive(body, live, service.clone(), received.clone()));
    let progress = Progress {
        input: Some(Arc::new(input)),
        service,
        _slot: slot,
        upload: Some(upload),
        received,
        started: Instant::now(),
        frames: 0,
        batches: 0,
        errors: Vec::new(),
        done: false,
    };
    let lines = futures_util::stream::unfold(progress, |mut p| async move {
        let line = p.next_line().await?;
        Some((Ok::<_, Infallible>(Bytes::from(line)), p))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .body(Body::from_stream(lines))
        .expect("valid response parts")
}

/// After an upload fails, at most this much more of its body is read (and discarded), for at most
/// [`DRAIN_TIME`], so that the client, still sending, reads the response with the error instead of seeing the
/// connection reset.
const DRAIN_BYTES: u64 = 16 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(5);

/// Pushes the request body into the live video as it arrives, then finishes it; aborts it if the body fails or
/// grows past the limit.
async fn receive(body: Body, live: LiveVideo, service: Arc<Service>, total: Arc<AtomicU64>) {
    let max = service.limits.max_body_bytes;
    let mut received = 0u64;
    let mut chunks = body.into_data_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => return live.abort(format!("the request body could not be read: {e}")),
        };
        received += chunk.len() as u64;
        total.store(received, Ordering::Relaxed);
        service
            .metrics
            .bytes
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        if received > max {
            live.abort(format!(
                "the request body grew past the limit of {max} bytes"
            ));
            return drain(chunks, &total).await;
        }
        if live.push_async(chunk).await.is_err() {
            // The video failed: its error reaches the response.
            return drain(chunks, &total).await;
        }
    }
    live.finish();
}

/// Reads and discards what is left of a failed upload's body, within [`DRAIN_BYTES`] and [`DRAIN_TIME`].
async fn drain(mut chunks: axum::body::BodyDataStream, total: &AtomicU64) {
    let mut budget = DRAIN_BYTES;
    let _ = tokio::time::timeout(DRAIN_TIME, async {
        while let Some(Ok(chunk)) = chunks.next().await {
            total.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            match budget.checked_sub(chunk.len() as u64) {
                Some(left) => budget = left,
                None => return,
            }
        }
    })
    .await;
}

/// The state of one response stream.
struct Progress {
    input: Option<Arc<VideoInput>>,
    service: Arc<Service>,
    _slot: Slot,
    /// The task receiving the body; awaited (boundedly) before the summary.
    upload: Option<tokio::task::JoinHandle<()>>,
    /// Body bytes read so far (drained ones included).
    received: Arc<AtomicU64>,
    started: Instant,
    frames: u64,
    batches: u64,
    errors: Vec<Value>,
    done: bool,
}

impl Progress {
    /// The next response line: a batch, an error, or the closing summary; `None` after the summary.
    async fn next_line(&mut self) -> Option<String> {
        if self.done {
            return None;
        }
        let service = self.service.clone();
        let metrics = &service.metrics;
        let polled = match &self.input {
            Some(input) => input.next_batch_async().await,
            None => Ok(None),
        };
        let value = match polled {
            Ok(Some(batch)) => {
                let frames = batch.valid_frames() as u64;
                self.frames += frames;
                self.batches += 1;
                metrics.frames.fetch_add(frames, Ordering::Relaxed);
                metrics.batches.fetch_add(1, Ordering::Relaxed);
                report::batch_json(&batch)
            }
            Ok(None) => {
                self.done = true;
                self.finish_receiving().await;
                if !self.errors.is_empty() {
                    metrics.errors.fetch_add(1, Ordering::Relaxed);
                }
                json!({"summary": {
                    "frames": self.frames,
                    "batches": self.batches,
                    "seconds": self.started.elapsed().as_secs_f64(),
                    "errors": self.errors,
                }})
            }
            Err(e) => {
                let error = report::error_json(&e);
                self.errors.push(error.clone());
                if !matches!(e, Error::Video { .. }) {
                    // Not the video's failure but the operator's: nothing more will come; the summary follows.
                    self.stop_decoding();
                }
                json!({ "error": error })
            }
        };
        Some(format!("{value}\n"))
    }

    /// Lets the body be read to its end (or drained, after a failure) before the response ends, as long as
    /// the client keeps sending, within [`DRAIN_TIME`]; a client that sends nothing is not waited for.
    async fn finish_receiving(&mut self) {
        let Some(mut upload) = self.upload.take() else {
            return;
        };
        let deadline = Instant::now() + DRAIN_TIME;
        loop {
            let before = self.received.load(Ordering::Relaxed);
            match tokio::time::timeout(Duration::from_millis(200), &mut upload).await {
                Ok(_) => return,
                Err(_) if self.received.load(Ordering::Relaxed) == before => break,
                Err(_) if Instant::now() >= deadline => break,
                Err(_) => {}
            }
        }
        upload.abort();
    }

    fn stop_decoding(&mut self) {
        if let Some(input) = self.input.take() {
            // Dropping an operator joins its thread: do it off the runtime's threads when there is a runtime
            // (there is none once it has shut down; then drop it here).
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn_blocking(move || drop(input))),
                Err(_) => drop(input),
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // The response ended or the client went away: stop receiving and decoding.
        if let Some(upload) = self.upload.take() {
            upload.abort();
        }
        self.stop_decoding();
    }
}
