//! The service's parsing of what a client sends: HTTP framing (the CL+TE check) over bytes cut anywhere, the
//! `POST /videos` query string into a configuration, and the tokens file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    framefeed::server::fuzzing::request_bytes(data);
});
