//! Opening a queued video's source, the demux stage's entry: takes what the source stage queued (a whole
//! buffer, a live video, a URL) and hands on an [`Opened`] source, its demuxer at the first packet.
//!
//! - A whole buffer is demuxed from memory, a file from disk.
//! - A live video fed to be decoded whole ([`feed_live_whole`](crate::VideoInput::feed_live_whole)) is collected
//!   first, then demuxed as a whole buffer.
//! - A live video is sniffed first (`mp4::sniff`): an MP4 with its index first is read as it arrives through
//!   the box gate (`mp4::live`), one with its index at the end is buffered whole or failed per
//!   [`MoovAtEnd`], anything else is read as it arrives. The producer learns that no more
//!   data is read when the opened source is dropped, however decoding ended.
//! - A URL is opened through FFmpeg's protocols, retried per its [`Reconnect`](crate::Reconnect) policy, and
//!   reopened the same way after a drop ([`Opener::reopen`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::mp4::live::Mp4Gate;
use super::mp4::sniff::{sniff_live, Mp4Layout};
use super::{Demuxer, UrlOpenError};
use crate::error::VideoError;
use crate::ffi::format::Interrupt;
use crate::settings::config::{Config, MoovAtEnd};
use crate::signal::Signals;
use crate::source::feed::Source;
use crate::source::live::{Failure, LiveReader, LiveShared};
use crate::source::url::{redact_url, Scheme, UrlSource};
use crate::video::{ClipKey, FileIdentity, Whole};

/// A source, opened.
pub(crate) struct Opened {
    /// Its demuxer.
    pub(crate) demuxer: Demuxer,
    origin: Origin,
}

enum Origin {
    /// A whole buffer (sampling indexes it again from the same bytes), and its place in its dataset.
    Whole(Whole, ClipKey),
    /// A live video, read as it arrives or buffered whole.
    Live(CloseLive),
    /// A URL, with the interrupt its reads and reopenings share.
    Url {
        source: Box<UrlSource>,
        interrupt: Arc<Interrupt>,
    },
}

impl Opened {
    /// How the source itself failed, if it did (a live video's abort or stall), which explains a demuxer's or
    /// decoder's error better than their own words.
    pub(crate) fn failure(&self) -> Option<Failure> {
        match &self.origin {
            Origin::Live(live) => live.0.failure(),
            Origin::Whole(..) => source_failure(&self.origin),
            Origin::Url { .. } => None,
        }
    }

    /// Tells a live video's producer the frame size its stream's header gave ([`LiveVideo::frame_size`]), and
    /// runs its gate ([`LiveVideo::on_frame_size`]): `Err` when the gate refused the video, which is then
    /// aborted.
    ///
    /// [`LiveVideo::frame_size`]: crate::source::live::LiveVideo::frame_size
    /// [`LiveVideo::on_frame_size`]: crate::source::live::LiveVideo::on_frame_size
    pub(crate) fn announce_frame_size(&self) -> Result<(), VideoError> {
        match &self.origin {
            Origin::Live(live) => {
                let info = self.demuxer.stream();
                live.0.set_frame_size(info.width, info.height)
            }
            Origin::Whole(..) | Origin::Url { .. } => Ok(()),
        }
    }

    /// Whether it is a whole video (in memory or a file), which sampling indexes and seeks in.
    pub(crate) fn is_whole(&self) -> bool {
        matches!(self.origin, Origin::Whole(..))
    }

    /// The whole video's bytes or file, when it is one (a second reader, the audio's, opens them again).
    pub(crate) fn whole(&self) -> Option<&Whole> {
        match &self.origin {
            Origin::Whole(data, _) => Some(data),
            Origin::Live(_) | Origin::Url { .. } => None,
        }
    }

    /// Who its file is, when it is a whole file.
    pub(crate) fn file_identity(&self) -> Option<FileIdentity> {
        match &self.origin {
            Origin::Whole(data, _) => data.file_identity(),
            Origin::Live(_) | Origin::Url { .. } => None,
        }
    }

    /// Its place in its dataset (a whole video's, as fed; any other's, the default).
    pub(crate) fn clip_key(&self) -> ClipKey {
        match &self.origin {
            Origin::Whole(_, key) => *key,
            Origin::Live(_) | Origin::Url { .. } => ClipKey::default(),
        }
    }

    /// The URL this source was pulled from, if it was.
    pub(crate) fn url(&self) -> Option<&UrlSource> {
        match &self.origin {
            Origin::Url { source, .. } => Some(source),
            Origin::Whole(..) | Origin::Live(_) => None,
        }
    }

    /// Whether a URL's last read or opening ended because its timeout passed.
    pub(crate) fn timed_out(&self) -> bool {
        match &self.origin {
            Origin::Url { interrupt, .. } => interrupt.timed_out(),
            Origin::Whole(..) | Origin::Live(_) => false,
        }
    }
}

/// A whole video's own source failure (a remote object that could not be fetched), as the video's error.
fn source_failure(origin: &Origin) -> Option<Failure> {
    let Origin::Whole(data, _) = origin else {
        return None;
    };
    let failure = data.source()?.failure()?;
    Some(Failure::Video(VideoError::SourceUnavailable {
        url: failure.source,
        attempts: 1,
        reason: failure.reason,
    }))
}

/// Closes a live video's producer side when its decoding ends, however it ends.
struct CloseLive(Arc<LiveShared>);

impl Drop for CloseLive {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Opens sources with the operator's settings, waking when it stops.
pub(crate) struct Opener<'a> {
    pub(crate) config: &'a Config,
    pub(crate) signals: &'a Arc<Signals>,
}

impl Opener<'_> {
    /// Opens `source`: a URL at once and then per its reconnect policy.
    pub(crate) fn open(&self, source: Source) -> Result<Opened, Failure> {
        match source {
            Source::Whole(data, key) => {
                if let Whole::File(file) = &data {
                    self.signals.watch_source(file);
                }
                Ok(Opened {
                    demuxer: Demuxer::open(data.clone(), self.config).map_err(Failure::Video)?,
                    origin: Origin::Whole(data, key),
                })
            }
            Source::Live(live) => self.open_live(live),
            Source::Url(source)
                if source.options.ranged && crate::settings::remote::is_remote_url(&source.url) =>
            {
                self.open_remote(source)
            }
            Source::Url(source) => self.pull(source),
        }
    }

    /// A second demuxer over the same whole video, for sampling to index while `opened`'s stays at the start:
    /// over the same bytes or file, or the same URL opened again when it can seek (a file served over HTTP
    /// with range requests; the index then reads it once through). `None` for a live video, or a URL that
    /// cannot seek (a live stream).
    pub(crate) fn open_again(&self, opened: &Opened) -> Option<Result<Demuxer, Failure>> {
        match &opened.origin {
            Origin::Whole(data, _) => {
                Some(Demuxer::open(data.clone(), self.config).map_err(Failure::Video))
            }
            Origin::Url { source, interrupt } if opened.demuxer.seekable() => Some(
                self.open_url(source, interrupt, true)
                    .map(|(demuxer, _)| demuxer),
            ),
            Origin::Url { .. } | Origin::Live(_) => None,
        }
    }

    /// Reopens a URL source after a drop, per its reconnect policy only; returns the attempts it took. Fails
    /// with [`VideoError::SourceUnavailable`] when the policy allows no more.
    pub(crate) fn reopen(&self, opened: &mut Opened) -> Result<u32, Failure> {
        let Origin::Url { source, interrupt } = &opened.origin else {
            unreachable!("only a URL source is reopened (the worker's pull loop)")
        };
        let (demuxer, attempts) = self.open_url(source, interrupt, false)?;
        opened.demuxer = demuxer;
        Ok(attempts)
    }

    /// A URL pulled through FFmpeg's protocols, opened at once and then per its reconnect policy.
    fn pull(&self, source: Box<UrlSource>) -> Result<Opened, Failure> {
        let signals = self.signals.clone();
        let interrupt = Interrupt::new(move || signals.stop.load(Ordering::Relaxed));
        let (demuxer, _) = self.open_url(&source, &interrupt, true)?;
        Ok(Opened {
            demuxer,
            origin: Origin::Url { source, interrupt },
        })
    }

    /// A remote object (`source::remote`), opened with a `HEAD` and read as a whole video by ranges; an
    /// HTTP(S) URL whose server gives no length to a `HEAD` (a live stream) goes through FFmpeg instead.
    fn open_remote(&self, source: Box<UrlSource>) -> Result<Opened, Failure> {
        let stop = || self.signals.stop.load(Ordering::Relaxed);
        match crate::source::store::open(&source.url, &source.options.remote, &stop) {
            Ok((remote, len)) => {
                let kept_index = remote.kept_index();
                let file = Arc::new(crate::video::WholeFile {
                    file: crate::video::Reader::Other(Box::new(remote)),
                    len,
                    kept_index,
                    approximate_index: source.options.remote.seek_mode
                        == crate::SeekMode::Approximate,
                });
                self.signals.watch_source(&file);
                let data = Whole::File(file);
                let demuxer = Demuxer::open(data.clone(), self.config);
                let origin = Origin::Whole(data, ClipKey::default());
                let failure = source_failure(&origin);
                match demuxer {
                    Ok(demuxer) => Ok(Opened { demuxer, origin }),
                    Err(error) => Err(failure.unwrap_or(Failure::Video(error))),
                }
            }
            Err(_) if stop() => Err(Failure::Shutdown),
            Err(crate::source::store::OpenError::NotAnObject(error))
                if matches!(source.scheme, Scheme::Http | Scheme::Https) =>
            {
                tracing::debug!(%error, "not read by ranges: pulling the URL through FFmpeg");
                self.pull(source)
            }
            Err(error) => Err(Failure::Video(error.into())),
        }
    }

    fn open_live(&self, live: Arc<LiveShared>) -> Result<Opened, Failure> {
        let close = CloseLive(live.clone());
        let stall = self.config.stall_timeout;
        if let Some(max_bytes) = live.whole_limit() {
            // Collected whole, then a whole video (which sampling may seek in).
            let data = Whole::Memory(live.collect_all(self.signals, stall, max_bytes)?);
            drop(close);
            return Ok(Opened {
                demuxer: Demuxer::open(data.clone(), self.config).map_err(Failure::Video)?,
                origin: Origin::Whole(data, ClipKey::default()),
            });
        }
        let reader = || LiveReader::new(live.clone(), self.signals.clone(), stall);
        let opened = match sniff_live(&live, self.signals, stall)? {
            Mp4Layout::Mp4 => Demuxer::open_live(
                Box::new(Mp4Gate::new(reader(), live.clone(), self.config)),
                true,
                self.config,
            ),
            Mp4Layout::Other => Demuxer::open_live(Box::new(reader()), false, self.config),
            Mp4Layout::MoovAtEnd => match self.config.moov_at_end {
                MoovAtEnd::Fail => return Err(Failure::Video(VideoError::MoovAtEndLive)),
                MoovAtEnd::Buffer { max_bytes } => {
                    tracing::debug!("live MP4 has its moov at the end: buffering it whole");
                    let data = live.collect_all(self.signals, stall, max_bytes)?;
                    Demuxer::open(data, self.config)
                }
            },
        };
        match opened {
            Ok(demuxer) => Ok(Opened {
                demuxer,
                origin: Origin::Live(close),
            }),
            Err(error) => Err(live.failure().unwrap_or(Failure::Video(error))),
        }
    }

    /// Opens `source`: `first`, at once and then per the reconnect policy; after a drop, per the policy only.
    /// Returns the attempts it took.
    fn open_url(
        &self,
        source: &UrlSource,
        interrupt: &Arc<Interrupt>,
        first: bool,
    ) -> Result<(Demuxer, u32), Failure> {
        let policy = source.options.reconnect;
        let mut attempts = 0;
        let mut reason = String::new();
        loop {
            let wait = if first && attempts == 0 {
                Some(Duration::ZERO)
            } else {
                policy.delay(attempts - u32::from(first))
            };
            let Some(wait) = wait else {
                return Err(Failure::Video(VideoError::SourceUnavailable {
                    url: redact_url(&source.url),
                    attempts,
                    reason,
                }));
            };
            self.sleep(wait)?;
            attempts += 1;
            let opened = Demuxer::open_url(source, interrupt.clone(), self.config);
            if self.signals.stop.load(Ordering::Relaxed) {
                return Err(Failure::Shutdown);
            }
            match opened {
                Ok(demuxer) => return Ok((demuxer, attempts)),
                // Not a video framefeed takes: reopening will not change that.
                Err(UrlOpenError::Video(error)) => return Err(Failure::Video(error)),
                Err(UrlOpenError::Open(e)) => {
                    reason = if interrupt.timed_out() {
                        format!(
                            "not opened within {:?} (open_timeout)",
                            source.options.open_timeout
                        )
                    } else {
                        e.message
                    };
                    tracing::debug!(%reason, attempts, "could not open the source");
                }
            }
        }
    }

    /// Waits `duration`, or less when the operator stops.
    fn sleep(&self, duration: Duration) -> Result<(), Failure> {
        let until = Instant::now() + duration;
        loop {
            if self.signals.stop.load(Ordering::Relaxed) {
                return Err(Failure::Shutdown);
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
    }
}
