//! `AVPacket`: one compressed packet read from the container.

use std::ptr::NonNull;

use ffmpeg_sys_next as sys;

use super::out_of_memory;
use crate::error::AvError;

/// An owned `AVPacket`, reused for every read (`av_packet_unref` between reads).
pub(crate) struct Packet {
    ptr: NonNull<sys::AVPacket>,
    /// The demuxer lost data before this packet ([`follows_lost_data`](Self::follows_lost_data)).
    after_loss: bool,
}

// SAFETY: the packet is owned by this value alone; FFmpeg packets are not tied to a thread.
unsafe impl Send for Packet {}

impl Packet {
    pub(crate) fn new() -> Result<Self, AvError> {
        // SAFETY: av_packet_alloc returns NULL or a valid, empty packet.
        NonNull::new(unsafe { sys::av_packet_alloc() })
            .map(|ptr| Self {
                ptr,
                after_loss: false,
            })
            .ok_or_else(|| out_of_memory("av_packet_alloc"))
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::AVPacket {
        self.ptr.as_ptr()
    }

    /// The stream the packet belongs to.
    pub(crate) fn stream_index(&self) -> usize {
        // SAFETY: the packet is valid for the life of self.
        unsafe { (*self.ptr.as_ptr()).stream_index as usize }
    }

    fn raw(&self) -> &sys::AVPacket {
        // SAFETY: the packet is valid and owned for the life of self.
        unsafe { self.ptr.as_ref() }
    }

    /// Presentation timestamp in stream time base units, when the container gave one.
    pub(crate) fn pts(&self) -> Option<i64> {
        let ts = self.raw().pts;
        (ts != sys::AV_NOPTS_VALUE).then_some(ts)
    }

    /// Sets the presentation timestamp (`None`: none), for a stream whose container gives none: the decoder
    /// gives it back on the frame the packet makes.
    pub(crate) fn set_pts(&mut self, pts: Option<i64>) {
        // SAFETY: the packet is valid and owned by `self`; `pts` is a plain field.
        unsafe { (*self.ptr.as_ptr()).pts = pts.unwrap_or(sys::AV_NOPTS_VALUE) };
    }

    /// Decoding timestamp in stream time base units, when the container gave one.
    pub(crate) fn dts(&self) -> Option<i64> {
        let ts = self.raw().dts;
        (ts != sys::AV_NOPTS_VALUE).then_some(ts)
    }

    /// Duration in stream time base units (0: unknown).
    pub(crate) fn duration(&self) -> i64 {
        self.raw().duration.max(0)
    }

    /// Bytes of data.
    pub(crate) fn size(&self) -> usize {
        self.raw().size.max(0) as usize
    }

    /// Byte position in the container, when known.
    pub(crate) fn pos(&self) -> Option<i64> {
        let pos = self.raw().pos;
        (pos >= 0).then_some(pos)
    }

    /// Whether the packet starts a keyframe (a point decoding may start from).
    pub(crate) fn is_key(&self) -> bool {
        self.raw().flags & sys::AV_PKT_FLAG_KEY != 0
    }

    /// Whether the demuxer marks the packet's data as damaged (`AV_PKT_FLAG_CORRUPT`: MPEG-TS continuity errors,
    /// a PES cut short).
    pub(crate) fn is_corrupt(&self) -> bool {
        self.raw().flags & sys::AV_PKT_FLAG_CORRUPT != 0
    }

    /// Marks the packet's data as damaged (`AV_PKT_FLAG_CORRUPT`), as a demuxer does: the container's own
    /// checksum of it does not match.
    pub(crate) fn mark_corrupt(&mut self) {
        // SAFETY: the packet is valid and owned by `self`; `flags` is a plain field.
        unsafe { (*self.ptr.as_ptr()).flags |= sys::AV_PKT_FLAG_CORRUPT };
    }

    /// Whether the demuxer marks the packet as decoded only for reference (an MP4 edit list cuts its frame):
    /// libavcodec drops the frame it gives.
    pub(crate) fn is_discarded(&self) -> bool {
        self.raw().flags & sys::AV_PKT_FLAG_DISCARD != 0
    }

    /// Moves `other`'s data and properties into this packet (whose own are released), leaving `other` empty.
    pub(crate) fn take_from(&mut self, other: &mut Packet) {
        // SAFETY: both packets are valid and distinct (two `&mut`); unref then move_ref is FFmpeg's documented
        // way to move a packet's reference.
        unsafe {
            sys::av_packet_unref(self.ptr.as_ptr());
            sys::av_packet_move_ref(self.ptr.as_ptr(), other.ptr.as_ptr());
        }
        self.after_loss = std::mem::take(&mut other.after_loss);
    }

    /// A new reference to this packet's data (no bytes are copied where the data is reference-counted, as a
    /// demuxer's is), with its properties and its lost-data mark: kept to decode the packet again.
    pub(crate) fn new_ref(&self) -> Result<Packet, AvError> {
        let mut copy = Packet::new()?;
        // SAFETY: both packets are valid; `copy` is empty, as av_packet_ref requires of its destination.
        let ret = unsafe { sys::av_packet_ref(copy.ptr.as_ptr(), self.ptr.as_ptr()) };
        super::check(ret, "av_packet_ref")?;
        copy.after_loss = self.after_loss;
        Ok(copy)
    }

    /// Releases the packet's data, keeping the struct for the next read.
    pub(crate) fn unref(&mut self) {
        self.after_loss = false;
        // SAFETY: unref on a valid packet is always allowed, also when empty.
        unsafe { sys::av_packet_unref(self.ptr.as_ptr()) }
    }

    /// Whether the demuxer lost data just before this packet: it skipped damaged data to find its footing again
    /// (logging why), so packets before this one may be missing.
    pub(crate) fn follows_lost_data(&self) -> bool {
        self.after_loss
    }

    /// Marks that the demuxer lost data just before this packet.
    pub(crate) fn mark_after_lost_data(&mut self) {
        self.after_loss = true;
    }
}

impl Drop for Packet {
    fn drop(&mut self) {
        let mut ptr = self.ptr.as_ptr();
        // SAFETY: frees the packet and its data; `ptr` is not used again.
        unsafe { sys::av_packet_free(&mut ptr) }
    }
}
