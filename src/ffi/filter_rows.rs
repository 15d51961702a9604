//! The two inner loops of framefeed's resampler (`transform::resample`), vectorized with AVX2 where the CPU
//! has it: the vertical pass (a weighted sum of source rows, 16 columns a step with `vpmaddwd` over pairs of
//! rows) and the horizontal pass (8 outputs at a time, 16 taps a step). Safe functions; each has a scalar twin
//! with the same integer arithmetic, which the vector code equals exactly (sums of exact 32-bit products, the
//! same rounding and saturation), used for row tails and where AVX2 is missing.

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
    assert!((1..16).contains(&shift), "shift");
    if out.is_empty() || weights.is_empty() {
        out.fill(0);
        return;
    }
    let last = (first_row + weights.len() - 1) * stride + column + out.len();
    assert!(last <= src.len(), "rows past the plane");
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if super::yuv2rgb::available() {
        // SAFETY: AVX2 is present; every row the taps read holds `out.len()` bytes from `column` (asserted).
        done = unsafe { avx2::vertical(src, stride, first_row, column, weights, shift, out) };
    }
    for (i, o) in out.iter_mut().enumerate().skip(done) {
        let mut sum = 1i32 << (shift - 1);
        for (t, &w) in weights.iter().enumerate() {
            sum += i32::from(w) * i32::from(src[(first_row + t) * stride + column + i]);
        }
        *o = saturate(sum >> shift);
    }
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

/// `out[k] = clamp((round + Σ_t samples[starts[k] + t] * weights[k * taps + t]) >> shift, 0, 255)` with
/// `round = 1 << (shift - 1)`, for every `k < out.len()`: one output row of the horizontal pass. Panics if
/// `out` has more outputs than `taps` or a tap would read past `samples`.
pub(crate) fn horizontal(samples: &[i16], taps: &HorizontalTaps<'_>, shift: u32, out: &mut [u8]) {
    assert!((1..31).contains(&shift), "shift");
    assert!(out.len() <= taps.starts.len(), "taps for every output");
    assert!(taps.reach <= samples.len(), "taps past the row");
    let HorizontalTaps {
        starts,
        weights,
        taps,
        ..
    } = *taps;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if super::yuv2rgb::available() && taps % 16 == 0 {
        // SAFETY: AVX2 is present; every output's taps lie inside `samples` and `weights` (checked by
        // `HorizontalTaps::new` and above).
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

fn saturate(v: i32) -> i16 {
    v.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// Steps of 16 columns per block of the vertical pass (1024 columns; 4 KiB of sums).
    const BLOCK: usize = 64;

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
        let round = _mm256_set1_epi32(1 << (shift - 1));
        let count = _mm_cvtsi32_si128(shift as i32);
        // Blocks of up to `BLOCK` steps, each row pair read along the block, its sums kept in place (in the
        // first-level cache): the rows stream in order, which the hardware prefetches, rather than 16 bytes of
        // each in turn.
        let mut sums = [round; 2 * BLOCK];
        for block in (0..steps).step_by(BLOCK) {
            let n = (steps - block).min(BLOCK);
            sums[..2 * n].fill(round);
            for (p, pair) in weights.chunks(2).enumerate() {
                let t = 2 * p;
                // The pair's weights as `vpmaddwd` multiplies them: (w0, w1) in each 32-bit lane; an odd last
                // one pairs with 0 (and reads its own row twice).
                let (w0, w1) = (
                    pair[0] as u16 as u32,
                    pair.get(1).map_or(0, |&w| w as u16 as u32),
                );
                let w = _mm256_set1_epi32((w0 | w1 << 16) as i32);
                let row0 = base.add(t * stride + block * 16);
                // For an unpaired last row, row 0 again, weighted 0.
                let row1 = if t + 1 < weights.len() {
                    base.add((t + 1) * stride + block * 16)
                } else {
                    row0
                };
                for (i, acc) in sums[..2 * n].chunks_exact_mut(2).enumerate() {
                    // SAFETY: rows t and t + 1 hold 16 bytes from column `(block + i) * 16 < steps * 16`
                    // (the caller's contract).
                    let r0 =
                        _mm256_cvtepu8_epi16(_mm_loadu_si128(row0.add(i * 16).cast::<__m128i>()));
                    let r1 =
                        _mm256_cvtepu8_epi16(_mm_loadu_si128(row1.add(i * 16).cast::<__m128i>()));
                    // Within each 128-bit lane: columns 0-3 (8-11) of the pair, then columns 4-7 (12-15).
                    acc[0] = _mm256_add_epi32(
                        acc[0],
                        _mm256_madd_epi16(_mm256_unpacklo_epi16(r0, r1), w),
                    );
                    acc[1] = _mm256_add_epi32(
                        acc[1],
                        _mm256_madd_epi16(_mm256_unpackhi_epi16(r0, r1), w),
                    );
                }
            }
            for (i, pair) in sums[..2 * n].chunks_exact(2).enumerate() {
                let lo = _mm256_sra_epi32(pair[0], count);
                let hi = _mm256_sra_epi32(pair[1], count);
                // Packing lane by lane puts the 16 columns back in order, saturated to 16 bits.
                let packed = _mm256_packs_epi32(lo, hi);
                // SAFETY: `(block + i) * 16 + 16 <= steps * 16 <= out.len()`.
                _mm256_storeu_si256(
                    out.as_mut_ptr().add((block + i) * 16).cast::<__m256i>(),
                    packed,
                );
            }
        }
        steps * 16
    }

    /// [`super::horizontal`] for the first `out.len() / 8 * 8` outputs, 8 at a time; returns how many it did.
    ///
    /// # Safety
    /// AVX2 must be present; `taps` is a multiple of 16, and every output's taps lie inside `samples` and
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
                let mut t = 0;
                while t < taps {
                    // SAFETY: the output's `taps` samples and weights are inside the slices.
                    let a = _mm256_loadu_si256(s.add(t).cast::<__m256i>());
                    let b = _mm256_loadu_si256(w.add(t).cast::<__m256i>());
                    *sum = _mm256_add_epi32(*sum, _mm256_madd_epi16(a, b));
                    t += 16;
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
            let v = _mm256_sra_epi32(_mm256_add_epi32(total, round), count);
            // To 8 bytes, clamped to 0-255: signed saturation to 16 bits, then unsigned to 8.
            let words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
            let bytes = _mm_packus_epi16(words, words);
            // SAFETY: `g * 8 + 8 <= out.len()`.
            _mm_storel_epi64(out.as_mut_ptr().add(g * 8).cast::<__m128i>(), bytes);
        }
        groups * 8
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

    /// Every column of the vector pass equals the plain sum, at every width (vector steps and tails), for
    /// odd and even tap counts and weights of both signs at the extremes.
    #[test]
    fn vertical_equals_the_plain_sum() {
        let (stride, rows) = (80, 30);
        let src = bytes(stride * rows, 7);
        for taps in 1..=21 {
            let weights: Vec<i16> = (0..taps)
                .map(|t| match t % 4 {
                    0 => i16::MAX,
                    1 => -9000,
                    2 => i16::MIN,
                    _ => 123,
                })
                .collect();
            for width in [0, 1, 15, 16, 17, 33, 64] {
                let mut out = vec![0i16; width];
                vertical(&src, stride, 3, 5, &weights, 8, &mut out);
                for (i, &o) in out.iter().enumerate() {
                    let sum: i64 = 128
                        + weights
                            .iter()
                            .enumerate()
                            .map(|(t, &w)| i64::from(w) * i64::from(src[(3 + t) * stride + 5 + i]))
                            .sum::<i64>();
                    let want = (sum >> 8).clamp(i64::from(i16::MIN), i64::from(i16::MAX));
                    assert_eq!(i64::from(o), want, "taps {taps} width {width} column {i}");
                }
            }
        }
    }

    /// Every output of the vector pass equals the plain sum, for groups of 8 and tails, with sums that
    /// clamp at both ends.
    #[test]
    fn horizontal_equals_the_plain_sum() {
        let samples: Vec<i16> = bytes(400, 3)
            .chunks(2)
            .map(|c| i16::from_le_bytes([c[0], c[1] & 0x3f]) - 2000)
            .collect();
        for taps in [16, 32] {
            for outputs in [0, 1, 7, 8, 9, 23] {
                let weights: Vec<i16> = bytes(outputs * taps * 2, 5)
                    .chunks(2)
                    .map(|c| i16::from_le_bytes([c[0], c[1] & 0x1f]) - 3000)
                    .collect();
                let starts: Vec<usize> = (0..outputs).map(|k| k * 7 % (200 - taps)).collect();
                let mut out = vec![0u8; outputs];
                let checked = HorizontalTaps::new(&starts, &weights, taps);
                horizontal(&samples, &checked, 14, &mut out);
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
                        "taps {taps} output {k}"
                    );
                }
                assert!(outputs < 8 || out.contains(&0) && out.contains(&255));
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
