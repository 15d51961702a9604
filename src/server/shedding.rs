//! Fairness under pressure: when a new upload finds every upload slot taken, or an upload's frames find the
//! memory pool spent, the service sheds the uploads that hold the most for what they deliver — the most slots
//! per byte/s (the slowest), or the most reserved memory per byte/s — rather than refuse the newcomer, as
//! Envoy's overload manager sheds the worst first. A shed upload ends with the code `shed`.
//!
//! What an upload delivers is its rate over the rate rule's window of waiting for the client (`rate.rs`), so a
//! burst at the start does not buy a drip its place, and time the server itself holds the upload up does not
//! count against it. An upload younger than [`MIN_AGE`] is never shed (its rate is not known yet), and an
//! upload is only ever shed for another one: while the server has room, nothing is shed, however slow.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use super::budget::SlotMemory;

/// The youngest an upload may be to be shed: its rate is measured over at least this long.
pub(crate) const MIN_AGE: Duration = Duration::from_secs(5);
/// How long a newcomer waits for what the shed uploads free before it is refused after all.
pub(crate) const SHED_WAIT: Duration = Duration::from_secs(5);

/// What is short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pressure {
    /// Upload slots: the upload holding a slot for the fewest bytes a second goes first.
    Slots,
    /// The memory pool: the upload holding the most reserved bytes per byte a second goes first, then the
    /// next, until what they hold covers the shortfall.
    Memory,
}

/// An upload as the shedding sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) id: u64,
    /// Bytes a second it delivers (over the rate window).
    pub(crate) rate: u64,
    /// Bytes of memory it holds.
    pub(crate) reserved: u64,
    pub(crate) age: Duration,
}

impl Candidate {
    /// What it holds per byte a second it delivers (a rate under 1 B/s counts as 1).
    fn cost(&self, pressure: Pressure) -> u128 {
        let held = match pressure {
            // One slot each: the cost is the time a byte takes, scaled so that rates compare exactly.
            Pressure::Slots => 1 << 40,
            Pressure::Memory => u128::from(self.reserved),
        };
        (held << 20) / u128::from(self.rate.max(1))
    }
}

/// The uploads to shed, worst first, so that `needed` is freed (one slot for [`Pressure::Slots`]; bytes for
/// [`Pressure::Memory`]): none when even all of the eligible ones would not cover it (nothing is shed in vain).
/// Eligible: at least [`MIN_AGE`] old and not `exclude` (the upload that needs the memory).
pub(crate) fn victims(
    candidates: &[Candidate],
    pressure: Pressure,
    needed: u64,
    exclude: Option<u64>,
) -> Vec<u64> {
    let mut eligible: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.age >= MIN_AGE && Some(c.id) != exclude)
        .collect();
    // Worst first; among equals, the youngest (the one that came last).
    eligible.sort_by(|a, b| {
        b.cost(pressure)
            .cmp(&a.cost(pressure))
            .then(a.age.cmp(&b.age))
    });
    let mut chosen = Vec::new();
    let mut freed = 0u64;
    for c in eligible {
        if freed >= needed.max(1) {
            break;
        }
        chosen.push(c.id);
        freed = freed.saturating_add(match pressure {
            Pressure::Slots => 1,
            Pressure::Memory => c.reserved,
        });
    }
    if freed >= needed.max(1) {
        chosen
    } else {
        Vec::new()
    }
}

const NOT_SHED: u8 = 0;
const SHED_FOR_SLOTS: u8 = 1;
const SHED_FOR_MEMORY: u8 = 2;
/// Its body has all come: nothing reads a mark any more, so it is no candidate (it delivers nothing more, and
/// its decoding ends on its own).
const RECEIVED: u8 = 3;

/// One upload in progress, as its body's reader reports it and the shedding reads it.
#[derive(Debug)]
pub(crate) struct Tracked {
    pub(crate) id: u64,
    started: Instant,
    /// Bytes a second over the rate window, as the body's reader last measured it.
    rate: AtomicU64,
    /// [`NOT_SHED`]; what it was shed for (its body's reader cuts it); or [`RECEIVED`].
    state: AtomicU8,
    memory: SlotMemory,
}

impl Tracked {
    pub(crate) fn new(id: u64, memory: SlotMemory) -> Self {
        Self {
            id,
            started: Instant::now(),
            rate: AtomicU64::new(0),
            state: AtomicU8::new(NOT_SHED),
            memory,
        }
    }

    /// Records the rate its reader measured.
    pub(crate) fn set_rate(&self, bytes_per_second: u64) {
        self.rate.store(bytes_per_second, Ordering::Relaxed);
    }

    /// What it was shed for, once it was (it must end).
    pub(crate) fn shed_for(&self) -> Option<Pressure> {
        match self.state.load(Ordering::Acquire) {
            SHED_FOR_SLOTS => Some(Pressure::Slots),
            SHED_FOR_MEMORY => Some(Pressure::Memory),
            _ => None,
        }
    }

    /// Marks it shed for `pressure`, unless its body has all come (or it was shed already); whether it was.
    pub(crate) fn shed(&self, pressure: Pressure) -> bool {
        let value = match pressure {
            Pressure::Slots => SHED_FOR_SLOTS,
            Pressure::Memory => SHED_FOR_MEMORY,
        };
        self.state
            .compare_exchange(NOT_SHED, value, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Its body has all come: from now on it is never shed.
    pub(crate) fn received(&self) {
        let _ =
            self.state
                .compare_exchange(NOT_SHED, RECEIVED, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The memory it still holds when it was shed for memory (what its ending is about to free), else 0.
    pub(crate) fn freeing(&self) -> u64 {
        if self.state.load(Ordering::Acquire) == SHED_FOR_MEMORY {
            self.memory.lock().bytes()
        } else {
            0
        }
    }

    /// As a candidate; `None` once shed (it is ending already) or once its body has all come.
    pub(crate) fn candidate(&self, now: Instant) -> Option<Candidate> {
        (self.state.load(Ordering::Acquire) == NOT_SHED).then(|| Candidate {
            id: self.id,
            rate: self.rate.load(Ordering::Relaxed),
            reserved: self.memory.lock().bytes(),
            age: now.saturating_duration_since(self.started),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const OLD: Duration = Duration::from_secs(60);

    fn upload(id: u64, rate: u64, reserved: u64) -> Candidate {
        Candidate {
            id,
            rate,
            reserved,
            age: OLD,
        }
    }

    #[test]
    fn the_slowest_upload_gives_up_its_slot() {
        // A 16 kbit/s camera (2 KB/s), a fast upload, and a drip at 600 B/s.
        let uploads = [
            upload(1, 2_000, 20 << 20),
            upload(2, 5_000_000, 400 << 20),
            upload(3, 600, 1 << 20),
        ];
        assert_eq!(victims(&uploads, Pressure::Slots, 1, None), [3]);
    }

    #[test]
    fn the_most_memory_per_byte_a_second_goes_first_until_the_shortfall_is_covered() {
        // Two drips holding 420 MiB at 1 KiB/s, an honest 1080p upload at 2 MB/s holding as much, and a camera.
        let uploads = [
            upload(1, 1024, 420 << 20),
            upload(2, 2_000_000, 420 << 20),
            upload(3, 2_000, 20 << 20),
            upload(4, 1500, 420 << 20),
        ];
        assert_eq!(victims(&uploads, Pressure::Memory, 300 << 20, None), [1]);
        assert_eq!(victims(&uploads, Pressure::Memory, 500 << 20, None), [1, 4]);
        // The one that needs the memory is never its own victim.
        assert_eq!(victims(&uploads, Pressure::Memory, 300 << 20, Some(1)), [4]);
    }

    #[test]
    fn an_upload_whose_body_has_all_come_is_no_candidate() {
        let memory = std::sync::Arc::new(parking_lot::Mutex::new(
            crate::server::budget::MemoryPool::new(1 << 20)
                .reserve(&crate::server::budget::MemoryPool::new(1 << 20), 4096)
                .unwrap(),
        ));
        let tracked = Tracked::new(7, memory);
        assert!(tracked.candidate(Instant::now()).is_some());
        tracked.received();
        assert!(tracked.candidate(Instant::now()).is_none());
        assert!(
            !tracked.shed(Pressure::Slots),
            "a mark nothing would read is not set"
        );
        assert_eq!(tracked.shed_for(), None);
    }

    #[test]
    fn young_uploads_are_not_shed_and_nothing_is_shed_in_vain() {
        let young = Candidate {
            age: MIN_AGE - Duration::from_millis(1),
            ..upload(1, 1, 1 << 30)
        };
        assert!(victims(&[young], Pressure::Slots, 1, None).is_empty());
        // 10 MiB of eligible memory cannot cover 20 MiB: none is shed.
        let uploads = [upload(1, 10, 5 << 20), upload(2, 10, 5 << 20)];
        assert!(victims(&uploads, Pressure::Memory, 20 << 20, None).is_empty());
    }

    proptest! {
        /// Whatever the uploads, each one shed costs at least as much as every eligible one kept, and what is
        /// shed covers the need (or nothing is).
        #[test]
        fn the_shed_are_the_worst_and_cover_the_need(
            uploads in proptest::collection::vec((0u64..10_000_000, 0u64..(1 << 32), 0u64..120), 0..40),
            needed in 0u64..(1 << 34),
            memory in any::<bool>(),
        ) {
            let pressure = if memory { Pressure::Memory } else { Pressure::Slots };
            let candidates: Vec<Candidate> = uploads
                .iter()
                .enumerate()
                .map(|(i, &(rate, reserved, age))| Candidate {
                    id: i as u64,
                    rate,
                    reserved,
                    age: Duration::from_secs(age),
                })
                .collect();
            let shed = victims(&candidates, pressure, needed, None);
            let is_shed = |c: &Candidate| shed.contains(&c.id);
            let freed: u64 = candidates
                .iter()
                .filter(|c| is_shed(c))
                .map(|c| if memory { c.reserved } else { 1 })
                .fold(0, u64::saturating_add);
            prop_assert!(shed.is_empty() || freed >= needed.max(1));
            for s in candidates.iter().filter(|c| is_shed(c)) {
                prop_assert!(s.age >= MIN_AGE);
                for kept in candidates.iter().filter(|c| !is_shed(c) && c.age >= MIN_AGE) {
                    prop_assert!(s.cost(pressure) >= kept.cost(pressure));
                }
            }
        }
    }
}
