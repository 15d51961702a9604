//! The CPU backend: libavcodec's software decoders with frame and slice threading, and swscale for RGB.

use super::{DecodeLoop, Decoder, FrameSink, Stop};
use crate::config::Threading;
use crate::demux::Demuxer;
use crate::error::{AvError, VideoError};
use crate::ffi::codec::CodecContext;
use crate::ffi::frame::AvFrame;
use crate::ffi::packet::Packet;
use crate::ffi::scale::{Filter, RgbRegion, Scaler};
use crate::transform::frame::{FrameRef, HostFrame};

/// A frame decoded on the CPU, converted by swscale.
struct CpuFrame<'a> {
    frame: &'a AvFrame,
    scaler: &'a mut Scaler,
    /// Resizes in YUV before the RGB conversion.
    resizer: &'a mut Scaler,
    /// The resized YUV picture, reused while its size stays.
    resized: &'a mut Option<AvFrame>,
}

impl HostFrame for CpuFrame<'_> {
    fn write_rgb(&mut self, dst: &mut [u8]) -> Result<(), AvError> {
        self.scaler.convert_to_rgb24(self.frame, dst)
    }

    fn window_rgb(
        &mut self,
        window: (u32, u32, u32, u32),
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        self.scaler.convert_window(self.frame, window, out)
    }

    fn resized_window_rgb(
        &mut self,
        size: (u32, u32),
        filter: Filter,
        window: (u32, u32, u32, u32),
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        let (resized, (x, y)) =
            self.resizer
                .resize_yuv(self.frame, size, filter, window, self.resized)?;
        self.scaler
            .convert_window(resized, (x, y, window.2, window.3), out)
    }
}

/// libavcodec decoding on the CPU.
pub(crate) struct CpuDecoder {
    receiver: DecodeLoop,
    scaler: Scaler,
    resizer: Scaler,
    resized: Option<AvFrame>,
}

impl CpuDecoder {
    /// Opens the decoder for the demuxer's chosen stream with `threads` threads (0: one per core), with frame
    /// threading or slice threading only.
    pub(crate) fn open(
        demuxer: &Demuxer,
        threads: usize,
        threading: Threading,
    ) -> Result<Self, VideoError> {
        let stream = demuxer.stream();
        let frame_threads = threading == Threading::FrameAndSlice;
        let codec =
            CodecContext::open_decoder(demuxer.format(), stream.index, threads, frame_threads)
                .map_err(|e| {
                    if e.code == ffmpeg_sys_next::AVERROR_DECODER_NOT_FOUND {
                        VideoError::UnsupportedCodec {
                            codec: stream.codec.clone(),
                        }
                    } else {
                        VideoError::Ffmpeg(e)
                    }
                })?;
        tracing::debug!(decoder = %codec.decoder_name(), stream = stream.index, "opened decoder");
        Ok(Self {
            receiver: DecodeLoop::new(codec, stream)?,
            scaler: Scaler::new(),
            resizer: Scaler::new(),
            resized: None,
        })
    }
}

impl Decoder for CpuDecoder {
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        sink: &mut FrameSink<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let (scaler, resizer, resized) = (&mut self.scaler, &mut self.resizer, &mut self.resized);
        self.receiver.decode(packet, &mut |frame, info| {
            sink(
                info,
                FrameRef::Host(&mut CpuFrame {
                    frame,
                    scaler,
                    resizer,
                    resized,
                }),
            )
        })
    }
}
