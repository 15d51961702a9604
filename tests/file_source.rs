//! Videos fed as files (`Encoded::file`): read from disk as they are demuxed, never whole in memory. Every
//! container decodes to the same frames, indices and times as its bytes fed from memory, with and without
//! sampling (whose seeks then read the file at the clips' offsets); a file cut short after it was fed fails
//! alone (or ends early), never the process; what is not a file is refused when fed.

mod common;

use std::io::Write;

use common::{fixture, read_fixture};
use framefeed::{ClipSampler, Config, Encoded, Error, Sampling, VideoInput};

/// What one video decodes to: per sequence, its display indices, pts and frames' bytes.
type Decoded = Vec<(Vec<u64>, Vec<f64>, Vec<u8>)>;

/// Feeds `video` between two copies of the built-in sample and decodes; returns the middle video's
/// sequences, its error if it failed, and the frames of the two samples (which must decode whole).
fn decode_between_samples(config: Config, video: Encoded) -> (Decoded, Option<String>, usize) {
    let input = VideoInput::new(config).unwrap();
    input.feed(framefeed::SAMPLE_MP4).unwrap();
    let id = input.feed(video).unwrap();
    input.feed(framefeed::SAMPLE_MP4).unwrap();
    input.close();
    let (mut decoded, mut error, mut others) = (Vec::new(), None, 0);
    for result in input.iter() {
        match result {
            Ok(batch) if batch.video_id() == id => {
                for s in batch.sequences() {
                    decoded.push((s.indices().to_vec(), s.pts().to_vec(), s.data().to_vec()));
                }
            }
            Ok(batch) => others += batch.valid_frames(),
            Err(Error::Video { video, error: e }) if video.id == id => error = Some(e.to_string()),
            Err(e) => panic!("{e}"),
        }
    }
    (decoded, error, others)
}

/// The frames the built-in sample gives under `config`.
fn sample_frames(config: Config) -> usize {
    let input = VideoInput::new(config).unwrap();
    input.feed(framefeed::SAMPLE_MP4).unwrap();
    input.close();
    input.iter().map(|b| b.unwrap().valid_frames()).sum()
}

#[test]
fn a_file_decodes_as_its_bytes_in_every_container() {
    let samplings = [
        None,
        Some(Sampling::new().clips(3, ClipSampler::Random).seed(3)),
        Some(Sampling::new().stride(2).step(5)),
    ];
    for name in [
        "h264.mp4",
        "h264.mkv",
        "h264.mov",
        "h264.ts",
        "h264_moov_at_end.mp4",
        "h264_fragmented.mp4",
        "hevc.hevc",
        "vp9.webm",
        "av1.mkv",
        "sampling_h264_open_gop.mp4",
        "sampling_edit_list.mp4",
        "sampling_vfr.mp4",
    ] {
        for sampling in &samplings {
            let config = || {
                let config = Config::new(4, 2);
                match sampling {
                    Some(s) => config.sampling(s.clone()),
                    None => config,
                }
            };
            let (from_memory, error, _) =
                decode_between_samples(config(), Encoded::new(read_fixture(name)));
            assert_eq!(error, None, "{name} from memory, {sampling:?}");
            let (from_file, error, others) =
                decode_between_samples(config(), Encoded::file(fixture(name)).unwrap());
            assert_eq!(error, None, "{name} from its file, {sampling:?}");
            assert!(!from_file.is_empty(), "{name}, {sampling:?}: frames");
            assert!(
                from_file == from_memory,
                "{name}, {sampling:?}: the file decodes as its bytes"
            );
            assert_eq!(
                others,
                2 * sample_frames(config()),
                "{name}: the videos around it decode whole"
            );
        }
    }
}

#[test]
fn a_file_cut_short_after_it_was_fed_fails_alone() {
    let whole = read_fixture("h264.mp4");
    let (full, _, _) = decode_between_samples(Config::new(4, 2), Encoded::new(whole.clone()));
    for keep in [whole.len() / 2, 100, 0] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.mp4");
        std::fs::write(&path, &whole).unwrap();
        let video = Encoded::file(&path).unwrap();
        // Opened at its full length, then cut before it is read.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(keep as u64)
            .unwrap();
        let (decoded, error, others) = decode_between_samples(Config::new(4, 2), video);
        assert_eq!(
            others,
            2 * 60,
            "cut to {keep}: the other videos decode whole"
        );
        let frames: usize = decoded.iter().map(|(i, _, _)| i.len()).sum();
        assert!(
            error.is_some() || frames < 23,
            "cut to {keep}: fails or ends early ({frames} frames)"
        );
        assert!(
            decoded.iter().all(|d| full.contains(d)),
            "cut to {keep}: what it gave is what the whole file gives"
        );
    }
}

#[test]
fn what_is_not_a_readable_file_is_refused_when_fed() {
    let dir = tempfile::tempdir().unwrap();
    let err = Encoded::file(dir.path()).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    let err = Encoded::file(dir.path().join("missing.mp4")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    // An empty file fails its video as empty bytes do.
    let empty = dir.path().join("empty.mp4");
    std::fs::File::create(&empty).unwrap().flush().unwrap();
    let (_, error, others) =
        decode_between_samples(Config::new(4, 2), Encoded::file(&empty).unwrap());
    assert!(error.unwrap().contains("empty"));
    assert_eq!(others, 2 * 60);
}
