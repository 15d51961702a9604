//! What the linked FFmpeg says of itself: its release, its `configure` line and its licence.

use ffmpeg_sys_next as sys;

use super::static_str;

/// The linked FFmpeg's release (`av_version_info`), configure line (`avcodec_configuration`), licence
/// (`avcodec_license`) and libavcodec's version, packed as FFmpeg packs it (`major << 16 | minor << 8 | micro`).
pub(crate) fn linked() -> (String, String, String, u32) {
    // SAFETY: these four take no argument and return static NUL-terminated strings (or a plain integer) that the
    // library owns for the life of the process; static_str copies each and turns NULL into "unknown".
    unsafe {
        (
            static_str(sys::av_version_info()),
            static_str(sys::avcodec_configuration()),
            static_str(sys::avcodec_license()),
            sys::avcodec_version(),
        )
    }
}
