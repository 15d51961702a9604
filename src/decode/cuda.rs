//! The CUDA backend (feature `cuda`): libavcodec's NVDEC hwaccel on framefeed's own CUDA context and stream.
//! Frames stay in GPU memory as NV12/P010 surfaces; framefeed's kernel (`transform::gpu`) converts each one
//! straight into its slot of a pooled device buffer, on the same stream, so no host synchronisation is
//! needed per frame. Streams NVDEC cannot decode move to the CPU backend for that video ([`nvdec_support`]
//! before opening, or libavcodec offering only software formats when NVDEC refuses the stream).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtrMut, DriverError};
use parking_lot::Mutex;

use super::{Decoder, FrameSink, FrameSource, Receiver, Stop};
use crate::demux::Demuxer;
use crate::error::{AvError, VideoError};
use crate::ffi::codec::CodecContext;
use crate::ffi::cuda::hw::{HwDevice, SurfaceError};
use crate::ffi::cuda::{kernel, probe};
use crate::ffi::frame::Frame;
use crate::ffi::packet::Packet;
use crate::ffi::scale::{Filter, RgbRegion};
use crate::info::StreamInfo;
use crate::transform::gpu::{Colour, ConvertParams, Source};

/// A CUDA failure while decoding or converting, as a video error.
pub(crate) fn cuda_error(operation: &'static str, e: DriverError) -> VideoError {
    VideoError::Cuda {
        operation,
        message: e.to_string(),
    }
}

/// One operator's GPU: its device's (primary, shared) context, its own stream, the kernel, libavcodec's CUDA
/// device around them, and the pool of batch buffers. Fields drop in order: libavcodec's device first, the
/// context last.
pub(crate) struct GpuRuntime {
    hw: HwDevice,
    function: CudaFunction,
    pool: DevicePool,
    stream: Arc<CudaStream>,
}

impl GpuRuntime {
    /// Sets up CUDA device `ordinal`; `Err` says why it cannot be used (never panics: the driver is probed
    /// first, and cudarc's calls are guarded).
    pub(crate) fn new(ordinal: usize, max_free: usize) -> Result<Arc<Self>, String> {
        probe::usable(ordinal)?;
        let ctx = std::panic::catch_unwind(|| CudaContext::new(ordinal))
            .map_err(|_| "the CUDA driver library lacks a function framefeed needs".to_owned())?
            .map_err(|e| format!("creating a context on CUDA device {ordinal}: {e}"))?;
        let stream = ctx
            .new_stream()
            .map_err(|e| format!("creating a CUDA stream: {e}"))?;
        let function =
            kernel::load(&ctx).map_err(|e| format!("loading the conversion kernel: {e}"))?;
        let hw = HwDevice::new(ctx.cu_ctx().cast(), stream.cu_stream().cast())
            .map_err(|e| format!("libavcodec's CUDA device: {e}"))?;
        Ok(Arc::new(Self {
            hw,
            function,
            pool: DevicePool::new(stream.clone(), max_free),
            stream,
        }))
    }

    /// The stream every copy and kernel of this operator runs on.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// A device buffer of at least `len` bytes from the pool.
    pub(crate) fn acquire(&self, len: usize) -> Result<DeviceBuffer, VideoError> {
        self.pool.acquire(len)
    }

    /// Copies a batch assembled in host memory into a device buffer (one copy per batch).
    pub(crate) fn upload(&self, host: &[u8]) -> Result<DeviceBuffer, VideoError> {
        let mut buf = self.acquire(host.len())?;
        if !host.is_empty() {
            self.stream
                .memcpy_htod(host, &mut buf.slice_mut().slice_mut(..host.len()))
                .map_err(|e| cuda_error("uploading a CPU-decoded batch", e))?;
        }
        Ok(buf)
    }
}

struct PoolInner {
    free: Mutex<Vec<CudaSlice<u8>>>,
    max_free: usize,
    stream: Arc<CudaStream>,
}

/// Device buffers recycled like the host ones ([`crate::pool::BufferPool`]).
#[derive(Clone)]
pub(crate) struct DevicePool(Arc<PoolInner>);

impl DevicePool {
    fn new(stream: Arc<CudaStream>, max_free: usize) -> Self {
        Self(Arc::new(PoolInner {
            free: Mutex::new(Vec::new()),
            max_free,
            stream,
        }))
    }

    fn acquire(&self, len: usize) -> Result<DeviceBuffer, VideoError> {
        let recycled = crate::pool::take_best_fit(&mut self.0.free.lock(), len, CudaSlice::len);
        let slice = match recycled {
            Some(s) => s,
            None => self
                .0
                .stream
                .alloc_zeros::<u8>(len.max(1))
                .map_err(|e| cuda_error("allocating a batch buffer", e))?,
        };
        Ok(DeviceBuffer {
            slice: Some(slice),
            len,
            pool: Arc::downgrade(&self.0),
        })
    }
}

/// A batch's buffer in GPU memory; back to its pool when dropped.
pub(crate) struct DeviceBuffer {
    slice: Option<CudaSlice<u8>>,
    /// Bytes in use.
    len: usize,
    pool: std::sync::Weak<PoolInner>,
}

impl DeviceBuffer {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// The whole allocation (at least `len` bytes).
    pub(crate) fn slice(&self) -> &CudaSlice<u8> {
        self.slice.as_ref().expect("present until dropped")
    }

    fn slice_mut(&mut self) -> &mut CudaSlice<u8> {
        self.slice.as_mut().expect("present until dropped")
    }

    /// Zeroes bytes `range` (stream-ordered).
    pub(crate) fn zero(
        &mut self,
        stream: &Arc<CudaStream>,
        range: std::ops::Range<usize>,
    ) -> Result<(), VideoError> {
        if range.is_empty() {
            return Ok(());
        }
        stream
            .memset_zeros(&mut self.slice_mut().slice_mut(range))
            .map_err(|e| cuda_error("zeroing padding frames", e))
    }

    /// Moves bytes `src` to start at `dst` (ranges may overlap), through a temporary buffer.
    pub(crate) fn copy_within(
        &mut self,
        stream: &Arc<CudaStream>,
        src: std::ops::Range<usize>,
        dst: usize,
    ) -> Result<(), VideoError> {
        let n = src.len();
        if n == 0 {
            return Ok(());
        }
        let err = |e| cuda_error("compacting a partial sequence", e);
        let mut tmp = stream.alloc_zeros::<u8>(n).map_err(err)?;
        stream
            .memcpy_dtod(&self.slice().slice(src), &mut tmp)
            .map_err(err)?;
        stream
            .memcpy_dtod(&tmp, &mut self.slice_mut().slice_mut(dst..dst + n))
            .map_err(err)
    }

    /// Enqueues the kernel writing one frame into bytes `[start, start + len)` of this buffer.
    pub(crate) fn convert_into(
        &mut self,
        gpu: &GpuRuntime,
        mut params: ConvertParams,
        start: usize,
        len: usize,
    ) -> Result<(), VideoError> {
        assert!(
            params.output_bytes() <= len && start + len <= self.len,
            "the kernel's output must fit its sequence's region"
        );
        let stream = gpu.stream.clone();
        let (base, _record_write) = self.slice_mut().device_ptr_mut(&stream);
        params.out = base + start as u64;
        kernel::launch(&stream, &gpu.function, &params)
            .map_err(|e| cuda_error("launching the conversion kernel", e))
    }

    /// Copies the first `len` bytes to the host (waits for the stream).
    pub(crate) fn to_host(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, DriverError> {
        let mut host = vec![0u8; self.len];
        if self.len > 0 {
            stream.memcpy_dtoh(&self.slice().slice(..self.len), &mut host)?;
            stream.synchronize()?;
        }
        Ok(host)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let Some(slice) = self.slice.take() else {
            return;
        };
        if let Some(pool) = self.pool.upgrade() {
            let mut free = pool.free.lock();
            if free.len() < pool.max_free {
                free.push(slice);
            }
        }
        // Otherwise the slice is freed here (cudarc frees it on its stream, without panicking).
    }
}

/// Whether NVDEC (on Hopper and earlier, per NOTES.md section 3) can decode the stream, judged from what the
/// container says: codec, bit depth, chroma format and size. `Err` says why not. libavcodec has the last word
/// (it falls back to software when NVDEC refuses at run time, e.g. AV1 on GPUs without AV1 decoding), which
/// [`CudaDecoder`] reports as [`Stop::Fallback`].
pub(crate) fn nvdec_support(stream: &StreamInfo) -> Result<(), String> {
    let codec = stream.codec.as_str();
    // NVDEC's smallest and largest sizes per codec (NVIDIA Video Codec SDK, NVDEC application note, Ampere
    // and Hopper); libavcodec checks the same limits with cuvidGetDecoderCaps when it opens the hwaccel.
    let ((min_w, min_h), max) = match codec {
        "h264" | "vp8" => ((48, 16), 4096),
        "mpeg1video" | "mpeg2video" | "mpeg4" | "vc1" | "wmv3" => ((48, 16), 4080),
        "hevc" => ((144, 144), 8192),
        "vp9" | "av1" => ((128, 128), 8192),
        other => return Err(format!("NVDEC does not decode {other}")),
    };
    let fmt = stream.pixel_format.as_deref().unwrap_or("yuv420p");
    let eight_bit = matches!(fmt, "yuv420p" | "yuvj420p" | "nv12");
    let ten_bit = matches!(
        fmt,
        "yuv420p10le" | "yuv420p10be" | "p010le" | "yuv420p12le"
    );
    if !(eight_bit || ten_bit) {
        return Err(format!(
            "{codec} in {fmt}: framefeed's NVDEC path takes 4:2:0 only"
        ));
    }
    if ten_bit && !matches!(codec, "hevc" | "vp9" | "av1") {
        return Err(format!(
            "NVDEC does not decode {codec} in {fmt} (High10 and the like)"
        ));
    }
    let (w, h) = (stream.width, stream.height);
    if w < min_w || h < min_h || w > max || h > max {
        return Err(format!(
            "{w}x{h} is outside NVDEC's sizes for {codec} ({min_w}x{min_h} to {max}x{max})"
        ));
    }
    Ok(())
}

/// An NVDEC frame (its planes in GPU memory), converted by the kernel.
struct CudaFrame {
    source: Source,
}

impl FrameSource for CudaFrame {
    fn write_rgb(&mut self, _dst: &mut [u8]) -> Result<(), AvError> {
        unreachable!("GPU frames are written by the kernel (SeqOut::Device)")
    }

    fn window_rgb(
        &mut self,
        _: (u32, u32, u32, u32),
        _: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        unreachable!("GPU frames are written by the kernel (SeqOut::Device)")
    }

    fn resized_window_rgb(
        &mut self,
        _: (u32, u32),
        _: Filter,
        _: (u32, u32, u32, u32),
        _: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError> {
        unreachable!("GPU frames are written by the kernel (SeqOut::Device)")
    }

    fn cuda_source(&self) -> Option<Source> {
        Some(self.source)
    }
}

/// libavcodec decoding on NVDEC.
pub(crate) struct CudaDecoder {
    receiver: Receiver,
    /// Keeps the context, stream and libavcodec device alive as long as the decoder and its frames.
    _gpu: Arc<GpuRuntime>,
}

impl CudaDecoder {
    /// Opens NVDEC for the demuxer's chosen stream.
    pub(crate) fn open(demuxer: &Demuxer, gpu: &Arc<GpuRuntime>) -> Result<Self, VideoError> {
        let stream = demuxer.stream();
        let codec = CodecContext::open_cuda_decoder(demuxer.format(), stream.index, &gpu.hw)?;
        tracing::debug!(decoder = %codec.decoder_name(), stream = stream.index, "opened NVDEC decoder");
        Ok(Self {
            receiver: Receiver::new(codec, stream)?,
            _gpu: gpu.clone(),
        })
    }

    fn check_hardware(&self) -> Result<(), Stop> {
        match self.receiver.codec.hardware() {
            Some(false) => Err(Stop::Fallback(
                "libavcodec's NVDEC hwaccel refused the stream (codec profile or size this GPU does not decode)"
                    .to_owned(),
            )),
            _ => Ok(()),
        }
    }
}

/// The kernel's view of an NVDEC frame; software frames (libavcodec fell back) and layouts the kernel does not
/// read move the video to the CPU.
fn cuda_source(frame: &Frame, width: usize, height: usize) -> Result<Source, Stop> {
    let surface = match frame.cuda_surface() {
        Ok(s) => s,
        Err(SurfaceError::NotCuda) => {
            return Err(Stop::Fallback("NVDEC gave a software frame".to_owned()))
        }
        Err(SurfaceError::Format(f)) => {
            return Err(Stop::Fallback(format!(
                "NVDEC decodes this stream to {f}, which framefeed's kernel does not read"
            )))
        }
    };
    Ok(Source {
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
    })
}

impl Decoder for CudaDecoder {
    fn decode(
        &mut self,
        packet: Option<&Packet>,
        sink: &mut FrameSink<'_>,
    ) -> Result<Option<AvError>, Stop> {
        let result = self.receiver.decode(packet, &mut |frame, info| {
            let source = cuda_source(frame, info.width, info.height)?;
            sink(info, &mut CudaFrame { source })
        })?;
        // A hwaccel that failed to start shows as a send error with no frame: say why, so the video moves.
        self.check_hardware()?;
        Ok(result)
    }
}

/// Creates the runtime, turning a panic in the driver's loader into an error (belt and braces: the probe
/// should have caught every case).
pub(crate) fn runtime(ordinal: usize, max_free: usize) -> Result<Arc<GpuRuntime>, String> {
    std::panic::catch_unwind(AssertUnwindSafe(|| GpuRuntime::new(ordinal, max_free)))
        .unwrap_or_else(|_| Err("the CUDA driver library panicked while loading".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(codec: &str, fmt: &str, w: u32, h: u32) -> StreamInfo {
        StreamInfo::video(codec, fmt, w, h)
    }

    #[test]
    fn nvdec_takes_what_hopper_decodes_and_names_the_rest() {
        for ok in [
            stream("h264", "yuv420p", 1920, 1080),
            stream("h264", "yuvj420p", 3840, 2160),
            stream("hevc", "yuv420p10le", 7680, 4320),
            stream("vp9", "yuv420p", 1280, 720),
            stream("vp9", "yuv420p", 321, 241),
            stream("vp8", "yuv420p", 640, 480),
            stream("h264", "yuv420p", 48, 16),
            stream("mpeg4", "yuv420p", 320, 240),
        ] {
            assert_eq!(
                nvdec_support(&ok),
                Ok(()),
                "{} {:?}",
                ok.codec,
                ok.pixel_format
            );
        }
        for (bad, why) in [
            (stream("h264", "yuv420p10le", 1920, 1080), "High10"),
            (stream("h264", "yuv422p", 1920, 1080), "4:2:0 only"),
            (stream("hevc", "yuv444p", 1920, 1080), "4:2:0 only"),
            (
                stream("prores", "yuv422p10le", 1920, 1080),
                "does not decode prores",
            ),
            (
                stream("h264", "yuv420p", 8192, 4320),
                "outside NVDEC's sizes",
            ),
            (stream("vp9", "yuv420p", 35, 19), "outside NVDEC's sizes"),
            (
                stream("hevc", "yuv420p", 96, 64),
                "outside NVDEC's sizes for hevc (144x144",
            ),
            (stream("av1", "yuv420p", 96, 64), "(128x128 to 8192x8192)"),
            (stream("mpeg2video", "yuv420p", 4096, 2160), "4080x4080"),
        ] {
            let err = nvdec_support(&bad).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }
}
