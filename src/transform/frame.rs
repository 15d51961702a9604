//! The per-frame contract between a decoder backend and the transform stage, owned by its consumer: a decoded
//! frame is either in host memory, converted on request through [`HostFrame`] (swscale), or in GPU memory, a
//! [`DeviceFrame`] the CUDA kernel reads. A backend hands each frame over as a [`FrameRef`]; the transform stage
//! matches on it, so a frame that cannot go where its batch lives is a match arm, not a panic.

use super::host::RgbRegion;
use crate::error::AvError;
use crate::ffi::scale::Filter;

/// A decoded frame, as its decoder backend hands it over.
pub(crate) enum FrameRef<'a> {
    /// In host memory (the CPU backend).
    Host(&'a mut dyn HostFrame),
    /// In GPU memory (the NVDEC backend).
    #[allow(
        dead_code,
        reason = "made only by the NVDEC backend, which a build without the `cuda` feature lacks"
    )]
    Device(&'a DeviceFrame),
}

/// A decoded frame in host memory, converted to RGB24 on request: whole, a window of it, or resized.
pub(crate) trait HostFrame {
    /// The whole frame into the first `width * height * 3` bytes of `dst`, which has at least
    /// [`WRITE_SLACK`](crate::ffi::scale::WRITE_SLACK) more bytes after them.
    fn write_rgb(&mut self, dst: &mut [u8]) -> Result<(), AvError>;
    /// Only the window `(x, y, w, h)` (inside the frame), into `out`; returns where the window starts there.
    fn window_rgb(
        &mut self,
        window: (u32, u32, u32, u32),
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError>;
    /// The window `(x, y, w, h)` of the frame resized to `size` with `filter`, into `out`.
    fn resized_window_rgb(
        &mut self,
        size: (u32, u32),
        filter: Filter,
        window: (u32, u32, u32, u32),
        out: &mut Vec<u8>,
    ) -> Result<RgbRegion, AvError>;
}

/// A decoded picture in GPU memory (an NVDEC surface: NV12, or P010/P016 for deeper samples), as the CUDA
/// kernel reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DeviceFrame {
    /// Device (or, in tests, host) addresses and pitches of the luma and interleaved chroma planes.
    pub(crate) luma: u64,
    pub(crate) chroma: u64,
    pub(crate) luma_pitch: i32,
    pub(crate) chroma_pitch: i32,
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// 16-bit samples (P010/P016).
    pub(crate) high_depth: bool,
    pub(crate) colour: Colour,
}

/// A stream's colour matrix and range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Colour {
    /// `AVColorSpace` as an integer.
    pub(crate) colorspace: i32,
    pub(crate) full_range: bool,
}
