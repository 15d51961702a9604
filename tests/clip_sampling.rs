//! Clip sampling ([`Sampling`]): every sampled frame is byte-identical to the `ffmpeg` CLI's rgb24 frame at
//! the display index the sequence reports (open GOPs, B-pyramids, an edit list, a variable frame rate, VP9,
//! AV1), clips are seeded by seed, position and epoch, the edges follow the last-sequence policy, bad
//! settings are refused with messages naming the allowed values, and a damaged video fails alone.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use framefeed::{
    ClipPolicy, ClipSampler, Config, Encoded, Error, LastSequencePolicy, Sampling, VideoError,
    VideoInput,
};

/// One sampled sequence: its display indices, its real frames' bytes and its padding.
#[derive(Debug, Clone, PartialEq)]
struct Seq {
    indices: Vec<u64>,
    frames: Vec<Vec<u8>>,
    padded: usize,
}

/// Decodes `videos` under `config`; the sequences of each video, and the errors.
fn sample(config: Config, videos: Vec<Encoded>) -> (Vec<Vec<Seq>>, Vec<(u64, VideoError)>) {
    let n = videos.len();
    let input = VideoInput::new(config).unwrap();
    for v in videos {
        input.feed(v).unwrap();
    }
    input.close();
    let mut seqs = vec![Vec::new(); n];
    let mut errors = Vec::new();
    while let Some(result) = input.next_batch().transpose() {
        match result {
            Ok(batch) => {
                for s in batch.sequences() {
                    seqs[s.video().id.0 as usize].push(Seq {
                        indices: s.indices().to_vec(),
                        frames: s.frames().map(|f| f.data().to_vec()).collect(),
                        padded: s.padded_frames(),
                    });
                }
            }
            Err(Error::Video { video, error }) => errors.push((video.id.0, error)),
            Err(e) => panic!("{e}"),
        }
    }
    (seqs, errors)
}

fn one(config: Config, path: &Path) -> Vec<Seq> {
    let (mut seqs, errors) = sample(config, vec![Encoded::new(std::fs::read(path).unwrap())]);
    assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    seqs.remove(0)
}

/// ffmpeg's rgb24 frames of `path` at the display indices `wanted` (frames of `len` bytes).
fn reference(path: &Path, len: usize, wanted: &[u64]) -> BTreeMap<u64, Vec<u8>> {
    let last = wanted.iter().max().copied().unwrap_or(0);
    let mut frames = FfmpegFrames::open(path);
    let mut out = BTreeMap::new();
    for i in 0..=last {
        let frame = frames
            .next_frame(len)
            .unwrap_or_else(|| panic!("{}: ffmpeg has no frame {i}", path.display()));
        if wanted.contains(&i) {
            out.insert(i, frame);
        }
    }
    out
}

/// Checks every sampled frame of `path` under `sampling` against ffmpeg's; returns the sequences.
fn check_exact(path: &Path, length: usize, sampling: Sampling) -> Vec<Seq> {
    let seqs = one(
        Config::new(length, 3)
            .decoder_threads(2)
            .sampling(sampling.clone()),
        path,
    );
    assert!(!seqs.is_empty(), "{}: no sequence", path.display());
    let wanted: Vec<u64> = seqs.iter().flat_map(|s| s.indices.clone()).collect();
    let len = seqs[0].frames[0].len();
    let reference = reference(path, len, &wanted);
    for s in &seqs {
        assert_eq!(s.indices.len(), s.frames.len());
        for (i, frame) in s.indices.iter().zip(&s.frames) {
            assert!(
                reference[i] == *frame,
                "{}: frame {i} differs from ffmpeg's ({sampling:?})",
                path.display()
            );
        }
    }
    seqs
}

fn samplings() -> Vec<Sampling> {
    vec![
        Sampling::new()
            .clips(6, ClipSampler::Random)
            .stride(2)
            .seed(11),
        Sampling::new().clips(4, ClipSampler::Regular),
        Sampling::new().stride(3).step(7),
        Sampling::new().fps(7.0).time_range(0.5, 4.0),
        Sampling::new().indices(vec![0, 3, 3, 47, 48, 60, 86]),
    ]
}

#[test]
fn sampled_frames_are_ffmpegs_frames_at_the_reported_indices() {
    if skip_without_ffmpeg("the sampling exactness test") {
        return;
    }
    for name in [
        "sampling_h264_open_gop.mp4",
        "sampling_hevc_open_gop.mp4",
        "sampling_edit_list.mp4",
        "sampling_vfr.mp4",
    ] {
        for sampling in samplings() {
            check_exact(&fixture(name), 4, sampling);
        }
    }
}

#[test]
fn corpus_vp9_av1_and_a_long_video_sample_exactly() {
    let Some(dir) = corpus("the corpus sampling test") else {
        return;
    };
    if skip_without_ffmpeg("the corpus sampling test") {
        return;
    }
    for name in [
        "testsrc2_vp9.webm",
        "av1_video.mkv",
        "testsrc2_h265.mp4",
        "cfr_720p60.mov",
    ] {
        check_exact(
            &dir.join(name),
            3,
            Sampling::new().clips(5, ClipSampler::Random).seed(2),
        );
    }
    // 9000 frames: clips far apart, each found by seeking.
    let seqs = check_exact(
        &dir.join("long_640x480_9000f.mp4"),
        4,
        Sampling::new()
            .clips(3, ClipSampler::Random)
            .stride(3)
            .seed(5),
    );
    assert_eq!(seqs.len(), 3);
}

#[test]
fn stride_and_step_follow_dali_and_fps_resamples_by_time() {
    let path = fixture("sampling_vfr.mp4");
    let seqs = one(
        Config::new(3, 4).sampling(Sampling::new().stride(2).step(5)),
        &path,
    );
    for (k, s) in seqs.iter().enumerate() {
        let first = k as u64 * 5;
        let expected: Vec<u64> = (0..3).map(|j| first + 2 * j).filter(|&i| i < 150).collect();
        assert_eq!(s.indices, expected);
    }
    assert_eq!(seqs.len(), 30, "sequences start at 0, 5, ..., 145");
    // At 5 fps: for each tick k/5 s, the frame shown then; the video's own times are irregular.
    let times = frame_times(&path);
    let seqs = one(Config::new(4, 4).sampling(Sampling::new().fps(5.0)), &path);
    let indices: Vec<u64> = seqs.iter().flat_map(|s| s.indices.clone()).collect();
    for (k, &d) in indices.iter().enumerate() {
        let t = k as f64 / 5.0;
        let expected = times.iter().rposition(|&p| p <= t + 1e-6).unwrap() as u64;
        assert_eq!(d, expected, "tick {k} ({t} s)");
    }
    assert!(indices.len() >= 40, "{} ticks", indices.len());
}

/// Display times of `path`'s frames from the first, as ffprobe reports them.
fn frame_times(path: &Path) -> Vec<f64> {
    let out = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .args(["frame=pts_time", "-of", "csv=p=0"])
        .arg(path)
        .output()
        .expect("run ffprobe");
    let times: Vec<f64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(',').parse().ok())
        .collect();
    let t0 = times[0];
    times.into_iter().map(|t| t - t0).collect()
}

#[test]
fn random_clips_depend_on_seed_position_and_epoch() {
    let data = read_fixture("sampling_h264_open_gop.mp4");
    let clips = |seed: u64, position: u64, epoch: u64| {
        let config =
            Config::new(4, 8).sampling(Sampling::new().clips(5, ClipSampler::Random).seed(seed));
        let video = Encoded::new(data.clone()).position(position, epoch);
        let (seqs, errors) = sample(config, vec![video]);
        assert!(errors.is_empty());
        seqs[0]
            .iter()
            .map(|s| s.indices.clone())
            .collect::<Vec<_>>()
    };
    let a = clips(1, 0, 0);
    assert_eq!(
        a,
        clips(1, 0, 0),
        "the same seed, position and epoch: the same clips"
    );
    assert_ne!(a, clips(1, 0, 1), "a new epoch: new clips");
    assert_ne!(a, clips(1, 3, 0), "another position: other clips");
    assert_ne!(a, clips(2, 0, 0), "another seed: other clips");
    assert!(a.windows(2).all(|w| w[0][0] <= w[1][0]), "in display order");
    assert!(a
        .iter()
        .all(|c| c.len() == 4 && c.windows(2).all(|w| w[1] == w[0] + 1)));
}

#[test]
fn regular_clips_reach_the_last_frame_and_short_videos_follow_the_policy() {
    let path = fixture("sampling_hevc_open_gop.mp4");
    let seqs = one(
        Config::new(8, 2).sampling(Sampling::new().clips(3, ClipSampler::Regular)),
        &path,
    );
    assert_eq!(seqs.len(), 3);
    assert_eq!(seqs[0].indices[0], 0);
    assert_eq!(
        *seqs[2].indices.last().unwrap(),
        149,
        "the last clip ends on the last frame"
    );
    // 23 frames, clips of 10 frames with stride 3 (28 frames): the 4 clips asked for, each of what there is
    // (clip_policy cut, the default), padded.
    let short = fixture("h264.mp4");
    let sampling = Sampling::new().clips(4, ClipSampler::Random).stride(3);
    let seqs = one(
        Config::new(10, 2)
            .last_sequence_policy(LastSequencePolicy::Pad)
            .sampling(sampling.clone()),
        &short,
    );
    assert_eq!(seqs.len(), 4);
    for seq in &seqs {
        assert_eq!(seq.indices, vec![0, 3, 6, 9, 12, 15, 18, 21]);
        assert_eq!(seq.padded, 2);
    }
    let seqs = one(Config::new(10, 2).sampling(sampling), &short);
    assert_eq!(
        (seqs.len(), seqs[0].frames.len(), seqs[0].padded),
        (4, 8, 0)
    );
}

/// A video gives the clips asked for whatever its length (3 or 4 frames for clips of 4 alike), and a clip that
/// cannot fit holds what `clip_policy` says: the frames there are (cut), its last frame repeated, its frames
/// again from its first, or the video fails naming the numbers.
#[test]
fn clips_are_as_many_as_asked_and_short_ones_follow_the_clip_policy() {
    let path = fixture("h264.mp4"); // 25 fps: a time range of 0.12 s holds 3 frames, 0.16 s 4
    let clips = |end: f64, policy: ClipPolicy| {
        let sampling = Sampling::new()
            .clips(3, ClipSampler::Random)
            .time_range(0.0, end)
            .clip_policy(policy);
        sample(
            Config::new(4, 2).sampling(sampling),
            vec![Encoded::new(std::fs::read(&path).unwrap())],
        )
    };
    for end in [0.12, 0.16] {
        let (seqs, errors) = clips(end, ClipPolicy::Cut);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(seqs[0].len(), 3, "{end} s: the clips asked for");
    }
    let (seqs, _) = clips(0.12, ClipPolicy::Cut);
    assert_eq!(seqs[0][0].indices, vec![0, 1, 2]);
    let (seqs, _) = clips(0.12, ClipPolicy::RepeatLast);
    assert_eq!(seqs[0][0].indices, vec![0, 1, 2, 2]);
    assert_eq!(seqs[0][0].frames[3], seqs[0][0].frames[2]);
    let (seqs, _) = clips(0.12, ClipPolicy::Wrap);
    assert_eq!(seqs[0][0].indices, vec![0, 1, 2, 0]);
    assert_eq!(seqs[0][0].frames[3], seqs[0][0].frames[0]);
    let (seqs, errors) = clips(0.12, ClipPolicy::Error);
    assert!(seqs[0].is_empty());
    match &errors[..] {
        [(0, VideoError::Sampling { reason })] => assert!(
            reason.contains("a clip spans 4 frames") && reason.contains("the video has 3"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    let (seqs, errors) = clips(0.16, ClipPolicy::Error);
    assert!(errors.is_empty(), "a clip that fits: {errors:?}");
    assert_eq!(seqs[0].len(), 3);
}

#[test]
fn bad_sampling_is_refused_with_what_is_allowed() {
    let refused = |s: Sampling| match VideoInput::new(Config::new(4, 2).sampling(s)) {
        Err(Error::Config(m)) => m,
        other => panic!("expected a config error, got {:?}", other.map(|_| ())),
    };
    assert_eq!(
        refused(Sampling::new().stride(0)),
        "stride is 0; allowed: 1 to 16777216"
    );
    assert_eq!(
        refused(Sampling::new().time_range(9.0, 3.0)),
        "end (3 s) is not after start (9 s); allowed: end > start"
    );
    assert!(refused(Sampling::new().fps(-2.0)).starts_with("fps is -2; allowed"));
    // Random clips need a whole video: a live one is refused when fed.
    let input =
        VideoInput::new(Config::new(4, 2).sampling(Sampling::new().clips(2, ClipSampler::Random)))
            .unwrap();
    match input.feed_live() {
        Err(Error::Config(m)) => assert!(m.contains("clips need the whole video"), "{m}"),
        other => panic!("expected a config error, got {:?}", other.map(|_| ())),
    }
    // An index past the end fails that video, naming the index.
    let (seqs, errors) = sample(
        Config::new(2, 2).sampling(Sampling::new().indices(vec![1, 22, 23])),
        vec![Encoded::new(read_fixture("h264.mp4"))],
    );
    assert!(seqs[0].is_empty());
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].1.code(), "bad_sampling");
    assert!(
        errors[0]
            .1
            .to_string()
            .contains("frame index 23 is past the video's last frame (23 frames: 0 to 22)"),
        "{}",
        errors[0].1
    );
}

#[test]
fn a_damaged_gop_fails_its_video_alone_when_strict() {
    let good = read_fixture("sampling_h264_open_gop.mp4");
    // Overwrite the middle of the file (inside the third GOP's pictures) with garbage.
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    for b in &mut bad[mid..mid + 3000] {
        *b = 0x5a;
    }
    // By default the damage is reported on the frames (holes, damaged frames) and the video does not fail.
    let lenient = Config::new(4, 2).sampling(Sampling::new().stride(2));
    let (seqs, errors) = sample(
        lenient,
        vec![Encoded::new(bad.clone()), Encoded::new(good.clone())],
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!seqs[0].is_empty() && !seqs[1].is_empty());
    let config = Config::new(4, 2)
        .sampling(Sampling::new().stride(2))
        .strict(true);
    let (seqs, errors) = sample(
        config.clone(),
        vec![Encoded::new(bad), Encoded::new(good.clone())],
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, 0, "only the damaged video fails");
    assert_eq!(errors[0].1.code(), "corrupt", "{}", errors[0].1);
    assert!(
        !seqs[0].is_empty(),
        "its frames before the damage are delivered"
    );
    let (alone, _) = sample(config, vec![Encoded::new(good)]);
    assert_eq!(seqs[1], alone[0], "the good video is untouched");
}

/// `data` fed to `input` as a live video, in chunks of 7,000 bytes, then finished.
fn feed_live_in_chunks(input: &VideoInput, data: &[u8]) {
    let live = input.feed_live().unwrap();
    for chunk in data.chunks(7000) {
        live.push(chunk.to_vec()).unwrap();
    }
    live.finish();
}

#[test]
fn live_videos_sample_with_stride_and_fps_and_match_whole_ones() {
    let data = read_fixture("sampling_vfr.mp4");
    for sampling in [
        Sampling::new().stride(3).step(4),
        Sampling::new().fps(6.0).time_range(1.0, 5.0),
        Sampling::new().indices(vec![2, 9, 9, 140]),
    ] {
        let config = Config::new(3, 2).sampling(sampling.clone());
        let (whole, errors) = sample(config.clone(), vec![Encoded::new(data.clone())]);
        assert!(errors.is_empty());
        let input = VideoInput::new(config).unwrap();
        feed_live_in_chunks(&input, &data);
        input.close();
        let mut seqs = Vec::new();
        while let Some(batch) = input.next_batch().unwrap() {
            for s in batch.sequences() {
                seqs.push(Seq {
                    indices: s.indices().to_vec(),
                    frames: s.frames().map(|f| f.data().to_vec()).collect(),
                    padded: s.padded_frames(),
                });
            }
        }
        assert_eq!(seqs, whole[0], "{sampling:?}");
    }
}

/// Indices past a video's end fail it naming them: a whole video before anything is decoded, a live one after
/// the sequences made before its end (it cannot be known sooner), with the same message.
#[test]
fn indices_past_the_end_fail_the_video_naming_them() {
    let data = read_fixture("sampling_vfr.mp4");
    let config = Config::new(2, 1).sampling(Sampling::new().indices(vec![2, 9, 500, 600]));
    let (whole, errors) = sample(config.clone(), vec![Encoded::new(data.clone())]);
    assert!(whole[0].is_empty());
    let [(0, VideoError::Sampling { reason })] = &errors[..] else {
        panic!("{errors:?}")
    };
    assert!(
        reason.starts_with("frame indices 500, 600 are past the video's last frame ("),
        "{reason}"
    );
    let input = VideoInput::new(config).unwrap();
    feed_live_in_chunks(&input, &data);
    input.close();
    let first = input.next_batch().unwrap().unwrap();
    assert_eq!(first.sequence(0).indices(), [2, 9]);
    match input.next_batch() {
        Err(Error::Video {
            error: VideoError::Sampling {
                reason: live_reason,
            },
            ..
        }) => assert_eq!(&live_reason, reason),
        other => panic!("{other:?}"),
    }
    assert!(input.next_batch().unwrap().is_none());
}

/// `framefeed serve` takes the sampling as query parameters: stride/step, fps and indices on a live upload (the
/// same sequences as the library's), clips on an upload it collects whole (seeded, the same clips as the
/// library's whole decode), and bad values refused with 400 naming what is allowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_samples_uploads_by_their_query() {
    use common::http_client::{chunks_of, upload};
    use common::serve::serve;

    let server = serve(&[]);
    let data = framefeed::SAMPLE_MP4;
    let indices_of = |lines: &[serde_json::Value]| -> Vec<Vec<u64>> {
        lines
            .iter()
            .filter(|l| l.get("sequences").is_some())
            .flat_map(|l| l["sequences"].as_array().unwrap().clone())
            .map(|s| serde_json::from_value(s["frames"].clone()).unwrap())
            .collect()
    };
    let library = |sampling: Sampling| -> Vec<Vec<u64>> {
        let input = VideoInput::new(Config::new(4, 1).sampling(sampling)).unwrap();
        input.feed(data).unwrap();
        input.close();
        input
            .iter()
            .flat_map(|b| {
                let b = b.unwrap();
                b.sequences()
                    .iter()
                    .map(|s| s.indices().to_vec())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let cases = [
        ("stride=2&step=10", Sampling::new().stride(2).step(10)),
        (
            "fps=7.5&start=0.5&end=1.5",
            Sampling::new().fps(7.5).time_range(0.5, 1.5),
        ),
        (
            "indices=1,1,30,59",
            Sampling::new().indices(vec![1, 1, 30, 59]),
        ),
        (
            "clips=3&seed=5",
            Sampling::new().clips(3, ClipSampler::Random).seed(5),
        ),
        (
            "clips=2&clip_sampler=regular",
            Sampling::new().clips(2, ClipSampler::Regular),
        ),
    ];
    for (query, sampling) in cases {
        let query = format!("sequence_length=4&batch_size=1&{query}");
        let sent = upload(
            server.addr,
            "127.0.0.1",
            &query,
            chunks_of(data, 16 << 10),
            std::time::Duration::ZERO,
            None,
        )
        .await;
        let (status, lines) = sent.response.await.unwrap();
        assert_eq!(status, 200, "{query}: {lines:?}");
        let got = indices_of(&lines);
        assert!(!got.is_empty(), "{query}");
        assert_eq!(got, library(sampling), "{query}");
    }
    for (query, message) in [
        ("stride=0", "stride is 0; allowed: 1 to"),
        ("fps=fast", "fps must be a number"),
        ("indices=1,x", "indices must be frame indices"),
        (
            "clip_sampler=regular",
            "clip_sampler and seed are for uploads with clips",
        ),
        (
            "clips=2&clip_sampler=uniform",
            "allowed: 'random', 'regular'",
        ),
        ("start=3&end=1", "end"),
    ] {
        let sent = upload(
            server.addr,
            "127.0.0.1",
            query,
            chunks_of(data, 16 << 10),
            std::time::Duration::ZERO,
            None,
        )
        .await;
        let (status, lines) = sent.response.await.unwrap();
        assert_eq!(status, 400, "{query}: {lines:?}");
        let text = lines[0].to_string();
        assert!(text.contains(message), "{query}: {text}");
    }
}

/// A video fed in chunks to be decoded whole takes clips as a whole one does; one larger than its limit fails
/// alone, saying so, and the next video decodes.
#[test]
fn a_chunked_video_collected_whole_takes_clips_and_its_limit_holds() {
    let sampling = Sampling::new().clips(3, ClipSampler::Random).seed(8);
    let input = VideoInput::new(Config::new(4, 1).sampling(sampling)).unwrap();
    let mut ids = Vec::new();
    for max_bytes in [1 << 20, 1000] {
        let live = input.feed_live_whole(max_bytes).unwrap();
        ids.push(live.id());
        for chunk in framefeed::SAMPLE_MP4.chunks(700) {
            if live.push(chunk.to_vec()).is_err() {
                break; // refused once the limit is passed
            }
        }
        live.finish();
    }
    let whole = input.feed(framefeed::SAMPLE_MP4).unwrap();
    input.close();
    let mut by_video: BTreeMap<u64, Vec<Vec<u64>>> = BTreeMap::new();
    let mut failed = Vec::new();
    for result in input.iter() {
        match result {
            Ok(batch) => by_video
                .entry(batch.video_id().0)
                .or_default()
                .extend(batch.sequences().iter().map(|s| s.indices().to_vec())),
            Err(Error::Video { video, error }) => failed.push((video.id, error)),
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(by_video[&ids[0].0].len(), 3);
    match failed.as_slice() {
        [(id, VideoError::WholeTooLarge { max_bytes: 1000 })] => assert_eq!(*id, ids[1]),
        other => panic!("{other:?}"),
    }
    // The seed and the position decide the clips; the chunked video is at position 0, the whole one at 2.
    assert_eq!(by_video[&whole.0].len(), 3);
}

/// Clips of a file pulled by URL: read by byte ranges (`source::remote`), the same clips and frames as the
/// file fed whole, from a server that takes range requests and from one that ignores them (read through once).
#[test]
fn clips_of_a_file_served_over_http_seek_like_the_file() {
    use framefeed::{Scheme, UrlOptions};
    let path = fixture("sampling_h264_open_gop.mp4");
    let data = std::fs::read(&path).unwrap();
    let sampling = Sampling::new().clips(3, ClipSampler::Random).seed(4);
    let config = || Config::new(4, 1).sampling(sampling.clone());
    let (whole, errors) = sample(config(), vec![Encoded::new(data.clone()).position(0, 0)]);
    assert!(errors.is_empty(), "{errors:?}");
    let options = || UrlOptions::new().schemes([Scheme::Http]);
    for ranges in [true, false] {
        let (port, _) = serve_http(data.clone(), ranges);
        let input = VideoInput::new(config()).unwrap();
        input
            .feed_url(format!("http://127.0.0.1:{port}/clip.mp4"), options())
            .unwrap();
        input
            .feed(Encoded::new(data.clone()).position(0, 0))
            .unwrap();
        input.close();
        let mut by_video: BTreeMap<u64, Vec<Seq>> = BTreeMap::new();
        let mut failed = Vec::new();
        for result in input.iter() {
            match result {
                Ok(batch) => {
                    for s in batch.sequences() {
                        by_video.entry(s.video().id.0).or_default().push(Seq {
                            indices: s.indices().to_vec(),
                            frames: s.frames().map(|f| f.data().to_vec()).collect(),
                            padded: s.padded_frames(),
                        });
                    }
                }
                Err(Error::Video { video, error }) => failed.push((video.id.0, error)),
                Err(e) => panic!("{e}"),
            }
        }
        assert!(failed.is_empty(), "ranges {ranges}: {failed:?}");
        assert_eq!(
            by_video[&0], whole[0],
            "ranges {ranges}: the URL's clips are the file's"
        );
        assert_eq!(by_video[&1], whole[0], "the video after it decodes as ever");
    }
}

/// A time range a whole video never reaches fails the video saying where its frames are (it said the stream
/// held no decodable frame).
#[test]
fn a_time_range_past_the_end_names_the_videos_span() {
    let (seqs, errors) = sample(
        Config::new(4, 1).sampling(Sampling::new().start(100.0)),
        vec![Encoded::new(framefeed::SAMPLE_MP4)],
    );
    assert!(seqs[0].is_empty());
    match &errors[..] {
        [(0, VideoError::Sampling { reason })] => assert_eq!(
            reason,
            "no frame is shown from 100 s on (counted from the first frame): its 60 frames are shown from 0 \
             to 1.967 s"
        ),
        other => panic!("{other:?}"),
    }
}
