//! Live input: one video whose bytes arrive over time, pushed chunk by chunk through a [`LiveVideo`] handle and
//! read by the decoding thread as they come (a [`StreamSource`] under lavf's AVIO, without seeking). Consumed
//! chunks are dropped at once, and the producer waits when `live_buffer_bytes` are buffered ahead of the
//! decoder, so memory stays bounded however long the stream runs.
//!
//! MP4 needs its index (`moov`) before its media data to be read as a stream; [`sniff_mp4`](crate::demux::mp4::sniff::sniff_mp4) tells, from the first
//! box headers, whether a live MP4 has it at the end, so the worker can buffer it or fail it fast
//! ([`MoovAtEnd`](crate::MoovAtEnd)).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result, TryFeedError, VideoError};
use crate::ffi::io::{StreamRead, StreamSource};
use crate::signal::{Signals, WakerSet};
use crate::video::{Label, VideoId, VideoRef};

/// How often a waiting reader looks at the operator's stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);

#[derive(Default)]
struct State {
    chunks: VecDeque<Bytes>,
    /// Bytes in `chunks`.
    buffered: usize,
    /// Bytes pushed in all.
    received: u64,
    /// The producer called `finish`.
    finished: bool,
    /// The producer aborted, with this reason.
    aborted: Option<String>,
    /// The decoder will read no more (the video ended, failed, or the operator is gone).
    closed: bool,
    /// Why reading failed, for the worker to report instead of FFmpeg's I/O error.
    failure: Option<Failure>,
}

/// Why a live read failed.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    Video(VideoError),
    /// The operator is shutting down.
    Shutdown,
}

/// A check of a live video's frame size, run once on the decoding thread when its stream's header gives the
/// size, before its decoder opens ([`LiveVideo::on_frame_size`]). `Err(reason)` fails the video with
/// [`VideoError::LiveAborted`] and that reason.
pub(crate) type FrameSizeGate = Box<dyn FnOnce(u32, u32) -> std::result::Result<(), String> + Send>;

/// State shared by a [`LiveVideo`] handle and the decoding thread.
pub(crate) struct LiveShared {
    /// The id given when the feed queue admits the video.
    id: AtomicU64,
    /// The frame size its stream's header gave (`width << 32 | height`), 0 until the demuxer read it.
    frame_size: AtomicU64,
    /// Run once the frame size is known ([`LiveVideo::on_frame_size`]).
    gate: Mutex<Option<FrameSizeGate>>,
    label: Option<Label>,
    state: Mutex<State>,
    /// Signalled when data arrives or the producer finishes or aborts.
    data: Condvar,
    /// Signalled when the decoder consumes data or closes.
    room: Condvar,
    /// Async producers waiting for room.
    pushers: WakerSet,
    max_buffered: usize,
    /// Collected whole (up to this many bytes) before it is demuxed, as a whole video.
    whole: Option<u64>,
}

impl LiveShared {
    pub(crate) fn new(label: Option<Label>, max_buffered: usize) -> Self {
        Self {
            id: AtomicU64::new(u64::MAX),
            frame_size: AtomicU64::new(0),
            gate: Mutex::new(None),
            label,
            state: Mutex::new(State::default()),
            data: Condvar::new(),
            room: Condvar::new(),
            pushers: WakerSet::default(),
            max_buffered,
            whole: None,
        }
    }

    /// Collected whole, up to `max_bytes`, before it is demuxed: a whole video that arrives in chunks.
    pub(crate) fn whole(mut self, max_bytes: u64) -> Self {
        self.whole = Some(max_bytes);
        self
    }

    /// The most bytes it is collected whole up to, when it is.
    pub(crate) fn whole_limit(&self) -> Option<u64> {
        self.whole
    }

    /// Records the id the feed queue gave.
    pub(crate) fn set_id(&self, id: VideoId) {
        self.id.store(id.0, Ordering::Release);
    }

    /// Records the frame size the stream's header gave (ignored when either side is 0) and runs the gate set
    /// with [`LiveVideo::on_frame_size`], if any: its refusal aborts the video, and is the error returned.
    pub(crate) fn set_frame_size(
        &self,
        width: u32,
        height: u32,
    ) -> std::result::Result<(), VideoError> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        let packed = u64::from(width) << 32 | u64::from(height);
        self.frame_size.store(packed, Ordering::Release);
        let Some(gate) = self.gate.lock().take() else {
            return Ok(());
        };
        gate(width, height).map_err(|reason| {
            self.end(Some(reason.clone()));
            VideoError::LiveAborted {
                reason,
                received: self.state.lock().received,
            }
        })
    }

    fn video(&self) -> VideoRef {
        VideoRef {
            id: VideoId(self.id.load(Ordering::Acquire)),
            label: self.label.clone(),
        }
    }

    fn wake_pushers(&self) {
        self.room.notify_all();
        self.pushers.wake_all();
    }

    /// The decoder reads no more: pushes fail from now on, and buffered chunks are dropped.
    pub(crate) fn close(&self) {
        {
            let mut state = self.state.lock();
            state.closed = true;
            state.chunks.clear();
            state.buffered = 0;
        }
        self.wake_pushers();
    }

    /// Keeps why reading failed and stops taking data (the producer learns at its next push).
    fn record_failure(state: &mut State, failure: &Failure) {
        state.failure = Some(failure.clone());
        state.closed = true;
        state.chunks.clear();
        state.buffered = 0;
    }

    /// Fails the video for a reason found while reading it: the worker reports `error` rather than FFmpeg's I/O
    /// error, and the producer learns at its next push.
    pub(crate) fn fail(&self, error: VideoError) {
        Self::record_failure(&mut self.state.lock(), &Failure::Video(error));
        self.wake_pushers();
    }

    /// Why reading failed, if it did.
    pub(crate) fn failure(&self) -> Option<Failure> {
        self.state.lock().failure.clone()
    }

    /// Ready when a chunk of `bytes` would be taken now, or the video no longer takes data (a push would fail
    /// at once); otherwise the task is woken when the decoder makes room. Queues nothing.
    fn poll_room(&self, cx: &mut Context<'_>, bytes: usize) -> Poll<()> {
        let ready = || {
            let state = self.state.lock();
            state.closed
                || state.finished
                || state.aborted.is_some()
                || state.buffered == 0
                || state.buffered + bytes <= self.max_buffered
        };
        if ready() {
            return Poll::Ready(());
        }
        self.pushers.register(cx.waker());
        if ready() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// Tries to queue `chunk`; gives it back when the buffer is full.
    fn try_push(&self, chunk: Bytes) -> std::result::Result<(), TryFeedError> {
        let mut state = self.state.lock();
        if state.closed || state.finished || state.aborted.is_some() {
            return Err(TryFeedError::Closed(chunk));
        }
        if chunk.is_empty() {
            return Ok(());
        }
        // An empty buffer takes any chunk, however large.
        if state.buffered > 0 && state.buffered + chunk.len() > self.max_buffered {
            return Err(TryFeedError::Full(chunk));
        }
        state.buffered += chunk.len();
        state.received += chunk.len() as u64;
        state.chunks.push_back(chunk);
        drop(state);
        self.data.notify_all();
        Ok(())
    }

    fn ended(&self) -> Error {
        Error::LiveEnded {
            video: self.video(),
        }
    }

    fn push_blocking(&self, chunk: Bytes) -> Result<()> {
        let mut chunk = chunk;
        loop {
            match self.try_push(chunk) {
                Ok(()) => return Ok(()),
                Err(TryFeedError::Full(c)) => {
                    chunk = c;
                    let mut state = self.state.lock();
                    // Re-check under the lock, then wait for the decoder to consume or close.
                    if !state.closed
                        && state.buffered > 0
                        && state.buffered + chunk.len() > self.max_buffered
                    {
                        self.room.wait(&mut state);
                    }
                }
                Err(_) => return Err(self.ended()),
            }
        }
    }

    fn end(&self, abort: Option<String>) {
        {
            let mut state = self.state.lock();
            if state.finished || state.aborted.is_some() {
                return;
            }
            match abort {
                Some(reason) => state.aborted = Some(reason),
                None => state.finished = true,
            }
        }
        self.data.notify_all();
    }

    /// Waits until `ready(state)` holds, failing on abort, stall or shutdown. Returns with the lock held.
    fn wait_until<'a>(
        &'a self,
        stop: &Signals,
        stall_timeout: Duration,
        mut ready: impl FnMut(&State) -> bool,
    ) -> std::result::Result<parking_lot::MutexGuard<'a, State>, Failure> {
        let mut state = self.state.lock();
        let mut deadline = Instant::now() + stall_timeout;
        let mut received = state.received;
        loop {
            let failure = if stop.stop.load(Ordering::Relaxed) {
                Some(Failure::Shutdown)
            } else if let Some(reason) = &state.aborted {
                Some(Failure::Video(VideoError::LiveAborted {
                    reason: reason.clone(),
                    received: state.received,
                }))
            } else if ready(&state) {
                return Ok(state);
            } else if state.received != received {
                // Data arrived (but not enough yet): the stall clock restarts.
                received = state.received;
                deadline = Instant::now() + stall_timeout;
                None
            } else if Instant::now() >= deadline {
                Some(Failure::Video(VideoError::LiveStalled {
                    waited: stall_timeout,
                    received: state.received,
                }))
            } else {
                None
            };
            if let Some(failure) = failure {
                Self::record_failure(&mut state, &failure);
                drop(state);
                self.wake_pushers();
                return Err(failure);
            }
            let wait = deadline
                .saturating_duration_since(Instant::now())
                .min(STOP_CHECK);
            self.data.wait_for(&mut state, wait);
        }
    }

    /// The first `take` bytes of the stream (fewer if it has fewer), once `need` bytes have arrived or the
    /// producer has finished; and whether it has finished. For the demux stage's sniffing.
    pub(crate) fn prefix(
        &self,
        stop: &Signals,
        stall_timeout: Duration,
        need: usize,
        take: usize,
    ) -> std::result::Result<(Vec<u8>, bool), Failure> {
        let state = self.wait_until(stop, stall_timeout, |s| s.buffered >= need || s.finished)?;
        let prefix = state
            .chunks
            .iter()
            .flat_map(|c| c.iter().copied())
            .take(take)
            .collect();
        Ok((prefix, state.finished))
    }

    /// The most bytes kept ahead of the decoder ([`Config::live_buffer_bytes`](crate::Config::live_buffer_bytes)).
    pub(crate) fn max_buffered(&self) -> usize {
        self.max_buffered
    }

    /// Gathers every chunk until the producer finishes (for an MP4 with its `moov` at the end), failing past
    /// `max_bytes`.
    pub(crate) fn collect_all(
        &self,
        stop: &Signals,
        stall_timeout: Duration,
        max_bytes: u64,
    ) -> std::result::Result<Bytes, Failure> {
        // Grown fallibly: the upload's size drives it (bounded by `max_bytes`).
        let mut all: Vec<u8> = Vec::new();
        loop {
            let mut state =
                self.wait_until(stop, stall_timeout, |s| s.buffered > 0 || s.finished)?;
            let finished = state.finished && state.buffered == 0;
            let chunks = std::mem::take(&mut state.chunks);
            state.buffered = 0;
            if all.len() as u64 + chunks.iter().map(|c| c.len() as u64).sum::<u64>() > max_bytes {
                let failure = Failure::Video(match self.whole {
                    Some(_) => VideoError::WholeTooLarge { max_bytes },
                    None => VideoError::MoovAtEndTooLarge { max_bytes },
                });
                Self::record_failure(&mut state, &failure);
                drop(state);
                self.wake_pushers();
                return Err(failure);
            }
            let more: usize = chunks.iter().map(|c| c.len()).sum();
            if all.try_reserve(more).is_err() {
                let failure = Failure::Video(VideoError::OutOfMemory {
                    what: match self.whole {
                        Some(_) => "a video collected whole before it is decoded",
                        None => "an MP4 buffered until its index arrives",
                    },
                    bytes: all.len().saturating_add(more),
                });
                Self::record_failure(&mut state, &failure);
                drop(state);
                self.wake_pushers();
                return Err(failure);
            }
            drop(state);
            self.wake_pushers();
            for chunk in chunks {
                all.extend_from_slice(&chunk);
            }
            if finished {
                return Ok(Bytes::from(all));
            }
        }
    }
}

/// The decoding thread's end of a live video: lavf reads through it.
pub(crate) struct LiveReader {
    live: Arc<LiveShared>,
    stop: Arc<Signals>,
    stall_timeout: Duration,
}

impl LiveReader {
    pub(crate) fn new(live: Arc<LiveShared>, stop: Arc<Signals>, stall_timeout: Duration) -> Self {
        Self {
            live,
            stop,
            stall_timeout,
        }
    }
}

impl StreamSource for LiveReader {
    fn read(&mut self, buf: &mut [u8]) -> StreamRead {
        let live = &self.live;
        let Ok(mut state) = live.wait_until(&self.stop, self.stall_timeout, |s| {
            s.buffered > 0 || s.finished
        }) else {
            return StreamRead::Failed;
        };
        let Some(front) = state.chunks.front_mut() else {
            return StreamRead::End;
        };
        let n = front.len().min(buf.len());
        buf[..n].copy_from_slice(&front[..n]);
        front.advance(n);
        if front.is_empty() {
            // The consumed chunk is dropped here.
            state.chunks.pop_front();
        }
        state.buffered -= n;
        drop(state);
        live.wake_pushers();
        StreamRead::Data(n)
    }
}

/// A producer's handle on one live video: push its chunks as they arrive, then [`finish`](Self::finish) it (or
/// [`abort`](Self::abort) it). Made by [`VideoInput::feed_live`](crate::VideoInput::feed_live).
///
/// The decoder reads chunks as they come, so batches are delivered while the video is still arriving. At most
/// [`live_buffer_bytes`](crate::Config::live_buffer_bytes) are kept ahead of the decoder: beyond that
/// [`push`](Self::push) waits, [`try_push`](Self::try_push) hands the chunk back and
/// [`push_async`](Self::push_async) waits for room. Consumed chunks are dropped at once.
///
/// Dropping the handle without calling [`finish`](Self::finish) aborts the video
/// ([`VideoError::LiveAborted`]): an upload cut short is not mistaken for a complete one.
///
/// The operator decodes its videos one after another, so a live video holds back the videos fed after it
/// until it ends; serve concurrent live streams with one [`VideoInput`](crate::VideoInput) each.
pub struct LiveVideo {
    shared: Arc<LiveShared>,
    ended: bool,
}

impl LiveVideo {
    pub(crate) fn new(shared: Arc<LiveShared>) -> Self {
        Self {
            shared,
            ended: false,
        }
    }

    /// The video's id (its batches and errors carry it).
    pub fn id(&self) -> VideoId {
        VideoId(self.shared.id.load(Ordering::Acquire))
    }

    /// Bytes pushed so far.
    pub fn received(&self) -> u64 {
        self.shared.state.lock().received
    }

    /// The video's frame size (width, height) as its stream's header gives it, once the demuxer has read it
    /// (before any frame is decoded); `None` until then. A service sizes what it reserves for the video by it.
    pub fn frame_size(&self) -> Option<(u32, u32)> {
        match self.shared.frame_size.load(Ordering::Acquire) {
            0 => None,
            packed => Some(((packed >> 32) as u32, packed as u32)),
        }
    }

    /// Sets a check of the video's frame size, run once on the decoding thread as soon as its stream's header
    /// gives the size ([`frame_size`](Self::frame_size)), before its decoder opens and so before any frame
    /// buffer exists: a service reserves the memory frames of that size need there, and refuses the video
    /// (`Err(reason)`: it fails with [`VideoError::LiveAborted`]) when it cannot. A stream whose header gives no
    /// size (some containers learn it from the first frame) never runs it. Replaces a gate set before.
    pub fn on_frame_size(
        &self,
        gate: impl FnOnce(u32, u32) -> std::result::Result<(), String> + Send + 'static,
    ) {
        *self.shared.gate.lock() = Some(Box::new(gate));
    }

    /// Queues the next chunk, waiting while the live buffer is full. Fails with [`Error::LiveEnded`] when the
    /// video no longer takes data (it failed, or the operator was dropped). Empty chunks are ignored.
    pub fn push(&self, chunk: impl Into<Bytes>) -> Result<()> {
        self.shared.push_blocking(chunk.into())
    }

    /// Queues the next chunk if there is room now; hands it back otherwise.
    pub fn try_push(&self, chunk: impl Into<Bytes>) -> std::result::Result<(), TryFeedError> {
        self.shared.try_push(chunk.into())
    }

    /// Queues the next chunk, waiting (as a future, without blocking a thread) while the live buffer is full.
    /// Dropping the future before it completes does not queue the chunk.
    pub fn push_async(&self, chunk: impl Into<Bytes>) -> PushChunk<'_> {
        PushChunk {
            live: self,
            chunk: Some(chunk.into()),
        }
    }

    /// A future that completes when a chunk of `bytes` would be taken now by
    /// [`try_push`](Self::try_push), or the video no longer takes data (a push would fail at once). It queues
    /// nothing: for bridges to other event loops, which then push with `try_push` where their own cancellation
    /// cannot interleave (the Python package's `push_async`). Another producer may take the room first.
    pub fn push_ready(&self, bytes: usize) -> PushReady<'_> {
        PushReady { live: self, bytes }
    }

    /// Ends the video normally: the decoder reads the buffered chunks and stops at their end.
    pub fn finish(mut self) {
        self.ended = true;
        self.shared.end(None);
    }

    /// Ends the video as failed: it fails with [`VideoError::LiveAborted`] carrying `reason`, after the batches
    /// decoded so far. Other videos are not affected.
    pub fn abort(mut self, reason: impl Into<String>) {
        self.ended = true;
        self.shared.end(Some(reason.into()));
    }
}

impl Drop for LiveVideo {
    fn drop(&mut self) {
        if !self.ended {
            self.shared.end(Some(
                "the LiveVideo handle was dropped before finish()".into(),
            ));
        }
    }
}

impl std::fmt::Debug for LiveVideo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveVideo")
            .field("video", &self.shared.video())
            .finish_non_exhaustive()
    }
}

/// The future of [`LiveVideo::push_async`].
#[must_use = "futures do nothing unless polled"]
pub struct PushChunk<'a> {
    live: &'a LiveVideo,
    chunk: Option<Bytes>,
}

impl Future for PushChunk<'_> {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let shared = &self.live.shared;
        let Some(chunk) = self.chunk.take() else {
            return Poll::Ready(Ok(()));
        };
        let chunk = match shared.try_push(chunk) {
            Ok(()) => return Poll::Ready(Ok(())),
            Err(TryFeedError::Full(chunk)) => chunk,
            Err(_) => return Poll::Ready(Err(shared.ended())),
        };
        shared.pushers.register(cx.waker());
        // Room made between the attempt and the registration is not missed.
        match shared.try_push(chunk) {
            Ok(()) => Poll::Ready(Ok(())),
            Err(TryFeedError::Full(chunk)) => {
                self.chunk = Some(chunk);
                Poll::Pending
            }
            Err(_) => Poll::Ready(Err(shared.ended())),
        }
    }
}

/// The future of [`LiveVideo::push_ready`].
#[must_use = "futures do nothing unless polled"]
pub struct PushReady<'a> {
    live: &'a LiveVideo,
    bytes: usize,
}

impl Future for PushReady<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.live.shared.poll_room(cx, self.bytes)
    }
}
