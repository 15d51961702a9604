//! A vectorized YUV 4:2:0 → RGB24 conversion (AVX2, 32 pixels per step; AVX-512 with the byte permutes, 64)
//! that reproduces swscale's x86 fast path (`ff_yuv_420_rgb24_ssse3`, 16 pixels per step) bit for bit: the same
//! 16-bit fixed-point steps in the same order — luma and chroma scaled by 8 and offset, `pmulhw` by the
//! context's coefficients, saturating sums, and a clamp to 0-255 — with each chroma sample over its 2x2 pixels.
//! The coefficients are derived as `sws_setColorspaceDetails` derives them; [`crate::ffi::scale::Scaler`] uses this
//! path only once a probe over every (Y, U, V) triple gave swscale's own bytes (see `scale::simd_agrees`), and
//! swscale otherwise.
//!
//! The two vector kernels differ only in how they put the three channels' bytes in RGB order: AVX2 by byte
//! shuffles within 128-bit lanes, AVX-512 by one two-table byte permute (`vpermt2b`) and one masked permute
//! (`vpermb`) per 64 output bytes. A row's last 32 pixels are converted by one more AVX2 step from an even
//! column, overlapping the steps before; a scalar twin of the same arithmetic converts rows narrower than 32
//! pixels, the last pixel of an odd width (when the overlap leaves it), and every pixel on [`Kernel::Scalar`].

use super::kernel::Kernel;

/// The fixed-point constants of swscale's x86 YUV → RGB code, for one colour matrix and range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Coefficients {
    y_offset: i16,
    y: i16,
    /// The chroma offset, 128 scaled by 8.
    uv_offset: i16,
    vr: i16,
    ub: i16,
    ug: i16,
    vg: i16,
}

/// swscale's `roundToInt16`: a 16.16 fixed-point value rounded to an integer and clipped to `i16`.
fn round_to_i16(f: i64) -> i16 {
    let r = (f + (1 << 15)) >> 16;
    r.clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16
}

impl Coefficients {
    /// The constants for the matrix `table` (`sws_getCoefficients`: `[crv, cbu, cgu, cgv]` in 16.16) and the
    /// source range, at swscale's neutral brightness, contrast and saturation (what `Scaler` sets).
    pub(crate) fn new(table: [i32; 4], full_range: bool) -> Self {
        let mut crv = i64::from(table[0]);
        let mut cbu = i64::from(table[1]);
        let mut cgu = -i64::from(table[2]);
        let mut cgv = -i64::from(table[3]);
        let mut cy: i64 = 1 << 16;
        let mut oy: i64 = 0;
        if full_range {
            for c in [&mut crv, &mut cbu, &mut cgu, &mut cgv] {
                *c = *c * 224 / 255;
            }
        } else {
            cy = cy * 255 / 219;
            oy = 16 << 16;
        }
        Self {
            y_offset: round_to_i16(oy * (1 << 3)),
            y: round_to_i16(cy * (1 << 13)),
            uv_offset: 128 << 3,
            vr: round_to_i16(crv * (1 << 13)),
            ub: round_to_i16(cbu * (1 << 13)),
            ug: round_to_i16(cgu * (1 << 13)),
            vg: round_to_i16(cgv * (1 << 13)),
        }
    }

    /// One pixel, exactly as one lane of the vector code computes it: `[r, g, b]`.
    fn pixel(&self, y: u8, u: u8, v: u8) -> [u8; 3] {
        let mulhi = |a: i16, b: i16| ((i32::from(a) * i32::from(b)) >> 16) as i16;
        let luma = mulhi((i16::from(y) << 3).wrapping_sub(self.y_offset), self.y);
        let u = (i16::from(u) << 3).saturating_sub(self.uv_offset);
        let v = (i16::from(v) << 3).saturating_sub(self.uv_offset);
        let green = mulhi(u, self.ug).saturating_add(mulhi(v, self.vg));
        let clamp = |c: i16| c.clamp(0, 255) as u8;
        [
            clamp(luma.saturating_add(mulhi(v, self.vr))),
            clamp(luma.saturating_add(green)),
            clamp(luma.saturating_add(mulhi(u, self.ub))),
        ]
    }
}

/// A YUV 4:2:0 picture's planes, as raw pointers into a decoded frame (the caller's `AVFrame`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Planes {
    pub(crate) y: *const u8,
    pub(crate) u: *const u8,
    pub(crate) v: *const u8,
    /// Bytes between rows of the luma plane and of each chroma plane.
    pub(crate) y_stride: isize,
    pub(crate) uv_stride: isize,
}

/// Converts `width` x `height` pixels of `src` to RGB24 rows of `dst`, `stride` bytes apart, on `kernel`
/// (which must be [`Kernel::available`]).
///
/// # Safety
/// `src` must point at `height` luma rows of at least `width` bytes, `y_stride` apart, and at
/// `height.div_ceil(2)` rows of at least `width.div_ceil(2)` bytes in each chroma plane, `uv_stride` apart.
pub(crate) unsafe fn convert(
    c: &Coefficients,
    src: Planes,
    width: usize,
    height: usize,
    dst: &mut [u8],
    stride: usize,
    kernel: Kernel,
) {
    assert!(stride >= width * 3, "stride shorter than a row");
    assert!(
        height == 0 || dst.len() >= stride * (height - 1) + width * 3,
        "destination too small"
    );
    assert!(kernel.available(), "{kernel:?} is missing on this CPU");
    let chroma_width = width.div_ceil(2);
    for row in 0..height {
        // SAFETY: the rows are inside the planes (the caller's contract); row / 2 < height.div_ceil(2).
        let (y, u, v) = unsafe {
            (
                std::slice::from_raw_parts(src.y.offset(row as isize * src.y_stride), width),
                std::slice::from_raw_parts(
                    src.u.offset((row / 2) as isize * src.uv_stride),
                    chroma_width,
                ),
                std::slice::from_raw_parts(
                    src.v.offset((row / 2) as isize * src.uv_stride),
                    chroma_width,
                ),
            )
        };
        let out = &mut dst[row * stride..row * stride + width * 3];
        let done = vector_row(kernel, c, y, u, v, out);
        for x in done..width {
            out[x * 3..x * 3 + 3].copy_from_slice(&c.pixel(y[x], u[x / 2], v[x / 2]));
        }
    }
}

/// The vector part of one row on `kernel` (available): returns how many of its first pixels it converted,
/// which is all of them, or all but the last of an odd width, when the row has 32 or more. `u` and `v` hold
/// `y.len().div_ceil(2)` samples and `out` `y.len() * 3` bytes.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
fn vector_row(
    kernel: Kernel,
    c: &Coefficients,
    y: &[u8],
    u: &[u8],
    v: &[u8],
    out: &mut [u8],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if kernel != Kernel::Scalar {
        let width = y.len();
        let mut done = 0;
        if kernel == Kernel::Avx512 {
            // SAFETY: the CPU has the features (`kernel` is available); the slices hold the row (above).
            done = unsafe { avx512::row(c, y, u, v, out) };
        }
        // AVX2 steps from `done` (a multiple of 64, so an even column: the chroma samples start at `done / 2`),
        // where 32 pixels or more are left.
        if width - done >= 32 {
            // SAFETY: AVX2 is present (any kernel but the scalar one); the slices from `done` hold the rest of
            // the row, its chroma and its bytes.
            done += unsafe {
                avx2::row(
                    c,
                    &y[done..],
                    &u[done / 2..],
                    &v[done / 2..],
                    &mut out[done * 3..],
                )
            };
        }
        if width - done >= 2 && width >= 32 {
            // The last 32 pixels from an even column (each pixel's value is its own, so converting some twice
            // changes nothing): at most one pixel is left for the scalar loop (as it is when only one was).
            let start = (width - 32) / 2 * 2;
            // SAFETY: as above; the slices from `start` hold 32 or 33 pixels, their chroma and their bytes.
            done = start
                + unsafe {
                    avx2::row(
                        c,
                        &y[start..],
                        &u[start / 2..],
                        &v[start / 2..],
                        &mut out[start * 3..],
                    )
                };
        }
        return done;
    }
    0
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::Coefficients;

    /// Byte shuffles that interleave 16 R, 16 G and 16 B bytes (one 128-bit lane each) into 48 bytes of RGB24:
    /// for output block `k` (bytes `16k..16k+16`) and channel `ch`, byte `i` takes pixel `(16k + i) / 3` when
    /// `(16k + i) % 3 == ch`, and zero (0x80) otherwise.
    const fn shuffle(k: usize, ch: usize) -> [i8; 32] {
        let mut m = [0i8; 32];
        let mut i = 0;
        while i < 16 {
            let j = 16 * k + i;
            let b = if j % 3 == ch { (j / 3) as i8 } else { -128 };
            m[i] = b;
            m[i + 16] = b;
            i += 1;
        }
        m
    }

    const SHUFFLES: [[[i8; 32]; 3]; 3] = [
        [shuffle(0, 0), shuffle(0, 1), shuffle(0, 2)],
        [shuffle(1, 0), shuffle(1, 1), shuffle(1, 2)],
        [shuffle(2, 0), shuffle(2, 1), shuffle(2, 2)],
    ];

    /// Converts the row's pixels in steps of 32 and returns how many it converted (the rest is the caller's).
    ///
    /// # Safety
    /// The CPU must have AVX2. `u` and `v` must hold `y.len().div_ceil(2)` samples and `out` `y.len() * 3`
    /// bytes.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn row(
        c: &Coefficients,
        y: &[u8],
        u: &[u8],
        v: &[u8],
        out: &mut [u8],
    ) -> usize {
        let steps = y.len() / 32;
        let splat = _mm256_set1_epi16;
        let (y_off, y_coef, uv_off) = (splat(c.y_offset), splat(c.y), splat(c.uv_offset));
        let (vr, ub, ug, vg) = (splat(c.vr), splat(c.ub), splat(c.ug), splat(c.vg));
        let low_bytes = splat(0x00ff);
        // SAFETY: the masks are 32-byte arrays, read unaligned.
        let masks: [[__m256i; 3]; 3] = std::array::from_fn(|k| {
            std::array::from_fn(|ch| unsafe { _mm256_loadu_si256(SHUFFLES[k][ch].as_ptr().cast()) })
        });
        for s in 0..steps {
            // SAFETY: step `s` reads luma bytes 32s..32s+32 and chroma bytes 16s..16s+16, all inside the rows
            // (32s + 32 <= y.len(), and the chroma rows hold y.len() / 2 or more), and writes output bytes
            // 96s..96s+96 <= out.len().
            unsafe {
                let luma = _mm256_loadu_si256(y.as_ptr().add(32 * s).cast());
                let cu = _mm256_cvtepu8_epi16(_mm_loadu_si128(u.as_ptr().add(16 * s).cast()));
                let cv = _mm256_cvtepu8_epi16(_mm_loadu_si128(v.as_ptr().add(16 * s).cast()));
                // Even and odd pixels of each 16-pixel lane, as 16-bit values.
                let even = _mm256_and_si256(luma, low_bytes);
                let odd = _mm256_srli_epi16(luma, 8);
                let scaled = |l: __m256i| {
                    _mm256_mulhi_epi16(_mm256_sub_epi16(_mm256_slli_epi16(l, 3), y_off), y_coef)
                };
                let (even, odd) = (scaled(even), scaled(odd));
                let cu = _mm256_subs_epi16(_mm256_slli_epi16(cu, 3), uv_off);
                let cv = _mm256_subs_epi16(_mm256_slli_epi16(cv, 3), uv_off);
                let green =
                    _mm256_adds_epi16(_mm256_mulhi_epi16(cu, ug), _mm256_mulhi_epi16(cv, vg));
                let blue = _mm256_mulhi_epi16(cu, ub);
                let red = _mm256_mulhi_epi16(cv, vr);
                // Each channel's 16 bytes per lane in pixel order.
                let channel = |delta: __m256i| {
                    let e = _mm256_adds_epi16(delta, even);
                    let o = _mm256_adds_epi16(odd, delta);
                    _mm256_packus_epi16(_mm256_unpacklo_epi16(e, o), _mm256_unpackhi_epi16(e, o))
                };
                let rgb = [channel(red), channel(green), channel(blue)];
                let block = |k: usize| {
                    let m = &masks[k];
                    _mm256_or_si256(
                        _mm256_or_si256(
                            _mm256_shuffle_epi8(rgb[0], m[0]),
                            _mm256_shuffle_epi8(rgb[1], m[1]),
                        ),
                        _mm256_shuffle_epi8(rgb[2], m[2]),
                    )
                };
                let (b0, b1, b2) = (block(0), block(1), block(2));
                // Lane 0 holds output bytes 0..48 as (b0, b1, b2), lane 1 bytes 48..96.
                let dst = out.as_mut_ptr().add(96 * s);
                _mm256_storeu_si256(dst.cast(), _mm256_permute2x128_si256(b0, b1, 0x20));
                _mm256_storeu_si256(dst.add(32).cast(), _mm256_permute2x128_si256(b2, b0, 0x30));
                _mm256_storeu_si256(dst.add(64).cast(), _mm256_permute2x128_si256(b1, b2, 0x31));
            }
        }
        steps * 32
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::Coefficients;

    /// Where a step's pixel `p` (0-63) sits in a channel's vector: `packus(even, odd)` puts, in each 128-bit
    /// lane `L`, the channel's values of the even pixels `16L, 16L + 2, ..., 16L + 14` in bytes 0-7 and those
    /// of the odd pixels after them in bytes 8-15.
    const fn slot(p: usize) -> u8 {
        let i = p / 2;
        (16 * (i / 8) + i % 8 + 8 * (p % 2)) as u8
    }

    /// For output vector `k` of a step (RGB24 bytes `64k..64k + 64` of its 192): the `vpermt2b` indices taking
    /// each red byte from the first table and each green one from the second, the `vpermb` indices of the blue
    /// bytes, and the mask of the blue bytes' positions.
    const fn interleave(k: usize) -> ([u8; 64], [u8; 64], u64) {
        let (mut red_green, mut blue, mut blue_mask) = ([0u8; 64], [0u8; 64], 0u64);
        let mut j = 0;
        while j < 64 {
            let (pixel, channel) = ((64 * k + j) / 3, (64 * k + j) % 3);
            match channel {
                0 => red_green[j] = slot(pixel),
                1 => red_green[j] = slot(pixel) | 64,
                _ => {
                    blue[j] = slot(pixel);
                    blue_mask |= 1 << j;
                }
            }
            j += 1;
        }
        (red_green, blue, blue_mask)
    }

    const INTERLEAVE: [([u8; 64], [u8; 64], u64); 3] =
        [interleave(0), interleave(1), interleave(2)];

    /// Converts the row's pixels in steps of 64 and returns how many it converted (the rest is the caller's).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VBMI. `u` and `v` must hold `y.len().div_ceil(2)` samples and `out`
    /// `y.len() * 3` bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn row(
        c: &Coefficients,
        y: &[u8],
        u: &[u8],
        v: &[u8],
        out: &mut [u8],
    ) -> usize {
        let steps = y.len() / 64;
        let splat = _mm512_set1_epi16;
        let (y_off, y_coef, uv_off) = (splat(c.y_offset), splat(c.y), splat(c.uv_offset));
        let (vr, ub, ug, vg) = (splat(c.vr), splat(c.ub), splat(c.ug), splat(c.vg));
        let low_bytes = splat(0x00ff);
        // SAFETY: the tables are 64-byte arrays, read unaligned.
        let tables: [(__m512i, __m512i, __mmask64); 3] = std::array::from_fn(|k| {
            let (red_green, blue, mask) = &INTERLEAVE[k];
            unsafe {
                (
                    _mm512_loadu_si512(red_green.as_ptr().cast()),
                    _mm512_loadu_si512(blue.as_ptr().cast()),
                    *mask,
                )
            }
        });
        for s in 0..steps {
            // SAFETY: step `s` reads luma bytes 64s..64s+64 and chroma bytes 32s..32s+32, all inside the rows
            // (64s + 64 <= y.len(), and the chroma rows hold y.len() / 2 or more), and writes output bytes
            // 192s..192s+192 <= out.len().
            unsafe {
                let luma = _mm512_loadu_si512(y.as_ptr().add(64 * s).cast());
                let cu = _mm512_cvtepu8_epi16(_mm256_loadu_si256(u.as_ptr().add(32 * s).cast()));
                let cv = _mm512_cvtepu8_epi16(_mm256_loadu_si256(v.as_ptr().add(32 * s).cast()));
                // Even and odd pixels, as 16-bit values: slot i holds pixels 2i and 2i + 1.
                let even = _mm512_and_si512(luma, low_bytes);
                let odd = _mm512_srli_epi16(luma, 8);
                let scaled = |l: __m512i| {
                    _mm512_mulhi_epi16(_mm512_sub_epi16(_mm512_slli_epi16(l, 3), y_off), y_coef)
                };
                let (even, odd) = (scaled(even), scaled(odd));
                let cu = _mm512_subs_epi16(_mm512_slli_epi16(cu, 3), uv_off);
                let cv = _mm512_subs_epi16(_mm512_slli_epi16(cv, 3), uv_off);
                let green =
                    _mm512_adds_epi16(_mm512_mulhi_epi16(cu, ug), _mm512_mulhi_epi16(cv, vg));
                let blue = _mm512_mulhi_epi16(cu, ub);
                let red = _mm512_mulhi_epi16(cv, vr);
                // Each channel's 64 bytes, in the order `slot` gives.
                let channel = |delta: __m512i| {
                    _mm512_packus_epi16(
                        _mm512_adds_epi16(delta, even),
                        _mm512_adds_epi16(odd, delta),
                    )
                };
                let (red, green, blue) = (channel(red), channel(green), channel(blue));
                let dst = out.as_mut_ptr().add(192 * s);
                for (k, &(red_green, blue_at, mask)) in tables.iter().enumerate() {
                    let rgb = _mm512_mask_permutexvar_epi8(
                        _mm512_permutex2var_epi8(red, red_green, green),
                        mask,
                        blue_at,
                        blue,
                    );
                    _mm512_storeu_si512(dst.add(64 * k).cast(), rgb);
                }
            }
        }
        steps * 64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BT.601's `sws_getCoefficients` table.
    const BT601: [i32; 4] = [104597, 132201, 25675, 53279];

    #[test]
    fn coefficients_are_swscales_for_bt601() {
        // The values swscale's x86 code loads for BT.601, limited range (yCoeff 9539 = 1.164 * 8192, ...).
        let c = Coefficients::new(BT601, false);
        assert_eq!((c.y_offset, c.y, c.uv_offset), (128, 9539, 1024));
        assert_eq!((c.vr, c.ub, c.ug, c.vg), (13075, 16525, -3209, -6660));
        let full = Coefficients::new(BT601, true);
        assert_eq!((full.y_offset, full.y), (0, 8192));
        // Mid grey stays grey; limited-range black and white reach 0 and 255.
        assert_eq!(c.pixel(16, 128, 128), [0, 0, 0]);
        assert_eq!(c.pixel(235, 128, 128), [255, 255, 255]);
        assert_eq!(full.pixel(128, 128, 128), [128, 128, 128]);
    }

    fn picture(w: usize, h: usize, seed: u32) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let mut state = seed.wrapping_mul(2654435761).max(1);
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as u8
        };
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        (
            (0..w * h).map(|_| next()).collect(),
            (0..cw * ch).map(|_| next()).collect(),
            (0..cw * ch).map(|_| next()).collect(),
        )
    }

    /// Every vector kernel this CPU has gives the scalar twin's bytes, at widths around each kernel's step
    /// (AVX-512's 64, AVX2's 32, the overlapping last step, odd widths) and for two matrices in both ranges.
    #[test]
    fn every_vector_kernel_equals_the_scalar_one_at_every_width() {
        let kernels: Vec<Kernel> = Kernel::ALL
            .into_iter()
            .filter(|&k| k != Kernel::Scalar && k.available())
            .collect();
        if kernels.is_empty() {
            eprintln!("SKIPPED: this CPU has no vector kernel");
            return;
        }
        for (i, table) in [BT601, [117489, 138438, 13975, 34925]]
            .into_iter()
            .enumerate()
        {
            for full in [false, true] {
                let c = Coefficients::new(table, full);
                for w in [
                    1, 2, 31, 32, 33, 63, 64, 65, 97, 127, 128, 130, 161, 193, 254,
                ] {
                    let h = 6;
                    let (y, u, v) = picture(w, h, (w * 7 + i) as u32);
                    let src = Planes {
                        y: y.as_ptr(),
                        u: u.as_ptr(),
                        v: v.as_ptr(),
                        y_stride: w as isize,
                        uv_stride: w.div_ceil(2) as isize,
                    };
                    let stride = w * 3 + 5;
                    let mut want = vec![7u8; stride * h];
                    // SAFETY: the planes are exactly w x h and (w/2) x (h/2), rounded up.
                    unsafe { convert(&c, src, w, h, &mut want, stride, Kernel::Scalar) };
                    for &kernel in &kernels {
                        let mut got = vec![7u8; stride * h];
                        // SAFETY: as above.
                        unsafe { convert(&c, src, w, h, &mut got, stride, kernel) };
                        assert!(
                            got == want,
                            "{kernel:?}, width {w}, table {i}, full range {full}"
                        );
                        // Bytes between rows are left alone.
                        assert!(got.chunks(stride).all(|r| r[w * 3..] == [7u8; 5]));
                    }
                }
            }
        }
        eprintln!("kernels checked: {kernels:?}");
    }
}
