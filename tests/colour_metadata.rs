//! Colour metadata (issue 62): bit depth, primaries, transfer (SDR, PQ, HLG), matrix, range and HDR static
//! metadata, as `ffprobe` reports them, from `framefeed::probe` and the `VideoReader`'s metadata alike, on the
//! HDR fixtures (`tests/fixtures/make.sh`: PQ and HLG, 10 and 12 bits, 4:2:2, HEVC in MP4 and MKV, VP9 in
//! WebM) and the corpus's SDR and 10-bit clips.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{corpus, fixture, skip_without_ffmpeg};
use framefeed::{ColorInfo, Config, DynamicRange, MediaKind, Resize, Transforms, VideoReader};
use serde_json::Value;

/// The first video stream as `ffprobe -show_streams` reports it.
fn ffprobe_video(path: &Path) -> Value {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_streams",
            "-of",
            "json",
        ])
        .arg(path)
        .output()
        .expect("run ffprobe");
    assert!(out.status.success(), "ffprobe {}", path.display());
    let mut all: Value = serde_json::from_slice(&out.stdout).expect("ffprobe's JSON");
    all["streams"][0].take()
}

/// A rational as ffprobe prints it (`"34000/50000"`).
fn ratio(v: &Value) -> f64 {
    let text = v.as_str().expect("a rational");
    let (n, d) = text.split_once('/').expect("n/d");
    n.parse::<f64>().unwrap() / d.parse::<f64>().unwrap()
}

/// The bits per sample of an FFmpeg pixel format name: `yuv420p10le` 10, `yuv420p` 8.
fn depth_of(pix_fmt: &str) -> u32 {
    let digits: String = pix_fmt
        .trim_end_matches("le")
        .trim_end_matches("be")
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().unwrap_or(8)
}

/// ffprobe's name, `None` for what it reports as unknown or leaves out.
fn named(v: &Value) -> Option<String> {
    v.as_str()
        .filter(|s| *s != "unknown" && *s != "unspecified")
        .map(str::to_owned)
}

/// `color` must be what ffprobe reports for `path`'s video stream.
fn check_against_ffprobe(path: &Path, color: &ColorInfo, what: &str) {
    let want = ffprobe_video(path);
    let name = format!("{} ({what})", path.display());
    assert_eq!(
        color.primaries,
        named(&want["color_primaries"]),
        "{name}: primaries"
    );
    assert_eq!(
        color.transfer,
        named(&want["color_transfer"]),
        "{name}: transfer"
    );
    assert_eq!(color.matrix, named(&want["color_space"]), "{name}: matrix");
    assert_eq!(color.range, named(&want["color_range"]), "{name}: range");
    assert_eq!(
        color.bit_depth,
        Some(depth_of(want["pix_fmt"].as_str().unwrap())),
        "{name}: bit depth"
    );
    let side = want["side_data_list"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let of = |kind: &str| side.iter().find(|s| s["side_data_type"] == kind).cloned();
    match (of("Mastering display metadata"), &color.mastering_display) {
        (None, None) => {}
        (Some(m), Some(got)) => {
            let close = |a: f64, b: f64, part: &str| {
                assert!(
                    (a - b).abs() < 1e-9,
                    "{name}: mastering display {part}: {a} against {b}"
                )
            };
            let primaries = got.primaries.expect("primaries");
            for (i, colour) in ["red", "green", "blue"].iter().enumerate() {
                close(primaries[i].0, ratio(&m[format!("{colour}_x")]), colour);
                close(primaries[i].1, ratio(&m[format!("{colour}_y")]), colour);
            }
            let white = got.white_point.expect("white point");
            close(white.0, ratio(&m["white_point_x"]), "white x");
            close(white.1, ratio(&m["white_point_y"]), "white y");
            close(
                got.min_luminance.unwrap(),
                ratio(&m["min_luminance"]),
                "min luminance",
            );
            close(
                got.max_luminance.unwrap(),
                ratio(&m["max_luminance"]),
                "max luminance",
            );
        }
        (want, got) => panic!("{name}: mastering display: ffprobe {want:?}, framefeed {got:?}"),
    }
    match (of("Content light level metadata"), &color.content_light) {
        (None, None) => {}
        (Some(c), Some(got)) => {
            assert_eq!(
                u64::from(got.max_cll),
                c["max_content"].as_u64().unwrap(),
                "{name}: MaxCLL"
            );
            assert_eq!(
                u64::from(got.max_fall),
                c["max_average"].as_u64().unwrap(),
                "{name}: MaxFALL"
            );
        }
        (want, got) => panic!("{name}: content light: ffprobe {want:?}, framefeed {got:?}"),
    }
}

/// The probe's video stream and the reader's metadata, each against ffprobe.
fn check(path: &Path) -> ColorInfo {
    let info = framefeed::probe(framefeed::Encoded::file(path).unwrap()).unwrap();
    let stream = info
        .streams
        .iter()
        .find(|s| s.kind == MediaKind::Video)
        .expect("a video stream");
    let color = stream.color();
    check_against_ffprobe(path, &color, "probe");
    assert_eq!(stream.dynamic_range(), color.dynamic_range());
    let reader = VideoReader::open(std::fs::read(path).unwrap(), &Config::new(1, 1)).unwrap();
    check_against_ffprobe(path, &reader.metadata().color, "VideoReader");
    color
}

const HDR_FIXTURES: [(&str, DynamicRange, u32); 4] = [
    ("hdr_pq_hevc10.mp4", DynamicRange::Pq, 10),
    ("hdr_pq_hevc12.mkv", DynamicRange::Pq, 12),
    ("hdr_hlg_hevc10_422.mp4", DynamicRange::Hlg, 10),
    ("hdr_hlg_vp9_10.webm", DynamicRange::Hlg, 10),
];

#[test]
fn hdr_fixtures_report_ffprobes_colour() {
    if skip_without_ffmpeg("the colour metadata tests") {
        return;
    }
    for (name, range, depth) in HDR_FIXTURES {
        let color = check(&fixture(name));
        assert_eq!(color.dynamic_range(), range, "{name}");
        assert!(color.is_hdr(), "{name}");
        assert_eq!(color.bit_depth, Some(depth), "{name}");
        assert_eq!(color.primaries.as_deref(), Some("bt2020"), "{name}");
    }
    // The PQ MP4 carries HDR10's static metadata in its sample entry (mdcv, clli): reported, as ffprobe has
    // it (checked above), with HDR10's values.
    let pq = check(&fixture("hdr_pq_hevc10.mp4"));
    let mastering = pq.mastering_display.expect("the mastering display");
    assert_eq!(mastering.max_luminance, Some(1000.0));
    assert_eq!(mastering.min_luminance, Some(0.005));
    assert_eq!(mastering.primaries.unwrap()[0], (0.68, 0.32), "red");
    let light = pq.content_light.expect("content light levels");
    assert_eq!((light.max_cll, light.max_fall), (1000, 400));
}

#[test]
fn sdr_and_ten_bit_corpus_clips_report_ffprobes_colour() {
    if skip_without_ffmpeg("the colour metadata tests") {
        return;
    }
    let Some(dir) = corpus("the colour metadata tests") else {
        return;
    };
    let clips: Vec<PathBuf> = [
        "h264_10bits.mp4",
        "bt709_full_range.mp4",
        "bt601_limited_range.mp4",
        "testsrc2_vp9.webm",
        "av1_video.mkv",
    ]
    .iter()
    .map(|c| dir.join(c))
    .collect();
    for clip in &clips {
        let color = check(clip);
        assert_eq!(
            color.dynamic_range(),
            DynamicRange::Sdr,
            "{}",
            clip.display()
        );
        assert!(color.mastering_display.is_none() && color.content_light.is_none());
    }
    assert_eq!(check(&clips[0]).bit_depth, Some(10), "h264_10bits.mp4");
    assert_eq!(
        check(&clips[1]).range.as_deref(),
        Some("pc"),
        "bt709_full_range.mp4"
    );
}

#[test]
fn the_transfer_names_the_dynamic_range() {
    assert_eq!(
        DynamicRange::of_transfer(Some("smpte2084")),
        DynamicRange::Pq
    );
    assert_eq!(
        DynamicRange::of_transfer(Some("arib-std-b67")),
        DynamicRange::Hlg
    );
    for sdr in [Some("bt709"), Some("smpte170m"), Some("linear"), None] {
        assert_eq!(DynamicRange::of_transfer(sdr), DynamicRange::Sdr, "{sdr:?}");
    }
    assert_eq!(
        [DynamicRange::Sdr, DynamicRange::Pq, DynamicRange::Hlg].map(DynamicRange::as_str),
        ["sdr", "pq", "hlg"]
    );
}

#[test]
fn every_sequence_and_json_line_carries_its_videos_colour() {
    let path = fixture("hdr_pq_hevc10.mp4");
    let want = framefeed::probe(framefeed::Encoded::file(&path).unwrap())
        .unwrap()
        .streams[0]
        .color();
    // A packed batch holds an SDR video's sequences beside the HDR one's: each keeps its own.
    let batches = common::decode_all(
        Config::new(3, 4)
            .pack_batches(true)
            .transforms(Transforms::new().resize(Resize::Exact {
                width: 64,
                height: 48,
            })),
        vec![
            common::read_fixture("hdr_pq_hevc10.mp4"),
            common::read_fixture("h264.mp4"),
        ],
    );
    let mut seen = [0, 0];
    let mut packed = false;
    for batch in batches {
        let batch = batch.unwrap();
        packed |= batch.is_packed();
        let line = framefeed::report::batch_json(&batch);
        for (seq, json) in batch
            .sequences()
            .iter()
            .zip(line["sequences"].as_array().unwrap())
        {
            if seq.video().id.0 == 0 {
                seen[0] += 1;
                assert_eq!(seq.color(), &want);
                assert_eq!(json["color"]["dynamic_range"], "pq");
                assert_eq!(json["color"]["bit_depth"], 10);
                assert_eq!(json["color"]["transfer"], "smpte2084");
                assert_eq!(json["color"]["mastering_display"]["max_luminance"], 1000.0);
                assert_eq!(json["color"]["content_light"]["max_fall"], 400);
            } else {
                seen[1] += 1;
                assert_eq!(seq.color().dynamic_range(), DynamicRange::Sdr);
                assert_eq!(json["color"]["dynamic_range"], "sdr");
                assert_eq!(json["color"]["bit_depth"], 8);
                assert!(json["color"].get("mastering_display").is_none());
            }
        }
    }
    // 8 frames in sequences of 3, then 23.
    assert_eq!(seen, [3, 8]);
    assert!(packed, "a batch held both videos");
}

#[test]
fn hdr10_metadata_only_in_the_streams_sei_is_reported_by_the_sequences() {
    // The container states no mastering display or light levels (what `probe` reads, decoding nothing); the
    // HEVC stream's SEI messages do, and the decoder hands them over with the frames: the sequences report them.
    let path = fixture("hdr_pq_sei_only.mkv");
    let probed = framefeed::probe(framefeed::Encoded::file(&path).unwrap()).unwrap();
    let stream = probed
        .streams
        .iter()
        .find(|s| s.kind == MediaKind::Video)
        .unwrap();
    assert_eq!(
        (stream.mastering_display, stream.content_light),
        (None, None)
    );
    let input = framefeed::VideoInput::new(Config::new(2, 1)).unwrap();
    input
        .feed(framefeed::Encoded::file(&path).unwrap())
        .unwrap();
    input.close();
    let batch = input.next_batch().unwrap().unwrap();
    let color = batch.sequences()[0].color().clone();
    assert_eq!(color.dynamic_range(), DynamicRange::Pq);
    let light = color.content_light.expect("MaxCLL from the SEI");
    assert_eq!((light.max_cll, light.max_fall), (2000, 300));
    let mastering = color
        .mastering_display
        .expect("the mastering display from the SEI");
    assert_eq!(mastering.max_luminance, Some(2000.0));
    assert_eq!(mastering.min_luminance, Some(0.01));
}
