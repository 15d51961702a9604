//! A real-time video ingest service on framefeed: clients upload videos as streamed (chunked) request bodies
//! and get one JSON line per batch as soon as it is decoded, while the upload is still going.
//!
//! ```text
//! cargo run --release --example ingest_server -- --addr 127.0.0.1:9000
//! curl -T clip.ts -H 'Transfer-Encoding: chunked' \
//!     'http://127.0.0.1:9000/videos?sequence_length=8&batch_size=2&policy=pad'
//! curl http://127.0.0.1:9000/metrics
//! ```
//!
//! - `POST /videos?sequence_length=L&batch_size=B&policy=pad|partial`: the body is the video (any container
//!   framefeed reads live: MPEG-TS, fragmented or faststart MP4, Matroska/WebM, raw H.264/HEVC; an ordinary MP4
//!   with its index at the end is buffered and decoded when the upload ends). The response (200,
//!   `application/x-ndjson`) has one line per batch, with the fields of `framefeed run --json`, an
//!   `{"error":{...}}` line if the video fails (not a video, corrupt, cut short, stalled, too large), and a last
//!   `{"summary":{"frames":N,"batches":M,"seconds":S,"errors":[...]}}` line.
//! - Refusals, with a one-line JSON error body: 400 bad query, 413 `Content-Length` over `--max-body-bytes`
//!   (a chunked body that grows past it is cut with an error line), 429 more than `--max-streams-per-client`
//!   uploads from one address, 503 more than `--max-streams` uploads in all, or shutting down (both with
//!   `Retry-After`).
//! - `GET /health`, `GET /metrics` (Prometheus text).
//! - Each upload has its own operator and threads: at most `max_streams * (1 + decoder_threads_per_stream)`
//!   decoding threads. Ctrl-C stops accepting, lets uploads in progress finish (up to `--shutdown-grace`),
//!   then exits.

mod service;

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;

/// framefeed's ingest server example.
#[derive(Parser, Debug)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Uploads decoded at once (more get 503).
    #[arg(long, default_value_t = 32)]
    max_streams: usize,
    /// Uploads at once from one client address (more get 429).
    #[arg(long, default_value_t = 8)]
    max_streams_per_client: usize,
    /// Largest request body in bytes (larger gets 413).
    #[arg(long, default_value_t = 2 << 30)]
    max_body_bytes: u64,
    /// Decoder threads per upload.
    #[arg(long, default_value_t = 1)]
    decoder_threads_per_stream: usize,
    /// Seconds without data after which an upload fails.
    #[arg(long, default_value_t = 30.0)]
    stall_timeout: f64,
    /// Seconds uploads in progress get to finish after Ctrl-C.
    #[arg(long, default_value_t = 30.0)]
    shutdown_grace: f64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,ffmpeg=off".into()),
        )
        .init();
    let args = Args::parse();
    let positive = |name: &str, secs: f64| {
        Duration::try_from_secs_f64(secs)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("--{name} must be a positive number of seconds, got {secs}"))
    };
    let limits = service::Limits {
        max_streams: args.max_streams.max(1),
        max_streams_per_client: args.max_streams_per_client.max(1),
        max_body_bytes: args.max_body_bytes,
        decoder_threads_per_stream: args.decoder_threads_per_stream,
        stall_timeout: positive("stall-timeout", args.stall_timeout)?,
    };
    let grace = positive("shutdown-grace", args.shutdown_grace)?;
    let service = service::Service::new(limits);
    let listener = tokio::net::TcpListener::bind(args.addr).await?;
    tracing::info!(addr = %listener.local_addr()?, "listening");

    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    let shutdown = {
        let service = service.clone();
        async move {
            let _ = stop_rx.wait_for(|stop| *stop).await;
            service.begin_shutdown();
        }
    };
    let serve =
        axum::serve(listener, service::app(service.clone())).with_graceful_shutdown(shutdown);
    let server = tokio::spawn(async move { serve.await });
    tokio::signal::ctrl_c().await?;
    tracing::info!(
        active = service.active_streams(),
        "Ctrl-C: no new uploads; waiting for those in progress"
    );
    stop_tx.send(true)?;
    match tokio::time::timeout(grace, server).await {
        Ok(result) => result??,
        Err(_) => tracing::warn!(
            active = service.active_streams(),
            "uploads still in progress after the shutdown grace; exiting"
        ),
    }
    Ok(())
}
