//! `AVCodecContext`: a libavcodec decoder driven by send_packet / receive_frame.

use std::ptr::{self, NonNull};

use ffmpeg_sys_next as sys;

use super::format::FormatContext;
use super::frame::AvFrame;
use super::log::ErrorCounter;
use super::packet::Packet;
use super::{av_error, check, out_of_memory, static_str, AVERROR_EAGAIN, AVERROR_EOF};
use crate::error::AvError;

/// What `receive_frame` gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Received {
    /// A frame was written into the `AvFrame`.
    Frame,
    /// The decoder needs more input first.
    Again,
    /// The decoder is fully drained.
    Eof,
}

/// An open decoder.
pub(crate) struct CodecContext {
    ctx: NonNull<sys::AVCodecContext>,
    /// What the context's `opaque` points at, if anything (the NVDEC decoder's format negotiation, read by its
    /// `get_format` callback): kept alive as long as the context, and freed after it (field order).
    _opaque: Option<Box<dyn std::any::Any + Send>>,
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
        Self::open_with(format, stream, threads, frame_threads, |raw| {
            // The errors the decoder logs are counted (`decode_errors`): its `opaque` names the counter.
            let counter = ErrorCounter::register();
            // SAFETY: `raw` is the fresh context `open_with` hands its setup; `opaque` is free for the caller.
            unsafe { (*raw).opaque = counter.token() };
            Ok(Some(Box::new(counter)))
        })
    }

    /// The errors the decoder (any of its threads) logged so far, for a decoder opened by
    /// [`open_decoder`](Self::open_decoder); 0 for others.
    pub(crate) fn decode_errors(&self) -> u64 {
        self._opaque
            .as_ref()
            .and_then(|o| o.downcast_ref::<ErrorCounter>())
            .map_or(0, ErrorCounter::get)
    }

    /// Opens the decoder as [`open_decoder`](Self::open_decoder) does, after `setup` has set fields of the
    /// fresh context (a hardware device, callbacks). What `setup` returns is kept alive as long as the context
    /// (what it pointed `opaque` at).
    pub(in crate::ffi) fn open_with(
        format: &FormatContext,
        stream: usize,
        threads: usize,
        frame_threads: bool,
        setup: impl FnOnce(
            *mut sys::AVCodecContext,
        ) -> Result<Option<Box<dyn std::any::Any + Send>>, AvError>,
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
        let mut this = Self { ctx, _opaque: None };
        // SAFETY: the context is fresh and not open yet, so its fields may be set; `par` is valid (above).
        unsafe {
            let raw = this.ctx.as_ptr();
            this._opaque = setup(raw)?;
            check(
                sys::avcodec_parameters_to_context(raw, par),
                "avcodec_parameters_to_context",
            )?;
            (*raw).pkt_timebase = sys::AVRational {
                num: tb_num,
                den: tb_den,
            };
            if let Some(pixels) = format.max_pixels() {
                (*raw).max_pixels = pixels;
            }
            // Off x86-64 the block-transform decoders (MPEG-1/2, MPEG-4 Part 2, H.263, MJPEG...) take FFmpeg's C
            // IDCT, which the x86 `ffmpeg`'s default (its SSE2 twin) equals bit for bit: FFmpeg's default on
            // Arm is a NEON IDCT that rounds some blocks differently (within the tolerance these standards
            // allow), which would make the same video's frames differ between hosts. Other decoders ignore it.
            if cfg!(not(target_arch = "x86_64")) {
                (*raw).idct_algo = sys::FF_IDCT_SIMPLE;
            }
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

    /// Whether the open decoder runs frame threads (more than one thread, frame threading active): its
    /// output on damaged data then varies from run to run (`decode::steady`).
    pub(crate) fn frame_threaded(&self) -> bool {
        // SAFETY: the context is valid and open for the life of self; both are plain fields set by open.
        unsafe {
            let ctx = self.ctx.as_ptr();
            (*ctx).thread_count > 1 && (*ctx).active_thread_type & sys::FF_THREAD_FRAME != 0
        }
    }

    /// The frame size the decoder last learnt from the stream (its parameter sets or headers), 0 when none.
    pub(crate) fn frame_size(&self) -> (u32, u32) {
        // SAFETY: the context is valid and open for the life of self; width and height are plain fields.
        let (width, height) = unsafe { ((*self.ctx.as_ptr()).width, (*self.ctx.as_ptr()).height) };
        (width.max(0) as u32, height.max(0) as u32)
    }

    /// The decoder's name (`h264`, `libdav1d`...).
    pub(crate) fn decoder_name(&self) -> String {
        // SAFETY: an open context has a valid `codec` pointing at a static AVCodec.
        unsafe { static_str((*(*self.ctx.as_ptr()).codec).name) }
    }

    /// Whether the decoder skips pictures no other picture refers to (`skip_frame = AVDISCARD_NONREF`) from the
    /// next packet sent on, for H.264 only: there `nal_ref_idc == 0` guarantees that nothing decoded later
    /// refers to the picture, so skipping it changes no other frame. Returns whether it applies (false for
    /// every other codec, which decodes every picture).
    pub(crate) fn skip_unreferenced(&mut self, skip: bool) -> bool {
        // SAFETY: an open context has a valid `codec` pointing at a static AVCodec; `skip_frame` is a plain
        // field the caller may change between packets (frame threads copy it with each packet sent).
        unsafe {
            let ctx = self.ctx.as_ptr();
            if (*(*ctx).codec).id != sys::AVCodecID::AV_CODEC_ID_H264 {
                return false;
            }
            (*ctx).skip_frame = if skip {
                sys::AVDiscard::AVDISCARD_NONREF
            } else {
                sys::AVDiscard::AVDISCARD_DEFAULT
            };
        }
        true
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

    /// Drops every frame and reference the decoder holds, to decode from a new point (after a seek).
    pub(crate) fn flush(&mut self) {
        // SAFETY: the context is open; flushing an open decoder is always allowed.
        unsafe { sys::avcodec_flush_buffers(self.ctx.as_ptr()) }
    }

    /// Receives the next decoded frame into `frame`.
    pub(crate) fn receive_frame(&mut self, frame: &mut AvFrame) -> Result<Received, AvError> {
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
