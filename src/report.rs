//! Batches and errors as JSON objects: one shape for the CLI's `--json` lines and the ingest server's response
//! lines (feature `json`).

use serde_json::{json, Value};

use crate::assembly::batch::Batch;
use crate::error::{Error, VideoError};
use crate::video::VideoRef;
use crate::{DecodedOn, Orientation};

/// A batch as a JSON object: `video`, `label`, `batch` (index within the video), `last`, and `sequences`, each
/// with `shape` (in the configured layout, (F,H,W,C) by default), `valid_frames`, `first_frame`, `pts`
/// (seconds, per real frame), and, when configured, `resize` (`[w, h]`) and `crop` (`[x, y, w, h]` in the
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
    let packed = batch.is_packed();
    let sequences: Vec<Value> = batch
        .sequences()
        .iter()
        .map(|seq| {
            let mut s = json!({
                "shape": seq.shape(),
                "valid_frames": seq.valid_frames(),
                "first_frame": seq.first_frame(),
                "frames": seq.indices(),
                "pts": seq.pts(),
            });
            if let Some((w, h)) = seq.resized() {
                s["resize"] = json!([w, h]);
            }
            if let Some(c) = seq.crop_window() {
                s["crop"] = json!([c.x, c.y, c.width, c.height]);
            }
            if seq.orientation() != Orientation::Upright {
                s["orientation"] = json!(seq.orientation().as_str());
            }
            if packed {
                s["video"] = json!(seq.video().id.0);
                s["label"] = json!(seq.video().label.as_ref().map(|l| l.to_string()));
            }
            s
        })
        .collect();
    let mut value = json!({
        "video": batch.video_id().0,
        "label": batch.label().map(|l| l.to_string()),
        "batch": batch.index(),
        "last": batch.is_last(),
        "sequences": sequences,
    });
    if let Some(gap) = batch.gap() {
        // A source pulled by URL dropped and was reopened before this batch's frames.
        value["gap"] = json!({
            "frames_before": gap.frames_before,
            "seconds": gap.duration.as_secs_f64(),
            "attempts": gap.attempts,
            "reconnects": gap.reconnects,
        });
    }
    if batch.is_on_gpu() {
        // Only GPU operators say where each batch was decoded (NVDEC, or the CPU for a video NVDEC could not
        // take); CPU output keeps its fields.
        value["decoded_on"] = json!(match batch.decoded_on() {
            DecodedOn::Cuda => "cuda",
            _ => "cpu",
        });
    }
    value
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
