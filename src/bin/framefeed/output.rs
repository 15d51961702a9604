//! The output writers of `framefeed run`: a batch as its JSON line (with MD5s of its frames when asked), and
//! the peak memory for the summary.

use serde_json::{json, Value};

use framefeed::Batch;

/// The process's peak resident memory in MiB (Linux's VmHWM), when the system tells.
pub(crate) fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

pub(crate) fn batch_json(batch: &Batch, md5: bool, pulled: bool) -> Value {
    let mut line = framefeed::report::BatchLine::of(batch);
    if md5 {
        line = line.with_md5(batch);
    }
    let mut line = serde_json::to_value(line).unwrap_or(Value::Null);
    if pulled {
        // Sources pulled by URL: how far behind the source this batch was handed over.
        line["latency_ms"] = json!(batch.latency().map(|d| d.as_secs_f64() * 1000.0));
    }
    line
}
