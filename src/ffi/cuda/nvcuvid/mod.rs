//! NVDEC driven directly (feature `cuda`): `libnvcuvid.so.1` loaded at run time (its absence is an error value;
//! the C structures and functions are `sys`'s, sizes checked against the Video Codec SDK's 64-bit layout), and
//! one RAII wrapper per handle:
//!
//! - [`VideoParser`] (`cuvidCreateVideoParser`): Annex B / frame packets in; it calls back, on the thread that
//!   feeds it, when a sequence starts or changes, when a picture is ready to decode (decode order) and when one
//!   is ready to display (display order). The callbacks go to a [`ParserEvents`] borrowed for one
//!   [`parse`](VideoParser::parse) call; panics in it are caught at the C boundary.
//! - [`VideoDecoder`] (`cuvidCreateDecoder`): decodes pictures on one NVDEC engine, several in flight (as many as
//!   its decode surfaces), and maps a decoded picture for CUDA ([`VideoDecoder::map`]), post-processed on the
//!   stream given, until [`VideoDecoder::unmap`]. Dropping it unmaps what is still mapped, then destroys it.
//!
//! The caller binds the CUDA context to the thread before creating a decoder and before each parse call.

use std::cell::Cell;
use std::ffi::{c_int, c_uint, c_ulong, c_void};
use std::sync::OnceLock;

mod sys;

use sys::*;
pub(crate) use sys::{Codec, DisplayInfo, PicParams, VideoFormat, CHROMA_420};

/// A failed nvcuvid call: the function and the CUDA error code it returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CuvidError {
    pub(crate) operation: &'static str,
    /// A `CUresult`; 0 for failures that are not the driver's (the library missing).
    pub(crate) code: i32,
    pub(crate) message: String,
}

impl std::fmt::Display for CuvidError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.code == 0 {
            write!(f, "{}: {}", self.operation, self.message)
        } else {
            write!(f, "{} failed with CUDA error {}", self.operation, self.code)
        }
    }
}

fn check(code: c_int, operation: &'static str) -> Result<(), CuvidError> {
    if code == 0 {
        Ok(())
    } else {
        Err(CuvidError {
            operation,
            code,
            message: String::new(),
        })
    }
}

/// What NVDEC on this GPU can decode for one codec, chroma format and bit depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecodeCaps {
    pub(crate) supported: bool,
    pub(crate) max: (u32, u32),
    pub(crate) min: (u32, u32),
    pub(crate) max_macroblocks: u32,
}

fn api() -> Result<&'static Api, CuvidError> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(load)
        .as_ref()
        .map_err(|message| CuvidError {
            operation: "loading NVDEC",
            code: 0,
            message: message.clone(),
        })
}

/// What NVDEC can decode for `codec` at `bit_depth_minus8` in 4:2:0. Needs a current CUDA context.
pub(crate) fn decoder_caps(codec: Codec, bit_depth_minus8: u32) -> Result<DecodeCaps, CuvidError> {
    let api = api()?;
    let mut raw = DecodeCapsRaw {
        codec: codec as i32,
        chroma_format: CHROMA_420,
        bit_depth_minus8,
        ..Default::default()
    };
    // SAFETY: `raw` is a valid CUVIDDECODECAPS with its IN fields set; the call fills the OUT fields.
    check(
        unsafe { (api.get_decoder_caps)(&mut raw) },
        "cuvidGetDecoderCaps",
    )?;
    Ok(DecodeCaps {
        supported: raw.is_supported != 0,
        max: (raw.max_width, raw.max_height),
        min: (u32::from(raw.min_width), u32::from(raw.min_height)),
        max_macroblocks: raw.max_mb_count,
    })
}

/// How to create a decoder for a sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecoderSettings {
    pub(crate) codec: i32,
    pub(crate) coded: (u32, u32),
    pub(crate) bit_depth_minus8: u32,
    pub(crate) decode_surfaces: u32,
    pub(crate) output_surfaces: u32,
}

/// A mapped picture: its device address and pitch (the chroma plane follows the luma plane).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mapped {
    pub(crate) ptr: u64,
    pub(crate) pitch: u32,
}

/// An NVDEC decoder (`CUvideodecoder`).
pub(crate) struct VideoDecoder {
    handle: *mut c_void,
    api: &'static Api,
    settings: DecoderSettings,
    /// Pictures mapped and not yet unmapped (unmapped on drop).
    mapped: Vec<u64>,
}

// SAFETY: the handle is owned by this value alone and used through `&mut self` / `&self` on one thread at a
// time; nvcuvid decoders are not tied to the creating thread (the context is bound by the caller).
unsafe impl Send for VideoDecoder {}

impl VideoDecoder {
    /// Creates a decoder on the CUDA context current on this thread.
    pub(crate) fn create(settings: DecoderSettings) -> Result<Self, CuvidError> {
        let api = api()?;
        let (w, h) = settings.coded;
        let mut info = DecodeCreateInfo {
            width: c_ulong::from(w),
            height: c_ulong::from(h),
            num_decode_surfaces: c_ulong::from(settings.decode_surfaces),
            codec: settings.codec,
            chroma_format: CHROMA_420,
            creation_flags: CREATE_PREFER_CUVID,
            bit_depth_minus8: c_ulong::from(settings.bit_depth_minus8),
            intra_decode_only: 0,
            max_width: c_ulong::from(w),
            max_height: c_ulong::from(h),
            reserved1: 0,
            // Null rectangles: the whole coded picture, unscaled. (An explicit display area of an odd size is
            // rounded by the driver and the picture rescaled: measured on an H100, a 129x129 VP9 picture's
            // last rows came from outside it. libavcodec's hwaccel leaves both null too.)
            display_area: [0; 4],
            output_format: if settings.bit_depth_minus8 > 0 {
                SURFACE_P016
            } else {
                SURFACE_NV12
            },
            // Weave: progressive frames as they are (framefeed does not deinterlace, as the CPU path).
            deinterlace_mode: 0,
            target_width: c_ulong::from(w),
            target_height: c_ulong::from(h),
            num_output_surfaces: c_ulong::from(settings.output_surfaces),
            vid_lock: std::ptr::null_mut(),
            target_rect: [0; 4],
            enable_histogram: 0,
            reserved2: [0; 4],
        };
        let mut handle = std::ptr::null_mut();
        // SAFETY: `info` is a fully initialised CUVIDDECODECREATEINFO; `handle` receives the decoder.
        check(
            unsafe { (api.create_decoder)(&mut handle, &mut info) },
            "cuvidCreateDecoder",
        )?;
        Ok(Self {
            handle,
            api,
            settings,
            mapped: Vec::new(),
        })
    }

    /// What the decoder was created with.
    pub(crate) fn settings(&self) -> &DecoderSettings {
        &self.settings
    }

    /// Queues one picture's decoding on NVDEC (returns before it is decoded).
    pub(crate) fn decode(&self, picture: &mut PicParams) -> Result<(), CuvidError> {
        // SAFETY: `picture` is the parser's picture parameters, valid during its decode callback, for a
        // decoder created from the same parser's sequence.
        check(
            unsafe { (self.api.decode_picture)(self.handle, picture) },
            "cuvidDecodePicture",
        )
    }

    /// Maps decoded picture `display.picture_index` for CUDA, post-processed on `stream` (a `CUstream`):
    /// work queued on that stream afterwards sees the picture. Valid until [`unmap`](Self::unmap).
    pub(crate) fn map(
        &mut self,
        display: &DisplayInfo,
        progressive: bool,
        stream: *mut c_void,
    ) -> Result<Mapped, CuvidError> {
        let mut params = ProcParams {
            progressive_frame: c_int::from(progressive),
            second_field: 0,
            top_field_first: display.top_field_first,
            unpaired_field: c_int::from(display.repeat_first_field < 0),
            reserved_flags: 0,
            reserved_zero: 0,
            raw_input_dptr: 0,
            raw_input_pitch: 0,
            raw_input_format: 0,
            raw_output_dptr: 0,
            raw_output_pitch: 0,
            reserved1: 0,
            output_stream: stream,
            reserved: [0; 46],
            histogram_dptr: std::ptr::null_mut(),
            reserved2: [std::ptr::null_mut()],
        };
        let (mut ptr, mut pitch) = (0u64, 0 as c_uint);
        self.mapped.try_reserve(1).map_err(|_| CuvidError {
            operation: "cuvidMapVideoFrame",
            code: 0,
            message: "out of memory".to_owned(),
        })?;
        // SAFETY: the handle is live; the out-pointers point at locals; `params` is fully initialised.
        check(
            unsafe {
                (self.api.map_frame)(
                    self.handle,
                    display.picture_index,
                    &mut ptr,
                    &mut pitch,
                    &mut params,
                )
            },
            "cuvidMapVideoFrame",
        )?;
        self.mapped.push(ptr);
        Ok(Mapped { ptr, pitch })
    }

    /// Unmaps a picture [`map`](Self::map) returned. The caller has waited for the work that reads it.
    pub(crate) fn unmap(&mut self, mapped: Mapped) -> Result<(), CuvidError> {
        let Some(i) = self.mapped.iter().position(|&p| p == mapped.ptr) else {
            return Ok(());
        };
        self.mapped.swap_remove(i);
        // SAFETY: `ptr` was mapped by this decoder and not unmapped since (it was in `mapped`).
        check(
            unsafe { (self.api.unmap_frame)(self.handle, mapped.ptr) },
            "cuvidUnmapVideoFrame",
        )
    }
}

impl Drop for VideoDecoder {
    fn drop(&mut self) {
        // SAFETY: each pointer was mapped by this decoder and not unmapped; then the handle is destroyed once.
        // Errors cannot be reported from a drop; the driver frees the decoder's memory either way.
        unsafe {
            for ptr in self.mapped.drain(..) {
                (self.api.unmap_frame)(self.handle, ptr);
            }
            (self.api.destroy_decoder)(self.handle);
        }
    }
}

/// What the parser's callbacks go to during one [`VideoParser::parse`] call.
pub(crate) trait ParserEvents {
    /// A sequence starts (or its format changes). Returns how many decode surfaces the parser may cycle
    /// through (at least `format.min_num_decode_surfaces`), or `None` to stop: the sequence cannot be decoded.
    fn sequence(&mut self, format: &VideoFormat) -> Option<u32>;
    /// A picture is ready to decode (decode order). `false` stops.
    fn decode(&mut self, picture: &mut PicParams) -> bool;
    /// A picture is ready to display (display order). `false` stops.
    fn display(&mut self, display: &DisplayInfo) -> bool;
}

/// Where the callbacks find the current [`ParserEvents`]: a pointer to a `&mut dyn ParserEvents` living on the
/// stack of the [`VideoParser::parse`] call in progress, null between calls.
#[derive(Default)]
struct EventSlot(Cell<*mut c_void>);

/// Runs `f` on the current events, catching panics (they must not unwind into C). 0 when there are none or
/// `f` panicked.
///
/// # Safety
/// `user` is the parser's user data: a live [`EventSlot`], whose pointer is null or points at a live
/// `&mut dyn ParserEvents` used by nothing else during the callback.
unsafe fn with_events(user: *mut c_void, f: impl FnOnce(&mut dyn ParserEvents) -> c_int) -> c_int {
    let Some(slot) = (user as *const EventSlot).as_ref() else {
        return 0;
    };
    let current = slot.0.get() as *mut &mut dyn ParserEvents;
    let Some(events) = current.as_mut() else {
        return 0;
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut **events))).unwrap_or(0)
}

unsafe extern "C" fn on_sequence(user: *mut c_void, format: *mut VideoFormat) -> c_int {
    // SAFETY: the parser passes its user data and a valid format for the duration of the call.
    unsafe {
        let Some(format) = format.as_ref() else {
            return 0;
        };
        with_events(user, |e| {
            e.sequence(format)
                .map_or(0, |n| c_int::try_from(n).unwrap_or(c_int::MAX))
        })
    }
}

unsafe extern "C" fn on_decode(user: *mut c_void, picture: *mut PicParams) -> c_int {
    // SAFETY: as above; the picture parameters are valid for the duration of the call.
    unsafe {
        let Some(picture) = picture.as_mut() else {
            return 0;
        };
        with_events(user, |e| c_int::from(e.decode(picture)))
    }
}

unsafe extern "C" fn on_display(user: *mut c_void, display: *mut DisplayInfo) -> c_int {
    // SAFETY: as above. A null display info (end of stream notice) needs nothing.
    unsafe {
        let Some(display) = display.as_ref() else {
            return 1;
        };
        with_events(user, |e| c_int::from(e.display(display)))
    }
}

/// An nvcuvid parser (`CUvideoparser`).
pub(crate) struct VideoParser {
    handle: *mut c_void,
    api: &'static Api,
    /// The callbacks' user data (boxed: its address is given to the parser).
    slot: Box<EventSlot>,
}

// SAFETY: the parser is owned by this value alone and used through `&mut self`; its callbacks run on the
// thread that calls `parse`, and the slot is only set during that call.
unsafe impl Send for VideoParser {}

impl VideoParser {
    /// A parser for `codec` that keeps up to `display_delay` decoded pictures queued before displaying the
    /// first (so that NVDEC has several in flight). `sequence_header`: the stream's out-of-band headers in the
    /// parser's format (Annex B parameter sets), if any (at most 1024 bytes are passed).
    pub(crate) fn new(
        codec: Codec,
        display_delay: u32,
        sequence_header: &[u8],
    ) -> Result<Self, CuvidError> {
        let api = api()?;
        let slot = Box::<EventSlot>::default();
        let mut ext = Box::new(VideoFormatEx {
            format: VideoFormat {
                codec: codec as i32,
                ..Default::default()
            },
            raw_seqhdr_data: [0; 1024],
        });
        let n = sequence_header.len().min(ext.raw_seqhdr_data.len());
        ext.raw_seqhdr_data[..n].copy_from_slice(&sequence_header[..n]);
        ext.format.seqhdr_data_length = n as c_uint;
        let mut params = ParserParams {
            codec: codec as i32,
            // Raised by the sequence callback's answer.
            max_num_decode_surfaces: 1,
            clock_rate: 0,
            // Pictures with errors are still decoded (concealed), as libavcodec does.
            error_threshold: 100,
            max_display_delay: display_delay,
            flags: 0,
            reserved1: [0; 4],
            user_data: &*slot as *const EventSlot as *mut c_void,
            sequence: Some(on_sequence),
            decode: Some(on_decode),
            display: Some(on_display),
            operating_point: std::ptr::null_mut(),
            sei: std::ptr::null_mut(),
            reserved2: [std::ptr::null_mut(); 5],
            ext_video_info: if n > 0 {
                &mut *ext
            } else {
                std::ptr::null_mut()
            },
        };
        let mut handle = std::ptr::null_mut();
        // SAFETY: `params` is fully initialised; the parser copies the sequence header during creation; the
        // user data (the boxed slot) outlives the parser (dropped after it, see Drop).
        check(
            unsafe { (api.create_parser)(&mut handle, &mut params) },
            "cuvidCreateVideoParser",
        )?;
        Ok(Self { handle, api, slot })
    }

    /// Parses one packet (`None`: the end of the stream, which displays every picture still queued), calling
    /// `events` back on this thread. `timestamp` comes back with the picture the packet holds.
    pub(crate) fn parse(
        &mut self,
        payload: Option<&[u8]>,
        timestamp: i64,
        events: &mut dyn ParserEvents,
    ) -> Result<(), CuvidError> {
        let mut packet = match payload {
            Some(data) => SourcePacket {
                flags: PKT_TIMESTAMP,
                payload_size: data.len() as c_ulong,
                payload: data.as_ptr(),
                timestamp,
            },
            None => SourcePacket {
                flags: PKT_ENDOFSTREAM,
                payload_size: 0,
                payload: std::ptr::null(),
                timestamp: 0,
            },
        };
        let mut events: &mut dyn ParserEvents = events;
        self.slot
            .0
            .set(&mut events as *mut &mut dyn ParserEvents as *mut c_void);
        // SAFETY: the packet points at `payload`, alive for the call; the slot points at `events`, alive for
        // the call and used only by the callbacks, which run inside it on this thread.
        let ret = unsafe { (self.api.parse)(self.handle, &mut packet) };
        self.slot.0.set(std::ptr::null_mut());
        check(ret, "cuvidParseVideoData")
    }
}

impl Drop for VideoParser {
    fn drop(&mut self) {
        self.slot.0.set(std::ptr::null_mut());
        // SAFETY: the handle is live and destroyed once; no callback can find events (the slot is null).
        unsafe {
            (self.api.destroy_parser)(self.handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_description_bits() {
        let f = VideoFormat {
            signal_flags: 0b0000_1101,
            ..Default::default()
        };
        assert!(f.full_range());
        let g = VideoFormat {
            signal_flags: 0b0000_0101,
            ..Default::default()
        };
        assert!(!g.full_range());
    }

    #[test]
    fn missing_library_is_an_error_value() {
        // Without NVIDIA's driver the library is absent: loading is an error, never a panic.
        match api() {
            Ok(_) => eprintln!("libnvcuvid present: nothing to check here"),
            Err(e) => {
                assert_eq!(e.code, 0);
                assert!(e.to_string().contains("libnvcuvid.so.1"), "{e}");
            }
        }
    }

    struct Panicking;
    impl ParserEvents for Panicking {
        fn sequence(&mut self, _: &VideoFormat) -> Option<u32> {
            panic!("sequence")
        }
        fn decode(&mut self, _: &mut PicParams) -> bool {
            true
        }
        fn display(&mut self, _: &DisplayInfo) -> bool {
            true
        }
    }

    #[test]
    fn callbacks_catch_panics_and_need_events() {
        let slot = EventSlot::default();
        let user = &slot as *const EventSlot as *mut c_void;
        let mut format = VideoFormat::default();
        // SAFETY: the slot is live; null events, then a live `&mut dyn ParserEvents`.
        unsafe {
            assert_eq!(on_sequence(user, &mut format), 0);
            assert_eq!(on_display(user, std::ptr::null_mut()), 1);
            let mut p = Panicking;
            let mut events: &mut dyn ParserEvents = &mut p;
            slot.0
                .set(&mut events as *mut &mut dyn ParserEvents as *mut c_void);
            assert_eq!(on_sequence(user, &mut format), 0, "a panic is a stop");
            let mut info = DisplayInfo::default();
            assert_eq!(on_display(user, &mut info), 1);
        }
    }
}
