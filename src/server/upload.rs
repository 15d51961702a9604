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
use super::errors::{describe, ApiError, CutReason};
use super::operator::{operator_config, parse_policy, trim_reservation, BatchSettings};
use super::rate::RateRule;
use super::service::{RequestCtx, Service, Slot};
use crate::error::Error;
use crate::operator::handle::VideoInput;
use crate::report;
use crate::settings::sampling::{ClipSampler, Sampling, SamplingOptions};
use crate::source::live::LiveVideo;
use crate::transform::Transforms;

/// After an upload fails, at most this much more of its body is read (and discarded), for at most
/// [`DRAIN_TIME`], so that the client, still sending, reads the response with the error instead of seeing the
/// connection reset.
const DRAIN_BYTES: u64 = 16 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(5);
/// How often the rate rule is checked while no data comes.
const RATE_TICK: Duration = Duration::from_millis(250);

/// The query parameters of `POST /videos`.
const QUERY_KEYS: [&str; 16] = [
    "sequence_length",
    "batch_size",
    "last_sequence_policy",
    "policy",
    "detach",
    "id",
    "label",
    "stride",
    "step",
    "fps",
    "start",
    "end",
    "indices",
    "clips",
    "clip_sampler",
    "seed",
];

/// The parsed query of `POST /videos`: the operator's settings, and for `detach=true` the stream's id (when
/// the client chose one) and label.
pub(crate) struct UploadQuery {
    pub(crate) settings: BatchSettings,
    pub(crate) detach: bool,
    pub(crate) id: Option<String>,
    pub(crate) label: Option<String>,
}

/// Parses `POST /videos`'s query: `sequence_length` (default 16), `batch_size` (default 1),
/// `last_sequence_policy` (or `policy`: `partial`, the default, or `pad`), `detach` (`true`/`false`), and with `detach=true` `id` and `label`;
/// the sampling (`stride`, `step`, `fps`, `start`, `end`, `indices` as `I,J,K`; `clips` with `clip_sampler`
/// and `seed`, which make the upload decoded whole), checked with the operator's config.
pub(crate) fn parse_query(query: &HashMap<String, String>) -> Result<UploadQuery, ApiError> {
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, "bad_request", m);
    if let Some(unknown) = query.keys().find(|k| !QUERY_KEYS.contains(&k.as_str())) {
        return Err(bad(format!(
            "unknown query parameter '{unknown}'; allowed: {}",
            QUERY_KEYS.join(", ")
        )));
    }
    let number = |name: &str, default: usize| -> Result<usize, ApiError> {
        query.get(name).map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| bad(format!("{name} must be a positive integer, got '{v}'")))
        })
    };
    let defaults = BatchSettings::default();
    let optional = |name: &str| -> Result<Option<usize>, ApiError> {
        query.get(name).map(|_| number(name, 0)).transpose()
    };
    let real = |name: &str| -> Result<Option<f64>, ApiError> {
        query
            .get(name)
            .map(|v| {
                v.parse::<f64>()
                    .map_err(|_| bad(format!("{name} must be a number, got '{v}'")))
            })
            .transpose()
    };
    let sampling = SamplingOptions {
        stride: optional("stride")?,
        step: optional("step")?,
        clips: optional("clips")?,
        clip_sampler: query
            .get("clip_sampler")
            .map(|v| v.parse::<ClipSampler>().map_err(bad))
            .transpose()?,
        seed: query
            .get("seed")
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| bad(format!("seed must be a non-negative integer, got '{v}'")))
            })
            .transpose()?,
        fps: real("fps")?,
        start: real("start")?,
        end: real("end")?,
        indices: query
            .get("indices")
            .map(|v| {
                v.split(',')
                    .map(|i| i.trim().parse::<u64>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| {
                        bad(format!(
                            "indices must be frame indices separated by commas (I,J,K), got '{v}'"
                        ))
                    })
            })
            .transpose()?,
    };
    if sampling.clips.is_none()
        && (query.contains_key("clip_sampler") || query.contains_key("seed"))
    {
        return Err(bad(
            "clip_sampler and seed are for uploads with clips".into()
        ));
    }
    let policy = match query
        .get("last_sequence_policy")
        .or_else(|| query.get("policy"))
    {
        None => defaults.policy,
        Some(name) => parse_policy(name)?,
    };
    let detach = match query.get("detach").map(String::as_str) {
        None | Some("false") | Some("0") => false,
        Some("true") | Some("1") => true,
        Some(other) => {
            return Err(bad(format!(
                "detach must be 'true' or 'false', got '{other}'"
            )))
        }
    };
    if !detach && (query.contains_key("id") || query.contains_key("label")) {
        return Err(bad("id and label are for detach=true uploads".into()));
    }
    Ok(UploadQuery {
        settings: BatchSettings {
            sequence_length: number("sequence_length", defaults.sequence_length)?,
            batch_size: number("batch_size", defaults.batch_size)?,
            policy,
            transforms: Transforms::new(),
            sampling: Sampling::from(sampling),
        },
        detach,
        id: query.get("id").cloned(),
        label: query.get("label").cloned(),
    })
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
    let parsed = parse_query(&query)?;
    let (config, shape) = operator_config(&parsed.settings, &service)?;
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
    // A detached upload's stream is registered (its id reserved) before decoding starts.
    let stream = if parsed.detach {
        Some(service.streams.insert(
            parsed.id,
            parsed.label.clone(),
            "upload".into(),
            (parsed.settings.sequence_length, parsed.settings.batch_size),
        )?)
    } else {
        None
    };
    let input = VideoInput::new(config).map_err(internal);
    let whole = parsed.settings.sampling.needs_whole_video();
    let live = input.and_then(|input| {
        let label = parsed.label.unwrap_or_else(|| "upload".into());
        // Clips need the video's length: the upload is collected whole (within the memory its reservation
        // holds for a moov-at-end upload), then decoded, seeking to its clips.
        let live = if whole {
            input.feed_live_whole_with_label(label, service.config.moov_buffer_bytes())
        } else {
            input.feed_live_with_label(label)
        }
        .map_err(internal)?;
        input.close();
        Ok((input, live))
    });
    let (input, live) = match live {
        Ok(started) => started,
        Err(e) => {
            if let Some(stream) = &stream {
                service.streams.remove(&stream.id);
            }
            return Err(e);
        }
    };
    let received = Arc::new(AtomicU64::new(0));
    let cut = Arc::new(Mutex::new(None));
    let upload = tokio::spawn(receive(
        body,
        live,
        service.clone(),
        received.clone(),
        cut.clone(),
    ));
    if let Some(stream) = stream {
        // The uploader gets the stream's id at once; the body goes on being read by `receive`, and the
        // batches go to the stream's consumers.
        let info = stream.info();
        tokio::spawn(super::streams::pump(
            service.clone(),
            stream,
            super::streams::Decoding {
                input,
                slot,
                shape,
                upload: Some((upload, received, cut)),
            },
        ));
        return Ok(super::streams::created_response(info));
    }
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
            service.metrics.bytes.inc_by(chunk.len() as u64);
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
                    self.trimmed = true;
                    let received = self.received.load(Ordering::Relaxed);
                    trim_reservation(
                        &mut self.slot,
                        &self.shape,
                        &service,
                        received,
                        batch.frame_shape(),
                    );
                    tracing::debug!(request_id = %self.ctx.id, reserved = self.slot.memory.bytes(), "memory reservation trimmed");
                }
                let frames = batch.valid_frames() as u64;
                self.frames += frames;
                self.batches += 1;
                metrics.frames.inc_by(frames);
                metrics.batches.inc();
                report::batch_json(&batch)
            }
            Ok(None) => {
                self.done = true;
                self.finish_receiving().await;
                if !self.errors.is_empty() {
                    metrics.errors.inc();
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
    use crate::settings::config::Config;

    fn config_for(
        query: &HashMap<String, String>,
        service: &Service,
    ) -> Result<(Config, UploadShape), ApiError> {
        operator_config(&parse_query(query)?.settings, service)
    }

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
            let (config, _) = config_for(
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
        let (config, _) = config_for(&query(&[("sequence_length", "4")]), &service).unwrap();
        assert!(config.max_batch_bytes < 4 * 3840 * 2160 * 3);
    }

    #[test]
    fn the_index_share_is_a_sixteenth_and_the_fixed_part_stays_a_quarter() {
        let settings = ServeConfig::default();
        let budget = settings.max_upload_memory;
        assert_eq!(settings.container_samples(), 349_525);
        // The index and the held boxes of a live upload fit in a sixteenth of the budget.
        let held = 2 * crate::demux::mp4::live::max_held_box(settings.container_samples());
        assert!(settings.index_bytes() + held <= budget / 16);
        // A moov-at-end upload gives the index share up from its quarter: the fixed part is a quarter.
        assert_eq!(
            settings.held_bytes(settings.moov_buffer_bytes()),
            budget / 4
        );
        assert!(settings.held_bytes(0) < budget / 4);
        let (config, _) = config_for(&query(&[]), &Service::new(settings)).unwrap();
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
                "last_sequence_policy is 'drop'; allowed: 'partial', 'pad'",
            ),
            (
                vec![("batch_size", "-1")],
                "batch_size must be a positive integer",
            ),
            (
                vec![("sequence_length", "65536"), ("batch_size", "65536")],
                "cannot fit in this server's",
            ),
            (vec![("detach", "yes")], "detach must be 'true' or 'false'"),
            (vec![("id", "cam")], "for detach=true uploads"),
        ] {
            let err = config_for(&query(&pairs), &service).unwrap_err();
            assert!(err.message.contains(expected), "{pairs:?}: {}", err.message);
            assert_eq!(err.status, StatusCode::BAD_REQUEST);
        }
        assert_eq!(service.memory.reserved(), 0);
    }
}
