//! Runs every example of `examples/` as a user would, with a time limit, and checks what it prints: the frames,
//! batches and sequences the built-in sample (60 frames of 320x240 at 30 fps) and the fixtures give.
//!
//! The examples are built here with the features this test was built with (`cargo build --examples`, a no-op
//! after `cargo test`, which builds them), so `cargo test --test examples` runs them too. An example whose
//! features are off (`embed_service` needs `server`) is skipped, saying so.

mod common;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long one example may run (each takes well under a second or two in a debug build).
const LIMIT: Duration = Duration::from_secs(60);

/// What an example printed.
struct Run {
    stdout: String,
    stderr: String,
}

impl Run {
    /// The lines of stdout that start with `prefix`.
    fn lines(&self, prefix: &str) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with(prefix))
            .collect()
    }

    /// The one line of stdout that starts with `prefix`.
    fn line(&self, prefix: &str) -> &str {
        match self.lines(prefix)[..] {
            [line] => line,
            ref lines => panic!(
                "{} lines start with {prefix:?}: {lines:?}\n{}",
                lines.len(),
                self.stdout
            ),
        }
    }
}

/// The features this test was built with, to build the examples with the same ones.
fn features() -> Vec<&'static str> {
    let mut on = Vec::new();
    macro_rules! check {
        ($($name:literal),*) => { $( if cfg!(feature = $name) { on.push($name); } )* };
    }
    check!("cli", "json", "server", "fuzzing", "cuda", "static-ffmpeg");
    on
}

/// The folder the examples' binaries are built in: `target/<profile>/examples`, beside this test's `deps`.
fn examples_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    profile_dir.join("examples")
}

/// Builds the examples once, with this test's features and profile.
fn build_examples() {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let dir = examples_dir();
        let profile_dir = dir.parent().expect("target/<profile>");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => "dev",
            Some(other) => other,
            None => return Err("no profile folder".into()),
        };
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "--examples",
                "--no-default-features",
                "--profile",
                profile,
            ])
            .arg("--features")
            .arg(features().join(","))
            .arg("--manifest-path")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .arg("--target-dir")
            .arg(profile_dir.parent().expect("the target folder"))
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or_else(|| format!("cargo build --examples: {status}"))
    });
    if let Err(e) = built {
        panic!("{e}");
    }
}

/// Runs example `name` with `args`; `None` (a skip, printed) when `needs` names a feature this build lacks.
fn run_example(name: &str, args: &[&str], needs: Option<&str>) -> Option<Run> {
    if let Some(feature) = needs.filter(|f| !features().contains(f)) {
        println!("skipped: the {name} example needs feature `{feature}` (cargo test --features {feature})");
        return None;
    }
    build_examples();
    let binary = examples_dir().join(name);
    let mut child = Command::new(&binary)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
    let readers = [
        child.stdout.take().map(box_read),
        child.stderr.take().map(box_read),
    ]
    .map(|pipe| {
        let mut pipe = pipe.expect("piped");
        std::thread::spawn(move || {
            let mut text = String::new();
            pipe.read_to_string(&mut text).map(|_| text)
        })
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the {name} example ran past {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let [stdout, stderr] = readers.map(|r| r.join().expect("reader thread").expect("UTF-8 output"));
    println!(
        "{name} {args:?} ({:.2} s):\n{stdout}{stderr}",
        start.elapsed().as_secs_f64()
    );
    assert!(
        status.success(),
        "the {name} example failed ({status}):\n{stdout}\n{stderr}"
    );
    Some(Run { stdout, stderr })
}

fn box_read(pipe: impl Read + Send + 'static) -> Box<dyn Read + Send> {
    Box::new(pipe)
}

fn fixture(name: &str) -> String {
    common::fixture(name)
        .to_str()
        .expect("a UTF-8 path")
        .to_owned()
}

#[test]
fn every_example_is_run_here() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
        .collect();
    found.sort();
    let tested = [
        "batches",
        "cameras_mux",
        "clips",
        "embed_service",
        "live_push",
        "pull_url",
        "reader",
        "tokio_ingest",
    ];
    assert_eq!(found, tested, "a new example needs its test here");
}

#[test]
fn batches() {
    // Sequences of 8 frames, 2 a batch, the last padded: 60 frames are 4 batches, the last with 12 real frames.
    let run = run_example("batches", &[], None).unwrap();
    let lines = run.lines("sample.mp4 batch");
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    assert!(lines[3].starts_with("sample.mp4 batch 3 (last): 2 sequences of [240, 320, 3] frames"));
    assert!(lines[3].contains(r#"["8/8", "4/8"]"#), "{}", lines[3]);
}

#[test]
fn tokio_ingest() {
    let run = run_example("tokio_ingest", &[], None).unwrap();
    assert_eq!(run.line("total:"), "total: 60 frames in 2 batches");
    // Two files of 23 frames, and one that is not a video: it fails alone, named, and the others go on.
    let (mp4, mkv) = (fixture("h264.mp4"), fixture("h264.mkv"));
    let run = run_example("tokio_ingest", &[&mp4, "Cargo.toml", &mkv], None).unwrap();
    assert_eq!(run.line("total:"), "total: 46 frames in 2 batches");
    assert!(
        run.stderr.contains("error: video 1 (Cargo.toml): "),
        "{}",
        run.stderr
    );
}

#[test]
fn live_push() {
    // A live MPEG-TS of 100 frames in 4 KiB chunks. (That its first batch comes out before its last chunk is
    // pushed is timing, held by tests/live_input.rs; here each line says how far the pushing had got.)
    let size = std::fs::metadata(fixture("h264_live.ts")).unwrap().len();
    let run = run_example("live_push", &[], None).unwrap();
    assert_eq!(run.line("total:"), "total: 100 frames");
    let batches = run.lines("frames [");
    assert_eq!(batches.len(), 13); // 12 sequences of 8 frames, then the last 4
    assert!(
        batches[12].starts_with("frames [96, 97, 98, 99] out after"),
        "{}",
        run.stdout
    );
    let pushed: Vec<u64> = batches
        .iter()
        .map(|l| {
            l.split(" out after ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(
        pushed.windows(2).all(|w| w[0] <= w[1]) && pushed[12] == size,
        "{pushed:?} of {size}"
    );
    // A file in chunks of 64 KiB (the default for files): the sample, 60 frames.
    let run = run_example("live_push", &["assets/sample.mp4"], None).unwrap();
    assert_eq!(run.line("total:"), "total: 60 frames");
    assert_eq!(run.lines("frames [").len(), 8);
}

#[test]
fn pull_url() {
    // No argument: the sample pulled as a `file:` URL.
    let run = run_example("pull_url", &[], None).unwrap();
    assert_eq!(run.line("total:"), "total: 60 frames");
    assert!(
        run.stdout.contains("frames [56, 57, 58, 59]"),
        "{}",
        run.stdout
    );
    // Over HTTP, from a server on loopback that answers HEAD and ranges, as a web server or object store does.
    let server = common::object_server::fault_server(framefeed::SAMPLE_MP4.to_vec());
    let url = format!("http://127.0.0.1:{}/videos/sample.mp4", server.port);
    let run = run_example("pull_url", &[&url], None).unwrap();
    assert_eq!(run.line("total:"), "total: 60 frames");
    assert_eq!(run.lines(&format!("{url}: frames [")).len(), 8);
}

#[test]
fn cameras_mux() {
    // Three cameras of 60 frames in sequences of 8: 8 sequences each (the last of 4 frames), none dropped.
    let run = run_example("cameras_mux", &[], None).unwrap();
    assert_eq!(run.line("total:"), "total: 24 sequences");
    for n in 0..3 {
        assert_eq!(
            run.line(&format!("camera-{n} ended")),
            format!("camera-{n} ended (None)")
        );
        assert_eq!(
            run.line(&format!("camera-{n}:")),
            format!("camera-{n}: 8 sequences, 0 dropped")
        );
    }
    assert!(run.lines("batch of ").iter().all(|l| {
        let n: usize = l["batch of ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        (1..=4).contains(&n)
    }));
}

#[test]
fn clips() {
    let run = run_example("clips", &[], None).unwrap();
    let epochs = [
        run.line("random clips, epoch 0"),
        run.line("random clips, epoch 1"),
    ];
    assert_ne!(
        epochs[0].split(':').nth(1),
        epochs[1].split(':').nth(1),
        "new clips each epoch"
    );
    // Clips span 15 frames (8, every other one): 4 start evenly from 0 to 45.
    let regular = run.line("regular clips:");
    assert!(
        regular.starts_with("regular clips: [[0, 2, 4, 6, 8, 10, 12, 14], [15, 17,"),
        "{regular}"
    );
    assert!(
        regular.ends_with("[45, 47, 49, 51, 53, 55, 57, 59]]"),
        "{regular}"
    );
    // 10 fps of a 30 fps video: every third frame, 20 in all.
    assert_eq!(
        run.line("at 10 fps:"),
        "at 10 fps: [[0, 3, 6, 9, 12, 15, 18, 21], [24, 27, 30, 33, 36, 39, 42, 45], [48, 51, 54, 57]]"
    );
    // Frames 15 to 29 (shown in [0.5 s, 1 s)), a sequence starting every 4 frames.
    let range = run.line("0.5 s to 1.0 s, step 4:");
    assert!(
        range.contains("[[15, 16, 17, 18, 19, 20, 21, 22], [19, 20,"),
        "{range}"
    );
    // A file from disk: 23 frames at 25 fps. The last regular clip ends on the last frame; 10 fps is the frame
    // shown at each 0.1 s (0, 2.5 -> 2, 5...); [0.5 s, 1 s) starts at frame 13 (0.52 s) and runs to the end.
    let run = run_example("clips", &[&fixture("h264.mp4")], None).unwrap();
    assert!(
        run.line("regular clips:")
            .ends_with("[8, 10, 12, 14, 16, 18, 20, 22]]"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.line("at 10 fps:"),
        "at 10 fps: [[0, 2, 5, 7, 10, 12, 15, 17], [20, 22]]"
    );
    assert!(
        run.line("0.5 s to 1.0 s, step 4:")
            .contains("[[13, 14, 15, 16, 17, 18, 19, 20], [17,"),
        "{}",
        run.stdout
    );
}

#[test]
fn reader() {
    let run = run_example("reader", &[], None).unwrap();
    assert!(run
        .line("60 frames of 320x240 at 30.00 fps, 2.00 s, h264")
        .ends_with("keyframes at [0, 30]"));
    // Resized to a shorter side of 120, channels first.
    assert!(
        run.line("frames [59, 0, 0, 30]:")
            .contains("shape [4, 3, 120, 160]"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.line("every 10th:"),
        "every 10th: [0, 10, 20, 30, 40, 50]"
    );
    assert_eq!(
        run.line("shown in"),
        "shown in [0.5 s, 0.6 s): [15, 16, 17]"
    );
    assert_eq!(
        run.lines("a thread read"),
        [
            "a thread read [0, 1, 2, 3]",
            "a thread read [30, 31, 32, 33]"
        ]
    );
    assert!(run
        .line("frame 0:")
        .starts_with(&format!("frame 0: {} floats", 3 * 120 * 160)));
    // A file from disk: 23 frames of 96x64 at 25 fps (120 pixels high: 180 wide).
    let run = run_example("reader", &[&fixture("h264.mp4")], None).unwrap();
    assert!(run.line("23 frames of 96x64 at 25.00 fps").contains("h264"));
    assert!(run
        .line("frames [22, 0, 0, 11]:")
        .contains("shape [4, 3, 120, 180]"));
    assert_eq!(
        run.lines("a thread read"),
        [
            "a thread read [0, 1, 2, 3]",
            "a thread read [11, 12, 13, 14]"
        ]
    );
}

#[test]
fn embed_service() {
    let Some(run) = run_example("embed_service", &[], Some("server")) else {
        return;
    };
    assert!(run.line("listening on 127.0.0.1:").len() > "listening on 127.0.0.1:".len());
    assert_eq!(run.line("status"), "status 200 OK");
    // Sequences of 16, 2 a batch, padded: 60 frames are 2 batches.
    let lines: Vec<serde_json::Value> = run
        .lines("{")
        .iter()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    let summary = &lines[2]["summary"];
    assert_eq!(
        (summary["frames"].as_u64(), summary["batches"].as_u64()),
        (Some(60), Some(2)),
        "{summary}"
    );
    assert_eq!(
        summary["errors"].as_array().map(Vec::len),
        Some(0),
        "{summary}"
    );
    assert_eq!(run.line("server stopped"), "server stopped");
}
