//! The CPU path's conversion plan (the GPU twin is `transform::gpu`): which region of a decoded frame swscale
//! converts, at what stride, so that the result equals a full-frame conversion byte for byte — the window
//! widened to the chroma grid where swscale's fast path converts the frame (each pixel's value its own), else a
//! window with a margin, aligned to swscale's groups and the chroma grid; a resize of only that region of the resized
//! picture (8-bit planar YUV frames, by `resample`), or else of whole blocks of the resize's pixel grid around
//! the window (swscale); and the right-edge strip that swscale's fast path skips. Safe code: the calls into
//! swscale are `ffi::scale`'s.

use super::resample::{Region, Resampler};
use crate::error::AvError;
use crate::ffi::frame::{AvFrame, Plane};
use crate::ffi::scale::{chroma_alignment, takes_fast_path, Filter, Pixels, Scaler, WRITE_SLACK};

/// Where the requested window lies in a converted buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RgbRegion {
    /// Byte offset of the window's top-left pixel.
    pub(crate) offset: usize,
    /// Bytes per row.
    pub(crate) stride: usize,
    /// Bytes from one plane to the next (planar YUV).
    pub(crate) plane: usize,
}

/// A frame's converters on the CPU: one swscale context for the RGB conversion, one for the right-edge strip
/// (so that neither is rebuilt per frame), one for a resize in YUV (formats other than 8-bit planar YUV), the
/// resampler (8-bit planar YUV), and the resized picture, reused while its size stays.
pub(crate) struct HostConverter {
    scaler: Scaler,
    /// Converts the right edge of frames whose last pixels swscale's fast path skips (see [`padded_row`]).
    tail: Option<Box<TailStrip>>,
    resizer: Scaler,
    resized: Option<AvFrame>,
    resampler: Resampler,
}

/// A converter of its own for the right-edge strip, and the strip's rows at a padded stride.
struct TailStrip {
    scaler: Scaler,
    rows: Vec<u8>,
}

impl HostConverter {
    pub(crate) fn new() -> Self {
        Self {
            scaler: Scaler::new(),
            tail: None,
            resizer: Scaler::new(),
            resized: None,
            resampler: Resampler::default(),
        }
    }

    /// Converts `frame` to `rgb` rows of `width` pixels written straight into `dst`, which must hold
    /// `width * height` pixels plus [`WRITE_SLACK`] spare bytes (swscale's SIMD code may write into them).
    pub(crate) fn rgb(
        &mut self,
        frame: &AvFrame,
        rgb: Pixels,
        dst: &mut [u8],
    ) -> Result<(), AvError> {
        let (width, height) = (frame.width(), frame.height());
        let row = width as usize * rgb.pixel_bytes();
        assert!(
            dst.len() >= row * height as usize + WRITE_SLACK,
            "destination too small for the frame and the slack"
        );
        self.scaler.convert(
            frame,
            (0, 0, width, height),
            (width, height),
            Filter::Bicubic,
            rgb,
            dst,
            row,
        )?;
        let Some((x0, strip_width, tail)) =
            tail_strip(width).filter(|_| fast_path(frame, rgb) && !self.scaler.wrote_whole_rows())
        else {
            return Ok(());
        };
        // swscale's fast path left the last `tail` pixels of each row unwritten (see `padded_row`): convert a
        // strip of the right edge at a padded stride and copy them from it. That path gives each pixel a value
        // of its own column's samples only, so the strip's pixels equal the full frame's.
        let strip = self.tail.get_or_insert_with(|| {
            Box::new(TailStrip {
                scaler: Scaler::new(),
                rows: Vec::new(),
            })
        });
        let stride = padded_row(strip_width);
        sized_with_slack(&mut strip.rows, stride * height as usize)?;
        strip.scaler.convert(
            frame,
            (x0, 0, strip_width, height),
            (strip_width, height),
            Filter::Bicubic,
            rgb,
            &mut strip.rows,
            stride,
        )?;
        let (from, to) = (
            ((strip_width - tail) * 3) as usize,
            (strip_width * 3) as usize,
        );
        let rows = dst[..row * height as usize].chunks_exact_mut(row);
        for (out, strip_row) in rows.zip(strip.rows.chunks(stride)) {
            out[row - tail as usize * 3..].copy_from_slice(&strip_row[from..to]);
        }
        Ok(())
    }

    /// Converts the window `(x, y, w, h)` of `frame` to `rgb` in `out`, converting little more than that
    /// window's pixels, with exactly the values a full-frame conversion gives them (see [`window_region`]).
    /// The returned region says where the asked window starts in `out`.
    pub(crate) fn window_rgb(
        &mut self,
        frame: &AvFrame,
        window: (u32, u32, u32, u32),
        rgb: Pixels,
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        convert_window(&mut self.scaler, frame, window, rgb, out)
    }

    /// The window `(x, y, w, h)` of `frame` resized to `size` with `filter`, into `out`: the frame is resized
    /// in YUV, but only the part of the resized picture around the window (see [`grid_span`]), then that
    /// window is converted as [`window_rgb`](Self::window_rgb) converts one. For [`Pixels::Sixteen`] the resized
    /// picture keeps 16 bits a sample.
    pub(crate) fn resized_window_rgb(
        &mut self,
        frame: &AvFrame,
        size: (u32, u32),
        filter: Filter,
        window: (u32, u32, u32, u32),
        rgb: Pixels,
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        if let Some(src) = frame.yuv_planes().filter(|_| rgb == Pixels::Eight) {
            return self.resampled_window_rgb(&src, frame, size, filter, window, out);
        }
        let (align_x, align_y) = chroma_alignment(frame);
        let (fw, fh) = (frame.width(), frame.height());
        let (x, y, w, h) = window;
        // RGB48 takes swscale's scaled path, whose filters read further around the window than the fast path
        // does, and swscale's filters at a span's edges are not always the whole picture's (4:2:2 to 4:2:0
        // chroma): the whole picture is resized, so that a window is exactly the same pixels of the whole resized
        // frame (the CLI's `scale`, byte for byte).
        let ((ox0, ox1, sx0, sx1), (oy0, oy1, sy0, sy1)) = match rgb {
            Pixels::Eight => (
                grid_span(fw, size.0, align_x, (x, x + w), RESIZE_MARGIN),
                grid_span(fh, size.1, align_y, (y, y + h), RESIZE_MARGIN),
            ),
            Pixels::Sixteen | Pixels::Yuv16 => ((0, size.0, 0, fw), (0, size.1, 0, fh)),
        };
        let out_size = (ox1 - ox0, oy1 - oy0);
        // For RGB24, an odd height gets one more row, a copy of the last (4:2:0 chroma already covers it): the
        // RGB conversion then takes swscale's fast path (each chroma sample over 2x2 pixels) as for even
        // heights, rather than its scaled path, whose chroma filter would depend on the span's height. RGB48
        // always takes the scaled path: the picture keeps its height, as a whole resized picture would.
        let picture = match rgb {
            Pixels::Eight => (out_size.0, out_size.1.next_multiple_of(2)),
            Pixels::Sixteen | Pixels::Yuv16 => out_size,
        };
        let resized = self.resizer.resize_yuv(
            frame,
            (sx0, sy0, sx1 - sx0, sy1 - sy0),
            out_size,
            picture,
            filter,
            rgb,
            &mut self.resized,
        )?;
        if picture.1 != out_size.1 {
            resized.copy_luma_row(out_size.1 - 1, out_size.1);
        }
        convert_window(
            &mut self.scaler,
            resized,
            (x - ox0, y - oy0, w, h),
            rgb,
            out,
        )
    }

    /// `frame` resized to `size` with `filter` and converted to `rgb` in one swscale pass (`ResizeStage::Rgb`:
    /// the `ffmpeg` CLI's `scale=W:H:flags=F` writing RGB itself), the whole resized picture into `out`; the
    /// region says where the window whose top-left is `corner` starts in it.
    pub(crate) fn converted_window_rgb(
        &mut self,
        frame: &AvFrame,
        size: (u32, u32),
        filter: Filter,
        corner: (u32, u32),
        rgb: Pixels,
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        let stride = size.0 as usize * rgb.pixel_bytes();
        let plane = stride * size.1 as usize;
        sized_with_slack(out, plane)?;
        self.resizer.convert(
            frame,
            (0, 0, frame.width(), frame.height()),
            size,
            filter,
            rgb,
            out,
            stride,
        )?;
        Ok(RgbRegion {
            offset: corner.1 as usize * stride + corner.0 as usize * rgb.pixel_bytes(),
            stride,
            plane,
        })
    }

    /// [`resized_window_rgb`](Self::resized_window_rgb) for an 8-bit planar YUV frame (its planes `src`):
    /// framefeed's resampler computes only the part of the resized picture that the window's conversion reads
    /// (see [`window_region`]), into a picture of the whole resized size, which is then converted as any
    /// picture's window is.
    fn resampled_window_rgb(
        &mut self,
        src: &[Plane<'_>; 3],
        frame: &AvFrame,
        size: (u32, u32),
        filter: Filter,
        window: (u32, u32, u32, u32),
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        // An odd height gets one more row, a copy of the last (as in `resized_window_rgb`).
        let picture = (size.0, size.1.next_multiple_of(2));
        let resized = AvFrame::reuse_yuv420p_like(
            &mut self.resized,
            frame,
            picture,
            frame.full_range(),
            false,
        )?;
        let (x0, y0, rw, rh) = window_region(picture, 2, takes_fast_path(resized), window);
        let rows = y0..(y0 + rh).min(size.1);
        {
            let mut planes = resized.yuv_planes_mut()?;
            let region = Region {
                columns: x0 as usize..(x0 + rw) as usize,
                rows: rows.start as usize..rows.end as usize,
            };
            let size = (size.0 as usize, size.1 as usize);
            self.resampler
                .resize(src, &mut planes, size, filter, &region)?;
        }
        if y0 + rh > size.1 {
            resized.copy_luma_row(size.1 - 1, size.1);
        }
        convert_window(&mut self.scaler, resized, window, Pixels::Eight, out)
    }
}

/// Whether a same-size conversion of `frame` to `rgb` takes swscale's fast path (8-bit output only).
fn fast_path(frame: &AvFrame, rgb: Pixels) -> bool {
    rgb == Pixels::Eight && takes_fast_path(frame)
}

/// [`HostConverter::window_rgb`] with a given converter.
fn convert_window(
    scaler: &mut Scaler,
    frame: &AvFrame,
    window: (u32, u32, u32, u32),
    rgb: Pixels,
    out: &mut Vec<u8>,
) -> Result<RgbRegion, AvError> {
    let (x, y, w, h) = window;
    let (fw, fh) = (frame.width(), frame.height());
    assert!(
        x + w <= fw && y + h <= fh && w > 0 && h > 0,
        "window outside the frame"
    );
    let (_, align_y) = chroma_alignment(frame);
    let (x0, y0, rw, rh) = window_region((fw, fh), align_y, fast_path(frame, rgb), window);
    let stride = match rgb {
        Pixels::Eight => padded_row(rw),
        Pixels::Sixteen | Pixels::Yuv16 => rw as usize * rgb.pixel_bytes(),
    };
    let plane = stride * rh as usize;
    sized_with_slack(out, plane * rgb.planes())?;
    scaler.convert(
        frame,
        (x0, y0, rw, rh),
        (rw, rh),
        Filter::Bicubic,
        rgb,
        out,
        stride,
    )?;
    Ok(RgbRegion {
        offset: (y - y0) as usize * stride + (x - x0) as usize * rgb.pixel_bytes(),
        stride,
        plane,
    })
}

/// The region `(x0, y0, w, h)` of a `frame`-sized picture whose conversion gives the window `(x, y, w, h)`
/// exactly the values of a full-frame conversion.
///
/// Where the full frame takes swscale's fast path (`fast_path`, see `ffi::scale::takes_fast_path`), each pixel's
/// value depends on its own luma sample and its chroma pair's samples only, at any position in any row (the
/// same fact the right-edge strip relies on, see [`padded_row`]): the region is the window widened to the
/// chroma grid, its left and top edges even and its right and bottom edges even or the frame's own, so that its
/// height is even and its conversion takes that path too.
///
/// Otherwise swscale's scaled path filters the chroma: the region is the window plus a margin of
/// [`WINDOW_MARGIN`] pixels (so chroma filters see the same neighbours), its left edge on a 16-pixel grid and
/// its top on the chroma grid (`align_y` rows), and its width and height of the same residues as the frame's
/// (swscale picks its code path from them); an odd side is taken whole.
fn window_region(
    frame: (u32, u32),
    align_y: u32,
    fast_path: bool,
    window: (u32, u32, u32, u32),
) -> (u32, u32, u32, u32) {
    let (fw, fh) = frame;
    let (x, y, w, h) = window;
    if fast_path {
        let (x0, y0) = (x / 2 * 2, y / 2 * 2);
        let x1 = (x + w).next_multiple_of(2).min(fw);
        let y1 = (y + h).next_multiple_of(2).min(fh);
        return (x0, y0, x1 - x0, y1 - y0);
    }
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
    // Chroma upscaled vertically (4:2:0 to RGB48, which always takes the scaled path) gets a shorter filter on
    // planes of few rows: at least `MIN_ROWS` rows, so that the region's filter is the frame's.
    if y1 - y0 < MIN_ROWS {
        y1 = (y0 + MIN_ROWS).min(fh);
        let step = align_y.max(2);
        while y1 - y0 < MIN_ROWS && y0 > 0 {
            y0 -= step.min(y0);
        }
    }
    while (x1 - x0) % 16 != (fw - x0) % 16 && x1 < fw {
        x1 += 1;
    }
    while (y1 - y0) % 2 != fh % 2 && y1 < fh {
        y1 += 1;
    }
    (x0, y0, x1 - x0, y1 - y0)
}

/// For a frame `width` pixels wide that swscale's fast path converts, the right-edge strip to convert again:
/// `(x0, strip_width, tail)`, the strip's left edge and width (on the 8-pixel grid, one group before the
/// skipped pixels), and how many pixels at the right edge the fast path left unwritten. `None` when the width
/// is a multiple of 8.
fn tail_strip(width: u32) -> Option<(u32, u32, u32)> {
    let tail = width % 8;
    if tail == 0 {
        return None;
    }
    let x0 = (width - tail).saturating_sub(8);
    Some((x0, width - x0, tail))
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
/// `margin` pixels, both ends on the grid where source and output pixel edges meet (the source end on a
/// multiple of the source's chroma `align`, the output end even, for the 4:2:0 output's chroma), and its source
/// span `[s0, s1)`: the same scale, the same filter phases.
fn grid_span(
    src: u32,
    dst: u32,
    align: u32,
    (lo, hi): (u32, u32),
    margin: u32,
) -> (u32, u32, u32, u32) {
    let g = gcd(src, dst);
    let (src_step, dst_step) = (src / g, dst / g);
    // The smallest whole number of grid steps whose source length is a multiple of `align` and whose output
    // length is even.
    let (ks, kd) = (align / gcd(src_step, align), 2 / gcd(dst_step, 2));
    let k = ks * kd / gcd(ks, kd);
    let block = dst_step * k;
    let o0 = lo.saturating_sub(margin) / block * block;
    let o1 = ((hi + margin).div_ceil(block) * block).min(dst);
    let to_src = |o: u32| (u64::from(o) * u64::from(src) / u64::from(dst)) as u32;
    (o0, o1, to_src(o0), if o1 == dst { src } else { to_src(o1) })
}

/// The fewest rows a window's region has on swscale's scaled path (see [`window_region`]): swscale's vertical
/// chroma filter of 4:2:0 input keeps its full 5 taps from 7 chroma rows up.
const MIN_ROWS: u32 = 16;

/// Pixels converted around a window on each side, so that chroma upsampling filters near the window's edges
/// read the same neighbours as in a full-frame conversion.
const WINDOW_MARGIN: u32 = 8;

/// Bytes per RGB24 row at which swscale converts every pixel of a `width`-pixel row: its x86 fast path
/// (YUV 4:2:0/4:2:2 to RGB at the same size, see `ffi::scale::takes_fast_path`) works on groups of 8 pixels and, when the
/// stride has no room for the last group's overrun, skips that group, leaving up to 7 pixels at the right edge
/// unwritten (FFmpeg 5.1, `libswscale/x86/yuv2rgb_template.c`). Rows are padded to a multiple of 16 pixels
/// whenever the width is not a multiple of 8.
fn padded_row(width: u32) -> usize {
    if width.is_multiple_of(8) {
        width as usize * 3
    } else {
        width.next_multiple_of(16) as usize * 3
    }
}

/// Resizes `out` to `len` bytes with [`WRITE_SLACK`] spare bytes after them (the view the caller uses stops at
/// `len`; swscale may write into the slack). The frame size (bounded by the configuration) drives `len`, so
/// memory the system refuses fails the video (`ENOMEM`), never the process.
fn sized_with_slack(out: &mut Vec<u8>, len: usize) -> Result<(), AvError> {
    let refused = || AvError {
        operation: "allocating conversion scratch",
        code: -libc::ENOMEM,
        message: format!("cannot allocate {len} bytes"),
    };
    let total = len.checked_add(WRITE_SLACK).ok_or_else(refused)?;
    out.try_reserve(total.saturating_sub(out.len()))
        .map_err(|_| refused())?;
    out.resize(total, 0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A YUV 4:2:0 picture whose neighbouring pixels and chroma pairs all differ.
    fn noise_frame(width: u32, height: u32, full_range: bool) -> AvFrame {
        let mut frame = AvFrame::yuv420p_bt601(width, height, full_range).unwrap();
        for p in 0..3 {
            frame.fill_plane(p, |x, y| ((x * 73 + y * 151 + p * 29) ^ (x * y / 3)) as u8);
        }
        frame
    }

    /// `frame` converted whole by swscale to `rgb`, every pixel written (rows padded as `convert_window` pads
    /// them): the bytes and the stride.
    fn swscale_whole(frame: &AvFrame, rgb: Pixels) -> (Vec<u8>, usize) {
        let (w, h) = (frame.width(), frame.height());
        let stride = match rgb {
            Pixels::Eight => padded_row(w),
            _ => w as usize * rgb.pixel_bytes(),
        };
        let mut out = vec![0; stride * h as usize * rgb.planes() + WRITE_SLACK];
        let size = (w, h);
        Scaler::swscale_only()
            .convert(
                frame,
                (0, 0, w, h),
                size,
                Filter::Bicubic,
                rgb,
                &mut out,
                stride,
            )
            .unwrap();
        (out, stride)
    }

    /// Windows of a `w` x `h` picture at both parities of every edge, narrow and wide, at both ends.
    fn windows(w: u32, h: u32) -> Vec<(u32, u32, u32, u32)> {
        let sides = |n: u32| -> Vec<(u32, u32)> {
            let mut v = Vec::new();
            for len in [1, 2, 5, 32, 33, n - 1, n] {
                for at in [0, 1, 2, 3, n.saturating_sub(len + 1), n.saturating_sub(len)] {
                    if len >= 1 && at + len <= n {
                        v.push((at, len));
                    }
                }
            }
            v.sort_unstable();
            v.dedup();
            v
        };
        let rows = sides(h);
        sides(w)
            .into_iter()
            .enumerate()
            .flat_map(|(i, (x, ww))| {
                // A few row spans each (all of them for some), so that every row parity meets every column one.
                let step = if i % 5 == 0 { 1 } else { 7 };
                rows.iter()
                    .skip(i % step)
                    .step_by(step)
                    .map(move |&(y, wh)| (x, y, ww, wh))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Asserts that `window` of a conversion (`out` at `region`) equals the same pixels of `whole`.
    fn assert_window(
        out: &[u8],
        region: RgbRegion,
        whole: &[u8],
        whole_stride: usize,
        window: (u32, u32, u32, u32),
        pixels: Pixels,
        what: &str,
    ) {
        let (x, y, w, h) = window;
        let px = pixels.pixel_bytes();
        let len = w as usize * px;
        let whole_plane = whole.len().saturating_sub(WRITE_SLACK) / pixels.planes();
        for p in 0..pixels.planes() {
            for row in 0..h as usize {
                let got = &out[region.offset + p * region.plane + row * region.stride..][..len];
                let at = p * whole_plane + (y as usize + row) * whole_stride + x as usize * px;
                let want = &whole[at..][..len];
                assert!(
                    got == want,
                    "{what}, window {window:?}: plane {p} row {row} differs"
                );
            }
        }
    }

    /// A window converted alone (a region just wider than it, see `window_region`) has exactly the values of
    /// the whole frame converted by swscale: at every parity of its edges, in pictures of odd and even widths,
    /// limited and full range, through the vector path and through swscale's own, to RGB24, to RGB48
    /// (swscale's scaled path, its vertical chroma filter included) and to the tone mapper's YUV 4:4:4 (chroma
    /// filtered both ways).
    #[test]
    fn a_window_converts_to_the_whole_frames_values_at_every_parity() {
        for rgb in [Pixels::Eight, Pixels::Sixteen, Pixels::Yuv16] {
            for (w, h, full) in [
                (455, 256, false),
                (96, 64, true),
                (35, 20, false),
                (34, 2, true),
            ] {
                let frame = noise_frame(w, h, full);
                let (whole, whole_stride) = swscale_whole(&frame, rgb);
                for (name, mut scaler) in [
                    ("vector", Scaler::new()),
                    ("swscale", Scaler::swscale_only()),
                ] {
                    let mut out = Vec::new();
                    for window in windows(w, h) {
                        let region =
                            convert_window(&mut scaler, &frame, window, rgb, &mut out).unwrap();
                        let what = format!("{w}x{h} to {rgb:?} through {name}");
                        assert_window(&out, region, &whole, whole_stride, window, rgb, &what);
                    }
                }
            }
        }
    }

    /// A window of a resized picture, computed alone, equals the same pixels of the whole resized picture
    /// (resized and converted whole), for resized widths odd and even, through both conversions.
    #[test]
    fn a_resized_window_equals_the_same_pixels_of_the_whole_resized_picture() {
        let frame = noise_frame(320, 180, false);
        for size in [(227, 128), (96, 54), (35, 21)] {
            for swscale in [false, true] {
                let mut converter = HostConverter::new();
                if swscale {
                    converter.scaler = Scaler::swscale_only();
                }
                let src = frame.yuv_planes().unwrap();
                let mut whole = Vec::new();
                let full = (0, 0, size.0, size.1);
                let at = converter
                    .resampled_window_rgb(&src, &frame, size, Filter::Bilinear, full, &mut whole)
                    .unwrap();
                assert_eq!(at.offset, 0);
                let whole = whole[..at.stride * size.1 as usize].to_vec();
                let mut out = Vec::new();
                for window in windows(size.0, size.1) {
                    let region = converter
                        .resampled_window_rgb(
                            &src,
                            &frame,
                            size,
                            Filter::Bilinear,
                            window,
                            &mut out,
                        )
                        .unwrap();
                    let what = format!("{size:?}, swscale {swscale}");
                    assert_window(
                        &out,
                        region,
                        &whole,
                        at.stride,
                        window,
                        Pixels::Eight,
                        &what,
                    );
                }
            }
        }
    }

    #[test]
    fn scratch_the_system_refuses_is_an_error_not_an_abort() {
        let mut scratch = Vec::new();
        sized_with_slack(&mut scratch, 100).unwrap();
        assert_eq!(scratch.len(), 100 + WRITE_SLACK);
        for len in [usize::MAX / 2, usize::MAX] {
            let err = sized_with_slack(&mut scratch, len).unwrap_err();
            assert_eq!(err.code, -libc::ENOMEM);
        }
        assert_eq!(scratch.len(), 100 + WRITE_SLACK, "left as it was");
    }

    proptest! {
        #[test]
        fn resize_spans_sit_on_the_shared_pixel_grid(
            src in 2u32..4000, dst in 2u32..2000, align in prop::sample::select(vec![1u32, 2, 4]),
            lo_frac in 0.0f64..1.0, len_frac in 0.0f64..1.0,
        ) {
            let lo = ((dst - 1) as f64 * lo_frac) as u32;
            let hi = (lo + 1 + ((dst - lo - 1) as f64 * len_frac) as u32).min(dst);
            let (o0, o1, s0, s1) = grid_span(src, dst, align, (lo, hi), RESIZE_MARGIN);
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
