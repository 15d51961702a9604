//! The operator's handle, [`VideoInput`]: made from a validated config, it owns the decoding thread and the
//! channels to it. Feeding is in `feeding`, polling in `polling`, the futures and streams in `futures`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use crate::assembly::pool::BufferPool;
use crate::device::{Device, GpuRuntime};
use crate::error::{Error, Result};
use crate::operator::worker::{Item, Worker};
use crate::settings::config::Config;
use crate::signal::Signals;
use crate::source::feed::FeedQueue;
use crate::transform::plan::OutputSize;

/// How long dropping an operator waits for its decoding thread to stop.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// A streaming video input operator: feed encoded videos, poll batches of RGB frame sequences.
///
/// One decoding thread per operator demuxes and decodes the fed videos in order, incrementally, never more
/// than `prefetch_batches` batches ahead of the consumer. Every method takes `&self`: feed from any thread
/// while another polls (share it in an `Arc`).
///
/// Dropping the operator stops its thread at the next frame or packet and frees everything, also mid-video.
pub struct VideoInput {
    pub(super) config: Config,
    pub(super) feed: Arc<FeedQueue>,
    pub(super) out: Receiver<Item>,
    pub(super) shared: Arc<Signals>,
    pub(super) pool: BufferPool,
    /// The operator's GPU (`Device::Cuda`), whose idle device buffers
    /// [`keep_idle_buffers`](Self::keep_idle_buffers) also raises.
    pub(super) gpu: Option<Arc<GpuRuntime>>,
    pub(super) output_size: Arc<OutputSize>,
    pub(super) worker: Option<JoinHandle<()>>,
    /// Videos whose final batch or error a poll has returned.
    pub(super) finished: AtomicU64,
    /// The last poll returned a video's final item (or nothing was polled yet).
    pub(super) depleted: AtomicBool,
    /// Where videos are decoded: `Cpu` or `Cuda(n)` (never `Auto`).
    pub(super) device: Device,
}

impl VideoInput {
    /// Creates the operator and its decoding thread, after checking every field of `config`.
    pub fn new(config: Config) -> Result<Self> {
        config.validate()?;
        crate::ffi::log::route_to_tracing();
        let feed = Arc::new(FeedQueue::new(
            config.max_queued_videos,
            config.max_queued_bytes,
        ));
        let (out_tx, out_rx) = crossbeam_channel::bounded(config.prefetch_batches);
        let shared = Arc::new(Signals::default());
        let pool = BufferPool::with_huge_pages(idle_buffers(&config), config.huge_pages);
        let output_size = Arc::new(OutputSize::default());
        let (device, gpu) = crate::device::resolve(config.device, idle_buffers(&config))?;
        let worker = Worker {
            config: config.clone(),
            feed: feed.clone(),
            out: out_tx,
            shared: shared.clone(),
            pool: pool.clone(),
            output_size: output_size.clone(),
            packer: Default::default(),
            gpu: gpu.clone(),
            indexes: Default::default(),
            audio: Default::default(),
            audio_waiting: Default::default(),
        };
        let handle = std::thread::Builder::new()
            .name("framefeed-decode".into())
            .spawn(move || worker.run())
            .map_err(|e| Error::WorkerDied(format!("could not start the decoding thread: {e}")))?;
        Ok(Self {
            config,
            feed,
            out: out_rx,
            shared,
            pool,
            gpu,
            output_size,
            worker: Some(handle),
            finished: AtomicU64::new(0),
            depleted: AtomicBool::new(true),
            device,
        })
    }

    /// Where this operator decodes: [`Device::Cpu`] or [`Device::Cuda`] (what [`Device::Auto`] chose).
    pub fn device(&self) -> Device {
        self.device
    }

    /// The configuration the operator was built with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Changes the output size of a sized resize ([`Resize::Exact`](crate::Resize), `Fill` or `Letterbox`)
    /// while running, for progressive-resizing schedules: sequences started from now on get the new size (a
    /// batch never mixes sizes: the change starts a new one). Fails with [`Error::Config`] when no sized
    /// resize is configured or a side is outside 1 to `max_dimension`.
    pub fn set_output_size(&self, width: u32, height: u32) -> Result<()> {
        let sized = self
            .config
            .transforms
            .resize
            .is_some_and(|r| r.target().is_some());
        if !sized {
            return Err(Error::Config(
                "set_output_size needs a sized resize: Resize::Exact, Resize::Fill or Resize::Letterbox".into(),
            ));
        }
        let max = self.config.max_dimension;
        for (name, v) in [("width", width), ("height", height)] {
            if v == 0 || v > max {
                return Err(Error::Config(format!(
                    "output {name} is {v}; allowed: 1 to {max}"
                )));
            }
        }
        self.output_size.set(width, height);
        Ok(())
    }

    /// Videos and bytes waiting in the feed queue (fed, not yet taken by the decoding thread).
    pub fn feed_queue_len(&self) -> (usize, usize) {
        self.feed.len()
    }

    /// Says that no more videos will be fed: once every fed video is delivered, polls return `Ok(None)`.
    /// Feeders waiting for room get [`Error::Closed`]. Closing twice is harmless.
    pub fn close(&self) {
        self.feed.close();
        // Async pollers waiting with nothing pending must now end with Ok(None).
        self.shared.wake_all();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.feed.is_closed()
    }

    /// Videos fed whose batches have not all been polled yet (the one being consumed included).
    pub fn queued_videos(&self) -> u64 {
        self.feed.admitted() - self.finished.load(Ordering::Acquire)
    }

    /// Whether the video being consumed is depleted: the last poll returned its last batch (or its error), so
    /// the next batch will come from the next video. True before the first poll.
    pub fn is_depleted(&self) -> bool {
        self.depleted.load(Ordering::Acquire)
    }

    /// How many output buffers the operator has allocated so far. In the steady state this stops growing:
    /// buffers are recycled when batches are dropped.
    pub fn buffer_allocations(&self) -> u64 {
        self.pool.allocations()
    }

    /// Keeps `n` more idle output buffers for reuse from now on than the default ([`idle_buffers`]): for
    /// a consumer known to hold up to `n` more sequences at once (the mux: a camera's queue, the one its feeder
    /// holds, and the batches its consumer holds), so that the buffers given back together are reused rather
    /// than freed and allocated again. Calls do not add up: the largest `n` holds.
    pub(crate) fn keep_idle_buffers(&self, n: usize) {
        let keep = idle_buffers(&self.config).saturating_add(n);
        self.pool.keep_idle_at_least(keep);
        if let Some(gpu) = &self.gpu {
            gpu.keep_idle_at_least(keep);
        }
    }

    /// How many of [`buffer_allocations`](Self::buffer_allocations) are on the system's reserved huge pages
    /// (see [`Config::huge_pages`]); 0 without that setting.
    pub fn huge_page_allocations(&self) -> u64 {
        self.pool.huge_page_allocations()
    }
}

impl Drop for VideoInput {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.cancel_sources();
        self.feed.shut_down();
        let Some(handle) = self.worker.take() else {
            return;
        };
        // The thread may be waiting for room in the output channel: keep draining (and dropping) batches until
        // it has seen the stop flag and ended. It checks the flag at every frame and packet, so this takes
        // at most one packet's decoding; should FFmpeg hang, the thread is left to end on its own rather than
        // blocking the caller forever.
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        while !handle.is_finished() {
            if Instant::now() >= deadline {
                tracing::error!(
                    "the decoding thread did not stop within {SHUTDOWN_GRACE:?}; detaching it"
                );
                return;
            }
            let _ = self.out.recv_timeout(Duration::from_millis(5));
        }
        if handle.join().is_err() {
            tracing::error!("the decoding thread panicked");
        }
    }
}

/// How many idle output buffers an operator keeps for reuse (host and device alike): as many as it may have
/// alive at once, the channel's `prefetch_batches`, the one being built, a held full one, and a few the consumer
/// keeps; more coming back are freed (unless [`VideoInput::keep_idle_buffers`] raised it).
fn idle_buffers(config: &Config) -> usize {
    config.prefetch_batches.saturating_add(4)
}
