//! Segments of a long video ([`segments`], [`Sampling::segment`]): decoded apart, each by its own operator,
//! the segments of a video give exactly the sequences of one decode of the whole video (the same display
//! indices, pts and frame bytes, none lost, none twice), for H.264 with B-frames and an open GOP, HEVC with an
//! open GOP, an MP4 edit list and VP9, under stride and step, clips, a frame rate with a time range, and random
//! crops; cuts fall on keyframes; bad settings are refused.

mod common;

use std::path::Path;

use common::*;
use framefeed::{
    segments, segments_from_index, Batch, ClipSampler, Config, Crop, CropPosition, Encoded, Error,
    LastSequencePolicy, Sampling, Transforms, VideoInput,
};

/// One sequence: its display indices, pts and frames' bytes.
#[derive(Debug, PartialEq)]
struct Seq {
    indices: Vec<u64>,
    pts: Vec<f64>,
    frames: Vec<Vec<u8>>,
    padded: usize,
}

/// The sequences of `videos` decoded one after the other by one operator of `config`.
fn decode_all(config: Config, videos: Vec<Encoded>) -> Vec<Seq> {
    let input = VideoInput::new(config).unwrap();
    for video in videos {
        input.feed(video).unwrap();
    }
    input.close();
    let mut out = Vec::new();
    while let Some(batch) = input.next_batch().unwrap() {
        out.extend(sequences(&batch));
    }
    out
}

/// The sequences of `batch`.
fn sequences(batch: &Batch) -> impl Iterator<Item = Seq> + '_ {
    batch.sequences().into_iter().map(|s| Seq {
        indices: s.indices().to_vec(),
        pts: s.pts().to_vec(),
        frames: s.frames().map(|f| f.data().to_vec()).collect(),
        padded: s.padded_frames(),
    })
}

/// The sequences of `video` decoded by one operator of `config`.
fn decode(config: Config, video: Encoded) -> Vec<Seq> {
    decode_all(config, vec![video])
}

/// Checks that the segments of `path` (cut every `every` frames) give the whole video's sequences under
/// `sampling` and `transforms`; returns how many segments there were.
fn check(path: &Path, every: u64, sampling: Sampling, transforms: Transforms) -> usize {
    let video = Encoded::file(path).unwrap().position(3, 1);
    let config = Config::new(4, 3)
        .last_sequence_policy(LastSequencePolicy::Pad)
        .transforms(transforms)
        .sampling(sampling.clone());
    let whole = decode(config.clone(), video.clone());
    assert!(!whole.is_empty(), "{}: no sequence", path.display());
    let parts = segments(&video, &config, every).unwrap();
    let mut joined = Vec::new();
    for part in &parts {
        let segment = sampling.clone().segment(part.start, part.end);
        joined.extend(decode(config.clone().sampling(segment), video.clone()));
    }
    assert_eq!(
        joined.len(),
        whole.len(),
        "{}: {sampling:?} in {parts:?}",
        path.display()
    );
    // The same, each segment fed as its own video (`Encoded::segment`) to one operator, as a worker that
    // takes several segments does.
    let fed = decode_all(
        config.clone(),
        parts
            .iter()
            .map(|p| video.clone().segment(p.start, p.end))
            .collect(),
    );
    for joined in [&joined, &fed] {
        assert_eq!(
            joined.len(),
            whole.len(),
            "{}: {sampling:?}",
            path.display()
        );
        for (i, (a, b)) in joined.iter().zip(&whole).enumerate() {
            assert!(
                a == b,
                "{}: sequence {i} ({:?}) differs from the whole decode's ({:?}), {sampling:?} in {parts:?}",
                path.display(),
                a.indices,
                b.indices
            );
        }
    }
    parts.len()
}

/// A VP9 WebM of 90 frames with a keyframe every 20 (made by the `ffmpeg` CLI with libvpx).
fn vp9_clip(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("vp9_gop20.webm");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=160x120:rate=30",
        "-frames:v",
        "90",
        "-c:v",
        "libvpx-vp9",
        "-g",
        "20",
        "-keyint_min",
        "20",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-pix_fmt",
        "yuv420p",
        path.to_str().unwrap(),
    ]);
    path
}

#[test]
fn the_segments_of_a_video_give_its_sequences_once_each() {
    if skip_without_ffmpeg("the segment test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let vp9 = vp9_clip(dir.path());
    let samplings = [
        Sampling::new(),
        Sampling::new().stride(2).step(3),
        Sampling::new().clips(5, ClipSampler::Random).seed(9),
        Sampling::new().fps(12.0).time_range(0.4, 4.5),
    ];
    for path in [
        fixture("sampling_h264_open_gop.mp4"),
        fixture("sampling_hevc_open_gop.mp4"),
        fixture("sampling_edit_list.mp4"),
        vp9,
    ] {
        for sampling in &samplings {
            let parts = check(&path, 20, sampling.clone(), Transforms::new());
            assert!(parts >= 3, "{}: {parts} segments", path.display());
        }
        // Random crop windows: each sequence's comes from the seed, the video's place and its first frame,
        // so a segment decoded apart draws the whole decode's windows.
        let random = Transforms::new()
            .crop(Crop::new(24, 24).position(CropPosition::Random))
            .seed(5);
        check(&path, 20, Sampling::new().step(2), random);
    }
}

#[test]
fn cuts_fall_on_keyframes_and_short_videos_stay_whole() {
    let path = fixture("sampling_h264_open_gop.mp4");
    let video = Encoded::file(&path).unwrap();
    let config = Config::new(4, 1);
    let parts = segments(&video, &config, 20).unwrap();
    assert_eq!(parts.first().map(|p| p.start), Some(0));
    assert_eq!(parts.last().map(|p| p.end), Some(150));
    assert!(parts.windows(2).all(|w| w[0].end == w[1].start));
    assert!(parts[..parts.len() - 1]
        .iter()
        .all(|p| p.end - p.start >= 20));
    assert_eq!(segments(&video, &config, 1000).unwrap(), vec![0..150]);
    // From the MP4's index alone, the same cut; a container that lists no packets gives none (the planners then
    // decode it whole rather than read a remote one through to cut it), where `segments` demuxes it.
    assert_eq!(
        segments_from_index(&video, &config, 20).unwrap(),
        Some(parts.clone())
    );
    let mkv = Encoded::file(fixture("h264.mkv")).unwrap();
    assert_eq!(segments_from_index(&mkv, &config, 20).unwrap(), None);
    assert!(!segments(&mkv, &config, 20).unwrap().is_empty());
    // Bad settings.
    assert!(matches!(
        segments(&video, &config, 0),
        Err(Error::Config(_))
    ));
    let bad = Config::new(4, 1).sampling(Sampling::new().segment(10, 10));
    match bad.validate() {
        Err(Error::Config(m)) => assert!(m.contains("allowed: end > first"), "{m}"),
        other => panic!("{other:?}"),
    }
    // A video's own segment that ends before it starts fails that video.
    let input = VideoInput::new(Config::new(4, 1)).unwrap();
    input.feed(video.clone().segment(30, 20)).unwrap();
    input.close();
    match input.next_batch() {
        Err(Error::Video { error, .. }) => {
            assert_eq!(error.code(), "bad_sampling");
            assert!(
                error.to_string().contains("allowed: end > first"),
                "{error}"
            );
        }
        other => panic!("{other:?}"),
    }
    let not_a_video = Encoded::new(vec![7u8; 4096]);
    assert!(matches!(
        segments(&not_a_video, &config, 20),
        Err(Error::Video { .. })
    ));
}

#[test]
fn a_segment_of_a_live_video_is_refused() {
    let config = Config::new(4, 1).sampling(Sampling::new().segment(0, 30));
    let input = VideoInput::new(config).unwrap();
    let refused = input.feed_live();
    assert!(
        matches!(refused, Err(Error::Config(_))),
        "{:?}",
        refused.err()
    );
}

#[test]
fn a_file_rewritten_or_replaced_between_two_segments_is_indexed_again() {
    // An operator keeps the index of the file it indexed last for that file's next segment; a file rewritten
    // in place, or replaced under its name, between two segments is another file: indexed again, its own
    // frames decoded.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clip.mp4");
    // Two clips of one codec and size whose indexes differ: the second's frames come at variable times.
    let (first, second) = (
        fixture("sampling_h264_open_gop.mp4"),
        fixture("sampling_vfr.mp4"),
    );
    let config = Config::new(4, 3);
    let alone = |clip: &Path| decode(config.clone(), Encoded::file(clip).unwrap().segment(20, 60));
    let (want_first, want_second) = (alone(&first), alone(&second));
    assert!(!want_first.is_empty() && want_first != want_second);

    let input = VideoInput::new(config.clone()).unwrap();
    let segment_of = |clip: &Path, replace: bool| -> Vec<Seq> {
        if replace {
            // A new inode under the same name.
            let next = dir.path().join("next.mp4");
            std::fs::copy(clip, &next).unwrap();
            std::fs::rename(&next, &path).unwrap();
        } else {
            // The same inode, new bytes.
            std::fs::write(&path, std::fs::read(clip).unwrap()).unwrap();
        }
        input
            .feed(Encoded::file(&path).unwrap().segment(20, 60))
            .unwrap();
        let mut out = Vec::new();
        loop {
            let batch = input.next_batch().unwrap().expect("not closed");
            out.extend(sequences(&batch));
            if batch.is_last() {
                return out;
            }
        }
    };
    assert!(segment_of(&first, false) == want_first);
    assert!(
        segment_of(&second, false) == want_second,
        "rewritten in place"
    );
    assert!(segment_of(&first, true) == want_first, "replaced");
    assert!(
        segment_of(&first, false) == want_first,
        "the same file again"
    );
}

/// The honest extreme of a long video, with the default limits: ten hours at 60 fps with an audio track
/// (2,160,000 video and 1,687,500 audio packets, under the default `max_container_samples` of 2^22), made by
/// concatenating ten minutes 60 times (`-c copy`). Its index is read (from its `moov`, not its 150 MB of
/// media data), it is cut into ten hour-long segments on its keyframes, and a sequence five hours in decodes
/// to the frames the same bitstream gives at the start of the ten minutes.
#[test]
fn a_ten_hour_video_at_60_fps_with_audio_is_cut_and_sought_with_the_default_limits() {
    if skip_without_ffmpeg("the ten-hour video test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ten_minutes = dir.path().join("ten_minutes.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=16x16:rate=60",
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:sample_rate=48000",
        "-t",
        "600",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-g",
        "120",
        "-c:a",
        "aac",
        "-b:a",
        "16k",
        "-ac",
        "1",
        ten_minutes.to_str().unwrap(),
    ]);
    let list = dir.path().join("list.txt");
    let line = format!("file '{}'\n", ten_minutes.display());
    std::fs::write(&list, line.repeat(60)).unwrap();
    let ten_hours = dir.path().join("ten_hours.mp4");
    ffmpeg(&[
        "-f",
        "concat",
        "-safe",
        "0",
        "-i",
        list.to_str().unwrap(),
        "-c",
        "copy",
        ten_hours.to_str().unwrap(),
    ]);

    let config = Config::new(8, 1);
    let video = Encoded::file(&ten_hours).unwrap();
    let hour = 60 * 60 * 60;
    let parts = segments(&video, &config, hour).unwrap();
    let expected: Vec<_> = (0..10).map(|h| h * hour..(h + 1) * hour).collect();
    assert_eq!(parts, expected);

    // Five hours in: the first frame of the 31st copy of the ten minutes.
    let at = 5 * hour;
    let far = decode(
        config.clone().sampling(Sampling::new().segment(at, at + 1)),
        video,
    );
    let near = decode(
        config.sampling(Sampling::new().segment(0, 1)),
        Encoded::file(&ten_minutes).unwrap(),
    );
    assert_eq!(far.len(), 1);
    assert_eq!(far[0].indices, (at..at + 8).collect::<Vec<_>>());
    // Five hours, give or take what the concatenation shifts each copy by (its audio's priming).
    assert!(
        (far[0].pts[0] - 5.0 * 3600.0).abs() < 0.1,
        "{:?}",
        far[0].pts
    );
    for pair in far[0].pts.windows(2) {
        assert!(
            (pair[1] - pair[0] - 1.0 / 60.0).abs() < 1e-6,
            "{:?}",
            far[0].pts
        );
    }
    assert_eq!(far[0].frames, near[0].frames);
}
