//! Many live cameras, one model: [`Mux`] takes several live sources (pulled URLs, [`LiveVideo`]s the
//! application pushes, any [`VideoInput`] of one sequence a batch) and yields [`MuxBatch`]es whose entries are
//! sequences from any of them, the way DeepStream's `nvstreammux` (`batched-push-timeout`) and Triton's
//! dynamic batching (`max_queue_delay_microseconds`) batch cameras for one model.
//!
//! - A batch goes out when it holds `max_batch_size` entries or once the **deadline** has passed since its
//!   oldest entry was ready, whichever comes first: a slow, stalled or dead camera never holds it longer.
//! - Each entry names its camera, and its sequence carries its frame indices, pts and arrival times.
//! - [`MuxPolicy::EveryFrame`] loses nothing (backpressure reaches each camera's source within its buffers);
//!   [`MuxPolicy::LatestOnly`] gives a consumer that falls behind each camera's newest sequence and counts
//!   what it dropped, per camera ([`Mux::stats`]).
//! - Cameras join ([`Mux::add_url`], [`Mux::add_live`], [`Mux::add_input`]) and leave ([`Mux::remove`])
//!   while it runs; a camera that ends or fails ends alone, reported by a [`MuxEvent::Ended`] after its last
//!   sequence. A pulled URL reconnects by its own [`UrlOptions`].
//! - A batch holds one sequence shape: frames of different sizes never share a batch tensor (a resize in
//!   every camera's transforms makes them one shape); the others go in the next batch.
//! - Fairness is oldest first: entries leave in the order they became ready, across cameras.
//!
//! The rule itself is pure state in `gather` (the service's `GET /mux` applies it to its streams' lines);
//! each camera's feeder thread is in `camera`, what a poll gives in `entries`, the async polls in `futures`;
//! the settings are `settings::mux`'s.
//!
//! ```no_run
//! use std::time::Duration;
//! use framefeed::{Config, Mux, MuxConfig, MuxEvent, UrlOptions};
//!
//! let mux = Mux::new(MuxConfig::new(16, Duration::from_millis(33)))?;
//! for url in ["rtsp://cam1/stream", "rtsp://cam2/stream"] {
//!     mux.add_url(url, UrlOptions::new(), Config::new(1, 1))?;
//! }
//! mux.close(); // no more cameras: polls end once every camera has ended
//! while let Some(event) = mux.next_event()? {
//!     match event {
//!         MuxEvent::Batch(batch) => println!("{} sequences", batch.len()),
//!         MuxEvent::Ended { camera, error, .. } => println!("camera {} ended: {error:?}", camera.0),
//!     }
//! }
//! # Ok::<(), framefeed::Error>(())
//! ```

mod camera;
mod entries;
pub(crate) mod futures;
pub(crate) mod gather;

pub use entries::{CameraId, CameraStats, MuxBatch, MuxEntry, MuxEvent};

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use gather::{Gather, Pick};

use crate::assembly::batch::Batch;
use crate::error::{Error, Result};
use crate::operator::handle::VideoInput;
use crate::settings::config::Config;
pub use crate::settings::mux::{MuxConfig, MuxPolicy};
use crate::signal::WakerSet;
use crate::source::live::LiveVideo;
use crate::source::url::UrlOptions;
use crate::video::Label;

/// A camera's record.
struct CameraInfo {
    label: Label,
    sequences: u64,
    dropped: u64,
    ended: bool,
    stop: Arc<AtomicBool>,
}

/// The state the feeders and the polls share.
struct State {
    gather: Gather<Batch>,
    cameras: BTreeMap<u64, CameraInfo>,
    /// Cameras that ended, with their error, in the order they ended (given once their queue is empty).
    ended: VecDeque<(u64, Option<Error>)>,
    /// Feeder threads still running.
    live: usize,
    next_id: u64,
    closed: bool,
    /// When an async poll waits for a deadline: the clock wakes the pollers then.
    wake_at: Option<Instant>,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    /// Signalled on every change: a sequence queued or taken, a camera ended, close, stop.
    changed: Condvar,
    /// The clock thread's wake-up.
    clock: Condvar,
    wakers: WakerSet,
    stop: AtomicBool,
}

impl Shared {
    fn notify(&self) {
        self.changed.notify_all();
        self.wakers.wake_all();
    }
}

/// Cross-camera batching with a deadline: cameras join and leave while it runs, and each poll gives a
/// [`MuxBatch`] (full, or out at its deadline; one sequence shape; oldest first) or a camera's
/// [`MuxEvent::Ended`]. Blocking ([`next_event`](Self::next_event)) and async
/// ([`next_event_async`](Self::next_event_async), [`events`](Self::events)) polls on one object; dropping it
/// stops every camera and joins their threads.
pub struct Mux {
    shared: Arc<Shared>,
    config: MuxConfig,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Mux {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mux").field("config", &self.config).finish()
    }
}

impl Mux {
    /// A mux with no cameras yet.
    pub fn new(config: MuxConfig) -> Result<Self> {
        config.validate()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                gather: Gather::new(&config),
                cameras: BTreeMap::new(),
                ended: VecDeque::new(),
                live: 0,
                next_id: 0,
                closed: false,
                wake_at: None,
            }),
            changed: Condvar::new(),
            clock: Condvar::new(),
            wakers: WakerSet::default(),
            stop: AtomicBool::new(false),
        });
        let clock = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("framefeed-mux-clock".into())
                .spawn(move || run_clock(&shared))
                .map_err(|e| Error::Config(format!("cannot start the mux's clock thread: {e}")))?
        };
        Ok(Self {
            shared,
            config,
            threads: Mutex::new(vec![clock]),
        })
    }

    /// Adds a camera pulled from `url` (reconnecting by `options`), decoded by an operator of `config`, whose
    /// batches must hold one sequence (`max_batch_size` 1). A camera is live: its URL is pulled through
    /// FFmpeg's protocols even where it looks like a file over HTTP(S) ([`UrlOptions::ranged`] `false`), so
    /// that a sender taking one connection (`ffmpeg -listen 1`) is read from its first.
    pub fn add_url(
        &self,
        url: impl Into<String>,
        options: UrlOptions,
        config: Config,
    ) -> Result<CameraId> {
        let url = url.into();
        let label = Label::from(crate::source::url::redact_url(&url));
        let input = VideoInput::new(one_sequence(config)?)?;
        input.feed_url(url, options.label(label.clone()).ranged(false))?;
        input.close();
        self.add_input(label, input)
    }

    /// Adds a camera the application pushes chunks to (the returned [`LiveVideo`]), decoded by an operator of
    /// `config` (`max_batch_size` 1).
    pub fn add_live(
        &self,
        label: impl Into<Label>,
        config: Config,
    ) -> Result<(CameraId, LiveVideo)> {
        let label = label.into();
        let input = VideoInput::new(one_sequence(config)?)?;
        let live = input.feed_live_with_label(label.clone())?;
        input.close();
        Ok((self.add_input(label, input)?, live))
    }

    /// Adds a camera decoded by `input`, an operator whose batches hold one sequence and which is closed
    /// (or will be) once its videos are fed: the camera ends when `input` has no more batches. An input
    /// shared (an `Arc` another owner keeps) is only polled by the mux; its decoding stops when its last
    /// owner drops it.
    ///
    /// Every camera's operator keeps for reuse as many buffers as the mux lets it have alive at once (its queue
    /// of `max_batch_size`, the one its thread holds, two batches in the consumer's hands, and the operator's
    /// own `prefetch_batches` + 4), so that a camera ahead of its consumer does not free and allocate them again.
    pub fn add_input(
        &self,
        label: impl Into<Label>,
        input: impl Into<Arc<VideoInput>>,
    ) -> Result<CameraId> {
        let input = input.into();
        one_sequence(input.config().clone())?;
        let label = label.into();
        let mut state = self.shared.state.lock();
        if state.closed {
            return Err(Error::Config(
                "the mux is closed: no camera may be added".into(),
            ));
        }
        // The camera's sequences alive at once, beyond its operator's own: those queued here, the one its
        // feeder holds, and two whole batches in the consumer's hands (the one it has while the next comes).
        // Its pool keeps that many more idle, so that the buffers coming back together are reused, not freed and
        // allocated again (each new one faulted in and zeroed page by page on its first write).
        let in_hand = 2 * self.config.max_batch_size; // at most 2 x 65536 (validated)
        input.keep_idle_buffers(state.gather.depth() + in_hand + 1);
        let id = state.next_id;
        let stop = Arc::new(AtomicBool::new(false));
        let feeder = {
            let (shared, stop) = (self.shared.clone(), stop.clone());
            std::thread::Builder::new()
                .name(format!("framefeed-mux-camera-{id}"))
                .spawn(move || camera::feed(shared, id, input, stop))
                .map_err(|e| Error::Config(format!("cannot start a camera's thread: {e}")))?
        };
        state.next_id += 1;
        state.live += 1;
        state.gather.add(id);
        state.cameras.insert(
            id,
            CameraInfo {
                label,
                sequences: 0,
                dropped: 0,
                ended: false,
                stop,
            },
        );
        drop(state);
        self.threads.lock().push(feeder);
        Ok(CameraId(id))
    }

    /// Stops a camera and forgets what it queued; it gives no [`MuxEvent::Ended`]. `false` if there is no such
    /// camera (or it ended).
    pub fn remove(&self, camera: CameraId) -> bool {
        let mut state = self.shared.state.lock();
        let State {
            cameras,
            gather,
            ended,
            ..
        } = &mut *state;
        let Some(info) = cameras.get_mut(&camera.0).filter(|i| !i.ended) else {
            return false;
        };
        info.stop.store(true, Ordering::Relaxed);
        info.ended = true;
        info.dropped += gather.dropped(camera.0);
        gather.remove(camera.0);
        ended.retain(|(c, _)| *c != camera.0);
        drop(state);
        self.shared.notify();
        true
    }

    /// No more cameras: polls end (`Ok(None)`) once every camera has ended and its sequences are delivered.
    pub fn close(&self) {
        self.shared.state.lock().closed = true;
        self.shared.notify();
    }

    /// What each camera has done so far, by camera.
    pub fn stats(&self) -> Vec<CameraStats> {
        let state = self.shared.state.lock();
        state
            .cameras
            .iter()
            .map(|(&id, info)| CameraStats {
                camera: CameraId(id),
                label: info.label.clone(),
                sequences: info.sequences,
                dropped: info.dropped + state.gather.dropped(id),
                ended: info.ended,
            })
            .collect()
    }

    /// The next batch or camera end, waiting for it; `Ok(None)` once closed and every camera has ended.
    pub fn next_event(&self) -> Result<Option<MuxEvent>> {
        self.wait_event(None)
    }

    /// Like [`next_event`](Self::next_event), waiting at most `timeout`: [`Error::Timeout`] when nothing came.
    pub fn next_event_timeout(&self, timeout: Duration) -> Result<Option<MuxEvent>> {
        self.wait_event(Some((Instant::now() + timeout, timeout)))
    }

    fn wait_event(&self, limit: Option<(Instant, Duration)>) -> Result<Option<MuxEvent>> {
        let mut state = self.shared.state.lock();
        loop {
            let wait_until = match self.poll_state(&mut state) {
                Step::Event(event) => {
                    drop(state);
                    self.shared.notify();
                    return Ok(event);
                }
                Step::Until(at) => Some(at),
                Step::Wait => None,
            };
            let wait_until = match (wait_until, limit) {
                (_, Some((end, timeout))) if Instant::now() >= end => {
                    return Err(Error::Timeout(timeout))
                }
                (Some(at), Some((end, _))) => Some(at.min(end)),
                (at, None) => at,
                (None, Some((end, _))) => Some(end),
            };
            match wait_until {
                Some(at) => {
                    self.shared.changed.wait_until(&mut state, at);
                }
                None => self.shared.changed.wait(&mut state),
            }
        }
    }

    /// The next batch or camera end if one is due now; never waits. `Ok(None)` once closed and every camera
    /// has ended; [`Error::NotReady`] while nothing is due (no batch full or at its deadline, no end to tell).
    pub fn try_next_event(&self) -> Result<Option<MuxEvent>> {
        let mut state = self.shared.state.lock();
        match self.poll_state(&mut state) {
            Step::Event(event) => {
                drop(state);
                self.shared.notify();
                Ok(event)
            }
            Step::Until(_) | Step::Wait => Err(Error::NotReady),
        }
    }

    /// One look at the state: an event to give (taken), or how to wait.
    fn poll_state(&self, state: &mut State) -> Step {
        match look(state, Instant::now()) {
            Look::Give => Step::Event(take_event(state)),
            Look::Until(at) => Step::Until(at),
            Look::Wait => Step::Wait,
        }
    }
}

/// Whether an event is due (a camera's end once its queued sequences are out, a batch full or at its
/// deadline, or the end of everything), or how to wait for one.
fn look(state: &State, now: Instant) -> Look {
    if state
        .ended
        .iter()
        .any(|(c, _)| state.gather.queued_for(*c) == 0)
    {
        return Look::Give;
    }
    match state.gather.pick(now) {
        Pick::Now => Look::Give,
        Pick::Until(at) => Look::Until(at),
        Pick::Empty if state.closed && state.live == 0 && state.ended.is_empty() => Look::Give,
        Pick::Empty => Look::Wait,
    }
}

/// Takes the event [`look`] said is due: a camera's end first, then a batch; `None` is the end of
/// everything.
fn take_event(state: &mut State) -> Option<MuxEvent> {
    if let Some(i) = state
        .ended
        .iter()
        .position(|(c, _)| state.gather.queued_for(*c) == 0)
    {
        let (camera, error) = state.ended.remove(i)?;
        let dropped = state.gather.dropped(camera);
        state.gather.remove(camera);
        let label = state
            .cameras
            .get_mut(&camera)
            .map_or(Label::from(camera), |info| {
                info.ended = true;
                info.dropped += dropped;
                info.label.clone()
            });
        return Some(MuxEvent::Ended {
            camera: CameraId(camera),
            label,
            error,
        });
    }
    if state.gather.queued() == 0 {
        return None;
    }
    let entries = state
        .gather
        .take()
        .into_iter()
        .map(|(camera, ready)| MuxEntry {
            camera: CameraId(camera),
            label: state
                .cameras
                .get(&camera)
                .map_or(Label::from(camera), |i| i.label.clone()),
            batch: ready.item,
            ready: ready.at,
        })
        .collect();
    Some(MuxEvent::Batch(MuxBatch { entries }))
}

/// Whether an event is due, or how to wait for one.
enum Look {
    Give,
    Until(Instant),
    Wait,
}

/// What one look at the state says.
enum Step {
    Event(Option<MuxEvent>),
    Until(Instant),
    Wait,
}

/// A camera's operator must give batches of one sequence: the mux batches across cameras.
fn one_sequence(config: Config) -> Result<Config> {
    if config.max_batch_size != 1 {
        return Err(Error::Config(format!(
            "a mux camera's max_batch_size is {}; allowed: 1 (the mux makes the batches)",
            config.max_batch_size
        )));
    }
    Ok(config)
}

/// The clock thread: wakes the async pollers at the deadline one of them waits for.
fn run_clock(shared: &Shared) {
    let mut state = shared.state.lock();
    while !shared.stop.load(Ordering::Relaxed) {
        match state.wake_at {
            Some(at) if Instant::now() >= at => {
                state.wake_at = None;
                drop(state);
                shared.wakers.wake_all();
                state = shared.state.lock();
            }
            Some(at) => {
                shared.clock.wait_until(&mut state, at);
            }
            None => shared.clock.wait(&mut state),
        }
    }
}

impl Drop for Mux {
    fn drop(&mut self) {
        {
            let state = self.shared.state.lock();
            self.shared.stop.store(true, Ordering::Relaxed);
            for info in state.cameras.values() {
                info.stop.store(true, Ordering::Relaxed);
            }
        }
        self.shared.notify();
        self.shared.clock.notify_all();
        // Each feeder sees its stop within its poll interval; dropping its operator stops its decoding.
        for thread in self.threads.lock().drain(..) {
            let _ = thread.join();
        }
    }
}
