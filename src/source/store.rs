//! The network side of remote videos: the Arrow project's `object_store` client (S3, GCS, Azure, HTTP over
//! rustls with ring; retries with exponential backoff on 5xx, 429 and 503 SlowDown, connection resets and
//! timeouts) on a small tokio runtime of its own, made again in a forked child (the parent's threads are not
//! there). Opening an object is one request: a `GET` of its first bytes, whose answer gives its length, ETag and
//! Last-Modified as a `HEAD`'s would (the first bytes are what the demuxer reads first), or a `HEAD` where an
//! index cache may hold those bytes already, or where that `GET` was not answered with a range. Every range
//! request then carries `If-Match` with that ETag, and an answer for another version fails the video rather
//! than mixing two. A server that ignores `Range` (200 with the whole body) is read through once into an
//! unnamed temporary file, with a warning, and the ranges are read from there.

use std::ops::Range;
use std::str::FromStr;
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ClientOptions, GetOptions, GetRange, ObjectStore, RetryConfig};
use parking_lot::Mutex;

use super::index_cache;
use super::remote::{Done, Fetch, FetchError, RemoteSource, RemoteStats, OPEN_REQUEST};
use crate::error::VideoError;
use crate::error::{Error, Result as CrateResult};
use crate::settings::remote::RemoteOptions;
use crate::source::url::redact_url;

/// The runtime remote reads run on, and the process it was made in.
static RUNTIME: Mutex<Option<(u32, tokio::runtime::Handle)>> = Mutex::new(None);

/// This process's runtime (made on first use, and again in a forked child: the parent's is leaked there, its
/// threads being gone).
fn runtime() -> Result<tokio::runtime::Handle, String> {
    let pid = std::process::id();
    let mut slot = RUNTIME.lock();
    if let Some((made_in, handle)) = &*slot {
        if *made_in == pid {
            return Ok(handle.clone());
        }
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("framefeed-remote")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the remote reads' runtime: {e}"))?;
    let handle = runtime.handle().clone();
    // Lives as long as the process (a forked child's copy is never dropped: it would join absent threads).
    std::mem::forget(runtime);
    *slot = Some((pid, handle.clone()));
    Ok(handle)
}

/// Opens the object at `url` (one `HEAD`): the source that reads it by ranges, and its length.
/// Why an object could not be opened.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The store answered about the object (not found, forbidden, bad credentials), or the settings are wrong.
    Answered(VideoError),
    /// The `HEAD` did not describe an object (no length, refused, unreachable): an HTTP URL may still be a live
    /// stream that FFmpeg pulls.
    NotAnObject(VideoError),
}

impl From<OpenError> for VideoError {
    fn from(error: OpenError) -> Self {
        match error {
            OpenError::Answered(e) | OpenError::NotAnObject(e) => e,
        }
    }
}

/// `stop` says when to give up waiting (the operator stopped).
pub(crate) fn open(
    url: &str,
    options: &RemoteOptions,
    stop: &dyn Fn() -> bool,
) -> Result<(RemoteSource, u64), OpenError> {
    let shown = redact_url(url);
    let unavailable = |reason: String| VideoError::SourceUnavailable {
        url: shown.clone(),
        attempts: 1,
        reason,
    };
    let handle = runtime().map_err(|e| OpenError::Answered(unavailable(e)))?;
    let (store, path) = build(url, options).map_err(|e| OpenError::Answered(unavailable(e)))?;
    // What the store said of the object itself is its answer; anything else (no length, a HEAD refused) may
    // be a live stream behind an HTTP URL, which FFmpeg pulls instead.
    let answered = |e: &object_store::Error| {
        matches!(
            e,
            object_store::Error::NotFound { .. }
                | object_store::Error::PermissionDenied { .. }
                | object_store::Error::Unauthenticated { .. }
        )
    };
    // Without an index cache, the first bytes are asked for at once: their answer says what a HEAD would.
    let mut first = None;
    let mut ranges_ignored = false;
    if options.index_cache.is_none() {
        let (store, path) = (store.clone(), path.clone());
        let get = GetOptions {
            range: Some(GetRange::Bounded(
                0..OPEN_REQUEST.min(options.request_bytes),
            )),
            ..GetOptions::default()
        };
        let got = block_on(&handle, stop, async move {
            let got = store.get_opts(&path, get).await?;
            let meta = got.meta.clone();
            got.bytes().await.map(|data| (meta, data))
        })
        .map_err(|e| OpenError::NotAnObject(unavailable(e)))?;
        match got {
            Ok(got) => first = Some(got),
            Err(e) if answered(&e) => return Err(OpenError::Answered(unavailable(describe(&e)))),
            // The server ignores ranges (read through at the first read, with a warning), or no range
            // could be given (an empty object): the HEAD says what the object is.
            Err(e) => ranges_ignored = ignores_range(&describe(&e)),
        }
    }
    let (head, first) = match first {
        Some((meta, data)) => (meta, Some(data)),
        None => {
            let (store, path) = (store.clone(), path.clone());
            let head = GetOptions {
                head: true,
                ..GetOptions::default()
            };
            let meta = block_on(&handle, stop, async move {
                store.get_opts(&path, head).await.map(|got| got.meta)
            })
            .map_err(|e| OpenError::NotAnObject(unavailable(e)))?
            .map_err(|e| {
                let error = unavailable(describe(&e));
                if answered(&e) {
                    OpenError::Answered(error)
                } else {
                    OpenError::NotAnObject(error)
                }
            })?;
            (meta, None)
        }
    };
    let len = head.size;
    let version = head
        .e_tag
        .clone()
        .or_else(|| head.last_modified.timestamp_micros().to_string().into())
        .unwrap_or_default();
    let cache = options
        .index_cache
        .as_deref()
        .map(|dir| index_cache::Entry::new(dir, &shown, len, &version));
    let cached = cache
        .as_ref()
        .and_then(index_cache::Entry::load)
        .unwrap_or_default();
    let fetch = StoreFetch {
        store,
        path,
        etag: head.e_tag,
        handle,
        shown: shown.clone(),
        whole: Arc::default(),
        ranges_ignored,
    };
    let first_len = first.as_ref().map(|data| data.len() as u64);
    let cached = match first {
        Some(data) => vec![(0, data)],
        None => cached,
    };
    let source = RemoteSource::new(Box::new(fetch), len, shown, options.clone(), cached, cache);
    if let Some(bytes) = first_len {
        source.count_request(bytes);
    }
    Ok((source, len))
}

/// Runs `future` on `handle` from a thread outside it, waiting for its output until `stop` says to give up
/// (the future is then dropped, which ends its request).
fn block_on<T: Send + 'static>(
    handle: &tokio::runtime::Handle,
    stop: &dyn Fn() -> bool,
    future: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let task = handle.spawn(async move {
        let _ = tx.send(future.await);
    });
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(20)) {
            Ok(value) => return Ok(value),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if !stop() => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                task.abort();
                return Err("stopped".to_owned());
            }
            Err(_) => return Err("the remote reads' runtime stopped".to_owned()),
        }
    }
}

/// An object store error, said briefly (its source chain, without repeating the store's name).
fn describe(error: &object_store::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    tidy(&text)
}

/// An object store's error `text` as framefeed shows it: every URL in it (the request's, which may hold
/// credentials or a presigned URL's signature) redacted as [`redact_url`] does, an HTML page the server sent
/// left out (an XML error, S3's, is kept: it says what was wrong), on one line; where no credentials were given
/// and the store asked the cloud's instance metadata service for them, a line that says so.
fn tidy(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |i| i + 1);
        let end = rest[at..]
            .find(char::is_whitespace)
            .map_or(rest.len(), |i| at + i);
        shown.push_str(&rest[..start]);
        shown.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    shown.push_str(rest);
    let lower = shown.to_ascii_lowercase();
    if let Some(page) = ["<!doctype html", "<html"]
        .iter()
        .filter_map(|tag| lower.find(tag))
        .min()
    {
        shown.truncate(page);
        shown.push_str("(the server's HTML page left out)");
    }
    let mut shown = shown
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        // The HTTP store's object is the whole URL, so its path, which this names, is empty.
        .replace("Object at location not found", "not found");
    if shown.contains("169.254.169.254") {
        shown.push_str(
            " (no credentials were given, in the options or the environment, so the store asked the cloud's \
             instance metadata service for them: set the cloud's credentials, or anon=true for a public bucket)",
        );
    }
    shown
}

/// fsspec's option names (s3fs, gcsfs, adlfs) as the object store's.
fn store_option(scheme: &str, name: &str) -> String {
    let name = name.to_ascii_lowercase();
    let mapped = match (scheme, name.as_str()) {
        ("s3", "key") => "aws_access_key_id",
        ("s3", "secret") => "aws_secret_access_key",
        ("s3", "token") => "aws_session_token",
        ("s3", "endpoint_url") => "aws_endpoint",
        ("s3", "region_name") => "aws_region",
        ("s3", "anon") => "aws_skip_signature",
        ("gs", "token") => "google_service_account",
        ("gs", "anon") => "google_skip_signature",
        ("az", "account_name") => "azure_storage_account_name",
        ("az", "account_key") => "azure_storage_account_key",
        ("az", "sas_token") => "azure_storage_sas_key",
        ("az", "anon") => "azure_skip_signature",
        _ => return name,
    };
    mapped.to_owned()
}

/// The store and the object's path for `url`, with `options` and the environment.
fn build(url: &str, options: &RemoteOptions) -> Result<(Arc<dyn ObjectStore>, Path), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    let scheme = match parsed.scheme() {
        "s3" | "s3a" => "s3",
        "gs" | "gcs" => "gs",
        "az" | "azure" | "abfs" | "abfss" | "adl" => "az",
        "http" | "https" => "http",
        other => return Err(format!("framefeed reads no objects over {other}://")),
    };
    let mut client = ClientOptions::new()
        .with_timeout(options.timeout)
        .with_connect_timeout(options.connect_timeout);
    let mut bundles = Vec::new();
    if let Some(path) = &options.ca_file {
        bundles.push(path.clone());
    }
    if let Some(path) = std::env::var_os("SSL_CERT_FILE") {
        bundles.push(path.into());
    }
    for path in bundles {
        let pem = std::fs::read(&path)
            .map_err(|e| format!("cannot read the CA file {}: {e}", path.display()))?;
        for cert in object_store::Certificate::from_pem_bundle(&pem).map_err(|e| {
            format!(
                "the CA file {} holds no PEM certificates: {e}",
                path.display()
            )
        })? {
            client = client.with_root_certificate(cert);
        }
    }
    let retry = RetryConfig {
        max_retries: options.retries,
        retry_timeout: options.timeout.saturating_mul(options.retries as u32 + 1),
        ..RetryConfig::default()
    };
    let mut pairs: Vec<(String, String)> = options
        .options
        .iter()
        .map(|(k, v)| (store_option(scheme, k), v.clone()))
        .collect();
    // An endpoint over plain HTTP (a local S3 server) says so itself.
    let plain_endpoint = pairs
        .iter()
        .any(|(k, v)| k.ends_with("endpoint") && v.starts_with("http://"))
        || std::env::var("AWS_ENDPOINT_URL").is_ok_and(|v| v.starts_with("http://"))
        || std::env::var("AWS_ENDPOINT").is_ok_and(|v| v.starts_with("http://"));
    if scheme == "http" && parsed.scheme() == "http" || scheme == "s3" && plain_endpoint {
        client = client.with_allow_http(true);
    }
    // The HTTP client's own options (`allow_http`, `proxy_url`, `user_agent`...) go to the client options
    // given to every store below, which would otherwise replace what a builder took of them.
    pairs.retain(|(k, v)| match object_store::ClientConfigKey::from_str(k) {
        Ok(key) => {
            client = std::mem::take(&mut client).with_config(key, v.clone());
            false
        }
        Err(_) => true,
    });
    // An option of another store (one dict for s3:// and https:// URLs alike) is left out; an option no store
    // knows fails the opening, naming it.
    let known_elsewhere = |name: &str| {
        ["s3", "gs", "az"].iter().any(|other| {
            let mapped = store_option(other, name);
            object_store::aws::AmazonS3ConfigKey::from_str(&mapped).is_ok()
                || object_store::gcp::GoogleConfigKey::from_str(&mapped).is_ok()
                || object_store::azure::AzureConfigKey::from_str(&mapped).is_ok()
        })
    };
    let unknown = |name: &str| {
        format!("unknown {scheme}:// option {name:?} (give the object store's or fsspec's name)")
    };
    // The builder with the options its store knows, the client options and the retries, built.
    macro_rules! store {
        ($builder:expr, $key:ty) => {{
            let mut builder = $builder;
            for (k, v) in pairs.drain(..) {
                match <$key>::from_str(&k) {
                    Ok(key) => builder = builder.with_config(key, v),
                    Err(_) if known_elsewhere(&k) => {
                        tracing::debug!(option = k, "another store's option: left out")
                    }
                    Err(_) => return Err(unknown(&k)),
                }
            }
            let built = builder
                .with_http_connector(super::store_http::Connector)
                .with_client_options(client)
                .with_retry(retry)
                .build();
            Arc::new(built.map_err(|e| describe(&e))?)
        }};
    }
    let store: Arc<dyn ObjectStore> = match scheme {
        "s3" => store!(
            object_store::aws::AmazonS3Builder::from_env().with_url(url),
            object_store::aws::AmazonS3ConfigKey
        ),
        "gs" => store!(
            object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url),
            object_store::gcp::GoogleConfigKey
        ),
        "az" => store!(
            object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url),
            object_store::azure::AzureConfigKey
        ),
        _ => {
            for (k, v) in pairs.drain(..) {
                match object_store::ClientConfigKey::from_str(&k) {
                    Ok(key) => client = client.with_config(key, v),
                    Err(_) if known_elsewhere(&k) => {
                        tracing::debug!(option = k, "another store's option: left out")
                    }
                    Err(_) => return Err(unknown(&k)),
                }
            }
            // The whole URL, query included (a presigned URL's signature), is the object: its path is empty.
            let store = object_store::http::HttpBuilder::new()
                .with_url(url)
                .with_http_connector(super::store_http::Connector)
                .with_client_options(client)
                .with_retry(retry)
                .build()
                .map_err(|e| describe(&e))?;
            return Ok((Arc::new(store), Path::default()));
        }
    };
    let (_, path) =
        object_store::ObjectStoreScheme::parse(&parsed).map_err(|e| tidy(&e.to_string()))?;
    Ok((store, path))
}

/// Range requests to one object, pinned to the version opened.
#[derive(Debug)]
struct StoreFetch {
    store: Arc<dyn ObjectStore>,
    path: Path,
    etag: Option<String>,
    handle: tokio::runtime::Handle,
    shown: String,
    /// The object read through once, when the server ignored a range.
    whole: Arc<tokio::sync::OnceCell<Result<Arc<std::fs::File>, FetchError>>>,
    /// Opening found that the server ignores ranges: the first read reads the object through at once.
    ranges_ignored: bool,
}

impl Fetch for StoreFetch {
    fn start(&self, range: Range<u64>, done: Done) {
        let store = self.store.clone();
        let path = self.path.clone();
        let etag = self.etag.clone();
        let whole = self.whole.clone();
        let shown = self.shown.clone();
        let ranges_ignored = self.ranges_ignored;
        self.handle.spawn(async move {
            let result = match whole.get() {
                Some(file) => read_from(file, range),
                None => {
                    let ranged = if ranges_ignored {
                        Err(Ignored)
                    } else {
                        get_range(&*store, &path, etag.as_deref(), range.clone()).await
                    };
                    match ranged {
                        Err(Ignored) => {
                            let file = whole
                                .get_or_init(|| {
                                    read_through(&*store, &path, etag.as_deref(), &shown)
                                })
                                .await;
                            read_from(file, range)
                        }
                        Ok(result) => result,
                    }
                }
            };
            done(result);
        });
    }
}

/// The server ignored `Range`.
struct Ignored;

/// Whether an error, as [`describe`] says it, is the store's finding that the server ignored `Range`.
fn ignores_range(error: &str) -> bool {
    error.contains("non-partial response") || error.contains("Range request not supported")
}

async fn get_range(
    store: &dyn ObjectStore,
    path: &Path,
    etag: Option<&str>,
    range: Range<u64>,
) -> Result<Result<Bytes, FetchError>, Ignored> {
    let options = GetOptions {
        range: Some(GetRange::Bounded(range)),
        if_match: etag.map(str::to_owned),
        ..GetOptions::default()
    };
    let got = match store.get_opts(path, options).await {
        Ok(got) => got,
        Err(e) => return classify(e),
    };
    if let (Some(opened), Some(now)) = (etag, got.meta.e_tag.as_deref()) {
        if opened != now {
            return Ok(Err(FetchError::Changed(format!(
                "ETag {opened} became {now}"
            ))));
        }
    }
    Ok(got
        .bytes()
        .await
        .map_err(|e| FetchError::Failed(describe(&e))))
}

fn classify(error: object_store::Error) -> Result<Result<Bytes, FetchError>, Ignored> {
    let text = describe(&error);
    if ignores_range(&text) {
        return Err(Ignored);
    }
    Ok(Err(match error {
        object_store::Error::Precondition { .. } => {
            FetchError::Changed("its ETag no longer matches (412 Precondition Failed)".into())
        }
        _ => FetchError::Failed(text),
    }))
}

/// The whole object streamed into an unnamed temporary file (a server that ignores `Range`).
async fn read_through(
    store: &dyn ObjectStore,
    path: &Path,
    etag: Option<&str>,
    shown: &str,
) -> Result<Arc<std::fs::File>, FetchError> {
    use std::io::Write;
    tracing::warn!(
        url = shown,
        "the server ignores range requests: reading the video through once"
    );
    let failed = |e: String| {
        FetchError::Failed(format!(
            "reading the whole object (its server ignores Range): {e}"
        ))
    };
    let options = GetOptions {
        if_match: etag.map(str::to_owned),
        ..GetOptions::default()
    };
    let got = store
        .get_opts(path, options)
        .await
        .map_err(|e| failed(describe(&e)))?;
    let mut file = tempfile::tempfile().map_err(|e| failed(e.to_string()))?;
    let mut stream = got.into_stream();
    while let Some(chunk) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
        let chunk = chunk.map_err(|e| failed(describe(&e)))?;
        file.write_all(&chunk).map_err(|e| failed(e.to_string()))?;
    }
    Ok(Arc::new(file))
}

fn read_from(
    file: &Result<Arc<std::fs::File>, FetchError>,
    range: Range<u64>,
) -> Result<Bytes, FetchError> {
    let file = file.as_ref().map_err(Clone::clone)?;
    let mut buf = vec![0; (range.end - range.start) as usize];
    std::os::unix::fs::FileExt::read_exact_at(&**file, &mut buf, range.start)
        .map_err(|e| FetchError::Failed(format!("the object read through is shorter: {e}")))?;
    Ok(buf.into())
}

impl crate::Encoded {
    /// The remote object at `url` (`s3://`, `gs://`, `az://`, `https://`...; see [`RemoteOptions`]), opened now
    /// with one `HEAD` request and read by byte ranges as it is decoded: only its index and the packets of
    /// the GOPs its frames need are fetched, never the whole object (unless its server ignores `Range`).
    /// Labelled with the URL, without credentials or query. Fails (`source_unavailable`) when the object cannot
    /// be reached or found, naming it.
    ///
    /// ```no_run
    /// use framefeed::{Config, Encoded, RemoteOptions, VideoInput};
    /// let input = VideoInput::new(Config::new(16, 2))?;
    /// input.feed(Encoded::remote("s3://videos/train/0001.mp4", &RemoteOptions::new())?)?;
    /// # Ok::<(), framefeed::Error>(())
    /// ```
    pub fn remote(url: &str, options: &RemoteOptions) -> CrateResult<Self> {
        Ok(Self::remote_with_stats(url, options)?.0)
    }

    /// [`reader`](Self::reader), a Matroska or WebM video's frames numbered as `mode` says
    /// ([`SeekMode::Approximate`](crate::SeekMode::Approximate): by time from its Cues, reading only what the
    /// frames need, rather than reading it through to index it). Other containers are exact either way.
    pub fn reader_with_seek_mode(
        source: impl crate::ReadAt + 'static,
        len: u64,
        mode: crate::SeekMode,
    ) -> Self {
        Self::reader_keeping_index(source, len, None, mode == crate::SeekMode::Approximate)
    }

    /// Like [`remote`](Self::remote), with the counters of what reading it costs (requests, bytes).
    pub fn remote_with_stats(
        url: &str,
        options: &RemoteOptions,
    ) -> CrateResult<(Self, Arc<RemoteStats>)> {
        options.validate()?;
        let shown = crate::redact_url(url);
        let failed = |error| Error::Video {
            video: crate::VideoRef {
                id: crate::VideoId(0),
                label: Some(shown.clone().into()),
            },
            error,
        };
        let (source, len) = open(url, options, &|| false).map_err(|e| failed(e.into()))?;
        let stats = source.stats();
        let kept = source.kept_index();
        Ok((
            Self::reader_keeping_index(
                source,
                len,
                kept,
                options.seek_mode == crate::SeekMode::Approximate,
            )
            .label(shown.clone()),
            stats,
        ))
    }
}

/// The most objects [`list_remote`] gives (a prefix holding more is refused rather than listed without end):
/// ten million names, about a gigabyte of URLs.
const MAX_LISTED: usize = 10_000_000;

/// The objects under `url` (`s3://bucket/videos/`, `gs://...`, `az://...`), as URLs of the same spelling, in
/// name order, those with a path part starting with `.` left out; `url` itself where it names one object.
/// Credentials and endpoint as for reading ([`RemoteOptions`] and the environment). An `http(s)://` URL names
/// one object (HTTP has no listing): it is given back as it is. A prefix that holds nothing, or an object
/// that does not exist, is an error ([`VideoError::SourceUnavailable`], naming the URL).
///
/// ```no_run
/// use framefeed::{list_remote, RemoteOptions};
/// for url in list_remote("s3://videos/train/", &RemoteOptions::new())? {
///     println!("{url}");
/// }
/// # Ok::<(), framefeed::Error>(())
/// ```
pub fn list_remote(url: &str, options: &RemoteOptions) -> CrateResult<Vec<String>> {
    options.validate()?;
    let shown = redact_url(url);
    let failed = |reason: String| Error::Video {
        video: crate::VideoRef {
            id: crate::VideoId(0),
            label: Some(shown.clone().into()),
        },
        error: VideoError::SourceUnavailable {
            url: shown.clone(),
            attempts: 1,
            reason,
        },
    };
    let parsed = url::Url::parse(url).map_err(|e| failed(format!("not a URL: {e}")))?;
    if matches!(parsed.scheme(), "http" | "https") {
        return Ok(vec![url.to_owned()]);
    }
    let handle = runtime().map_err(failed)?;
    let (store, path) = build(url, options).map_err(failed)?;
    let prefix = path.as_ref().len();
    let prefix_only = url.ends_with('/') || path.as_ref().is_empty();
    let listed = block_on(&handle, &|| false, async move {
        // The object itself, if `url` names one (a URL ending in `/` names a prefix). Another answer than the
        // object's (a prefix's: some servers answer without a length) is said only if nothing is under it.
        let mut head_error = None;
        if !prefix_only {
            let head = GetOptions {
                head: true,
                ..GetOptions::default()
            };
            match store.get_opts(&path, head).await {
                Ok(_) => return Ok(None),
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => head_error = Some(describe(&e)),
            }
        }
        let mut names = Vec::new();
        let mut stream = store.list(Some(&path));
        while let Some(meta) = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
            let meta = meta.map_err(|e| describe(&e))?;
            if names.len() == MAX_LISTED {
                return Err(format!("more than {MAX_LISTED} objects under it"));
            }
            names.push(meta.location.to_string());
        }
        match head_error {
            Some(error) if names.is_empty() => Err(error),
            _ => Ok(Some(names)),
        }
    })
    .map_err(failed)?
    .map_err(failed)?;
    let Some(mut names) = listed else {
        return Ok(vec![url.to_owned()]);
    };
    names.retain(|name| {
        // What follows the prefix (every listed name starts with it).
        !name
            .get(prefix..)
            .unwrap_or(name)
            .split('/')
            .any(|part| part.starts_with('.'))
    });
    if names.is_empty() {
        return Err(failed("no such object, and no objects under it".to_owned()));
    }
    names.sort();
    Ok(names
        .into_iter()
        .map(|name| {
            let mut object = parsed.clone();
            object.set_path(&name);
            object.set_query(None);
            object.to_string()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::tidy;

    #[test]
    fn an_errors_urls_lose_their_credentials_and_query_and_an_html_page_is_left_out() {
        let said = "Object at location  not found: Error performing GET \
            http://user:pw-SECRET1@127.0.0.1:8080/missing.mp4?X-Amz-Signature=SECRET2 in 861µs - Server \
            returned non-2xx status code: 404 Not Found: <html>\n<head><title>404 Not Found</title></head>\n</html>";
        let shown = tidy(said);
        assert!(!shown.contains("SECRET"), "{shown}");
        assert_eq!(
            shown,
            "not found: Error performing GET http://…@127.0.0.1:8080/missing.mp4?… in 861µs - Server returned \
             non-2xx status code: 404 Not Found: (the server's HTML page left out)"
        );
        // Every URL, wherever it stands; S3's XML error is kept.
        let said = "(s3://k:s@b/x?t=1) PUT https://h/a?sig=2: <?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code></Error>";
        assert_eq!(
            tidy(said),
            "(s3://…@b/x?… PUT https://h/a?… <?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code></Error>"
        );
        assert_eq!(tidy("plain words"), "plain words");
        assert!(tidy("PUT http://169.254.169.254/latest/api/token: 403")
            .contains("no credentials were given"));
    }
}
