//! The CPU path's turn of a decoded picture (the GPU twin reads the surface turned, in the kernel): each plane's
//! pixels moved to where the shown picture has them, into a picture reused from frame to frame, before the
//! conversion and the transforms read it. This is what the `ffmpeg` CLI's autorotation does (its `transpose`,
//! `hflip` and `vflip` filters on the decoder's planes, a plane at its own subsampled size), so the conversion
//! that follows gives the CLI's bytes. A format those filters do not take as it is (chroma subsampled unevenly
//! under a quarter turn, palettes under a quarter turn, packed 4:2:2 under a mirror) the CLI converts to RGB
//! first, and so does this: the frame is converted to `rgb24` as it would be unturned, then turned.

use std::cell::Cell;

use super::host::HostConverter;
use crate::decode::frame::FrameRef;
use crate::error::{AvError, VideoError};
use crate::ffi::frame::AvFrame;
use crate::ffi::scale::{Pixels, WRITE_SLACK};
use crate::ffi::simd::filter_rows::prefetch_rows;
use crate::ffi::simd::transpose::{self, Rows};
use crate::info::StreamInfo;
use crate::orientation::{Orientation, Steps};
use crate::settings::config::Config;

/// How a video's frames are turned: the display matrix of the last frame that carried one (H.264 sends it in
/// a message with a keyframe, and the `ffmpeg` CLI keeps it for the frames after), else its stream's, read as
/// the CLI reads it; nothing with [`Config::autorotate`](crate::Config::autorotate) off.
pub(crate) struct Orienter {
    stream: Option<[i32; 9]>,
    /// The last frame's own matrix.
    framed: Cell<Option<[i32; 9]>>,
    autorotate: bool,
    /// A matrix that is not a quarter turn or a flip was met (it is not applied; logged once).
    warned: Cell<bool>,
}

impl Orienter {
    /// For a video whose stream is `stream`.
    pub(crate) fn new(stream: &StreamInfo, config: &Config) -> Self {
        Self {
            stream: stream.display_matrix,
            framed: Cell::new(None),
            autorotate: config.autorotate,
            warned: Cell::new(false),
        }
    }

    /// How `frame`, the next one the decoder gave, is shown (every frame is seen, in the decoder's order: one
    /// with a display matrix of its own sets it for those after it).
    pub(crate) fn observe(&self, frame: &FrameRef<'_>) -> Orientation {
        if !self.autorotate {
            return Orientation::Upright;
        }
        if let Some(own) = frame.display_matrix() {
            self.framed.set(Some(own));
        }
        let Some(matrix) = self.framed.get().or(self.stream) else {
            return Orientation::Upright;
        };
        Orientation::from_display_matrix(&matrix).unwrap_or_else(|| {
            if !self.warned.replace(true) {
                tracing::warn!(
                    rotation = crate::orientation::display_rotation(&matrix),
                    "the display matrix is not a quarter turn or a flip: frames are given as decoded"
                );
            }
            Orientation::Upright
        })
    }
}

/// A video's turned pictures, reused from frame to frame.
#[derive(Default)]
pub(crate) struct Turner {
    upright: Option<AvFrame>,
    /// The frame converted to RGB, for formats turned that way.
    rgb: Vec<u8>,
}

impl Turner {
    /// `frame` shown per `orientation` (not [`Orientation::Upright`]): a picture of the shown size, in the
    /// frame's own format where FFmpeg's filters turn it plane by plane, else in `rgb24` or `rgb48le` (per
    /// `rgb`, converted by `converter`, as the unturned frame would be).
    pub(crate) fn turn<'a>(
        &'a mut self,
        frame: &AvFrame,
        orientation: Orientation,
        rgb: Pixels,
        converter: &mut HostConverter,
    ) -> Result<&'a AvFrame, VideoError> {
        let steps = orientation.steps();
        let (w, h) = orientation.displayed_size(frame.width(), frame.height());
        if frame.turns_by_planes(steps.transpose) {
            let upright = AvFrame::reuse_shaped_like(&mut self.upright, frame, (w, h))?;
            let src = frame.pixel_planes().ok_or_else(unturnable)?;
            let dst = upright.pixel_planes_mut()?;
            for (s, d) in src.iter().zip(dst) {
                if s.turns {
                    turn_plane(
                        Source {
                            data: s.data,
                            stride: s.stride,
                        },
                        d.data,
                        d.stride,
                        (d.width, d.height),
                        s.pixel_bytes,
                        steps,
                    );
                } else {
                    d.data.copy_from_slice(&s.data[..d.data.len()]);
                }
            }
            return Ok(upright);
        }
        // Through RGB: the frame converted as it is, then its pixels turned.
        let (fw, fh) = (frame.width() as usize, frame.height() as usize);
        let row = fw * rgb.pixel_bytes();
        let len = row * fh + WRITE_SLACK;
        self.rgb
            .try_reserve(len.saturating_sub(self.rgb.len()))
            .map_err(|_| AvError {
                operation: "allocating a picture to turn",
                code: -libc::ENOMEM,
                message: format!("cannot allocate {len} bytes"),
            })?;
        self.rgb.resize(len, 0);
        converter.rgb(frame, rgb, &mut self.rgb)?;
        let upright = AvFrame::reuse_rgb_like(&mut self.upright, frame, (w, h), rgb.deep())?;
        let mut planes = upright.pixel_planes_mut()?;
        let d = planes.first_mut().ok_or_else(unturnable)?;
        let source = Source {
            data: &self.rgb,
            stride: row,
        };
        let pixel = rgb.pixel_bytes();
        turn_plane(source, d.data, d.stride, (d.width, d.height), pixel, steps);
        Ok(upright)
    }
}

fn unturnable() -> VideoError {
    VideoError::Ffmpeg(AvError {
        operation: "turning a picture",
        code: -libc::EINVAL,
        message: "its planes cannot be read".into(),
    })
}

/// A coded plane: rows `stride` bytes apart.
#[derive(Clone, Copy)]
struct Source<'a> {
    data: &'a [u8],
    stride: usize,
}

/// Writes the shown plane `size` (`dst`, rows `dst_stride` bytes apart) from the coded plane `src`: pixel
/// `(x, y)` is the coded one [`Steps::source`] names, `pixel_bytes` bytes each.
fn turn_plane(
    src: Source<'_>,
    dst: &mut [u8],
    dst_stride: usize,
    size: (usize, usize),
    pixel_bytes: usize,
    steps: Steps,
) {
    match pixel_bytes {
        1 => turn_pixels::<1>(src, dst, dst_stride, size, steps),
        2 => turn_pixels::<2>(src, dst, dst_stride, size, steps),
        3 => turn_pixels::<3>(src, dst, dst_stride, size, steps),
        4 => turn_pixels::<4>(src, dst, dst_stride, size, steps),
        6 => turn_pixels::<6>(src, dst, dst_stride, size, steps),
        8 => turn_pixels::<8>(src, dst, dst_stride, size, steps),
        n => turn_any(src, dst, dst_stride, size, n, steps),
    }
}

/// [`turn_plane`] for pixels of `N` bytes.
fn turn_pixels<const N: usize>(
    src: Source<'_>,
    dst: &mut [u8],
    dst_stride: usize,
    (w, h): (usize, usize),
    steps: Steps,
) {
    if !steps.transpose {
        // Whole rows: copied, or reversed pixel by pixel.
        for y in 0..h {
            let sy = if steps.flip_y { h - 1 - y } else { y };
            let from = &src.data[sy * src.stride..][..w * N];
            let to = &mut dst[y * dst_stride..][..w * N];
            if steps.flip_x {
                for (d, s) in to.chunks_exact_mut(N).zip(from.chunks_exact(N).rev()) {
                    d.copy_from_slice(s);
                }
            } else {
                to.copy_from_slice(from);
            }
        }
        return;
    }
    // A quarter turn or a diagonal mirror: shown row y is coded column y' (y mirrored when flip_y), read down
    // the coded rows x' (x mirrored when flip_x). Squares 16 bytes a side (1- and 2-byte pixels) are
    // transposed in registers (`ffi::simd::transpose`), in bands of shown rows; what is left at the right and
    // bottom edges, and other pixel sizes, a pixel at a time.
    let side = if matches!(N, 1 | 2) { 16 / N } else { 0 };
    let full = |n: usize| n.checked_div(side).map_or(0, |q| q * side);
    let (full_w, full_h) = (full(w), full(h));
    // Bands of BAND squares: the squares across a band read the same coded rows' cache lines, each line once
    // from memory, and write a few shown rows' lines, which stay in the cache between squares.
    const BAND: usize = 4;
    // The coded rows of the squares this many steps ahead are asked for while the current ones move: read down
    // a column, they are too far apart for the CPU's own prefetchers.
    const AHEAD: usize = 2;
    for band in (0..full_h).step_by((side * BAND).max(1)) {
        let band_end = (band + side * BAND).min(full_h);
        let columns = if steps.flip_y {
            (h - band_end) * N..(h - band) * N
        } else {
            band * N..band_end * N
        };
        for x0 in (0..full_w).step_by(side) {
            let next = x0 + AHEAD * side;
            if next + side <= full_w {
                let rows = if steps.flip_x {
                    w - next - side..w - next
                } else {
                    next..next + side
                };
                prefetch_rows(src.data, src.stride, rows, columns.clone());
            }
            for y0 in (band..full_h).step_by(side).take(BAND) {
                turn_square::<N>(src, dst, dst_stride, (w, h), (x0, y0), steps);
            }
        }
    }
    let each = |dst: &mut [u8], xs: std::ops::Range<usize>, ys: std::ops::Range<usize>| {
        for y in ys {
            let column = if steps.flip_y { h - 1 - y } else { y } * N;
            for x in xs.clone() {
                let row = if steps.flip_x { w - 1 - x } else { x };
                let at = row * src.stride + column;
                dst[y * dst_stride + x * N..][..N].copy_from_slice(&src.data[at..at + N]);
            }
        }
    };
    each(dst, full_w..w, 0..h);
    each(dst, 0..full_w, full_h..h);
}

/// Moves the square of shown pixels from `(x0, y0)`, 16 bytes a side (16 pixels of 1 byte or 8 of 2), inside a
/// shown plane `(w, h)`: the coded rows' 16 bytes in the shown columns' order, transposed, each written as a
/// shown row (in the reverse order when the rows are mirrored).
fn turn_square<const N: usize>(
    src: Source<'_>,
    dst: &mut [u8],
    dst_stride: usize,
    (w, h): (usize, usize),
    (x0, y0): (usize, usize),
    steps: Steps,
) {
    let side = 16 / N;
    // The coded columns of shown rows y0..y0 + side, contiguous (mirrored: the last first).
    let column = if steps.flip_y { h - side - y0 } else { y0 } * N;
    let row = if steps.flip_x { w - 1 - x0 } else { x0 };
    let stride = src.stride as isize;
    let rows = Rows {
        first: row * src.stride + column,
        step: if steps.flip_x { -stride } else { stride },
    };
    let y = if steps.flip_y { y0 + side - 1 } else { y0 };
    let dst_step = dst_stride as isize;
    let outs = Rows {
        first: y * dst_stride + x0 * N,
        step: if steps.flip_y { -dst_step } else { dst_step },
    };
    match N {
        1 => transpose::bytes_16x16(src.data, rows, dst, outs),
        _ => transpose::words_8x8(src.data, rows, dst, outs),
    }
}

/// [`turn_plane`] for pixels of any size, pixel by pixel.
fn turn_any(
    src: Source<'_>,
    dst: &mut [u8],
    dst_stride: usize,
    (w, h): (usize, usize),
    n: usize,
    steps: Steps,
) {
    for y in 0..h {
        for x in 0..w {
            let (cx, cy) = steps.source(x, y, w, h);
            let at = cy * src.stride + cx * n;
            dst[y * dst_stride + x * n..][..n].copy_from_slice(&src.data[at..at + n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every way of turning a plane (whole rows, blocks, pixel by pixel) puts each shown pixel where
        /// [`Steps::source`] says, for every orientation, pixel size and stride.
        #[test]
        fn planes_turn_as_the_steps_say(
            w in 1usize..80, h in 1usize..80, pad in 0usize..9, bytes in prop::sample::select(vec![1usize, 2, 3, 5]),
            which in 0usize..8,
        ) {
            let o = Orientation::ALL[which];
            let steps = o.steps();
            let stride = w * bytes + pad;
            let coded: Vec<u8> = (0..stride * h).map(|i| (i * 7 + i / 13) as u8).collect();
            let (sw, sh) = o.displayed_size(w, h);
            let dst_stride = sw * bytes + 3;
            let mut shown = vec![0u8; dst_stride * sh];
            let src = Source { data: &coded, stride };
            turn_plane(src, &mut shown, dst_stride, (sw, sh), bytes, steps);
            let mut each = vec![0u8; dst_stride * sh];
            turn_any(src, &mut each, dst_stride, (sw, sh), bytes, steps);
            for y in 0..sh {
                for x in 0..sw {
                    let (cx, cy) = steps.source(x, y, sw, sh);
                    let want = &coded[cy * stride + cx * bytes..][..bytes];
                    prop_assert_eq!(&shown[y * dst_stride + x * bytes..][..bytes], want, "{} ({}, {})", o, x, y);
                    prop_assert_eq!(&each[y * dst_stride + x * bytes..][..bytes], want);
                }
            }
        }
    }
}
