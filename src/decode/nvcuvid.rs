//! The direct NVDEC backend (feature `cuda`, [`NvdecDriver::Direct`](crate::NvdecDriver)): FFmpeg demuxes, its
//! bitstream filter turns MP4/MKV H.264 and HEVC packets into Annex B, and NVIDIA's parser (`nvcuvid`) drives
//! one NVDEC decoder with a decode queue — it holds up to [`DISPLAY_DELAY`] decoded pictures before handing
//! out the first, so several pictures are in flight on the engine while earlier ones are converted. Each
//! displayed picture is mapped on the operator's stream and handed to the transform stage as a
//! [`DeviceFrame`], which the CUDA kernel converts into its batch slot on the same stream; the mapping is
//! released once the kernel has read it (an event per mapping, at most [`OUTPUT_SURFACES`] mapped at once).
//!
//! The sequence callback creates the decoder (again when the size or format changes inside a stream) after
//! asking NVDEC whether this GPU decodes the stream; what it does not is [`VideoError::NvdecUnsupported`]
//! before the first frame, so the video moves to the CPU as with the hwaccel backend.

use std::collections::VecDeque;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaEvent, CudaStream, DriverError};

use crate::decode::backend::{Clock, Decoder, FrameInfo, FrameSink, Stop};
use crate::decode::frame::{Colour, DeviceFrame, FrameRef, Signal};
use crate::demux::Demuxer;
use crate::device::{cuda_error, GpuRuntime};
use crate::error::{AvError, VideoError};
use crate::ffi::cuda::bitstream::BitstreamFilter;
use crate::ffi::cuda::nvcuvid::{
    decoder_caps, Codec, CuvidError, DecoderSettings, DisplayInfo, Mapped, ParserEvents, PicParams,
    VideoDecoder, VideoFormat, VideoParser, CHROMA_420,
};
use crate::ffi::packet::Packet;

/// Decoded pictures the parser holds before displaying the first: NVIDIA recommends 2-4 to keep the engine
/// busy while pictures are converted.
pub(crate) const DISPLAY_DELAY: u32 = 4;
/// Pictures mapped for CUDA at once (one being converted, the others waiting for their kernels).
pub(crate) const OUTPUT_SURFACES: usize = 3;
/// NVDEC's largest decode surface count.
const MAX_DECODE_SURFACES: u32 = 32;
/// The parser's timestamp for a packet that has none (the clock then counts on from the previous frame).
const NO_TIMESTAMP: i64 = i64::MIN;

/// The nvcuvid codec and the bitstream filter (if any) for a stream framefeed decodes directly; `None` for
/// codecs left to libavcodec's hwaccel.
pub(crate) fn direct_codec(codec: &str) -> Option<(Codec, Option<&'static str>)> {
    match codec {
        "h264" => Some((Codec::H264, Some("h264_mp4toannexb"))),
        "hevc" => Some((Codec::Hevc, Some("hevc_mp4toannexb"))),
        "vp8" => Some((Codec::Vp8, None)),
        "vp9" => Some((Codec::Vp9, None)),
        "av1" => Some((Codec::Av1, None)),
        _ => None,
    }
}

/// How many decode surfaces a sequence gets: NVDEC's minimum for it plus the display queue and two more, so
/// that the parser never waits for a surface the display queue holds; at most NVDEC's 32.
pub(crate) fn decode_surfaces(min: u8) -> u32 {
    (u32::from(min) + DISPLAY_DELAY + 2)
        .min(MAX_DECODE_SURFACES)
        .max(u32::from(min))
}

/// The timestamps of packets the demuxer marked discarded (before an MP4 edit list's start: decoded as
/// references, never shown), so that their pictures are not displayed, as libavcodec drops them. A picture
/// comes out within the stream's reordering depth of its packet, so only the last [`Discarded::KEPT`] are
/// kept: older ones whose picture never came (a damaged one) are forgotten, never piled up.
#[derive(Debug, Default)]
pub(crate) struct Discarded(VecDeque<i64>);

impl Discarded {
    /// Timestamps kept: far more than any reordering depth (H.264 and HEVC: at most 16) plus the display
    /// queue.
    pub(crate) const KEPT: usize = 64;

    /// A discarded packet with timestamp `ts` was sent to the parser.
    pub(crate) fn add(&mut self, ts: i64) {
        if self.0.len() == Self::KEPT {
            self.0.pop_front();
        }
        self.0.push_back(ts);
    }

    /// Whether the picture displayed with timestamp `ts` is a discarded packet's (then forgotten).
    pub(crate) fn take(&mut self, ts: i64) -> bool {
        match self.0.iter().position(|&t| t == ts) {
            Some(i) => {
                self.0.remove(i);
                true
            }
            None => false,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

/// A sequence's format as the kernel reads its pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// The displayed picture's size and its offset in the surface.
    pub(crate) size: (usize, usize),
    pub(crate) offset: (usize, usize),
    /// Rows of the luma plane in the mapped surface (the chroma plane starts after them, rounded up to even).
    pub(crate) surface_rows: usize,
    pub(crate) high_depth: bool,
}

impl Geometry {
    /// From the parser's format; `Err` when its display area is empty or outside the coded picture.
    pub(crate) fn of(format: &VideoFormat) -> Result<Self, String> {
        let [left, top, right, bottom] = format.display_area;
        let (cw, ch) = (format.coded_width as i64, format.coded_height as i64);
        let (l, t, r, b) = (
            i64::from(left),
            i64::from(top),
            i64::from(right),
            i64::from(bottom),
        );
        if l < 0 || t < 0 || r <= l || b <= t || r > cw || b > ch {
            return Err(format!(
                "display area ({left}, {top})-({right}, {bottom}) outside the coded {cw}x{ch} picture"
            ));
        }
        // Chroma is subsampled 2x2: a display area starting on an odd row or column has no chroma sample of
        // its own; take the even one before (such streams do not occur in practice).
        let (l, t) = (l & !1, t & !1);
        Ok(Self {
            size: ((r - l) as usize, (b - t) as usize),
            offset: (l as usize, t as usize),
            surface_rows: ch as usize,
            high_depth: format.bit_depth_luma_minus8 > 0,
        })
    }

    /// The kernel's view of a picture mapped at `mapped`.
    pub(crate) fn device_frame(&self, mapped: Mapped, colour: Colour) -> DeviceFrame {
        let pitch = u64::from(mapped.pitch);
        let sample = if self.high_depth { 2 } else { 1 };
        let (x, y) = (self.offset.0 as u64, self.offset.1 as u64);
        // NVDEC lays the chroma plane out after an even number of luma rows.
        let chroma_plane = mapped.ptr + pitch * ((self.surface_rows as u64 + 1) & !1);
        DeviceFrame {
            luma: mapped.ptr + y * pitch + x * sample,
            // Interleaved UV: column x/2 of pairs is byte x * sample (x even).
            chroma: chroma_plane + (y / 2) * pitch + x * sample,
            luma_pitch: i32::try_from(mapped.pitch).unwrap_or(i32::MAX),
            chroma_pitch: i32::try_from(mapped.pitch).unwrap_or(i32::MAX),
            width: self.size.0,
            height: self.size.1,
            high_depth: self.high_depth,
            colour,
            // The caller sets the sequence's (`State::signal`).
            signal: Signal::default(),
        }
    }
}

/// NVDEC driven through nvcuvid.
pub(crate) struct NvcuvidDecoder {
    /// Dropped before the state (the parser holds no reference into it).
    parser: VideoParser,
    /// The stream's out-of-band headers, for a new parser after a seek.
    header: Vec<u8>,
    /// A seek made a new parser: the headers go in band before the next packet (an open GOP's keyframe
    /// carries no parameter sets, which the bitstream filter adds before IDR pictures only).
    resend_header: bool,
    filter: Option<BitstreamFilter>,
    filtered: Packet,
    state: State,
}

/// What the parser's callbacks work on, across packets.
struct State {
    codec: Codec,
    /// The current sequence's decoder, format and geometry.
    decoder: Option<VideoDecoder>,
    format: VideoFormat,
    geometry: Option<Geometry>,
    /// The stream's colour as the demuxer's probe decoded it (`AVColorSpace`, full range); the sequence's own
    /// signal description where the container left it unspecified.
    container_colour: (i32, bool),
    /// The container's transfer, primaries and HDR peak (the sequence's own transfer and primaries win).
    container_signal: Signal,
    clock: Clock,
    /// Mapped pictures and the event after the kernel that reads each, oldest first.
    in_flight: VecDeque<(Mapped, CudaEvent)>,
    /// Packets the demuxer marked discarded, whose pictures are not displayed.
    discarded: Discarded,
    spare_events: Vec<CudaEvent>,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Keeps the context, stream and kernel alive as long as the decoder and its mappings.
    _gpu: Arc<GpuRuntime>,
}

/// NVDEC cannot decode this stream: the video moves to the CPU (before its first frame), or fails.
fn unsupported(reason: impl Into<String>) -> Stop {
    Stop::Video(VideoError::NvdecUnsupported {
        reason: reason.into(),
    })
}

fn cuvid(e: CuvidError) -> Stop {
    Stop::Video(VideoError::Cuda {
        operation: e.operation,
        message: e.to_string(),
    })
}

fn driver(operation: &'static str) -> impl Fn(DriverError) -> Stop {
    move |e| Stop::Video(cuda_error(operation, e))
}

impl NvcuvidDecoder {
    /// Opens the direct decoder for the demuxer's stream, which [`direct_codec`] takes.
    pub(crate) fn open(
        demuxer: &Demuxer,
        gpu: &Arc<GpuRuntime>,
        codec: Codec,
        filter: Option<&str>,
    ) -> Result<Self, VideoError> {
        let stream = demuxer.stream();
        let ctx = gpu.stream().context().clone();
        ctx.bind_to_thread()
            .map_err(|e| cuda_error("binding the CUDA context", e))?;
        let filter = filter
            .map(|name| BitstreamFilter::new(name, demuxer.format(), stream.index))
            .transpose()?;
        let header = match (&filter, codec) {
            (Some(f), _) => f.extradata().to_vec(),
            // AV1's `av1C` box: four bytes of its own, then the sequence header OBU.
            (None, Codec::Av1) => demuxer
                .format()
                .extradata(stream.index)
                .get(4..)
                .unwrap_or(&[])
                .to_vec(),
            (None, _) => Vec::new(),
        };
        let parser =
            VideoParser::new(codec, DISPLAY_DELAY, &header).map_err(|e| VideoError::Cuda {
                operation: e.operation,
                message: e.to_string(),
            })?;
        let (space, range) = demuxer.format().colour(stream.index);
        tracing::debug!(?codec, stream = stream.index, "opened nvcuvid parser");
        Ok(Self {
            parser,
            header,
            resend_header: false,
            filter,
            filtered: Packet::new()?,
            state: State {
                codec,
                decoder: None,
                format: VideoFormat::default(),
                geometry: None,
                container_colour: (
                    space,
                    range == ffmpeg_sys_next::AVColorRange::AVCOL_RANGE_JPEG as i32,
                ),
                container_signal: stream_signal(stream),
                clock: Clock::new(stream),
                in_flight: VecDeque::new(),
                discarded: Discarded::default(),
                spare_events: Vec::new(),
                ctx,
                stream: gpu.stream().clone(),
                _gpu: gpu.clone(),
            },
        })
    }
}

/// The transfer, primaries and HDR peak the container (or the codec parameters) give a stream, as
/// [`StreamInfo`](crate::info::StreamInfo) names them.
fn stream_signal(stream: &crate::info::StreamInfo) -> Signal {
    use crate::info::DynamicRange;
    let transfer = match stream.dynamic_range() {
        DynamicRange::Pq => 16,
        DynamicRange::Hlg => 18,
        _ => 2,
    };
    let primaries = match stream.color_primaries.as_deref() {
        Some("bt709") => 1,
        Some("bt2020") => 9,
        Some("smpte432") => 12,
        _ => 2,
    };
    let peak = stream
        .content_light
        .map(|l| l.max_cll as f32)
        .filter(|p| *p > 0.0)
        .or_else(|| {
            stream
                .mastering_display
                .and_then(|m| m.max_luminance)
                .map(|l| l as f32)
        })
        .filter(|p| *p > 0.0)
        .map(|p| p / 100.0);
    Signal {
        transfer,
        primaries,
        peak,
    }
}

impl State {
    /// The colour matrix and range of the current sequence: the container's (as libavcodec reported them),
    /// else the sequence's signal description.
    fn colour(&self) -> Colour {
        const UNSPECIFIED: i32 = 2;
        let (space, full) = self.container_colour;
        let own = i32::from(self.format.matrix_coefficients);
        Colour {
            colorspace: if space == UNSPECIFIED && own != 0 {
                own
            } else {
                space
            },
            full_range: full || self.format.full_range(),
        }
    }

    /// The transfer and primaries of the current sequence (its signal description's, else the container's) and
    /// the container's HDR peak.
    fn signal(&self) -> Signal {
        const UNSPECIFIED: i32 = 2;
        let own = |v: u8| Some(i32::from(v)).filter(|v| *v != 0 && *v != UNSPECIFIED);
        Signal {
            transfer: own(self.format.transfer_characteristics)
                .unwrap_or(self.container_signal.transfer),
            primaries: own(self.format.color_primaries).unwrap_or(self.container_signal.primaries),
            peak: self.container_signal.peak,
        }
    }

    fn on_sequence(&mut self, format: &VideoFormat) -> Result<u32, Stop> {
        if format.chroma_format != CHROMA_420 {
            return Err(unsupported(format!(
                "NVDEC decodes this {:?} stream in chroma format {}, and framefeed's kernel reads 4:2:0 only",
                self.codec, format.chroma_format
            )));
        }
        let depth = u32::from(format.bit_depth_luma_minus8);
        let caps = decoder_caps(self.codec, depth).map_err(cuvid)?;
        let (w, h) = (format.coded_width, format.coded_height);
        let bits = depth + 8;
        if !caps.supported {
            return Err(unsupported(format!(
                "this GPU's NVDEC does not decode {:?} at {bits} bits",
                self.codec
            )));
        }
        let macroblocks = u64::from(w.div_ceil(16)) * u64::from(h.div_ceil(16));
        if w < caps.min.0
            || h < caps.min.1
            || w > caps.max.0
            || h > caps.max.1
            || macroblocks > u64::from(caps.max_macroblocks)
        {
            return Err(unsupported(format!(
                "{w}x{h} is outside this GPU's NVDEC sizes for {:?} at {bits} bits ({}x{} to {}x{})",
                self.codec, caps.min.0, caps.min.1, caps.max.0, caps.max.1
            )));
        }
        let geometry = Geometry::of(format).map_err(unsupported)?;
        let settings = DecoderSettings {
            codec: format.codec,
            coded: (w, h),
            bit_depth_minus8: depth,
            decode_surfaces: decode_surfaces(format.min_num_decode_surfaces),
            output_surfaces: OUTPUT_SURFACES as u32,
        };
        self.format = *format;
        self.geometry = Some(geometry);
        if self.decoder.as_ref().map(VideoDecoder::settings) == Some(&settings) {
            return Ok(settings.decode_surfaces);
        }
        // A new sequence of another size or format: the pictures still mapped are read first.
        self.release(0)?;
        self.decoder = None;
        tracing::debug!(?settings, ?format, "creating the NVDEC decoder");
        self.decoder = Some(VideoDecoder::create(settings).map_err(cuvid)?);
        Ok(settings.decode_surfaces)
    }

    /// Unmaps the oldest mappings (waiting for the kernels that read them) until at most `keep` are left.
    fn release(&mut self, keep: usize) -> Result<(), Stop> {
        while self.in_flight.len() > keep {
            let Some((mapped, event)) = self.in_flight.pop_front() else {
                break;
            };
            event
                .synchronize()
                .map_err(driver("waiting for the conversion of an NVDEC picture"))?;
            if let Some(decoder) = &mut self.decoder {
                decoder.unmap(mapped).map_err(cuvid)?;
            }
            self.spare_events.push(event);
        }
        Ok(())
    }

    fn on_display(&mut self, display: &DisplayInfo, sink: &mut FrameSink<'_>) -> Result<(), Stop> {
        if self.discarded.take(display.timestamp) {
            return Ok(());
        }
        let (Some(decoder), Some(geometry)) = (&mut self.decoder, self.geometry) else {
            return Err(cuvid(CuvidError {
                operation: "displaying a picture",
                code: 0,
                message: "the parser displayed a picture before any sequence".to_owned(),
            }));
        };
        let progressive = self.format.progressive_sequence != 0;
        let mapped = decoder
            .map(display, progressive, self.stream.cu_stream().cast())
            .map_err(cuvid)?;
        let mut frame = geometry.device_frame(mapped, self.colour());
        frame.signal = self.signal();
        let ts = (display.timestamp != NO_TIMESTAMP).then_some(display.timestamp);
        let info = FrameInfo {
            width: geometry.size.0,
            height: geometry.size.1,
            pts: self.clock.at(ts, None),
            packet_pts: ts,
            // NVDEC conceals errors and does not say so per picture here.
            corrupt: false,
            damaged: false,
        };
        let delivered = sink(info, FrameRef::Device(&frame));
        // Whatever the sink did, the mapping is released only after the work it queued on the stream.
        let event = match self.spare_events.pop() {
            Some(e) => Ok(e),
            None => self.ctx.new_event(None),
        }
        .map_err(driver("creating a CUDA event"))?;
        event
            .record(&self.stream)
            .map_err(driver("recording a CUDA event"))?;
        self.in_flight.push_back((mapped, event));
        self.release(OUTPUT_SURFACES - 1)?;
        delivered
    }
}

impl Drop for State {
    fn drop(&mut self) {
        // The kernels reading mapped pictures finish before the decoder (and its surfaces) goes.
        for (_, event) in self.in_flight.drain(..) {
            let _ = event.synchronize();
        }
    }
}

/// The parser's callbacks during one packet: the state, the sink of this `decode` call, and why it stopped.
struct Events<'a, 'b> {
    state: &'a mut State,
    sink: &'a mut FrameSink<'b>,
    stop: Option<Stop>,
}

impl Events<'_, '_> {
    fn keep(&mut self, result: Result<(), Stop>) -> bool {
        match result {
            Ok(()) => true,
            Err(stop) => {
                self.stop.get_or_insert(stop);
                false
            }
        }
    }
}

impl ParserEvents for Events<'_, '_> {
    fn sequence(&mut self, format: &VideoFormat) -> Option<u32> {
        if self.stop.is_some() {
            return None;
        }
        match self.state.on_sequence(format) {
            Ok(n) => Some(n),
            Err(stop) => {
                self.stop = Some(stop);
                None
            }
        }
    }

    fn decode(&mut self, picture: &mut PicParams) -> bool {
        if self.stop.is_some() {
            return false;
        }
        let result = match &self.state.decoder {
            Some(d) => d.decode(picture).map_err(cuvid),
            None => Err(cuvid(CuvidError {
                operation: "decoding a picture",
                code: 0,
                message: "the parser sent a picture before any sequence".to_owned(),
            })),
        };
        self.keep(result)
    }

    fn display(&mut self, display: &DisplayInfo) -> bool {
        if self.stop.is_some() {
            return false;
        }
        let result = self.state.on_display(display, self.sink);
        self.keep(result)
    }
}

impl NvcuvidDecoder {
    fn parse(
        parser: &mut VideoParser,
        state: &mut State,
        payload: Option<&[u8]>,
        timestamp: i64,
        sink: &mut FrameSink<'_>,
    ) -> Result<(), Stop> {
        let mut events = Events {
            state,
            sink,
            stop: None,
        };
        let parsed = parser.parse(payload, timestamp, &mut events);
        if let Some(stop) = events.stop {
            return Err(stop);
        }
        parsed.map_err(cuvid)
    }
}

impl Decoder for NvcuvidDecoder {
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        sink: &mut FrameSink<'_>,
    ) -> Result<Option<AvError>, Stop> {
        self.state
            .ctx
            .bind_to_thread()
            .map_err(driver("binding the CUDA context"))?;
        let Self {
            parser,
            header,
            resend_header,
            filter,
            filtered,
            state,
        } = self;
        if std::mem::take(resend_header) && filter.is_some() && !header.is_empty() {
            Self::parse(parser, state, Some(header), NO_TIMESTAMP, sink)?;
        }
        match packet {
            None => Self::parse(parser, state, None, 0, sink)?,
            Some(packet) => {
                let timestamp = packet.pts().unwrap_or(NO_TIMESTAMP);
                if packet.is_discarded() && timestamp != NO_TIMESTAMP {
                    state.discarded.add(timestamp);
                }
                match filter {
                    Some(f) => {
                        let mut stop = None;
                        let filtered_ok = f.filter(packet, filtered, &mut |out| {
                            if stop.is_none() {
                                if let Err(s) =
                                    Self::parse(parser, state, Some(out.data()), timestamp, sink)
                                {
                                    stop = Some(s);
                                }
                            }
                            Ok(())
                        });
                        if let Some(s) = stop {
                            return Err(s);
                        }
                        // A packet the filter cannot read is corrupt input: skipped, as libavcodec does.
                        if let Err(e) = filtered_ok {
                            return Ok(Some(e));
                        }
                    }
                    None => Self::parse(parser, state, Some(packet.data()), timestamp, sink)?,
                }
            }
        }
        Ok(None)
    }

    /// A seek: the parser, with the pictures it still queues (never displayed) and the references it tracks,
    /// is made again from the stream's headers; the NVDEC decoder and its surfaces are kept (the next
    /// sequence callback finds the same settings), and so are the mapped pictures, released as their
    /// conversions finish.
    fn flush(&mut self) -> Result<(), Stop> {
        self.state
            .ctx
            .bind_to_thread()
            .map_err(driver("binding the CUDA context"))?;
        self.parser =
            VideoParser::new(self.state.codec, DISPLAY_DELAY, &self.header).map_err(cuvid)?;
        if let Some(filter) = &mut self.filter {
            filter.flush();
        }
        self.resend_header = true;
        self.state.discarded.clear();
        self.state.clock.reset();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(coded: (u32, u32), area: [i32; 4], depth: u8) -> VideoFormat {
        VideoFormat {
            coded_width: coded.0,
            coded_height: coded.1,
            display_area: area,
            bit_depth_luma_minus8: depth,
            ..Default::default()
        }
    }

    #[test]
    fn discarded_pictures_are_taken_once_and_at_most_the_last_64_kept() {
        let mut d = Discarded::default();
        for ts in [-3, -2, -1] {
            d.add(ts);
        }
        assert!(d.take(-2) && !d.take(-2), "taken once");
        assert!(!d.take(0), "a shown picture's timestamp");
        assert!(d.take(-1) && d.take(-3));
        // A thousand discarded packets whose pictures never came: only the last 64 are held.
        for ts in 0..1000 {
            d.add(ts);
        }
        assert_eq!(d.0.len(), Discarded::KEPT);
        assert!(!d.take(935) && d.take(936) && d.take(999));
        d.clear();
        assert!(!d.take(998));
    }

    #[test]
    fn codecs_taken_directly_and_their_filters() {
        assert_eq!(
            direct_codec("h264"),
            Some((Codec::H264, Some("h264_mp4toannexb")))
        );
        assert_eq!(
            direct_codec("hevc"),
            Some((Codec::Hevc, Some("hevc_mp4toannexb")))
        );
        assert_eq!(direct_codec("vp9"), Some((Codec::Vp9, None)));
        assert_eq!(direct_codec("mpeg4"), None, "left to the hwaccel");
    }

    #[test]
    fn decode_surfaces_cover_the_display_queue_within_nvdecs_limit() {
        assert_eq!(decode_surfaces(0), DISPLAY_DELAY + 2);
        assert_eq!(decode_surfaces(17), 17 + DISPLAY_DELAY + 2);
        assert_eq!(decode_surfaces(30), 32);
        // A minimum above 32 (never seen) is kept: fewer would decode wrongly.
        assert_eq!(decode_surfaces(40), 40);
    }

    #[test]
    fn geometry_of_1080p_h264_crops_the_coded_rows() {
        let g = Geometry::of(&format((1920, 1088), [0, 0, 1920, 1080], 0)).unwrap();
        assert_eq!(g.size, (1920, 1080));
        let f = g.device_frame(
            Mapped {
                ptr: 0x1000_0000,
                pitch: 2048,
            },
            Colour {
                colorspace: 1,
                full_range: false,
            },
        );
        assert_eq!(f.luma, 0x1000_0000);
        assert_eq!(f.chroma, 0x1000_0000 + 2048 * 1088);
        assert_eq!((f.width, f.height, f.high_depth), (1920, 1080, false));
    }

    #[test]
    fn odd_heights_put_chroma_after_an_even_row_count_and_offsets_move_both_planes() {
        let g = Geometry::of(&format((129, 129), [0, 0, 129, 129], 0)).unwrap();
        let f = g.device_frame(
            Mapped { ptr: 0, pitch: 256 },
            Colour {
                colorspace: 2,
                full_range: false,
            },
        );
        assert_eq!(f.chroma, 256 * 130);
        assert_eq!((f.width, f.height), (129, 129));
        // 10-bit, a display area inset by (4, 2): two bytes a sample, chroma one row down.
        let g = Geometry::of(&format((160, 160), [4, 2, 150, 146], 2)).unwrap();
        let f = g.device_frame(
            Mapped { ptr: 0, pitch: 512 },
            Colour {
                colorspace: 9,
                full_range: false,
            },
        );
        assert_eq!(f.luma, 2 * 512 + 4 * 2);
        assert_eq!(f.chroma, 160 * 512 + 512 + 4 * 2);
        assert_eq!((f.width, f.height, f.high_depth), (146, 144, true));
    }

    #[test]
    fn display_areas_outside_the_picture_are_refused() {
        for area in [
            [0, 0, 0, 10],
            [0, 0, 2000, 1080],
            [-2, 0, 100, 100],
            [10, 10, 5, 20],
        ] {
            assert!(
                Geometry::of(&format((1920, 1088), area, 0)).is_err(),
                "{area:?}"
            );
        }
    }
}
