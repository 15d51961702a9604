//! The range planner of remote videos (`source::remote`): the byte ranges a read is about to need (an index,
//! the packets of the GOPs a sampling plan or a reader call decodes) turned into the requests that fetch them:
//! clipped to the object, overlapping and nearby ranges coalesced (a gap of at most `merge_gap` bytes is
//! fetched rather than paid for with another round trip), split into requests of at most `max_request` bytes
//! (never open-ended, so a request's memory and a retry's cost are bounded), bytes already held left out.
//!
//! Pure: the rules below hold for every input (property tests here, a fuzz target in `fuzz/`).

use std::ops::Range;

/// How [`plan`] shapes requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// The object's length: nothing at or past it is asked for.
    pub(crate) len: u64,
    /// Ranges at most this far apart are fetched as one.
    pub(crate) merge_gap: u64,
    /// No request is longer (at least 1).
    pub(crate) max_request: u64,
}

/// The requests that fetch every byte of `wanted` (clipped to the object) that `held` (sorted, disjoint) does
/// not cover, ascending. Each request is non-empty and at most `max_request` long, no two overlap, and a byte
/// that no wanted range holds is fetched only in a gap of at most `merge_gap` between wanted bytes.
pub(crate) fn plan(wanted: &[Range<u64>], held: &[Range<u64>], shape: Shape) -> Vec<Range<u64>> {
    let max_request = shape.max_request.max(1);
    let mut ranges: Vec<Range<u64>> = wanted
        .iter()
        .map(|r| r.start.min(shape.len)..r.end.min(shape.len))
        .filter(|r| r.start < r.end)
        .collect();
    ranges.sort_unstable_by_key(|r| r.start);
    // What is still to fetch: the wanted ranges less the held ones.
    let mut missing = Vec::with_capacity(ranges.len());
    for range in coalesce(ranges, 0) {
        subtract(range, held, &mut missing);
    }
    let mut requests = Vec::with_capacity(missing.len());
    for range in join_gaps(missing, held, shape.merge_gap) {
        let mut start = range.start;
        while start < range.end {
            let end = range.end.min(start.saturating_add(max_request));
            requests.push(start..end);
            start = end;
        }
    }
    requests
}

/// Sorted ranges with those that overlap or lie at most `gap` apart joined.
fn coalesce(sorted: Vec<Range<u64>>, gap: u64) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for range in sorted {
        match out.last_mut() {
            Some(last) if range.start <= last.end.saturating_add(gap) => {
                last.end = last.end.max(range.end);
            }
            _ => out.push(range),
        }
    }
    out
}

/// Sorted disjoint ranges with those at most `gap` apart joined, unless a held range lies between (held bytes
/// are never fetched again).
fn join_gaps(sorted: Vec<Range<u64>>, held: &[Range<u64>], gap: u64) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for range in sorted {
        match out.last_mut() {
            Some(last)
                if range.start <= last.end.saturating_add(gap)
                    && !held_between(held, last.end, range.start) =>
            {
                last.end = last.end.max(range.end);
            }
            _ => out.push(range),
        }
    }
    out
}

/// Whether a range of `held` (sorted, disjoint) holds a byte in `from..to`.
fn held_between(held: &[Range<u64>], from: u64, to: u64) -> bool {
    let first = held.partition_point(|h| h.end <= from);
    held.get(first).is_some_and(|h| h.start < to)
}

/// Pushes the parts of `range` that no range of `held` (sorted, disjoint) covers.
fn subtract(range: Range<u64>, held: &[Range<u64>], out: &mut Vec<Range<u64>>) {
    let mut start = range.start;
    // The first held range that ends after `start`.
    let first = held.partition_point(|h| h.end <= start);
    for h in &held[first..] {
        if h.start >= range.end {
            break;
        }
        if h.start > start {
            out.push(start..h.start);
        }
        start = start.max(h.end);
        if start >= range.end {
            return;
        }
    }
    if start < range.end {
        out.push(start..range.end);
    }
}

/// The fuzz target's body: plans from arbitrary bytes and checks [`plan`]'s rules, panicking where one fails.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn check_plan(data: &[u8]) {
    let mut words = data
        .chunks(4)
        .map(|c| c.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b)));
    let mut next = || words.next().unwrap_or(0);
    // An object of up to 16 MiB, requests of at least 4 KiB: at most a few thousand requests a plan.
    let shape = Shape {
        len: next() % (16 << 20),
        merge_gap: next() % 4096,
        max_request: next() % (1 << 20) + 4096,
    };
    let mut wanted = Vec::new();
    let mut held = Vec::new();
    for i in 0..(data.len() / 8).min(64) {
        // Past the end too (clipped).
        let (a, b) = (next() % (20 << 20), next() % (20 << 20));
        let range = a.min(b)..a.max(b).saturating_add(1);
        if i % 3 == 2 {
            held.push(range);
        } else {
            wanted.push(range);
        }
    }
    held.sort_unstable_by_key(|r| r.start);
    let held = coalesce(held, 0);
    assert_rules(&wanted, &held, shape, &plan(&wanted, &held, shape));
}

/// Checks every rule [`plan`] states, by brute force over the ranges' end points.
#[cfg(any(test, feature = "fuzzing"))]
fn assert_rules(wanted: &[Range<u64>], held: &[Range<u64>], shape: Shape, requests: &[Range<u64>]) {
    let inside = |ranges: &[Range<u64>], at: u64| ranges.iter().any(|r| r.contains(&at));
    for pair in requests.windows(2) {
        assert!(
            pair[0].end <= pair[1].start,
            "overlapping or unsorted: {requests:?}"
        );
    }
    for r in requests {
        assert!(r.start < r.end && r.end <= shape.len, "bad request {r:?}");
        assert!(
            r.end - r.start <= shape.max_request.max(1),
            "too long: {r:?}"
        );
    }
    // Every wanted byte not held is fetched, and no held byte is fetched: checked at every range's end points
    // (the byte sets only change there).
    let mut points: Vec<u64> = wanted
        .iter()
        .chain(held)
        .chain(requests)
        .flat_map(|r| {
            [
                r.start.saturating_sub(1),
                r.start,
                r.end.saturating_sub(1),
                r.end,
            ]
        })
        .filter(|&p| p < shape.len)
        .collect();
    points.sort_unstable();
    points.dedup();
    let want: Vec<bool> = points
        .iter()
        .map(|&p| inside(wanted, p) && !inside(held, p))
        .collect();
    for (i, &p) in points.iter().enumerate() {
        let fetched = inside(requests, p);
        assert!(
            !want[i] || fetched,
            "byte {p} wanted but not fetched: {requests:?}"
        );
        if fetched && !want[i] {
            assert!(!inside(held, p), "byte {p} held but fetched again");
            // Only in a short gap between wanted bytes.
            let before = (0..i).rev().find(|&j| want[j]).map(|j| points[j]);
            let after = (i + 1..points.len()).find(|&j| want[j]).map(|j| points[j]);
            match (before, after) {
                (Some(b), Some(a)) => assert!(a - b - 1 <= shape.merge_gap, "gap too wide at {p}"),
                _ => panic!("byte {p} fetched outside the wanted ranges: {requests:?}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::single_range_in_vec_init)] // the plans are lists of ranges, one or more
    use super::*;
    use proptest::prelude::*;

    const SHAPE: Shape = Shape {
        len: 1000,
        merge_gap: 10,
        max_request: 100,
    };

    #[test]
    fn near_ranges_are_joined_far_ones_not_and_long_ones_split() {
        assert_eq!(plan(&[0..5, 12..20, 50..60], &[], SHAPE), [0..20, 50..60]);
        assert_eq!(plan(&[0..250], &[], SHAPE), [0..100, 100..200, 200..250]);
        // Out of order and overlapping.
        assert_eq!(plan(&[40..60, 0..50], &[], SHAPE), [0..60]);
    }

    #[test]
    fn what_is_held_is_not_fetched_again_and_nothing_past_the_end() {
        assert_eq!(plan(&[0..100], &[20..30, 60..100], SHAPE), [0..20, 30..60]);
        assert_eq!(plan(&[990..2000, 5000..6000], &[], SHAPE), [990..1000]);
        assert_eq!(plan(&[10..10], &[], SHAPE), Vec::<Range<u64>>::new());
        assert_eq!(plan(&[0..50], &[0..1000], SHAPE), Vec::<Range<u64>>::new());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn every_plan_keeps_the_rules(data in proptest::collection::vec(any::<u8>(), 0..600)) {
            check_plan(&data);
        }

        #[test]
        fn small_objects_keep_the_rules(
            wanted in proptest::collection::vec((0u64..300, 0u64..80), 0..12),
            held in proptest::collection::vec((0u64..300, 1u64..40), 0..6),
            gap in 0u64..30,
            max in 1u64..64,
        ) {
            let shape = Shape { len: 256, merge_gap: gap, max_request: max };
            let wanted: Vec<_> = wanted.into_iter().map(|(s, l)| s..s + l).collect();
            let mut held: Vec<_> = held.into_iter().map(|(s, l)| s..s + l).collect();
            held.sort_unstable_by_key(|r| r.start);
            let held = coalesce(held, 0);
            assert_rules(&wanted, &held, shape, &plan(&wanted, &held, shape));
        }
    }
}
