//! A test that needs what a machine may lack (the `ffmpeg` CLI, the shared corpus, a GPU) skips with a printed
//! reason on a developer's machine and fails where `FRAMEFEED_REQUIRE` names that need (CI sets
//! `FRAMEFEED_REQUIRE=ffmpeg,corpus`, as it installs both).
mod common;

use std::process::Command;

use common::{names, Need};

#[test]
fn the_require_list_names_each_need_or_all() {
    let all = [Need::Ffmpeg, Need::Corpus, Need::Gpu, Need::HugePages];
    for (list, named) in [
        ("ffmpeg,corpus", &[Need::Ffmpeg, Need::Corpus][..]),
        ("corpus,hugepages", &[Need::Corpus, Need::HugePages][..]),
        (" gpu ", &[Need::Gpu][..]),
        ("all", &all[..]),
        ("torch", &[][..]),
        ("", &[][..]),
    ] {
        for need in all {
            assert_eq!(
                names(list, need),
                named.contains(&need),
                "{list:?} {need:?}"
            );
        }
    }
}

/// The same test binary with no `ffmpeg` on its PATH: a test that needs it passes as a printed skip, and fails
/// once `FRAMEFEED_REQUIRE` names `ffmpeg`.
#[test]
fn a_missing_need_is_a_printed_skip_unless_required() {
    let me = std::env::current_exe().unwrap();
    let run = |require: &str| {
        Command::new(&me)
            .args([
                "--exact",
                "needs_ffmpeg",
                "--nocapture",
                "--include-ignored",
            ])
            .env("PATH", "/nonexistent")
            .env("FRAMEFEED_REQUIRE", require)
            .env("FRAMEFEED_RUN_NEEDS_FFMPEG", "1")
            .output()
            .unwrap()
    };
    let skipped = run("");
    let text = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "{text}");
    assert!(
        text.contains("SKIPPED: the ffmpeg CLI is absent; the probe test did not run"),
        "{text}"
    );
    let failed = run("corpus,ffmpeg");
    let text = String::from_utf8_lossy(&failed.stdout) + String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success(), "{text}");
    assert!(
        text.contains("FRAMEFEED_REQUIRE names ffmpeg but the ffmpeg CLI is absent"),
        "{text}"
    );
}

/// Run only by the test above (in a child process with no `ffmpeg`).
#[test]
#[ignore = "run by a_missing_need_is_a_printed_skip_unless_required in a child process"]
fn needs_ffmpeg() {
    assert_eq!(
        std::env::var("FRAMEFEED_RUN_NEEDS_FFMPEG").as_deref(),
        Ok("1")
    );
    if common::skip_without_ffmpeg("the probe test") {
        return;
    }
    panic!("ffmpeg was found on a PATH of /nonexistent");
}
