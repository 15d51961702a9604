//! One upload: the query becomes an operator configuration sized to the upload's memory budget, the body is
//! pushed into a [`LiveVideo`] as it arrives (zero-copy, with backpressure: a slow decoder slows the upload,
//! it does not grow memory) under the rate rule, and the response streams one JSON line per batch as soon as
//! it is decoded. Uploads are isolated: one that stalls, crawls or fails ends only its own response.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::Response;
use axum::Extension;
use futures_util::StreamExt;
use parking_lot::Mutex;
use serde_json::{json, Value};

use super::budget::{Short, UploadShape};
use super::config::ADMISSION_BYTES;
use super::errors::{describe, ApiError, CutReason};
use super::operator::{
    audio_setting, batch_line, known_need, operator_config, settle_reservation, BatchSettings,
};
use super::rate::RateRule;
use super::requests::{value, Params, UploadParams};
use super::service::{RequestCtx, Service, Slot, SlotMemory};
use super::shedding::Tracked;
use crate::error::Error;
use crate::error_code::ErrorCode;
use crate::operator::handle::VideoInput;
use crate::report;
use crate::settings::sampling::{Sampling, SamplingOptions};
use crate::source::live::LiveVideo;
use crate::transform::{TransformOptions, Transforms};

/// After an upload fails, at most this much more of its body is read (and discarded), for at most
/// [`DRAIN_TIME`], so that the client, still sending, reads the response with the error instead of seeing the
/// connection reset.
const DRAIN_BYTES: u64 = 16 << 20;
const DRAIN_TIME: Duration = Duration::from_secs(5);
/// What a chunk read past the body limit counts for in [`DRAIN_BYTES`]: the most hyper reads at once on a
/// connection (its buffer, `listen.rs`).
const DRAIN_CHUNK: u64 = 64 << 10;
/// How often the rate rule is checked while no data comes.
const RATE_TICK: Duration = Duration::from_millis(250);

/// The parsed query of `POST /videos`: the operator's settings, and for `detach=true` the stream's id (when
/// the client chose one) and label.
pub(crate) struct UploadQuery {
    pub(crate) settings: BatchSettings,
    pub(crate) detach: bool,
    pub(crate) id: Option<String>,
    pub(crate) label: Option<String>,
}

/// Reads `POST /videos`'s query: `sequence_length` (default 16), `batch_size` (default 1),
/// `last_sequence_policy` (or `policy`: `partial`, the default, or `pad`), `detach` (`true`/`false`), and with
/// `detach=true` `id` and `label`; `autorotate` (`true`, the default: frames turned by the video's display
/// matrix; `false`: as coded); `strict` (`false`, the default: damaged frames and holes are reported on the
/// lines and the video goes on; `true` or `1`: the video fails at its first damage); `dtype` (`uint8`, the
/// default, `uint16`, `float32`...: what the frames are converted to, and what the upload's memory budget
/// counts), `tonemap` (`hable`, `mobius:param=0.5`...: HDR frames mapped to SDR), `md5` (`true`: each
/// sequence's line carries the MD5 of each frame's bytes in that type), `audio` (`true`: each sequence's line
/// carries its sound's shape, time and rate, with `md5` its MD5) with `audio_rate` and `audio_channels`; the sampling (`stride`, `step`, `fps`, `start`, `end`, `indices` as
/// `I,J,K`; `clips` with `clip_sampler`, `clip_policy` and `seed`, which make the upload decoded whole), checked with the
/// operator's config.
pub(crate) fn upload_query(params: UploadParams) -> Result<UploadQuery, ApiError> {
    let bad = |m: &str| ApiError::new(ErrorCode::BadRequest, m);
    let defaults = BatchSettings::default();
    let sampling = SamplingOptions {
        stride: value(params.stride),
        step: value(params.step),
        clips: value(params.clips),
        clip_sampler: value(params.clip_sampler),
        clip_policy: value(params.clip_policy),
        seed: value(params.seed),
        fps: value(params.fps),
        start: value(params.start),
        end: value(params.end),
        indices: value(params.indices),
    };
    if sampling.clips.is_none() && (sampling.clip_sampler.is_some() || sampling.seed.is_some()) {
        return Err(bad("clip_sampler and seed are for uploads with clips"));
    }
    if sampling.clips.is_none() && sampling.clip_policy.is_some() {
        return Err(bad("clip_policy is for uploads with clips"));
    }
    let transforms = Transforms::try_from(TransformOptions {
        dtype: value(params.dtype),
        tonemap: value(params.tonemap),
        ..Default::default()
    })
    .map_err(|e| bad(&e.into_reason()))?;
    let detach = value(params.detach).unwrap_or(false);
    if !detach && (params.id.is_some() || params.label.is_some()) {
        return Err(bad("id and label are for detach=true uploads"));
    }
    Ok(UploadQuery {
        settings: BatchSettings {
            sequence_length: value(params.sequence_length).unwrap_or(defaults.sequence_length),
            batch_size: value(params.batch_size).unwrap_or(defaults.batch_size),
            policy: value(params.last_sequence_policy)
                .or(value(params.policy))
                .unwrap_or(defaults.policy),
            transforms,
            sampling: Sampling::from(sampling),
            autorotate: value(params.autorotate).unwrap_or(defaults.autorotate),
            strict: value(params.strict).unwrap_or(defaults.strict),
            md5: value(params.md5).unwrap_or(defaults.md5),
            audio: audio_setting(
                value(params.audio),
                value(params.audio_rate).map(|n| n as u64),
                value(params.audio_channels).map(|n| n as u64),
            )?,
        },
        detach,
        id: params.id,
        label: params.label,
    })
}

/// `POST /videos`.
pub(crate) async fn post_video(
    State(service): State<Arc<Service>>,
    Extension(ctx): Extension<RequestCtx>,
    Params(params): Params<UploadParams>,
    body: Body,
) -> Response {
    let id = ctx.id.clone();
    match start(service.clone(), ctx, params, body).await {
        Ok(response) => response,
        Err(refusal) => service.refuse(refusal, &id),
    }
}

/// Admits the upload and starts its response, or says why not.
async fn start(
    service: Arc<Service>,
    ctx: RequestCtx,
    params: UploadParams,
    body: Body,
) -> Result<Response, ApiError> {
    let parsed = upload_query(params)?;
    let md5 = parsed.settings.md5;
    let (config, shape) = operator_config(&parsed.settings, &service)?;
    // Almost nothing until the body says what the video needs (`receive` grows it).
    let slot = service
        .admit_upload(ctx.client.clone(), ADMISSION_BYTES)
        .await?;
    let internal = |e: Error| {
        tracing::error!(request_id = %ctx.id, error = %e, "could not start an operator");
        ApiError::new(ErrorCode::Internal, "the server could not start decoding")
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
    reserve_before_decoding(&live, &service, &received, &cut, (&slot, shape));
    let upload = tokio::spawn(receive(
        body,
        live,
        service.clone(),
        received.clone(),
        cut.clone(),
        (slot.memory.clone(), shape, slot.tracked.clone()),
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
                md5,
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
        damage: report::DamageCount::default(),
        errors: Vec::new(),
        done: false,
        md5,
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

/// Grows the upload's reservation to what frames of its size need as soon as its stream's header gives the
/// size, on the decoding thread before the decoder opens, so that no frame buffer exists before memory is
/// reserved for it; the upload fails there (its cut reason recorded) when the pool or its client's share
/// cannot cover that. (The body's reader grows it too, at its next chunk; this is for the bytes already in.)
fn reserve_before_decoding(
    live: &LiveVideo,
    service: &Arc<Service>,
    received: &Arc<AtomicU64>,
    cut: &Arc<Mutex<Option<CutReason>>>,
    (slot, shape): (&Slot, UploadShape),
) {
    // Weak: the gate lives in the video's shared state, which the service's streams may hold.
    let service = Arc::downgrade(service);
    let (memory, received, cut) = (slot.memory.clone(), received.clone(), cut.clone());
    let tracked = slot.tracked.clone();
    live.on_frame_size(move |width, height| {
        let Some(service) = service.upgrade() else {
            return Ok(());
        };
        let size = (u64::from(width), u64::from(height));
        let need = known_need(
            &shape,
            &service,
            received.load(Ordering::Relaxed),
            Some(size),
        );
        // The pool may be spent: the upload holding the most memory for what it delivers is shed for it.
        let grown = service.grow_blocking(&memory, need, tracked.as_deref());
        grown.map_err(|short| {
            tracing::info!(
                need,
                ?short,
                "an upload's memory could not grow for its frames"
            );
            *cut.lock() = Some(CutReason::NoMemory(short));
            format!("{need} bytes of memory were not free for frames of {width}x{height}")
        })
    });
}

/// Pushes the request body into the live video as it arrives, then finishes it; aborts it if the body fails,
/// grows past the limit or comes more slowly than the rate rule allows. The upload's memory reservation
/// grows with what it is known to need ([`known_need`]: the body it holds, then its frames once the stream's
/// header gives their size); the upload is cut when the pool or its client's share cannot cover that.
async fn receive(
    body: Body,
    live: LiveVideo,
    service: Arc<Service>,
    total: Arc<AtomicU64>,
    cut: Arc<Mutex<Option<CutReason>>>,
    (memory, shape, tracked): (SlotMemory, UploadShape, Option<Arc<Tracked>>),
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
            // The router's body limit (tower-http's `RequestBodyLimitLayer`) ends a body growing past it.
            Ok(Some(Err(e))) if past_limit(&e) => {
                fail(
                    CutReason::BodyTooLarge,
                    live,
                    format!("the request body grew past the limit of {max} bytes"),
                );
                return drain(chunks, &total).await;
            }
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
        let need = known_need(
            &shape,
            &service,
            received,
            live.frame_size().map(|(w, h)| (u64::from(w), u64::from(h))),
        );
        let grown = service.grow(&memory, need, tracked.as_deref()).await;
        if let Err(short) = grown {
            tracing::info!(need, ?short, "an upload's memory could not grow");
            fail(
                CutReason::NoMemory(short),
                live,
                format!("{need} bytes of memory were not free"),
            );
            return drain(chunks, &total).await;
        }
        if let Some(pressure) = tracked.as_ref().and_then(|t| t.shed_for()) {
            // Shed for another upload: nothing more is read, and its slot and memory are freed as its
            // response ends, which it does now.
            return fail(
                CutReason::Shed(pressure),
                live,
                "shed for another upload".into(),
            );
        }
        let slow = rule.observe(waited, received);
        if let Some(tracked) = &tracked {
            tracked.set_rate(rule.rate());
        }
        if let Err(slow) = slow {
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
    if let Some(tracked) = &tracked {
        tracked.received();
    }
    live.finish();
}

/// Whether a body error is the router's body limit (`http_body_util::LengthLimitError`, behind axum's error).
fn past_limit(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}

/// Reads and discards what is left of a failed upload's body, within [`DRAIN_BYTES`] and [`DRAIN_TIME`].
/// Past the body limit each chunk read comes as a limit error whose size is not told: those count as
/// [`DRAIN_CHUNK`] bytes each (and as progress for [`Progress::finish_receiving`]).
async fn drain(mut chunks: axum::body::BodyDataStream, total: &AtomicU64) {
    let mut budget = DRAIN_BYTES;
    let _ = tokio::time::timeout(DRAIN_TIME, async {
        while let Some(next) = chunks.next().await {
            let bytes = match next {
                Ok(chunk) => chunk.len() as u64,
                Err(e) if past_limit(&e) => DRAIN_CHUNK,
                Err(_) => return,
            };
            total.fetch_add(bytes, Ordering::Relaxed);
            match budget.checked_sub(bytes) {
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
    /// Damaged frames and holes the batches reported, counted in the summary.
    damage: report::DamageCount,
    errors: Vec<Value>,
    done: bool,
    /// Lines carry each frame's MD5.
    md5: bool,
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
                    let settled = settle_reservation(
                        &self.slot,
                        &self.shape,
                        &service,
                        received,
                        batch.frame_shape(),
                    );
                    if let Err(short) = settled {
                        return Some(self.short_of_memory(short));
                    }
                    tracing::debug!(request_id = %self.ctx.id, reserved = self.slot.memory.lock().bytes(), "memory reservation settled");
                }
                let frames = batch.valid_frames() as u64;
                self.frames += frames;
                self.batches += 1;
                self.damage.add(&batch);
                metrics.frames.inc_by(frames);
                metrics.batches.inc();
                batch_line(&batch, self.md5)
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
                let mut summary = json!({
                    "frames": self.frames,
                    "batches": self.batches,
                    "seconds": self.started.elapsed().as_secs_f64(),
                    "errors": self.errors,
                });
                self.damage.write_to(&mut summary);
                json!({ "summary": summary })
            }
            Err(e) => {
                let cut = *self.cut.lock();
                let (code, message) = describe(&e, cut, service.config.max_upload_memory);
                // The whole story goes to the log, under the id the client sees.
                tracing::warn!(request_id = %self.ctx.id, client = %self.ctx.client, code = code.as_str(), error = %e, "upload failed");
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

    /// The error line of an upload whose video needs more memory than is free, and the end of its decoding.
    fn short_of_memory(&mut self, short: Short) -> String {
        *self.cut.lock() = Some(CutReason::NoMemory(short));
        let refusal = self.service.short_of_memory(short);
        tracing::warn!(request_id = %self.ctx.id, client = %self.ctx.client, code = refusal.code.as_str(), "upload failed: memory");
        let line = refusal.line(&self.ctx.id);
        self.errors.push(line["error"].clone());
        self.stop_decoding();
        if let Some(upload) = self.upload.take() {
            upload.abort();
        }
        format!("{line}\n")
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
    use crate::server::requests::parse_query;
    use crate::settings::config::Config;
    use axum::http::StatusCode;

    fn query(pairs: &[(&str, &str)]) -> String {
        let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        pairs.join("&")
    }

    fn config_for(query: &str, service: &Service) -> Result<(Config, UploadShape), ApiError> {
        operator_config(&upload_query(parse_query(query)?)?.settings, service)
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
