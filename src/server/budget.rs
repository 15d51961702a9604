//! Memory accounting: what one upload may need, and the server-wide pool its reservation is taken from.
//!
//! The operator is configured so that no video can outgrow the per-upload **ceiling** (`--max-upload-memory`:
//! its `max_batch_bytes` is derived below, so that the batches in flight, the decoder's frames, the live
//! buffer and the moov-at-end buffer together fit). An upload reserves what it is known to need, never more
//! than the ceiling: a little when admitted, the body it holds as it arrives, its frames once its stream's
//! header gives their size (`operator::known_need`), settled when its first batch is out. The pool and each
//! client's share of it are weighted tokio semaphores counted in KiB; a reservation holds permits of both.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::settings::transforms::{DType, Transforms, CHANNELS};

/// Frames the decoder may hold besides the output (reference frames and frames in flight), counted at
/// [`DECODER_BYTES_PER_PIXEL`]: H.264 and HEVC keep at most 16 reference frames, and at 1080p their levels
/// allow 4 to 6.
pub(crate) const DECODER_FRAMES: u64 = 16;
/// Bytes a pixel of a decoded frame: 10-bit 4:2:0 and 8-bit 4:4:4 both take 3.
const DECODER_BYTES_PER_PIXEL: u64 = 3;

/// What one output pixel costs: its bytes in a batch, and the conversion's scratch a pixel of the frame being
/// converted. At 8 bits the scratch (a window, a turned picture: at most 6 bytes a pixel) is within the
/// decoder's share, which counts 16 frames where 1080p levels keep 4 to 6, so it counts 0; at 16 bits (a
/// window and a turned picture in RGB48, or the tone mapper's 16-bit YUV window and its mapped RGB48) it is 12.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PixelCost {
    /// Bytes a pixel of a batch: three samples of the output type.
    pub(crate) output: u64,
    /// Bytes a pixel of conversion scratch, held once per upload.
    pub(crate) scratch: u64,
}

impl PixelCost {
    /// 8-bit RGB output with no 16-bit conversion.
    pub(crate) const RGB8: PixelCost = PixelCost {
        output: 3,
        scratch: 0,
    };

    /// The cost of `transforms`' output: their type's size three times, and 16-bit scratch for every type but
    /// `uint8` (which deeper sources are converted at) or with tone mapping.
    pub(crate) fn of(transforms: &Transforms) -> Self {
        let dtype = transforms.dtype;
        let deep = dtype != DType::U8 || transforms.tonemap.is_some();
        PixelCost {
            output: dtype.size() as u64 * CHANNELS as u64,
            scratch: if deep { 12 } else { Self::RGB8.scratch },
        }
    }

    /// Bytes a pixel of one upload's frames besides its batches: the decoder's frames and the scratch.
    fn held(&self) -> u64 {
        DECODER_FRAMES * DECODER_BYTES_PER_PIXEL + self.scratch
    }
}

/// What one upload's settings need, independent of its frame size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UploadShape {
    /// `sequence_length x batch_size`: frames in one batch.
    pub(crate) frames_per_batch: u64,
    /// Batches alive at once: those prefetched, the one being decoded and the one the response holds.
    pub(crate) batches_in_flight: u64,
    /// Bytes of body held besides the frames: the body buffered ahead of the decoder, or, for an MP4 with its
    /// index at the end, the buffer holding the whole upload (which takes the buffered chunks over), whichever
    /// is larger.
    pub(crate) fixed_bytes: u64,
    /// What a pixel of output costs (the output type's size, the conversion's scratch).
    pub(crate) pixel: PixelCost,
    /// Of `fixed_bytes`, what the upload's audio holds (its packets and samples).
    pub(crate) audio_bytes: u64,
}

impl UploadShape {
    /// Bytes this upload needs for frames of `pixels` pixels; `None` past `u64`.
    pub(crate) fn need(&self, pixels: u64) -> Option<u64> {
        let batch = self
            .frames_per_batch
            .checked_mul(pixels)?
            .checked_mul(self.pixel.output)?;
        let held = pixels.checked_mul(self.pixel.held())?;
        batch
            .checked_mul(self.batches_in_flight)?
            .checked_add(held)?
            .checked_add(self.fixed_bytes)
    }

    /// The `max_batch_bytes` that keeps [`need`](Self::need) within `ceiling` for every frame size: a batch of
    /// `b` bytes has `p = b / (output * frames_per_batch)` pixels a frame, so the need is
    /// `b * in_flight + p * held + fixed`, and the largest `b` is
    /// `room * output * frames / (in_flight * output * frames + held)`. `None` when even a one-pixel frame does
    /// not fit: such settings can never be served.
    pub(crate) fn max_batch_bytes(&self, ceiling: u64) -> Option<u64> {
        if self.need(1)? > ceiling {
            return None;
        }
        let room = u128::from(ceiling - self.fixed_bytes);
        let frames = u128::from(self.frames_per_batch) * u128::from(self.pixel.output);
        let per_batch = room * frames
            / (u128::from(self.batches_in_flight) * frames + u128::from(self.pixel.held()));
        Some(u64::try_from(per_batch).unwrap_or(u64::MAX))
    }

    /// The largest frame, in pixels, whose [`need`](Self::need) fits `ceiling`: what the upload's decoders are
    /// held to (FFmpeg's `max_pixels`), so that a stream whose parameter sets announce a larger frame fails
    /// before any buffer of that size is allocated. 0 when even a one-pixel frame does not fit.
    pub(crate) fn max_pixels(&self, ceiling: u64) -> u64 {
        let per_pixel = self
            .frames_per_batch
            .saturating_mul(self.batches_in_flight)
            .saturating_mul(self.pixel.output)
            .saturating_add(self.pixel.held());
        ceiling.saturating_sub(self.fixed_bytes) / per_pixel.max(1)
    }
}

/// The pool's unit: reservations are whole KiB (a tokio semaphore counts its permits in `u32`s per acquire).
const UNIT: u64 = 1024;

/// Which limit a reservation could not get past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Short {
    /// The server-wide pool.
    Pool,
    /// The client's share of the pool.
    Client,
}

fn units(bytes: u64) -> Option<u32> {
    u32::try_from(bytes.div_ceil(UNIT)).ok()
}

/// A weighted semaphore of KiB permits: the server-wide pool, or one client's share of it.
#[derive(Debug)]
pub(crate) struct MemoryPool {
    /// The capacity in units.
    units: u64,
    permits: Arc<Semaphore>,
}

impl MemoryPool {
    pub(crate) fn new(capacity: u64) -> Arc<Self> {
        let units = (capacity / UNIT).min(Semaphore::MAX_PERMITS as u64);
        Arc::new(Self {
            units,
            permits: Arc::new(Semaphore::new(units as usize)),
        })
    }

    /// Bytes reserved now.
    pub(crate) fn reserved(&self) -> u64 {
        (self.units - self.permits.available_permits() as u64) * UNIT
    }

    /// The pool's size (whole KiB).
    pub(crate) fn capacity(&self) -> u64 {
        self.units * UNIT
    }

    /// Reserves `bytes` (rounded up to whole KiB) from this pool and from `client`'s share of it, or says
    /// which could not cover them now.
    pub(crate) fn reserve(&self, client: &MemoryPool, bytes: u64) -> Result<Reservation, Short> {
        let mut reservation = Reservation {
            pool: self
                .permits
                .clone()
                .try_acquire_many_owned(0)
                .map_err(|_| Short::Pool)?,
            client: client
                .permits
                .clone()
                .try_acquire_many_owned(0)
                .map_err(|_| Short::Client)?,
        };
        reservation.grow_to(bytes)?;
        Ok(reservation)
    }
}

/// An upload's memory reservation, shared by the tasks that grow and trim it.
pub(crate) type SlotMemory = Arc<parking_lot::Mutex<Reservation>>;

/// Bytes held from a [`MemoryPool`] and from its client's share; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    pool: OwnedSemaphorePermit,
    client: OwnedSemaphorePermit,
}

impl Reservation {
    /// Bytes held.
    pub(crate) fn bytes(&self) -> u64 {
        self.pool.num_permits() as u64 * UNIT
    }

    /// Holds at least `bytes` (rounded up to whole KiB), taking the difference from the client's share and the
    /// pool, or says which could not cover it now (then nothing more is held).
    pub(crate) fn grow_to(&mut self, bytes: u64) -> Result<(), Short> {
        let want = units(bytes).ok_or(Short::Client)?;
        let Some(more) = want
            .checked_sub(self.pool.num_permits() as u32)
            .filter(|&m| m > 0)
        else {
            return Ok(());
        };
        // The pool first: when both are short, the server's own limit is what the client is told.
        let pool = self
            .pool
            .semaphore()
            .clone()
            .try_acquire_many_owned(more)
            .map_err(|_| Short::Pool)?;
        let client = self
            .client
            .semaphore()
            .clone()
            .try_acquire_many_owned(more)
            .map_err(|_| Short::Client)?;
        self.client.merge(client);
        self.pool.merge(pool);
        Ok(())
    }

    /// Gives back what is held beyond `bytes` (rounded up to whole KiB; never grows the reservation).
    pub(crate) fn shrink_to(&mut self, bytes: u64) {
        let keep = usize::try_from(bytes.div_ceil(UNIT)).unwrap_or(usize::MAX);
        if let Some(extra) = self.pool.num_permits().checked_sub(keep) {
            drop(self.pool.split(extra));
            drop(self.client.split(extra));
        }
    }
}

/// The machine's memory in bytes (Linux `/proc/meminfo`), if it can be read.
pub(crate) fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SHAPE: UploadShape = UploadShape {
        frames_per_batch: 16,
        batches_in_flight: 3,
        fixed_bytes: 8 << 20,
        pixel: PixelCost::RGB8,
        audio_bytes: 0,
    };

    #[test]
    fn need_counts_batches_decoder_and_buffers() {
        // 1080p, 16 frames a batch: 3 batches of 99.5 MB, 16 decoder frames of 6.2 MB, 8 MiB.
        let pixels = 1920 * 1080;
        assert_eq!(
            SHAPE.need(pixels),
            Some(3 * 16 * pixels * 3 + 16 * pixels * 3 + (8 << 20))
        );
        // In uint16 the batches double and 12 bytes a pixel of scratch are added.
        let deep = UploadShape {
            pixel: PixelCost::of(&Transforms::new().dtype(DType::U16)),
            ..SHAPE
        };
        assert_eq!(
            deep.need(pixels),
            Some(3 * 16 * pixels * 6 + 16 * pixels * 3 + pixels * 12 + (8 << 20))
        );
        assert_eq!(SHAPE.need(u64::MAX / 2), None);
    }

    #[test]
    fn the_largest_frame_is_the_one_whose_need_fits() {
        let ceiling = 512 << 20;
        let pixels = SHAPE.max_pixels(ceiling);
        assert!(SHAPE.need(pixels).unwrap() <= ceiling);
        assert!(SHAPE.need(pixels + 1).unwrap() > ceiling);
        assert_eq!(SHAPE.max_pixels(SHAPE.fixed_bytes), 0);
    }

    #[test]
    fn wider_types_and_tone_mapping_cost_their_bytes() {
        let cost = |t: Transforms| PixelCost::of(&t);
        assert_eq!(cost(Transforms::new()), PixelCost::RGB8);
        assert_eq!(
            cost(Transforms::new().dtype(DType::U16)),
            PixelCost {
                output: 6,
                scratch: 12
            }
        );
        assert_eq!(
            cost(Transforms::new().dtype(DType::F32)),
            PixelCost {
                output: 12,
                scratch: 12
            }
        );
        let mapped = Transforms::new().tonemap(crate::ToneMap::new(crate::ToneMapOp::Hable));
        assert_eq!(
            cost(mapped),
            PixelCost {
                output: 3,
                scratch: 12
            }
        );
        // float32 output fits a quarter of the frames uint8 does, near enough (the decoder's share is fixed).
        let wide = UploadShape {
            pixel: cost(Transforms::new().dtype(DType::F32)),
            ..SHAPE
        };
        let ceiling = 512 << 20;
        assert!(wide.max_pixels(ceiling) * 3 < SHAPE.max_pixels(ceiling));
        assert!(wide.need(1920 * 1080).unwrap() > SHAPE.need(1920 * 1080).unwrap() * 3);
    }

    #[test]
    fn settings_that_cannot_fit_even_one_pixel_are_refused() {
        let huge = UploadShape {
            frames_per_batch: 65_536 * 65_536,
            ..SHAPE
        };
        assert_eq!(huge.max_batch_bytes(512 << 20), None);
        assert!(SHAPE.max_batch_bytes(512 << 20).is_some());
    }

    proptest! {
        /// Whatever the frame size, a video whose full batch fits the derived `max_batch_bytes` needs no more
        /// than the ceiling.
        #[test]
        fn the_derived_batch_limit_keeps_every_video_within_the_ceiling(
            frames in 1u64..10_000, in_flight in 1u64..70, fixed in 0u64..(1 << 30),
            ceiling in 0u64..(64 << 30), pixels in 1u64..(1 << 28), dtype in 0usize..6, tonemap: bool,
        ) {
            let dtype = <DType as crate::Choice>::NAMES[dtype].parse::<DType>().unwrap();
            let mut transforms = Transforms::new().dtype(dtype);
            if tonemap {
                transforms = transforms.tonemap(crate::ToneMap::new(crate::ToneMapOp::Hable));
            }
            let pixel = PixelCost::of(&transforms);
            let shape = UploadShape { frames_per_batch: frames, batches_in_flight: in_flight, fixed_bytes: fixed, pixel, audio_bytes: 0 };
            if let Some(limit) = shape.max_batch_bytes(ceiling) {
                let batch = frames * pixels * pixel.output;
                if batch <= limit {
                    prop_assert!(shape.need(pixels).unwrap() <= ceiling);
                }
            }
        }
    }

    #[test]
    fn reservations_are_bounded_and_given_back() {
        const K: u64 = 1024;
        let pool = MemoryPool::new(100 * K);
        let (one, two) = (MemoryPool::new(100 * K), MemoryPool::new(100 * K));
        let mut a = pool.reserve(&one, 60 * K).unwrap();
        assert_eq!(pool.reserve(&two, 50 * K).unwrap_err(), Short::Pool);
        a.shrink_to(30 * K);
        a.shrink_to(90 * K); // never grows
        assert_eq!(a.bytes(), 30 * K);
        assert_eq!(one.reserved(), 30 * K, "the client's share follows");
        let b = pool.reserve(&two, 70 * K).unwrap();
        assert_eq!(pool.reserved(), 100 * K);
        drop(a);
        drop(b);
        assert_eq!(pool.reserved(), 0);
        assert_eq!(one.reserved() + two.reserved(), 0);
        // Whole KiB: a byte more is a KiB more; a reservation past u32 KiB is refused, not wrapped.
        let c = pool.reserve(&one, K + 1).unwrap();
        assert_eq!(c.bytes(), 2 * K);
        assert!(MemoryPool::new(u64::MAX)
            .reserve(&MemoryPool::new(u64::MAX), u64::MAX)
            .is_err());
    }

    #[test]
    fn a_reservation_grows_within_its_clients_share_and_the_pool() {
        const K: u64 = 1024;
        let pool = MemoryPool::new(100 * K);
        let share = MemoryPool::new(40 * K);
        let mut a = pool.reserve(&share, K).unwrap();
        a.grow_to(30 * K).unwrap();
        a.grow_to(10 * K).unwrap(); // never shrinks
        assert_eq!(a.bytes(), 30 * K);
        let mut b = pool.reserve(&share, K).unwrap();
        assert_eq!(b.grow_to(20 * K), Err(Short::Client));
        assert_eq!(b.bytes(), K, "a refused growth holds nothing more");
        let other = MemoryPool::new(100 * K);
        let mut c = pool.reserve(&other, 60 * K).unwrap();
        assert_eq!(c.grow_to(80 * K), Err(Short::Pool));
        assert_eq!(share.reserved(), 31 * K);
        assert_eq!(pool.reserved(), 91 * K);
    }

    #[test]
    fn the_machine_memory_is_read() {
        assert!(machine_memory().is_some_and(|m| m > 1 << 20));
    }
}
