//! HTTP object servers on loopback for the remote video tests: nginx (the real server, over HTTP and HTTPS with
//! a private CA, its access log telling each request's range and bytes) and a small server of our own whose
//! faults a test sets (ignores `Range`, answers 503, changes the object's ETag, stalls, stops).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request as a server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    pub method: String,
    /// The `Range` header's value, if any (`bytes=N-M`).
    pub range: Option<String>,
    pub status: u16,
    pub bytes: u64,
}

/// nginx serving `root` on loopback over HTTP and HTTPS; stopped when dropped.
pub struct Nginx {
    child: Child,
    dir: tempfile::TempDir,
    pub http: u16,
    pub https: u16,
    /// The private CA that signed the HTTPS certificate (PEM).
    pub ca: PathBuf,
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The nginx binary, if there is one.
pub fn nginx_binary() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

impl Nginx {
    /// Starts nginx over `root`, with `rate` (nginx's `limit_rate`, e.g. `50m`) when given.
    pub fn start(root: &Path, rate: Option<&str>) -> Self {
        let binary = nginx_binary().expect("nginx is installed");
        let dir = tempfile::tempdir().unwrap();
        let (http, https) = (free_port(), free_port());
        // A private CA and a certificate for 127.0.0.1 signed by it.
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "framefeed test CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf_params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap();
        let leaf = leaf_params.signed_by(&leaf_key, &ca_cert, &ca_key).unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, ca_cert.pem()).unwrap();
        std::fs::write(dir.path().join("cert.pem"), leaf.pem()).unwrap();
        std::fs::write(dir.path().join("key.pem"), leaf_key.serialize_pem()).unwrap();
        let d = dir.path().display();
        let rate = rate.map(|r| format!("limit_rate {r};")).unwrap_or_default();
        let conf = format!(
            "user root root; worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
events {{}}
http {{
  log_format ranges '$request_method $http_range $status $body_bytes_sent';
  access_log {d}/access.log ranges;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{
    listen 127.0.0.1:{http};
    listen 127.0.0.1:{https} ssl;
    ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem;
    root {root}; {rate}
  }}
}}
",
            root = root.display()
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
        let child = Command::new(binary)
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .arg("-p")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", https)).is_err() {
            assert!(Instant::now() < deadline, "nginx did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            dir,
            http,
            https,
            ca,
        }
    }

    /// The requests logged so far (nginx writes each line when its response is done).
    pub fn log(&self) -> Vec<Logged> {
        let text = std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default();
        text.lines()
            .map(|line| {
                let f: Vec<&str> = line.split(' ').collect();
                Logged {
                    method: f[0].to_owned(),
                    range: (f[1] != "-").then(|| f[1].to_owned()),
                    status: f[2].parse().unwrap(),
                    bytes: f[3].parse().unwrap(),
                }
            })
            .collect()
    }

    /// Forgets the requests logged so far.
    pub fn clear_log(&self) {
        std::fs::write(self.dir.path().join("access.log"), "").unwrap();
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // TERM to the master, which stops its workers (a KILL would leave them running, holding the port).
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The faults a [`FaultServer`] plays.
#[derive(Debug, Default)]
pub struct Faults {
    /// Answers every GET with 200 and the whole body, whatever its `Range`.
    pub ignore_range: AtomicBool,
    /// Answers this many GETs with range with `503 Slow Down` first.
    pub throttle: AtomicU64,
    /// After this many ranged GETs, the object changes (another ETag, 412 to an `If-Match` for the old one).
    pub change_after: AtomicU64,
    /// After this many ranged GETs, every connection is accepted and left silent.
    pub stall_after: AtomicU64,
    /// After this many ranged GETs, every connection is closed at once (the server is gone).
    pub stop_after: AtomicU64,
    /// Every request, HEAD included, is left unanswered.
    pub stall_all: AtomicBool,
}

/// An object served by our own server, with faults.
pub struct FaultServer {
    pub port: u16,
    pub faults: Arc<Faults>,
    /// Requests left unanswered so far.
    pub stalled: Arc<AtomicU64>,
    pub log: Arc<Mutex<Vec<Logged>>>,
}

/// Serves `data` at any path over HTTP/1.1 on loopback (HEAD with length, ETag and `Accept-Ranges`; GET with
/// `Range: bytes=N-M`, `If-Match`), playing the faults set in [`FaultServer::faults`].
pub fn fault_server(data: Vec<u8>) -> FaultServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let faults = Arc::new(Faults::default());
    let log = Arc::new(Mutex::new(Vec::new()));
    let ranged = Arc::new(AtomicU64::new(0));
    let stalled = Arc::new(AtomicU64::new(0));
    let data = Arc::new(data);
    let (f, l, st) = (faults.clone(), log.clone(), stalled.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (data, faults, log, ranged, stalled) = (
                data.clone(),
                f.clone(),
                l.clone(),
                ranged.clone(),
                st.clone(),
            );
            std::thread::spawn(move || {
                serve_connection(stream, &data, &faults, &log, &ranged, &stalled)
            });
        }
    });
    FaultServer {
        port,
        faults,
        stalled,
        log,
    }
}

fn past(count: &AtomicU64, limit: &AtomicU64) -> bool {
    let limit = limit.load(Ordering::Relaxed);
    limit > 0 && count.load(Ordering::Relaxed) >= limit
}

fn serve_connection(
    stream: std::net::TcpStream,
    data: &[u8],
    faults: &Faults,
    log: &Mutex<Vec<Logged>>,
    ranged: &AtomicU64,
    stalled: &AtomicU64,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request).unwrap_or(0) == 0 {
            return;
        }
        let method = request.split(' ').next().unwrap_or("").to_owned();
        let (mut range, mut if_match) = (None, None);
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("range: ") {
                range = Some(v.trim().to_owned());
            }
            if let Some(v) = lower.strip_prefix("if-match: ") {
                if_match = Some(v.trim().to_owned());
            }
        }
        if past(ranged, &faults.stop_after) {
            return; // closed without an answer
        }
        let ranged_get = method == "GET" && range.is_some();
        if faults.stall_all.load(Ordering::Relaxed)
            || ranged_get && past(ranged, &faults.stall_after)
        {
            stalled.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_secs(3600));
            return;
        }
        let changed = past(ranged, &faults.change_after);
        let etag = if changed { "\"v2\"" } else { "\"v1\"" };
        let mut respond = |status: u16, reason: &str, headers: String, body: &[u8]| {
            log.lock().unwrap().push(Logged {
                method: method.clone(),
                range: range.clone(),
                status,
                bytes: if method == "HEAD" {
                    0
                } else {
                    body.len() as u64
                },
            });
            // HEAD's Content-Length is the object's, with no body.
            let len = if method == "HEAD" {
                data.len()
            } else {
                body.len()
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\nContent-Length: {len}\r\nETag: {etag}\r\nAccept-Ranges: bytes\r\n{headers}\r\n"
            );
            if method != "HEAD" {
                let _ = stream.write_all(body);
            }
        };
        if method == "HEAD" {
            respond(200, "OK", String::new(), &[]);
            continue;
        }
        let Some(spec) = range.clone() else {
            respond(200, "OK", String::new(), data);
            continue;
        };
        ranged.fetch_add(1, Ordering::Relaxed);
        if faults
            .throttle
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
        {
            respond(503, "Slow Down", String::new(), b"SlowDown");
            continue;
        }
        if if_match.is_some_and(|m| m != etag) {
            respond(412, "Precondition Failed", String::new(), &[]);
            continue;
        }
        if faults.ignore_range.load(Ordering::Relaxed) {
            respond(200, "OK", String::new(), data);
            continue;
        }
        let spec = spec.trim_start_matches("bytes=");
        let (from, to) = spec.split_once('-').unwrap_or((spec, ""));
        let from: usize = from.parse().unwrap_or(0);
        let to: usize = to
            .parse()
            .map_or(data.len() - 1, |t: usize| t.min(data.len() - 1));
        if from >= data.len() || from > to {
            respond(416, "Range Not Satisfiable", String::new(), &[]);
            continue;
        }
        let headers = format!("Content-Range: bytes {from}-{to}/{}\r\n", data.len());
        respond(206, "Partial Content", headers, &data[from..=to]);
    }
}
