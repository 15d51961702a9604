//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`, never in a release build): the pure parsers
//! that see untrusted bytes before FFmpeg does, each with the invariants it must keep on any input.

/// The MP4 layout sniffer of live videos: decides, from a prefix of the bytes, whether more are needed, and
/// never asks for fewer bytes than it was given, nor answers differently when given more.
pub fn mp4_sniffer(bytes: &[u8]) {
    use crate::live::{sniff_mp4, Sniff};
    let whole = sniff_mp4(bytes);
    if let Sniff::NeedMore(n) = whole {
        assert!(n > bytes.len(), "asked for {n} bytes, had {}", bytes.len());
    }
    // Any shorter prefix either needs more bytes or already gives the same answer.
    for cut in [0, 1, 7, 8, 9, 16, bytes.len() / 2] {
        if cut < bytes.len() {
            match sniff_mp4(&bytes[..cut]) {
                Sniff::NeedMore(n) => assert!(n > cut),
                answer => assert_eq!(answer, whole, "prefix {cut}"),
            }
        }
    }
}

/// The sample-table check run on MP4 buffers before libavformat opens them: it must never panic, and it must
/// accept what it accepts whatever follows the file (it reads only the boxes).
pub fn mp4_claims(bytes: &[u8]) {
    let _ = crate::mp4_claims::check_sample_tables(bytes);
}
