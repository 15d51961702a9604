//! `AVIOContext` reading from a [`Bytes`] buffer in memory, with seeking (so MP4 with `moov` at the end works).

use std::ffi::{c_int, c_void};
use std::ptr::NonNull;

use bytes::Bytes;
use ffmpeg_sys_next as sys;

use super::{out_of_memory, AVERROR_EOF};
use crate::error::AvError;

/// Size of the I/O buffer lavf reads through.
const IO_BUFFER_SIZE: usize = 64 * 1024;

/// The callbacks' state: the whole encoded video and a read position. The buffer is shared, never copied.
struct Cursor {
    data: Bytes,
    pos: usize,
}

/// An `AVIOContext` over a memory buffer. Owns the context, its I/O buffer and the [`Cursor`] its callbacks use.
pub(crate) struct MemoryIo {
    ctx: NonNull<sys::AVIOContext>,
    cursor: *mut Cursor,
}

// SAFETY: the context and the cursor are owned by this value alone and only touched through `&mut self` or by
// lavf calls made through the owning `FormatContext`; nothing is tied to the creating thread.
unsafe impl Send for MemoryIo {}

impl MemoryIo {
    /// Wraps `data` (no copy: `Bytes` is reference-counted).
    pub(crate) fn new(data: Bytes) -> Result<Self, AvError> {
        let cursor = Box::into_raw(Box::new(Cursor { data, pos: 0 }));
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
                Some(seek),
            )
        };
        match NonNull::new(ctx) {
            Some(ctx) => Ok(Self { ctx, cursor }),
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

/// lavf's read callback: copies up to `buf_size` bytes from the cursor.
unsafe extern "C" fn read_packet(opaque: *mut c_void, buf: *mut u8, buf_size: c_int) -> c_int {
    // SAFETY: `opaque` is the Cursor registered in `MemoryIo::new`, alive as long as the context; lavf calls
    // the callbacks from one thread at a time.
    let cursor = unsafe { &mut *opaque.cast::<Cursor>() };
    let remaining = cursor.data.len().saturating_sub(cursor.pos);
    if remaining == 0 || buf_size <= 0 {
        return AVERROR_EOF;
    }
    let n = remaining.min(buf_size as usize);
    // SAFETY: lavf gives a writable buffer of `buf_size` bytes; we copy `n <= buf_size` bytes into it from
    // within the bounds of `data`.
    unsafe { std::ptr::copy_nonoverlapping(cursor.data.as_ptr().add(cursor.pos), buf, n) };
    cursor.pos += n;
    n as c_int
}

/// lavf's seek callback: `SEEK_SET`/`SEEK_CUR`/`SEEK_END`, and `AVSEEK_SIZE` answering the buffer's size.
unsafe extern "C" fn seek(opaque: *mut c_void, offset: i64, whence: c_int) -> i64 {
    // SAFETY: as in `read_packet`.
    let cursor = unsafe { &mut *opaque.cast::<Cursor>() };
    let len = cursor.data.len() as i64;
    let whence = whence & !sys::AVSEEK_FORCE;
    let target = match whence {
        sys::AVSEEK_SIZE => return len,
        libc::SEEK_SET => offset,
        libc::SEEK_CUR => cursor.pos as i64 + offset,
        libc::SEEK_END => len + offset,
        _ => return -1,
    };
    if !(0..=len).contains(&target) {
        return -1;
    }
    cursor.pos = target as usize;
    target
}
