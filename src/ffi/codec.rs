//! `AVCodecContext`: a libavcodec decoder driven by send_packet / receive_frame.

use std::ptr::{self, NonNull};

use ffmpeg_sys_next as sys;

use super::format::FormatContext;
use super::frame::Frame;
use super::packet::Packet;
use super::{av_error, check, out_of_memory, static_str, AVERROR_EAGAIN, AVERROR_EOF};
use crate::error::AvError;

/// What `receive_frame` gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Received {
    /// A frame was written into the `Frame`.
    Frame,
    /// The decoder needs more input first.
    Again,
    /// The decoder is fully drained.
    Eof,
}

/// An open decoder.
pub(crate) struct CodecContext {
    ctx: NonNull<sys::AVCodecContext>,
    /// The CUDA decoder's format negotiation, read by its `get_format` callback through `opaque`; freed after
    /// the context (field order).
    #[cfg(feature = "cuda")]
    choice: Option<Box<super::cuda::hw::FormatChoice>>,
}

// SAFETY: the context is owned by this value alone and used through `&mut self`; libavcodec contexts (and
// their frame threads) are not tied to the creating thread.
unsafe impl Send for CodecContext {}

impl CodecContext {
    /// Opens the decoder for stream `stream` of `format`, with `threads` decoding threads (0: FFmpeg picks,
    /// one per core): frame and slice threading, or slice threading only
    /// when `frame_threads` is false (no frame of delay per thread).
    ///
    /// Fails with `AVERROR_DECODER_NOT_FOUND` when this FFmpeg has no decoder for the codec.
    pub(crate) fn open_decoder(
        format: &FormatContext,
        stream: usize,
        threads: usize,
        frame_threads: bool,
    ) -> Result<Self, AvError> {
        Self::open_with(format, stream, threads, frame_threads, |_| Ok(()))
    }

    /// Opens the decoder with libavcodec's NVDEC hwaccel on `device`: one thread (as hwaccels need), frames in
    /// GPU memory when NVDEC takes the stream; [`CodecContext::hardware`] tells whether it did.
    #[cfg(feature = "cuda")]
    pub(crate) fn open_cuda_decoder(
        format: &FormatContext,
        stream: usize,
        device: &super::cuda::hw::HwDevice,
    ) -> Result<Self, AvError> {
        let choice = Box::<super::cuda::hw::FormatChoice>::default();
        let opaque = &*choice as *const super::cuda::hw::FormatChoice as *mut std::ffi::c_void;
        let device_ref = device.new_ref()?;
        let mut this = Self::open_with(format, stream, 1, false, |raw| {
            // SAFETY: the context is not open yet; it takes ownership of `device_ref`, and `opaque` points at
            // the boxed choice, which the returned value keeps alive as long as the context.
            unsafe {
                (*raw).hw_device_ctx = device_ref;
                (*raw).opaque = opaque;
                (*raw).get_format = Some(super::cuda::hw::choose_cuda);
            }
            Ok(())
        })?;
        this.choice = Some(choice);
        Ok(this)
    }

    /// Whether NVDEC took the stream (`None`: not negotiated yet; always `None` for a software decoder).
    #[cfg(feature = "cuda")]
    pub(crate) fn hardware(&self) -> Option<bool> {
        self.choice.as_ref().and_then(|c| c.hardware())
    }

    fn open_with(
        format: &FormatContext,
        stream: usize,
        threads: usize,
        frame_threads: bool,
        setup: impl FnOnce(*mut sys::AVCodecContext) -> Result<(), AvError>,
    ) -> Result<Self, AvError> {
        let par = format.codec_parameters(stream);
        let (tb_num, tb_den) = format.time_base(stream);
        // SAFETY: `par` points at the stream's valid codec parameters, alive as long as `format`.
        let codec = unsafe { sys::avcodec_find_decoder((*par).codec_id) };
        if codec.is_null() {
            return Err(av_error(
                sys::AVERROR_DECODER_NOT_FOUND,
                "avcodec_find_decoder",
            ));
        }
        // SAFETY: `codec` is a valid decoder; alloc returns NULL or a valid context, which we check.
        let ctx = NonNull::new(unsafe { sys::avcodec_alloc_context3(codec) })
            .ok_or_else(|| out_of_memory("avcodec_alloc_context3"))?;
        let this = Self {
            ctx,
            #[cfg(feature = "cuda")]
            choice: None,
        };
        // SAFETY: the context is fresh and not open yet, so its fields may be set; `par` is valid (above).
        unsafe {
            let raw = this.ctx.as_ptr();
            setup(raw)?;
            check(
                sys::avcodec_parameters_to_context(raw, par),
                "avcodec_parameters_to_context",
            )?;
            (*raw).pkt_timebase = sys::AVRational {
                num: tb_num,
                den: tb_den,
            };
            (*raw).thread_count = threads.min(i32::MAX as usize) as i32;
            (*raw).thread_type = if frame_threads {
                sys::FF_THREAD_FRAME | sys::FF_THREAD_SLICE
            } else {
                sys::FF_THREAD_SLICE
            };
            check(
                sys::avcodec_open2(raw, codec, ptr::null_mut()),
                "avcodec_open2",
            )?;
        }
        Ok(this)
    }

    /// The decoder's name (`h264`, `libdav1d`...).
    pub(crate) fn decoder_name(&self) -> String {
        // SAFETY: an open context has a valid `codec` pointing at a static AVCodec.
        unsafe { static_str((*(*self.ctx.as_ptr()).codec).name) }
    }

    /// Sends a packet, or `None` to start draining. `Ok(false)`: the decoder is full (`EAGAIN`), receive
    /// frames and send the same packet again.
    pub(crate) fn send_packet(&mut self, packet: Option<&Packet>) -> Result<bool, AvError> {
        let pkt = packet.map_or(ptr::null(), |p| p.as_ptr() as *const sys::AVPacket);
        // SAFETY: the context is open; `pkt` is NULL (drain) or a valid packet.
        let ret = unsafe { sys::avcodec_send_packet(self.ctx.as_ptr(), pkt) };
        if ret == AVERROR_EAGAIN {
            return Ok(false);
        }
        if ret == AVERROR_EOF {
            // Already draining: nothing more can be sent; not an error for our loop.
            return Ok(true);
        }
        check(ret, "avcodec_send_packet").map(|_| true)
    }

    /// Receives the next decoded frame into `frame`.
    pub(crate) fn receive_frame(&mut self, frame: &mut Frame) -> Result<Received, AvError> {
        frame.unref();
        // SAFETY: the context is open and `frame` is a valid, unreferenced frame.
        let ret = unsafe { sys::avcodec_receive_frame(self.ctx.as_ptr(), frame.as_ptr()) };
        match ret {
            AVERROR_EAGAIN => Ok(Received::Again),
            AVERROR_EOF => Ok(Received::Eof),
            ret => check(ret, "avcodec_receive_frame").map(|_| Received::Frame),
        }
    }
}

impl Drop for CodecContext {
    fn drop(&mut self) {
        let mut raw = self.ctx.as_ptr();
        // SAFETY: closes the decoder (joining its threads) and frees the context; not used again.
        unsafe { sys::avcodec_free_context(&mut raw) }
    }
}
