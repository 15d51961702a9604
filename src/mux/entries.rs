//! What a [`Mux`](super::Mux) gives: batches across cameras ([`MuxBatch`] of [`MuxEntry`]), the end of a camera
//! ([`MuxEvent`]), and what each camera has done ([`CameraStats`]). Plain values, no threads.

use std::time::Instant;

use crate::assembly::batch::{Batch, Sequence};
use crate::error::Error;
use crate::video::Label;

/// A camera of a [`Mux`](super::Mux), numbered in the order cameras were added (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CameraId(pub u64);

/// One sequence of one camera in a [`MuxBatch`].
#[derive(Debug)]
pub struct MuxEntry {
    pub(crate) camera: CameraId,
    pub(crate) label: Label,
    pub(crate) batch: Batch,
    pub(crate) ready: Instant,
}

impl MuxEntry {
    /// Its camera.
    pub fn camera(&self) -> CameraId {
        self.camera
    }

    /// Its camera's label.
    pub fn label(&self) -> &Label {
        &self.label
    }

    /// The sequence: its frames, frame indices ([`Sequence::indices`]), pts and arrival times.
    pub fn sequence(&self) -> Sequence<'_> {
        self.batch.sequence(0)
    }

    /// The camera's batch of this one sequence (its latency, device, element type).
    pub fn batch(&self) -> &Batch {
        &self.batch
    }

    /// When it was ready for the mux (decoded and converted).
    pub fn ready_at(&self) -> Instant {
        self.ready
    }

    /// The camera's batch of this one sequence, by value.
    pub fn into_batch(self) -> Batch {
        self.batch
    }
}

/// A batch across cameras: up to `max_batch_size` sequences of one shape, oldest first.
#[derive(Debug)]
pub struct MuxBatch {
    pub(crate) entries: Vec<MuxEntry>,
}

impl MuxBatch {
    /// Its sequences, oldest first.
    pub fn entries(&self) -> &[MuxEntry] {
        &self.entries
    }

    /// Sequences in it (at least one).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it is empty (never, for a batch a [`Mux`](super::Mux) gives).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The shape every sequence in it has (frames, then the layout's three dimensions).
    pub fn sequence_shape(&self) -> [usize; 4] {
        self.entries
            .first()
            .map_or([0; 4], |e| e.sequence().shape())
    }

    /// The batch as one tensor: its sequences' bytes, one after the other (N x the sequence shape). For
    /// host batches; a sequence on a GPU gives no bytes here (copy it with [`Batch::to_host`] first).
    pub fn to_contiguous(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(self.entries.iter().map(|e| e.sequence().byte_len()).sum());
        for e in &self.entries {
            out.extend_from_slice(e.sequence().data());
        }
        out
    }

    /// Its entries, by value.
    pub fn into_entries(self) -> Vec<MuxEntry> {
        self.entries
    }
}

/// What a [`Mux`](super::Mux) poll gives.
#[derive(Debug)]
pub enum MuxEvent {
    /// A batch across cameras.
    Batch(MuxBatch),
    /// A camera ended, after its last sequence: its video ended (`error` is `None`) or failed.
    Ended {
        /// The camera.
        camera: CameraId,
        /// Its label.
        label: Label,
        /// Why it failed, if it did.
        error: Option<Error>,
    },
}

/// What a camera has done so far ([`Mux::stats`](super::Mux::stats)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CameraStats {
    /// The camera.
    pub camera: CameraId,
    /// Its label.
    pub label: Label,
    /// Sequences it gave the mux.
    pub sequences: u64,
    /// Sequences dropped for a newer one ([`MuxPolicy::LatestOnly`](crate::MuxPolicy::LatestOnly)).
    pub dropped: u64,
    /// Whether it has ended (its [`MuxEvent::Ended`] was given), or was removed.
    pub ended: bool,
}
