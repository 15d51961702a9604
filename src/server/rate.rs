//! The upload-rate rule: an upload must average at least `min_rate` bytes a second over a sliding window of the
//! time the server spends **waiting for the client**. Time the upload is held up by the server itself (the
//! decoder applying backpressure) does not count, so a slow decoder never fails a client. The defaults (500
//! B/s over 60 s, `config.rs`) keep every camera sending in real time at 16 kbit/s or more, through pauses
//! under the stall timeout, while a client dripping bytes to hold a slot fails after the window.

use std::collections::VecDeque;
use std::time::Duration;

/// Why an upload was failed by the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TooSlow {
    /// Bytes received in the window.
    pub(crate) bytes: u64,
    /// The window.
    pub(crate) window: Duration,
    /// The rule's rate, bytes a second.
    pub(crate) min_rate: u64,
}

/// The rule's state for one upload.
#[derive(Debug)]
pub(crate) struct RateRule {
    min_rate: u64,
    grace: Duration,
    window: Duration,
    /// (time spent waiting so far, bytes received so far), oldest first, covering at least the last window.
    points: VecDeque<(Duration, u64)>,
}

impl RateRule {
    /// `min_rate` bytes a second (0: no rule), averaged over `window` of waiting time, checked once `grace` of
    /// waiting time has passed.
    pub(crate) fn new(min_rate: u64, grace: Duration, window: Duration) -> Self {
        let mut points = VecDeque::new();
        points.push_back((Duration::ZERO, 0));
        Self {
            min_rate,
            grace,
            window: window.max(Duration::from_millis(1)),
            points,
        }
    }

    /// Records that after `waited` of waiting for the client, `received` bytes in all have come, and says
    /// whether the upload is too slow.
    pub(crate) fn observe(&mut self, waited: Duration, received: u64) -> Result<(), TooSlow> {
        self.points.push_back((waited, received));
        // Keep the newest point at or before the window's start, and everything after it.
        while self.points.len() > 2 && self.points[1].0 + self.window <= waited {
            self.points.pop_front();
        }
        if self.min_rate == 0 || waited < self.grace.max(self.window) {
            return Ok(());
        }
        let (start_wait, start_bytes) = self.points[0];
        if start_wait + self.window > waited {
            return Ok(());
        }
        let bytes = received - start_bytes;
        let span = waited - start_wait;
        // bytes / span < min_rate, in integers (nanoseconds).
        if u128::from(bytes) * 1_000_000_000 < u128::from(self.min_rate) * span.as_nanos() {
            return Err(TooSlow {
                bytes,
                window: span,
                min_rate: self.min_rate,
            });
        }
        Ok(())
    }

    /// Bytes a second over the window so far (over what waiting time there was, at least a second of it).
    pub(crate) fn rate(&self) -> u64 {
        let (first_wait, first_bytes) = self.points[0];
        let (last_wait, last_bytes) = *self.points.back().expect("never empty");
        let span = last_wait
            .saturating_sub(first_wait)
            .max(Duration::from_secs(1));
        let bytes = u128::from(last_bytes.saturating_sub(first_bytes));
        u64::try_from(bytes * 1_000_000_000 / span.as_nanos()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_drip_fails_after_the_grace_and_a_fast_upload_never_does() {
        let mut drip = RateRule::new(16 << 10, 10 * S, 10 * S);
        let mut failed_at = None;
        for t in 1..=30u32 {
            if drip.observe(t * S, t.into()).is_err() {
                failed_at = Some(t);
                break;
            }
        }
        assert_eq!(failed_at, Some(10));
        let mut fast = RateRule::new(16 << 10, 10 * S, 10 * S);
        for t in 1..=300u32 {
            fast.observe(t * S, u64::from(t) * 200_000).unwrap();
        }
    }

    #[test]
    fn a_burst_then_silence_fails_once_the_window_is_silent() {
        let mut rule = RateRule::new(1000, 2 * S, 5 * S);
        rule.observe(S, 1_000_000).unwrap();
        for t in 2..=5u32 {
            rule.observe(t * S, 1_000_000).unwrap();
        }
        assert!(rule.observe(7 * S, 1_000_000).is_err());
    }

    #[test]
    fn the_rate_is_over_the_window_so_a_burst_leaves_it() {
        let mut rule = RateRule::new(0, 10 * S, 10 * S);
        rule.observe(S, 1_000_000).unwrap();
        assert_eq!(rule.rate(), 1_000_000);
        // Then 600 B/s: once the burst is out of the window, the rate is the drip's.
        for t in 2..=30u32 {
            rule.observe(t * S, 1_000_000 + u64::from(t - 1) * 600)
                .unwrap();
        }
        assert!((600..=700).contains(&rule.rate()), "{}", rule.rate());
    }

    #[test]
    fn no_rule_at_zero() {
        let mut rule = RateRule::new(0, S, S);
        rule.observe(100 * S, 0).unwrap();
    }

    proptest! {
        /// A client that always sends at least the rate, in chunks of any size at any moments, is never failed.
        #[test]
        fn a_client_at_or_above_the_rate_is_never_failed(
            rate in 1u64..100_000, extra in 0u64..1000,
            gaps in proptest::collection::vec(1u64..3_000, 1..200),
        ) {
            let mut rule = RateRule::new(rate, 10 * S, 10 * S);
            let mut waited = Duration::ZERO;
            let mut received = 0u64;
            for gap in gaps {
                // A chunk holding what was sent during the gap arrives at its end.
                waited += Duration::from_millis(gap);
                received += ((rate + extra) * gap).div_ceil(1000);
                prop_assert!(rule.observe(waited, received).is_ok());
            }
        }

        /// A client sending less than half the rate is failed at most a window after the grace.
        #[test]
        fn a_client_below_half_the_rate_is_failed(rate in 1000u64..100_000, step in 100u64..2_000) {
            let mut rule = RateRule::new(rate, 10 * S, 10 * S);
            let step = Duration::from_millis(step);
            let mut waited = Duration::ZERO;
            let mut received = 0u64;
            let mut failed = false;
            while waited < 21 * S {
                waited += step;
                received += rate / 2 * step.as_millis() as u64 / 1000;
                if rule.observe(waited, received).is_err() {
                    failed = true;
                    break;
                }
            }
            prop_assert!(failed);
        }
    }
}
