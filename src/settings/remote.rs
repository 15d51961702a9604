//! The settings of remote videos ([`RemoteOptions`]): how to reach a store and how to read from it, with their
//! defaults as constants the front ends take, validated once; and which URLs are remote objects
//! ([`is_remote_url`]). The source stage reads with them (`source::remote`, `source::store`).

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};

/// The settings of remote videos: how to reach and authenticate to the store, and how to read from it.
/// Credentials, region and endpoint are read from the environment as the clouds' own tools read them
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_ENDPOINT_URL`,
/// `GOOGLE_APPLICATION_CREDENTIALS`, `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ACCOUNT_KEY`, ...); an option
/// given here wins.
///
/// ```
/// use framefeed::RemoteOptions;
/// let options = RemoteOptions::new()
///     .option("endpoint_url", "http://127.0.0.1:9000")
///     .option("key", "minio")
///     .option("secret", "minio123")
///     .in_flight(8);
/// options.validate()?;
/// # Ok::<(), framefeed::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOptions {
    pub(crate) options: Vec<(String, String)>,
    pub(crate) ca_file: Option<PathBuf>,
    pub(crate) request_bytes: u64,
    pub(crate) in_flight: usize,
    pub(crate) memory_bytes: u64,
    pub(crate) timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) retries: usize,
    pub(crate) index_cache: Option<PathBuf>,
    pub(crate) seek_mode: SeekMode,
}

/// How the frames of a remote video whose container lists no packet index framefeed reads by ranges (Matroska
/// and WebM) are numbered: exactly, by reading the video through once to index it, or approximately, by time
/// from the container's Cues (its keyframe index) and the stream's frame rate, reading only the bytes the frames
/// need. An MP4 is exact either way (its `moov` lists every packet and is read by ranges), and so is a video
/// whose container has no Cues, no frame rate or no duration (read through, as exact does).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SeekMode {
    /// Every frame numbered as the `ffmpeg` CLI gives it (`-fps_mode passthrough`): a Matroska or WebM video is
    /// read through once to index it (once per video with an [index cache](RemoteOptions::index_cache)).
    #[default]
    Exact,
    /// Frame `i` of a Matroska or WebM video is the one shown at `start + i / frame rate` (its first keyframe's
    /// time, the track's frame rate), found by decoding from the keyframe the Cues list at or before it;
    /// the video has as many frames as its duration holds. On a constant-frame-rate video these are the exact
    /// frames and numbers; on one whose frames do not sit on that grid (a variable frame rate, a dropped frame),
    /// a frame is the one nearest its time, and a time no frame is near is a hole, as a damaged frame would be.
    /// TorchCodec's `seek_mode="approximate"`.
    Approximate,
}

impl SeekMode {
    /// Its name as the Python API and the CLI spell it (`"exact"`, `"approximate"`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Approximate => "approximate",
        }
    }
}

impl std::str::FromStr for SeekMode {
    type Err = Error;

    /// `"exact"` or `"approximate"`.
    fn from_str(name: &str) -> Result<Self> {
        match name {
            "exact" => Ok(Self::Exact),
            "approximate" => Ok(Self::Approximate),
            other => Err(Error::Config(format!(
                "seek_mode is {other:?}; allowed: \"exact\", \"approximate\""
            ))),
        }
    }
}

impl Default for RemoteOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl RemoteOptions {
    /// The largest request, by default (4 MiB: a second of 1080p H.264 at 30 Mbit/s, a tenth of a second
    /// over a 50 MB/s link).
    pub const DEFAULT_REQUEST_BYTES: u64 = 4 << 20;
    /// Requests in flight at once for one video, by default (an object store's throughput is per connection: a
    /// clip's GOP comes in eight parts at once).
    pub const DEFAULT_IN_FLIGHT: usize = 8;
    /// The memory one video's fetched bytes may hold, by default (64 MiB).
    pub const DEFAULT_MEMORY_BYTES: u64 = 64 << 20;
    /// How long one request may take, by default (a connection that stalls fails it, and it is retried).
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    /// How often a failed request (a 5xx, a 429 or 503 throttle, a reset) is tried again, by default, with
    /// exponential backoff.
    pub const DEFAULT_RETRIES: usize = 10;

    /// The defaults: credentials from the environment, 4 MiB requests, 8 in flight, 64 MiB, 30 s a request,
    /// 10 retries, no index cache.
    pub fn new() -> Self {
        Self {
            options: Vec::new(),
            ca_file: None,
            request_bytes: Self::DEFAULT_REQUEST_BYTES,
            in_flight: Self::DEFAULT_IN_FLIGHT,
            memory_bytes: Self::DEFAULT_MEMORY_BYTES,
            timeout: Self::DEFAULT_TIMEOUT,
            connect_timeout: Duration::from_secs(10),
            retries: Self::DEFAULT_RETRIES,
            index_cache: None,
            seek_mode: SeekMode::Exact,
        }
    }

    /// A store option: the object store's own names (`aws_access_key_id`, `aws_endpoint`, `region`,
    /// `google_service_account`, `azure_storage_account_key`... as `object_store` names them) or fsspec's
    /// (`key`, `secret`, `token`, `endpoint_url`, `region_name`, `anon`; `account_name`, `account_key`,
    /// `sas_token` for Azure). An unknown name fails the video's opening, naming it.
    #[must_use]
    pub fn option(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((name.into(), value.into()));
        self
    }

    /// Trusts the certificate authorities in this PEM file for HTTPS, besides the system's (a private CA, a
    /// test server's). `SSL_CERT_FILE` is read too.
    #[must_use]
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_file = Some(path.into());
        self
    }

    /// The largest request, in bytes (64 KiB to 256 MiB).
    #[must_use]
    pub fn request_bytes(mut self, bytes: u64) -> Self {
        self.request_bytes = bytes;
        self
    }

    /// Requests in flight at once for one video (1 to 64).
    #[must_use]
    pub fn in_flight(mut self, requests: usize) -> Self {
        self.in_flight = requests;
        self
    }

    /// The memory one video's fetched bytes may hold (at least two requests' worth, at most 16 GiB): fetching
    /// ahead waits for room.
    #[must_use]
    pub fn memory_bytes(mut self, bytes: u64) -> Self {
        self.memory_bytes = bytes;
        self
    }

    /// How long one request may take (100 ms to 1 hour), and how long connecting may take (the same or less).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self.connect_timeout = self.connect_timeout.min(timeout);
        self
    }

    /// How often a failed request is tried again (0 to 100).
    #[must_use]
    pub fn retries(mut self, retries: usize) -> Self {
        self.retries = retries;
        self
    }

    /// Keeps what opening each video reads (its index) in this directory, keyed by URL, length and ETag (or
    /// Last-Modified), so that opening it again (a dataset's next epoch) costs one `HEAD` request. A video
    /// whose container framefeed indexes by reading it through (Matroska, MPEG-TS, AVI) also keeps the packet
    /// index that gave, so that it is read through once, not at every opening.
    #[must_use]
    pub fn index_cache(mut self, dir: impl Into<PathBuf>) -> Self {
        self.index_cache = Some(dir.into());
        self
    }

    /// How a Matroska or WebM video's frames are numbered ([`SeekMode`]): by default exactly, reading it through
    /// once to index it; [`SeekMode::Approximate`] numbers them by time from its Cues instead, reading only
    /// what the frames need.
    #[must_use]
    pub fn seek_mode(mut self, mode: SeekMode) -> Self {
        self.seek_mode = mode;
        self
    }

    /// The [`SeekMode`] these options read with (set by [`seek_mode`](Self::seek_mode)).
    pub fn get_seek_mode(&self) -> SeekMode {
        self.seek_mode
    }

    /// Checks every setting, naming the allowed range of one that is out of it.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Config(format!("RemoteOptions: {what}")));
        if !(64 << 10..=256 << 20).contains(&self.request_bytes) {
            return bad(&format!(
                "request_bytes is {}; allowed: 64 KiB to 256 MiB",
                self.request_bytes
            ));
        }
        if !(1..=64).contains(&self.in_flight) {
            return bad(&format!(
                "in_flight is {}; allowed: 1 to 64",
                self.in_flight
            ));
        }
        if !(2 * self.request_bytes..=16 << 30).contains(&self.memory_bytes) {
            return bad(&format!(
                "memory_bytes is {}; allowed: twice request_bytes ({}) to 16 GiB",
                self.memory_bytes,
                2 * self.request_bytes
            ));
        }
        let timeouts = Duration::from_millis(100)..=Duration::from_secs(3600);
        if !timeouts.contains(&self.timeout) {
            return bad(&format!(
                "timeout is {:?}; allowed: 100 ms to 1 hour",
                self.timeout
            ));
        }
        if self.retries > 100 {
            return bad(&format!("retries is {}; allowed: 0 to 100", self.retries));
        }
        Ok(())
    }
}

/// Whether `url` names an object framefeed reads by ranges: `s3://`, `gs://`, `az://` (and their aliases),
/// and `http(s)://` but for a playlist (HLS `.m3u8`, DASH `.mpd`), which FFmpeg's protocols follow.
pub fn is_remote_url(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    match scheme.to_ascii_lowercase().as_str() {
        "s3" | "s3a" | "gs" | "gcs" | "az" | "azure" | "abfs" | "abfss" | "adl" => true,
        "http" | "https" => {
            let path = rest
                .split(['?', '#'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            !(path.ends_with(".m3u8") || path.ends_with(".m3u") || path.ends_with(".mpd"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_validated_with_their_ranges() {
        let e = RemoteOptions::new()
            .in_flight(0)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 to 64"), "{e}");
        let e = RemoteOptions::new()
            .memory_bytes(1)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("twice request_bytes"), "{e}");
        let e = RemoteOptions::new()
            .request_bytes(10)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("64 KiB to 256 MiB"), "{e}");
        assert!(RemoteOptions::new().validate().is_ok());
    }

    #[test]
    fn object_urls_are_told_from_playlists_and_paths() {
        assert!(is_remote_url("s3://bucket/a.mp4"));
        assert!(is_remote_url("gs://bucket/a.mp4"));
        assert!(is_remote_url("az://container/a.mp4"));
        assert!(is_remote_url("https://cdn.example/a.mp4?sig=1"));
        assert!(!is_remote_url("https://cdn.example/live/index.m3u8"));
        assert!(!is_remote_url("rtsp://cam/1"));
        assert!(!is_remote_url("/data/a.mp4"));
    }
}
