//! MP4 (ISO BMFF) in the demux stage: an MP4's claims checked before libavformat acts on them (`claims`), a
//! live MP4 read one checked top-level box at a time (`live`), and a stream's first bytes sniffed for where its
//! index is (`sniff`). Their tests build boxes with one builder (`test_boxes`).

pub(crate) mod claims;
pub(crate) mod live;
pub(crate) mod sniff;
#[cfg(test)]
mod test_boxes;
