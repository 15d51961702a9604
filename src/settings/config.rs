//! The operator's configuration, validated once by [`VideoInput::new`](crate::VideoInput::new).

use std::time::Duration;

use crate::device_kind::Device;
use crate::error::{Error, Result};
use crate::settings::transforms::Transforms;

/// What to do with a video's last sequence when fewer than `sequence_length` frames are left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LastSequencePolicy {
    /// The last sequence is shorter: it holds only the frames that are left (the reference's default).
    #[default]
    Partial,
    /// The last sequence has `sequence_length` frames; the missing ones are all zeros.
    /// [`Sequence::valid_frames`](crate::Sequence::valid_frames) says how many are real.
    Pad,
}

/// Which stream of a container to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamSelection {
    /// The "best" video stream, chosen as the `ffmpeg` CLI (5.1) chooses: attached pictures (cover art) are
    /// skipped; the highest score `width * height + 5_000_000 * is_default` wins; ties go to the lower index.
    #[default]
    Best,
    /// This container stream index (as `ffprobe` numbers streams); it must be a video stream.
    Index(usize),
}

/// How libavcodec spreads a video's decoding over its threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Threading {
    /// Frame and slice threading (default): the most throughput, but each frame thread holds one frame back,
    /// so a frame leaves the decoder up to `threads - 1` frames after its packet went in; framefeed holds it
    /// until the packets before it have given their pictures, and decodes a stretch where damage shows again
    /// on one thread, so that damaged video gives the same pictures every run (docs/guide/damaged-videos.md).
    #[default]
    FrameAndSlice,
    /// Slice threading only: frames leave the decoder as soon as they are decoded (lowest latency, for live
    /// streams); only helps streams encoded with several slices.
    Slice,
}

/// How the NVDEC backend drives the GPU's video engines (with [`Device::Cuda`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NvdecDriver {
    /// framefeed's own nvcuvid decoder (default) for H.264, HEVC, VP8, VP9 and AV1: NVIDIA's parser and a
    /// decode queue, so several pictures are in flight on the engine while earlier ones are converted; codecs
    /// it does not take go through libavcodec's hwaccel.
    #[default]
    Direct,
    /// libavcodec's NVDEC hwaccel for every codec: one picture in the engine at a time.
    Hwaccel,
}

super::choice::choices!(NvdecDriver, "nvdec_driver", [NvdecDriver::Direct => "direct", NvdecDriver::Hwaccel => "hwaccel"]);
super::choice::choices!(LastSequencePolicy, "last_sequence_policy", [
    LastSequencePolicy::Partial => "partial",
    LastSequencePolicy::Pad => "pad",
]);
super::choice::choices!(Threading, "threading", [
    Threading::FrameAndSlice => "frame_and_slice" | "frame-and-slice" | "frame",
    Threading::Slice => "slice",
]);

/// What a [live video](crate::LiveVideo) that turns out to be an MP4 with its index (`moov`) after its media
/// data (`mdat`) does. Such a file cannot be decoded before its last byte has arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoovAtEnd {
    /// Keep its bytes until the upload is finished, then decode the whole buffer (so an ordinary uploaded MP4
    /// works). Past `max_bytes` the video fails with [`VideoError::MoovAtEndTooLarge`](crate::VideoError).
    Buffer {
        /// The most bytes kept for one such video.
        max_bytes: u64,
    },
    /// Strictly live: fail the video at once with [`VideoError::MoovAtEndLive`](crate::VideoError).
    Fail,
}

impl Default for MoovAtEnd {
    fn default() -> Self {
        MoovAtEnd::Buffer { max_bytes: 1 << 30 }
    }
}

/// How the operator batches, decodes and polls. Build with [`Config::new`] and the setters; every value is
/// checked once, when the operator is created.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub(crate) sequence_length: usize,
    pub(crate) max_batch_size: usize,
    pub(crate) last_sequence_policy: LastSequencePolicy,
    pub(crate) blocking: bool,
    pub(crate) decoder_threads: usize,
    pub(crate) prefetch_batches: usize,
    pub(crate) stream: StreamSelection,
    pub(crate) max_dimension: u32,
    pub(crate) max_frame_pixels: u64,
    pub(crate) max_batch_bytes: u64,
    pub(crate) max_container_samples: u64,
    pub(crate) max_queued_videos: usize,
    pub(crate) max_queued_bytes: usize,
    pub(crate) threading: Threading,
    pub(crate) probe_size: Option<u64>,
    pub(crate) analyze_duration: Option<Duration>,
    pub(crate) live_buffer_bytes: usize,
    pub(crate) stall_timeout: Duration,
    pub(crate) moov_at_end: MoovAtEnd,
    pub(crate) hold_last_batch: bool,
    pub(crate) transforms: Transforms,
    pub(crate) pack_batches: bool,
    pub(crate) huge_pages: bool,
    pub(crate) autorotate: bool,
    /// Fail a video at its first damage (`ffmpeg -xerror`).
    pub(crate) strict: bool,
    pub(crate) device: Device,
    pub(crate) cpu_fallback: bool,
    pub(crate) nvdec_driver: NvdecDriver,
    pub(crate) sampling: crate::settings::sampling::Sampling,
    /// FFmpeg's probe (`avformat_find_stream_info`) may open decoders (the default); off with
    /// [`Config::probe_without_decoders`].
    pub(crate) probe_decoders: bool,
    /// Each sequence's audio, when asked for.
    pub(crate) audio: Option<crate::settings::audio::Audio>,
}

/// Bytes of a batch of `max_batch_size` sequences of `sequence_length` frames of `frame` pixels: `None` when the
/// product does not fit in a `u64` (the settings and the video choose these numbers).
pub(crate) fn batch_bytes(
    max_batch_size: usize,
    sequence_length: usize,
    frame: (usize, usize),
    bytes_per_pixel: usize,
) -> Option<u64> {
    [
        max_batch_size,
        sequence_length,
        frame.0,
        frame.1,
        bytes_per_pixel,
    ]
    .into_iter()
    .try_fold(1u64, |acc, n| acc.checked_mul(u64::try_from(n).ok()?))
}

/// Limits on the configuration, named in the validation messages.
pub mod limits {
    /// The default [`Config::max_batch_bytes`](super::Config::max_batch_bytes): 4 GiB (a 4K RGB batch of 16 x 4
    /// frames is 1.6 GB).
    pub const DEFAULT_MAX_BATCH_BYTES: u64 = 4 << 30;
    /// The default [`Config::max_container_samples`](super::Config::max_container_samples): 2^22 (about 19
    /// hours of 60 fps video with its audio; an index of at most 256 MiB).
    pub const DEFAULT_MAX_CONTAINER_SAMPLES: u64 = 1 << 22;
    /// Largest `sequence_length`.
    pub const MAX_SEQUENCE_LENGTH: usize = 1 << 16;
    /// Largest `max_batch_size`.
    pub const MAX_BATCH_SIZE: usize = 1 << 16;
    /// Largest number of decoder threads.
    pub const MAX_DECODER_THREADS: usize = 256;
    /// Largest number of prefetched batches.
    pub const MAX_PREFETCH_BATCHES: usize = 64;
    /// Largest accepted frame side (`max_dimension`).
    pub const MAX_DIMENSION: u32 = 65_535;
    /// The default `max_dimension` of [`Config::max_frame_size`](super::Config::max_frame_size).
    pub const DEFAULT_MAX_DIMENSION: u32 = 16_384;
    /// The default `max_pixels` of [`Config::max_frame_size`](super::Config::max_frame_size).
    pub const DEFAULT_MAX_FRAME_PIXELS: u64 = 1 << 27;
    /// Largest `max_queued_videos`.
    pub const MAX_QUEUED_VIDEOS: usize = 1 << 20;
    /// Smallest `probe_size` FFmpeg accepts.
    pub const MIN_PROBE_SIZE: u64 = 32;
    /// Largest `analyze_duration`.
    pub const MAX_ANALYZE_DURATION: std::time::Duration = std::time::Duration::from_secs(3600);
    /// Smallest `live_buffer_bytes`.
    pub const MIN_LIVE_BUFFER_BYTES: usize = 4096;
    /// Shortest stall timeout.
    pub const MIN_STALL_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(1);
}

impl Config {
    /// A configuration yielding batches of up to `max_batch_size` sequences of `sequence_length` frames, with
    /// the defaults: [`LastSequencePolicy::Partial`], blocking polls, one decoder thread per core, 1 finished
    /// batch kept ready ahead of the consumer (while the next one is decoded), the best video stream, frames up
    /// to 16384 pixels a side and 2^27 pixels (e.g. 16384x8192), a feed queue of at most 64 videos and 1 GiB,
    /// frame and slice threading, FFmpeg's default probing, live videos buffered up to 8 MiB ahead of the
    /// decoder and failed after 30 s without data, and moov-at-end MP4 uploads buffered up to 1 GiB.
    pub fn new(sequence_length: usize, max_batch_size: usize) -> Self {
        Self {
            sequence_length,
            max_batch_size,
            last_sequence_policy: LastSequencePolicy::Partial,
            blocking: true,
            decoder_threads: 0,
            prefetch_batches: 1,
            stream: StreamSelection::Best,
            max_dimension: limits::DEFAULT_MAX_DIMENSION,
            max_frame_pixels: limits::DEFAULT_MAX_FRAME_PIXELS,
            max_batch_bytes: limits::DEFAULT_MAX_BATCH_BYTES,
            max_container_samples: limits::DEFAULT_MAX_CONTAINER_SAMPLES,
            max_queued_videos: 64,
            max_queued_bytes: 1 << 30,
            threading: Threading::FrameAndSlice,
            probe_size: None,
            analyze_duration: None,
            live_buffer_bytes: 8 << 20,
            stall_timeout: Duration::from_secs(30),
            moov_at_end: MoovAtEnd::default(),
            hold_last_batch: true,
            transforms: Transforms::default(),
            pack_batches: false,
            huge_pages: false,
            autorotate: true,
            strict: false,
            device: Device::Cpu,
            cpu_fallback: true,
            nvdec_driver: NvdecDriver::Direct,
            sampling: crate::settings::sampling::Sampling::default(),
            probe_decoders: true,
            audio: None,
        }
    }

    /// For untrusted input (the service's uploads use it): FFmpeg's probe of a stream reads its parameters
    /// from the container and FFmpeg's parsers only and opens no decoder, and the frame size the stream's
    /// parameter sets give is read from its first packets with FFmpeg's parser and checked against
    /// [`max_frame_size`](Self::max_frame_size) before any decoder sees them. A stream announcing frames over
    /// the limit then fails with [`VideoError::AbsurdDimensions`](crate::VideoError) having cost none of the
    /// frames or per-picture tables a decoder allocates for its size (by default, the decoders are only held to
    /// the limit when they allocate frames). The stream's pixel format may then stay unknown until its first
    /// frame.
    pub fn probe_without_decoders(mut self) -> Self {
        self.probe_decoders = false;
        self
    }

    /// Packed batches: `false` (default) follows the reference contract, a batch never spans two videos.
    /// `true` fills each batch with sequences from consecutive videos when their frame shapes match (use a
    /// crop or a [`Resize::Fill`](crate::Resize)/`Letterbox` for one shape), so that many short clips still
    /// give full batches; each sequence tells its video ([`Sequence::video`](crate::Sequence::video)). A
    /// video's last sequence is closed per the policy first. A batch with room waits for the next video's
    /// sequences, so the batches are the same whatever the feeding's timing; it is delivered short only when
    /// the shape changes, a video fails, or the input is closed ([`close`](crate::VideoInput::close)).
    /// [`Batch::index`](crate::Batch::index) then counts the operator's batches, and
    /// [`Batch::video_id`](crate::Batch::video_id) is its first sequence's video.
    pub fn pack_batches(mut self, pack: bool) -> Self {
        self.pack_batches = pack;
        self
    }

    /// Batch buffers on the system's reserved huge pages: `false` (default) uses ordinary memory. `true` puts
    /// every new batch buffer of four huge pages or more (8 MiB with Linux's 2 MiB pages) on the pages the
    /// administrator reserved (`sysctl vm.nr_hugepages=N`, or `hugepages=N` at boot) while enough are free, and
    /// on ordinary memory otherwise: never an error. A fresh buffer then costs one page fault per 2 MiB
    /// instead of per 4 KiB (a 1.6 GB batch of 4K frames: 0.07 s against 0.5-0.7 s of system time on our
    /// benchmark VM), and its pages stay with the reserved pool, not handed back to a virtual machine's host,
    /// between uses. Opt-in because reserved pages are the administrator's to share out: other programs (a
    /// database, DPDK) may be counting on them. A child process forked while a batch is alive shares the
    /// batch's pages instead of copying them on write. [`VideoInput::huge_page_allocations`](crate::VideoInput::huge_page_allocations)
    /// tells how many buffers got them.
    pub fn huge_pages(mut self, huge_pages: bool) -> Self {
        self.huge_pages = huge_pages;
        self
    }

    /// Frames shown upright: `true` (default) applies a video's display matrix (phone videos: rotated 90, 180
    /// or 270 degrees, or flipped), from its stream or from a frame that carries one, as the `ffmpeg` CLI does
    /// by default: the frame is rotated or flipped before the resize and crop, so transforms and crop windows see
    /// the upright frame and shapes are the displayed ones. `false` gives the pictures as coded (`ffmpeg
    /// -noautorotate`), for users who rotate them themselves; [`StreamInfo::rotation`](crate::StreamInfo) and
    /// [`Sequence::orientation`](crate::Sequence::orientation) still say what the video asks for. A matrix
    /// that is not a quarter turn or a flip is not applied (a warning is logged).
    pub fn autorotate(mut self, autorotate: bool) -> Self {
        self.autorotate = autorotate;
        self
    }

    /// What damaged data does to a video. `false` (default, as the `ffmpeg` CLI): every picture that decodes
    /// is delivered, each frame says whether it is damaged ([`Frame::damaged`](crate::Frame::damaged)), a
    /// picture that does not decode leaves a hole at its index ([`Sequence::holes`](crate::Sequence::holes)),
    /// and a file cut short ends early ([`Sequence::ended_early`](crate::Sequence::ended_early)): the video
    /// does not fail. `true` (`ffmpeg -xerror`): the video fails at its first damage (a rejected packet, a
    /// damaged frame, a hole, a demuxing error) with [`VideoError::Damaged`](crate::VideoError::Damaged) or
    /// [`VideoError::Demux`](crate::VideoError::Demux), after the frames before it. The same in every API:
    /// a plain run, sampling, the [`VideoReader`](crate::VideoReader) (which fails a read that meets damage).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Where videos are decoded and batches kept: [`Device::Cpu`] (default), [`Device::Cuda`] (NVDEC, batches
    /// in GPU memory; needs the `cuda` feature) or [`Device::Auto`]. Resolved once by [`VideoInput::new`](crate::VideoInput::new):
    /// CUDA asked for but unusable is an error there, never a panic.
    pub fn device(mut self, device: Device) -> Self {
        self.device = device;
        self
    }

    /// With a CUDA device, what happens to a video NVDEC cannot decode (AV1 on GPUs without AV1 NVDEC, H.264
    /// High10 or 4:2:2, 4:4:4 streams, sizes over NVDEC's limits, codecs it lacks): `true` (default) decodes it
    /// on the CPU and uploads each batch to the GPU in one copy ([`Batch::decoded_on`](crate::Batch::decoded_on)
    /// says so); `false` fails that video with [`VideoError::NvdecUnsupported`](crate::VideoError).
    pub fn cpu_fallback(mut self, fallback: bool) -> Self {
        self.cpu_fallback = fallback;
        self
    }

    /// With a CUDA device, how NVDEC is driven: framefeed's own nvcuvid decoder with several pictures in flight
    /// ([`NvdecDriver::Direct`], default) or libavcodec's hwaccel ([`NvdecDriver::Hwaccel`]). Both give the
    /// same frames; see `benches/RESULTS.md` for their rates.
    pub fn nvdec_driver(mut self, driver: NvdecDriver) -> Self {
        self.nvdec_driver = driver;
        self
    }

    /// Which frames of each video become sequences: stride and step, clips per video, a target frame rate,
    /// a time range or a list of indices ([`Sampling`](crate::Sampling)); every frame by default. With a
    /// GPU, a whole video that NVDEC decodes is sought in and decoded on NVDEC (only the GOPs its sequences
    /// need); a live or pulled video sampled in order is decoded on the CPU, its batches uploaded.
    pub fn sampling(mut self, sampling: crate::settings::sampling::Sampling) -> Self {
        self.sampling = sampling;
        self
    }

    /// The transforms applied to every sequence (resize, crop, type, normalization, layout); none by default.
    pub fn transforms(mut self, transforms: Transforms) -> Self {
        self.transforms = transforms;
        self
    }

    /// `true` (default): a full batch is held until the next frame is decoded or the video ends, so
    /// [`Batch::is_last`](crate::Batch::is_last) is always exact. `false`: a full batch is delivered as soon as
    /// its last frame is decoded, one frame interval sooner (for live streams); then a video whose last batch
    /// is full has no batch marked last: its end shows as the next poll returning the next video's batch (or
    /// `Ok(None)` after close). A short last batch is still marked last.
    pub fn hold_last_batch(mut self, hold: bool) -> Self {
        self.hold_last_batch = hold;
        self
    }

    /// Bounds the feed queue (videos fed but not yet taken by the decoder): at most `max_videos` videos and
    /// `max_bytes` bytes. When full, [`feed`](crate::VideoInput::feed) waits,
    /// [`try_feed`](crate::VideoInput::try_feed) hands the buffer back and
    /// [`feed_async`](crate::VideoInput::feed_async) waits for room. An empty queue always takes one video,
    /// even one larger than `max_bytes`. Defaults 64 and 1 GiB. Allowed: 1 to 2^20 videos, at least 1 byte.
    pub fn max_queued(mut self, max_videos: usize, max_bytes: usize) -> Self {
        self.max_queued_videos = max_videos;
        self.max_queued_bytes = max_bytes;
        self
    }

    /// Frame and slice threading (default) or slice threading only (lower latency); see [`Threading`].
    pub fn threading(mut self, threading: Threading) -> Self {
        self.threading = threading;
        self
    }

    /// Bytes FFmpeg reads to identify a container and its streams before the first packet (FFmpeg's
    /// `probesize`, default 5 000 000). Smaller starts live videos sooner. Allowed: at least 32.
    pub fn probe_size(mut self, bytes: u64) -> Self {
        self.probe_size = Some(bytes);
        self
    }

    /// Media time FFmpeg analyses for stream information before the first packet (FFmpeg's
    /// `analyzeduration`, default 5 s). Shorter starts live videos sooner. Allowed: 0 to 1 hour.
    pub fn analyze_duration(mut self, duration: Duration) -> Self {
        self.analyze_duration = Some(duration);
        self
    }

    /// The low-latency preset for live videos: slice threading only, a 64 KiB probe, no analysis beyond the
    /// first packets and no frame-rate probing, and full batches delivered at once
    /// ([`hold_last_batch(false)`](Self::hold_last_batch)).
    pub fn low_latency(self) -> Self {
        self.threading(Threading::Slice)
            .probe_size(64 * 1024)
            .analyze_duration(Duration::ZERO)
            .hold_last_batch(false)
    }

    /// Bytes of a [live video](crate::LiveVideo) buffered ahead of the decoder; when full,
    /// [`LiveVideo::push`](crate::LiveVideo::push) waits. Default 8 MiB. Allowed: at least 4096.
    pub fn live_buffer_bytes(mut self, bytes: usize) -> Self {
        self.live_buffer_bytes = bytes;
        self
    }

    /// How long the decoder waits for a live video's next chunk before failing it with
    /// [`VideoError::LiveStalled`](crate::VideoError). Default 30 s. Allowed: at least 1 ms.
    pub fn stall_timeout(mut self, timeout: Duration) -> Self {
        self.stall_timeout = timeout;
        self
    }

    /// What a live MP4 with its index at the end does (default: buffered up to 1 GiB); see [`MoovAtEnd`].
    pub fn moov_at_end(mut self, policy: MoovAtEnd) -> Self {
        self.moov_at_end = policy;
        self
    }

    /// What a video's last, incomplete sequence becomes (default [`LastSequencePolicy::Partial`]).
    pub fn last_sequence_policy(mut self, policy: LastSequencePolicy) -> Self {
        self.last_sequence_policy = policy;
        self
    }

    /// `true` (default): [`next_batch`](crate::VideoInput::next_batch) waits for videos to be fed. `false`: it
    /// returns [`Error::NoData`] at once when nothing is fed and nothing is ready.
    pub fn blocking(mut self, blocking: bool) -> Self {
        self.blocking = blocking;
        self
    }

    /// Decoder threads per video (frame and slice threading); `0` (default) uses one per core.
    /// Allowed: 0 to 256.
    pub fn decoder_threads(mut self, threads: usize) -> Self {
        self.decoder_threads = threads;
        self
    }

    /// How many finished batches the decoder may keep ready ahead of the consumer (default 1), besides the
    /// one it is decoding. Output memory is bounded by `prefetch + 1` batches plus those the consumer holds,
    /// whatever the video's length. Allowed: 1 to 64.
    pub fn prefetch_batches(mut self, batches: usize) -> Self {
        self.prefetch_batches = batches;
        self
    }

    /// Each sequence carries the audio played while its frames are shown ([`Sequence::audio`](crate::Sequence::audio)),
    /// decoded and resampled per `audio` (default: none): for a whole video by a second demuxer over the same
    /// bytes; for a video read once (live, a URL) from the audio packets its demuxer sets aside, its batches
    /// waiting (in order, briefly) for their sound. Sampled clips of a video read once carry none.
    pub fn audio(mut self, audio: crate::settings::audio::Audio) -> Self {
        self.audio = Some(audio);
        self
    }

    /// Which video stream to decode (default [`StreamSelection::Best`]).
    pub fn stream(mut self, stream: StreamSelection) -> Self {
        self.stream = stream;
        self
    }

    /// Largest frame accepted: `max_dimension` pixels a side and `max_pixels` in all (defaults 16384 and
    /// 2^27). Larger frames fail their video with [`VideoError::AbsurdDimensions`](crate::VideoError).
    /// Allowed: 1 to 65535 a side, at least 1 pixel.
    pub fn max_frame_size(mut self, max_dimension: u32, max_pixels: u64) -> Self {
        self.max_dimension = max_dimension;
        self.max_frame_pixels = max_pixels;
        self
    }

    /// The most bytes one batch may take (default [`limits::DEFAULT_MAX_BATCH_BYTES`], 4 GiB): `max_batch_size x
    /// sequence_length x` the output frame's bytes (width x height x 3 x the element size). Checked when the
    /// operator is created against the smallest batch these settings can give (the exact one when a crop or
    /// a resize fixes the output size), and before every batch against the video's real output size: a video
    /// whose batches would not fit fails alone with [`VideoError::BatchTooLarge`](crate::VideoError), naming
    /// the numbers, and never allocates. Allowed: at least 1.
    pub fn max_batch_bytes(mut self, bytes: u64) -> Self {
        self.max_batch_bytes = bytes;
        self
    }

    /// The most samples (video frames and audio packets, every track together) an MP4/MOV video's tables may
    /// claim (default [`limits::DEFAULT_MAX_CONTAINER_SAMPLES`], 2^22). libavformat builds an index entry for
    /// every claimed sample when it opens the file, before reading any of them (about 64 bytes each), and
    /// nothing in the file has to back the claim; so framefeed checks the claims first, as the demuxer would
    /// read them, and a video claiming more fails with
    /// [`VideoError::ImplausibleContainer`](crate::VideoError) before the demuxer sees it. A whole buffer may
    /// also claim at most one sample per byte it holds, whatever this limit. A live MP4's index boxes (`moov`,
    /// `moof`) are held until they are complete, up to 16 bytes per sample of this limit (64 MiB by default),
    /// and a fragmented live MP4 stream is indexed by the demuxer as it goes, so it can run for this many
    /// samples (use MPEG-TS or Matroska for streams without end). Allowed: at least 1.
    pub fn max_container_samples(mut self, samples: u64) -> Self {
        self.max_container_samples = samples;
        self
    }

    /// The number of frames in a full sequence.
    pub fn get_sequence_length(&self) -> usize {
        self.sequence_length
    }

    /// The number of sequences in a full batch.
    pub fn get_max_batch_size(&self) -> usize {
        self.max_batch_size
    }

    /// Checks every field, naming the first one out of range and its allowed range (what
    /// [`VideoInput::new`](crate::VideoInput::new) does first), without creating an operator.
    pub fn validate(&self) -> Result<()> {
        use limits::*;
        fn range<T: PartialOrd + std::fmt::Display>(
            name: &str,
            value: T,
            lo: T,
            hi: T,
        ) -> Result<()> {
            if value < lo || value > hi {
                return Err(Error::Config(format!(
                    "{name} is {value}; allowed: {lo} to {hi}"
                )));
            }
            Ok(())
        }
        range(
            "sequence_length",
            self.sequence_length,
            1,
            MAX_SEQUENCE_LENGTH,
        )?;
        range("max_batch_size", self.max_batch_size, 1, MAX_BATCH_SIZE)?;
        self.sampling.validate()?;
        if let Some(audio) = &self.audio {
            audio.validate()?;
        }
        range(
            "decoder_threads",
            self.decoder_threads,
            0,
            MAX_DECODER_THREADS,
        )?;
        range(
            "prefetch_batches",
            self.prefetch_batches,
            1,
            MAX_PREFETCH_BATCHES,
        )?;
        range("max_dimension", self.max_dimension, 1, MAX_DIMENSION)?;
        range(
            "max_frame_pixels",
            self.max_frame_pixels,
            1,
            u64::from(MAX_DIMENSION) * u64::from(MAX_DIMENSION),
        )?;
        range("max_batch_bytes", self.max_batch_bytes, 1, u64::MAX)?;
        range(
            "max_container_samples",
            self.max_container_samples,
            1,
            u64::MAX,
        )?;
        // The smallest batch these settings can give must fit.
        let (w, h) = self.transforms.fixed_output_size().unwrap_or((1, 1));
        let bytes_per_pixel = crate::settings::transforms::CHANNELS * self.transforms.dtype.size();
        let smallest = batch_bytes(
            self.max_batch_size,
            self.sequence_length,
            (w as usize, h as usize),
            bytes_per_pixel,
        );
        if smallest.is_none_or(|b| b > self.max_batch_bytes) {
            return Err(Error::Config(format!(
                "max_batch_size {} x sequence_length {} x a {w}x{h} frame of {} bytes per pixel is {} bytes, \
                 over max_batch_bytes {}; allowed: a product of at most max_batch_bytes (lower the sizes, or \
                 raise max_batch_bytes)",
                self.max_batch_size,
                self.sequence_length,
                bytes_per_pixel,
                smallest.map_or("over 2^64".to_owned(), |b| b.to_string()),
                self.max_batch_bytes
            )));
        }
        range(
            "max_queued_videos",
            self.max_queued_videos,
            1,
            MAX_QUEUED_VIDEOS,
        )?;
        range("max_queued_bytes", self.max_queued_bytes, 1, usize::MAX)?;
        if let Some(bytes) = self.probe_size {
            range("probe_size", bytes, MIN_PROBE_SIZE, i64::MAX as u64)?;
        }
        if let Some(d) = self.analyze_duration {
            if d > MAX_ANALYZE_DURATION {
                return Err(Error::Config(format!(
                    "analyze_duration is {d:?}; allowed: 0s to {MAX_ANALYZE_DURATION:?}"
                )));
            }
        }
        range(
            "live_buffer_bytes",
            self.live_buffer_bytes,
            MIN_LIVE_BUFFER_BYTES,
            usize::MAX,
        )?;
        if self.stall_timeout < MIN_STALL_TIMEOUT {
            return Err(Error::Config(format!(
                "stall_timeout is {:?}; allowed: at least {MIN_STALL_TIMEOUT:?}",
                self.stall_timeout
            )));
        }
        self.transforms
            .validate(self.max_dimension)
            .map_err(Error::Config)?;
        if let MoovAtEnd::Buffer { max_bytes } = self.moov_at_end {
            range("moov_at_end max_bytes", max_bytes, 1, u64::MAX)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        assert_eq!(Config::new(16, 4).validate(), Ok(()));
    }

    #[test]
    fn batches_that_can_never_fit_the_memory_budget_are_refused() {
        use crate::settings::transforms::{Crop, DType, OutOfBounds, Resize, Transforms};
        // Each value in range, the product 12.9 GB even for 1-pixel frames: refused with the numbers.
        let err = Config::new(65536, 65536)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("12884901888 bytes, over max_batch_bytes 4294967296"),
            "{err}"
        );
        // The largest settings within the budget pass; the video's real frame size is checked per batch.
        assert_eq!(Config::new(4096, 64).validate(), Ok(()));
        // A crop fixes the output size: 4 x 16 x 224 x 224 x 3 x 4 bytes (f32) = 38.5 MB.
        let crop = Transforms::new()
            .crop(Crop::new(224, 224))
            .dtype(DType::F32);
        let config = Config::new(16, 4).transforms(crop.clone());
        assert_eq!(
            config.clone().max_batch_bytes(38_535_168).validate(),
            Ok(())
        );
        let err = config.max_batch_bytes(38_535_167).validate().unwrap_err();
        assert!(
            err.to_string()
                .contains("a 224x224 frame of 12 bytes per pixel"),
            "{err}"
        );
        // So does a resize to a given size; a trimmed crop or a shorter-side resize does not.
        let exact = Resize::Exact {
            width: 100,
            height: 100,
        };
        let too_small = |t: Transforms| Config::new(2, 2).transforms(t).max_batch_bytes(1000);
        assert!(too_small(Transforms::new().resize(exact))
            .validate()
            .is_err());
        let trim = Crop::new(100, 100).out_of_bounds(OutOfBounds::Trim);
        assert_eq!(too_small(Transforms::new().crop(trim)).validate(), Ok(()));
        assert_eq!(
            too_small(Transforms::new().resize(Resize::Shorter(100))).validate(),
            Ok(())
        );
        // Products past 2^64 are refused too, not wrapped.
        assert_eq!(batch_bytes(usize::MAX, 2, (1, 1), 3), None);
        assert_eq!(batch_bytes(2, 3, (4, 5), 3), Some(360));
        let err = Config::new(1, 1).max_batch_bytes(0).validate().unwrap_err();
        assert!(err.to_string().contains("max_batch_bytes is 0"), "{err}");
    }

    #[test]
    fn out_of_range_values_name_the_field_and_range() {
        let err = Config::new(0, 4).validate().unwrap_err().to_string();
        assert!(
            err.contains("sequence_length is 0; allowed: 1 to 65536"),
            "{err}"
        );
        let err = Config::new(4, 0).validate().unwrap_err().to_string();
        assert!(err.contains("max_batch_size is 0; allowed: 1 to"), "{err}");
        let err = Config::new(4, 4)
            .prefetch_batches(0)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("prefetch_batches is 0; allowed: 1 to 64"),
            "{err}"
        );
        let err = Config::new(4, 4)
            .decoder_threads(1000)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("decoder_threads is 1000; allowed: 0 to 256"),
            "{err}"
        );
        let err = Config::new(4, 4)
            .max_frame_size(0, 10)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_dimension is 0"), "{err}");
        let err = Config::new(4, 4)
            .max_queued(0, 10)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("max_queued_videos is 0; allowed: 1 to 1048576"),
            "{err}"
        );
        let err = Config::new(4, 4)
            .probe_size(8)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(err.contains("probe_size is 8; allowed: 32 to"), "{err}");
        let err = Config::new(4, 4)
            .stall_timeout(Duration::ZERO)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("stall_timeout is 0ns; allowed: at least 1ms"),
            "{err}"
        );
        let err = Config::new(4, 4)
            .live_buffer_bytes(100)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("live_buffer_bytes is 100; allowed: 4096 to"),
            "{err}"
        );
        assert_eq!(Config::new(4, 4).low_latency().validate(), Ok(()));
    }
}
