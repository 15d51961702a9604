//! The NVDEC backends' entry (feature `cuda`): the direct nvcuvid backend (`nvcuvid.rs`) for the codecs it
//! takes, and here libavcodec's NVDEC hwaccel on the operator's CUDA context and stream
//! (the device layer's [`GpuRuntime`]). Frames stay in GPU memory as NV12/P010 surfaces, handed to the
//! transform stage as [`DeviceFrame`]s; the CUDA kernel converts each one straight into its slot of a pooled
//! device buffer, on the same stream, so no host synchronisation is needed per frame. Streams NVDEC cannot
//! decode move to the CPU backend for that video ([`nvdec_support`](fn@super::nvdec_support) before opening, or
//! libavcodec offering only software formats when NVDEC refuses the stream, reported as
//! [`VideoError::NvdecUnsupported`]). For the sampling stage, a picture some later sequence takes is copied out
//! of its surface into device memory of its own ([`HeldPicture`]).

// The direct NVDEC backend, a part of this module (it exists only with the feature).
#[path = "nvcuvid.rs"]
mod nvcuvid;

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DevicePtr};

use super::backend::{DecodeLoop, Decoder, FrameSink, Stop};
use crate::decode::frame::{Colour, DeviceFrame, FrameRef, Signal};
use crate::demux::Demuxer;
use crate::device::{cuda_error, GpuRuntime};
use crate::error::{AvError, VideoError};
use crate::ffi::codec::CodecContext;
use crate::ffi::cuda::copy::{copy_plane, PitchedPlane};
use crate::ffi::cuda::hw::{FormatChoice, SurfaceError};
use crate::ffi::frame::AvFrame;
use crate::ffi::packet::Packet;
use crate::settings::config::NvdecDriver;
use nvcuvid::{direct_codec, NvcuvidDecoder};

/// Opens NVDEC for the demuxer's chosen stream on `gpu`: the direct nvcuvid backend for the codecs it takes
/// (unless `driver` asks for the hwaccel), libavcodec's hwaccel for the others.
pub(crate) fn open(
    demuxer: &Demuxer,
    gpu: &Arc<GpuRuntime>,
    driver: NvdecDriver,
) -> Result<Box<dyn Decoder>, VideoError> {
    if driver == NvdecDriver::Direct {
        if let Some((codec, filter)) = direct_codec(&demuxer.stream().codec) {
            return Ok(Box::new(NvcuvidDecoder::open(demuxer, gpu, codec, filter)?));
        }
    }
    Ok(Box::new(CudaDecoder::open(demuxer, gpu)?))
}

/// Copies a decoded picture (an NVDEC surface mapped for the sampling stage) into device memory of its own on
/// `gpu`, so that the surface goes back to the decoder while later sequences still take the picture
/// (overlapping clips, a frame rate above the video's): each converts it with its own crop. Stream-ordered on
/// the operator's stream: the copy is done before anything enqueued after it reads it, and before the surface
/// is unmapped.
pub(crate) fn hold_picture(
    gpu: &Arc<GpuRuntime>,
    frame: &DeviceFrame,
) -> Result<HeldPicture, VideoError> {
    const OPERATION: &str = "copying a sampled picture out of NVDEC's surface";
    let sample = if frame.high_depth { 2 } else { 1 };
    // Luma: `width` samples a row; chroma: `ceil(width / 2)` interleaved pairs, `ceil(height / 2)` rows.
    let luma_row = frame.width * sample;
    let chroma_row = frame.width.div_ceil(2) * 2 * sample;
    let chroma_rows = frame.height.div_ceil(2);
    let pitch = chroma_row.next_multiple_of(PICTURE_PITCH_ALIGN);
    let chroma_start = pitch * frame.height;
    let len = chroma_start + pitch * chroma_rows;
    let stream = gpu.stream();
    let mut slice = stream
        .alloc_zeros::<u8>(len.max(1))
        .map_err(|e| cuda_error("allocating a sampled picture", e))?;
    let plane = |ptr: u64, pitch: i32| PitchedPlane {
        ptr,
        pitch: usize::try_from(pitch).unwrap_or(0),
    };
    let (luma, chroma) = (
        plane(frame.luma, frame.luma_pitch),
        plane(frame.chroma, frame.chroma_pitch),
    );
    copy_plane(stream, luma, &mut slice, 0, pitch, luma_row, frame.height)
        .and_then(|()| {
            copy_plane(
                stream,
                chroma,
                &mut slice,
                chroma_start,
                pitch,
                chroma_row,
                chroma_rows,
            )
        })
        .map_err(|e| cuda_error(OPERATION, e))?;
    let pitch = i32::try_from(pitch).map_err(|_| VideoError::Cuda {
        operation: OPERATION,
        message: format!("a row pitch of {pitch} bytes"),
    })?;
    let base = {
        let (base, _record_read) = slice.device_ptr(stream);
        base
    };
    Ok(HeldPicture {
        frame: DeviceFrame {
            luma: base,
            chroma: base + chroma_start as u64,
            luma_pitch: pitch,
            chroma_pitch: pitch,
            ..*frame
        },
        _slice: slice,
        _gpu: gpu.clone(),
    })
}

/// The row alignment of a held picture's planes (what CUDA's pitched allocations use).
const PICTURE_PITCH_ALIGN: usize = 256;

/// A decoded picture in device memory of its own ([`hold_picture`]), freed on the operator's stream when
/// dropped (after the conversions enqueued before).
pub(crate) struct HeldPicture {
    frame: DeviceFrame,
    _slice: CudaSlice<u8>,
    /// Keeps the context and stream alive as long as the picture.
    _gpu: Arc<GpuRuntime>,
}

impl HeldPicture {
    /// The kernel's view of the picture.
    pub(crate) fn frame(&self) -> &DeviceFrame {
        &self.frame
    }
}

/// libavcodec decoding on NVDEC.
pub(crate) struct CudaDecoder {
    receiver: DecodeLoop,
    /// What libavcodec's format negotiation chose: NVDEC, or software formats only.
    choice: Arc<FormatChoice>,
    /// Keeps the context, stream and libavcodec device alive as long as the decoder and its frames.
    _gpu: Arc<GpuRuntime>,
}

impl CudaDecoder {
    fn open(demuxer: &Demuxer, gpu: &Arc<GpuRuntime>) -> Result<Self, VideoError> {
        let stream = demuxer.stream();
        let (codec, choice) =
            CodecContext::open_cuda_decoder(demuxer.format(), stream.index, gpu.hw())?;
        tracing::debug!(decoder = %codec.decoder_name(), stream = stream.index, "opened NVDEC decoder");
        Ok(Self {
            receiver: DecodeLoop::new(codec, stream, demuxer.frame_limits())?,
            choice,
            _gpu: gpu.clone(),
        })
    }

    fn check_hardware(&self) -> Result<(), Stop> {
        match self.choice.hardware() {
            Some(false) => Err(unsupported(
                "libavcodec's NVDEC hwaccel refused the stream (codec profile or size this GPU does not decode)",
            )),
            _ => Ok(()),
        }
    }
}

/// NVDEC cannot decode this stream: the video moves to the CPU (before its first frame), or fails.
fn unsupported(reason: impl Into<String>) -> Stop {
    Stop::Video(VideoError::NvdecUnsupported {
        reason: reason.into(),
    })
}

/// The kernel's view of an NVDEC frame; software frames (libavcodec fell back) and layouts the kernel does not
/// read move the video to the CPU.
fn device_frame(frame: &AvFrame, width: usize, height: usize) -> Result<DeviceFrame, Stop> {
    let surface = match frame.cuda_surface() {
        Ok(s) => s,
        Err(SurfaceError::NotCuda) => return Err(unsupported("NVDEC gave a software frame")),
        Err(SurfaceError::Format(f)) => {
            return Err(unsupported(format!(
                "NVDEC decodes this stream to {f}, which framefeed's kernel does not read"
            )))
        }
    };
    Ok(DeviceFrame {
        luma: surface.luma,
        chroma: surface.chroma,
        luma_pitch: surface.luma_pitch,
        chroma_pitch: surface.chroma_pitch,
        width,
        height,
        high_depth: surface.high_depth,
        colour: Colour {
            colorspace: frame.colorspace(),
            full_range: frame.color_range()
                == ffmpeg_sys_next::AVColorRange::AVCOL_RANGE_JPEG as i32,
        },
        signal: Signal::of(frame),
    })
}

impl Decoder for CudaDecoder {
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        sink: &mut FrameSink<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let result = self.receiver.decode(packet, &mut |frame, info| {
            let source = device_frame(frame, info.width, info.height)?;
            sink(info, FrameRef::Device(&source))
        })?;
        // A hwaccel that failed to start shows as a send error with no frame: say why, so the video moves.
        self.check_hardware()?;
        Ok(result)
    }

    fn flush(&mut self) -> Result<(), Stop> {
        self.receiver.flush();
        Ok(())
    }

    fn damage_by_order(&mut self) {
        self.receiver.damage_by_order();
    }
}
