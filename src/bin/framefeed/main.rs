//! `framefeed`: decode videos into batches of frame sequences from the command line.
//!
//! `framefeed run [FILES]...` feeds the files (or, with none, the built-in sample video) to one operator and
//! reports every batch (its flags in `args.rs`; `run.rs`, or `mux.rs` with `--mux`; its JSON lines and summary
//! in `output.rs`); `framefeed info FILE` describes a
//! container as JSON (`info.rs`); `framefeed serve` runs the HTTP ingest service (`serve.rs`, over
//! `framefeed::server`). Settings with named values parse through framefeed's own `FromStr`, as the service
//! and Python parse them.

mod args;
mod info;
mod mux;
mod output;
mod run;
mod serve;

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use args::RunArgs;
use serve::ServeArgs;

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
    Run(Box<RunArgs>),
    /// Describe a container and its streams as JSON.
    Info {
        /// The video file, or a remote video's URL (s3://, gs://, az://, https://; credentials from the
        /// environment or --storage-option), read by byte ranges.
        file: PathBuf,
        /// Also cut the video at keyframes into segments of at least N frames (an MP4 from its index, other
        /// files by demuxing, without decoding), listed as `"segments": [[FIRST, END], ...]` (display indices, END excluded): give each to
        /// `framefeed run --segment FIRST:END` on any machine, and together they give the whole video's
        /// sequences once.
        #[arg(long, value_name = "N")]
        segments: Option<u64>,
        #[command(flatten)]
        remote: args::RemoteArgs,
    },
    /// Serve the HTTP ingest service: POST /videos streams one JSON line per batch; GET /health, /metrics.
    Serve(Box<ServeArgs>),
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
        Command::Run(args) => match args.prepare() {
            Err(message) => Err(Failure::Message(message)),
            Ok(prepared) if args.mux => mux::run(&args, prepared),
            Ok(prepared) => run::run(*args, prepared),
        },
        Command::Info {
            file,
            segments,
            remote,
        } => match remote.options() {
            Ok(options) => info::info(&file, segments, &options),
            Err(message) => Err(Failure::Message(message)),
        },
        Command::Serve(args) => serve::serve(*args),
    };
    match result {
        Ok(code) => code,
        // The reader of the output went away (`framefeed info FILE | head`): nothing more is wanted.
        Err(Failure::ReaderGone) => ExitCode::SUCCESS,
        Err(Failure::Message(e)) => {
            eprintln!("framefeed: {e}");
            ExitCode::from(2)
        }
    }
}

/// Why a command stopped short.
pub(crate) enum Failure {
    /// What went wrong, for standard error.
    Message(String),
    /// Standard output's reader is gone (a closed pipe): the command ends quietly.
    ReaderGone,
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Message(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure::Message(message.to_owned())
    }
}

/// A failed write to standard output: a closed pipe ends the command quietly, anything else is an error.
pub(crate) fn written(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::ReaderGone
    } else {
        Failure::Message(format!("cannot write the output: {e}"))
    }
}

pub(crate) fn parse_bytes(s: &str) -> Result<u64, String> {
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

pub(crate) fn seconds(name: &str, secs: f64) -> Result<std::time::Duration, String> {
    let duration = framefeed::seconds_setting(&format!("--{name}"), secs)?;
    if duration.is_zero() {
        return Err(format!(
            "--{name} is 0; allowed: a number of seconds, more than 0"
        ));
    }
    Ok(duration)
}
