//! The range planner of remote videos: what a sampling plan's byte ranges become as requests.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    framefeed::fuzzing::range_planner(data);
});
