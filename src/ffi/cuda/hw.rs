//! libavcodec's CUDA hardware device, made around framefeed's own cudarc context and stream, so that NVDEC's
//! output (mapped on that stream) is ready for a kernel launched on it afterwards (FFmpeg 5.1 cannot adopt a
//! current context by flag, and its primary-context option clashes with cudarc's flags, so
//! `AVCUDADeviceContext` is filled by hand); the NVDEC decoder opened on it; and an NVDEC frame's planes.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use ffmpeg_sys_next as sys;

use crate::error::AvError;
use crate::ffi::codec::CodecContext;
use crate::ffi::format::FormatContext;
use crate::ffi::frame::AvFrame;
use crate::ffi::{check, out_of_memory};

/// An `AVBufferRef` holding an initialised `AVHWDeviceContext` of type CUDA.
pub(crate) struct HwDevice(NonNull<sys::AVBufferRef>);

// SAFETY: the reference is owned by this value; FFmpeg's buffer references are thread-safe to release, and
// the device context is only read after initialisation.
unsafe impl Send for HwDevice {}
// SAFETY: shared use only takes new references (`av_buffer_ref`, atomic reference counting).
unsafe impl Sync for HwDevice {}

impl HwDevice {
    /// A CUDA device context using `cuda_ctx` and `stream` (raw driver handles). The caller keeps both alive
    /// longer than this value and every decoder and frame made with it.
    pub(crate) fn new(cuda_ctx: *mut c_void, stream: *mut c_void) -> Result<Self, AvError> {
        // SAFETY: av_hwdevice_ctx_alloc returns NULL or a fresh reference, checked.
        let buf = NonNull::new(unsafe {
            sys::av_hwdevice_ctx_alloc(sys::AVHWDeviceType::AV_HWDEVICE_TYPE_CUDA)
        })
        .ok_or_else(|| out_of_memory("av_hwdevice_ctx_alloc"))?;
        let this = Self(buf);
        // SAFETY: the buffer's data is an AVHWDeviceContext whose `hwctx` is an AVCUDADeviceContext (the
        // layout bindgen checked for FFmpeg 5.1); both may be filled before av_hwdevice_ctx_init, which then
        // loads FFmpeg's CUDA functions and keeps our context (it does not destroy a context it did not create).
        unsafe {
            let dev = (*buf.as_ptr()).data as *mut sys::AVHWDeviceContext;
            let cu = (*dev).hwctx as *mut sys::AVCUDADeviceContext;
            (*cu).cuda_ctx = cuda_ctx as sys::CUcontext;
            (*cu).stream = stream as sys::CUstream;
            check(
                sys::av_hwdevice_ctx_init(buf.as_ptr()),
                "av_hwdevice_ctx_init",
            )?;
        }
        Ok(this)
    }

    /// A new reference for a codec context to own.
    pub(crate) fn new_ref(&self) -> Result<*mut sys::AVBufferRef, AvError> {
        // SAFETY: self.0 is a valid reference; av_buffer_ref returns NULL or a new one, checked.
        let r = unsafe { sys::av_buffer_ref(self.0.as_ptr()) };
        if r.is_null() {
            Err(out_of_memory("av_buffer_ref"))
        } else {
            Ok(r)
        }
    }
}

impl Drop for HwDevice {
    fn drop(&mut self) {
        let mut raw = self.0.as_ptr();
        // SAFETY: releases our reference; the context is freed when the last one goes.
        unsafe { sys::av_buffer_unref(&mut raw) }
    }
}

impl CodecContext {
    /// Opens the decoder with libavcodec's NVDEC hwaccel on `device`: one thread (as hwaccels need), frames in
    /// GPU memory when NVDEC takes the stream. The returned [`FormatChoice`] tells whether it did.
    pub(crate) fn open_cuda_decoder(
        format: &FormatContext,
        stream: usize,
        device: &HwDevice,
    ) -> Result<(Self, Arc<FormatChoice>), AvError> {
        let choice = Arc::new(FormatChoice::default());
        let opaque = Arc::as_ptr(&choice) as *mut c_void;
        let device_ref = device.new_ref()?;
        let keep = choice.clone();
        let this = Self::open_with(format, stream, 1, false, |raw| {
            // SAFETY: the context is not open yet; it takes ownership of `device_ref`, and `opaque` points at
            // the shared choice, which the context keeps alive (the returned box) as long as itself.
            unsafe {
                (*raw).hw_device_ctx = device_ref;
                (*raw).opaque = opaque;
                (*raw).get_format = Some(choose_cuda);
            }
            Ok(Some(Box::new(keep)))
        })?;
        Ok((this, choice))
    }
}

/// What the decoder's pixel-format negotiation chose (shared with the `get_format` callback through the codec
/// context's `opaque`).
#[derive(Debug, Default)]
pub(crate) struct FormatChoice(AtomicU8);

/// Values of [`FormatChoice`] (0: not negotiated yet).
const CUDA: u8 = 1;
const SOFTWARE: u8 = 2;

impl FormatChoice {
    /// `Some(true)`: NVDEC took the stream; `Some(false)`: libavcodec offered only software formats (NVDEC
    /// cannot decode this stream: profile, bit depth, size); `None`: not negotiated yet.
    pub(crate) fn hardware(&self) -> Option<bool> {
        match self.0.load(Ordering::Acquire) {
            CUDA => Some(true),
            SOFTWARE => Some(false),
            _ => None,
        }
    }
}

/// The `get_format` callback: the CUDA format when offered, else the software one (recorded, so that the
/// video can move to the CPU backend).
///
/// # Safety
/// Called by libavcodec with its own context (whose `opaque` is a live [`FormatChoice`], set by
/// [`CodecContext::open_cuda_decoder`]) and a list terminated by `AV_PIX_FMT_NONE`.
pub(crate) unsafe extern "C" fn choose_cuda(
    ctx: *mut sys::AVCodecContext,
    formats: *const sys::AVPixelFormat,
) -> sys::AVPixelFormat {
    use sys::AVPixelFormat::{AV_PIX_FMT_CUDA, AV_PIX_FMT_NONE};
    let choice = (*ctx).opaque as *const FormatChoice;
    let mut software = AV_PIX_FMT_NONE;
    let mut p = formats;
    while *p != AV_PIX_FMT_NONE {
        if *p == AV_PIX_FMT_CUDA {
            if let Some(c) = choice.as_ref() {
                c.0.store(CUDA, Ordering::Release);
            }
            return AV_PIX_FMT_CUDA;
        }
        let desc = sys::av_pix_fmt_desc_get(*p);
        let hw = !desc.is_null() && (*desc).flags & (sys::AV_PIX_FMT_FLAG_HWACCEL as u64) != 0;
        if !hw && software == AV_PIX_FMT_NONE {
            software = *p;
        }
        p = p.add(1);
    }
    if let Some(c) = choice.as_ref() {
        c.0.store(SOFTWARE, Ordering::Release);
    }
    software
}

/// An NVDEC frame's planes in GPU memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Surface {
    /// Device address of the luma plane.
    pub(crate) luma: u64,
    /// Device address of the interleaved chroma plane.
    pub(crate) chroma: u64,
    pub(crate) luma_pitch: i32,
    pub(crate) chroma_pitch: i32,
    /// 16-bit samples (P010, P016) rather than 8-bit (NV12).
    pub(crate) high_depth: bool,
}

/// Where the chroma plane of a mapped NVDEC surface really starts. libavcodec (5.1 and later) maps the
/// surface without a copy and puts its chroma plane `pitch * height` bytes after the luma plane, but NVDEC lays
/// the chroma plane out after an even number of luma rows (`(height + 1) & ~1`, as NVIDIA's own decoder
/// samples read it). For an odd coded height libavcodec's pointer is one row early: every chroma row read
/// from it would be the one above (measured on an H100: 9 levels off on a 129x129 VP9 stream). An odd
/// number of rows between the planes can only be that mistake, so the pointer moves down one row.
fn nvdec_chroma_plane(luma: u64, chroma: u64, luma_pitch: i32) -> u64 {
    let pitch = u64::try_from(luma_pitch).unwrap_or(0);
    match chroma.checked_sub(luma) {
        Some(gap) if pitch > 0 && gap % pitch == 0 && (gap / pitch) % 2 == 1 => chroma + pitch,
        _ => chroma,
    }
}

/// Why a hardware frame cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SurfaceError {
    /// Not a CUDA frame (libavcodec decoded it in software).
    NotCuda,
    /// A CUDA frame of a layout the kernel does not read (4:4:4, for instance).
    Format(String),
}

impl AvFrame {
    /// The device planes of a CUDA frame (NV12, P010 or P016).
    pub(crate) fn cuda_surface(&self) -> Result<Surface, SurfaceError> {
        use sys::AVPixelFormat::*;
        let raw = self.as_ptr();
        // SAFETY: `raw` is a valid frame; a CUDA frame carries its frames context, whose data is an
        // AVHWFramesContext, and its plane pointers are device addresses (only read as integers here).
        unsafe {
            if (*raw).format != AV_PIX_FMT_CUDA as i32 || (*raw).hw_frames_ctx.is_null() {
                return Err(SurfaceError::NotCuda);
            }
            let frames = (*(*raw).hw_frames_ctx).data as *const sys::AVHWFramesContext;
            let high_depth = match (*frames).sw_format {
                AV_PIX_FMT_NV12 => false,
                AV_PIX_FMT_P010LE | AV_PIX_FMT_P016LE => true,
                other => {
                    return Err(SurfaceError::Format(crate::ffi::static_str(
                        sys::av_get_pix_fmt_name(other),
                    )))
                }
            };
            let (luma, chroma) = ((*raw).data[0] as u64, (*raw).data[1] as u64);
            let (luma_pitch, chroma_pitch) = ((*raw).linesize[0], (*raw).linesize[1]);
            Ok(Surface {
                luma,
                chroma: nvdec_chroma_plane(luma, chroma, luma_pitch),
                luma_pitch,
                chroma_pitch,
                high_depth,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::nvdec_chroma_plane;

    #[test]
    fn odd_heights_get_the_chroma_plane_nvdec_wrote() {
        let (luma, pitch) = (0x7000_0000u64, 256i32);
        // 1088 coded rows (1080p H.264): libavcodec's pointer is right.
        assert_eq!(
            nvdec_chroma_plane(luma, luma + 256 * 1088, pitch),
            luma + 256 * 1088
        );
        // 129 rows (odd VP9): NVDEC's chroma starts after 130.
        assert_eq!(
            nvdec_chroma_plane(luma, luma + 256 * 129, pitch),
            luma + 256 * 130
        );
        // Planes that are not one surface (or a pointer before the luma) are left alone.
        assert_eq!(nvdec_chroma_plane(luma, luma + 1000, pitch), luma + 1000);
        assert_eq!(nvdec_chroma_plane(luma, luma - 512, pitch), luma - 512);
        assert_eq!(nvdec_chroma_plane(luma, luma + 512, 0), luma + 512);
    }
}
