//! `SwrContext`: libswresample turning decoded audio frames (any sample format, layout and rate) into packed
//! `f32` samples of a chosen channel count and rate, as the `ffmpeg` CLI's `-ac N -ar R -f f32le` does (the same
//! library, its default options).

use std::ptr::{self, NonNull};

use ffmpeg_sys_next as sys;

use super::frame::AvFrame;
use super::{check, out_of_memory};
use crate::error::AvError;

/// The output of a [`Resampler`]: channels and rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AudioOut {
    pub(crate) channels: u32,
    pub(crate) sample_rate: u32,
}

/// An audio frame's channel count and rate.
pub(crate) fn frame_audio(frame: &AvFrame) -> AudioOut {
    // SAFETY: the frame pointer is valid for the life of `frame`; these are plain fields.
    let raw = unsafe { &*frame.as_ptr() };
    AudioOut {
        channels: raw.ch_layout.nb_channels.max(0) as u32,
        sample_rate: raw.sample_rate.max(0) as u32,
    }
}

/// A resampler from one input shape (the first frame's: format, layout, rate) to packed `f32` of [`AudioOut`].
pub(crate) struct Resampler {
    ctx: NonNull<sys::SwrContext>,
    out: AudioOut,
    /// The input shape it was set up for: (sample format, channels, rate).
    input: (i32, i32, i32),
}

// SAFETY: the context is owned by this value alone and used through `&mut self`.
unsafe impl Send for Resampler {}

/// A channel layout owned here, uninitialised on drop.
struct Layout(sys::AVChannelLayout);

impl Layout {
    /// FFmpeg's default layout for `channels` channels (mono, stereo, 5.1...).
    fn default_for(channels: u32) -> Self {
        // SAFETY: an all-zero AVChannelLayout is a valid "unspecified" layout to write into.
        let mut layout: sys::AVChannelLayout = unsafe { std::mem::zeroed() };
        // SAFETY: writes a layout (native or unspecified order) into `layout`; allocates nothing.
        unsafe { sys::av_channel_layout_default(&mut layout, channels.min(64) as i32) };
        Self(layout)
    }

    /// A copy of `frame`'s layout, or the default for its channel count when its order is unspecified (as the
    /// CLI's filter graph guesses one).
    fn of(frame: &AvFrame) -> Result<Self, AvError> {
        // SAFETY: the frame pointer is valid; `ch_layout` is a valid layout of the frame.
        let source = unsafe { &(*frame.as_ptr()).ch_layout };
        if source.order == sys::AVChannelOrder::AV_CHANNEL_ORDER_UNSPEC {
            return Ok(Self::default_for(source.nb_channels.max(1) as u32));
        }
        // SAFETY: as above; an all-zero layout is a valid destination for av_channel_layout_copy.
        let mut layout: sys::AVChannelLayout = unsafe { std::mem::zeroed() };
        // SAFETY: copies a valid layout into a fresh one (a custom order allocates its map, freed on drop).
        check(
            unsafe { sys::av_channel_layout_copy(&mut layout, source) },
            "av_channel_layout_copy",
        )?;
        Ok(Self(layout))
    }
}

impl Drop for Layout {
    fn drop(&mut self) {
        // SAFETY: frees what the layout owns (a custom map), leaving it unspecified; safe on any valid layout.
        unsafe { sys::av_channel_layout_uninit(&mut self.0) }
    }
}

impl Resampler {
    /// A resampler from `frame`'s shape to `out`.
    pub(crate) fn new(frame: &AvFrame, out: AudioOut) -> Result<Self, AvError> {
        let mut in_layout = Layout::of(frame)?;
        // The input's own layout when the channel count stays (no rematrixing), else FFmpeg's default one.
        let mut out_layout = if in_layout.0.nb_channels as u32 == out.channels {
            Layout::of(frame)?
        } else {
            Layout::default_for(out.channels)
        };
        // SAFETY: the frame pointer is valid; plain fields.
        let (format, rate) = unsafe { ((*frame.as_ptr()).format, (*frame.as_ptr()).sample_rate) };
        let mut ctx: *mut sys::SwrContext = ptr::null_mut();
        // SAFETY: both layouts are valid (and only read, whatever the binding's mutability); `format` is the frame's AVSampleFormat value; swr_alloc_set_opts2
        // allocates `ctx` (or leaves it NULL on failure) and copies the layouts.
        let ret = unsafe {
            sys::swr_alloc_set_opts2(
                &mut ctx,
                &mut out_layout.0,
                sys::AVSampleFormat::AV_SAMPLE_FMT_FLT,
                out.sample_rate as i32,
                &mut in_layout.0,
                std::mem::transmute::<i32, sys::AVSampleFormat>(format),
                rate,
                0,
                ptr::null_mut(),
            )
        };
        check(ret, "swr_alloc_set_opts2")?;
        let ctx = NonNull::new(ctx).ok_or_else(|| out_of_memory("swr_alloc_set_opts2"))?;
        let this = Self {
            ctx,
            out,
            input: (format, in_layout.0.nb_channels, rate),
        };
        // SAFETY: the context is allocated and configured; init checks the options.
        check(unsafe { sys::swr_init(this.ctx.as_ptr()) }, "swr_init")?;
        Ok(this)
    }

    /// Whether `frame` has the shape this resampler was set up for (a stream may change its layout or rate).
    pub(crate) fn takes(&self, frame: &AvFrame) -> bool {
        // SAFETY: the frame pointer is valid; plain fields.
        let raw = unsafe { &*frame.as_ptr() };
        self.input == (raw.format, raw.ch_layout.nb_channels, raw.sample_rate)
    }

    /// Converts `frame` (or, with `None`, flushes the samples the resampler's filter still holds), appending
    /// packed samples to `out`; `Err` when memory for them cannot be had.
    pub(crate) fn convert(
        &mut self,
        frame: Option<&AvFrame>,
        out: &mut Vec<f32>,
    ) -> Result<(), AvError> {
        let (input, count) = match frame {
            // SAFETY: the frame pointer is valid; `extended_data` holds its planes, `nb_samples` per channel.
            Some(f) => unsafe {
                let raw = &*f.as_ptr();
                (raw.extended_data as *const *const u8, raw.nb_samples.max(0))
            },
            None => (ptr::null(), 0),
        };
        // SAFETY: the context is initialised; an upper bound of what the next convert call writes.
        let room = unsafe { sys::swr_get_out_samples(self.ctx.as_ptr(), count) };
        let room = check(room, "swr_get_out_samples")? as usize;
        let channels = self.out.channels as usize;
        let start = out.len();
        out.try_reserve(room * channels)
            .map_err(|_| out_of_memory("audio samples"))?;
        let mut plane = out.spare_capacity_mut().as_mut_ptr() as *mut u8;
        // SAFETY: `plane` points at room for `room * channels` f32 (reserved above); `input` is the frame's
        // planes of `count` samples, or NULL with 0 to flush.
        let written = unsafe {
            sys::swr_convert(
                self.ctx.as_ptr(),
                &mut plane,
                room as i32,
                input as *mut *const u8,
                count,
            )
        };
        let written = check(written, "swr_convert")? as usize;
        // SAFETY: swr_convert initialised `written * channels` samples past `start`, within the reserved room.
        unsafe { out.set_len(start + written.min(room) * channels) };
        Ok(())
    }
}

impl Drop for Resampler {
    fn drop(&mut self) {
        let mut raw = self.ctx.as_ptr();
        // SAFETY: frees the context; not used again.
        unsafe { sys::swr_free(&mut raw) }
    }
}
