//! Writing one converted frame (packed RGB levels of the visible part of its window) into its sequence's
//! output, in the configured element type, normalization and layout; out-of-frame pixels get the fill values.

use super::plan::Geometry;
use super::{DType, Layout, OutOfBounds, Transforms};
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
/// when the window misses the frame).
pub(crate) fn write_frame(
    out: &mut SeqOut<'_>,
    frames: usize,
    f: usize,
    geom: &Geometry,
    src: Option<RgbView<'_>>,
    t: &Transforms,
) {
    let (w, h) = geom.out();
    let fill = match t.crop.map(|c| c.out_of_bounds) {
        Some(OutOfBounds::Pad(fill)) => fill,
        _ => [0.0; CHANNELS],
    };
    let visible = geom.visible();
    let inside = |x: usize, y: usize| match visible {
        Some(v) => x >= v.out_x && x < v.out_x + v.w && y >= v.out_y && y < v.out_y + v.h,
        None => false,
    };
    let (ox, oy) = visible.map_or((0, 0), |v| (v.out_x, v.out_y));
    let dims = (frames, h, w);
    let layout = t.layout;
    match out {
        SeqOut::U8(out) => {
            let fill = fill.map(|v| v.round().clamp(0.0, 255.0) as u8);
            if layout == Layout::Fhwc {
                // Rows are contiguous: copy the visible span of each row, fill the rest.
                for y in 0..h {
                    let row_start = layout.index(dims, (f, 0, y, 0));
                    let row = &mut out[row_start..row_start + w * CHANNELS];
                    for (x, px) in row.chunks_exact_mut(CHANNELS).enumerate() {
                        if !inside(x, y) {
                            px.copy_from_slice(&fill);
                        }
                    }
                    if let (Some(v), Some(src)) = (visible, &src) {
                        if y >= oy && y < oy + v.h {
                            let s = (y - oy) * src.stride;
                            row[ox * CHANNELS..(ox + v.w) * CHANNELS]
                                .copy_from_slice(&src.data[s..s + v.w * CHANNELS]);
                        }
                    }
                }
                return;
            }
            for y in 0..h {
                for x in 0..w {
                    for c in 0..CHANNELS {
                        let v = match &src {
                            Some(src) if inside(x, y) => {
                                src.data[(y - oy) * src.stride + (x - ox) * CHANNELS + c]
                            }
                            _ => fill[c],
                        };
                        out[layout.index(dims, (f, c, y, x))] = v;
                    }
                }
            }
        }
        SeqOut::F32(out) => {
            let (scale, bias) = affine(t);
            for y in 0..h {
                for x in 0..w {
                    for c in 0..CHANNELS {
                        let v = match &src {
                            Some(src) if inside(x, y) => {
                                f32::from(src.data[(y - oy) * src.stride + (x - ox) * CHANNELS + c])
                                    * scale[c]
                                    + bias[c]
                            }
                            _ => fill[c],
                        };
                        out[layout.index(dims, (f, c, y, x))] = v;
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
