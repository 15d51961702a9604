//! Writing one converted frame (packed RGB levels of the visible part of its window) into its sequence's
//! output, in the configured element type, normalization and layout; out-of-frame pixels get the fill values.
//! A sequence's output is host memory of the element type, or a region of a device buffer that the CUDA kernel
//! writes.

use half::f16;

use super::plan::Geometry;
use crate::device::DeviceBuffer;
use crate::error::VideoError;
use crate::ffi::cuda::params::ConvertParams;
use crate::ffi::scale::Pixels;
use crate::ffi::simd::split_channels;
use crate::settings::transforms::{DType, Layout, Transforms, CHANNELS};

/// Packed RGB rows of the visible part of a window: RGB24, or RGB48 (little-endian words) for sources of more
/// than 8 bits a sample converted for an output type that keeps them.
pub(crate) struct RgbView<'a> {
    pub(crate) data: &'a [u8],
    /// Bytes from one row to the next.
    pub(crate) stride: usize,
    /// The pixels' depth.
    pub(crate) rgb: Pixels,
}

/// A sequence's output buffer.
pub(crate) enum SeqOut<'a> {
    /// In host memory, as elements of its type.
    Host(HostOut<'a>),
    /// In GPU memory: written by the CUDA kernel.
    Device(DeviceOut<'a>),
}

/// A sequence's output in host memory, as elements of its type.
pub(crate) enum HostOut<'a> {
    U8(&'a mut [u8]),
    U16(&'a mut [u16]),
    F32(&'a mut [f32]),
    F16(&'a mut [f16]),
}

/// A sequence's region `[start, start + len)` (bytes) of a batch buffer in GPU memory.
pub(crate) struct DeviceOut<'a> {
    pub(crate) buffer: &'a mut DeviceBuffer,
    pub(crate) start: usize,
    pub(crate) len: usize,
}

impl DeviceOut<'_> {
    /// Enqueues the kernel converting one frame into the region, per `params`.
    pub(crate) fn convert(&mut self, params: ConvertParams) -> Result<(), VideoError> {
        assert!(
            params.output_bytes() <= self.len,
            "the kernel's output must fit its sequence's region"
        );
        self.buffer.convert(params, self.start, self.len)
    }

    /// Zeroes elements `range` of `size` bytes each of the region.
    fn zero(&mut self, range: std::ops::Range<usize>, size: usize) {
        let bytes = self.start + range.start * size..self.start + range.end * size;
        if let Err(e) = self.buffer.zero(bytes) {
            // Only a broken context fails here; the next kernel launch reports it.
            tracing::error!("{e}");
        }
    }
}

/// Per-channel `level * scale + bias` of 8-bit levels, from the type and normalization.
pub(crate) fn affine(t: &Transforms) -> ([f32; CHANNELS], [f32; CHANNELS]) {
    affine_of(t, false)
}

/// [`affine`] of 8-bit levels, or of 16-bit ones (`deep`: `/ 65535` for the unit types, `/ 257` otherwise).
pub(crate) fn affine_of(t: &Transforms, deep: bool) -> ([f32; CHANNELS], [f32; CHANNELS]) {
    let unit_type = matches!(t.dtype, DType::F32Unit | DType::F16Unit);
    let unit = match (unit_type, deep) {
        (true, false) => 1.0 / 255.0,
        (false, false) => 1.0,
        (true, true) => 1.0 / 65535.0,
        (false, true) => 1.0 / 257.0,
    };
    let mut scale = [unit; CHANNELS];
    let mut bias = [0.0; CHANNELS];
    if let Some(n) = &t.normalize {
        for c in 0..CHANNELS {
            scale[c] = unit / n.std[c];
            bias[c] = -n.mean[c] / n.std[c];
        }
    }
    (scale, bias)
}

/// Writes frame `f` of a sequence of `frames` frames: `src` holds the visible part of `geom`'s window (none
/// when the window misses the frame). Works row by row and channel by channel, so that the inner loops are
/// plain strided copies the compiler vectorizes.
pub(crate) fn write_frame<'a>(
    out: &mut HostOut<'_>,
    frames: usize,
    f: usize,
    geom: &Geometry,
    src: Option<RgbView<'a>>,
    t: &Transforms,
) {
    let (w, h) = geom.out();
    let fill = geom.fill;
    // The visible span: output columns [x0, x1) of output rows [y0, y1), read from `src`.
    let (x0, x1, y0, y1) = match (geom.visible(), &src) {
        (Some(v), Some(_)) => (v.out_x, v.out_x + v.w, v.out_y, v.out_y + v.h),
        _ => (0, 0, 0, 0),
    };
    let layout = t.layout;
    let dims = (frames, h, w);
    // Where row `y` of channel `c` starts, and the distance between its pixels.
    let row = |c: usize, y: usize| match layout {
        Layout::Fhwc => (layout.index(dims, (f, 0, y, 0)) + c, CHANNELS),
        _ => (layout.index(dims, (f, c, y, 0)), 1),
    };
    let rgb = src.as_ref().map_or(Pixels::Eight, |s| s.rgb);
    let src_row = |y: usize| -> Option<&'a [u8]> {
        let src = src.as_ref()?;
        (y >= y0 && y < y1)
            .then(|| &src.data[(y - y0) * src.stride..][..(x1 - x0) * src.rgb.pixel_bytes()])
    };
    let rows = Rows {
        w,
        h,
        x0,
        x1,
        row,
        src_row,
        _marker: std::marker::PhantomData,
    };
    debug_assert!(rgb != Pixels::Yuv16, "views are RGB");
    match (out, rgb) {
        (HostOut::U8(out), Pixels::Sixteen) => {
            // Tone-mapped frames: their 16-bit SDR levels rounded to 8 bits.
            let fill = fill.map(|v| v.round().clamp(0.0, 255.0) as u8);
            let narrow = |_: usize, v: u16| ((u32::from(v) * 255 + 32767) / 65535) as u8;
            write_channels(out, &rows, fill, rgb, narrow, |_, v| v);
        }
        (HostOut::U16(out), rgb) => {
            let fill = fill.map(|v| v.round().clamp(0.0, 65535.0) as u16);
            write_channels(out, &rows, fill, rgb, |_, v| v, |_, v| u16::from(v) * 257);
        }
        (HostOut::F32(out), Pixels::Sixteen | Pixels::Yuv16) => {
            let deep = deep_affine(t);
            write_channels(out, &rows, fill, rgb, deep, |_, v| f32::from(v));
        }
        (HostOut::F16(out), Pixels::Sixteen | Pixels::Yuv16) => {
            let deep = deep_affine(t);
            let fill = fill.map(f16::from_f32);
            write_channels(
                out,
                &rows,
                fill,
                rgb,
                |c, v| f16::from_f32(deep(c, v)),
                |_, v| f16::from_f32(f32::from(v)),
            );
        }
        (HostOut::U8(out), _) => {
            let fill = fill.map(|v| v.round().clamp(0.0, 255.0) as u8);
            for y in 0..h {
                let line = src_row(y);
                if layout == Layout::Fhwc {
                    let (start, _) = row(0, y);
                    let dst = &mut out[start..start + w * CHANNELS];
                    // Only the pixels outside the visible span (all of them when none is) get the fill.
                    let visible = if line.is_some() {
                        x0 * CHANNELS..x1 * CHANNELS
                    } else {
                        0..0
                    };
                    let (left, rest) = dst.split_at_mut(visible.start);
                    let (middle, right) = rest.split_at_mut(visible.len());
                    if let Some(line) = line {
                        middle.copy_from_slice(line);
                    }
                    for px in left
                        .chunks_exact_mut(CHANNELS)
                        .chain(right.chunks_exact_mut(CHANNELS))
                    {
                        px.copy_from_slice(&fill);
                    }
                    continue;
                }
                for (c, &fill) in fill.iter().enumerate() {
                    let (start, _) = row(c, y);
                    let dst = &mut out[start..start + w];
                    match line {
                        Some(line) => {
                            dst[..x0].fill(fill);
                            dst[x1..].fill(fill);
                            for (d, s) in dst[x0..x1]
                                .iter_mut()
                                .zip(line.iter().skip(c).step_by(CHANNELS))
                            {
                                *d = *s;
                            }
                        }
                        None => dst.fill(fill),
                    }
                }
            }
        }
        (HostOut::F32(out), Pixels::Eight) => {
            write_floats(out, |v| v, &rows, t, fill, split_channels::split_f32)
        }
        (HostOut::F16(out), Pixels::Eight) => write_floats(
            out,
            f16::from_f32,
            &rows,
            t,
            fill,
            |line, scale, bias, planes| {
                for (c, plane) in planes.into_iter().enumerate() {
                    for (d, s) in plane.iter_mut().zip(line.iter().skip(c).step_by(CHANNELS)) {
                        *d = f16::from_f32(f32::from(*s) * scale[c] + bias[c]);
                    }
                }
            },
        ),
    }
}

/// The float value of a 16-bit RGB48 level `v` for the type and normalization: `v / 65535` for the unit types,
/// `v / 257` (the 0-255 scale) otherwise, each the correctly rounded `f32` quotient; then `(x - mean) / std`
/// when normalizing.
pub(crate) fn deep_affine(t: &Transforms) -> impl Fn(usize, u16) -> f32 + Copy {
    let denominator = if matches!(t.dtype, DType::F32Unit | DType::F16Unit) {
        65535.0f32
    } else {
        257.0
    };
    let normalize = t.normalize;
    move |c: usize, v: u16| {
        let x = f32::from(v) / denominator;
        match &normalize {
            Some(n) => (x - n.mean[c]) / n.std[c],
            None => x,
        }
    }
}

/// Writes a frame channel by channel in any layout: the fill outside the visible span, and each visible
/// pixel's channel through `deep` (a 16-bit level of an RGB48 view) or `eight` (an 8-bit level of an RGB24
/// one).
fn write_channels<'a, T: Copy, R, S>(
    out: &mut [T],
    rows: &Rows<'a, R, S>,
    fill: [T; CHANNELS],
    rgb: Pixels,
    deep: impl Fn(usize, u16) -> T,
    eight: impl Fn(usize, u8) -> T,
) where
    R: Fn(usize, usize) -> (usize, usize),
    S: Fn(usize) -> Option<&'a [u8]>,
{
    let (w, x0, x1) = (rows.w, rows.x0, rows.x1);
    for y in 0..rows.h {
        let line = (rows.src_row)(y);
        for c in 0..CHANNELS {
            let (start, step) = (rows.row)(c, y);
            let at = |x: usize| start + x * step;
            fill_outside(out, (start, step), (w, x0, x1), line.is_some(), fill[c]);
            let Some(line) = line else { continue };
            match rgb {
                Pixels::Sixteen | Pixels::Yuv16 => {
                    for (i, px) in line.chunks_exact(6).enumerate() {
                        let v = u16::from_le_bytes([px[2 * c], px[2 * c + 1]]);
                        out[at(x0 + i)] = deep(c, v);
                    }
                }
                Pixels::Eight => {
                    for (i, &v) in line.iter().skip(c).step_by(CHANNELS).enumerate() {
                        out[at(x0 + i)] = eight(c, v);
                    }
                }
            }
        }
    }
}

/// Writes `fill` into one channel's row (starting at `start`, pixels `step` apart) of `w` pixels: outside the
/// visible span `[x0, x1)` when the row is `visible`, everywhere otherwise.
fn fill_outside<T: Copy>(
    out: &mut [T],
    (start, step): (usize, usize),
    (w, x0, x1): (usize, usize, usize),
    visible: bool,
    fill: T,
) {
    let filled = if visible {
        (0..x0).chain(x1..w)
    } else {
        (0..w).chain(0..0)
    };
    for x in filled {
        out[start + x * step] = fill;
    }
}

/// What the float writer needs of a frame: its output size, visible span and rows.
struct Rows<'a, R, S> {
    w: usize,
    h: usize,
    x0: usize,
    x1: usize,
    /// Start and pixel step of row `y` of channel `c`.
    row: R,
    /// The source row for output row `y`, when it is visible.
    src_row: S,
    _marker: std::marker::PhantomData<&'a ()>,
}

/// Writes float values (`convert`ed from f32) row by row: the fill channel by channel, the visible span of the
/// planar layouts through `planar` (packed levels, scales and biases in, the three channels' rows out), of
/// the packed one channel by channel.
fn write_floats<'a, T: Copy, R, S>(
    out: &mut [T],
    convert: impl Fn(f32) -> T,
    rows: &Rows<'a, R, S>,
    t: &Transforms,
    fill: [f32; CHANNELS],
    planar: impl Fn(&[u8], [f32; CHANNELS], [f32; CHANNELS], [&mut [T]; CHANNELS]),
) where
    R: Fn(usize, usize) -> (usize, usize),
    S: Fn(usize) -> Option<&'a [u8]>,
{
    let (scale, bias) = affine(t);
    let (w, x0, x1) = (rows.w, rows.x0, rows.x1);
    let fill = fill.map(&convert);
    for y in 0..rows.h {
        let line = (rows.src_row)(y);
        let starts: [(usize, usize); CHANNELS] = std::array::from_fn(|c| (rows.row)(c, y));
        for (c, &row) in starts.iter().enumerate() {
            fill_outside(out, row, (w, x0, x1), line.is_some(), fill[c]);
        }
        let Some(line) = line else { continue };
        if starts[0].1 == 1 {
            let planes = three_rows(out, starts.map(|s| s.0 + x0), x1 - x0);
            planar(line, scale, bias, planes);
            continue;
        }
        for (c, &(start, step)) in starts.iter().enumerate() {
            let (a, b) = (scale[c], bias[c]);
            for (i, s) in line.iter().skip(c).step_by(CHANNELS).enumerate() {
                out[start + (x0 + i) * step] = convert(f32::from(*s) * a + b);
            }
        }
    }
}

/// The `len` elements from each of `starts` (increasing, at least `len` apart): one row of each channel of a
/// planar layout.
fn three_rows<T>(out: &mut [T], starts: [usize; CHANNELS], len: usize) -> [&mut [T]; CHANNELS] {
    let (r, rest) = out[starts[0]..].split_at_mut(starts[1] - starts[0]);
    let (g, b) = rest.split_at_mut(starts[2] - starts[1]);
    [&mut r[..len], &mut g[..len], &mut b[..len]]
}

/// Zeroes frames `from..frames` of a sequence (padding frames), wherever the layout puts them.
pub(crate) fn zero_frames(
    out: &mut SeqOut<'_>,
    frames: usize,
    from: usize,
    w: usize,
    h: usize,
    layout: Layout,
) {
    let plane = w * h;
    let mut zero = |range: std::ops::Range<usize>| match out {
        SeqOut::Host(HostOut::U8(o)) => o[range].fill(0),
        SeqOut::Host(HostOut::U16(o)) => o[range].fill(0),
        SeqOut::Host(HostOut::F32(o)) => o[range].fill(0.0),
        SeqOut::Host(HostOut::F16(o)) => o[range].fill(f16::ZERO),
        SeqOut::Device(d) => {
            let size = d.len / (frames * plane * CHANNELS).max(1);
            d.zero(range, size)
        }
    };
    match layout {
        Layout::Fhwc | Layout::Fchw => zero(from * plane * CHANNELS..frames * plane * CHANNELS),
        Layout::Cfhw => {
            for c in 0..CHANNELS {
                zero((c * frames + from) * plane..(c * frames + frames) * plane);
            }
        }
    }
}
