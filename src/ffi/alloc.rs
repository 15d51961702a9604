//! Fallible, lazily zeroed allocation of large buffers: `vec![0; n]` aborts the process when the system
//! refuses the memory, and `Vec::try_reserve` followed by a fill writes every page at once (for a batch buffer
//! of hundreds of MB, a pass of writes the decoder would make anyway). This asks the global allocator for
//! zeroed memory (calloc: fresh pages from the system are zero without being written) and gives `None` when it
//! is refused.
//!
//! [`Words`] is such a buffer, or, when asked for, a mapping of the system's reserved huge pages
//! (`vm.nr_hugepages`, Linux's hugetlb pool): pages of 2 MiB that the kernel keeps apart from ordinary memory,
//! so that a fresh buffer is faulted in 512 times fewer times, and on a virtual machine whose free pages go back
//! to the host (free page reporting) the pages stay backed by the host between uses.

use std::alloc::{alloc_zeroed, Layout};
use std::ptr::NonNull;
use std::sync::OnceLock;

/// Gives the memory the heap holds free back to the system (glibc's `malloc_trim(0)`). What FFmpeg's decoders
/// and the batch buffers freed otherwise stays in the allocator's arenas (one per thread that allocated), so a
/// long-running process would stay at its peak after a burst. It walks the free lists, so it is for idle
/// moments; a no-op where the C library is not glibc.
// The service (feature `server`) calls it when idle.
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and only returns the allocator's own free pages to the system; it
    // is thread-safe (it locks each arena).
    unsafe {
        libc::malloc_trim(0);
    }
}

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
    // SAFETY: `ptr` was allocated by the global allocator with exactly the layout of `len` u32 (the layout a
    // Vec<u32> of capacity `len` deallocates with), and all `len` elements are initialised (zero is a valid
    // u32).
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// Buffers of fewer than this many huge pages never take huge pages: rounding up to whole pages wastes less
/// than a quarter of the mapping from this size on.
const MIN_HUGE_PAGES: usize = 4;

/// The system's default huge page size in bytes (`Hugepagesize` in `/proc/meminfo`, the size `MAP_HUGETLB`
/// maps), or `None` where the system has none (not Linux, or a kernel without hugetlb).
pub(crate) fn huge_page_size() -> Option<usize> {
    static SIZE: OnceLock<Option<usize>> = OnceLock::new();
    *SIZE.get_or_init(|| {
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        parse_huge_page_size(&meminfo)
    })
}

/// The length in bytes of the huge-page mapping [`Words::zeroed`] makes for `words` u32 (whole huge pages), or
/// `None` where the buffer is below [`MIN_HUGE_PAGES`] of them (or the system has no huge pages).
pub(crate) fn huge_mapping_bytes(words: usize) -> Option<usize> {
    let page = huge_page_size()?;
    let bytes = words.checked_mul(4)?.checked_next_multiple_of(page)?;
    (bytes >= MIN_HUGE_PAGES * page && bytes <= isize::MAX as usize).then_some(bytes)
}

/// The value of `key` in `/proc/meminfo`'s text (`Hugepagesize:  2048 kB` → `2048 kB`).
fn meminfo_value<'a>(meminfo: &'a str, key: &str) -> Option<&'a str> {
    let line = meminfo
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))?;
    Some(line.trim())
}

/// `Hugepagesize:  2048 kB` → 2 MiB.
fn parse_huge_page_size(meminfo: &str) -> Option<usize> {
    let mut words = meminfo_value(meminfo, "Hugepagesize")?.split_whitespace();
    let kib: usize = words.next()?.parse().ok()?;
    (words.next()? == "kB").then_some(())?;
    kib.checked_mul(1024).filter(|&b| b.is_power_of_two())
}

/// A mapping of reserved huge pages, unmapped on drop.
struct HugeMapping {
    ptr: NonNull<u32>,
    /// The mapping's length: a whole number of huge pages.
    bytes: usize,
}

// SAFETY: the mapping is owned by this value alone (nothing else holds its address), like a Vec's memory.
unsafe impl Send for HugeMapping {}
// SAFETY: shared references only read through `&[u32]` views; writes need `&mut`.
unsafe impl Sync for HugeMapping {}

impl HugeMapping {
    /// At least `words` u32 of reserved huge pages, or `None` when the system has none free (or none at all).
    fn new(words: usize) -> Option<Self> {
        let bytes = huge_mapping_bytes(words)?;
        // SAFETY: an anonymous mapping at an address of the kernel's choosing touches no existing memory.
        // MAP_SHARED: a process forked from this one shares the pages instead of copying them on write (a copy
        // of a private huge page that finds the pool empty is a SIGBUS in the child). Without MAP_NORESERVE
        // the kernel reserves every page now, so the call fails (ENOMEM) rather than a later fault.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        Some(Self {
            ptr: NonNull::new(ptr.cast())?,
            bytes,
        })
    }

    fn words(&self) -> usize {
        self.bytes / 4
    }

    fn as_slice(&self) -> &[u32] {
        // SAFETY: the mapping is `bytes` long, readable, page-aligned and initialised (the kernel zeroes fresh
        // pages; later contents are u32 written through `as_mut_slice`); it lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.words()) }
    }

    fn as_mut_slice(&mut self) -> &mut [u32] {
        // SAFETY: as in `as_slice`, and `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.words()) }
    }
}

impl Drop for HugeMapping {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `bytes` are the mapping made in `new`, unmapped only here; no view outlives `self`.
        // The pages go back to the system's huge page pool. A failure (impossible for a whole mapping) leaks.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.bytes) };
    }
}

enum Memory {
    Heap(Vec<u32>),
    Huge(HugeMapping),
}

/// A buffer of u32 words with a fixed capacity, from the global allocator or from reserved huge pages.
pub(crate) struct Words {
    memory: Memory,
    /// The words in use, at most the capacity.
    len: usize,
}

/// An empty buffer (what a pooled buffer leaves behind when its memory goes back to the pool).
impl Default for Words {
    fn default() -> Self {
        Self {
            memory: Memory::Heap(Vec::new()),
            len: 0,
        }
    }
}

impl Words {
    /// `len` words, zero when fresh. With `huge_pages`, reserved huge pages when the buffer is at least
    /// [`MIN_HUGE_PAGES`] of them and the system has that many free, else (and without) the global
    /// allocator's memory. `None` when neither can be had.
    pub(crate) fn zeroed(len: usize, huge_pages: bool) -> Option<Self> {
        if huge_pages {
            if let Some(mapping) = HugeMapping::new(len) {
                return Some(Self {
                    memory: Memory::Huge(mapping),
                    len,
                });
            }
        }
        Some(Self {
            memory: Memory::Heap(zeroed_words(len)?),
            len,
        })
    }

    /// Whether the buffer is on reserved huge pages.
    pub(crate) fn is_huge(&self) -> bool {
        matches!(self.memory, Memory::Huge(_))
    }

    /// The most words the buffer can hold without a new allocation.
    pub(crate) fn capacity(&self) -> usize {
        match &self.memory {
            Memory::Heap(v) => v.capacity(),
            Memory::Huge(m) => m.words(),
        }
    }

    /// Resizes to `len` words, at most [`capacity`](Self::capacity) (which the caller checked): never
    /// reallocates. The words past the old length keep what they held (zero, or earlier contents).
    pub(crate) fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.capacity());
        let len = len.min(self.capacity());
        if let Memory::Heap(v) = &mut self.memory {
            v.resize(len, 0);
        }
        self.len = len;
    }

    /// The words in use.
    pub(crate) fn as_slice(&self) -> &[u32] {
        match &self.memory {
            Memory::Heap(v) => &v[..self.len],
            Memory::Huge(m) => &m.as_slice()[..self.len],
        }
    }

    /// The words in use, writable.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u32] {
        match &mut self.memory {
            Memory::Heap(v) => &mut v[..self.len],
            Memory::Huge(m) => &mut m.as_mut_slice()[..self.len],
        }
    }
}

/// The system's free reserved huge pages (`HugePages_Free` in `/proc/meminfo`), for tests.
#[cfg(test)]
pub(crate) fn free_huge_pages() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_value(&meminfo, "HugePages_Free")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_or_refused_never_aborts() {
        let v = zeroed_words(1 << 20).unwrap();
        assert_eq!((v.len(), v.capacity()), (1 << 20, 1 << 20));
        assert!(v.iter().all(|&w| w == 0));
        assert_eq!(zeroed_words(0).unwrap().len(), 0);
        // More than the address space: refused, not an abort. (`black_box` keeps an optimized build from
        // eliding an allocation whose result is only tested, which would make it "succeed".)
        assert!(std::hint::black_box(zeroed_words(usize::MAX / 2)).is_none());
        assert!(std::hint::black_box(zeroed_words(usize::MAX / 8)).is_none());
        assert!(std::hint::black_box(Words::zeroed(usize::MAX / 8, true)).is_none());
    }

    #[test]
    fn the_huge_page_size_is_read_from_meminfo() {
        let meminfo =
            "MemTotal: 1 kB\nHugePages_Free:  3\nHugepagesize:       2048 kB\nHugetlb: 0 kB\n";
        assert_eq!(parse_huge_page_size(meminfo), Some(2 << 20));
        assert_eq!(
            parse_huge_page_size("Hugepagesize: 1048576 kB\n"),
            Some(1 << 30)
        );
        assert_eq!(parse_huge_page_size("Hugepagesize: 3000 kB\n"), None);
        assert_eq!(parse_huge_page_size("Hugepagesize: 2048 MB\n"), None);
        assert_eq!(parse_huge_page_size("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn small_buffers_and_buffers_without_huge_pages_come_from_the_heap() {
        let mut w = Words::zeroed(1000, true).unwrap();
        assert!(!w.is_huge(), "1000 words are far below four huge pages");
        assert!(w.as_slice().iter().all(|&x| x == 0));
        w.as_mut_slice()[999] = 7;
        w.set_len(10);
        assert_eq!(w.as_slice().len(), 10);
        w.set_len(1000);
        assert_eq!(
            w.as_slice()[999],
            0,
            "a heap buffer grown again is zero past its length"
        );
        let big = Words::zeroed(8 << 20, false).unwrap();
        assert!(!big.is_huge(), "huge pages not asked for");
        assert_eq!(big.as_slice().len(), 8 << 20);
    }

    /// Runs where the system has reserved huge pages free (`sysctl vm.nr_hugepages`); says so and returns
    /// where it has not.
    #[test]
    fn a_buffer_on_reserved_huge_pages_is_zeroed_resizable_and_given_back() {
        let Some(page) = huge_page_size() else {
            eprintln!("skipped: this system has no huge pages");
            return;
        };
        let words = MIN_HUGE_PAGES * page / 4 + 1; // one word more than four pages: five are mapped
        let pages = MIN_HUGE_PAGES + 1;
        let before = free_huge_pages().unwrap_or(0);
        if before < pages {
            eprintln!("skipped: {before} reserved huge pages free, {pages} needed (sysctl vm.nr_hugepages)");
            return;
        }
        let mut w = Words::zeroed(words, true).unwrap();
        assert!(w.is_huge());
        assert_eq!(w.capacity(), pages * page / 4);
        assert!(w.as_slice().iter().all(|&x| x == 0));
        assert_eq!(w.as_slice().len(), words);
        for (i, x) in w.as_mut_slice().iter_mut().enumerate() {
            *x = i as u32;
        }
        w.set_len(w.capacity());
        assert_eq!(w.as_slice()[words - 1], words as u32 - 1);
        assert_eq!(w.as_slice()[words], 0);
        // Other processes may take or give back pages meanwhile: the mapping's own pages are the check.
        let during = free_huge_pages().unwrap();
        drop(w);
        let after = free_huge_pages().unwrap();
        assert!(
            after >= during + pages || after >= before,
            "the mapping's {pages} huge pages were not given back ({before} free before, {during} during, {after} after)"
        );
    }
}
