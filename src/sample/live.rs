//! Sampling frames as the decoder gives them, with no index: a live video (chunks, a pulled URL), or a whole
//! one whose packets give no display order. Every frame is decoded; only the frames some sequence takes are
//! converted. Display indices are the numbering's (`numbering`): frames in the order the decoder gives them,
//! which is display order, a picture that does not decode leaving a hole.
//! Stride, step, a time range, a target frame rate and a list of indices work this way; clips need the whole
//! video's length and are refused for live videos when fed.

use std::rc::Rc;

use super::plan::{indices_past_the_end, Plan, Ticks};
use super::slots::{Out, Shown, Slots};
use crate::error::VideoError;
use crate::ffi::frame::AvFrame;
use crate::orientation::Orientation;
use crate::settings::sampling::Sampling;

/// The sampler of one video decoded from its start to its end.
pub(crate) struct InOrder {
    slots: Slots<Shown<AvFrame>>,
    start: f64,
    end: f64,
    ticks: Option<Ticks>,
    /// The first frame's time: the range and the ticks count from it.
    origin: Option<f64>,
    next_virtual: u64,
    /// With a frame rate: the last frame, waiting for the next one's time to know its ticks.
    waiting: Option<(Rc<Shown<AvFrame>>, u64, f64)>,
    /// A list of indices asked for, checked against the frames there were when the video ends.
    indices: Option<Vec<u64>>,
}

impl InOrder {
    /// For sequences of `length` frames per `sampling` (not clips), or an explicit plan over display
    /// indices (clips of a whole video counted in advance).
    pub(crate) fn new(sampling: &Sampling, length: usize, plan: Option<Plan>) -> Self {
        let indices = if plan.is_none() {
            sampling.indices.clone()
        } else {
            None
        };
        let plan = plan.unwrap_or_else(|| match &sampling.indices {
            Some(indices) => Plan::list(indices.chunks(length).map(<[u64]>::to_vec).collect()),
            None => Plan::grid(length, sampling),
        });
        Self {
            slots: Slots::new(plan),
            start: sampling.start.unwrap_or(0.0),
            end: sampling.end.unwrap_or(f64::INFINITY),
            ticks: sampling.fps.map(|fps| Ticks::new(fps, sampling)),
            origin: None,
            next_virtual: 0,
            waiting: None,
            indices,
        }
    }

    /// The next frame the decoder gave, at display index `display` (`sample::numbering`) and `pts` seconds,
    /// shown per `orientation`, `damaged` or not.
    pub(crate) fn frame<E: From<VideoError>>(
        &mut self,
        frame: &AvFrame,
        display: u64,
        orientation: Orientation,
        damaged: bool,
        pts: f64,
        out: &mut impl FnMut(Out<'_, Shown<AvFrame>>) -> Result<(), E>,
    ) -> Result<(), E> {
        let hold = || -> Result<Rc<Shown<AvFrame>>, E> {
            let picture = frame.new_ref().map_err(|e| E::from(e.into()))?;
            Ok(Rc::new(Shown {
                picture,
                orientation,
                damaged,
            }))
        };
        let origin = *self.origin.get_or_insert(pts);
        let t = pts - origin;
        if self.ticks.is_some() {
            self.release_waiting(t, out)?;
            self.waiting = Some((hold()?, display, pts));
            return Ok(());
        }
        if t < self.start || t >= self.end {
            return Ok(());
        }
        let v = self.next_virtual;
        self.next_virtual += 1;
        if self.slots.wants(v) {
            self.slots.push(v, display, pts, &hold()?, out)
        } else {
            self.slots.skip_to(v + 1, out)
        }
    }

    /// A hole at `pts` seconds (a picture that did not decode): it keeps its place among the frames counted (a
    /// slot that takes it is skipped), and takes none in time (a target frame rate shows the frame before it
    /// longer).
    pub(crate) fn hole<E>(
        &mut self,
        pts: f64,
        out: &mut impl FnMut(Out<'_, Shown<AvFrame>>) -> Result<(), E>,
    ) -> Result<(), E> {
        // Before the first frame (a keyframe that did not decode), at the range's start.
        let t = self.origin.map_or(0.0, |origin| pts - origin);
        if self.ticks.is_some() || t < self.start || t >= self.end {
            return Ok(());
        }
        let v = self.next_virtual;
        self.next_virtual += 1;
        self.slots.skip_to(v + 1, out)
    }

    /// The video ended; `last_duration`: the last frame's duration in seconds, when known. A list of indices
    /// some of which lie past the video's last frame fails the video, naming them (after the sequences made
    /// before them).
    pub(crate) fn finish<E: From<VideoError>>(
        &mut self,
        last_duration: Option<f64>,
        out: &mut impl FnMut(Out<'_, Shown<AvFrame>>) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some((_, _, pts)) = &self.waiting {
            let t = pts - self.origin.unwrap_or(*pts);
            // Shown for its duration; at its own time only when that is unknown.
            let until = match last_duration {
                Some(d) if d > 0.0 => t + d,
                _ => next_up(t),
            };
            self.release_waiting(until, out)?;
        }
        if let Some(reason) = self
            .indices
            .as_deref()
            .and_then(|indices| indices_past_the_end(indices, self.next_virtual))
        {
            return Err(E::from(VideoError::Sampling { reason }));
        }
        self.slots.finish(out)
    }

    /// The waiting frame is shown until `until` (from the first frame): it becomes the ticks before then.
    fn release_waiting<E>(
        &mut self,
        until: f64,
        out: &mut impl FnMut(Out<'_, Shown<AvFrame>>) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some((frame, display, pts)) = self.waiting.take() else {
            return Ok(());
        };
        let ticks = self.ticks.as_mut().expect("waiting implies a frame rate");
        for _ in 0..ticks.covered(until) {
            let v = self.next_virtual;
            self.next_virtual += 1;
            self.slots.push(v, display, pts, &frame, out)?;
        }
        Ok(())
    }
}

/// The smallest float above `t` (`t` >= 0).
fn next_up(t: f64) -> f64 {
    f64::from_bits(t.max(0.0).to_bits() + 1)
}
