//! The transforms on the GPU: one [`ConvertParams`] block per frame tells framefeed's CUDA kernel
//! (`kernels/convert.cu`) how to turn an NVDEC surface into its slot of the batch: resize, crop window, colour
//! matrix and range, rounding to 8-bit levels (as the CPU path does), type, normalization and layout. The GPU
//! twin of the CPU path's planning (`host`); this module only fills the block.
//!
//! Pure arithmetic: no CUDA here, so it is built and tested in both builds (`crate::testing::kernel_on_cpu`
//! runs the kernel's own code compiled for the CPU, end to end).

use super::plan::Geometry;
use super::tonemap::{hable, hdr_colorspace, Constants};
use super::write::affine_of;
use crate::decode::frame::{Colour, DeviceFrame};
use crate::ffi::cuda::params::ConvertParams;
use crate::orientation::Orientation;
use crate::settings::transforms::{DType, Interpolation, Layout, ToneMapOp, Transforms};

impl Colour {
    /// The luma weights (Kr, Kb) of the matrix, with the same choices as the CPU path's swscale: BT.601 when
    /// unspecified or unknown.
    fn weights(self) -> (f32, f32) {
        match self.colorspace {
            1 => (0.2126, 0.0722),      // BT.709
            4 => (0.30, 0.11),          // FCC
            7 => (0.212, 0.087),        // SMPTE 240M
            9 | 10 => (0.2627, 0.0593), // BT.2020
            _ => (0.299, 0.114),        // BT.601 (BT470BG, SMPTE170M, unspecified)
        }
    }

    /// `RGB = matrix * (YUV - offset)`, in 8-bit level units: rows R, G, B.
    pub(crate) fn matrix(self) -> ([f32; 9], [f32; 3]) {
        let (kr, kb) = self.weights();
        let kg = 1.0 - kr - kb;
        let (ys, cs, yo) = if self.full_range {
            (1.0, 1.0, 0.0)
        } else {
            (255.0 / 219.0, 255.0 / 224.0, 16.0)
        };
        let rv = 2.0 * (1.0 - kr) * cs;
        let bu = 2.0 * (1.0 - kb) * cs;
        let gu = -2.0 * kb * (1.0 - kb) / kg * cs;
        let gv = -2.0 * kr * (1.0 - kr) / kg * cs;
        ([ys, 0.0, rv, ys, gu, gv, ys, bu, 0.0], [yo, 128.0, 128.0])
    }
}

fn dtype_code(d: DType) -> i32 {
    match d {
        DType::U8 => 0,
        DType::F32 | DType::F32Unit => 1,
        DType::F16 | DType::F16Unit => 2,
        DType::U16 => 3,
    }
}

fn layout_code(l: Layout) -> i32 {
    match l {
        Layout::Fhwc => 0,
        Layout::Fchw => 1,
        Layout::Cfhw => 2,
    }
}

fn filter_code(i: Interpolation) -> i32 {
    match i {
        Interpolation::Nearest => 0,
        Interpolation::Bilinear => 1,
        Interpolation::Bicubic => 2,
        Interpolation::Area => 3,
    }
}

fn int(v: usize) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// The block converting `src`, shown per `orientation`, into frame `f` of a sequence of `frames` frames, per
/// `geometry` (planned on the shown size) and `transforms`. Its output address is left 0: the device buffer
/// that receives the frame sets it.
pub(crate) fn kernel_params(
    src: &DeviceFrame,
    orientation: Orientation,
    geometry: &Geometry,
    transforms: &Transforms,
    f: usize,
    frames: usize,
) -> ConvertParams {
    {
        // HDR frames to tone-map: their matrix BT.2020's when unspecified, and 16-bit SDR levels out (as the
        // CPU backend's tone mapper gives them).
        let tonemap = transforms
            .tonemap
            .and_then(|t| Constants::new(&t, &src.signal, hdr_colorspace(src.colour.colorspace)));
        let colour = match &tonemap {
            Some(_) => Colour {
                colorspace: hdr_colorspace(src.colour.colorspace),
                ..src.colour
            },
            None => src.colour,
        };
        let (matrix, offset) = colour.matrix();
        // Deeper samples keep 16 bits for every type but u8 (the CPU backend's RGB48).
        let deep = src.high_depth && transforms.dtype != DType::U8;
        let (scale, bias) = affine_of(transforms, deep || tonemap.is_some());
        let (out_w, out_h) = geometry.out();
        let (src_w, src_h) = orientation.displayed_size(src.width, src.height);
        ConvertParams {
            luma: src.luma,
            chroma: src.chroma,
            out: 0,
            luma_pitch: src.luma_pitch,
            chroma_pitch: src.chroma_pitch,
            src_w: int(src_w),
            src_h: int(src_h),
            high_depth: i32::from(src.high_depth),
            resized: i32::from(geometry.resized),
            frame_w: int(geometry.frame.0),
            frame_h: int(geometry.frame.1),
            filter: filter_code(transforms.interpolation),
            win_x: geometry
                .window
                .x
                .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            win_y: geometry
                .window
                .y
                .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            out_w: int(out_w),
            out_h: int(out_h),
            dtype: dtype_code(transforms.dtype),
            layout: layout_code(transforms.layout),
            frames: int(frames),
            frame_index: int(f),
            // As the CPU backend: swscale's fast path (8-bit 4:2:0 at an even height, once turned) repeats
            // chroma; deeper samples and odd heights go through its scaled path, which interpolates. Resized
            // frames are converted from 8-bit 4:2:0 padded to an even height (the fast path), except deeper
            // samples for 16-bit output (RGB48: the scaled path).
            chroma_cubic: i32::from(if geometry.resized {
                deep
            } else {
                src.high_depth || src_h % 2 == 1
            }),
            orient: orientation.code(),
            matrix,
            offset,
            fill: geometry.fill,
            scale,
            bias,
            tonemap: tonemap.map_or(0, |c| match c.op {
                ToneMapOp::Hable => 1,
                ToneMapOp::Mobius => 2,
                ToneMapOp::Reinhard => 3,
                ToneMapOp::Clip => 4,
            }),
            hdr_transfer: tonemap.map_or(0, |c| if c.hlg { 2 } else { 1 }),
            tm_param: tonemap.map_or(0.0, |c| c.param),
            tm_peak: tonemap.map_or(0.0, |c| c.peak),
            tm_desat: tonemap.map_or(0.0, |c| c.desat),
            tm_hable_peak: tonemap.map_or(0.0, |c| hable(c.peak)),
            tm_linear: tonemap.map_or(0.0, |c| c.linear),
            tm_primaries: tonemap.map_or([0.0; 9], |c| {
                let m = c.primaries;
                [
                    m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[2][0], m[2][1], m[2][2],
                ]
            }),
            tm_luma: tonemap.map_or([0.0; 3], |c| c.luma),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_map_black_white_and_grey() {
        for colorspace in [1, 5, 9] {
            for full_range in [false, true] {
                let (m, o) = Colour {
                    colorspace,
                    full_range,
                }
                .matrix();
                let rgb = |y: f32, u: f32, v: f32| -> [f32; 3] {
                    let d = [y - o[0], u - o[1], v - o[2]];
                    [0, 1, 2].map(|r| m[3 * r] * d[0] + m[3 * r + 1] * d[1] + m[3 * r + 2] * d[2])
                };
                let (black, white) = if full_range {
                    (0.0, 255.0)
                } else {
                    (16.0, 235.0)
                };
                for (y, want) in [(black, 0.0), (white, 255.0)] {
                    for c in rgb(y, 128.0, 128.0) {
                        assert!((c - want).abs() < 1e-3, "{colorspace} {full_range}: {c}");
                    }
                }
                // Pure red in BT.601 limited: Y 81, U 90, V 240.
                if colorspace == 5 && !full_range {
                    let [r, g, b] = rgb(81.0, 90.0, 240.0);
                    assert!(
                        (r - 255.0).abs() < 2.0 && g.abs() < 2.0 && b.abs() < 2.0,
                        "{r} {g} {b}"
                    );
                }
            }
        }
    }
}
