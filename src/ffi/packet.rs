//! `AVPacket`: one compressed packet read from the container.

use std::ptr::NonNull;

use ffmpeg_sys_next as sys;

use super::out_of_memory;
use crate::error::AvError;

/// An owned `AVPacket`, reused for every read (`av_packet_unref` between reads).
pub(crate) struct Packet(NonNull<sys::AVPacket>);

// SAFETY: the packet is owned by this value alone; FFmpeg packets are not tied to a thread.
unsafe impl Send for Packet {}

impl Packet {
    pub(crate) fn new() -> Result<Self, AvError> {
        // SAFETY: av_packet_alloc returns NULL or a valid, empty packet.
        NonNull::new(unsafe { sys::av_packet_alloc() })
            .map(Self)
            .ok_or_else(|| out_of_memory("av_packet_alloc"))
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::AVPacket {
        self.0.as_ptr()
    }

    /// The stream the packet belongs to.
    pub(crate) fn stream_index(&self) -> usize {
        // SAFETY: the packet is valid for the life of self.
        unsafe { (*self.0.as_ptr()).stream_index as usize }
    }

    /// Releases the packet's data, keeping the struct for the next read.
    pub(crate) fn unref(&mut self) {
        // SAFETY: unref on a valid packet is always allowed, also when empty.
        unsafe { sys::av_packet_unref(self.0.as_ptr()) }
    }
}

impl Drop for Packet {
    fn drop(&mut self) {
        let mut ptr = self.0.as_ptr();
        // SAFETY: frees the packet and its data; `ptr` is not used again.
        unsafe { sys::av_packet_free(&mut ptr) }
    }
}
