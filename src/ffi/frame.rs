//! `AVFrame`: one decoded picture in the decoder's own pixel format.

use std::ptr::NonNull;

use ffmpeg_sys_next as sys;

use super::{check, out_of_memory};
use crate::error::AvError;

/// One plane of a picture: `height` rows of `width` samples, `stride` bytes apart (the slice ends at the last
/// row's last sample).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plane<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) stride: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
}

/// One writable plane of a picture, as [`Plane`].
#[derive(Debug)]
pub(crate) struct PlaneMut<'a> {
    pub(crate) data: &'a mut [u8],
    pub(crate) stride: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
}

/// One plane of a picture in any byte-addressed pixel format, for moving its pixels about (turning a picture):
/// `height` rows of `width` pixels of `pixel_bytes` bytes, `stride` bytes apart (the slice ends at the last
/// row's last byte). `turns` is false for a paletted format's palette, which is copied as it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PixelPlane<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) stride: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) pixel_bytes: usize,
    pub(crate) turns: bool,
}

/// One writable plane, as [`PixelPlane`] (whose other fields the reader has).
#[derive(Debug)]
pub(crate) struct PixelPlaneMut<'a> {
    pub(crate) data: &'a mut [u8],
    pub(crate) stride: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
}

/// `(width, height, pixel bytes, turns)` of each plane of a `width` x `height` picture in `format`, as FFmpeg
/// lays them out (`av_image_fill_linesizes`: a plane's width is shifted by the chroma subsampling when its widest
/// component is a chroma one; planes 1 and 2 are shifted in height). `None` for hardware and bitstream formats
/// (under a byte a pixel).
fn pixel_plane_dims(
    format: sys::AVPixelFormat,
    width: usize,
    height: usize,
) -> Option<Vec<(usize, usize, usize, bool)>> {
    // SAFETY: av_pix_fmt_desc_get returns NULL or a static descriptor; av_pix_fmt_count_planes reads it.
    let (desc, planes) = unsafe {
        (
            sys::av_pix_fmt_desc_get(format).as_ref()?,
            sys::av_pix_fmt_count_planes(format),
        )
    };
    let flags = desc.flags as i32;
    if flags & (sys::AV_PIX_FMT_FLAG_HWACCEL | sys::AV_PIX_FMT_FLAG_BITSTREAM) != 0 {
        return None;
    }
    let planes = usize::try_from(planes)
        .ok()
        .filter(|&p| (1..=4).contains(&p))?;
    let mut step = [(0usize, 0usize); 4]; // (widest step, its component) per plane
    for (c, comp) in desc.comp[..usize::from(desc.nb_components).min(4)]
        .iter()
        .enumerate()
    {
        let plane = usize::try_from(comp.plane).ok().filter(|&p| p < 4)?;
        let s = usize::try_from(comp.step).ok()?;
        if s > step[plane].0 {
            step[plane] = (s, c);
        }
    }
    let palette = flags & sys::AV_PIX_FMT_FLAG_PAL != 0;
    (0..planes)
        .map(|p| {
            if palette && p == 1 {
                return Some((1024, 1, 1, false)); // 256 RGBA entries
            }
            let (bytes, comp) = step[p];
            let shift_w = if comp == 1 || comp == 2 {
                desc.log2_chroma_w
            } else {
                0
            };
            let shift_h = if p == 1 || p == 2 {
                desc.log2_chroma_h
            } else {
                0
            };
            (bytes > 0).then_some((
                width.div_ceil(1 << shift_w),
                height.div_ceil(1 << shift_h),
                bytes,
                true,
            ))
        })
        .collect()
}

/// Bytes from a plane's first sample to its last one inclusive: `(width, height, stride)`.
fn plane_len((width, height, stride): (usize, usize, usize)) -> usize {
    stride * (height - 1) + width
}

/// An owned `AVFrame`, reused for every decoded picture.
pub(crate) struct AvFrame(NonNull<sys::AVFrame>);

// SAFETY: the frame is owned by this value alone; its buffers are reference-counted by FFmpeg and may be
// released from any thread.
unsafe impl Send for AvFrame {}

impl AvFrame {
    pub(crate) fn new() -> Result<Self, AvError> {
        // SAFETY: av_frame_alloc returns NULL or a valid, empty frame.
        NonNull::new(unsafe { sys::av_frame_alloc() })
            .map(Self)
            .ok_or_else(|| out_of_memory("av_frame_alloc"))
    }

    /// A frame owning a YUV 4:2:0 picture of `width` x `height` (aligned, padded planes), 8-bit or 16-bit
    /// (`deep`, `yuv420p16le`), tagged with `like`'s colour matrix and with `full_range`, to hold a resized copy
    /// of `like`.
    pub(crate) fn yuv420p_like(
        like: &AvFrame,
        (width, height): (u32, u32),
        full_range: bool,
        deep: bool,
    ) -> Result<Self, AvError> {
        let format = if deep {
            sys::AVPixelFormat::AV_PIX_FMT_YUV420P16LE
        } else {
            sys::AVPixelFormat::AV_PIX_FMT_YUV420P
        };
        Self::yuv420(format, (width, height), like.raw().colorspace, full_range)
    }

    /// Bits per sample of the picture's first component (8 for 8-bit formats, 10 for `yuv420p10le`...); 8
    /// for formats FFmpeg does not describe.
    pub(crate) fn bit_depth(&self) -> u32 {
        // SAFETY: av_pix_fmt_desc_get returns NULL or a static descriptor.
        unsafe { sys::av_pix_fmt_desc_get(self.pixel_format()).as_ref() }
            .map_or(8, |d| d.comp[0].depth as u32)
    }

    /// A frame owning a YUV 4:2:0 8-bit picture of `width` x `height` (aligned, padded planes), tagged with the
    /// colour matrix `colorspace` (an `AVColorSpace` value) and with `full_range`.
    pub(crate) fn yuv420p(
        width: u32,
        height: u32,
        colorspace: sys::AVColorSpace,
        full_range: bool,
    ) -> Result<Self, AvError> {
        Self::yuv420(
            sys::AVPixelFormat::AV_PIX_FMT_YUV420P,
            (width, height),
            colorspace,
            full_range,
        )
    }

    /// [`AvFrame::yuv420p`] in the 4:2:0 format `format` (8-bit or 16-bit).
    fn yuv420(
        format: sys::AVPixelFormat,
        (width, height): (u32, u32),
        colorspace: sys::AVColorSpace,
        full_range: bool,
    ) -> Result<Self, AvError> {
        let frame = Self::new()?;
        // SAFETY: a fresh frame's fields may be set before av_frame_get_buffer allocates its planes for them.
        unsafe {
            let raw = frame.0.as_ptr();
            (*raw).format = format as i32;
            (*raw).width = width.min(i32::MAX as u32) as i32;
            (*raw).height = height.min(i32::MAX as u32) as i32;
            (*raw).colorspace = colorspace;
            (*raw).color_range = if full_range {
                sys::AVColorRange::AVCOL_RANGE_JPEG
            } else {
                sys::AVColorRange::AVCOL_RANGE_MPEG
            };
            check(sys::av_frame_get_buffer(raw, 0), "av_frame_get_buffer")?;
        }
        Ok(frame)
    }

    /// A BT.601 [`AvFrame::yuv420p`] picture, for tests that make their own frames.
    #[cfg(test)]
    pub(crate) fn yuv420p_bt601(
        width: u32,
        height: u32,
        full_range: bool,
    ) -> Result<Self, AvError> {
        Self::yuv420p(
            width,
            height,
            sys::AVColorSpace::AVCOL_SPC_BT470BG,
            full_range,
        )
    }

    /// Sets every sample of plane `p` of a picture allocated by [`AvFrame::yuv420p`] to `value(x, y)`, over
    /// the plane's own size (half the picture's, rounded up, for the chroma planes).
    pub(crate) fn fill_plane(&mut self, p: usize, mut value: impl FnMut(usize, usize) -> u8) {
        assert!(p < 3, "YUV 4:2:0 has three planes");
        let planes = self.yuv_planes_mut().expect("a picture of our own");
        let plane = &mut planes.into_iter().nth(p).expect("three planes");
        for y in 0..plane.height {
            let row = &mut plane.data[y * plane.stride..][..plane.width];
            for (x, sample) in row.iter_mut().enumerate() {
                *sample = value(x, y);
            }
        }
    }

    /// The planes of an 8-bit planar YUV picture (4:2:0, 4:2:2, 4:4:4, 4:4:0 or 4:1:1, the "J" formats included;
    /// positive strides): luma, then the two chroma planes at their subsampled sizes (rounded up). `None` for any
    /// other layout.
    pub(crate) fn yuv_planes(&self) -> Option<[Plane<'_>; 3]> {
        let dims = self.yuv_dims()?;
        let raw = self.raw();
        Some(std::array::from_fn(|p| {
            let (width, height, stride) = dims[p];
            // SAFETY: the decoder (or av_frame_get_buffer) allocated `height` rows of at least `width` bytes in
            // plane `p`, `stride` bytes apart (checked positive); the slice ends at the last row's last sample,
            // and the frame, borrowed for the slice's life, keeps its buffers alive and unchanged.
            let data = unsafe { std::slice::from_raw_parts(raw.data[p], plane_len(dims[p])) };
            Plane {
                data,
                stride,
                width,
                height,
            }
        }))
    }

    /// [`yuv_planes`](Self::yuv_planes), writable: for a picture this value allocated ([`AvFrame::yuv420p`]),
    /// whose buffers nothing else references (an error otherwise: a bug).
    pub(crate) fn yuv_planes_mut(&mut self) -> Result<[PlaneMut<'_>; 3], AvError> {
        let raw = self.0.as_ptr();
        // SAFETY: av_frame_is_writable only reads the frame's buffer references.
        let writable = unsafe { sys::av_frame_is_writable(raw) } != 0;
        let dims = self
            .yuv_dims()
            .filter(|_| writable)
            .ok_or_else(|| super::av_error(sys::AVERROR_BUG, "writing into a decoded picture"))?;
        Ok(std::array::from_fn(|p| {
            let (width, height, stride) = dims[p];
            // SAFETY: as in `yuv_planes`; the three planes are disjoint (separate ranges of the frame's
            // buffers), the buffers are writable and referenced by this frame alone (checked above), and
            // `&mut self` makes the access exclusive for the slices' life.
            let data =
                unsafe { std::slice::from_raw_parts_mut((*raw).data[p], plane_len(dims[p])) };
            PlaneMut {
                data,
                stride,
                width,
                height,
            }
        }))
    }

    /// `(width, height, stride)` of each plane of an 8-bit planar YUV picture with positive strides.
    fn yuv_dims(&self) -> Option<[(usize, usize, usize); 3]> {
        use sys::AVPixelFormat::*;
        let raw = self.raw();
        let planar = [
            AV_PIX_FMT_YUV420P,
            AV_PIX_FMT_YUVJ420P,
            AV_PIX_FMT_YUV422P,
            AV_PIX_FMT_YUVJ422P,
            AV_PIX_FMT_YUV444P,
            AV_PIX_FMT_YUVJ444P,
            AV_PIX_FMT_YUV440P,
            AV_PIX_FMT_YUVJ440P,
            AV_PIX_FMT_YUV411P,
            AV_PIX_FMT_YUVJ411P,
        ];
        let format = planar.into_iter().find(|f| *f as i32 == raw.format)?;
        // SAFETY: av_pix_fmt_desc_get returns NULL or a static descriptor for a valid format.
        let desc = unsafe { sys::av_pix_fmt_desc_get(format).as_ref() }?;
        let (w, h) = (self.width() as usize, self.height() as usize);
        if w == 0 || h == 0 {
            return None;
        }
        let mut dims = [(0, 0, 0); 3];
        for (p, dim) in dims.iter_mut().enumerate() {
            let (pw, ph) = if p == 0 {
                (w, h)
            } else {
                (
                    w.div_ceil(1 << desc.log2_chroma_w),
                    h.div_ceil(1 << desc.log2_chroma_h),
                )
            };
            let stride = usize::try_from(raw.linesize[p]).ok()?;
            if raw.data[p].is_null() || stride < pw {
                return None;
            }
            *dim = (pw, ph, stride);
        }
        Some(dims)
    }

    /// The frame's pixel format.
    fn pixel_format(&self) -> sys::AVPixelFormat {
        // SAFETY: the integer came from a decoder's (or av_frame_get_buffer's) own AVFrame.format, so it is a
        // valid AVPixelFormat.
        unsafe { std::mem::transmute::<i32, sys::AVPixelFormat>(self.format()) }
    }

    /// Every plane of the picture as [`PixelPlane`]s; `None` for hardware and bitstream formats, and for
    /// negative strides.
    pub(crate) fn pixel_planes(&self) -> Option<Vec<PixelPlane<'_>>> {
        let raw = self.raw();
        let dims = pixel_plane_dims(
            self.pixel_format(),
            self.width() as usize,
            self.height() as usize,
        )?;
        dims.into_iter()
            .enumerate()
            .map(|(p, (width, height, pixel_bytes, turns))| {
                let stride = usize::try_from(raw.linesize[p]).ok()?;
                let row = width * pixel_bytes;
                if raw.data[p].is_null() || stride < row || height == 0 || row == 0 {
                    return None;
                }
                // SAFETY: the decoder (or av_frame_get_buffer) allocated `height` rows of at least `row` bytes
                // in plane `p`, `stride` bytes apart (checked positive and at least a row); the slice ends at the
                // last row's last byte, and the frame, borrowed for the slice's life, keeps its buffers alive and
                // unchanged.
                let data = unsafe {
                    std::slice::from_raw_parts(raw.data[p], plane_len((row, height, stride)))
                };
                Some(PixelPlane {
                    data,
                    stride,
                    width,
                    height,
                    pixel_bytes,
                    turns,
                })
            })
            .collect()
    }

    /// [`pixel_planes`](Self::pixel_planes), writable: for a picture this value allocated
    /// ([`AvFrame::reuse_shaped_like`]), whose buffers nothing else references (an error otherwise: a bug).
    pub(crate) fn pixel_planes_mut(&mut self) -> Result<Vec<PixelPlaneMut<'_>>, AvError> {
        let raw = self.0.as_ptr();
        // SAFETY: av_frame_is_writable only reads the frame's buffer references.
        let writable = unsafe { sys::av_frame_is_writable(raw) } != 0;
        let planes = self
            .pixel_planes()
            .filter(|_| writable)
            .ok_or_else(|| super::av_error(sys::AVERROR_BUG, "writing into a decoded picture"))?;
        let layout: Vec<_> = planes
            .iter()
            .map(|p| (p.data.len(), p.stride, p.width, p.height))
            .collect();
        drop(planes);
        Ok(layout
            .into_iter()
            .enumerate()
            .map(|(p, (len, stride, width, height))| {
                // SAFETY: as in `pixel_planes` (the same ranges); the planes are disjoint ranges of the frame's
                // buffers, which are writable and referenced by this frame alone (checked above), and `&mut
                // self` makes the access exclusive for the slices' life.
                let data = unsafe { std::slice::from_raw_parts_mut((*raw).data[p], len) };
                PixelPlaneMut {
                    data,
                    stride,
                    width,
                    height,
                }
            })
            .collect())
    }

    /// The picture in `slot` when it has `like`'s pixel format and the size `size`; otherwise a new one put
    /// there (planes allocated, aligned). Either way it takes `like`'s properties (colour tags, times, side
    /// data): the turned copy of a frame that a converter reuses from frame to frame.
    pub(crate) fn reuse_shaped_like<'a>(
        slot: &'a mut Option<AvFrame>,
        like: &AvFrame,
        size: (u32, u32),
    ) -> Result<&'a mut AvFrame, AvError> {
        Self::reuse_shaped(slot, like, like.format(), size)
    }

    /// [`reuse_shaped_like`](Self::reuse_shaped_like) in packed RGB, 8-bit (`rgb24`) or 16-bit (`deep`,
    /// `rgb48le`): the turned copy of a frame that only converted to RGB can be turned.
    pub(crate) fn reuse_rgb_like<'a>(
        slot: &'a mut Option<AvFrame>,
        like: &AvFrame,
        size: (u32, u32),
        deep: bool,
    ) -> Result<&'a mut AvFrame, AvError> {
        let format = if deep {
            sys::AVPixelFormat::AV_PIX_FMT_RGB48LE
        } else {
            sys::AVPixelFormat::AV_PIX_FMT_RGB24
        };
        Self::reuse_shaped(slot, like, format as i32, size)
    }

    fn reuse_shaped<'a>(
        slot: &'a mut Option<AvFrame>,
        like: &AvFrame,
        format: i32,
        size: (u32, u32),
    ) -> Result<&'a mut AvFrame, AvError> {
        let reuse = slot
            .as_ref()
            .is_some_and(|f| (f.width(), f.height()) == size && f.format() == format);
        if !reuse {
            let frame = Self::new()?;
            // SAFETY: a fresh frame's fields may be set before av_frame_get_buffer allocates its planes for them.
            unsafe {
                let raw = frame.0.as_ptr();
                (*raw).format = format;
                (*raw).width = size.0.min(i32::MAX as u32) as i32;
                (*raw).height = size.1.min(i32::MAX as u32) as i32;
                check(sys::av_frame_get_buffer(raw, 0), "av_frame_get_buffer")?;
            }
            *slot = Some(frame);
        }
        let frame = slot.as_mut().expect("set above");
        // SAFETY: both frames are valid; av_frame_copy_props copies metadata (times, colour tags, side data),
        // never the planes or the size.
        check(
            unsafe { sys::av_frame_copy_props(frame.0.as_ptr(), like.0.as_ptr()) },
            "av_frame_copy_props",
        )?;
        Ok(frame)
    }

    /// Whether FFmpeg's own filters turn this picture plane by plane (as framefeed then does): `transpose` takes
    /// formats whose chroma is subsampled alike both ways and that are not paletted, `hflip`/`vflip` any but
    /// packed formats with subsampled chroma (`yuyv422`...); the CLI converts the others to RGB first, and so
    /// does framefeed. `false` for hardware and bitstream formats.
    pub(crate) fn turns_by_planes(&self, transposing: bool) -> bool {
        // SAFETY: av_pix_fmt_desc_get returns NULL or a static descriptor.
        let Some(desc) = (unsafe { sys::av_pix_fmt_desc_get(self.pixel_format()).as_ref() }) else {
            return false;
        };
        let flags = desc.flags as i32;
        let subsampled_unevenly = desc.log2_chroma_w != desc.log2_chroma_h;
        let packed = desc.nb_components > 1 && desc.comp[0].plane == desc.comp[1].plane;
        let taken = if transposing {
            flags & sys::AV_PIX_FMT_FLAG_PAL == 0 && !subsampled_unevenly
        } else {
            !(subsampled_unevenly && packed)
        };
        taken && self.pixel_planes().is_some()
    }

    /// The display matrix the decoder attached to this frame (its `AV_FRAME_DATA_DISPLAYMATRIX` side data, from
    /// the bitstream, e.g. H.264's display orientation message), if any.
    pub(crate) fn display_matrix(&self) -> Option<[i32; 9]> {
        // SAFETY: av_frame_get_side_data reads the frame's side data list and returns NULL or an entry the frame
        // owns; its `data` holds `size` bytes, read (unaligned) only when it holds nine 32-bit numbers.
        unsafe {
            let sd = sys::av_frame_get_side_data(
                self.0.as_ptr(),
                sys::AVFrameSideDataType::AV_FRAME_DATA_DISPLAYMATRIX,
            )
            .as_ref()?;
            (sd.size >= 36 && !sd.data.is_null())
                .then(|| std::ptr::read_unaligned(sd.data.cast::<[i32; 9]>()))
        }
    }

    /// The frame's pixel format with the deprecated full-range "J" formats mapped to their plain twins (the
    /// range is [`full_range`](Self::full_range)), so that swscale does not warn and picks the same fast paths.
    pub(crate) fn plain_format(&self) -> sys::AVPixelFormat {
        use sys::AVPixelFormat::*;
        match self.pixel_format() {
            AV_PIX_FMT_YUVJ420P => AV_PIX_FMT_YUV420P,
            AV_PIX_FMT_YUVJ422P => AV_PIX_FMT_YUV422P,
            AV_PIX_FMT_YUVJ444P => AV_PIX_FMT_YUV444P,
            AV_PIX_FMT_YUVJ440P => AV_PIX_FMT_YUV440P,
            AV_PIX_FMT_YUVJ411P => AV_PIX_FMT_YUV411P,
            other => other,
        }
    }

    /// Whether the samples are full range: a "J" pixel format, or tagged so.
    pub(crate) fn full_range(&self) -> bool {
        self.plain_format() as i32 != self.format()
            || self.color_range() == sys::AVColorRange::AVCOL_RANGE_JPEG as i32
    }

    /// The picture in `slot` when it is a YUV 4:2:0 one of `size`, with `like`'s matrix and the range
    /// `full_range`; otherwise a new one ([`AvFrame::yuv420p_like`]) put there: the resized picture a converter
    /// reuses from frame to frame.
    pub(crate) fn reuse_yuv420p_like<'a>(
        slot: &'a mut Option<AvFrame>,
        like: &AvFrame,
        size: (u32, u32),
        full_range: bool,
        deep: bool,
    ) -> Result<&'a mut AvFrame, AvError> {
        let reuse = slot.as_ref().is_some_and(|f| {
            (f.width(), f.height()) == size
                && f.colorspace() == like.colorspace()
                && f.full_range() == full_range
                && (f.bit_depth() > 8) == deep
        });
        if !reuse {
            *slot = Some(Self::yuv420p_like(like, size, full_range, deep)?);
        }
        Ok(slot.as_mut().expect("set above"))
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::AVFrame {
        self.0.as_ptr()
    }

    fn raw(&self) -> &sys::AVFrame {
        // SAFETY: the pointer is valid and exclusively owned for the life of self.
        unsafe { self.0.as_ref() }
    }

    pub(crate) fn width(&self) -> u32 {
        self.raw().width.max(0) as u32
    }

    pub(crate) fn height(&self) -> u32 {
        self.raw().height.max(0) as u32
    }

    /// The frame's pixel format (`AVPixelFormat` as an integer).
    pub(crate) fn format(&self) -> i32 {
        self.raw().format
    }

    /// `best_effort_timestamp`, or `None` when FFmpeg could not tell.
    pub(crate) fn timestamp(&self) -> Option<i64> {
        let ts = self.raw().best_effort_timestamp;
        (ts != sys::AV_NOPTS_VALUE).then_some(ts)
    }

    /// The `pts` the decoder gave the frame (its packet's), or `None`.
    pub(crate) fn pts(&self) -> Option<i64> {
        let ts = self.raw().pts;
        (ts != sys::AV_NOPTS_VALUE).then_some(ts)
    }

    /// Whether the decoder says the picture may be damaged (a reference it needed was missing, or concealed
    /// errors).
    pub(crate) fn is_corrupt(&self) -> bool {
        self.raw().flags & sys::AV_FRAME_FLAG_CORRUPT != 0 || self.raw().decode_error_flags != 0
    }

    /// A new reference to this frame's picture (no pixels are copied; the decoder's buffer stays alive until
    /// both are dropped).
    pub(crate) fn new_ref(&self) -> Result<Self, AvError> {
        // SAFETY: av_frame_clone reads a valid frame and returns NULL or a new frame referencing its buffers.
        NonNull::new(unsafe { sys::av_frame_clone(self.0.as_ptr()) })
            .map(Self)
            .ok_or_else(|| out_of_memory("av_frame_clone"))
    }

    /// The frame's duration in stream time base units, when known.
    pub(crate) fn duration(&self) -> Option<i64> {
        // FFmpeg 6.0 named it `duration` (and 7.0 dropped `pkt_duration`).
        #[cfg(ffmpeg_6_0)]
        let d = self.raw().duration;
        #[cfg(not(ffmpeg_6_0))]
        let d = self.raw().pkt_duration;
        (d > 0).then_some(d)
    }

    /// The colour matrix the frame is tagged with (`AVColorSpace` as an integer).
    pub(crate) fn colorspace(&self) -> i32 {
        self.raw().colorspace as i32
    }

    /// The transfer characteristic the frame is tagged with (`AVColorTransferCharacteristic` as an integer).
    pub(crate) fn transfer(&self) -> i32 {
        self.raw().color_trc as i32
    }

    /// The colour primaries the frame is tagged with (`AVColorPrimaries` as an integer).
    pub(crate) fn primaries(&self) -> i32 {
        self.raw().color_primaries as i32
    }

    /// The HDR signal peak the frame's own side data states, in units of 100 cd/m², as the `tonemap` filter
    /// reads it: its content light level's MaxCLL, else its mastering display's maximum luminance; `None`
    /// without either (or with zeros).
    pub(crate) fn signal_peak(&self) -> Option<f32> {
        use super::format::{content_light_from, mastering_display_from};
        let light = self
            .side_data(sys::AVFrameSideDataType::AV_FRAME_DATA_CONTENT_LIGHT_LEVEL)
            .and_then(|d| content_light_from(&d))
            .filter(|l| l.max_cll > 0);
        if let Some(light) = light {
            return Some(light.max_cll as f32 / 100.0);
        }
        self.side_data(sys::AVFrameSideDataType::AV_FRAME_DATA_MASTERING_DISPLAY_METADATA)
            .and_then(|d| mastering_display_from(&d))
            .and_then(|m| m.max_luminance)
            .filter(|l| *l > 0.0)
            .map(|l| (l / 100.0) as f32)
    }

    /// The HDR10 static metadata the decoder attached to this frame (from the stream's SEI messages, for
    /// HEVC): its mastering display and content light levels, each when present.
    pub(crate) fn hdr_metadata(
        &self,
    ) -> (
        Option<crate::info::MasteringDisplay>,
        Option<crate::info::ContentLight>,
    ) {
        use super::format::{content_light_from, mastering_display_from};
        (
            self.side_data(sys::AVFrameSideDataType::AV_FRAME_DATA_MASTERING_DISPLAY_METADATA)
                .and_then(|d| mastering_display_from(&d)),
            self.side_data(sys::AVFrameSideDataType::AV_FRAME_DATA_CONTENT_LIGHT_LEVEL)
                .and_then(|d| content_light_from(&d)),
        )
    }

    /// A copy of the frame's side data of `kind`, if it has some.
    fn side_data(&self, kind: sys::AVFrameSideDataType) -> Option<Vec<u8>> {
        // SAFETY: av_frame_get_side_data reads the frame's side data list and returns NULL or an entry the frame
        // owns, whose `data` holds `size` bytes, copied out at once.
        unsafe {
            let sd = sys::av_frame_get_side_data(self.0.as_ptr(), kind).as_ref()?;
            (!sd.data.is_null()).then(|| std::slice::from_raw_parts(sd.data, sd.size).to_vec())
        }
    }

    /// The colour range the frame is tagged with (`AVColorRange` as an integer).
    pub(crate) fn color_range(&self) -> i32 {
        self.raw().color_range as i32
    }

    /// Copies row `from` of the luma plane of a picture allocated by [`AvFrame::yuv420p_like`] (8 or 16 bits)
    /// over row `to`. Panics if either row is outside the picture.
    pub(crate) fn copy_luma_row(&mut self, from: u32, to: u32) {
        let sample = self.pixel_planes().map_or(1, |p| p[0].pixel_bytes);
        let mut planes = self.pixel_planes_mut().expect("a picture of our own");
        let luma = &mut planes[0];
        let (from, to) = (from as usize, to as usize);
        assert!(
            from < luma.height && to < luma.height,
            "row outside the picture"
        );
        let start = from * luma.stride;
        luma.data
            .copy_within(start..start + luma.width * sample, to * luma.stride);
    }

    pub(crate) fn unref(&mut self) {
        // SAFETY: unref on a valid frame is always allowed, also when empty.
        unsafe { sys::av_frame_unref(self.0.as_ptr()) }
    }
}

impl Drop for AvFrame {
    fn drop(&mut self) {
        let mut ptr = self.0.as_ptr();
        // SAFETY: frees the frame and drops its buffer references; `ptr` is not used again.
        unsafe { sys::av_frame_free(&mut ptr) }
    }
}
