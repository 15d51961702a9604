//! A whole MP4/MOV video's packets listed from its index instead of by reading them: what demuxing every
//! packet would give (timestamps, byte position, keyframe and discard flags), read from the MOV demuxer's
//! index and the track's composition offsets, without reading the media data. For a long video this is the
//! difference between reading the whole file and reading its `moov` box: an index (for clips, segments,
//! seeking) of a ten-hour video in a fraction of a second instead of a pass over tens of gigabytes.
//!
//! Only where the result is known to be what reading gives: the MOV demuxer, H.264 or HEVC (which it
//! passes on without a parser that could change flags or times), a file that is not fragmented, whose
//! composition offsets cover every sample and whose samples lie at distinct positions. Anything else is read
//! packet by packet, as before. The tests below hold the two ways equal, packet for packet, on every MP4 of
//! the fixtures and the conformance corpus and on generated ones (B-frames, open GOPs, edit lists, negative
//! offsets).

use super::mp4::{boxes, tables};
use super::Demuxer;
use crate::error::AvError;
use crate::ffi::format::{Demuxers, FormatContext, ProbeOptions};
use crate::ffi::io::MemoryIo;
use crate::ffi::packet::Packet;
use crate::video::Whole;

/// One packet of the chosen stream, as demuxing gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PacketEntry {
    /// Presentation time (stream time base).
    pub(crate) pts: Option<i64>,
    /// Decode time.
    pub(crate) dts: Option<i64>,
    /// Byte position in the container.
    pub(crate) pos: Option<i64>,
    /// Duration (0: unknown).
    pub(crate) duration: i64,
    /// A keyframe.
    pub(crate) key: bool,
    /// Decoded for reference only, never shown (an edit list cuts it).
    pub(crate) discard: bool,
}

/// Codecs the MOV demuxer hands on without a parser (FFmpeg 5.1).
const UNPARSED: [&str; 2] = ["h264", "hevc"];

impl Demuxer {
    /// Reads every packet of the chosen stream (not decoding them), in decode order. Stops at `max` packets
    /// (`Ok(None)`: too many).
    pub(crate) fn read_packets(&mut self, max: usize) -> Result<Option<Vec<PacketEntry>>, AvError> {
        let mut packet = Packet::new()?;
        let mut packets = Vec::new();
        while self.next_packet(&mut packet)? {
            if packets.len() == max {
                return Ok(None);
            }
            packets.push(PacketEntry {
                pts: packet.pts(),
                dts: packet.dts(),
                pos: packet.pos(),
                duration: packet.duration(),
                key: packet.is_key(),
                discard: packet.is_discarded(),
            });
        }
        Ok(Some(packets))
    }

    /// Every packet of the chosen stream, in decode order, as reading them all would give them, listed from
    /// the container's index (see the module); `None` where that cannot be done exactly (read them instead).
    pub(crate) fn indexed_packets(&self) -> Option<Vec<PacketEntry>> {
        let format = self.format();
        let stream = self.stream();
        if !format.is_mov() || !UNPARSED.contains(&stream.codec.as_str()) {
            return None;
        }
        let whole = self.whole.as_ref()?;
        let timing = format.stream_timing(stream.index);
        let track = u32::try_from(timing.id).ok()?;
        let entries = format.index_entries(stream.index);
        if entries.is_empty() {
            return None;
        }
        let boxes;
        let tables = match whole {
            Whole::Memory(data) => {
                tables::track_tables(&data[boxes::id3v2_len(data).min(data.len())..], track)
            }
            Whole::File(file) => {
                boxes = boxes::movie_boxes(file).ok()??;
                tables::track_tables(&boxes, track)
            }
        }?;
        // The sample each entry is (its composition offset's): an edit list makes the demuxer rebuild its
        // index from runs of the samples, so their positions come from an index of the samples themselves.
        let positions: Vec<i64> = if tables.edit_list {
            let probe = ProbeOptions {
                demuxers: Demuxers::OnlyMov,
                ignore_edit_list: true,
                header_only: true,
                ..ProbeOptions::default()
            };
            let samples = FormatContext::open_io(MemoryIo::new(whole.clone()).ok()?, probe).ok()?;
            if samples.stream_count() != format.stream_count() {
                return None;
            }
            samples
                .index_entries(stream.index)
                .iter()
                .map(|e| e.pos)
                .collect()
        } else {
            entries.iter().map(|e| e.pos).collect()
        };
        // (position, sample), by position: 16 bytes a sample, looked up by binary search.
        let mut by_pos: Vec<(i64, u32)> = Vec::new();
        by_pos.try_reserve_exact(positions.len()).ok()?;
        for (sample, &pos) in positions.iter().enumerate() {
            by_pos.push((pos, u32::try_from(sample).ok()?));
        }
        drop(positions);
        by_pos.sort_unstable();
        if by_pos.windows(2).any(|w| w[0].0 == w[1].0) {
            return None; // two samples at one place: which is which cannot be told
        }
        let sample_at = |pos: i64| {
            by_pos
                .binary_search_by_key(&pos, |&(p, _)| p)
                .ok()
                .map(|i| by_pos[i].1 as usize)
        };
        let composition = tables.composition(by_pos.len())?;
        if composition
            .offsets
            .as_ref()
            .is_some_and(|o| o.len() != by_pos.len())
        {
            return None;
        }
        // A packet the demuxer gives no duration gets one frame at the stream's real base rate
        // (libavformat's `compute_pkt_fields`, rounded down).
        let (rate_num, rate_den) = timing.real_frame_rate;
        let (tb_num, tb_den) = stream.time_base;
        if rate_num <= 0 || rate_den <= 0 || tb_num <= 0 || tb_den <= 0 {
            return None;
        }
        let one_frame =
            (i64::from(rate_den) * i64::from(tb_den)) / (i64::from(rate_num) * i64::from(tb_num));
        let mut packets = Vec::new();
        packets.try_reserve_exact(entries.len()).ok()?;
        // Samples that lie wholly past the end of the data (a file cut short) are never read: they are not
        // the video's (a sample cut part way is read, short, and decodes as it can).
        let end = i64::try_from(whole.len()).unwrap_or(i64::MAX);
        let past_the_end = entries.iter().filter(|e| e.pos >= end).count();
        if past_the_end > 0 {
            tracing::warn!(
                samples = past_the_end,
                "the index lists samples past the end of the data (a file cut short): they are not counted"
            );
        }
        for (i, e) in entries.iter().enumerate() {
            if e.pos >= end {
                continue;
            }
            let sample = sample_at(e.pos)?;
            let (pts, duration) = match &composition.offsets {
                // The MOV demuxer gives no duration with composition offsets.
                Some(offsets) => (
                    e.timestamp
                        .checked_add(composition.dts_shift)?
                        .checked_add(i64::from(offsets[sample]))?,
                    0,
                ),
                None => {
                    let next = entries.get(i + 1).map_or(timing.duration, |n| n.timestamp);
                    let duration = if next >= e.timestamp {
                        next.checked_sub(e.timestamp)?
                    } else {
                        0
                    };
                    (e.timestamp, duration)
                }
            };
            packets.push(PacketEntry {
                pts: Some(pts),
                dts: Some(e.timestamp),
                pos: Some(e.pos),
                duration: if duration == 0 { one_frame } else { duration },
                key: e.key,
                discard: e.discard,
            });
        }
        Some(packets)
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;
    use crate::settings::config::Config;
    use crate::video::Encoded;

    /// The packets of `path`'s chosen stream both ways, the file read from disk and from memory: listed from
    /// the index (`None` where it is not done), whether they were listed from the header alone too, and read.
    fn both_ways(path: &Path) -> Vec<(Option<Vec<PacketEntry>>, bool, Vec<PacketEntry>)> {
        let config = Config::new(1, 1);
        let file = Encoded::file(path).unwrap().data;
        let memory = Whole::Memory(std::fs::read(path).unwrap().into());
        [file, memory]
            .into_iter()
            .map(|whole| {
                // From the header alone (as `segments` lists them): the same but for durations, which
                // may come from a frame rate only the stream information gives.
                let header = Demuxer::open_header(whole.clone(), &config).unwrap();
                let mut demuxer = Demuxer::open(whole, &config).unwrap();
                let listed = demuxer.indexed_packets();
                let from_header = header.indexed_packets();
                if let (Some(full), Some(header)) = (&listed, &from_header) {
                    let timeless = |p: &PacketEntry| PacketEntry { duration: 0, ..*p };
                    assert!(
                        full.iter().map(timeless).eq(header.iter().map(timeless)),
                        "{}: from the header alone",
                        path.display()
                    );
                }
                let read = demuxer.read_packets(usize::MAX).unwrap().unwrap();
                (listed, from_header.is_some(), read)
            })
            .collect()
    }

    /// Checks the index's listing against reading; whether it was listed, and from the header alone.
    fn listed_as_read(path: &Path) -> (bool, bool) {
        let mut listed = Vec::new();
        let mut from_header = Vec::new();
        for (from_index, header, read) in both_ways(path) {
            from_header.push(header);
            if let Some(packets) = &from_index {
                assert_eq!(
                    packets.len(),
                    read.len(),
                    "{}: packet count",
                    path.display()
                );
                for (i, (a, b)) in packets.iter().zip(&read).enumerate() {
                    assert_eq!(a, b, "{}: packet {i} (listed, read)", path.display());
                }
            }
            listed.push(from_index.is_some());
        }
        assert_eq!(listed[0], listed[1], "{}: file and memory", path.display());
        (listed[0], from_header[0])
    }

    fn ffmpeg(args: &[&str], out: &Path) -> PathBuf {
        let status = Command::new("ffmpeg")
            .args(["-hide_banner", "-loglevel", "error", "-y"])
            .args(args)
            .arg(out)
            .status()
            .expect("the ffmpeg CLI (apt install ffmpeg)");
        assert!(status.success(), "ffmpeg {args:?}");
        out.to_path_buf()
    }

    /// MP4s whose index matters: B-frames (an edit list, or none and a first presentation time past 0),
    /// negative composition offsets, a cut in the middle of a GOP (frames the edit list discards), an edit
    /// list starting in the second GOP, an empty edit before the media, open-GOP HEVC, a MOV, and the video
    /// as a file's second track.
    fn generated(dir: &Path) -> Vec<PathBuf> {
        let src = [
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=128x72:rate=30",
            "-frames:v",
            "150",
        ];
        let x264 = [
            "-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "40",
        ];
        let b_frames: Vec<&str> = src.iter().chain(&x264).copied().collect();
        let with = |extra: &[&'static str]| -> Vec<&'static str> {
            b_frames.iter().chain(extra).copied().collect()
        };
        let mut files = vec![
            ffmpeg(&b_frames, &dir.join("b_frames.mp4")),
            ffmpeg(
                &with(&["-use_editlist", "0"]),
                &dir.join("no_edit_list.mp4"),
            ),
            ffmpeg(
                &with(&["-movflags", "+negative_cts_offsets"]),
                &dir.join("negative_offsets.mp4"),
            ),
            ffmpeg(&b_frames, &dir.join("b_frames.mov")),
            ffmpeg(
                &with(&["-x264-params", "open-gop=1:keyint=30"]),
                &dir.join("open_gop.mp4"),
            ),
            ffmpeg(
                &[
                    &src[..],
                    &[
                        "-c:v",
                        "libx265",
                        "-preset",
                        "ultrafast",
                        "-x265-params",
                        "log-level=none:keyint=30:open-gop=1:bframes=4",
                    ],
                ]
                .concat(),
                &dir.join("hevc_open_gop.mp4"),
            ),
        ];
        let whole = files[0].clone();
        files.push(edit_starting_late(
            &whole,
            &dir.join("edit_starting_late.mp4"),
        ));
        // Two edits: an empty one (the video starts half a second in), then the media.
        files.push(ffmpeg(
            &[
                "-itsoffset",
                "0.5",
                "-i",
                whole.to_str().unwrap(),
                "-c",
                "copy",
            ],
            &dir.join("empty_edit.mp4"),
        ));
        files.push(ffmpeg(
            &["-ss", "1.37", "-i", whole.to_str().unwrap(), "-c", "copy"],
            &dir.join("cut_mid_gop.mp4"),
        ));
        files.push(ffmpeg(
            &[
                "-f",
                "lavfi",
                "-i",
                "sine=frequency=440:duration=5",
                "-i",
                whole.to_str().unwrap(),
                "-map",
                "0:a",
                "-map",
                "1:v",
                "-c:v",
                "copy",
                "-c:a",
                "aac",
            ],
            &dir.join("second_track.mp4"),
        ));
        files
    }

    /// A copy of `mp4` (one edit list entry, version 0; `moov` after the media) whose edit starts 50 frames
    /// later, in its second GOP: the demuxer's index then starts at that GOP's keyframe, not at the first
    /// sample, and discards the frames before the edit.
    fn edit_starting_late(mp4: &Path, out: &Path) -> PathBuf {
        let mut data = std::fs::read(mp4).unwrap();
        let find = |data: &[u8], kind: &[u8; 4]| {
            data.windows(4).rposition(|w| w == kind).unwrap() + 4 // the payload
        };
        let stts = find(&data, b"stts");
        let frame = u32::from_be_bytes(data[stts + 12..stts + 16].try_into().unwrap());
        let elst = find(&data, b"elst");
        assert_eq!(data[elst], 0, "a version 0 edit list");
        assert_eq!(&data[elst + 4..elst + 8], &1u32.to_be_bytes(), "one entry");
        let at = elst + 12; // the entry's media time, after its duration
        let media_time = i32::from_be_bytes(data[at..at + 4].try_into().unwrap());
        let later = media_time + 50 * frame as i32;
        data[at..at + 4].copy_from_slice(&later.to_be_bytes());
        std::fs::write(out, data).unwrap();
        out.to_path_buf()
    }

    #[test]
    fn an_mp4s_packets_listed_from_its_index_are_those_reading_gives() {
        let dir = std::env::temp_dir().join(format!("framefeed-indexed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for path in generated(&dir) {
            let (listed, from_header) = listed_as_read(&path);
            assert!(listed && from_header, "{}: not listed", path.display());
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut listed = 0;
        let mut seen = 0;
        for folder in [root.join("tests/fixtures"), root.join("../shared/videos")] {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
                if !["mp4", "mov", "m4v"].contains(&ext) {
                    continue;
                }
                // A file that cannot be read through is not compared (its reading fails).
                if std::panic::catch_unwind(|| both_ways(&path)).is_err() {
                    continue;
                }
                seen += 1;
                listed += usize::from(listed_as_read(&path).0);
            }
        }
        std::fs::remove_dir_all(&dir).ok();
        println!("{listed} of {seen} MP4/MOV files of the fixtures and the corpus listed from their index");
        assert!(listed >= 8, "only {listed} of {seen} listed");
    }
}
