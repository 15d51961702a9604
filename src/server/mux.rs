//! `GET /mux?streams=a,b,c`: batches across the service's live streams (pulled URLs and detached uploads),
//! by the mux's own rule (`crate::mux::gather::Gather`: out when `batch_size` sequences are ready
//! or `deadline` milliseconds after the oldest was, one sequence shape a batch, oldest first, every frame or
//! latest only), as NDJSON:
//!
//! - `{"batch": N, "sequences": [{"stream": id, "label", "first_frame", "frames", "pts", "shape", …,
//!   "latency_ms": the source's latency, "wait_ms": the time it waited for its batch}]}`;
//! - `{"ended": {"stream": id, "errors": […], "missed": M}}` after a stream's last sequence (its errors, if it
//!   failed; `"stopped"` when it was deleted or the server shut down): a stream ends alone;
//! - `{"summary": {"batches", "sequences", "streams": [{"stream", "sequences", "dropped", "missed"}],
//!   "errors": […]}}` once every chosen stream has ended.
//!
//! The mux reads each stream as one more consumer of its fan-out, so, as for every consumer, it never slows a
//! stream's decoder: in every-frame mode a stream whose queue is full is not read until a batch goes out,
//! and lines it falls more than the fan-out's backlog behind are `missed` (counted per stream), never
//! silently lost. Latest-only keeps each stream's newest sequence and counts the `dropped`. The queue's
//! memory is bounded ([`QUEUE_BYTES`]) and reserved from the pool and the client's share when the request is
//! admitted; the route is behind the same tokens as every route.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::Response;
use axum::Extension;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use serde_json::{json, Value};

use super::errors::ApiError;
use super::fanout::{check_id, Consumer};
use super::requests::{value, MuxParams, Params};
use super::service::{ClientMemory, RequestCtx, Service};
use crate::error_code::ErrorCode;
use crate::mux::gather::{Gather, Pick, Ready};
use crate::mux::{MuxConfig, MuxPolicy};
use crate::report::BatchLine;

/// The most streams one request batches across.
pub(crate) const MAX_STREAMS: usize = 64;
/// The largest batch the route makes, below the library's [`MuxConfig::MAX_BATCH_SIZE`]: its answer is a line
/// per batch, and a line of that many sequences stays well under a megabyte.
pub(crate) const MAX_BATCH: usize = 1024;
/// A request's queue of sequences waiting for their batch, at most (every frame): reserved at admission.
pub(crate) const QUEUE_BYTES: u64 = 1 << 20;
/// What a sequence line gains in the mux (its stream, label, latency and wait), at most, in bytes.
const ADDED_BYTES: usize = 160;

/// A `GET /mux` query, checked: the streams, the batcher's validated settings (what the gather runs with) and
/// how long to wait for streams not there yet.
#[derive(Debug)]
struct MuxRequest {
    streams: Vec<String>,
    config: MuxConfig,
    wait: Duration,
}

impl MuxRequest {
    fn from_params(params: MuxParams) -> Result<Self, ApiError> {
        let bad = |message: String| ApiError::new(ErrorCode::BadRequest, message);
        let streams = value(params.streams).ok_or_else(|| {
            bad("streams is required: the ids of the streams to batch across (a,b,c)".into())
        })?;
        if streams.len() > MAX_STREAMS {
            return Err(bad(format!(
                "streams names {} streams; allowed: 1 to {MAX_STREAMS}",
                streams.len()
            )));
        }
        for (i, id) in streams.iter().enumerate() {
            check_id(id)?;
            if streams[..i].contains(id) {
                return Err(bad(format!("streams names '{id}' twice")));
            }
        }
        let defaults = MuxConfig::default();
        let batch_size = value(params.batch_size).unwrap_or(defaults.max_batch_size);
        if !(1..=MAX_BATCH).contains(&batch_size) {
            return Err(bad(format!(
                "batch_size is {batch_size}; allowed: 1 to {MAX_BATCH}"
            )));
        }
        let config = MuxConfig::new(
            batch_size,
            value(params.deadline).unwrap_or(defaults.deadline),
        )
        .policy(value(params.policy).unwrap_or(defaults.policy));
        config.validate().map_err(|e| bad(e.to_string()))?;
        Ok(Self {
            streams,
            config,
            wait: value(params.wait).unwrap_or_default(),
        })
    }
}

/// `GET /mux`: joins every chosen stream (waiting up to `wait` seconds for those not there yet; 404 for one
/// that never came) and answers with the batches across them.
pub(crate) async fn consume_mux(
    State(service): State<Arc<Service>>,
    Extension(ctx): Extension<RequestCtx>,
    Params(params): Params<MuxParams>,
) -> Response {
    let request = match MuxRequest::from_params(params) {
        Ok(request) => request,
        Err(refusal) => return service.refuse(refusal, &ctx.id),
    };
    let memory = match service.reserve_memory(ctx.client.clone(), QUEUE_BYTES) {
        Ok(memory) => memory,
        Err(refusal) => return service.refuse(refusal, &ctx.id),
    };
    let joined = futures_util::future::join_all(
        request
            .streams
            .iter()
            .map(|id| service.streams.join_or_wait(id, request.wait)),
    )
    .await;
    let mut consumers = Vec::with_capacity(joined.len());
    for (id, consumer) in request.streams.iter().zip(joined) {
        match consumer {
            Some(consumer) => consumers.push(consumer),
            None => {
                let refusal = ApiError::new(
                    ErrorCode::NoSuchStream,
                    format!("no stream has the id '{id}'"),
                );
                return service.refuse(refusal, &ctx.id);
            }
        }
    }
    tracing::info!(request_id = %ctx.id, streams = ?request.streams, batch_size = request.config.max_batch_size,
        deadline_ms = request.config.deadline.as_secs_f64() * 1000.0, policy = ?request.config.policy, "mux consumer joined");
    let batcher = Batcher::new(request, consumers, memory);
    let lines = futures_util::stream::unfold(batcher, |mut b| async move {
        let line = b.next_line().await?;
        Some((Ok::<_, Infallible>(Bytes::from(line)), b))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .body(Body::from_stream(lines))
        .unwrap_or_default()
}

/// A sequence waiting for its batch, and the bytes it counts against the queue.
struct Entry {
    value: Value,
    bytes: u64,
}

/// One chosen stream, as the mux sees it.
struct Source {
    id: String,
    /// Its consumer while the mux is not reading it (its queue is full); `None` while a read is pending or
    /// once it has ended.
    parked: Option<Consumer>,
    sequences: u64,
    missed: u64,
    errors: Vec<Value>,
    stopped: Option<Value>,
}

/// A read of one stream's next line, owning its consumer.
type Read = BoxFuture<'static, (usize, Consumer, Option<(Value, usize)>)>;

fn read(index: usize, mut consumer: Consumer) -> Read {
    async move {
        let line = consumer.next_value().await;
        (index, consumer, line)
    }
    .boxed()
}

/// The state of one `GET /mux` answer: each stream's reads, the queues, and what was given.
struct Batcher {
    sources: Vec<Source>,
    gather: Gather<Entry>,
    reads: FuturesUnordered<Read>,
    /// Streams whose summary came, told once their queued sequences are out.
    ended: VecDeque<usize>,
    /// Streams ended and told.
    told: usize,
    /// Bytes of the sequences queued, counted in every-frame mode (latest only holds one a stream).
    queued_bytes: u64,
    every_frame: bool,
    batches: u64,
    sequences: u64,
    done: bool,
    _memory: ClientMemory,
}

impl Batcher {
    fn new(request: MuxRequest, consumers: Vec<Consumer>, memory: ClientMemory) -> Self {
        let mut gather = Gather::new(&request.config);
        let reads = FuturesUnordered::new();
        let sources = request
            .streams
            .into_iter()
            .zip(consumers)
            .enumerate()
            .map(|(i, (id, consumer))| {
                gather.add(i as u64);
                reads.push(read(i, consumer));
                Source {
                    id,
                    parked: None,
                    sequences: 0,
                    missed: 0,
                    errors: Vec::new(),
                    stopped: None,
                }
            })
            .collect();
        Self {
            sources,
            gather,
            reads,
            ended: VecDeque::new(),
            told: 0,
            queued_bytes: 0,
            every_frame: request.config.policy == MuxPolicy::EveryFrame,
            batches: 0,
            sequences: 0,
            done: false,
            _memory: memory,
        }
    }

    /// The answer's next line (with its newline); `None` after the summary.
    async fn next_line(&mut self) -> Option<String> {
        loop {
            if self.done {
                return None;
            }
            if let Some(line) = self.due(Instant::now()) {
                return Some(line.to_string() + "\n");
            }
            self.resume();
            let until = match self.gather.pick(Instant::now()) {
                Pick::Until(at) => Some(tokio::time::Instant::from_std(at)),
                _ => None,
            };
            let sleep = async {
                match until {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                Some((i, consumer, line)) = self.reads.next(), if !self.reads.is_empty() => {
                    self.receive(i, consumer, line);
                }
                () = sleep, if until.is_some() => {}
                // Nothing to read and nothing queued: cannot happen (`due` gives the summary once every stream
                // has ended); ending the answer beats waiting forever.
                else => self.done = true,
            }
        }
    }

    /// What is due now: a stream's end once its queue is out, a batch (full or at its deadline), or the
    /// summary once every stream has ended.
    fn due(&mut self, now: Instant) -> Option<Value> {
        if let Some(pos) = self
            .ended
            .iter()
            .position(|&i| self.gather.queued_for(i as u64) == 0)
        {
            let i = self.ended.remove(pos)?;
            self.gather.remove(i as u64);
            self.told += 1;
            let source = &self.sources[i];
            let mut ended = json!({
                "stream": source.id,
                "errors": source.errors,
                "missed": source.missed,
            });
            if let Some(stopped) = &source.stopped {
                ended["stopped"] = stopped.clone();
            }
            return Some(json!({ "ended": ended }));
        }
        if self.gather.pick(now) == Pick::Now {
            let taken = self.gather.take();
            self.batches += 1;
            let sequences: Vec<Value> = taken
                .into_iter()
                .map(|(_, ready)| {
                    if self.every_frame {
                        self.queued_bytes -= ready.item.bytes;
                    }
                    let mut value = ready.item.value;
                    value["wait_ms"] =
                        json!(now.saturating_duration_since(ready.at).as_secs_f64() * 1000.0);
                    value
                })
                .collect();
            self.sequences += sequences.len() as u64;
            return Some(json!({ "batch": self.batches - 1, "sequences": sequences }));
        }
        if self.told == self.sources.len() && !self.done {
            self.done = true;
            let streams: Vec<Value> = self
                .sources
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    json!({
                        "stream": s.id,
                        "sequences": s.sequences,
                        "dropped": self.gather.dropped(i as u64),
                        "missed": s.missed,
                    })
                })
                .collect();
            let errors: Vec<Value> = self
                .sources
                .iter()
                .flat_map(|s| {
                    s.errors.iter().map(move |e| {
                        let mut e = e.clone();
                        e["stream"] = json!(s.id);
                        e
                    })
                })
                .collect();
            return Some(json!({ "summary": {
                "batches": self.batches,
                "sequences": self.sequences,
                "streams": streams,
                "errors": errors,
            }}));
        }
        None
    }

    /// Whether stream `i` may be read now: latest only always; every frame while its queue has room and the
    /// request's queue is under its bytes.
    fn has_room(&self, i: usize) -> bool {
        !self.every_frame || (self.gather.has_room(i as u64) && self.queued_bytes < QUEUE_BYTES)
    }

    /// Reads again the streams that have room now.
    fn resume(&mut self) {
        for i in 0..self.sources.len() {
            if self.sources[i].parked.is_some() && self.has_room(i) {
                if let Some(consumer) = self.sources[i].parked.take() {
                    self.reads.push(read(i, consumer));
                }
            }
        }
    }

    /// A line from stream `i`: its batch's sequences are queued, an error is kept for its end, its summary
    /// ends it.
    fn receive(&mut self, i: usize, consumer: Consumer, line: Option<(Value, usize)>) {
        let Some((mut line, line_bytes)) = line else {
            // Its summary was read already; nothing more comes.
            return;
        };
        let now = Instant::now();
        let source = &mut self.sources[i];
        if let Some(missed) = line.get("missed").and_then(Value::as_u64) {
            source.missed += missed;
        }
        if let Some(summary) = line.get_mut("summary") {
            if let Some(Value::Array(errors)) = summary.get_mut("errors").map(Value::take) {
                // The error lines came before; the summary's list is the same, kept if none was read.
                if source.errors.is_empty() {
                    source.errors = errors;
                }
            }
            if let Some(stopped) = summary.get("stopped") {
                source.stopped = Some(stopped.clone());
            }
            if let Some(missed) = summary.get("missed").and_then(Value::as_u64) {
                source.missed = source.missed.max(missed);
            }
            self.ended.push_back(i);
            return; // the consumer is dropped: the stream has ended
        }
        if let Some(error) = line.get("error") {
            source.errors.push(error.clone());
        } else if let Ok(batch) = serde_json::from_value::<BatchLine>(line) {
            // Each sequence counts its share of the line as published, and what is added to it.
            let bytes = (line_bytes / batch.sequences.len().max(1) + ADDED_BYTES) as u64;
            for sequence in batch.sequences {
                let shape = sequence.shape;
                let mut value = serde_json::to_value(sequence).unwrap_or(Value::Null);
                value["stream"] = json!(source.id);
                value["label"] = json!(batch.label);
                if let Some(latency) = batch.latency_ms {
                    value["latency_ms"] = json!(latency);
                }
                if let Some(gap) = &batch.gap {
                    value["gap"] = json!(gap);
                }
                source.sequences += 1;
                if self.every_frame {
                    self.queued_bytes += bytes;
                }
                self.gather.push(
                    i as u64,
                    Ready {
                        item: Entry { value, bytes },
                        key: (shape, String::new()),
                        at: now,
                    },
                );
            }
        }
        if self.has_room(i) {
            self.reads.push(read(i, consumer));
        } else {
            self.sources[i].parked = Some(consumer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::requests::parse_query;

    fn request(query: &str) -> Result<MuxRequest, String> {
        parse_query::<MuxParams>(query)
            .and_then(MuxRequest::from_params)
            .map_err(|e| e.message)
    }

    #[test]
    fn mux_queries_are_checked_with_what_they_allow() {
        let ok =
            request("streams=a,b&batch_size=4&deadline=12.5&policy=latest_only&wait=2").unwrap();
        assert_eq!(ok.streams, ["a", "b"]);
        assert_eq!(
            ok.config,
            MuxConfig::new(4, Duration::from_micros(12_500)).policy(MuxPolicy::LatestOnly)
        );
        assert_eq!(ok.wait, Duration::from_secs(2));
        let defaults = request("streams=a").unwrap();
        assert_eq!(
            defaults.config,
            MuxConfig::new(16, Duration::from_millis(33)).policy(MuxPolicy::EveryFrame)
        );
        let many = (0..65)
            .map(|i| format!("s{i}"))
            .collect::<Vec<_>>()
            .join(",");
        for (query, expected) in [
            ("", "streams is required"),
            ("streams=a,,b", "must be stream ids separated by commas"),
            ("streams=a,a", "names 'a' twice"),
            ("streams=a/b", "a stream id is 1 to 64 of"),
            (&format!("streams={many}"), "allowed: 1 to 64"),
            ("streams=a&batch_size=0", "allowed: 1 to 1024"),
            ("streams=a&batch_size=5000", "allowed: 1 to 1024"),
            (
                "streams=a&deadline=0",
                "allowed: more than 0, at most 1 hour",
            ),
            (
                "streams=a&deadline=-1",
                "deadline must be milliseconds, got '-1'",
            ),
            (
                "streams=a&policy=newest",
                "allowed: 'every_frame', 'latest_only'",
            ),
            ("streams=a&wait=100", "wait must be 0 to 60 seconds"),
            (
                "streams=a&bogus=1",
                "allowed: streams, batch_size, deadline, policy, wait",
            ),
        ] {
            let message = request(query).unwrap_err();
            assert!(message.contains(expected), "{query}: {message}");
        }
    }
}
