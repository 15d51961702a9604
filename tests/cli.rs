//! The `framefeed` command line: the built-in sample, --json/--md5 lines, --raw-out against ffmpeg's own
//! rgb24 output, `info`, and exit statuses.

mod common;

use std::process::Command;

use common::*;
use serde_json::Value;

fn framefeed() -> Command {
    Command::new(env!("CARGO_BIN_EXE_framefeed"))
}

/// Runs `framefeed` with `args`, expects success, and returns its JSON lines.
fn run_json<I, S>(args: I) -> Vec<Value>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = framefeed().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_lines(&out.stdout)
}

/// The JSON document a successful `framefeed info` printed.
fn info_json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn run_on_the_built_in_sample() {
    let out = framefeed().arg("run").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("frames: 60"), "{text}");
    assert!(text.contains("videos: 1 (0 failed)"), "{text}");
}

#[test]
fn json_lines_follow_the_documented_shape() {
    let fixture_path = fixture("h264.mp4");
    let out = framefeed()
        .args([
            "run", "--json", "--md5", "-L", "5", "-B", "3", "--policy", "pad",
        ])
        .arg(&fixture_path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines = json_lines(&out.stdout);
    // 23 frames, L=5, B=3: [5,5,5] then [5, 5 (3 real)], then the summary.
    assert_eq!(lines.len(), 3);
    let first = &lines[0];
    assert_eq!(first["video"], 0);
    assert_eq!(first["label"], fixture_path.display().to_string());
    assert_eq!(first["batch"], 0);
    assert_eq!(first["last"], false);
    let keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["video", "label", "batch", "last", "dtype", "sequences"]
    );
    assert_eq!(first["dtype"], "uint8");
    let seq = &first["sequences"][1];
    assert_eq!(seq["shape"], serde_json::json!([5, 64, 96, 3]));
    assert_eq!(seq["valid_frames"], 5);
    assert_eq!(seq["first_frame"], 5);
    assert_eq!(seq["pts"].as_array().unwrap().len(), 5);
    assert_eq!(seq["md5"].as_array().unwrap().len(), 5);
    let last = &lines[1];
    assert_eq!(last["last"], true);
    assert_eq!(
        last["sequences"][1]["shape"],
        serde_json::json!([5, 64, 96, 3])
    );
    assert_eq!(last["sequences"][1]["valid_frames"], 3);
    assert_eq!(last["sequences"][1]["md5"].as_array().unwrap().len(), 3);
    let summary = &lines[2]["summary"];
    assert_eq!(summary["frames"], 23);
    assert_eq!(summary["batches"], 2);
    assert_eq!(summary["errors"], serde_json::json!([]));

    // The md5 of each frame equals ffmpeg's framemd5 of the rgb24 decode.
    let md5 = ffmpeg_stdout(&fixture_path, &["-pix_fmt", "rgb24", "-f", "framemd5", "-"]);
    let theirs: Vec<String> = String::from_utf8_lossy(&md5)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit(',').next().unwrap().trim().to_owned())
        .collect();
    let ours: Vec<String> = lines[..2]
        .iter()
        .flat_map(|b| {
            b["sequences"].as_array().unwrap().iter().flat_map(|s| {
                s["md5"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.as_str().unwrap().to_owned())
            })
        })
        .collect();
    assert_eq!(ours, theirs);
}

#[test]
fn raw_out_equals_ffmpeg_rgb24() {
    let dir = std::env::temp_dir().join(format!("framefeed-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let raw = dir.join("out.rgb");
    let raw_out = |policy: &str| {
        let out = framefeed()
            .args(["run", "-L", "4", "-B", "2", "--policy", policy, "--raw-out"])
            .arg(&raw)
            .arg(fixture("vp9.webm"))
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::read(&raw).unwrap()
    };
    let ours = raw_out("partial");
    let theirs = ffmpeg_stdout(
        &fixture("vp9.webm"),
        &["-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
    );
    assert_eq!(ours.len(), 23 * 96 * 64 * 3);
    assert_eq!(ours, theirs);
    // With pad, the padding frames are written too: 23 frames padded to 24.
    let padded = raw_out("pad");
    assert_eq!(padded.len(), 24 * 96 * 64 * 3);
    assert!(padded[23 * 96 * 64 * 3..].iter().all(|&x| x == 0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failures_are_reported_and_exit_1_after_every_video() {
    let out = framefeed()
        .args(["run", "--json"])
        .arg(fixture("audio_only.m4a"))
        .arg(fixture("h264.mp4"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out.stdout);
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(
        summary["frames"], 23,
        "the good video after the bad one was decoded"
    );
    let errors = summary["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["video"], 0);
    assert!(errors[0]["label"]
        .as_str()
        .unwrap()
        .ends_with("audio_only.m4a"));
    assert_eq!(errors[0]["error"], "the container has no video stream");
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        &["run", "-L", "0"][..],
        &["run", "--policy", "sideways"],
        &["frobnicate"],
        &["run", "-B", "x"],
    ] {
        let out = framefeed().args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `framefeed info` (and its `--segments`) reads a file where the demuxer looks, never whole: a 1.3 GB video
/// is described and cut under a 1 GB address-space limit (`ulimit -v`), which reading it into memory cannot
/// meet (it failed so: "cannot read ...: out of memory"). A long video's file may be larger than memory.
#[test]
fn info_reads_a_file_larger_than_its_memory_where_the_demuxer_looks() {
    if skip_without_ffmpeg("the large-file info test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.mov");
    // 320 frames of uncompressed 1080p 4:2:2 (4 MB each).
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=1920x1080:rate=30",
        "-frames:v",
        "320",
        "-c:v",
        "rawvideo",
        "-pix_fmt",
        "uyvy422",
        big.to_str().unwrap(),
    ]);
    assert!(std::fs::metadata(&big).unwrap().len() > 1_300_000_000);
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 1000000 && exec "$0" info --segments 100 "$1""#)
        .arg(env!("CARGO_BIN_EXE_framefeed"))
        .arg(&big)
        .env("MALLOC_ARENA_MAX", "2")
        .output()
        .unwrap();
    let info = info_json(&out);
    assert_eq!(info["streams"][0]["codec"], "rawvideo");
    assert_eq!(
        info["segments"],
        serde_json::json!([[0, 100], [100, 200], [200, 300], [300, 320]])
    );
}

#[test]
fn info_describes_the_container() {
    let out = framefeed()
        .arg("info")
        .arg(fixture("h264_bt709.mp4"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(info["container"].as_str().unwrap().contains("mp4"));
    let v = &info["streams"][0];
    assert_eq!(v["type"], "video");
    assert_eq!(v["codec"], "h264");
    assert_eq!(
        (v["width"].as_u64(), v["height"].as_u64()),
        (Some(96), Some(64))
    );
    assert_eq!(v["pix_fmt"], "yuv420p");
    assert_eq!(v["color_space"], "bt709");
    assert_eq!(v["color_range"], "tv");
    assert_eq!(v["frame_rate"], "25/1");
    assert!((v["duration"].as_f64().unwrap() - 0.92).abs() < 0.05);
    assert_eq!(v["bit_depth"], 8);
    assert_eq!(v["dynamic_range"], "sdr");
    assert_eq!(v["mastering_display"], Value::Null);
    // HDR10 (issue 62): PQ, 10 bits, the mastering display and light levels of the file's sample entry.
    let out = framefeed()
        .arg("info")
        .arg(fixture("hdr_pq_hevc10.mp4"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &info["streams"][0];
    assert_eq!(v["bit_depth"], 10);
    assert_eq!(v["dynamic_range"], "pq");
    assert_eq!(
        (
            &v["color_primaries"],
            &v["color_transfer"],
            &v["color_space"]
        ),
        (
            &Value::from("bt2020"),
            &Value::from("smpte2084"),
            &Value::from("bt2020nc")
        )
    );
    let m = &v["mastering_display"];
    assert_eq!(
        m["primaries"],
        serde_json::json!([[0.68, 0.32], [0.265, 0.69], [0.15, 0.06]])
    );
    assert_eq!(m["white_point"], serde_json::json!([0.3127, 0.329]));
    assert_eq!(
        (m["min_luminance"].as_f64(), m["max_luminance"].as_f64()),
        (Some(0.005), Some(1000.0))
    );
    assert_eq!(
        v["content_light"],
        serde_json::json!({"max_cll": 1000, "max_fall": 400})
    );
    let out = framefeed()
        .arg("info")
        .arg(fixture("../common/mod.rs"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn transform_flags_shape_the_json_and_the_raw_output() {
    // 96x64, 23 frames; resize to 48x32 is skipped here so the bytes can be checked against ffmpeg's crop.
    let path = fixture("h264.mp4");
    let raw = std::env::temp_dir().join(format!("framefeed-cli-cfhw-{}.f32", std::process::id()));
    let flags = [
        "run",
        "--json",
        "-L",
        "8",
        "-B",
        "2",
        "--crop",
        "40x30",
        "--crop-pos",
        "1,0",
        "--layout",
        "cfhw",
        "--dtype",
        "f32",
        "--raw-out",
    ]
    .map(std::ffi::OsStr::new);
    let lines = run_json(flags.into_iter().chain([raw.as_os_str(), path.as_os_str()]));
    let mut frames = Vec::new();
    for line in lines.iter().filter(|l| l.get("batch").is_some()) {
        for seq in line["sequences"].as_array().unwrap() {
            assert_eq!(seq["crop"], serde_json::json!([56, 0, 40, 30]));
            assert!(seq.get("resize").is_none());
            let f = seq["valid_frames"].as_u64().unwrap() as usize;
            assert_eq!(seq["shape"], serde_json::json!([3, f, 30, 40]));
            frames.push(f);
        }
    }
    // The raw output is exactly the CFHW f32 tensors: ffmpeg's crop, transposed and cast.
    let bytes = std::fs::read(&raw).unwrap();
    std::fs::remove_file(&raw).ok();
    let values: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    let rgb = ffmpeg_stdout(
        &path,
        &[
            "-vf",
            "crop=40:30:56:0",
            "-pix_fmt",
            "rgb24",
            "-f",
            "rawvideo",
            "-",
        ],
    );
    let plane = 40 * 30;
    assert_eq!(values.len(), rgb.len());
    let (mut at, mut first) = (0, 0);
    for f in frames {
        for c in 0..3 {
            for i in 0..f {
                for p in 0..plane {
                    let expected = f32::from(rgb[((first + i) * plane + p) * 3 + c]);
                    assert_eq!(
                        values[at],
                        expected,
                        "frame {} channel {c} pixel {p}",
                        first + i
                    );
                    at += 1;
                }
            }
        }
        first += f;
    }
}

#[test]
fn bad_transform_flags_exit_2_with_the_reason() {
    for (args, message) in [
        (&["--crop", "10"][..], "expected WIDTHxHEIGHT"),
        (
            &["--crop", "10x10", "--crop-pos", "2,0"],
            "crop position x is 2; allowed: 0 to 1",
        ),
        (&["--normalize", "1,2/3"], "expected"),
        (
            &["--normalize", "0,0,0/1,1,1"],
            "normalize needs a float dtype",
        ),
    ] {
        let out = framefeed().arg("run").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn pack_fills_batches_across_files_and_names_each_sequence_video() {
    let (a, b) = (fixture("h264.mp4"), fixture("h264.mkv"));
    let flags = ["run", "--json", "-L", "4", "-B", "4", "--pack"].map(std::ffi::OsStr::new);
    let lines = run_json(flags.into_iter().chain([a.as_os_str(), b.as_os_str()]));
    let batches: Vec<&Value> = lines.iter().filter(|l| l.get("batch").is_some()).collect();
    assert_eq!(batches.len(), 3, "12 sequences in 3 full batches");
    let videos: Vec<u64> = batches[1]["sequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["video"].as_u64().unwrap())
        .collect();
    assert_eq!(videos, [0, 0, 1, 1]);
    assert!(
        batches[0]["sequences"][0].get("video").is_none(),
        "single-video batches keep their shape"
    );
    assert_eq!(lines.last().unwrap()["summary"]["frames"], 46);
}

/// Settings whose batches could never fit in memory are bad arguments (exit 2, the limit named), never an
/// abort; a video whose real frames make its batches too large fails alone (exit 1).
#[test]
fn batches_over_the_memory_budget_exit_with_the_limit_named() {
    let out = framefeed()
        .args(["run", "-L", "65536", "-B", "65536"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("over max_batch_bytes 4294967296"),
        "{stderr}"
    );
    let out = framefeed()
        .args(["run", "-L", "4096", "-B", "64", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let summary = json_lines(&out.stdout).pop().unwrap();
    let error = summary["summary"]["errors"][0]["error"].to_string();
    assert!(
        error.contains("60397977600 bytes, over max_batch_bytes"),
        "{error}"
    );
    assert!(
        summary["summary"]["peak_rss_mib"].as_f64().unwrap() < 300.0,
        "{summary}"
    );
    // The flag raises or lowers the budget.
    let ok = framefeed()
        .args(["run", "-L", "8", "-B", "2", "--max-batch-bytes", "8M"])
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0));
    let low = framefeed()
        .args(["run", "--max-batch-bytes", "100"])
        .output()
        .unwrap();
    assert_eq!(
        low.status.code(),
        Some(2),
        "16 x 4 frames of even 1 pixel (192 bytes) can never fit in 100"
    );
}

/// `run --mux`: batches across the sources, each sequence naming its source's position (`"video"`); every
/// camera's frames once and in order (the MD5s of a plain run of the same file); a camera that fails (an
/// audio-only file) fails alone, in the summary's errors, after the others' batches; `-B` bounds a batch.
#[test]
fn mux_batches_across_sources_and_a_failing_one_fails_alone() {
    let sources = ["h264_live.ts", "audio_only.m4a", "h264.ts"];
    let out = framefeed()
        .args([
            "run",
            "--mux",
            "--deadline",
            "20",
            "-L",
            "2",
            "-B",
            "3",
            "--json",
            "--md5",
        ])
        .args(sources.iter().map(|s| fixture(s)))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a failed camera exits 1");
    let lines = json_lines(&out.stdout);
    let (summary, batches) = lines.split_last().unwrap();
    let mut md5s: [Vec<String>; 3] = Default::default();
    for batch in batches {
        let sequences = batch["sequences"].as_array().unwrap();
        assert!((1..=3).contains(&sequences.len()), "{batch}");
        for s in sequences {
            let video = s["video"].as_u64().unwrap() as usize;
            md5s[video].extend(s["md5"].as_array().unwrap().iter().map(|m| m.to_string()));
        }
    }
    for (i, name) in sources.iter().enumerate() {
        if i == 1 {
            assert!(md5s[1].is_empty());
            continue;
        }
        let alone: Vec<String> = run_json(
            ["run", "-L", "2", "-B", "1", "--json", "--md5"]
                .iter()
                .map(std::ffi::OsString::from)
                .chain([fixture(name).into_os_string()]),
        )
        .iter()
        .filter_map(|l| l["sequences"].as_array())
        .flatten()
        .flat_map(|s| s["md5"].as_array().unwrap().iter().map(|m| m.to_string()))
        .collect::<Vec<_>>();
        assert_eq!(md5s[i], alone, "{name}: every frame once, in order");
    }
    let summary = &summary["summary"];
    let errors = summary["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{summary}");
    assert_eq!(errors[0]["video"], 1);
    assert_eq!(summary["cameras"].as_array().unwrap().len(), 3);
}

#[test]
fn info_lists_segments_and_run_decodes_each_apart_into_the_whole_runs_sequences() {
    // H.264 with open GOPs (150 frames): the segments' own sequences, together, are the whole run's, each once.
    let clip = fixture("sampling_h264_open_gop.mp4");
    let out = framefeed()
        .args(["info", "--segments", "40"])
        .arg(&clip)
        .output()
        .unwrap();
    let info = info_json(&out);
    let segments: Vec<(u64, u64)> = info["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s[0].as_u64().unwrap(), s[1].as_u64().unwrap()))
        .collect();
    assert!(segments.len() >= 3, "{segments:?}");
    assert_eq!(segments[0].0, 0);
    assert_eq!(segments.last().unwrap().1, 150);
    assert!(segments
        .windows(2)
        .all(|w| w[0].1 == w[1].0 && w[0].1 - w[0].0 >= 40));

    let flags = [
        "run", "--json", "--md5", "-L", "4", "-B", "2", "--stride", "2", "--step", "3",
    ];
    // (first frame, its frames' indices, their MD5s) of every sequence.
    let sequences = |lines: Vec<Value>| -> Vec<(u64, Value, Value)> {
        lines
            .iter()
            .filter(|l| l.get("sequences").is_some())
            .flat_map(|l| l["sequences"].as_array().unwrap().clone())
            .map(|s| {
                assert!(s["md5"].as_array().is_some_and(|m| !m.is_empty()));
                (
                    s["first_frame"].as_u64().unwrap(),
                    s["frames"].clone(),
                    s["md5"].clone(),
                )
            })
            .collect()
    };
    let whole = sequences(run_json(
        flags
            .iter()
            .map(|s| s.to_string())
            .chain([clip.display().to_string()]),
    ));
    let mut parts = Vec::new();
    for (first, end) in segments.iter().rev() {
        let mine = sequences(run_json(flags.iter().map(|s| s.to_string()).chain([
            format!("--segment={first}:{end}"),
            clip.display().to_string(),
        ])));
        assert!(
            mine.iter().all(|(f, _, _)| (*first..*end).contains(f)),
            "{first}..{end}"
        );
        parts.extend(mine);
    }
    parts.sort_by_key(|(f, _, _)| *f);
    assert_eq!(parts.len(), whole.len(), "lost or repeated sequences");
    assert_eq!(parts, whole);

    for bad in ["--segment=9", "--segment=9:x"] {
        let out = framefeed().args(["run", bad]).arg(&clip).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
    let out = framefeed()
        .args(["run", "--segment=9:9"])
        .arg(&clip)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("allowed: end > first"));
    let out = framefeed()
        .args(["info", "--segments", "0"])
        .arg(&clip)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("allowed: 1 frame or more"));
}

/// `framefeed COMMAND --help`'s defaults: flag (without its dashes) → the text of its `[default: …]`.
fn help_defaults(command: &str) -> std::collections::BTreeMap<String, String> {
    let out = framefeed().args([command, "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let mut defaults = std::collections::BTreeMap::new();
    let mut flag: Option<String> = None;
    for line in help.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("--") || (trimmed.starts_with('-') && trimmed.contains(", --")) {
            let long = &trimmed[trimmed.find("--").unwrap() + 2..];
            flag = Some(long.split([' ', '<', ',']).next().unwrap().to_owned());
        }
        if let (Some(name), Some(at)) = (&flag, line.find("[default: ")) {
            let rest = &line[at + 10..];
            defaults.insert(name.clone(), rest[..rest.find(']').unwrap()].to_owned());
            flag = None;
        }
    }
    defaults
}

#[test]
fn the_help_shows_the_librarys_defaults() {
    use framefeed::server::ServeConfig;
    use framefeed::{Choice, MuxConfig, Reconnect, RtspTransport, UrlOptions};
    let secs = |d: std::time::Duration| d.as_secs_f64().to_string();
    let run = help_defaults("run");
    let serve = help_defaults("serve");
    let library = ServeConfig::default();
    for (help, flag, want) in [
        (&run, "open-timeout", secs(UrlOptions::DEFAULT_OPEN_TIMEOUT)),
        (&run, "read-timeout", secs(UrlOptions::DEFAULT_READ_TIMEOUT)),
        (&run, "reconnect", Reconnect::DEFAULT_TRIES.to_string()),
        (
            &run,
            "rtsp-transport",
            RtspTransport::default().name().into(),
        ),
        (
            &run,
            "deadline",
            MuxConfig::DEFAULT_DEADLINE.as_millis().to_string(),
        ),
        (
            &run,
            "mux-policy",
            framefeed::MuxPolicy::default().name().into(),
        ),
        (
            &run,
            "policy",
            framefeed::LastSequencePolicy::default().name().into(),
        ),
        (&run, "dtype", framefeed::DType::default().name().into()),
        (&run, "layout", framefeed::Layout::default().name().into()),
        (
            &run,
            "nvdec",
            framefeed::NvdecDriver::default().name().into(),
        ),
        (
            &run,
            "clip-sampler",
            framefeed::ClipSampler::default().name().into(),
        ),
        (
            &run,
            "clip-policy",
            framefeed::ClipPolicy::default().name().into(),
        ),
        (&run, "device", framefeed::Device::default().to_string()),
        (
            &run,
            "crop-pos",
            framefeed::CropPosition::default().to_string(),
        ),
        (&serve, "addr", library.addr.to_string()),
        (&serve, "max-streams", library.max_streams.to_string()),
        (
            &serve,
            "max-streams-per-client",
            library.max_streams_per_client.to_string(),
        ),
        (&serve, "max-body-bytes", library.max_body_bytes.to_string()),
        (
            &serve,
            "max-upload-memory",
            library.max_upload_memory.to_string(),
        ),
        (&serve, "header-timeout", secs(library.header_timeout)),
        (
            &serve,
            "max-connections",
            library.max_connections.to_string(),
        ),
        (
            &serve,
            "min-upload-rate",
            library.min_upload_rate.to_string(),
        ),
        (
            &serve,
            "upload-rate-window",
            secs(library.upload_rate_window),
        ),
        (&serve, "stall-timeout", secs(library.stall_timeout)),
        (
            &serve,
            "decoder-threads-per-stream",
            library.decoder_threads_per_stream.to_string(),
        ),
        (&serve, "shutdown-grace", secs(library.shutdown_grace)),
        (&serve, "allow-hosts", library.allow_hosts.to_string()),
    ] {
        assert_eq!(help.get(flag), Some(&want), "--{flag}");
    }
    assert_eq!(serve.get("moov-at-end").map(String::as_str), Some("buffer"));
}

/// A damaged file (decord's clip, cut in the middle of its data here from the committed H.264 fixture): by
/// default its frames come with `damaged` and `holes` in the JSON lines, the summary counts them per video, and
/// the exit status is 0 (as the `ffmpeg` CLI's); `--strict` fails the video at the damage and exits 1.
#[test]
fn damage_is_reported_in_the_lines_and_fails_only_with_strict() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = read_fixture("damage_h264.mp4");
    let at = data.len() * 11 / 20;
    data[at..at + 1500].fill(0xFF);
    let path = dir.path().join("damaged.mp4");
    std::fs::write(&path, data).unwrap();
    let lines = run_json([
        std::ffi::OsStr::new("run"),
        "--json".as_ref(),
        "-L".as_ref(),
        "8".as_ref(),
        path.as_os_str(),
    ]);
    let (summary, batches) = lines.split_last().unwrap();
    let summary = &summary["summary"];
    let holes: Vec<u64> = batches
        .iter()
        .flat_map(|b| b["sequences"].as_array().unwrap())
        .flat_map(|s| s["holes"].as_array().cloned().unwrap_or_default())
        .map(|h| h["index"].as_u64().unwrap())
        .collect();
    let damaged: usize = batches
        .iter()
        .flat_map(|b| b["sequences"].as_array().unwrap())
        .map(|s| s["damaged"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(!holes.is_empty(), "{lines:?}");
    assert_eq!(summary["holes"], holes.len() as u64);
    assert_eq!(summary["damaged_frames"], damaged as u64);
    assert_eq!(summary["failed_videos"], 0);
    let per_video = &summary["damaged_videos"][0];
    assert_eq!(per_video["holes"], holes.len() as u64, "{summary}");
    // Every frame and hole has its index: 100 in all.
    assert_eq!(
        summary["frames"].as_u64().unwrap() + holes.len() as u64,
        100
    );

    let out = framefeed()
        .args(["run", "--json", "--strict", "-L", "8"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out.stdout);
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["failed_videos"], 1, "{summary}");
    assert!(summary["frames"].as_u64().unwrap() < 100);
}

#[test]
fn dtype_uint16_md5s_are_the_clis_rgb48le_frames() {
    // `--dtype uint16 --md5` (issue 62): each frame's MD5 is that of its little-endian RGB48 bytes, which are
    // `ffmpeg -pix_fmt rgb48le`'s for a 10-bit source.
    if skip_without_ffmpeg("the CLI's uint16 MD5 test") {
        return;
    }
    for name in ["hdr_pq_hevc10.mp4", "hdr_hlg_hevc10_422.mp4"] {
        let path = fixture(name);
        let got: Vec<String> = run_json(
            [
                "run", "-L", "3", "-B", "2", "--json", "--md5", "--dtype", "uint16",
            ]
            .iter()
            .map(std::ffi::OsString::from)
            .chain([path.clone().into_os_string()]),
        )
        .iter()
        .filter_map(|l| l["sequences"].as_array())
        .flatten()
        .flat_map(|s| {
            s["md5"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
        assert_eq!(got, ffmpeg_md5s_as(&path, &[], None, "rgb48le"), "{name}");
    }
}
