//! `AVFormatContext`: demuxing a container read through [`MemoryIo`].

use std::ffi::{c_int, c_void, CStr, CString};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ffmpeg_sys_next as sys;

use super::io::MemoryIo;
use super::log::ErrorCounter;
use super::packet::Packet;
use super::{check, out_of_memory, static_str, AVERROR_EOF};
use crate::error::AvError;
use crate::info::{ContainerInfo, ContentLight, MasteringDisplay, MediaKind, StreamInfo};

/// Which demuxers lavf may pick for an input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Demuxers {
    /// Whichever probing picks (FFmpeg's default).
    #[default]
    Any,
    /// The MOV/MP4 demuxer, without probing.
    OnlyMov,
    /// Any but the MOV/MP4 demuxer (a stream that does not start like MP4 is never read as MP4).
    NotMov,
}

/// lavf's name of its MOV/MP4 demuxer.
const MOV_DEMUXER: &CStr = c"mov";
/// A `codec_whitelist` that names no decoder.
const NO_DECODER: &CStr = c"none";

/// Whether the linked FFmpeg has a demuxer named `name`.
pub(crate) fn has_demuxer(name: &CStr) -> bool {
    // SAFETY: av_find_input_format takes a NUL-terminated name and returns a static demuxer or NULL.
    !unsafe { sys::av_find_input_format(name.as_ptr()) }.is_null()
}

/// How lavf probes an input before demuxing it (`None`: FFmpeg's default).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ProbeOptions {
    /// The demuxers it may pick.
    pub(crate) demuxers: Demuxers,
    /// Bytes read to identify the format and streams (`probesize`).
    pub(crate) probe_size: Option<i64>,
    /// Microseconds of media analysed for stream information (`analyzeduration`).
    pub(crate) analyze_duration: Option<i64>,
    /// Frames read to estimate the frame rate (`fpsprobesize`).
    pub(crate) fps_probe_frames: Option<i32>,
    /// The MOV/MP4 demuxer's `ignore_editlist`: its index holds every sample of the track, in sample order,
    /// with no edit list applied.
    pub(crate) ignore_edit_list: bool,
    /// Only the container's header is read: no `avformat_find_stream_info` (which decodes a few frames to
    /// complete the streams' parameters). The MOV demuxer's index is whole after its header.
    pub(crate) header_only: bool,
    /// The most pixels a frame of this input may have in any decoder FFmpeg opens for it (`max_pixels`):
    /// those `avformat_find_stream_info` opens to complete the streams' parameters, and those opened later
    /// with [`CodecContext`](super::codec::CodecContext) from this context. A frame over it fails in the
    /// decoder's buffer allocation (`ff_get_buffer`), before any buffer of its size is allocated.
    pub(crate) max_pixels: Option<i64>,
    /// `avformat_find_stream_info` opens no decoder (its `codec_whitelist` names none): the streams' parameters
    /// come from the container and FFmpeg's parsers only, so no decoder sees a parameter set before framefeed
    /// has checked the frame size it gives (the pixel format may then stay unknown until the first frame).
    pub(crate) no_probe_decoders: bool,
}

/// One entry of a stream's index in the demuxer (`AVIndexEntry`): where a packet is and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    /// Byte position in the container.
    pub(crate) pos: i64,
    /// The demuxer's timestamp (the MOV demuxer's: decode time, edit list applied), stream time base.
    pub(crate) timestamp: i64,
    /// A keyframe (`AVINDEX_KEYFRAME`).
    pub(crate) key: bool,
    /// Decoded for reference only, never shown (`AVINDEX_DISCARD_FRAME`: an edit list cuts it).
    pub(crate) discard: bool,
}

/// What the demuxer keeps of a stream beside its index, for the timestamps it gives packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamTiming {
    /// The container's track number (`AVStream.id`: an MP4 track's `track_ID`).
    pub(crate) id: i32,
    /// Duration in the stream's time base (`AVStream.duration`; `i64::MIN` when unknown).
    pub(crate) duration: i64,
    /// The real base frame rate (`AVStream.r_frame_rate`), as a fraction (0/0 when unknown).
    pub(crate) real_frame_rate: (i32, i32),
}

/// What an input opened by URL checks while FFmpeg waits on the network. FFmpeg's protocols call the context's
/// interrupt callback in every wait (at least every 100 ms); it returns "abort" once `cancelled` says so (the
/// operator is shutting down) or the deadline [`arm`](Self::arm)ed before the wait has passed.
pub(crate) struct Interrupt {
    cancelled: Box<dyn Fn() -> bool + Send + Sync>,
    epoch: Instant,
    /// Nanoseconds after `epoch`; `u64::MAX`: no deadline.
    deadline: AtomicU64,
}

impl Interrupt {
    pub(crate) fn new(cancelled: impl Fn() -> bool + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            cancelled: Box::new(cancelled),
            epoch: Instant::now(),
            deadline: AtomicU64::new(u64::MAX),
        })
    }

    /// Waits from now on fail after `timeout`.
    pub(crate) fn arm(&self, timeout: Duration) {
        let at = self.epoch.elapsed().saturating_add(timeout);
        let at = u64::try_from(at.as_nanos()).unwrap_or(u64::MAX - 1);
        self.deadline.store(at, Ordering::Relaxed);
    }

    /// Whether the armed deadline has passed.
    pub(crate) fn timed_out(&self) -> bool {
        let deadline = self.deadline.load(Ordering::Relaxed);
        deadline != u64::MAX && self.epoch.elapsed().as_nanos() >= u128::from(deadline)
    }

    /// Whether a wait must end now.
    pub(crate) fn must_stop(&self) -> bool {
        (self.cancelled)() || self.timed_out()
    }
}

/// The callback of an [`Interrupt`], for contexts that take one.
pub(crate) fn interrupt_cb(interrupt: &Arc<Interrupt>) -> sys::AVIOInterruptCB {
    sys::AVIOInterruptCB {
        callback: Some(interrupt_callback),
        opaque: Arc::as_ptr(interrupt) as *mut c_void,
    }
}

extern "C" fn interrupt_callback(opaque: *mut c_void) -> c_int {
    // SAFETY: `opaque` is the `Interrupt` of an `Arc` that the format context's owner keeps alive until after
    // the context is closed (see `FormatContext::open_url`).
    let interrupt = unsafe { &*(opaque as *const Interrupt) };
    c_int::from(interrupt.must_stop())
}

/// An open input container: over a memory buffer (or a stream read through it), or opened by URL.
pub(crate) struct FormatContext {
    ctx: NonNull<sys::AVFormatContext>,
    // Dropped after `ctx` is closed (see Drop): lavf does not free a custom pb.
    _io: Option<MemoryIo>,
    // Kept alive while the context may call it back.
    _interrupt: Option<Arc<Interrupt>>,
    /// [`ProbeOptions::max_pixels`], for the decoders opened from this context.
    max_pixels: Option<i64>,
    /// The errors the demuxer logged while reading packets (the context's `opaque` once it is open), and how
    /// many of them [`logged_errors_since`](Self::logged_errors_since) has reported.
    errors: ErrorCounter,
    errors_seen: u64,
}

// SAFETY: the format context is owned by this value alone and used through `&mut self`; lavf contexts are
// not tied to the thread that created them.
unsafe impl Send for FormatContext {}

impl FormatContext {
    /// Opens the container read through `io` and reads its stream information.
    pub(crate) fn open_io(io: MemoryIo, probe: ProbeOptions) -> Result<Self, AvError> {
        Self::open_with(Some(io), None, probe)
    }

    /// Opens `url` with FFmpeg's own protocols, only those in `protocols` (FFmpeg's `protocol_whitelist`,
    /// nested ones included), with demuxer and protocol `options`; every wait is cut short by `interrupt`.
    pub(crate) fn open_url(
        url: &str,
        protocols: &str,
        options: &[(&'static str, String)],
        interrupt: Arc<Interrupt>,
        probe: ProbeOptions,
    ) -> Result<Self, AvError> {
        let invalid = || super::av_error(sys::AVERROR_INVALIDDATA, "avformat_open_input");
        let url = CString::new(url).map_err(|_| invalid())?;
        let protocols = CString::new(protocols).map_err(|_| invalid())?;
        let mut settings = Vec::with_capacity(options.len());
        for (key, value) in options {
            let key = CString::new(*key).map_err(|_| invalid())?;
            settings.push((key, CString::new(value.as_str()).map_err(|_| invalid())?));
        }
        Self::open_with(
            None,
            Some(UrlInput {
                url,
                protocols,
                settings,
                interrupt,
            }),
            probe,
        )
    }

    fn open_with(
        io: Option<MemoryIo>,
        url: Option<UrlInput>,
        probe: ProbeOptions,
    ) -> Result<Self, AvError> {
        let forced = match probe.demuxers {
            // SAFETY: av_find_input_format takes a NUL-terminated name and returns a static demuxer or NULL.
            Demuxers::OnlyMov => Some(unsafe { sys::av_find_input_format(MOV_DEMUXER.as_ptr()) })
                .filter(|f| !f.is_null())
                .ok_or_else(|| {
                    super::av_error(sys::AVERROR_DEMUXER_NOT_FOUND, "av_find_input_format")
                })?,
            _ => ptr::null(),
        };
        let whitelist = match probe.demuxers {
            Demuxers::NotMov => Some(demuxers_but_mov()),
            _ => None,
        };
        let mut dict = Dictionary::default();
        if let Some(url) = &url {
            for (key, value) in &url.settings {
                dict.set(key, value)?;
            }
        }
        if probe.ignore_edit_list {
            dict.set(c"ignore_editlist", c"1")?;
        }
        // SAFETY: avformat_alloc_context returns NULL or a valid context, which we check.
        let mut raw = unsafe { sys::avformat_alloc_context() };
        if raw.is_null() {
            return Err(out_of_memory("avformat_alloc_context"));
        }
        // SAFETY: `raw` is a fresh context. With `io`, we give it our pb and mark it custom so lavf won't close
        // it; by URL, we give it the interrupt callback, whose opaque pointer stays valid as long as the
        // returned value holds the Arc (after the context is closed). Strings handed over are lavf's own
        // copies (av_strdup), freed with the context. On failure avformat_open_input frees the context (and
        // sets `raw` to NULL) but not our pb, which `io` frees when dropped.
        unsafe {
            if let Some(io) = &io {
                (*raw).pb = io.as_ptr();
                (*raw).flags |= sys::AVFMT_FLAG_CUSTOM_IO;
            }
            if let Some(bytes) = probe.probe_size {
                (*raw).probesize = bytes;
            }
            if let Some(us) = probe.analyze_duration {
                (*raw).max_analyze_duration = us;
            }
            if let Some(frames) = probe.fps_probe_frames {
                (*raw).fps_probe_size = frames;
            }
            let mut copies = Vec::new();
            if let Some(list) = &whitelist {
                copies.push((&mut (*raw).format_whitelist, list.as_c_str()));
            }
            if probe.no_probe_decoders {
                copies.push((&mut (*raw).codec_whitelist, NO_DECODER));
            }
            if let Some(url) = &url {
                (*raw).interrupt_callback = interrupt_cb(&url.interrupt);
                copies.push((&mut (*raw).protocol_whitelist, url.protocols.as_c_str()));
            }
            for (field, value) in copies {
                // lavf frees these lists with the context; a copy it cannot make leaves none.
                *field = sys::av_strdup(value.as_ptr());
                if field.is_null() {
                    sys::avformat_free_context(raw);
                    return Err(out_of_memory("av_strdup"));
                }
            }
            let path = url.as_ref().map_or(ptr::null(), |u| u.url.as_ptr());
            check(
                sys::avformat_open_input(&mut raw, path, forced, dict.as_mut_ptr()),
                "avformat_open_input",
            )?;
        }
        let ctx = NonNull::new(raw).ok_or_else(|| out_of_memory("avformat_open_input"))?;
        let this = Self {
            ctx,
            _io: io,
            _interrupt: url.map(|u| u.interrupt),
            max_pixels: probe.max_pixels,
            errors: ErrorCounter::register(),
            errors_seen: 0,
        };
        if !probe.header_only {
            // One dictionary a stream, for the decoders find_stream_info opens; lavf may add entries.
            let mut options = Vec::new();
            if let Some(pixels) = probe.max_pixels {
                let value = CString::new(pixels.to_string()).expect("digits have no NUL");
                for _ in 0..this.stream_count() {
                    let mut dict = Dictionary::default();
                    dict.set(c"max_pixels", &value)?;
                    options.push(dict);
                }
            }
            let options_ptr = if options.is_empty() {
                ptr::null_mut()
            } else {
                // `Dictionary` is a transparent `*mut AVDictionary`: the Vec is the array of `nb_streams`
                // dictionary pointers lavf takes.
                options.as_mut_ptr().cast::<*mut sys::AVDictionary>()
            };
            // SAFETY: the context is open; `options_ptr` is NULL or points at one dictionary pointer per
            // stream (the count lavf reads, as no stream was added since the header), each NULL or valid;
            // lavf may replace them, and `options` frees whatever they hold afterwards.
            check(
                unsafe { sys::avformat_find_stream_info(this.ctx.as_ptr(), options_ptr) },
                "avformat_find_stream_info",
            )?;
        }
        // From here on (what opening logged is not the packets' business), the demuxer's logged errors count.
        // SAFETY: the context is open; `opaque` is the caller's field, which lavf never touches.
        unsafe { (*this.ctx.as_ptr()).opaque = this.errors.token() };
        Ok(this)
    }

    /// Whether the demuxer logged an error since the last call (or since it opened): while reading, that it
    /// met damaged data and skipped to find its footing again (Matroska's resync), so that packets were lost.
    pub(crate) fn logged_errors_since(&mut self) -> bool {
        let count = self.errors.get();
        let new = count > self.errors_seen;
        self.errors_seen = count;
        new
    }

    /// The most pixels a frame may have in a decoder opened from this context ([`ProbeOptions::max_pixels`]).
    pub(crate) fn max_pixels(&self) -> Option<i64> {
        self.max_pixels
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
            display_matrix: self.display_matrix(index),
            bit_depth: (kind == MediaKind::Video)
                .then(|| bit_depth(par.format))
                .flatten(),
            mastering_display: self.mastering_display(index),
            content_light: self.content_light(index),
            sample_rate: (kind == MediaKind::Audio && par.sample_rate > 0)
                .then_some(par.sample_rate as u32),
            channels: (kind == MediaKind::Audio && par.ch_layout.nb_channels > 0)
                .then_some(par.ch_layout.nb_channels as u32),
        }
    }

    /// Stream `index`'s side data of `kind`, copied out, if it has some.
    fn side_data(&self, index: usize, kind: sys::AVPacketSideDataType) -> Option<Vec<u8>> {
        let st = self.stream(index);
        let mut size = 0usize;
        // SAFETY: av_stream_get_side_data reads the stream's side data list and returns NULL or data the stream
        // owns, `size` bytes long, copied out at once.
        unsafe {
            let data = sys::av_stream_get_side_data(st, kind, &mut size);
            (!data.is_null()).then(|| std::slice::from_raw_parts(data, size).to_vec())
        }
    }

    /// Stream `index`'s display matrix (`AV_PKT_DATA_DISPLAYMATRIX` side data), if it has one.
    fn display_matrix(&self, index: usize) -> Option<[i32; 9]> {
        let data = self.side_data(index, sys::AVPacketSideDataType::AV_PKT_DATA_DISPLAYMATRIX)?;
        let words: Option<Vec<i32>> = (0..9)
            .map(|i| word_at(&data, i).map(i32::from_ne_bytes))
            .collect();
        words?.try_into().ok()
    }

    /// Stream `index`'s mastering display (`AV_PKT_DATA_MASTERING_DISPLAY_METADATA`: FFmpeg's
    /// `AVMasteringDisplayMetadata`, read field by field), if it has one.
    fn mastering_display(&self, index: usize) -> Option<MasteringDisplay> {
        let data = self.side_data(
            index,
            sys::AVPacketSideDataType::AV_PKT_DATA_MASTERING_DISPLAY_METADATA,
        )?;
        mastering_display_from(&data)
    }

    /// Stream `index`'s content light levels (`AV_PKT_DATA_CONTENT_LIGHT_LEVEL`: `AVContentLightMetadata`), if
    /// it has them.
    fn content_light(&self, index: usize) -> Option<ContentLight> {
        let data = self.side_data(
            index,
            sys::AVPacketSideDataType::AV_PKT_DATA_CONTENT_LIGHT_LEVEL,
        )?;
        content_light_from(&data)
    }

    /// Whether the container is read by the Matroska/WebM demuxer.
    pub(crate) fn is_matroska(&self) -> bool {
        // SAFETY: `iformat` is set on an open context and points at a static demuxer description.
        static_str(unsafe { (*self.raw().iformat).name }) == "matroska,webm"
    }

    /// When the container's streams end, in seconds (its start time plus its duration), where the container
    /// says so (a Matroska segment's Duration); `None` where the duration is unknown or only estimated from
    /// the bit rate.
    pub(crate) fn container_end(&self) -> Option<f64> {
        let raw = self.raw();
        if raw.duration == sys::AV_NOPTS_VALUE
            || raw.duration <= 0
            || raw.duration_estimation_method
                == sys::AVDurationEstimationMethod::AVFMT_DURATION_FROM_BITRATE
        {
            return None;
        }
        let start = if raw.start_time == sys::AV_NOPTS_VALUE {
            0
        } else {
            raw.start_time
        };
        Some((start as f64 + raw.duration as f64) / f64::from(sys::AV_TIME_BASE))
    }

    /// Stream `index`'s metadata tag `key` (matched case-insensitively, as lavf matches), if it has one: a
    /// Matroska track's `DURATION` or `NUMBER_OF_FRAMES`.
    pub(crate) fn stream_tag(&self, index: usize, key: &CStr) -> Option<String> {
        let st = self.stream(index);
        // SAFETY: `st.metadata` is the stream's dictionary (NULL when empty, which `av_dict_get` takes); the
        // entry it gives lives while the dictionary is unchanged (`&self`), and its value, a NUL-terminated
        // string, is copied out at once.
        unsafe {
            let entry = sys::av_dict_get(st.metadata, key.as_ptr(), ptr::null(), 0);
            entry
                .as_ref()
                .filter(|e| !e.value.is_null())
                .map(|e| CStr::from_ptr(e.value).to_string_lossy().into_owned())
        }
    }

    /// Whether the container is read by the MOV/MP4 demuxer.
    pub(crate) fn is_mov(&self) -> bool {
        // SAFETY: `iformat` is set on an open context and points at a static demuxer description.
        static_str(unsafe { (*self.raw().iformat).name }) == "mov,mp4,m4a,3gp,3g2,mj2"
    }

    /// Stream `index`'s entries in the demuxer's index, in its order (for the MOV demuxer: every packet of
    /// the stream, read from the container's tables when it was opened).
    pub(crate) fn index_entries(&self, index: usize) -> Vec<IndexEntry> {
        let st = ptr::from_ref(self.stream(index)).cast_mut();
        // SAFETY: `st` is a stream of this open context; lavf reads its index without changing it.
        let count = unsafe { sys::avformat_index_get_entries_count(st) }.max(0);
        let mut entries = Vec::with_capacity(count as usize);
        for i in 0..count {
            // SAFETY: `i` is below the count; the entry lives while the index is unchanged (nothing reads
            // packets meanwhile: `&self`), and it is copied out at once.
            let Some(e) = (unsafe { sys::avformat_index_get_entry(st, i).as_ref() }) else {
                break;
            };
            entries.push(IndexEntry {
                pos: e.pos,
                timestamp: e.timestamp,
                key: e.flags() & sys::AVINDEX_KEYFRAME as c_int != 0,
                discard: e.flags() & sys::AVINDEX_DISCARD_FRAME as c_int != 0,
            });
        }
        entries
    }

    /// What the demuxer keeps of stream `index` for its packets' timestamps.
    pub(crate) fn stream_timing(&self, index: usize) -> StreamTiming {
        let st = self.stream(index);
        StreamTiming {
            id: st.id,
            duration: st.duration,
            real_frame_rate: (st.r_frame_rate.num, st.r_frame_rate.den),
        }
    }

    /// Tells the demuxer to drop every stream but `keep` (saves reading audio and subtitles into packets).
    /// Stream `named` when it is an audio stream, or with none named the one
    /// [`best_audio_stream`](Self::best_audio_stream) picks.
    pub(crate) fn audio_stream(&self, named: Option<usize>) -> Option<usize> {
        match named {
            Some(index) => (index < self.stream_count()
                // SAFETY: `index` is a valid stream index; every stream of an open context has valid codec
                // parameters.
                && unsafe { (*self.stream(index).codecpar).codec_type }
                    == sys::AVMediaType::AVMEDIA_TYPE_AUDIO)
                .then_some(index),
            None => self.best_audio_stream(),
        }
    }

    /// The audio stream the `ffmpeg` CLI picks for its output: the most channels, a default one first, the
    /// first of equals (its `ffmpeg_opt.c` rule); `None` when there is none.
    pub(crate) fn best_audio_stream(&self) -> Option<usize> {
        let mut best: Option<(i64, usize)> = None;
        for i in 0..self.stream_count() {
            let st = self.stream(i);
            // SAFETY: every stream of an open context has valid codec parameters.
            let par = unsafe { &*st.codecpar };
            if par.codec_type != sys::AVMediaType::AVMEDIA_TYPE_AUDIO {
                continue;
            }
            let default = st.disposition & sys::AV_DISPOSITION_DEFAULT != 0;
            let score = i64::from(par.ch_layout.nb_channels) + if default { 5_000_000 } else { 0 };
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, i));
            }
        }
        best.map(|(_, i)| i)
    }

    /// Reads stream `index`'s packets too (after [`keep_only_stream`](Self::keep_only_stream) chose another).
    pub(crate) fn keep_stream(&mut self, index: usize) {
        if index < self.stream_count() {
            // SAFETY: `index` is a valid stream index; the demuxer reads `discard` on each packet.
            unsafe {
                (**self.raw().streams.add(index)).discard = sys::AVDiscard::AVDISCARD_DEFAULT
            };
        }
    }

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

    /// Moves reading to the keyframe of `stream` at or before timestamp `ts` (the stream's time base; the
    /// container's index where it has one, else FFmpeg's search), or with `bytes`, to byte position `ts`.
    pub(crate) fn seek(&mut self, stream: usize, ts: i64, bytes: bool) -> Result<(), AvError> {
        let flags = if bytes {
            sys::AVSEEK_FLAG_BYTE
        } else {
            sys::AVSEEK_FLAG_BACKWARD
        };
        let stream = if bytes { -1 } else { stream as c_int };
        // SAFETY: the context is open; a failed seek leaves it readable.
        let ret = unsafe { sys::av_seek_frame(self.ctx.as_ptr(), stream, ts, flags as c_int) };
        check(ret, "av_seek_frame").map(|_| ())
    }

    /// Whether the container is read through I/O that can seek to any byte (memory, a file, HTTP with range
    /// requests), as opposed to a stream read forward only (RTSP, a live playlist, a pipe).
    pub(crate) fn seekable(&self) -> bool {
        // SAFETY: the context is open; `pb` is NULL (a demuxer doing its own I/O) or its valid I/O context.
        unsafe {
            let pb = (*self.ctx.as_ptr()).pb;
            !pb.is_null() && ((*pb).seekable & sys::AVIO_SEEKABLE_NORMAL as c_int) != 0
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

/// What opening by URL takes besides the probing options.
struct UrlInput {
    url: CString,
    protocols: CString,
    settings: Vec<(CString, CString)>,
    interrupt: Arc<Interrupt>,
}

/// An `AVDictionary` of options, freed on drop (avformat_open_input takes the entries it uses out of it).
/// Transparent, so that a slice of them is an array of dictionary pointers.
#[repr(transparent)]
pub(crate) struct Dictionary(*mut sys::AVDictionary);

impl Default for Dictionary {
    fn default() -> Self {
        Self(ptr::null_mut())
    }
}

impl Dictionary {
    pub(crate) fn set(&mut self, key: &CStr, value: &CStr) -> Result<(), AvError> {
        // SAFETY: `self.0` is NULL or a dictionary av_dict_set made; it copies both strings.
        check(
            unsafe { sys::av_dict_set(&mut self.0, key.as_ptr(), value.as_ptr(), 0) },
            "av_dict_set",
        )
        .map(|_| ())
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut *mut sys::AVDictionary {
        &mut self.0
    }
}

impl Drop for Dictionary {
    fn drop(&mut self) {
        // SAFETY: frees the dictionary (NULL is allowed) and sets the pointer to NULL.
        unsafe { sys::av_dict_free(&mut self.0) }
    }
}

/// Every demuxer of the linked lavf but the MOV/MP4 one, as a `format_whitelist` (lavf refuses to open an
/// input its probing finds to be MOV/MP4).
fn demuxers_but_mov() -> CString {
    let mut names = Vec::new();
    let mut opaque = ptr::null_mut();
    loop {
        // SAFETY: av_demuxer_iterate walks lavf's static demuxer list with `opaque` as its cursor and returns
        // NULL at the end; each demuxer's name is a static NUL-terminated string.
        let name = unsafe {
            let demuxer = sys::av_demuxer_iterate(&mut opaque);
            if demuxer.is_null() {
                break;
            }
            CStr::from_ptr((*demuxer).name)
        };
        // The MOV demuxer's name lists its aliases ("mov,mp4,m4a,..."): leave it out whole.
        let is_mov = name
            .to_bytes()
            .split(|&b| b == b',')
            .any(|n| n == MOV_DEMUXER.to_bytes());
        if !is_mov {
            names.push(name.to_string_lossy().into_owned());
        }
    }
    CString::new(names.join(",")).expect("demuxer names have no NUL")
}

/// One of libavformat's codec tag tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TagTable {
    /// The MOV demuxer's video codes.
    MovVideo,
    /// The MOV demuxer's audio codes.
    MovAudio,
    /// RIFF (AVI) video codes, which the MOV demuxer also takes.
    RiffVideo,
    /// RIFF (WAV) audio codes.
    RiffAudio,
}

/// Whether `table` maps `tag` (a fourcc packed as lavf's `MKTAG` packs it) to a codec.
pub(crate) fn codec_tag_known(table: TagTable, tag: u32) -> bool {
    // SAFETY: the getters return lavf's static tables; av_codec_get_id reads a NULL-terminated list of them.
    unsafe {
        let table = match table {
            TagTable::MovVideo => sys::avformat_get_mov_video_tags(),
            TagTable::MovAudio => sys::avformat_get_mov_audio_tags(),
            TagTable::RiffVideo => sys::avformat_get_riff_video_tags(),
            TagTable::RiffAudio => sys::avformat_get_riff_audio_tags(),
        };
        let list = [table, ptr::null()];
        sys::av_codec_get_id(list.as_ptr(), tag) != sys::AVCodecID::AV_CODEC_ID_NONE
    }
}

impl Drop for FormatContext {
    fn drop(&mut self) {
        let mut raw = self.ctx.as_ptr();
        // SAFETY: closes the demuxer and frees the context (not our custom pb, which `_io` frees right after).
        unsafe { sys::avformat_close_input(&mut raw) }
    }
}

/// The `i`th 4-byte word of side data `data` (a C struct of ints, in the machine's byte order), if it holds one.
/// `AVContentLightMetadata`'s bytes (two unsigned ints, MaxCLL and MaxFALL) as a [`ContentLight`]; `None` when
/// too short.
pub(crate) fn content_light_from(data: &[u8]) -> Option<ContentLight> {
    let word = |i: usize| word_at(data, i).map(u32::from_ne_bytes);
    Some(ContentLight {
        max_cll: word(0)?,
        max_fall: word(1)?,
    })
}

fn word_at(data: &[u8], i: usize) -> Option<[u8; 4]> {
    data.get(i * 4..i * 4 + 4)?.try_into().ok()
}

/// Bits per sample of the pixel format `format` (an `AVPixelFormat` value from FFmpeg's codec parameters, or
/// -1): its first component's depth.
fn bit_depth(format: c_int) -> Option<u32> {
    if format < 0 {
        return None;
    }
    // SAFETY: the value came from FFmpeg's codec parameters, so it is a valid AVPixelFormat;
    // av_pix_fmt_desc_get returns NULL or a static descriptor.
    let desc = unsafe {
        sys::av_pix_fmt_desc_get(std::mem::transmute::<c_int, sys::AVPixelFormat>(format)).as_ref()
    }?;
    (desc.nb_components > 0).then(|| desc.comp[0].depth as u32)
}

/// `AVMasteringDisplayMetadata`'s bytes (FFmpeg 5.1 to 7.1: `display_primaries[3][2]`, `white_point[2]`,
/// `min_luminance`, `max_luminance` as `AVRational`s of two C ints, then the ints `has_primaries` and
/// `has_luminance`) as a [`MasteringDisplay`]; `None` when too short or when it has neither part.
pub(crate) fn mastering_display_from(data: &[u8]) -> Option<MasteringDisplay> {
    let int = |i: usize| word_at(data, i).map(i32::from_ne_bytes);
    let rational = |i: usize| -> Option<f64> {
        let (num, den) = (int(2 * i)?, int(2 * i + 1)?);
        Some(if den == 0 {
            0.0
        } else {
            f64::from(num) / f64::from(den)
        })
    };
    // Rationals: 0-5 the primaries (x, y of red, green, blue), 6-7 the white point, 8 and 9 the luminances;
    // then the two flags, ints 20 and 21.
    let (has_primaries, has_luminance) = (int(20)? != 0, int(21)? != 0);
    if !has_primaries && !has_luminance {
        return None;
    }
    let point = |i: usize| Some((rational(2 * i)?, rational(2 * i + 1)?));
    Some(MasteringDisplay {
        primaries: if has_primaries {
            Some([point(0)?, point(1)?, point(2)?])
        } else {
            None
        },
        white_point: if has_primaries { point(3) } else { None },
        min_luminance: if has_luminance { rational(8) } else { None },
        max_luminance: if has_luminance { rational(9) } else { None },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `AVMasteringDisplayMetadata`'s bytes: ten rationals, then the two flags.
    fn mastering_bytes(rationals: [(i32, i32); 10], has: (i32, i32)) -> Vec<u8> {
        let mut out = Vec::new();
        for (n, d) in rationals {
            out.extend(n.to_ne_bytes());
            out.extend(d.to_ne_bytes());
        }
        out.extend(has.0.to_ne_bytes());
        out.extend(has.1.to_ne_bytes());
        out
    }

    const HDR10: [(i32, i32); 10] = [
        (34000, 50000),
        (16000, 50000),
        (13250, 50000),
        (34500, 50000),
        (7500, 50000),
        (3000, 50000),
        (15635, 50000),
        (16450, 50000),
        (50, 10000),
        (10_000_000, 10000),
    ];

    #[test]
    fn the_mastering_display_is_read_part_by_part() {
        let full = mastering_display_from(&mastering_bytes(HDR10, (1, 1))).unwrap();
        assert_eq!(
            full.primaries,
            Some([(0.68, 0.32), (0.265, 0.69), (0.15, 0.06)])
        );
        assert_eq!(full.white_point, Some((0.3127, 0.329)));
        assert_eq!(
            (full.min_luminance, full.max_luminance),
            (Some(0.005), Some(1000.0))
        );
        // Only the luminances: no primaries or white point.
        let luminance = mastering_display_from(&mastering_bytes(HDR10, (0, 1))).unwrap();
        assert_eq!((luminance.primaries, luminance.white_point), (None, None));
        assert_eq!(luminance.max_luminance, Some(1000.0));
        // Neither part, a zero denominator, data cut short: nothing to report, 0 for the ratio, never a panic.
        assert_eq!(
            mastering_display_from(&mastering_bytes(HDR10, (0, 0))),
            None
        );
        let mut zero = HDR10;
        zero[9] = (1000, 0);
        let zero = mastering_display_from(&mastering_bytes(zero, (1, 1))).unwrap();
        assert_eq!(zero.max_luminance, Some(0.0));
        let bytes = mastering_bytes(HDR10, (1, 1));
        for len in 0..bytes.len() {
            assert_eq!(mastering_display_from(&bytes[..len]), None, "{len} bytes");
        }
    }
}
