//! The cross-camera batching rule, as pure state (no threads, no clock of its own): each camera's ready
//! sequences queue here, and [`Gather::pick`] says, at a given instant, whether a batch goes out now and which
//! entries it takes, or until when to wait.
//!
//! - **Deadline**: a batch goes out when it holds `max_batch_size` entries, or once `deadline` has passed
//!   since its oldest entry was ready, whichever comes first; a slow, stalled or dead camera never holds it
//!   longer.
//! - **One shape a batch**: a batch takes only entries of its oldest entry's sequence shape (frames, height,
//!   width, channels, element type and layout), so frames of different sizes never share a batch tensor;
//!   the others wait for a batch of their own (oldest first, a camera's entries in their order). A resize
//!   transform on every camera makes all shapes one.
//! - **Fairness, oldest first**: entries are taken in the order they became ready, across cameras, so under
//!   load no camera starves: a camera's oldest entry is taken before any newer one of another camera.
//! - **Policies**: every frame (a camera's queue is bounded; its feeder waits for room, so backpressure
//!   reaches the source) or latest only (a camera keeps its newest entry; what it replaces is counted as
//!   dropped).

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use crate::settings::mux::{MuxConfig, MuxPolicy};

/// What makes two entries able to share a batch tensor.
pub(crate) type ShapeKey = ([usize; 4], String);

/// One ready sequence: what it is (`T`), its shape key and when it became ready.
#[derive(Debug)]
pub(crate) struct Ready<T> {
    pub(crate) item: T,
    pub(crate) key: ShapeKey,
    pub(crate) at: Instant,
}

/// A camera's queue and counts.
#[derive(Debug)]
struct Queue<T> {
    ready: VecDeque<Ready<T>>,
    dropped: u64,
}

/// What [`Gather::pick`] says.
#[derive(Debug, PartialEq)]
pub(crate) enum Pick {
    /// A batch goes out now, with these entries (camera, oldest first).
    Now,
    /// Nothing goes out before this instant (unless entries come).
    Until(Instant),
    /// Nothing is queued.
    Empty,
}

/// The queues of every camera.
#[derive(Debug)]
pub(crate) struct Gather<T> {
    max_batch_size: usize,
    deadline: Duration,
    policy: MuxPolicy,
    /// The most an every-frame camera queues before its feeder waits.
    depth: usize,
    queues: BTreeMap<u64, Queue<T>>,
}

impl<T> Gather<T> {
    pub(crate) fn new(config: &MuxConfig) -> Self {
        Self {
            max_batch_size: config.max_batch_size,
            deadline: config.deadline,
            policy: config.policy,
            // Enough for a camera to fill a batch by itself, and one more being decoded.
            depth: config.max_batch_size.max(2),
            queues: BTreeMap::new(),
        }
    }

    /// The most entries a camera may have queued at once (every frame; latest only keeps one).
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// Adds a camera.
    pub(crate) fn add(&mut self, camera: u64) {
        self.queues.insert(
            camera,
            Queue {
                ready: VecDeque::new(),
                dropped: 0,
            },
        );
    }

    /// Forgets a camera and what it queued.
    pub(crate) fn remove(&mut self, camera: u64) {
        self.queues.remove(&camera);
    }

    /// Whether `camera` may queue one more entry now (every frame: while under its depth; latest only:
    /// always).
    pub(crate) fn has_room(&self, camera: u64) -> bool {
        match (self.policy, self.queues.get(&camera)) {
            (MuxPolicy::LatestOnly, _) | (_, None) => true,
            (MuxPolicy::EveryFrame, Some(q)) => q.ready.len() < self.depth,
        }
    }

    /// Queues `entry` for `camera`; latest only replaces what the camera had queued (counted as dropped).
    /// Every frame never drops: the caller waits for [`has_room`](Self::has_room) first.
    pub(crate) fn push(&mut self, camera: u64, entry: Ready<T>) {
        let policy = self.policy;
        if let Some(q) = self.queues.get_mut(&camera) {
            if policy == MuxPolicy::LatestOnly {
                q.dropped += q.ready.len() as u64;
                q.ready.clear();
            }
            q.ready.push_back(entry);
        }
    }

    /// Sequences `camera` dropped so far (latest only).
    pub(crate) fn dropped(&self, camera: u64) -> u64 {
        self.queues.get(&camera).map_or(0, |q| q.dropped)
    }

    /// Entries `camera` has queued.
    pub(crate) fn queued_for(&self, camera: u64) -> usize {
        self.queues.get(&camera).map_or(0, |q| q.ready.len())
    }

    /// Entries queued in all.
    pub(crate) fn queued(&self) -> usize {
        self.queues.values().map(|q| q.ready.len()).sum()
    }

    /// The oldest queued entry: its camera, shape and time.
    fn oldest(&self) -> Option<(&ShapeKey, Instant)> {
        self.queues
            .values()
            .filter_map(|q| q.ready.front())
            .min_by_key(|r| r.at)
            .map(|r| (&r.key, r.at))
    }

    /// Whether a batch goes out at `now`, or until when to wait.
    pub(crate) fn pick(&self, now: Instant) -> Pick {
        let Some((key, at)) = self.oldest() else {
            return Pick::Empty;
        };
        let due = at + self.deadline;
        let same: usize = self
            .queues
            .values()
            .map(|q| q.ready.iter().take_while(|r| &r.key == key).count())
            .sum();
        if same >= self.max_batch_size || now >= due {
            Pick::Now
        } else {
            Pick::Until(due)
        }
    }

    /// Takes the batch: up to `max_batch_size` entries of the oldest entry's shape, oldest first, with their
    /// cameras.
    pub(crate) fn take(&mut self) -> Vec<(u64, Ready<T>)> {
        let Some(key) = self.oldest().map(|(k, _)| k.clone()) else {
            return Vec::new();
        };
        // The candidates: each camera's leading entries of this shape (a camera's entries leave in their
        // order), oldest first.
        let mut times: Vec<(Instant, u64)> = self
            .queues
            .iter()
            .flat_map(|(&c, q)| {
                q.ready
                    .iter()
                    .take_while(|r| r.key == key)
                    .map(move |r| (r.at, c))
            })
            .collect();
        times.sort();
        times.truncate(self.max_batch_size);
        let mut taken = Vec::with_capacity(times.len());
        for (_, camera) in times {
            if let Some(entry) = self
                .queues
                .get_mut(&camera)
                .and_then(|q| q.ready.pop_front())
            {
                taken.push((camera, entry));
            }
        }
        taken.sort_by_key(|(_, r)| r.at);
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: Duration = Duration::from_millis(1);

    fn key(w: usize) -> ShapeKey {
        ([1, 8, w, 3], "u8".into())
    }

    fn entry(item: u32, w: usize, at: Instant) -> Ready<u32> {
        Ready {
            item,
            key: key(w),
            at,
        }
    }

    #[test]
    fn a_full_batch_goes_at_once_and_a_short_one_at_the_deadline() {
        let t0 = Instant::now();
        let mut g = Gather::new(&MuxConfig::new(3, 33 * MS).policy(MuxPolicy::EveryFrame));
        for c in 0..3 {
            g.add(c);
        }
        assert_eq!(g.pick(t0), Pick::Empty);
        g.push(0, entry(0, 8, t0));
        g.push(1, entry(1, 8, t0 + MS));
        assert_eq!(g.pick(t0 + 2 * MS), Pick::Until(t0 + 33 * MS));
        assert_eq!(
            g.pick(t0 + 33 * MS),
            Pick::Now,
            "the deadline, counted from the oldest"
        );
        g.push(2, entry(2, 8, t0 + 2 * MS));
        assert_eq!(g.pick(t0 + 3 * MS), Pick::Now, "full");
        let batch: Vec<u32> = g.take().into_iter().map(|(_, r)| r.item).collect();
        assert_eq!(batch, [0, 1, 2]);
        assert_eq!(g.queued(), 0);
    }

    #[test]
    fn shapes_never_share_a_batch() {
        let t0 = Instant::now();
        let mut g = Gather::new(&MuxConfig::new(4, 10 * MS).policy(MuxPolicy::EveryFrame));
        g.add(0);
        g.add(1);
        g.push(0, entry(0, 8, t0));
        g.push(1, entry(1, 16, t0 + MS));
        g.push(0, entry(2, 8, t0 + 2 * MS));
        let first: Vec<u32> = g.take().into_iter().map(|(_, r)| r.item).collect();
        assert_eq!(first, [0, 2]);
        let second: Vec<u32> = g.take().into_iter().map(|(_, r)| r.item).collect();
        assert_eq!(second, [1]);
    }

    #[test]
    fn latest_only_keeps_the_newest_and_counts_the_rest() {
        let t0 = Instant::now();
        let mut g = Gather::new(&MuxConfig::new(2, 10 * MS).policy(MuxPolicy::LatestOnly));
        g.add(7);
        for i in 0..5 {
            assert!(g.has_room(7));
            g.push(7, entry(i, 8, t0 + i * MS));
        }
        assert_eq!(g.dropped(7), 4);
        let batch: Vec<u32> = g.take().into_iter().map(|(_, r)| r.item).collect();
        assert_eq!(batch, [4]);
    }

    #[test]
    fn every_frame_bounds_a_cameras_queue() {
        let t0 = Instant::now();
        let mut g = Gather::new(&MuxConfig::new(2, 10 * MS).policy(MuxPolicy::EveryFrame));
        g.add(0);
        g.push(0, entry(0, 8, t0));
        assert!(g.has_room(0));
        g.push(0, entry(1, 8, t0));
        assert!(!g.has_room(0), "the feeder waits: backpressure");
        assert_eq!(g.dropped(0), 0);
    }

    proptest! {
        /// Whatever the arrivals: every entry goes out exactly once, a batch never mixes shapes nor exceeds
        /// the size, a camera's entries leave in their order, and each batch starts with the oldest entry
        /// queued (so no camera starves).
        #[test]
        fn every_entry_leaves_once_oldest_first_in_one_shape(
            arrivals in proptest::collection::vec((0u64..4, 0u64..50, 0usize..2), 0..60),
            size in 1usize..6,
        ) {
            let t0 = Instant::now();
            let mut g = Gather::new(&MuxConfig::new(size, 5 * MS).policy(MuxPolicy::EveryFrame));
            for c in 0..4 { g.add(c); }
            let mut arrivals = arrivals;
            arrivals.sort_by_key(|a| a.1);
            let mut taken: Vec<(u64, u32)> = Vec::new();
            for (i, (camera, ms, shape)) in arrivals.iter().enumerate() {
                g.push(*camera, entry(i as u32, 8 << shape, t0 + *ms as u32 * MS));
            }
            while g.queued() > 0 {
                let oldest = g.oldest().map(|(_, at)| at).unwrap();
                let batch = g.take();
                prop_assert!(!batch.is_empty() && batch.len() <= size);
                prop_assert_eq!(batch[0].1.at, oldest);
                prop_assert!(batch.iter().all(|(_, r)| r.key == batch[0].1.key));
                taken.extend(batch.into_iter().map(|(c, r)| (c, r.item)));
            }
            let mut items: Vec<u32> = taken.iter().map(|t| t.1).collect();
            items.sort();
            prop_assert_eq!(items, (0..arrivals.len() as u32).collect::<Vec<_>>());
            for c in 0..4 {
                let mine: Vec<u32> = taken.iter().filter(|t| t.0 == c).map(|t| t.1).collect();
                prop_assert!(mine.windows(2).all(|w| w[0] < w[1]), "camera {} out of order: {:?}", c, mine);
            }
        }
    }
}
