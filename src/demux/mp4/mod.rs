//! MP4 (ISO BMFF) in the demux stage: its boxes read as libavformat reads them (`boxes`), an MP4's claims checked before libavformat acts on them (`claims`), a
//! live MP4 read one checked top-level box at a time (`live`), a stream's first bytes sniffed for where its
//! index is (`sniff`), and a track's sample tables read for what libavformat's index leaves out (`tables`).
//! Their tests build boxes with one builder (`test_boxes`).

pub(crate) mod boxes;
pub(crate) mod claims;
pub(crate) mod live;
pub(crate) mod sniff;
pub(crate) mod tables;
#[cfg(test)]
mod test_boxes;
