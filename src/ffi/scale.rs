//! `SwsContext`: converting a decoded frame to packed RGB24 with the frame's own colour matrix and range.

use std::ffi::c_int;
use std::ptr::{self, NonNull};

use ffmpeg_sys_next as sys;

use super::frame::AvFrame;
use super::{av_error, out_of_memory};
use crate::error::AvError;

/// What the cached converter was built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    width: u32,
    height: u32,
    format: i32,
    colorspace: i32,
    full_range: bool,
    /// Output size (equal to the input's for a plain conversion).
    out_width: u32,
    out_height: u32,
    flags: c_int,
    /// Output pixel format (RGB24, or YUV420P for a resize in YUV).
    out_format: i32,
}

/// The resampling filter of a resize, as swscale flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Filter {
    Point,
    Bilinear,
    Bicubic,
    Area,
}

impl Filter {
    fn flags(self) -> c_int {
        match self {
            Filter::Point => sys::SWS_POINT,
            Filter::Bilinear => sys::SWS_BILINEAR,
            Filter::Bicubic => sys::SWS_BICUBIC,
            Filter::Area => sys::SWS_AREA,
        }
    }
}

/// Where the requested window lies in a converted buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RgbRegion {
    /// Byte offset of the window's top-left pixel.
    pub(crate) offset: usize,
    /// Bytes per row.
    pub(crate) stride: usize,
}

/// A same-size YUV (or any format) to RGB24 converter, rebuilt only when the input changes.
pub(crate) struct Scaler {
    ctx: Option<NonNull<sys::SwsContext>>,
    key: Option<Key>,
    /// Converts the right edge of frames whose last pixels swscale's fast path skips (see [`padded_row`]).
    tail: Option<Box<TailStrip>>,
}

/// A converter of its own for the right-edge strip (so that neither context is rebuilt per frame), and the
/// strip's rows at a padded stride.
struct TailStrip {
    scaler: Scaler,
    rows: Vec<u8>,
}

// SAFETY: the context is owned by this value alone and used through `&mut self`.
unsafe impl Send for Scaler {}

/// Maps the deprecated full-range "J" formats to their plain twins (the range is passed separately), so that
/// swscale does not warn and picks the same fast paths.
fn dejpeg(format: sys::AVPixelFormat) -> (sys::AVPixelFormat, bool) {
    use sys::AVPixelFormat::*;
    match format {
        AV_PIX_FMT_YUVJ420P => (AV_PIX_FMT_YUV420P, true),
        AV_PIX_FMT_YUVJ422P => (AV_PIX_FMT_YUV422P, true),
        AV_PIX_FMT_YUVJ444P => (AV_PIX_FMT_YUV444P, true),
        AV_PIX_FMT_YUVJ440P => (AV_PIX_FMT_YUV440P, true),
        AV_PIX_FMT_YUVJ411P => (AV_PIX_FMT_YUV411P, true),
        other => (other, false),
    }
}

impl Scaler {
    pub(crate) fn new() -> Self {
        Self {
            ctx: None,
            key: None,
            tail: None,
        }
    }

    /// Converts `frame` to RGB24 rows of `width * 3` bytes written straight into `dst`, which must hold
    /// `width * height * 3` bytes plus [`WRITE_SLACK`] spare ones (swscale's SIMD code may write into them).
    ///
    /// The matrix is the frame's (BT.601 when unspecified, as swscale and the ffmpeg CLI do); the range is the
    /// frame's (limited when unspecified, full for the "J" pixel formats).
    pub(crate) fn convert_to_rgb24(
        &mut self,
        frame: &AvFrame,
        dst: &mut [u8],
    ) -> Result<(), AvError> {
        let (width, height) = (frame.width(), frame.height());
        let row = width as usize * 3;
        assert!(
            dst.len() >= row * height as usize + WRITE_SLACK,
            "destination too small for the frame and the slack"
        );
        self.scale(
            frame,
            (0, 0, width, height),
            (width, height),
            sys::SWS_BICUBIC,
            dst,
            row,
        )?;
        let tail = width % 8;
        if tail == 0 || !takes_fast_path(frame) {
            return Ok(());
        }
        // swscale's fast path left the last `tail` pixels of each row unwritten (see `padded_row`): convert a
        // strip of the right edge at a padded stride and copy them from it. That path gives each pixel a value
        // of its own column's samples only, so the strip's pixels equal the full frame's.
        let x0 = (width - tail).saturating_sub(8);
        let strip_width = width - x0;
        let strip = self.tail.get_or_insert_with(|| {
            Box::new(TailStrip {
                scaler: Scaler::new(),
                rows: Vec::new(),
            })
        });
        let stride = padded_row(strip_width);
        sized_with_slack(&mut strip.rows, stride * height as usize);
        let result = strip.scaler.scale(
            frame,
            (x0, 0, strip_width, height),
            (strip_width, height),
            sys::SWS_BICUBIC,
            &mut strip.rows,
            stride,
        );
        if result.is_ok() {
            let (from, to) = (
                ((strip_width - tail) * 3) as usize,
                (strip_width * 3) as usize,
            );
            let rows = dst[..row * height as usize].chunks_exact_mut(row);
            for (out, strip_row) in rows.zip(strip.rows.chunks(stride)) {
                out[row - tail as usize * 3..].copy_from_slice(&strip_row[from..to]);
            }
        }
        result
    }

    /// Converts the window `(x, y, w, h)` of `frame` to RGB24 in `out`, converting little more than that
    /// window's pixels, with exactly the values a full-frame conversion gives them: the converted region is
    /// the window plus a margin of [`WINDOW_MARGIN`] pixels (so chroma filters see the same neighbours), its
    /// left edge on a 16-pixel grid and its top on the chroma grid, and its width and height of the same
    /// residues as the frame's (swscale picks its code path from them). The returned region says where the
    /// asked window starts in `out`.
    pub(crate) fn convert_window(
        &mut self,
        frame: &AvFrame,
        window: (u32, u32, u32, u32),
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        let (x, y, w, h) = window;
        let (fw, fh) = (frame.width(), frame.height());
        assert!(
            x + w <= fw && y + h <= fh && w > 0 && h > 0,
            "window outside the frame"
        );
        let (_, align_y) = chroma_alignment(frame);
        let mut x0 = x.saturating_sub(WINDOW_MARGIN) / 16 * 16;
        let mut y0 = y.saturating_sub(WINDOW_MARGIN) / align_y.max(2) * align_y.max(2);
        let mut x1 = (x + w + WINDOW_MARGIN).min(fw);
        let mut y1 = (y + h + WINDOW_MARGIN).min(fh);
        // An odd side makes swscale's chroma scale factor depend on the whole side: convert it whole.
        if fw % 2 == 1 {
            (x0, x1) = (0, fw);
        }
        if fh % 2 == 1 {
            (y0, y1) = (0, fh);
        }
        while (x1 - x0) % 16 != (fw - x0) % 16 && x1 < fw {
            x1 += 1;
        }
        while (y1 - y0) % 2 != fh % 2 && y1 < fh {
            y1 += 1;
        }
        let (rw, rh) = (x1 - x0, y1 - y0);
        let stride = padded_row(rw);
        sized_with_slack(out, stride * rh as usize);
        self.scale(
            frame,
            (x0, y0, rw, rh),
            (rw, rh),
            sys::SWS_BICUBIC,
            out,
            stride,
        )?;
        Ok(RgbRegion {
            offset: (y - y0) as usize * stride + (x - x0) as usize * 3,
            stride,
        })
    }

    /// Resizes `frame` to `size` with `filter` into a YUV 4:2:0 frame (allocated on first use and when its
    /// size changes), keeping the frame's matrix and range, but only the part of the resized picture around
    /// `window` (in resized pixels): whole blocks of the resize's pixel grid (where a source pixel edge meets
    /// an output pixel edge, on the chroma grid), with a margin for the filter, so each output pixel gets the
    /// filter taps it gets in a full resize. Returns the picture and where `window` starts in it.
    pub(crate) fn resize_yuv<'a>(
        &mut self,
        frame: &AvFrame,
        size: (u32, u32),
        filter: Filter,
        window: (u32, u32, u32, u32),
        into: &'a mut Option<AvFrame>,
    ) -> Result<(&'a AvFrame, (u32, u32)), AvError> {
        // SAFETY: the integer came from the decoder's own AVFrame.format, so it is a valid AVPixelFormat.
        let src_format =
            unsafe { std::mem::transmute::<c_int, sys::AVPixelFormat>(frame.format()) };
        let (src_format, jpeg) = dejpeg(src_format);
        let full_range = jpeg || frame.color_range() == sys::AVColorRange::AVCOL_RANGE_JPEG as i32;
        let (align_x, align_y) = chroma_alignment(frame);
        let (fw, fh) = (frame.width(), frame.height());
        let (x, y, w, h) = window;
        let (ox0, ox1, sx0, sx1) = grid_span(fw, size.0, align_x, x, x + w);
        let (oy0, oy1, sy0, sy1) = grid_span(fh, size.1, align_y, y, y + h);
        let out_size = (ox1 - ox0, oy1 - oy0);
        // An odd height gets one more row, a copy of the last (4:2:0 chroma already covers it): the RGB
        // conversion then takes swscale's fast path (each chroma sample over 2x2 pixels) as for even heights,
        // rather than its scaled path, whose chroma filter would depend on the span's height.
        let picture = (out_size.0, out_size.1.next_multiple_of(2));
        let reuse = into.as_ref().is_some_and(|f| {
            (f.width(), f.height()) == picture
                && f.colorspace() == frame.colorspace()
                && (f.color_range() == sys::AVColorRange::AVCOL_RANGE_JPEG as i32) == full_range
        });
        if !reuse {
            *into = Some(AvFrame::yuv420p_like(
                frame, picture.0, picture.1, full_range,
            )?);
        }
        let out = into.as_mut().expect("set above");
        let key = Key {
            width: sx1 - sx0,
            height: sy1 - sy0,
            format: src_format as i32,
            colorspace: frame.colorspace(),
            full_range,
            out_width: out_size.0,
            out_height: out_size.1,
            flags: filter.flags(),
            out_format: sys::AVPixelFormat::AV_PIX_FMT_YUV420P as i32,
        };
        if self.key != Some(key) {
            self.rebuild(key, src_format)?;
        }
        let ctx = self.ctx.expect("built above").as_ptr();
        let (src, dst) = (frame.as_ptr(), out.as_ptr());
        let mut planes = [ptr::null::<u8>(); 4];
        // SAFETY: (sx0, sy0) is inside the frame and on its chroma grid, so each plane offset stays inside its
        // plane; the region below and right of it lies inside the frame.
        unsafe {
            let offsets = plane_offsets(frame, sx0, sy0);
            for (p, plane) in planes.iter_mut().enumerate() {
                let base = (*src).data[p];
                if !base.is_null() {
                    *plane = base.offset(offsets[p]);
                }
            }
        }
        // SAFETY: the source planes point at the region's top-left with the frame's strides and `sy1 - sy0`
        // rows below; the output frame's planes were allocated (padded) for `out_size`; the context was built
        // for exactly these sizes and formats.
        let rows = unsafe {
            sys::sws_scale(
                ctx,
                planes.as_ptr(),
                (*src).linesize.as_ptr(),
                0,
                (sy1 - sy0) as c_int,
                (*dst).data.as_ptr(),
                (*dst).linesize.as_ptr(),
            )
        };
        if rows != out_size.1 as c_int {
            return Err(av_error(
                if rows < 0 { rows } else { sys::AVERROR_BUG },
                "sws_scale",
            ));
        }
        if picture.1 != out_size.1 {
            out.copy_luma_row(out_size.1 - 1, out_size.1);
        }
        Ok((out, (x - ox0, y - oy0)))
    }

    /// Converts the source window `src` (its left and top on the chroma grid) to `out_size` RGB24 into `dst`
    /// (`out_size.1` rows of `out_size.0 * 3` bytes, `stride` bytes apart).
    fn scale(
        &mut self,
        frame: &AvFrame,
        src: (u32, u32, u32, u32),
        out_size: (u32, u32),
        flags: c_int,
        dst: &mut [u8],
        stride: usize,
    ) -> Result<(), AvError> {
        let (x0, y0, width, height) = src;
        assert!(
            stride >= out_size.0 as usize * 3,
            "stride shorter than a row"
        );
        assert!(
            dst.len() >= stride * out_size.1 as usize + WRITE_SLACK,
            "destination size"
        );
        if width == 0 || height == 0 || out_size.0 == 0 || out_size.1 == 0 {
            return Err(av_error(sys::AVERROR_INVALIDDATA, "sws_scale"));
        }
        // SAFETY: the integer came from the decoder's own AVFrame.format, so it is a valid AVPixelFormat.
        let src_format =
            unsafe { std::mem::transmute::<c_int, sys::AVPixelFormat>(frame.format()) };
        let (src_format, jpeg) = dejpeg(src_format);
        let full_range = jpeg || frame.color_range() == sys::AVColorRange::AVCOL_RANGE_JPEG as i32;
        let key = Key {
            width,
            height,
            format: src_format as i32,
            colorspace: frame.colorspace(),
            full_range,
            out_width: out_size.0,
            out_height: out_size.1,
            flags,
            out_format: sys::AVPixelFormat::AV_PIX_FMT_RGB24 as i32,
        };
        if self.key != Some(key) {
            self.rebuild(key, src_format)?;
        }
        let ctx = self.ctx.expect("built above").as_ptr();
        let raw = frame.as_ptr();
        let mut planes = [ptr::null::<u8>(); 4];
        // SAFETY: the plane pointers and strides are the decoded frame's own; `plane_offsets` keeps each
        // offset inside its plane, since the window lies inside the frame (checked by the callers) and its
        // left/top are on the chroma grid.
        unsafe {
            let offsets = plane_offsets(frame, x0, y0);
            for (p, plane) in planes.iter_mut().enumerate() {
                let base = (*raw).data[p];
                if !base.is_null() {
                    *plane = base.offset(offsets[p]);
                }
            }
        }
        let dst_planes = [
            dst.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        ];
        let dst_strides = [
            c_int::try_from(stride).map_err(|_| av_error(sys::AVERROR_INVALIDDATA, "sws_scale"))?,
            0,
            0,
            0,
        ];
        // SAFETY: the source planes point at the window's top-left in each plane, with the frame's strides and
        // at least `height` rows below; the destination holds `out_size.1` rows `stride` bytes apart (each at
        // least a row long) plus the slack swscale may overrun into (asserted above), and the context was built
        // for exactly these sizes and format.
        let out_rows = unsafe {
            sys::sws_scale(
                ctx,
                planes.as_ptr(),
                (*raw).linesize.as_ptr(),
                0,
                height as c_int,
                dst_planes.as_ptr(),
                dst_strides.as_ptr(),
            )
        };
        if out_rows != out_size.1 as c_int {
            return Err(av_error(
                if out_rows < 0 {
                    out_rows
                } else {
                    sys::AVERROR_BUG
                },
                "sws_scale",
            ));
        }
        Ok(())
    }

    fn rebuild(&mut self, key: Key, src_format: sys::AVPixelFormat) -> Result<(), AvError> {
        let (w, h) = (key.width as c_int, key.height as c_int);
        let (ow, oh) = (key.out_width as c_int, key.out_height as c_int);
        let old = self.ctx.map_or(ptr::null_mut(), NonNull::as_ptr);
        self.key = None;
        // SAFETY: `old` is NULL or our previous context, which sws_getCachedContext frees or reuses. Bicubic
        // is the ffmpeg CLI's default; for a same-size conversion it keeps swscale's fast unscaled path.
        let ctx = unsafe {
            sys::sws_getCachedContext(
                old,
                w,
                h,
                src_format,
                ow,
                oh,
                // SAFETY (of the transmute): the value came from a valid AVPixelFormat in `key`.
                std::mem::transmute::<c_int, sys::AVPixelFormat>(key.out_format),
                key.flags,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null(),
            )
        };
        self.ctx = NonNull::new(ctx);
        let ctx = self
            .ctx
            .ok_or_else(|| out_of_memory("sws_getCachedContext"))?;
        let colorspace = match key.colorspace {
            // AVCOL_SPC_RGB / UNSPECIFIED / RESERVED: swscale's default (BT.601), like the ffmpeg CLI.
            0 | 2 | 3 => sys::SWS_CS_DEFAULT,
            other => other,
        };
        // SAFETY: `ctx` is valid; sws_getCoefficients returns a static table for any colour space (the
        // default one for values it does not know).
        unsafe {
            let src_table = sys::sws_getCoefficients(colorspace);
            let dst_table = sys::sws_getCoefficients(sys::SWS_CS_DEFAULT);
            // RGB output is full range; a YUV output keeps the input's range (no level change).
            let yuv_out = key.out_format != sys::AVPixelFormat::AV_PIX_FMT_RGB24 as i32;
            sys::sws_setColorspaceDetails(
                ctx.as_ptr(),
                src_table,
                c_int::from(key.full_range),
                if yuv_out { src_table } else { dst_table },
                if yuv_out {
                    c_int::from(key.full_range)
                } else {
                    1
                },
                0,
                1 << 16,
                1 << 16,
            );
        }
        self.key = Some(key);
        Ok(())
    }
}

/// Output pixels resized around a window on each side, so that the resize filter's taps near the window are
/// those of a full resize.
const RESIZE_MARGIN: u32 = 4;

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// On one axis of a resize from `src` to `dst` pixels, the output span `[o0, o1)` covering `[lo, hi)` plus
/// [`RESIZE_MARGIN`], both ends on the grid where source and output pixel edges meet (the source end on a
/// multiple of the source's chroma `align`, the output end even, for the 4:2:0 output's chroma), and its source
/// span `[s0, s1)`: the same scale, the same filter phases.
fn grid_span(src: u32, dst: u32, align: u32, lo: u32, hi: u32) -> (u32, u32, u32, u32) {
    let g = gcd(src, dst);
    let (src_step, dst_step) = (src / g, dst / g);
    // The smallest whole number of grid steps whose source length is a multiple of `align` and whose output
    // length is even.
    let (ks, kd) = (align / gcd(src_step, align), 2 / gcd(dst_step, 2));
    let k = ks * kd / gcd(ks, kd);
    let block = dst_step * k;
    let o0 = lo.saturating_sub(RESIZE_MARGIN) / block * block;
    let o1 = ((hi + RESIZE_MARGIN).div_ceil(block) * block).min(dst);
    let to_src = |o: u32| (u64::from(o) * u64::from(src) / u64::from(dst)) as u32;
    (o0, o1, to_src(o0), if o1 == dst { src } else { to_src(o1) })
}

/// Pixels converted around a window on each side, so that chroma upsampling filters near the window's edges
/// read the same neighbours as in a full-frame conversion.
const WINDOW_MARGIN: u32 = 8;

/// Bytes per RGB24 row at which swscale converts every pixel of a `width`-pixel row: its x86 fast path
/// (YUV 4:2:0/4:2:2 to RGB at the same size, see [`takes_fast_path`]) works on groups of 8 pixels and, when the
/// stride has no room for the last group's overrun, skips that group, leaving up to 7 pixels at the right edge
/// unwritten (FFmpeg 5.1, `libswscale/x86/yuv2rgb_template.c`). Rows are padded to a multiple of 16 pixels
/// whenever the width is not a multiple of 8.
fn padded_row(width: u32) -> usize {
    if width % 8 == 0 {
        width as usize * 3
    } else {
        width.next_multiple_of(16) as usize * 3
    }
}

/// Whether a same-size conversion of `frame` to RGB24 takes swscale's fast path (`ff_yuv2rgb_get_func_ptr`,
/// chosen by `ff_get_unscaled_swscale` for 8-bit YUV 4:2:0 or 4:2:2 input at an even height, without
/// `SWS_ACCURATE_RND`), which works on groups of 8 pixels.
fn takes_fast_path(frame: &AvFrame) -> bool {
    use sys::AVPixelFormat::*;
    let formats = [
        AV_PIX_FMT_YUV420P,
        AV_PIX_FMT_YUVJ420P,
        AV_PIX_FMT_YUV422P,
        AV_PIX_FMT_YUVJ422P,
        AV_PIX_FMT_YUVA420P,
    ];
    frame.height() % 2 == 0 && formats.iter().any(|f| *f as i32 == frame.format())
}

/// Bytes swscale's SIMD converters may write past the end of the last row.
pub(crate) const WRITE_SLACK: usize = 64;

/// Resizes `out` to `len` bytes with [`WRITE_SLACK`] spare bytes after them (the view the caller uses stops at
/// `len`; swscale may write into the slack).
fn sized_with_slack(out: &mut Vec<u8>, len: usize) {
    out.resize(len + WRITE_SLACK, 0);
}

/// How far a window's left and top must be aligned so that chroma planes start on a whole sample: 2 for
/// 4:2:0 and 4:2:2 horizontally, and so on (1 for RGB and 4:4:4).
fn chroma_alignment(frame: &AvFrame) -> (u32, u32) {
    // SAFETY: av_pix_fmt_desc_get accepts any value and returns NULL or a static descriptor.
    let desc = unsafe {
        sys::av_pix_fmt_desc_get(std::mem::transmute::<c_int, sys::AVPixelFormat>(
            frame.format(),
        ))
    };
    if desc.is_null() {
        return (1, 1);
    }
    // SAFETY: non-NULL descriptors are static.
    let desc = unsafe { &*desc };
    (1 << desc.log2_chroma_w, 1 << desc.log2_chroma_h)
}

/// The byte offset, in each plane, of the pixel at (`x`, `y`) (which must be on the chroma grid).
///
/// # Safety
/// `frame` must hold a decoded picture of a known pixel format.
unsafe fn plane_offsets(frame: &AvFrame, x: u32, y: u32) -> [isize; 4] {
    let mut offsets = [0isize; 4];
    if x == 0 && y == 0 {
        return offsets;
    }
    let raw = frame.as_ptr();
    // SAFETY: as documented; the descriptor is static or NULL.
    let desc = unsafe {
        sys::av_pix_fmt_desc_get(std::mem::transmute::<c_int, sys::AVPixelFormat>(
            (*raw).format,
        ))
    };
    assert!(!desc.is_null(), "unknown pixel format");
    // SAFETY: non-NULL descriptors are static.
    let desc = unsafe { &*desc };
    let rgb = desc.flags & sys::AV_PIX_FMT_FLAG_RGB as u64 != 0;
    for (p, offset) in offsets.iter_mut().enumerate() {
        let Some((i, comp)) = desc.comp[..usize::from(desc.nb_components)]
            .iter()
            .enumerate()
            .find(|(_, c)| c.plane as usize == p)
        else {
            continue;
        };
        let chroma = !rgb && (i == 1 || i == 2);
        let (hs, vs) = if chroma {
            (desc.log2_chroma_w, desc.log2_chroma_h)
        } else {
            (0, 0)
        };
        // SAFETY: `raw` is the frame's valid AVFrame.
        let linesize = unsafe { (*raw).linesize[p] } as isize;
        *offset = (y >> vs) as isize * linesize + (x >> hs) as isize * comp.step as isize;
    }
    offsets
}

impl Drop for Scaler {
    fn drop(&mut self) {
        if let Some(ctx) = self.ctx.take() {
            // SAFETY: our context, freed once.
            unsafe { sys::sws_freeContext(ctx.as_ptr()) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn resize_spans_sit_on_the_shared_pixel_grid(
            src in 2u32..4000, dst in 2u32..2000, align in prop::sample::select(vec![1u32, 2, 4]),
            lo_frac in 0.0f64..1.0, len_frac in 0.0f64..1.0,
        ) {
            let lo = ((dst - 1) as f64 * lo_frac) as u32;
            let hi = (lo + 1 + ((dst - lo - 1) as f64 * len_frac) as u32).min(dst);
            let (o0, o1, s0, s1) = grid_span(src, dst, align, lo, hi);
            prop_assert!(o0 <= lo.saturating_sub(RESIZE_MARGIN) && o1 >= (hi + RESIZE_MARGIN).min(dst));
            prop_assert!(o1 <= dst && s1 <= src && o0 < o1 && s0 < s1);
            // Same scale and phase: the span's ends map exactly onto source pixel edges.
            prop_assert_eq!(u64::from(s0) * u64::from(dst), u64::from(o0) * u64::from(src));
            prop_assert!(o1 == dst || u64::from(s1) * u64::from(dst) == u64::from(o1) * u64::from(src));
            prop_assert_eq!(s0 % align, 0);
            prop_assert_eq!(o0 % 2, 0);
        }
    }
}
