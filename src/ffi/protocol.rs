//! An `AVIOContext` opened on a URL by FFmpeg's own protocols (SRT, RTMP): the source's bytes, read as a
//! [`StreamSource`] by the live input's AVIO, so that framefeed, not the protocol, decides what a closed
//! connection means to the demuxer.

use std::ffi::CString;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use ffmpeg_sys_next as sys;

use super::format::{interrupt_cb, Dictionary, Interrupt};
use super::io::{StreamRead, StreamSource};
use super::{av_error, check, AVERROR_EOF};
use crate::error::AvError;

/// The names of the linked FFmpeg's input protocols (a build without TLS has no `https`, one without libsrt no
/// `srt`).
pub(crate) fn input_protocols() -> Vec<String> {
    let mut opaque: *mut std::ffi::c_void = ptr::null_mut();
    let mut names = Vec::new();
    loop {
        // SAFETY: avio_enum_protocols walks FFmpeg's static protocol table with `opaque` as its cursor (NULL to
        // start) and returns a static NUL-terminated name, or NULL after the last; static_str copies it.
        let next = unsafe { sys::avio_enum_protocols(&mut opaque, 0) };
        if next.is_null() {
            return names;
        }
        names.push(super::static_str(next));
    }
}

/// A byte stream pulled from a URL. Closed in `Drop`.
pub(crate) struct ProtocolStream {
    ctx: NonNull<sys::AVIOContext>,
    interrupt: Arc<Interrupt>,
    /// Bytes read so far (in the log when the stream ends).
    received: u64,
    /// Whether the end was seen (and logged).
    closed: bool,
}

// SAFETY: the context is owned by this value alone and used through `&mut self`; FFmpeg's protocol contexts are
// not tied to the thread that opened them.
unsafe impl Send for ProtocolStream {}

impl ProtocolStream {
    /// Opens `url` for reading with the protocols in `protocols` only (FFmpeg's `protocol_whitelist`) and
    /// `options`; every wait is cut short by `interrupt`.
    pub(crate) fn open(
        url: &str,
        protocols: &str,
        options: &[(&'static str, String)],
        interrupt: Arc<Interrupt>,
    ) -> Result<Self, AvError> {
        let invalid = || av_error(sys::AVERROR_INVALIDDATA, "avio_open2");
        let c_url = CString::new(url).map_err(|_| invalid())?;
        let mut dict = Dictionary::default();
        let whitelist = CString::new(protocols).map_err(|_| invalid())?;
        dict.set(c"protocol_whitelist", &whitelist)?;
        for (key, value) in options {
            let key = CString::new(*key).map_err(|_| invalid())?;
            dict.set(&key, &CString::new(value.as_str()).map_err(|_| invalid())?)?;
        }
        let callback = interrupt_cb(&interrupt);
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` receives a new context or stays NULL; the URL and the dictionary are valid for the
        // call; the callback's opaque pointer is the `Interrupt` this value keeps alive until it closes the
        // context.
        check(
            unsafe {
                sys::avio_open2(
                    &mut raw,
                    c_url.as_ptr(),
                    sys::AVIO_FLAG_READ,
                    &callback,
                    dict.as_mut_ptr(),
                )
            },
            "avio_open2",
        )?;
        let ctx = NonNull::new(raw).ok_or_else(|| super::out_of_memory("avio_open2"))?;
        Ok(Self {
            ctx,
            interrupt,
            received: 0,
            closed: false,
        })
    }
}

impl StreamSource for ProtocolStream {
    /// What is available now (a live source's bytes as they arrive). A connection the peer closes ends the
    /// stream (FFmpeg's SRT and RTMP report a sender's close as an I/O error), so that the demuxer gives up
    /// the packets it still holds; a wait cut short (the read timeout, the operator stopping) fails it.
    fn read(&mut self, buf: &mut [u8]) -> StreamRead {
        let len = buf.len().min(i32::MAX as usize) as i32;
        loop {
            // SAFETY: the context is open and `buf` is writable for `len` bytes.
            let n = unsafe { sys::avio_read_partial(self.ctx.as_ptr(), buf.as_mut_ptr(), len) };
            if n > 0 {
                self.received += n as u64;
                return StreamRead::Data(n as usize);
            }
            if self.interrupt.must_stop() {
                return StreamRead::Failed;
            }
            if n == AVERROR_EOF || n < 0 {
                if !std::mem::replace(&mut self.closed, true) {
                    let error =
                        (n != AVERROR_EOF).then(|| av_error(n, "avio_read_partial").to_string());
                    tracing::debug!(
                        bytes = self.received,
                        ?error,
                        "the source closed the stream"
                    );
                }
                return StreamRead::End;
            }
        }
    }
}

impl Drop for ProtocolStream {
    fn drop(&mut self) {
        let mut raw = self.ctx.as_ptr();
        // SAFETY: closes the context opened by avio_open2 (and its protocol), once.
        unsafe { sys::avio_closep(&mut raw) };
    }
}
