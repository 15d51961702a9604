//! The two inner loops of framefeed's resampler (`transform::resample`), vectorized where the CPU allows: the
//! vertical pass (a weighted sum of source rows, all its taps summed in registers: with AVX-512 144 columns a
//! block, 16 columns of a pair of rows put side by side by one `vpermt2b` and multiplied and added by one
//! `vpdpwssd`; with AVX2 `vpmaddwd` over pairs of rows widened and interleaved by shuffles) and the horizontal
//! pass (AVX2, 8 outputs at a time: two outputs a vector step with 8 taps, or one with 16 taps a step; an AVX-512
//! form gathering 16 outputs' pairs of samples by `vpermt2w` measured no faster); plus the
//! prefetch that brings the vertical pass its next source rows. Safe functions; each loop has a scalar twin
//! with the same integer arithmetic, which the vector code equals exactly (sums of exact 32-bit products, the
//! same rounding and saturation), used for row tails and where the vector code cannot run.

use super::kernel::Kernel;

/// `out[i] = sat16((round + Σ_t weights[t] * src[(first_row + t) * stride + column + i]) >> shift)`, where
/// `round = 1 << (shift - 1)`, for every `i < out.len()`. Panics if a row would read past `src`.
pub(crate) fn vertical(
    src: &[u8],
    stride: usize,
    first_row: usize,
    column: usize,
    weights: &[i16],
    shift: u32,
    out: &mut [i16],
) {
    vertical_on(
        Kernel::best(),
        src,
        stride,
        first_row,
        column,
        weights,
        shift,
        out,
    );
}

/// [`vertical`] on `kernel`, which must be [`Kernel::available`].
#[allow(clippy::too_many_arguments)]
fn vertical_on(
    kernel: Kernel,
    src: &[u8],
    stride: usize,
    first_row: usize,
    column: usize,
    weights: &[i16],
    shift: u32,
    out: &mut [i16],
) {
    assert!((1..16).contains(&shift), "shift");
    assert!(kernel.available(), "a kernel this CPU runs");
    if out.is_empty() || weights.is_empty() {
        out.fill(0);
        return;
    }
    let last = (first_row + weights.len() - 1) * stride + column + out.len();
    assert!(last <= src.len(), "rows past the plane");
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    match kernel {
        // SAFETY: the CPU has the kernel's features (asserted); every row the taps read holds `out.len()`
        // bytes from `column` (asserted).
        Kernel::Avx512 => {
            done = unsafe { avx512::vertical(src, stride, first_row, column, weights, shift, out) }
        }
        // SAFETY: as above.
        Kernel::Avx2 => {
            done = unsafe { avx2::vertical(src, stride, first_row, column, weights, shift, out) }
        }
        Kernel::Scalar => {}
    }
    for (i, o) in out.iter_mut().enumerate().skip(done) {
        let mut sum = 1i32 << (shift - 1);
        for (t, &w) in weights.iter().enumerate() {
            sum += i32::from(w) * i32::from(src[(first_row + t) * stride + column + i]);
        }
        *o = saturate(sum >> shift);
    }
}

/// Asks the CPU to start loading bytes `columns` of rows `rows` of a plane (`stride` bytes a row) into its
/// caches, one request per 64-byte line, without waiting for them. The vertical pass reads each source row's
/// region (a few hundred bytes) only a few times, too briefly for the hardware's stream prefetchers to catch
/// on, so without this it waits on memory for every new row. Rows or columns past `src` are left out.
pub(crate) fn prefetch_rows(
    src: &[u8],
    stride: usize,
    rows: std::ops::Range<usize>,
    columns: std::ops::Range<usize>,
) {
    #[cfg(target_arch = "x86_64")]
    for row in rows {
        let Some(line) = src.get(row * stride..).and_then(|r| r.get(columns.clone())) else {
            return;
        };
        // One address in each 64-byte line the range touches: every 64th byte and the last.
        for at in (0..line.len()).step_by(64).chain(line.len().checked_sub(1)) {
            // SAFETY: a prefetch reads nothing the program sees and cannot fault; `at` is inside `line`.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    line.as_ptr().add(at).cast::<i8>(),
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (src, stride, rows, columns);
}

/// The taps of the horizontal pass's outputs, checked once for all the rows they filter: output `k` reads
/// `taps` samples from `starts[k]`, weighted by `weights[k * taps..][..taps]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HorizontalTaps<'a> {
    starts: &'a [usize],
    weights: &'a [i16],
    taps: usize,
    /// The samples a row must hold: the end of the furthest output's taps.
    reach: usize,
}

impl<'a> HorizontalTaps<'a> {
    /// The taps of `starts.len()` outputs. Panics if `weights` lacks some output's.
    pub(crate) fn new(starts: &'a [usize], weights: &'a [i16], taps: usize) -> Self {
        assert!(
            starts
                .len()
                .checked_mul(taps)
                .is_some_and(|n| n <= weights.len()),
            "taps for every output"
        );
        let reach = starts
            .iter()
            .map(|&s| s.saturating_add(taps))
            .max()
            .unwrap_or(0);
        Self {
            starts,
            weights,
            taps,
            reach,
        }
    }
}

/// How many taps the horizontal pass should give an output that reads `span` source samples (padding the rest
/// with zero weights): 8 up to 8 (two outputs a vector step), else a multiple of 16 (one output, 16 taps a
/// step), the counts its vector code takes.
pub(crate) fn horizontal_taps(span: usize) -> usize {
    if span <= 8 {
        8
    } else {
        span.next_multiple_of(16)
    }
}

/// `out[k] = clamp((round + Σ_t samples[starts[k] + t] * weights[k * taps + t]) >> shift, 0, 255)` with
/// `round = 1 << (shift - 1)`, for every `k < out.len()`: one output row of the horizontal pass. Panics if
/// `out` has more outputs than `taps` or a tap would read past `samples`.
pub(crate) fn horizontal(samples: &[i16], taps: &HorizontalTaps<'_>, shift: u32, out: &mut [u8]) {
    horizontal_on(Kernel::best(), samples, taps, shift, out);
}

/// [`horizontal`] on `kernel`, which must be [`Kernel::available`].
fn horizontal_on(
    kernel: Kernel,
    samples: &[i16],
    taps: &HorizontalTaps<'_>,
    shift: u32,
    out: &mut [u8],
) {
    assert!((1..31).contains(&shift), "shift");
    assert!(kernel.available(), "a kernel this CPU runs");
    assert!(out.len() <= taps.starts.len(), "taps for every output");
    assert!(taps.reach <= samples.len(), "taps past the row");
    let HorizontalTaps {
        starts,
        weights,
        taps,
        ..
    } = *taps;
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if kernel != Kernel::Scalar && (taps == 8 || taps % 16 == 0) {
        // SAFETY: AVX2 is present (every kernel but the scalar one has it); every output's taps lie inside
        // `samples` and `weights` (checked by `HorizontalTaps::new` and above).
        done = unsafe { avx2::horizontal(samples, starts, weights, taps, shift, out) };
    }
    for (k, o) in out.iter_mut().enumerate().skip(done) {
        let mut sum = 1i32 << (shift - 1);
        let row = &samples[starts[k]..][..taps];
        for (&s, &w) in row.iter().zip(&weights[k * taps..][..taps]) {
            sum = sum.wrapping_add(i32::from(s) * i32::from(w));
        }
        *o = (sum >> shift).clamp(0, 255) as u8;
    }
}

/// A pair of taps' weights as `vpmaddwd` and `vpdpwssd` multiply them, in one 32-bit lane: the first in the
/// low 16 bits, the second (0 for a lone last tap) in the high ones.
#[cfg(target_arch = "x86_64")]
fn pair_weights(pair: &[i16]) -> i32 {
    let high = pair.get(1).map_or(0, |&w| w as u16 as u32);
    (pair[0] as u16 as u32 | high << 16) as i32
}

fn saturate(v: i32) -> i16 {
    v.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// Steps of 16 columns the vertical pass sums at once, all its taps through, in registers.
    const CHUNK: usize = 4;

    /// [`super::vertical`] for the first `out.len() / 16 * 16` columns; returns how many it did.
    ///
    /// # Safety
    /// AVX2 must be present, and each of the `weights.len()` rows from `first_row` must hold `out.len()`
    /// bytes from `column` inside `src`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn vertical(
        src: &[u8],
        stride: usize,
        first_row: usize,
        column: usize,
        weights: &[i16],
        shift: u32,
        out: &mut [i16],
    ) -> usize {
        let steps = out.len() / 16;
        let base = src.as_ptr().add(first_row * stride + column);
        let mut step = 0;
        while step + CHUNK <= steps {
            // SAFETY: the caller's contract, for steps `step..step + CHUNK` (all below `steps`).
            vertical_steps::<CHUNK>(base, stride, step, weights, shift, out);
            step += CHUNK;
        }
        while step < steps {
            // SAFETY: as above, for step `step < steps`.
            vertical_steps::<1>(base, stride, step, weights, shift, out);
            step += 1;
        }
        steps * 16
    }

    /// Columns `step * 16..(step + N) * 16` of the vertical pass, from `base` (the first tap's row at the
    /// first column), each column's sums kept in registers through every tap: the `weights.len()` rows are
    /// read as that many short streams, and nothing but the result is stored.
    ///
    /// # Safety
    /// AVX2 must be present; each of the `weights.len()` rows from `base` holds `(step + N) * 16` bytes, and
    /// `out` as many columns.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn vertical_steps<const N: usize>(
        base: *const u8,
        stride: usize,
        step: usize,
        weights: &[i16],
        shift: u32,
        out: &mut [i16],
    ) {
        let round = _mm256_set1_epi32(1 << (shift - 1));
        // Per step, columns 0-3 and 8-11 (`lo`) and 4-7 and 12-15 (`hi`): `vpmaddwd`'s order over a pair.
        let mut lo = [round; N];
        let mut hi = [round; N];
        for (p, pair) in weights.chunks(2).enumerate() {
            let t = 2 * p;
            // An odd last tap pairs with 0 (and reads its own row twice).
            let w = _mm256_set1_epi32(super::pair_weights(pair));
            let row0 = base.add(t * stride + step * 16);
            let row1 = if t + 1 < weights.len() {
                base.add((t + 1) * stride + step * 16)
            } else {
                row0
            };
            for i in 0..N {
                // SAFETY: rows t and t + 1 hold 16 bytes from column `(step + i) * 16` (the caller's
                // contract).
                let r0 = _mm256_cvtepu8_epi16(_mm_loadu_si128(row0.add(i * 16).cast::<__m128i>()));
                let r1 = _mm256_cvtepu8_epi16(_mm_loadu_si128(row1.add(i * 16).cast::<__m128i>()));
                lo[i] =
                    _mm256_add_epi32(lo[i], _mm256_madd_epi16(_mm256_unpacklo_epi16(r0, r1), w));
                hi[i] =
                    _mm256_add_epi32(hi[i], _mm256_madd_epi16(_mm256_unpackhi_epi16(r0, r1), w));
            }
        }
        let count = _mm_cvtsi32_si128(shift as i32);
        for i in 0..N {
            // Packing lane by lane puts the 16 columns back in order, saturated to 16 bits.
            let packed = _mm256_packs_epi32(
                _mm256_sra_epi32(lo[i], count),
                _mm256_sra_epi32(hi[i], count),
            );
            // SAFETY: `(step + i) * 16 + 16 <= out.len()` (the caller's contract).
            _mm256_storeu_si256(
                out.as_mut_ptr().add((step + i) * 16).cast::<__m256i>(),
                packed,
            );
        }
    }

    /// [`super::horizontal`] for the first `out.len() / 8 * 8` outputs, 8 at a time; returns how many it did.
    ///
    /// # Safety
    /// AVX2 must be present; `taps` is 8 or a multiple of 16, and every output's taps lie inside `samples` and
    /// `weights`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn horizontal(
        samples: &[i16],
        starts: &[usize],
        weights: &[i16],
        taps: usize,
        shift: u32,
        out: &mut [u8],
    ) -> usize {
        // The common tap counts (8: two outputs a vector; 16 and 32, downscales by up to about 15 with
        // bilinear, 7.5 with bicubic) with their loops unrolled; any other multiple of 16 through the general
        // one.
        // SAFETY: the caller's contract, passed on.
        match taps {
            8 => horizontal_pairs(samples, starts, weights, shift, out),
            16 => horizontal_groups::<1>(samples, starts, weights, taps, shift, out),
            32 => horizontal_groups::<2>(samples, starts, weights, taps, shift, out),
            _ => horizontal_groups::<0>(samples, starts, weights, taps, shift, out),
        }
    }

    /// [`horizontal`] with 8 taps an output: two outputs a vector (one in each 128-bit half), whose weights
    /// lie side by side.
    ///
    /// # Safety
    /// As [`horizontal`]'s, with `taps == 8`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn horizontal_pairs(
        samples: &[i16],
        starts: &[usize],
        weights: &[i16],
        shift: u32,
        out: &mut [u8],
    ) -> usize {
        let groups = out.len() / 8;
        let round = _mm256_set1_epi32(1 << (shift - 1));
        let count = _mm_cvtsi32_si128(shift as i32);
        for g in 0..groups {
            let mut sums = [_mm256_setzero_si256(); 4];
            for (j, sum) in sums.iter_mut().enumerate() {
                let k = g * 8 + 2 * j;
                // SAFETY: outputs k and k + 1 read 8 samples each from their starts, and their 16 weights
                // from `k * 8`, inside the slices.
                let a = _mm256_loadu2_m128i(
                    samples.as_ptr().add(starts[k + 1]).cast::<__m128i>(),
                    samples.as_ptr().add(starts[k]).cast::<__m128i>(),
                );
                let b = _mm256_loadu_si256(weights.as_ptr().add(k * 8).cast::<__m256i>());
                *sum = _mm256_madd_epi16(a, b);
            }
            // Two rounds of pairwise sums leave outputs (0, 2, 4, 6) in the low half and (1, 3, 5, 7) in the
            // high one; interleaved back in order.
            let total = _mm256_permutevar8x32_epi32(
                _mm256_hadd_epi32(
                    _mm256_hadd_epi32(sums[0], sums[1]),
                    _mm256_hadd_epi32(sums[2], sums[3]),
                ),
                _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7),
            );
            // SAFETY: `g * 8 + 8 <= out.len()`.
            store_eight(total, round, count, out.as_mut_ptr().add(g * 8));
        }
        groups * 8
    }

    /// [`horizontal`] with `taps = 16 * VECTORS`, or any multiple of 16 where `VECTORS` is 0.
    ///
    /// # Safety
    /// As [`horizontal`]'s; `taps == 16 * VECTORS` unless `VECTORS` is 0.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn horizontal_groups<const VECTORS: usize>(
        samples: &[i16],
        starts: &[usize],
        weights: &[i16],
        taps: usize,
        shift: u32,
        out: &mut [u8],
    ) -> usize {
        let vectors = if VECTORS == 0 { taps / 16 } else { VECTORS };
        let groups = out.len() / 8;
        let round = _mm256_set1_epi32(1 << (shift - 1));
        let count = _mm_cvtsi32_si128(shift as i32);
        for g in 0..groups {
            let mut sums = [_mm256_setzero_si256(); 8];
            for (j, sum) in sums.iter_mut().enumerate() {
                let k = g * 8 + j;
                let (s, w) = (
                    samples.as_ptr().add(starts[k]),
                    weights.as_ptr().add(k * taps),
                );
                for v in 0..vectors {
                    // SAFETY: the output's `taps` samples and weights are inside the slices.
                    let a = _mm256_loadu_si256(s.add(v * 16).cast::<__m256i>());
                    let b = _mm256_loadu_si256(w.add(v * 16).cast::<__m256i>());
                    *sum = _mm256_add_epi32(*sum, _mm256_madd_epi16(a, b));
                }
            }
            // Three rounds of pairwise sums leave, per 128-bit half, four outputs' partial sums; adding the
            // halves gives the 8 outputs in order.
            let s01 = _mm256_hadd_epi32(sums[0], sums[1]);
            let s23 = _mm256_hadd_epi32(sums[2], sums[3]);
            let s45 = _mm256_hadd_epi32(sums[4], sums[5]);
            let s67 = _mm256_hadd_epi32(sums[6], sums[7]);
            let lo = _mm256_hadd_epi32(s01, s23);
            let hi = _mm256_hadd_epi32(s45, s67);
            let total = _mm256_add_epi32(
                _mm256_permute2x128_si256(lo, hi, 0x20),
                _mm256_permute2x128_si256(lo, hi, 0x31),
            );
            // SAFETY: `g * 8 + 8 <= out.len()`.
            store_eight(total, round, count, out.as_mut_ptr().add(g * 8));
        }
        groups * 8
    }

    /// Rounds the sums of 8 outputs (in order), shifts them right by `count` and stores them as 8 bytes
    /// clamped to 0-255 (signed saturation to 16 bits, then unsigned to 8) at `dst`.
    ///
    /// # Safety
    /// AVX2 must be present, and `dst` valid for 8 bytes of writes.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn store_eight(total: __m256i, round: __m256i, count: __m128i, dst: *mut u8) {
        let v = _mm256_sra_epi32(_mm256_add_epi32(total, round), count);
        let words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        // SAFETY: `dst` holds 8 bytes (the caller's contract).
        _mm_storel_epi64(dst.cast::<__m128i>(), _mm_packus_epi16(words, words));
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// Columns a part of a block reads from each row: one masked 64-byte load, whose top 16 bytes stay 0.
    const PART: usize = 48;
    /// Parts of a block.
    const PARTS: usize = 3;
    /// Columns the vertical pass sums at once, all taps through.
    const BLOCK: usize = PARTS * PART;

    /// `vpermt2b` indices putting columns `16 * j..16 * j + 16` of a part of two rows (the first and second
    /// table) side by side as 16-bit pairs: byte `4k` from row 0 (`16j + k`), byte `4k + 2` from row 1 (64 +
    /// that); the odd bytes take row 0's byte 63, which the part's load leaves 0, widening the pairs to 16 bits.
    const PAIRS: [[u8; 64]; 3] = {
        let mut idx = [[63u8; 64]; 3];
        let mut j = 0;
        while j < 3 {
            let mut k = 0;
            while k < 16 {
                idx[j][4 * k] = (16 * j + k) as u8;
                idx[j][4 * k + 2] = (64 + 16 * j + k) as u8;
                k += 1;
            }
            j += 1;
        }
        idx
    };

    /// The load mask of a part's first `n` bytes (at most [`PART`]).
    fn part_mask(n: usize) -> __mmask64 {
        (1u64 << n.min(PART)) - 1
    }

    /// [`super::vertical`] for every column, [`BLOCK`] a block (the last one masked); returns `out.len()`.
    ///
    /// # Safety
    /// AVX-512 F, BW, VL, VBMI and VNNI must be present, and each of the `weights.len()` rows from `first_row`
    /// must hold `out.len()` bytes from `column` inside `src`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni")]
    pub(super) unsafe fn vertical(
        src: &[u8],
        stride: usize,
        first_row: usize,
        column: usize,
        weights: &[i16],
        shift: u32,
        out: &mut [i16],
    ) -> usize {
        let base = src.as_ptr().add(first_row * stride + column);
        let idx = PAIRS.map(|i| _mm512_loadu_si512(i.as_ptr().cast()));
        let round = _mm512_set1_epi32(1 << (shift - 1));
        let count = _mm_cvtsi32_si128(shift as i32);
        let mut at = 0;
        while at < out.len() {
            let n = (out.len() - at).min(BLOCK);
            // Each part's bytes of a row (masked loads read, and fault on, nothing past `n`).
            let masks: [__mmask64; PARTS] =
                std::array::from_fn(|h| part_mask(n.saturating_sub(h * PART)));
            let mut sums = [round; 3 * PARTS];
            for (p, pair) in weights.chunks(2).enumerate() {
                let t = 2 * p;
                // An odd last tap pairs with 0 (and its own row again).
                let w = _mm512_set1_epi32(super::pair_weights(pair));
                for (h, mask) in masks.into_iter().enumerate() {
                    if mask == 0 {
                        break;
                    }
                    // SAFETY: rows t and t + 1 (or t again) hold `n` bytes from column `at` (the caller's
                    // contract); the masked loads read no others.
                    let row0 = base.add(t * stride + at + h * PART);
                    let r0 = _mm512_maskz_loadu_epi8(mask, row0.cast());
                    let r1 = if pair.len() == 2 {
                        _mm512_maskz_loadu_epi8(mask, row0.add(stride).cast())
                    } else {
                        r0
                    };
                    for (sum, idx) in sums[3 * h..][..3].iter_mut().zip(&idx) {
                        *sum = _mm512_dpwssd_epi32(*sum, _mm512_permutex2var_epi8(r0, *idx, r1), w);
                    }
                }
            }
            for (j, sum) in sums.iter().enumerate() {
                let first = 16 * j;
                if first >= n {
                    break;
                }
                let lanes = (n - first).min(16);
                let keep: __mmask16 = if lanes == 16 { !0 } else { (1u16 << lanes) - 1 };
                let words = _mm512_cvtsepi32_epi16(_mm512_sra_epi32(*sum, count));
                // SAFETY: columns `at + first..at + first + lanes` are inside `out`; the masked store writes no
                // others.
                _mm256_mask_storeu_epi16(out.as_mut_ptr().add(at + first), keep, words);
            }
            at += BLOCK;
        }
        out.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(len: usize, seed: u32) -> Vec<u8> {
        let mut s = seed | 1;
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                s as u8
            })
            .collect()
    }

    /// Every column of each kernel this CPU runs equals the plain sum, at every width (vector steps, blocks
    /// and tails), for odd and even tap counts and weights of both signs at the extremes.
    #[test]
    fn vertical_equals_the_plain_sum() {
        let (stride, rows) = (300, 30);
        let src = bytes(stride * rows, 7);
        let kernels: Vec<Kernel> = Kernel::ALL.into_iter().filter(|k| k.available()).collect();
        println!("kernels on this CPU: {kernels:?}");
        for (kernel, taps) in kernels.iter().flat_map(|&k| (1..=21).map(move |t| (k, t))) {
            let weights: Vec<i16> = (0..taps)
                .map(|t| match t % 4 {
                    0 => i16::MAX,
                    1 => -9000,
                    2 => i16::MIN,
                    _ => 123,
                })
                .collect();
            for width in [0, 1, 15, 16, 17, 33, 63, 64, 65, 100, 129, 200, 256, 290] {
                let mut out = vec![0i16; width];
                vertical_on(kernel, &src, stride, 3, 5, &weights, 8, &mut out);
                for (i, &o) in out.iter().enumerate() {
                    let sum: i64 = 128
                        + weights
                            .iter()
                            .enumerate()
                            .map(|(t, &w)| i64::from(w) * i64::from(src[(3 + t) * stride + 5 + i]))
                            .sum::<i64>();
                    let want = (sum >> 8).clamp(i64::from(i16::MIN), i64::from(i16::MAX));
                    assert_eq!(
                        i64::from(o),
                        want,
                        "{kernel:?} taps {taps} width {width} column {i}"
                    );
                }
            }
        }
    }

    /// A prefetch asked for rows or columns past the plane, or for none, reads nothing and does not panic.
    #[test]
    fn prefetching_past_the_plane_is_harmless() {
        let src = bytes(100 * 10, 1);
        prefetch_rows(&src, 100, 0..10, 0..100);
        prefetch_rows(&src, 100, 8..40, 50..300);
        prefetch_rows(&src, 100, 3..3, 0..0);
        prefetch_rows(&[], 100, 0..2, 0..64);
    }

    /// Every output of each kernel this CPU runs equals the plain sum, for groups of 8 and tails, with sums
    /// that clamp at both ends.
    #[test]
    fn horizontal_equals_the_plain_sum() {
        let kernels: Vec<Kernel> = Kernel::ALL.into_iter().filter(|k| k.available()).collect();
        println!("kernels on this CPU: {kernels:?}");
        for kernel in kernels {
            horizontal_equals_the_plain_sum_on(kernel);
        }
    }

    fn horizontal_equals_the_plain_sum_on(kernel: Kernel) {
        let samples: Vec<i16> = bytes(400, 3)
            .chunks(2)
            .map(|c| i16::from_le_bytes([c[0], c[1] & 0x3f]) - 2000)
            .collect();
        for taps in [8, 16, 32, 48] {
            for outputs in [0, 1, 7, 8, 9, 23] {
                let weights: Vec<i16> = bytes(outputs * taps * 2, 5)
                    .chunks(2)
                    .map(|c| i16::from_le_bytes([c[0], c[1] & 0x1f]) - 3000)
                    .collect();
                let starts: Vec<usize> = (0..outputs).map(|k| k * 7 % (200 - taps)).collect();
                let mut out = vec![0u8; outputs];
                let checked = HorizontalTaps::new(&starts, &weights, taps);
                horizontal_on(kernel, &samples, &checked, 14, &mut out);
                for (k, &o) in out.iter().enumerate() {
                    let sum: i64 = (1 << 13)
                        + (0..taps)
                            .map(|t| {
                                i64::from(samples[starts[k] + t]) * i64::from(weights[k * taps + t])
                            })
                            .sum::<i64>();
                    assert_eq!(
                        i64::from(o),
                        (sum >> 14).clamp(0, 255),
                        "{kernel:?} taps {taps} output {k}"
                    );
                }
                // Sums clamp at both ends (with 48 taps the sums spread too wide to hit 255 for sure).
                assert!(outputs < 8 || taps > 32 || out.contains(&0) && out.contains(&255));
            }
        }
    }

    #[test]
    #[should_panic(expected = "rows past the plane")]
    fn a_pass_reading_past_the_plane_panics_rather_than_reading_it() {
        let src = vec![0u8; 100];
        vertical(&src, 10, 8, 0, &[1, 1, 1], 8, &mut [0i16; 10]);
    }

    #[test]
    #[should_panic(expected = "taps past the row")]
    fn a_tap_past_the_row_panics_rather_than_reading_it() {
        let (starts, weights) = ([0, 90, 4], [1i16; 48]);
        horizontal(
            &[0i16; 100],
            &HorizontalTaps::new(&starts, &weights, 16),
            8,
            &mut [0u8; 3],
        );
    }
}
