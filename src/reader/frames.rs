//! What one read of a [`VideoReader`](super::VideoReader) gives: its frames in one buffer, with each frame's
//! display index, time and duration.

use crate::assembly::batch::Batch;

/// The frames one read gave: one buffer of `N` frames of the reader's output, in the order asked for, with each
/// frame's display index, time and duration.
#[derive(Debug)]
pub struct Frames {
    pub(super) batch: Batch,
    pub(super) durations: Vec<f64>,
}

impl Frames {
    /// The frames' shape in their layout: `[N, H, W, 3]` (FHWC), `[N, 3, H, W]` (FCHW) or `[3, N, H, W]`
    /// (CFHW), `H` and `W` the shown (and transformed) size.
    pub fn shape(&self) -> [usize; 4] {
        match self.batch.sequences.first() {
            Some(_) => self.batch.sequence(0).shape(),
            None => self
                .batch
                .layout
                .shape(0, self.batch.height, self.batch.width),
        }
    }

    /// How many frames the read gave.
    pub fn len(&self) -> usize {
        self.durations.len()
    }

    /// Whether the read asked for no frame.
    pub fn is_empty(&self) -> bool {
        self.durations.is_empty()
    }

    /// Each frame's display index, in the order asked for.
    pub fn indices(&self) -> &[u64] {
        self.batch
            .sequences
            .first()
            .map_or(&[], |s| s.indices.as_slice())
    }

    /// Each frame's presentation time, in stream seconds.
    pub fn pts_seconds(&self) -> &[f64] {
        self.batch
            .sequences
            .first()
            .map_or(&[], |s| s.pts.as_slice())
    }

    /// Whether each frame is damaged, in the order asked for ([`Frame::damaged`](crate::Frame::damaged)).
    pub fn damaged(&self) -> &[bool] {
        self.batch
            .sequences
            .first()
            .map_or(&[], |s| s.damaged.as_slice())
    }

    /// Each frame's duration in seconds: to the next frame's time (the last frame's own duration for it).
    pub fn duration_seconds(&self) -> &[f64] {
        &self.durations
    }

    /// The frames' bytes (host memory; see [`Batch::data`]).
    pub fn data(&self) -> &[u8] {
        self.batch.data()
    }

    /// The frames as a [`Batch`] of one sequence (empty when the read asked for none): its type, layout,
    /// device buffer, host copy and orientation.
    pub fn batch(&self) -> &Batch {
        &self.batch
    }

    /// The frames as their [`Batch`].
    pub fn into_batch(self) -> Batch {
        self.batch
    }
}
