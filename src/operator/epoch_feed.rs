//! Feeding a [`FileList`]'s epoch into the operator (the list itself is a source: `source::files`).

use std::path::PathBuf;

use super::handle::VideoInput;
use crate::error::Result;
use crate::source::files::FileList;
use crate::video::Encoded;

/// What [`FileList::feed_epoch`] did.
#[derive(Debug, Default)]
pub struct EpochFeed {
    /// Files fed.
    pub fed: usize,
    /// Files that could not be read, with why (the others were fed).
    pub unreadable: Vec<(PathBuf, std::io::Error)>,
}

impl FileList {
    /// Feeds this shard's files for `epoch` into `input`, in order, each labelled with its path and placed at
    /// its position in the list and `epoch` ([`Encoded::position`]: random clips change per epoch); waits
    /// while the feed queue is full. Each file is opened here and read from disk as it is decoded
    /// ([`Encoded::file`]: never whole in memory). Files that cannot be opened are skipped and reported. Does
    /// not close the input. Fails only when the input is closed.
    pub fn feed_epoch(&self, input: &VideoInput, epoch: u64) -> Result<EpochFeed> {
        let mut report = EpochFeed::default();
        for (position, path) in self.epoch_positions(epoch) {
            match Encoded::file(&path) {
                Ok(video) => {
                    let video = video
                        .label(path.display().to_string())
                        .position(position as u64, epoch);
                    input.feed(video)?;
                    report.fed += 1;
                }
                Err(e) => report.unreadable.push((path, e)),
            }
        }
        Ok(report)
    }
}
