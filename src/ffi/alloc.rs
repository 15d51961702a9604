//! Fallible, lazily zeroed allocation of large buffers: `vec![0; n]` aborts the process when the system
//! refuses the memory, and `Vec::try_reserve` followed by a fill writes every page at once (for a batch buffer
//! of hundreds of MB, a pass of writes the decoder would make anyway). This asks the global allocator for
//! zeroed memory (calloc: fresh pages from the system are zero without being written) and gives `None` when it
//! is refused.
//!
//! Large buffers are advised for transparent huge pages (`MADV_HUGEPAGE`, for systems in THP's `madvise`
//! mode): the first touch of a fresh buffer then takes one fault per 2 MiB instead of one per 4 KiB (a 1.6 GB
//! 4K batch: 800 faults, not 400,000), which is most of what a big fresh batch cost beyond the decoding.

use std::alloc::{alloc_zeroed, Layout};

/// A `Vec<u32>` of `len` zeros, or `None` when the memory cannot be had (or `len` words overflow `isize`).
pub(crate) fn zeroed_words(len: usize) -> Option<Vec<u32>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = Layout::array::<u32>(len).ok()?;
    // SAFETY: the layout has a non-zero size (len > 0).
    let ptr = unsafe { alloc_zeroed(layout) } as *mut u32;
    if ptr.is_null() {
        return None;
    }
    advise_huge_pages(ptr.cast(), layout.size());
    // SAFETY: `ptr` was allocated by the global allocator with exactly the layout of `len` u32 (the layout a
    // Vec<u32> of capacity `len` deallocates with), and all `len` elements are initialised (zero is a valid
    // u32).
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// The size of a transparent huge page on x86-64 and most aarch64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// Advises the whole huge pages inside `[ptr, ptr + len)` for transparent huge pages. Only advice: where the
/// kernel has no THP, or refuses, nothing changes.
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize + len) / HUGE_PAGE * HUGE_PAGE;
    if end <= start {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: `[start, end)` lies inside an allocation we own and is page-aligned; MADV_HUGEPAGE changes only
    // how the kernel backs the range, never its contents (zero pages stay zero), and failure is harmless.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn large_buffers_are_advised_for_huge_pages() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if !thp.contains("[madvise]") && !thp.contains("[always]") {
            println!("skipped: transparent huge pages are off here ({thp:?})");
            return;
        }
        let mut v = zeroed_words(16 << 20); // 64 MiB
        let v = v.as_mut().unwrap();
        v.iter_mut().step_by(1024).for_each(|w| *w = 1); // touch every 4 KiB
                                                         // madvise splits the mapping: the advised, 2 MiB-aligned middle is its own mapping.
        let start = (v.as_ptr() as usize).next_multiple_of(HUGE_PAGE);
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        // The mapping holding the buffer reports huge pages (AnonHugePages) once touched.
        let mut in_buffer = false;
        let mut huge_kib = 0;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((a, b)) = range.split_once('-') {
                    if let (Ok(a), Ok(b)) =
                        (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                    {
                        in_buffer = a <= start && start < b;
                        continue;
                    }
                }
            }
            if in_buffer {
                if let Some(kib) = line.strip_prefix("AnonHugePages:") {
                    huge_kib = kib.trim().trim_end_matches(" kB").parse::<usize>().unwrap();
                }
            }
        }
        assert!(
            huge_kib >= 32 << 10,
            "only {huge_kib} KiB of huge pages in a touched 64 MiB buffer"
        );
    }

    #[test]
    fn zeroed_or_refused_never_aborts() {
        let v = zeroed_words(1 << 20).unwrap();
        assert_eq!((v.len(), v.capacity()), (1 << 20, 1 << 20));
        assert!(v.iter().all(|&w| w == 0));
        assert_eq!(zeroed_words(0).unwrap().len(), 0);
        // More than the address space: refused, not an abort.
        assert!(zeroed_words(usize::MAX / 2).is_none());
        assert!(zeroed_words(usize::MAX / 8).is_none());
    }
}
