//! The feed queue: encoded videos waiting to be decoded, with their ids and labels.

use std::fmt;

use bytes::Bytes;

/// The id [`VideoInput::feed`](crate::VideoInput::feed) gives a video: 0, 1, 2... in feeding order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VideoId(pub u64);

impl fmt::Display for VideoId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A caller-chosen label that travels with a video to its batches and errors (the reference's `data_id`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Label {
    /// A text label, e.g. a file name.
    Text(String),
    /// A numeric label, e.g. a row id.
    Number(u64),
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Text(s) => f.write_str(s),
            Label::Number(n) => write!(f, "{n}"),
        }
    }
}

impl From<String> for Label {
    fn from(s: String) -> Self {
        Label::Text(s)
    }
}

impl From<&str> for Label {
    fn from(s: &str) -> Self {
        Label::Text(s.to_owned())
    }
}

impl From<u64> for Label {
    fn from(n: u64) -> Self {
        Label::Number(n)
    }
}

/// One fed video, waiting in the queue for the decoding thread.
#[derive(Debug)]
pub(crate) struct QueuedVideo {
    pub(crate) video: crate::error::VideoRef,
    pub(crate) data: Bytes,
}
