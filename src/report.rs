//! Batches and errors as JSON objects: one shape for the CLI's `--json` lines and the ingest server's response
//! lines (feature `json`).

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::assembly::batch::{Batch, Sequence};
use crate::error::{Error, VideoError};
use crate::info::{ColorInfo, MasteringDisplay};
use crate::video::VideoRef;
use crate::{DecodedOn, Layout, Orientation};

/// A batch as a JSON object: `video`, `label`, `batch` (index within the video), `last`, `dtype` (the output
/// type's name), and `sequences`, each
/// with `shape` (in the configured layout, (F,H,W,C) by default), `valid_frames`, `first_frame`, `pts`
/// (seconds, per real frame), where there is damage `damaged` (the display indices of damaged frames), `holes`
/// (`{"index", "pts"}` of display indices with no picture) and on a video's last sequence `ended_early` (why
/// reading stopped before its data's end), `color` (its video's: [`ColorLine`]), and, when configured, `resize` (`[w, h]`) and `crop` (`[x, y, w, h]` in the
/// pixels of the resized frame), and for a video turned to be shown, `orientation` (`rotate90`...: see
/// [`Orientation::as_str`]); in a packed batch each sequence also has its `video` and `label`.
///
/// ```
/// use framefeed::{Config, VideoInput};
/// let input = VideoInput::new(Config::new(30, 1))?;
/// input.feed(framefeed::SAMPLE_MP4)?;
/// input.close();
/// let line = framefeed::report::batch_json(&input.next_batch()?.unwrap());
/// assert_eq!(line["sequences"][0]["shape"], serde_json::json!([30, 240, 320, 3]));
/// # Ok::<(), framefeed::Error>(())
/// ```
pub fn batch_json(batch: &Batch) -> Value {
    serde_json::to_value(BatchLine::of(batch)).unwrap_or(Value::Null)
}

/// A batch's JSON line as a type ([`batch_json`] is its value): what the CLI's `--json`, the service's answers
/// and stream lines write, and what the service's `GET /mux` reads back from its streams. Fields that do not
/// apply are left out of the JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchLine {
    /// The video's id.
    pub video: u64,
    /// The video's label, as text.
    pub label: Option<String>,
    /// The batch's index within its video.
    pub batch: u64,
    /// Whether it is the video's last batch.
    pub last: bool,
    /// The output type's name ([`DType`](crate::DType): `uint8`, `uint16`, `float32`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// Its sequences.
    pub sequences: Vec<SequenceLine>,
    /// A break of a pulled source before this batch's frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<GapLine>,
    /// Where it was decoded (`"cuda"` or `"cpu"`), for a GPU operator's batches only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoded_on: Option<String>,
    /// The service's stream lines: its latency (last frame's arrival to publication), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
}

/// One sequence of a [`BatchLine`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequenceLine {
    /// Frames, then the layout's three dimensions.
    pub shape: [usize; 4],
    /// Real frames (the rest is padding).
    pub valid_frames: usize,
    /// The display index of its first frame.
    pub first_frame: u64,
    /// The display index of each real frame.
    pub frames: Vec<u64>,
    /// Each real frame's time, in seconds.
    pub pts: Vec<f64>,
    /// The size frames were resized to (`[w, h]`), when configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resize: Option<[usize; 2]>,
    /// The crop window (`[x, y, w, h]` in the resized frame's pixels), when configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crop: Option<(i64, i64, usize, usize)>,
    /// How its frames were turned to be shown ([`Orientation::as_str`]), unless upright.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<String>,
    /// Its video's colour ([`Sequence::color`](crate::Sequence::color)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<ColorLine>,
    /// The display indices of its damaged frames ([`Frame::damaged`](crate::Frame::damaged)), when there are
    /// any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged: Vec<u64>,
    /// The holes met since the video's previous sequence ([`Sequence::holes`](crate::Sequence::holes)), when
    /// there are any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holes: Vec<HoleLine>,
    /// On a video's last sequence: why reading stopped before the end of its data, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_early: Option<String>,
    /// The MD5 of each real frame's bytes, when asked for ([`BatchLine::with_md5`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub md5: Vec<String>,
    /// Its audio, when the operator decodes audio ([`Sequence::audio`](crate::Sequence::audio)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<AudioLine>,
    /// In a packed batch: the sequence's video.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<u64>,
    /// In a packed batch: the sequence's label (`Some(None)`: a video without one, written `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub label: Option<Option<String>>,
}

/// A sequence's audio in a [`SequenceLine`] ([`AudioClip`](crate::AudioClip)): `shape` (channels, samples),
/// `pts` and `duration` in seconds, `sample_rate`, and with [`BatchLine::with_md5`] the MD5 of its samples'
/// little-endian `f32` bytes, channel after channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AudioLine {
    /// Channels, samples.
    pub shape: [usize; 2],
    /// When its first sample plays.
    pub pts: f64,
    /// How long it plays.
    pub duration: f64,
    /// Samples a second.
    pub sample_rate: u32,
    /// The MD5 of its samples, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md5: Option<String>,
}

/// A video's colour in a [`SequenceLine`] ([`ColorInfo`]): its parts FFmpeg names (`bt2020`, `smpte2084`,
/// `bt2020nc`, `tv`...), each left out when the stream leaves it unspecified, and `dynamic_range` (`sdr`, `pq`,
/// `hlg`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColorLine {
    /// Bits per sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bit_depth: Option<u32>,
    /// Colour primaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primaries: Option<String>,
    /// Transfer characteristics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<String>,
    /// The YUV matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<String>,
    /// `tv` or `pc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// `sdr`, `pq` or `hlg`.
    pub dynamic_range: String,
    /// The mastering display, when the container gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mastering_display: Option<MasteringLine>,
    /// The content light levels, when the container gives them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_light: Option<ContentLightLine>,
}

/// A mastering display ([`MasteringDisplay`]): CIE 1931 `[x, y]` and cd/m².
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MasteringLine {
    /// Red, green and blue `[x, y]`.
    pub primaries: Option<[[f64; 2]; 3]>,
    /// The white point's `[x, y]`.
    pub white_point: Option<[f64; 2]>,
    /// The lowest luminance.
    pub min_luminance: Option<f64>,
    /// The highest luminance.
    pub max_luminance: Option<f64>,
}

/// Content light levels ([`ContentLight`](crate::ContentLight)), cd/m².
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentLightLine {
    /// MaxCLL.
    pub max_cll: u32,
    /// MaxFALL.
    pub max_fall: u32,
}

impl ColorLine {
    /// The line of `color`.
    pub fn of(color: &ColorInfo) -> Self {
        ColorLine {
            bit_depth: color.bit_depth,
            primaries: color.primaries.clone(),
            transfer: color.transfer.clone(),
            matrix: color.matrix.clone(),
            range: color.range.clone(),
            dynamic_range: color.dynamic_range().as_str().to_owned(),
            mastering_display: color.mastering_display.map(|m| MasteringLine::of(&m)),
            content_light: color.content_light.map(|c| ContentLightLine {
                max_cll: c.max_cll,
                max_fall: c.max_fall,
            }),
        }
    }
}

impl MasteringLine {
    /// The line of `m`.
    pub fn of(m: &MasteringDisplay) -> Self {
        MasteringLine {
            primaries: m.primaries.map(|p| p.map(|(x, y)| [x, y])),
            white_point: m.white_point.map(|(x, y)| [x, y]),
            min_luminance: m.min_luminance,
            max_luminance: m.max_luminance,
        }
    }
}

/// A hole: a display index with no picture ([`Hole`](crate::Hole)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoleLine {
    /// The display index.
    pub index: u64,
    /// Its time in seconds.
    pub pts: f64,
}

/// A source's break before a batch: the fields of [`Gap`](crate::Gap), the duration in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapLine {
    /// Frames decoded before the break.
    pub frames_before: u64,
    /// From the drop to the reopened source, in seconds.
    pub seconds: f64,
    /// Reopen attempts it took.
    pub attempts: u32,
    /// Breaks of this video so far.
    pub reconnects: u32,
}

/// A field that is there, `null` included (`Some(None)`); an absent one is the `default`, `None`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

impl BatchLine {
    /// The line of `batch`.
    pub fn of(batch: &Batch) -> Self {
        let packed = batch.is_packed();
        let sequences = batch
            .sequences()
            .iter()
            .map(|seq| SequenceLine {
                shape: seq.shape(),
                valid_frames: seq.valid_frames(),
                first_frame: seq.first_frame(),
                frames: seq.indices().to_vec(),
                pts: seq.pts().to_vec(),
                resize: seq.resized().map(|(w, h)| [w, h]),
                crop: seq.crop_window().map(|c| (c.x, c.y, c.width, c.height)),
                orientation: (seq.orientation() != Orientation::Upright)
                    .then(|| seq.orientation().as_str().to_owned()),
                color: Some(ColorLine::of(seq.color())),
                damaged: seq
                    .indices()
                    .iter()
                    .zip(seq.damaged())
                    .filter(|(_, &d)| d)
                    .map(|(&i, _)| i)
                    .collect(),
                holes: seq
                    .holes()
                    .iter()
                    .map(|h| HoleLine {
                        index: h.index,
                        pts: h.pts,
                    })
                    .collect(),
                ended_early: seq.ended_early().map(str::to_owned),
                md5: Vec::new(),
                audio: seq.audio().map(|a| AudioLine {
                    shape: [a.channels() as usize, a.samples()],
                    pts: a.pts_seconds(),
                    duration: a.duration_seconds(),
                    sample_rate: a.sample_rate(),
                    md5: None,
                }),
                video: packed.then(|| seq.video().id.0),
                label: packed.then(|| seq.video().label.as_ref().map(|l| l.to_string())),
            })
            .collect();
        BatchLine {
            video: batch.video_id().0,
            label: batch.label().map(|l| l.to_string()),
            batch: batch.index(),
            last: batch.is_last(),
            dtype: Some(batch.dtype().to_string()),
            sequences,
            // A source pulled by URL dropped and was reopened before this batch's frames.
            gap: batch.gap().map(|gap| GapLine {
                frames_before: gap.frames_before,
                seconds: gap.duration.as_secs_f64(),
                attempts: gap.attempts,
                reconnects: gap.reconnects,
            }),
            // Only GPU operators say where each batch was decoded (NVDEC, or the CPU for a video NVDEC could
            // not take); CPU output keeps its fields.
            decoded_on: batch.is_on_gpu().then(|| {
                match batch.decoded_on() {
                    DecodedOn::Cuda => "cuda",
                    _ => "cpu",
                }
                .to_owned()
            }),
            latency_ms: None,
        }
    }
}

impl BatchLine {
    /// This line with each sequence's `md5` (and its audio's): the MD5 of each real frame's bytes as [`Frame::data`] gives them
    /// (for [`Layout::Cfhw`], of its three planes one after the other), so `uint16` output hashes the
    /// little-endian RGB48 that `ffmpeg -pix_fmt rgb48le` writes. `batch` is the batch the line was made of; one
    /// in GPU memory gets no sums (take [`Batch::to_host`] first).
    ///
    /// [`Frame::data`]: crate::Frame::data
    pub fn with_md5(mut self, batch: &Batch) -> Self {
        if batch.is_on_gpu() {
            return self;
        }
        for (line, seq) in self.sequences.iter_mut().zip(batch.sequences()) {
            line.md5 = seq
                .frames()
                .map(|frame| {
                    let mut md5 = Md5::new();
                    if batch.layout() == Layout::Cfhw {
                        (0..3).for_each(|c| md5.update(frame.plane(c)));
                    } else {
                        md5.update(frame.data());
                    }
                    format!("{:x}", md5.finalize())
                })
                .collect();
            if let (Some(line), Some(audio)) = (&mut line.audio, seq.audio()) {
                let mut md5 = Md5::new();
                audio
                    .data()
                    .iter()
                    .for_each(|s| md5.update(s.to_le_bytes()));
                line.md5 = Some(format!("{:x}", md5.finalize()));
            }
        }
        self
    }
}

/// Damaged frames and holes counted over batches, for a summary line (`"damaged_frames"`, `"holes"`, written
/// only when there are any).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DamageCount {
    /// Damaged frames ([`Batch::damaged_frames`]).
    pub damaged_frames: u64,
    /// Holes ([`Batch::hole_count`]).
    pub holes: u64,
}

impl DamageCount {
    /// Counts `batch`'s damage.
    pub fn add(&mut self, batch: &Batch) {
        self.damaged_frames += batch.damaged_frames() as u64;
        self.holes += batch.hole_count() as u64;
    }

    /// Counts one sequence's damage (the sequences of a packed batch are of several videos).
    pub fn add_sequence(&mut self, sequence: &Sequence<'_>) {
        self.damaged_frames += sequence.damaged_frames() as u64;
        self.holes += sequence.holes().len() as u64;
    }

    /// Writes the counts into `summary` (an object), when there is damage.
    pub fn write_to(&self, summary: &mut Value) {
        if *self != Self::default() {
            summary["damaged_frames"] = json!(self.damaged_frames);
            summary["holes"] = json!(self.holes);
        }
    }
}

impl std::ops::AddAssign for DamageCount {
    fn add_assign(&mut self, other: Self) {
        self.damaged_frames += other.damaged_frames;
        self.holes += other.holes;
    }
}

/// One video's failure as a JSON object: `video`, `label`, `error` (the message).
pub fn video_error_json(video: &VideoRef, error: &VideoError) -> Value {
    json!({
        "video": video.id.0,
        "label": video.label.as_ref().map(|l| l.to_string()),
        "error": error.to_string(),
    })
}

/// Any error as a JSON object: a video's failure as in [`video_error_json`], anything else with a `null`
/// video.
pub fn error_json(error: &Error) -> Value {
    match error {
        Error::Video { video, error } => video_error_json(video, error),
        other => json!({"video": null, "label": null, "error": other.to_string()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, Crop, Resize, Transforms, VideoInput};

    /// The batches of the built-in sample fed twice, under `config`.
    fn batches(config: Config) -> Vec<Batch> {
        let input = VideoInput::new(config).unwrap();
        input.feed((crate::SAMPLE_MP4, "a")).unwrap();
        input.feed(crate::SAMPLE_MP4).unwrap();
        input.close();
        input.iter().map(|b| b.unwrap()).collect()
    }

    /// The type reads back what it writes, field for field and in order, with and without the optional
    /// fields (a resize and crop; a packed batch, whose sequences name their video, one without a label).
    #[test]
    fn a_line_reads_back_as_written() {
        let transforms = Transforms::new()
            .resize(Resize::Exact {
                width: 64,
                height: 48,
            })
            .crop(Crop::new(32, 32));
        let mut seen_packed_null_label = false;
        for config in [
            Config::new(30, 2),
            Config::new(7, 4).transforms(transforms).pack_batches(true),
        ] {
            for batch in batches(config) {
                let value = batch_json(&batch);
                let line: BatchLine = serde_json::from_value(value.clone()).unwrap();
                assert_eq!(serde_json::to_value(&line).unwrap(), value);
                assert_eq!(
                    serde_json::to_string(&line).unwrap(),
                    value.to_string(),
                    "the same text, keys in the same order"
                );
                seen_packed_null_label |= line.sequences.iter().any(|s| s.label == Some(None));
            }
        }
        assert!(
            seen_packed_null_label,
            "a packed sequence of the unlabelled video"
        );
    }
}
