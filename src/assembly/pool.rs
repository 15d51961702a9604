//! Output buffers: recycled through a pool, so that the steady state allocates no frame memory per batch.
//! Buffers are stored as 32-bit words, so that they can be viewed as bytes or, 4-byte aligned, as `f32`.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::device::take_best_fit;
use crate::error::VideoError;
use crate::ffi::alloc::Words;

/// Spare bytes after every buffer (see [`BufferPool::acquire`]).
const SLACK: usize = crate::ffi::scale::WRITE_SLACK;

/// Requests below this size never wait for a buffer to come back (see [`return_wait`]).
const WAIT_FROM_BYTES: usize = 16 << 20;

/// The longest [`BufferPool::acquire`] waits for a buffer in use to come back before allocating a new one.
const MAX_RETURN_WAIT: Duration = Duration::from_millis(50);

/// How long a request of `len` bytes may wait for a buffer in use to come back (see [`BufferPool::acquire`]):
/// none below [`WAIT_FROM_BYTES`], then 1 ms per 8 MiB up to [`MAX_RETURN_WAIT`]. A fresh buffer costs at
/// least 0.3 ms per MiB on the thread that first writes it (the kernel faults in and zeroes every page; see
/// `benches/RESULTS.md`), so a wait that finds a buffer saves several times what it costs, and one that does not
/// costs at most a small part of the allocation that follows.
fn return_wait(len: usize) -> Duration {
    if len < WAIT_FROM_BYTES {
        return Duration::ZERO;
    }
    let ms = u64::try_from(len >> 23).unwrap_or(u64::MAX);
    Duration::from_millis(ms).min(MAX_RETURN_WAIT)
}

struct PoolInner {
    free: Mutex<Vec<Words>>,
    /// Signalled when a buffer comes back.
    returned: Condvar,
    /// Buffers handed out and not yet back.
    in_use: AtomicUsize,
    /// The most idle buffers kept; more coming back are freed. Only raised (see
    /// [`BufferPool::keep_idle_at_least`]).
    max_free: AtomicUsize,
    /// How long a large request waits for a buffer in use to come back, when not [`return_wait`] (tests).
    fixed_wait: Option<Duration>,
    /// Whether new buffers try the system's reserved huge pages first.
    huge_pages: bool,
    allocations: AtomicU64,
    huge_allocations: AtomicU64,
    /// Whether a buffer that could have had huge pages and did not was logged (once per pool).
    huge_fallback_logged: AtomicBool,
}

/// A pool of byte buffers. Cloning shares the pool.
#[derive(Clone)]
pub(crate) struct BufferPool(Arc<PoolInner>);

impl BufferPool {
    /// A pool keeping at most `max_free` idle buffers.
    pub(crate) fn new(max_free: usize) -> Self {
        Self::with_wait(max_free, None, false)
    }

    /// [`new`](Self::new), whose new buffers of 4 huge pages or more take the system's reserved huge pages
    /// when it has enough free (see [`Config::huge_pages`](crate::Config::huge_pages)).
    pub(crate) fn with_huge_pages(max_free: usize, huge_pages: bool) -> Self {
        Self::with_wait(max_free, None, huge_pages)
    }

    /// [`new`](Self::new), with a fixed wait for large requests instead of [`return_wait`]'s (tests).
    fn with_wait(max_free: usize, fixed_wait: Option<Duration>, huge_pages: bool) -> Self {
        Self(Arc::new(PoolInner {
            free: Mutex::new(Vec::new()),
            returned: Condvar::new(),
            in_use: AtomicUsize::new(0),
            max_free: AtomicUsize::new(max_free),
            fixed_wait,
            huge_pages,
            allocations: AtomicU64::new(0),
            huge_allocations: AtomicU64::new(0),
            huge_fallback_logged: AtomicBool::new(false),
        }))
    }

    /// A buffer of `len` bytes. Its contents are unspecified (a recycled buffer keeps old bytes): the caller
    /// overwrites every byte it exposes. [`SLACK`] more bytes are allocated after them: swscale's SIMD code may
    /// write a few bytes past the last row it converts. A new buffer the system cannot give is an error, not an
    /// abort.
    ///
    /// When no idle buffer fits a large request (16 MiB or more) while buffers are in use, it first waits a
    /// little (at most 50 ms, see [`return_wait`]) for one to come back: a consumer that drops each batch
    /// before it asks for the next then gets the one it just dropped, whose pages are already in memory,
    /// instead of a fresh buffer whose pages the kernel must fault in and zero on first touch.
    pub(crate) fn acquire(&self, len: usize) -> Result<PooledBuffer, VideoError> {
        let refused = || VideoError::OutOfMemory {
            what: "a batch buffer",
            bytes: len,
        };
        let words = len.checked_add(SLACK).ok_or_else(refused)?.div_ceil(4);
        let recycled = {
            let mut free = self.0.free.lock();
            let mut found = take_best_fit(&mut free, words, Words::capacity);
            let wait = match self.0.fixed_wait {
                Some(wait) if len >= WAIT_FROM_BYTES => wait,
                _ => return_wait(len),
            };
            if found.is_none() && !wait.is_zero() && self.0.in_use.load(Ordering::Acquire) > 0 {
                let deadline = Instant::now() + wait;
                while found.is_none() {
                    let timed_out = self.0.returned.wait_until(&mut free, deadline).timed_out();
                    // Looked at after a timeout too: a buffer may have come back just then.
                    found = take_best_fit(&mut free, words, Words::capacity);
                    if timed_out {
                        break;
                    }
                }
            }
            found
        };
        let data = match recycled {
            Some(mut data) => {
                // Within capacity: truncating or growing never reallocates.
                data.set_len(words);
                data
            }
            None => {
                let data = Words::zeroed(words, self.0.huge_pages).ok_or_else(refused)?;
                self.0.allocations.fetch_add(1, Ordering::Relaxed);
                if data.is_huge() {
                    self.0.huge_allocations.fetch_add(1, Ordering::Relaxed);
                } else if self.0.huge_pages
                    && crate::ffi::alloc::huge_mapping_bytes(words).is_some()
                    && !self.0.huge_fallback_logged.swap(true, Ordering::Relaxed)
                {
                    tracing::warn!(
                        mib = len >> 20,
                        "huge pages asked for, but the system has too few reserved huge pages free for a batch \
                         buffer (sysctl vm.nr_hugepages): ordinary memory used (logged once)"
                    );
                }
                data
            }
        };
        self.0.in_use.fetch_add(1, Ordering::AcqRel);
        Ok(PooledBuffer {
            data,
            len,
            pool: Arc::downgrade(&self.0),
        })
    }

    /// Keeps at least `n` idle buffers from now on (never fewer than before): for a consumer that holds more
    /// batches at once than the pool's owner planned for, so that the buffers it gives back together are kept
    /// for the batches that follow rather than freed and allocated again (each new buffer faulted in and
    /// zeroed by the kernel on its first write).
    pub(crate) fn keep_idle_at_least(&self, n: usize) {
        self.0.max_free.fetch_max(n, Ordering::Relaxed);
    }

    /// How many buffers the pool has allocated since it was made.
    pub(crate) fn allocations(&self) -> u64 {
        self.0.allocations.load(Ordering::Relaxed)
    }

    /// How many of [`allocations`](Self::allocations) are on the system's reserved huge pages.
    pub(crate) fn huge_page_allocations(&self) -> u64 {
        self.0.huge_allocations.load(Ordering::Relaxed)
    }
}

/// A buffer from a [`BufferPool`]; it goes back to the pool when dropped.
pub(crate) struct PooledBuffer {
    data: Words,
    /// Length in bytes.
    len: usize,
    pool: Weak<PoolInner>,
}

impl PooledBuffer {
    /// Shortens the buffer (keeping its capacity for the next user).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// The buffer's bytes followed by the [`SLACK`] spare bytes, for writers that may overrun the end.
    pub(crate) fn with_slack_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(self.data.as_mut_slice())[..self.len + SLACK]
    }

    /// The buffer as `f16` values (its length in bytes divided by 2).
    pub(crate) fn as_f16(&self) -> &[half::f16] {
        &bytemuck::cast_slice(self.data.as_slice())[..self.len / 2]
    }

    /// The buffer as mutable `f16` values.
    pub(crate) fn as_f16_mut(&mut self) -> &mut [half::f16] {
        &mut bytemuck::cast_slice_mut(self.data.as_mut_slice())[..self.len / 2]
    }

    /// The buffer as `u16` values (its length in bytes divided by 2).
    pub(crate) fn as_u16(&self) -> &[u16] {
        &bytemuck::cast_slice(self.data.as_slice())[..self.len / 2]
    }

    /// The buffer as mutable `u16` values.
    pub(crate) fn as_u16_mut(&mut self) -> &mut [u16] {
        &mut bytemuck::cast_slice_mut(self.data.as_mut_slice())[..self.len / 2]
    }

    /// The buffer as `f32` values (its length in bytes divided by 4).
    pub(crate) fn as_f32(&self) -> &[f32] {
        &bytemuck::cast_slice(self.data.as_slice())[..self.len / 4]
    }

    /// The buffer as mutable `f32` values.
    pub(crate) fn as_f32_mut(&mut self) -> &mut [f32] {
        &mut bytemuck::cast_slice_mut(self.data.as_mut_slice())[..self.len / 4]
    }
}

impl Deref for PooledBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &bytemuck::cast_slice(self.data.as_slice())[..self.len]
    }
}

impl DerefMut for PooledBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(self.data.as_mut_slice())[..self.len]
    }
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.upgrade() {
            let mut free = pool.free.lock();
            pool.in_use.fetch_sub(1, Ordering::AcqRel);
            if free.len() < pool.max_free.load(Ordering::Relaxed) {
                free.push(std::mem::take(&mut self.data));
                pool.returned.notify_all();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_recycled_not_reallocated() {
        let pool = BufferPool::new(4);
        for _ in 0..100 {
            let a = pool.acquire(1000).unwrap();
            let b = pool.acquire(600).unwrap();
            assert_eq!((a.len(), b.len()), (1000, 600));
        }
        assert_eq!(pool.allocations(), 2);
        // A larger request than any idle buffer allocates.
        drop(pool.acquire(5000).unwrap());
        assert_eq!(pool.allocations(), 3);
    }

    #[test]
    fn a_buffer_the_system_cannot_give_is_an_error() {
        let pool = BufferPool::new(1);
        for len in [usize::MAX, usize::MAX / 2, 1 << 62] {
            match pool.acquire(len) {
                Err(VideoError::OutOfMemory { bytes, .. }) => assert_eq!(bytes, len),
                other => panic!("{len}: {:?}", other.map(|b| b.len())),
            }
        }
        assert_eq!(pool.allocations(), 0);
    }

    #[test]
    fn a_large_request_waits_for_a_buffer_coming_back() {
        // The cap is long, so that the test holds on a loaded machine: the buffer comes back well before it.
        let pool = BufferPool::with_wait(2, Some(Duration::from_secs(60)), false);
        let len = WAIT_FROM_BYTES;
        let held = pool.acquire(len).unwrap();
        let dropper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            drop(held);
        });
        let again = pool.acquire(len).unwrap();
        dropper.join().unwrap();
        assert_eq!(pool.allocations(), 1, "the returned buffer was not reused");
        drop(again);
        assert_eq!(pool.0.in_use.load(Ordering::Acquire), 0);
    }

    #[test]
    fn a_wait_that_finds_nothing_allocates() {
        let pool = BufferPool::with_wait(2, Some(Duration::from_millis(1)), false);
        let held = pool.acquire(WAIT_FROM_BYTES).unwrap();
        let other = pool.acquire(WAIT_FROM_BYTES).unwrap();
        assert_eq!(pool.allocations(), 2);
        // Small requests and requests with nothing in use never wait: they allocate (or reuse) at once.
        drop((held, other));
        assert_eq!(pool.allocations(), 2);
        assert_eq!(return_wait(WAIT_FROM_BYTES - 1), Duration::ZERO);
        assert_eq!(return_wait(WAIT_FROM_BYTES), Duration::from_millis(2));
        assert_eq!(return_wait(usize::MAX), MAX_RETURN_WAIT);
    }

    #[test]
    fn buffers_on_huge_pages_are_recycled_and_counted() {
        use crate::ffi::alloc::{free_huge_pages, huge_page_size};
        let pool = BufferPool::with_huge_pages(1, true);
        let len = 16 << 20;
        let free_before = huge_page_size().zip(free_huge_pages());
        let mut a = pool.acquire(len).unwrap();
        a[len - 1] = 9;
        let huge = pool.huge_page_allocations();
        match free_before {
            // Twice what the buffer needs: room for the tests running beside this one.
            Some((page, free)) if free >= 2 * (len + SLACK).div_ceil(page) => {
                assert_eq!(
                    huge, 1,
                    "{free} huge pages were free and the buffer did not take them"
                )
            }
            _ => {
                eprintln!("few or no reserved huge pages free (sysctl vm.nr_hugepages): only the fallback is tested");
                assert!(huge <= 1);
            }
        }
        drop(a);
        let b = pool.acquire(len - 5).unwrap();
        assert_eq!(b.len(), len - 5);
        assert_eq!(
            (pool.allocations(), pool.huge_page_allocations()),
            (1, huge),
            "not recycled"
        );
        // Without the setting, never.
        let plain = BufferPool::new(1);
        drop(plain.acquire(len).unwrap());
        assert_eq!(plain.huge_page_allocations(), 0);
    }

    #[test]
    fn the_idle_limit_is_only_raised() {
        let pool = BufferPool::new(1);
        pool.keep_idle_at_least(3);
        pool.keep_idle_at_least(2); // lower: no change
        let held: Vec<_> = (0..4).map(|_| pool.acquire(100).unwrap()).collect();
        drop(held); // three are kept, the fourth freed
        let again: Vec<_> = (0..4).map(|_| pool.acquire(100).unwrap()).collect();
        assert_eq!(pool.allocations(), 5);
        drop(again);
    }

    #[test]
    fn idle_buffers_are_capped() {
        let pool = BufferPool::new(1);
        let mut f = pool.acquire(10).unwrap();
        assert_eq!((f.len(), f.as_f32().len()), (10, 2));
        f.as_f32_mut()[1] = 1.5;
        assert_eq!(f.as_f32()[1], 1.5);
        drop(f);
        let (a, b) = (pool.acquire(10).unwrap(), pool.acquire(10).unwrap());
        drop((a, b));
        assert_eq!(pool.0.free.lock().len(), 1);
    }
}
