//! The operator's handle: feeding videos and polling batches (blocking, non-blocking, with a timeout, or as an
//! iterator).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};

use crate::assembly::batch::Batch;
use crate::assembly::pool::BufferPool;
use crate::device::{Device, GpuRuntime};
use crate::error::{Error, Result, TryFeedError};
use crate::operator::worker::{Item, Worker};
use crate::settings::config::Config;
use crate::signal::Signals;
use crate::source::feed::{FeedQueue, Refused, Source};
use crate::source::live::{LiveShared, LiveVideo};
use crate::source::url::{UrlOptions, UrlSource};
use crate::transform::plan::OutputSize;
use crate::video::{Label, VideoId};

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
    config: Config,
    feed: Arc<FeedQueue>,
    out: Receiver<Item>,
    shared: Arc<Signals>,
    pool: BufferPool,
    output_size: Arc<OutputSize>,
    worker: Option<JoinHandle<()>>,
    /// Videos whose final batch or error a poll has returned.
    finished: AtomicU64,
    /// The last poll returned a video's final item (or nothing was polled yet).
    depleted: AtomicBool,
    /// Where videos are decoded: `Cpu` or `Cuda(n)` (never `Auto`).
    device: Device,
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
        // Batches alive at once: the channel's, the one being built, a held full one, and a few the consumer
        // keeps; more idle buffers than that are freed.
        let pool = BufferPool::with_huge_pages(config.prefetch_batches + 4, config.huge_pages);
        let output_size = Arc::new(OutputSize::default());
        let (device, gpu) = resolve_device(config.device, config.prefetch_batches + 4)?;
        let worker = Worker {
            config: config.clone(),
            feed: feed.clone(),
            out: out_tx,
            shared: shared.clone(),
            pool: pool.clone(),
            output_size: output_size.clone(),
            packer: Default::default(),
            gpu,
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

    /// Queues one whole encoded video (any container and codec the system's FFmpeg reads). `Bytes` is taken
    /// without copying; `Vec<u8>` and `&'static [u8]` convert without copying too.
    ///
    /// Waits while the feed queue is full ([`Config::max_queued`]). Returns the video's id; its batches and
    /// errors carry it. Fails with [`Error::Closed`] after [`close`](Self::close).
    pub fn feed(&self, data: impl Into<Bytes>) -> Result<VideoId> {
        self.push(Source::Whole(data.into()), None)
    }

    /// Like [`feed`](Self::feed), with a label that travels with the video's batches and errors.
    pub fn feed_with_label(
        &self,
        data: impl Into<Bytes>,
        label: impl Into<Label>,
    ) -> Result<VideoId> {
        self.push(Source::Whole(data.into()), Some(label.into()))
    }

    /// Queues the video if the feed queue has room now; never waits. When it is full (or closed) the buffer is
    /// handed back in the error.
    pub fn try_feed(&self, data: impl Into<Bytes>) -> std::result::Result<VideoId, TryFeedError> {
        self.try_push(data.into(), None)
    }

    /// Like [`try_feed`](Self::try_feed), with a label.
    pub fn try_feed_with_label(
        &self,
        data: impl Into<Bytes>,
        label: impl Into<Label>,
    ) -> std::result::Result<VideoId, TryFeedError> {
        self.try_push(data.into(), Some(label.into()))
    }

    /// Queues the video, waiting for room as a future: the task is parked (not a thread) and woken when the
    /// decoding thread takes a video from the queue or the input is closed.
    ///
    /// Cancel-safe: the video is queued only in the poll that returns its id; dropping the future before that
    /// feeds nothing.
    pub fn feed_async(&self, data: impl Into<Bytes>) -> FeedVideo<'_> {
        FeedVideo {
            input: self,
            pending: Some((data.into(), None)),
        }
    }

    /// Like [`feed_async`](Self::feed_async), with a label.
    pub fn feed_async_with_label(
        &self,
        data: impl Into<Bytes>,
        label: impl Into<Label>,
    ) -> FeedVideo<'_> {
        FeedVideo {
            input: self,
            pending: Some((data.into(), Some(label.into()))),
        }
    }

    /// Queues a live video whose bytes will arrive over time, and returns the producer's handle: push its
    /// chunks, then [`finish`](LiveVideo::finish) it. Batches come out while it is still arriving. Waits while
    /// the feed queue holds [`max_queued`](Config::max_queued) videos (a live video counts as one, and none of
    /// its bytes count against the byte limit: they are bounded by
    /// [`live_buffer_bytes`](Config::live_buffer_bytes)).
    ///
    /// Works with the containers that can be read as they arrive: MPEG-TS, fragmented or faststart MP4,
    /// Matroska/WebM, raw H.264/HEVC (Annex B), and others FFmpeg reads without seeking. An MP4 with its index
    /// at the end is buffered until it is finished, or failed fast ([`Config::moov_at_end`]).
    ///
    /// ```no_run
    /// # use framefeed::{Config, VideoInput};
    /// let input = VideoInput::new(Config::new(8, 1).low_latency())?;
    /// let live = input.feed_live_with_label("camera-1")?;
    /// # let chunks: Vec<Vec<u8>> = vec![];
    /// for chunk in chunks {           // e.g. from a socket
    ///     live.push(chunk)?;          // waits if the decoder is 8 MiB behind
    /// }
    /// live.finish();
    /// # Ok::<(), framefeed::Error>(())
    /// ```
    pub fn feed_live(&self) -> Result<LiveVideo> {
        self.push_live(None)
    }

    /// Queues a video to be pulled by URL through FFmpeg's own protocols: a camera (`rtsp://`), a contribution
    /// feed (`srt://`, `rtmp://`), an HLS playlist or progressive media over `http(s)://`, or a `file:` path
    /// when [`UrlOptions::schemes`] allows it. The decoding thread opens it (within the open timeout), reads it
    /// (a read waiting past the read timeout counts as a drop), reopens it per the [`Reconnect`](crate::Reconnect)
    /// policy (the next batch reports the [`Gap`](crate::Gap)), and ends the video when the source ends it. A
    /// source that cannot be opened, or drops with no reconnect left, fails this video alone, after the frames
    /// decoded. Closing or dropping the operator ends a pull at once, even inside a network wait.
    ///
    /// The URL's scheme is checked here, against the options' allowlist ([`Error::Config`] when refused), and
    /// the options are validated. Batching, transforms and the live settings come from the operator's
    /// [`Config`] ([`Config::low_latency`] for the lowest latency).
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # use framefeed::{Config, Reconnect, UrlOptions, VideoInput};
    /// let input = VideoInput::new(Config::new(8, 1).low_latency())?;
    /// let options = UrlOptions::new().read_timeout(Duration::from_secs(3)).reconnect(Reconnect::Never);
    /// input.feed_url_with_label("srt://192.0.2.7:9000", options, "camera-1")?;
    /// while let Some(batch) = input.next_batch()? {
    ///     if let Some(gap) = batch.gap() {
    ///         eprintln!("the source was away for {:?}", gap.duration);
    ///     }
    /// }
    /// # Ok::<(), framefeed::Error>(())
    /// ```
    pub fn feed_url(&self, url: impl Into<String>, options: UrlOptions) -> Result<VideoId> {
        self.push_url(url.into(), options, None)
    }

    /// Like [`feed_url`](Self::feed_url), with a label (the URL, without its credentials, is the default).
    pub fn feed_url_with_label(
        &self,
        url: impl Into<String>,
        options: UrlOptions,
        label: impl Into<Label>,
    ) -> Result<VideoId> {
        self.push_url(url.into(), options, Some(label.into()))
    }

    fn push_url(&self, url: String, options: UrlOptions, label: Option<Label>) -> Result<VideoId> {
        options.validate()?;
        let scheme = options.admit(&url)?;
        let label = label.unwrap_or_else(|| Label::from(crate::source::url::redact_url(&url)));
        self.push(
            Source::Url(Box::new(UrlSource {
                url,
                scheme,
                options,
            })),
            Some(label),
        )
    }

    /// Like [`feed_live`](Self::feed_live), with a label.
    pub fn feed_live_with_label(&self, label: impl Into<Label>) -> Result<LiveVideo> {
        self.push_live(Some(label.into()))
    }

    fn push_live(&self, label: Option<Label>) -> Result<LiveVideo> {
        // The id is given on admission; the producer's handle is returned only after it, and the decoding
        // thread reads the id only in errors it sends after taking the video from the queue.
        let live = Arc::new(LiveShared::new(
            label.clone(),
            self.config.live_buffer_bytes,
        ));
        let id = self.push(Source::Live(live.clone()), label)?;
        live.set_id(id);
        Ok(LiveVideo::new(live))
    }

    fn push(&self, source: Source, label: Option<Label>) -> Result<VideoId> {
        self.feed
            .push(source, label)
            .map_err(|(refused, _)| match refused {
                Refused::Full(_) => unreachable_full(),
                Refused::Closed(_) => Error::Closed,
            })
    }

    fn try_push(
        &self,
        data: Bytes,
        label: Option<Label>,
    ) -> std::result::Result<VideoId, TryFeedError> {
        self.feed
            .try_push(Source::Whole(data), label)
            .map_err(|(refused, _)| refused_to_try(refused))
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

    /// How many of [`buffer_allocations`](Self::buffer_allocations) are on the system's reserved huge pages
    /// (see [`Config::huge_pages`]); 0 without that setting.
    pub fn huge_page_allocations(&self) -> u64 {
        self.pool.huge_page_allocations()
    }

    /// The next batch.
    ///
    /// Blocking mode (the default): waits until a batch is ready; after [`close`](Self::close) and the last
    /// batch, `Ok(None)`. Non-blocking mode: when nothing is fed and nothing is ready, returns
    /// [`Error::NoData`] at once; when videos are fed but still decoding, waits for their next result.
    ///
    /// A video that fails gives its batches decoded so far, then one `Err(Error::Video { .. })`; the next
    /// poll goes on with the next video.
    pub fn next_batch(&self) -> Result<Option<Batch>> {
        loop {
            let item = if !self.config.blocking && !self.work_pending() {
                match self.out.try_recv() {
                    Ok(item) => item,
                    Err(_) if self.is_closed() => return Ok(None),
                    Err(_) => return Err(Error::NoData),
                }
            } else {
                match self.out.recv() {
                    Ok(item) => item,
                    Err(_) => return self.disconnected(),
                }
            };
            if let Some(result) = self.take(item) {
                return result;
            }
        }
    }

    /// The next batch if one is ready now; never waits. `Ok(None)` after close and the last batch;
    /// [`Error::NotReady`] while videos are still decoding; [`Error::NoData`] when nothing is fed.
    pub fn try_next_batch(&self) -> Result<Option<Batch>> {
        loop {
            let item = match self.out.try_recv() {
                Ok(item) => item,
                Err(TryRecvError::Disconnected) => return self.disconnected(),
                Err(TryRecvError::Empty) if self.work_pending() => return Err(Error::NotReady),
                Err(TryRecvError::Empty) if self.is_closed() => return Ok(None),
                Err(TryRecvError::Empty) => return Err(Error::NoData),
            };
            if let Some(result) = self.take(item) {
                return result;
            }
        }
    }

    /// Like blocking [`next_batch`](Self::next_batch), waiting at most `timeout`: [`Error::Timeout`] when no
    /// batch came in time.
    pub fn next_batch_timeout(&self, timeout: Duration) -> Result<Option<Batch>> {
        let deadline = Instant::now() + timeout;
        loop {
            let item = match self.out.recv_deadline(deadline) {
                Ok(item) => item,
                Err(RecvTimeoutError::Disconnected) => return self.disconnected(),
                Err(RecvTimeoutError::Timeout) => return Err(Error::Timeout(timeout)),
            };
            if let Some(result) = self.take(item) {
                return result;
            }
        }
    }

    /// An iterator over batches, calling [`next_batch`](Self::next_batch) until `Ok(None)`. In non-blocking
    /// mode it also ends when nothing more is fed ([`Error::NoData`]). Video errors are yielded as `Err` and
    /// iteration goes on; any other error is yielded once and ends the iteration.
    pub fn iter(&self) -> Batches<'_> {
        Batches {
            input: self,
            done: false,
        }
    }

    /// The next batch, as a future: like blocking [`next_batch`](Self::next_batch) (it waits for feeds in
    /// both blocking and non-blocking mode), but it parks the task, not the thread, and wakes it when the
    /// decoding thread sends a batch or an error, or when the input is closed. No thread is blocked and no
    /// polling loop runs while it waits; it works on any executor (tokio's current-thread and multi-thread
    /// runtimes included).
    ///
    /// Cancel-safe: a batch is taken from the queue only in the poll that returns it, so dropping a pending
    /// future (e.g. in `tokio::select!` or on a timeout) loses nothing.
    pub fn next_batch_async(&self) -> NextBatch<'_> {
        NextBatch { input: self }
    }

    /// A future that completes when a poll would not wait: a batch or a video's error is ready, or nothing
    /// more will come (the input is closed and every video delivered, or the decoding thread ended). It takes
    /// nothing: for bridges to other event loops, which then take the batch with
    /// [`try_next_batch`](Self::try_next_batch) where their own cancellation cannot interleave (the Python
    /// package's `next_batch_async` does so on the asyncio loop). Another poller may take the batch first.
    pub fn ready(&self) -> Ready<'_> {
        Ready { input: self }
    }

    /// A future that completes when [`try_feed`](Self::try_feed) of a video of `bytes` bytes would not find the
    /// queue full, or the input is closed (a feed would fail at once). It queues nothing; see
    /// [`ready`](Self::ready) for what it is for. Another feeder may take the room first.
    pub fn feed_ready(&self, bytes: usize) -> FeedReady<'_> {
        FeedReady { input: self, bytes }
    }

    /// The batches as a [`futures_core::Stream`] of `Result<Batch>`, ending after close and the last batch.
    /// Video errors are items and the stream goes on; any other error is yielded once and ends it. Cancel-safe
    /// like [`next_batch_async`](Self::next_batch_async).
    pub fn batches(&self) -> BatchStream<'_> {
        BatchStream {
            input: self,
            done: false,
        }
    }

    /// One async poll: a message if there is one, the end if there is none to come, else `Pending` with the
    /// task registered for a wake-up.
    fn poll_next_batch(&self, cx: &mut Context<'_>) -> Poll<Result<Option<Batch>>> {
        let mut attempt = 0;
        while attempt < 2 {
            match self.out.try_recv() {
                Ok(item) => match self.take(item) {
                    Some(result) => return Poll::Ready(result),
                    // An end-of-video marker: look again.
                    None => continue,
                },
                Err(TryRecvError::Disconnected) => return Poll::Ready(self.disconnected()),
                Err(TryRecvError::Empty) if self.is_closed() && !self.work_pending() => {
                    return Poll::Ready(Ok(None))
                }
                Err(TryRecvError::Empty) if attempt == 0 => {
                    // Register, then look again: a message sent in between is not missed.
                    self.shared.register(cx.waker());
                }
                Err(TryRecvError::Empty) => {}
            }
            attempt += 1;
        }
        Poll::Pending
    }

    /// Whether a poll would not wait now: a message is ready, everything was delivered after close, or the
    /// decoding thread ended.
    fn would_not_wait(&self) -> bool {
        !self.out.is_empty()
            || (self.is_closed() && !self.work_pending())
            || self.worker.as_ref().is_none_or(JoinHandle::is_finished)
    }

    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.would_not_wait() {
            return Poll::Ready(());
        }
        self.shared.register(cx.waker());
        // A message sent between the check and the registration is not missed.
        if self.would_not_wait() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// Fed videos not fully delivered yet.
    fn work_pending(&self) -> bool {
        self.queued_videos() > 0
    }

    /// Accounts for a message; `None` for an end-of-video marker (nothing to return: poll again).
    fn take(&self, item: Item) -> Option<Result<Option<Batch>>> {
        if item.ended > 0 {
            self.finished.fetch_add(item.ended, Ordering::AcqRel);
        }
        self.depleted.store(item.ended > 0, Ordering::Release);
        item.result.map(|r| {
            r.map(|mut batch| {
                batch.delivered = Some(Instant::now());
                Some(batch)
            })
        })
    }

    /// The thread has ended: normally only after close, once everything was delivered.
    fn disconnected(&self) -> Result<Option<Batch>> {
        if self.shared.exited_cleanly.load(Ordering::Acquire) && !self.work_pending() {
            Ok(None)
        } else {
            Err(Error::WorkerDied(
                "the decoding thread ended before delivering every video".into(),
            ))
        }
    }
}

impl Drop for VideoInput {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
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

/// A blocking push never comes back `Full`: it waits for room instead.
fn unreachable_full() -> Error {
    Error::WorkerDied("the feed queue refused a video it should have waited for".into())
}

fn refused_to_try(refused: Refused) -> TryFeedError {
    match refused {
        Refused::Full(source) => TryFeedError::Full(whole(source)),
        Refused::Closed(source) => TryFeedError::Closed(whole(source)),
    }
}

/// The bytes of a whole video handed back (a live or URL video has none to hand back).
fn whole(source: Source) -> Bytes {
    match source {
        Source::Whole(data) => data,
        Source::Live(_) | Source::Url(_) => Bytes::new(),
    }
}

/// The future of [`VideoInput::feed_async`].
#[must_use = "futures do nothing unless polled"]
pub struct FeedVideo<'a> {
    input: &'a VideoInput,
    pending: Option<(Bytes, Option<Label>)>,
}

impl Future for FeedVideo<'_> {
    type Output = Result<VideoId>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some((data, label)) = self.pending.take() else {
            return Poll::Ready(Err(Error::Closed));
        };
        match self.input.feed.poll_push(cx, Source::Whole(data), label) {
            Ok(id) => Poll::Ready(Ok(id)),
            Err((Refused::Closed(_), _)) => Poll::Ready(Err(Error::Closed)),
            Err((Refused::Full(source), label)) => {
                self.pending = Some((whole(source), label));
                Poll::Pending
            }
        }
    }
}

/// Iterator over an operator's batches; see [`VideoInput::iter`].
pub struct Batches<'a> {
    input: &'a VideoInput,
    /// Set after an error that is not one video's: nothing more can come.
    done: bool,
}

impl Iterator for Batches<'_> {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.input.next_batch() {
            Ok(Some(batch)) => Some(Ok(batch)),
            Ok(None) | Err(Error::NoData) => None,
            Err(e @ Error::Video { .. }) => Some(Err(e)),
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// The future of [`VideoInput::next_batch_async`].
#[must_use = "futures do nothing unless polled"]
pub struct NextBatch<'a> {
    input: &'a VideoInput,
}

impl Future for NextBatch<'_> {
    type Output = Result<Option<Batch>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.input.poll_next_batch(cx)
    }
}

/// The future of [`VideoInput::ready`].
#[must_use = "futures do nothing unless polled"]
pub struct Ready<'a> {
    input: &'a VideoInput,
}

impl Future for Ready<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.input.poll_ready(cx)
    }
}

/// The future of [`VideoInput::feed_ready`].
#[must_use = "futures do nothing unless polled"]
pub struct FeedReady<'a> {
    input: &'a VideoInput,
    bytes: usize,
}

impl Future for FeedReady<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.input.feed.poll_room(cx, self.bytes)
    }
}

/// The stream of [`VideoInput::batches`].
#[must_use = "streams do nothing unless polled"]
pub struct BatchStream<'a> {
    input: &'a VideoInput,
    done: bool,
}

impl futures_core::Stream for BatchStream<'_> {
    type Item = Result<Batch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        let item = match self.input.poll_next_batch(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(Some(batch))) => Some(Ok(batch)),
            Poll::Ready(Ok(None)) => None,
            Poll::Ready(Err(e)) => Some(Err(e)),
        };
        if !matches!(item, Some(Ok(_)) | Some(Err(Error::Video { .. }))) {
            self.done = true;
        }
        Poll::Ready(item)
    }
}

impl<'a> IntoIterator for &'a VideoInput {
    type Item = Result<Batch>;
    type IntoIter = Batches<'a>;

    fn into_iter(self) -> Batches<'a> {
        self.iter()
    }
}

/// Resolves `Auto` and sets up CUDA: `Cuda(n)` that cannot be used is an error, `Auto` then picks the CPU.
fn resolve_device(device: Device, max_free: usize) -> Result<(Device, Option<Arc<GpuRuntime>>)> {
    let ordinal = match device {
        Device::Cpu => return Ok((Device::Cpu, None)),
        Device::Cuda(n) => n,
        Device::Auto => 0,
    };
    match crate::device::runtime(ordinal, max_free) {
        Ok(gpu) => Ok((Device::Cuda(ordinal), Some(gpu))),
        Err(reason) if device == Device::Auto => {
            tracing::info!(%reason, "Device::Auto: no usable GPU, decoding on the CPU");
            Ok((Device::Cpu, None))
        }
        Err(reason) => Err(Error::CudaUnavailable { device, reason }),
    }
}
