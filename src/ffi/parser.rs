//! `AVCodecParserContext`: FFmpeg's bitstream parser for a stream's codec, used to read the frame size a
//! stream's parameter sets (H.264/HEVC SPS, AV1 sequence header, VP9/VP8 frame header...) give from its first
//! packets, before any decoder sees them: a parser keeps the parameter sets and a slice or frame header, and
//! allocates nothing by the frame's size.

use std::ptr::{self, NonNull};

use ffmpeg_sys_next as sys;

use super::format::FormatContext;
use super::packet::Packet;

/// A parser for one stream's codec, with the codec context (holding the stream's parameters and extradata,
/// no decoder opened) it reads them from; both freed on drop.
pub(crate) struct FrameSizeParser {
    parser: NonNull<sys::AVCodecParserContext>,
    ctx: NonNull<sys::AVCodecContext>,
}

// SAFETY: both contexts are owned by this value alone and used through `&mut self`; neither is tied to the
// thread that made it.
unsafe impl Send for FrameSizeParser {}

impl FrameSizeParser {
    /// A parser for stream `stream` of `format`; `None` when FFmpeg has none for its codec (or no memory).
    pub(crate) fn new(format: &FormatContext, stream: usize) -> Option<Self> {
        let par = format.codec_parameters(stream);
        // SAFETY: `par` points at the stream's valid codec parameters; av_parser_init returns NULL or a valid
        // parser.
        let parser = NonNull::new(unsafe { sys::av_parser_init((*par).codec_id as i32) })?;
        // SAFETY: NULL codec: a bare context for the parameters; NULL or valid.
        let Some(ctx) = NonNull::new(unsafe { sys::avcodec_alloc_context3(ptr::null()) }) else {
            // SAFETY: the parser is valid and not used again.
            unsafe { sys::av_parser_close(parser.as_ptr()) };
            return None;
        };
        let this = Self { parser, ctx };
        // SAFETY: the context is fresh (no codec open) and `par` valid: this copies the parameters and the
        // extradata. Demuxed packets are whole frames, so the parser need not look for frame boundaries.
        unsafe {
            if sys::avcodec_parameters_to_context(this.ctx.as_ptr(), par) < 0 {
                return None;
            }
            (*this.parser.as_ptr()).flags |= sys::PARSER_FLAG_COMPLETE_FRAMES;
        }
        Some(this)
    }

    /// Parses `packet` (a whole frame, as demuxed) and returns the frame size known so far: the larger of what
    /// the parser and the codec context say, `None` while neither knows one.
    pub(crate) fn frame_size(&mut self, packet: &Packet) -> Option<(u32, u32)> {
        let raw = packet.as_ptr();
        let mut out = ptr::null_mut();
        let mut out_size = 0;
        // SAFETY: both contexts are valid; the packet's data is NULL or `size` valid bytes followed by
        // FFmpeg's input padding (demuxed packets are padded), as av_parser_parse2 reads. With complete frames
        // it consumes the whole packet at once; its output points into the packet or the parser's buffer, and
        // is not used.
        unsafe {
            let (data, size) = ((*raw).data, (*raw).size);
            if data.is_null() || size <= 0 {
                return None;
            }
            sys::av_parser_parse2(
                self.parser.as_ptr(),
                self.ctx.as_ptr(),
                &mut out,
                &mut out_size,
                data,
                size,
                (*raw).pts,
                (*raw).dts,
                (*raw).pos,
            );
            let p = self.parser.as_ref();
            let c = self.ctx.as_ref();
            let (width, height) = (p.width.max(c.width), p.height.max(c.height));
            (width > 0 && height > 0).then_some((width as u32, height as u32))
        }
    }
}

impl Drop for FrameSizeParser {
    fn drop(&mut self) {
        let mut ctx = self.ctx.as_ptr();
        // SAFETY: both are valid and not used again; the parser first, as it may refer to the context.
        unsafe {
            sys::av_parser_close(self.parser.as_ptr());
            sys::avcodec_free_context(&mut ctx);
        }
    }
}
