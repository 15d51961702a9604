//! Writing one converted frame (packed RGB levels of the visible part of its window) into its sequence's
//! output, in the configured element type, normalization and layout; out-of-frame pixels get the fill values.

use super::plan::Geometry;
use super::{DType, Layout, Transforms};
use crate::batch::CHANNELS;

/// Packed RGB24 rows of the visible part of a window.
pub(crate) struct RgbView<'a> {
    pub(crate) data: &'a [u8],
    /// Bytes from one row to the next.
    pub(crate) stride: usize,
}

/// A sequence's output buffer, as elements of its type.
pub(crate) enum SeqOut<'a> {
    U8(&'a mut [u8]),
    F32(&'a mut [f32]),
}

/// Per-channel `level * scale + bias`, from the type and normalization.
fn affine(t: &Transforms) -> ([f32; CHANNELS], [f32; CHANNELS]) {
    let unit = if t.dtype == DType::F32Unit {
        1.0 / 255.0
    } else {
        1.0
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
pub(crate) fn write_frame(
    out: &mut SeqOut<'_>,
    frames: usize,
    f: usize,
    geom: &Geometry,
    src: Option<RgbView<'_>>,
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
    let src_row = |y: usize| -> Option<&[u8]> {
        let src = src.as_ref()?;
        (y >= y0 && y < y1).then(|| &src.data[(y - y0) * src.stride..][..(x1 - x0) * CHANNELS])
    };
    match out {
        SeqOut::U8(out) => {
            let fill = fill.map(|v| v.round().clamp(0.0, 255.0) as u8);
            for y in 0..h {
                let line = src_row(y);
                if layout == Layout::Fhwc {
                    let (start, _) = row(0, y);
                    let dst = &mut out[start..start + w * CHANNELS];
                    for (x, px) in dst.chunks_exact_mut(CHANNELS).enumerate() {
                        if line.is_none() || x < x0 || x >= x1 {
                            px.copy_from_slice(&fill);
                        }
                    }
                    if let Some(line) = line {
                        dst[x0 * CHANNELS..x1 * CHANNELS].copy_from_slice(line);
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
        SeqOut::F32(out) => {
            let (scale, bias) = affine(t);
            for y in 0..h {
                let line = src_row(y);
                for c in 0..CHANNELS {
                    let (start, step) = row(c, y);
                    let (a, b) = (scale[c], bias[c]);
                    let at = |x: usize| start + x * step;
                    match line {
                        Some(line) => {
                            for x in (0..x0).chain(x1..w) {
                                out[at(x)] = fill[c];
                            }
                            if step == 1 {
                                let dst = &mut out[start + x0..start + x1];
                                for (d, s) in
                                    dst.iter_mut().zip(line.iter().skip(c).step_by(CHANNELS))
                                {
                                    *d = f32::from(*s) * a + b;
                                }
                            } else {
                                for (i, s) in line.iter().skip(c).step_by(CHANNELS).enumerate() {
                                    out[at(x0 + i)] = f32::from(*s) * a + b;
                                }
                            }
                        }
                        None => {
                            for x in 0..w {
                                out[at(x)] = fill[c];
                            }
                        }
                    }
                }
            }
        }
    }
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
        SeqOut::U8(o) => o[range].fill(0),
        SeqOut::F32(o) => o[range].fill(0.0),
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
