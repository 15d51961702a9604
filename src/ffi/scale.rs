//! `SwsContext`: converting a decoded frame to packed RGB24 with the frame's own colour matrix and range.

use std::ffi::c_int;
use std::ptr::{self, NonNull};

use ffmpeg_sys_next as sys;

use parking_lot::Mutex;

use super::frame::AvFrame;
use super::simd::kernel::Kernel;
use super::simd::yuv2rgb::{self, Coefficients, Planes};
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

/// The pixels a conversion writes: packed RGB of 8 bits a channel (`rgb24`) or 16 (`rgb48le`, the lossless
/// output of deeper samples), or planar YUV 4:4:4 of 16 bits (`yuv444p16le`: the tone mapper's input, its
/// chroma upsampled as `zscale` reads 4:2:0, sited left and centred vertically, bilinear).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Pixels {
    /// `rgb24`: 3 bytes a pixel.
    #[default]
    Eight,
    /// `rgb48le`: 3 little-endian 16-bit words a pixel.
    Sixteen,
    /// `yuv444p16le`: three planes one after the other, each a 16-bit word a pixel.
    Yuv16,
}

impl Pixels {
    /// Bytes a pixel in a row (of each plane, for [`Pixels::Yuv16`]).
    pub(crate) fn pixel_bytes(self) -> usize {
        match self {
            Pixels::Eight => 3,
            Pixels::Sixteen => 6,
            Pixels::Yuv16 => 2,
        }
    }

    /// Planes written one after the other (each `stride * rows` bytes).
    pub(crate) fn planes(self) -> usize {
        match self {
            Pixels::Yuv16 => 3,
            _ => 1,
        }
    }

    fn format(self) -> sys::AVPixelFormat {
        match self {
            Pixels::Eight => sys::AVPixelFormat::AV_PIX_FMT_RGB24,
            Pixels::Sixteen => sys::AVPixelFormat::AV_PIX_FMT_RGB48LE,
            Pixels::Yuv16 => sys::AVPixelFormat::AV_PIX_FMT_YUV444P16LE,
        }
    }

    /// The YUV 4:2:0 format a resize before this conversion writes: as many bits as this keeps.
    pub(crate) fn deep(self) -> bool {
        self != Pixels::Eight
    }
}

/// A swscale context converting a region of a decoded frame to RGB24, or resizing it in YUV, rebuilt only when
/// the sizes, formats or colours change. Which region to convert, and at what stride, is the caller's plan
/// (`transform::host`).
///
/// A same-size YUV 4:2:0 → RGB24 conversion at an even height (the one swscale's x86 fast path serves) runs
/// through [`yuv2rgb`]'s AVX2 code instead, where the CPU has AVX2 and a probe showed that code to give
/// swscale's bytes for the matrix and range (see [`simd_agrees`]), and through its scalar twin off x86-64
/// (see [`x86_arithmetic_serves`]).
pub(crate) struct Scaler {
    ctx: Option<NonNull<sys::SwsContext>>,
    key: Option<Key>,
    /// The vector path's constants, when it serves the current key.
    simd: Option<Coefficients>,
    /// Whether the vector path may serve (not for the probe's own reference conversions).
    allow_simd: bool,
}

// SAFETY: the context is owned by this value alone and used through `&mut self`.
unsafe impl Send for Scaler {}

impl Scaler {
    pub(crate) fn new() -> Self {
        Self {
            ctx: None,
            key: None,
            simd: None,
            allow_simd: true,
        }
    }

    /// A converter that always calls swscale (the probe's reference, and tests' whole-frame reference).
    pub(crate) fn swscale_only() -> Self {
        Self {
            allow_simd: false,
            ..Self::new()
        }
    }

    /// Whether the last [`convert`](Self::convert) wrote every pixel of every row itself, right edge included
    /// (the vector path), rather than through swscale's fast path, which may leave the last pixels of a row
    /// whose width is not a multiple of its group unwritten.
    pub(crate) fn wrote_whole_rows(&self) -> bool {
        self.simd.is_some()
    }

    /// Resizes the source region `src` (`(x, y, w, h)`, its left and top on the chroma grid) of `frame` to
    /// `out_size` with `filter` into the top of `into`, a YUV 4:2:0 picture of `picture` size (allocated on
    /// first use and when its size, matrix or range changes), keeping the frame's matrix and range; 16-bit
    /// samples when the conversion that follows is to `rgb`'s [`Pixels::Sixteen`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn resize_yuv<'a>(
        &mut self,
        frame: &AvFrame,
        src: (u32, u32, u32, u32),
        out_size: (u32, u32),
        picture: (u32, u32),
        filter: Filter,
        rgb: Pixels,
        into: &'a mut Option<AvFrame>,
    ) -> Result<&'a mut AvFrame, AvError> {
        let (sx0, sy0, sw, sh) = src;
        let (src_format, full_range) = (frame.plain_format(), frame.full_range());
        assert!(
            sx0 + sw <= frame.width() && sy0 + sh <= frame.height() && picture.1 >= out_size.1,
            "resize region outside the frame"
        );
        let out = AvFrame::reuse_yuv420p_like(into, frame, picture, full_range, rgb.deep())?;
        let key = Key {
            width: sw,
            height: sh,
            format: src_format as i32,
            colorspace: frame.colorspace(),
            full_range,
            out_width: out_size.0,
            out_height: out_size.1,
            flags: filter.flags(),
            out_format: out.format(),
        };
        if self.key != Some(key) {
            self.rebuild(key, src_format)?;
        }
        let ctx = self.ctx.expect("built above").as_ptr();
        let (src, dst) = (frame.as_ptr(), out.as_ptr());
        let mut planes = [ptr::null::<u8>(); 4];
        // SAFETY: (sx0, sy0) is inside the frame and on its chroma grid (the caller's plan), so each plane
        // offset stays inside its plane; the region below and right of it lies inside the frame (asserted).
        unsafe {
            let offsets = plane_offsets(frame, sx0, sy0);
            for (p, plane) in planes.iter_mut().enumerate() {
                let base = (*src).data[p];
                if !base.is_null() {
                    *plane = base.offset(offsets[p]);
                }
            }
        }
        // SAFETY: the source planes point at the region's top-left with the frame's strides and `sh` rows
        // below; the output frame's planes were allocated (padded) for `picture`, at least `out_size`; the
        // context was built for exactly these sizes and formats.
        let rows = unsafe {
            sys::sws_scale(
                ctx,
                planes.as_ptr(),
                (*src).linesize.as_ptr(),
                0,
                sh as c_int,
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
        Ok(out)
    }

    /// Converts the source window `src` (`(x, y, w, h)`, its left and top on the chroma grid) of `frame` to
    /// `out_size` pixels of `rgb` into `dst` (`out_size.1` rows of `out_size.0` pixels, `stride` bytes apart,
    /// followed by [`WRITE_SLACK`] bytes swscale may write into), with `filter` when the sizes differ.
    ///
    /// The matrix is the frame's (BT.601 when unspecified, as swscale and the ffmpeg CLI do); the range is the
    /// frame's (limited when unspecified, full for the "J" pixel formats).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn convert(
        &mut self,
        frame: &AvFrame,
        src: (u32, u32, u32, u32),
        out_size: (u32, u32),
        filter: Filter,
        rgb: Pixels,
        dst: &mut [u8],
        stride: usize,
    ) -> Result<(), AvError> {
        let (x0, y0, width, height) = src;
        assert!(
            stride >= out_size.0 as usize * rgb.pixel_bytes(),
            "stride shorter than a row"
        );
        let plane = stride * out_size.1 as usize;
        assert!(
            dst.len() >= plane * rgb.planes() + WRITE_SLACK,
            "destination size"
        );
        if width == 0 || height == 0 || out_size.0 == 0 || out_size.1 == 0 {
            return Err(av_error(sys::AVERROR_INVALIDDATA, "sws_scale"));
        }
        let (src_format, full_range) = (frame.plain_format(), frame.full_range());
        assert!(
            x0 + width <= frame.width() && y0 + height <= frame.height(),
            "window outside the frame"
        );
        let key = Key {
            width,
            height,
            format: src_format as i32,
            colorspace: frame.colorspace(),
            full_range,
            out_width: out_size.0,
            out_height: out_size.1,
            flags: if rgb == Pixels::Yuv16 {
                sys::SWS_BILINEAR
            } else {
                filter.flags()
            },
            out_format: rgb.format() as i32,
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
        if let Some(coefficients) = self.simd {
            // SAFETY: the key says this is a YUV 4:2:0 frame converted at its own size, so the planes hold the
            // window's `height` luma rows of `width` samples and half as many chroma rows and samples (rounded
            // up), from the window's top-left (on the chroma grid, inside the frame), at the frame's strides.
            let done = unsafe {
                convert_simd(
                    &coefficients,
                    raw,
                    &planes,
                    (width, height),
                    dst,
                    stride,
                    Kernel::best(),
                )
            };
            if done {
                return Ok(());
            }
        }
        let mut dst_planes = [ptr::null_mut(); 4];
        let mut dst_strides = [0; 4];
        let row =
            c_int::try_from(stride).map_err(|_| av_error(sys::AVERROR_INVALIDDATA, "sws_scale"))?;
        for (p, chunk) in dst.chunks_mut(plane).take(rgb.planes()).enumerate() {
            dst_planes[p] = chunk.as_mut_ptr();
            dst_strides[p] = row;
        }
        // SAFETY: the source planes point at the window's top-left in each plane, with the frame's strides and
        // at least `height` rows below; each destination plane holds `out_size.1` rows `stride` bytes apart
        // (each at least a row long), the last followed by the slack swscale may overrun into (asserted above),
        // and the context was built for exactly these sizes and format.
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
        if key.out_format == Pixels::Yuv16.format() as i32 {
            // SAFETY: `old` is NULL or our previous context, freed here and not used again.
            unsafe { sys::sws_freeContext(old) };
            self.ctx = None;
            self.ctx = Some(sited_context(&key, src_format)?);
            self.simd = None;
            self.key = Some(key);
            return Ok(());
        }
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
        let colorspace = sws_colorspace(key.colorspace);
        // SAFETY: `ctx` is valid; sws_getCoefficients returns a static table for any colour space (the
        // default one for values it does not know).
        unsafe {
            let src_table = sys::sws_getCoefficients(colorspace);
            let dst_table = sys::sws_getCoefficients(sys::SWS_CS_DEFAULT);
            // RGB output is full range; a YUV output keeps the input's range (no level change).
            let yuv_out = ![Pixels::Eight, Pixels::Sixteen]
                .iter()
                .any(|rgb| rgb.format() as i32 == key.out_format);
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
        self.simd = None;
        let same_size = (key.width, key.height) == (key.out_width, key.out_height);
        let rgb_out = key.out_format == sys::AVPixelFormat::AV_PIX_FMT_RGB24 as i32;
        if self.allow_simd
            && rgb_out
            && same_size
            && key.height.is_multiple_of(2)
            && src_format == sys::AVPixelFormat::AV_PIX_FMT_YUV420P
        {
            let table = coefficient_table(colorspace);
            if x86_arithmetic_serves(key.colorspace, key.full_range, table) {
                self.simd = Some(Coefficients::new(table, key.full_range));
            }
        }
        self.key = Some(key);
        Ok(())
    }
}

/// A context for `key`'s conversion to [`Pixels::Yuv16`] whose source chroma is sited as `zscale` (zimg) reads
/// 4:2:0 and 4:2:2 by default: left (`src_h_chr_pos` 0) and centred vertically (`src_v_chr_pos` 128), so that
/// tone mapping starts from the samples the `ffmpeg` reference chain starts from. Same matrix and range out as
/// in (no level change).
fn sited_context(
    key: &Key,
    src_format: sys::AVPixelFormat,
) -> Result<NonNull<sys::SwsContext>, AvError> {
    // SAFETY: sws_alloc_context returns NULL or a fresh context that this function owns until it returns it.
    let ctx = NonNull::new(unsafe { sys::sws_alloc_context() })
        .ok_or_else(|| out_of_memory("sws_alloc_context"))?;
    let raw = ctx.as_ptr();
    let options: [(&std::ffi::CStr, i64); 10] = [
        (c"srcw", i64::from(key.width)),
        (c"srch", i64::from(key.height)),
        (c"src_format", src_format as i64),
        (c"dstw", i64::from(key.out_width)),
        (c"dsth", i64::from(key.out_height)),
        (c"dst_format", i64::from(key.out_format)),
        (c"sws_flags", i64::from(key.flags)),
        (c"src_h_chr_pos", 0),
        (c"src_v_chr_pos", 128),
        (c"src_range", i64::from(key.full_range)),
    ];
    let range = i64::from(key.full_range);
    let mut status = 0;
    for (name, value) in options.into_iter().chain([(c"dst_range", range)]) {
        // SAFETY: `raw` is a valid context with swscale's AVClass; the names are its options.
        status = unsafe { sys::av_opt_set_int(raw.cast(), name.as_ptr(), value, 0) };
        if status < 0 {
            break;
        }
    }
    if status >= 0 {
        // SAFETY: every option is set; sws_init_context initialises the context once.
        status = unsafe { sys::sws_init_context(raw, ptr::null_mut(), ptr::null_mut()) };
    }
    if status < 0 {
        // SAFETY: the context is ours, freed once.
        unsafe { sys::sws_freeContext(raw) };
        return Err(av_error(status, "sws_init_context"));
    }
    let table = sys_table(sws_colorspace(key.colorspace));
    // SAFETY: `raw` is an initialised context; the table is swscale's static one.
    unsafe {
        let full = c_int::from(key.full_range);
        sys::sws_setColorspaceDetails(raw, table, full, table, full, 0, 1 << 16, 1 << 16);
    }
    Ok(ctx)
}

/// swscale's coefficient table for a colour space (`SWS_CS_*`).
fn sys_table(colorspace: c_int) -> *const c_int {
    // SAFETY: sws_getCoefficients returns a static table for any colour space (the default one for values it
    // does not know).
    unsafe { sys::sws_getCoefficients(colorspace) }
}

/// Whether a same-size conversion of `frame` to RGB24 takes swscale's fast path (`ff_yuv2rgb_get_func_ptr`,
/// chosen by `ff_get_unscaled_swscale` for 8-bit YUV 4:2:0 or 4:2:2 input at an even height, without
/// `SWS_ACCURATE_RND`), which works on groups of 8 pixels.
pub(crate) fn takes_fast_path(frame: &AvFrame) -> bool {
    use sys::AVPixelFormat::*;
    let formats = [
        AV_PIX_FMT_YUV420P,
        AV_PIX_FMT_YUVJ420P,
        AV_PIX_FMT_YUV422P,
        AV_PIX_FMT_YUVJ422P,
        AV_PIX_FMT_YUVA420P,
    ];
    frame.height().is_multiple_of(2) && formats.iter().any(|f| *f as i32 == frame.format())
}

/// swscale's colour space (`SWS_CS_*`) for frames tagged with the `AVColorSpace` value `colorspace`: the same
/// numbers, with RGB, unspecified and reserved taken as swscale's default (BT.601), like the ffmpeg CLI.
fn sws_colorspace(colorspace: i32) -> c_int {
    match colorspace {
        0 | 2 | 3 => sys::SWS_CS_DEFAULT,
        other => other,
    }
}

/// swscale's table `[crv, cbu, cgu, cgv]` (16.16 fixed point) for the colour space `sws_colorspace`.
fn coefficient_table(sws_colorspace: c_int) -> [c_int; 4] {
    // SAFETY: sws_getCoefficients returns a static table of four ints for any colour space (the default one
    // for values it does not know).
    unsafe { *sys::sws_getCoefficients(sws_colorspace).cast::<[c_int; 4]>() }
}

/// Converts `size` pixels from the YUV 4:2:0 `planes` of `frame` (pointers into its planes, at its strides) to
/// RGB24 rows of `dst`, `stride` bytes apart, with [`yuv2rgb`]'s vector path. `false` (nothing written) when
/// the two chroma planes' strides differ, which that path does not take.
///
/// # Safety
/// `frame` must be a valid YUV 4:2:0 frame, and `planes` must point at `size.1` luma rows of `size.0` samples
/// and at half as many chroma rows and samples (rounded up) inside its planes.
unsafe fn convert_simd(
    coefficients: &Coefficients,
    frame: *const sys::AVFrame,
    planes: &[*const u8; 4],
    size: (u32, u32),
    dst: &mut [u8],
    stride: usize,
    kernel: Kernel,
) -> bool {
    // SAFETY: `frame` is valid (the caller's contract).
    let linesize = unsafe { (*frame).linesize };
    if linesize[1] != linesize[2] {
        return false;
    }
    let src = Planes {
        y: planes[0],
        u: planes[1],
        v: planes[2],
        y_stride: linesize[0] as isize,
        uv_stride: linesize[1] as isize,
    };
    // SAFETY: the planes hold the rows and samples `convert` reads (the caller's contract).
    unsafe {
        yuv2rgb::convert(
            coefficients,
            src,
            size.0 as usize,
            size.1 as usize,
            dst,
            stride,
            kernel,
        )
    };
    true
}

/// Whether [`yuv2rgb`] converts frames tagged with the colour space `colorspace` (swscale table `table`) and the
/// range. On x86-64: where the CPU has AVX2 and [`simd_agrees`] (otherwise swscale's own SSSE3 code, the same
/// arithmetic, converts). On every other architecture: always, on its scalar twin ([`Kernel::best`] is
/// [`Kernel::Scalar`] there), because swscale has no such fast path there (on Arm its table-driven C converter
/// rounds differently), and a frame should be the same bytes on every host: the x86 `ffmpeg`'s.
fn x86_arithmetic_serves(colorspace: i32, full_range: bool, table: [c_int; 4]) -> bool {
    if cfg!(target_arch = "x86_64") {
        Kernel::Avx2.available() && simd_agrees(colorspace, full_range, table)
    } else {
        true
    }
}

/// The matrices and ranges probed so far, and whether [`yuv2rgb`] gave swscale's bytes for them.
static PROBED: Mutex<Vec<((i32, bool), bool)>> = Mutex::new(Vec::new());

/// Whether the vector path gives exactly swscale's bytes for frames tagged with the colour space `colorspace`
/// (an `AVColorSpace` value, whose swscale table is `table`) and the range, found once per process by
/// converting, both ways, a probe holding every (Y, U, V) triple: 256 pictures of 512 x 128 pixels, one per
/// U, with each of the 256 x 64 chroma samples over 2 x 2 pixels taking V = its column and the 256 luma values
/// spread over 64 rows. Any difference, or a probe that cannot run, keeps swscale.
fn simd_agrees(colorspace: i32, full_range: bool, table: [c_int; 4]) -> bool {
    let mut probed = PROBED.lock();
    if let Some((_, agrees)) = probed.iter().find(|(k, _)| *k == (colorspace, full_range)) {
        return *agrees;
    }
    let agrees = probe(colorspace, full_range, table, Kernel::best()).unwrap_or(false);
    if !agrees {
        tracing::debug!(
            colorspace,
            full_range,
            "the vector YUV to RGB conversion differs from swscale's: swscale converts"
        );
    }
    probed.push(((colorspace, full_range), agrees));
    agrees
}

/// The probe of [`simd_agrees`] on `kernel` (available): `Ok(true)` when every byte agrees.
fn probe(
    colorspace: i32,
    full_range: bool,
    table: [c_int; 4],
    kernel: Kernel,
) -> Result<bool, AvError> {
    const W: u32 = 512;
    const H: u32 = 128;
    // SAFETY: the value came from a decoded frame's AVFrame.colorspace, so it is a valid AVColorSpace.
    let tag = unsafe { std::mem::transmute::<i32, sys::AVColorSpace>(colorspace) };
    let mut frame = AvFrame::yuv420p(W, H, tag, full_range)?;
    let coefficients = Coefficients::new(table, full_range);
    let mut reference = Scaler::swscale_only();
    let row = W as usize * 3;
    let mut want = vec![0u8; row * H as usize + WRITE_SLACK];
    let mut got = vec![0u8; row * H as usize];
    frame.fill_plane(0, |x, y| ((y / 2) * 4 + (y % 2) * 2 + x % 2) as u8);
    frame.fill_plane(2, |x, _| x as u8);
    for u in 0..=255u8 {
        frame.fill_plane(1, |_, _| u);
        reference.convert(
            &frame,
            (0, 0, W, H),
            (W, H),
            Filter::Bicubic,
            Pixels::Eight,
            &mut want,
            row,
        )?;
        let raw = frame.as_ptr();
        // SAFETY: the frame owns a W x H YUV 4:2:0 picture (av_frame_get_buffer), whose planes start at its
        // own data pointers.
        let done = unsafe {
            let planes = [
                (*raw).data[0],
                (*raw).data[1],
                (*raw).data[2],
                ptr::null_mut(),
            ]
            .map(|p| p.cast_const());
            convert_simd(&coefficients, raw, &planes, (W, H), &mut got, row, kernel)
        };
        if !done {
            return Ok(false);
        }
        if want[..got.len()] != got[..] {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Bytes swscale's SIMD converters may write past the end of the last row.
pub(crate) const WRITE_SLACK: usize = 64;

/// How far a window's left and top must be aligned so that chroma planes start on a whole sample: 2 for
/// 4:2:0 and 4:2:2 horizontally, and so on (1 for RGB and 4:4:4).
pub(crate) fn chroma_alignment(frame: &AvFrame) -> (u32, u32) {
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

    /// The matrices and ranges the probe tests cover: unspecified (BT.601), BT.601, BT.709, SMPTE 240M and
    /// BT.2020, limited and full range.
    fn every_matrix_and_range() -> Vec<(i32, bool, [c_int; 4])> {
        use sys::AVColorSpace::*;
        let mut all = Vec::new();
        for space in [
            AVCOL_SPC_UNSPECIFIED,
            AVCOL_SPC_BT470BG,
            AVCOL_SPC_SMPTE170M,
            AVCOL_SPC_BT709,
            AVCOL_SPC_SMPTE240M,
            AVCOL_SPC_BT2020_NCL,
        ] {
            let table = coefficient_table(sws_colorspace(space as i32));
            for full in [false, true] {
                all.push((space as i32, full, table));
            }
        }
        all
    }

    #[test]
    fn the_vector_path_gives_swscales_bytes_for_every_triple() {
        if !Kernel::Avx2.available() {
            eprintln!("SKIPPED: this CPU has no AVX2, so the vector path never runs");
            return;
        }
        // Every (Y, U, V) triple converted both ways (`probe`).
        for (space, full, table) in every_matrix_and_range() {
            assert!(
                probe(space, full, table, Kernel::best()).unwrap(),
                "colour space {space}, full range {full}"
            );
        }
    }

    /// What frames on Arm rest on (`x86_arithmetic_serves`): the scalar twin, the only kernel there, gives the
    /// x86 swscale's bytes for every triple, matrix and range.
    #[test]
    fn the_scalar_twin_gives_the_x86_swscales_bytes_for_every_triple() {
        if !cfg!(target_arch = "x86_64") {
            eprintln!("SKIPPED: the reference is the x86 swscale; this is not x86-64");
            return;
        }
        for (space, full, table) in every_matrix_and_range() {
            assert!(
                probe(space, full, table, Kernel::Scalar).unwrap(),
                "colour space {space}, full range {full}"
            );
        }
    }
}
