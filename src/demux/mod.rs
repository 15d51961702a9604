//! Demuxing, the second stage: takes a queued source and opens it (`open`: a buffer in memory through custom
//! AVIO with seeking, a live video's chunks, a URL through FFmpeg's protocols), chooses its video stream and
//! hands on that stream's packets to the decode stage. `mp4` holds the MP4-specific checks (claims, the live
//! box gate, sniffing, sample tables); `indexed` lists a whole MP4's packets from its index, without reading
//! its media data; `cues` numbers a Matroska video's frames by time from its Cues (the approximate seek mode).

pub(crate) mod cues;
pub(crate) mod indexed;
mod matroska_crc;
pub(crate) mod mp4;
pub(crate) mod open;

use crate::error::{AvError, VideoError};
use crate::ffi::format::{Demuxers, FormatContext, Interrupt, ProbeOptions};
use crate::ffi::io::{MemoryIo, StreamSource};
use crate::ffi::packet::Packet;
use crate::ffi::parser::FrameSizeParser;
use crate::ffi::protocol::ProtocolStream;
use crate::info::{ContainerInfo, FfmpegBuild, MediaKind, StreamInfo};
use crate::settings::config::{Config, StreamSelection};
use crate::source::url::{redact_url, Scheme, UrlOptions, UrlSource};
use crate::video::{Encoded, Whole};

/// Reads what a container holds (format, streams, codecs, sizes, colour tags) without decoding it: a video in
/// memory (any of [`Encoded`]'s buffers), or a file ([`Encoded::file`]), read only where the demuxer looks,
/// never whole.
///
/// ```no_run
/// let info = framefeed::probe(framefeed::Encoded::file("clip.mp4")?)?;
/// for s in &info.streams {
///     println!("#{} {} {} {}x{}", s.index, s.kind.as_str(), s.codec, s.width, s.height);
/// }
/// let same = framefeed::probe(std::fs::read("clip.mp4")?)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn probe(video: impl Into<Encoded>) -> Result<ContainerInfo, VideoError> {
    let data = video.into().data;
    if data.is_empty() {
        return Err(VideoError::Empty);
    }
    crate::ffi::log::route_to_tracing();
    check_claims(
        &data,
        crate::settings::config::limits::DEFAULT_MAX_CONTAINER_SAMPLES,
    )?;
    Ok(
        FormatContext::open_io(MemoryIo::new(data)?, ProbeOptions::default())
            .map_err(VideoError::NotAVideo)?
            .info(),
    )
}

/// The FFmpeg this build decodes with: its release, `configure` line and licence.
///
/// ```
/// let ffmpeg = framefeed::ffmpeg_build();
/// assert!(ffmpeg.libavcodec.0 >= 59, "FFmpeg 5.1 or newer");
/// println!("FFmpeg {} ({})", ffmpeg.version, ffmpeg.license);
/// ```
pub fn ffmpeg_build() -> FfmpegBuild {
    let (version, configuration, license, packed) = crate::ffi::version::linked();
    FfmpegBuild {
        version,
        configuration,
        license,
        protocols: crate::ffi::protocol::input_protocols(),
        libavcodec: (packed >> 16, (packed >> 8) & 0xff, packed & 0xff),
    }
}

/// Whether the linked FFmpeg can open URLs of `scheme` (RTSP is a demuxer in FFmpeg; the others are protocols).
fn ffmpeg_can_open(scheme: Scheme) -> bool {
    match scheme {
        Scheme::Rtsp => crate::ffi::format::has_demuxer(c"rtsp"),
        other => crate::ffi::protocol::input_protocols()
            .iter()
            .any(|p| p == other.as_str()),
    }
}

/// Refuses a whole video whose MP4/MOV claims would make the demuxer take memory out of proportion to it.
fn check_claims(data: &Whole, max_samples: u64) -> Result<(), VideoError> {
    match data {
        Whole::Memory(bytes) => crate::demux::mp4::claims::check_buffer(bytes, max_samples),
        Whole::File(file) => crate::demux::mp4::claims::check_file(file, max_samples),
    }
    .map_err(|reason| VideoError::ImplausibleContainer { reason })
}

/// Picks the stream to decode; see [`StreamSelection::Best`] for the rule.
pub(crate) fn select_stream(
    streams: &[StreamInfo],
    selection: StreamSelection,
) -> Result<usize, VideoError> {
    let is_video = |s: &StreamInfo| s.kind == MediaKind::Video && !s.attached_picture;
    match selection {
        StreamSelection::Index(index) => match streams.get(index) {
            Some(s) if is_video(s) => Ok(index),
            _ => Err(VideoError::StreamNotFound {
                index,
                streams: streams.len(),
            }),
        },
        StreamSelection::Best => streams
            .iter()
            .filter(|s| is_video(s))
            // max_by_key keeps the last of equals: reverse the index so the first one wins ties.
            .max_by_key(|s| {
                let score = u64::from(s.width) * u64::from(s.height)
                    + if s.default { 5_000_000 } else { 0 };
                (score, std::cmp::Reverse(s.index))
            })
            .map(|s| s.index)
            .ok_or(VideoError::NoVideoStream),
    }
}

/// An open container with its chosen video stream.
pub(crate) struct Demuxer {
    format: FormatContext,
    stream: StreamInfo,
    /// The whole video it reads, when it was opened from one (for `indexed`).
    whole: Option<Whole>,
    /// Opened by URL: the interrupt armed with the read timeout before each read.
    reads: Option<(std::sync::Arc<Interrupt>, std::time::Duration)>,
    /// The frame size its frames are held to (its decoders', too).
    limits: FrameLimits,
    /// Packets read ahead ([`parse_frame_size`](Self::parse_frame_size)), given out first.
    read_ahead: std::collections::VecDeque<Packet>,
    /// An audio stream whose packets are set aside as they are read ([`tap_audio`](Self::tap_audio)).
    audio_tap: Option<(usize, std::sync::Arc<AudioTap>)>,
    /// A local Matroska file's Cluster checksums, checked as its packets are read (`matroska_crc`).
    crc: Option<matroska_crc::ClusterCrc>,
}

/// The packets of an audio stream read by a video's demuxer (a live video's or a URL's, read once), set aside
/// for the audio decoder as they come: at most [`AudioTap::MAX_BYTES`] wait, the oldest dropped past that (a
/// stream whose audio is never taken stays bounded).
#[derive(Default)]
pub(crate) struct AudioTap {
    packets: parking_lot::Mutex<(std::collections::VecDeque<Packet>, usize)>,
    closed: std::sync::atomic::AtomicBool,
}

impl AudioTap {
    /// Bytes of audio packets that may wait: minutes of any compressed audio, seconds of PCM.
    pub(crate) const MAX_BYTES: usize = 16 << 20;

    fn push(&self, packet: Packet) {
        let mut queue = self.packets.lock();
        queue.1 += packet.size();
        queue.0.push_back(packet);
        while queue.1 > Self::MAX_BYTES {
            let Some(old) = queue.0.pop_front() else {
                break;
            };
            queue.1 -= old.size();
            tracing::warn!("audio packets not taken for too long: the oldest is dropped");
        }
    }

    /// The oldest packet waiting.
    pub(crate) fn pop(&self) -> Option<Packet> {
        let mut queue = self.packets.lock();
        let packet = queue.0.pop_front()?;
        queue.1 -= packet.size();
        Some(packet)
    }

    /// No packet will come any more (the video's reading ended).
    pub(crate) fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether [`close`](Self::close) was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl Demuxer {
    /// Opens the whole video `data` (in memory or a file), picks the stream per `config` and checks its
    /// declared size against the limits.
    pub(crate) fn open(data: impl Into<Whole>, config: &Config) -> Result<Self, VideoError> {
        Self::open_whole(data.into(), config, false)
    }

    /// Like [`open`](Self::open), reading only the container's header: no frame is decoded to complete the
    /// streams' parameters (`avformat_find_stream_info`), so it is quick, and only what the header says is
    /// known (an MP4's index is whole; its streams' pixel formats and guessed frame rates may not be).
    pub(crate) fn open_header(data: impl Into<Whole>, config: &Config) -> Result<Self, VideoError> {
        Self::open_whole(data.into(), config, true)
    }

    fn open_whole(data: Whole, config: &Config, header_only: bool) -> Result<Self, VideoError> {
        if data.is_empty() {
            return Err(VideoError::Empty);
        }
        check_claims(&data, config.max_container_samples)?;
        let probe = ProbeOptions {
            header_only,
            ..Self::probe(config, Demuxers::Any)
        };
        let mut this = Self::open_io(MemoryIo::new(data.clone())?, config, probe)?;
        if let Some(source) = data.source() {
            source.opened();
        }
        if this.format.is_matroska() && data.read_local(0, &mut []).is_some() {
            this.crc = Some(matroska_crc::ClusterCrc::new(data.len()));
        }
        this.whole = Some(data);
        Ok(this)
    }

    /// Where this whole video's packet index is kept between openings, if anywhere (a remote video's index
    /// cache).
    pub(crate) fn kept_index(&self) -> Option<&dyn crate::video::KeepIndex> {
        match self.whole.as_ref()? {
            Whole::File(file) => file.kept_index.as_deref(),
            Whole::Memory(_) => None,
        }
    }

    /// Whether this whole video's frames may be numbered by time from its Cues rather than read through to
    /// index them ([`SeekMode::Approximate`](crate::SeekMode::Approximate): `cues`).
    pub(crate) fn approximate_index(&self) -> bool {
        match self.whole.as_ref() {
            Some(Whole::File(file)) => file.approximate_index,
            _ => false,
        }
    }

    /// The [`ReadAt`](crate::ReadAt) source of a whole video that reads from one (a remote object), and its
    /// length: what sampling hints the ranges it will read to.
    pub(crate) fn whole_source(&self) -> Option<(&dyn crate::ReadAt, u64)> {
        let whole = self.whole.as_ref()?;
        Some((whole.source()?, whole.len()))
    }

    /// A demuxer over the whole video `data` reading only an audio stream: `stream` when it is one, else the one
    /// the `ffmpeg` CLI picks; `Ok(None)` when there is none.
    pub(crate) fn open_audio(
        data: Whole,
        config: &Config,
        stream: Option<usize>,
    ) -> Result<Option<Self>, VideoError> {
        let probe = ProbeOptions {
            header_only: false,
            ..Self::probe(config, Demuxers::Any)
        };
        let mut format = FormatContext::open_io(MemoryIo::new(data.clone())?, probe)
            .map_err(VideoError::NotAVideo)?;
        let Some(index) = format.audio_stream(stream) else {
            return Ok(None);
        };
        let info = format.info();
        format.keep_only_stream(index);
        Ok(Some(Self {
            format,
            stream: info.streams[index].clone(),
            whole: Some(data),
            reads: None,
            limits: FrameLimits::of(config),
            read_ahead: std::collections::VecDeque::new(),
            audio_tap: None,
            crc: None,
        }))
    }

    /// Like [`open`](Self::open), reading a live stream as its bytes arrive. An MP4 stream comes through the
    /// box gate (`mp4::live`, which checks each box's claims before the demuxer sees it, and keeps what the
    /// demuxer may go back to) and is read by the MOV demuxer only; any other stream never by it.
    pub(crate) fn open_live(
        source: Box<dyn StreamSource>,
        mp4: bool,
        config: &Config,
    ) -> Result<Self, VideoError> {
        let demuxers = if mp4 {
            Demuxers::OnlyMov
        } else {
            Demuxers::NotMov
        };
        Self::open_io(
            MemoryIo::streaming(source, mp4)?,
            config,
            Self::probe(config, demuxers),
        )
    }

    /// Opens `source`'s URL with FFmpeg's protocols (only those of its scheme): opening may take the source's
    /// open timeout, each read its read timeout, and `interrupt` also ends any wait when the operator stops.
    pub(crate) fn open_url(
        source: &UrlSource,
        interrupt: std::sync::Arc<Interrupt>,
        config: &Config,
    ) -> Result<Self, UrlOpenError> {
        if !ffmpeg_can_open(source.scheme) {
            return Err(UrlOpenError::Video(VideoError::SourceUnavailable {
                url: redact_url(&source.url),
                attempts: 1,
                reason: format!(
                    "the FFmpeg framefeed is linked with has no {} protocol (the self-contained wheel carries no \
                     TLS or SRT library: https:// and srt:// need framefeed built from source against an FFmpeg \
                     that has them)",
                    source.scheme.as_str()
                ),
            }));
        }
        interrupt.arm(source.options.open_timeout);
        let protocols = UrlOptions::protocol_whitelist(source.scheme);
        let options = source.options.ffmpeg_options(source.scheme);
        let format = if source.scheme.is_byte_stream() {
            // The protocol's bytes through the live input's AVIO: never read by the MOV demuxer (a stream of
            // unchecked MP4 boxes), and a close is the end of the stream, not an error (see ProtocolStream).
            let stream = ProtocolStream::open(&source.url, &protocols, &options, interrupt.clone())
                .map_err(UrlOpenError::Open)?;
            let io = MemoryIo::streaming(Box::new(stream), false).map_err(UrlOpenError::Open)?;
            FormatContext::open_io(io, Self::probe(config, Demuxers::NotMov))
        } else {
            FormatContext::open_url(
                &source.url,
                &protocols,
                &options,
                interrupt.clone(),
                Self::probe(config, Demuxers::Any),
            )
        };
        let format = match format {
            Ok(format) => format,
            // Cut short (the open timeout, the operator stopping): not the stream's fault.
            Err(e) if interrupt.must_stop() => return Err(UrlOpenError::Open(e)),
            Err(e) if source.scheme.is_byte_stream() => {
                return Err(UrlOpenError::Video(VideoError::NotAVideo(e)))
            }
            Err(e) => return Err(UrlOpenError::Open(e)),
        };
        let mut this = Self::with_stream(format, config).map_err(UrlOpenError::Video)?;
        this.reads = Some((interrupt, source.options.read_timeout));
        Ok(this)
    }

    fn probe(config: &Config, demuxers: Demuxers) -> ProbeOptions {
        ProbeOptions {
            demuxers,
            probe_size: config.probe_size.map(|b| b.min(i64::MAX as u64) as i64),
            // FFmpeg reads 0 as "its default": the shortest it takes is 1 µs.
            analyze_duration: config
                .analyze_duration
                .map(|d| (d.as_micros().min(i64::MAX as u128) as i64).max(1)),
            // With no analysis asked for, no frames are read to guess the frame rate either.
            fps_probe_frames: config.analyze_duration.filter(|d| d.is_zero()).map(|_| 0),
            ignore_edit_list: false,
            header_only: false,
            max_pixels: Some(decoder_max_pixels(config)),
            no_probe_decoders: !config.probe_decoders,
        }
    }

    fn open_io(io: MemoryIo, config: &Config, probe: ProbeOptions) -> Result<Self, VideoError> {
        let format = FormatContext::open_io(io, probe).map_err(VideoError::NotAVideo)?;
        Self::with_stream(format, config)
    }

    /// Picks the stream of an open container per `config` and checks its declared size.
    fn with_stream(mut format: FormatContext, config: &Config) -> Result<Self, VideoError> {
        let info = format.info();
        let index = select_stream(&info.streams, config.stream)?;
        let stream = info.streams[index].clone();
        // 0x0 is allowed here (some containers only learn the size from the first frame); frames are checked
        // again one by one.
        if stream.width != 0 || stream.height != 0 {
            check_frame_size(stream.width, stream.height, config)?;
        }
        format.keep_only_stream(index);
        Ok(Self {
            format,
            stream,
            whole: None,
            reads: None,
            limits: FrameLimits::of(config),
            read_ahead: std::collections::VecDeque::new(),
            audio_tap: None,
            crc: None,
        })
    }

    /// Sets aside the packets of an audio stream as they are read (`stream` when it is one, else the one the
    /// `ffmpeg` CLI picks), for an audio decoder fed from the same reading; `None` when there is none.
    /// Packets already read ahead are not in it.
    pub(crate) fn tap_audio(
        &mut self,
        stream: Option<usize>,
    ) -> Option<(usize, std::sync::Arc<AudioTap>)> {
        let index = self.format.audio_stream(stream)?;
        self.format.keep_stream(index);
        let tap = std::sync::Arc::new(AudioTap::default());
        self.audio_tap = Some((index, tap.clone()));
        Some((index, tap))
    }

    /// The frame size its frames are held to, for its decoders.
    pub(crate) fn frame_limits(&self) -> FrameLimits {
        self.limits
    }

    /// The chosen stream.
    pub(crate) fn stream(&self) -> &StreamInfo {
        &self.stream
    }

    pub(crate) fn format(&self) -> &FormatContext {
        &self.format
    }

    /// Whether it can seek to any byte (see `FormatContext::seekable`): a buffer, a file, HTTP with ranges.
    pub(crate) fn seekable(&self) -> bool {
        self.format.seekable()
    }

    /// Moves reading to the chosen stream's keyframe at or before `ts` (its time base), or with `bytes` to byte
    /// position `ts`; the next packet read tells where it landed.
    pub(crate) fn seek(&mut self, stream: usize, ts: i64, bytes: bool) -> Result<(), AvError> {
        self.read_ahead.clear();
        self.format.seek(stream, ts, bytes)
    }

    /// Reads the stream's first packets (at most `max_packets`, kept for [`next_packet`](Self::next_packet))
    /// until FFmpeg's parser for its codec tells the frame size their parameter sets give: the size a decoder
    /// would allocate for, known before any decoder sees them. `None` when there is no parser for the codec,
    /// or the packets read did not tell (the stream ended, or its parameter sets come later).
    pub(crate) fn parse_frame_size(
        &mut self,
        max_packets: usize,
    ) -> Result<Option<(u32, u32)>, AvError> {
        let Some(mut parser) = FrameSizeParser::new(&self.format, self.stream.index) else {
            return Ok(None);
        };
        for packet in &self.read_ahead {
            if let Some(size) = parser.frame_size(packet) {
                return Ok(Some(size));
            }
        }
        while self.read_ahead.len() < max_packets {
            let mut packet = Packet::new()?;
            if !self.read_packet(&mut packet)? {
                break;
            }
            let size = parser.frame_size(&packet);
            self.read_ahead.push_back(packet);
            if size.is_some() {
                return Ok(size);
            }
        }
        Ok(None)
    }

    /// Takes the frame size the stream's bitstream gave ([`parse_frame_size`](Self::parse_frame_size)) as
    /// the stream's, over what its container said.
    pub(crate) fn set_frame_size(&mut self, width: u32, height: u32) {
        self.stream.width = width;
        self.stream.height = height;
    }

    /// Reads the chosen stream's next packet into `pkt`; `Ok(false)` at the end of the container.
    pub(crate) fn next_packet(&mut self, pkt: &mut Packet) -> Result<bool, AvError> {
        if let Some(mut ahead) = self.read_ahead.pop_front() {
            pkt.take_from(&mut ahead);
            return Ok(true);
        }
        self.read_packet(pkt)
    }

    fn read_packet(&mut self, pkt: &mut Packet) -> Result<bool, AvError> {
        if let Some((interrupt, timeout)) = &self.reads {
            interrupt.arm(*timeout);
        }
        loop {
            if !self.format.read(pkt)? {
                return Ok(false);
            }
            if pkt.stream_index() == self.stream.index {
                // The demuxer skipped damaged data since the last video packet (logging why): packets may be
                // missing before this one.
                if self.format.logged_errors_since() {
                    pkt.mark_after_lost_data();
                }
                // Its Cluster's CRC-32 does not match: damage no decoder may report.
                if let (Some(crc), Some(whole), Some(pos)) = (&mut self.crc, &self.whole, pkt.pos())
                {
                    let read = |at: u64, buf: &mut [u8]| whole.read_local(at, buf).unwrap_or(Ok(0));
                    if crc.damaged_at(pos as u64, &read) {
                        pkt.mark_corrupt();
                    }
                }
                return Ok(true);
            }
            if let Some((index, tap)) = &self.audio_tap {
                if pkt.stream_index() == *index {
                    let mut packet = Packet::new()?;
                    packet.take_from(pkt);
                    tap.push(packet);
                }
            }
        }
    }
}

/// Why a URL could not be opened as a video.
pub(crate) enum UrlOpenError {
    /// FFmpeg could not open it (connect, handshake, probe; or the open timeout, or the operator stopping).
    Open(AvError),
    /// It opened, but is no video framefeed takes (no video stream, absurd size...).
    Video(VideoError),
}

/// FFmpeg's `max_pixels` for the decoders of an input under `config`: the frame limit, with room for the
/// stride alignment FFmpeg adds to the width before it compares (`ff_get_buffer` checks the width rounded up
/// to 64 times the height), so that a frame within the limit is never refused there; [`check_frame_size`]
/// then holds every frame to the exact limit.
pub(crate) fn decoder_max_pixels(config: &Config) -> i64 {
    const STRIDE_ALIGN: u64 = 64;
    let slack = (STRIDE_ALIGN - 1).saturating_mul(u64::from(config.max_dimension));
    i64::try_from(config.max_frame_pixels.saturating_add(slack)).unwrap_or(i64::MAX)
}

/// The frame size an input's frames are held to ([`Config::max_frame_size`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameLimits {
    max_dimension: u32,
    max_pixels: u64,
}

impl FrameLimits {
    pub(crate) fn of(config: &Config) -> Self {
        Self {
            max_dimension: config.max_dimension,
            max_pixels: config.max_frame_pixels,
        }
    }

    /// Rejects zero or over-limit frame sizes.
    pub(crate) fn check(&self, width: u32, height: u32) -> Result<(), VideoError> {
        let pixels = u64::from(width) * u64::from(height);
        if width == 0
            || height == 0
            || width > self.max_dimension
            || height > self.max_dimension
            || pixels > self.max_pixels
        {
            return Err(VideoError::AbsurdDimensions {
                width: i64::from(width),
                height: i64::from(height),
                max_dimension: self.max_dimension,
                max_pixels: self.max_pixels,
            });
        }
        Ok(())
    }
}

/// Rejects zero or over-limit frame sizes.
pub(crate) fn check_frame_size(width: u32, height: u32, config: &Config) -> Result<(), VideoError> {
    FrameLimits::of(config).check(width, height)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linked_ffmpeg_names_its_release_and_protocols() {
        let build = ffmpeg_build();
        assert!(build.libavcodec >= (59, 37, 0), "{build:?}");
        assert!(build.protocols.iter().any(|p| p == "file"), "{build:?}");
        assert!(!build.protocols.iter().any(|p| p == "no-such-protocol"));
        assert!(
            ffmpeg_can_open(Scheme::File)
                && ffmpeg_can_open(Scheme::Http)
                && ffmpeg_can_open(Scheme::Rtsp)
        );
        assert_eq!(
            ffmpeg_can_open(Scheme::Srt),
            build.protocols.iter().any(|p| p == "srt")
        );
    }

    fn stream(index: usize, kind: MediaKind, w: u32, h: u32, default: bool) -> StreamInfo {
        StreamInfo {
            index,
            kind,
            codec: "h264".into(),
            profile: None,
            width: w,
            height: h,
            pixel_format: None,
            color_space: None,
            color_range: None,
            color_primaries: None,
            color_transfer: None,
            frame_rate: None,
            time_base: (1, 1000),
            duration: None,
            frames: None,
            bit_rate: None,
            default,
            attached_picture: false,
            display_matrix: None,
            bit_depth: None,
            mastering_display: None,
            content_light: None,
            sample_rate: None,
            channels: None,
        }
    }

    #[test]
    fn best_stream_prefers_default_then_size_then_first() {
        let a = stream(0, MediaKind::Video, 320, 180, true);
        let audio = stream(1, MediaKind::Audio, 0, 0, true);
        let b = stream(2, MediaKind::Video, 480, 270, true);
        let c = stream(3, MediaKind::Video, 1920, 1080, false); // 2.07M < 480*270 + 5M
        let d = stream(4, MediaKind::Video, 480, 270, true);
        let all = [a, audio, b, c, d];
        assert_eq!(select_stream(&all, StreamSelection::Best), Ok(2));
        let uhd = [
            stream(0, MediaKind::Video, 640, 360, true),
            stream(1, MediaKind::Video, 3840, 2160, false),
        ];
        assert_eq!(select_stream(&uhd, StreamSelection::Best), Ok(1));
        let mut cover = stream(5, MediaKind::Video, 4000, 4000, true);
        cover.attached_picture = true;
        let with_cover = [stream(0, MediaKind::Video, 64, 48, true), cover];
        assert_eq!(select_stream(&with_cover, StreamSelection::Best), Ok(0));
    }

    #[test]
    fn explicit_index_must_be_a_video_stream() {
        let all = [
            stream(0, MediaKind::Audio, 0, 0, true),
            stream(1, MediaKind::Video, 64, 48, true),
        ];
        assert_eq!(select_stream(&all, StreamSelection::Index(1)), Ok(1));
        assert_eq!(
            select_stream(&all, StreamSelection::Index(0)),
            Err(VideoError::StreamNotFound {
                index: 0,
                streams: 2
            })
        );
        assert_eq!(
            select_stream(&all, StreamSelection::Index(7)),
            Err(VideoError::StreamNotFound {
                index: 7,
                streams: 2
            })
        );
        assert_eq!(
            select_stream(&all[..1], StreamSelection::Best),
            Err(VideoError::NoVideoStream)
        );
    }

    #[test]
    fn frame_size_limits() {
        let config = Config::new(1, 1).max_frame_size(100, 5000);
        assert!(check_frame_size(100, 50, &config).is_ok());
        assert!(check_frame_size(101, 10, &config).is_err());
        assert!(check_frame_size(100, 51, &config).is_err());
        assert!(check_frame_size(0, 10, &config).is_err());
    }
}
