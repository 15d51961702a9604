//! The CPU backend: libavcodec's software decoders with frame and slice threading; frames are converted to RGB
//! by swscale, per the plan of `transform::host`.

use super::backend::{DecodeLoop, Decoder, FrameSink, Stop};
use crate::config::Threading;
use crate::demux::Demuxer;
use crate::error::{AvError, VideoError};
use crate::ffi::codec::CodecContext;
use crate::ffi::frame::AvFrame;
use crate::ffi::packet::Packet;
use crate::ffi::scale::Filter;
use crate::transform::frame::{FrameRef, HostFrame};
use crate::transform::host::{HostConverter, RgbRegion};

/// A frame decoded on the CPU, converted by swscale.
struct CpuFrame<'a> {
    frame: &'a AvFrame,
    converter: &'a mut HostConverter,
}

impl HostFrame for CpuFrame<'_> {
    fn write_rgb(&mut self, dst: &mut [u8]) -> Result<(), AvError> {
        self.converter.rgb(self.frame, dst)
    }

    fn window_rgb(
        &mut self,
        window: (u32, u32, u32, u32),
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        self.converter.window_rgb(self.frame, window, out)
    }

    fn resized_window_rgb(
        &mut self,
        size: (u32, u32),
        filter: Filter,
        window: (u32, u32, u32, u32),
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        self.converter
            .resized_window_rgb(self.frame, size, filter, window, out)
    }
}

/// libavcodec decoding on the CPU.
pub(crate) struct CpuDecoder {
    receiver: DecodeLoop,
    converter: HostConverter,
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
            converter: HostConverter::new(),
        })
    }
}

impl Decoder for CpuDecoder {
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        sink: &mut FrameSink<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let converter = &mut self.converter;
        self.receiver.decode(packet, &mut |frame, info| {
            sink(info, FrameRef::Host(&mut CpuFrame { frame, converter }))
        })
    }
}
