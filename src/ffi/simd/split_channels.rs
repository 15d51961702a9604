//! Packed RGB24 rows to planar float rows: the float writer's inner loop for the planar layouts (CFHW, FCHW),
//! vectorized with AVX2 where the CPU has it (8 pixels a step: one shuffle per channel gathers its 8 levels, then
//! widen, convert, multiply, add). A safe function with a scalar twin of the same arithmetic (a multiply, then
//! an add, each rounded: no fused multiply-add), which the vector code equals exactly.

/// `planes[c][i] = f32::from(rgb[3 * i + c]) * scale[c] + bias[c]` for each channel `c` and every `i <
/// planes[c].len()`. Panics if the planes' lengths differ or `rgb` holds fewer than 3 bytes a pixel.
pub(crate) fn split_f32(rgb: &[u8], scale: [f32; 3], bias: [f32; 3], planes: [&mut [f32]; 3]) {
    let [r, g, b] = planes;
    let n = r.len();
    assert!(g.len() == n && b.len() == n, "planes of one length");
    assert!(rgb.len() >= 3 * n, "3 bytes a pixel");
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if super::kernel::Kernel::Avx2.available() {
        // SAFETY: AVX2 is present; `rgb` holds `3 * n` bytes and each plane `n` values (asserted).
        done = unsafe { avx2::split_f32(rgb, scale, bias, [&mut *r, &mut *g, &mut *b]) };
    }
    for (i, px) in rgb.chunks_exact(3).enumerate().take(n).skip(done) {
        r[i] = f32::from(px[0]) * scale[0] + bias[0];
        g[i] = f32::from(px[1]) * scale[1] + bias[1];
        b[i] = f32::from(px[2]) * scale[2] + bias[2];
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// `pshufb` masks gathering channel `c`'s levels of 8 pixels: from the first 16 bytes (pixels 0-5 and a
    /// third of 5) into bytes 0-5, and from the next 8 (bytes 16-23) into bytes 6-7; -1 zeroes a byte.
    const GATHER: [[[i8; 16]; 2]; 3] = {
        let mut m = [[[-1i8; 16]; 2]; 3];
        let mut c = 0;
        while c < 3 {
            let mut px = 0;
            while px < 8 {
                let at = 3 * px + c;
                if at < 16 {
                    m[c][0][px] = at as i8;
                } else {
                    m[c][1][px] = (at - 16) as i8;
                }
                px += 1;
            }
            c += 1;
        }
        m
    };

    /// [`super::split_f32`] for the first `n / 8 * 8` pixels (`n` the planes' length); returns how many it did.
    ///
    /// # Safety
    /// AVX2 must be present; `rgb` holds `3 * n` bytes and each plane `n` values.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn split_f32(
        rgb: &[u8],
        scale: [f32; 3],
        bias: [f32; 3],
        mut planes: [&mut [f32]; 3],
    ) -> usize {
        let n = planes[0].len();
        let steps = n / 8;
        for step in 0..steps {
            // SAFETY: pixels `8 * step..8 * step + 8` are 24 bytes inside `rgb` (`3 * n` bytes).
            let p = rgb.as_ptr().add(24 * step);
            let lo = _mm_loadu_si128(p.cast());
            let hi = _mm_loadl_epi64(p.add(16).cast());
            for (c, plane) in planes.iter_mut().enumerate() {
                let [first, second] = &GATHER[c];
                let levels = _mm_or_si128(
                    _mm_shuffle_epi8(lo, _mm_loadu_si128(first.as_ptr().cast())),
                    _mm_shuffle_epi8(hi, _mm_loadu_si128(second.as_ptr().cast())),
                );
                let values = _mm256_add_ps(
                    _mm256_mul_ps(
                        _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(levels)),
                        _mm256_set1_ps(scale[c]),
                    ),
                    _mm256_set1_ps(bias[c]),
                );
                // SAFETY: values `8 * step..8 * step + 8` are inside the plane (`n` values).
                _mm256_storeu_ps(plane.as_mut_ptr().add(8 * step), values);
            }
        }
        steps * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value equals the plain expression, at every length (vector steps and tails), with scales and
    /// biases whose products round.
    #[test]
    fn split_equals_the_plain_expression() {
        let rgb: Vec<u8> = (0..3 * 70).map(|i| (i * 89 + i / 7) as u8).collect();
        let (scale, bias) = (
            [1.0 / 255.0 / 0.229, 0.3, -1.7],
            [-0.485 / 0.229, 1e-3, 250.5],
        );
        for n in [0, 1, 7, 8, 9, 16, 23, 64, 70] {
            let mut planes = vec![vec![f32::NAN; n]; 3];
            let [r, g, b] = &mut planes[..] else {
                unreachable!()
            };
            split_f32(&rgb[..3 * n], scale, bias, [r, g, b]);
            for (c, plane) in planes.iter_mut().enumerate() {
                for (i, &v) in plane.iter().enumerate() {
                    let want = f32::from(rgb[3 * i + c]) * scale[c] + bias[c];
                    assert_eq!(v.to_bits(), want.to_bits(), "n {n} channel {c} pixel {i}");
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "3 bytes a pixel")]
    fn too_few_bytes_panic_rather_than_being_read() {
        let mut planes = [[0f32; 8]; 3];
        let [r, g, b] = &mut planes;
        split_f32(&[0u8; 23], [1.0; 3], [0.0; 3], [r, g, b]);
    }
}
