//! What every decoder backend is and shares: the [`Decoder`] trait, the frame sink it hands frames to, why
//! decoding stops ([`Stop`]), and the send-packet / receive-frame loop of libavcodec ([`DecodeLoop`]) with its
//! clock. A leaf of the decode stage: the backends and the worker use it.

use crate::decode::damage::DamageWatch;
use crate::decode::frame::FrameRef;
use crate::demux::FrameLimits;
use crate::error::{AvError, VideoError};
use crate::ffi::codec::{CodecContext, Received};
use crate::ffi::frame::AvFrame;
use crate::ffi::packet::Packet;
use crate::ffi::{av_error, AVERROR_EAGAIN};

/// A decoded frame's size and presentation time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FrameInfo {
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// Presentation time in seconds.
    pub(crate) pts: f64,
    /// The timestamp of the packet that carried the picture (stream units), as the demuxer gave it: how the
    /// sampling stage tells a frame's display index from its video's index.
    pub(crate) packet_pts: Option<i64>,
    /// The decoder says the picture may be damaged (a reference it needed was missing, or concealed errors).
    pub(crate) corrupt: bool,
    /// The picture is damaged by [`DamageWatch`]'s rule: flagged by the decoder, or decoded after damage in
    /// its GOP.
    pub(crate) damaged: bool,
}

impl From<VideoError> for Stop {
    fn from(e: VideoError) -> Self {
        Stop::Video(e)
    }
}

/// Consecutive errors from `receive_frame` after which draining gives up (a decoder that keeps failing).
const MAX_CONSECUTIVE_RECEIVE_ERRORS: usize = 64;

/// The send-packet / receive-frame loop every libavcodec backend runs: an open decoder, the frame it decodes
/// into, and the stream's clock. Each backend says what to do with a decoded frame.
pub(crate) struct DecodeLoop {
    pub(crate) codec: CodecContext,
    frame: AvFrame,
    clock: Clock,
    limits: FrameLimits,
    damage: DamageWatch,
    /// The decoder's logged errors already counted as damage.
    logged_errors: u64,
    /// Damage is marked by decode order, not by the packets' times (`Decoder::damage_by_order`).
    by_order: bool,
}

impl DecodeLoop {
    pub(crate) fn new(
        codec: CodecContext,
        stream: &crate::info::StreamInfo,
        limits: FrameLimits,
    ) -> Result<Self, AvError> {
        Ok(Self {
            codec,
            frame: AvFrame::new()?,
            clock: Clock::new(stream),
            limits,
            damage: DamageWatch::new(),
            logged_errors: 0,
            by_order: false,
        })
    }

    /// Sends `packet` (`None`: drain) and hands every frame completed to `on_frame`, with its size and time.
    /// `Ok(Some(e))`: the decoder rejected data (corrupt input); decoding can go on with the next packet.
    pub(crate) fn decode(
        &mut self,
        packet: Option<&Packet>,
        on_frame: &mut dyn FnMut(&AvFrame, FrameInfo) -> Result<(), Stop>,
    ) -> Result<Option<AvError>, Stop> {
        self.decode_marked(packet, false, on_frame)
    }

    /// [`decode`](Self::decode), with the packet taken as damaged when `damaged` (the demuxer lost data right
    /// after it: where its resync started, this packet's own data may be overwritten).
    pub(crate) fn decode_marked(
        &mut self,
        packet: Option<&Packet>,
        damaged: bool,
        on_frame: &mut dyn FnMut(&AvFrame, FrameInfo) -> Result<(), Stop>,
    ) -> Result<Option<AvError>, Stop> {
        let mut rejected = None;
        if let Some(packet) = packet {
            if packet.follows_lost_data() {
                self.damage.lost_before_next();
            }
            let pts = packet.pts().filter(|_| !self.by_order);
            self.damage.sent(pts, packet.is_key());
            if packet.is_corrupt() || damaged {
                self.damage.sent_damaged();
            }
        }
        loop {
            match self.codec.send_packet(packet) {
                Ok(true) => break,
                // The decoder is full: take its frames out, then send the same packet again.
                Ok(false) => {
                    let (frames, err) = self.drain(on_frame)?;
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
                    // With frame threading the error may be an earlier packet's: counted from the oldest
                    // packet whose frame has not come out.
                    self.damage.rejected_in_flight();
                    rejected.get_or_insert(e);
                    break;
                }
            }
        }
        let (_, err) = self.drain(on_frame)?;
        let rejected = rejected.or(err);
        if rejected.is_some() {
            // The decoder refuses frames over the limit before allocating them (`max_pixels`): a stream whose
            // parameter sets announce such frames fails as too large, not as corrupt, after the frames it
            // still holds from before (drained: the video ends here).
            let (width, height) = self.codec.frame_size();
            if width > 0 && height > 0 {
                if let Err(too_large) = self.limits.check(width, height) {
                    if packet.is_some() && self.codec.send_packet(None).is_ok() {
                        self.drain(on_frame)?;
                    }
                    return Err(Stop::Video(too_large));
                }
            }
        }
        Ok(rejected)
    }

    /// Errors the decoder logged since last asked (FFmpeg's frame-threaded H.264 decoder reports there what it
    /// neither conceals nor flags): damage from the oldest packet whose frame has not come out.
    fn note_logged_errors(&mut self) {
        let logged = self.codec.decode_errors();
        if logged > self.logged_errors {
            self.logged_errors = logged;
            self.damage.rejected_in_flight();
        }
    }

    /// Marks damage by decode order, as a stream without times is marked (see `Decoder::damage_by_order`).
    pub(crate) fn damage_by_order(&mut self) {
        self.by_order = true;
    }

    /// The damage signals this decoder gave so far (see [`DamageWatch::signals`]).
    pub(crate) fn signals(&self) -> u64 {
        self.damage.signals()
    }

    /// Drops the frames and references the decoder holds (after a seek).
    pub(crate) fn flush(&mut self) {
        self.codec.flush();
        self.clock.reset();
        self.damage.restart();
        self.logged_errors = self.codec.decode_errors();
    }

    /// Receives every frame the decoder has ready. Returns how many, and the first receive error, if any.
    fn drain(
        &mut self,
        on_frame: &mut dyn FnMut(&AvFrame, FrameInfo) -> Result<(), Stop>,
    ) -> Result<(usize, Option<AvError>), Stop> {
        let mut first_error = None;
        let mut errors = 0;
        let mut frames = 0;
        loop {
            match self.codec.receive_frame(&mut self.frame) {
                Ok(Received::Frame) => {
                    errors = 0;
                    frames += 1;
                    self.note_logged_errors();
                    let corrupt = self.frame.is_corrupt();
                    let info = FrameInfo {
                        width: self.frame.width() as usize,
                        height: self.frame.height() as usize,
                        pts: self.clock.pts(&self.frame),
                        packet_pts: self.frame.pts(),
                        corrupt,
                        damaged: self
                            .damage
                            .frame(self.frame.pts().filter(|_| !self.by_order), corrupt),
                    };
                    on_frame(&self.frame, info)?;
                }
                Ok(Received::Again | Received::Eof) => return Ok((frames, first_error)),
                Err(e) => {
                    self.damage.rejected_in_flight();
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

/// Presentation times of a stream's frames in seconds; frames without a timestamp follow the previous one by
/// their duration (or the stream's nominal frame interval).
pub(crate) struct Clock {
    /// Seconds per timestamp unit.
    time_base: f64,
    /// Nominal frame duration.
    frame_duration: f64,
    last: Option<f64>,
}

impl Clock {
    pub(crate) fn new(stream: &crate::info::StreamInfo) -> Self {
        Self {
            time_base: stream.seconds_per_unit(),
            frame_duration: stream.fps().filter(|f| *f > 0.0).map_or(0.0, |f| 1.0 / f),
            last: None,
        }
    }

    /// The time of the frame just decoded.
    pub(crate) fn pts(&mut self, frame: &AvFrame) -> f64 {
        self.at(frame.timestamp(), frame.duration())
    }

    /// The time of a frame with timestamp `ts` and duration `duration` (stream units), if known.
    pub(crate) fn at(&mut self, ts: Option<i64>, duration: Option<i64>) -> f64 {
        let pts = match ts {
            Some(ts) => ts as f64 * self.time_base,
            None => {
                let step = duration.map_or(self.frame_duration, |d| d as f64 * self.time_base);
                self.last.map_or(0.0, |p| p + step)
            }
        };
        self.last = Some(pts);
        pts
    }

    /// Forgets the last frame's time (decoding starts again elsewhere, after a seek).
    pub(crate) fn reset(&mut self) {
        self.last = None;
    }
}

/// Why decoding of a video stops early.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The operator is shutting down.
    Shutdown,
    /// The video cannot go on. [`VideoError::NvdecUnsupported`] from the NVDEC backend before any frame: the
    /// video moves to the CPU backend instead, unless the config forbids it.
    Video(VideoError),
}

/// Receives each decoded frame, to convert into the slot the sink chooses.
pub(crate) type FrameSink<'a> = dyn FnMut(FrameInfo, FrameRef<'_>) -> Result<(), Stop> + 'a;

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

    /// Drops the pictures and references the decoder holds, undelivered, to decode from a new point (after a
    /// seek: the next packet is a keyframe).
    fn flush(&mut self) -> Result<(), Stop>;

    /// Skips, from the next packet on, the pictures nothing refers to, where the backend can (the sampling
    /// stage needs only some frames); returns whether it does.
    fn skip_unreferenced(&mut self, skip: bool) -> bool {
        let _ = skip;
        false
    }

    /// The packets' times are framefeed's, not the stream's (a stream without timestamps, read by the sampling
    /// stage or the reader with the times its index gave): damage is marked as a plain run of that stream marks
    /// it, which has no times to go by (in decode order), so every API marks the same frames.
    fn damage_by_order(&mut self) {}
}
