//! Frames as people see them, through every API: videos turned by a display matrix come out upright (the
//! turn before the resize and crop, the shapes the shown ones, the turn reported; `autorotate(false)` as
//! coded), a damaged start is numbered as a full decode numbers it (sampling, time ranges and segments
//! included), a change of frame size splits a sampled sequence without reordering it, in the Rust API, the
//! CLI and the service. Byte-for-byte against the `ffmpeg` CLI: `tests/conformance.rs`.

mod common;

use common::*;
use framefeed::{
    ClipSampler, Config, Crop, CropPosition, Encoded, Orientation, Resize, Sampling, Transforms,
};
use serde_json::Value;

fn indices(seqs: &[Seq]) -> Vec<Vec<u64>> {
    seqs.iter().map(|s| s.indices.clone()).collect()
}

#[test]
fn turned_videos_come_out_upright_and_say_how_they_were_turned() {
    let cases = [
        ("rotated_90.mp4", Some(90.0), Orientation::Rotate270),
        ("rotated_180.mp4", Some(-180.0), Orientation::Rotate180),
        ("rotated_270.mp4", Some(-90.0), Orientation::Rotate90),
        ("hflip.mp4", Some(-180.0), Orientation::FlipHorizontal),
        ("vflip.mp4", Some(0.0), Orientation::FlipVertical),
        ("transpose.mp4", Some(-90.0), Orientation::Transpose),
        ("transverse.mp4", Some(90.0), Orientation::Transverse),
        ("h264_100x60.mp4", None, Orientation::Upright),
    ];
    for (name, rotation, orientation) in cases {
        let path = fixture(name);
        let info = framefeed::probe(Encoded::file(&path).unwrap()).unwrap();
        let stream = &info.streams[0];
        assert_eq!(stream.rotation(), rotation, "{name}");
        assert_eq!(stream.orientation(), Some(orientation), "{name}");
        // 100x60 coded: shown 60 wide by a quarter turn or a diagonal mirror.
        let (w, h) = orientation.displayed_size(100, 60);
        let seqs = decode_file(&path, Config::new(4, 2));
        assert!(!seqs.is_empty(), "{name}");
        for s in &seqs {
            assert_eq!(s.shape, [h, w, 3], "{name}");
            assert_eq!(s.orientation, orientation, "{name}");
        }
        let coded = decode_file(&path, Config::new(4, 2).autorotate(false));
        assert_eq!(indices(&coded), indices(&seqs), "{name}");
        assert!(coded
            .iter()
            .all(|s| s.shape == [60, 100, 3] && s.orientation == Orientation::Upright));
    }
    // The turn comes from the frames when the stream has none (H.264's display orientation message).
    let message = fixture("orientation_message.ts");
    let info = framefeed::probe(Encoded::file(&message).unwrap()).unwrap();
    assert_eq!(info.streams[0].display_matrix, None);
    let seqs = decode_file(&message, Config::new(4, 1));
    assert!(seqs
        .iter()
        .all(|s| s.shape == [100, 60, 3] && s.orientation == Orientation::Transpose));
}

/// The resize and the crop see the upright frame: a turned video resized and cropped gives the bytes of the
/// same video turned by the `ffmpeg` CLI into a lossless file, then resized and cropped alike.
#[test]
fn the_resize_and_the_crop_see_the_upright_frame() {
    if skip_without_ffmpeg("the upright transforms test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in ["rotated_90.mp4", "transverse.mp4", "rotated_180.mp4"] {
        let upright = dir.path().join(format!("{name}.mkv"));
        ffmpeg(&[
            "-i",
            fixture(name).to_str().unwrap(),
            "-c:v",
            "libx264",
            "-qp",
            "0",
            "-pix_fmt",
            "yuv420p",
            upright.to_str().unwrap(),
        ]);
        let transforms = Transforms::new()
            .resize(Resize::Shorter(48))
            .crop(Crop::new(40, 44).position(CropPosition::Random))
            .seed(9);
        let config = Config::new(3, 2).transforms(transforms);
        let turned = decode_file(&fixture(name), config.clone());
        let reference = decode_file(&upright, config);
        assert_eq!(turned.len(), reference.len(), "{name}");
        for (a, b) in turned.iter().zip(&reference) {
            assert_eq!(a.indices, b.indices, "{name}");
            assert_eq!(a.shape, b.shape, "{name}");
            assert!(
                a.frames == b.frames,
                "{name}: frames {:?} differ",
                a.indices
            );
        }
    }
}

/// A recording cut in the middle of a GOP: the frames before its first keyframe cannot be decoded, and every
/// API numbers the frames a full decode gives from 0, whatever is sampled: indices, clips, time ranges and
/// target frame rates (counted from the first frame given), segments.
#[test]
fn a_damaged_start_is_numbered_as_a_full_decode_numbers_it() {
    let path = fixture("cut_start.ts");
    let plain = decode_file(&path, Config::new(4, 2));
    let n: usize = plain.iter().map(|s| s.indices.len()).sum();
    assert_eq!(
        plain
            .iter()
            .flat_map(|s| s.indices.clone())
            .collect::<Vec<_>>(),
        (0..n as u64).collect::<Vec<_>>()
    );
    if !skip_without_ffmpeg("the damaged start's frame count against the CLI") {
        assert_eq!(n, ffmpeg_md5s(&path, &[], None).len(), "the CLI's frames");
    }
    let sampled = |sampling: Sampling| decode_file(&path, Config::new(4, 2).sampling(sampling));
    let first = &plain[0].frames[0];
    let got = sampled(Sampling::new().indices(vec![0, 1]));
    assert_eq!(indices(&got), vec![vec![0, 1]]);
    assert!(
        &got[0].frames[0] == first,
        "index 0 is the first frame given"
    );
    assert_eq!(
        sampled(Sampling::new().clips(3, ClipSampler::Random)).len(),
        3
    );
    // 25 fps from the first frame given: [0, 0.2) s is frames 0 to 4; 5 fps is every fifth frame.
    assert_eq!(
        indices(&sampled(Sampling::new().time_range(0.0, 0.2))),
        vec![vec![0, 1, 2, 3], vec![4]]
    );
    assert_eq!(
        indices(&sampled(Sampling::new().fps(5.0)))[0],
        vec![0, 5, 10, 15]
    );
    let parts =
        framefeed::segments(&Encoded::file(&path).unwrap(), &Config::new(4, 2), 10).unwrap();
    assert_eq!(parts.first().map(|p| p.start), Some(0));
    assert_eq!(parts.last().map(|p| p.end), Some(n as u64));
    let joined: Vec<Vec<u64>> = parts
        .iter()
        .flat_map(|p| indices(&sampled(Sampling::new().segment(p.start, p.end))))
        .collect();
    assert_eq!(joined, indices(&plain));
}

/// A change of frame size inside a stream splits the sampled sequence it falls in: the frames before it and
/// those after it, each part at its own size, and the next sequence starts where the plan starts it (it was
/// [44, 46, 48] then [50] before [48], then [50, 52, 54, 52]: the last frame repeating the second).
#[test]
fn a_size_change_splits_a_sampled_sequence_without_reordering_it() {
    // 10 frames of 96x64, then 7 of 64x48; no timestamps (decoded in order).
    let raw = decode_file(
        &fixture("res_change.h264"),
        Config::new(4, 2).sampling(Sampling::new().stride(2)),
    );
    let small = [48, 64, 3];
    let large = [64, 96, 3];
    let got: Vec<(Vec<u64>, [usize; 3])> =
        raw.iter().map(|s| (s.indices.clone(), s.shape)).collect();
    assert_eq!(
        got,
        vec![
            (vec![0, 2, 4, 6], large),
            (vec![4, 6, 8], large),
            (vec![10], small),
            (vec![8], large),
            (vec![10, 12, 14], small),
            (vec![12, 14, 16], small),
            (vec![16], small),
        ]
    );
    // 26 frames of 96x64, then 22 of 64x48, with timestamps (decoded by seeking): the same rule.
    let path = fixture("res_change.ts");
    for (stride, step) in [(2, 4), (3, 4), (2, 3)] {
        let seqs = decode_file(
            &path,
            Config::new(4, 2).sampling(Sampling::new().stride(stride).step(step)),
        );
        let mut planned = (0u64..).step_by(step).map(|first| {
            (0..4u64)
                .map(|j| first + j * stride as u64)
                .filter(|&i| i < 48)
                .collect::<Vec<_>>()
        });
        let mut got = seqs.iter().peekable();
        while let Some(s) = got.next() {
            let plan = planned.next().unwrap();
            // A planned sequence across frame 26 comes as its two parts, in order.
            let mut parts = vec![s.indices.clone()];
            if plan.iter().any(|&i| i < 26) && plan.iter().any(|&i| i >= 26) {
                parts.push(got.next().unwrap().indices.clone());
            }
            assert_eq!(parts.concat(), plan, "stride {stride} step {step}");
            for part in &parts {
                assert!(part.iter().all(|&i| i < 26) || part.iter().all(|&i| i >= 26));
            }
        }
    }
}

/// The CLI: the turn in `info` and the JSON lines, `--no-autorotate`, `--clip-policy`, and a reader that goes
/// away ends a command quietly.
#[test]
fn the_cli_reports_turns_takes_the_opt_out_and_ends_quietly_on_a_closed_pipe() {
    let bin = env!("CARGO_BIN_EXE_framefeed");
    let path = fixture("rotated_90.mp4");
    let out = std::process::Command::new(bin)
        .arg("info")
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["streams"][0]["rotation"], 90.0);
    assert_eq!(info["streams"][0]["orientation"], "rotate270");
    let lines = |args: &[&str]| -> Vec<Value> {
        let out = std::process::Command::new(bin)
            .args(["run", "--json", "-L", "4", "-B", "1"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let p = path.to_str().unwrap();
    let turned = lines(&[p]);
    assert_eq!(
        turned[0]["sequences"][0]["shape"],
        serde_json::json!([4, 100, 60, 3])
    );
    assert_eq!(turned[0]["sequences"][0]["orientation"], "rotate270");
    let coded = lines(&[p, "--no-autorotate"]);
    assert_eq!(
        coded[0]["sequences"][0]["shape"],
        serde_json::json!([4, 60, 100, 3])
    );
    assert!(coded[0]["sequences"][0].get("orientation").is_none());
    let wrapped = lines(&[p, "--clips", "2", "--stride", "5", "--clip-policy", "wrap"]);
    for line in wrapped.iter().filter(|l| l.get("sequences").is_some()) {
        assert_eq!(
            line["sequences"][0]["frames"],
            serde_json::json!([0, 5, 10, 0])
        );
    }
    // The reader is gone before anything is written: the command ends quietly, with success.
    for args in [vec!["info", p], vec!["run", "--json", p]] {
        let mut child = std::process::Command::new(bin)
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// The CLI's frames of the awkward videos, in every sampling mode, are the `ffmpeg` CLI's at the indices the
/// JSON lines report (their `--md5`).
#[test]
fn the_cli_gives_ffmpegs_frames_in_every_sampling_mode() {
    if skip_without_ffmpeg("the CLI's awkward-video conformance") {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_framefeed");
    for name in [
        "rotated_90.mp4",
        "transverse.mp4",
        "cut_start.ts",
        "res_change.ts",
        "res_change.h264",
    ] {
        let path = fixture(name);
        let reference = ffmpeg_md5s(&path, &[], None);
        let last = (reference.len() - 1).to_string();
        let indices = format!("0,1,{last}");
        for flags in [
            vec![],
            vec!["--stride", "2"],
            vec!["--stride", "3", "--step", "2"],
            vec!["--clips", "3", "--seed", "4"],
            vec!["--clips", "2", "--clip-sampler", "regular", "--stride", "2"],
            vec!["--fps", "7"],
            vec!["--start", "0.03"],
            vec!["--indices", indices.as_str()],
        ] {
            let out = std::process::Command::new(bin)
                .args(["run", "--json", "--md5", "-L", "3", "-B", "2"])
                .arg(&path)
                .args(&flags)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name} {flags:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let mut frames = 0;
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let line: Value = serde_json::from_str(line).unwrap();
                for seq in line["sequences"].as_array().into_iter().flatten() {
                    let indices = seq["frames"].as_array().unwrap();
                    let md5s = seq["md5"].as_array().unwrap();
                    for (i, md5) in indices.iter().zip(md5s) {
                        let i = i.as_u64().unwrap() as usize;
                        assert_eq!(
                            md5.as_str(),
                            reference.get(i).map(String::as_str),
                            "{name} {flags:?}: frame {i}"
                        );
                        frames += 1;
                    }
                }
            }
            assert!(frames > 0, "{name} {flags:?}: no frame");
        }
    }
}

/// The service: uploads of turned, damaged and resized videos give the library's sequences and shapes, the
/// turn named in each line, `autorotate=false` as coded, and `clip_policy`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_gives_the_librarys_frames_of_awkward_uploads() {
    use common::http_client::{chunks_of, upload};
    use common::serve::serve;

    let server = serve(&[]);
    let post = |name: &'static str, query: &'static str| {
        let data = std::fs::read(fixture(name)).unwrap();
        let addr = server.addr;
        async move {
            let query = format!("sequence_length=4&batch_size=1&{query}");
            let sent = upload(
                addr,
                "127.0.0.1",
                &query,
                chunks_of(&data, 4 << 10),
                std::time::Duration::ZERO,
                None,
            )
            .await;
            let (status, lines) = sent.response.await.unwrap();
            assert_eq!(status, 200, "{name}?{query}: {lines:?}");
            lines
                .into_iter()
                .filter(|l| l.get("sequences").is_some())
                .flat_map(|l| l["sequences"].as_array().unwrap().clone())
                .collect::<Vec<Value>>()
        }
    };
    let library = |name: &str, config: Config| -> Vec<(Vec<u64>, Vec<usize>)> {
        decode_file(&fixture(name), config)
            .into_iter()
            .map(|s| {
                let shape = vec![s.indices.len(), s.shape[0], s.shape[1], 3];
                (s.indices, shape)
            })
            .collect()
    };
    let of = |seqs: &[Value]| -> Vec<(Vec<u64>, Vec<usize>)> {
        seqs.iter()
            .map(|s| {
                (
                    serde_json::from_value(s["frames"].clone()).unwrap(),
                    serde_json::from_value(s["shape"].clone()).unwrap(),
                )
            })
            .collect()
    };
    let turned = post("rotated_90.mp4", "stride=2").await;
    assert!(turned.iter().all(|s| s["orientation"] == "rotate270"));
    let config = |sampling: Sampling| Config::new(4, 1).sampling(sampling);
    assert_eq!(
        of(&turned),
        library("rotated_90.mp4", config(Sampling::new().stride(2)))
    );
    let coded = post("rotated_90.mp4", "autorotate=false").await;
    assert_eq!(
        of(&coded),
        library("rotated_90.mp4", Config::new(4, 1).autorotate(false))
    );
    let damaged = post("cut_start.ts", "indices=0,1,2,3,30").await;
    assert_eq!(
        of(&damaged),
        library(
            "cut_start.ts",
            config(Sampling::new().indices(vec![0, 1, 2, 3, 30]))
        )
    );
    let resized = post("res_change.ts", "stride=2").await;
    assert_eq!(
        of(&resized),
        library("res_change.ts", config(Sampling::new().stride(2)))
    );
    let wrapped = post("rotated_180.mp4", "clips=2&stride=5&clip_policy=wrap").await;
    assert_eq!(wrapped.len(), 2);
    for s in &wrapped {
        assert_eq!(s["frames"], serde_json::json!([0, 5, 10, 0]));
    }
}
