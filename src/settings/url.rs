//! A URL source's settings ([`UrlOptions`]): the schemes allowed, the timeouts, the reconnect policy
//! ([`Reconnect`]) and RTSP's transport, with their defaults as constants that the front ends take, validated
//! once. The source stage (`source::url`) pulls with them.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::video::Label;

/// The names of FFmpeg's input protocols that are not a [`Scheme`] (FFmpeg 5.1 to 7.1).
const FFMPEG_PROTOCOLS: [&str; 37] = [
    "android_content",
    "async",
    "bluray",
    "cache",
    "concat",
    "concatf",
    "crypto",
    "data",
    "fd",
    "ffrtmpcrypt",
    "ffrtmphttp",
    "ftp",
    "gopher",
    "gophers",
    "hls",
    "httpproxy",
    "icecast",
    "ipfs",
    "ipns",
    "librist",
    "librtmp",
    "md5",
    "mmsh",
    "mmst",
    "pipe",
    "prompeg",
    "rist",
    "rtmpe",
    "rtmps",
    "rtmpt",
    "rtmpte",
    "rtp",
    "sctp",
    "subfile",
    "tcp",
    "tls",
    "udp",
];

/// A URL scheme framefeed may pull from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scheme {
    /// `rtsp://` (cameras), over TCP or UDP transport ([`RtspTransport`]).
    Rtsp,
    /// `srt://` (caller mode by default; `?mode=listener` in the URL to wait for a sender).
    Srt,
    /// `rtmp://`.
    Rtmp,
    /// `http://`: progressive media or an HLS playlist.
    Http,
    /// `https://`.
    Https,
    /// `file:` (and plain paths): never allowed unless listed, since a URL from a client must not read the
    /// server's files.
    File,
    /// `s3://` (and `s3a://`): an Amazon S3 object or one of any S3-compatible store, read by byte ranges
    /// ([`RemoteOptions`](crate::RemoteOptions)).
    S3,
    /// `gs://` (and `gcs://`): a Google Cloud Storage object.
    Gcs,
    /// `az://` (and `azure://`, `abfs://`, `abfss://`, `adl://`): an Azure Blob Storage object.
    Azure,
}

impl Scheme {
    /// The object stores' schemes: allowed by default in the library ([`UrlOptions::new`]); the ingest
    /// service reads them only under the prefixes its operator lists (`--allow-remote`: it would otherwise lend
    /// its own credentials to its clients).
    pub const OBJECT_STORES: [Scheme; 3] = [Scheme::S3, Scheme::Gcs, Scheme::Azure];

    /// The network schemes FFmpeg pulls from, not `file:`.
    pub const NETWORK: [Scheme; 5] = [
        Scheme::Rtsp,
        Scheme::Srt,
        Scheme::Rtmp,
        Scheme::Http,
        Scheme::Https,
    ];

    /// The scheme of `url` (`None`: one framefeed does not pull from). A string without `scheme://` is a
    /// file path.
    pub fn of(url: &str) -> Option<Scheme> {
        let Some((scheme, _)) = url.split_once(':') else {
            return Some(Scheme::File);
        };
        match scheme.to_ascii_lowercase().as_str() {
            "rtsp" => Some(Scheme::Rtsp),
            "srt" => Some(Scheme::Srt),
            "rtmp" => Some(Scheme::Rtmp),
            "http" => Some(Scheme::Http),
            "https" => Some(Scheme::Https),
            "file" => Some(Scheme::File),
            "s3" | "s3a" => Some(Scheme::S3),
            "gs" | "gcs" => Some(Scheme::Gcs),
            "az" | "azure" | "abfs" | "abfss" | "adl" => Some(Scheme::Azure),
            // FFmpeg's other protocols (`data:`, `subfile:`, `concat:`...) are refused by name, not read as
            // a file path with a colon in it.
            other if FFMPEG_PROTOCOLS.contains(&other) => None,
            _ if !url.contains("://") => Some(Scheme::File),
            _ => None,
        }
    }

    /// The FFmpeg protocols a source of this scheme may open (its own and those it nests: RTSP opens RTP over
    /// UDP or TCP, HLS opens its segments over HTTP(S), HTTPS runs over TLS over TCP).
    fn protocols(self) -> &'static [&'static str] {
        match self {
            Scheme::Rtsp => &["rtp", "udp", "tcp", "srtp"],
            Scheme::Srt => &["srt"],
            Scheme::Rtmp => &["rtmp", "tcp"],
            Scheme::Http => &["http", "tcp", "hls", "crypto"],
            Scheme::Https => &["https", "http", "tls", "tcp", "hls", "crypto"],
            Scheme::File => &["file", "crypto"],
            // Read by framefeed's own client, never by FFmpeg.
            Scheme::S3 | Scheme::Gcs | Scheme::Azure => &[],
        }
    }

    /// Whether FFmpeg reads the scheme as a plain byte stream (SRT, RTMP), which framefeed then demuxes itself;
    /// the others (RTSP, HTTP with HLS, files) need the URL at the demuxer.
    pub(crate) fn is_byte_stream(self) -> bool {
        matches!(self, Scheme::Srt | Scheme::Rtmp)
    }

    /// The scheme's name in URLs.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Rtsp => "rtsp",
            Scheme::Srt => "srt",
            Scheme::Rtmp => "rtmp",
            Scheme::Http => "http",
            Scheme::Https => "https",
            Scheme::File => "file",
            Scheme::S3 => "s3",
            Scheme::Gcs => "gs",
            Scheme::Azure => "az",
        }
    }
}

/// The transport of an RTSP session's media.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RtspTransport {
    /// Interleaved in the RTSP TCP connection: no loss, works through NAT and firewalls (the default).
    #[default]
    Tcp,
    /// RTP over UDP: lower latency, packets can be lost. FFmpeg ends the stream at the server's RTCP BYE and
    /// reads RTCP ahead of RTP, so when a server ends its stream while the reader is behind, the frames whose
    /// packets still wait in the socket are lost too.
    Udp,
}

super::choice::choices!(RtspTransport, "rtsp_transport", [
    RtspTransport::Tcp => "tcp",
    RtspTransport::Udp => "udp",
]);

/// What happens when a source drops (a read fails or times out) after it was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reconnect {
    /// The video fails, after the frames decoded before the drop.
    Never,
    /// The source is reopened after `initial`, then after twice as long each time up to `max`, at most
    /// `max_tries` times in a row (a successful reopen resets the count). Decoding resumes with a new sequence
    /// and the next batch reports the gap ([`Batch::gap`](crate::Batch::gap)). A source that cannot be opened
    /// at first is retried the same way.
    Backoff {
        /// Reopen attempts in a row before the video fails (1 to 1000).
        max_tries: u32,
        /// The wait before the first attempt.
        initial: Duration,
        /// The longest wait between attempts.
        max: Duration,
    },
}

impl Default for Reconnect {
    /// Up to 5 tries, waiting 0.5 s, 1 s, 2 s, 4 s, 4 s.
    fn default() -> Self {
        Reconnect::tries(Reconnect::DEFAULT_TRIES)
    }
}

impl Reconnect {
    /// The default's tries in a row.
    pub const DEFAULT_TRIES: u32 = 5;
    /// The default's first wait.
    pub const DEFAULT_INITIAL: Duration = Duration::from_millis(500);
    /// The default's longest wait.
    pub const DEFAULT_MAX: Duration = Duration::from_secs(4);

    /// Up to `max_tries` reopen attempts with the default waits (0.5 s, doubling up to 4 s); 0: [`Never`].
    ///
    /// [`Never`]: Reconnect::Never
    pub fn tries(max_tries: u32) -> Self {
        if max_tries == 0 {
            return Reconnect::Never;
        }
        Reconnect::Backoff {
            max_tries,
            initial: Reconnect::DEFAULT_INITIAL,
            max: Reconnect::DEFAULT_MAX,
        }
    }

    /// The wait before attempt `n` (0-based), or `None` when no attempt `n` is allowed.
    pub(crate) fn delay(&self, n: u32) -> Option<Duration> {
        match *self {
            Reconnect::Never => None,
            Reconnect::Backoff {
                max_tries,
                initial,
                max,
            } => (n < max_tries).then(|| {
                initial
                    .checked_mul(1u32.checked_shl(n.min(31)).unwrap_or(u32::MAX))
                    .unwrap_or(max)
                    .min(max)
            }),
        }
    }
}

/// How a video is pulled by URL: which schemes are allowed, how long opening and reading may wait, and what
/// happens when the source drops. The [`Config`](crate::Config) of the operator still decides batching,
/// transforms and the live settings ([`Config::low_latency`](crate::Config::low_latency)).
///
/// ```
/// use std::time::Duration;
/// use framefeed::{Reconnect, UrlOptions};
///
/// let options = UrlOptions::new()
///     .open_timeout(Duration::from_secs(5))
///     .read_timeout(Duration::from_secs(2))
///     .reconnect(Reconnect::Never);
/// assert!(options.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlOptions {
    pub(crate) schemes: Vec<Scheme>,
    pub(crate) open_timeout: Duration,
    pub(crate) read_timeout: Duration,
    pub(crate) reconnect: Reconnect,
    pub(crate) rtsp_transport: RtspTransport,
    pub(crate) label: Option<Label>,
    pub(crate) remote: crate::RemoteOptions,
    /// Whether an object's URL is read by byte ranges (`source::remote`); the ingest service pulls every
    /// `http(s)://` URL through FFmpeg, under its host rules.
    pub(crate) ranged: bool,
}

impl Default for UrlOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl UrlOptions {
    /// How long opening a URL may take by default.
    pub const DEFAULT_OPEN_TIMEOUT: Duration = Duration::from_secs(10);
    /// How long one read may wait for data by default before the source counts as dropped.
    pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(5);

    /// Every network scheme and object store, not `file:`; 10 s to open, 5 s of silence before a read fails,
    /// the default [`Reconnect`], RTSP over TCP, the default [`RemoteOptions`](crate::RemoteOptions).
    pub fn new() -> Self {
        Self {
            schemes: [Scheme::NETWORK.as_slice(), Scheme::OBJECT_STORES.as_slice()].concat(),
            remote: crate::RemoteOptions::new(),
            ranged: true,
            open_timeout: Self::DEFAULT_OPEN_TIMEOUT,
            read_timeout: Self::DEFAULT_READ_TIMEOUT,
            reconnect: Reconnect::default(),
            rtsp_transport: RtspTransport::default(),
            label: None,
        }
    }

    /// How an object in a store or a file over HTTP(S) is read by byte ranges ([`RemoteOptions`]: credentials,
    /// CA bundle, requests in flight, memory, the index cache). Such a URL (see [`is_remote_url`]) is read
    /// as a whole video (sampling seeks in it); an HTTP(S) one whose server answers no `HEAD` with a length
    /// (a live stream) is pulled through FFmpeg as before.
    ///
    /// [`RemoteOptions`]: crate::RemoteOptions
    /// [`is_remote_url`]: crate::is_remote_url
    pub fn remote(mut self, options: crate::RemoteOptions) -> Self {
        self.remote = options;
        self
    }

    /// Whether an object's URL ([`is_remote_url`](crate::is_remote_url)) is read by byte ranges (the default),
    /// or, `false`, every URL pulled through FFmpeg's protocols, as the ingest service pulls `http(s)://`
    /// (under its host rules).
    pub fn ranged(mut self, ranged: bool) -> Self {
        self.ranged = ranged;
        self
    }

    /// The schemes a URL may have (the allowlist).
    pub fn schemes(mut self, schemes: impl IntoIterator<Item = Scheme>) -> Self {
        self.schemes = schemes.into_iter().collect();
        self
    }

    /// How long opening (connecting, the handshake, probing the stream) may take (0.1 s to 1 hour).
    pub fn open_timeout(mut self, timeout: Duration) -> Self {
        self.open_timeout = timeout;
        self
    }

    /// How long one read may wait for data before the source counts as dropped (0.1 s to 1 hour).
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// What happens when the source drops.
    pub fn reconnect(mut self, reconnect: Reconnect) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// RTSP's media transport.
    pub fn rtsp_transport(mut self, transport: RtspTransport) -> Self {
        self.rtsp_transport = transport;
        self
    }

    /// The label that travels with the video's batches and errors (default: the URL without its
    /// credentials).
    pub fn label(mut self, label: impl Into<Label>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Checks every setting, with a message naming the allowed range.
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| Err(Error::Config(message));
        let range = Duration::from_millis(100)..=Duration::from_secs(3600);
        if self.schemes.is_empty() {
            return bad("UrlOptions::schemes is empty: allow at least one scheme".into());
        }
        self.remote.validate()?;
        for (name, value) in [
            ("open_timeout", self.open_timeout),
            ("read_timeout", self.read_timeout),
        ] {
            if !range.contains(&value) {
                return bad(format!(
                    "UrlOptions::{name} is {value:?}; allowed: 100 ms to 1 hour"
                ));
            }
        }
        if let Reconnect::Backoff {
            max_tries,
            initial,
            max,
        } = self.reconnect
        {
            if !(1..=1000).contains(&max_tries) {
                return bad(format!(
                    "Reconnect::Backoff max_tries is {max_tries}; allowed: 1 to 1000"
                ));
            }
            if initial > max || max > Duration::from_secs(3600) {
                return bad(format!(
                    "Reconnect::Backoff waits {initial:?} then up to {max:?}; allowed: initial <= max <= 1 hour"
                ));
            }
        }
        Ok(())
    }

    /// Checks `url` against the allowlist: the scheme it has, or why it is refused.
    pub(crate) fn admit(&self, url: &str) -> Result<Scheme> {
        if url.is_empty() || url.contains('\0') {
            return Err(Error::Config("the URL is empty or holds a NUL byte".into()));
        }
        match Scheme::of(url) {
            Some(scheme) if self.schemes.contains(&scheme) => Ok(scheme),
            Some(scheme) => Err(Error::Config(format!(
                "the URL's scheme {} is not allowed; allowed: {}",
                scheme.as_str(),
                self.allowed()
            ))),
            None => Err(Error::Config(format!(
                "the URL's scheme {} is not one framefeed pulls from; allowed: {}",
                url.split(':').next().unwrap_or_default(),
                self.allowed()
            ))),
        }
    }

    fn allowed(&self) -> String {
        let names: Vec<_> = self.schemes.iter().map(|s| s.as_str()).collect();
        names.join(", ")
    }

    /// FFmpeg's `protocol_whitelist` for a source of `scheme`: its own protocols, nothing else (an HLS
    /// playlist cannot make FFmpeg open a `file:` segment unless `file:` is the scheme).
    pub(crate) fn protocol_whitelist(scheme: Scheme) -> String {
        scheme.protocols().join(",")
    }

    /// The demuxer and protocol options FFmpeg is opened with for `scheme`.
    pub(crate) fn ffmpeg_options(&self, scheme: Scheme) -> Vec<(&'static str, String)> {
        let mut options = Vec::new();
        if scheme == Scheme::Rtsp {
            let transport = match self.rtsp_transport {
                RtspTransport::Tcp => "tcp",
                RtspTransport::Udp => "udp",
            };
            options.push(("rtsp_transport", transport.to_string()));
        }
        options
    }
}
