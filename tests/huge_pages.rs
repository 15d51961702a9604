//! `Config::huge_pages`: batch buffers on the system's reserved huge pages. In a test binary of its own: its
//! 24 MiB batches would show as growth in `polling.rs`'s resident-memory test running beside it.

mod common;

use common::*;
use framefeed::{Config, Resize, Transforms, VideoInput};

/// `Config::huge_pages`: the same bytes, and the system's reserved huge pages taken where it has them free
/// (`sysctl vm.nr_hugepages=N`); ordinary memory (and one warning) where it has not.
#[test]
fn batches_on_reserved_huge_pages_are_the_same_bytes() {
    // 2 frames of 2048x2048 RGB: 24 MiB a batch, big enough for huge pages.
    let config = || {
        Config::new(2, 1).transforms(Transforms::new().resize(Resize::Exact {
            width: 2048,
            height: 2048,
        }))
    };
    let free_before = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m
                .lines()
                .find(|l| l.starts_with("HugePages_Free:"))?
                .to_owned();
            line["HugePages_Free:".len()..].trim().parse::<u64>().ok()
        })
        .unwrap_or(0);
    let decode = |config: Config| {
        let input = VideoInput::new(config).unwrap();
        input.feed(read_fixture("h264.mp4")).unwrap();
        input.close();
        let frames: Vec<Vec<u8>> = input.iter().map(|b| b.unwrap().data().to_vec()).collect();
        (frames, input.huge_page_allocations())
    };
    let (plain, none) = decode(config());
    let (huge, taken) = decode(config().huge_pages(true));
    assert_eq!(none, 0, "huge pages without the setting");
    assert!(!plain.is_empty());
    assert!(plain == huge, "batches on huge pages differ");
    // Two buffers of 13 pages each at most (a batch, the one being filled), with room for other tests.
    if free_before >= 64 {
        assert!(
            taken >= 1,
            "{free_before} huge pages were free, no buffer took them"
        );
    } else {
        assert_eq!(
            taken, 0,
            "no huge pages free, yet {taken} buffers took them"
        );
        missing(
            Need::HugePages,
            "the huge-page half of the huge page test (the fallback to ordinary memory was tested)",
            &format!("{free_before} reserved huge pages are free (sysctl vm.nr_hugepages=64)"),
        );
    }
}
