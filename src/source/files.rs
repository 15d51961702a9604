//! A file-list source for training loops: a list of video paths, optionally shuffled with a seed each epoch and
//! split into shards (one per data-parallel worker), fed to an operator epoch by epoch.

use std::path::PathBuf;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};

/// The videos of one training run: which files each epoch feeds, in which order, on this shard.
///
/// Each epoch, the whole list is shuffled (when asked) with a permutation drawn from the seed and the epoch
/// number, identical on every shard, then cut into `num_shards` contiguous parts of sizes differing by at most
/// one: every file is in exactly one shard each epoch (as PyTorch's `DistributedSampler` does, without
/// padding). Without shuffling the list's order is kept.
///
/// ```no_run
/// use framefeed::{Config, FileList, VideoInput};
/// let files = FileList::new(["a.mp4", "b.mp4", "c.mkv"]).shuffle(42).shard(0, 2)?;
/// for epoch in 0..10 {
///     let input = VideoInput::new(Config::new(16, 4))?;
///     std::thread::scope(|s| {
///         s.spawn(|| { let _ = files.feed_epoch(&input, epoch); input.close(); });
///         for batch in input.iter() { /* train on batch? */ }
///     });
/// }
/// # Ok::<(), framefeed::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileList {
    files: Vec<PathBuf>,
    seed: Option<u64>,
    shard_id: usize,
    num_shards: usize,
}

impl FileList {
    /// The files, in this order, unshuffled, one shard.
    pub fn new<P: Into<PathBuf>>(files: impl IntoIterator<Item = P>) -> Self {
        Self {
            files: files.into_iter().map(Into::into).collect(),
            seed: None,
            shard_id: 0,
            num_shards: 1,
        }
    }

    /// Shuffle every epoch with a permutation drawn from `seed` and the epoch number.
    pub fn shuffle(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Keep only shard `shard_id` of `num_shards`. Allowed: `num_shards` at least 1, `shard_id` below it.
    pub fn shard(mut self, shard_id: usize, num_shards: usize) -> Result<Self> {
        if num_shards == 0 || shard_id >= num_shards {
            return Err(Error::Config(format!(
                "shard_id is {shard_id} and num_shards is {num_shards}; allowed: num_shards >= 1 and shard_id from 0 to num_shards - 1"
            )));
        }
        self.shard_id = shard_id;
        self.num_shards = num_shards;
        Ok(self)
    }

    /// Number of files in the whole list (all shards).
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// This shard's files for `epoch`, in feeding order.
    pub fn epoch(&self, epoch: u64) -> Vec<PathBuf> {
        self.epoch_positions(epoch)
            .into_iter()
            .map(|(_, path)| path)
            .collect()
    }

    /// This shard's files for `epoch`, in feeding order, each with its position in the list.
    pub(crate) fn epoch_positions(&self, epoch: u64) -> Vec<(usize, PathBuf)> {
        let mut order: Vec<usize> = (0..self.files.len()).collect();
        if let Some(seed) = self.seed {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(epoch);
            // Fisher-Yates, drawing each index without modulo bias worth caring about (64-bit draws).
            for i in (1..order.len()).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                order.swap(i, j);
            }
        }
        let n = order.len();
        let start = self.shard_id * n / self.num_shards;
        let end = (self.shard_id + 1) * n / self.num_shards;
        order[start..end]
            .iter()
            .map(|&i| (i, self.files[i].clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn list(n: usize) -> FileList {
        FileList::new((0..n).map(|i| format!("{i}.mp4")))
    }

    #[test]
    fn epochs_shuffle_by_seed_and_keep_order_without() {
        let l = list(50);
        assert_eq!(l.epoch(0), l.epoch(7), "no shuffle: the list's order");
        assert_eq!(
            l.epoch(0)[..3],
            ["0.mp4", "1.mp4", "2.mp4"].map(PathBuf::from)
        );
        let s = l.clone().shuffle(1);
        assert_eq!(s.epoch(3), s.epoch(3), "same seed and epoch, same order");
        assert_ne!(s.epoch(3), s.epoch(4), "epochs differ");
        assert_ne!(s.epoch(3), l.clone().shuffle(2).epoch(3), "seeds differ");
        let mut sorted = s.epoch(3);
        sorted.sort();
        let mut all = l.epoch(0);
        all.sort();
        assert_eq!(sorted, all, "a permutation");
    }

    #[test]
    fn bad_shards_are_rejected() {
        let err = list(3).shard(2, 2).unwrap_err().to_string();
        assert!(err.contains("shard_id is 2 and num_shards is 2"), "{err}");
        assert!(list(3).shard(0, 0).is_err());
    }

    proptest! {
        #[test]
        fn every_file_in_exactly_one_shard_each_epoch(n in 0usize..200, shards in 1usize..9, seed: u64, epoch in 0u64..5) {
            let mut seen: Vec<PathBuf> = Vec::new();
            let mut sizes = Vec::new();
            for id in 0..shards {
                let part = list(n).shuffle(seed).shard(id, shards).unwrap().epoch(epoch);
                sizes.push(part.len());
                seen.extend(part);
            }
            seen.sort();
            let mut all = list(n).epoch(0);
            all.sort();
            prop_assert_eq!(seen, all);
            prop_assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        }
    }
}
