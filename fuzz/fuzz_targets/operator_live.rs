//! The same bytes pushed as live chunks at boundaries the input chooses: after the configuration bytes, the
//! input is a sequence of chunks, each a length byte followed by that many bytes (the last one takes what is
//! left).
#![no_main]

#[path = "common.rs"]
mod common;

use framefeed::VideoInput;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((knobs, mut rest)) = data.split_first_chunk::<{ common::KNOBS }>() else {
        return;
    };
    let config = common::config(knobs)
        .low_latency()
        .live_buffer_bytes(64 << 10);
    let Ok(input) = VideoInput::new(config) else {
        return;
    };
    let live = input
        .feed_live_with_label("fuzz")
        .expect("the queue takes one video");
    input.close();
    while let Some((&len, tail)) = rest.split_first() {
        let n = usize::from(len).min(tail.len());
        if live
            .push(bytes::Bytes::copy_from_slice(&tail[..n]))
            .is_err()
        {
            // The video failed already: its error comes through the polls.
            break;
        }
        rest = &tail[n..];
    }
    live.finish();
    common::drain(&input);
});
