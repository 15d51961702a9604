//! Squares of pixels transposed, 16 bytes a side: the turn of a picture a quarter (`transform::orient`), 16 rows
//! of 16 one-byte pixels or 8 rows of 8 two-byte ones at a time, with SSE2 (every x86-64 CPU has it: four or
//! three rounds of interleaving registers). Safe functions, which check every offset; a scalar twin (the same
//! moves, a pixel at a time) that the vector code is tested against, and that other CPUs run.

/// Where a square's rows lie in a plane: the first one's offset, and the distance from each to the next
/// (negative for rows taken bottom up).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rows {
    pub(crate) first: usize,
    pub(crate) step: isize,
}

impl Rows {
    /// The offset of row `i`, `i` below a count the caller checked with [`Rows::check`].
    fn at(self, i: usize) -> usize {
        (self.first as isize + self.step * i as isize) as usize
    }

    /// Panics unless each of `count` rows leaves 16 bytes in a slice of `len`.
    fn check(self, count: usize, len: usize, what: &str) {
        let last = (count as isize - 1)
            .checked_mul(self.step)
            .and_then(|d| (self.first as isize).checked_add(d));
        let fits = |o: isize| o >= 0 && (o as usize).checked_add(16).is_some_and(|end| end <= len);
        assert!(
            isize::try_from(self.first).is_ok_and(fits) && last.is_some_and(fits),
            "a {what} row outside the plane"
        );
    }
}

/// Transposes a square of 16 x 16 bytes: source row `i` is the 16 bytes of `src` from `rows.at(i)`, and
/// destination row `j` (the 16 bytes of `dst` from `outs.at(j)`) becomes byte `j` of every source row `i`.
/// Panics if a row leaves fewer than 16 bytes in its slice.
pub(crate) fn bytes_16x16(src: &[u8], rows: Rows, dst: &mut [u8], outs: Rows) {
    rows.check(16, src.len(), "source");
    outs.check(16, dst.len(), "destination");
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of x86-64; every offset leaves 16 bytes in its slice (checked above), and the
        // destination rows are written through the `&mut` slice alone.
        unsafe { sse2::bytes_16x16(src, rows, dst, outs) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    scalar::<1, 16>(src, rows, dst, outs);
}

/// [`bytes_16x16`] for a square of 8 x 8 two-byte pixels (16 bytes a side).
pub(crate) fn words_8x8(src: &[u8], rows: Rows, dst: &mut [u8], outs: Rows) {
    rows.check(8, src.len(), "source");
    outs.check(8, dst.len(), "destination");
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: as in `bytes_16x16`.
        unsafe { sse2::words_8x8(src, rows, dst, outs) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    scalar::<2, 8>(src, rows, dst, outs);
}

/// The scalar twin: `S` pixels of `N` bytes a side.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn scalar<const N: usize, const S: usize>(src: &[u8], rows: Rows, dst: &mut [u8], outs: Rows) {
    for j in 0..S {
        let out = outs.at(j);
        for i in 0..S {
            let row = rows.at(i);
            dst[out + i * N..out + (i + 1) * N]
                .copy_from_slice(&src[row + j * N..row + (j + 1) * N]);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::*;

    use super::Rows;

    /// # Safety
    /// Every row leaves 16 bytes in its slice.
    #[inline(always)]
    pub(super) unsafe fn bytes_16x16(src: &[u8], rows: Rows, dst: &mut [u8], outs: Rows) {
        // SAFETY (this block): 16-byte unaligned loads and stores at offsets the caller checked.
        unsafe {
            let r: [__m128i; 16] =
                std::array::from_fn(|i| _mm_loadu_si128(src.as_ptr().add(rows.at(i)).cast()));
            // Round 1: the bytes of rows 2k and 2k+1 interleaved (a[k] columns 0-7, a[k + 8] columns 8-15, as
            // 16-bit pairs); round 2: those pairs of row pairs 2k and 2k+1 (32-bit quads); round 3: the quads of
            // quads 2k and 2k+1; round 4: the halves of a column. Register j then holds column j.
            let mut a = [_mm_setzero_si128(); 16];
            for k in 0..8 {
                a[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
                a[k + 8] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
            }
            let mut b = [_mm_setzero_si128(); 16];
            for h in 0..2 {
                for k in 0..4 {
                    let (x, y) = (a[8 * h + 2 * k], a[8 * h + 2 * k + 1]);
                    b[8 * h + k] = _mm_unpacklo_epi16(x, y);
                    b[8 * h + k + 4] = _mm_unpackhi_epi16(x, y);
                }
            }
            let mut c = [_mm_setzero_si128(); 16];
            for q in 0..4 {
                for k in 0..2 {
                    let (x, y) = (b[4 * q + 2 * k], b[4 * q + 2 * k + 1]);
                    c[4 * q + k] = _mm_unpacklo_epi32(x, y);
                    c[4 * q + k + 2] = _mm_unpackhi_epi32(x, y);
                }
            }
            let mut d = [_mm_setzero_si128(); 16];
            for e in 0..8 {
                let (x, y) = (c[2 * e], c[2 * e + 1]);
                d[2 * e] = _mm_unpacklo_epi64(x, y);
                d[2 * e + 1] = _mm_unpackhi_epi64(x, y);
            }
            for (j, column) in d.iter().enumerate() {
                _mm_storeu_si128(dst.as_mut_ptr().add(outs.at(j)).cast(), *column);
            }
        }
    }

    /// # Safety
    /// Every row leaves 16 bytes in its slice.
    #[inline(always)]
    pub(super) unsafe fn words_8x8(src: &[u8], rows: Rows, dst: &mut [u8], outs: Rows) {
        // SAFETY (this block): 16-byte unaligned loads and stores at offsets the caller checked.
        unsafe {
            let r: [__m128i; 8] =
                std::array::from_fn(|i| _mm_loadu_si128(src.as_ptr().add(rows.at(i)).cast()));
            let mut a = [_mm_setzero_si128(); 8];
            for k in 0..4 {
                a[k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
                a[k + 4] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
            }
            let mut b = [_mm_setzero_si128(); 8];
            for h in 0..2 {
                for k in 0..2 {
                    let (x, y) = (a[4 * h + 2 * k], a[4 * h + 2 * k + 1]);
                    b[4 * h + k] = _mm_unpacklo_epi32(x, y);
                    b[4 * h + k + 2] = _mm_unpackhi_epi32(x, y);
                }
            }
            let mut c = [_mm_setzero_si128(); 8];
            for e in 0..4 {
                let (x, y) = (b[2 * e], b[2 * e + 1]);
                c[2 * e] = _mm_unpacklo_epi64(x, y);
                c[2 * e + 1] = _mm_unpackhi_epi64(x, y);
            }
            for (j, column) in c.iter().enumerate() {
                _mm_storeu_si128(dst.as_mut_ptr().add(outs.at(j)).cast(), *column);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector code equals the scalar twin on squares at scattered offsets, for both pixel sizes.
    #[test]
    fn squares_transpose_as_the_scalar_twin_does() {
        let src: Vec<u8> = (0..4096u32).map(|i| (i * 37 + i / 7) as u8).collect();
        for (rows, outs) in [
            (
                Rows {
                    first: 5,
                    step: 211,
                },
                Rows { first: 3, step: 97 },
            ),
            (
                Rows {
                    first: 3900,
                    step: -203,
                },
                Rows {
                    first: 1900,
                    step: -101,
                },
            ),
        ] {
            let (mut vector, mut twin) = (vec![0u8; 2048], vec![0u8; 2048]);
            bytes_16x16(&src, rows, &mut vector, outs);
            scalar::<1, 16>(&src, rows, &mut twin, outs);
            assert_eq!(vector, twin);
            // Row j of the output is column j of the input.
            assert_eq!(vector[outs.at(2) + 5], src[rows.at(5) + 2]);
            let (mut vector, mut twin) = (vec![0u8; 2048], vec![0u8; 2048]);
            words_8x8(&src, rows, &mut vector, outs);
            scalar::<2, 8>(&src, rows, &mut twin, outs);
            assert_eq!(vector, twin);
            assert_eq!(
                vector[outs.at(2) + 10..outs.at(2) + 12],
                src[rows.at(5) + 4..rows.at(5) + 6]
            );
        }
    }

    #[test]
    #[should_panic(expected = "a source row outside the plane")]
    fn a_row_past_the_plane_is_refused() {
        let src = vec![0u8; 100];
        let rows = Rows { first: 0, step: 6 };
        bytes_16x16(&src, rows, &mut [0u8; 32], Rows { first: 0, step: 0 });
    }

    #[test]
    #[should_panic(expected = "a source row outside the plane")]
    fn rows_going_up_past_the_start_are_refused() {
        let rows = Rows {
            first: 50,
            step: -10,
        };
        bytes_16x16(
            &[0u8; 100],
            rows,
            &mut [0u8; 32],
            Rows { first: 0, step: 0 },
        );
    }
}
