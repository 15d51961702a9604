//! Remote videos: an object in S3, GCS or Azure, or a file served over HTTP(S), read by byte ranges as the
//! demuxer needs them, never whole. [`RemoteOptions`] are the settings (`settings::remote`);
//! [`Encoded::remote`](crate::Encoded::remote) opens an object (`source::store`: one request, for its first
//! bytes, length and version) and feeds it as a whole video;
//! [`VideoReader::open_remote`](crate::VideoReader::open_remote) reads one.
//!
//! What is fetched: the demuxer's own reads, each missed byte fetched in a bounded request (growing while the
//! reads go on in order, so the index at either end of an MP4 costs about what it is), then the ranges the
//! sampling plan or a reader call hints ([`ReadAt::will_need`]), planned (`source::ranges`: coalesced, split,
//! never open-ended) and fetched ahead in parallel while earlier ones decode, within a memory budget. A plain
//! run that reads on in order streams: after a few megabytes read in order, the next requests are fetched
//! ahead, as many as may be in flight.
//!
//! The network side (`source::store`) is the object store client; this module is the cache and the planner
//! over any [`Fetch`], which the tests replace.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::{Condvar, Mutex};

use super::ranges::{plan, Shape};
use crate::settings::remote::RemoteOptions;
use crate::video::{ReadAt, SourceFailure};

/// The first request at a new position: small, since a seek's reads are often short (a box header).
pub(crate) const FIRST_REQUEST: u64 = 128 << 10;
/// Opening's first request (a `GET` from byte 0, without an index cache): an MP4's `ftyp` and `moov` when the
/// `moov` is first, and the first packets the stream's parameters come from, in one round trip (a 1080p H.264
/// MP4's take about 256 KiB; more would be bytes a dataset's many short clips pay at every opening).
pub(crate) const OPEN_REQUEST: u64 = 256 << 10;
/// The first request of a hint is at most this long: it is what the demuxer waits for, so a short one lets the
/// decoding start after one round trip and little transfer while the others come in parallel.
const FIRST_PART: u64 = 64 << 10;
/// Hinted ranges at most this far apart are fetched as one request (at 50 MB/s, 20 ms of round trip is 1 MB:
/// a gap this size costs less time than a request, and little transfer).
const MERGE_GAP: u64 = 256 << 10;
/// Bytes read in order by missed reads after which the reads are taken for a stream and fetched ahead.
const STREAMING_AFTER: u64 = 8 << 20;

/// Remote videos indexed by reading them through (no container index framefeed reads by ranges: a Matroska
/// file, an MPEG-TS), in this process.
static INDEX_SCANS: AtomicU64 = AtomicU64::new(0);

/// Counts a remote video indexed by reading it through (see [`remote_index_scans`]).
pub(crate) fn count_index_scan() {
    INDEX_SCANS.fetch_add(1, Ordering::Relaxed);
}

/// How many remote videos this process indexed by reading them through, since it started: those whose
/// container has no index framefeed reads by ranges (framefeed reads an MP4's `moov`; a Matroska file's Cues
/// list keyframes only, and an MPEG-TS has none), each read once whole, with a warning logged. With an
/// [index cache](crate::RemoteOptions::index_cache), a video whose packet index is kept there is listed from it
/// instead, and not counted.
pub fn remote_index_scans() -> u64 {
    INDEX_SCANS.load(Ordering::Relaxed)
}

/// What fetching a range gave, short of bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FetchError {
    /// The object is not the one opened any more (its ETag changed): reading on would mix two versions.
    Changed(String),
    /// The request failed after its retries.
    Failed(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Changed(why) => write!(f, "the object changed during the read ({why})"),
            FetchError::Failed(why) => f.write_str(why),
        }
    }
}

/// Called once with what a fetch gave.
pub(crate) type Done = Box<dyn FnOnce(std::result::Result<Bytes, FetchError>) + Send>;

/// The network side of a remote video: starts fetching a byte range and calls `done` with the bytes, later and
/// from another thread (never from within `start`).
pub(crate) trait Fetch: Send + Sync + std::fmt::Debug + 'static {
    fn start(&self, range: Range<u64>, done: Done);
}

/// How much a remote video cost: requests made and bytes received. Shared: it outlives the video (the tests and
/// benchmarks read it after the decode).
#[derive(Debug, Default)]
pub struct RemoteStats {
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl RemoteStats {
    /// Range requests made (opening's first `GET` counted, a `HEAD` not).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bytes received.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
enum Data {
    Pending,
    Ready(Bytes),
    Failed(FetchError),
}

#[derive(Debug)]
struct Chunk {
    end: u64,
    data: Data,
    /// When it was last read (a tick): the least recently used goes first.
    used: u64,
    /// Not read to its end yet, since it was fetched for the reads going on (a missed read, a hint, the stream
    /// ahead): kept until read, a seek elsewhere or a new hint.
    ahead: bool,
}

#[derive(Debug, Default)]
struct State {
    /// Fetched and pending ranges by their start, disjoint.
    chunks: BTreeMap<u64, Chunk>,
    /// Planned requests not started yet, in order.
    queue: VecDeque<Range<u64>>,
    in_flight: usize,
    /// Bytes of ready and pending chunks.
    held: u64,
    tick: u64,
    /// Where the last missed read's request ended, how long it was, and how much the run of misses in order
    /// has read.
    miss_end: u64,
    miss_len: u64,
    miss_run: u64,
    /// While streaming: the next byte to queue.
    stream_at: Option<u64>,
    /// The ranges fetched while opening (until `opened`), for the index cache.
    opening: Option<Vec<Range<u64>>>,
    /// The operator reading it stopped: reads fail at once.
    cancelled: bool,
    failure: Option<SourceFailure>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    ready: Condvar,
    fetch: Box<dyn Fetch>,
    len: u64,
    options: RemoteOptions,
    shown: String,
    stats: Arc<RemoteStats>,
}

/// A remote object read by ranges: the [`ReadAt`] a remote video is fed as.
#[derive(Debug)]
pub(crate) struct RemoteSource {
    shared: Arc<Shared>,
    cache: Option<super::index_cache::Entry>,
    /// Where its packet index is kept once read through (with an index cache).
    packets: Option<Arc<super::index_cache::PacketIndexEntry>>,
}

impl RemoteSource {
    /// A source of the `len` bytes `fetch` reads, shown as `shown` (a redacted URL); `cached` are ranges
    /// already known (from the index cache), `cache` where to keep what opening reads.
    pub(crate) fn new(
        fetch: Box<dyn Fetch>,
        len: u64,
        shown: String,
        options: RemoteOptions,
        cached: Vec<(u64, Bytes)>,
        cache: Option<super::index_cache::Entry>,
    ) -> Self {
        let mut state = State {
            opening: cache.is_some().then(Vec::new),
            ..State::default()
        };
        for (start, data) in cached {
            let end = start + data.len() as u64;
            if data.is_empty()
                || end > len
                || state
                    .chunks
                    .range(..end)
                    .next_back()
                    .is_some_and(|(_, c)| c.end > start)
            {
                continue;
            }
            state.held += data.len() as u64;
            state.chunks.insert(
                start,
                Chunk {
                    end,
                    data: Data::Ready(data),
                    used: 0,
                    ahead: false,
                },
            );
        }
        let packets = cache.as_ref().map(|entry| Arc::new(entry.packets()));
        let from_cache = !state.chunks.is_empty();
        if from_cache {
            // Known already: nothing to keep again.
            state.opening = None;
        }
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                ready: Condvar::new(),
                fetch,
                len,
                options,
                shown,
                stats: Arc::default(),
            }),
            cache: if from_cache { None } else { cache },
            packets,
        }
    }

    /// Where the video's packet index is kept once read through (with an index cache: see
    /// [`KeepIndex`](crate::video::KeepIndex)).
    pub(crate) fn kept_index(&self) -> Option<Arc<dyn crate::video::KeepIndex>> {
        self.packets
            .clone()
            .map(|entry| entry as Arc<dyn crate::video::KeepIndex>)
    }

    /// Its counters.
    pub(crate) fn stats(&self) -> Arc<RemoteStats> {
        self.shared.stats.clone()
    }

    /// Counts a request made before this source existed (opening's first `GET`), which gave `bytes` from byte
    /// 0: the reads that go on in order from there are taken for a run of misses from it (their requests grow).
    pub(crate) fn count_request(&self, bytes: u64) {
        let stats = &self.shared.stats;
        stats.requests.fetch_add(1, Ordering::Relaxed);
        stats.bytes.fetch_add(bytes, Ordering::Relaxed);
        let mut state = self.shared.state.lock();
        state.miss_end = bytes;
        state.miss_len = bytes;
    }

    /// How a hint of `wanted` bytes is fetched: in requests small enough that every connection allowed takes a
    /// part (a store's throughput is per connection), at least [`FIRST_REQUEST`], at most `request_bytes`.
    fn shape(&self, wanted: u64) -> Shape {
        let options = &self.shared.options;
        let part = wanted.div_ceil(options.in_flight as u64);
        Shape {
            len: self.shared.len,
            merge_gap: MERGE_GAP,
            max_request: part.clamp(
                FIRST_REQUEST.min(options.request_bytes),
                options.request_bytes,
            ),
        }
    }
}

impl Shared {
    /// The chunk holding byte `at`.
    fn chunk_at(state: &State, at: u64) -> Option<u64> {
        state
            .chunks
            .range(..=at)
            .next_back()
            .filter(|(_, c)| c.end > at)
            .map(|(&start, _)| start)
    }

    /// Starts queued requests while fewer than `in_flight` are and the memory allows.
    fn pump(self: &Arc<Self>, state: &mut State) {
        self.top_up_stream(state);
        while state.in_flight < self.options.in_flight {
            let Some(range) = state.queue.front().cloned() else {
                return;
            };
            let len = range.end - range.start;
            if !Self::make_room(state, len, self.options.memory_bytes) {
                return;
            }
            state.queue.pop_front();
            self.start(state, range);
        }
    }

    /// While streaming, keeps the queue `in_flight` requests ahead of the reads.
    fn top_up_stream(&self, state: &mut State) {
        let Some(mut at) = state.stream_at else {
            return;
        };
        while state.queue.len() < self.options.in_flight && at < self.len {
            if let Some(start) = Self::chunk_at(state, at) {
                at = state.chunks[&start].end;
                continue;
            }
            let end = (at + self.options.request_bytes).min(self.len);
            // Stop at anything already held or pending.
            let end = match state.chunks.range(at..end).next() {
                Some((&start, _)) => start,
                None => end,
            };
            if end > at {
                state.queue.push_back(at..end);
                at = end;
            } else {
                at = state.chunks.get(&at).map_or(self.len, |c| c.end);
            }
        }
        state.stream_at = Some(at);
    }

    /// Evicts least recently used chunks (read ones, not those fetched ahead and unread) until `len` more bytes
    /// fit in `memory`; whether they do.
    fn make_room(state: &mut State, len: u64, memory: u64) -> bool {
        while state.held + len > memory {
            let victim = state
                .chunks
                .iter()
                .filter(|(_, c)| !c.ahead && !matches!(c.data, Data::Pending))
                .min_by_key(|(_, c)| c.used)
                .map(|(&start, _)| start);
            let Some(start) = victim else {
                return false;
            };
            let chunk = state.chunks.remove(&start).expect("found above");
            state.held -= chunk.end - start;
        }
        true
    }

    /// The reads went elsewhere (a seek, a new hint): what was kept for them may be evicted (but what is in
    /// flight), and the stream, if any, ends.
    fn release(state: &mut State) {
        for chunk in state.chunks.values_mut() {
            chunk.ahead = matches!(chunk.data, Data::Pending);
        }
        state.stream_at = None;
        state.miss_run = 0;
    }

    /// The part of `range` from its start that no chunk holds yet (`None`: its start is held).
    fn free_part(state: &State, range: Range<u64>) -> Option<Range<u64>> {
        if Self::chunk_at(state, range.start).is_some() {
            return None;
        }
        let end = match state.chunks.range(range.start + 1..range.end).next() {
            Some((&next, _)) => next,
            None => range.end,
        };
        (end > range.start).then_some(range.start..end)
    }

    /// Starts fetching what of `range` no chunk holds yet, from its start (chunks never overlap); the chunk is
    /// kept until read to its end (or the reads go elsewhere).
    fn start(self: &Arc<Self>, state: &mut State, range: Range<u64>) {
        let Some(range) = Self::free_part(state, range) else {
            return;
        };
        state.held += range.end - range.start;
        state.in_flight += 1;
        state.chunks.insert(
            range.start,
            Chunk {
                end: range.end,
                data: Data::Pending,
                used: state.tick,
                ahead: true,
            },
        );
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::downgrade(self);
        let expected = range.end - range.start;
        let start = range.start;
        self.fetch.start(
            range.clone(),
            Box::new(move |result| {
                let Some(shared) = shared.upgrade() else {
                    return; // the video is gone
                };
                let result = result.and_then(|data| {
                    if data.len() as u64 == expected {
                        Ok(data)
                    } else {
                        Err(FetchError::Failed(format!(
                            "{} bytes came for a range of {expected}",
                            data.len()
                        )))
                    }
                });
                let mut state = shared.state.lock();
                state.in_flight -= 1;
                if let Ok(data) = &result {
                    shared
                        .stats
                        .bytes
                        .fetch_add(data.len() as u64, Ordering::Relaxed);
                    if let Some(opening) = &mut state.opening {
                        opening.push(range.clone());
                    }
                }
                if let Some(chunk) = state.chunks.get_mut(&start) {
                    chunk.data = match result {
                        Ok(data) => Data::Ready(data),
                        Err(e) => Data::Failed(e),
                    };
                }
                shared.pump(&mut state);
                drop(state);
                shared.ready.notify_all();
            }),
        );
    }

    /// The request a read missing byte `at` makes: short at a new place, twice the last while the misses go
    /// on in order (up to the largest request); never over a chunk already there.
    fn miss(self: &Arc<Self>, state: &mut State, at: u64) {
        // Planned but not started (the requests in flight are at their limit): started now, as it is.
        if let Some(i) = state.queue.iter().position(|r| r.contains(&at)) {
            let range = state.queue.remove(i).expect("found above");
            Self::make_room(state, range.end - range.start, self.options.memory_bytes);
            self.start(state, range);
            return;
        }
        let in_order = at == state.miss_end && state.miss_len > 0;
        let len = if in_order {
            (state.miss_len * 2).min(self.options.request_bytes)
        } else {
            // A seek: what was kept for the reads before may go.
            Self::release(state);
            FIRST_REQUEST.min(self.options.request_bytes)
        };
        let mut end = at.saturating_add(len).min(self.len);
        if let Some((&next, _)) = state.chunks.range(at + 1..end).next() {
            end = next;
        }
        // Planned requests this one covers are dropped (what is left of them is planned again on the next
        // miss or hint).
        state.queue.retain(|r| r.end <= at || r.start >= end);
        state.miss_end = end;
        state.miss_len = end - at;
        state.miss_run += end - at;
        if state.miss_run >= STREAMING_AFTER && state.stream_at.is_none() && state.queue.is_empty()
        {
            state.stream_at = Some(end);
        }
        Self::make_room(state, end - at, self.options.memory_bytes);
        self.start(state, at..end);
        self.pump(state);
    }

    fn fail(&self, state: &mut State, error: &FetchError, at: u64, end: u64) -> io::Error {
        let reason = format!("bytes {at}-{}: {error}", end - 1);
        state.failure.get_or_insert(SourceFailure {
            source: self.shown.clone(),
            reason: reason.clone(),
        });
        io::Error::other(format!("{}: {reason}", self.shown))
    }

    /// The longest a read waits for a request in flight: every try's timeout and the backoff between them.
    fn patience(&self) -> Duration {
        let tries = self.options.retries as u32 + 1;
        self.options.timeout.saturating_mul(tries)
            + Duration::from_secs(60).min(self.options.timeout * 2) * tries
    }
}

impl ReadAt for RemoteSource {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let shared = &self.shared;
        if offset >= shared.len || buf.is_empty() {
            return Ok(0);
        }
        let deadline = Instant::now() + shared.patience();
        let mut state = shared.state.lock();
        loop {
            if state.cancelled {
                return Err(io::Error::other(format!(
                    "{}: the read was cancelled",
                    shared.shown
                )));
            }
            let Some(start) = Shared::chunk_at(&state, offset) else {
                shared.miss(&mut state, offset);
                continue;
            };
            state.tick += 1;
            let tick = state.tick;
            let chunk = state.chunks.get_mut(&start).expect("found above");
            match &chunk.data {
                Data::Ready(data) => {
                    let from = (offset - start) as usize;
                    let n = buf.len().min(data.len() - from);
                    buf[..n].copy_from_slice(&data[from..from + n]);
                    chunk.used = tick;
                    if offset + n as u64 == chunk.end {
                        chunk.ahead = false;
                    }
                    shared.pump(&mut state);
                    return Ok(n);
                }
                Data::Failed(error) => {
                    let (error, end) = (error.clone(), chunk.end);
                    return Err(shared.fail(&mut state, &error, start, end));
                }
                Data::Pending => {
                    if shared.ready.wait_until(&mut state, deadline).timed_out() {
                        let end = state.chunks.get(&start).map_or(offset + 1, |c| c.end);
                        let error =
                            FetchError::Failed(format!("no answer within {:?}", shared.patience()));
                        return Err(shared.fail(&mut state, &error, start, end));
                    }
                }
            }
        }
    }

    fn will_need(&self, ranges: &[Range<u64>]) {
        let shared = &self.shared;
        let mut state = shared.state.lock();
        let held: Vec<Range<u64>> = state.chunks.iter().map(|(&s, c)| s..c.end).collect();
        let wanted = ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum();
        let mut planned = plan(ranges, &held, self.shape(wanted));
        if let Some(first) = planned.first().cloned() {
            if first.end - first.start > 2 * FIRST_PART {
                planned[0] = first.start..first.start + FIRST_PART;
                planned.insert(1, first.start + FIRST_PART..first.end);
            }
        }
        // A new plan: what was fetched ahead for the old one may go.
        Shared::release(&mut state);
        state.queue = planned.into();
        shared.pump(&mut state);
    }

    fn opened(&self) {
        let mut state = self.shared.state.lock();
        let Some(ranges) = state.opening.take() else {
            return;
        };
        let Some(cache) = &self.cache else {
            return;
        };
        let pieces: Vec<(u64, Bytes)> = ranges
            .iter()
            .filter_map(|r| match state.chunks.get(&r.start) {
                Some(Chunk {
                    data: Data::Ready(data),
                    ..
                }) => Some((r.start, data.clone())),
                _ => None,
            })
            .collect();
        drop(state);
        cache.store(&pieces);
    }

    fn failure(&self) -> Option<SourceFailure> {
        self.shared.state.lock().failure.clone()
    }

    fn cancel(&self) {
        self.shared.state.lock().cancelled = true;
        self.shared.ready.notify_all();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fetch from memory on its own thread, with a log of the ranges asked for.
    #[derive(Debug, Clone)]
    pub(crate) struct FakeFetch {
        pub(crate) data: Bytes,
        pub(crate) asked: Arc<Mutex<Vec<Range<u64>>>>,
        /// Fails every request from this byte on.
        pub(crate) fail_from: Option<u64>,
    }

    impl FakeFetch {
        pub(crate) fn new(len: usize) -> Self {
            Self {
                data: (0..len)
                    .map(|i| (i * 7 % 251) as u8)
                    .collect::<Vec<_>>()
                    .into(),
                asked: Arc::default(),
                fail_from: None,
            }
        }
    }

    impl Fetch for FakeFetch {
        fn start(&self, range: Range<u64>, done: Done) {
            self.asked.lock().push(range.clone());
            let this = self.clone();
            std::thread::spawn(move || {
                if this.fail_from.is_some_and(|f| range.end > f) {
                    return done(Err(FetchError::Failed("503 Slow Down".into())));
                }
                done(Ok(this
                    .data
                    .slice(range.start as usize..range.end as usize)))
            });
        }
    }

    fn source(fetch: &FakeFetch, options: RemoteOptions) -> RemoteSource {
        let len = fetch.data.len() as u64;
        RemoteSource::new(
            Box::new(fetch.clone()),
            len,
            "s3://b/v.mp4".into(),
            options,
            Vec::new(),
            None,
        )
    }

    fn read_all(source: &RemoteSource, from: u64, to: u64, step: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = from;
        let mut buf = vec![0; step];
        while at < to {
            let want = step.min((to - at) as usize);
            let n = source.read_at(&mut buf[..want], at).unwrap();
            assert!(n > 0);
            out.extend_from_slice(&buf[..n]);
            at += n as u64;
        }
        out
    }

    #[test]
    fn reads_give_the_objects_bytes_in_bounded_requests() {
        let fetch = FakeFetch::new(50 << 20);
        let options = RemoteOptions::new().memory_bytes(16 << 20);
        let source = source(&fetch, options.clone());
        let got = read_all(&source, 0, 50 << 20, 32 << 10);
        assert!(got == fetch.data[..], "the bytes read differ");
        let asked = fetch.asked.lock().clone();
        assert!(
            asked
                .iter()
                .all(|r| r.end - r.start <= options.request_bytes),
            "{asked:?}"
        );
        // Each byte once: streaming ahead never asks twice.
        let total: u64 = asked.iter().map(|r| r.end - r.start).sum();
        assert_eq!(total, 50 << 20, "{asked:?}");
        // Memory stayed bounded: the budget, and the request a read waits for.
        assert!(source.shared.state.lock().held <= (16 << 20) + options.request_bytes);
    }

    #[test]
    fn a_hint_fetches_its_ranges_ahead_and_nothing_else() {
        let fetch = FakeFetch::new(40 << 20);
        let source = source(&fetch, RemoteOptions::new());
        let ranges = [(5 << 20)..(6 << 20), (20 << 20)..(29 << 20)];
        source.will_need(&ranges);
        for r in &ranges {
            let got = read_all(&source, r.start, r.end, 65536);
            assert!(got == fetch.data[r.start as usize..r.end as usize]);
        }
        let total: u64 = fetch.asked.lock().iter().map(|r| r.end - r.start).sum();
        assert_eq!(total, 10 << 20, "{:?}", fetch.asked.lock());
        assert_eq!(source.stats().bytes(), 10 << 20);
        // The first request, which the demuxer waits for, is short; none overlap.
        let mut asked = fetch.asked.lock().clone();
        asked.sort_by_key(|r| r.start);
        assert_eq!(asked[0], (5 << 20)..(5 << 20) + FIRST_PART, "{asked:?}");
        assert!(
            asked.windows(2).all(|w| w[0].end <= w[1].start),
            "{asked:?}"
        );
    }

    #[test]
    fn a_failed_range_fails_the_read_naming_the_object_and_the_bytes() {
        let mut fetch = FakeFetch::new(4 << 20);
        fetch.fail_from = Some(3 << 20);
        let source = source(&fetch, RemoteOptions::new());
        let mut buf = vec![0; 1000];
        assert_eq!(source.read_at(&mut buf, 0).unwrap(), 1000);
        let error = source.read_at(&mut buf, 3 << 20).unwrap_err().to_string();
        assert!(error.contains("s3://b/v.mp4: bytes 3145728-"), "{error}");
        assert!(error.contains("503 Slow Down"), "{error}");
        let failure = source.failure().unwrap();
        assert_eq!(failure.source, "s3://b/v.mp4");
    }
}
