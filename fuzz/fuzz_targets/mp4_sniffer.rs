//! The MP4 layout sniffer of live videos and the sample-table check of whole MP4 buffers: the two parsers that
//! read MP4 boxes before libavformat does.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    framefeed::fuzzing::mp4_sniffer(data);
    framefeed::fuzzing::mp4_claims(data);
});
