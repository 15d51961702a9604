//! Random access to one whole video ([`VideoReader`]): the shape training code already has (open a file, ask its
//! length and rate, fetch frames by index or by time in `__getitem__`), on the sampling stage's engine. Opening
//! indexes the video once (an H.264/HEVC MP4's index from its `moov`, others by demuxing without decoding, a
//! damaged start decoded to number frames as a full decode does: `sample::index`, `sample::start`); each read
//! decodes only the GOPs its frames need (`sample::seek`), from where the decoder stands when the frames are
//! ahead of it in its GOP; each frame is converted by the transform stage straight into every place the read
//! asks for it, into one buffer of the reader's output type, layout and device. Between reads the reader keeps
//! its index, demuxer and decoder (behind a lock: one read at a time, from any thread); its memory does not grow
//! with the video's length beyond the index (under 90 bytes a frame).
//!
//! Display indices and times are those of the operator's sampling: a frame's index is its place among the
//! frames a full decode gives, in display order; times are the stream's own, in seconds.

mod frames;
mod metadata;
mod read;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

pub use self::frames::Frames;
pub use self::metadata::{AudioMetadata, VideoMetadata};
use self::read::{Read, Reading};
use crate::assembly::pool::BufferPool;
use crate::decode::audio::{AudioClip, AudioTrack};
use crate::decode::cpu::CpuDecoder;
use crate::decode::{nvdec_support, open_nvdec, Decoder};
use crate::demux::open::{Opened, Opener};
use crate::device::{Device, GpuRuntime};
use crate::error::{Error, Result, VideoError};
use crate::sample::decoded_order::index_by_decoding;
use crate::sample::index::{max_packets, FrameIndex};
use crate::sample::seek::Position;
use crate::sample::start::leave_out_undecodable_start;
use crate::sample::{list_whole, scan_whole, Scanned};
use crate::settings::config::Config;
use crate::signal::Signals;
use crate::source::feed::Source;
use crate::source::live::Failure;
use crate::source::url::{UrlOptions, UrlSource};
use crate::transform::{HostScratch, Orienter};
use crate::video::{ClipKey, Encoded, Label, VideoId, VideoRef};

/// A stop time past any audio's end: "to the end".
const AUDIO_END: f64 = 1e12;

/// A reader's audio: what opens its track, and the track once opened.
struct AudioReading {
    source: Option<crate::video::Whole>,
    config: Config,
    track: Option<AudioTrack>,
}

/// Random access to one whole video, by display index and by time: metadata without decoding, then frames in
/// any order (repeats allowed), by range with a step, or by the time they are shown, each read one buffer of
/// the config's output (its transforms, [`DType`](crate::DType), [`Layout`](crate::Layout) and
/// [`Device`]), byte for byte the `ffmpeg` CLI's frames at those indices (turned upright, as it shows them).
///
/// ```
/// use framefeed::{Config, VideoReader};
/// let reader = VideoReader::open(framefeed::SAMPLE_MP4, &Config::new(1, 1))?;
/// let meta = reader.metadata();
/// assert_eq!((meta.num_frames, meta.width, meta.height), (60, 320, 240));
/// let frames = reader.frames_at(&[59, 0, 0, 31])?; // any order, repeats allowed
/// assert_eq!(frames.shape(), [4, 240, 320, 3]);
/// assert_eq!(frames.indices(), &[59, 0, 0, 31]);
/// let shown = reader.frames_played_in_range(0.5, 0.59)?; // the frames shown in [0.5 s, 0.59 s)
/// assert_eq!(shown.indices(), &[15, 16, 17]);
/// # Ok::<(), framefeed::Error>(())
/// ```
///
/// The config's sequence settings, sampling and queue limits do not apply; its decoder threads, threading,
/// stream choice, container limits, transforms (one crop window a read), `autorotate` and device do. A video
/// whose packets carry no presentation times (a raw H.264 or HEVC stream) is indexed by decoding it once when
/// opened (its frames then numbered and timed as a plain run numbers them, at the stream's nominal rate), and
/// read by byte position.
pub struct VideoReader {
    metadata: VideoMetadata,
    state: Mutex<Reading>,
    /// The audio track, opened at the first audio read (its own demuxer over the same whole video).
    audio: Mutex<AudioReading>,
    /// Set when the reader is dropped: a read in another thread stops at its next packet.
    signals: Arc<Signals>,
}

impl VideoReader {
    /// Opens and indexes a whole video: bytes in memory or a file ([`Encoded::file`], read where the demuxer
    /// looks, never whole).
    pub fn open(video: impl Into<Encoded>, config: &Config) -> Result<Self> {
        let video = video.into();
        let label = video.label.clone();
        Self::open_source(Source::Whole(video.data, ClipKey::default()), label, config)
    }

    /// Opens and indexes a video by URL. An object in a store or a file over HTTP(S) ([`is_remote_url`]) is
    /// read by byte ranges with `options`' [`RemoteOptions`](crate::RemoteOptions): its index (an MP4's
    /// `moov`, at either end), then only the packets of the GOPs each read needs, fetched ahead in parallel.
    /// Another URL FFmpeg can seek in is read through FFmpeg's protocols (the index reads it once through).
    /// `options` are the operator's (timeouts, allowed schemes; reconnection does not apply).
    ///
    /// [`is_remote_url`]: crate::is_remote_url
    pub fn open_url(url: impl Into<String>, options: UrlOptions, config: &Config) -> Result<Self> {
        let url = url.into();
        options.validate()?;
        // One attempt: a remote object's requests are retried per its `RemoteOptions`, and a whole video has
        // no live source to wait for.
        let options = options.reconnect(crate::Reconnect::Never);
        let scheme = options.admit(&url)?;
        let label = options
            .label
            .clone()
            .unwrap_or_else(|| Label::from(crate::source::url::redact_url(&url)));
        let source = Source::Url(Box::new(UrlSource {
            url,
            scheme,
            options,
        }));
        Self::open_source(source, Some(label), config)
    }

    /// Opens and indexes the remote object at `url` (`s3://`, `gs://`, `az://`, `https://`...), read by byte
    /// ranges with `options` (see [`Encoded::remote`]): its first bytes (their answer gives its length),
    /// its index, then only what each read needs.
    ///
    /// ```no_run
    /// use framefeed::{Config, RemoteOptions, VideoReader};
    /// let options = RemoteOptions::new().option("region", "eu-west-1");
    /// let reader = VideoReader::open_remote("s3://videos/a.mp4", &options, &Config::new(8, 1))?;
    /// let clip = reader.frames_at(&[100, 101, 102])?;
    /// # Ok::<(), framefeed::Error>(())
    /// ```
    pub fn open_remote(url: &str, options: &crate::RemoteOptions, config: &Config) -> Result<Self> {
        Self::open(Encoded::remote(url, options)?, config)
    }

    fn open_source(source: Source, label: Option<Label>, config: &Config) -> Result<Self> {
        config.validate()?;
        crate::ffi::log::route_to_tracing();
        let video = VideoRef {
            id: VideoId(0),
            label,
        };
        let failed = |error: VideoError| Error::Video {
            video: video.clone(),
            error,
        };
        let signals = Arc::new(Signals::default());
        let (device, gpu) = crate::device::resolve(config.device, 2)?;
        let opener = Opener {
            config,
            signals: &signals,
        };
        let mut opened = opener.open(source).map_err(|f| failed(failure_error(f)))?;
        let mut index = index_video(&opener, &mut opened, config).map_err(failed)?;
        let (mut decoder, nvdec) = open_decoder(&opened, config, gpu.as_ref()).map_err(failed)?;
        // A damaged start is decoded once, with the reader's decoder (the first read seeks and flushes it).
        if let Some(index) = Arc::get_mut(&mut index) {
            leave_out_undecodable_start(index, &mut opened.demuxer, &mut *decoder, &signals.stop)
                .map_err(|stop| failed(read::stop_error(stop)))?;
        }
        if index.frames() == 0 {
            return Err(failed(VideoError::NoFrames));
        }
        let mut metadata = VideoMetadata::new(&index, opened.demuxer.stream(), config);
        let format = opened.demuxer.format();
        metadata.audio = format
            .audio_stream(config.audio.and_then(|a| a.stream))
            .map(|i| AudioMetadata::of(&format.info().streams[i]));
        let audio = Mutex::new(AudioReading {
            source: opened.whole().cloned(),
            config: config.clone(),
            track: None,
        });
        let orienter = Orienter::new(opened.demuxer.stream(), config);
        Ok(Self {
            metadata,
            audio,
            state: Mutex::new(Reading {
                opened,
                index,
                decoder,
                nvdec,
                position: Position::default(),
                host: HostScratch::new(),
                orienter,
                config: config.clone(),
                device,
                gpu,
                pool: BufferPool::new(2),
                video,
                packets: 0,
                held: Vec::new(),
                holes: Vec::new(),
            }),
            signals,
        })
    }

    /// What the video holds, read when it was opened (no frame decoded, but a damaged start's).
    pub fn metadata(&self) -> &VideoMetadata {
        &self.metadata
    }

    /// The frames a full decode gives.
    pub fn len(&self) -> u64 {
        self.metadata.num_frames
    }

    /// Whether the video has no frame (never: opening one fails).
    pub fn is_empty(&self) -> bool {
        self.metadata.num_frames == 0
    }

    /// Where the reader decodes: [`Device::Cpu`] or [`Device::Cuda`] (what [`Device::Auto`] chose).
    pub fn device(&self) -> Device {
        self.state.lock().device
    }

    /// Packets sent to the decoder by the reads so far: a read that goes on forward from the last one within
    /// its GOP adds only the packets past it; every frame read once in order adds up to the video's packets.
    pub fn packets_decoded(&self) -> u64 {
        self.state.lock().packets
    }

    /// The holes the reads so far met, ascending: display indices whose pictures do not decode (damaged data).
    /// A read that asks for one fails with [`VideoError::Hole`] naming its index and time; the indices around
    /// it read as usual.
    pub fn holes(&self) -> Vec<crate::Hole> {
        self.state.lock().holes.clone()
    }

    /// The frames at these display indices, in this order (repeats allowed; each decoded once). An index past
    /// the last frame fails the read, naming it; nothing is decoded then.
    pub fn frames_at(&self, indices: &[u64]) -> Result<Frames> {
        let n = self.metadata.num_frames;
        if let Some(&bad) = indices.iter().find(|&&i| i >= n) {
            return Err(self.sampling_error(format!(
                "frame index {bad} is past the video's last frame ({n} frames: 0 to {})",
                n.saturating_sub(1)
            )));
        }
        self.read(Read::indices(indices))
    }

    /// The frames from display index `start` up to `stop` (excluded), `step` apart. Fails unless
    /// `start <= stop <= len()` and `step >= 1`.
    pub fn frames_in_range(&self, start: u64, stop: u64, step: u64) -> Result<Frames> {
        let n = self.metadata.num_frames;
        if step == 0 || start > stop || stop > n {
            return Err(self.sampling_error(format!(
                "the range {start}..{stop} step {step} is not one of the video's; allowed: \
                 0 <= start <= stop <= {n} (its frames) and step >= 1"
            )));
        }
        let indices: Vec<u64> = (start..stop).step_by(step as usize).collect();
        self.read(Read::indices(&indices))
    }

    /// The frame shown at each of these times (stream seconds, as [`Frames::pts_seconds`] gives them): the last
    /// one whose presentation time is at or before it. A time outside the video's
    /// ([`VideoMetadata::begin_stream_seconds`] to its end) fails the read, naming it.
    pub fn frames_played_at(&self, seconds: &[f64]) -> Result<Frames> {
        let indices = seconds
            .iter()
            .map(|&t| {
                self.metadata
                    .frame_played_at(t)
                    .ok_or_else(|| self.outside(t))
            })
            .collect::<Result<Vec<u64>>>()?;
        self.read(Read::indices(&indices))
    }

    /// The frames shown in `[start, stop)` stream seconds: from the one shown at `start` to the last one shown
    /// before `stop` (none when they are equal). Fails unless the video's times hold `start <= stop`.
    pub fn frames_played_in_range(&self, start: f64, stop: f64) -> Result<Frames> {
        let m = &self.metadata;
        if !(start <= stop && start >= m.begin_stream_seconds && stop <= m.end_stream_seconds()) {
            return Err(self.sampling_error(format!(
                "the time range {start} s to {stop} s is not inside the video's, {} s to {} s; allowed: start <= \
                 stop inside it",
                m.begin_stream_seconds,
                m.end_stream_seconds()
            )));
        }
        let indices = m.frames_played_in(start, stop);
        self.read(Read::indices(&indices))
    }

    /// The audio played from `start` to `stop` stream seconds (to the audio's end with `None`), as TorchCodec's
    /// `AudioDecoder.get_samples_played_in_range` gives it: `f32` in [-1, 1] at the config's
    /// [`Audio`](crate::Audio) rate and channels (default: the stream's), from the sample playing at `start`
    /// (or the audio's first, when it starts later), equal to that span of the `ffmpeg` CLI's decode of the
    /// whole stream, to the bit. Reads in any order: one ahead of the last decodes on, one behind reads the
    /// stream again from its start (a seek would not give the same samples: a decoder's state, such as AAC's
    /// noise substitution, and a resampler's phase depend on everything before), so a read costs decoding the
    /// audio up to its end. Fails with
    /// [`VideoError::NoAudioStream`] for a video without audio (or a URL's: not read yet), and for
    /// `stop < start`.
    pub fn audio_played_in_range(&self, start: f64, stop: Option<f64>) -> Result<AudioClip> {
        let stop = stop.unwrap_or(AUDIO_END);
        if start.is_nan() || stop.is_nan() || start > stop {
            return Err(self.sampling_error(format!(
                "the audio range {start} s to {stop} s is empty or reversed; allowed: start <= stop"
            )));
        }
        let mut audio = self.audio.lock();
        let audio = &mut *audio;
        if audio.track.is_none() {
            let config = audio
                .config
                .clone()
                .audio(audio.config.audio.unwrap_or_default());
            audio.track = audio
                .source
                .as_ref()
                .and_then(|whole| AudioTrack::open(whole, &config));
        }
        match &mut audio.track {
            Some(track) => Ok(track.cut(start, stop)),
            None => Err(Error::Video {
                video: self.state.lock().video.clone(),
                error: VideoError::NoAudioStream,
            }),
        }
    }

    fn read(&self, read: Read) -> Result<Frames> {
        let mut state = self.state.lock();
        let result = state.read(read, &self.metadata, &self.signals.stop);
        if result.is_err() {
            // A read that failed (a hole, a damaged frame with `strict`) stopped its decoder anywhere: the next
            // read starts from a new one, as the reader's first would, so that what it gives does not depend
            // on the failed read (on a damaged video, where decoding started decides the damaged pictures).
            state.start_over();
        }
        result
    }

    fn outside(&self, t: f64) -> Error {
        self.sampling_error(format!(
            "no frame is shown at {t} s: the video's frames are shown from {} s to {} s",
            self.metadata.begin_stream_seconds,
            self.metadata.end_stream_seconds()
        ))
    }

    fn sampling_error(&self, reason: String) -> Error {
        Error::Video {
            video: self.state.lock().video.clone(),
            error: VideoError::Sampling { reason },
        }
    }
}

// A reader is shared by threads (one read at a time).
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<VideoReader>();
};

impl Drop for VideoReader {
    fn drop(&mut self) {
        // A read still running elsewhere (it cannot: it holds `&self`) would stop at its next packet.
        self.signals.stop.store(true, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for VideoReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VideoReader")
            .field("metadata", &self.metadata)
            .finish_non_exhaustive()
    }
}

/// The whole video's index: listed from an MP4's `moov` or read by a second demuxer (the one that decodes stays
/// at its start), then the damaged start left out (by the caller, with a decoder).
fn index_video(
    opener: &Opener<'_>,
    opened: &mut Opened,
    config: &Config,
) -> std::result::Result<Arc<FrameIndex>, VideoError> {
    let scanned = match list_whole(&opened.demuxer, config) {
        Some(scanned) => scanned,
        None => match opener.open_again(opened) {
            Some(Ok(demuxer)) => scan_whole(demuxer, config)?,
            Some(Err(failure)) => return Err(failure_error(failure)),
            None => {
                return Err(VideoError::Sampling {
                    reason: "random access needs a whole video, and this URL cannot seek (a live stream, or a \
                             server that does not take range requests)"
                        .into(),
                })
            }
        },
    };
    match scanned {
        Scanned::Index(index) => Ok(index),
        // No presentation times (a raw H.264 or HEVC stream): the display order is found by decoding it once.
        Scanned::Unordered { .. } => {
            let unordered = || {
                VideoError::Sampling {
                reason: "its packets give neither the frames' display order nor byte positions to find them \
                         by, so it cannot be read by index: decode it in order with VideoInput"
                    .into(),
            }
            };
            let mut demuxer = match opener.open_again(opened) {
                Some(Ok(demuxer)) => demuxer,
                Some(Err(failure)) => return Err(failure_error(failure)),
                None => return Err(unordered()),
            };
            let mut decoder = CpuDecoder::open(&demuxer, config.decoder_threads, config.threading)?;
            let stop = AtomicBool::new(false);
            let index = index_by_decoding(&mut demuxer, &mut decoder, max_packets(config), &stop)
                .map_err(read::stop_error)?;
            index.map(Arc::new).ok_or_else(unordered)
        }
    }
}

impl Reading {
    /// A new decoder, at no position, nothing held: the next read decodes as the reader's first does. Where a
    /// new decoder cannot be opened (it was once: a GPU gone since), the old one is kept and the next read
    /// seeks, which flushes it.
    fn start_over(&mut self) {
        match open_decoder(&self.opened, &self.config, self.gpu.as_ref()) {
            Ok((decoder, nvdec)) => {
                self.decoder = decoder;
                self.nvdec = nvdec;
            }
            Err(error) => tracing::warn!(
                video = %self.video,
                %error,
                "after a failed read, the reader's decoder could not be opened again: it goes on, flushed"
            ),
        }
        self.position = Position::default();
        self.held.clear();
    }
}

/// The reader's decoder and whether it is NVDEC's: NVDEC when the reader has a GPU and NVDEC takes the stream,
/// else the CPU's (or an error, under `cpu_fallback(false)`).
fn open_decoder(
    opened: &Opened,
    config: &Config,
    gpu: Option<&Arc<GpuRuntime>>,
) -> std::result::Result<(Box<dyn Decoder>, bool), VideoError> {
    if let Some(gpu) = gpu {
        match nvdec_support(opened.demuxer.stream()) {
            Ok(()) => return Ok((open_nvdec(&opened.demuxer, gpu, config.nvdec_driver)?, true)),
            Err(reason) if !config.cpu_fallback => {
                return Err(VideoError::NvdecUnsupported { reason })
            }
            Err(reason) => {
                tracing::info!(%reason, "NVDEC cannot decode this video: the reader decodes it on the CPU");
            }
        }
    }
    let cpu = CpuDecoder::open(&opened.demuxer, config.decoder_threads, config.threading)?;
    Ok((Box::new(cpu), false))
}

/// A source's failure to open, as the video's error (nothing stops a reader while it opens).
fn failure_error(failure: Failure) -> VideoError {
    match failure {
        Failure::Video(error) => error,
        Failure::Shutdown => VideoError::Sampling {
            reason: "the reader was dropped while it opened the video".into(),
        },
    }
}
