//! framefeed's resampler for 8-bit planar YUV pictures: the CPU twin of the CUDA kernel's resize
//! (`kernels/convert.cu`, `ff_resample`), in fixed point, and computing only the output pixels asked for.
//!
//! Each axis is resampled on centred sample grids (output sample `o` sits at source position
//! `(o + 0.5) * src / dst - 0.5`), with the filter stretched over the source samples an output sample covers
//! when shrinking (so a downscale is antialiased), and the edge samples repeated past the picture's edges. The
//! filters are those of swscale's flags: nearest, bilinear, bicubic (Keys, `a = -0.6`, swscale's default
//! `B = 0, C = 0.6`) and area (a box). The output is YUV 4:2:0: the chroma planes are resized from their own
//! size (half the source's for 4:2:0; 4:2:2, 4:4:4 and the others as they come) to half the output's (rounded
//! up), as swscale resizes a picture to 4:2:0 and the kernel samples one.
//!
//! Because the filter's taps for an output sample depend only on the whole picture's sizes, any region of the
//! output is computed exactly as in a resize of the whole picture: a crop window costs only its own pixels
//! and the source samples under them, wherever it lies.
//!
//! Arithmetic: each axis' weights are rounded to 14 bits and sum to exactly 1; the vertical pass runs first
//! over the source columns the region needs, keeping 6 fraction bits in 16-bit intermediates, then the
//! horizontal pass rounds to 8 bits. The two inner loops are `ffi::filter_rows`' (AVX-512 or AVX2 where
//! present); the vertical pass sums only an output's taps from its first to its last nonzero weight, and asks
//! for each source row a few output rows before it reads it, as each row's part is too short for the CPU's own
//! prefetchers to see coming.

use std::ops::Range;

use crate::error::AvError;
use crate::ffi::frame::{Plane, PlaneMut};
use crate::ffi::out_of_memory;
use crate::ffi::scale::Filter;
use crate::ffi::simd::filter_rows::{self, HorizontalTaps};

/// Fraction bits of a weight.
const WEIGHT_BITS: u32 = 14;
/// Bits dropped after the vertical pass (leaving `WEIGHT_BITS - VERTICAL_SHIFT` fraction bits).
const VERTICAL_SHIFT: u32 = 8;
/// Bits dropped after the horizontal pass: what is left of both passes' fractions.
const HORIZONTAL_SHIFT: u32 = 2 * WEIGHT_BITS - VERTICAL_SHIFT;
/// How many output rows ahead the vertical pass asks for its source rows.
const LOOKAHEAD: usize = 4;

/// The taps of every output sample of one axis: output `o` reads `taps` source samples from `start[o]` with
/// `weights[o * taps..][..taps]` (fixed point, `WEIGHT_BITS`, summing to exactly `1 << WEIGHT_BITS`).
#[derive(Debug, Clone, PartialEq)]
struct Axis {
    filter: Filter,
    src: usize,
    dst: usize,
    taps: usize,
    start: Vec<usize>,
    weights: Vec<i16>,
}

/// The filter's weight at distance `d`, in source samples divided by the filter's stretch (the kernel's
/// `ff_weight`).
fn weight(filter: Filter, d: f64) -> f64 {
    let d = d.abs();
    match filter {
        Filter::Bicubic => {
            let a = -0.6;
            if d < 1.0 {
                ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0
            } else if d < 2.0 {
                ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a
            } else {
                0.0
            }
        }
        Filter::Area => f64::from(u8::from(d < 0.5)),
        Filter::Bilinear | Filter::Point => (1.0 - d).max(0.0),
    }
}

/// The source samples `(index, weight)` (indices unclamped, weights not normalized) an output sample at
/// source position `c` reads, when the axis is scaled by `scale` source samples per output sample.
fn source_taps(filter: Filter, c: f64, scale: f64) -> Vec<(i64, f64)> {
    if filter == Filter::Point {
        return vec![((c + 0.5).floor() as i64, 1.0)];
    }
    let stretch = scale.max(1.0);
    let (lo, hi) = if filter == Filter::Area {
        let reach = 0.5 * stretch;
        let lo = (c - reach + 0.5).floor() as i64;
        ((lo), ((c + reach - 0.5).floor() as i64).max(lo))
    } else {
        let reach = if filter == Filter::Bicubic { 2.0 } else { 1.0 } * stretch;
        ((c - reach).floor() as i64 + 1, (c + reach).floor() as i64)
    };
    (lo..=hi)
        .map(|x| {
            let w = if filter == Filter::Area {
                1.0
            } else {
                weight(filter, (x as f64 - c) / stretch)
            };
            (x, w)
        })
        .filter(|&(_, w)| w != 0.0)
        .collect()
}

/// Rounds `weights` (summing to 1) to fixed point summing to exactly `1 << WEIGHT_BITS`, each weight within
/// one unit of its exact value: the rounding's remainder is handed out a unit at a time to the weights whose
/// rounding moved them furthest the other way (the largest-remainder rule). Piling it on one weight instead
/// would put up to half a unit per tap on that weight: a quarter of a level, for a box over 57 samples.
fn quantize(weights: &[f64]) -> Vec<i16> {
    let one = f64::from(1u32 << WEIGHT_BITS);
    let exact: Vec<f64> = weights.iter().map(|w| w * one).collect();
    let mut q: Vec<i32> = exact.iter().map(|e| e.round() as i32).collect();
    let rest = (1 << WEIGHT_BITS) - q.iter().sum::<i32>();
    // What each weight lost to its rounding, in units, in the direction the remainder goes.
    let lost = |i: usize| (exact[i] - f64::from(q[i])) * f64::from(rest.signum());
    let mut order: Vec<usize> = (0..q.len()).collect();
    order.sort_by(|&a, &b| lost(b).total_cmp(&lost(a)));
    // |rest| is at most half the taps (each rounding errs by at most half a unit), so one pass suffices.
    for &i in order.iter().cycle().take(rest.unsigned_abs() as usize) {
        q[i] += rest.signum();
    }
    q.into_iter()
        .map(|v| v.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16)
        .collect()
}

impl Axis {
    /// The taps of an axis scaled from `src` to `dst` samples (both at least 1), each output's taps padded
    /// with zero weights to `pad(span)` taps, `span` being the most source samples an output reads.
    fn new(filter: Filter, src: usize, dst: usize, pad: fn(usize) -> usize) -> Self {
        let scale = src as f64 / dst as f64;
        let last = src as i64 - 1;
        // Each output's taps folded onto the samples inside the axis (the edge samples repeat outwards).
        let folded: Vec<(usize, Vec<f64>)> = (0..dst)
            .map(|o| {
                let c = (o as f64 + 0.5) * scale - 0.5;
                let taps = source_taps(filter, c, scale);
                let total: f64 = taps.iter().map(|t| t.1).sum();
                let lo = taps.iter().map(|t| t.0.clamp(0, last)).min().unwrap_or(0) as usize;
                let hi = taps.iter().map(|t| t.0.clamp(0, last)).max().unwrap_or(0) as usize;
                let mut w = vec![0.0; hi - lo + 1];
                for (x, v) in taps {
                    w[x.clamp(0, last) as usize - lo] += if total != 0.0 { v / total } else { 0.0 };
                }
                if total == 0.0 {
                    w[0] = 1.0;
                }
                (lo, w)
            })
            .collect();
        let span = folded.iter().map(|f| f.1.len()).max().unwrap_or(1);
        let taps = pad(span);
        let mut start = Vec::with_capacity(dst);
        let mut weights = vec![0i16; dst * taps];
        for (o, (lo, w)) in folded.into_iter().enumerate() {
            // Shift the window left where it would run past the last sample (`span` samples always fit).
            let first = lo.min(src - span);
            let q = quantize(&w);
            weights[o * taps + (lo - first)..][..q.len()].copy_from_slice(&q);
            start.push(first);
        }
        Self {
            filter,
            src,
            dst,
            taps,
            start,
            weights,
        }
    }

    fn weights(&self, o: usize) -> &[i16] {
        &self.weights[o * self.taps..][..self.taps]
    }

    /// Output `o`'s taps from its first to its last nonzero weight: `(first source sample, weights)`. Zero
    /// weights add nothing, and the padding to a common tap count and a stretched filter's edges leave some
    /// (1080 -> 256 bilinear: 144 of the 256 outputs read 8 of their 9 taps).
    fn nonzero_taps(&self, o: usize) -> (usize, &[i16]) {
        let w = self.weights(o);
        let lead = w.iter().take_while(|&&v| v == 0).count();
        let end = w
            .iter()
            .rposition(|&v| v != 0)
            .map_or(lead, |last| last + 1);
        (self.start[o] + lead, &w[lead..end])
    }

    /// The source samples outputs `outputs` read: `[first, end)`, `end` possibly past the axis by the padding.
    fn source_span(&self, outputs: &Range<usize>) -> Range<usize> {
        let first = self.start[outputs.start];
        let end = outputs
            .clone()
            .map(|o| self.start[o] + self.taps)
            .max()
            .unwrap_or(first);
        first..end
    }
}

/// One plane's two axes, rebuilt only when the sizes or the filter change.
#[derive(Debug, Default)]
struct PlaneTaps {
    horizontal: Option<Axis>,
    vertical: Option<Axis>,
}

impl PlaneTaps {
    fn get(&mut self, filter: Filter, src: (usize, usize), dst: (usize, usize)) -> (&Axis, &Axis) {
        let fresh = |axis: &Option<Axis>, s: usize, d: usize| {
            axis.as_ref()
                .is_some_and(|a| a.filter == filter && a.src == s && a.dst == d)
        };
        if !fresh(&self.horizontal, src.0, dst.0) {
            self.horizontal = Some(Axis::new(
                filter,
                src.0,
                dst.0,
                filter_rows::horizontal_taps,
            ));
        }
        if !fresh(&self.vertical, src.1, dst.1) {
            self.vertical = Some(Axis::new(filter, src.1, dst.1, |span| span));
        }
        (
            self.horizontal.as_ref().expect("set above"),
            self.vertical.as_ref().expect("set above"),
        )
    }
}

/// A region of the output picture: columns and rows of its luma plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Region {
    pub(crate) columns: Range<usize>,
    pub(crate) rows: Range<usize>,
}

/// Resizes planar YUV pictures to YUV 4:2:0, region by region; keeps the taps and the scratch rows from call to call.
#[derive(Debug, Default)]
pub(crate) struct Resampler {
    luma: PlaneTaps,
    chroma: PlaneTaps,
    /// The vertical pass's output row.
    rows: Vec<i16>,
    /// Each output's first tap in that row.
    starts: Vec<usize>,
}

impl Resampler {
    /// Writes `region` (luma coordinates, inside the output's `size`; the chroma samples under it too) of the
    /// source picture `src` resized to `size` with `filter` into `dst`, whose planes hold a picture of at least
    /// `size` (the output size, not `dst`'s own, sets the filter's scale).
    pub(crate) fn resize(
        &mut self,
        src: &[Plane<'_>; 3],
        dst: &mut [PlaneMut<'_>; 3],
        size: (usize, usize),
        filter: Filter,
        region: &Region,
    ) -> Result<(), AvError> {
        let (w, h) = size;
        assert!(
            region.columns.end <= w && region.rows.end <= h && !region.columns.is_empty(),
            "region outside the output"
        );
        assert!(!region.rows.is_empty(), "an empty region");
        let chroma_size = (w.div_ceil(2), h.div_ceil(2));
        let chroma_region = Region {
            columns: region.columns.start / 2..region.columns.end.div_ceil(2),
            rows: region.rows.start / 2..region.rows.end.div_ceil(2),
        };
        for (p, (s, d)) in src.iter().zip(dst.iter_mut()).enumerate() {
            let (taps, out, reg) = if p == 0 {
                (&mut self.luma, size, region)
            } else {
                (&mut self.chroma, chroma_size, &chroma_region)
            };
            assert!(
                d.width >= out.0 && d.height >= out.1,
                "output plane smaller than the output"
            );
            let (horizontal, vertical) = taps.get(filter, (s.width, s.height), out);
            resample_plane(
                s,
                d,
                horizontal,
                vertical,
                reg,
                &mut self.rows,
                &mut self.starts,
            )?;
        }
        Ok(())
    }
}

/// Sets `buf` to `len` copies of `value`, failing (rather than aborting) if the memory is refused.
fn sized<T: Copy>(buf: &mut Vec<T>, len: usize, value: T) -> Result<(), AvError> {
    buf.clear();
    buf.try_reserve(len)
        .map_err(|_| out_of_memory("resize scratch"))?;
    buf.resize(len, value);
    Ok(())
}

/// One plane's region: the vertical pass over the source columns the region's outputs read, one output row
/// at a time, then the horizontal pass over that row.
fn resample_plane(
    src: &Plane<'_>,
    dst: &mut PlaneMut<'_>,
    horizontal: &Axis,
    vertical: &Axis,
    region: &Region,
    rows: &mut Vec<i16>,
    starts: &mut Vec<usize>,
) -> Result<(), AvError> {
    let span = horizontal.source_span(&region.columns);
    // Columns past the plane (the last outputs' padding taps, weighted 0) stay 0 in the row.
    let inside = span.len().min(src.width - span.start);
    sized(rows, span.len(), 0)?;
    // Each output's first tap in the row.
    starts.clear();
    starts.extend(
        region
            .columns
            .clone()
            .map(|o| horizontal.start[o] - span.start),
    );
    let taps = HorizontalTaps::new(
        starts,
        &horizontal.weights[region.columns.start * horizontal.taps..],
        horizontal.taps,
    );
    // Source rows below `fetched` have been asked for: each output row asks for those of the row
    // `LOOKAHEAD` below it that no earlier row needed.
    let mut fetched = vertical.start[region.rows.start];
    for y in region.rows.clone() {
        let ahead = (y + LOOKAHEAD).min(region.rows.end - 1);
        let want = (vertical.start[ahead] + vertical.taps).min(src.height);
        if want > fetched {
            filter_rows::prefetch_rows(
                src.data,
                src.stride,
                fetched..want,
                span.start..span.start + inside,
            );
            fetched = want;
        }
        let (first_row, weights) = vertical.nonzero_taps(y);
        filter_rows::vertical(
            src.data,
            src.stride,
            first_row,
            span.start,
            weights,
            VERTICAL_SHIFT,
            &mut rows[..inside],
        );
        filter_rows::horizontal(
            rows,
            &taps,
            HORIZONTAL_SHIFT,
            &mut dst.data[y * dst.stride..][region.columns.clone()],
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FILTERS: [Filter; 4] = [
        Filter::Point,
        Filter::Bilinear,
        Filter::Bicubic,
        Filter::Area,
    ];

    /// The kernel's definition in floating point, for one plane: every output sample as the normalized
    /// weighted sum of its (clamped) source samples.
    fn reference(plane: &[u8], sw: usize, sh: usize, dw: usize, dh: usize, f: Filter) -> Vec<f64> {
        let axis = |src: usize, dst: usize| -> Vec<Vec<(usize, f64)>> {
            let scale = src as f64 / dst as f64;
            (0..dst)
                .map(|o| {
                    let taps = source_taps(f, (o as f64 + 0.5) * scale - 0.5, scale);
                    let total: f64 = taps.iter().map(|t| t.1).sum();
                    taps.into_iter()
                        .map(|(x, w)| (x.clamp(0, src as i64 - 1) as usize, w / total))
                        .collect()
                })
                .collect()
        };
        let (ax, ay) = (axis(sw, dw), axis(sh, dh));
        let mut out = Vec::with_capacity(dw * dh);
        for ty in &ay {
            for tx in &ax {
                let mut v = 0.0;
                for &(y, wy) in ty {
                    for &(x, wx) in tx {
                        v += wy * wx * f64::from(plane[y * sw + x]);
                    }
                }
                out.push(v);
            }
        }
        out
    }

    fn noise(len: usize, seed: u32) -> Vec<u8> {
        let mut s = seed.wrapping_mul(2_654_435_761) | 1;
        (0..len)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                // Smooth ramps with noise on top: overshoot and clipping both happen.
                ((i % 97) as u32 * 2 + (s % 64)).min(255) as u8
            })
            .collect()
    }

    /// `region` of one plane resized by the resampler (as the luma of a picture with flat chroma, which must
    /// stay flat), in a `dw` x `dh` buffer of zeros elsewhere.
    fn resize_region(
        plane: &[u8],
        (sw, sh): (usize, usize),
        (dw, dh): (usize, usize),
        f: Filter,
        region: &Region,
    ) -> Vec<u8> {
        let (scw, sch) = (sw.div_ceil(2), sh.div_ceil(2));
        let chroma = vec![128u8; scw * sch];
        let chroma_in = Plane {
            data: &chroma,
            stride: scw,
            width: scw,
            height: sch,
        };
        let luma_in = Plane {
            data: plane,
            stride: sw,
            width: sw,
            height: sh,
        };
        let (cw, ch) = (dw.div_ceil(2), dh.div_ceil(2));
        let mut y = vec![0u8; dw * dh];
        let mut uv = vec![128u8; 2 * cw * ch];
        let (u, v) = uv.split_at_mut(cw * ch);
        let plane_out = |data, width, height| PlaneMut {
            data,
            stride: width,
            width,
            height,
        };
        let mut dst = [
            plane_out(&mut y, dw, dh),
            plane_out(u, cw, ch),
            plane_out(v, cw, ch),
        ];
        Resampler::default()
            .resize(
                &[luma_in, chroma_in, chroma_in],
                &mut dst,
                (dw, dh),
                f,
                region,
            )
            .unwrap();
        assert!(uv.iter().all(|&c| c == 128), "flat chroma stays flat");
        y
    }

    /// One plane resized whole.
    fn resize_one(plane: &[u8], sw: usize, sh: usize, dw: usize, dh: usize, f: Filter) -> Vec<u8> {
        let whole = Region {
            columns: 0..dw,
            rows: 0..dh,
        };
        resize_region(plane, (sw, sh), (dw, dh), f, &whole)
    }

    #[test]
    fn weights_sum_to_one_and_windows_stay_inside() {
        for f in FILTERS {
            for (src, dst) in [
                (1, 1),
                (1, 7),
                (2, 9),
                (7, 3),
                (1920, 455),
                (1080, 256),
                (64, 200),
            ] {
                let a = Axis::new(f, src, dst, filter_rows::horizontal_taps);
                let exact = Axis::new(f, src, dst, |span| span);
                assert_eq!(a.taps, filter_rows::horizontal_taps(exact.taps));
                for o in 0..dst {
                    let sum: i32 = a.weights(o).iter().map(|&w| i32::from(w)).sum();
                    assert_eq!(sum, 1 << WEIGHT_BITS, "{f:?} {src}->{dst} output {o}");
                    let used = a.weights(o).iter().rposition(|&w| w != 0).unwrap();
                    assert!(a.start[o] + used < src, "{f:?} {src}->{dst} output {o}");
                }
            }
        }
    }

    #[test]
    fn every_weight_is_within_a_unit_of_its_exact_value() {
        for n in 1..=300 {
            let exact = vec![1.0 / n as f64; n];
            let q = quantize(&exact);
            assert_eq!(
                q.iter().map(|&w| i32::from(w)).sum::<i32>(),
                1 << WEIGHT_BITS
            );
            let unit = f64::from(1u32 << WEIGHT_BITS);
            assert!(
                q.iter()
                    .all(|&w| (f64::from(w) - unit / n as f64).abs() < 1.0),
                "{n} taps: {q:?}"
            );
        }
    }

    /// A single bright sample under a box of `n` samples (every `n` to 89, every position) averages to
    /// `255 / n` rounded, as the definition says: its weight errs by under a unit (0.016 levels) and the
    /// intermediate by 1/128, so only ties closer than 0.03 could round the other way. With the remainder of
    /// the weights' rounding piled on one weight, a box of 57 gave 5 for 4.47.
    #[test]
    fn an_impulse_under_a_box_rounds_as_the_definition() {
        for n in 2..90 {
            let want = 255.0 / n as f64;
            if (want.fract() - 0.5).abs() < 0.03 {
                continue;
            }
            for k in 0..n {
                let mut row = vec![0u8; n];
                row[k] = 255;
                let got = resize_one(&row, n, 1, 1, 1, Filter::Area);
                assert_eq!(
                    f64::from(got[0]),
                    want.round(),
                    "box of {n}, bright sample {k}"
                );
            }
        }
    }

    /// The case the property below once found (seed 1213688165): 57 columns boxed into one, where the last
    /// row's 159.70 came out 159.
    #[test]
    fn a_box_of_57_columns_over_noise_rounds_as_the_definition() {
        let (sw, sh, dw, dh) = (57, 12, 1, 12);
        let picture = noise(sw * sh, 1_213_688_165);
        let got = resize_one(&picture, sw, sh, dw, dh, Filter::Area);
        let want = reference(&picture, sw, sh, dw, dh, Filter::Area);
        for (g, w) in got.iter().zip(&want) {
            if (w.fract() - 0.5).abs() > 0.15 {
                assert_eq!(f64::from(*g), w.round(), "{got:?} against {want:?}");
            }
        }
    }

    #[test]
    fn a_flat_picture_stays_flat_and_the_same_size_is_a_copy() {
        for f in FILTERS {
            let flat = vec![77u8; 40 * 30];
            assert!(resize_one(&flat, 40, 30, 13, 57, f)
                .iter()
                .all(|&v| v == 77));
            let picture = noise(40 * 30, 3);
            assert_eq!(resize_one(&picture, 40, 30, 40, 30, f), picture, "{f:?}");
        }
    }

    #[test]
    fn a_region_equals_the_same_pixels_of_the_whole_resize() {
        let (sw, sh, dw, dh) = (193, 121, 61, 44);
        let picture = noise(sw * sh, 9);
        let region = Region {
            columns: 17..40,
            rows: 5..31,
        };
        for f in FILTERS {
            let whole = resize_one(&picture, sw, sh, dw, dh, f);
            let part = resize_region(&picture, (sw, sh), (dw, dh), f, &region);
            for row in region.rows.clone() {
                let cols = region.columns.clone();
                assert_eq!(
                    part[row * dw..][cols.clone()],
                    whole[row * dw..][cols],
                    "{f:?} row {row}"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// For any sizes and filter, the fixed-point result is within one level of the floating-point
        /// definition, and equal to its rounding wherever that is not within 0.15 of a tie (over a noise picture the
        /// weights' errors, each under a unit of 14 bits, and the intermediate's 6 fraction bits err by far less).
        #[test]
        fn fixed_point_is_within_a_level_of_the_definition(
            sw in 1usize..90, sh in 1usize..40, dw in 1usize..90, dh in 1usize..40,
            f in 0usize..4, seed in any::<u32>(),
        ) {
            let f = FILTERS[f];
            let picture = noise(sw * sh, seed);
            let got = resize_one(&picture, sw, sh, dw, dh, f);
            let want = reference(&picture, sw, sh, dw, dh, f);
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let w = w.clamp(0.0, 255.0);
                prop_assert!((f64::from(g) - w).abs() <= 1.0, "sample {}: {} against {}", i, g, w);
                if (w.fract() - 0.5).abs() > 0.15 {
                    prop_assert_eq!(f64::from(g), w.round(), "sample {}: {} against {}", i, g, w);
                }
            }
        }
    }
}
