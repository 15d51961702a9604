//! Routes FFmpeg's log messages into `tracing` (target `ffmpeg`) instead of stderr, and counts the errors a
//! decoder or a demuxer reports there ([`ErrorCounter`]): FFmpeg's frame-threaded H.264 decoder neither
//! conceals nor flags the pictures it fails to decode (`decode_error_flags` stays 0), and a demuxer that skips
//! damaged data to find its footing again (Matroska's resync) says so only there.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

use parking_lot::Mutex;

use ffmpeg_sys_next as sys;

static INSTALL: Once = Once::new();

/// The `va_list` FFmpeg's log callback takes, as bindgen spells it for the target: a pointer to the register
/// save area on x86-64, the list itself (an opaque 32-byte struct, passed by value) on aarch64.
#[cfg(target_arch = "x86_64")]
type VaList = *mut sys::__va_list_tag;
#[cfg(not(target_arch = "x86_64"))]
type VaList = sys::va_list;

/// Installs the callback once per process. FFmpeg's level maps to tracing's: panic/fatal/error -> ERROR,
/// warning -> WARN, info -> INFO, verbose/debug -> DEBUG, trace -> TRACE.
pub(crate) fn route_to_tracing() {
    // SAFETY: av_log_set_callback only stores the function pointer; `callback` is valid for the whole process.
    INSTALL.call_once(|| unsafe { sys::av_log_set_callback(Some(callback)) });
}

/// The addresses of the live [`ErrorCounter`]s' counts: a decoder or demuxer context whose `opaque` is one of
/// them counts its errors there. Changed only when a context opens or closes; read only when FFmpeg logs an
/// error.
static COUNTERS: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// The errors one decoder context (and its frame threads' copies, which share its `opaque`) or one demuxer
/// context logged.
pub(crate) struct ErrorCounter {
    /// Boxed: its address is the context's `opaque`, stable while the counter lives.
    count: Box<AtomicU64>,
}

impl ErrorCounter {
    /// A counter, registered: a decoder or demuxer context whose `opaque` is [`token`](Self::token) counts its
    /// logged errors in it from now on.
    pub(crate) fn register() -> Self {
        route_to_tracing();
        let count = Box::new(AtomicU64::new(0));
        COUNTERS.lock().push(token_of(&count) as usize);
        Self { count }
    }

    /// What the decoder context's `opaque` is set to.
    pub(crate) fn token(&self) -> *mut c_void {
        token_of(&self.count)
    }

    /// The errors counted so far.
    pub(crate) fn get(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

fn token_of(count: &AtomicU64) -> *mut c_void {
    std::ptr::from_ref(count).cast_mut().cast()
}

impl Drop for ErrorCounter {
    fn drop(&mut self) {
        // Unregistered before the count is freed: the callback only touches registered counts, under the lock.
        let token = token_of(&self.count) as usize;
        COUNTERS.lock().retain(|&t| t != token);
    }
}

/// Counts an error logged by a decoder or demuxer context with a registered counter as its `opaque`.
///
/// # Safety
/// `avcl` is null or what FFmpeg passes its log callback: a pointer to a struct whose first field is an
/// `AVClass` pointer.
unsafe fn count_error(avcl: *mut c_void) {
    if avcl.is_null() {
        return;
    }
    // SAFETY: per the contract, `avcl` points at a struct starting with its `AVClass` pointer; avcodec's and
    // avformat's classes are statics, and a struct of one of them is an `AVCodecContext` or an
    // `AVFormatContext`, whose `opaque` is a plain field.
    let opaque = unsafe {
        let class = *avcl.cast::<*const sys::AVClass>();
        if class == sys::avcodec_get_class() {
            (*avcl.cast::<sys::AVCodecContext>()).opaque as usize
        } else if class == sys::avformat_get_class() {
            (*avcl.cast::<sys::AVFormatContext>()).opaque as usize
        } else {
            return;
        }
    };
    let counters = COUNTERS.lock();
    if opaque != 0 && counters.contains(&opaque) {
        // SAFETY: a registered token is the address of a live counter's count; the lock held keeps it registered
        // (its Drop unregisters under the lock before freeing it).
        unsafe { (*(opaque as *const AtomicU64)).fetch_add(1, Ordering::Relaxed) };
    }
}

unsafe extern "C" fn callback(avcl: *mut c_void, level: c_int, fmt: *const c_char, vl: VaList) {
    if level <= sys::AV_LOG_ERROR {
        // SAFETY: `avcl` is what FFmpeg passes its log callback.
        unsafe { count_error(avcl) };
    }
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
