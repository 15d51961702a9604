//! `AVFormatContext`: demuxing a container read through [`MemoryIo`].

use std::ffi::c_int;
use std::ptr::{self, NonNull};

use bytes::Bytes;
use ffmpeg_sys_next as sys;

use super::io::MemoryIo;
use super::packet::Packet;
use super::{check, out_of_memory, static_str, AVERROR_EOF};
use crate::error::AvError;
use crate::info::{ContainerInfo, MediaKind, StreamInfo};

/// How lavf probes an input before demuxing it (`None`: FFmpeg's default).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ProbeOptions {
    /// Bytes read to identify the format and streams (`probesize`).
    pub(crate) probe_size: Option<i64>,
    /// Microseconds of media analysed for stream information (`analyzeduration`).
    pub(crate) analyze_duration: Option<i64>,
    /// Frames read to estimate the frame rate (`fpsprobesize`).
    pub(crate) fps_probe_frames: Option<i32>,
}

/// An open input container over a memory buffer.
pub(crate) struct FormatContext {
    ctx: NonNull<sys::AVFormatContext>,
    // Dropped after `ctx` is closed (see Drop): lavf does not free a custom pb.
    _io: MemoryIo,
}

// SAFETY: the format context is owned by this value alone and used through `&mut self`; lavf contexts are
// not tied to the thread that created them.
unsafe impl Send for FormatContext {}

impl FormatContext {
    /// Opens the container in `data` and reads its stream information, with FFmpeg's default probing.
    pub(crate) fn open(data: Bytes) -> Result<Self, AvError> {
        Self::open_io(MemoryIo::new(data)?, ProbeOptions::default())
    }

    /// Opens the container read through `io` and reads its stream information.
    pub(crate) fn open_io(io: MemoryIo, probe: ProbeOptions) -> Result<Self, AvError> {
        // SAFETY: avformat_alloc_context returns NULL or a valid context, which we check.
        let mut raw = unsafe { sys::avformat_alloc_context() };
        if raw.is_null() {
            return Err(out_of_memory("avformat_alloc_context"));
        }
        // SAFETY: `raw` is a fresh context; we give it our pb and mark it custom so lavf won't close it. On
        // failure avformat_open_input frees the context (and sets `raw` to NULL) but not our pb, which `io`
        // frees when dropped.
        unsafe {
            (*raw).pb = io.as_ptr();
            (*raw).flags |= sys::AVFMT_FLAG_CUSTOM_IO;
            if let Some(bytes) = probe.probe_size {
                (*raw).probesize = bytes;
            }
            if let Some(us) = probe.analyze_duration {
                (*raw).max_analyze_duration = us;
            }
            if let Some(frames) = probe.fps_probe_frames {
                (*raw).fps_probe_size = frames;
            }
            check(
                sys::avformat_open_input(&mut raw, ptr::null(), ptr::null(), ptr::null_mut()),
                "avformat_open_input",
            )?;
        }
        let ctx = NonNull::new(raw).ok_or_else(|| out_of_memory("avformat_open_input"))?;
        let this = Self { ctx, _io: io };
        // SAFETY: the context is open; NULL options are allowed.
        check(
            unsafe { sys::avformat_find_stream_info(this.ctx.as_ptr(), ptr::null_mut()) },
            "avformat_find_stream_info",
        )?;
        Ok(this)
    }

    fn raw(&self) -> &sys::AVFormatContext {
        // SAFETY: the context is valid and open for the life of self.
        unsafe { self.ctx.as_ref() }
    }

    fn stream(&self, index: usize) -> &sys::AVStream {
        let raw = self.raw();
        assert!(index < raw.nb_streams as usize, "stream index out of range");
        // SAFETY: `streams` holds `nb_streams` valid stream pointers, and index is in range.
        unsafe { &**raw.streams.add(index) }
    }

    pub(crate) fn stream_count(&self) -> usize {
        self.raw().nb_streams as usize
    }

    /// The codec parameters of stream `index`, for opening its decoder.
    pub(crate) fn codec_parameters(&self, index: usize) -> *const sys::AVCodecParameters {
        self.stream(index).codecpar
    }

    /// Stream `index`'s time base as a fraction.
    pub(crate) fn time_base(&self, index: usize) -> (i32, i32) {
        let tb = self.stream(index).time_base;
        (tb.num, tb.den)
    }

    /// Describes the container and every stream.
    pub(crate) fn info(&self) -> ContainerInfo {
        let raw = self.raw();
        // SAFETY: `iformat` is set on an open context and points at a static demuxer description.
        let (format, format_long) = unsafe {
            (
                static_str((*raw.iformat).name),
                static_str((*raw.iformat).long_name),
            )
        };
        ContainerInfo {
            format,
            format_long,
            duration: (raw.duration > 0)
                .then(|| raw.duration as f64 / f64::from(sys::AV_TIME_BASE)),
            bit_rate: (raw.bit_rate > 0).then_some(raw.bit_rate as u64),
            streams: (0..self.stream_count())
                .map(|i| self.stream_info(i))
                .collect(),
        }
    }

    fn stream_info(&self, index: usize) -> StreamInfo {
        let st = self.stream(index);
        // SAFETY: every stream of an open context has valid codec parameters.
        let par = unsafe { &*st.codecpar };
        let kind = match par.codec_type {
            sys::AVMediaType::AVMEDIA_TYPE_VIDEO => MediaKind::Video,
            sys::AVMediaType::AVMEDIA_TYPE_AUDIO => MediaKind::Audio,
            sys::AVMediaType::AVMEDIA_TYPE_SUBTITLE => MediaKind::Subtitle,
            sys::AVMediaType::AVMEDIA_TYPE_DATA => MediaKind::Data,
            sys::AVMediaType::AVMEDIA_TYPE_ATTACHMENT => MediaKind::Attachment,
            _ => MediaKind::Unknown,
        };
        let named = |p: *const std::ffi::c_char| (!p.is_null()).then(|| static_str(p));
        // SAFETY: the name functions take any enum value and return a static string or NULL. The pixel
        // format integer comes from FFmpeg's own codec parameters, so it is a valid AVPixelFormat (or -1,
        // for which av_get_pix_fmt_name returns NULL).
        let (
            codec,
            profile,
            pixel_format,
            color_space,
            color_range,
            color_primaries,
            color_transfer,
        ) = unsafe {
            let pix_fmt = if kind == MediaKind::Video && par.format >= 0 {
                named(sys::av_get_pix_fmt_name(std::mem::transmute::<
                    c_int,
                    sys::AVPixelFormat,
                >(par.format)))
            } else {
                None
            };
            let unspecified =
                |s: Option<String>| s.filter(|s| s != "unknown" && s != "unspecified");
            (
                static_str(sys::avcodec_get_name(par.codec_id)),
                named(sys::avcodec_profile_name(par.codec_id, par.profile)),
                pix_fmt,
                if par.color_space == sys::AVColorSpace::AVCOL_SPC_UNSPECIFIED {
                    None
                } else {
                    unspecified(named(sys::av_color_space_name(par.color_space)))
                },
                if par.color_range == sys::AVColorRange::AVCOL_RANGE_UNSPECIFIED {
                    None
                } else {
                    unspecified(named(sys::av_color_range_name(par.color_range)))
                },
                if par.color_primaries == sys::AVColorPrimaries::AVCOL_PRI_UNSPECIFIED {
                    None
                } else {
                    unspecified(named(sys::av_color_primaries_name(par.color_primaries)))
                },
                if par.color_trc == sys::AVColorTransferCharacteristic::AVCOL_TRC_UNSPECIFIED {
                    None
                } else {
                    unspecified(named(sys::av_color_transfer_name(par.color_trc)))
                },
            )
        };
        let tb = st.time_base;
        let fr = st.avg_frame_rate;
        StreamInfo {
            index,
            kind,
            codec,
            profile,
            width: par.width.max(0) as u32,
            height: par.height.max(0) as u32,
            pixel_format,
            color_space,
            color_range,
            color_primaries,
            color_transfer,
            frame_rate: (fr.num > 0 && fr.den > 0).then_some((fr.num, fr.den)),
            time_base: (tb.num, tb.den),
            duration: (st.duration > 0 && tb.den > 0)
                .then(|| st.duration as f64 * f64::from(tb.num) / f64::from(tb.den)),
            frames: (st.nb_frames > 0).then_some(st.nb_frames as u64),
            bit_rate: (par.bit_rate > 0).then_some(par.bit_rate as u64),
            default: st.disposition & sys::AV_DISPOSITION_DEFAULT != 0,
            attached_picture: st.disposition & sys::AV_DISPOSITION_ATTACHED_PIC != 0,
        }
    }

    /// Tells the demuxer to drop every stream but `keep` (saves reading audio and subtitles into packets).
    pub(crate) fn keep_only_stream(&mut self, keep: usize) {
        for i in 0..self.stream_count() {
            let discard = if i == keep {
                sys::AVDiscard::AVDISCARD_DEFAULT
            } else {
                sys::AVDiscard::AVDISCARD_ALL
            };
            // SAFETY: `i` is a valid stream index; the demuxer reads `discard` on each packet.
            unsafe { (**self.raw().streams.add(i)).discard = discard };
        }
    }

    /// Reads the next packet into `pkt`. `Ok(false)` at the end of the container.
    pub(crate) fn read(&mut self, pkt: &mut Packet) -> Result<bool, AvError> {
        pkt.unref();
        // SAFETY: the context is open and `pkt` is a valid, unreferenced packet.
        let ret = unsafe { sys::av_read_frame(self.ctx.as_ptr(), pkt.as_ptr()) };
        if ret == AVERROR_EOF {
            return Ok(false);
        }
        check(ret, "av_read_frame").map(|_| true)
    }
}

impl Drop for FormatContext {
    fn drop(&mut self) {
        let mut raw = self.ctx.as_ptr();
        // SAFETY: closes the demuxer and frees the context (not our custom pb, which `_io` frees right after).
        unsafe { sys::avformat_close_input(&mut raw) }
    }
}
