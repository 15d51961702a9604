//! Applying the transforms to one decoded frame: a frame in host memory is converted by swscale (straight into
//! its slot when no transform is configured; otherwise only the crop window's pixels, or the resized window,
//! into a scratch buffer) and written in the output type and layout; a frame in GPU memory is converted by the
//! CUDA kernel straight into its slot of the device buffer.

use super::gpu::kernel_params;
use super::host::HostConverter;
use super::orient::Turner;
use super::plan::Geometry;
use super::tonemap::{is_hdr, ToneMapper};
use super::write::{write_frame, HostOut, RgbView, SeqOut};
use crate::decode::frame::FrameRef;
use crate::error::VideoError;
use crate::ffi::scale::{Filter, Pixels};
use crate::orientation::Orientation;
use crate::settings::transforms::{DType, Interpolation, ResizeStage, Transforms, CHANNELS};

/// swscale's filter for an interpolation.
fn filter(interpolation: Interpolation) -> Filter {
    match interpolation {
        Interpolation::Nearest => Filter::Point,
        Interpolation::Bilinear => Filter::Bilinear,
        Interpolation::Bicubic => Filter::Bicubic,
        Interpolation::Area => Filter::Area,
    }
}

/// A video's host conversion state, reused from frame to frame: swscale's plan, a scratch buffer for windows
/// and the turned picture.
pub(crate) struct HostScratch {
    converter: HostConverter,
    buffer: Vec<u8>,
    turner: Turner,
    tonemapper: ToneMapper,
}

impl HostScratch {
    pub(crate) fn new() -> Self {
        Self {
            converter: HostConverter::new(),
            buffer: Vec::new(),
            turner: Turner::default(),
            tonemapper: ToneMapper::default(),
        }
    }
}

/// Converts `frame`, shown per `orientation` (its turn comes first: `geometry` is planned on the shown size),
/// into frame `f` of a sequence of `frames` frames per `geometry`. `host` is reused from frame to frame.
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply(
    frame: FrameRef<'_>,
    orientation: Orientation,
    geometry: &Geometry,
    transforms: &Transforms,
    out: &mut SeqOut<'_>,
    f: usize,
    frames: usize,
    host: &mut HostScratch,
) -> Result<(), VideoError> {
    let (source, out) = match (frame, out) {
        (FrameRef::Device(src), SeqOut::Device(d)) => {
            return d.convert(kernel_params(
                src,
                orientation,
                geometry,
                transforms,
                f,
                frames,
            ));
        }
        (FrameRef::Host(source), SeqOut::Host(out)) => (source, out),
        // The worker builds a video's batches where its decoder puts its frames (`Assembler::set_on_gpu`), so
        // these are a bug, reported as the video's error rather than a panic.
        (FrameRef::Host(_), SeqOut::Device(_)) => {
            return Err(mismatch(
                "a frame in host memory cannot go into a batch in GPU memory",
            ))
        }
        (FrameRef::Device(_), SeqOut::Host(_)) => {
            return Err(mismatch(
                "a frame in GPU memory cannot go into a batch in host memory",
            ))
        }
    };
    // HDR frames to tone-map are converted to 16-bit YUV 4:4:4, mapped, then written as RGB48.
    let tonemap = transforms.tonemap.filter(|_| is_hdr(source));
    let rgb = match tonemap {
        Some(_) => Pixels::Yuv16,
        None => depth(source.bit_depth(), transforms.dtype),
    };
    let tagged = source;
    let source = if orientation == Orientation::Upright {
        source
    } else {
        let turn_as = if rgb == Pixels::Yuv16 {
            Pixels::Sixteen
        } else {
            rgb
        };
        host.turner
            .turn(source, orientation, turn_as, &mut host.converter)?
    };
    if transforms.is_identity() {
        let HostOut::U8(out) = out else {
            unreachable!("untransformed output is u8 (the assembler picks the output type from the same transforms)")
        };
        let size = geometry.frame.0 * geometry.frame.1 * CHANNELS;
        // The rest of the region (and its slack) follows: swscale may overrun the frame's last row.
        return Ok(host
            .converter
            .rgb(source, Pixels::Eight, &mut out[f * size..])?);
    }
    let region = match geometry.visible() {
        None => None,
        Some(v)
            if geometry.resized
                && transforms.resize_stage == ResizeStage::Rgb
                && rgb != Pixels::Yuv16 =>
        {
            let size = (geometry.frame.0 as u32, geometry.frame.1 as u32);
            Some(host.converter.converted_window_rgb(
                source,
                size,
                filter(transforms.interpolation),
                (v.x as u32, v.y as u32),
                rgb,
                &mut host.buffer,
            )?)
        }
        Some(v) if geometry.resized => {
            let size = (geometry.frame.0 as u32, geometry.frame.1 as u32);
            Some(host.converter.resized_window_rgb(
                source,
                size,
                filter(transforms.interpolation),
                (v.x as u32, v.y as u32, v.w as u32, v.h as u32),
                rgb,
                &mut host.buffer,
            )?)
        }
        Some(v) => Some(host.converter.window_rgb(
            source,
            (v.x as u32, v.y as u32, v.w as u32, v.h as u32),
            rgb,
            &mut host.buffer,
        )?),
    };
    let view = match (region, tonemap, geometry.visible()) {
        (Some(r), Some(t), Some(v)) => {
            let mapped = host
                .tonemapper
                .map(&t, tagged, &host.buffer, r, (v.w, v.h))?;
            Some(RgbView {
                data: mapped,
                stride: v.w * 6,
                rgb: Pixels::Sixteen,
            })
        }
        (region, _, _) => region.map(|r| RgbView {
            data: &host.buffer[r.offset..],
            stride: r.stride,
            rgb,
        }),
    };
    write_frame(out, frames, f, geometry, view, transforms);
    Ok(())
}

/// The RGB depth a frame of `bits` bits a sample is converted at for output of `dtype`: 16 bits when the
/// source has more than 8 and the type keeps them (every type but `u8`), else 8 (an 8-bit source's `u16` output
/// is its 8-bit levels widened exactly).
fn depth(bits: u32, dtype: DType) -> Pixels {
    if bits > 8 && dtype != DType::U8 {
        Pixels::Sixteen
    } else {
        Pixels::Eight
    }
}

/// A frame that cannot go where its batch lives, as the video's error.
fn mismatch(what: &str) -> VideoError {
    VideoError::Cuda {
        operation: "placing a decoded frame",
        message: what.to_owned(),
    }
}
