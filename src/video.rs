//! Who a video is: the id the operator gives it, the label its feeder gives it, and the two together as they
//! travel with its batches and errors. A leaf module: the feed queue, live input, batches and errors all use it.

use std::fmt;

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

/// Which video an error is about: its id and, when the caller gave one, its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VideoRef {
    /// The id [`VideoInput::feed`](crate::VideoInput::feed) returned.
    pub id: VideoId,
    /// The caller's label, if any.
    pub label: Option<Label>,
}

impl fmt::Display for VideoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.label {
            Some(label) => write!(f, "video {} ({label})", self.id),
            None => write!(f, "video {}", self.id),
        }
    }
}
