//! One upload: the query becomes an operator configuration sized to the upload's memory budget, the body is
//! pushed into a [`LiveVideo`] as it arrives (zero-copy, with backpressure: a slow decoder slows the upload,
//! it does not grow memory) under the rate rule, and the response streams one JSON line per batch as soon as
//! it is decoded. Uploads are isolated: one that stalls, crawls or fails ends only its own response.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use axum::Extension;
use futures_util::StreamExt;
use parking_lot::Mutex;
use serde_json::{json, Value};

use super::budget::UploadShape;
use super::config::LIVE_BUFFER_BYTES;
use super::errors::{describe, ApiError, CutReason};
use super::rate::RateRule;
use super::service::{RequestCtx, Service, Slot};
use crate::config::{Config, LastSequencePolicy, MoovAtEnd};
use crate::error::Error;
use crate::input::VideoInput;
use crate::live::LiveVideo;
use crate::report;

/// Batches the operator keeps ready ahead of the response.
const PREFETCH: usize = 1;
/// Batches alive at once: those prefetched, the one being decoded, the one the response holds.
const BATCHES_IN_FLIGHT: u64 = PREFETCH as u64 + 2;

/// After an upload fails, at most this much more of its body is read (and discarded), for at most
/// [`DRAIN_TIME`], so that the client, still sending, reads the response with the error instead of seeing the
/// connection reset.
const DRAIN_BYTES: u64 = 16 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(5);
/// How often the rate rule is checked while no data comes.
const RATE_TICK: Duration = Duration::from_millis(250);

/// The operator configuration from the query string, sized to the upload's memory budget: `sequence_length`
/// (default 16), `batch_size` (default 1), `policy` (`partial`, the default, or `pad`). Also the upload's
/// [`UploadShape`].
pub(crate) fn parse_query(
    query: &HashMap<String, String>,
    service: &Service,
) -> Result<(Config, UploadShape), ApiError> {
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, "bad_request", m);
    const KNOWN: [&str; 3] = ["sequence_length", "batch_size", "policy"];
    if let Some(unknown) = query.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(bad(format!(
            "unknown query parameter '{unknown}'; allowed: {}",
            KNOWN.join(", ")
        )));
    }
    let number = |name: &str, default: usize| -> Result<usize, ApiError> {
        query.get(name).map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| bad(format!("{name} must be a positive integer, got '{v}'")))
        })
    };
    let policy = match query.get("policy").map(String::as_str) {
        None | Some("partial") => LastSequencePolicy::Partial,
        Some("pad") => LastSequencePolicy::Pad,
        Some(other) => {
            return Err(bad(format!(
                "policy must be 'pad' or 'partial', got '{other}'"
            )))
        }
    };
    let (length, batch) = (number("sequence_length", 16)?, number("batch_size", 1)?);
    let settings = &service.config;
    let moov_bytes = settings.moov_buffer_bytes();
    let moov = if moov_bytes == 0 {
        MoovAtEnd::Fail
    } else {
        MoovAtEnd::Buffer {
            max_bytes: moov_bytes,
        }
    };
    let config = Config::new(length, batch)
        .last_sequence_policy(policy)
        // Low latency: batches leave as soon as their frames are decoded.
        .low_latency()
        .prefetch_batches(PREFETCH)
        .decoder_threads(settings.decoder_threads_per_stream)
        .stall_timeout(settings.stall_timeout)
        .live_buffer_bytes(LIVE_BUFFER_BYTES)
        .moov_at_end(moov)
        .max_container_samples(settings.container_samples());
    let shape = UploadShape {
        frames_per_batch: (length as u64).saturating_mul(batch as u64),
        batches_in_flight: BATCHES_IN_FLIGHT,
        fixed_bytes: settings.held_bytes(moov_bytes),
    };
    let budget = settings.max_upload_memory;
    let Some(max_batch_bytes) = shape.max_batch_bytes(budget) else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "over_memory_budget",
            format!(
                "sequence_length x batch_size = {length} x {batch} frames cannot fit in this server's {budget} bytes per upload, even for a one-pixel video; lower sequence_length or batch_size"
            ),
        ));
    };
    let config = config.max_batch_bytes(max_batch_bytes.max(1));
    // The configuration is checked before anything is reserved, so a bad one is a 400 whatever the load.
    config.validate().map_err(|e| match e {
        Error::Config(m) => bad(m),
        other => bad(other.to_string()),
    })?;
    Ok((config, shape))
}

/// `POST /videos`.
pub(crate) async fn post_video(
    State(service): State<Arc<Service>>,
    Extension(ctx): Extension<RequestCtx>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let id = ctx.id.clone();
    let Ok(Query(query)) = query else {
        let refusal = ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "the query string could not be parsed (expected name=value pairs, URL-encoded)",
        );
        return service.refuse(refusal, &id);
    };
    match start(service.clone(), ctx, query, headers, body).await {
        Ok(response) => response,
        Err(refusal) => service.refuse(refusal, &id),
    }
}

/// Admits the upload and starts its response, or says why not.
async fn start(
    service: Arc<Service>,
    ctx: RequestCtx,
    query: HashMap<String, String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (config, shape) = parse_query(&query, &service)?;
    let max_body = service.config.max_body_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(length) = declared.filter(|&l| l > max_body) {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the request body is {length} bytes; the limit is {max_body}"),
        ));
    }
    let slot = service.admit(ctx.client.clone())?;
    let internal = |e: Error| {
        tracing::error!(request_id = %ctx.id, error = %e, "could not start an operator");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server could not start decoding",
        )
    };
    let input = VideoInput::new(config).map_err(internal)?;
    let live = input.feed_live_with_label("upload").map_err(internal)?;
    input.close();
    let received = Arc::new(AtomicU64::new(0));
    let cut = Arc::new(Mutex::new(None));
    let upload = tokio::spawn(receive(
        body,
        live,
        service.clone(),
        received.clone(),
        cut.clone(),
    ));
    let progress = Progress {
        input: Some(Arc::new(input)),
        service,
        ctx,
        slot,
        shape,
        trimmed: false,
        upload: Some(upload),
        received,
        cut,
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
    Ok(Response::builder()
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .body(Body::from_stream(lines))
        .unwrap_or_default())
}

/// Pushes the request body into the live video as it arrives, then finishes it; aborts it if the body fails,
/// grows past the limit or comes more slowly than the rate rule allows.
async fn receive(
    body: Body,
    live: LiveVideo,
    service: Arc<Service>,
    total: Arc<AtomicU64>,
    cut: Arc<Mutex<Option<CutReason>>>,
) {
    let settings = &service.config;
    let max = settings.max_body_bytes;
    let mut rule = RateRule::new(
        settings.min_upload_rate,
        settings.upload_rate_window,
        settings.upload_rate_window,
    );
    let mut received = 0u64;
    // Time spent waiting for the client's bytes (not for the decoder).
    let mut waited = Duration::ZERO;
    let mut chunks = body.into_data_stream();
    let fail = |reason: CutReason, live: LiveVideo, detail: String| {
        *cut.lock() = Some(reason);
        live.abort(detail);
    };
    loop {
        let wait_start = Instant::now();
        let next = tokio::time::timeout(RATE_TICK, chunks.next()).await;
        waited += wait_start.elapsed();
        let chunk = match next {
            Err(_) => None,
            Ok(None) => break,
            Ok(Some(Ok(chunk))) => Some(chunk),
            Ok(Some(Err(e))) => {
                return fail(
                    CutReason::BodyUnreadable,
                    live,
                    format!("the request body could not be read: {e}"),
                )
            }
        };
        if let Some(chunk) = &chunk {
            received += chunk.len() as u64;
            total.store(received, Ordering::Relaxed);
            service
                .metrics
                .bytes
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
        if received > max {
            fail(
                CutReason::BodyTooLarge,
                live,
                format!("the request body grew past the limit of {max} bytes"),
            );
            return drain(chunks, &total).await;
        }
        if let Err(slow) = rule.observe(waited, received) {
            // Nothing more is read: the slot is freed when the response ends, which it does now.
            return fail(
                CutReason::TooSlow,
                live,
                format!(
                    "{} bytes in {:.1} s, under the minimum of {} bytes/s",
                    slow.bytes,
                    slow.window.as_secs_f64(),
                    slow.min_rate
                ),
            );
        }
        if let Some(chunk) = chunk {
            if live.push_async(chunk).await.is_err() {
                // The video failed: its error reaches the response.
                return drain(chunks, &total).await;
            }
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
    ctx: RequestCtx,
    slot: Slot,
    shape: UploadShape,
    /// Whether the memory reservation was trimmed to the video's real need.
    trimmed: bool,
    /// The task receiving the body; awaited (boundedly) before the summary.
    upload: Option<tokio::task::JoinHandle<()>>,
    /// Body bytes read so far (drained ones included).
    received: Arc<AtomicU64>,
    cut: Arc<Mutex<Option<CutReason>>>,
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
                if !self.trimmed {
                    self.trim(batch.frame_shape());
                }
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
                tracing::info!(
                    request_id = %self.ctx.id, client = %self.ctx.client, frames = self.frames,
                    batches = self.batches, bytes = self.received.load(Ordering::Relaxed),
                    errors = self.errors.len(), "upload done"
                );
                json!({"summary": {
                    "frames": self.frames,
                    "batches": self.batches,
                    "seconds": self.started.elapsed().as_secs_f64(),
                    "errors": self.errors,
                }})
            }
            Err(e) => {
                let cut = *self.cut.lock();
                let (code, message) = describe(&e, cut, service.config.max_upload_memory);
                // The whole story goes to the log, under the id the client sees.
                tracing::warn!(request_id = %self.ctx.id, client = %self.ctx.client, code, error = %e, "upload failed");
                let line = super::errors::error_line(code, &message, &self.ctx.id);
                self.errors.push(line["error"].clone());
                if !matches!(e, Error::Video { .. }) {
                    // Not the video's failure but the operator's: nothing more will come; the summary follows.
                    self.stop_decoding();
                }
                line
            }
        };
        Some(format!("{value}\n"))
    }

    /// Trims the memory reservation to what the video needs, now that its frame size is known: its batches
    /// and decoder at this size, the body buffered ahead and the index, and the moov-at-end buffer only as far
    /// as the body received so far could fill it.
    fn trim(&mut self, frame_shape: [usize; 3]) {
        self.trimmed = true;
        let pixels = (frame_shape[0] as u64).saturating_mul(frame_shape[1] as u64);
        let settings = &self.service.config;
        let moov = settings
            .moov_buffer_bytes()
            .min(self.received.load(Ordering::Relaxed));
        let shape = UploadShape {
            fixed_bytes: settings.held_bytes(moov),
            ..self.shape
        };
        if let Some(need) = shape.need(pixels) {
            self.slot.memory.shrink_to(need);
            tracing::debug!(request_id = %self.ctx.id, reserved = self.slot.memory.bytes(), "memory reservation trimmed");
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::config::ServeConfig;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_default_budget_serves_1080p_batches_of_16_frames() {
        let service = Service::new(ServeConfig::default());
        let batch_1080p = |frames: u64| frames * 1920 * 1080 * 3;
        for (l, b) in [("8", "2"), ("16", "1"), ("4", "4")] {
            let (config, _) = parse_query(
                &query(&[("sequence_length", l), ("batch_size", b)]),
                &service,
            )
            .unwrap();
            assert!(
                config.max_batch_bytes >= batch_1080p(16),
                "L={l} B={b}: {}",
                config.max_batch_bytes
            );
        }
        // 4K needs a larger budget.
        let (config, _) = parse_query(&query(&[("sequence_length", "4")]), &service).unwrap();
        assert!(config.max_batch_bytes < 4 * 3840 * 2160 * 3);
    }

    #[test]
    fn the_index_share_is_a_sixteenth_and_the_fixed_part_stays_a_quarter() {
        let settings = ServeConfig::default();
        let budget = settings.max_upload_memory;
        assert_eq!(settings.container_samples(), 349_525);
        // The index and the held boxes of a live upload fit in a sixteenth of the budget.
        let held = 2 * crate::mp4_live::max_held_box(settings.container_samples());
        assert!(settings.index_bytes() + held <= budget / 16);
        // A moov-at-end upload gives the index share up from its quarter: the fixed part is a quarter.
        assert_eq!(
            settings.held_bytes(settings.moov_buffer_bytes()),
            budget / 4
        );
        assert!(settings.held_bytes(0) < budget / 4);
        let (config, _) = parse_query(&query(&[]), &Service::new(settings)).unwrap();
        assert_eq!(config.max_container_samples, 349_525);
    }

    #[test]
    fn queries_are_checked_before_anything_is_reserved() {
        let service = Service::new(ServeConfig::default());
        for (pairs, expected) in [
            (vec![("sequence_length", "0")], "sequence_length is 0"),
            (vec![("bogus", "1")], "unknown query parameter 'bogus'"),
            (
                vec![("policy", "drop")],
                "policy must be 'pad' or 'partial'",
            ),
            (
                vec![("batch_size", "-1")],
                "batch_size must be a positive integer",
            ),
            (
                vec![("sequence_length", "65536"), ("batch_size", "65536")],
                "cannot fit in this server's",
            ),
        ] {
            let err = parse_query(&query(&pairs), &service).unwrap_err();
            assert!(err.message.contains(expected), "{pairs:?}: {}", err.message);
            assert_eq!(err.status, StatusCode::BAD_REQUEST);
        }
        assert_eq!(service.memory.reserved(), 0);
    }
}
