//! Feeding a [`FileList`]'s epoch into the operator (the list itself is a source: `source::files`).

use std::path::PathBuf;

use super::handle::VideoInput;
use crate::error::Result;
use crate::source::files::FileList;

/// What [`FileList::feed_epoch`] did.
#[derive(Debug, Default)]
pub struct EpochFeed {
    /// Files fed.
    pub fed: usize,
    /// Files that could not be read, with why (the others were fed).
    pub unreadable: Vec<(PathBuf, std::io::Error)>,
}

impl FileList {
    /// Reads and feeds this shard's files for `epoch` into `input`, in order, each labelled with its path;
    /// waits while the feed queue is full. Files that cannot be read are skipped and reported. Does not close
    /// the input. Fails only when the input is closed.
    pub fn feed_epoch(&self, input: &VideoInput, epoch: u64) -> Result<EpochFeed> {
        let mut report = EpochFeed::default();
        for path in self.epoch(epoch) {
            match std::fs::read(&path) {
                Ok(data) => {
                    input.feed((data, path.display().to_string()))?;
                    report.fed += 1;
                }
                Err(e) => report.unreadable.push((path, e)),
            }
        }
        Ok(report)
    }
}
