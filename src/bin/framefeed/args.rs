//! `framefeed run`'s arguments: the flags (clap, their defaults the library's), the sources they name, and
//! what they ask for in the library's terms (the operator's [`Config`], the URL options, the time limits),
//! prepared once here and handed by `main` to `run.rs` (one operator) or `mux.rs` (`--mux`).

use std::path::PathBuf;
use std::time::Duration;

use framefeed::{
    Config, CropPosition, DType, Device, LastSequencePolicy, Layout, Reconnect, RtspTransport,
    Sampling, SamplingOptions, ToneMap, TransformOptions, Transforms, UrlOptions,
};

use super::parse_bytes;

/// How remote videos are read (`framefeed run` and `framefeed info` alike).
#[derive(clap::Args)]
pub(crate) struct RemoteArgs {
    /// Remote videos: a store option, NAME=VALUE (the object store's names, e.g. aws_endpoint=URL, region=R,
    /// or fsspec's: key, secret, token, endpoint_url, region_name, anon=true); repeatable.
    #[arg(long = "storage-option", value_name = "NAME=VALUE")]
    pub(crate) storage_options: Vec<String>,
    /// Remote videos: trust the certificate authorities in this PEM file (besides the system's and SSL_CERT_FILE).
    #[arg(long, value_name = "PEM")]
    pub(crate) ca_file: Option<PathBuf>,
    /// Remote videos: keep what opening each one reads (its index) in DIR, keyed by URL, size and ETag, so that
    /// opening it again costs one HEAD request.
    #[arg(long, value_name = "DIR")]
    pub(crate) index_cache: Option<PathBuf>,
    /// Remote videos: how a Matroska or WebM video's frames are numbered. exact: as the ffmpeg CLI gives them,
    /// reading the video through once to index it; approximate: by time from its Cues and frame rate (frame i
    /// is the one shown at i / fps), reading only what the frames need. MP4s are exact either way.
    #[arg(long, value_name = "MODE", default_value = "exact",
          value_parser = clap::builder::PossibleValuesParser::new(["exact", "approximate"]))]
    pub(crate) seek_mode: String,
    /// Remote videos: range requests in flight at once for one video.
    #[arg(long, value_name = "N", default_value_t = framefeed::RemoteOptions::DEFAULT_IN_FLIGHT)]
    pub(crate) remote_in_flight: usize,
}

impl RemoteArgs {
    /// The [`RemoteOptions`](framefeed::RemoteOptions) these flags ask for, checked, or a message naming the
    /// flag: `--storage-option`, `--ca-file`, `--index-cache`, `--seek-mode`, `--remote-in-flight`.
    pub(crate) fn options(&self) -> Result<framefeed::RemoteOptions, String> {
        let mut options = framefeed::RemoteOptions::new().in_flight(self.remote_in_flight);
        for pair in &self.storage_options {
            let Some((name, value)) = pair.split_once('=') else {
                return Err(format!("--storage-option {pair:?}: expected NAME=VALUE"));
            };
            options = options.option(name, value);
        }
        if let Some(pem) = &self.ca_file {
            options = options.ca_file(pem);
        }
        if let Some(dir) = &self.index_cache {
            options = options.index_cache(dir);
        }
        options = options.seek_mode(
            self.seek_mode
                .parse()
                .map_err(|e: framefeed::Error| e.to_string())?,
        );
        options.validate().map_err(|e| {
            e.to_string()
                .replace("RemoteOptions: in_flight", "--remote-in-flight")
        })?;
        Ok(options)
    }
}

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Video files, decoded in order, or URLs: objects in a store or files over HTTP(S), read by byte ranges
    /// (s3://, gs://, az://, https://...: credentials from the environment, as the clouds' tools read them), and
    /// live sources pulled through FFmpeg's protocols (rtsp://, srt://, rtmp://, HLS playlists).
    pub(crate) files: Vec<PathBuf>,
    /// Stop after the batch that reaches N frames in all (for live sources).
    #[arg(long, value_name = "N")]
    pub(crate) frames: Option<u64>,
    /// Stop after S seconds (for live sources): the pull ends at once.
    #[arg(long, value_name = "S")]
    pub(crate) duration: Option<f64>,
    /// URLs: how long opening may take, in seconds.
    #[arg(long, value_name = "S", default_value_t = UrlOptions::DEFAULT_OPEN_TIMEOUT.as_secs_f64())]
    pub(crate) open_timeout: f64,
    /// URLs: how long one read may wait for data before the source counts as dropped, in seconds.
    #[arg(long, value_name = "S", default_value_t = UrlOptions::DEFAULT_READ_TIMEOUT.as_secs_f64())]
    pub(crate) read_timeout: f64,
    /// URLs: reopen attempts in a row after a drop (0: a drop fails the video), waiting 0.5 s, then twice as
    /// long each time up to 4 s.
    #[arg(long, value_name = "TRIES", default_value_t = Reconnect::DEFAULT_TRIES)]
    pub(crate) reconnect: u32,
    /// URLs: RTSP media over tcp or udp.
    #[arg(long, default_value_t = RtspTransport::default())]
    pub(crate) rtsp_transport: RtspTransport,
    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
    /// URLs: the live preset (slice threads, a small probe, full batches delivered at once).
    #[arg(long)]
    pub(crate) low_latency: bool,
    /// Frames per sequence.
    #[arg(short = 'L', long, default_value_t = 16)]
    pub(crate) sequence_length: usize,
    /// Sequences per batch.
    #[arg(short = 'B', long, default_value_t = 4)]
    pub(crate) batch_size: usize,
    /// What the last, incomplete sequence of a video becomes: partial (shorter) or pad (zero frames).
    #[arg(
        long,
        visible_alias = "last-sequence-policy",
        default_value_t = LastSequencePolicy::default()
    )]
    pub(crate) policy: LastSequencePolicy,
    /// Decoder threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub(crate) threads: usize,
    /// Batches decoded ahead of the consumer.
    #[arg(long, default_value_t = 1)]
    pub(crate) prefetch: usize,
    /// Batch across the sources (live cameras): each batch holds up to -B sequences of any of them, and goes
    /// out when full or --deadline after its oldest sequence was ready.
    #[arg(long, help_heading = "Cameras")]
    pub(crate) mux: bool,
    /// With --mux: the most a batch waits for more sequences, in milliseconds.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = framefeed::MuxConfig::DEFAULT_DEADLINE.as_micros() as f64 / 1000.0,
        help_heading = "Cameras"
    )]
    pub(crate) deadline: f64,
    /// With --mux: every_frame (nothing lost; backpressure reaches the sources) or latest_only (a slow
    /// consumer gets each camera's newest sequence; drops are counted per camera).
    #[arg(
        long,
        value_name = "POLICY",
        default_value_t = framefeed::MuxPolicy::default(),
        help_heading = "Cameras"
    )]
    pub(crate) mux_policy: framefeed::MuxPolicy,
    /// Print one JSON object per batch, then a summary object.
    #[arg(long)]
    pub(crate) json: bool,
    /// With --json: the MD5 of each real frame's RGB bytes.
    #[arg(long)]
    pub(crate) md5: bool,
    /// Write the bytes of every output tensor (each batch's buffer, padding included, in the chosen layout and
    /// type, f32 as native-endian bytes) to this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) raw_out: Option<PathBuf>,
    /// Crop every sequence to WIDTHxHEIGHT (one window per sequence), in the pixels of the resized frame.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub(crate) crop: Option<(u32, u32)>,
    /// Where the crop window sits: center, random (per sequence, seeded by --seed) or X,Y in [0,1].
    #[arg(long, value_name = "POS", default_value_t = CropPosition::default())]
    pub(crate) crop_pos: CropPosition,
    /// The seed of random crop positions.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Resize frames to WIDTHxHEIGHT before the crop.
    #[arg(long, value_name = "WxH", value_parser = parse_size, conflicts_with = "resize_shorter")]
    pub(crate) resize: Option<(u32, u32)>,
    /// Resize frames so that their shorter side is S pixels (aspect ratio kept) before the crop.
    #[arg(long, value_name = "S")]
    pub(crate) resize_shorter: Option<u32>,
    /// Output element type: uint8, uint16 (RGB48: sources of more than 8 bits as `ffmpeg -pix_fmt rgb48le`
    /// gives them, 8-bit ones widened exactly), float32 / float16 (0-255 floats) or float32_unit /
    /// float16_unit (0-1); the floats of sources of more than 8 bits come from their 16-bit levels. u8, u16,
    /// f32, f16, f32-unit and f16-unit are the same.
    #[arg(long, default_value_t = DType::default())]
    pub(crate) dtype: DType,
    /// HDR to SDR for PQ and HLG frames, fused into the conversion, as the ffmpeg chain
    /// `zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=OP,zscale=t=bt709:m=bt709:r=tv` does:
    /// hable, mobius, reinhard or clip, with the filter's options (`hable:peak=10:desat=0`, `mobius:param=0.5`).
    #[arg(long, value_name = "OP[:KEY=VALUE...]")]
    pub(crate) tonemap: Option<ToneMap>,
    /// Decode the audio too: each sequence carries the samples played while its frames are shown (with --json,
    /// its `audio`: shape, pts, duration, sample rate, and with --md5 the MD5 of its f32 samples).
    #[arg(long, help_heading = "Audio")]
    pub(crate) audio: bool,
    /// With --audio: samples a second (default: the stream's).
    #[arg(long, value_name = "HZ", requires = "audio", help_heading = "Audio")]
    pub(crate) audio_rate: Option<u32>,
    /// With --audio: channels (default: the stream's; 1 mixes down).
    #[arg(long, value_name = "N", requires = "audio", help_heading = "Audio")]
    pub(crate) audio_channels: Option<u32>,
    /// Per-channel normalization "M,M,M/S,S,S": (value - mean) / std, in the units of --dtype.
    #[arg(long, value_name = "MEAN/STD", value_parser = parse_normalize)]
    pub(crate) normalize: Option<([f32; 3], [f32; 3])>,
    /// Layout of each sequence: FHWC, FCHW or CFHW (any case).
    #[arg(long, default_value_t = Layout::default())]
    pub(crate) layout: Layout,
    /// Pack sequences of consecutive videos of the same frame shape into full batches (each sequence in the
    /// JSON then names its video).
    #[arg(long)]
    pub(crate) pack: bool,
    /// Put batch buffers of 8 MiB or more on the system's reserved huge pages (`sysctl vm.nr_hugepages=N`)
    /// while enough are free, ordinary memory otherwise: fewer page faults for big batches.
    #[arg(long)]
    pub(crate) huge_pages: bool,
    /// Give frames as coded, not turned by the video's display matrix (phone videos are shown upright by
    /// default, as `ffmpeg` shows them; the JSON lines name each sequence's turn as "orientation").
    #[arg(long)]
    pub(crate) no_autorotate: bool,
    /// Fail a video at its first damage (a packet the decoder rejects, a damaged frame, a hole, a file cut
    /// short), as `ffmpeg -xerror`. By default every picture that decodes is delivered, damaged frames and holes
    /// are reported in the JSON lines and counted in the summary, and the exit status is 0.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Where to decode: cpu, cuda (NVDEC on GPU 0; needs a build with `--features cuda`), cuda:N, or auto
    /// (CUDA when a usable GPU is present, else the CPU).
    #[arg(long, default_value_t = Device::default(), value_parser = parse_device)]
    pub(crate) device: Device,
    /// With a CUDA device, fail videos NVDEC cannot decode instead of decoding them on the CPU.
    #[arg(long)]
    pub(crate) no_cpu_fallback: bool,
    /// With a CUDA device, how NVDEC is driven: direct (framefeed's nvcuvid decoder, several pictures in
    /// flight; H.264, HEVC, VP8, VP9, AV1) or hwaccel (libavcodec's, one picture at a time).
    #[arg(long, default_value_t = framefeed::NvdecDriver::default())]
    pub(crate) nvdec: framefeed::NvdecDriver,
    /// The most memory one batch may take, in bytes or with a K, M, G or T suffix (powers of 1024): a video
    /// whose batches would be larger fails with a message naming the numbers, and settings that can never fit
    /// are refused. Default 4G.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub(crate) max_batch_bytes: Option<u64>,
    /// Sampling: frames between consecutive frames of a sequence (DALI's stride; default 1).
    #[arg(long, value_name = "N", help_heading = "Sampling")]
    pub(crate) stride: Option<usize>,
    /// Sampling: frames between the first frames of consecutive sequences (DALI's step; default: the
    /// sequence length).
    #[arg(long, value_name = "N", help_heading = "Sampling")]
    pub(crate) step: Option<usize>,
    /// Sampling: N clips per video, each one sequence (with the stride), their starts chosen by
    /// --clip-sampler (random ones seeded by --seed). Files, and URLs of files served with range requests:
    /// only the GOPs the clips need are decoded.
    #[arg(long, value_name = "N", help_heading = "Sampling")]
    pub(crate) clips: Option<usize>,
    /// Sampling: how clips start: random (uniform, seeded) or regular (evenly spaced).
    #[arg(long, default_value_t = framefeed::ClipSampler::default(), help_heading = "Sampling")]
    pub(crate) clip_sampler: framefeed::ClipSampler,
    /// Sampling: what a clip holds when the video is shorter than its span (every video still gives --clips
    /// clips, starting at its first frame): cut (the frames it has, then --policy), repeat_last (its last
    /// frame repeated), wrap (its frames again from its first) or error (the video fails).
    #[arg(long, default_value_t = framefeed::ClipPolicy::default(), help_heading = "Sampling")]
    pub(crate) clip_policy: framefeed::ClipPolicy,
    /// Sampling: resample to F frames per second (for each tick k/F from the first frame, the frame shown
    /// then).
    #[arg(long, value_name = "F", help_heading = "Sampling")]
    pub(crate) fps: Option<f64>,
    /// Sampling: only frames shown from S seconds (from the first frame) on.
    #[arg(long, value_name = "S", help_heading = "Sampling")]
    pub(crate) start: Option<f64>,
    /// Sampling: only frames shown before S seconds (from the first frame).
    #[arg(long, value_name = "S", help_heading = "Sampling")]
    pub(crate) end: Option<f64>,
    /// Sampling: exactly these display indices (0-based, non-decreasing), the sequence length at a time.
    #[arg(
        long,
        value_name = "I,J,K",
        value_delimiter = ',',
        help_heading = "Sampling"
    )]
    pub(crate) indices: Option<Vec<u64>>,
    /// Sampling: only the sequences whose first frame's display index is in FIRST..END (END excluded): one
    /// segment of a long video, as `framefeed info --segments N` lists them, decoded from the keyframe it needs
    /// (a sequence straddling END is finished past it). Each segment of a video, run apart with the same
    /// other flags, gives its share of the whole video's sequences, each once. Files only.
    #[arg(long, value_name = "FIRST:END", value_parser = parse_segment, help_heading = "Sampling")]
    pub(crate) segment: Option<(u64, u64)>,
    /// The most samples (frames and audio packets) an MP4/MOV file's index may claim: the demuxer builds an
    /// entry for each before reading any, so a file claiming more fails first. Default 4194304 (2^22); a whole
    /// file may also claim at most one per byte.
    #[arg(long, value_name = "N")]
    pub(crate) max_container_samples: Option<u64>,
}

fn parse_device(s: &str) -> Result<Device, String> {
    s.parse()
}

fn parse_segment(s: &str) -> Result<(u64, u64), String> {
    let (first, end) = s
        .split_once(':')
        .ok_or_else(|| format!("expected FIRST:END frame indices, got '{s}'"))?;
    let index = |v: &str| {
        v.trim()
            .parse::<u64>()
            .map_err(|_| format!("expected FIRST:END with frame indices (0 or more), got '{s}'"))
    };
    Ok((index(first)?, index(end)?))
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT, got '{s}'"))?;
    let side = |v: &str| {
        v.parse::<u32>()
            .map_err(|_| format!("expected WIDTHxHEIGHT with positive integers, got '{s}'"))
    };
    Ok((side(w)?, side(h)?))
}

fn parse_normalize(s: &str) -> Result<([f32; 3], [f32; 3]), String> {
    let three = |part: &str| -> Result<[f32; 3], String> {
        let v: Vec<f32> = part
            .split(',')
            .map(|x| x.trim().parse::<f32>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("expected M,M,M/S,S,S numbers, got '{s}'"))?;
        v.try_into()
            .map_err(|_| format!("expected three means and three stds, got '{s}'"))
    };
    let (mean, std) = s
        .split_once('/')
        .ok_or_else(|| format!("expected M,M,M/S,S,S, got '{s}'"))?;
    Ok((three(mean)?, three(std)?))
}

impl RunArgs {
    fn sampling(&self) -> Sampling {
        let sampling = Sampling::from(SamplingOptions {
            stride: self.stride,
            step: self.step,
            clips: self.clips,
            clip_sampler: Some(self.clip_sampler),
            clip_policy: Some(self.clip_policy),
            seed: Some(self.seed),
            fps: self.fps,
            start: self.start,
            end: self.end,
            indices: self.indices.clone(),
        });
        match self.segment {
            Some((first, end)) => sampling.segment(first, end),
            None => sampling,
        }
    }

    fn transforms(&self) -> Result<Transforms, String> {
        Transforms::try_from(TransformOptions {
            resize: self.resize,
            resize_shorter: self.resize_shorter,
            crop: self.crop,
            crop_pos: Some(self.crop_pos),
            dtype: Some(self.dtype),
            normalize: self.normalize,
            layout: Some(self.layout),
            seed: Some(self.seed),
            tonemap: self.tonemap,
            ..Default::default()
        })
        .map_err(|e| e.to_string())
    }
}

/// One input: a file, a URL or the built-in sample.
pub(crate) enum Source {
    File(PathBuf),
    Url(String),
    Sample,
}

impl Source {
    pub(crate) fn new(path: &std::path::Path) -> Self {
        match path.to_str() {
            Some(s) if s.contains("://") => Source::Url(s.to_owned()),
            _ => Source::File(path.to_owned()),
        }
    }

    pub(crate) fn label(&self) -> Option<String> {
        match self {
            Source::File(p) => Some(p.display().to_string()),
            // The operator labels it with the URL without its credentials.
            Source::Url(_) => None,
            Source::Sample => Some("sample.mp4 (built-in)".to_owned()),
        }
    }
}

/// What the arguments ask for beyond the operator's config, checked: the URL options, how long to run, and
/// the mux's deadline.
pub(crate) struct Prepared {
    pub(crate) url_options: UrlOptions,
    pub(crate) stop_after: Option<Duration>,
    pub(crate) deadline: Duration,
}

impl RunArgs {
    /// The URL options, the duration and the mux's deadline, checked, or a message naming the flag.
    pub(crate) fn prepare(&self) -> Result<Prepared, String> {
        let seconds_arg = |name: &str, s: f64| framefeed::seconds_setting(&format!("--{name}"), s);
        let url_options = UrlOptions::new()
            .open_timeout(seconds_arg("open-timeout", self.open_timeout)?)
            .read_timeout(seconds_arg("read-timeout", self.read_timeout)?)
            .reconnect(Reconnect::tries(self.reconnect))
            .rtsp_transport(self.rtsp_transport)
            .remote(self.remote.options()?);
        url_options.validate().map_err(|e| e.to_string())?;
        let stop_after = self
            .duration
            .map(|s| seconds_arg("duration", s))
            .transpose()?;
        let deadline = seconds_arg("deadline", self.deadline / 1000.0)?;
        Ok(Prepared {
            url_options,
            stop_after,
            deadline,
        })
    }
}

/// The operator configuration the arguments ask for, with batches of `batch_size` sequences.
pub(crate) fn operator_config(args: &RunArgs, batch_size: usize) -> Result<Config, String> {
    let config = Config::new(args.sequence_length, batch_size)
        .last_sequence_policy(args.policy)
        .decoder_threads(args.threads)
        .prefetch_batches(args.prefetch)
        .max_queued(1, usize::MAX)
        .pack_batches(args.pack)
        .huge_pages(args.huge_pages)
        .autorotate(!args.no_autorotate)
        .strict(args.strict)
        .device(args.device)
        .cpu_fallback(!args.no_cpu_fallback)
        .nvdec_driver(args.nvdec)
        .max_batch_bytes(
            args.max_batch_bytes
                .unwrap_or(framefeed::limits::DEFAULT_MAX_BATCH_BYTES),
        )
        .max_container_samples(
            args.max_container_samples
                .unwrap_or(framefeed::limits::DEFAULT_MAX_CONTAINER_SAMPLES),
        )
        .transforms(args.transforms()?)
        .sampling(args.sampling());
    let config = if args.audio {
        let mut audio = framefeed::Audio::new();
        if let Some(rate) = args.audio_rate {
            audio = audio.sample_rate(rate);
        }
        if let Some(channels) = args.audio_channels {
            audio = audio.channels(channels);
        }
        config.audio(audio)
    } else {
        config
    };
    Ok(if args.low_latency {
        config.low_latency()
    } else {
        config
    })
}
