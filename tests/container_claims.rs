//! MP4/MOV files whose boxes claim what makes libavformat's demuxer take gigabytes (every class found by the
//! audit of FFmpeg 5.1's MOV demuxer and by sweeping header fields, `benches/RESULTS.md`): each fails alone with
//! `VideoError::ImplausibleContainer`, fed whole or pushed live, between videos that decode whole; and the CLI
//! stays far below 300 MiB on each, as it must for any file under 1 MiB.

mod common;

use std::process::Command;
use std::time::Duration;

use common::mp4_forge::{forged_sample_tables, forgeries, mp4_box, Forged};
use common::*;
use framefeed::{Config, Encoded, Error, VideoError, VideoInput};

/// How a forged video is fed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum How {
    /// Its bytes, whole.
    Whole,
    /// Pushed live in 1000-byte chunks.
    Live,
    /// A file on disk (`Encoded::file`), read as it is demuxed.
    File,
}

/// Feeds a good fixture, the forged file (`how`), and the good fixture again; returns the frames decoded and
/// the failures.
fn between_good_videos(forged: &Forged, how: How) -> (usize, Vec<(u64, VideoError)>, u64) {
    let input = VideoInput::new(Config::new(4, 2).stall_timeout(Duration::from_secs(20))).unwrap();
    input.feed(read_fixture("h264.mp4")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let id = if how == How::File {
        let path = dir.path().join("forged.mp4");
        std::fs::write(&path, &forged.data).unwrap();
        input
            .feed(Encoded::file(&path).unwrap().label(forged.name))
            .unwrap()
            .0
    } else if how == How::Live {
        let stream = input.feed_live_with_label(forged.name).unwrap();
        let id = stream.id().0;
        let data = forged.data.clone();
        std::thread::spawn(move || {
            for chunk in data.chunks(1000) {
                // The video fails while it is being pushed: the rest is refused, as it should be.
                if stream.push(chunk.to_vec()).is_err() {
                    return;
                }
            }
            stream.finish();
        });
        id
    } else {
        input.feed((forged.data.clone(), forged.name)).unwrap().0
    };
    input.feed(read_fixture("h264.mp4")).unwrap();
    input.close();
    let mut frames = 0;
    let mut failed = Vec::new();
    for result in input.iter() {
        match result {
            Ok(batch) => frames += batch.valid_frames(),
            Err(Error::Video { video, error }) => failed.push((video.id.0, error)),
            Err(e) => panic!("{}: {e}", forged.name),
        }
    }
    (frames, failed, id)
}

fn assert_refused_alone(forged: &Forged, how: How) {
    let (frames, failed, id) = between_good_videos(forged, how);
    assert_eq!(
        frames, 46,
        "{} ({how:?}): both good videos decode whole",
        forged.name
    );
    match failed.as_slice() {
        [(failed_id, VideoError::ImplausibleContainer { reason })] => {
            assert_eq!(*failed_id, id);
            assert!(
                reason.contains(forged.refusal),
                "{} ({how:?}): {reason}",
                forged.name
            );
        }
        other => panic!("{} ({how:?}): {other:?}", forged.name),
    }
}

#[test]
fn every_forged_claim_fails_its_video_alone_when_fed_whole() {
    for forged in forgeries() {
        assert_refused_alone(&forged, How::Whole);
    }
}

/// A file is checked from disk (its parsed boxes read, its media data not) and refused as its bytes are.
#[test]
fn every_forged_claim_fails_its_video_alone_when_fed_as_a_file() {
    for forged in forgeries() {
        assert_refused_alone(&forged, How::File);
    }
}

#[test]
fn every_forged_claim_fails_its_video_alone_when_pushed_live() {
    for forged in forgeries().iter().filter(|f| f.live) {
        assert_refused_alone(forged, How::Live);
    }
}

/// A live MP4's index boxes are held until complete, so their sizes are real: a `moov` claiming more than the
/// held-box limit is refused before the demuxer reads it, as is one running to the end of the stream.
#[test]
fn live_index_boxes_larger_than_the_limit_are_refused() {
    let mut huge = read_fixture("h264.mp4");
    huge[32..36].copy_from_slice(&0x7fff_0000u32.to_be_bytes()); // the moov claims 2 GB
    let mut open = read_fixture("h264.mp4");
    open[32..36].copy_from_slice(&0u32.to_be_bytes()); // the moov runs to the end
    for (data, refusal) in [(huge, "larger than the"), (open, "runs to the end")] {
        let forged = Forged {
            name: "moov size",
            refusal,
            data,
            live: true,
        };
        assert_refused_alone(&forged, How::Live);
    }
}

/// The limit is the configuration's: a file within it decodes, the same file under a lower limit fails, fed
/// whole or live (where fragments add up as they arrive).
#[test]
fn max_container_samples_is_the_limit_whole_and_live() {
    let fragmented = read_fixture("h264_fragmented.mp4"); // 23 samples in two fragments
    for live in [false, true] {
        for (limit, ok) in [(23, true), (22, false)] {
            let input = VideoInput::new(Config::new(4, 2).max_container_samples(limit)).unwrap();
            if live {
                let stream = input.feed_live().unwrap();
                stream.push(fragmented.clone()).unwrap();
                stream.finish();
            } else {
                input.feed(fragmented.clone()).unwrap();
            }
            input.close();
            let results: Vec<_> = input.iter().collect();
            let failed = results.iter().any(|r| {
                matches!(
                    r,
                    Err(Error::Video {
                        error: VideoError::ImplausibleContainer { .. },
                        ..
                    })
                )
            });
            assert_eq!(failed, !ok, "limit {limit}, live {live}: {results:?}");
        }
    }
    let err = Config::new(1, 1)
        .max_container_samples(0)
        .validate()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("max_container_samples is 0; allowed: 1 to"),
        "{err}"
    );
}

/// A live stream that does not start like an MP4 is never read by the MOV demuxer, whose claims the gate
/// would not have checked: boxes behind an unknown first box fail to open instead of being parsed.
#[test]
fn a_live_stream_that_does_not_start_like_mp4_is_never_read_as_mp4() {
    let mut disguised = mp4_box(b"abcd", &[0; 8]);
    disguised.extend(forged_sample_tables());
    let input = VideoInput::new(Config::new(4, 2)).unwrap();
    let stream = input.feed_live().unwrap();
    stream.push(disguised).unwrap();
    stream.finish();
    input.close();
    let results: Vec<_> = input.iter().collect();
    assert!(
        matches!(
            results.as_slice(),
            [Err(Error::Video {
                error: VideoError::NotAVideo(_),
                ..
            })]
        ),
        "{results:?}"
    );
}

fn peak_rss_mib(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("peak RSS: "))
        .unwrap_or_else(|| panic!("no peak RSS line in {stdout}"));
    line.trim_end_matches(" MiB").parse().unwrap()
}

/// The check: a file under 1 MiB whose frames are under a megapixel never takes `framefeed run` past
/// 300 MiB, whatever its headers claim. Each forged file took 1 to 2.2 GB before.
#[test]
fn the_cli_stays_under_300_mib_on_every_forged_file() {
    let dir = std::env::temp_dir().join(format!("framefeed-claims-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, forged) in forgeries().iter().enumerate() {
        assert!(forged.data.len() < 1 << 20);
        let path = dir.join(format!("forged{i}.mp4"));
        std::fs::write(&path, &forged.data).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_framefeed"))
            .arg("run")
            .arg(&path)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: {stdout}{stderr}",
            forged.name
        );
        let text = format!("{stdout}{stderr}");
        assert!(
            text.contains("implausible container"),
            "{}: {text}",
            forged.name
        );
        let peak = peak_rss_mib(&stdout);
        assert!(peak < 300.0, "{}: peak RSS {peak} MiB", forged.name);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `framefeed::probe` (and `framefeed info`) checks the claims too before opening.
#[test]
fn probing_a_forged_file_refuses_it() {
    for forged in forgeries() {
        match framefeed::probe(forged.data.clone()) {
            Err(VideoError::ImplausibleContainer { reason }) => {
                assert!(reason.contains(forged.refusal), "{}: {reason}", forged.name)
            }
            other => panic!("{}: {other:?}", forged.name),
        }
    }
}
