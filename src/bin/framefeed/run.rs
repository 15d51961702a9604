//! `framefeed run`: videos, URLs or the built-in sample fed to one operator, every batch reported.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};

use framefeed::report::DamageCount;
use framefeed::{Encoded, Error, VideoInput};

use super::args::{operator_config, Prepared, RunArgs, Source};
use super::output::{batch_json, peak_rss_mib};
use super::{written, Failure};

#[derive(Default)]
struct Totals {
    batches: u64,
    frames: u64,
    errors: Vec<Value>,
    /// The videos with damage, by id, in order: damaged frames, holes, and why reading ended early.
    damage: std::collections::BTreeMap<u64, Damage>,
}

/// One video's damage, as the summary reports it.
struct Damage {
    label: Option<String>,
    count: DamageCount,
    ended_early: Option<String>,
}

impl Totals {
    /// Counts the damage `batch` reports, per video.
    fn count_damage(&mut self, batch: &framefeed::Batch) {
        for seq in batch.sequences() {
            let mut count = DamageCount::default();
            count.add_sequence(&seq);
            if count == DamageCount::default() && seq.ended_early().is_none() {
                continue;
            }
            let video = seq.video();
            let entry = self.damage.entry(video.id.0).or_insert_with(|| Damage {
                label: video.label.as_ref().map(ToString::to_string),
                count: DamageCount::default(),
                ended_early: None,
            });
            entry.count += count;
            if let Some(why) = seq.ended_early() {
                entry.ended_early = Some(why.to_owned());
            }
        }
    }

    /// The damage of every video together.
    fn damage_total(&self) -> DamageCount {
        let mut total = DamageCount::default();
        for d in self.damage.values() {
            total += d.count;
        }
        total
    }

    /// The damaged videos as the summary's JSON.
    fn damage_json(&self) -> Vec<Value> {
        self.damage
            .iter()
            .map(|(video, d)| {
                json!({
                    "video": video,
                    "label": d.label,
                    "damaged_frames": d.count.damaged_frames,
                    "holes": d.count.holes,
                    "ended_early": d.ended_early,
                })
            })
            .collect()
    }
}

/// Runs one operator over the arguments' sources (the mux is `mux.rs`'s), with the settings `prepared` from them.
pub(crate) fn run(args: RunArgs, prepared: Prepared) -> Result<ExitCode, Failure> {
    let Prepared {
        url_options,
        stop_after,
        ..
    } = prepared;
    let config = operator_config(&args, args.batch_size)?;
    let input = Arc::new(VideoInput::new(config).map_err(|e| e.to_string())?);
    let mut raw_out = match &args.raw_out {
        Some(path) => {
            Some(BufWriter::new(File::create(path).map_err(|e| {
                format!("cannot create {}: {e}", path.display())
            })?))
        }
        None => None,
    };
    let sources: Vec<Source> = if args.files.is_empty() {
        vec![Source::Sample]
    } else {
        args.files.iter().map(|p| Source::new(p)).collect()
    };
    let video_count = sources.len() as u64;
    let pulled = sources.iter().any(|s| matches!(s, Source::Url(_)));

    // Files are opened one at a time, at most two ahead of decoding (one decoding, one in the feed queue, whose
    // limit makes `feed` wait), each read from disk as it is decoded: memory holds no encoded video whole.
    let feeder = {
        let input = input.clone();
        let url_options = url_options.clone();
        std::thread::spawn(move || {
            let mut unreadable = Vec::new();
            for source in sources {
                let label = source.label().unwrap_or_default();
                let fed = match &source {
                    Source::Sample => input.feed((framefeed::SAMPLE_MP4, label.clone())),
                    Source::Url(url) => match input.feed_url(url, url_options.clone()) {
                        Err(Error::Config(e)) => {
                            unreadable.push(json!({"video": null, "label": framefeed::redact_url(url), "error": e}));
                            continue;
                        }
                        other => other,
                    },
                    // Read from disk as it is decoded, never whole in memory.
                    Source::File(path) => match Encoded::file(path) {
                        Ok(video) => input.feed(video.label(label.clone())),
                        Err(e) => {
                            unreadable.push(json!({"video": null, "label": label, "error": format!("cannot read: {e}")}));
                            continue;
                        }
                    },
                };
                if fed.is_err() {
                    break;
                }
            }
            input.close();
            unreadable
        })
    };

    let progress = if args.json || !io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::with_draw_target(Some(video_count), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} videos {pos}/{len} [{bar:30}] {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let start = Instant::now();
    let mut totals = Totals::default();
    loop {
        if totals.frames >= args.frames.unwrap_or(u64::MAX) {
            break;
        }
        let polled = match stop_after {
            Some(limit) => match input.next_batch_timeout(limit.saturating_sub(start.elapsed())) {
                Err(Error::Timeout(_)) => break,
                other => other,
            },
            None => input.next_batch(),
        };
        match polled {
            Ok(Some(batch)) => {
                // GPU batches are copied to the host only where their bytes are printed or written.
                let batch = if batch.is_on_gpu() && (args.md5 || raw_out.is_some()) {
                    batch.to_host().map_err(|e| e.to_string())?
                } else {
                    batch
                };
                totals.batches += 1;
                totals.frames += batch.valid_frames() as u64;
                totals.count_damage(&batch);
                if input.is_depleted() {
                    progress.inc(1);
                }
                if args.json {
                    writeln!(out, "{}", batch_json(&batch, args.md5, pulled)).map_err(written)?;
                    // Each line leaves as its batch does (a reader of a live source sees it at once).
                    out.flush().map_err(written)?;
                }
                if let Some(raw) = raw_out.as_mut() {
                    raw.write_all(batch.data())
                        .map_err(|e| format!("cannot write raw output: {e}"))?;
                }
                let secs = start.elapsed().as_secs_f64();
                progress.set_message(format!(
                    "{} frames, {:.0} frames/s",
                    totals.frames,
                    totals.frames as f64 / secs
                ));
            }
            Ok(None) => break,
            Err(Error::Video { video, error }) => {
                progress.inc(1);
                if !progress.is_hidden() {
                    progress.println(format!("error: {video}: {error}"));
                }
                totals
                    .errors
                    .push(framefeed::report::video_error_json(&video, &error));
            }
            Err(e) => return Err(e.to_string().into()),
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    // Stopped early (--frames, --duration): a feeder waiting for room ends; the pull ends when the operator is
    // dropped, below.
    input.close();
    progress.finish_and_clear();
    totals.errors.extend(
        feeder
            .join()
            .map_err(|_| "the feeding thread panicked".to_owned())?,
    );
    if let Some(mut raw) = raw_out {
        raw.flush()
            .map_err(|e| format!("cannot write raw output: {e}"))?;
    }
    let fps = if seconds > 0.0 {
        totals.frames as f64 / seconds
    } else {
        0.0
    };
    if args.json {
        let summary = json!({"summary": {
            "videos": video_count,
            "failed_videos": totals.errors.len(),
            "batches": totals.batches,
            "frames": totals.frames,
            "seconds": seconds,
            "frames_per_second": fps,
            "peak_rss_mib": peak_rss_mib(),
            "errors": totals.errors,
            "damaged_videos": totals.damage_json(),
            "damaged_frames": totals.damage_total().damaged_frames,
            "holes": totals.damage_total().holes,
        }});
        writeln!(out, "{summary}").map_err(written)?;
    } else {
        writeln!(
            out,
            "videos: {video_count} ({} failed)\nbatches: {}\nframes: {}\nseconds: {seconds:.3}\nframes/s: {fps:.1}\npeak RSS: {}",
            totals.errors.len(),
            totals.batches,
            totals.frames,
            peak_rss_mib().map_or("unknown".to_owned(), |m| format!("{m:.1} MiB")),
        )
        .map_err(written)?;
        for (video, d) in &totals.damage {
            let mut what = vec![
                format!("{} damaged frames", d.count.damaged_frames),
                format!("{} holes", d.count.holes),
            ];
            what.extend(
                d.ended_early
                    .as_ref()
                    .map(|why| format!("ended early: {why}")),
            );
            writeln!(
                out,
                "damaged: {} ({video}): {}",
                d.label.as_deref().unwrap_or("?"),
                what.join(", ")
            )
            .map_err(written)?;
        }
        for e in &totals.errors {
            writeln!(
                out,
                "error: {} ({}): {}",
                e["label"].as_str().unwrap_or("?"),
                e["video"],
                e["error"].as_str().unwrap_or("?")
            )
            .map_err(written)?;
        }
    }
    out.flush().map_err(written)?;
    Ok(if totals.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
