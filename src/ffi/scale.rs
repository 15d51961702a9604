//! `SwsContext`: converting a decoded frame to packed RGB24 with the frame's own colour matrix and range.

use std::ffi::c_int;
use std::ptr::{self, NonNull};

use ffmpeg_sys_next as sys;

use super::frame::Frame;
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
}

/// A same-size YUV (or any format) to RGB24 converter, rebuilt only when the input changes.
pub(crate) struct Scaler {
    ctx: Option<NonNull<sys::SwsContext>>,
    key: Option<Key>,
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
        }
    }

    /// Converts `frame` to RGB24 rows of `width * 3` bytes written straight into `dst`, which must hold exactly
    /// `width * height * 3` bytes.
    ///
    /// The matrix is the frame's (BT.601 when unspecified, as swscale and the ffmpeg CLI do); the range is the
    /// frame's (limited when unspecified, full for the "J" pixel formats).
    pub(crate) fn convert_to_rgb24(
        &mut self,
        frame: &Frame,
        dst: &mut [u8],
    ) -> Result<(), AvError> {
        let (width, height) = (frame.width(), frame.height());
        let row = width as usize * 3;
        assert_eq!(
            dst.len(),
            row * height as usize,
            "destination does not match the frame size"
        );
        if width == 0 || height == 0 {
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
        };
        if self.key != Some(key) {
            self.rebuild(key, src_format)?;
        }
        let ctx = self.ctx.expect("built above").as_ptr();
        let raw = frame.as_ptr();
        let dst_planes = [
            dst.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
        ];
        let dst_strides = [row as c_int, 0, 0, 0];
        // SAFETY: the source planes and strides are the decoded frame's own, of `height` rows; the destination
        // holds `height` rows of `row` bytes (asserted above), and the context was built for exactly this
        // size and format.
        let out_rows = unsafe {
            sys::sws_scale(
                ctx,
                (*raw).data.as_ptr() as *const *const u8,
                (*raw).linesize.as_ptr(),
                0,
                height as c_int,
                dst_planes.as_ptr(),
                dst_strides.as_ptr(),
            )
        };
        if out_rows != height as c_int {
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
                w,
                h,
                sys::AVPixelFormat::AV_PIX_FMT_RGB24,
                sys::SWS_BICUBIC,
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
            sys::sws_setColorspaceDetails(
                ctx.as_ptr(),
                src_table,
                c_int::from(key.full_range),
                dst_table,
                1,
                0,
                1 << 16,
                1 << 16,
            );
        }
        self.key = Some(key);
        Ok(())
    }
}

impl Drop for Scaler {
    fn drop(&mut self) {
        if let Some(ctx) = self.ctx.take() {
            // SAFETY: our context, freed once.
            unsafe { sys::sws_freeContext(ctx.as_ptr()) }
        }
    }
}
