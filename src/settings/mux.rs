//! The cross-camera batcher's settings ([`MuxConfig`], [`MuxPolicy`]): the batch size, the deadline and what
//! waits for a slow consumer, each with its range, checked once by [`MuxConfig::validate`] (the library's
//! `Mux::new`, the CLI's `framefeed mux` and the service's `GET /mux` all take this type).

use std::time::Duration;

use crate::error::{Error, Result};

/// How a camera's ready sequences wait for a slow consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MuxPolicy {
    /// No sequence is lost: each camera queues a few, then its decoding waits (backpressure).
    #[default]
    EveryFrame,
    /// A consumer that falls behind gets each camera's newest sequence; the older ones are dropped and
    /// counted per camera.
    LatestOnly,
}

crate::settings::choice::choices!(MuxPolicy, "policy", [
    MuxPolicy::EveryFrame => "every_frame" | "every-frame",
    MuxPolicy::LatestOnly => "latest_only" | "latest-only" | "latest",
]);

/// The longest deadline.
const MAX_DEADLINE: Duration = Duration::from_secs(3600);

/// A [`Mux`](crate::Mux)'s settings, checked by [`Mux::new`](crate::Mux::new).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MuxConfig {
    pub(crate) max_batch_size: usize,
    pub(crate) deadline: Duration,
    pub(crate) policy: MuxPolicy,
}

impl Default for MuxConfig {
    /// [`MuxConfig::DEFAULT_BATCH_SIZE`] sequences, [`MuxConfig::DEFAULT_DEADLINE`], every frame kept.
    fn default() -> Self {
        Self::new(Self::DEFAULT_BATCH_SIZE, Self::DEFAULT_DEADLINE)
    }
}

impl MuxConfig {
    /// The batch size the CLI and the service use when none is given.
    pub const DEFAULT_BATCH_SIZE: usize = 16;
    /// The deadline the CLI and the service use when none is given: a frame's time at 30 fps.
    pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(33);
    /// The largest batch size.
    pub const MAX_BATCH_SIZE: usize = 65_536;

    /// Batches of up to `max_batch_size` sequences (1 to 65536), each out at most `deadline` (1 µs to 1 h)
    /// after its oldest sequence was ready; every frame kept.
    pub fn new(max_batch_size: usize, deadline: Duration) -> Self {
        Self {
            max_batch_size,
            deadline,
            policy: MuxPolicy::EveryFrame,
        }
    }

    /// What happens to sequences a slow consumer has not taken yet (default [`MuxPolicy::EveryFrame`]).
    pub fn policy(mut self, policy: MuxPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Checks every value, naming the allowed range of a wrong one.
    pub fn validate(&self) -> Result<()> {
        if !(1..=Self::MAX_BATCH_SIZE).contains(&self.max_batch_size) {
            return Err(Error::Config(format!(
                "mux max_batch_size is {}; allowed: 1 to {}",
                self.max_batch_size,
                Self::MAX_BATCH_SIZE
            )));
        }
        if self.deadline.is_zero() || self.deadline > MAX_DEADLINE {
            return Err(Error::Config(format!(
                "mux deadline is {:?}; allowed: more than 0, at most 1 hour",
                self.deadline
            )));
        }
        Ok(())
    }
}
