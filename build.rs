//! The FFmpeg release framefeed is built against.
//!
//! `ffmpeg-sys-next` finds FFmpeg (pkg-config, or `FFMPEG_DIR`) and publishes which releases the found
//! libavcodec is at least as new as (`DEP_FFMPEG_FFMPEG_<major>_<minor>=true`). This script hands those to the
//! crate as `cfg(ffmpeg_<major>_<minor>)`, which only `src/ffi/` reads (the few fields that moved between
//! releases), and refuses a release outside the supported range with a message that names it.

use std::env;

/// The releases `src/ffi/` may ask about, oldest first.
const SEAMS: [&str; 5] = [
    "ffmpeg_5_1",
    "ffmpeg_6_0",
    "ffmpeg_6_1",
    "ffmpeg_7_0",
    "ffmpeg_7_1",
];
/// Every release `ffmpeg-sys-next` 9 reports, oldest first (to name the one found).
const KNOWN: [&str; 19] = [
    "ffmpeg_3_0",
    "ffmpeg_3_1",
    "ffmpeg_3_2",
    "ffmpeg_3_3",
    "ffmpeg_3_4",
    "ffmpeg_4_0",
    "ffmpeg_4_1",
    "ffmpeg_4_2",
    "ffmpeg_4_3",
    "ffmpeg_4_4",
    "ffmpeg_5_0",
    "ffmpeg_5_1",
    "ffmpeg_6_0",
    "ffmpeg_6_1",
    "ffmpeg_7_0",
    "ffmpeg_7_1",
    "ffmpeg_8_0",
    "ffmpeg_8_1",
    "ffmpeg_9_0",
];
/// The oldest supported release, and the first one too new.
const OLDEST: &str = "ffmpeg_5_1";
const TOO_NEW: &str = "ffmpeg_8_0";

/// Whether the FFmpeg found is at least `release`.
fn at_least(release: &str) -> bool {
    env::var(format!("DEP_FFMPEG_{}", release.to_uppercase())).as_deref() == Ok("true")
}

/// `ffmpeg_7_1` as `7.1`.
fn dotted(release: &str) -> String {
    release.trim_start_matches("ffmpeg_").replace('_', ".")
}

/// Why an FFmpeg that is at least each release `at_least` says is not supported, or `None` when it is.
pub(crate) fn refusal(at_least: &dyn Fn(&str) -> bool) -> Option<String> {
    if at_least(OLDEST) && !at_least(TOO_NEW) {
        return None;
    }
    let found = KNOWN.iter().rev().find(|r| at_least(r)).map_or_else(
        || "older than 3.0".to_string(),
        |r| format!("{}.x", dotted(r)),
    );
    Some(format!(
        "framefeed builds against FFmpeg {} to 7.1 (libavcodec 59.37 to 61.x); the FFmpeg found is {found}. \
         Install a supported release's development files (Debian 12: libavcodec-dev, 5.1; Debian 13: 7.1) or \
         point FFMPEG_DIR / PKG_CONFIG_PATH at one, or install the self-contained wheel \
         (python/build-wheel.sh), which carries its own FFmpeg.",
        dotted(OLDEST)
    ))
}

#[allow(dead_code)] // tests/ffmpeg_releases.rs includes this file for `refusal`, not for `main`.
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for seam in SEAMS {
        println!("cargo::rustc-check-cfg=cfg({seam})");
        if at_least(seam) {
            println!("cargo::rustc-cfg={seam}");
        }
    }
    if let Some(message) = refusal(&at_least) {
        println!("cargo::error={message}");
    }
}
