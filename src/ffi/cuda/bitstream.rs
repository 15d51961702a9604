//! The bitstream NVIDIA's parser reads (feature `cuda`, for the direct NVDEC decoder): `AVBSFContext`, one of
//! libavcodec's bitstream filters (`h264_mp4toannexb`, `hevc_mp4toannexb`), which turns a container's
//! length-prefixed packets into Annex B with the parameter sets in band before each keyframe; and what the
//! decoder reads of a packet (its bytes and timestamp) and of a stream (its headers and colour).

use std::ffi::CString;
use std::ptr::NonNull;

use ffmpeg_sys_next as sys;

use crate::error::AvError;
use crate::ffi::format::FormatContext;
use crate::ffi::packet::Packet;
use crate::ffi::{av_error, check, out_of_memory, AVERROR_EAGAIN, AVERROR_EOF};

/// An initialised bitstream filter for one stream.
pub(crate) struct BitstreamFilter {
    ctx: NonNull<sys::AVBSFContext>,
    /// The packet handed to the filter (a new reference to the caller's, which stays untouched).
    input: Packet,
}

// SAFETY: the context is owned by this value alone and used through `&mut self`.
unsafe impl Send for BitstreamFilter {}

impl BitstreamFilter {
    /// Filter `name` for stream `stream` of `format` (its codec parameters and time base).
    pub(crate) fn new(name: &str, format: &FormatContext, stream: usize) -> Result<Self, AvError> {
        let cname = CString::new(name).map_err(|_| out_of_memory("av_bsf_get_by_name"))?;
        // SAFETY: a NUL-terminated name; returns NULL or a static filter.
        let filter = unsafe { sys::av_bsf_get_by_name(cname.as_ptr()) };
        if filter.is_null() {
            return Err(av_error(sys::AVERROR_BSF_NOT_FOUND, "av_bsf_get_by_name"));
        }
        let mut raw = std::ptr::null_mut();
        // SAFETY: `filter` is valid; `raw` receives a fresh context or stays NULL on failure.
        check(
            unsafe { sys::av_bsf_alloc(filter, &mut raw) },
            "av_bsf_alloc",
        )?;
        let ctx = NonNull::new(raw).ok_or_else(|| out_of_memory("av_bsf_alloc"))?;
        let this = Self {
            ctx,
            input: Packet::new()?,
        };
        let (num, den) = format.time_base(stream);
        // SAFETY: the context is allocated and not initialised yet; `par_in` is its own parameters, filled
        // from the stream's valid codec parameters.
        unsafe {
            check(
                sys::avcodec_parameters_copy((*raw).par_in, format.codec_parameters(stream)),
                "avcodec_parameters_copy",
            )?;
            (*raw).time_base_in = sys::AVRational { num, den };
            check(sys::av_bsf_init(raw), "av_bsf_init")?;
        }
        Ok(this)
    }

    /// The stream's out-of-band headers after filtering (Annex B parameter sets), if any.
    pub(crate) fn extradata(&self) -> &[u8] {
        // SAFETY: an initialised context has valid output parameters; extradata is NULL or `extradata_size`
        // bytes owned by them, alive as long as the context.
        unsafe {
            let par = (*self.ctx.as_ptr()).par_out;
            let (data, size) = ((*par).extradata, (*par).extradata_size);
            if data.is_null() || size <= 0 {
                &[]
            } else {
                std::slice::from_raw_parts(data, size as usize)
            }
        }
    }

    /// Filters `packet` (left unchanged) and hands each packet the filter gives to `out`.
    pub(crate) fn filter(
        &mut self,
        packet: &Packet,
        out: &mut Packet,
        on_packet: &mut dyn FnMut(&Packet) -> Result<(), AvError>,
    ) -> Result<(), AvError> {
        self.input.unref();
        // SAFETY: both packets are valid; the new reference shares the caller's data.
        check(
            unsafe { sys::av_packet_ref(self.input.as_ptr(), packet.as_ptr()) },
            "av_packet_ref",
        )?;
        // SAFETY: the context is initialised; the filter takes the reference (leaving `input` blank).
        check(
            unsafe { sys::av_bsf_send_packet(self.ctx.as_ptr(), self.input.as_ptr()) },
            "av_bsf_send_packet",
        )?;
        loop {
            out.unref();
            // SAFETY: the context is initialised; `out` is a valid, blank packet.
            let ret = unsafe { sys::av_bsf_receive_packet(self.ctx.as_ptr(), out.as_ptr()) };
            if ret == AVERROR_EAGAIN || ret == AVERROR_EOF {
                return Ok(());
            }
            check(ret, "av_bsf_receive_packet")?;
            on_packet(out)?;
        }
    }
}

impl BitstreamFilter {
    /// Drops the packets and state the filter holds (after a seek).
    pub(crate) fn flush(&mut self) {
        // SAFETY: the context is initialised; flushing resets it for new input.
        unsafe { sys::av_bsf_flush(self.ctx.as_ptr()) }
    }
}

impl Drop for BitstreamFilter {
    fn drop(&mut self) {
        let mut raw = self.ctx.as_ptr();
        // SAFETY: frees the context and its parameters; not used again.
        unsafe { sys::av_bsf_free(&mut raw) }
    }
}

impl Packet {
    /// The packet's bytes.
    pub(crate) fn data(&self) -> &[u8] {
        // SAFETY: the packet is valid; its data is NULL or `size` bytes it owns, alive until the next unref
        // (which needs `&mut self`).
        unsafe {
            let raw = &*self.as_ptr();
            if raw.data.is_null() || raw.size <= 0 {
                &[]
            } else {
                std::slice::from_raw_parts(raw.data, raw.size as usize)
            }
        }
    }
}

impl FormatContext {
    /// Stream `index`'s out-of-band codec headers (`avcC`, `hvcC`, `av1C`...), empty when it has none.
    pub(crate) fn extradata(&self, index: usize) -> &[u8] {
        // SAFETY: the stream's codec parameters are valid as long as the context; extradata is NULL or
        // `extradata_size` bytes they own.
        unsafe {
            let par = &*self.codec_parameters(index);
            if par.extradata.is_null() || par.extradata_size <= 0 {
                &[]
            } else {
                std::slice::from_raw_parts(par.extradata, par.extradata_size as usize)
            }
        }
    }

    /// Stream `index`'s colour matrix and range as the decoder reported them while probing (`AVColorSpace`,
    /// `AVColorRange` as integers).
    pub(crate) fn colour(&self, index: usize) -> (i32, i32) {
        // SAFETY: the stream's codec parameters are valid as long as the context.
        let par = unsafe { &*self.codec_parameters(index) };
        (par.color_space as i32, par.color_range as i32)
    }
}
