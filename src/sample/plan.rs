//! Which frames make which sequences: pure arithmetic over a video's display times.
//!
//! Sampling counts *virtual* frames: the video's frames in display order, kept by the time range, or, with a
//! target frame rate, one per tick `k / fps` (the frame displayed at that time, so one frame may be several
//! virtual frames, and some none). Sequences are lists of virtual indices ([`Plan`]); each virtual frame maps
//! back to the display index of its real frame, which the sequence reports.

use std::collections::{BTreeMap, VecDeque};

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::settings::sampling::{ClipPolicy, ClipSampler, Sampling};
use crate::video::ClipKey;

/// Times closer than this (seconds) are the same time: a tick `k / fps` computed in floating point and a frame
/// time from its timestamp may differ in their last bits (timestamps are at least 1/90000 s apart, far more).
const SAME_TIME: f64 = 1e-6;

/// A video's display times, known before decoding (the index scan of a whole video).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timeline {
    /// Seconds from the first frame of each frame, in display order (non-decreasing, the first 0).
    pub(crate) pts: Vec<f64>,
    /// When the last frame's display ends (its time plus its duration; its time when that is unknown).
    pub(crate) end: f64,
}

/// The virtual frames of a whole video: the display index of each.
pub(crate) fn virtual_frames(timeline: &Timeline, sampling: &Sampling) -> Vec<u64> {
    let start = sampling.start.unwrap_or(0.0);
    let end = sampling.end.unwrap_or(f64::INFINITY);
    let pts = &timeline.pts;
    match sampling.fps {
        None => pts
            .iter()
            .enumerate()
            .filter(|(_, &t)| t >= start && t < end)
            .map(|(d, _)| d as u64)
            .collect(),
        Some(fps) => {
            let Some(&last) = pts.last() else {
                return Vec::new();
            };
            // Ticks while a frame is shown: up to the last one's end, or at its own time when its duration
            // is unknown.
            let shown = |t: f64| {
                if timeline.end > last {
                    t + SAME_TIME < timeline.end
                } else {
                    t <= last + SAME_TIME
                }
            };
            let mut out = Vec::new();
            let mut k = (start * fps).ceil().max(0.0) as u64;
            loop {
                let t = k as f64 / fps;
                if t >= end || !shown(t) {
                    return out;
                }
                // The last frame displayed at or before t.
                let after = pts.partition_point(|&p| p <= t + SAME_TIME);
                out.push(after.max(1) as u64 - 1);
                k += 1;
            }
        }
    }
}

/// Ticks of a target frame rate, counted as frames arrive (a live video's timeline is learnt as it plays):
/// each frame becomes the virtual frames of the ticks from its time to the next frame's.
#[derive(Debug)]
pub(crate) struct Ticks {
    fps: f64,
    end: f64,
    next_tick: u64,
}

impl Ticks {
    pub(crate) fn new(fps: f64, sampling: &Sampling) -> Self {
        let start = sampling.start.unwrap_or(0.0);
        Self {
            fps,
            end: sampling.end.unwrap_or(f64::INFINITY),
            next_tick: (start * fps).ceil().max(0.0) as u64,
        }
    }

    /// How many ticks fall before `until` seconds and were not counted yet: the ticks of a frame shown until
    /// `until` (the next frame's time, or its own end). The last frame of a live video with no known duration
    /// passes just past its own time.
    pub(crate) fn covered(&mut self, until: f64) -> u64 {
        let mut n = 0;
        loop {
            let t = self.next_tick as f64 / self.fps;
            if t + SAME_TIME >= until || t >= self.end {
                return n;
            }
            n += 1;
            self.next_tick += 1;
        }
    }
}

/// Why a whole video's sampling cannot be planned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlanError(pub(crate) String);

/// Which of `indices` lie past the last of a video's `frames` frames, said as a sampling failure names them
/// (`None` when all are inside): the indices (the first eight, and how many more), and the frames there are.
pub(crate) fn indices_past_the_end(indices: &[u64], frames: u64) -> Option<String> {
    let mut past: Vec<u64> = indices.iter().copied().filter(|&i| i >= frames).collect();
    past.sort_unstable();
    past.dedup();
    let listed: Vec<String> = past.iter().take(8).map(u64::to_string).collect();
    let more = match past.len() {
        0 => return None,
        n if n > 8 => format!(" and {} more", n - 8),
        _ => String::new(),
    };
    let (noun, verb) = if past.len() == 1 {
        ("frame index", "is")
    } else {
        ("frame indices", "are")
    };
    let last = match frames {
        0 => "it has no frame".to_owned(),
        n => format!("{n} frames: 0 to {}", n - 1),
    };
    Some(format!(
        "{noun} {}{more} {verb} past the video's last frame ({last})",
        listed.join(", ")
    ))
}

/// The sequences of one video, as lists of virtual indices, and how many times each virtual frame is still
/// to be written.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// Sequence `k` is `k * step + j * stride` for `j < length`; it exists when its first frame does. Lazy: a
    /// live video's length is unknown, and a long video's grid need not be held.
    Grid {
        length: usize,
        stride: u64,
        step: u64,
        next: u64,
    },
    /// Explicit sequences (clips, a list of indices), with each virtual frame's remaining uses.
    List {
        sequences: VecDeque<Vec<u64>>,
        uses: BTreeMap<u64, usize>,
    },
}

impl Plan {
    /// The grid of stride and step.
    pub(crate) fn grid(length: usize, sampling: &Sampling) -> Self {
        Plan::Grid {
            length,
            stride: sampling.stride_frames() as u64,
            step: sampling.step_frames(length) as u64,
            next: 0,
        }
    }

    /// Explicit sequences.
    pub(crate) fn list(sequences: Vec<Vec<u64>>) -> Self {
        let mut uses = BTreeMap::new();
        for &v in sequences.iter().flatten() {
            *uses.entry(v).or_insert(0) += 1;
        }
        Plan::List {
            sequences: sequences.into(),
            uses,
        }
    }

    /// The plan of a whole video of `virtual_count` virtual frames (`frames` real ones): clips or a list
    /// of indices, or the grid.
    pub(crate) fn whole(
        sampling: &Sampling,
        length: usize,
        virtual_count: u64,
        frames: u64,
        key: ClipKey,
    ) -> Result<Self, PlanError> {
        if let Some(indices) = &sampling.indices {
            if let Some(reason) = indices_past_the_end(indices, frames) {
                return Err(PlanError(reason));
            }
            return Ok(Self::list(
                indices.chunks(length).map(<[u64]>::to_vec).collect(),
            ));
        }
        let Some((count, sampler)) = sampling.clips else {
            return Ok(Self::grid(length, sampling));
        };
        let stride = sampling.stride_frames() as u64;
        let span = (length as u64 - 1) * stride + 1;
        let n = virtual_count;
        if n == 0 {
            return Ok(Self::list(Vec::new()));
        }
        let policy = sampling.clip_policy;
        if n < span && policy == ClipPolicy::Error {
            return Err(PlanError(format!(
                "a clip spans {span} frames ({length} frames, stride {stride}) and the video has {n}; \
                 allowed with clip_policy 'error': videos of at least {span} frames"
            )));
        }
        let clip = |s: u64| clip_at(s, length, stride, n, policy);
        let mut starts: Vec<u64> = if n < span {
            // No room for a whole clip: every clip starts at the first frame.
            vec![0; count]
        } else {
            let room = n - span; // the last start with room for a whole clip
            match sampler {
                ClipSampler::Regular if count == 1 => vec![0],
                ClipSampler::Regular => (0..count as u64)
                    .map(|i| (u128::from(i) * u128::from(room) / (count as u128 - 1)) as u64)
                    .collect(),
                ClipSampler::Random => {
                    let mut rng = ChaCha8Rng::seed_from_u64(sampling.seed);
                    rng.set_stream(key.stream());
                    (0..count).map(|_| uniform(&mut rng, room + 1)).collect()
                }
            }
        };
        starts.sort_unstable();
        Ok(Self::list(starts.into_iter().map(clip).collect()))
    }

    /// How many slots of the sequences not yet started or not yet written take virtual frame `v`. For the
    /// grid, counted for a frame not yet seen (all its sequences are ahead).
    pub(crate) fn uses(&self, v: u64) -> usize {
        match self {
            Plan::List { uses, .. } => uses.get(&v).copied().unwrap_or(0),
            Plan::Grid {
                length,
                stride,
                step,
                ..
            } => {
                let reach = (*length as u64 - 1) * stride; // from a sequence's first frame to its last
                let first_k = v.saturating_sub(reach).div_ceil(*step);
                (first_k..=v / step)
                    .filter(|k| (v - k * step).is_multiple_of(*stride))
                    .count()
            }
        }
    }

    /// The next sequence's virtual indices (a grid sequence in full: the frames past the video's end are
    /// cut when it ends), or `None` when a list is done.
    pub(crate) fn next_sequence(&mut self) -> Option<Vec<u64>> {
        match self {
            Plan::List { sequences, .. } => sequences.pop_front(),
            Plan::Grid {
                length,
                stride,
                step,
                next,
            } => {
                let first = *next * *step;
                *next += 1;
                Some((0..*length as u64).map(|j| first + j * *stride).collect())
            }
        }
    }

    /// The first virtual index of the next sequence, if any.
    pub(crate) fn next_start(&self) -> Option<u64> {
        match self {
            Plan::List { sequences, .. } => sequences.front().and_then(|s| s.first().copied()),
            Plan::Grid { step, next, .. } => Some(next * step),
        }
    }

    /// One slot of virtual frame `v` was written.
    pub(crate) fn used(&mut self, v: u64) {
        if let Plan::List { uses, .. } = self {
            if let Some(n) = uses.get_mut(&v) {
                *n -= 1;
                if *n == 0 {
                    uses.remove(&v);
                }
            }
        }
    }

    /// Only the sequences whose first virtual frame `keep` keeps (a segment of a whole video of
    /// `virtual_count` virtual frames), as a list; each cut at the video's end, as the grid's are when it
    /// ends.
    pub(crate) fn restricted(mut self, virtual_count: u64, keep: impl Fn(u64) -> bool) -> Self {
        let mut sequences = Vec::new();
        while let Some(start) = self.next_start().filter(|&s| s < virtual_count) {
            let Some(sequence) = self.next_sequence() else {
                break;
            };
            if keep(start) {
                sequences.push(
                    sequence
                        .into_iter()
                        .take_while(|&v| v < virtual_count)
                        .collect(),
                );
            }
        }
        Self::list(sequences)
    }

    /// Every virtual frame some sequence takes, for a whole video of `virtual_count` (ascending).
    pub(crate) fn needed(&self, virtual_count: u64) -> Vec<u64> {
        match self {
            Plan::List { uses, .. } => uses.keys().copied().collect(),
            Plan::Grid { .. } => (0..virtual_count).filter(|&v| self.uses(v) > 0).collect(),
        }
    }
}

/// The virtual frames of the clip starting at `start`: `length` frames `stride` apart, those past the
/// video's `n` frames cut or filled per `policy`.
fn clip_at(start: u64, length: usize, stride: u64, n: u64, policy: ClipPolicy) -> Vec<u64> {
    let mut clip: Vec<u64> = (0..length as u64)
        .map(|j| start + j * stride)
        .take_while(|&v| v < n)
        .collect();
    let fits = clip.len();
    if fits < length {
        match policy {
            ClipPolicy::Cut | ClipPolicy::Error => {}
            ClipPolicy::RepeatLast => clip.resize(length, clip[fits - 1]),
            ClipPolicy::Wrap => {
                for j in fits..length {
                    clip.push(clip[j % fits]);
                }
            }
        }
    }
    clip
}

/// A uniform draw in `0..n` (`n > 0`), without modulo bias.
fn uniform(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    let zone = u64::MAX - (u64::MAX % n);
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % n;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn cfr(n: usize, fps: f64) -> Timeline {
        Timeline {
            pts: (0..n).map(|i| i as f64 / fps).collect(),
            end: n as f64 / fps,
        }
    }

    fn all(plan: &mut Plan, n: u64) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        while let Some(start) = plan.next_start() {
            if start >= n {
                break;
            }
            let s: Vec<u64> = plan
                .next_sequence()
                .unwrap()
                .into_iter()
                .filter(|&v| v < n)
                .collect();
            out.push(s);
        }
        out
    }

    proptest! {
        /// The segments of any partition of a video's frames give, together, the whole video's sequences,
        /// each once and in order.
        #[test]
        fn segments_partition_the_sequences(
            n in 0u64..200,
            length in 1usize..6,
            stride in 1usize..4,
            step in 1usize..9,
            cuts in proptest::collection::btree_set(1u64..200, 0..6),
        ) {
            let sampling = Sampling::new().stride(stride).step(step);
            let whole = all(&mut Plan::grid(length, &sampling), n);
            let mut bounds: Vec<u64> = std::iter::once(0).chain(cuts.into_iter().filter(|&c| c < n)).collect();
            bounds.push(n.max(1));
            let mut joined = Vec::new();
            for w in bounds.windows(2) {
                let part = Plan::grid(length, &sampling).restricted(n, |v| (w[0]..w[1]).contains(&v));
                joined.extend(all(&mut { part }, n));
            }
            prop_assert_eq!(joined, whole);
        }
    }

    #[test]
    fn stride_and_step_follow_dali() {
        let s = Sampling::new().stride(2).step(3);
        let mut plan = Plan::grid(3, &s);
        assert_eq!(
            all(&mut plan, 10),
            vec![vec![0, 2, 4], vec![3, 5, 7], vec![6, 8], vec![9]]
        );
        // Default step: the sequence length.
        let mut plan = Plan::grid(4, &Sampling::new());
        assert_eq!(all(&mut plan, 6), vec![vec![0, 1, 2, 3], vec![4, 5]]);
    }

    #[test]
    fn grid_uses_count_overlaps() {
        let plan = Plan::grid(4, &Sampling::new().step(1));
        assert_eq!(plan.uses(0), 1);
        assert_eq!(plan.uses(2), 3);
        assert_eq!(plan.uses(10), 4);
        let plan = Plan::grid(3, &Sampling::new().stride(4).step(12));
        assert_eq!(plan.uses(4), 1);
        assert_eq!(plan.uses(5), 0);
        assert_eq!(plan.uses(9), 0);
        assert_eq!(plan.uses(12), 1);
    }

    #[test]
    fn fps_takes_the_frame_displayed_at_each_tick() {
        // Variable frame rate: frames at 0, 0.1, 0.5, 0.55, 1.0 (ends 1.1).
        let t = Timeline {
            pts: vec![0.0, 0.1, 0.5, 0.55, 1.0],
            end: 1.1,
        };
        let s = Sampling::new().fps(4.0);
        // Ticks 0, .25, .5, .75, 1.0.
        assert_eq!(virtual_frames(&t, &s), vec![0, 1, 2, 3, 4]);
        let s = Sampling::new().fps(10.0);
        assert_eq!(
            virtual_frames(&t, &s),
            vec![0, 1, 1, 1, 1, 2, 3, 3, 3, 3, 4]
        );
        let s = Sampling::new().fps(10.0).time_range(0.45, 0.75);
        assert_eq!(virtual_frames(&t, &s), vec![2, 3, 3]);
        // Without fps, the range keeps frames by their own time.
        let s = Sampling::new().time_range(0.1, 0.55);
        assert_eq!(virtual_frames(&t, &s), vec![1, 2]);
    }

    #[test]
    fn fps_of_a_cfr_video_at_its_own_rate_is_every_frame() {
        let t = cfr(250, 25.0);
        let v = virtual_frames(&t, &Sampling::new().fps(25.0));
        assert_eq!(v, (0..250).collect::<Vec<_>>());
        let v = virtual_frames(&t, &Sampling::new().fps(5.0));
        assert_eq!(v, (0..50).map(|i| i * 5).collect::<Vec<_>>());
    }

    #[test]
    fn ticks_match_the_whole_video_rule() {
        let t = Timeline {
            pts: vec![0.0, 0.1, 0.5, 0.55, 1.0],
            end: 1.1,
        };
        let s = Sampling::new().fps(10.0).start(0.2);
        let mut ticks = Ticks::new(10.0, &s);
        let mut live = Vec::new();
        for (d, w) in t
            .pts
            .iter()
            .zip(t.pts.iter().skip(1).chain([&t.end]))
            .enumerate()
        {
            let _ = w.0;
            for _ in 0..ticks.covered(*w.1) {
                live.push(d as u64);
            }
        }
        assert_eq!(live, virtual_frames(&t, &s));
    }

    #[test]
    fn clips_are_seeded_sorted_and_whole() {
        let s = Sampling::new()
            .clips(5, ClipSampler::Random)
            .stride(2)
            .seed(9);
        let key = |p, e| ClipKey {
            position: Some(p),
            epoch: e,
            segment: None,
        };
        let plan = |k| match Plan::whole(&s, 4, 100, 100, k).unwrap() {
            Plan::List { sequences, .. } => Vec::from(sequences),
            Plan::Grid { .. } => unreachable!(),
        };
        let a = plan(key(3, 0));
        assert_eq!(
            a,
            plan(key(3, 0)),
            "same seed, position and epoch: same clips"
        );
        assert_ne!(a, plan(key(3, 1)), "a new epoch: new clips");
        assert_ne!(a, plan(key(4, 0)), "another video: other clips");
        assert_eq!(a.len(), 5);
        for c in &a {
            assert_eq!(c.len(), 4);
            assert!(c.windows(2).all(|w| w[1] == w[0] + 2));
            assert!(*c.last().unwrap() < 100);
        }
        assert!(a.windows(2).all(|w| w[0][0] <= w[1][0]));
    }

    #[test]
    fn regular_clips_span_the_video_and_short_videos_give_every_clip_per_the_policy() {
        let s = Sampling::new().clips(3, ClipSampler::Regular);
        let Plan::List { sequences, .. } = Plan::whole(&s, 4, 20, 20, ClipKey::default()).unwrap()
        else {
            unreachable!()
        };
        assert_eq!(
            Vec::from(sequences),
            vec![vec![0, 1, 2, 3], vec![8, 9, 10, 11], vec![16, 17, 18, 19]]
        );
        let Plan::List { sequences, .. } = Plan::whole(&s, 8, 5, 5, ClipKey::default()).unwrap()
        else {
            unreachable!()
        };
        assert_eq!(Vec::from(sequences), vec![vec![0, 1, 2, 3, 4]; 3]);
        // Stride 2, 8 frames (span 15) over 5 frames: [0, 2, 4] fits.
        let clips = |policy| {
            let s = Sampling::new()
                .clips(2, ClipSampler::Random)
                .stride(2)
                .clip_policy(policy);
            Plan::whole(&s, 8, 5, 5, ClipKey::default()).map(|plan| match plan {
                Plan::List { sequences, .. } => Vec::from(sequences),
                Plan::Grid { .. } => unreachable!(),
            })
        };
        assert_eq!(clips(ClipPolicy::Cut).unwrap(), vec![vec![0, 2, 4]; 2]);
        assert_eq!(
            clips(ClipPolicy::RepeatLast).unwrap(),
            vec![vec![0, 2, 4, 4, 4, 4, 4, 4]; 2]
        );
        assert_eq!(
            clips(ClipPolicy::Wrap).unwrap(),
            vec![vec![0, 2, 4, 0, 2, 4, 0, 2]; 2]
        );
        assert_eq!(
            clips(ClipPolicy::Error).unwrap_err().0,
            "a clip spans 15 frames (8 frames, stride 2) and the video has 5; allowed with clip_policy \
             'error': videos of at least 15 frames"
        );
    }

    #[test]
    fn indices_are_checked_and_cut_into_sequences() {
        let s = Sampling::new().indices(vec![0, 0, 5, 9, 9]);
        let Plan::List { sequences, uses } =
            Plan::whole(&s, 2, 10, 10, ClipKey::default()).unwrap()
        else {
            unreachable!()
        };
        assert_eq!(Vec::from(sequences), vec![vec![0, 0], vec![5, 9], vec![9]]);
        assert_eq!(uses[&0], 2);
        let s = Sampling::new().indices(vec![3, 10]);
        assert_eq!(
            Plan::whole(&s, 2, 10, 10, ClipKey::default()).unwrap_err(),
            PlanError("frame index 10 is past the video's last frame (10 frames: 0 to 9)".into())
        );
    }

    #[test]
    fn indices_past_the_end_are_named() {
        assert_eq!(indices_past_the_end(&[0, 9], 10), None);
        assert_eq!(
            indices_past_the_end(&[40, 3, 45, 40], 30).unwrap(),
            "frame indices 40, 45 are past the video's last frame (30 frames: 0 to 29)"
        );
        assert_eq!(
            indices_past_the_end(&[1], 0).unwrap(),
            "frame index 1 is past the video's last frame (it has no frame)"
        );
        let many: Vec<u64> = (100..120).collect();
        assert!(indices_past_the_end(&many, 10).unwrap().starts_with(
            "frame indices 100, 101, 102, 103, 104, 105, 106, 107 and 12 more are past"
        ));
    }

    proptest! {
        #[test]
        fn grid_uses_agree_with_the_sequences(l in 1usize..6, stride in 1u64..5, step in 1u64..9, n in 0u64..60) {
            let s = Sampling::new().stride(stride as usize).step(step as usize);
            let mut plan = Plan::grid(l, &s);
            let counted = plan_counts(&mut Plan::grid(l, &s), n, n + (l as u64) * stride * 2);
            for v in 0..n {
                prop_assert_eq!(plan.uses(v), counted.get(&v).copied().unwrap_or(0), "v {}", v);
            }
            // Every sequence's frames are ascending, `stride` apart, starting `step` apart.
            let seqs = all(&mut plan, n);
            for (k, seq) in seqs.iter().enumerate() {
                prop_assert_eq!(seq[0], k as u64 * step);
                prop_assert!(seq.windows(2).all(|w| w[1] == w[0] + stride));
                prop_assert!(seq.len() <= l);
            }
        }

        #[test]
        /// Every video gives the clips asked for, each inside it: whole where it fits, else as the policy
        /// says (cut: the frames it has; repeat_last and wrap: the sequence length, of the frames it has).
        fn clips_stay_inside_the_video(count in 1usize..20, l in 1usize..10, stride in 1usize..4, n in 1u64..300, seed: u64, random: bool, fill in 0usize..3) {
            let sampler = if random { ClipSampler::Random } else { ClipSampler::Regular };
            let policy = [ClipPolicy::Cut, ClipPolicy::RepeatLast, ClipPolicy::Wrap][fill];
            let s = Sampling::new().clips(count, sampler).stride(stride).seed(seed).clip_policy(policy);
            let Plan::List { sequences, .. } = Plan::whole(&s, l, n, n, ClipKey::default()).unwrap() else { unreachable!() };
            let span = (l as u64 - 1) * stride as u64 + 1;
            prop_assert_eq!(sequences.len(), count);
            let fits = if n < span { (n - 1) / stride as u64 + 1 } else { l as u64 };
            for c in &sequences {
                prop_assert!(c.iter().all(|&v| v < n));
                let len = if policy == ClipPolicy::Cut { fits } else { l as u64 };
                prop_assert_eq!(c.len() as u64, len);
                prop_assert!(c[..fits as usize].windows(2).all(|w| w[1] == w[0] + stride as u64));
            }
        }
    }

    /// Uses counted from the sequences themselves (those starting below `n`, frames below `limit`).
    fn plan_counts(plan: &mut Plan, n: u64, limit: u64) -> BTreeMap<u64, usize> {
        let mut counts = BTreeMap::new();
        while plan.next_start().is_some_and(|s| s < n) {
            for v in plan.next_sequence().unwrap() {
                if v < limit {
                    *counts.entry(v).or_insert(0) += 1;
                }
            }
        }
        counts
    }
}
