//! The FFI layer: the only module with `unsafe` code.
//!
//! One RAII wrapper per FFmpeg handle ([`io::MemoryIo`], [`format::FormatContext`], [`packet::Packet`],
//! [`codec::CodecContext`], [`frame::AvFrame`], [`scale::Scaler`] (with its vector twin, [`simd::yuv2rgb`]); with the
//! `cuda` feature, `cuda::hw::HwDevice` and the CUDA probe and kernel launch), each null-checked on allocation
//! and freed in `Drop`; and the vector loops of the resampler ([`simd::filter_rows`]) and of the planar float writer
//! ([`simd::split_channels`]), on the widest [`simd::kernel::Kernel`] the CPU has. Every FFmpeg return code becomes a
//! Rust error in one function, [`check`]. Everything above this module is safe Rust.
#![allow(unsafe_code)]

pub(crate) mod alloc;
pub(crate) mod codec;
pub(crate) mod cuda;
pub(crate) mod format;
pub(crate) mod frame;
pub(crate) mod io;
pub(crate) mod log;
pub(crate) mod packet;
pub(crate) mod parser;
pub(crate) mod protocol;
pub(crate) mod resample;
pub(crate) mod scale;
pub(crate) mod simd;
pub(crate) mod version;

use std::ffi::{c_char, c_int, CStr};

use ffmpeg_sys_next as sys;

use crate::error::AvError;

/// `AVERROR(EAGAIN)`: the codec wants the other call (send/receive) first.
pub(crate) const AVERROR_EAGAIN: c_int = sys::AVERROR(libc::EAGAIN);
/// `AVERROR(ENOMEM)`.
pub(crate) const AVERROR_ENOMEM: c_int = sys::AVERROR(libc::ENOMEM);
/// `AVERROR_EOF`.
pub(crate) const AVERROR_EOF: c_int = sys::AVERROR_EOF;

/// Turns an FFmpeg return code into a `Result`: negative codes are errors, others are passed through.
pub(crate) fn check(ret: c_int, operation: &'static str) -> Result<c_int, AvError> {
    if ret >= 0 {
        Ok(ret)
    } else {
        Err(av_error(ret, operation))
    }
}

/// Builds the [`AvError`] for a negative FFmpeg code, with FFmpeg's text for it.
pub(crate) fn av_error(code: c_int, operation: &'static str) -> AvError {
    let mut buf = [0 as c_char; 128];
    // SAFETY: `buf` is a writable buffer of the length passed; av_strerror always NUL-terminates it.
    let message = unsafe {
        sys::av_strerror(code, buf.as_mut_ptr(), buf.len());
        CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    };
    AvError {
        operation,
        code,
        message,
    }
}

/// An allocation that returned NULL.
pub(crate) fn out_of_memory(operation: &'static str) -> AvError {
    av_error(AVERROR_ENOMEM, operation)
}

/// Reads a C string owned by FFmpeg (a static name such as a codec's), `"unknown"` when NULL.
pub(crate) fn static_str(ptr: *const c_char) -> String {
    if ptr.is_null() {
        return "unknown".to_owned();
    }
    // SAFETY: FFmpeg's name functions return NUL-terminated static strings, and we checked for NULL.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_passes_non_negative_codes_and_names_failures() {
        assert_eq!(check(3, "x"), Ok(3));
        let err = check(AVERROR_EOF, "av_read_frame").unwrap_err();
        assert_eq!(err.code, AVERROR_EOF);
        assert_eq!(err.operation, "av_read_frame");
        assert!(err.message.contains("End of file"), "{}", err.message);
    }
}
