//! The CPU backend: libavcodec's software decoders with frame and slice threading, and swscale for RGB.

use super::{Clock, Decoder, FrameInfo, FrameSink, FrameSource, Stop};
use crate::config::Threading;
use crate::demux::Demuxer;
use crate::error::{AvError, VideoError};
use crate::ffi::codec::{CodecContext, Received};
use crate::ffi::frame::Frame;
use crate::ffi::packet::Packet;
use crate::ffi::scale::{Filter, RgbRegion, Scaler};
use crate::ffi::{av_error, AVERROR_EAGAIN};

/// Consecutive errors from `receive_frame` after which draining gives up (a decoder that keeps failing).
const MAX_CONSECUTIVE_RECEIVE_ERRORS: usize = 64;

/// A frame decoded on the CPU, converted by swscale.
struct CpuFrame<'a> {
    frame: &'a Frame,
    scaler: &'a mut Scaler,
    /// Resizes in YUV before the RGB conversion.
    resizer: &'a mut Scaler,
    /// The resized YUV picture, reused while its size stays.
    resized: &'a mut Option<Frame>,
}

impl FrameSource for CpuFrame<'_> {
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
    codec: CodecContext,
    frame: Frame,
    scaler: Scaler,
    resizer: Scaler,
    resized: Option<Frame>,
    clock: Clock,
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
            codec,
            frame: Frame::new()?,
            scaler: Scaler::new(),
            resizer: Scaler::new(),
            resized: None,
            clock: Clock::new(stream),
        })
    }

    /// Receives every frame the decoder has ready. Returns the first receive error, if any.
    fn drain(&mut self, sink: &mut FrameSink<'_>) -> Result<(usize, Option<AvError>), Stop> {
        let mut first_error = None;
        let mut errors = 0;
        let mut frames = 0;
        loop {
            match self.codec.receive_frame(&mut self.frame) {
                Ok(Received::Frame) => {
                    errors = 0;
                    frames += 1;
                    let pts = self.clock.pts(&self.frame);
                    let info = FrameInfo {
                        width: self.frame.width() as usize,
                        height: self.frame.height() as usize,
                        pts,
                    };
                    sink(
                        info,
                        &mut CpuFrame {
                            frame: &self.frame,
                            scaler: &mut self.scaler,
                            resizer: &mut self.resizer,
                            resized: &mut self.resized,
                        },
                    )?;
                }
                Ok(Received::Again | Received::Eof) => return Ok((frames, first_error)),
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert(e);
                    if errors >= MAX_CONSECUTIVE_RECEIVE_ERRORS {
                        return Ok((frames, first_error));
                    }
                }
            }
        }
    }
}

impl Decoder for CpuDecoder {
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        sink: &mut FrameSink<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let mut rejected = None;
        loop {
            match self.codec.send_packet(packet) {
                Ok(true) => break,
                // The decoder is full: take its frames out, then send the same packet again.
                Ok(false) => {
                    let (frames, err) = self.drain(sink)?;
                    if let Some(e) = err {
                        rejected.get_or_insert(e);
                    }
                    if frames == 0 {
                        // EAGAIN on send promises a frame to receive; a decoder that breaks the promise would
                        // spin here forever.
                        rejected
                            .get_or_insert_with(|| av_error(AVERROR_EAGAIN, "avcodec_send_packet"));
                        break;
                    }
                }
                Err(e) => {
                    rejected.get_or_insert(e);
                    break;
                }
            }
        }
        let (_, err) = self.drain(sink)?;
        Ok(rejected.or(err))
    }
}
