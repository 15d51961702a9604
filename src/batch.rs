//! What the operator yields: a [`Batch`] of [`Sequence`]s of RGB frames in one contiguous buffer.

use std::fmt;

use crate::error::VideoRef;
use crate::feed::{Label, VideoId};
use crate::pool::PooledBuffer;

/// Bytes per pixel of the RGB24 output.
pub const CHANNELS: usize = 3;

/// Where one sequence lies in its batch's buffer, and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SequenceMeta {
    /// Frames in the sequence's buffer, padding included.
    pub(crate) frames: usize,
    /// Real (decoded) frames; the rest are zero padding.
    pub(crate) valid_frames: usize,
    /// Index in the video of the first frame.
    pub(crate) first_frame: u64,
    /// Presentation time in seconds of each real frame.
    pub(crate) pts: Vec<f64>,
    /// Byte offset of the sequence in the batch buffer.
    pub(crate) offset: usize,
}

/// Up to `max_batch_size` sequences of frames from one video, in one contiguous buffer of RGB24 bytes laid out
/// sequence after sequence, each (F,H,W,3).
///
/// Dropping a batch returns its buffer to the operator's pool.
pub struct Batch {
    pub(crate) video: VideoRef,
    pub(crate) index: u64,
    pub(crate) last: bool,
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) data: PooledBuffer,
    pub(crate) sequences: Vec<SequenceMeta>,
}

impl fmt::Debug for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("video", &self.video)
            .field("index", &self.index)
            .field("last", &self.last)
            .field(
                "sequence_shapes",
                &self
                    .sequences()
                    .iter()
                    .map(Sequence::shape)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Batch {
    /// The id of the video the batch came from.
    pub fn video_id(&self) -> VideoId {
        self.video.id
    }

    /// The label the video was fed with, if any.
    pub fn label(&self) -> Option<&Label> {
        self.video.label.as_ref()
    }

    /// The video's id and label together.
    pub fn video(&self) -> &VideoRef {
        &self.video
    }

    /// The batch's index within its video: 0, 1, 2...
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Whether this is the video's last batch.
    pub fn is_last(&self) -> bool {
        self.last
    }

    /// Number of sequences (at most `max_batch_size`; fewer in a video's last batch or before a resolution
    /// change).
    pub fn len(&self) -> usize {
        self.sequences.len()
    }

    /// Always false: a batch holds at least one sequence.
    pub fn is_empty(&self) -> bool {
        self.sequences.is_empty()
    }

    /// Frame height and width and channels, `[H, W, 3]`, the same for every frame of the batch.
    pub fn frame_shape(&self) -> [usize; 3] {
        [self.height, self.width, CHANNELS]
    }

    /// The whole batch: every sequence's (F,H,W,3) bytes one after the other, padding included.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// `[N, F, H, W, 3]` when every sequence has the same number of frames (always so with
    /// [`LastSequencePolicy::Pad`](crate::LastSequencePolicy::Pad)), so that [`data`](Self::data) is one
    /// dense tensor; `None` when the last sequence is a shorter partial one.
    pub fn shape(&self) -> Option<[usize; 5]> {
        let f = self.sequences.first()?.frames;
        self.sequences.iter().all(|s| s.frames == f).then_some([
            self.sequences.len(),
            f,
            self.height,
            self.width,
            CHANNELS,
        ])
    }

    /// Every sequence, in order.
    pub fn sequences(&self) -> Vec<Sequence<'_>> {
        (0..self.sequences.len())
            .map(|i| self.sequence(i))
            .collect()
    }

    /// Sequence `i`. Panics when `i >= len()`.
    pub fn sequence(&self, i: usize) -> Sequence<'_> {
        Sequence {
            batch: self,
            meta: &self.sequences[i],
        }
    }

    /// Real frames in the batch (padding excluded).
    pub fn valid_frames(&self) -> usize {
        self.sequences.iter().map(|s| s.valid_frames).sum()
    }

    fn frame_bytes(&self) -> usize {
        self.width * self.height * CHANNELS
    }
}

/// One sequence of consecutive frames of a video, shape (F,H,W,3).
#[derive(Clone, Copy)]
pub struct Sequence<'a> {
    batch: &'a Batch,
    meta: &'a SequenceMeta,
}

impl fmt::Debug for Sequence<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sequence")
            .field("shape", &self.shape())
            .field("valid_frames", &self.meta.valid_frames)
            .field("first_frame", &self.meta.first_frame)
            .finish()
    }
}

impl<'a> Sequence<'a> {
    /// `[F, H, W, 3]`; F counts padding frames.
    pub fn shape(&self) -> [usize; 4] {
        [
            self.meta.frames,
            self.batch.height,
            self.batch.width,
            CHANNELS,
        ]
    }

    /// The sequence's bytes, padding included.
    pub fn data(&self) -> &'a [u8] {
        let len = self.meta.frames * self.batch.frame_bytes();
        &self.batch.data[self.meta.offset..self.meta.offset + len]
    }

    /// How many frames are real (decoded); the rest, at the end, are zeros. Equal to F except for a video's
    /// last sequence under [`LastSequencePolicy::Pad`](crate::LastSequencePolicy::Pad).
    pub fn valid_frames(&self) -> usize {
        self.meta.valid_frames
    }

    /// How many zero frames pad the sequence.
    pub fn padded_frames(&self) -> usize {
        self.meta.frames - self.meta.valid_frames
    }

    /// Index in the video of the first frame.
    pub fn first_frame(&self) -> u64 {
        self.meta.first_frame
    }

    /// Presentation time in seconds of each real frame.
    pub fn pts(&self) -> &'a [f64] {
        &self.meta.pts
    }

    /// The real frames (padding excluded), in order.
    pub fn frames(&self) -> impl ExactSizeIterator<Item = Frame<'a>> + 'a {
        let (batch, meta) = (self.batch, self.meta);
        (0..meta.valid_frames).map(move |i| {
            let size = batch.frame_bytes();
            let start = meta.offset + i * size;
            Frame {
                data: &batch.data[start..start + size],
                width: batch.width,
                height: batch.height,
                pts: meta.pts[i],
                index: meta.first_frame + i as u64,
            }
        })
    }
}

/// One decoded frame: `height` rows of `width` RGB pixels.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    data: &'a [u8],
    width: usize,
    height: usize,
    pts: f64,
    index: u64,
}

impl<'a> Frame<'a> {
    /// The RGB24 bytes, row after row, (H,W,3).
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Presentation time in seconds.
    pub fn pts(&self) -> f64 {
        self.pts
    }

    /// Index of the frame in its video: 0, 1, 2...
    pub fn index(&self) -> u64 {
        self.index
    }
}
