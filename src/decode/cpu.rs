//! The CPU backend: libavcodec's software decoders with frame and slice threading; frames are handed on in host
//! memory (the transform stage converts them to RGB with swscale).

use super::backend::{DecodeLoop, Decoder, FrameSink, Stop};
use super::frame::FrameRef;
use crate::demux::Demuxer;
use crate::error::{AvError, VideoError};
use crate::ffi::codec::CodecContext;
use crate::ffi::packet::Packet;
use crate::settings::config::Threading;

/// libavcodec decoding on the CPU.
pub(crate) struct CpuDecoder {
    receiver: DecodeLoop,
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
            receiver: DecodeLoop::new(codec, stream, demuxer.frame_limits())?,
        })
    }
}

impl Decoder for CpuDecoder {
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        sink: &mut FrameSink<'_>,
    ) -> Result<Option<AvError>, Stop> {
        self.receiver
            .decode(packet, &mut |frame, info| sink(info, FrameRef::Host(frame)))
    }

    fn flush(&mut self) -> Result<(), Stop> {
        self.receiver.flush();
        Ok(())
    }

    /// H.264 only (see `CodecContext::skip_unreferenced`).
    fn skip_unreferenced(&mut self, skip: bool) -> bool {
        self.receiver.codec.skip_unreferenced(skip)
    }
}
