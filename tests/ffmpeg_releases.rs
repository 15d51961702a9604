//! The FFmpeg releases the build takes and refuses (`build.rs`, included here for its pure rule): 5.1 to 7.x,
//! with a message naming the range and the release found otherwise. (CI builds on 5.1 and, in `.ci/debian13.sh`,
//! on 7.1; FFmpeg 4.3 in a Debian 11 chroot stopped with this message.)

#[allow(dead_code)]
#[path = "../build.rs"]
mod build_script;

/// An FFmpeg at `major.minor`: at least every release up to it.
fn ffmpeg(major: u32, minor: u32) -> impl Fn(&str) -> bool {
    move |release: &str| {
        let mut parts = release
            .trim_start_matches("ffmpeg_")
            .split('_')
            .map(|p| p.parse::<u32>().unwrap());
        let (a, b) = (parts.next().unwrap(), parts.next().unwrap());
        (a, b) <= (major, minor)
    }
}

#[test]
fn releases_from_5_1_to_7_1_are_taken() {
    for (major, minor) in [(5, 1), (6, 0), (6, 1), (7, 0), (7, 1)] {
        assert_eq!(
            build_script::refusal(&ffmpeg(major, minor)),
            None,
            "{major}.{minor}"
        );
    }
}

#[test]
fn older_and_newer_releases_are_refused_naming_the_range_and_the_one_found() {
    for (major, minor, found) in [
        (4, 3, "4.3.x"),
        (4, 4, "4.4.x"),
        (5, 0, "5.0.x"),
        (8, 0, "8.0.x"),
        (9, 0, "9.0.x"),
    ] {
        let message = build_script::refusal(&ffmpeg(major, minor)).expect("refused");
        assert!(message.contains("FFmpeg 5.1 to 7.1"), "{message}");
        assert!(
            message.contains(&format!("the FFmpeg found is {found}")),
            "{message}"
        );
    }
    let message = build_script::refusal(&|_: &str| false).expect("refused");
    assert!(message.contains("older than 3.0"), "{message}");
}
