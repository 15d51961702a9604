//! What the operator yields: a [`Batch`] of [`Sequence`]s of RGB frames in one contiguous buffer.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::assembly::pool::{BufferPool, PooledBuffer};
use crate::decode::audio::AudioClip;
use crate::device::{DecodedOn, DeviceBuffer};
use crate::info::ColorInfo;
use crate::orientation::Orientation;
use crate::settings::transforms::{DType, Layout, CHANNELS};
use crate::transform::plan::Geometry;
use crate::video::{Label, VideoId, VideoRef};

/// Where one sequence lies in its batch's buffer, and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SequenceMeta {
    /// Frames in the sequence's buffer, padding included.
    pub(crate) frames: usize,
    /// Real (decoded) frames; the rest are zero padding.
    pub(crate) valid_frames: usize,
    /// Display index of the first frame.
    pub(crate) first_frame: u64,
    /// Display index of each real frame.
    pub(crate) indices: Vec<u64>,
    /// Presentation time in seconds of each real frame.
    pub(crate) pts: Vec<f64>,
    /// Whether each real frame is damaged (see [`Frame::damaged`]).
    pub(crate) damaged: Vec<bool>,
    /// The holes (display indices no picture came out for) met since the video's sequence before this one.
    pub(crate) holes: Vec<Hole>,
    /// On the video's last sequence: why reading stopped before the end of its data, if it did.
    pub(crate) ended_early: Option<String>,
    /// When each real frame arrived: the read of the packet whose decoding gave it.
    pub(crate) arrivals: Vec<Instant>,
    /// Byte offset of the sequence in the batch buffer.
    pub(crate) offset: usize,
    /// The sequence's resize and crop window.
    pub(crate) geometry: Geometry,
    /// How its first frame was turned to be shown.
    pub(crate) orientation: Orientation,
    /// Its video's colour (shared by the video's sequences).
    pub(crate) color: Arc<ColorInfo>,
    /// The video the sequence comes from (packed batches hold several).
    pub(crate) video: VideoRef,
    /// This is the video's last sequence.
    pub(crate) ends_video: bool,
    /// The video's error follows its last sequence (the error, not the batch, ends the video).
    pub(crate) error_follows: bool,
    /// The audio played while its frames are shown, when the operator decodes audio.
    pub(crate) audio: Option<Arc<AudioClip>>,
}

/// A batch's storage: a pooled host buffer, or a pooled device buffer (which carries its GPU runtime; none can
/// exist without the `cuda` feature).
pub(crate) enum BatchData {
    Host(PooledBuffer),
    Device(DeviceBuffer),
}

impl BatchData {
    /// Bytes in use.
    pub(crate) fn len(&self) -> usize {
        match self {
            BatchData::Host(b) => b.len(),
            BatchData::Device(b) => b.len(),
        }
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        match self {
            BatchData::Host(b) => b.truncate(len),
            BatchData::Device(b) => b.truncate(len),
        }
    }

    /// The host buffer; `None` in GPU memory.
    pub(crate) fn host(&self) -> Option<&PooledBuffer> {
        match self {
            BatchData::Host(b) => Some(b),
            BatchData::Device(_) => None,
        }
    }
}

/// The crop window a sequence received, in the pixels of the (resized) frame; `x`, `y` are negative when a
/// padded window reaches out of the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CropWindow {
    /// Left edge.
    pub x: i64,
    /// Top edge.
    pub y: i64,
    /// Width.
    pub width: usize,
    /// Height.
    pub height: usize,
}

/// Up to `max_batch_size` sequences of frames from one video, in one contiguous buffer laid out sequence after
/// sequence, each (F,H,W,3) RGB bytes by default, or in the [`Layout`] and [`DType`] of the configured
/// [`Transforms`](crate::Transforms).
///
/// Dropping a batch returns its buffer to the operator's pool.
pub struct Batch {
    pub(crate) video: VideoRef,
    pub(crate) index: u64,
    pub(crate) last: bool,
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) dtype: DType,
    pub(crate) layout: Layout,
    pub(crate) data: BatchData,
    pub(crate) sequences: Vec<SequenceMeta>,
    pub(crate) decoded_on: DecodedOn,
    pub(crate) gap: Option<Gap>,
    /// When a poll handed the batch to the caller.
    pub(crate) delivered: Option<Instant>,
}

/// The wall-clock time of `at`, on the monotonic clock anchored to the wall clock once per process: times
/// keep their order and spacing (a later change of the system clock does not move them).
fn wall_clock(at: Instant) -> SystemTime {
    static ANCHOR: std::sync::OnceLock<(Instant, SystemTime)> = std::sync::OnceLock::new();
    let &(anchor, wall) = ANCHOR.get_or_init(|| (Instant::now(), SystemTime::now()));
    match at.checked_duration_since(anchor) {
        Some(after) => wall + after,
        None => wall.checked_sub(anchor.duration_since(at)).unwrap_or(wall),
    }
}

/// A break in a video pulled by URL: the source dropped and was reopened
/// ([`Reconnect::Backoff`](crate::Reconnect)). The first batch after the break reports it; its sequences start
/// after the break (the sequence open when the source dropped was closed there, per the last-sequence policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// Frames of the video decoded before the break (the first frame after it has this index).
    pub frames_before: u64,
    /// From the drop to the reopened source: from the failed read, or, when the source went silent, from the
    /// start of the silence that timed out (the read timeout included).
    pub duration: Duration,
    /// Reopen attempts it took (1 or more).
    pub attempts: u32,
    /// Breaks of this video so far, this one included.
    pub reconnects: u32,
}

/// A display index with no picture: its packet's picture did not decode (damaged data). The frames after it
/// keep their indices: a hole never renumbers what follows (docs/guide/damaged-videos.md, "One numbering").
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Hole {
    /// The display index left empty.
    pub index: u64,
    /// The presentation time it would have been shown at, in seconds.
    pub pts: f64,
}

impl Hole {
    /// The hole at display index `index`, time `pts` (seconds).
    pub fn new(index: u64, pts: f64) -> Self {
        Self { index, pts }
    }
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

    /// When the batch's last real frame arrived (see [`Sequence::arrivals`]).
    pub fn arrival(&self) -> Option<SystemTime> {
        self.last_arrival().map(wall_clock)
    }

    fn last_arrival(&self) -> Option<Instant> {
        self.sequences
            .iter()
            .rev()
            .find_map(|s| s.arrivals.last().copied())
    }

    /// The source's latency for this batch: from the arrival of its last real frame to the poll that handed
    /// the batch over (`None` before it was handed over, or without frames). For a live or pulled source, this
    /// is how far behind the source the consumer is.
    pub fn latency(&self) -> Option<Duration> {
        Some(
            self.delivered?
                .saturating_duration_since(self.last_arrival()?),
        )
    }

    /// How many of its real frames are damaged ([`Sequence::damaged_frames`], over its sequences).
    pub fn damaged_frames(&self) -> usize {
        self.sequences().iter().map(Sequence::damaged_frames).sum()
    }

    /// How many holes its sequences report ([`Sequence::holes`], over its sequences).
    pub fn hole_count(&self) -> usize {
        self.sequences().iter().map(|s| s.holes().len()).sum()
    }

    /// The break before this batch's frames, when the video's source dropped and was reopened (videos pulled
    /// by URL): its first sequence starts after it.
    pub fn gap(&self) -> Option<&Gap> {
        self.gap.as_ref()
    }

    /// Whether this is the video's last batch (with packed batches: whether its last sequence is its video's
    /// last).
    pub fn is_last(&self) -> bool {
        self.last
    }

    /// Whether the batch holds sequences of more than one video (only with
    /// [`Config::pack_batches`](crate::Config::pack_batches)).
    pub fn is_packed(&self) -> bool {
        self.sequences.iter().any(|s| s.video.id != self.video.id)
    }

    /// How many videos end in this batch (their last sequence is here).
    pub(crate) fn videos_ended(&self) -> u64 {
        self.sequences
            .iter()
            .filter(|s| s.ends_video && !s.error_follows)
            .count() as u64
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

    /// Frame height and width and channels, `[H, W, 3]`, the same for every frame of the batch (after the
    /// resize and crop).
    pub fn frame_shape(&self) -> [usize; 3] {
        [self.height, self.width, CHANNELS]
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The layout of each sequence.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The host buffer; panics for a batch in GPU memory.
    fn host_data(&self) -> &PooledBuffer {
        self.data.host().expect(
            "this batch is in GPU memory: use Batch::cuda() there, or Batch::to_host() for a host copy",
        )
    }

    /// The whole batch as bytes: every sequence one after the other, padding included (for `f32` output, the
    /// values' native-endian bytes).
    ///
    /// Panics for a batch in GPU memory ([`is_on_gpu`](Self::is_on_gpu)): take
    /// [`to_host`](Self::to_host) first (or use the device buffer).
    pub fn data(&self) -> &[u8] {
        self.host_data()
    }

    /// The whole batch as `f32` values, when the [`DType`] is `F32` or `F32Unit` and the batch is in host
    /// memory.
    pub fn data_f32(&self) -> Option<&[f32]> {
        let data = self.data.host()?;
        matches!(self.dtype, DType::F32 | DType::F32Unit).then(|| data.as_f32())
    }

    /// The whole batch as `u16` values (RGB48 levels, 0-65535), when the [`DType`] is `U16` and the batch is
    /// in host memory.
    pub fn data_u16(&self) -> Option<&[u16]> {
        let data = self.data.host()?;
        (self.dtype == DType::U16).then(|| data.as_u16())
    }

    /// The whole batch as `f16` values, when the [`DType`] is `F16` or `F16Unit` and the batch is in host
    /// memory.
    pub fn data_f16(&self) -> Option<&[half::f16]> {
        let data = self.data.host()?;
        matches!(self.dtype, DType::F16 | DType::F16Unit).then(|| data.as_f16())
    }

    /// Where the batch's frames were decoded: on the CPU (also a video NVDEC could not decode, with a CUDA
    /// device) or on NVDEC.
    pub fn decoded_on(&self) -> DecodedOn {
        self.decoded_on
    }

    /// Whether the batch is in GPU memory ([`Device::Cuda`](crate::Device::Cuda)).
    pub fn is_on_gpu(&self) -> bool {
        self.data.host().is_none()
    }

    /// The batch in host memory: a copy of a GPU batch (waiting for the GPU to finish writing it), or of a
    /// host batch. For tests and debugging: a pipeline on the GPU should use the device buffer.
    pub fn to_host(&self) -> crate::error::Result<Batch> {
        let bytes: Vec<u8> = match &self.data {
            BatchData::Host(b) => b.to_vec(),
            BatchData::Device(b) => b.to_host()?,
        };
        let mut host = BufferPool::new(0).acquire(bytes.len()).map_err(|error| {
            crate::error::Error::Video {
                video: self.video.clone(),
                error,
            }
        })?;
        host.copy_from_slice(&bytes);
        Ok(Batch {
            video: self.video.clone(),
            index: self.index,
            last: self.last,
            width: self.width,
            height: self.height,
            dtype: self.dtype,
            layout: self.layout,
            data: BatchData::Host(host),
            sequences: self.sequences.clone(),
            decoded_on: self.decoded_on,
            gap: self.gap,
            delivered: self.delivered,
        })
    }

    /// The batch's device buffer, when it is in GPU memory: the whole batch (its first
    /// [`byte_len`](Self::byte_len) bytes), laid out as [`data`](Self::data) would be; view it as `f32`/`f16`
    /// per the [`DType`]. It was written on [`cuda_stream`](Self::cuda_stream): order work on another stream
    /// after it (`your_stream.join(batch.cuda_stream())`; cudarc's own calls on this slice do so by
    /// themselves). The buffer goes back to the operator's pool when the batch is dropped: finish reading
    /// it first (or copy it).
    #[cfg(feature = "cuda")]
    pub fn cuda(&self) -> Option<&cudarc::driver::CudaSlice<u8>> {
        match &self.data {
            BatchData::Device(b) => Some(b.slice()),
            BatchData::Host(_) => None,
        }
    }

    /// The CUDA stream that wrote a GPU batch.
    #[cfg(feature = "cuda")]
    pub fn cuda_stream(&self) -> Option<&std::sync::Arc<cudarc::driver::CudaStream>> {
        match &self.data {
            BatchData::Device(b) => Some(b.stream()),
            BatchData::Host(_) => None,
        }
    }

    /// Bytes of the batch's data (host or device).
    pub fn byte_len(&self) -> usize {
        self.data.len()
    }

    /// `[N, ...]` with the sequence shape of the layout (`[N, F, H, W, 3]` by default) when every sequence has
    /// the same number of frames (always so with [`LastSequencePolicy::Pad`](crate::LastSequencePolicy::Pad)),
    /// so that [`data`](Self::data) is one dense tensor; `None` when the last sequence is a shorter partial
    /// one.
    pub fn shape(&self) -> Option<[usize; 5]> {
        let f = self.sequences.first()?.frames;
        let [a, b, c, d] = self.layout.shape(f, self.height, self.width);
        self.sequences
            .iter()
            .all(|s| s.frames == f)
            .then_some([self.sequences.len(), a, b, c, d])
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
        self.width * self.height * CHANNELS * self.dtype.size()
    }
}

/// One sequence of consecutive frames of a video, shape (F,H,W,3) by default (see [`Layout`]).
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
    /// `[F, H, W, 3]` (or the configured layout's order); F counts padding frames.
    pub fn shape(&self) -> [usize; 4] {
        self.batch
            .layout
            .shape(self.meta.frames, self.batch.height, self.batch.width)
    }

    /// Where the sequence starts in its batch's buffer, in bytes (host or device: for views of a GPU batch's
    /// device buffer, `Batch::cuda` in builds with the `cuda` feature).
    pub fn byte_offset(&self) -> usize {
        self.meta.offset
    }

    /// Bytes of the sequence, padding included.
    pub fn byte_len(&self) -> usize {
        self.meta.frames * self.batch.frame_bytes()
    }

    /// The sequence's bytes, padding included.
    pub fn data(&self) -> &'a [u8] {
        let len = self.meta.frames * self.batch.frame_bytes();
        &self.batch.host_data()[self.meta.offset..self.meta.offset + len]
    }

    /// The sequence's values when the [`DType`] is `F32` or `F32Unit`, padding included.
    pub fn data_f32(&self) -> Option<&'a [f32]> {
        let values = self.batch.data_f32()?;
        let start = self.meta.offset / 4;
        Some(&values[start..start + self.meta.frames * self.batch.frame_bytes() / 4])
    }

    /// The sequence's values when the [`DType`] is `U16`, padding included.
    pub fn data_u16(&self) -> Option<&'a [u16]> {
        let values = self.batch.data_u16()?;
        let start = self.meta.offset / 2;
        Some(&values[start..start + self.meta.frames * self.batch.frame_bytes() / 2])
    }

    /// The sequence's values when the [`DType`] is `F16` or `F16Unit`, padding included.
    pub fn data_f16(&self) -> Option<&'a [half::f16]> {
        let values = self.batch.data_f16()?;
        let start = self.meta.offset / 2;
        Some(&values[start..start + self.meta.frames * self.batch.frame_bytes() / 2])
    }

    /// The crop window this sequence received (in the pixels of the resized frame), when a crop is
    /// configured; the same for each of its frames.
    pub fn crop_window(&self) -> Option<CropWindow> {
        let g = &self.meta.geometry;
        g.cropped.then_some(CropWindow {
            x: g.window.x,
            y: g.window.y,
            width: g.window.w,
            height: g.window.h,
        })
    }

    /// How the sequence's frames were turned to be shown, before the resize and crop: the video's display
    /// matrix read as the `ffmpeg` CLI reads it ([`Orientation::Upright`] when it has none, or with
    /// [`Config::autorotate`](crate::Config::autorotate) off). Its first frame's, should a video change
    /// turn mid-sequence.
    pub fn orientation(&self) -> Orientation {
        self.meta.orientation
    }

    /// Its video's colour, as its stream gives it: bit depth, primaries, transfer (SDR, PQ or HLG: see
    /// [`ColorInfo::dynamic_range`]), matrix, range and HDR static metadata. The frames are converted to RGB
    /// with its matrix and range; the transfer is left as it is (an HDR video's frames are its PQ or HLG
    /// values).
    pub fn color(&self) -> &ColorInfo {
        &self.meta.color
    }

    /// The audio played while its frames are shown, from its first frame's start to its last frame's end, when
    /// the operator decodes audio ([`Config::audio`](crate::Config::audio)): empty for a video without audio
    /// (or whose audio cannot be read); `None` when audio is off, and for sampled clips of a video read once
    /// (live, or by URL).
    pub fn audio(&self) -> Option<&'a AudioClip> {
        self.meta.audio.as_deref()
    }

    /// The size `(width, height)` frames were resized to before the crop, when a resize is configured.
    pub fn resized(&self) -> Option<(usize, usize)> {
        let g = &self.meta.geometry;
        g.resized.then_some(g.frame)
    }

    /// The video this sequence comes from (the batch's own, except in packed batches).
    pub fn video(&self) -> &'a VideoRef {
        &self.meta.video
    }

    /// Whether this is its video's last sequence (known when the video ended before the batch was delivered).
    pub fn ends_video(&self) -> bool {
        self.meta.ends_video
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

    /// Display index of the first frame (its position in the video's display order, 0-based, as
    /// `ffmpeg -fps_mode passthrough` outputs frames).
    pub fn first_frame(&self) -> u64 {
        self.meta.first_frame
    }

    /// Display index of each real frame: consecutive unless [sampling](crate::Sampling) chose them or a
    /// [hole](Self::holes) lies between.
    pub fn indices(&self) -> &'a [u64] {
        &self.meta.indices
    }

    /// Presentation time in seconds of each real frame.
    pub fn pts(&self) -> &'a [f64] {
        &self.meta.pts
    }

    /// Whether each real frame is damaged: concealed by the decoder, or decoded from damaged data
    /// ([`Frame::damaged`]).
    pub fn damaged(&self) -> &'a [bool] {
        &self.meta.damaged
    }

    /// How many of its real frames are damaged.
    pub fn damaged_frames(&self) -> usize {
        self.meta.damaged.iter().filter(|&&d| d).count()
    }

    /// The holes met since the video's previous sequence (display indices whose pictures did not decode, before
    /// this sequence's last frame), and on the video's last sequence those after its last frame too (with
    /// eager delivery, [`Config::low_latency`](crate::Config::low_latency), only when that sequence had not
    /// left yet: else they are logged).
    pub fn holes(&self) -> &'a [Hole] {
        &self.meta.holes
    }

    /// On the video's last sequence: why reading stopped before the end of the video's data (a file cut
    /// short, a container broken past repair), when it did. The frames before are delivered; with
    /// [`Config::strict`](crate::Config::strict) the video fails instead.
    pub fn ended_early(&self) -> Option<&'a str> {
        self.meta.ended_early.as_deref()
    }

    /// The wall-clock time each real frame arrived: when the packet whose decoding gave the frame was read
    /// from the source (a live or pulled video's bytes arriving; for a whole video, its reading).
    pub fn arrivals(&self) -> Vec<SystemTime> {
        self.meta
            .arrivals
            .iter()
            .map(|&at| wall_clock(at))
            .collect()
    }

    /// The real frames (padding excluded), in order.
    pub fn frames(&self) -> impl ExactSizeIterator<Item = Frame<'a>> + 'a {
        let seq = *self;
        (0..self.meta.valid_frames).map(move |i| Frame { seq, i })
    }
}

/// One frame of a sequence: `height` rows of `width` RGB pixels.
#[derive(Clone, Copy)]
pub struct Frame<'a> {
    seq: Sequence<'a>,
    /// Index within the sequence.
    i: usize,
}

impl fmt::Debug for Frame<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("index", &self.index())
            .field("width", &self.width())
            .field("height", &self.height())
            .field("pts", &self.pts())
            .finish()
    }
}

impl<'a> Frame<'a> {
    /// The frame's bytes: RGB24 rows (H,W,3) by default; (H,W,3) or (3,H,W) values in the configured
    /// [`DType`] for the FHWC and FCHW layouts.
    ///
    /// # Panics
    /// With [`Layout::Cfhw`] a frame is not contiguous: use [`plane`](Self::plane).
    pub fn data(&self) -> &'a [u8] {
        let batch = self.seq.batch;
        assert!(
            batch.layout != Layout::Cfhw,
            "a CFHW frame is not contiguous: use Frame::plane"
        );
        let size = batch.frame_bytes();
        let start = self.seq.meta.offset + self.i * size;
        &batch.host_data()[start..start + size]
    }

    /// Channel `c`'s (H,W) plane as bytes (values of the configured [`DType`]), for the FCHW and CFHW layouts.
    ///
    /// # Panics
    /// With [`Layout::Fhwc`] (channels are interleaved) or when `c >= 3`.
    pub fn plane(&self, c: usize) -> &'a [u8] {
        let batch = self.seq.batch;
        assert!(c < CHANNELS, "channel {c} of 3");
        let plane = batch.width * batch.height * batch.dtype.size();
        let frames = self.seq.meta.frames;
        let index = match batch.layout {
            Layout::Fchw => self.i * CHANNELS + c,
            Layout::Cfhw => c * frames + self.i,
            Layout::Fhwc => panic!("an FHWC frame has no planes: use Frame::data"),
        };
        let start = self.seq.meta.offset + index * plane;
        &batch.host_data()[start..start + plane]
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.seq.batch.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.seq.batch.height
    }

    /// Presentation time in seconds.
    pub fn pts(&self) -> f64 {
        self.seq.meta.pts[self.i]
    }

    /// The wall-clock time the frame arrived (see [`Sequence::arrivals`]).
    pub fn arrival(&self) -> SystemTime {
        wall_clock(self.seq.meta.arrivals[self.i])
    }

    /// Whether the frame is damaged: the decoder concealed errors in it or lacked a reference for it
    /// (`AV_FRAME_FLAG_CORRUPT`, `decode_error_flags`), or it was decoded after damaged data in its GOP. A frame
    /// not damaged is the same picture in every API (a plain run, any sampling, the reader) and equals the
    /// `ffmpeg` CLI's at its time; a damaged one may differ between them (concealment depends on what was
    /// decoded before it).
    pub fn damaged(&self) -> bool {
        self.seq.meta.damaged[self.i]
    }

    /// The frame's display index in its video (0, 1, 2... in a plain run; a sampled sequence's own, as
    /// [`Sequence::indices`] lists them).
    pub fn index(&self) -> u64 {
        self.seq.meta.indices[self.i]
    }
}
