//! `framefeed serve`: the HTTP ingest service's options, each default protecting what its help says.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;

use super::{parse_bytes, seconds, Failure};

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum MoovArg {
    /// Buffer it within the upload's memory budget (up to a quarter of it) and decode it when the upload ends.
    Buffer,
    /// Fail it at once (strictly live).
    Fail,
}

impl From<framefeed::server::MoovAtEndUploads> for MoovArg {
    fn from(policy: framefeed::server::MoovAtEndUploads) -> Self {
        match policy {
            framefeed::server::MoovAtEndUploads::Fail => MoovArg::Fail,
            _ => MoovArg::Buffer,
        }
    }
}

/// The library's service defaults, which every flag's default is (`tests/cli.rs` checks `--help` against them).
fn defaults() -> framefeed::server::ServeConfig {
    framefeed::server::ServeConfig::default()
}

/// `framefeed serve`'s options; each default protects what its help says.
#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on. A non-loopback address needs --auth-tokens (or --insecure-no-auth).
    #[arg(long, default_value_t = defaults().addr)]
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
    #[arg(long, default_value_t = defaults().max_streams)]
    max_streams: usize,
    /// Uploads at once per client: token name, or address (more get 429).
    #[arg(long, default_value_t = defaults().max_streams_per_client)]
    max_streams_per_client: usize,
    /// Largest request body (larger gets 413, or is cut with an error line). K/M/G/T suffixes.
    #[arg(long, value_name = "BYTES", default_value_t = defaults().max_body_bytes, value_parser = parse_bytes)]
    max_body_bytes: u64,
    /// Memory one upload may take: batches, decoder frames, buffered body, and the body held whole for a clips
    /// upload or an MP4 with its index at the end (up to a quarter of it, less the index's share). K/M/G/T.
    #[arg(long, value_name = "BYTES", default_value_t = defaults().max_upload_memory, value_parser = parse_bytes)]
    max_upload_memory: u64,
    /// Memory all uploads may take together (default: half of the machine's memory). K/M/G/T.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    max_memory: Option<u64>,
    /// Memory one client's uploads may hold together (default: a quarter of --max-memory, at least --max-upload-memory). K/M/G/T.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    max_client_memory: Option<u64>,
    /// What an MP4 upload with its index at the end does.
    #[arg(long, value_enum, default_value_t = MoovArg::from(defaults().moov_at_end))]
    moov_at_end: MoovArg,
    /// Seconds a connection has to send its request headers (and to finish a TLS handshake); also how long
    /// a keep-alive connection may sit idle.
    #[arg(long, value_name = "SECS", default_value_t = defaults().header_timeout.as_secs_f64())]
    header_timeout: f64,
    /// Open connections at most; beyond it new connections are closed at once.
    #[arg(long, default_value_t = defaults().max_connections)]
    max_connections: usize,
    /// Seconds a response's bytes may wait for the client to accept any; a reader that stopped reading is cut
    /// then (any progress restarts it).
    #[arg(long, value_name = "SECS", default_value_t = defaults().send_timeout.as_secs_f64())]
    send_timeout: f64,
    /// Open connections from one address at most (a trusted proxy's own is not capped); beyond it that
    /// address's new connections are closed at once.
    #[arg(long, default_value_t = defaults().max_connections_per_address)]
    max_connections_per_address: usize,
    /// Slowest upload accepted, bytes/s averaged over --upload-rate-window (0: no rule). K/M/G suffixes.
    #[arg(long, value_name = "BYTES", default_value_t = defaults().min_upload_rate, value_parser = parse_bytes)]
    min_upload_rate: u64,
    /// Seconds over which the upload rate is averaged (and before which it is not checked).
    #[arg(long, value_name = "SECS", default_value_t = defaults().upload_rate_window.as_secs_f64())]
    upload_rate_window: f64,
    /// Seconds without data after which an upload fails.
    #[arg(long, value_name = "SECS", default_value_t = defaults().stall_timeout.as_secs_f64())]
    stall_timeout: f64,
    /// Decoder threads per upload.
    #[arg(long, default_value_t = defaults().decoder_threads_per_stream)]
    decoder_threads_per_stream: usize,
    /// Seconds uploads in progress get to finish after Ctrl-C or SIGTERM.
    #[arg(long, value_name = "SECS", default_value_t = defaults().shutdown_grace.as_secs_f64())]
    shutdown_grace: f64,
    /// Hosts POST /streams may pull from, comma-separated: `public` (any public address), addresses
    /// (127.0.0.1), networks (10.0.0.0/8) and host names. Private, loopback and link-local addresses are
    /// refused unless listed.
    #[arg(long, value_name = "HOSTS", default_value_t = defaults().allow_hosts)]
    allow_hosts: framefeed::server::AllowHosts,
    /// Object-store prefixes POST /streams may read from, comma-separated (s3://videos/,gs://data/train/),
    /// with this server's own credentials and endpoint (the environment's: AWS_*, GOOGLE_*, AZURE_*). None by
    /// default: a client's s3://, gs:// or az:// URL is refused.
    #[arg(long, value_name = "PREFIXES", default_value = "")]
    allow_remote: framefeed::server::AllowRemote,
}

pub(crate) fn serve(args: ServeArgs) -> Result<ExitCode, Failure> {
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
    config.max_client_memory = args.max_client_memory;
    config.moov_at_end = match args.moov_at_end {
        MoovArg::Buffer => framefeed::server::MoovAtEndUploads::Buffer,
        MoovArg::Fail => framefeed::server::MoovAtEndUploads::Fail,
    };
    config.header_timeout = seconds("header-timeout", args.header_timeout)?;
    config.max_connections = args.max_connections;
    config.max_connections_per_address = args.max_connections_per_address;
    config.send_timeout = seconds("send-timeout", args.send_timeout)?;
    config.min_upload_rate = args.min_upload_rate;
    config.upload_rate_window = seconds("upload-rate-window", args.upload_rate_window)?;
    config.stall_timeout = seconds("stall-timeout", args.stall_timeout)?;
    config.decoder_threads_per_stream = args.decoder_threads_per_stream;
    config.shutdown_grace = seconds("shutdown-grace", args.shutdown_grace)?;
    config.allow_hosts = args.allow_hosts;
    config.allow_remote = args.allow_remote;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start: {e}"))?;
    runtime.block_on(async move {
        let server = framefeed::server::Server::bind(config)
            .await
            .map_err(|e| e.to_string())?;
        // The address goes to stdout (with the port the system chose for :0), for scripts and tests; a reader
        // gone already (`serve | head -1`) does not stop the service.
        let mut stdout = io::stdout().lock();
        let _ = writeln!(stdout, "listening on {}", server.local_addr());
        let _ = stdout.flush();
        drop(stdout);
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
