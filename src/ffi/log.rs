//! Routes FFmpeg's log messages into `tracing` (target `ffmpeg`) instead of stderr.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Once;

use ffmpeg_sys_next as sys;

static INSTALL: Once = Once::new();

/// Installs the callback once per process. FFmpeg's level maps to tracing's: panic/fatal/error -> ERROR,
/// warning -> WARN, info -> INFO, verbose/debug -> DEBUG, trace -> TRACE.
pub(crate) fn route_to_tracing() {
    // SAFETY: av_log_set_callback only stores the function pointer; `callback` is valid for the whole process.
    INSTALL.call_once(|| unsafe { sys::av_log_set_callback(Some(callback)) });
}

unsafe extern "C" fn callback(
    avcl: *mut c_void,
    level: c_int,
    fmt: *const c_char,
    vl: *mut sys::__va_list_tag,
) {
    // Skip the formatting work when nobody listens at that level.
    let enabled = match level {
        l if l <= sys::AV_LOG_ERROR => tracing::enabled!(target: "ffmpeg", tracing::Level::ERROR),
        l if l <= sys::AV_LOG_WARNING => tracing::enabled!(target: "ffmpeg", tracing::Level::WARN),
        l if l <= sys::AV_LOG_INFO => tracing::enabled!(target: "ffmpeg", tracing::Level::INFO),
        l if l <= sys::AV_LOG_DEBUG => tracing::enabled!(target: "ffmpeg", tracing::Level::DEBUG),
        _ => tracing::enabled!(target: "ffmpeg", tracing::Level::TRACE),
    };
    if !enabled {
        return;
    }
    let mut line = [0 as c_char; 1024];
    let mut prefix: c_int = 1;
    // SAFETY: FFmpeg hands us its own format string and va_list for this call; av_log_format_line2 writes at
    // most `line.len()` bytes, NUL-terminated, into `line`.
    let text = unsafe {
        sys::av_log_format_line2(
            avcl,
            level,
            fmt,
            vl,
            line.as_mut_ptr(),
            line.len() as c_int,
            &mut prefix,
        );
        CStr::from_ptr(line.as_ptr()).to_string_lossy()
    };
    let text = text.trim_end();
    match level {
        l if l <= sys::AV_LOG_ERROR => tracing::error!(target: "ffmpeg", "{text}"),
        l if l <= sys::AV_LOG_WARNING => tracing::warn!(target: "ffmpeg", "{text}"),
        l if l <= sys::AV_LOG_INFO => tracing::info!(target: "ffmpeg", "{text}"),
        l if l <= sys::AV_LOG_DEBUG => tracing::debug!(target: "ffmpeg", "{text}"),
        _ => tracing::trace!(target: "ffmpeg", "{text}"),
    }
}
