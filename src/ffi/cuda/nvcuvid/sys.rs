//! nvcuvid's C side (feature `cuda`): the library's name, its constants, the structures its parser and
//! decoder take (sizes checked against the Video Codec SDK's 64-bit layout) and its functions, loaded at run
//! time. Declarations only; the safe wrappers are the parent module's.

use std::ffi::{c_int, c_uint, c_ulong, c_void};

/// The NVDEC library's name, as libavcodec opens it.
pub(crate) const LIBNVCUVID: &str = "libnvcuvid.so.1";

/// `cudaVideoCodec`: the codecs framefeed drives NVDEC for directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum Codec {
    H264 = 4,
    Hevc = 8,
    Vp8 = 9,
    Vp9 = 10,
    Av1 = 11,
}

/// `cudaVideoChromaFormat_420`.
pub(crate) const CHROMA_420: i32 = 1;
/// `cudaVideoSurfaceFormat_NV12` / `_P016`.
pub(crate) const SURFACE_NV12: i32 = 0;
pub(crate) const SURFACE_P016: i32 = 1;
/// `cudaVideoCreate_PreferCUVID`: the dedicated video engines.
pub(crate) const CREATE_PREFER_CUVID: c_ulong = 0x04;
/// `CUvideopacketflags`.
pub(crate) const PKT_ENDOFSTREAM: c_ulong = 0x01;
pub(crate) const PKT_TIMESTAMP: c_ulong = 0x02;

/// `CUVIDEOFORMAT`: what the parser found in a sequence header.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct VideoFormat {
    pub(crate) codec: i32,
    pub(crate) frame_rate: [c_uint; 2],
    pub(crate) progressive_sequence: u8,
    pub(crate) bit_depth_luma_minus8: u8,
    pub(crate) bit_depth_chroma_minus8: u8,
    pub(crate) min_num_decode_surfaces: u8,
    pub(crate) coded_width: c_uint,
    pub(crate) coded_height: c_uint,
    /// left, top, right, bottom.
    pub(crate) display_area: [c_int; 4],
    pub(crate) chroma_format: i32,
    pub(crate) bitrate: c_uint,
    pub(crate) display_aspect_ratio: [c_int; 2],
    /// video_format (3 bits), video_full_range_flag (1 bit), reserved (4 bits).
    pub(crate) signal_flags: u8,
    pub(crate) color_primaries: u8,
    pub(crate) transfer_characteristics: u8,
    pub(crate) matrix_coefficients: u8,
    pub(crate) seqhdr_data_length: c_uint,
}

impl VideoFormat {
    /// `video_full_range_flag` of the sequence's signal description.
    pub(crate) fn full_range(&self) -> bool {
        self.signal_flags & 0x08 != 0
    }
}

/// `CUVIDEOFORMATEX`: a format with the sequence header bytes after it (given to the parser up front).
#[repr(C)]
pub(crate) struct VideoFormatEx {
    pub(crate) format: VideoFormat,
    pub(crate) raw_seqhdr_data: [u8; 1024],
}

/// `CUVIDPICPARAMS`: what the parser hands the decoder for one picture; only passed through.
#[repr(C)]
pub(crate) struct PicParams {
    pub(crate) _opaque: [u8; 0],
}

/// `CUVIDPARSERDISPINFO`: a picture ready to display.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DisplayInfo {
    pub(crate) picture_index: c_int,
    pub(crate) progressive_frame: c_int,
    pub(crate) top_field_first: c_int,
    pub(crate) repeat_first_field: c_int,
    pub(crate) timestamp: i64,
}

pub(crate) type SequenceCallback = unsafe extern "C" fn(*mut c_void, *mut VideoFormat) -> c_int;
pub(crate) type DecodeCallback = unsafe extern "C" fn(*mut c_void, *mut PicParams) -> c_int;
pub(crate) type DisplayCallback = unsafe extern "C" fn(*mut c_void, *mut DisplayInfo) -> c_int;

/// `CUVIDPARSERPARAMS`.
#[repr(C)]
pub(crate) struct ParserParams {
    pub(crate) codec: i32,
    pub(crate) max_num_decode_surfaces: c_uint,
    pub(crate) clock_rate: c_uint,
    pub(crate) error_threshold: c_uint,
    pub(crate) max_display_delay: c_uint,
    pub(crate) flags: c_uint,
    pub(crate) reserved1: [c_uint; 4],
    pub(crate) user_data: *mut c_void,
    pub(crate) sequence: Option<SequenceCallback>,
    pub(crate) decode: Option<DecodeCallback>,
    pub(crate) display: Option<DisplayCallback>,
    pub(crate) operating_point: *mut c_void,
    pub(crate) sei: *mut c_void,
    pub(crate) reserved2: [*mut c_void; 5],
    pub(crate) ext_video_info: *mut VideoFormatEx,
}

/// `CUVIDSOURCEDATAPACKET`.
#[repr(C)]
pub(crate) struct SourcePacket {
    pub(crate) flags: c_ulong,
    pub(crate) payload_size: c_ulong,
    pub(crate) payload: *const u8,
    pub(crate) timestamp: i64,
}

/// `CUVIDDECODECREATEINFO`.
#[repr(C)]
pub(crate) struct DecodeCreateInfo {
    pub(crate) width: c_ulong,
    pub(crate) height: c_ulong,
    pub(crate) num_decode_surfaces: c_ulong,
    pub(crate) codec: i32,
    pub(crate) chroma_format: i32,
    pub(crate) creation_flags: c_ulong,
    pub(crate) bit_depth_minus8: c_ulong,
    pub(crate) intra_decode_only: c_ulong,
    pub(crate) max_width: c_ulong,
    pub(crate) max_height: c_ulong,
    pub(crate) reserved1: c_ulong,
    pub(crate) display_area: [i16; 4],
    pub(crate) output_format: i32,
    pub(crate) deinterlace_mode: i32,
    pub(crate) target_width: c_ulong,
    pub(crate) target_height: c_ulong,
    pub(crate) num_output_surfaces: c_ulong,
    pub(crate) vid_lock: *mut c_void,
    pub(crate) target_rect: [i16; 4],
    pub(crate) enable_histogram: c_ulong,
    pub(crate) reserved2: [c_ulong; 4],
}

/// `CUVIDPROCPARAMS`.
#[repr(C)]
pub(crate) struct ProcParams {
    pub(crate) progressive_frame: c_int,
    pub(crate) second_field: c_int,
    pub(crate) top_field_first: c_int,
    pub(crate) unpaired_field: c_int,
    pub(crate) reserved_flags: c_uint,
    pub(crate) reserved_zero: c_uint,
    pub(crate) raw_input_dptr: u64,
    pub(crate) raw_input_pitch: c_uint,
    pub(crate) raw_input_format: c_uint,
    pub(crate) raw_output_dptr: u64,
    pub(crate) raw_output_pitch: c_uint,
    pub(crate) reserved1: c_uint,
    pub(crate) output_stream: *mut c_void,
    pub(crate) reserved: [c_uint; 46],
    pub(crate) histogram_dptr: *mut u64,
    pub(crate) reserved2: [*mut c_void; 1],
}

/// `CUVIDDECODECAPS`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DecodeCapsRaw {
    pub(crate) codec: i32,
    pub(crate) chroma_format: i32,
    pub(crate) bit_depth_minus8: c_uint,
    pub(crate) reserved1: [c_uint; 3],
    pub(crate) is_supported: u8,
    pub(crate) num_nvdecs: u8,
    pub(crate) output_format_mask: u16,
    pub(crate) max_width: c_uint,
    pub(crate) max_height: c_uint,
    pub(crate) max_mb_count: c_uint,
    pub(crate) min_width: u16,
    pub(crate) min_height: u16,
    pub(crate) histogram_supported: u8,
    pub(crate) counter_bit_depth: u8,
    pub(crate) max_histogram_bins: u16,
    pub(crate) reserved3: [c_uint; 10],
}

// The Video Codec SDK's layouts on 64-bit Linux (12.x and 13.0 agree; fields added since were carved out of
// reserved space).
const _: () = {
    assert!(std::mem::size_of::<VideoFormat>() == 64);
    assert!(std::mem::size_of::<VideoFormatEx>() == 1088);
    assert!(std::mem::size_of::<DisplayInfo>() == 24);
    assert!(std::mem::size_of::<ParserParams>() == 136);
    assert!(std::mem::size_of::<SourcePacket>() == 32);
    assert!(std::mem::size_of::<DecodeCreateInfo>() == 176);
    assert!(std::mem::size_of::<ProcParams>() == 264);
    assert!(std::mem::size_of::<DecodeCapsRaw>() == 88);
};

/// The library's functions.
pub(crate) struct Api {
    pub(crate) get_decoder_caps: unsafe extern "C" fn(*mut DecodeCapsRaw) -> c_int,
    pub(crate) create_decoder:
        unsafe extern "C" fn(*mut *mut c_void, *mut DecodeCreateInfo) -> c_int,
    pub(crate) destroy_decoder: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub(crate) decode_picture: unsafe extern "C" fn(*mut c_void, *mut PicParams) -> c_int,
    pub(crate) map_frame:
        unsafe extern "C" fn(*mut c_void, c_int, *mut u64, *mut c_uint, *mut ProcParams) -> c_int,
    pub(crate) unmap_frame: unsafe extern "C" fn(*mut c_void, u64) -> c_int,
    pub(crate) create_parser: unsafe extern "C" fn(*mut *mut c_void, *mut ParserParams) -> c_int,
    pub(crate) parse: unsafe extern "C" fn(*mut c_void, *mut SourcePacket) -> c_int,
    pub(crate) destroy_parser: unsafe extern "C" fn(*mut c_void) -> c_int,
}

pub(crate) fn load() -> Result<Api, String> {
    // SAFETY: loading the NVIDIA video library runs its initialisers, which are safe in any process; it stays
    // loaded for the life of the process (leaked), so the function pointers taken from it stay valid.
    let lib = unsafe { libloading::Library::new(LIBNVCUVID) }
        .map_err(|e| format!("NVDEC's library {LIBNVCUVID} could not be loaded ({e})"))?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: each symbol is looked up under its C name and given the Video Codec SDK's signature
            // (the 64-bit device-pointer variants of map/unmap).
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                .map_err(|e| format!("{LIBNVCUVID} has no {} ({e})", $name))?
        };
    }
    Ok(Api {
        get_decoder_caps: sym!("cuvidGetDecoderCaps"),
        create_decoder: sym!("cuvidCreateDecoder"),
        destroy_decoder: sym!("cuvidDestroyDecoder"),
        decode_picture: sym!("cuvidDecodePicture"),
        map_frame: sym!("cuvidMapVideoFrame64"),
        unmap_frame: sym!("cuvidUnmapVideoFrame64"),
        create_parser: sym!("cuvidCreateVideoParser"),
        parse: sym!("cuvidParseVideoData"),
        destroy_parser: sym!("cuvidDestroyVideoParser"),
    })
}
