//! Audio beside the frames (issue 63): each sequence carries the samples played from its first frame's start to
//! its last frame's end, equal (to the bit, they come from the same decoder and resampler) to that span of the
//! `ffmpeg` CLI's decode of the whole stream (`ffmpeg -i FILE -vn [-ac N] [-ar R] -f f32le -`, whose sample 0
//! plays at the stream's first decoded frame), on AAC, MP3, Opus, FLAC and PCM in MP4, MPEG-TS, WebM, Matroska
//! and MOV files made here, one of them with its audio starting after its video; a video without audio gets
//! empty audio and its frames.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{ffmpeg_stdout, skip_without_ffmpeg};
use framefeed::{Audio, AudioClip, Config, Encoded, VideoInput, VideoReader};

/// 2 s of `testsrc2` at 30 fps with a two-tone stereo sine at 44.1 kHz, muxed as `name` with the codec
/// arguments `args`; `delay` seconds of the video pass before the audio starts.
fn clip(dir: &Path, name: &str, args: &[&str], delay: Option<&str>) -> PathBuf {
    clip_of(dir, name, args, delay, "2")
}

/// [`clip`], `seconds` long.
fn clip_of(dir: &Path, name: &str, args: &[&str], delay: Option<&str>, seconds: &str) -> PathBuf {
    let path = dir.join(name);
    let mut cmd = Command::new("ffmpeg");
    cmd.args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=96x64:rate=30");
    if let Some(delay) = delay {
        cmd.args(["-itsoffset", delay]);
    }
    let status = cmd
        .args(["-f", "lavfi", "-i"])
        .arg("aevalsrc=0.5*sin(2*PI*440*t)|0.3*sin(2*PI*660*t+1):s=44100")
        .args(["-t", seconds, "-pix_fmt", "yuv420p"])
        .args(args)
        .arg(&path)
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg could not make {name}");
    path
}

/// 1 s of `testsrc2` at 30 fps with no audio, at `path`.
fn silent_clip(path: &Path) {
    common::ffmpeg(&[
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=96x64:rate=30",
        "-t",
        "1",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        path.to_str().unwrap(),
    ]);
}

/// The CLI's decode of the whole audio stream, packed `f32`, with `-ac`/`-ar` when given.
fn reference(path: &Path, channels: Option<u32>, rate: Option<u32>) -> Vec<f32> {
    let mut tail: Vec<String> = vec!["-vn".into()];
    if let Some(c) = channels {
        tail.extend(["-ac".into(), c.to_string()]);
    }
    if let Some(r) = rate {
        tail.extend(["-ar".into(), r.to_string()]);
    }
    tail.extend(["-f".into(), "f32le".into(), "-".into()]);
    let tail: Vec<&str> = tail.iter().map(String::as_str).collect();
    ffmpeg_stdout(path, &tail)
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The first line of ffprobe's `entries` for the first stream of `kind` (`a` or `v`).
fn probe(path: &Path, kind: &str, entries: &str) -> String {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", &format!("{kind}:0")])
        .args(["-show_entries", entries, "-of", "csv=p=0"])
        .arg(path)
        .output()
        .expect("run ffprobe");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .next()
        .unwrap_or_default()
        .trim()
        .trim_end_matches(',')
        .to_owned()
}

/// Seconds a timestamp unit of the first stream of `kind`.
fn tick(path: &Path, kind: &str) -> f64 {
    let base = probe(path, kind, "stream=time_base");
    let (num, den) = base.split_once('/').expect("a time base");
    num.parse::<f64>().unwrap() / den.parse::<f64>().unwrap()
}

/// When the audio stream's first decoded frame plays (ffprobe's decode).
fn audio_start(path: &Path) -> f64 {
    let ts: f64 = probe(path, "a", "frame=best_effort_timestamp")
        .parse()
        .expect("a first audio frame");
    ts * tick(path, "a")
}

/// Every sequence's frame times and audio, in order.
fn sequences(path: &Path, audio: Audio, length: usize) -> Vec<(Vec<f64>, AudioClip)> {
    sequences_fed(path, audio, length, Fed::Whole)
}

/// How a test feeds its file.
#[derive(Clone, Copy, PartialEq)]
enum Fed {
    /// Whole, from its path.
    Whole,
    /// As a live video, in 4 KiB chunks.
    Live,
    /// Pulled by URL from an HTTP server on loopback that cannot seek (read once).
    Url,
}

/// [`sequences`], the file fed as `fed` says.
fn sequences_fed(path: &Path, audio: Audio, length: usize, fed: Fed) -> Vec<(Vec<f64>, AudioClip)> {
    let input = VideoInput::new(Config::new(length, 2).audio(audio)).unwrap();
    if fed == Fed::Url {
        let (port, _) = common::serve_http(std::fs::read(path).unwrap(), false);
        let url = format!("http://127.0.0.1:{port}/clip.ts");
        input.feed_url(url, framefeed::UrlOptions::new()).unwrap();
    } else if fed == Fed::Live {
        let bytes = std::fs::read(path).unwrap();
        let feed = input.feed_live().unwrap();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for chunk in bytes.chunks(4096) {
                    feed.push(chunk.to_vec()).unwrap();
                }
                feed.finish();
            });
        });
    } else {
        input.feed(Encoded::file(path).unwrap()).unwrap();
    }
    input.close();
    let mut out = Vec::new();
    for batch in input.iter() {
        let batch = batch.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for seq in batch.sequences() {
            let clip = seq.audio().expect("audio was asked for").clone();
            out.push((seq.pts().to_vec(), clip));
        }
    }
    out
}

/// Checks each sequence's audio against the CLI's samples: its first sample is the one playing at its first
/// frame (or the stream's first, when the audio starts later), its last the one before its last frame's end,
/// and the values are the CLI's.
fn check(name: &str, path: &Path, channels: Option<u32>, rate: Option<u32>, native: u32) {
    let want = reference(path, channels, rate);
    check_against(name, path, channels, rate, native, &want);
}

/// [`check`] against the samples `want` (packed, sample 0 at the audio's first frame).
fn check_against(
    name: &str,
    path: &Path,
    channels: Option<u32>,
    rate: Option<u32>,
    native: u32,
    want: &[f32],
) {
    check_fed(name, path, channels, rate, native, want, Fed::Whole)
}

/// [`check_against`], the file fed as `fed` says.
fn check_fed(
    name: &str,
    path: &Path,
    channels: Option<u32>,
    rate: Option<u32>,
    native: u32,
    want: &[f32],
    fed: Fed,
) {
    let mut audio = Audio::new();
    if let Some(c) = channels {
        audio = audio.channels(c);
    }
    if let Some(r) = rate {
        audio = audio.sample_rate(r);
    }
    let first = audio_start(path);
    let seqs = sequences_fed(path, audio, 7, fed);
    let out_rate = f64::from(rate.unwrap_or(native));
    let c = seqs[0].1.channels() as usize;
    assert_eq!(c, channels.unwrap_or(2) as usize, "{name}: channels");
    assert_eq!(f64::from(seqs[0].1.sample_rate()), out_rate, "{name}: rate");
    let total = want.len() / c;
    let video_tick = tick(path, "v");
    let mut covered = None;
    for (i, (pts, clip)) in seqs.iter().enumerate() {
        let index = |t: f64| (((t - first) * out_rate).round().max(0.0) as usize).min(total);
        // A sequence's sound starts where the one before's ended (or at its first frame), and ends a frame
        // period (on the video's timestamp grid: 33 ms in Matroska) after its last frame starts.
        let period = (1.0 / 30.0 / video_tick).round() * video_tick;
        let from = covered.unwrap_or(index(pts[0]));
        let to = index(pts.last().unwrap() + period);
        assert_eq!(clip.samples(), to - from, "{name} sequence {i}: samples");
        let at = first + from as f64 / out_rate;
        assert!(
            (clip.pts_seconds() - at).abs() < 1e-9,
            "{name} sequence {i}: {} vs {at}",
            clip.pts_seconds()
        );
        for ch in 0..c {
            let theirs: Vec<f32> = want[from * c..to * c]
                .iter()
                .skip(ch)
                .step_by(c)
                .copied()
                .collect();
            let ours = clip.channel(ch);
            let worst = ours
                .iter()
                .zip(&theirs)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(
                worst <= 1e-6,
                "{name} sequence {i} channel {ch}: off by {worst}"
            );
        }
        covered = Some(to);
    }
    // The 2 s of frames carry (nearly) 2 s of sound, where the audio plays throughout.
    let carried: usize = seqs.iter().map(|(_, a)| a.samples()).sum();
    if !name.contains("late") {
        assert!(
            carried as f64 >= 1.95 * out_rate,
            "{name}: {carried} samples of {total}"
        );
    }
}

#[test]
fn each_sequence_carries_the_clis_samples_of_its_span() {
    if skip_without_ffmpeg("the audio conformance test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let h264 = ["-c:v", "libx264", "-preset", "ultrafast"];
    let cases: Vec<(&str, Vec<&str>, u32)> = vec![
        ("aac.mp4", [&h264[..], &["-c:a", "aac"]].concat(), 44_100),
        (
            "mp3.ts",
            [&h264[..], &["-c:a", "libmp3lame"]].concat(),
            44_100,
        ),
        ("flac.mkv", [&h264[..], &["-c:a", "flac"]].concat(), 44_100),
        (
            "pcm.mov",
            [&h264[..], &["-c:a", "pcm_s16le"]].concat(),
            44_100,
        ),
        (
            "opus.webm",
            vec!["-c:v", "libvpx", "-deadline", "realtime", "-c:a", "libopus"],
            48_000,
        ),
    ];
    for (name, args, native) in &cases {
        let path = clip(dir.path(), name, args, None);
        check(name, &path, None, None, *native);
        check(name, &path, Some(1), Some(16_000), *native);
    }
}

#[test]
fn audio_that_starts_late_begins_at_its_first_sample() {
    if skip_without_ffmpeg("the audio conformance test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"];
    let path = clip(dir.path(), "late.mp4", &args, Some("0.5"));
    check("late.mp4", &path, None, None, 44_100);
    let seqs = sequences(&path, Audio::new(), 7);
    // The first sequence (0 to 0.23 s) has no sound; the one that holds 0.5 s starts its sound there.
    assert!(seqs[0].1.is_empty(), "{:?}", seqs[0].1.samples());
    let holding = seqs
        .iter()
        .find(|(pts, _)| pts[0] <= 0.5 && *pts.last().unwrap() >= 0.5)
        .unwrap();
    assert!((holding.1.pts_seconds() - audio_start(&path)).abs() < 1e-9);
}

#[test]
fn a_video_without_audio_gives_empty_audio_and_its_frames() {
    if skip_without_ffmpeg("the audio conformance test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("silent.mp4");
    silent_clip(&path);
    let seqs = sequences(&path, Audio::new(), 8);
    assert_eq!(seqs.iter().map(|(p, _)| p.len()).sum::<usize>(), 30);
    assert!(seqs.iter().all(|(_, a)| a.is_empty() && a.channels() == 0));
    // Without audio asked for, sequences carry none.
    let input = VideoInput::new(Config::new(8, 1)).unwrap();
    input.feed(Encoded::file(&path).unwrap()).unwrap();
    input.close();
    assert!(input
        .iter()
        .all(|b| b.unwrap().sequences()[0].audio().is_none()));
}

#[test]
fn a_hole_in_the_audio_stays_silent_and_the_sound_after_it_keeps_its_place() {
    if skip_without_ffmpeg("the audio conformance test") {
        return;
    }
    // 0.4 s of the sound taken out, its timestamps kept: the AAC stream jumps from 0.8 s to 1.2 s.
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-af",
        "aselect='not(between(t,0.8,1.2))'",
        "-c:a",
        "aac",
    ];
    let path = clip(dir.path(), "hole.mkv", &args, None);
    // The CLI's decode closes the hole up; placed by its frames' times (ffprobe's), with silence where a
    // frame starts over 0.1 s after the one before ends, it is what the sequences must carry.
    let closed = reference(&path, None, None);
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "a:0", "-show_entries"])
        .args(["frame=best_effort_timestamp,nb_samples", "-of", "csv=p=0"])
        .arg(&path)
        .output()
        .unwrap();
    let (tick, first) = (tick(&path, "a"), audio_start(&path));
    let mut placed: Vec<f32> = Vec::new();
    let mut taken = 0;
    let mut holes = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut fields = line.trim_end_matches(',').split(',');
        let ts: f64 = fields.next().unwrap().parse().unwrap();
        let n: usize = fields.next().unwrap().parse().unwrap();
        let at = ((ts * tick - first) * 44_100.0).round() as usize;
        if at > placed.len() / 2 + 4410 {
            placed.resize(at * 2, 0.0);
            holes += 1;
        }
        placed.extend_from_slice(&closed[taken..taken + n * 2]);
        taken += n * 2;
    }
    assert_eq!(holes, 1, "the fixture has one hole");
    check_against("hole.mkv", &path, None, None, 44_100, &placed);
}

#[test]
fn the_clis_json_lines_carry_each_sequences_audio_and_its_md5() {
    if skip_without_ffmpeg("the CLI's audio test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"];
    let path = clip(dir.path(), "cli.mp4", &args, None);
    let out = Command::new(env!("CARGO_BIN_EXE_framefeed"))
        .args(["run", "-L", "10", "-B", "2", "--json", "--md5", "--audio"])
        .args(["--audio-rate", "16000", "--audio-channels", "1"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = reference(&path, Some(1), Some(16_000));
    let first = audio_start(&path);
    let mut carried = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(seqs) = line["sequences"].as_array() else {
            continue;
        };
        for seq in seqs {
            let audio = &seq["audio"];
            assert_eq!(audio["sample_rate"], 16_000, "{audio}");
            assert_eq!(audio["shape"][0], 1);
            let n = audio["shape"][1].as_u64().unwrap() as usize;
            let from = ((audio["pts"].as_f64().unwrap() - first) * 16_000.0).round() as usize;
            assert_eq!(from, carried, "contiguous");
            let bytes: Vec<u8> = want[from..from + n]
                .iter()
                .flat_map(|s| s.to_le_bytes())
                .collect();
            assert_eq!(audio["md5"], common::md5_hex(&bytes), "{audio}");
            assert!((audio["duration"].as_f64().unwrap() - n as f64 / 16_000.0).abs() < 1e-9);
            carried += n;
        }
    }
    assert!(carried >= 31_000, "{carried} samples carried");
}

#[test]
fn a_readers_audio_by_time_in_any_order_is_the_clis() {
    if skip_without_ffmpeg("the reader's audio test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"];
    let path = clip_of(dir.path(), "long.mp4", &args, None, "6");
    let first = audio_start(&path);
    for (audio, channels, rate) in [
        (Audio::new(), 2usize, 44_100.0),
        (Audio::new().sample_rate(16_000).channels(1), 1, 16_000.0),
    ] {
        let want = reference(&path, audio.channel_count(), audio.rate());
        let total = want.len() / channels;
        let reader = VideoReader::open(
            Encoded::file(&path).unwrap(),
            &Config::new(1, 1).audio(audio),
        )
        .unwrap();
        let meta = reader.metadata().audio.clone().expect("audio metadata");
        assert_eq!(
            (meta.codec.as_str(), meta.sample_rate, meta.num_channels),
            ("aac", Some(44_100), Some(2))
        );
        // Forward, behind (the stream read again from its start), to the end, and from before the audio's start.
        for (start, stop) in [
            (2.0, Some(2.5)),
            (4.0, Some(4.2)),
            (1.3, Some(1.9)),
            (5.5, None),
            (-1.0, Some(0.1)),
        ] {
            let clip = reader.audio_played_in_range(start, stop).unwrap();
            let index = |t: f64| (((t - first) * rate).round().max(0.0) as usize).min(total);
            let (from, to) = (index(start), stop.map_or(total, index));
            assert_eq!(
                (clip.channels() as usize, clip.samples()),
                (channels, to - from),
                "{start}..{stop:?}"
            );
            assert!((clip.pts_seconds() - (first + from as f64 / rate)).abs() < 1e-9);
            for c in 0..channels {
                let theirs: Vec<f32> = want[from * channels..to * channels]
                    .iter()
                    .skip(c)
                    .step_by(channels)
                    .copied()
                    .collect();
                let worst = clip
                    .channel(c)
                    .iter()
                    .zip(&theirs)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0f32, f32::max);
                assert!(
                    worst <= 1e-6,
                    "{start}..{stop:?} channel {c}: off by {worst}"
                );
            }
        }
        assert!(reader.audio_played_in_range(1.0, Some(0.5)).is_err());
    }
    // A video without audio: no metadata, and a read names why it fails.
    let silent = dir.path().join("silent.mp4");
    silent_clip(&silent);
    let reader = VideoReader::open(Encoded::file(&silent).unwrap(), &Config::new(1, 1)).unwrap();
    assert!(reader.metadata().audio.is_none());
    let err = reader.audio_played_in_range(0.0, None).unwrap_err();
    assert_eq!(err.code(), "no_audio_stream", "{err}");
}

#[test]
fn live_and_pulled_videos_sequences_carry_their_sound_read_from_the_same_stream() {
    if skip_without_ffmpeg("the live audio test") {
        return;
    }
    // MPEG-TS pushed in chunks as a live encoder would, and pulled by URL from a server that cannot seek: the
    // audio packets the video's demuxer reads are set aside for the audio decoder, and each batch waits (in
    // order) until its sound is decoded.
    let dir = tempfile::tempdir().unwrap();
    let h264 = ["-c:v", "libx264", "-preset", "ultrafast"];
    for (name, codec) in [("live_aac.ts", "aac"), ("live_mp3.ts", "libmp3lame")] {
        let args = [&h264[..], &["-c:a", codec]].concat();
        let path = clip(dir.path(), name, &args, None);
        for (channels, rate) in [(None, None), (Some(1), Some(16_000))] {
            let want = reference(&path, channels, rate);
            check_fed(name, &path, channels, rate, 44_100, &want, Fed::Live);
            check_fed(name, &path, channels, rate, 44_100, &want, Fed::Url);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_services_lines_carry_each_sequences_sound() {
    if skip_without_ffmpeg("the service's audio test") {
        return;
    }
    // `POST /videos?audio=true&audio_rate=16000&audio_channels=1&md5=true`: the upload is read live, its sound
    // from the same stream; each line's sequence names its audio's shape, time and MD5.
    let dir = tempfile::tempdir().unwrap();
    let args = ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"];
    let path = clip(dir.path(), "upload.ts", &args, None);
    let server = common::serve::serve(&[]);
    let body = std::fs::read(&path).unwrap();
    let query =
        "sequence_length=10&batch_size=2&audio=true&audio_rate=16000&audio_channels=1&md5=true";
    let start = format!("POST /videos?{query} HTTP/1.1\r\n");
    let length = format!("Content-Length: {}", body.len());
    let response = common::serve::request(server.addr, &start, &[&length], &body).await;
    assert_eq!(response.status, 200, "{}", response.body);
    let want = reference(&path, Some(1), Some(16_000));
    let first = audio_start(&path);
    // The MPEG-TS audio starts before the first frame: the first sequence's sound starts at that frame.
    let (mut carried, mut next) = (0, None);
    for line in response.lines() {
        let Some(seqs) = line["sequences"].as_array() else {
            continue;
        };
        for seq in seqs {
            let audio = &seq["audio"];
            let n = audio["shape"][1].as_u64().unwrap() as usize;
            let from = ((audio["pts"].as_f64().unwrap() - first) * 16_000.0).round() as usize;
            assert_eq!(from, next.unwrap_or(from), "contiguous: {audio}");
            next = Some(from + n);
            let bytes: Vec<u8> = want[from..from + n]
                .iter()
                .flat_map(|s| s.to_le_bytes())
                .collect();
            assert_eq!(audio["md5"], common::md5_hex(&bytes), "{audio}");
            carried += n;
        }
    }
    assert!(carried >= 31_000, "{carried} samples carried");
    // Audio settings are checked before anything is decoded.
    for (query, names) in [
        (
            "audio_rate=16000",
            "audio_rate and audio_channels are for audio=true",
        ),
        (
            "audio=true&audio_channels=40",
            "audio channels is 40; allowed: 1 to 16",
        ),
    ] {
        let start = format!("POST /videos?{query} HTTP/1.1\r\n");
        let response = common::serve::request(server.addr, &start, &[&length], &body).await;
        assert_eq!(response.status, 400, "{query}: {}", response.body);
        let message = response.error()["message"].as_str().unwrap().to_owned();
        assert!(message.contains(names), "{query}: {message}");
    }
}

#[test]
fn the_audio_stream_is_the_one_the_cli_picks_or_the_one_named() {
    if skip_without_ffmpeg("the audio stream choice test") {
        return;
    }
    // Two audio streams, neither marked default: mono first, stereo second. The CLI takes the one with the most
    // channels (a default one would come first).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.mkv");
    common::ffmpeg(&[
        "-v",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=96x64:rate=30",
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=300:sample_rate=8000",
        "-f",
        "lavfi",
        "-i",
        "aevalsrc=0.5*sin(2*PI*440*t)|0.3*sin(2*PI*660*t):s=16000",
        "-map",
        "0",
        "-map",
        "1",
        "-map",
        "2",
        "-t",
        "1",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "flac",
        "-disposition:a",
        "0",
        path.to_str().unwrap(),
    ]);
    let picked = framefeed::decode_audio(Encoded::file(&path).unwrap(), Audio::new()).unwrap();
    assert_eq!((picked.channels(), picked.sample_rate()), (2, 16_000));
    let want = reference(&path, None, None);
    let packed: Vec<f32> = (0..picked.samples())
        .flat_map(|i| [picked.channel(0)[i], picked.channel(1)[i]])
        .collect();
    assert_eq!(packed, want);
    let named =
        framefeed::decode_audio(Encoded::file(&path).unwrap(), Audio::new().stream(1)).unwrap();
    assert_eq!((named.channels(), named.sample_rate()), (1, 8_000));
    let err =
        framefeed::decode_audio(Encoded::file(&path).unwrap(), Audio::new().stream(0)).unwrap_err();
    assert_eq!(
        err.code(),
        "no_audio_stream",
        "stream 0 is the video: {err}"
    );
}

#[test]
fn damaged_audio_never_changes_or_fails_the_frames() {
    if skip_without_ffmpeg("the damaged audio test") {
        return;
    }
    // Bytes in the middle of the file overwritten (video and audio packets alike): with audio on, the same
    // frames come out as with it off, and the video does not fail for its audio.
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-c:a",
        "libmp3lame",
    ];
    let path = clip(dir.path(), "damaged.ts", &args, None);
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    for b in &mut bytes[middle..middle + 6000] {
        *b ^= 0x47;
    }
    let frames = |audio: bool| {
        let mut config = Config::new(8, 1);
        if audio {
            config = config.audio(Audio::new());
        }
        let input = VideoInput::new(config).unwrap();
        input.feed(bytes.clone()).unwrap();
        input.close();
        let mut out = Vec::new();
        for batch in input.iter() {
            let batch = batch.expect("the damaged video still decodes");
            for seq in batch.sequences() {
                assert_eq!(seq.audio().is_some(), audio);
                out.extend(seq.frames().map(|f| common::md5_hex(f.data())));
            }
        }
        out
    };
    let (with, without) = (frames(true), frames(false));
    assert!(without.len() > 40, "{} frames", without.len());
    assert_eq!(with, without);
}

#[test]
fn strided_and_clipped_sequences_carry_the_span_their_frames_cover() {
    if skip_without_ffmpeg("the sampled audio test") {
        return;
    }
    // Every other frame, sequences starting 6 frames apart (overlapping), and 5 random clips: each sequence's
    // sound runs from its first frame's start to its last frame's end, the CLI's samples of that span.
    let dir = tempfile::tempdir().unwrap();
    let args = ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"];
    let path = clip_of(dir.path(), "sampled.mp4", &args, None, "4");
    let want = reference(&path, Some(1), None);
    let first = audio_start(&path);
    let index = |t: f64| ((t - first) * 44_100.0).round().max(0.0) as usize;
    for options in [
        framefeed::SamplingOptions {
            stride: Some(2),
            step: Some(6),
            ..Default::default()
        },
        framefeed::SamplingOptions {
            clips: Some(5),
            seed: Some(3),
            ..Default::default()
        },
    ] {
        let config = Config::new(4, 2)
            .sampling(framefeed::Sampling::from(options))
            .audio(Audio::new().channels(1));
        let input = VideoInput::new(config).unwrap();
        input.feed(Encoded::file(&path).unwrap()).unwrap();
        input.close();
        let mut seen = 0;
        for batch in input.iter() {
            for seq in batch.unwrap().sequences() {
                let pts = seq.pts();
                let sound = seq.audio().unwrap();
                let (from, to) = (index(pts[0]), index(pts.last().unwrap() + 512.0 / 15_360.0));
                assert_eq!(sound.samples(), to - from, "{pts:?}");
                assert_eq!(sound.channel(0), &want[from..to], "{pts:?}");
                seen += 1;
            }
        }
        assert!(seen >= 5, "{seen} sequences");
    }
}

#[test]
fn packed_batches_carry_each_videos_own_sound() {
    if skip_without_ffmpeg("the packed audio test") {
        return;
    }
    // Two videos packed into full batches (the first's last sequence shares a batch with the second's first):
    // each sequence has its own video's sound, cut at its own frames' times.
    let dir = tempfile::tempdir().unwrap();
    let args = ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"];
    let a = clip(dir.path(), "a.mp4", &args, None);
    let b = clip(dir.path(), "b.mp4", &args, Some("0.5"));
    let input = VideoInput::new(
        Config::new(7, 4)
            .pack_batches(true)
            .audio(Audio::new().channels(1)),
    )
    .unwrap();
    for path in [&a, &b] {
        input.feed(Encoded::file(path).unwrap()).unwrap();
    }
    input.close();
    let wants = [reference(&a, Some(1), None), reference(&b, Some(1), None)];
    let firsts = [audio_start(&a), audio_start(&b)];
    let mut packed = false;
    let mut carried = [0usize; 2];
    for batch in input.iter() {
        let batch = batch.unwrap();
        packed |= batch.is_packed();
        for seq in batch.sequences() {
            let v = seq.video().id.0 as usize;
            let sound = seq.audio().unwrap();
            let from = ((sound.pts_seconds() - firsts[v]) * 44_100.0).round() as usize;
            assert_eq!(
                sound.channel(0),
                &wants[v][from..from + sound.samples()],
                "video {v}"
            );
            carried[v] += sound.samples();
        }
    }
    assert!(packed, "a batch held both videos");
    assert!(
        carried[0] as f64 > 1.9 * 44_100.0 && carried[1] as f64 > 1.4 * 44_100.0,
        "{carried:?}"
    );
}
