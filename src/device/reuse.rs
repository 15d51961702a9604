//! Reusing idle buffers, for the host pool (`assembly::pool`) and the device pool (`cuda.rs`) alike.

/// Takes the smallest idle buffer whose `size` is at least `len`, if any (host and device pools).
pub(crate) fn take_best_fit<T>(
    free: &mut Vec<T>,
    len: usize,
    size: impl Fn(&T) -> usize,
) -> Option<T> {
    let best = free
        .iter()
        .enumerate()
        .filter(|(_, b)| size(b) >= len)
        .min_by_key(|(_, b)| size(b))
        .map(|(i, _)| i);
    best.map(|i| free.swap_remove(i))
}
