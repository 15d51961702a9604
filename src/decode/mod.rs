//! Decoder backends behind one trait. The CPU backend ([`cpu::CpuDecoder`], libavcodec) is the only one so
//! far; a GPU backend plugs in behind the same [`Decoder`] trait.

pub(crate) mod cpu;

use crate::error::{AvError, VideoError};
use crate::ffi::packet::Packet;

/// A decoded frame's size and presentation time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FrameInfo {
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// Presentation time in seconds.
    pub(crate) pts: f64,
}

/// Why decoding of a video stops early.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The operator is shutting down.
    Shutdown,
    /// The video cannot go on.
    Video(VideoError),
}

/// Writes the current frame as RGB24 into a slice of exactly `width * height * 3` bytes.
pub(crate) type RgbWriter<'a> = dyn FnMut(&mut [u8]) -> Result<(), AvError> + 'a;

/// Receives each decoded frame with a writer that converts it into the slot the sink chooses.
pub(crate) type FrameSink<'a> = dyn FnMut(FrameInfo, &mut RgbWriter<'_>) -> Result<(), Stop> + 'a;

/// A decoder backend: compressed packets in, frames out.
pub(crate) trait Decoder: Send {
    /// Sends `packet` (`None`: the stream ended, drain everything) and hands every frame it completes to
    /// `sink`, in presentation order. `Ok(Some(e))`: the decoder rejected data (corrupt input); decoding can
    /// go on with the next packet.
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        sink: &mut FrameSink<'_>,
    ) -> Result<Option<AvError>, Stop>;
}
