//! What the decode stage hands on, frame by frame: a decoded frame is either in host memory (libavcodec's
//! frame, which the transform stage converts with swscale) or in GPU memory, a [`DeviceFrame`] the CUDA kernel
//! reads. A backend hands each frame over as a [`FrameRef`]; the transform stage matches on it, so a frame that
//! cannot go where its batch lives is a match arm, not a panic.

use crate::error::VideoError;
use crate::ffi::frame::AvFrame;

/// A decoded frame, as its decoder backend hands it over.
#[derive(Clone, Copy)]
pub(crate) enum FrameRef<'a> {
    /// In host memory (the CPU backend): converted by the transform stage's swscale plan.
    Host(&'a AvFrame),
    /// In GPU memory (the NVDEC backend).
    #[allow(
        dead_code,
        reason = "made only by the NVDEC backend, which a build without the `cuda` feature lacks"
    )]
    Device(&'a DeviceFrame),
}

impl<'a> FrameRef<'a> {
    /// The picture in host memory, for stages fed by the CPU decoder only. An NVDEC picture there is a bug,
    /// reported as the video's error rather than a panic.
    pub(crate) fn host(self) -> Result<&'a AvFrame, VideoError> {
        match self {
            FrameRef::Host(frame) => Ok(frame),
            FrameRef::Device(_) => Err(VideoError::Cuda {
                operation: "placing a decoded frame",
                message: "a stage fed by the CPU decoder was given a frame in GPU memory"
                    .to_owned(),
            }),
        }
    }

    /// The display matrix the decoder attached to the picture (side data of a host frame: H.264's display
    /// orientation message, say); `None` for a picture in GPU memory, which takes its stream's.
    pub(crate) fn display_matrix(&self) -> Option<[i32; 9]> {
        match self {
            FrameRef::Host(frame) => frame.display_matrix(),
            FrameRef::Device(_) => None,
        }
    }

    /// The HDR10 static metadata the decoder attached to the picture (a host frame's side data, from the
    /// stream's SEI messages); none for a picture in GPU memory.
    pub(crate) fn hdr_metadata(
        &self,
    ) -> (
        Option<crate::info::MasteringDisplay>,
        Option<crate::info::ContentLight>,
    ) {
        match self {
            FrameRef::Host(frame) => frame.hdr_metadata(),
            FrameRef::Device(_) => (None, None),
        }
    }

    /// Bits per sample of a host picture (its pixel format's); `None` for a picture in GPU memory, which takes
    /// its stream's.
    pub(crate) fn bit_depth(&self) -> Option<u32> {
        match self {
            FrameRef::Host(frame) => Some(frame.bit_depth()),
            FrameRef::Device(_) => None,
        }
    }

    /// The picture's width and height.
    pub(crate) fn size(&self) -> (usize, usize) {
        match self {
            FrameRef::Host(frame) => (frame.width() as usize, frame.height() as usize),
            FrameRef::Device(frame) => (frame.width, frame.height),
        }
    }
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
    /// What tone mapping needs to know of the signal.
    pub(crate) signal: Signal,
}

/// A stream's transfer, primaries and HDR signal peak: what tone mapping reads (`transform::tonemap`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Signal {
    /// `AVColorTransferCharacteristic` as an integer.
    pub(crate) transfer: i32,
    /// `AVColorPrimaries` as an integer.
    pub(crate) primaries: i32,
    /// The HDR10 signal peak (MaxCLL, else the mastering display's peak), units of 100 cd/m², if stated.
    pub(crate) peak: Option<f32>,
}

impl Signal {
    /// What a decoded frame says of itself: its transfer and primaries tags and the HDR10 peak of its side data.
    pub(crate) fn of(frame: &AvFrame) -> Self {
        Self {
            transfer: frame.transfer(),
            primaries: frame.primaries(),
            peak: frame.signal_peak(),
        }
    }
}

/// Untagged (neither PQ nor HLG: never tone-mapped), until a decoder's stream says more.
impl Default for Signal {
    fn default() -> Self {
        Self {
            transfer: 2,
            primaries: 2,
            peak: None,
        }
    }
}

/// A stream's colour matrix and range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Colour {
    /// `AVColorSpace` as an integer.
    pub(crate) colorspace: i32,
    pub(crate) full_range: bool,
}
