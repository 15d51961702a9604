//! HDR to SDR on the CPU path ([`ToneMap`]; the GPU twin is the kernel's): a window of a PQ or HLG frame,
//! converted by swscale to 16-bit YUV 4:4:4 (chroma sited as `zscale` reads it: `ffi::scale::Pixels::Yuv16`),
//! mapped pixel by pixel in `f32` to SDR BT.709 RGB as the `ffmpeg` chain
//! `zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=OP,zscale=t=bt709:m=bt709:r=tv` does:
//!
//! 1. YUV to R'G'B' through the frame's matrix and range, unclipped (as zimg keeps values outside [0, 1]);
//! 2. linear light, 1.0 = 100 cd/m² (`npl=100`): PQ's EOTF times 100; HLG's inverse OETF, then its OOTF as a
//!    1.2 power per channel, times 10 (zimg's display-referred HLG, 1000 cd/m² peak);
//! 3. the frame's primaries (BT.2020) to BT.709, in linear light, unclipped;
//! 4. the `tonemap` filter: desaturation toward the luma (the frame's matrix's coefficients) of what is
//!    brighter than `desat`, then the curve applied to the brightest channel and every channel scaled alike;
//! 5. BT.709's display transfer (zimg's display-referred BT.709: the inverse of BT.1886's 2.4 power), clipped to
//!    [0, 1], as 16-bit levels (the output types take them as any RGB48).
//!
//! The transfer functions are tables interpolated within each of their octaves (see [`Curve`]), so that a pixel
//! costs a few multiplications rather than six powers.

use super::host::RgbRegion;
use crate::decode::frame::Signal;
use crate::error::AvError;
use crate::ffi::frame::AvFrame;
use crate::settings::transforms::{ToneMap, ToneMapOp};

/// `AVColorTransferCharacteristic` of PQ (SMPTE ST 2084).
const TRC_PQ: i32 = 16;
/// `AVColorTransferCharacteristic` of HLG (ARIB STD-B67).
const TRC_HLG: i32 = 18;
/// The signal peak when neither the setting nor the frame gives one (units of 100 cd/m²): what the `tonemap`
/// filter assumes for a frame `zscale` has linearised.
const DEFAULT_PEAK: f32 = 10.0;

/// Whether `frame` is HDR by its transfer (PQ or HLG): the frames tone mapping changes.
pub(crate) fn is_hdr(frame: &AvFrame) -> bool {
    matches!(frame.transfer(), TRC_PQ | TRC_HLG)
}

/// Windows of at least this many pixels are mapped on several cores.
const PARALLEL_PIXELS: usize = 1 << 18;
/// The most bands a window is mapped in.
const MAX_BANDS: usize = 8;

/// What a mapping was planned for: the frame's signal, matrix and range, and the setting.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Key {
    signal: Signal,
    colorspace: i32,
    full_range: bool,
    tonemap: ToneMap,
}

/// A video's tone mapping, planned per [`Key`] and reused from frame to frame, with its output rows.
#[derive(Default)]
pub(crate) struct ToneMapper {
    plan: Option<(Key, Plan)>,
    out: Vec<u8>,
}

impl ToneMapper {
    /// Maps the `w` x `h` window at `region` of `yuv` (three 16-bit planes, `Pixels::Yuv16`) of a frame tagged
    /// as `frame` is to packed RGB48 rows of `w * 6` bytes: the SDR picture.
    pub(crate) fn map(
        &mut self,
        tonemap: &ToneMap,
        frame: &AvFrame,
        yuv: &[u8],
        region: RgbRegion,
        (w, h): (usize, usize),
    ) -> Result<&[u8], AvError> {
        let key = Key {
            signal: Signal::of(frame),
            colorspace: frame.colorspace(),
            full_range: frame.full_range(),
            tonemap: *tonemap,
        };
        if self.plan.as_ref().map(|(k, _)| *k) != Some(key) {
            let constants =
                Constants::new(tonemap, &key.signal, key.colorspace).ok_or_else(|| AvError {
                    operation: "tone mapping",
                    code: -libc::EINVAL,
                    message: "the frame is neither PQ nor HLG".into(),
                })?;
            self.plan = Some((key, Plan::new(&constants, key.full_range)));
        }
        let (_, plan) = self.plan.as_ref().expect("planned above");
        let row = w * 6;
        let len = row * h;
        self.out
            .try_reserve(len.saturating_sub(self.out.len()))
            .map_err(|_| AvError {
                operation: "allocating tone-mapped rows",
                code: -libc::ENOMEM,
                message: format!("cannot allocate {len} bytes"),
            })?;
        self.out.resize(len, 0);
        let map_rows = |first: usize, rows: &mut [u8]| {
            let mut scratch = RowScratch::new(w);
            for (y, out) in rows.chunks_exact_mut(row).enumerate() {
                let at = region.offset + (first + y) * region.stride;
                let plane = |p: usize| &yuv[at + p * region.plane..][..w * 2];
                plan.row([plane(0), plane(1), plane(2)], out, &mut scratch);
            }
        };
        // Large windows are mapped in bands on the machine's cores (scoped threads: all joined before this
        // returns), small ones on this thread.
        let bands = if w * h >= PARALLEL_PIXELS {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_BANDS))
        } else {
            1
        };
        let band_rows = h.div_ceil(bands).max(1);
        std::thread::scope(|scope| {
            let mut chunks = self.out.chunks_mut(band_rows * row).enumerate();
            let mine = chunks.next();
            for (i, chunk) in chunks {
                scope.spawn(move || map_rows(i * band_rows, chunk));
            }
            if let Some((_, chunk)) = mine {
                map_rows(0, chunk);
            }
        });
        Ok(&self.out)
    }
}

/// The per-pixel constants of one [`Key`].
struct Plan {
    /// `y = (Y - y_offset) * y_scale`, `c = (C - 32768) * c_scale` (16-bit samples).
    y_offset: f32,
    y_scale: f32,
    c_scale: f32,
    /// R' = y + rv v, G' = y - gu u - gv v, B' = y + bu u.
    rv: f32,
    gu: f32,
    gv: f32,
    bu: f32,
    /// Linear light (1.0 = 100 cd/m²) of a non-linear value, and its scale.
    eotf: Curve,
    linear_scale: f32,
    /// The primaries to BT.709.
    primaries: [[f32; 3]; 3],
    /// The luma coefficients for desaturation.
    luma: [f32; 3],
    desat: f32,
    /// The curve's gain on the brightest channel: `curve(sig) / sig`.
    gain: Curve,
    /// BT.709's display transfer (inverse BT.1886) of a linear value in [0, 1].
    oetf: Curve,
}

impl Plan {
    fn new(c: &Constants, full_range: bool) -> Self {
        let [kr, kg, kb] = c.luma;
        let (y_offset, y_scale, c_scale) = if full_range {
            (0.0, 1.0 / 65535.0, 1.0 / 65535.0)
        } else {
            (4096.0, 1.0 / (219.0 * 256.0), 1.0 / (224.0 * 256.0))
        };
        let eotf: fn(f32) -> f32 = if c.hlg { hlg_eotf } else { pq_eotf };
        Self {
            y_offset,
            y_scale,
            c_scale,
            rv: 2.0 * (1.0 - kr),
            gu: 2.0 * kb * (1.0 - kb) / kg,
            gv: 2.0 * kr * (1.0 - kr) / kg,
            bu: 2.0 * (1.0 - kb),
            eotf: Curve::new(eotf, -12, 1),
            linear_scale: c.linear,
            primaries: c.primaries,
            luma: c.luma,
            desat: c.desat,
            gain: Curve::new(gain(c.op, c.param, c.peak), -20, 8),
            oetf: Curve::new(bt1886_inverse, -24, 0),
        }
    }

    /// One row: 16-bit Y, U, V samples (little-endian bytes) to packed little-endian 16-bit SDR R, G, B levels
    /// in `out`. In passes over the row, so that the arithmetic ones are vector code and the table lookups tight
    /// loops (the steps are the module's, in its order).
    fn row(&self, [ys, us, vs]: [&[u8]; 3], out: &mut [u8], s: &mut RowScratch) {
        let n = s.r.len();
        let sample = |b: &[u8], i: usize| f32::from(u16::from_le_bytes([b[2 * i], b[2 * i + 1]]));
        for i in 0..n {
            let y = (sample(ys, i) - self.y_offset) * self.y_scale;
            let u = (sample(us, i) - 32768.0) * self.c_scale;
            let v = (sample(vs, i) - 32768.0) * self.c_scale;
            s.r[i] = y + self.rv * v;
            s.g[i] = y - self.gu * u - self.gv * v;
            s.b[i] = y + self.bu * u;
        }
        let scale = self.linear_scale;
        for c in [&mut s.r, &mut s.g, &mut s.b] {
            for x in c.iter_mut() {
                // Below the table (at most 2^-12) the EOTFs are below 1e-7 of their peak: taken as the table's
                // first value.
                *x = self.eotf.clamped(*x) * scale;
            }
        }
        let m = self.primaries;
        let (desat, luma_k) = (self.desat, self.luma);
        for i in 0..n {
            let (r0, g0, b0) = (s.r[i], s.g[i], s.b[i]);
            let mut r = m[0][0] * r0 + m[0][1] * g0 + m[0][2] * b0;
            let mut g = m[1][0] * r0 + m[1][1] * g0 + m[1][2] * b0;
            let mut b = m[2][0] * r0 + m[2][1] * g0 + m[2][2] * b0;
            if desat > 0.0 {
                let luma = luma_k[0] * r + luma_k[1] * g + luma_k[2] * b;
                let over = above(luma - desat, 1e-6) / above(luma, 1e-6);
                let keep = 1.0 - over;
                let grey = luma * over;
                (r, g, b) = (r * keep + grey, g * keep + grey, b * keep + grey);
            }
            s.r[i] = r;
            s.g[i] = g;
            s.b[i] = b;
            s.k[i] = above(above(above(r, g), b), 1e-6);
        }
        for k in s.k.iter_mut() {
            *k = self.gain.clamped(*k);
        }
        for (c, channel) in [&s.r, &s.g, &s.b].into_iter().enumerate() {
            for (i, (&x, &k)) in channel.iter().zip(&s.k).enumerate() {
                let v = x * k;
                // 0 at and below 0, 1 from 1 up (the table's top).
                let level = if v > 0.0 {
                    (self.oetf.clamped(v) * 65535.0 + 0.5) as u16
                } else {
                    0
                };
                out[6 * i + 2 * c..6 * i + 2 * c + 2].copy_from_slice(&level.to_le_bytes());
            }
        }
    }
}

/// The curve's parameter as the `tonemap` filter holds it: Reinhard's contrast `p` as `(1 - p) / p`, Möbius's
/// knee 0.3 by default, otherwise the value given or 1.
fn curve_param(t: &ToneMap) -> f32 {
    match (t.op, t.param) {
        (ToneMapOp::Reinhard, Some(p)) => (1.0 - p) / p,
        (ToneMapOp::Mobius, None) => 0.3,
        (_, Some(p)) => p,
        (_, None) => 1.0,
    }
}

/// What tone mapping a stream takes, worked out once from the setting and the stream's signal and matrix: the
/// CPU path's [`Plan`] and the CUDA kernel's parameter block (`transform::gpu`) both start from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Constants {
    pub(crate) op: ToneMapOp,
    /// HLG (else PQ).
    pub(crate) hlg: bool,
    /// The curve's parameter, as the `tonemap` filter holds it ([`curve_param`]).
    pub(crate) param: f32,
    /// The signal peak: the setting's, else the stream's, else [`DEFAULT_PEAK`].
    pub(crate) peak: f32,
    pub(crate) desat: f32,
    /// Linear light of the EOTF's 1.0, with 1.0 = 100 cd/m²: 100 for PQ, 10 for HLG.
    pub(crate) linear: f32,
    /// Linear RGB of the stream's primaries to BT.709's (the identity for BT.709 and unknown ones).
    pub(crate) primaries: [[f32; 3]; 3],
    /// The luma coefficients (Kr, Kg, Kb) of the matrix: for YUV to R'G'B' and for desaturation.
    pub(crate) luma: [f32; 3],
}

impl Constants {
    /// For a stream of `signal` and matrix `colorspace` (BT.2020's when unspecified); `None` when the stream is
    /// not HDR (PQ or HLG).
    pub(crate) fn new(t: &ToneMap, signal: &Signal, colorspace: i32) -> Option<Self> {
        let (hlg, linear) = match signal.transfer {
            TRC_PQ => (false, 100.0),
            TRC_HLG => (true, 10.0),
            _ => return None,
        };
        let (kr, kb) = luma_coefficients(colorspace);
        Some(Self {
            op: t.op,
            hlg,
            param: curve_param(t),
            peak: t.peak.or(signal.peak).unwrap_or(DEFAULT_PEAK),
            desat: t.desat,
            linear,
            primaries: to_bt709(signal.primaries).unwrap_or([
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
            ]),
            luma: [kr, 1.0 - kr - kb, kb],
        })
    }
}

/// The tone mapping's matrix for a stream's `colorspace`: its own, BT.2020's when unspecified (HDR's).
pub(crate) fn hdr_colorspace(colorspace: i32) -> i32 {
    match colorspace {
        0 | 2 => 9,
        other => other,
    }
}

/// The larger of `a` and `b` (`b` when either is NaN): one instruction, where `f32::max`'s NaN rules cost
/// several in this loop.
#[inline(always)]
fn above(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// The `tonemap` filter's scale factor for a pixel whose brightest channel is `sig` (at least 1e-6): the curve
/// `op` (parameter `param`, signal peak `peak`) at `sig`, over `sig`.
fn gain(op: ToneMapOp, param: f32, peak: f32) -> impl Fn(f32) -> f32 {
    let hable_peak = hable(peak);
    move |sig: f32| {
        let sig = sig.max(1e-6);
        let mapped = match op {
            ToneMapOp::Hable => hable(sig) / hable_peak,
            ToneMapOp::Mobius => mobius(sig, param, peak),
            ToneMapOp::Reinhard => sig / (sig + param) * (peak + param) / peak,
            ToneMapOp::Clip => (sig * param).clamp(0.0, 1.0),
        };
        mapped / sig
    }
}

/// The luma coefficients `(Kr, Kb)` of an `AVColorSpace` (BT.2020's for unspecified ones: HDR's matrix).
fn luma_coefficients(colorspace: i32) -> (f32, f32) {
    match colorspace {
        1 => (0.2126, 0.0722),
        4 => (0.30, 0.11),
        5 | 6 => (0.299, 0.114),
        7 => (0.212, 0.087),
        _ => (0.2627, 0.0593),
    }
}

/// The CIE xy of the red, green, blue primaries and the white point of an `AVColorPrimaries`, for those tone
/// mapping converts from (BT.709 itself, BT.2020, Display P3).
fn chromaticities(primaries: i32) -> Option<[(f64, f64); 4]> {
    const D65: (f64, f64) = (0.3127, 0.3290);
    match primaries {
        1 => Some([(0.64, 0.33), (0.30, 0.60), (0.15, 0.06), D65]),
        9 => Some([(0.708, 0.292), (0.170, 0.797), (0.131, 0.046), D65]),
        12 => Some([(0.680, 0.320), (0.265, 0.690), (0.150, 0.060), D65]),
        _ => None,
    }
}

/// The RGB to XYZ matrix of a set of chromaticities.
fn rgb_to_xyz(c: [(f64, f64); 4]) -> [[f64; 3]; 3] {
    let xyz = |(x, y): (f64, f64)| [x / y, 1.0, (1.0 - x - y) / y];
    let columns = [xyz(c[0]), xyz(c[1]), xyz(c[2])];
    let p = [0, 1, 2].map(|r| [columns[0][r], columns[1][r], columns[2][r]]);
    let s = solve(p, xyz(c[3]));
    [0, 1, 2].map(|r| [p[r][0] * s[0], p[r][1] * s[1], p[r][2] * s[2]])
}

fn det(m: [[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// `m x = b` by Cramer's rule (the matrices here are well conditioned).
fn solve(m: [[f64; 3]; 3], b: [f64; 3]) -> [f64; 3] {
    let d = det(m);
    [0, 1, 2].map(|i| {
        let mut mi = m;
        for r in 0..3 {
            mi[r][i] = b[r];
        }
        det(mi) / d
    })
}

/// The linear-light matrix from `primaries` to BT.709's; `None` for BT.709 itself and for primaries it does not
/// know (left as they are).
fn to_bt709(primaries: i32) -> Option<[[f32; 3]; 3]> {
    if primaries == 1 {
        return None;
    }
    let from = rgb_to_xyz(chromaticities(primaries)?);
    let to = rgb_to_xyz(chromaticities(1)?);
    // BT.709 RGB = to^-1 from RGB: column j of the result solves `to x = from[.][j]`.
    let columns = [0, 1, 2].map(|j| solve(to, [from[0][j], from[1][j], from[2][j]]));
    Some([0, 1, 2].map(|r| [0, 1, 2].map(|j| columns[j][r] as f32)))
}

/// PQ's EOTF (SMPTE ST 2084), as a fraction of 10000 cd/m²; 0 for values at or below 0.
fn pq_eotf(e: f32) -> f32 {
    // In f64: near 1 the denominator cancels, and f32 would leave its values noisy (the tables are built once).
    const M1: f64 = 0.1593017578125;
    const M2: f64 = 78.84375;
    const C1: f64 = 0.8359375;
    const C2: f64 = 18.8515625;
    const C3: f64 = 18.6875;
    if e <= 0.0 {
        return 0.0;
    }
    let p = f64::from(e).powf(1.0 / M2);
    let num = (p - C1).max(0.0);
    let den = (C2 - C3 * p).max(f64::from(f32::MIN_POSITIVE));
    (num / den).powf(1.0 / M1) as f32
}

/// HLG's inverse OETF (ARIB STD-B67) then a 1.2 power per channel (zimg's display-referred HLG), as a fraction
/// of its 1000 cd/m² peak.
fn hlg_eotf(e: f32) -> f32 {
    const A: f64 = 0.17883277;
    const B: f64 = 0.28466892;
    const C: f64 = 0.55991073;
    let e = f64::from(e.max(0.0));
    let scene = if e <= 0.5 {
        e * e / 3.0
    } else {
        (((e - C) / A).exp() + B) / 12.0
    };
    scene.powf(1.2) as f32
}

/// BT.1886's inverse (a 1/2.4 power), 0 below 0.
fn bt1886_inverse(x: f32) -> f32 {
    if x <= 0.0 {
        0.0
    } else {
        f64::from(x).powf(1.0 / 2.4) as f32
    }
}

/// John Hable's filmic curve, as the `tonemap` filter has it.
pub(crate) fn hable(x: f32) -> f32 {
    let (a, b, c, d, e, f) = (0.15, 0.50, 0.10, 0.20, 0.02, 0.30);
    (x * (x * a + b * c) + d * e) / (x * (x * a + b) + d * f) - e / f
}

/// The Möbius curve through `(j, j)` reaching 1 at `peak`, as the `tonemap` filter has it.
fn mobius(x: f32, j: f32, peak: f32) -> f32 {
    if x <= j {
        return x;
    }
    let a = -j * j * (peak - 1.0) / (j * j - 2.0 * j + peak);
    let b = (j * j - 2.0 * j * peak + peak) / (peak - 1.0).max(1e-6);
    (b * b + 2.0 * b * j + j * j) / (b - a) * (x + a) / (x + b)
}

/// A row's values between [`Plan::row`]'s passes.
struct RowScratch {
    r: Vec<f32>,
    g: Vec<f32>,
    b: Vec<f32>,
    /// The brightest channel, then the curve's gain.
    k: Vec<f32>,
}

impl RowScratch {
    /// For rows of `w` pixels (at most the configured largest side: a bounded allocation).
    fn new(w: usize) -> Self {
        Self {
            r: vec![0.0; w],
            g: vec![0.0; w],
            b: vec![0.0; w],
            k: vec![0.0; w],
        }
    }
}

/// A function tabulated over `[2^lo, 2^hi)`, 2048 entries an octave, read by interpolating linearly between
/// the entries around `x` (within an octave a float's bits are linear in its value, so the entry is the
/// bits' top and the weight their rest); `x` outside the range is clamped into it.
struct Curve {
    table: Vec<f32>,
    lo: f32,
    hi: f32,
    lo_bits: u32,
    /// The largest value below `hi`.
    top: f32,
}

/// Mantissa bits below an entry (23 - log2 of the entries an octave).
const CURVE_SHIFT: u32 = 12;

impl Curve {
    /// `f` tabulated over `[2^lo, 2^hi)`.
    fn new(f: impl Fn(f32) -> f32, lo: i32, hi: i32) -> Self {
        let (lo, hi) = (2f32.powi(lo), 2f32.powi(hi));
        let lo_bits = lo.to_bits();
        let entries = ((hi.to_bits() - lo_bits) >> CURVE_SHIFT) as usize + 1;
        let table = (0..entries)
            .map(|i| f(f32::from_bits(lo_bits + ((i as u32) << CURVE_SHIFT))))
            .collect();
        Self {
            table,
            lo,
            hi,
            lo_bits,
            top: f32::from_bits(hi.to_bits() - 1),
        }
    }

    /// The table's value at `x` clamped into its range (NaN: its first value): no branch, for the row passes,
    /// where the values outside the range are taken as flat (see the callers).
    #[inline(always)]
    fn clamped(&self, x: f32) -> f32 {
        let x = if x > self.lo { x } else { self.lo };
        let x = if x < self.hi { x } else { self.top };
        let bits = x.to_bits() - self.lo_bits;
        let i = (bits >> CURVE_SHIFT) as usize;
        let t = (bits & ((1 << CURVE_SHIFT) - 1)) as f32 * (1.0 / (1 << CURVE_SHIFT) as f32);
        let (a, b) = (self.table[i], self.table[i + 1]);
        a + (b - a) * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bt2020_to_bt709_maps_white_to_white_and_is_the_known_matrix() {
        let m = to_bt709(9).unwrap();
        for row in m {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        // BT.2087's matrix, rounded to four places.
        let known = [
            [1.6605, -0.5876, -0.0728],
            [-0.1246, 1.1329, -0.0083],
            [-0.0182, -0.1006, 1.1187],
        ];
        for (r, row) in m.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                assert!((v - known[r][c]).abs() < 2e-4, "{r},{c}: {v}");
            }
        }
        assert!(to_bt709(1).is_none() && to_bt709(2).is_none());
    }

    #[test]
    fn transfer_functions_hit_their_anchor_points() {
        // PQ: code 1.0 is 10000 cd/m², about 0.508 is 100 cd/m².
        assert!((pq_eotf(1.0) - 1.0).abs() < 1e-5);
        assert!((pq_eotf(0.508_078) * 10000.0 - 100.0).abs() < 0.1);
        // HLG: 0.5 is a twelfth of the scene peak before the 1.2 power.
        assert!((hlg_eotf(0.5) - (1.0f32 / 12.0).powf(1.2)).abs() < 1e-6);
        assert!((hlg_eotf(1.0) - 1.0).abs() < 1e-5);
        assert_eq!(bt1886_inverse(-1.0), 0.0);
        // The curves: identity below Möbius's knee, clip at 1, Reinhard and Hable reach 1 at the peak.
        assert_eq!(mobius(0.2, 0.3, 10.0), 0.2);
        assert!((mobius(10.0, 0.3, 10.0) - 1.0).abs() < 1e-5);
        assert!((hable(10.0) / hable(10.0) - 1.0).abs() < 1e-6);
    }

    proptest! {
        #[test]
        fn a_curve_is_within_two_hundred_thousandths_of_its_function_in_its_range(x in 0.0f32..1.25) {
            // Up to 1.25: code values past 1 come only from chroma overshoot (PQ soars there, past 10000 cd/m²).
            for (f, lo, hi) in [(pq_eotf as fn(f32) -> f32, -12, 1), (hlg_eotf, -12, 1), (bt1886_inverse, -24, 0)] {
                let curve = Curve::new(f, lo, hi);
                let (lo, hi) = (2f32.powi(lo), 2f32.powi(hi));
                let (got, want) = (curve.clamped(x), f(x.clamp(lo, hi)));
                prop_assert!((got - want).abs() <= 1e-6 + want.abs() * 2e-5, "{x}: {got} vs {want}");
            }
        }

        #[test]
        fn the_gain_table_is_the_curve_over_sig(sig in 1e-6f32..100.0) {
            for op in [ToneMapOp::Hable, ToneMapOp::Mobius, ToneMapOp::Reinhard, ToneMapOp::Clip] {
                let exact = gain(op, if op == ToneMapOp::Mobius { 0.3 } else { 1.0 }, 10.0);
                let table = Curve::new(&exact, -20, 8);
                let (got, want) = (table.clamped(sig), exact(sig));
                prop_assert!((got - want).abs() <= 1e-6 + want.abs() * 1e-4, "{op} {sig}: {got} vs {want}");
            }
        }
    }
}
