//! Videos read from a [`ReadAt`] source (`Encoded::reader`): the frames of the same file read from disk, in a
//! plain run, with clips and through the random-access reader (the Python package's lazy file objects count the
//! bytes read: `python/tests/test_file_objects.py`); a source whose reads fail fails its own video, and the
//! videos fed after it decode.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use framefeed::{Config, Encoded, ReadAt, Sampling, VideoInput, VideoReader};

/// A file's bytes served at offsets, counting what was read; `fail` makes every read fail.
#[derive(Debug)]
struct Served {
    data: Vec<u8>,
    read: Arc<AtomicU64>,
    fail: Arc<AtomicBool>,
}

impl ReadAt for Served {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        if self.fail.load(Ordering::Relaxed) {
            return Err(std::io::Error::other("the store went away"));
        }
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.data.len());
        let n = buf.len().min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

fn served(name: &str) -> (Encoded, Arc<AtomicU64>, Arc<AtomicBool>) {
    let data = common::read_fixture(name);
    let len = data.len() as u64;
    let (read, fail) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let source = Served {
        data,
        read: read.clone(),
        fail: fail.clone(),
    };
    (Encoded::reader(source, len), read, fail)
}

fn frames(config: Config, video: Encoded) -> Vec<Vec<u8>> {
    let input = VideoInput::new(config).unwrap();
    input.feed(video).unwrap();
    input.close();
    let batches: Vec<_> = input.iter().map(Result::unwrap).collect();
    common::frames_of(&batches)
}

#[test]
fn a_read_at_source_gives_the_files_frames_in_every_api() {
    for name in [
        "h264.mp4",
        "h264_moov_at_end.mp4",
        "vp9.webm",
        "h264.mkv",
        "sampling_h264_open_gop.mp4",
    ] {
        let file = || Encoded::file(common::fixture(name)).unwrap();
        let plain = Config::new(4, 2);
        assert_eq!(
            frames(plain.clone(), served(name).0),
            frames(plain, file()),
            "{name}"
        );
        let clips = Config::new(3, 1).sampling(
            Sampling::new()
                .clips(3, framefeed::ClipSampler::Random)
                .seed(5),
        );
        assert_eq!(
            frames(clips.clone(), served(name).0),
            frames(clips, file()),
            "{name}"
        );
        let reader = VideoReader::open(served(name).0, &Config::new(1, 1)).unwrap();
        let disk = VideoReader::open(file(), &Config::new(1, 1)).unwrap();
        let last = reader.len() - 1;
        let (got, want) = (
            reader.frames_at(&[last, 0, 2]).unwrap(),
            disk.frames_at(&[last, 0, 2]).unwrap(),
        );
        assert_eq!(got.indices(), want.indices(), "{name}");
        assert_eq!(got.into_batch().data(), want.into_batch().data(), "{name}");
    }
}

#[test]
fn a_failing_source_fails_its_video_and_the_next_one_decodes() {
    let (video, _, fail) = served("h264.mp4");
    fail.store(true, Ordering::Relaxed);
    let input = VideoInput::new(Config::new(4, 2)).unwrap();
    input.feed(video.label("gone")).unwrap();
    input
        .feed(Encoded::file(common::fixture("h264.mp4")).unwrap())
        .unwrap();
    input.close();
    let results: Vec<_> = input.iter().collect();
    let failed: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].to_string().contains("gone"), "{}", failed[0]);
    let decoded: usize = results
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|b| b.sequences().len())
        .sum();
    assert_eq!(decoded, 6, "the next video's 23 frames in sequences of 4");
}
