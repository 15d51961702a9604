//! `AVIOContext` reading a whole video, with seeking (so MP4 with `moov` at the end works, and sampling seeks):
//! a [`Bytes`] buffer in memory or a file read at the offsets lavf asks for ([`Whole`]); or a live stream of
//! chunks read through a [`StreamSource`], without seeking.

use std::ffi::{c_int, c_void};
use std::ptr::NonNull;

use bytes::Bytes;
use ffmpeg_sys_next as sys;

use super::{out_of_memory, AVERROR_EOF};
use crate::error::AvError;
use crate::video::{Whole, WholeFile};

/// Size of the I/O buffer lavf reads through.
const IO_BUFFER_SIZE: usize = 64 * 1024;

/// What one read of a [`StreamSource`] gave.
pub(crate) enum StreamRead {
    /// This many bytes (at least 1) were written to the start of the buffer.
    Data(usize),
    /// The stream ended normally.
    End,
    /// The stream failed (aborted, stalled, or the operator is shutting down); the source keeps the reason.
    Failed,
}

/// Bytes arriving over time, read in order. `read` may block until data arrives.
pub(crate) trait StreamSource: Send {
    /// Fills the start of `buf` with the next bytes (as many as are available, at least one).
    fn read(&mut self, buf: &mut [u8]) -> StreamRead;

    /// Moves the read position to byte `pos` of the stream, if the source still holds it (a source may keep
    /// some bytes already read, for lavf to go back to). `false`: it cannot.
    fn seek(&mut self, _pos: u64) -> bool {
        false
    }
}

/// The callbacks' state: a whole encoded video and a read position (a buffer is shared, never copied; a file
/// is read at the position), or a streaming source.
enum Cursor {
    Memory {
        data: Bytes,
        pos: usize,
    },
    File {
        file: std::sync::Arc<WholeFile>,
        pos: u64,
    },
    Stream(Box<dyn StreamSource>),
}

/// An `AVIOContext` over a whole video or a stream. Owns the context, its I/O buffer and the [`Cursor`] its
/// callbacks use.
pub(crate) struct MemoryIo {
    ctx: NonNull<sys::AVIOContext>,
    cursor: *mut Cursor,
}

// SAFETY: the context and the cursor are owned by this value alone and only touched through `&mut self` or by
// lavf calls made through the owning `FormatContext`; nothing is tied to the creating thread.
unsafe impl Send for MemoryIo {}

impl MemoryIo {
    /// Reads the whole video `data`, seekable: a buffer without copying it (`Bytes` is reference-counted), a
    /// file as lavf asks for its bytes.
    pub(crate) fn new(data: Whole) -> Result<Self, AvError> {
        let cursor = match data {
            Whole::Memory(data) => Cursor::Memory { data, pos: 0 },
            Whole::File(file) => Cursor::File { file, pos: 0 },
        };
        Self::with_cursor(cursor, true)
    }

    /// Reads from `source` as its bytes arrive. The context is never seekable (lavf reads forward and never
    /// asks for the size); with `seek_back`, lavf's seeks to bytes behind it go to [`StreamSource::seek`].
    pub(crate) fn streaming(
        source: Box<dyn StreamSource>,
        seek_back: bool,
    ) -> Result<Self, AvError> {
        Self::with_cursor(Cursor::Stream(source), seek_back)
    }

    fn with_cursor(cursor: Cursor, seek_back: bool) -> Result<Self, AvError> {
        let seekable = !matches!(cursor, Cursor::Stream(_));
        let cursor = Box::into_raw(Box::new(cursor));
        // SAFETY: av_malloc returns NULL or a buffer of the given size, which we check.
        let buffer = unsafe { sys::av_malloc(IO_BUFFER_SIZE) } as *mut u8;
        if buffer.is_null() {
            // SAFETY: `cursor` came from Box::into_raw above and was not shared.
            drop(unsafe { Box::from_raw(cursor) });
            return Err(out_of_memory("av_malloc"));
        }
        // SAFETY: `buffer` is an av_malloc'ed buffer of IO_BUFFER_SIZE bytes, `cursor` outlives the context
        // (both are freed together in Drop), and the callbacks match the expected signatures.
        let ctx = unsafe {
            sys::avio_alloc_context(
                buffer,
                IO_BUFFER_SIZE as c_int,
                0,
                cursor.cast(),
                Some(read_packet),
                None,
                if seek_back { Some(seek) } else { None },
            )
        };
        match NonNull::new(ctx) {
            Some(ctx) => {
                if !seekable {
                    // SAFETY: `ctx` is the valid context just created; lavf reads `seekable` to decide whether
                    // it may seek (demuxers then read forward only, and avio serves forward seeks by reading).
                    unsafe { (*ctx.as_ptr()).seekable = 0 };
                }
                Ok(Self { ctx, cursor })
            }
            None => {
                // SAFETY: the context was not created, so we still own both the buffer and the cursor.
                unsafe {
                    sys::av_free(buffer.cast());
                    drop(Box::from_raw(cursor));
                }
                Err(out_of_memory("avio_alloc_context"))
            }
        }
    }

    /// The raw context, to hand to `AVFormatContext.pb`.
    pub(crate) fn as_ptr(&self) -> *mut sys::AVIOContext {
        self.ctx.as_ptr()
    }
}

impl Drop for MemoryIo {
    fn drop(&mut self) {
        // SAFETY: lavf may have replaced the I/O buffer, so free `pb->buffer` (not the one we allocated), then
        // the context; the cursor is freed last, after nothing can call the callbacks any more.
        unsafe {
            let mut ctx = self.ctx.as_ptr();
            sys::av_freep((&mut (*ctx).buffer as *mut *mut u8).cast());
            sys::avio_context_free(&mut ctx);
            drop(Box::from_raw(self.cursor));
        }
    }
}

/// lavf's read callback: copies up to `buf_size` bytes from the buffer, or reads them from the file or the
/// stream.
unsafe extern "C" fn read_packet(opaque: *mut c_void, buf: *mut u8, buf_size: c_int) -> c_int {
    // SAFETY: `opaque` is the Cursor registered in `MemoryIo::with_cursor`, alive as long as the context; lavf
    // calls the callbacks from one thread at a time.
    let cursor = unsafe { &mut *opaque.cast::<Cursor>() };
    if buf_size <= 0 {
        return AVERROR_EOF;
    }
    // SAFETY: lavf gives a writable buffer of `buf_size` bytes that nothing else touches during the call.
    let out = unsafe { std::slice::from_raw_parts_mut(buf, buf_size as usize) };
    match cursor {
        Cursor::Memory { data, pos } => {
            let remaining = data.len().saturating_sub(*pos);
            if remaining == 0 {
                return AVERROR_EOF;
            }
            let n = remaining.min(out.len());
            out[..n].copy_from_slice(&data[*pos..*pos + n]);
            *pos += n;
            n as c_int
        }
        Cursor::File { file, pos } => {
            let remaining = file.len.saturating_sub(*pos);
            if remaining == 0 {
                return AVERROR_EOF;
            }
            let want = out
                .len()
                .min(usize::try_from(remaining).unwrap_or(usize::MAX));
            loop {
                match file.file.read_at(&mut out[..want], *pos) {
                    // The file is shorter than when it was opened: its end.
                    Ok(0) => return AVERROR_EOF,
                    Ok(n) => {
                        *pos += n as u64;
                        return n as c_int;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        if e.raw_os_error().is_none() {
                            tracing::warn!(offset = *pos, error = %e, "a video's source failed a read");
                        }
                        return -e.raw_os_error().unwrap_or(libc::EIO);
                    }
                }
            }
        }
        Cursor::Stream(source) => match source.read(out) {
            StreamRead::Data(n) => n.min(out.len()) as c_int,
            StreamRead::End => AVERROR_EOF,
            StreamRead::Failed => -libc::EIO,
        },
    }
}

/// lavf's seek callback: in memory, `SEEK_SET`/`SEEK_CUR`/`SEEK_END`, and `AVSEEK_SIZE` answering the buffer's
/// size; in a stream, `SEEK_SET` to a byte the source still holds (avio asks for absolute positions only).
unsafe extern "C" fn seek(opaque: *mut c_void, offset: i64, whence: c_int) -> i64 {
    // SAFETY: as in `read_packet`.
    let cursor = unsafe { &mut *opaque.cast::<Cursor>() };
    let whence = whence & !sys::AVSEEK_FORCE;
    let (len, pos) = match cursor {
        Cursor::Memory { data, pos } => (data.len() as i64, *pos as i64),
        Cursor::File { file, pos } => (i64::try_from(file.len).unwrap_or(i64::MAX), *pos as i64),
        Cursor::Stream(source) => {
            return match u64::try_from(offset) {
                Ok(target) if whence == libc::SEEK_SET && source.seek(target) => offset,
                _ => -1,
            }
        }
    };
    let target = match whence {
        sys::AVSEEK_SIZE => return len,
        libc::SEEK_SET => offset,
        libc::SEEK_CUR => pos.saturating_add(offset),
        libc::SEEK_END => len.saturating_add(offset),
        _ => return -1,
    };
    if !(0..=len).contains(&target) {
        return -1;
    }
    match cursor {
        Cursor::Memory { pos, .. } => *pos = target as usize,
        Cursor::File { pos, .. } => *pos = target as u64,
        // Returned above; never a panic in a callback.
        Cursor::Stream(_) => return -1,
    }
    target
}
