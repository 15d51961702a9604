//! `framefeed serve` as a process on loopback, and raw HTTP/1.1 exchanges with it (byte for byte what a
//! client sends, for the tests of hostile and streaming clients).

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// Every wait of the service tests is bounded by this.
pub const BOUND: Duration = Duration::from_secs(60);

/// `framefeed serve ARGS` on loopback.
pub fn serve(args: &[&str]) -> Serve {
    Serve::spawn(env!("CARGO_BIN_EXE_framefeed"), args)
}

/// [`serve`] with these environment variables set for the server (an object store's endpoint and keys).
pub fn serve_with_env(args: &[&str], envs: &[(&str, &str)]) -> Serve {
    Serve::spawn_with_env(env!("CARGO_BIN_EXE_framefeed"), args, envs)
}

/// The value of the metric `name` (no labels) in a Prometheus text from `/metrics`.
pub fn metric_value(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} missing from:\n{text}"))
}

/// A `framefeed serve` process, killed when dropped.
pub struct Serve {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Serve {
    /// Starts `BINARY serve --addr 127.0.0.1:0 ARGS` (the test's `env!("CARGO_BIN_EXE_framefeed")`) and waits
    /// for its address.
    pub fn spawn(binary: &str, args: &[&str]) -> Self {
        Self::spawn_with_env(binary, args, &[])
    }

    /// [`spawn`](Self::spawn) with `envs` set for the server.
    pub fn spawn_with_env(binary: &str, args: &[&str], envs: &[(&str, &str)]) -> Self {
        let mut child = Command::new(binary)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .envs(envs.iter().copied())
            .env("RUST_LOG", "warn,ffmpeg=off")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("framefeed serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .parse()
            .unwrap();
        Self { child, addr }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A parsed response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then_some(v.trim())
        })
    }

    /// The body's JSON lines (a chunked body is de-chunked first).
    pub fn lines(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    pub fn error(&self) -> Value {
        self.lines()
            .into_iter()
            .find_map(|l| l.get("error").cloned())
            .unwrap_or_else(|| panic!("no error line in {self:?}"))
    }
}

/// Sends `start_line`, `headers` (plus Host and `Connection: close`) and `body` over `stream`, reads the whole
/// response.
pub async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    start_line: &str,
    headers: &[&str],
    body: &[u8],
) -> Response {
    let mut head = format!("{start_line}Host: test\r\nConnection: close\r\n");
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    stream.flush().await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(BOUND, stream.read_to_end(&mut raw))
        .await
        .expect("a response within the bound")
        .unwrap();
    parse_response(&raw)
}

pub fn parse_response(raw: &[u8]) -> Response {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {text:?}"));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap();
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Response {
        status,
        head: head.to_owned(),
        body,
    }
}

pub fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].strip_prefix("\r\n").unwrap_or(&rest[size..]);
    }
    out
}

/// One request over a new plain connection.
pub async fn request(
    addr: SocketAddr,
    start_line: &str,
    headers: &[&str],
    body: &[u8],
) -> Response {
    let stream = TcpStream::connect(addr).await.unwrap();
    exchange(stream, start_line, headers, body).await
}

/// A value of the server's `/metrics`.
pub async fn metric(addr: SocketAddr, name: &str) -> u64 {
    metric_with(addr, &[], name).await
}

/// A value of `/metrics` read with `headers` (a token, where the server wants one).
pub async fn metric_with(addr: SocketAddr, headers: &[&str], name: &str) -> u64 {
    let metrics = request(addr, "GET /metrics HTTP/1.1\r\n", headers, b"").await;
    metric_value(&metrics.body, name)
}

/// Polls `/metrics` (with `headers`) until `name` reads `value`, within the bound.
pub async fn wait_for_metric(addr: SocketAddr, headers: &[&str], name: &str, value: u64) {
    let deadline = Instant::now() + BOUND;
    loop {
        let now = metric_with(addr, headers, name).await;
        if now == value {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name} stayed {now}, never {value}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A camera: the `ffmpeg` CLI serving `path` over RTMP (`-listen 1`), at real-time pace. Its URL.
pub fn camera(path: &Path) -> (Child, String) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("rtmp://127.0.0.1:{port}/live/cam");
    let child = Command::new("ffmpeg")
        .args(["-v", "error", "-re", "-i"])
        .arg(path)
        .args(["-c", "copy", "-f", "flv", "-listen", "1"])
        .arg(&url)
        .stdin(Stdio::null())
        .spawn()
        .expect("run ffmpeg");
    (child, url)
}

/// A request with a JSON body.
pub async fn post_json(addr: SocketAddr, path: &str, body: &Value) -> Response {
    let body = body.to_string();
    let length = format!("Content-Length: {}", body.len());
    request(
        addr,
        &format!("POST {path} HTTP/1.1\r\n"),
        &["Content-Type: application/json", &length],
        body.as_bytes(),
    )
    .await
}

/// A `GET` of `path`.
pub async fn get(addr: SocketAddr, path: &str) -> Response {
    request(addr, &format!("GET {path} HTTP/1.1\r\n"), &[], b"").await
}

/// Waits (bounded) until `check` holds.
pub async fn until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < BOUND, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
