//! Feeding the operator: whole encoded videos (blocking, non-blocking, async), live videos and URLs, into the
//! source stage's bounded feed queue ([`FeedVideo`] is `feed_async`'s future).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;

use super::handle::VideoInput;
use crate::error::{Error, Result, TryFeedError};
use crate::source::feed::{Refused, Source};
use crate::source::live::{LiveShared, LiveVideo};
use crate::source::url::{UrlOptions, UrlSource};
use crate::video::{Encoded, Label, VideoId, Whole};

impl VideoInput {
    /// Queues one whole encoded video (any container and codec the system's FFmpeg reads), with an optional
    /// label that travels with its batches and errors ([`Encoded`]: bytes, `Encoded::new(bytes).label(..)` or
    /// a `(bytes, label)` pair). `Bytes` is taken without copying; `Vec<u8>` and `&'static [u8]` convert
    /// without copying too.
    ///
    /// Waits while the feed queue is full ([`Config::max_queued`](crate::Config::max_queued)). Returns the video's id; its batches and
    /// errors carry it. Fails with [`Error::Closed`] after [`close`](Self::close).
    pub fn feed(&self, video: impl Into<Encoded>) -> Result<VideoId> {
        let Encoded { data, label, key } = video.into();
        self.push(Source::Whole(data, key), label)
    }

    /// Like [`feed`](Self::feed), with a label.
    #[deprecated(
        since = "0.2.0",
        note = "use `feed((data, label))` or `feed(Encoded::new(data).label(label))`"
    )]
    pub fn feed_with_label(
        &self,
        data: impl Into<Bytes>,
        label: impl Into<Label>,
    ) -> Result<VideoId> {
        self.feed(Encoded::new(data).label(label))
    }

    /// Queues the video if the feed queue has room now; never waits. When it is full (or closed) the buffer is
    /// handed back in the error.
    pub fn try_feed(
        &self,
        video: impl Into<Encoded>,
    ) -> std::result::Result<VideoId, TryFeedError> {
        let Encoded { data, label, key } = video.into();
        self.try_push(Source::Whole(data, key), label)
    }

    /// Like [`try_feed`](Self::try_feed), with a label.
    #[deprecated(
        since = "0.2.0",
        note = "use `try_feed((data, label))` or `try_feed(Encoded::new(data).label(label))`"
    )]
    pub fn try_feed_with_label(
        &self,
        data: impl Into<Bytes>,
        label: impl Into<Label>,
    ) -> std::result::Result<VideoId, TryFeedError> {
        self.try_feed(Encoded::new(data).label(label))
    }

    /// Queues the video, waiting for room as a future: the task is parked (not a thread) and woken when the
    /// decoding thread takes a video from the queue or the input is closed.
    ///
    /// Cancel-safe: the video is queued only in the poll that returns its id; dropping the future before that
    /// feeds nothing.
    pub fn feed_async(&self, video: impl Into<Encoded>) -> FeedVideo<'_> {
        let Encoded { data, label, key } = video.into();
        FeedVideo {
            input: self,
            pending: Some((Source::Whole(data, key), label)),
        }
    }

    /// Like [`feed_async`](Self::feed_async), with a label.
    #[deprecated(
        since = "0.2.0",
        note = "use `feed_async((data, label))` or `feed_async(Encoded::new(data).label(label))`"
    )]
    pub fn feed_async_with_label(
        &self,
        data: impl Into<Bytes>,
        label: impl Into<Label>,
    ) -> FeedVideo<'_> {
        self.feed_async(Encoded::new(data).label(label))
    }

    /// Queues a live video whose bytes will arrive over time, and returns the producer's handle: push its
    /// chunks, then [`finish`](LiveVideo::finish) it. Batches come out while it is still arriving. Waits while
    /// the feed queue holds [`max_queued`](crate::Config::max_queued) videos (a live video counts as one, and none of
    /// its bytes count against the byte limit: they are bounded by
    /// [`live_buffer_bytes`](crate::Config::live_buffer_bytes)).
    ///
    /// Works with the containers that can be read as they arrive: MPEG-TS, fragmented or faststart MP4,
    /// Matroska/WebM, raw H.264/HEVC (Annex B), and others FFmpeg reads without seeking. An MP4 with its index
    /// at the end is buffered until it is finished, or failed fast ([`Config::moov_at_end`](crate::Config::moov_at_end)).
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
    /// With clips ([`Sampling::clips`](crate::Sampling::clips)), a URL must name a file its server serves
    /// with range requests: the video is indexed through one read of it, then only the clips' GOPs are read
    /// again and decoded (a drop then fails the video, with no reopening); a URL that cannot seek (a live
    /// stream) fails with [`VideoError::Sampling`](crate::VideoError::Sampling).
    ///
    /// The URL's scheme is checked here, against the options' allowlist ([`Error::Config`] when refused), and
    /// the options are validated. Batching, transforms and the live settings come from the operator's
    /// [`Config`](crate::Config) ([`Config::low_latency`](crate::Config::low_latency) for the lowest latency).
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
        let label = options.label.clone();
        self.push_url(url.into(), options, label)
    }

    /// Like [`feed_url`](Self::feed_url), with a label (the URL, without its credentials, is the default).
    #[deprecated(since = "0.2.0", note = "use `feed_url(url, options.label(label))`")]
    pub fn feed_url_with_label(
        &self,
        url: impl Into<String>,
        options: UrlOptions,
        label: impl Into<Label>,
    ) -> Result<VideoId> {
        self.feed_url(url, options.label(label))
    }

    pub(super) fn push_url(
        &self,
        url: String,
        options: UrlOptions,
        label: Option<Label>,
    ) -> Result<VideoId> {
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

    /// Queues a whole video whose bytes arrive in chunks (an upload, a download), pushed through the returned
    /// [`LiveVideo`] like [`feed_live`](Self::feed_live)'s, but decoded only once they have all arrived (held
    /// in memory, at most `max_bytes`; more fails the video): it is then a whole video, so clips
    /// ([`Sampling::clips`](crate::Sampling::clips)) may seek in it. The stall timeout applies while it
    /// arrives.
    ///
    /// ```
    /// use framefeed::{ClipSampler, Config, Sampling, VideoInput};
    /// let input = VideoInput::new(Config::new(4, 1).sampling(Sampling::new().clips(2, ClipSampler::Regular)))?;
    /// let upload = input.feed_live_whole(64 << 20)?;
    /// for chunk in framefeed::SAMPLE_MP4.chunks(4096) {
    ///     upload.push(chunk.to_vec())?;
    /// }
    /// upload.finish();
    /// input.close();
    /// assert_eq!(input.iter().map(|b| b.unwrap().len()).sum::<usize>(), 2);
    /// # Ok::<(), framefeed::Error>(())
    /// ```
    pub fn feed_live_whole(&self, max_bytes: u64) -> Result<LiveVideo> {
        self.push_live_whole(None, max_bytes)
    }

    /// Like [`feed_live_whole`](Self::feed_live_whole), with a label.
    pub fn feed_live_whole_with_label(
        &self,
        label: impl Into<Label>,
        max_bytes: u64,
    ) -> Result<LiveVideo> {
        self.push_live_whole(Some(label.into()), max_bytes)
    }

    fn push_live_whole(&self, label: Option<Label>, max_bytes: u64) -> Result<LiveVideo> {
        let live = LiveShared::new(label.clone(), self.config.live_buffer_bytes).whole(max_bytes);
        self.queue_live(live, label)
    }

    pub(super) fn push_live(&self, label: Option<Label>) -> Result<LiveVideo> {
        self.check_streamable()?;
        let live = LiveShared::new(label.clone(), self.config.live_buffer_bytes);
        self.queue_live(live, label)
    }

    fn queue_live(&self, live: LiveShared, label: Option<Label>) -> Result<LiveVideo> {
        // The id is given on admission; the producer's handle is returned only after it, and the decoding
        // thread reads the id only in errors it sends after taking the video from the queue.
        let live = Arc::new(live);
        let id = self.push(Source::Live(live.clone()), label)?;
        live.set_id(id);
        Ok(LiveVideo::new(live))
    }

    /// Clips and segments need a whole video's length, which a live video does not give in advance.
    fn check_streamable(&self) -> Result<()> {
        if self.config.sampling.needs_whole_video() {
            return Err(Error::Config(
                "clips need the whole video in advance, and so do segments (feed it whole, from a file, from a \
                 file list, or with feed_live_whole); a live video's length is unknown: sample it with stride, \
                 step, fps or a time range instead"
                    .into(),
            ));
        }
        Ok(())
    }

    pub(super) fn push(&self, source: Source, label: Option<Label>) -> Result<VideoId> {
        self.feed
            .push(source, label)
            .map_err(|(refused, _)| match refused {
                Refused::Full(_) => unreachable_full(),
                Refused::Closed(_) => Error::Closed,
            })
    }

    pub(super) fn try_push(
        &self,
        source: Source,
        label: Option<Label>,
    ) -> std::result::Result<VideoId, TryFeedError> {
        self.feed
            .try_push(source, label)
            .map_err(|(refused, _)| refused_to_try(refused))
    }
}

/// A blocking push never comes back `Full`: it waits for room instead.
pub(super) fn unreachable_full() -> Error {
    Error::WorkerDied("the feed queue refused a video it should have waited for".into())
}

pub(super) fn refused_to_try(refused: Refused) -> TryFeedError {
    match refused {
        Refused::Full(source) => TryFeedError::Full(whole(source)),
        Refused::Closed(source) => TryFeedError::Closed(whole(source)),
    }
}

/// The bytes of a whole video handed back (a file, a live or a URL video has none to hand back).
pub(super) fn whole(source: Source) -> Bytes {
    match source {
        Source::Whole(Whole::Memory(data), _) => data,
        Source::Whole(Whole::File(_), _) | Source::Live(_) | Source::Url(_) => Bytes::new(),
    }
}

/// The future of [`VideoInput::feed_async`].
#[must_use = "futures do nothing unless polled"]
pub struct FeedVideo<'a> {
    input: &'a VideoInput,
    pending: Option<(Source, Option<Label>)>,
}

impl Future for FeedVideo<'_> {
    type Output = Result<VideoId>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some((source, label)) = self.pending.take() else {
            return Poll::Ready(Err(Error::Closed));
        };
        match self.input.feed.poll_push(cx, source, label) {
            Ok(id) => Poll::Ready(Ok(id)),
            Err((Refused::Closed(_), _)) => Poll::Ready(Err(Error::Closed)),
            Err((Refused::Full(source), label)) => {
                self.pending = Some((source, label));
                Poll::Pending
            }
        }
    }
}
