//! The CPU backend: libavcodec's software decoders with frame and slice threading; frames are handed on in host
//! memory (the transform stage converts them to RGB with swscale).

use super::backend::{DecodeLoop, Decoder, FrameSink, Stop};
use super::frame::FrameRef;
use super::steady::SteadyLoop;
use crate::demux::Demuxer;
use crate::error::{AvError, VideoError};
use crate::ffi::codec::CodecContext;
use crate::ffi::packet::Packet;
use crate::settings::config::Threading;

/// libavcodec decoding on the CPU.
pub(crate) struct CpuDecoder {
    receiver: Receiver,
}

/// The libavcodec loop: with frame threads, held to the one-thread decode (`steady`); without, as it is.
enum Receiver {
    Plain(DecodeLoop),
    Steady(Box<SteadyLoop>),
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
        let frame_threaded = codec.frame_threaded();
        let first = DecodeLoop::new(codec, stream, demuxer.frame_limits())?;
        let receiver = if frame_threaded {
            // The same decoder on one thread, for the GOPs where damage is seen.
            let single = CodecContext::open_decoder(demuxer.format(), stream.index, 1, false)?;
            let single = DecodeLoop::new(single, stream, demuxer.frame_limits())?;
            Receiver::Steady(Box::new(SteadyLoop::new(Some(first), single)))
        } else if threading == Threading::Slice {
            // Live input at the lowest latency: frames go on as they are decoded.
            Receiver::Plain(first)
        } else {
            Receiver::Steady(Box::new(SteadyLoop::new(None, first)))
        };
        Ok(Self { receiver })
    }
}

impl CpuDecoder {
    /// The frame-threaded loop held to the one-thread decode, where the decoder runs one.
    #[cfg(test)]
    pub(crate) fn steady(&mut self) -> Option<&mut SteadyLoop> {
        match &mut self.receiver {
            Receiver::Steady(receiver) => Some(receiver),
            Receiver::Plain(_) => None,
        }
    }
}

impl Decoder for CpuDecoder {
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        sink: &mut FrameSink<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let on_frame = &mut |frame: &_, info| sink(info, FrameRef::Host(frame));
        match &mut self.receiver {
            Receiver::Plain(receiver) => receiver.decode(packet, on_frame),
            Receiver::Steady(receiver) => receiver.decode(packet, on_frame),
        }
    }

    fn flush(&mut self) -> Result<(), Stop> {
        match &mut self.receiver {
            Receiver::Plain(receiver) => receiver.flush(),
            Receiver::Steady(receiver) => receiver.flush(),
        }
        Ok(())
    }

    fn damage_by_order(&mut self) {
        match &mut self.receiver {
            Receiver::Plain(receiver) => receiver.damage_by_order(),
            Receiver::Steady(receiver) => receiver.damage_by_order(),
        }
    }

    /// H.264 only (see `CodecContext::skip_unreferenced`).
    fn skip_unreferenced(&mut self, skip: bool) -> bool {
        match &mut self.receiver {
            Receiver::Plain(receiver) => receiver.codec.skip_unreferenced(skip),
            Receiver::Steady(receiver) => receiver.skip_unreferenced(skip),
        }
    }
}
