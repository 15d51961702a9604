//! The HTTP ingest service behind `framefeed serve` (feature `server`): clients upload videos as request
//! bodies (streamed or whole) and read one JSON line per batch as soon as it is decoded, while the upload is
//! still going. It is built to face a network: every upload has a memory budget, connections that send
//! nothing or too slowly are closed, clients authenticate with bearer tokens, TLS is served with rustls, and
//! no error a client sees carries internals.
//!
//! ```no_run
//! # async fn serve() -> framefeed::Result<()> {
//! use framefeed::server::{ServeConfig, Server};
//! let server = Server::bind(ServeConfig::default()).await?; // 127.0.0.1:8080
//! println!("listening on {}", server.local_addr());
//! server.run(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```
//!
//! Routes:
//! - `POST /videos?sequence_length=L&batch_size=B&policy=pad|partial` (and the sampling, `dtype`, `tonemap`,
//!   `md5=true` for each frame's MD5 on the lines): the body is the video (MPEG-TS,
//!   fragmented or faststart MP4, Matroska/WebM, raw H.264/HEVC, read live; an MP4 with its index at the end
//!   is buffered within the upload's budget, or refused with `--moov-at-end fail`). The response (200,
//!   `application/x-ndjson`) has one line per batch (the fields of `framefeed run --json`), an
//!   `{"error":{"code","message","request_id"}}` line if the video fails, and a last
//!   `{"summary":{"frames","batches","seconds","errors"}}` line.
//! - `POST /streams` (pull a URL), `POST /videos?detach=true` (an upload others consume), `GET
//!   /streams/{id}/batches` (a stream's consumer), and `GET /mux?streams=a,b&batch_size=B&deadline=MS`
//!   (batches across streams, by the mux's rule).
//! - `GET /health` (open to all), `GET /metrics` (Prometheus text; needs a token when tokens are set).
//!
//! Refusals carry one error line and the `X-Request-Id` header every response has: 400 (bad query, settings
//! that cannot fit the per-upload memory budget, `Content-Length` together with `Transfer-Encoding`), 401 (no
//! or unknown token), 413 (declared body over `max_body_bytes`), 429 (the client's uploads at the limit), 503
//! with `Retry-After` (uploads or memory at the server's limit, or shutting down).
//!
//! The pieces, one file each: `config` (the settings), `service` (shared state, admission, metrics), `budget` (memory accounting),
//! `operator` (a client's settings to an operator sized to the budget), `fanout` (streams and their consumers),
//! `streams` (the stream routes and decoding), `mux` (batches across streams), `hosts` (the hosts a stream may be pulled from),
//! `rate` (the upload-rate rule), `requests` (the request types and their extractors), `auth` (tokens and client keys), `errors` (client-facing codes),
//! `strict` (HTTP framing checks), `upload` (one upload: body in, lines out), `routes` (the router and its
//! middleware), `listen` (accepting connections: TLS, caps, timeouts, shutdown).

mod auth;
mod budget;
mod config;
mod errors;
mod fanout;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod hosts;
mod listen;
pub(crate) mod metrics;
mod mux;
mod operator;
mod rate;
mod requests;
mod routes;
mod service;
mod shedding;
mod streams;
mod strict;
mod upload;

pub use auth::{Tokens, MIN_TOKEN_LEN};
pub use config::{MoovAtEndUploads, ServeConfig, ADMISSION_BYTES, MIN_UPLOAD_MEMORY};
pub use hosts::{AllowHosts, AllowRemote};
pub use listen::{Server, ServerHandle};
