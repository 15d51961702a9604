//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use framefeed::{Batch, Config, Error, VideoInput};

pub mod http_client;
pub mod mp4_forge;
pub mod object_server;
/// Runs the `framefeed` binary, which exists only with `--features cli` (Cargo.toml's `[[test]]` entries).
#[cfg(feature = "cli")]
pub mod serve;

/// Runs each named async test function on tokio's current-thread and multi-thread runtimes.
#[allow(unused_macros)]
macro_rules! on_both_runtimes {
    ($($name:ident),*) => {
        mod current_thread {
            $( #[tokio::test(flavor = "current_thread")] async fn $name() { super::$name().await } )*
        }
        mod multi_thread {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() { super::$name().await } )*
        }
    };
}

/// A committed fixture (made by `tests/fixtures/make.sh`).
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn read_fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// The shared conformance corpus, `../shared/videos`, when present.
pub fn shared_videos() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/videos");
    dir.join("MANIFEST.json").is_file().then_some(dir)
}

/// What a test may need that a machine may lack, by the name `FRAMEFEED_REQUIRE` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// The `ffmpeg` CLI (the reference decode, and the peers that send streams).
    Ffmpeg,
    /// The shared conformance corpus, `../shared/videos`.
    Corpus,
    /// A usable GPU with NVDEC (a `cuda` build).
    Gpu,
    /// Free reserved huge pages (`sysctl vm.nr_hugepages=64`).
    HugePages,
    /// nginx (Debian's), the real HTTP(S) server of the remote video tests.
    Nginx,
}

impl Need {
    /// The name `FRAMEFEED_REQUIRE` uses.
    pub fn name(self) -> &'static str {
        match self {
            Need::Ffmpeg => "ffmpeg",
            Need::Corpus => "corpus",
            Need::Gpu => "gpu",
            Need::HugePages => "hugepages",
            Need::Nginx => "nginx",
        }
    }
}

/// Whether `FRAMEFEED_REQUIRE` (a comma-separated list: `ffmpeg`, `corpus`, `gpu`, `hugepages`, `torch` (for the
/// Python tests), or `all`) names
/// `need`; `REQUIRE_GPU=1`, the older spelling, names the GPU.
pub fn required(need: Need) -> bool {
    names(
        &std::env::var("FRAMEFEED_REQUIRE").unwrap_or_default(),
        need,
    ) || (need == Need::Gpu && std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1"))
}

/// Whether the list `FRAMEFEED_REQUIRE` holds names `need`.
pub fn names(list: &str, need: Need) -> bool {
    list.split(',')
        .map(str::trim)
        .any(|n| n == need.name() || n == "all")
}

/// A test (`what`) cannot run because `need` is missing (`why`): it fails when `FRAMEFEED_REQUIRE` names the need
/// (CI, which installs all of it), and otherwise prints that it skipped, so that a skip never reads as a pass.
/// Returns `true`: the test must return.
pub fn missing(need: Need, what: &str, why: &str) -> bool {
    if required(need) {
        panic!("{what}: FRAMEFEED_REQUIRE names {} but {why}", need.name());
    }
    eprintln!(
        "SKIPPED: {why}; {what} did not run (set FRAMEFEED_REQUIRE={} to make this a failure)",
        need.name()
    );
    true
}

/// The corpus for a test (`what`) that needs it; `None` (the test must return) after [`missing`] says why.
pub fn corpus(what: &str) -> Option<PathBuf> {
    let dir = shared_videos();
    if dir.is_none() {
        missing(Need::Corpus, what, "../shared/videos is absent");
    }
    dir
}

/// Feeds `videos`, closes, and collects every poll result until `Ok(None)`.
pub fn decode_all(config: Config, videos: Vec<Vec<u8>>) -> Vec<Result<Batch, Error>> {
    let input = VideoInput::new(config).expect("valid config");
    for v in videos {
        input.feed(v).expect("feed");
    }
    input.close();
    input.iter().collect()
}

/// Every real frame of a list of batches, in order, as owned RGB bytes.
pub fn frames_of(batches: &[Batch]) -> Vec<Vec<u8>> {
    batches
        .iter()
        .flat_map(|b| {
            b.sequences()
                .into_iter()
                .flat_map(|s| s.frames().map(|f| f.data().to_vec()).collect::<Vec<_>>())
        })
        .collect()
}

/// PSNR in dB between two equally long byte buffers (infinite when equal).
pub fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let se: u64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (i64::from(x) - i64::from(y)).pow(2) as u64)
        .sum();
    if se == 0 {
        return f64::INFINITY;
    }
    let mse = se as f64 / a.len() as f64;
    10.0 * (255.0 * 255.0 / mse).log10()
}

/// Runs `ffmpeg -i path -fps_mode passthrough TAIL...` and returns its standard output.
pub fn ffmpeg_stdout(path: &Path, tail: &[&str]) -> Vec<u8> {
    let out = Command::new("ffmpeg")
        .args(["-v", "quiet", "-i"])
        .arg(path)
        .args(["-fps_mode", "passthrough"])
        .args(tail)
        .output()
        .expect("run ffmpeg");
    assert!(out.status.success(), "ffmpeg failed on {}", path.display());
    out.stdout
}

/// The `ffmpeg` CLI's own rgb24 decode of `path`, frame by frame (default stream choice, no frame-rate
/// conversion), read from a pipe as it goes.
pub struct FfmpegFrames {
    child: Child,
}

/// Whether a test that needs the `ffmpeg` CLI (`what`: "the network source tests") must skip; if so, says so
/// (and fails instead when `FRAMEFEED_REQUIRE` names `ffmpeg`: see [`missing`]).
pub fn skip_without_ffmpeg(what: &str) -> bool {
    !ffmpeg_available() && missing(Need::Ffmpeg, what, "the ffmpeg CLI is absent")
}

/// An H.264 MPEG-TS clip of `frames` frames from the lavfi `source` (e.g. `testsrc2=size=320x240:rate=30`),
/// as a live encoder makes it (no B-frames, GOP 30), at `dir/name`.
pub fn live_ts_clip(dir: &Path, name: &str, source: &str, frames: u32) -> PathBuf {
    let path = dir.join(name);
    encode_live_clip(&path, source, frames, "mpegts");
    path
}

pub fn ffmpeg_available() -> bool {
    Command::new("ffmpeg")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl FfmpegFrames {
    pub fn open(path: &Path) -> Self {
        // One decoder thread: the decode whose pictures are the same every run, damaged or not (issue 73:
        // framefeed gives it with frame threads too); on whole video it equals any thread count's.
        let child = Command::new("ffmpeg")
            .args(["-v", "quiet", "-threads", "1", "-i"])
            .arg(path)
            .args([
                "-fps_mode",
                "passthrough",
                "-f",
                "rawvideo",
                "-pix_fmt",
                "rgb24",
                "-",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run ffmpeg");
        Self { child }
    }

    /// The next frame of `len` bytes, or `None` at the end.
    pub fn next_frame(&mut self, len: usize) -> Option<Vec<u8>> {
        let mut buf = vec![0; len];
        let out = self.child.stdout.as_mut().expect("piped");
        let mut filled = 0;
        while filled < len {
            match out.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) => panic!("reading ffmpeg's output: {e}"),
            }
        }
        match filled {
            0 => None,
            n if n == len => Some(buf),
            n => panic!("ffmpeg gave a partial frame ({n} of {len} bytes)"),
        }
    }

    /// Bytes left in the pipe (0 when ffmpeg gave no more frames than read).
    pub fn remaining(mut self) -> usize {
        let mut rest = Vec::new();
        self.child
            .stdout
            .as_mut()
            .expect("piped")
            .read_to_end(&mut rest)
            .expect("read");
        let _ = self.child.wait();
        rest.len()
    }
}

impl Drop for FfmpegFrames {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the `ffmpeg` CLI quietly with `args` (overwriting its output) and expects it to succeed.
pub fn ffmpeg<S: AsRef<std::ffi::OsStr>>(args: &[S]) {
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y"])
        .args(args)
        .status()
        .expect("run the ffmpeg CLI");
    assert!(
        status.success(),
        "ffmpeg {:?}",
        args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
    );
}

/// Encodes `frames` frames of the lavfi `source` (e.g. `testsrc2=size=320x240:rate=30`) to `path` in
/// `format` as a live encoder makes H.264: x264 veryfast, zerolatency (no B-frames), GOP 30, yuv420p.
pub fn encode_live_clip(path: &Path, source: &str, frames: u32, format: &str) {
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i", source])
        .args(["-frames:v", &frames.to_string()])
        .args([
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-tune",
            "zerolatency",
        ])
        .args(["-g", "30", "-pix_fmt", "yuv420p", "-f", format])
        .arg(path)
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg could not encode {source}");
}

/// The `ffmpeg` CLI's frames of `path` as rgb24 MD5s, in output order: `input` options go before `-i` (such as
/// `-noautorotate`), `filters` is a `-vf` chain, if any. Each frame at its own size (`-noautoscale`, a spelling
/// FFmpeg 5.1 and 7.1 both take: after a resolution change the CLI would otherwise scale every frame to the first
/// size); no frame-rate conversion.
pub fn ffmpeg_md5s(path: &Path, input: &[&str], filters: Option<&str>) -> Vec<String> {
    ffmpeg_md5s_as(path, input, filters, "rgb24")
}

/// [`ffmpeg_md5s`] in the pixel format `pix_fmt` (`rgb48le`...).
pub fn ffmpeg_md5s_as(
    path: &Path,
    input: &[&str],
    filters: Option<&str>,
    pix_fmt: &str,
) -> Vec<String> {
    let mut cmd = Command::new("ffmpeg");
    cmd.args(["-v", "quiet", "-threads", "2"])
        .args(input)
        .arg("-i")
        .arg(path)
        .args([
            "-noautoscale",
            "-fps_mode",
            "passthrough",
            "-an",
            "-sn",
            "-dn",
        ]);
    if let Some(vf) = filters {
        cmd.args(["-vf", vf]);
    }
    let out = cmd
        .args(["-f", "framemd5", "-pix_fmt", pix_fmt, "-"])
        .output()
        .expect("run ffmpeg");
    assert!(out.status.success(), "ffmpeg failed on {}", path.display());
    String::from_utf8(out.stdout)
        .expect("framemd5 is text")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit(',').next().unwrap().trim().to_owned())
        .collect()
}

/// The MD5 of `bytes`, as `ffmpeg -f framemd5` prints it.
pub fn md5_hex(bytes: &[u8]) -> String {
    use md5::{Digest, Md5};
    format!("{:x}", Md5::digest(bytes))
}

/// The fixtures turned by a display matrix, every angle and mirror (`tests/fixtures/make.sh`), 8-bit 100x60, then
/// a 10-bit HEVC one: what NVDEC decodes too.
pub const TURNED: [&str; 8] = [
    "rotated_90.mp4",
    "rotated_180.mp4",
    "rotated_270.mp4",
    "hflip.mp4",
    "vflip.mp4",
    "transpose.mp4",
    "transverse.mp4",
    "rotated_90_hevc10.mp4",
];

/// One sequence of a decode: display indices, frame shape `[h, w, 3]`, turn, and its real frames' bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Seq {
    pub indices: Vec<u64>,
    pub shape: [usize; 3],
    pub orientation: framefeed::Orientation,
    pub frames: Vec<Vec<u8>>,
}

/// Every sequence of the file at `path` decoded under `config` (any error fails the test, naming the file).
pub fn decode_file(path: &Path, config: Config) -> Vec<Seq> {
    let input = VideoInput::new(config).unwrap();
    input.feed(framefeed::Encoded::file(path).unwrap()).unwrap();
    input.close();
    let mut out = Vec::new();
    while let Some(result) = input.next_batch().transpose() {
        let batch = result.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for seq in batch.sequences() {
            out.push(Seq {
                indices: seq.indices().to_vec(),
                shape: batch.frame_shape(),
                orientation: seq.orientation(),
                frames: seq.frames().map(|f| f.data().to_vec()).collect(),
            });
        }
    }
    out
}

/// Serves `data` over HTTP/1.1 on loopback, honouring `Range: bytes=N-[M]` with 206 when `ranges`, else
/// always the whole body with 200 (a server that cannot seek). Returns the port and a count of the requests
/// for a range not at the start (seeks).
pub fn serve_http(
    data: Vec<u8>,
    ranges: bool,
) -> (u16, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::atomic::Ordering;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = sent.clone();
    let data = std::sync::Arc::new(data);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (data, counter) = (data.clone(), counter.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut range = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(spec) = lower.strip_prefix("range: bytes=") {
                        let (from, to) = spec.trim().split_once('-').unwrap_or((spec.trim(), ""));
                        let from: usize = from.parse().unwrap_or(0);
                        let to: usize = to
                            .parse()
                            .map_or(data.len() - 1, |t: usize| t.min(data.len() - 1));
                        range = Some((from, to));
                    }
                }
                let mut stream = stream;
                if range.is_some_and(|(from, _)| from > 0) {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
                let (status, body, extra) = match range.filter(|_| ranges) {
                    Some((from, _)) if from >= data.len() => {
                        let _ = write!(stream, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                        return;
                    }
                    Some((from, to)) => (
                        "206 Partial Content",
                        &data[from..=to],
                        format!(
                            "Content-Range: bytes {from}-{to}/{}\r\nAccept-Ranges: bytes\r\n",
                            data.len()
                        ),
                    ),
                    None => ("200 OK", &data[..], String::new()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(body);
            });
        }
    });
    (port, sent)
}
