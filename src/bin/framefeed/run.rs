//! `framefeed run`: videos, URLs or the built-in sample fed to one operator, every batch reported.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};

use framefeed::{
    Config, Crop, CropPosition, DType, Device, Encoded, Error, LastSequencePolicy, Layout,
    Reconnect, Resize, RtspTransport, Sampling, SamplingOptions, Transforms, UrlOptions,
    VideoInput,
};

use super::output::{batch_json, peak_rss_mib};
use super::parse_bytes;
use super::{written, Failure};

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Video files, decoded in order, or URLs pulled through FFmpeg's protocols: rtsp://, srt://, rtmp://,
    /// http(s):// (progressive media or HLS).
    pub(crate) files: Vec<PathBuf>,
    /// Stop after the batch that reaches N frames in all (for live sources).
    #[arg(long, value_name = "N")]
    pub(crate) frames: Option<u64>,
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
    #[arg(long, default_value = "tcp")]
    rtsp_transport: RtspTransport,
    /// URLs: the live preset (slice threads, a small probe, full batches delivered at once).
    #[arg(long)]
    low_latency: bool,
    /// Frames per sequence.
    #[arg(short = 'L', long, default_value_t = 16)]
    sequence_length: usize,
    /// Sequences per batch.
    #[arg(short = 'B', long, default_value_t = 4)]
    pub(crate) batch_size: usize,
    /// What the last, incomplete sequence of a video becomes: partial (shorter) or pad (zero frames).
    #[arg(
        long,
        visible_alias = "last-sequence-policy",
        default_value = "partial"
    )]
    policy: LastSequencePolicy,
    /// Decoder threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Batches decoded ahead of the consumer.
    #[arg(long, default_value_t = 1)]
    prefetch: usize,
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
    raw_out: Option<PathBuf>,
    /// Crop every sequence to WIDTHxHEIGHT (one window per sequence), in the pixels of the resized frame.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    crop: Option<(u32, u32)>,
    /// Where the crop window sits: center, random (per sequence, seeded by --seed) or X,Y in [0,1].
    #[arg(long, value_name = "POS", default_value = "center")]
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
    /// Output element type: uint8, float32 / float16 (levels cast to 0-255 floats) or float32_unit /
    /// float16_unit (levels / 255); u8, f32, f16, f32-unit and f16-unit are the same.
    #[arg(long, default_value = "uint8")]
    dtype: DType,
    /// Per-channel normalization "M,M,M/S,S,S": (value - mean) / std, in the units of --dtype.
    #[arg(long, value_name = "MEAN/STD", value_parser = parse_normalize)]
    normalize: Option<([f32; 3], [f32; 3])>,
    /// Layout of each sequence: FHWC, FCHW or CFHW (any case).
    #[arg(long, default_value = "FHWC")]
    layout: Layout,
    /// Pack sequences of consecutive videos of the same frame shape into full batches (each sequence in the
    /// JSON then names its video).
    #[arg(long)]
    pack: bool,
    /// Put batch buffers of 8 MiB or more on the system's reserved huge pages (`sysctl vm.nr_hugepages=N`)
    /// while enough are free, ordinary memory otherwise: fewer page faults for big batches.
    #[arg(long)]
    huge_pages: bool,
    /// Give frames as coded, not turned by the video's display matrix (phone videos are shown upright by
    /// default, as `ffmpeg` shows them; the JSON lines name each sequence's turn as "orientation").
    #[arg(long)]
    no_autorotate: bool,
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
    /// Sampling: frames between consecutive frames of a sequence (DALI's stride; default 1).
    #[arg(long, value_name = "N", help_heading = "Sampling")]
    stride: Option<usize>,
    /// Sampling: frames between the first frames of consecutive sequences (DALI's step; default: the
    /// sequence length).
    #[arg(long, value_name = "N", help_heading = "Sampling")]
    step: Option<usize>,
    /// Sampling: N clips per video, each one sequence (with the stride), their starts chosen by
    /// --clip-sampler (random ones seeded by --seed). Files, and URLs of files served with range requests:
    /// only the GOPs the clips need are decoded.
    #[arg(long, value_name = "N", help_heading = "Sampling")]
    clips: Option<usize>,
    /// Sampling: how clips start: random (uniform, seeded) or regular (evenly spaced).
    #[arg(long, default_value = "random", help_heading = "Sampling")]
    clip_sampler: framefeed::ClipSampler,
    /// Sampling: what a clip holds when the video is shorter than its span (every video still gives --clips
    /// clips, starting at its first frame): cut (the frames it has, then --policy), repeat_last (its last
    /// frame repeated), wrap (its frames again from its first) or error (the video fails).
    #[arg(long, default_value = "cut", help_heading = "Sampling")]
    clip_policy: framefeed::ClipPolicy,
    /// Sampling: resample to F frames per second (for each tick k/F from the first frame, the frame shown
    /// then).
    #[arg(long, value_name = "F", help_heading = "Sampling")]
    fps: Option<f64>,
    /// Sampling: only frames shown from S seconds (from the first frame) on.
    #[arg(long, value_name = "S", help_heading = "Sampling")]
    start: Option<f64>,
    /// Sampling: only frames shown before S seconds (from the first frame).
    #[arg(long, value_name = "S", help_heading = "Sampling")]
    end: Option<f64>,
    /// Sampling: exactly these display indices (0-based, non-decreasing), the sequence length at a time.
    #[arg(
        long,
        value_name = "I,J,K",
        value_delimiter = ',',
        help_heading = "Sampling"
    )]
    indices: Option<Vec<u64>>,
    /// Sampling: only the sequences whose first frame's display index is in FIRST..END (END excluded): one
    /// segment of a long video, as `framefeed info --segments N` lists them, decoded from the keyframe it needs
    /// (a sequence straddling END is finished past it). Each segment of a video, run apart with the same
    /// other flags, gives its share of the whole video's sequences, each once. Files only.
    #[arg(long, value_name = "FIRST:END", value_parser = parse_segment, help_heading = "Sampling")]
    segment: Option<(u64, u64)>,
    /// The most samples (frames and audio packets) an MP4/MOV file's index may claim: the demuxer builds an
    /// entry for each before reading any, so a file claiming more fails first. Default 4194304 (2^22); a whole
    /// file may also claim at most one per byte.
    #[arg(long, value_name = "N")]
    max_container_samples: Option<u64>,
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
        t = t.dtype(self.dtype);
        if let Some((mean, std)) = self.normalize {
            t = t.normalize(mean, std);
        }
        t.layout(self.layout)
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

#[derive(Default)]
struct Totals {
    batches: u64,
    frames: u64,
    errors: Vec<Value>,
}

/// The operator configuration the arguments ask for, with batches of `batch_size` sequences.
fn operator_config(args: &RunArgs, batch_size: usize) -> Config {
    let config = Config::new(args.sequence_length, batch_size)
        .last_sequence_policy(args.policy)
        .decoder_threads(args.threads)
        .prefetch_batches(args.prefetch)
        .max_queued(1, usize::MAX)
        .pack_batches(args.pack)
        .huge_pages(args.huge_pages)
        .autorotate(!args.no_autorotate)
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
        .transforms(args.transforms())
        .sampling(args.sampling());
    if args.low_latency {
        config.low_latency()
    } else {
        config
    }
}

pub(crate) fn run(args: RunArgs) -> Result<ExitCode, Failure> {
    let seconds_arg = |name: &str, s: f64| {
        Duration::try_from_secs_f64(s)
            .map_err(|_| format!("--{name} {s} is not a number of seconds"))
    };
    let url_options = UrlOptions::new()
        .open_timeout(seconds_arg("open-timeout", args.open_timeout)?)
        .read_timeout(seconds_arg("read-timeout", args.read_timeout)?)
        .reconnect(Reconnect::tries(args.reconnect))
        .rtsp_transport(args.rtsp_transport);
    url_options.validate().map_err(|e| e.to_string())?;
    let stop_after = args
        .duration
        .map(|s| seconds_arg("duration", s))
        .transpose()?;
    if args.mux {
        let deadline = seconds_arg("deadline", args.deadline / 1000.0)?;
        return super::mux::run(
            &args,
            operator_config(&args, 1),
            url_options,
            deadline,
            stop_after,
        );
    }
    let config = operator_config(&args, args.batch_size);
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

    // Files are opened one at a time, at most two ahead of decoding (one decoding, one in the feed queue, whose
    // limit makes `feed` wait), each read from disk as it is decoded: memory holds no encoded video whole.
    let feeder = {
        let input = input.clone();
        let url_options = url_options.clone();
        std::thread::spawn(move || {
            let mut unreadable = Vec::new();
            for source in sources {
                let label = source.label().unwrap_or_default();
                let fed = match &source {
                    Source::Sample => input.feed((framefeed::SAMPLE_MP4, label.clone())),
                    Source::Url(url) => match input.feed_url(url, url_options.clone()) {
                        Err(Error::Config(e)) => {
                            unreadable.push(json!({"video": null, "label": framefeed::redact_url(url), "error": e}));
                            continue;
                        }
                        other => other,
                    },
                    // Read from disk as it is decoded, never whole in memory.
                    Source::File(path) => match Encoded::file(path) {
                        Ok(video) => input.feed(video.label(label.clone())),
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
                    writeln!(out, "{}", batch_json(&batch, args.md5, pulled)).map_err(written)?;
                    // Each line leaves as its batch does (a reader of a live source sees it at once).
                    out.flush().map_err(written)?;
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
            Err(e) => return Err(e.to_string().into()),
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
        writeln!(out, "{summary}").map_err(written)?;
    } else {
        writeln!(
            out,
            "videos: {video_count} ({} failed)\nbatches: {}\nframes: {}\nseconds: {seconds:.3}\nframes/s: {fps:.1}\npeak RSS: {}",
            totals.errors.len(),
            totals.batches,
            totals.frames,
            peak_rss_mib().map_or("unknown".to_owned(), |m| format!("{m:.1} MiB")),
        )
        .map_err(written)?;
        for e in &totals.errors {
            writeln!(
                out,
                "error: {} ({}): {}",
                e["label"].as_str().unwrap_or("?"),
                e["video"],
                e["error"].as_str().unwrap_or("?")
            )
            .map_err(written)?;
        }
    }
    out.flush().map_err(written)?;
    Ok(if totals.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
