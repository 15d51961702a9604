//! A whole buffer through the operator: demux, decode, transforms and batching, with a configuration the
//! input's first bytes choose.
#![no_main]

#[path = "common.rs"]
mod common;

use framefeed::VideoInput;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((knobs, video)) = data.split_first_chunk::<{ common::KNOBS }>() else {
        return;
    };
    let Ok(input) = VideoInput::new(common::config(knobs)) else {
        return;
    };
    input
        .feed(bytes::Bytes::copy_from_slice(video))
        .expect("the queue takes one video");
    input.close();
    common::drain(&input);
});
