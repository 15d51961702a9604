//! `framefeed`: decode videos into batches of frame sequences from the command line.
//!
//! `framefeed run [FILES]...` feeds the files (or, with none, the built-in sample video) to one operator and
//! reports every batch; `framefeed info FILE` describes a container as JSON; `framefeed serve` runs the HTTP
//! ingest service (`framefeed::server`).

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use md5::{Digest, Md5};
use serde_json::{json, Value};

use framefeed::{
    Batch, Config, Crop, CropPosition, DType, Device, Error, LastSequencePolicy, Layout, Reconnect,
    Resize, RtspTransport, Transforms, UrlOptions, VideoInput,
};

#[derive(Parser)]
#[command(
    name = "framefeed",
    version,
    about = "Decode videos into batches of RGB frame sequences"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode videos into batches; with no FILES, the built-in sample video (320x240, 60 frames).
    Run(RunArgs),
    /// Describe a container and its streams as JSON.
    Info {
        /// The video file.
        file: PathBuf,
    },
    /// Serve the HTTP ingest service: POST /videos streams one JSON line per batch; GET /health, /metrics.
    Serve(ServeArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum MoovArg {
    /// Buffer it within the upload's memory budget (up to a quarter of it) and decode it when the upload ends.
    Buffer,
    /// Fail it at once (strictly live).
    Fail,
}

/// `framefeed serve`'s options; each default protects what its help says.
#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on. A non-loopback address needs --auth-tokens (or --insecure-no-auth).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: std::net::SocketAddr,
    /// Bearer tokens, one `name:token` a line (tokens of 16+ characters); every route but /health then needs
    /// `Authorization: Bearer <token>`, and the per-client limit counts by token name.
    #[arg(long, value_name = "FILE")]
    auth_tokens: Option<PathBuf>,
    /// Serve a non-loopback address without tokens (behind an authenticating proxy, say).
    #[arg(long)]
    insecure_no_auth: bool,
    /// TLS certificate chain (PEM); with --tls-key, serves HTTPS.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// A reverse proxy whose X-Forwarded-For names the client (repeatable).
    #[arg(long, value_name = "ADDR")]
    trusted_proxy: Vec<std::net::IpAddr>,
    /// Uploads decoded at once (more get 503).
    #[arg(long, default_value_t = 32)]
    max_streams: usize,
    /// Uploads at once per client: token name, or address (more get 429).
    #[arg(long, default_value_t = 8)]
    max_streams_per_client: usize,
    /// Largest request body (larger gets 413, or is cut with an error line). K/M/G/T suffixes.
    #[arg(long, value_name = "BYTES", default_value = "2G", value_parser = parse_bytes)]
    max_body_bytes: u64,
    /// Memory one upload may take: batches, decoder frames, buffered body, moov-at-end buffer. K/M/G/T.
    #[arg(long, value_name = "BYTES", default_value = "512M", value_parser = parse_bytes)]
    max_upload_memory: u64,
    /// Memory all uploads may take together (default: half of the machine's memory). K/M/G/T.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    max_memory: Option<u64>,
    /// What an MP4 upload with its index at the end does.
    #[arg(long, value_enum, default_value = "buffer")]
    moov_at_end: MoovArg,
    /// Seconds a connection has to send its request headers (and to finish a TLS handshake); also how long
    /// a keep-alive connection may sit idle.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    header_timeout: f64,
    /// Open connections at most; beyond it new connections are closed at once.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Slowest upload accepted, bytes/s averaged over --upload-rate-window (0: no rule). K/M/G suffixes.
    #[arg(long, value_name = "BYTES", default_value = "16K", value_parser = parse_bytes)]
    min_upload_rate: u64,
    /// Seconds over which the upload rate is averaged (and before which it is not checked).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    upload_rate_window: f64,
    /// Seconds without data after which an upload fails.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    stall_timeout: f64,
    /// Decoder threads per upload.
    #[arg(long, default_value_t = 1)]
    decoder_threads_per_stream: usize,
    /// Seconds uploads in progress get to finish after Ctrl-C or SIGTERM.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    shutdown_grace: f64,
    /// Hosts POST /streams may pull from, comma-separated: `public` (any public address), addresses
    /// (127.0.0.1), networks (10.0.0.0/8) and host names. Private, loopback and link-local addresses are
    /// refused unless listed.
    #[arg(long, value_name = "HOSTS", default_value = "public")]
    allow_hosts: framefeed::server::AllowHosts,
}

#[derive(Clone, Copy, ValueEnum)]
enum Policy {
    /// The last sequence of a video is shorter.
    Partial,
    /// The last sequence of a video is padded with zero frames.
    Pad,
}

#[derive(clap::Args)]
struct RunArgs {
    /// Video files, decoded in order, or URLs pulled through FFmpeg's protocols: rtsp://, srt://, rtmp://,
    /// http(s):// (progressive media or HLS).
    files: Vec<PathBuf>,
    /// Stop after the batch that reaches N frames in all (for live sources).
    #[arg(long, value_name = "N")]
    frames: Option<u64>,
    /// Stop after S seconds (for live sources): the pull ends at once.
    #[arg(long, value_name = "S")]
    duration: Option<f64>,
    /// URLs: how long opening may take, in seconds.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    open_timeout: f64,
    /// URLs: how long one read may wait for data before the source counts as dropped, in seconds.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    read_timeout: f64,
    /// URLs: reopen attempts in a row after a drop (0: a drop fails the video), waiting 0.5 s, then twice as
    /// long each time up to 4 s.
    #[arg(long, value_name = "TRIES", default_value_t = 5)]
    reconnect: u32,
    /// URLs: RTSP media over tcp or udp.
    #[arg(long, value_enum, default_value_t = RtspArg::Tcp)]
    rtsp_transport: RtspArg,
    /// URLs: the live preset (slice threads, a small probe, full batches delivered at once).
    #[arg(long)]
    low_latency: bool,
    /// Frames per sequence.
    #[arg(short = 'L', long, default_value_t = 16)]
    sequence_length: usize,
    /// Sequences per batch.
    #[arg(short = 'B', long, default_value_t = 4)]
    batch_size: usize,
    /// What the last, incomplete sequence of a video becomes.
    #[arg(long, value_enum, default_value_t = Policy::Partial)]
    policy: Policy,
    /// Decoder threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Batches decoded ahead of the consumer.
    #[arg(long, default_value_t = 1)]
    prefetch: usize,
    /// Print one JSON object per batch, then a summary object.
    #[arg(long)]
    json: bool,
    /// With --json: the MD5 of each real frame's RGB bytes.
    #[arg(long)]
    md5: bool,
    /// Write the bytes of every output tensor (each batch's buffer, padding included, in the chosen layout and
    /// type, f32 as native-endian bytes) to this file.
    #[arg(long, value_name = "FILE")]
    raw_out: Option<PathBuf>,
    /// Crop every sequence to WIDTHxHEIGHT (one window per sequence), in the pixels of the resized frame.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    crop: Option<(u32, u32)>,
    /// Where the crop window sits: center, random (per sequence, seeded by --seed) or X,Y in [0,1].
    #[arg(long, value_name = "POS", default_value = "center", value_parser = parse_crop_pos)]
    crop_pos: CropPosition,
    /// The seed of random crop positions.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Resize frames to WIDTHxHEIGHT before the crop.
    #[arg(long, value_name = "WxH", value_parser = parse_size, conflicts_with = "resize_shorter")]
    resize: Option<(u32, u32)>,
    /// Resize frames so that their shorter side is S pixels (aspect ratio kept) before the crop.
    #[arg(long, value_name = "S")]
    resize_shorter: Option<u32>,
    /// Output element type: u8, f32 / f16 (levels cast to 0-255 floats) or f32-unit / f16-unit (levels / 255).
    #[arg(long, value_enum, default_value_t = DTypeArg::U8)]
    dtype: DTypeArg,
    /// Per-channel normalization "M,M,M/S,S,S": (value - mean) / std, in the units of --dtype.
    #[arg(long, value_name = "MEAN/STD", value_parser = parse_normalize)]
    normalize: Option<([f32; 3], [f32; 3])>,
    /// Layout of each sequence.
    #[arg(long, value_enum, default_value_t = LayoutArg::Fhwc)]
    layout: LayoutArg,
    /// Pack sequences of consecutive videos of the same frame shape into full batches (each sequence in the
    /// JSON then names its video).
    #[arg(long)]
    pack: bool,
    /// Put batch buffers of 8 MiB or more on the system's reserved huge pages (`sysctl vm.nr_hugepages=N`)
    /// while enough are free, ordinary memory otherwise: fewer page faults for big batches.
    #[arg(long)]
    huge_pages: bool,
    /// Where to decode: cpu, cuda (NVDEC on GPU 0; needs a build with `--features cuda`), cuda:N, or auto
    /// (CUDA when a usable GPU is present, else the CPU).
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: Device,
    /// With a CUDA device, fail videos NVDEC cannot decode instead of decoding them on the CPU.
    #[arg(long)]
    no_cpu_fallback: bool,
    /// With a CUDA device, how NVDEC is driven: direct (framefeed's nvcuvid decoder, several pictures in
    /// flight; H.264, HEVC, VP8, VP9, AV1) or hwaccel (libavcodec's, one picture at a time).
    #[arg(long, default_value = "direct")]
    nvdec: framefeed::NvdecDriver,
    /// The most memory one batch may take, in bytes or with a K, M, G or T suffix (powers of 1024): a video
    /// whose batches would be larger fails with a message naming the numbers, and settings that can never fit
    /// are refused. Default 4G.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    max_batch_bytes: Option<u64>,
    /// The most samples (frames and audio packets) an MP4/MOV file's index may claim: the demuxer builds an
    /// entry for each before reading any, so a file claiming more fails first. Default 4194304 (2^22); a whole
    /// file may also claim at most one per byte.
    #[arg(long, value_name = "N")]
    max_container_samples: Option<u64>,
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let (digits, shift) = match s
        .trim()
        .to_ascii_uppercase()
        .strip_suffix(['K', 'M', 'G', 'T'])
    {
        Some(d) => {
            let unit = s.trim().chars().last().unwrap_or('B').to_ascii_uppercase();
            (
                d.to_owned(),
                10 * (1 + "KMGT".find(unit).unwrap_or(0) as u32),
            )
        }
        None => (s.trim().to_owned(), 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .ok_or_else(|| format!("{s:?} is not a byte count (e.g. 1073741824, 512M, 4G)"))
}

fn parse_device(s: &str) -> Result<Device, String> {
    s.parse()
}

#[derive(Clone, Copy, ValueEnum)]
enum DTypeArg {
    /// 8-bit levels.
    U8,
    /// 32-bit floats, 0.0-255.0.
    F32,
    /// 32-bit floats, 0.0-1.0.
    F32Unit,
    /// 16-bit floats, 0.0-255.0.
    F16,
    /// 16-bit floats, 0.0-1.0.
    F16Unit,
}

#[derive(Clone, Copy, ValueEnum)]
enum LayoutArg {
    /// Frames, rows, columns, channels.
    Fhwc,
    /// Frames, channels, rows, columns.
    Fchw,
    /// Channels, frames, rows, columns.
    Cfhw,
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

fn parse_crop_pos(s: &str) -> Result<CropPosition, String> {
    match s {
        "center" | "centre" => Ok(CropPosition::Center),
        "random" => Ok(CropPosition::Random),
        xy => {
            let (x, y) = xy
                .split_once(',')
                .ok_or_else(|| format!("expected center, random or X,Y, got '{xy}'"))?;
            let unit = |v: &str| {
                v.trim()
                    .parse::<f32>()
                    .map_err(|_| format!("expected X,Y numbers in [0,1], got '{xy}'"))
            };
            Ok(CropPosition::Fixed {
                x: unit(x)?,
                y: unit(y)?,
            })
        }
    }
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
    fn transforms(&self) -> Transforms {
        let mut t = Transforms::new().seed(self.seed);
        if let Some((width, height)) = self.resize {
            t = t.resize(Resize::Exact { width, height });
        }
        if let Some(s) = self.resize_shorter {
            t = t.resize(Resize::Shorter(s));
        }
        if let Some((w, h)) = self.crop {
            t = t.crop(Crop::new(w, h).position(self.crop_pos));
        }
        t = t.dtype(match self.dtype {
            DTypeArg::U8 => DType::U8,
            DTypeArg::F32 => DType::F32,
            DTypeArg::F32Unit => DType::F32Unit,
            DTypeArg::F16 => DType::F16,
            DTypeArg::F16Unit => DType::F16Unit,
        });
        if let Some((mean, std)) = self.normalize {
            t = t.normalize(mean, std);
        }
        t.layout(match self.layout {
            LayoutArg::Fhwc => Layout::Fhwc,
            LayoutArg::Fchw => Layout::Fchw,
            LayoutArg::Cfhw => Layout::Cfhw,
        })
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The service logs what it does (requests refused, uploads done) by default; the other commands only
    // warnings.
    let default_filter = match cli.command {
        Command::Serve(_) => "info,ffmpeg=off",
        _ => "warn,ffmpeg=off",
    };
    tracing_subscriber::fmt()
        .with_writer(io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter)),
        )
        .init();
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Info { file } => info(&file),
        Command::Serve(args) => serve(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("framefeed: {e}");
            ExitCode::from(2)
        }
    }
}

fn seconds(name: &str, secs: f64) -> Result<std::time::Duration, String> {
    std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("--{name} must be a positive number of seconds, got {secs}"))
}

fn serve(args: ServeArgs) -> Result<ExitCode, String> {
    let mut config = framefeed::server::ServeConfig::default();
    config.addr = args.addr;
    config.auth_tokens = match &args.auth_tokens {
        Some(path) => Some(framefeed::server::Tokens::from_file(path).map_err(|e| e.to_string())?),
        None => None,
    };
    config.insecure_no_auth = args.insecure_no_auth;
    config.tls = args.tls_cert.zip(args.tls_key);
    config.trusted_proxies = args.trusted_proxy;
    config.max_streams = args.max_streams;
    config.max_streams_per_client = args.max_streams_per_client;
    config.max_body_bytes = args.max_body_bytes;
    config.max_upload_memory = args.max_upload_memory;
    config.max_memory = args.max_memory;
    config.moov_at_end = match args.moov_at_end {
        MoovArg::Buffer => framefeed::server::MoovAtEndUploads::Buffer,
        MoovArg::Fail => framefeed::server::MoovAtEndUploads::Fail,
    };
    config.header_timeout = seconds("header-timeout", args.header_timeout)?;
    config.max_connections = args.max_connections;
    config.min_upload_rate = args.min_upload_rate;
    config.upload_rate_window = seconds("upload-rate-window", args.upload_rate_window)?;
    config.stall_timeout = seconds("stall-timeout", args.stall_timeout)?;
    config.decoder_threads_per_stream = args.decoder_threads_per_stream;
    config.shutdown_grace = seconds("shutdown-grace", args.shutdown_grace)?;
    config.allow_hosts = args.allow_hosts;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start: {e}"))?;
    runtime.block_on(async move {
        let server = framefeed::server::Server::bind(config)
            .await
            .map_err(|e| e.to_string())?;
        // The address goes to stdout (with the port the system chose for :0), for scripts and tests.
        println!("listening on {}", server.local_addr());
        let _ = io::stdout().flush();
        server
            .run(async {
                let mut term =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
                }
            })
            .await
            .map_err(|e| e.to_string())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn info(file: &PathBuf) -> Result<ExitCode, String> {
    let data = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let info = match framefeed::probe(data) {
        Ok(info) => info,
        Err(e) => {
            eprintln!("framefeed: {}: {e}", file.display());
            return Ok(ExitCode::from(1));
        }
    };
    let streams: Vec<Value> = info
        .streams
        .iter()
        .map(|s| {
            json!({
                "index": s.index,
                "type": s.kind.as_str(),
                "codec": s.codec,
                "profile": s.profile,
                "width": s.width,
                "height": s.height,
                "pix_fmt": s.pixel_format,
                "color_space": s.color_space,
                "color_range": s.color_range,
                "color_primaries": s.color_primaries,
                "color_transfer": s.color_transfer,
                "frame_rate": s.frame_rate.map(|(n, d)| format!("{n}/{d}")),
                "fps": s.fps(),
                "time_base": format!("{}/{}", s.time_base.0, s.time_base.1),
                "duration": s.duration,
                "frames": s.frames,
                "bit_rate": s.bit_rate,
                "default": s.default,
            })
        })
        .collect();
    let out = json!({
        "file": file.display().to_string(),
        "container": info.format,
        "container_long": info.format_long,
        "duration": info.duration,
        "bit_rate": info.bit_rate,
        "streams": streams,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&out).expect("JSON of plain values")
    );
    Ok(ExitCode::SUCCESS)
}

/// One input: a file, or the built-in sample.
#[derive(Clone, Copy, ValueEnum)]
enum RtspArg {
    /// Interleaved in the RTSP connection.
    Tcp,
    /// RTP over UDP.
    Udp,
}

enum Source {
    File(PathBuf),
    Url(String),
    Sample,
}

impl Source {
    fn new(path: &std::path::Path) -> Self {
        match path.to_str() {
            Some(s) if s.contains("://") => Source::Url(s.to_owned()),
            _ => Source::File(path.to_owned()),
        }
    }

    fn label(&self) -> Option<String> {
        match self {
            Source::File(p) => Some(p.display().to_string()),
            // The operator labels it with the URL without its credentials.
            Source::Url(_) => None,
            Source::Sample => Some("sample.mp4 (built-in)".to_owned()),
        }
    }
}

#[derive(Default)]
struct Totals {
    batches: u64,
    frames: u64,
    errors: Vec<Value>,
}

fn run(args: RunArgs) -> Result<ExitCode, String> {
    let policy = match args.policy {
        Policy::Partial => LastSequencePolicy::Partial,
        Policy::Pad => LastSequencePolicy::Pad,
    };
    let config = Config::new(args.sequence_length, args.batch_size)
        .last_sequence_policy(policy)
        .decoder_threads(args.threads)
        .prefetch_batches(args.prefetch)
        .max_queued(1, usize::MAX)
        .pack_batches(args.pack)
        .huge_pages(args.huge_pages)
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
        .transforms(args.transforms());
    let config = if args.low_latency {
        config.low_latency()
    } else {
        config
    };
    let input = Arc::new(VideoInput::new(config).map_err(|e| e.to_string())?);
    let mut raw_out = match &args.raw_out {
        Some(path) => {
            Some(BufWriter::new(File::create(path).map_err(|e| {
                format!("cannot create {}: {e}", path.display())
            })?))
        }
        None => None,
    };
    let sources: Vec<Source> = if args.files.is_empty() {
        vec![Source::Sample]
    } else {
        args.files.iter().map(|p| Source::new(p)).collect()
    };
    let video_count = sources.len() as u64;
    let pulled = sources.iter().any(|s| matches!(s, Source::Url(_)));

    let seconds_arg = |name: &str, s: f64| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| format!("--{name} {s} is not a number of seconds"))
    };
    let url_options = UrlOptions::new()
        .open_timeout(seconds_arg("open-timeout", args.open_timeout)?)
        .read_timeout(seconds_arg("read-timeout", args.read_timeout)?)
        .reconnect(Reconnect::tries(args.reconnect))
        .rtsp_transport(match args.rtsp_transport {
            RtspArg::Tcp => RtspTransport::Tcp,
            RtspArg::Udp => RtspTransport::Udp,
        });
    url_options.validate().map_err(|e| e.to_string())?;
    let stop_after = args
        .duration
        .map(|s| seconds_arg("duration", s))
        .transpose()?;
    // Files are read one at a time, at most two ahead of decoding (one decoding, one in the feed queue, whose
    // limit makes `feed` wait), so memory holds few encoded videos.
    let feeder = {
        let input = input.clone();
        let url_options = url_options.clone();
        std::thread::spawn(move || {
            let mut unreadable = Vec::new();
            for source in sources {
                let label = source.label().unwrap_or_default();
                let fed = match &source {
                    Source::Sample => input.feed_with_label(framefeed::SAMPLE_MP4, label.clone()),
                    Source::Url(url) => match input.feed_url(url, url_options.clone()) {
                        Err(Error::Config(e)) => {
                            unreadable.push(json!({"video": null, "label": framefeed::redact_url(url), "error": e}));
                            continue;
                        }
                        other => other,
                    },
                    Source::File(path) => match std::fs::read(path) {
                        Ok(data) => input.feed_with_label(data, label.clone()),
                        Err(e) => {
                            unreadable.push(json!({"video": null, "label": label, "error": format!("cannot read: {e}")}));
                            continue;
                        }
                    },
                };
                if fed.is_err() {
                    break;
                }
            }
            input.close();
            unreadable
        })
    };

    let progress = if args.json || !io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::with_draw_target(Some(video_count), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} videos {pos}/{len} [{bar:30}] {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let start = Instant::now();
    let mut totals = Totals::default();
    loop {
        if totals.frames >= args.frames.unwrap_or(u64::MAX) {
            break;
        }
        let polled = match stop_after {
            Some(limit) => match input.next_batch_timeout(limit.saturating_sub(start.elapsed())) {
                Err(Error::Timeout(_)) => break,
                other => other,
            },
            None => input.next_batch(),
        };
        match polled {
            Ok(Some(batch)) => {
                // GPU batches are copied to the host only where their bytes are printed or written.
                let batch = if batch.is_on_gpu() && (args.md5 || raw_out.is_some()) {
                    batch.to_host().map_err(|e| e.to_string())?
                } else {
                    batch
                };
                totals.batches += 1;
                totals.frames += batch.valid_frames() as u64;
                if input.is_depleted() {
                    progress.inc(1);
                }
                if args.json {
                    writeln!(out, "{}", batch_json(&batch, args.md5, pulled))
                        .map_err(|e| e.to_string())?;
                    // Each line leaves as its batch does (a reader of a live source sees it at once).
                    out.flush().map_err(|e| e.to_string())?;
                }
                if let Some(raw) = raw_out.as_mut() {
                    raw.write_all(batch.data())
                        .map_err(|e| format!("cannot write raw output: {e}"))?;
                }
                let secs = start.elapsed().as_secs_f64();
                progress.set_message(format!(
                    "{} frames, {:.0} frames/s",
                    totals.frames,
                    totals.frames as f64 / secs
                ));
            }
            Ok(None) => break,
            Err(Error::Video { video, error }) => {
                progress.inc(1);
                if !progress.is_hidden() {
                    progress.println(format!("error: {video}: {error}"));
                }
                totals
                    .errors
                    .push(framefeed::report::video_error_json(&video, &error));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    // Stopped early (--frames, --duration): a feeder waiting for room ends; the pull ends when the operator is
    // dropped, below.
    input.close();
    progress.finish_and_clear();
    totals.errors.extend(
        feeder
            .join()
            .map_err(|_| "the feeding thread panicked".to_owned())?,
    );
    if let Some(mut raw) = raw_out {
        raw.flush()
            .map_err(|e| format!("cannot write raw output: {e}"))?;
    }
    let fps = if seconds > 0.0 {
        totals.frames as f64 / seconds
    } else {
        0.0
    };
    if args.json {
        let summary = json!({"summary": {
            "videos": video_count,
            "failed_videos": totals.errors.len(),
            "batches": totals.batches,
            "frames": totals.frames,
            "seconds": seconds,
            "frames_per_second": fps,
            "peak_rss_mib": peak_rss_mib(),
            "errors": totals.errors,
        }});
        writeln!(out, "{summary}").map_err(|e| e.to_string())?;
    } else {
        writeln!(
            out,
            "videos: {video_count} ({} failed)\nbatches: {}\nframes: {}\nseconds: {seconds:.3}\nframes/s: {fps:.1}\npeak RSS: {}",
            totals.errors.len(),
            totals.batches,
            totals.frames,
            peak_rss_mib().map_or("unknown".to_owned(), |m| format!("{m:.1} MiB")),
        )
        .map_err(|e| e.to_string())?;
        for e in &totals.errors {
            writeln!(
                out,
                "error: {} ({}): {}",
                e["label"].as_str().unwrap_or("?"),
                e["video"],
                e["error"].as_str().unwrap_or("?")
            )
            .map_err(|e| e.to_string())?;
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    Ok(if totals.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The process's peak resident memory in MiB (Linux's VmHWM), when the system tells.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn batch_json(batch: &Batch, md5: bool, pulled: bool) -> Value {
    let mut line = framefeed::report::batch_json(batch);
    if pulled {
        // Sources pulled by URL: how far behind the source this batch was handed over.
        line["latency_ms"] = json!(batch.latency().map(|d| d.as_secs_f64() * 1000.0));
    }
    if md5 {
        for (seq, value) in batch.sequences().iter().zip(
            line["sequences"]
                .as_array_mut()
                .expect("sequences array")
                .iter_mut(),
        ) {
            let sums: Vec<String> = seq
                .frames()
                .map(|f| {
                    let mut md5 = Md5::new();
                    if batch.layout() == Layout::Cfhw {
                        (0..3).for_each(|c| md5.update(f.plane(c)));
                    } else {
                        md5.update(f.data());
                    }
                    format!("{:x}", md5.finalize())
                })
                .collect();
            value["md5"] = json!(sums);
        }
    }
    line
}
