//! The fan-out of streams (`streams.rs` has their routes and decoding): the registry of streams by id, each
//! stream's state and its broadcast of lines, and its consumers. A consumer gets the lines from when it joined
//! (a consumer waiting for an id joins when a stream takes it, before its first line); one that falls more than
//! [`CONSUMER_BACKLOG`] lines behind drops to the latest and is told how many it missed. Nothing here waits on
//! a consumer: the decoder publishes and goes on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::sync::{broadcast, oneshot, watch};

use super::errors::ApiError;
use crate::error_code::ErrorCode;
use crate::report::DamageCount;

/// Lines a consumer may fall behind before it drops to the latest one: about 2 s of a 120-batch/s stream, so
/// that a consumer on a busy machine or a congested link rides out a hiccup (each line is a batch's JSON, a
/// few hundred bytes: 256 cost well under 1 MiB a stream).
const CONSUMER_BACKLOG: usize = 256;
/// Ended streams kept (for `GET /streams` and late consumers) until deleted; beyond it the oldest go.
const ENDED_KEPT: usize = 64;
/// The longest id a client may choose.
const MAX_ID_LEN: usize = 64;

/// One line for consumers, serialized once.
struct Line {
    value: Value,
    text: String,
    /// The stream's last line (its summary).
    last: bool,
}

impl Line {
    fn new(value: Value, last: bool) -> Arc<Self> {
        let text = value.to_string();
        Arc::new(Self { value, text, last })
    }
}

/// Where a stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Running,
    Ended,
    Failed,
    Stopped,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Ended => "ended",
            Status::Failed => "failed",
            Status::Stopped => "stopped",
        }
    }
}

struct Progress {
    /// The fan-out; `None` once the stream has ended.
    sender: Option<broadcast::Sender<Arc<Line>>>,
    /// The summary, once the stream has ended: what a consumer joining later gets.
    last: Option<Arc<Line>>,
    status: Status,
    frames: u64,
    batches: u64,
    /// Damaged frames and holes the batches reported, counted in the summary.
    damage: DamageCount,
    latency_ms: Option<f64>,
    error: Option<Value>,
    ended: Option<Instant>,
}

/// One stream.
pub(crate) struct Stream {
    pub(crate) id: String,
    label: Option<String>,
    /// The URL without credentials or query, or `upload`.
    source: String,
    sequence_length: usize,
    batch_size: usize,
    started: Instant,
    /// Set to the reason when the stream is stopped (deleted, or the server shutting down).
    stop: watch::Sender<Option<&'static str>>,
    consumers: AtomicU64,
    state: Mutex<Progress>,
}

impl Stream {
    /// The stream as `GET /streams` shows it.
    pub(crate) fn info(&self) -> Value {
        let state = self.state.lock();
        let mut info = json!({
            "id": self.id,
            "label": self.label,
            "source": self.source,
            "state": state.status.as_str(),
            "sequence_length": self.sequence_length,
            "batch_size": self.batch_size,
            "frames": state.frames,
            "batches": state.batches,
            "latency_ms": state.latency_ms,
            "consumers": self.consumers.load(Ordering::Relaxed),
            "seconds": state.ended.unwrap_or_else(Instant::now).duration_since(self.started).as_secs_f64(),
        });
        if let Some(error) = &state.error {
            info["error"] = error.clone();
        }
        info
    }

    /// The stop signal: set to the reason when the stream is stopped.
    pub(crate) fn stop_signal(&self) -> watch::Receiver<Option<&'static str>> {
        self.stop.subscribe()
    }

    /// Publishes a batch line of `frames` real frames and the source's `latency` (ms).
    pub(crate) fn publish_batch(
        &self,
        line: Value,
        frames: u64,
        damage: DamageCount,
        latency: Option<f64>,
    ) {
        {
            let mut state = self.state.lock();
            state.frames += frames;
            state.batches += 1;
            state.damage += damage;
            if latency.is_some() {
                state.latency_ms = latency;
            }
        }
        self.publish(Line::new(line, false));
    }

    /// Publishes an error line (`{"error": {...}}`), kept as the stream's last error.
    pub(crate) fn publish_error(&self, line: Value) {
        self.state.lock().error = Some(line["error"].clone());
        self.publish(Line::new(line, false));
    }

    /// Ends the stream: its summary (with `errors`, and `stopped` when it was stopped) goes to the consumers and
    /// stays for those who join later; the fan-out closes.
    pub(crate) fn finish(&self, errors: Vec<Value>, stopped: Option<&'static str>) {
        let mut state = self.state.lock();
        let failed = !errors.is_empty();
        let mut summary = json!({
            "frames": state.frames,
            "batches": state.batches,
            "seconds": self.started.elapsed().as_secs_f64(),
            "errors": errors,
        });
        state.damage.write_to(&mut summary);
        if let Some(reason) = stopped {
            summary["stopped"] = json!(reason);
        }
        tracing::info!(stream = %self.id, frames = state.frames, batches = state.batches, stopped, "stream done");
        let last = Line::new(json!({ "summary": summary }), true);
        state.status = match (stopped, failed) {
            (Some(_), _) => Status::Stopped,
            (None, false) => Status::Ended,
            (None, true) => Status::Failed,
        };
        state.ended = Some(Instant::now());
        state.last = Some(last.clone());
        if let Some(sender) = state.sender.take() {
            let _ = sender.send(last);
        }
    }

    /// Sends a line to the consumers connected now (none: it is dropped, not kept).
    fn publish(&self, line: Arc<Line>) {
        if let Some(sender) = &self.state.lock().sender {
            let _ = sender.send(line);
        }
    }
}

/// The streams of a running service.
pub(crate) struct Streams {
    registry: Mutex<Registry>,
    next: AtomicU64,
}

#[derive(Default)]
struct Registry {
    map: HashMap<String, Arc<Stream>>,
    /// Consumers waiting for a stream id (`?wait=`): joined when a stream takes the id, before its first line.
    waiting: HashMap<String, Vec<oneshot::Sender<Consumer>>>,
}

impl Streams {
    pub(crate) fn new() -> Self {
        Self {
            registry: Mutex::new(Registry::default()),
            next: AtomicU64::new(1),
        }
    }

    /// Registers a running stream under `id` (or a new id): 400 for an id that is not 1 to 64 of
    /// `A-Z a-z 0-9 . _ -`, 409 for the id of a running stream (an ended one is replaced). Consumers waiting
    /// for the id join it now, so that they get every line.
    pub(crate) fn insert(
        &self,
        id: Option<String>,
        label: Option<String>,
        source: String,
        (sequence_length, batch_size): (usize, usize),
    ) -> Result<Arc<Stream>, ApiError> {
        if let Some(id) = &id {
            check_id(id)?;
        }
        if label.as_ref().is_some_and(|l| l.len() > 256) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "a label is at most 256 bytes",
            ));
        }
        let mut registry = self.registry.lock();
        let id = match id {
            Some(id) => {
                if registry
                    .map
                    .get(&id)
                    .is_some_and(|s| s.state.lock().status == Status::Running)
                {
                    return Err(ApiError::new(
                        ErrorCode::StreamExists,
                        format!("a stream with the id '{id}' is running"),
                    ));
                }
                id
            }
            None => loop {
                let id = format!("s{}", self.next.fetch_add(1, Ordering::Relaxed));
                if !registry.map.contains_key(&id) {
                    break id;
                }
            },
        };
        let (sender, _) = broadcast::channel(CONSUMER_BACKLOG);
        let stream = Arc::new(Stream {
            id: id.clone(),
            label,
            source,
            sequence_length,
            batch_size,
            started: Instant::now(),
            stop: watch::Sender::new(None),
            consumers: AtomicU64::new(0),
            state: Mutex::new(Progress {
                sender: Some(sender),
                last: None,
                status: Status::Running,
                frames: 0,
                batches: 0,
                damage: DamageCount::default(),
                latency_ms: None,
                error: None,
                ended: None,
            }),
        });
        for waiter in registry.waiting.remove(&id).unwrap_or_default() {
            if !waiter.is_closed() {
                let _ = waiter.send(Consumer::join(stream.clone()));
            }
        }
        registry.map.insert(id, stream.clone());
        // Ended streams beyond the limit go, oldest first.
        let mut ended: Vec<(Instant, String)> = registry
            .map
            .values()
            .filter_map(|s| s.state.lock().ended.map(|t| (t, s.id.clone())))
            .collect();
        if ended.len() > ENDED_KEPT {
            ended.sort_unstable();
            for (_, id) in &ended[..ended.len() - ENDED_KEPT] {
                registry.map.remove(id);
            }
        }
        Ok(stream)
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Stream>> {
        self.registry.lock().map.get(id).cloned()
    }

    /// A consumer of the stream `id`, waiting up to `wait` for a stream to take the id.
    pub(crate) async fn join_or_wait(&self, id: &str, wait: Duration) -> Option<Consumer> {
        // Declared before the receiver, so dropped after it: however the wait ends (joined, timed out, or the
        // client gone and this future dropped), the closed entry is removed.
        let _cleanup = WaitCleanup { streams: self, id };
        let joined = {
            let mut registry = self.registry.lock();
            match registry.map.get(id) {
                Some(stream) => return Some(Consumer::join(stream.clone())),
                None if wait.is_zero() => return None,
                None => {
                    let (sender, receiver) = oneshot::channel();
                    registry
                        .waiting
                        .entry(id.to_owned())
                        .or_default()
                        .push(sender);
                    receiver
                }
            }
        };
        tokio::time::timeout(wait, joined).await.ok()?.ok()
    }

    /// Streams known, running or ended.
    pub(crate) fn count(&self) -> usize {
        self.registry.lock().map.len()
    }

    /// Consumers waiting now for a stream id to be taken.
    pub(crate) fn waiting_consumers(&self) -> usize {
        self.registry
            .lock()
            .waiting
            .values()
            .flatten()
            .filter(|w| !w.is_closed())
            .count()
    }

    /// Removes a stream, stopping it when it runs.
    pub(crate) fn remove(&self, id: &str) -> Option<Arc<Stream>> {
        let stream = self.registry.lock().map.remove(id)?;
        stream.stop.send_replace(Some("deleted"));
        Some(stream)
    }

    /// Stops every stream pulled by URL (the server is shutting down): their consumers get the summary.
    /// Detached uploads go on as uploads do, within the shutdown grace.
    pub(crate) fn stop_pulled(&self) {
        for stream in self.registry.lock().map.values() {
            if stream.source != "upload" {
                stream.stop.send_replace(Some("shutdown"));
            }
        }
    }

    pub(crate) fn list(&self) -> Vec<Value> {
        let mut streams: Vec<Arc<Stream>> = self.registry.lock().map.values().cloned().collect();
        streams.sort_by_key(|s| s.started);
        streams.iter().map(|s| s.info()).collect()
    }
}

/// Removes the closed entries of consumers waiting for `id` when dropped.
struct WaitCleanup<'a> {
    streams: &'a Streams,
    id: &'a str,
}

impl Drop for WaitCleanup<'_> {
    fn drop(&mut self) {
        let mut registry = self.streams.registry.lock();
        if let Some(waiting) = registry.waiting.get_mut(self.id) {
            waiting.retain(|w| !w.is_closed());
            if waiting.is_empty() {
                registry.waiting.remove(self.id);
            }
        }
    }
}

/// 400 for an id that is not 1 to 64 of `A-Z a-z 0-9 . _ -`.
pub(crate) fn check_id(id: &str) -> Result<(), ApiError> {
    let valid = (1..=MAX_ID_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if valid {
        Ok(())
    } else {
        Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("a stream id is 1 to {MAX_ID_LEN} of A-Z a-z 0-9 . _ -"),
        ))
    }
}

/// One consumer of a stream.
pub(crate) struct Consumer {
    stream: Arc<Stream>,
    /// `None` when the stream had ended when the consumer joined: then only `last` is sent.
    receiver: Option<broadcast::Receiver<Arc<Line>>>,
    last: Option<Arc<Line>>,
    /// Lines dropped since the last one sent, and in all.
    pending: u64,
    missed: u64,
    done: bool,
}

impl Consumer {
    fn join(stream: Arc<Stream>) -> Self {
        let (receiver, last) = {
            let state = stream.state.lock();
            match &state.sender {
                Some(sender) => (Some(sender.subscribe()), None),
                None => (None, state.last.clone()),
            }
        };
        stream.consumers.fetch_add(1, Ordering::Relaxed);
        Self {
            stream,
            receiver,
            last,
            pending: 0,
            missed: 0,
            done: false,
        }
    }

    /// The consumer's next line (with its newline), `None` after the summary.
    pub(crate) async fn next_line(&mut self) -> Option<String> {
        let line = self.next_shared().await?;
        let text = match self.annotate(&line) {
            None => line.text.clone(),
            Some(value) => value.to_string(),
        };
        Some(text + "\n")
    }

    /// The consumer's next line as a JSON value (with the same `missed` counts as
    /// [`next_line`](Self::next_line)) and the length of its text as published; `None` after the summary.
    pub(crate) async fn next_value(&mut self) -> Option<(Value, usize)> {
        let line = self.next_shared().await?;
        let value = self.annotate(&line).unwrap_or_else(|| line.value.clone());
        Some((value, line.text.len()))
    }

    /// The next line as published (counting what was dropped before it), `None` after the summary.
    async fn next_shared(&mut self) -> Option<Arc<Line>> {
        if self.done {
            return None;
        }
        let Some(receiver) = &mut self.receiver else {
            self.done = true;
            return self.last.take();
        };
        loop {
            match receiver.recv().await {
                Ok(line) => return Some(line),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    // Too slow: drop to the latest line.
                    self.pending += n;
                    while receiver.len() > 1 {
                        match receiver.try_recv() {
                            Ok(_) => self.pending += 1,
                            Err(broadcast::error::TryRecvError::Lagged(n)) => self.pending += n,
                            Err(_) => break,
                        }
                    }
                }
                Err(broadcast::error::RecvError::Closed) => {
                    // The summary is always sent before the fan-out closes; this is for safety.
                    self.done = true;
                    return self.stream.state.lock().last.clone();
                }
            }
        }
    }

    /// Counts `line` as sent: the summary carries this consumer's `missed` in all, and a line after dropped
    /// ones says how many; `None` when the line goes as published.
    fn annotate(&mut self, line: &Line) -> Option<Value> {
        self.missed += self.pending;
        let pending = std::mem::take(&mut self.pending);
        if line.last {
            self.done = true;
            let mut value = line.value.clone();
            value["summary"]["missed"] = json!(self.missed);
            Some(value)
        } else if pending > 0 {
            let mut value = line.value.clone();
            value["missed"] = json!(pending);
            Some(value)
        } else {
            None
        }
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        self.stream.consumers.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn ids_are_checked_and_running_ones_are_not_taken_twice() {
        let streams = Streams::new();
        let settings = (16, 1);
        let a = streams
            .insert(Some("cam.1".into()), None, "upload".into(), settings)
            .unwrap();
        let err = streams
            .insert(Some("cam.1".into()), None, "upload".into(), settings)
            .err()
            .unwrap();
        assert_eq!(err.status, StatusCode::CONFLICT);
        for bad in ["", "a/b", "x y", &"x".repeat(65)] {
            let err = streams
                .insert(Some(bad.into()), None, "upload".into(), settings)
                .err()
                .unwrap();
            assert_eq!(err.status, StatusCode::BAD_REQUEST, "{bad:?}");
        }
        // An ended stream's id can be taken again.
        {
            let mut state = a.state.lock();
            state.status = Status::Ended;
            state.ended = Some(Instant::now());
        }
        streams
            .insert(Some("cam.1".into()), None, "upload".into(), settings)
            .unwrap();
        let generated = streams
            .insert(None, None, "upload".into(), settings)
            .unwrap();
        assert!(generated.id.starts_with('s'));
    }

    #[tokio::test]
    async fn consumers_waiting_for_an_id_leave_no_entry_behind() {
        let streams = Streams::new();
        // Timed out.
        assert!(streams
            .join_or_wait("cam", Duration::from_millis(10))
            .await
            .is_none());
        assert_eq!(streams.registry.lock().waiting.len(), 0);
        // Dropped while waiting (the client went away).
        let waiting = streams.join_or_wait("cam", Duration::from_secs(60));
        assert!(tokio::time::timeout(Duration::from_millis(10), waiting)
            .await
            .is_err());
        assert_eq!(streams.registry.lock().waiting.len(), 0);
        assert_eq!(streams.waiting_consumers(), 0);
        // Joined when the id is taken.
        let (consumer, stream) = tokio::join!(
            streams.join_or_wait("cam", Duration::from_secs(60)),
            async {
                while streams.waiting_consumers() == 0 {
                    tokio::task::yield_now().await;
                }
                streams
                    .insert(Some("cam".into()), None, "upload".into(), (16, 1))
                    .unwrap()
            }
        );
        assert!(consumer.is_some());
        assert_eq!(stream.consumers.load(Ordering::Relaxed), 1);
        assert_eq!(streams.registry.lock().waiting.len(), 0);
    }

    #[tokio::test]
    async fn a_slow_consumer_drops_to_the_latest_line_and_is_told_how_many_it_missed() {
        let streams = Streams::new();
        let stream = streams
            .insert(None, None, "upload".into(), (16, 1))
            .unwrap();
        let mut fast = Consumer::join(stream.clone());
        let mut slow = Consumer::join(stream.clone());
        assert_eq!(stream.consumers.load(Ordering::Relaxed), 2);
        let total = CONSUMER_BACKLOG as u64 * 3;
        for i in 0..total {
            stream.publish(Line::new(json!({ "batch": i }), false));
            // The fast one reads every line as it comes.
            let line: Value = serde_json::from_str(&fast.next_line().await.unwrap()).unwrap();
            assert_eq!(line["batch"], i);
            assert!(line.get("missed").is_none());
        }
        // The slow one gets the latest line, told what it missed.
        let line: Value = serde_json::from_str(&slow.next_line().await.unwrap()).unwrap();
        assert_eq!(line["batch"], total - 1);
        assert_eq!(line["missed"], total - 1);
        stream.publish(Line::new(json!({ "summary": {} }), true));
        let summary: Value = serde_json::from_str(&slow.next_line().await.unwrap()).unwrap();
        assert_eq!(summary["summary"]["missed"], total - 1);
        assert!(slow.next_line().await.is_none());
        let summary: Value = serde_json::from_str(&fast.next_line().await.unwrap()).unwrap();
        assert_eq!(summary["summary"]["missed"], 0);
        drop(slow);
        assert_eq!(stream.consumers.load(Ordering::Relaxed), 1);
    }
}
