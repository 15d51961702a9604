//! Filling the sampled sequences' slots in order from frames that arrive in display order.
//!
//! Sequences go to the assembler one after the other, each frame by frame, but a frame may belong to several
//! (overlapping sequences, a target frame rate above the video's, clips that overlap): a frame some later slot
//! takes is kept (a reference to the decoder's picture, no copy) until that slot's turn, and dropped after
//! its last use. Frames no slot takes are never kept, so never converted. What is kept is bounded by one
//! sequence's span of frames (the clips' and indices' lists are in display order).

use std::collections::BTreeMap;
use std::rc::Rc;

use super::plan::Plan;
use crate::orientation::Orientation;

/// A decoded picture held for the sequences that take it, with the turn that shows it, known when it was
/// decoded (a frame's display matrix holds for the frames the decoder gives after it).
pub(crate) struct Shown<F> {
    pub(crate) picture: F,
    pub(crate) orientation: Orientation,
    /// The picture is damaged (`decode::damage`).
    pub(crate) damaged: bool,
}

/// What the slots hand to the assembler, in order.
pub(crate) enum Out<'a, F> {
    /// The next frame of the current sequence: its picture, display index and time.
    Frame {
        frame: &'a F,
        display: u64,
        pts: f64,
    },
    /// The current sequence ends (after at least one frame). Short of its length (the video or the time range
    /// ended, a frame never came) it is closed per the last-sequence policy; so is the part after a change of
    /// frame size, which the assembler starts as a sequence of its own (each part at its own size), so that the
    /// next sequence starts where the plan starts it.
    EndSequence,
}

struct Held<F> {
    frame: Rc<F>,
    display: u64,
    pts: f64,
    uses: usize,
}

struct Current {
    slots: Vec<u64>,
    pos: usize,
    written: usize,
}

/// The slots of one video's sampled sequences.
pub(crate) struct Slots<F> {
    plan: Plan,
    held: BTreeMap<u64, Held<F>>,
    current: Option<Current>,
    /// Virtual frames seen (or skipped) so far: the next one to come.
    seen: u64,
}

impl<F> Slots<F> {
    /// The slots of `plan`'s sequences.
    pub(crate) fn new(plan: Plan) -> Self {
        Self {
            plan,
            held: BTreeMap::new(),
            current: None,
            seen: 0,
        }
    }

    /// Whether some slot takes virtual frame `v` (so it is worth converting).
    pub(crate) fn wants(&self, v: u64) -> bool {
        self.plan.uses(v) > 0
    }

    /// Frames currently kept for later slots.
    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        self.held.len()
    }

    /// Virtual frame `v` (at least every one before) arrived: real frame `display` at `pts`. The slots it
    /// completes are handed to `out`.
    pub(crate) fn push<E>(
        &mut self,
        v: u64,
        display: u64,
        pts: f64,
        frame: &Rc<F>,
        out: &mut impl FnMut(Out<'_, F>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.seen = self.seen.max(v + 1);
        let uses = self.plan.uses(v);
        if uses > 0 {
            self.held.insert(
                v,
                Held {
                    frame: frame.clone(),
                    display,
                    pts,
                    uses,
                },
            );
        }
        self.advance(out, false)
    }

    /// The virtual frames before `v` that did not come will not: their slots are skipped.
    pub(crate) fn skip_to<E>(
        &mut self,
        v: u64,
        out: &mut impl FnMut(Out<'_, F>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.seen = self.seen.max(v);
        self.advance(out, false)
    }

    /// The video ended: the sequences that started are completed with what came, the rest never exist.
    pub(crate) fn finish<E>(
        &mut self,
        out: &mut impl FnMut(Out<'_, F>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.advance(out, true)?;
        self.held.clear();
        Ok(())
    }

    fn advance<E>(
        &mut self,
        out: &mut impl FnMut(Out<'_, F>) -> Result<(), E>,
        ending: bool,
    ) -> Result<(), E> {
        loop {
            if self.current.is_none() {
                match self.plan.next_start() {
                    // A sequence starts when its first frame came (or would have: it was skipped).
                    Some(start) if start < self.seen => {}
                    // Not yet; or, at the end, never.
                    _ => return Ok(()),
                }
                let slots = self.plan.next_sequence().expect("next_start was Some");
                self.current = Some(Current {
                    slots,
                    pos: 0,
                    written: 0,
                });
            }
            let cur = self.current.as_mut().expect("set above");
            while cur.pos < cur.slots.len() {
                let v = cur.slots[cur.pos];
                if let Some(h) = self.held.get_mut(&v) {
                    out(Out::Frame {
                        frame: &h.frame,
                        display: h.display,
                        pts: h.pts,
                    })?;
                    cur.written += 1;
                    h.uses -= 1;
                    if h.uses == 0 {
                        self.held.remove(&v);
                    }
                } else if !(v < self.seen || ending) {
                    return Ok(()); // its frame is still to come
                }
                // Written, or skipped: its frame never came, or lies past the end.
                self.plan.used(v);
                cur.pos += 1;
            }
            let cur = self.current.take().expect("set above");
            if cur.written > 0 {
                out(Out::EndSequence)?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::settings::sampling::Sampling;

    /// Runs frames `0..n` (those in `present`) through the slots; returns the sequences as display indices.
    fn run(
        plan: Plan,
        length: usize,
        n: u64,
        present: impl Fn(u64) -> bool,
    ) -> (Vec<Vec<u64>>, usize) {
        let mut slots = Slots::new(plan);
        let mut seqs: Vec<Vec<u64>> = vec![Vec::new()];
        let mut most_kept = 0;
        let mut out = |o: Out<'_, u64>| -> Result<(), ()> {
            match o {
                Out::Frame { frame, display, .. } => {
                    assert_eq!(*frame, display);
                    let cur = seqs.last_mut().unwrap();
                    cur.push(display);
                    if cur.len() == length {
                        seqs.push(Vec::new());
                    }
                }
                Out::EndSequence => {
                    if !seqs.last().unwrap().is_empty() {
                        seqs.push(Vec::new());
                    }
                }
            }
            Ok(())
        };
        for v in 0..n {
            if present(v) {
                slots.push(v, v, v as f64, &Rc::new(v), &mut out).unwrap();
                most_kept = most_kept.max(slots.kept());
            } else {
                slots.skip_to(v + 1, &mut out).unwrap();
            }
        }
        slots.finish(&mut out).unwrap();
        seqs.retain(|s| !s.is_empty());
        (seqs, most_kept)
    }

    #[test]
    fn overlapping_sequences_share_frames() {
        let plan = Plan::grid(3, &Sampling::new().step(1));
        let (seqs, kept) = run(plan, 3, 5, |_| true);
        assert_eq!(
            seqs,
            vec![
                vec![0, 1, 2],
                vec![1, 2, 3],
                vec![2, 3, 4],
                vec![3, 4],
                vec![4]
            ]
        );
        assert!(kept <= 3);
    }

    #[test]
    fn a_frame_that_never_comes_shortens_its_sequence() {
        let plan = Plan::list(vec![vec![1, 2, 3], vec![5, 6, 7]]);
        let (seqs, _) = run(plan, 3, 9, |v| v != 2);
        assert_eq!(seqs, vec![vec![1, 3], vec![5, 6, 7]]);
    }

    #[test]
    fn repeated_frames_fill_several_slots() {
        let plan = Plan::list(vec![vec![0, 0, 4], vec![4, 8, 8]]);
        let (seqs, kept) = run(plan, 3, 10, |_| true);
        assert_eq!(seqs, vec![vec![0, 0, 4], vec![4, 8, 8]]);
        assert_eq!(
            kept, 0,
            "each frame fills its slots as it comes: none is kept"
        );
        // Out of the sequences' order (a later sequence starting earlier is not possible for lists, but a
        // frame taken by the next sequence waits while the current one is being filled).
        let plan = Plan::list(vec![vec![0, 2, 4], vec![1, 3, 5]]);
        let (seqs, kept) = run(plan, 3, 6, |_| true);
        assert_eq!(seqs, vec![vec![0, 2, 4], vec![1, 3, 5]]);
        assert_eq!(kept, 2, "1 and 3 wait for the second sequence");
    }

    proptest! {
        #[test]
        fn grid_sequences_come_out_whole_and_in_order(l in 1usize..5, stride in 1u64..4, step in 1u64..7, n in 0u64..40) {
            let s = Sampling::new().stride(stride as usize).step(step as usize);
            let (seqs, kept) = run(Plan::grid(l, &s), l, n, |_| true);
            let expected: Vec<Vec<u64>> = (0..)
                .map(|k| k * step)
                .take_while(|&first| first < n)
                .map(|first| (0..l as u64).map(|j| first + j * stride).filter(|&v| v < n).collect())
                .collect();
            prop_assert_eq!(seqs, expected);
            prop_assert!(kept as u64 <= (l as u64 - 1) * stride + 1);
        }
    }
}
