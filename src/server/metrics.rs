//! The service's metrics, on `prometheus-client`: counters and gauges the handlers update, and the scrape's
//! OpenMetrics text (`GET /metrics`). The series keep their names: a counter registered as
//! `framefeed_streams` is the series `framefeed_streams_total`.

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The label of a refusal.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Status {
    status: u16,
}

/// What the service counts. Each metric is shared with the registry (a clone is the same metric).
pub(crate) struct Metrics {
    pub(crate) streams_active: Gauge,
    pub(crate) streams_total: Counter,
    pub(crate) frames: Counter,
    pub(crate) batches: Counter,
    pub(crate) errors: Counter,
    pub(crate) bytes: Counter,
    pub(crate) connections_open: Gauge,
    pub(crate) connections_refused: Counter,
    pub(crate) uploads_shed: Counter,
    rejected: Family<Status, Counter>,
    /// Read from the service's state at each scrape.
    memory_reserved: Gauge,
    memory_limit: Gauge,
    streams_known: Gauge,
    consumers_waiting: Gauge,
    registry: Registry,
}

/// What a scrape reads from the service's state rather than from counters.
pub(crate) struct Snapshot {
    pub(crate) memory_reserved: u64,
    pub(crate) memory_limit: u64,
    pub(crate) streams_known: u64,
    pub(crate) consumers_waiting: u64,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let mut counter = |name: &str, help: &str| {
            let c = Counter::default();
            registry.register(name, help, c.clone());
            c
        };
        let streams_total = counter("framefeed_streams", "Uploads accepted.");
        let frames = counter("framefeed_frames", "Real frames delivered.");
        let batches = counter("framefeed_batches", "Batches delivered.");
        let errors = counter("framefeed_errors", "Uploads that ended with an error.");
        let bytes = counter("framefeed_bytes_received", "Request body bytes received.");
        let connections_refused = counter(
            "framefeed_connections_refused",
            "Connections closed at once because max_connections were open.",
        );
        let uploads_shed = counter(
            "framefeed_uploads_shed",
            "Uploads cut so that another could be served: the slowest, or the most memory per byte/s.",
        );
        let mut gauge = |name: &str, help: &str| {
            let g = Gauge::default();
            registry.register(name, help, g.clone());
            g
        };
        let streams_active = gauge("framefeed_streams_active", "Uploads being decoded now.");
        let connections_open = gauge("framefeed_connections_open", "Connections open now.");
        let memory_reserved = gauge(
            "framefeed_memory_reserved_bytes",
            "Memory reserved by uploads in progress.",
        );
        let memory_limit = gauge(
            "framefeed_memory_limit_bytes",
            "The server-wide memory pool (max_memory).",
        );
        let streams_known = gauge(
            "framefeed_streams_known",
            "Streams (pulled by URL or detached uploads) the service knows, running or ended.",
        );
        let consumers_waiting = gauge(
            "framefeed_stream_consumers_waiting",
            "Consumers waiting for a stream id to be taken (GET /streams/{id}/batches?wait=).",
        );
        let rejected = Family::<Status, Counter>::default();
        registry.register(
            "framefeed_requests_rejected",
            "Requests refused, by status.",
            rejected.clone(),
        );
        Self {
            streams_active,
            streams_total,
            frames,
            batches,
            errors,
            bytes,
            connections_open,
            connections_refused,
            uploads_shed,
            rejected,
            memory_reserved,
            memory_limit,
            streams_known,
            consumers_waiting,
            registry,
        }
    }
}

/// A value for a gauge (`i64`), saturating.
fn level(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl Metrics {
    /// Counts a refusal by status.
    pub(crate) fn count_rejection(&self, status: u16) {
        self.rejected.get_or_create(&Status { status }).inc();
    }

    /// Uploads being decoded now.
    pub(crate) fn streams_active(&self) -> u64 {
        u64::try_from(self.streams_active.get()).unwrap_or(0)
    }

    /// The scrape: every series in the OpenMetrics text format.
    pub(crate) fn encode(&self, now: Snapshot) -> String {
        self.memory_reserved.set(level(now.memory_reserved));
        self.memory_limit.set(level(now.memory_limit));
        self.streams_known.set(level(now.streams_known));
        self.consumers_waiting.set(level(now.consumers_waiting));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_keep_their_names() {
        let m = Metrics::default();
        m.streams_total.inc();
        m.frames.inc_by(7);
        m.streams_active.inc();
        m.count_rejection(503);
        m.count_rejection(503);
        let text = m.encode(Snapshot {
            memory_reserved: 5,
            memory_limit: 9,
            streams_known: 1,
            consumers_waiting: 0,
        });
        for line in [
            "framefeed_streams_total 1",
            "framefeed_frames_total 7",
            "framefeed_streams_active 1",
            "framefeed_memory_reserved_bytes 5",
            "framefeed_memory_limit_bytes 9",
            "framefeed_streams_known 1",
            "framefeed_bytes_received_total 0",
            "framefeed_requests_rejected_total{status=\"503\"} 2",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing from:\n{text}"
            );
        }
        assert!(text.contains("# HELP framefeed_streams Uploads accepted."));
    }
}
