//! The feed queue: encoded videos waiting to be decoded, with their ids and labels. The queue is bounded by a
//! number of videos and a number of bytes; feeders wait (blocking or async) or get their buffer back when it is
//! full, and the decoding thread takes videos from its front.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use crate::video::{ClipKey, Whole};
use parking_lot::{Condvar, Mutex};

use crate::signal::WakerSet;
use crate::source::live::LiveShared;
use crate::source::url::UrlSource;
use crate::video::{Label, VideoId, VideoRef};

/// Where a queued video's bytes come from.
pub(crate) enum Source {
    /// The whole encoded video, in memory or a file, and where it sits in its dataset (its random clips).
    Whole(Whole, ClipKey),
    /// A live video whose chunks arrive through a [`LiveVideo`](crate::LiveVideo) handle.
    Live(std::sync::Arc<LiveShared>),
    /// A video pulled by URL by the decoding thread.
    Url(Box<UrlSource>),
}

impl Source {
    /// The bytes this source holds against the queue's byte limit (a file holds none in memory; a live video's
    /// chunks are bounded by its own buffer instead).
    fn queued_bytes(&self) -> usize {
        match self {
            Source::Whole(data, _) => data.memory_bytes(),
            Source::Live(_) | Source::Url(_) => 0,
        }
    }
}

/// One fed video, waiting in the queue for the decoding thread.
pub(crate) struct QueuedVideo {
    pub(crate) video: VideoRef,
    pub(crate) source: Source,
}

/// Why a video could not be queued now; the caller gets its source back.
pub(crate) enum Refused {
    /// The queue is at one of its limits.
    Full(Source),
    /// The queue is closed (or the operator is shutting down).
    Closed(Source),
}

struct State {
    videos: VecDeque<QueuedVideo>,
    bytes: usize,
    /// No more videos will be queued.
    closed: bool,
    /// The id the next admitted video gets.
    next_id: u64,
}

/// The bounded queue between feeders and the decoding thread.
pub(crate) struct FeedQueue {
    state: Mutex<State>,
    /// Signalled when a video is taken (room) or the queue is closed.
    room: Condvar,
    /// Signalled when a video is queued or the queue is closed.
    filled: Condvar,
    /// Async feeders waiting for room.
    feeders: WakerSet,
    max_videos: usize,
    max_bytes: usize,
}

impl FeedQueue {
    pub(crate) fn new(max_videos: usize, max_bytes: usize) -> Self {
        Self {
            state: Mutex::new(State {
                videos: VecDeque::new(),
                bytes: 0,
                closed: false,
                next_id: 0,
            }),
            room: Condvar::new(),
            filled: Condvar::new(),
            feeders: WakerSet::default(),
            max_videos,
            max_bytes,
        }
    }

    /// Whether a video holding `bytes` fits now. An empty queue takes any one video, however large, so that a
    /// video larger than the byte limit can still be fed (alone).
    fn fits(&self, state: &State, bytes: usize) -> bool {
        state.videos.is_empty()
            || (state.videos.len() < self.max_videos && state.bytes + bytes <= self.max_bytes)
    }

    /// Ready when a whole video of `bytes` would be queued now, or the queue is closed (a feed would fail at
    /// once); otherwise the task is woken when room is made. Queues nothing.
    pub(crate) fn poll_room(&self, cx: &mut Context<'_>, bytes: usize) -> Poll<()> {
        let ready = || {
            let state = self.state.lock();
            state.closed || self.fits(&state, bytes)
        };
        if ready() {
            return Poll::Ready(());
        }
        self.feeders.register(cx.waker());
        // Room made between the check and the registration is not missed.
        if ready() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// Queues the video if there is room now; the id is given on admission, so ids follow the queue order.
    pub(crate) fn try_push(
        &self,
        source: Source,
        label: Option<Label>,
    ) -> Result<VideoId, (Refused, Option<Label>)> {
        let mut state = self.state.lock();
        self.admit(&mut state, source, label)
    }

    fn admit(
        &self,
        state: &mut State,
        source: Source,
        label: Option<Label>,
    ) -> Result<VideoId, (Refused, Option<Label>)> {
        if state.closed {
            return Err((Refused::Closed(source), label));
        }
        if !self.fits(state, source.queued_bytes()) {
            return Err((Refused::Full(source), label));
        }
        let id = VideoId(state.next_id);
        state.next_id += 1;
        state.bytes += source.queued_bytes();
        state.videos.push_back(QueuedVideo {
            video: VideoRef { id, label },
            source,
        });
        self.filled.notify_one();
        Ok(id)
    }

    /// Queues the video, waiting for room as long as needed.
    pub(crate) fn push(
        &self,
        source: Source,
        label: Option<Label>,
    ) -> Result<VideoId, (Refused, Option<Label>)> {
        let mut state = self.state.lock();
        let (mut source, mut label) = (source, label);
        loop {
            match self.admit(&mut state, source, label) {
                Err((Refused::Full(s), l)) => {
                    (source, label) = (s, l);
                    self.room.wait(&mut state);
                }
                other => return other,
            }
        }
    }

    /// One async attempt: queues the video, or registers the task to be woken when room is made (and gives
    /// the video back).
    pub(crate) fn poll_push(
        &self,
        cx: &mut Context<'_>,
        source: Source,
        label: Option<Label>,
    ) -> Result<VideoId, (Refused, Option<Label>)> {
        match self.try_push(source, label) {
            Err((Refused::Full(source), label)) => {
                self.feeders.register(cx.waker());
                // Room made between the attempt and the registration is not missed.
                self.try_push(source, label)
            }
            other => other,
        }
    }

    fn wake_feeders(&self) {
        self.room.notify_all();
        self.feeders.wake_all();
    }

    /// Takes the next video, waiting for one; `None` once the queue is closed and empty, or when `stop` is set.
    pub(crate) fn pop(&self, stop: &AtomicBool) -> Option<QueuedVideo> {
        let mut state = self.state.lock();
        loop {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(video) = state.videos.pop_front() {
                state.bytes -= video.source.queued_bytes();
                drop(state);
                self.wake_feeders();
                return Some(video);
            }
            if state.closed {
                return None;
            }
            // `shut_down` sets the stop flag before notifying under this lock, so the wake-up is not missed.
            self.filled.wait(&mut state);
        }
    }

    /// Closes the queue: videos already queued stay; feeders waiting for room get their video back.
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
        self.filled.notify_all();
        self.wake_feeders();
    }

    /// Closes the queue and drops the videos still in it (the operator is shutting down).
    pub(crate) fn shut_down(&self) {
        let dropped = {
            let mut state = self.state.lock();
            state.closed = true;
            state.bytes = 0;
            std::mem::take(&mut state.videos)
        };
        for video in &dropped {
            if let Source::Live(live) = &video.source {
                live.close();
            }
        }
        drop(dropped);
        self.filled.notify_all();
        self.wake_feeders();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Ids given so far.
    pub(crate) fn admitted(&self) -> u64 {
        self.state.lock().next_id
    }

    /// (videos, bytes) waiting in the queue.
    pub(crate) fn len(&self) -> (usize, usize) {
        let state = self.state.lock();
        (state.videos.len(), state.bytes)
    }
}
