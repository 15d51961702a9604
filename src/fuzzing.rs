//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`, never in a release build): the pure parsers
//! that see untrusted bytes before FFmpeg does, each with the invariants it must keep on any input.

/// The MP4 layout sniffer of live videos: decides, from a prefix of the bytes, whether more are needed, and
/// never asks for fewer bytes than it was given, nor answers differently when given more.
pub fn mp4_sniffer(bytes: &[u8]) {
    use crate::demux::mp4::sniff::{sniff_mp4, Sniff};
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

/// The claims check run on MP4 buffers before libavformat opens them: it must never panic, and checking the
/// top-level boxes one by one (as a live stream is checked) must refuse whatever the whole buffer's check
/// refuses under the same bound.
pub fn mp4_claims(bytes: &[u8]) {
    use crate::demux::mp4::claims::{check_buffer, Bound, Claims, LavfTags};
    let _ = check_buffer(bytes, 1 << 16);
    let bound = Bound::live(1 << 16);
    let whole = Claims::new(bound, &LavfTags).top_level(bytes);
    let mut claims = Claims::new(bound, &LavfTags);
    let mut pos = 0usize;
    let mut one_by_one = Ok(());
    while one_by_one.is_ok() && pos + 8 <= bytes.len() {
        let size = u32::from_be_bytes(bytes[pos..pos + 4].try_into().expect("4 bytes")) as usize;
        if size < 8 || size == 1 {
            break;
        }
        let end = pos.saturating_add(size).min(bytes.len());
        one_by_one = claims.top_level(&bytes[pos..end]);
        pos = end;
    }
    if whole.is_err() && pos >= bytes.len() {
        assert!(one_by_one.is_err(), "whole: {whole:?}, box by box: ok");
    }
}

/// The range planner of remote videos (`source::ranges`): from any wanted and held ranges, requests that fetch
/// every wanted byte not held, never a held one, none past the object or over the request size, no two
/// overlapping, and no other byte but in a short gap between wanted ones.
pub fn range_planner(bytes: &[u8]) {
    crate::source::ranges::check_plan(bytes);
}
