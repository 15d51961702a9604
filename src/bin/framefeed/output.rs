//! The output writers of `framefeed run`: a batch as its JSON line (with MD5s of its frames when asked), and
//! the peak memory for the summary.

use md5::{Digest, Md5};
use serde_json::{json, Value};

use framefeed::{Batch, Layout};

/// The process's peak resident memory in MiB (Linux's VmHWM), when the system tells.
pub(crate) fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

pub(crate) fn batch_json(batch: &Batch, md5: bool, pulled: bool) -> Value {
    let mut line = framefeed::report::batch_json(batch);
    if pulled {
        // Sources pulled by URL: how far behind the source this batch was handed over.
        line["latency_ms"] = json!(batch.latency().map(|d| d.as_secs_f64() * 1000.0));
    }
    if md5 {
        for (seq, value) in batch.sequences().iter().zip(
            line["sequences"]
                .as_array_mut()
                .expect("sequences array")
                .iter_mut(),
        ) {
            let sums: Vec<String> = seq
                .frames()
                .map(|f| {
                    let mut md5 = Md5::new();
                    if batch.layout() == Layout::Cfhw {
                        (0..3).for_each(|c| md5.update(f.plane(c)));
                    } else {
                        md5.update(f.data());
                    }
                    format!("{:x}", md5.finalize())
                })
                .collect();
            value["md5"] = json!(sums);
        }
    }
    line
}
