//! `framefeed info FILE [--segments N]`: a container and its streams as JSON, and the video's keyframe
//! segments.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::{written, Failure};

pub(crate) fn info(
    file: &PathBuf,
    segments: Option<u64>,
    remote: &framefeed::RemoteOptions,
) -> Result<ExitCode, Failure> {
    // Read where the demuxer looks, never whole: a long video's file may be larger than memory; a remote one
    // (s3://, gs://, az://, https://, credentials from the environment or the remote flags) by byte ranges.
    let video = match file.to_str().filter(|f| framefeed::is_remote_url(f)) {
        Some(url) => match framefeed::Encoded::remote(url, remote) {
            Ok(video) => video,
            Err(e) => {
                eprintln!("framefeed: {e}");
                return Ok(ExitCode::from(1));
            }
        },
        None => framefeed::Encoded::file(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?
            .label(file.display().to_string()),
    };
    let info = match framefeed::probe(video.clone()) {
        Ok(info) => info,
        Err(e) => {
            eprintln!("framefeed: {}: {e}", file.display());
            return Ok(ExitCode::from(1));
        }
    };
    let streams: Vec<Value> = info
        .streams
        .iter()
        .map(|s| {
            json!({
                "index": s.index,
                "type": s.kind.as_str(),
                "codec": s.codec,
                "profile": s.profile,
                "width": s.width,
                "height": s.height,
                "pix_fmt": s.pixel_format,
                "color_space": s.color_space,
                "color_range": s.color_range,
                "color_primaries": s.color_primaries,
                "color_transfer": s.color_transfer,
                "bit_depth": s.bit_depth,
                // SDR, PQ or HLG, from the transfer (video streams only).
                "dynamic_range": (s.kind == framefeed::MediaKind::Video)
                    .then(|| s.dynamic_range().as_str()),
                "mastering_display": s.mastering_display.as_ref().map(mastering_json),
                "content_light": s.content_light.map(|c| json!({
                    "max_cll": c.max_cll,
                    "max_fall": c.max_fall,
                })),
                "frame_rate": s.frame_rate.map(|(n, d)| format!("{n}/{d}")),
                "fps": s.fps(),
                "sample_rate": s.sample_rate,
                "channels": s.channels,
                "time_base": format!("{}/{}", s.time_base.0, s.time_base.1),
                "duration": s.duration,
                "frames": s.frames,
                "bit_rate": s.bit_rate,
                "default": s.default,
                // Degrees counter-clockwise, as ffprobe prints them; the turn framefeed applies by default.
                "rotation": s.rotation(),
                "orientation": s.orientation().map(|o| o.as_str()),
            })
        })
        .collect();
    let mut out = json!({
        "file": file.display().to_string(),
        "container": info.format,
        "container_long": info.format_long,
        "duration": info.duration,
        "bit_rate": info.bit_rate,
        "streams": streams,
    });
    if let Some(every) = segments {
        match framefeed::segments(&video, &framefeed::Config::new(1, 1), every) {
            Ok(parts) => {
                out["segments"] = parts.iter().map(|p| json!([p.start, p.end])).collect();
            }
            Err(framefeed::Error::Config(reason)) => {
                return Err(format!("--segments: {reason}").into())
            }
            Err(e) => {
                eprintln!("framefeed: {}: {e}", file.display());
                return Ok(ExitCode::from(1));
            }
        }
    }
    let text = serde_json::to_string_pretty(&out).expect("JSON of plain values");
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{text}").map_err(written)?;
    stdout.flush().map_err(written)?;
    Ok(ExitCode::SUCCESS)
}

/// A mastering display as JSON: `primaries` (`[[x, y]` of red, green, blue`]`), `white_point` (`[x, y]`),
/// `min_luminance` and `max_luminance` (cd/m²), each `null` when the stream leaves it out.
fn mastering_json(m: &framefeed::MasteringDisplay) -> Value {
    json!({
        "primaries": m.primaries.map(|p| p.map(|(x, y)| [x, y])),
        "white_point": m.white_point.map(|(x, y)| [x, y]),
        "min_luminance": m.min_luminance,
        "max_luminance": m.max_luminance,
    })
}
