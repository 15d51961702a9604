//! The service's settings, checked once.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use super::auth::Tokens;
use super::budget;
use super::hosts::{AllowHosts, AllowRemote};
use crate::demux::mp4::claims::BYTES_PER_SAMPLE;
use crate::demux::mp4::live::max_held_box;
use crate::error::{Error, Result};

/// What a live MP4 upload with its index (`moov`) at the end does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MoovAtEndUploads {
    /// Buffer it (up to a quarter of `max_upload_memory`, inside the upload's budget) and decode it when the
    /// upload ends.
    #[default]
    Buffer,
    /// Fail it at once with the error code `moov_at_end`.
    Fail,
}

/// The service's settings. [`Default`] gives the values `framefeed serve` starts with; every value is checked
/// by [`validate`](Self::validate) (and by [`Server::bind`](super::Server::bind)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServeConfig {
    /// Address to listen on (default `127.0.0.1:8080`). A non-loopback address needs `auth_tokens`, or
    /// `insecure_no_auth`.
    pub addr: SocketAddr,
    /// Uploads decoded at once, server-wide (default 32); more get 503.
    pub max_streams: usize,
    /// Uploads at once from one client (token name, or address), default 4 (an eighth of `max_streams`'
    /// default, so that a handful of addresses cannot take every slot); more get 429.
    pub max_streams_per_client: usize,
    /// Largest request body (default 2 GiB): a larger `Content-Length` gets 413; a streamed body growing past
    /// it is cut with an error line.
    pub max_body_bytes: u64,
    /// libavcodec threads per upload (default 1). Threads in all: at most `max_streams * (1 + this)`.
    pub decoder_threads_per_stream: usize,
    /// An upload that sends nothing for this long fails (default 30 s).
    pub stall_timeout: Duration,
    /// Memory one upload may take (default 512 MiB): its batches in flight, its decoder's frames, the body
    /// buffered ahead of the decoder and the moov-at-end buffer, and the demuxer's MP4 index (a sixteenth of
    /// it bounds the samples an MP4 may claim: 349,525 at 512 MiB). Settings that cannot fit even for a
    /// one-pixel video get 400; a video whose real frame size does not fit fails with the error code
    /// `over_memory_budget`.
    pub max_upload_memory: u64,
    /// Memory all uploads together may take (`None`, the default: half of the machine's memory). An upload
    /// reserves what it is known to need: almost nothing when admitted ([`ADMISSION_BYTES`]; 503 with
    /// `Retry-After` when even that is not free), then the body it holds as it arrives, then, once its
    /// stream's header gives the frame size, its batches, decoder frames and buffers at that size (never more
    /// than `max_upload_memory`). An upload whose growth the pool cannot cover fails with `server_busy`.
    pub max_memory: Option<u64>,
    /// Memory one client's uploads may hold together (`None`, the default: a quarter of `max_memory`), so that no
    /// client (an address, or a token's name) takes the whole pool. At least `max_upload_memory`. An upload
    /// growing past its client's share fails with `too_many_uploads`.
    pub max_client_memory: Option<u64>,
    /// What a moov-at-end MP4 upload does (default: buffered within the budget).
    pub moov_at_end: MoovAtEndUploads,
    /// Time a connection has to send a request's headers (default 10 s), also the longest a keep-alive
    /// connection may sit idle between requests, and the TLS handshake's limit.
    pub header_timeout: Duration,
    /// Open connections at most (default 1024); beyond it new connections are closed at once.
    pub max_connections: usize,
    /// How long a response's bytes may wait for the client to accept any (default 60 s, nginx's
    /// `send_timeout`): a reader that stops reading (a stream's or `/mux`'s consumer) is cut then. Any
    /// progress restarts it, so a slow reader, or a pause shorter than it, is never cut.
    pub send_timeout: Duration,
    /// Open connections from one address at most (default 64, so that at least 16 addresses are needed to
    /// take every connection; above `max_connections` it does not bind); beyond it that address's new connections are closed at once, whether they
    /// would authenticate or not, while other addresses are served. A trusted proxy's own address is not
    /// capped (its clients are told apart by `X-Forwarded-For` for the per-client limits).
    pub max_connections_per_address: usize,
    /// Slowest upload accepted, in bytes a second averaged over `upload_rate_window` of time spent waiting
    /// for the client (default 500 B/s, Apache mod_reqtimeout's `MinRate`; 0: no rule). Checked once the
    /// window has passed. With the default window, a camera sending at 16 kbit/s (2,000 B/s) or more is never
    /// cut while its pauses add up to less than 45 s in any minute (a pause under the 30 s stall timeout
    /// included); a client dripping bytes to hold a slot is cut after a minute, holds almost no memory
    /// meanwhile, and holds at most `max_streams_per_client` slots.
    pub min_upload_rate: u64,
    /// The window of the rate rule (default 60 s, nginx's `client_body_timeout`).
    pub upload_rate_window: Duration,
    /// Bearer tokens; `None`: no authentication (loopback only, unless `insecure_no_auth`).
    pub auth_tokens: Option<Tokens>,
    /// Serve without tokens on a non-loopback address.
    pub insecure_no_auth: bool,
    /// TLS certificate chain and private key (PEM files); `None`: plain HTTP.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Proxies whose `X-Forwarded-For` names the client (for the per-client limit and the logs).
    pub trusted_proxies: Vec<IpAddr>,
    /// Time uploads in progress get to finish once shutdown begins (default 30 s).
    pub shutdown_grace: Duration,
    /// The hosts `POST /streams` may pull from (default: public addresses only).
    pub allow_hosts: AllowHosts,
    /// The object-store prefixes `POST /streams` may read from, with the server's own credentials (default:
    /// none).
    pub allow_remote: AllowRemote,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            max_streams: 32,
            max_streams_per_client: 4,
            max_body_bytes: 2 << 30,
            decoder_threads_per_stream: 1,
            stall_timeout: Duration::from_secs(30),
            max_upload_memory: 512 << 20,
            max_memory: None,
            max_client_memory: None,
            moov_at_end: MoovAtEndUploads::Buffer,
            header_timeout: Duration::from_secs(10),
            max_connections: 1024,
            send_timeout: Duration::from_secs(60),
            max_connections_per_address: 64,
            min_upload_rate: 500,
            upload_rate_window: Duration::from_secs(60),
            auth_tokens: None,
            insecure_no_auth: false,
            tls: None,
            trusted_proxies: Vec::new(),
            shutdown_grace: Duration::from_secs(30),
            allow_hosts: AllowHosts::default(),
            allow_remote: AllowRemote::default(),
        }
    }
}

/// What an upload reserves when admitted, before its body says anything: the connection's read buffer.
pub const ADMISSION_BYTES: u64 = 64 << 10;

/// The smallest `max_upload_memory`: the body buffered ahead of the decoder takes 8 MiB.
pub const MIN_UPLOAD_MEMORY: u64 = 16 << 20;
/// Bytes of an upload's body buffered ahead of its decoder.
pub(crate) const LIVE_BUFFER_BYTES: usize = 8 << 20;

impl ServeConfig {
    /// Checks every value, naming the allowed range.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        if !(1..=65_536).contains(&self.max_streams) {
            return bad(format!(
                "max_streams is {}; allowed: 1 to 65536",
                self.max_streams
            ));
        }
        if !(1..=self.max_streams).contains(&self.max_streams_per_client) {
            return bad(format!(
                "max_streams_per_client is {}; allowed: 1 to max_streams ({})",
                self.max_streams_per_client, self.max_streams
            ));
        }
        if self.max_body_bytes == 0 {
            return bad("max_body_bytes is 0; allowed: at least 1".into());
        }
        if self.decoder_threads_per_stream > crate::limits::MAX_DECODER_THREADS {
            return bad(format!(
                "decoder_threads_per_stream is {}; allowed: 0 to {}",
                self.decoder_threads_per_stream,
                crate::limits::MAX_DECODER_THREADS
            ));
        }
        let positive = |name: &str, d: Duration| {
            if d.is_zero() {
                bad(format!("{name} is 0; allowed: a positive duration"))
            } else {
                Ok(())
            }
        };
        positive("stall_timeout", self.stall_timeout)?;
        positive("header_timeout", self.header_timeout)?;
        positive("upload_rate_window", self.upload_rate_window)?;
        if self.max_upload_memory < MIN_UPLOAD_MEMORY {
            return bad(format!(
                "max_upload_memory is {}; allowed: at least {MIN_UPLOAD_MEMORY} (16 MiB)",
                self.max_upload_memory
            ));
        }
        let pool = self.memory_pool_bytes();
        if pool < self.max_upload_memory {
            return bad(format!(
                "max_memory is {pool}, less than max_upload_memory ({}): no upload could be admitted",
                self.max_upload_memory
            ));
        }
        let share = self.client_memory_bytes();
        if !(self.max_upload_memory..=pool).contains(&share) {
            return bad(format!(
                "max_client_memory is {share}; allowed: max_upload_memory ({}) to max_memory ({pool})",
                self.max_upload_memory
            ));
        }
        if self.max_connections == 0 {
            return bad("max_connections is 0; allowed: at least 1".into());
        }
        if self.send_timeout < Duration::from_millis(100)
            || self.send_timeout > Duration::from_secs(3600)
        {
            return bad(format!(
                "send_timeout is {:?}; allowed: 100 ms to 1 hour",
                self.send_timeout
            ));
        }
        if self.max_connections_per_address == 0 {
            return bad("max_connections_per_address is 0; allowed: at least 1".into());
        }
        if !self.addr.ip().is_loopback() && self.auth_tokens.is_none() && !self.insecure_no_auth {
            return bad(format!(
                "refusing to serve {} without authentication: give auth tokens (--auth-tokens FILE), listen on a loopback address, or pass --insecure-no-auth",
                self.addr
            ));
        }
        Ok(())
    }

    /// The server-wide memory pool: `max_memory`, or half of the machine's memory (8 GiB where it cannot be
    /// read).
    pub fn memory_pool_bytes(&self) -> u64 {
        self.max_memory
            .unwrap_or_else(|| budget::machine_memory().map_or(8 << 30, |m| m / 2))
    }

    /// One client's share of the pool: `max_client_memory`, or a quarter of the pool (and never less than
    /// `max_upload_memory`).
    pub fn client_memory_bytes(&self) -> u64 {
        self.max_client_memory
            .unwrap_or_else(|| (self.memory_pool_bytes() / 4).max(self.max_upload_memory))
    }

    /// The most samples an upload's MP4 index may claim: a sixteenth of `max_upload_memory` covers the
    /// demuxer's index ([`BYTES_PER_SAMPLE`] a sample) and the two index boxes a live upload may have held at
    /// once (16 bytes a sample each). 349,525 samples at 512 MiB.
    pub(crate) fn container_samples(&self) -> u64 {
        (self.max_upload_memory / 16 / (BYTES_PER_SAMPLE + 32)).max(1)
    }

    /// Bytes of an upload's MP4 index at most: [`container_samples`](Self::container_samples) entries.
    pub(crate) fn index_bytes(&self) -> u64 {
        self.container_samples() * BYTES_PER_SAMPLE
    }

    /// The bytes a moov-at-end upload may buffer: a quarter of `max_upload_memory`, less what its index may
    /// take, or 0 when such uploads fail.
    pub(crate) fn moov_buffer_bytes(&self) -> u64 {
        match self.moov_at_end {
            MoovAtEndUploads::Buffer => {
                (self.max_upload_memory / 4).saturating_sub(self.index_bytes())
            }
            MoovAtEndUploads::Fail => 0,
        }
    }

    /// Bytes an upload holds besides its frames when `moov_buffered` bytes of a moov-at-end MP4 are buffered:
    /// the body buffered ahead of the decoder and the index boxes held (a live upload), or the moov-at-end
    /// buffer, whichever is larger, and the demuxer's index.
    pub(crate) fn held_bytes(&self, moov_buffered: u64) -> u64 {
        let live = LIVE_BUFFER_BYTES as u64 + 2 * max_held_box(self.container_samples());
        live.max(moov_buffered) + self.index_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guide's page on the service (`docs/guide/service.md`) states the default hold of a clips (or
    /// moov-at-end) upload.
    #[test]
    fn a_whole_upload_is_held_up_to_a_quarter_of_its_memory_less_the_index() {
        let config = ServeConfig::default();
        assert_eq!(config.moov_buffer_bytes(), 111_848_128);
        assert!(include_str!("../../docs/guide/service.md").contains("111,848,128 bytes"));
        let fail = ServeConfig {
            moov_at_end: MoovAtEndUploads::Fail,
            ..ServeConfig::default()
        };
        assert_eq!(fail.moov_buffer_bytes(), 0);
    }

    #[test]
    fn validation_names_the_allowed_range() {
        let check = |config: ServeConfig, expected: &str| {
            let err = config.validate().unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        };
        check(
            ServeConfig {
                max_streams: 0,
                ..ServeConfig::default()
            },
            "max_streams is 0; allowed: 1 to 65536",
        );
        check(
            ServeConfig {
                max_upload_memory: 1000,
                ..ServeConfig::default()
            },
            "allowed: at least 16777216",
        );
        check(
            ServeConfig {
                max_memory: Some(100 << 20),
                ..ServeConfig::default()
            },
            "no upload could be admitted",
        );
        check(
            ServeConfig {
                header_timeout: Duration::ZERO,
                ..ServeConfig::default()
            },
            "header_timeout is 0",
        );
        ServeConfig::default().validate().unwrap();
    }

    #[test]
    fn a_public_address_needs_tokens_or_an_explicit_opt_out() {
        let public = ServeConfig {
            addr: "0.0.0.0:8080".parse().unwrap(),
            ..ServeConfig::default()
        };
        let err = public.validate().unwrap_err().to_string();
        assert!(err.contains("--auth-tokens"), "{err}");
        ServeConfig {
            insecure_no_auth: true,
            ..public.clone()
        }
        .validate()
        .unwrap();
        ServeConfig {
            auth_tokens: Some(Tokens::parse("a:0123456789abcdef").unwrap()),
            ..public
        }
        .validate()
        .unwrap();
    }
}
