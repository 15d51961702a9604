//! Network sources: a video pulled by URL through FFmpeg's own protocols (RTSP, SRT, RTMP, HLS, HTTP(S),
//! `file:` when asked), with timeouts and a reconnect policy. The settings are [`UrlOptions`], validated once;
//! [`VideoInput::feed_url`](crate::VideoInput::feed_url) queues such a video, and the decoding thread opens,
//! reads and reopens it (`demux::open`).

use std::time::Duration;

use crate::error::{Error, Result};
use crate::video::Label;

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
}

impl Scheme {
    /// The schemes allowed by default: every network one, not `file:`.
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

crate::settings::choice::choices!(RtspTransport, "rtsp_transport", [
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

    /// Every network scheme, not `file:`; 10 s to open, 5 s of silence before a read fails, the default
    /// [`Reconnect`], RTSP over TCP.
    pub fn new() -> Self {
        Self {
            schemes: Scheme::NETWORK.to_vec(),
            open_timeout: Self::DEFAULT_OPEN_TIMEOUT,
            read_timeout: Self::DEFAULT_READ_TIMEOUT,
            reconnect: Reconnect::default(),
            rtsp_transport: RtspTransport::default(),
            label: None,
        }
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
                "the URL's scheme is not one framefeed pulls from; allowed: {}",
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

/// `url` as it may be shown (in labels, errors and logs): without the credentials of its user part, and
/// without its query, which may hold a passphrase or a token (`srt://h:1?passphrase=...` becomes `srt://h:1?…`).
///
/// ```
/// assert_eq!(framefeed::redact_url("rtsp://admin:pw@cam/1"), "rtsp://…@cam/1");
/// ```
pub fn redact_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, _)) => (base, "?…"),
        None => (url, ""),
    };
    let redacted = match authority(base) {
        Some(Authority {
            scheme,
            credentials: Some(_),
            after_credentials,
            ..
        }) => format!("{scheme}://…@{after_credentials}"),
        _ => base.to_owned(),
    };
    redacted + query
}

/// A URL's authority as FFmpeg reads it (`av_url_split`), the one parser of hosts in framefeed: the text
/// between `://` and the first `/`, `?` or `#`; credentials up to its last `@`; then a bracketed IPv6 host, or a
/// host up to the first `:` and a port after it.
///
/// Not the `url` crate: it follows WHATWG, and FFmpeg connects to the host *it* reads. The two disagree
/// (`http://evil.example\@10.0.0.1/` is `evil.example` to WHATWG and `10.0.0.1` to FFmpeg), so a host check
/// made on another parser's host could be walked around.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Authority<'a> {
    pub(crate) scheme: &'a str,
    /// `user[:password]`, without the `@`.
    pub(crate) credentials: Option<&'a str>,
    /// The host, without brackets; may be empty.
    pub(crate) host: &'a str,
    /// The port's text, when there is a `:` after the host.
    pub(crate) port: Option<&'a str>,
    /// Everything after the credentials' `@` (the whole rest of the URL when there are none).
    pub(crate) after_credentials: &'a str,
}

/// The authority of `url`, `None` when it has no `://`.
pub(crate) fn authority(url: &str) -> Option<Authority<'_>> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (credentials, after_credentials) = match rest[..end].rfind('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    let host_port = &after_credentials[..end - (rest.len() - after_credentials.len())];
    let (host, port) = match host_port.strip_prefix('[').and_then(|h| h.split_once(']')) {
        Some((host, after)) => (host, after.strip_prefix(':')),
        None => match host_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    Some(Authority {
        scheme,
        credentials,
        host,
        port,
        after_credentials,
    })
}

/// A video queued by URL.
#[derive(Debug, Clone)]
pub(crate) struct UrlSource {
    pub(crate) url: String,
    pub(crate) scheme: Scheme,
    pub(crate) options: UrlOptions,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_are_read_from_the_url_and_paths_are_files() {
        assert_eq!(Scheme::of("rtsp://cam/1"), Some(Scheme::Rtsp));
        assert_eq!(Scheme::of("SRT://h:1"), Some(Scheme::Srt));
        assert_eq!(Scheme::of("https://h/p.m3u8"), Some(Scheme::Https));
        assert_eq!(Scheme::of("/tmp/a.mp4"), Some(Scheme::File));
        assert_eq!(Scheme::of("file:/tmp/a.mp4"), Some(Scheme::File));
        assert_eq!(Scheme::of("gopher://h/"), None);
        assert_eq!(Scheme::of("concat:a|b"), Some(Scheme::File));
    }

    #[test]
    fn the_allowlist_refuses_files_by_default_and_names_what_is_allowed() {
        let options = UrlOptions::new();
        assert_eq!(options.admit("srt://127.0.0.1:9000"), Ok(Scheme::Srt));
        let refused = options.admit("/etc/passwd").unwrap_err().to_string();
        assert!(refused.contains("file is not allowed"), "{refused}");
        assert!(
            refused.contains("rtsp, srt, rtmp, http, https"),
            "{refused}"
        );
        assert!(options.admit("udp://1.2.3.4:5").is_err());
        let files = UrlOptions::new().schemes([Scheme::File]);
        assert_eq!(files.admit("/tmp/a.mp4"), Ok(Scheme::File));
        assert!(files.admit("http://h/").is_err());
    }

    #[test]
    fn credentials_and_queries_are_not_shown() {
        assert_eq!(
            redact_url("rtsp://admin:secret@10.0.0.5:554/stream1"),
            "rtsp://…@10.0.0.5:554/stream1"
        );
        assert_eq!(
            redact_url("srt://h:9000?passphrase=abcdefghij&mode=caller"),
            "srt://h:9000?…"
        );
        assert_eq!(
            redact_url("https://cdn.example/live/index.m3u8"),
            "https://cdn.example/live/index.m3u8"
        );
        assert_eq!(redact_url("/tmp/a@b.mp4"), "/tmp/a@b.mp4");
        assert_eq!(redact_url("rtsp://u:p@h#x/y"), "rtsp://…@h#x/y");
    }

    #[test]
    fn validation_names_the_ranges() {
        let short = UrlOptions::new().read_timeout(Duration::from_millis(10));
        assert!(short
            .validate()
            .unwrap_err()
            .to_string()
            .contains("100 ms to 1 hour"));
        let tries = UrlOptions::new().reconnect(Reconnect::Backoff {
            max_tries: 0,
            initial: Duration::from_secs(1),
            max: Duration::from_secs(2),
        });
        assert!(tries
            .validate()
            .unwrap_err()
            .to_string()
            .contains("1 to 1000"));
        assert!(UrlOptions::new().schemes([]).validate().is_err());
    }

    #[test]
    fn backoff_doubles_up_to_its_cap_and_stops_after_its_tries() {
        let policy = Reconnect::Backoff {
            max_tries: 4,
            initial: Duration::from_millis(500),
            max: Duration::from_secs(1),
        };
        let delays: Vec<_> = (0..5).map(|n| policy.delay(n)).collect();
        let ms = |m| Some(Duration::from_millis(m));
        assert_eq!(delays, [ms(500), ms(1000), ms(1000), ms(1000), None]);
        assert_eq!(Reconnect::Never.delay(0), None);
    }

    #[test]
    fn authorities_are_read_as_ffmpeg_reads_them() {
        let a = authority("rtsp://u:p@cam.local:8554/a?x=1").unwrap();
        assert_eq!(
            (a.credentials, a.host, a.port),
            (Some("u:p"), "cam.local", Some("8554"))
        );
        // WHATWG would read `evil.example` (a backslash is a slash to it); FFmpeg connects to 10.0.0.1.
        let a = authority("http://evil.example\\@10.0.0.1/x").unwrap();
        assert_eq!((a.host, a.port), ("10.0.0.1", None));
        // The port starts at the first colon, as in av_url_split.
        assert_eq!(authority("http://h:1:2/").unwrap().port, Some("1:2"));
        let a = authority("http://[::1]:80/x").unwrap();
        assert_eq!((a.host, a.port), ("::1", Some("80")));
        // Credentials end at the last `@` before the path.
        let a = authority("rtmp://a@b@h/app@x").unwrap();
        assert_eq!((a.credentials, a.host), (Some("a@b"), "h"));
        assert_eq!(authority("file.mp4"), None);
    }
}
