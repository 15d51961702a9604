//! The service's shared state: its settings, admission (upload slots per client and server-wide, and memory
//! from the pool), request ids and the counters `/metrics` shows.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use parking_lot::Mutex;

use super::auth::ClientKey;
pub(crate) use super::budget::SlotMemory;
use super::budget::{MemoryPool, Reservation, Short};
use super::config::ServeConfig;
use super::errors::ApiError;
use super::fanout::Streams;
use super::metrics::{Metrics, Snapshot};
use super::shedding::{victims, Candidate, Pressure, Tracked, SHED_WAIT};
use crate::error_code::ErrorCode;

/// A client's uploads in progress, its other holders of memory (mux consumers), and its share of the pool.
struct Client {
    uploads: usize,
    others: usize,
    memory: Arc<MemoryPool>,
}

/// The shared state of a running service.
pub(crate) struct Service {
    pub(crate) config: ServeConfig,
    pub(crate) metrics: Metrics,
    pub(crate) memory: Arc<MemoryPool>,
    /// Streams with consumers of their own (pulled by URL, or detached uploads).
    pub(crate) streams: Streams,
    /// Uploads in progress per client, and the client's share of the memory pool.
    clients: Mutex<HashMap<ClientKey, Client>>,
    /// The size of each client's share, in bytes (worked out once: the default reads the machine's memory).
    client_share: u64,
    /// Uploads in progress, for the shedding (`shedding.rs`).
    uploads: Mutex<HashMap<u64, Arc<Tracked>>>,
    next_upload: AtomicU64,
    shutting_down: AtomicBool,
}

/// How long the server is idle (no upload in progress) before it gives free heap memory back to the system.
const IDLE_TRIM_AFTER: Duration = Duration::from_secs(1);

/// How often a newcomer looks again for what shed uploads freed.
const SHED_POLL: Duration = Duration::from_millis(20);

impl Service {
    pub(crate) fn new(config: ServeConfig) -> Arc<Self> {
        let memory = MemoryPool::new(config.memory_pool_bytes());
        let client_share = config.client_memory_bytes();
        Arc::new(Self {
            config,
            metrics: Metrics::default(),
            memory,
            streams: Streams::new(),
            clients: Mutex::new(HashMap::new()),
            client_share,
            uploads: Mutex::new(HashMap::new()),
            next_upload: AtomicU64::new(0),
            shutting_down: AtomicBool::new(false),
        })
    }

    pub(crate) fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        // Pulled streams never end on their own: they stop now, and their consumers get the summary.
        self.streams.stop_pulled();
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    pub(crate) fn active_streams(&self) -> u64 {
        self.metrics.streams_active()
    }

    /// 503 `shutting_down` once the server is shutting down.
    fn refuse_when_shutting_down(&self) -> Result<(), ApiError> {
        if self.is_shutting_down() {
            return Err(ApiError::new(
                ErrorCode::ShuttingDown,
                "the server is shutting down",
            ));
        }
        Ok(())
    }

    /// Takes an upload slot for `client` and reserves `bytes` of memory for it (from the pool and the client's
    /// share of it), or says why not.
    pub(crate) fn admit(self: &Arc<Self>, client: ClientKey, bytes: u64) -> Result<Slot, ApiError> {
        let mut clients = self.clients.lock();
        self.refuse_when_shutting_down()?;
        let active: usize = clients.values().map(|c| c.uploads).sum();
        let mine = clients.get(&client).map_or(0, |c| c.uploads);
        if mine >= self.config.max_streams_per_client {
            return Err(ApiError::new(
                ErrorCode::TooManyUploads,
                format!(
                    "this client already has {mine} uploads in progress (limit {})",
                    self.config.max_streams_per_client
                ),
            ));
        }
        if active >= self.config.max_streams {
            return Err(ApiError::new(
                ErrorCode::ServerBusy,
                format!("the server is decoding {active} uploads, its limit; retry later"),
            ));
        }
        let memory = self.reserve_locked(&mut clients, &client, bytes)?;
        if let Some(entry) = clients.get_mut(&client) {
            entry.uploads += 1; // made by the reservation
        }
        self.metrics.streams_active.inc();
        self.metrics.streams_total.inc();
        Ok(Slot {
            service: self.clone(),
            client,
            memory: Arc::new(Mutex::new(memory)),
            tracked: None,
        })
    }

    /// Admits an upload as [`admit`](Self::admit) does, but when every slot is taken or the pool is spent,
    /// sheds the upload that holds the most for the bytes a second it delivers (`shedding.rs`) and takes what
    /// it frees (waiting up to [`SHED_WAIT`]); refused only when nothing can be shed. The slot is tracked, so
    /// that it may be shed in turn.
    pub(crate) async fn admit_upload(
        self: &Arc<Self>,
        client: ClientKey,
        bytes: u64,
    ) -> Result<Slot, ApiError> {
        let deadline = Instant::now() + SHED_WAIT;
        let mut shed = false;
        loop {
            let refusal = match self.admit(client.clone(), bytes) {
                Ok(slot) => return Ok(self.track(slot)),
                Err(refusal) if refusal.code == ErrorCode::ServerBusy => refusal,
                Err(refusal) => return Err(refusal),
            };
            if !shed {
                let (pressure, needed) = if self.slots_taken() {
                    (Pressure::Slots, 1)
                } else {
                    (Pressure::Memory, self.shortfall(bytes))
                };
                if !self.shed(pressure, needed, None) {
                    return Err(refusal);
                }
                shed = true;
            }
            if Instant::now() >= deadline {
                return Err(refusal);
            }
            tokio::time::sleep(SHED_POLL).await;
        }
    }

    /// Registers an admitted upload's slot for the shedding.
    fn track(&self, mut slot: Slot) -> Slot {
        let id = self.next_upload.fetch_add(1, Ordering::Relaxed);
        let tracked = Arc::new(Tracked::new(id, slot.memory.clone()));
        self.uploads.lock().insert(id, tracked.clone());
        slot.tracked = Some(tracked);
        slot
    }

    fn slots_taken(&self) -> bool {
        let clients = self.clients.lock();
        clients.values().map(|c| c.uploads).sum::<usize>() >= self.config.max_streams
    }

    /// Bytes the pool lacks for `more` bytes now.
    fn shortfall(&self, more: u64) -> u64 {
        let free = self
            .memory
            .capacity()
            .saturating_sub(self.memory.reserved());
        more.saturating_sub(free)
    }

    /// Sheds the uploads to shed for `needed` under `pressure` (never `exclude`); whether any was.
    fn shed(&self, pressure: Pressure, needed: u64, exclude: Option<u64>) -> bool {
        let now = Instant::now();
        let uploads = self.uploads.lock();
        // Uploads shed for memory earlier and still ending free theirs shortly: only the rest is shed for (a
        // newcomer that grows twice, for its body and then its frames, does not shed a second upload for
        // memory that is on its way).
        let needed = match pressure {
            Pressure::Memory => {
                let freeing: u64 = uploads.values().map(|t| t.freeing()).sum();
                if freeing > 0 && freeing >= needed {
                    return true;
                }
                needed.saturating_sub(freeing)
            }
            Pressure::Slots => needed,
        };
        let candidates: Vec<Candidate> =
            uploads.values().filter_map(|t| t.candidate(now)).collect();
        let mut shed = false;
        for id in victims(&candidates, pressure, needed, exclude) {
            // Its body may have all come since: then it is not shed (nothing would read the mark).
            if uploads.get(&id).is_some_and(|upload| upload.shed(pressure)) {
                tracing::info!(upload = id, ?pressure, needed, "shedding an upload");
                self.metrics.uploads_shed.inc();
                shed = true;
            }
        }
        shed
    }

    /// One step of growing an upload's reservation to `need`: `Ok(true)` when it holds it; `Ok(false)` when
    /// the pool was short and uploads were shed for it (look again shortly, until [`SHED_WAIT`]); `Err` when
    /// it cannot have it (the client's share is spent, or nothing could be shed). `shed` says whether this
    /// growth already shed (it sheds once).
    pub(crate) fn grow_step(
        &self,
        memory: &SlotMemory,
        need: u64,
        me: Option<&Tracked>,
        shed: &mut bool,
    ) -> Result<bool, Short> {
        let mut reservation = memory.lock();
        match reservation.grow_to(need) {
            Ok(()) => Ok(true),
            Err(Short::Pool) if !*shed => {
                let more = need.saturating_sub(reservation.bytes());
                drop(reservation);
                if !self.shed(Pressure::Memory, self.shortfall(more), me.map(|t| t.id)) {
                    return Err(Short::Pool);
                }
                *shed = true;
                Ok(false)
            }
            // Shed already: what it frees comes as its response ends.
            Err(Short::Pool) => Ok(false),
            Err(short) => Err(short),
        }
    }

    /// [`grow_step`](Self::grow_step) until it holds `need` or [`SHED_WAIT`] passes, sleeping the thread
    /// between looks (for the decoding thread).
    pub(crate) fn grow_blocking(
        &self,
        memory: &SlotMemory,
        need: u64,
        me: Option<&Tracked>,
    ) -> Result<(), Short> {
        let deadline = Instant::now() + SHED_WAIT;
        let mut shed = false;
        while !self.grow_step(memory, need, me, &mut shed)? {
            if Instant::now() >= deadline {
                return Err(Short::Pool);
            }
            std::thread::sleep(SHED_POLL);
        }
        Ok(())
    }

    /// [`grow_step`](Self::grow_step) until it holds `need` or [`SHED_WAIT`] passes (for a task).
    pub(crate) async fn grow(
        &self,
        memory: &SlotMemory,
        need: u64,
        me: Option<&Tracked>,
    ) -> Result<(), Short> {
        let deadline = Instant::now() + SHED_WAIT;
        let mut shed = false;
        while !self.grow_step(memory, need, me, &mut shed)? {
            if Instant::now() >= deadline {
                return Err(Short::Pool);
            }
            tokio::time::sleep(SHED_POLL).await;
        }
        Ok(())
    }

    /// Reserves `bytes` for `client` from the pool and its share (its entry made if need be, and removed again
    /// if the reservation fails and it holds nothing else).
    fn reserve_locked(
        &self,
        clients: &mut HashMap<ClientKey, Client>,
        client: &ClientKey,
        bytes: u64,
    ) -> Result<Reservation, ApiError> {
        let entry = clients.entry(client.clone()).or_insert_with(|| Client {
            uploads: 0,
            others: 0,
            memory: MemoryPool::new(self.client_share),
        });
        match self.memory.reserve(&entry.memory, bytes) {
            Ok(memory) => Ok(memory),
            Err(short) => {
                if entry.uploads == 0 && entry.others == 0 {
                    clients.remove(client);
                }
                Err(self.short_of_memory(short))
            }
        }
    }

    /// Reserves `bytes` for `client` without an upload slot (a consumer's bounded queue), from the pool and
    /// the client's share, or says why not (503 `server_busy`, 429 `too_many_uploads`, or shutting down).
    pub(crate) fn reserve_memory(
        self: &Arc<Self>,
        client: ClientKey,
        bytes: u64,
    ) -> Result<ClientMemory, ApiError> {
        let mut clients = self.clients.lock();
        self.refuse_when_shutting_down()?;
        let memory = self.reserve_locked(&mut clients, &client, bytes)?;
        if let Some(entry) = clients.get_mut(&client) {
            entry.others += 1;
        }
        Ok(ClientMemory {
            service: self.clone(),
            client,
            _memory: memory,
        })
    }

    /// Counts one of `client`'s holders as gone (`release`), and forgets the client once it holds nothing.
    fn release(&self, client: &ClientKey, release: impl FnOnce(&mut Client)) {
        let mut clients = self.clients.lock();
        if let Some(c) = clients.get_mut(client) {
            release(c);
            if c.uploads == 0 && c.others == 0 {
                clients.remove(client);
            }
        }
    }

    /// The refusal for a reservation the pool or the client's share could not cover.
    pub(crate) fn short_of_memory(&self, short: Short) -> ApiError {
        match short {
            Short::Pool => ApiError::new(ErrorCode::ServerBusy, "the server's memory for uploads is taken; retry later",
            ),
            Short::Client => ApiError::new(ErrorCode::TooManyUploads, format!(
                    "this client's uploads hold their share of the server's memory ({} bytes); retry later",
                    self.client_share
                ),
            ),
        }
    }

    /// Counts a refusal by status.
    pub(crate) fn count_rejection(&self, status: StatusCode) {
        self.metrics.count_rejection(status.as_u16());
    }

    /// Runs for the life of the server: once no upload has been in progress for [`IDLE_TRIM_AFTER`] after
    /// some were, gives the heap's free memory back to the system (`malloc_trim`), so that resident memory
    /// returns to idle after a burst (decoders free their frames and tables into the allocator's arenas, which
    /// otherwise keep them).
    pub(crate) async fn return_memory_when_idle(self: Arc<Self>) {
        let mut trimmed_at = self.metrics.streams_total.get();
        let mut idle_since = None;
        loop {
            tokio::time::sleep(IDLE_TRIM_AFTER / 2).await;
            let total = self.metrics.streams_total.get();
            if self.active_streams() > 0 || total == trimmed_at {
                idle_since = None;
                continue;
            }
            let since = *idle_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= IDLE_TRIM_AFTER {
                let _ = tokio::task::spawn_blocking(crate::ffi::alloc::release_free_memory).await;
                trimmed_at = total;
                idle_since = None;
            }
        }
    }

    pub(crate) fn metrics_text(&self) -> String {
        self.metrics.encode(Snapshot {
            memory_reserved: self.memory.reserved(),
            memory_limit: self.memory.capacity(),
            streams_known: self.streams.count() as u64,
            consumers_waiting: self.streams.waiting_consumers() as u64,
        })
    }
}

/// A request's id and client, set by the router's middleware for the handlers.
#[derive(Debug, Clone)]
pub(crate) struct RequestCtx {
    pub(crate) id: String,
    pub(crate) client: ClientKey,
}

impl Service {
    /// A refusal: counted, logged, answered with its error line.
    pub(crate) fn refuse(&self, refusal: ApiError, request_id: &str) -> axum::response::Response {
        self.count_rejection(refusal.status);
        tracing::info!(request_id, status = refusal.status.as_u16(), code = refusal.code.as_str(), message = %refusal.message, "refused");
        refusal.into_response(request_id)
    }
}

/// One admitted upload: its slot and its memory; both freed when dropped (when the response ends or the
/// client goes away).
pub(crate) struct Slot {
    service: Arc<Service>,
    client: ClientKey,
    /// Its reservation, shared with the task reading its body (which grows it as the video becomes known).
    pub(crate) memory: SlotMemory,
    /// An upload's entry in the shedding's list (`None` for a pulled stream, which is never shed).
    pub(crate) tracked: Option<Arc<Tracked>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(tracked) = &self.tracked {
            self.service.uploads.lock().remove(&tracked.id);
        }
        self.service.release(&self.client, |c| c.uploads -= 1);
        self.service.metrics.streams_active.dec();
    }
}

/// Memory a client holds without an upload slot (a mux consumer's queue); given back when dropped.
pub(crate) struct ClientMemory {
    service: Arc<Service>,
    client: ClientKey,
    _memory: Reservation,
}

impl Drop for ClientMemory {
    fn drop(&mut self) {
        self.service.release(&self.client, |c| c.others -= 1);
    }
}
