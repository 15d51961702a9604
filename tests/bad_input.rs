//! Every kind of bad input fails its own video with a clear error, after the batches it did give, and the
//! operator goes on with the next video.

mod common;

use common::*;
use framefeed::{Batch, Config, Error, VideoError, VideoId, VideoInput};

/// Feeds `bad` then a good video; returns the bad video's batches, its error, and the good video's frames.
fn bad_then_good(bad: Vec<u8>) -> (Vec<Batch>, VideoError, usize) {
    bad_then_good_with(bad, Config::new(4, 2))
}

/// [`bad_then_good`] under `config`.
fn bad_then_good_with(bad: Vec<u8>, config: Config) -> (Vec<Batch>, VideoError, usize) {
    let input = VideoInput::new(config).unwrap();
    let bad_id = input.feed((bad, "bad")).unwrap();
    let good_id = input.feed((read_fixture("h264.mp4"), "good")).unwrap();
    input.close();
    let mut bad_batches = Vec::new();
    let mut error = None;
    let mut good_frames = 0;
    for result in input.iter() {
        match result {
            Ok(batch) if batch.video_id() == bad_id => {
                assert!(error.is_none(), "a batch after the error");
                bad_batches.push(batch);
            }
            Ok(batch) => {
                assert_eq!(batch.video_id(), good_id);
                assert!(
                    error.is_some(),
                    "the good video's batches came before the bad one's error"
                );
                good_frames += batch.valid_frames();
            }
            Err(Error::Video { video, error: e }) => {
                assert_eq!(video.id, bad_id);
                assert_eq!(video.label, Some("bad".into()));
                assert!(error.replace(e).is_none(), "two errors for one video");
            }
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    (
        bad_batches,
        error.expect("the bad video must fail"),
        good_frames,
    )
}

fn message(video: VideoError) -> String {
    Error::Video {
        video: framefeed::VideoRef {
            id: VideoId(0),
            label: Some("bad".into()),
        },
        error: video,
    }
    .to_string()
}

#[test]
fn empty_buffer() {
    let (batches, error, good) = bad_then_good(Vec::new());
    assert!(batches.is_empty());
    assert_eq!(error, VideoError::Empty);
    assert_eq!(message(error), "video 0 (bad): the buffer is empty");
    assert_eq!(good, 23);
}

#[test]
fn random_bytes() {
    // A fixed xorshift sequence: no container starts like this.
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    let bytes: Vec<u8> = (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let (batches, error, good) = bad_then_good(bytes);
    assert!(batches.is_empty());
    assert!(matches!(error, VideoError::NotAVideo(_)), "{error:?}");
    assert!(message(error).contains("not a recognised video container"));
    assert_eq!(good, 23);
}

#[test]
fn text() {
    let (batches, error, good) =
        bad_then_good(b"Hello, this is plain text, not a video at all.\n".repeat(50));
    assert!(batches.is_empty());
    assert!(matches!(error, VideoError::NotAVideo(_)), "{error:?}");
    assert_eq!(good, 23);
}

/// Feeds `bad` then a good video, by default (damage reported, not failed); returns the bad video's batches and
/// the good video's frames.
fn damaged_then_good(bad: Vec<u8>) -> (Vec<Batch>, usize) {
    let input = VideoInput::new(Config::new(4, 2)).unwrap();
    let bad_id = input.feed((bad, "bad")).unwrap();
    input.feed((read_fixture("h264.mp4"), "good")).unwrap();
    input.close();
    let (mut bad_batches, mut good) = (Vec::new(), 0);
    for result in input.iter() {
        let batch = result.expect("damage fails no video by default");
        if batch.video_id() == bad_id {
            bad_batches.push(batch);
        } else {
            good += batch.valid_frames();
        }
    }
    (bad_batches, good)
}

#[test]
fn truncated_mp4_gives_its_frames_and_fails_only_when_strict() {
    // Cut a faststart MP4 in the middle of its data: the moov is intact, later samples are missing.
    let mut data = read_fixture("h264.mp4");
    data.truncate(data.len() * 2 / 3);
    let (batches, good) = damaged_then_good(data.clone());
    let delivered: usize = batches.iter().map(|b| b.valid_frames()).sum();
    assert!(delivered > 0 && delivered < 23, "{delivered} frames");
    assert!(batches.last().unwrap().is_last());
    assert_eq!(good, 23);
    let (batches, error, good) = bad_then_good_with(data, Config::new(4, 2).strict(true));
    let delivered: usize = batches.iter().map(|b| b.valid_frames()).sum();
    assert!(delivered > 0 && delivered < 23, "{delivered} frames");
    assert!(
        batches.last().unwrap().is_last(),
        "the last delivered batch is marked last"
    );
    match &error {
        VideoError::Demux { frames, .. }
        | VideoError::Damaged { frames, .. }
        | VideoError::Corrupt { frames, .. } => {
            assert_eq!(*frames, delivered as u64)
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(good, 23);
}

#[test]
fn truncated_header() {
    let mut data = read_fixture("h264_moov_at_end.mp4");
    data.truncate(data.len() / 2); // the moov (at the end) is gone
    let (batches, error, good) = bad_then_good(data);
    assert!(batches.is_empty());
    assert!(matches!(error, VideoError::NotAVideo(_)), "{error:?}");
    assert_eq!(good, 23);
}

#[test]
fn corrupt_data_gives_decodable_frames_and_fails_only_when_strict() {
    // Overwrite the middle of an MP4's sample data with 0xFF: the NAL unit sizes there become invalid (the
    // same damage as the corpus's corrupted_720p.mp4).
    let mut data = read_fixture("h264.mp4");
    let n = data.len();
    data[n / 2..n / 2 + 1500].fill(0xFF);
    let (batches, good) = damaged_then_good(data.clone());
    let holes: usize = batches
        .iter()
        .flat_map(|b| b.sequences())
        .map(|s| s.holes().len())
        .sum();
    let delivered: usize = batches.iter().map(|b| b.valid_frames()).sum();
    assert!(holes > 0, "the pictures that do not decode are holes");
    assert_eq!(delivered + holes, 23, "frames and holes: the video's 23");
    assert_eq!(good, 23);
    let (batches, error, good) = bad_then_good_with(data, Config::new(4, 2).strict(true));
    assert!(
        !batches.is_empty(),
        "frames before the damage are delivered"
    );
    assert!(
        matches!(
            error,
            VideoError::Damaged { .. } | VideoError::Corrupt { .. } | VideoError::Demux { .. }
        ),
        "{error:?}"
    );
    assert_eq!(good, 23);
}

#[test]
fn no_video_stream() {
    let (batches, error, good) = bad_then_good(read_fixture("audio_only.m4a"));
    assert!(batches.is_empty());
    assert_eq!(error, VideoError::NoVideoStream);
    assert_eq!(good, 23);
}

#[test]
fn unsupported_codec() {
    // An AVI whose video FourCC is changed to one no FFmpeg decoder knows.
    let mut data = read_fixture("mpeg4.avi");
    let mut patched = 0;
    for tag in [
        &b"FMP4"[..],
        b"fmp4",
        b"XVID",
        b"xvid",
        b"DIVX",
        b"divx",
        b"DX50",
        b"MP4V",
    ] {
        while let Some(pos) = data.windows(4).position(|w| w == tag) {
            data[pos..pos + 4].copy_from_slice(b"QQQQ");
            patched += 1;
        }
    }
    assert!(patched > 0, "the fixture's FourCC was not found");
    let (batches, error, good) = bad_then_good(data);
    assert!(batches.is_empty());
    assert!(
        matches!(error, VideoError::UnsupportedCodec { .. }),
        "{error:?}"
    );
    assert!(message(error).contains("no decoder for codec"));
    assert_eq!(good, 23);
}

/// A YUV4MPEG2 stream claiming `width` x `height` pixels, with a few bytes of a first frame.
fn y4m_header(width: u32, height: u32) -> Vec<u8> {
    let mut data =
        format!("YUV4MPEG2 W{width} H{height} F25:1 Ip A1:1 C420jpeg\nFRAME\n").into_bytes();
    data.extend(std::iter::repeat_n(16u8, 4096));
    data
}

#[test]
fn absurd_dimensions() {
    // A YUV4MPEG2 header claiming 17000x1000 pixels: FFmpeg opens it, framefeed's limit (16384 a side) refuses.
    let (batches, error, good) = bad_then_good(y4m_header(17000, 1000));
    assert!(batches.is_empty());
    assert!(
        matches!(
            error,
            VideoError::AbsurdDimensions {
                width: 17000,
                height: 1000,
                max_dimension: 16384,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(message(error).contains("absurd frame size 17000x1000"));
    assert_eq!(good, 23);
}

#[test]
fn dimensions_ffmpeg_itself_refuses() {
    let (batches, error, good) = bad_then_good(y4m_header(40000, 40000));
    assert!(batches.is_empty());
    assert!(matches!(error, VideoError::NotAVideo(_)), "{error:?}");
    assert_eq!(good, 23);
}

#[test]
fn frames_over_the_configured_limit() {
    let input = VideoInput::new(Config::new(4, 2).max_frame_size(64, 64 * 64)).unwrap();
    input.feed(read_fixture("h264.mp4")).unwrap(); // 96x64
    input.close();
    match input.next_batch() {
        Err(Error::Video {
            error:
                VideoError::AbsurdDimensions {
                    width: 96,
                    height: 64,
                    max_dimension: 64,
                    ..
                },
            ..
        }) => {}
        other => panic!("unexpected {other:?}"),
    }
    assert!(input.next_batch().unwrap().is_none());
}

#[test]
fn zero_frames() {
    let (batches, error, good) = bad_then_good(read_fixture("zero_frames.avi"));
    assert!(batches.is_empty());
    assert_eq!(error, VideoError::NoFrames);
    assert_eq!(good, 23);
}

#[test]
fn every_bad_input_in_one_queue_loses_nothing_else() {
    let input = VideoInput::new(Config::new(8, 2)).unwrap();
    let videos = [
        Vec::new(),
        read_fixture("h264.mp4"),
        b"not a video".to_vec(),
        read_fixture("audio_only.m4a"),
        read_fixture("vp9.webm"),
        read_fixture("zero_frames.avi"),
        read_fixture("hevc.hevc"),
    ];
    for v in videos {
        input.feed(v).unwrap();
    }
    input.close();
    let (mut frames, mut errors) = (0, Vec::new());
    for r in input.iter() {
        match r {
            Ok(b) => frames += b.valid_frames(),
            Err(e) => errors.push(e.video().unwrap().id.0),
        }
    }
    assert_eq!(frames, 3 * 23);
    assert_eq!(errors, [0, 2, 3, 5]);
}

/// A video whose batches would not fit `max_batch_bytes` fails alone, naming the numbers, before anything is
/// allocated for it; the next video decodes.
#[test]
fn a_batch_over_the_memory_budget_fails_its_video_alone() {
    use framefeed::{Config, Error, VideoError, VideoInput};
    // 4 x 2 frames: 1.84 MB at 320x240 (the sample), 144 kB at 100x60.
    let input = VideoInput::new(Config::new(4, 2).max_batch_bytes(1 << 20)).unwrap();
    input.feed(framefeed::SAMPLE_MP4).unwrap();
    input.feed(common::read_fixture("h264_100x60.mp4")).unwrap();
    input.close();
    let results: Vec<_> = input.iter().collect();
    match &results[0] {
        Err(Error::Video {
            error:
                VideoError::BatchTooLarge {
                    frame,
                    bytes,
                    limit,
                    ..
                },
            ..
        }) => {
            assert_eq!(
                (*frame, *bytes, *limit),
                ((320, 240), Some(1_843_200), 1 << 20)
            );
            let message = results[0].as_ref().unwrap_err().to_string();
            assert!(message.contains("raise max_batch_bytes"), "{message}");
        }
        other => panic!("expected BatchTooLarge, got {other:?}"),
    }
    let frames: usize = results[1..]
        .iter()
        .map(|r| r.as_ref().expect("the next video decodes").valid_frames())
        .sum();
    assert!(frames > 0);
    // Only the small video's batches were ever allocated (each a fraction of the budget).
    assert!(
        input.buffer_allocations() <= 3,
        "{}",
        input.buffer_allocations()
    );
}

/// `res_change.h264` is 10 frames of 96x64 then 7 of 64x48; this is the 64x48 part, then the whole of it.
fn small_then_large() -> Vec<u8> {
    let data = read_fixture("res_change.h264");
    // The second sequence parameter set (NAL type 7 after a start code) starts the 64x48 stream.
    let starts: Vec<usize> = data
        .windows(4)
        .enumerate()
        .filter(|(_, w)| w[..3] == [0, 0, 1] && w[3] & 0x1f == 7)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(starts.len(), 2, "two streams in the fixture");
    [&data[starts[1]..], &data[..]].concat()
}

#[test]
fn a_stream_growing_past_the_frame_limit_fails_as_too_large_after_its_smaller_frames() {
    // 64x48 is allowed, 96x64 is not: the decoder itself is held to the limit (FFmpeg's `max_pixels`), so the
    // larger frames fail as too large (not as corrupt packets) and are never allocated.
    for threads in [1, 2] {
        let config = Config::new(1, 1)
            .decoder_threads(threads)
            .max_frame_size(64, 64 * 48);
        let results = decode_all(config, vec![small_then_large()]);
        let frames: usize = results
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|b| b.valid_frames())
            .sum();
        if threads == 1 {
            assert_eq!(frames, 7, "every 64x48 frame first: {results:?}");
        } else {
            // Frame threads lose the pictures other threads held when one fails (FFmpeg's frame threading).
            assert!((1..=7).contains(&frames), "{results:?}");
        }
        match results.last() {
            Some(Err(Error::Video {
                error:
                    VideoError::AbsurdDimensions {
                        width: 96,
                        height: 64,
                        max_dimension: 64,
                        max_pixels: 3072,
                    },
                ..
            })) => {}
            other => panic!("{threads} threads: unexpected {other:?}"),
        }
    }
}
