//! Streams' routes and decoding (`fanout.rs` holds the registry and the fan-out): videos whose batches go to
//! consumers that are not their source. `POST /streams` pulls a URL
//! (a camera, an SRT or RTMP feed, an HLS playlist); `POST /videos?detach=true` decouples a pushed upload
//! from its uploader (an encoder that never reads its response). Either way the batch lines are fanned out
//! to every client reading `GET /streams/{id}/batches`: each sees the lines from when it joined, and one
//! that reads too slowly drops to the latest line (told how many it missed) instead of holding the decoder
//! back. `GET /streams` and `GET /streams/{id}` show their state and latency; `DELETE /streams/{id}` stops
//! one.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::Response;
use axum::Extension;
use parking_lot::Mutex;
use serde_json::{json, Value};

use super::budget::UploadShape;
use super::errors::{describe, error_line, ApiError, CutReason};
use super::fanout::{check_id, Stream};
use super::operator::{
    audio_setting, batch_line, operator_config, settle_reservation, BatchSettings,
};
use super::requests::{value, ConsumeParams, JsonBody, Params, StreamBody};
use super::service::{RequestCtx, Service, Slot};
use crate::error::Error;
use crate::error_code::ErrorCode;
use crate::operator::handle::VideoInput;
use crate::report;
use crate::source::url::{redact_url, Reconnect, Scheme, UrlOptions};
use crate::transform::{TransformOptions, Transforms};

/// The largest `POST /streams` body.
pub(crate) const MAX_REQUEST_BYTES: u64 = 64 << 10;

/// What a stream decodes with: its operator, its admission slot (upload slot and memory), and for a detached
/// upload the task reading its body, the bytes read and why the body was cut, if it was.
pub(crate) struct Decoding {
    pub(crate) input: VideoInput,
    pub(crate) slot: Slot,
    pub(crate) shape: UploadShape,
    /// Lines carry each frame's MD5.
    pub(crate) md5: bool,
    #[allow(clippy::type_complexity)]
    pub(crate) upload: Option<(
        tokio::task::JoinHandle<()>,
        Arc<AtomicU64>,
        Arc<Mutex<Option<CutReason>>>,
    )>,
}

/// Runs a stream: polls its operator and publishes a line per batch (with `latency_ms`, the source's
/// latency), an error line if the video fails, and a summary when it ends or is stopped; the operator and
/// the slot are freed then.
pub(crate) async fn pump(service: Arc<Service>, stream: Arc<Stream>, decoding: Decoding) {
    let Decoding {
        input,
        slot,
        shape,
        md5,
        upload,
    } = decoding;
    let input = Arc::new(input);
    let mut stop = stream.stop_signal();
    let mut errors: Vec<Value> = Vec::new();
    let mut trimmed = false;
    let metrics = &service.metrics;
    let stopped = loop {
        let polled = tokio::select! {
            biased;
            reason = stop.wait_for(Option::is_some) => break reason.ok().and_then(|r| *r),
            polled = input.next_batch_async() => polled,
        };
        match polled {
            Ok(Some(batch)) => {
                if !trimmed {
                    trimmed = true;
                    let received = upload
                        .as_ref()
                        .map_or(0, |(_, bytes, _)| bytes.load(Ordering::Relaxed));
                    let settled =
                        settle_reservation(&slot, &shape, &service, received, batch.frame_shape());
                    if let Err(short) = settled {
                        let refusal = service.short_of_memory(short);
                        tracing::warn!(stream = %stream.id, code = refusal.code.as_str(), "stream failed: memory");
                        let line = refusal.line(&stream.id);
                        errors.push(line["error"].clone());
                        stream.publish_error(line);
                        break None;
                    }
                }
                let frames = batch.valid_frames() as u64;
                let mut damage = report::DamageCount::default();
                damage.add(&batch);
                let latency = batch.latency().map(|d| d.as_secs_f64() * 1000.0);
                let mut line = batch_line(&batch, md5);
                if let Some(ms) = latency {
                    line["latency_ms"] = json!(ms);
                }
                drop(batch);
                metrics.frames.inc_by(frames);
                metrics.batches.inc();
                stream.publish_batch(line, frames, damage, latency);
            }
            Ok(None) => break None,
            Err(e) => {
                let cut = upload.as_ref().and_then(|(_, _, cut)| *cut.lock());
                let (code, message) = describe(&e, cut, service.config.max_upload_memory);
                tracing::warn!(stream = %stream.id, code = code.as_str(), error = %e, "stream failed");
                let line = error_line(code, &message, &stream.id);
                errors.push(line["error"].clone());
                stream.publish_error(line);
                if !matches!(e, Error::Video { .. }) {
                    break None;
                }
            }
        }
    };
    // Stop decoding (off the runtime's threads: dropping an operator joins its thread) and reading the body.
    if let Some((task, _, _)) = &upload {
        if stopped.is_some() {
            task.abort();
        }
    }
    drop(tokio::task::spawn_blocking(move || drop(input)));
    if !errors.is_empty() {
        metrics.errors.inc();
    }
    stream.finish(errors, stopped);
    drop(slot);
}

/// The `201 Created` answer with the stream's state and its `Location`.
pub(crate) fn created_response(info: Value) -> Response {
    let location = format!("/streams/{}", info["id"].as_str().unwrap_or_default());
    Response::builder()
        .status(StatusCode::CREATED)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::LOCATION, location)
        .body(Body::from(format!("{}\n", json!({ "stream": info }))))
        .unwrap_or_default()
}

fn json_response(status: StatusCode, value: Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(format!("{value}\n")))
        .unwrap_or_default()
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NoSuchStream,
        format!("no stream has the id '{id}'"),
    )
}

/// A `POST /streams` body, parsed and checked.
struct StreamRequest {
    url: String,
    id: Option<String>,
    label: Option<String>,
    settings: BatchSettings,
    options: UrlOptions,
}

impl StreamRequest {
    /// The request a body asks for, with the checks that span fields.
    fn from_body(body: StreamBody) -> Result<Self, ApiError> {
        let bad = |m: String| ApiError::new(ErrorCode::BadRequest, m);
        let url = value(body.url).ok_or_else(|| bad("the body has no \"url\"".into()))?;
        let mut settings = BatchSettings::default();
        if let Some(n) = value(body.sequence_length) {
            settings.sequence_length = n as usize;
        }
        if let Some(n) = value(body.batch_size) {
            settings.batch_size = n as usize;
        }
        if let Some(policy) = value(body.last_sequence_policy).or(value(body.policy)) {
            settings.policy = policy;
        }
        if let Some(autorotate) = value(body.autorotate) {
            settings.autorotate = autorotate;
        }
        if let Some(strict) = value(body.strict) {
            settings.strict = strict;
        }
        if let Some(md5) = value(body.md5) {
            settings.md5 = md5;
        }
        settings.audio = audio_setting(
            value(body.audio),
            value(body.audio_rate),
            value(body.audio_channels),
        )?;
        let transforms = Transforms::try_from(TransformOptions {
            resize: value(body.resize),
            resize_shorter: value(body.resize_shorter).map(|side| side as u32),
            crop: value(body.crop),
            crop_pos: value(body.crop_pos),
            seed: value(body.seed),
            dtype: value(body.dtype),
            tonemap: value(body.tonemap),
            ..Default::default()
        })
        .map_err(|e| bad(e.into_reason()))?;
        settings.transforms = transforms;
        // FFmpeg's protocols under the host rules; an object store only under the prefixes the server lists
        // (`start`: it would lend the server's credentials).
        let mut options = UrlOptions::new().schemes(Scheme::NETWORK).ranged(false);
        if let Some(t) = value(body.open_timeout) {
            options = options.open_timeout(t);
        }
        if let Some(t) = value(body.read_timeout) {
            options = options.read_timeout(t);
        }
        if let Some(tries) = value(body.reconnect) {
            options = options.reconnect(Reconnect::tries(tries as u32));
        }
        if let Some(transport) = value(body.rtsp_transport) {
            options = options.rtsp_transport(transport);
        }
        if value(body.low_latency) == Some(false) {
            return Err(bad(
                "this server decodes streams with low_latency; it cannot be turned off".into(),
            ));
        }
        options
            .validate()
            .map_err(|e| bad(e.to_string().replace("UrlOptions::", "")))?;
        Ok(Self {
            url,
            id: value(body.id),
            label: value(body.label),
            settings,
            options,
        })
    }
}

/// Refuses URLs that would make the server listen rather than pull (SRT's listener and rendezvous modes,
/// RTMP's and RTSP's `listen`).
fn refuse_listening(url: &str) -> Result<(), ApiError> {
    let query = url
        .split_once('?')
        .map_or("", |(_, q)| q)
        .to_ascii_lowercase();
    let listens = query.split('&').any(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == "mode" && value != "caller") || key == "listen" || key == "rtsp_flags"
    });
    if listens {
        return Err(ApiError::new(ErrorCode::RefusedUrl, "the server pulls streams; a URL that makes it listen (mode=listener, listen) is refused",
        ));
    }
    Ok(())
}

/// `POST /streams`.
pub(crate) async fn create(
    State(service): State<Arc<Service>>,
    Extension(ctx): Extension<RequestCtx>,
    JsonBody(body): JsonBody<StreamBody>,
) -> Response {
    let id = ctx.id.clone();
    match start(service.clone(), ctx, body).await {
        Ok(response) => response,
        Err(refusal) => service.refuse(refusal, &id),
    }
}

async fn start(
    service: Arc<Service>,
    ctx: RequestCtx,
    body: StreamBody,
) -> Result<Response, ApiError> {
    let mut request = StreamRequest::from_body(body)?;
    let (config, shape) = operator_config(&request.settings, &service)?;
    let refused = |m: String| ApiError::new(ErrorCode::RefusedUrl, m);
    let object_store = Scheme::of(&request.url).filter(|s| Scheme::OBJECT_STORES.contains(s));
    if let Some(scheme) = object_store {
        // An object store is read with the server's own credentials and endpoint: only under the prefixes it
        // lists, by byte ranges (the host rules are for hosts a client names; this one is the server's).
        if !service.config.allow_remote.allows(&request.url) {
            return Err(refused(format!(
                "{} URLs are refused unless under a prefix this server lists in --allow-remote{}",
                scheme.as_str(),
                if service.config.allow_remote.is_empty() {
                    " (it lists none)".to_owned()
                } else {
                    format!(" ({})", service.config.allow_remote)
                }
            )));
        }
        request.options = request.options.schemes([scheme]).ranged(true);
    } else {
        let scheme = request
            .options
            .admit(&request.url)
            .map_err(|e| refused(e.into_reason()))?;
        refuse_listening(&request.url)?;
        service
            .config
            .allow_hosts
            .check(&request.url, scheme)
            .await
            .map_err(refused)?;
    }
    // A pulled stream's frame size is not known before it is opened: its ceiling, trimmed at its first batch.
    let slot = service.admit(ctx.client.clone(), service.config.max_upload_memory)?;
    let source = redact_url(&request.url);
    let stream = service.streams.insert(
        request.id,
        request.label.clone(),
        source.clone(),
        (
            request.settings.sequence_length,
            request.settings.batch_size,
        ),
    )?;
    let started = VideoInput::new(config).and_then(|input| {
        let label = request.label.unwrap_or(source);
        input.feed_url(request.url, request.options.label(label))?;
        input.close();
        Ok(input)
    });
    let input = match started {
        Ok(input) => input,
        Err(e) => {
            service.streams.remove(&stream.id);
            tracing::error!(request_id = %ctx.id, error = %e, "could not start a stream");
            return Err(ApiError::new(
                ErrorCode::Internal,
                "the server could not start decoding",
            ));
        }
    };
    tracing::info!(request_id = %ctx.id, client = %ctx.client, stream = %stream.id, "stream started");
    let info = stream.info();
    tokio::spawn(pump(
        service,
        stream,
        Decoding {
            input,
            slot,
            shape,
            md5: request.settings.md5,
            upload: None,
        },
    ));
    Ok(created_response(info))
}

/// `GET /streams`.
pub(crate) async fn list(State(service): State<Arc<Service>>) -> Response {
    json_response(StatusCode::OK, json!({ "streams": service.streams.list() }))
}

/// `GET /streams/{id}`.
pub(crate) async fn show(
    State(service): State<Arc<Service>>,
    Extension(ctx): Extension<RequestCtx>,
    Path(id): Path<String>,
) -> Response {
    match service.streams.get(&id) {
        Some(stream) => json_response(StatusCode::OK, json!({ "stream": stream.info() })),
        None => service.refuse(not_found(&id), &ctx.id),
    }
}

/// `DELETE /streams/{id}`: stops the stream (its consumers get the summary, with `"stopped": "deleted"`) and
/// forgets it.
pub(crate) async fn delete(
    State(service): State<Arc<Service>>,
    Extension(ctx): Extension<RequestCtx>,
    Path(id): Path<String>,
) -> Response {
    match service.streams.remove(&id) {
        Some(_) => {
            tracing::info!(request_id = %ctx.id, client = %ctx.client, stream = %id, "stream deleted");
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Body::empty())
                .unwrap_or_default()
        }
        None => service.refuse(not_found(&id), &ctx.id),
    }
}

/// `GET /streams/{id}/batches[?wait=S]`: NDJSON, one line per batch from now on (a line after a drop carries
/// `"missed": N`), an error line if the video fails, and the summary (with this consumer's `missed` in all).
/// `wait` (seconds, at most 60) waits for a stream to take this id, and joins it before its first line, so
/// that a consumer connected before its source (a detached upload with a chosen id) gets every batch.
pub(crate) async fn consume(
    State(service): State<Arc<Service>>,
    Extension(ctx): Extension<RequestCtx>,
    Path(id): Path<String>,
    Params(params): Params<ConsumeParams>,
) -> Response {
    let wait = value(params.wait);
    if wait.is_some() {
        if let Err(refusal) = check_id(&id) {
            return service.refuse(refusal, &ctx.id);
        }
    }
    let Some(consumer) = service
        .streams
        .join_or_wait(&id, wait.unwrap_or_default())
        .await
    else {
        return service.refuse(not_found(&id), &ctx.id);
    };
    let lines = futures_util::stream::unfold(consumer, |mut c| async move {
        let line = c.next_line().await?;
        Some((Ok::<_, Infallible>(Bytes::from(line)), c))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .body(Body::from_stream(lines))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::requests::{parse_json, Described};
    use crate::settings::url::RtspTransport;

    fn request(body: Value) -> Result<StreamRequest, String> {
        parse_json(body.to_string().as_bytes(), StreamBody::EXPECTED)
            .and_then(StreamRequest::from_body)
            .map_err(|e| e.message)
    }

    #[test]
    fn stream_requests_are_checked_field_by_field() {
        let ok = request(json!({
            "url": "rtsp://cam/1", "id": "cam-1", "sequence_length": 8, "batch_size": 2,
            "policy": "pad", "resize": [320, 240], "crop": [224, 224], "crop_pos": "random",
            "open_timeout": 2.5, "read_timeout": 1, "reconnect": 0, "rtsp_transport": "udp",
            "dtype": "uint16", "tonemap": "mobius:param=0.4", "md5": true, "audio": true, "audio_rate": 16000,
            "audio_channels": 1
        }))
        .unwrap();
        assert_eq!(
            ok.settings.audio,
            Some(crate::Audio::new().sample_rate(16_000).channels(1))
        );
        assert_eq!(ok.settings.transforms.dtype, crate::DType::U16);
        assert_eq!(
            ok.settings.transforms.tonemap,
            Some(crate::ToneMap::new(crate::ToneMapOp::Mobius).with_param(0.4))
        );
        assert!(ok.settings.md5);
        assert_eq!(ok.settings.sequence_length, 8);
        assert_eq!(ok.settings.batch_size, 2);
        assert_eq!(ok.id.as_deref(), Some("cam-1"));
        assert_eq!(ok.options.reconnect, Reconnect::Never);
        assert_eq!(ok.options.rtsp_transport, RtspTransport::Udp);
        for (body, expected) in [
            (json!([1]), "must be a JSON object"),
            (json!({}), "no \"url\""),
            (json!({"url": 3}), "url must be a string"),
            (
                json!({"url": "rtsp://h/", "bogus": 1}),
                "unknown field 'bogus'",
            ),
            (
                json!({"url": "rtsp://h/", "sequence_length": -1}),
                "integer from 0",
            ),
            (
                json!({"url": "rtsp://h/", "resize": [1]}),
                "[width, height]",
            ),
            (
                json!({"url": "rtsp://h/", "resize": [2, 2], "resize_shorter": 3}),
                "resize and resize_shorter are exclusive",
            ),
            (json!({"url": "rtsp://h/", "crop_pos": "left"}), "crop_pos"),
            (json!({"url": "rtsp://h/", "open_timeout": 0.01}), "100 ms"),
            (json!({"url": "rtsp://h/", "reconnect": 5000}), "0 to 1000"),
            (
                json!({"url": "rtsp://h/", "rtsp_transport": "http"}),
                "rtsp_transport",
            ),
            (
                json!({"url": "rtsp://h/", "dtype": "int8"}),
                "dtype is 'int8'",
            ),
            (
                json!({"url": "rtsp://h/", "dtype": 16}),
                "dtype must be a string",
            ),
            (
                json!({"url": "rtsp://h/", "tonemap": "clip:param=0"}),
                "tonemap param is 0 for clip",
            ),
            (json!({"url": "rtsp://h/", "md5": "yes"}), "md5 must be"),
            (
                json!({"url": "rtsp://h/", "audio_rate": 16000}),
                "audio_rate and audio_channels are for audio=true",
            ),
            (
                json!({"url": "rtsp://h/", "audio": true, "audio_rate": 10}),
                "audio sample_rate is 10; allowed: 1000 to 384000",
            ),
            (
                json!({"url": "rtsp://h/", "low_latency": false}),
                "cannot be turned off",
            ),
        ] {
            let err = request(body.clone()).err().unwrap_or_default();
            assert!(err.contains(expected), "{body}: {err}");
        }
    }

    #[test]
    fn urls_that_would_make_the_server_listen_are_refused() {
        for url in [
            "srt://1.2.3.4:9000?mode=listener",
            "srt://1.2.3.4:9000?latency=20&mode=rendezvous",
            "rtmp://1.2.3.4/app?listen=1",
        ] {
            assert!(refuse_listening(url).is_err(), "{url}");
        }
        for url in ["srt://1.2.3.4:9000?mode=caller", "rtsp://1.2.3.4/cam?x=1"] {
            assert!(refuse_listening(url).is_ok(), "{url}");
        }
    }
}
