//! `framefeed run --mux [--deadline MS] URL...`: the sources as cameras of one [`Mux`]: each batch holds up
//! to `-B` sequences of any of them, out when full or at the deadline. With `--json`, a line per batch whose
//! sequences name their `"video"` (the source's position on the command line), then a summary whose
//! `"cameras"` say what each gave and dropped; a camera that fails is reported in the summary's errors.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

use serde_json::{json, Value};

use framefeed::{Config, Encoded, Error, Mux, MuxConfig, MuxEvent, VideoInput};

use super::args::{operator_config, Prepared, RunArgs, Source};
use super::output::{batch_json, peak_rss_mib};
use super::{written, Failure};

/// Runs the mux over the arguments' sources, each decoded by an operator of their config with one sequence a
/// batch, with the settings `prepared` from them.
pub(crate) fn run(args: &RunArgs, prepared: Prepared) -> Result<ExitCode, Failure> {
    let Prepared {
        url_options,
        stop_after,
        deadline,
    } = prepared;
    let config = operator_config(args, 1)?;
    if args.files.is_empty() {
        return Err("--mux batches across sources: give the URLs (or files) of the cameras".into());
    }
    let mux = Mux::new(MuxConfig::new(args.batch_size, deadline).policy(args.mux_policy))
        .map_err(|e| e.to_string())?;
    let mut errors: Vec<Value> = Vec::new();
    let mut labels = Vec::new();
    let mut pulled = false;
    for (position, path) in args.files.iter().enumerate() {
        let source = Source::new(path);
        let added = match &source {
            Source::Url(url) => {
                pulled = true;
                mux.add_url(url, url_options.clone(), config.clone())
                    .map_err(|e| e.to_string())
            }
            Source::File(file) => add_file(&mux, file, source.label(), config.clone()),
            Source::Sample => unreachable!("a path is never the sample"),
        };
        let label = source
            .label()
            .unwrap_or_else(|| framefeed::redact_url(&path.to_string_lossy()));
        match added {
            // Cameras are numbered in the order they are added: the camera id is the position but for
            // those that could not be added, which are reported by position here.
            Ok(camera) => labels.push((camera, position, label)),
            Err(e) => errors.push(json!({"video": position, "label": label, "error": e})),
        }
    }
    mux.close();
    let position = |camera: framefeed::CameraId| {
        labels
            .iter()
            .find(|(c, _, _)| *c == camera)
            .map_or(0, |(_, p, _)| *p)
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let start = Instant::now();
    let (mut batches, mut frames) = (0u64, 0u64);
    loop {
        if frames >= args.frames.unwrap_or(u64::MAX) {
            break;
        }
        let polled = match stop_after {
            Some(limit) => match mux.next_event_timeout(limit.saturating_sub(start.elapsed())) {
                Err(Error::Timeout(_)) => break,
                other => other,
            },
            None => mux.next_event(),
        };
        match polled.map_err(|e| e.to_string())? {
            Some(MuxEvent::Batch(batch)) => {
                let now = Instant::now();
                let mut sequences = Vec::with_capacity(batch.len());
                for entry in batch.entries() {
                    let host;
                    let camera_batch = if entry.batch().is_on_gpu() && args.md5 {
                        host = entry.batch().to_host().map_err(|e| e.to_string())?;
                        &host
                    } else {
                        entry.batch()
                    };
                    frames += camera_batch.valid_frames() as u64;
                    if args.json {
                        let line = batch_json(camera_batch, args.md5, pulled);
                        let mut seq = line["sequences"][0].clone();
                        seq["video"] = json!(position(entry.camera()));
                        seq["label"] = line["label"].clone();
                        if pulled {
                            seq["latency_ms"] = line["latency_ms"].clone();
                        }
                        // How long it waited in the mux for its batch.
                        seq["wait_ms"] = json!(
                            now.saturating_duration_since(entry.ready_at())
                                .as_secs_f64()
                                * 1000.0
                        );
                        sequences.push(seq);
                    }
                }
                if args.json {
                    writeln!(out, "{}", json!({"batch": batches, "sequences": sequences}))
                        .map_err(written)?;
                    out.flush().map_err(written)?;
                }
                batches += 1;
            }
            Some(MuxEvent::Ended {
                camera,
                label,
                error: Some(error),
            }) => errors.push(json!({
                "video": position(camera),
                "label": label.to_string(),
                "error": error.to_string(),
            })),
            Some(MuxEvent::Ended { error: None, .. }) => {}
            None => break,
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let cameras: Vec<Value> = mux
        .stats()
        .iter()
        .map(|s| {
            json!({"video": position(s.camera), "label": s.label.to_string(),
                   "sequences": s.sequences, "dropped": s.dropped})
        })
        .collect();
    // Stopped early (--frames, --duration): dropping the mux stops every camera.
    drop(mux);
    let fps = if seconds > 0.0 {
        frames as f64 / seconds
    } else {
        0.0
    };
    if args.json {
        let summary = json!({"summary": {
            "videos": args.files.len(),
            "failed_videos": errors.len(),
            "batches": batches,
            "frames": frames,
            "seconds": seconds,
            "frames_per_second": fps,
            "peak_rss_mib": peak_rss_mib(),
            "cameras": cameras,
            "errors": errors,
        }});
        writeln!(out, "{summary}").map_err(written)?;
    } else {
        writeln!(
            out,
            "cameras: {} ({} failed)\nbatches: {batches}\nframes: {frames}\nseconds: {seconds:.3}\nframes/s: {fps:.1}",
            args.files.len(),
            errors.len(),
        )
        .map_err(written)?;
        for c in &cameras {
            writeln!(
                out,
                "camera {} ({}): {} sequences, {} dropped",
                c["video"], c["label"], c["sequences"], c["dropped"]
            )
            .map_err(written)?;
        }
        for e in &errors {
            writeln!(
                out,
                "error: {} ({}): {}",
                e["label"], e["video"], e["error"]
            )
            .map_err(written)?;
        }
    }
    out.flush().map_err(written)?;
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A file as a camera: decoded as fast as it reads, read from disk as it is decoded.
fn add_file(
    mux: &Mux,
    file: &std::path::Path,
    label: Option<String>,
    config: Config,
) -> Result<framefeed::CameraId, String> {
    let label = label.unwrap_or_default();
    let video = Encoded::file(file).map_err(|e| format!("cannot read: {e}"))?;
    let input = VideoInput::new(config).map_err(|e| e.to_string())?;
    input
        .feed(video.label(label.clone()))
        .map_err(|e| e.to_string())?;
    input.close();
    mux.add_input(label, input).map_err(|e| e.to_string())
}
