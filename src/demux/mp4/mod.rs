//! MP4 (ISO BMFF) in the demux stage: an MP4's claims checked before libavformat acts on them (`claims`), and a
//! live MP4 read one checked top-level box at a time (`live`).

pub(crate) mod claims;
pub(crate) mod live;
