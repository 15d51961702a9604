//! Fallible, lazily zeroed allocation of large buffers: `vec![0; n]` aborts the process when the system
//! refuses the memory, and `Vec::try_reserve` followed by a fill writes every page at once (for a batch buffer
//! of hundreds of MB, a pass of writes the decoder would make anyway). This asks the global allocator for
//! zeroed memory (calloc: fresh pages from the system are zero without being written) and gives `None` when it
//! is refused.

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
    // SAFETY: `ptr` was allocated by the global allocator with exactly the layout of `len` u32 (the layout a
    // Vec<u32> of capacity `len` deallocates with), and all `len` elements are initialised (zero is a valid
    // u32).
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
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
    }
}
