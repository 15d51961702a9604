//! The reference operator's batching arithmetic (DALI `DetermineBatchOutline`), for a video whose frame count
//! is known. framefeed never needs the count (it finds the last sequence by reaching the end of the stream),
//! but its batches always come out in exactly this outline; the tests hold it to that.

use crate::settings::config::LastSequencePolicy;

/// How `frames` frames split into batches of up to `max_batch_size` sequences of `sequence_length` frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOutline {
    /// Batches of `max_batch_size` full sequences.
    pub full_batches: usize,
    /// Full sequences in the short last batch (0 when there is none).
    pub full_sequences_in_last_batch: usize,
    /// Frames in the short last sequence (0 when there is none).
    pub frames_in_last_sequence: usize,
}

impl BatchOutline {
    /// The outline for `frames` frames (`sequence_length` and `max_batch_size` at least 1).
    pub fn new(frames: usize, sequence_length: usize, max_batch_size: usize) -> Self {
        let per_batch = sequence_length * max_batch_size;
        let full_batches = frames / per_batch;
        let remaining = frames - full_batches * per_batch;
        let full_sequences_in_last_batch = remaining / sequence_length;
        Self {
            full_batches,
            full_sequences_in_last_batch,
            frames_in_last_sequence: remaining - full_sequences_in_last_batch * sequence_length,
        }
    }

    /// Number of batches in all.
    pub fn batches(&self) -> usize {
        self.full_batches
            + usize::from(self.full_sequences_in_last_batch > 0 || self.frames_in_last_sequence > 0)
    }

    /// The frame count of every sequence of every batch, in order, with `policy` applied to the last one
    /// (`Pad` gives it `sequence_length` frames, of which the real ones come first).
    pub fn sequence_lengths(
        &self,
        sequence_length: usize,
        max_batch_size: usize,
        policy: LastSequencePolicy,
    ) -> Vec<Vec<usize>> {
        let mut batches = vec![vec![sequence_length; max_batch_size]; self.full_batches];
        if self.batches() > self.full_batches {
            let mut last = vec![sequence_length; self.full_sequences_in_last_batch];
            if self.frames_in_last_sequence > 0 {
                last.push(match policy {
                    LastSequencePolicy::Partial => self.frames_in_last_sequence,
                    LastSequencePolicy::Pad => sequence_length,
                });
            }
            batches.push(last);
        }
        batches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DALI's own test table: (N, L, B) -> (full batches, full sequences in the last batch, frames in the
    /// last sequence).
    type Triple = (usize, usize, usize);
    const REFERENCE: [(Triple, Triple); 10] = [
        ((60, 7, 1), (8, 0, 4)),
        ((60, 4, 3), (5, 0, 0)),
        ((50, 4, 3), (4, 0, 2)),
        ((40, 7, 3), (1, 2, 5)),
        ((100, 50, 2), (1, 0, 0)),
        ((100, 49, 2), (1, 0, 2)),
        ((1, 10, 10), (0, 0, 1)),
        ((0, 1, 1), (0, 0, 0)),
        ((1, 1, 1), (1, 0, 0)),
        ((8, 2, 3), (1, 1, 0)),
    ];

    #[test]
    fn matches_the_reference_table() {
        for ((n, l, b), (full, seqs, frames)) in REFERENCE {
            let o = BatchOutline::new(n, l, b);
            assert_eq!(
                (
                    o.full_batches,
                    o.full_sequences_in_last_batch,
                    o.frames_in_last_sequence
                ),
                (full, seqs, frames),
                "N={n} L={l} B={b}"
            );
        }
    }

    #[test]
    fn documented_example_67_frames_l5_b3() {
        let o = BatchOutline::new(67, 5, 3);
        assert_eq!(o.batches(), 5);
        let partial = o.sequence_lengths(5, 3, LastSequencePolicy::Partial);
        assert_eq!(
            partial,
            vec![
                vec![5, 5, 5],
                vec![5, 5, 5],
                vec![5, 5, 5],
                vec![5, 5, 5],
                vec![5, 2]
            ]
        );
        let pad = o.sequence_lengths(5, 3, LastSequencePolicy::Pad);
        assert_eq!(pad.last().unwrap(), &vec![5, 5]);
    }
}
