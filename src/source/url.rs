//! Network sources: a video pulled by URL through FFmpeg's own protocols (RTSP, SRT, RTMP, HLS, HTTP(S),
//! `file:` when asked), with timeouts and a reconnect policy. The settings are [`UrlOptions`] (`settings::url`),
//! validated once;
//! [`VideoInput::feed_url`](crate::VideoInput::feed_url) queues such a video, and the decoding thread opens,
//! reads and reopens it (`demux::open`).

pub(crate) use crate::settings::url::{Reconnect, Scheme, UrlOptions};

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
    use std::time::Duration;

    #[test]
    fn schemes_are_read_from_the_url_and_paths_are_files() {
        assert_eq!(Scheme::of("rtsp://cam/1"), Some(Scheme::Rtsp));
        assert_eq!(Scheme::of("SRT://h:1"), Some(Scheme::Srt));
        assert_eq!(Scheme::of("https://h/p.m3u8"), Some(Scheme::Https));
        assert_eq!(Scheme::of("/tmp/a.mp4"), Some(Scheme::File));
        assert_eq!(Scheme::of("file:/tmp/a.mp4"), Some(Scheme::File));
        assert_eq!(Scheme::of("gopher://h/"), None);
        // FFmpeg's own protocols are named, not taken for a file path with a colon in it.
        assert_eq!(Scheme::of("concat:a|b"), None);
        assert_eq!(Scheme::of("data:video/mp4;base64,AAAA"), None);
        assert_eq!(Scheme::of("subfile:,start,0,end,9,:/etc/passwd"), None);
        assert_eq!(Scheme::of("clip:1.mp4"), Some(Scheme::File));
        let refused = UrlOptions::new()
            .schemes([Scheme::File])
            .admit("data:video/mp4;base64,AAAA")
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("the URL's scheme data is not one framefeed pulls from"),
            "{refused}"
        );
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
