//! The MP4 box builder the demux stage's MP4 tests share (the integration tests' forge is
//! `tests/common/mp4_forge.rs`).

/// A box of `kind` around `payload`.
pub(crate) fn mp4_box(kind: &[u8; 4], payload: &[u8]) -> Vec<u8> {
    [
        ((payload.len() + 8) as u32).to_be_bytes().to_vec(),
        kind.to_vec(),
        payload.to_vec(),
    ]
    .concat()
}
