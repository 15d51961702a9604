//! Sequence and batch assembly: decoded frames are written straight into their slot of a pooled batch buffer,
//! sequences are cut at `sequence_length` frames, batches at `max_batch_size` sequences, at the end of the
//! stream (the last sequence follows the policy) and at a resolution change.
//!
//! By default a full batch is held back until the next frame arrives or the stream ends, so that it can be
//! marked as the video's last one without knowing the frame count in advance. In eager mode (live, low
//! latency) it is emitted at once, and the end of a video whose last batch was already full is reported by
//! [`Finished::AlreadyDelivered`].

use std::sync::Arc;
use std::time::Instant;

use crate::assembly::batch::{Batch, BatchData, Gap, Hole, SequenceMeta};
use crate::assembly::pool::BufferPool;
use crate::device::{DecodedOn, GpuRuntime};
use crate::error::VideoError;
use crate::ffi::scale::WRITE_SLACK;
use crate::info::{ColorInfo, ContentLight, DynamicRange, MasteringDisplay};
use crate::orientation::Orientation;
use crate::settings::config::{batch_bytes, LastSequencePolicy};
use crate::settings::transforms::{DType, Layout, Transforms, CHANNELS};
use crate::transform::plan::{Geometry, OutputSize, Planner};
use crate::transform::write::{zero_frames, DeviceOut, HostOut, SeqOut};
use crate::video::{ClipKey, VideoRef};

/// A batch being filled.
struct Building {
    data: BatchData,
    /// Decoded frame size `(w, h)`: a change starts a new batch.
    input: (usize, usize),
    /// Output frame size `(w, h)`.
    width: usize,
    height: usize,
    sequences: Vec<SequenceMeta>,
    /// Bytes of the finished sequences (each sequence's region is reserved whole when it starts).
    used: usize,
}

impl Building {
    fn frame_bytes(&self, dtype: DType) -> usize {
        self.width * self.height * CHANNELS * dtype.size()
    }
}

/// A sequence's region of a batch buffer, as elements of the output type. A u8 region is followed by the
/// buffer's slack (swscale, writing a frame straight into it, may overrun its last row). In GPU memory, the
/// region of the device buffer.
pub(crate) fn seq_out(data: &mut BatchData, dtype: DType, start: usize, len: usize) -> SeqOut<'_> {
    let data = match data {
        BatchData::Host(data) => data,
        BatchData::Device(buffer) => return SeqOut::Device(DeviceOut { buffer, start, len }),
    };
    SeqOut::Host(match dtype {
        DType::U8 => HostOut::U8(&mut data.with_slack_mut()[start..start + len + WRITE_SLACK]),
        DType::U16 => HostOut::U16(&mut data.as_u16_mut()[start / 2..(start + len) / 2]),
        DType::F16 | DType::F16Unit => {
            HostOut::F16(&mut data.as_f16_mut()[start / 2..(start + len) / 2])
        }
        DType::F32 | DType::F32Unit => {
            HostOut::F32(&mut data.as_f32_mut()[start / 4..(start + len) / 4])
        }
    })
}

/// Where a frame stands in its video: its time, display index and arrival.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameAt {
    /// Presentation time in seconds.
    pub(crate) pts: f64,
    /// Display index (its position in display order).
    pub(crate) index: u64,
    /// When the packet that gave it was read.
    pub(crate) arrival: Instant,
    /// How it is turned to be shown (its size, given with it, is the shown one).
    pub(crate) orientation: Orientation,
    /// The picture is damaged (`decode::damage`).
    pub(crate) damaged: bool,
}

/// How a video's assembly ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finished {
    /// The last batch was emitted, marked last.
    LastEmitted,
    /// Every batch was already emitted (eager mode), none marked last.
    AlreadyDelivered,
    /// The video gave no frame.
    NoFrames,
    /// Packed batches: the video's last sequence waits in a batch with room for the next video's.
    Pending,
}

/// Assembles one video's frames into batches.
pub(crate) struct Assembler {
    sequence_length: usize,
    max_batch_size: usize,
    /// The most bytes one batch may take.
    max_batch_bytes: u64,
    policy: LastSequencePolicy,
    pool: BufferPool,
    video: VideoRef,
    building: Option<Building>,
    /// A full batch waiting to learn whether it is the last.
    held: Option<Batch>,
    /// Emit full batches at once instead of holding them.
    eager: bool,
    transforms: Transforms,
    planner: Planner,
    output_size: Arc<OutputSize>,
    next_batch_index: u64,
    /// Frames of the current video so far.
    frames: u64,
    /// The operator's GPU, if it has one.
    gpu: Option<Arc<GpuRuntime>>,
    /// New batches are built in GPU memory (the video's frames are decoded by NVDEC).
    on_gpu: bool,
    /// A break of the source, reported on the next batch built.
    gap: Option<Gap>,
    /// Holes met since the video's last frame, reported on the sequence of its next frame (or its last).
    holes: Vec<Hole>,
    /// Why the video's reading stopped before its data's end, reported on its last sequence.
    ended_early: Option<String>,
    /// The video's colour, carried by each of its sequences.
    color: Arc<ColorInfo>,
}

impl Assembler {
    pub(crate) fn new(
        sequence_length: usize,
        max_batch_size: usize,
        policy: LastSequencePolicy,
        pool: BufferPool,
        video: VideoRef,
    ) -> Self {
        Self {
            sequence_length,
            max_batch_size,
            max_batch_bytes: u64::MAX,
            policy,
            pool,
            building: None,
            held: None,
            eager: false,
            planner: Planner::new(&Transforms::default(), video.id.0),
            transforms: Transforms::default(),
            output_size: Arc::default(),
            video,
            next_batch_index: 0,
            frames: 0,
            gpu: None,
            on_gpu: false,
            gap: None,
            holes: Vec::new(),
            ended_early: None,
            color: Arc::default(),
        }
    }

    /// The current video's colour (its stream's), which its sequences carry.
    pub(crate) fn set_color(&mut self, color: ColorInfo) {
        self.color = Arc::new(color);
    }

    /// Whether the current video's colour lacks what a frame may tell: its bit depth (a live stream probed
    /// without decoders does not know it), or, for an HDR video, HDR10 static metadata.
    pub(crate) fn wants_frame_color(&self) -> bool {
        self.color.bit_depth.is_none()
            || (self.color.dynamic_range() != DynamicRange::Sdr
                && (self.color.mastering_display.is_none() || self.color.content_light.is_none()))
    }

    /// Completes the current video's colour with what a frame tells where its stream did not: the bit depth
    /// of its pixel format, and the HDR10 static metadata it carries (HEVC's SEI messages). The sequences from
    /// this frame on report it.
    pub(crate) fn fill_frame_color(
        &mut self,
        bit_depth: Option<u32>,
        (mastering, light): (Option<MasteringDisplay>, Option<ContentLight>),
    ) {
        let missing_depth = self.color.bit_depth.is_none() && bit_depth.is_some();
        let hdr = self.color.dynamic_range() != DynamicRange::Sdr;
        let missing_mastering =
            hdr && self.color.mastering_display.is_none() && mastering.is_some();
        let missing_light = hdr && self.color.content_light.is_none() && light.is_some();
        if missing_depth || missing_mastering || missing_light {
            let color = Arc::make_mut(&mut self.color);
            if missing_depth {
                color.bit_depth = bit_depth;
            }
            if missing_mastering {
                color.mastering_display = mastering;
            }
            if missing_light {
                color.content_light = light;
            }
        }
    }

    /// The operator's GPU (batches of videos decoded by NVDEC are built in its memory).
    pub(crate) fn gpu(mut self, gpu: Option<Arc<GpuRuntime>>) -> Self {
        self.gpu = gpu;
        self
    }

    /// Builds the next batches in GPU memory (`true`: the video's frames are on the GPU) or in host memory. A
    /// batch being built in the other memory is delivered first (packed batches).
    pub(crate) fn set_on_gpu<E>(
        &mut self,
        on_gpu: bool,
        emit: &mut impl FnMut(Batch) -> Result<(), E>,
    ) -> Result<(), E> {
        assert!(
            !on_gpu || self.gpu.is_some(),
            "on_gpu needs the operator's GPU"
        );
        self.on_gpu = on_gpu;
        if let Some(batch) = self.held.take() {
            emit(batch)?;
        }
        let other = self
            .building
            .as_ref()
            .is_some_and(|b| b.data.host().is_none() != on_gpu);
        if other {
            let last = self
                .building
                .as_ref()
                .and_then(|b| b.sequences.last())
                .is_some_and(|s| s.ends_video);
            if let Some(batch) = self.finish_building(last) {
                emit(batch)?;
            }
        }
        Ok(())
    }

    /// A new batch buffer of `len` bytes, on the GPU or the host.
    fn allocate(&self, len: usize) -> Result<BatchData, VideoError> {
        if let Some(gpu) = self.gpu.as_ref().filter(|_| self.on_gpu) {
            return gpu.acquire(len).map(BatchData::Device);
        }
        Ok(BatchData::Host(self.pool.acquire(len)?))
    }

    /// The most bytes one batch may take ([`Config::max_batch_bytes`](crate::Config::max_batch_bytes)).
    pub(crate) fn max_batch_bytes(mut self, limit: u64) -> Self {
        self.max_batch_bytes = limit;
        self
    }

    /// Bytes of a batch of `w` x `h` output frames, or why it may not be allocated: over the limit, or more
    /// than the address space (checked arithmetic: the settings and the video choose these numbers).
    fn batch_len(&self, w: usize, h: usize) -> Result<usize, VideoError> {
        let bytes_per_pixel = CHANNELS * self.transforms.dtype.size();
        let bytes = batch_bytes(
            self.max_batch_size,
            self.sequence_length,
            (w, h),
            bytes_per_pixel,
        );
        match bytes.and_then(|b| usize::try_from(b).ok().map(|len| (b, len))) {
            Some((b, len)) if b <= self.max_batch_bytes => Ok(len),
            _ => Err(VideoError::BatchTooLarge {
                max_batch_size: self.max_batch_size,
                sequence_length: self.sequence_length,
                frame: (w, h),
                bytes_per_pixel,
                bytes,
                limit: self.max_batch_bytes,
            }),
        }
    }

    /// Emit full batches as soon as they are full (they are then never marked last).
    pub(crate) fn eager(mut self, eager: bool) -> Self {
        self.eager = eager;
        self
    }

    /// The transforms planned per sequence (the random crop positions follow the video's id), with an output
    /// size that may change while running.
    pub(crate) fn transforms(
        mut self,
        transforms: &Transforms,
        output_size: Arc<OutputSize>,
    ) -> Self {
        self.planner = Planner::with_output_size(transforms, self.video.id.0, output_size.clone());
        self.transforms = transforms.clone();
        self.output_size = output_size;
        self
    }

    /// The random stream of the video's crop positions: its place in its dataset when it has one (so that
    /// any worker decoding any segment of it draws the same windows), else its id (the default).
    pub(crate) fn place(&mut self, key: ClipKey) {
        let stream = key.position.map_or(self.video.id.0, |_| key.stream());
        self.planner =
            Planner::with_output_size(&self.transforms, stream, self.output_size.clone());
    }

    /// Packed batches: the next video's frames go on into the batch being built (when their shape matches),
    /// after the previous video's last sequence. Resets the per-video state.
    pub(crate) fn start_video(&mut self, video: VideoRef) {
        self.planner =
            Planner::with_output_size(&self.transforms, video.id.0, self.output_size.clone());
        self.video = video;
        self.frames = 0;
    }

    /// Whether a batch is being built or held (packed batches waiting for the next video).
    pub(crate) fn has_pending(&self) -> bool {
        self.building.is_some() || self.held.is_some()
    }

    /// Frames received so far.
    pub(crate) fn frames(&self) -> u64 {
        self.frames
    }

    /// Adds the next frame of the video, decoded as `width` x `height`, `at` its time and index. A new sequence gets
    /// its geometry (resize, crop window) from the planner; `write` fills frame `f` of the sequence's output
    /// (of `sequence_length` frames) per that geometry. Batches that become ready go to `emit`.
    pub(crate) fn push_frame<E: From<VideoError>>(
        &mut self,
        width: usize,
        height: usize,
        at: FrameAt,
        write: impl FnOnce(&Geometry, &mut SeqOut<'_>, usize, usize) -> Result<(), E>,
        emit: &mut impl FnMut(Batch) -> Result<(), E>,
    ) -> Result<(), E> {
        // A frame follows the held batch, so that batch was not the last.
        if let Some(batch) = self.held.take() {
            emit(batch)?;
        }
        if let Some(b) = &self.building {
            let same_video = b
                .sequences
                .last()
                .is_some_and(|s| s.video.id == self.video.id);
            if same_video && b.input != (width, height) {
                // Resolution change: the frames so far end their sequence (per the policy) and their batch.
                let batch = self.finish_building(false).expect("building is Some");
                emit(batch)?;
            }
        }
        let l = self.sequence_length;
        // The last sequence is open while its region is not counted as used (full, or closed short).
        let open = self
            .building
            .as_ref()
            .and_then(|b| b.sequences.last().filter(|s| b.used == s.offset))
            .filter(|s| s.frames < l && !s.ends_video)
            .map(|s| s.geometry);
        let geometry = match open {
            Some(geometry) => geometry,
            None => self.planner.plan(width, height, at.index)?,
        };
        if let Some(b) = &self.building {
            if open.is_none() && (b.width, b.height) != geometry.out() {
                // The output size changed (set while running): the new size starts a new batch.
                let batch = self.finish_building(false).expect("building is Some");
                emit(batch)?;
            }
        }
        let dtype = self.transforms.dtype;
        if self.building.is_none() {
            let (w, h) = geometry.out();
            let len = self.batch_len(w, h).map_err(E::from)?;
            let data = self.allocate(len).map_err(E::from)?;
            self.building = Some(Building {
                data,
                input: (width, height),
                width: w,
                height: h,
                sequences: Vec::new(),
                used: 0,
            });
        }
        let b = self.building.as_mut().expect("set above");
        if open.is_none() {
            b.input = (width, height);
            b.sequences.push(SequenceMeta {
                frames: 0,
                valid_frames: 0,
                first_frame: at.index,
                indices: Vec::with_capacity(l),
                pts: Vec::with_capacity(l),
                damaged: Vec::with_capacity(l),
                holes: Vec::new(),
                ended_early: None,
                arrivals: Vec::with_capacity(l),
                offset: b.used,
                geometry,
                orientation: at.orientation,
                color: self.color.clone(),
                video: self.video.clone(),
                ends_video: false,
                error_follows: false,
                audio: None,
            });
        }
        let region = l * b.frame_bytes(dtype);
        let (offset, f) = {
            let seq = b.sequences.last().expect("pushed above");
            (seq.offset, seq.frames)
        };
        write(
            &geometry,
            &mut seq_out(&mut b.data, dtype, offset, region),
            f,
            l,
        )?;
        let seq = b.sequences.last_mut().expect("pushed above");
        seq.frames += 1;
        seq.valid_frames += 1;
        seq.pts.push(at.pts);
        seq.damaged.push(at.damaged);
        seq.holes.append(&mut self.holes);
        seq.indices.push(at.index);
        seq.arrivals.push(at.arrival);
        let sequence_full = seq.frames == l;
        if sequence_full {
            b.used += region;
        }
        self.frames += 1;
        if sequence_full && b.sequences.len() == self.max_batch_size {
            let batch = self.finish_building(false);
            if self.eager {
                if let Some(batch) = batch {
                    emit(batch)?;
                }
            } else {
                self.held = batch;
            }
        }
        Ok(())
    }

    /// Ends the video: emits what is held or being built, as the last batch.
    #[cfg(test)]
    pub(crate) fn finish<E>(
        &mut self,
        emit: &mut impl FnMut(Batch) -> Result<(), E>,
    ) -> Result<Finished, E> {
        self.end_video(emit, true, false)
    }

    /// The sequences not emitted yet: the held batch's and the one being built's.
    pub(crate) fn pending_sequences(&mut self) -> impl Iterator<Item = &mut SequenceMeta> {
        let held = self.held.iter_mut().flat_map(|b| b.sequences.iter_mut());
        held.chain(
            self.building
                .iter_mut()
                .flat_map(|b| b.sequences.iter_mut()),
        )
    }

    /// Ends the current video: its open sequence is closed per the policy and its last sequence is marked as
    /// the video's end (`error_follows`: the video's error, sent next, is what ends it for the counts). With
    /// `flush`, what is held or being built is emitted as the video's last batch; without (packed batches), a
    /// batch with room is kept for the next video's sequences and [`Finished::Pending`] is returned.
    pub(crate) fn end_video<E>(
        &mut self,
        emit: &mut impl FnMut(Batch) -> Result<(), E>,
        flush: bool,
        error_follows: bool,
    ) -> Result<Finished, E> {
        let holes = std::mem::take(&mut self.holes);
        let ended_early = self.ended_early.take();
        if let Some(mut batch) = self.held.take() {
            // A full batch waiting: it ends with this video's last sequence.
            if let Some(seq) = batch.sequences.last_mut() {
                seq.ends_video = true;
                seq.error_follows = error_follows;
                seq.holes.extend(holes);
                seq.ended_early = ended_early;
            }
            batch.last = true;
            emit(batch)?;
            return Ok(Finished::LastEmitted);
        }
        let ours = self
            .building
            .as_ref()
            .and_then(|b| b.sequences.last())
            .is_some_and(|s| s.video.id == self.video.id);
        if !ours {
            if !holes.is_empty() || ended_early.is_some() {
                // Eager delivery sent the video's last batch before its end was known: nothing carries them.
                tracing::warn!(
                    holes = holes.len(),
                    ended_early = ended_early.as_deref(),
                    "damage after the last delivered batch is not reported on a sequence (eager delivery)"
                );
            }
            return Ok(if self.frames > 0 {
                Finished::AlreadyDelivered
            } else {
                Finished::NoFrames
            });
        }
        let b = self.building.as_mut().expect("ours implies building");
        Self::close_open_sequence(
            b,
            self.sequence_length,
            self.policy,
            self.transforms.dtype,
            self.transforms.layout,
        );
        let last = b.sequences.last_mut().expect("ours");
        last.ends_video = true;
        last.error_follows = error_follows;
        last.holes.extend(holes);
        last.ended_early = ended_early;
        if flush || b.sequences.len() == self.max_batch_size {
            let batch = self.finish_building(true).expect("building is Some");
            emit(batch)?;
            Ok(Finished::LastEmitted)
        } else {
            Ok(Finished::Pending)
        }
    }

    /// A sampled sequence ends: its open part, short of `sequence_length` frames (the frames it takes ran out,
    /// or a change of frame size split it and this is the part after the change), is padded or shortened per
    /// the policy, and the next frame starts a new sequence. Nothing to do when it ended full.
    pub(crate) fn end_sequence<E>(
        &mut self,
        emit: &mut impl FnMut(Batch) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(b) = self.building.as_mut() else {
            return Ok(());
        };
        let ours = b
            .sequences
            .last()
            .is_some_and(|s| s.video.id == self.video.id && b.used == s.offset);
        if !ours {
            return Ok(());
        }
        Self::close_open_sequence(
            b,
            self.sequence_length,
            self.policy,
            self.transforms.dtype,
            self.transforms.layout,
        );
        if b.sequences.len() == self.max_batch_size {
            let batch = self.finish_building(false);
            match batch {
                Some(batch) if self.eager => emit(batch)?,
                batch => self.held = batch,
            }
        }
        Ok(())
    }

    /// The source broke (it dropped and will be reopened): what is held goes out, the open sequence is closed
    /// per the policy and its batch emitted, so that the frames after the break start a new sequence.
    pub(crate) fn break_sequence<E>(
        &mut self,
        emit: &mut impl FnMut(Batch) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some(batch) = self.held.take() {
            emit(batch)?;
        }
        if let Some(batch) = self.finish_building(false) {
            emit(batch)?;
        }
        Ok(())
    }

    /// No picture came out for display index `hole.index`: reported on the sequence of the video's next frame
    /// (or on its last sequence, when no frame follows).
    pub(crate) fn hole(&mut self, hole: Hole) {
        self.holes.push(hole);
    }

    /// Reading the video stopped before the end of its data (`why`): reported on its last sequence.
    pub(crate) fn ended_early(&mut self, why: String) {
        self.ended_early = Some(why);
    }

    /// The source was reopened after a break: the next batch built reports `gap`.
    pub(crate) fn resume_after(&mut self, gap: Gap) {
        self.gap = Some(gap);
    }

    /// Emits the batch being built (packed batches: no more video follows now).
    pub(crate) fn flush<E>(
        &mut self,
        emit: &mut impl FnMut(Batch) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some(batch) = self.held.take() {
            emit(batch)?;
        }
        let last = self
            .building
            .as_ref()
            .and_then(|b| b.sequences.last())
            .is_some_and(|s| s.ends_video);
        match self.finish_building(last) {
            Some(batch) => emit(batch),
            None => Ok(()),
        }
    }

    /// Closes the last sequence if it is short: padded with zero frames, or shortened (its region compacted
    /// for CFHW), and counts it in the batch's used bytes.
    fn close_open_sequence(
        b: &mut Building,
        l: usize,
        policy: LastSequencePolicy,
        dtype: DType,
        layout: Layout,
    ) {
        let frame_bytes = b.frame_bytes(dtype);
        let Some(seq) = b
            .sequences
            .last_mut()
            .filter(|s| s.frames < l && s.frames > 0)
        else {
            return;
        };
        if b.used > seq.offset {
            return; // already closed
        }
        let region = l * frame_bytes;
        if policy == LastSequencePolicy::Pad {
            let mut out = seq_out(&mut b.data, dtype, seq.offset, region);
            zero_frames(&mut out, l, seq.frames, b.width, b.height, layout);
            seq.frames = l;
            b.used += region;
        } else {
            if layout == Layout::Cfhw {
                // Written for L frames per channel: close the gaps between the channel blocks.
                let plane = b.width * b.height * dtype.size();
                let start = seq.offset;
                for c in 1..CHANNELS {
                    let from = start + c * l * plane;
                    let (src, dst) = (
                        from..from + seq.frames * plane,
                        start + c * seq.frames * plane,
                    );
                    match &mut b.data {
                        BatchData::Host(data) => data.copy_within(src, dst),
                        BatchData::Device(data) => {
                            if let Err(e) = data.copy_within(src, dst) {
                                // Only a broken context fails here; the next kernel launch reports it.
                                tracing::error!("{e}");
                            }
                        }
                    }
                }
            }
            b.used += seq.frames * frame_bytes;
        }
    }

    /// Closes the batch being built: pads or shortens its open sequence per the policy.
    fn finish_building(&mut self, last: bool) -> Option<Batch> {
        let mut b = self.building.take()?;
        let (dtype, layout) = (self.transforms.dtype, self.transforms.layout);
        Self::close_open_sequence(&mut b, self.sequence_length, self.policy, dtype, layout);
        let decoded_on = if b.data.host().is_some() {
            DecodedOn::Cpu
        } else {
            DecodedOn::Cuda
        };
        b.data.truncate(b.used);
        let index = self.next_batch_index;
        self.next_batch_index += 1;
        Some(Batch {
            video: b
                .sequences
                .first()
                .map_or_else(|| self.video.clone(), |s| s.video.clone()),
            index,
            last,
            width: b.width,
            height: b.height,
            dtype,
            layout,
            data: b.data,
            sequences: b.sequences,
            decoded_on,
            gap: self.gap.take(),
            delivered: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::assembly::outline::BatchOutline;
    use crate::video::VideoId;

    /// Frame `i` of a synthetic video: every byte is `(i % 250) + 1`, never zero, so padding stands out.
    fn fill(i: u64) -> u8 {
        (i % 250) as u8 + 1
    }

    fn run(
        frames: &[(usize, usize)],
        l: usize,
        b: usize,
        policy: LastSequencePolicy,
        pool: &BufferPool,
    ) -> Vec<Batch> {
        run_mode(frames, l, b, policy, pool, false).0
    }

    /// Assembles the frames, holding full batches or not (`eager`); also returns how it finished.
    fn run_mode(
        frames: &[(usize, usize)],
        l: usize,
        b: usize,
        policy: LastSequencePolicy,
        pool: &BufferPool,
        eager: bool,
    ) -> (Vec<Batch>, Finished) {
        let video = VideoRef {
            id: VideoId(0),
            label: None,
        };
        let mut asm = Assembler::new(l, b, policy, pool.clone(), video).eager(eager);
        let mut out = Vec::new();
        let mut emit = |batch: Batch| -> Result<(), VideoError> {
            out.push(batch);
            Ok(())
        };
        for (i, &(w, h)) in frames.iter().enumerate() {
            let v = fill(i as u64);
            asm.push_frame(
                w,
                h,
                FrameAt {
                    pts: i as f64 / 25.0,
                    index: i as u64,
                    arrival: Instant::now(),
                    orientation: Orientation::Upright,
                    damaged: false,
                },
                |_, out, f, _| {
                    let SeqOut::Host(HostOut::U8(out)) = out else {
                        unreachable!()
                    };
                    let size = w * h * CHANNELS;
                    out[f * size..(f + 1) * size].fill(v);
                    Ok(())
                },
                &mut emit,
            )
            .unwrap();
        }
        let finished = asm.finish(&mut emit).unwrap();
        assert_eq!(finished == Finished::NoFrames, frames.is_empty());
        (out, finished)
    }

    fn check_video(batches: &[Batch], n: usize, l: usize, b: usize, policy: LastSequencePolicy) {
        // The outline is exactly the reference's.
        let expected = BatchOutline::new(n, l, b).sequence_lengths(l, b, policy);
        let got: Vec<Vec<usize>> = batches
            .iter()
            .map(|x| x.sequences().iter().map(|s| s.shape()[0]).collect())
            .collect();
        assert_eq!(got, expected, "N={n} L={l} B={b} {policy:?}");
        // Every frame exactly once, in order; padding is zeros; only the last batch is marked last.
        let mut next = 0u64;
        for (i, batch) in batches.iter().enumerate() {
            assert_eq!(batch.index(), i as u64);
            assert_eq!(batch.is_last(), i + 1 == batches.len());
            let mut bytes = 0;
            for seq in batch.sequences() {
                assert_eq!(seq.first_frame(), next);
                for frame in seq.frames() {
                    assert_eq!(frame.index(), next);
                    assert!(frame.data().iter().all(|&x| x == fill(next)));
                    assert_eq!(frame.pts(), next as f64 / 25.0);
                    next += 1;
                }
                let size = seq.shape()[1] * seq.shape()[2] * 3;
                assert!(seq.data()[seq.valid_frames() * size..]
                    .iter()
                    .all(|&x| x == 0));
                if seq.padded_frames() > 0 {
                    assert!(batch.is_last() && policy == LastSequencePolicy::Pad);
                }
                bytes += seq.data().len();
            }
            assert_eq!(bytes, batch.data().len());
        }
        assert_eq!(next, n as u64);
    }

    #[test]
    fn sixty_seven_frames_l5_b3() {
        let pool = BufferPool::new(8);
        for policy in [LastSequencePolicy::Partial, LastSequencePolicy::Pad] {
            let batches = run(&[(4, 2); 67], 5, 3, policy, &pool);
            check_video(&batches, 67, 5, 3, policy);
            let last = batches.last().unwrap();
            assert_eq!(last.sequence(1).valid_frames(), 2);
            assert_eq!(last.shape().is_some(), policy == LastSequencePolicy::Pad);
        }
    }

    #[test]
    fn a_full_last_batch_is_marked_last() {
        // (60, 4, 3) -> 5 full batches and nothing else: the 5th must say it is the last.
        let batches = run(
            &[(2, 2); 60],
            4,
            3,
            LastSequencePolicy::Pad,
            &BufferPool::new(8),
        );
        assert_eq!(batches.len(), 5);
        assert!(batches[4].is_last());
    }

    #[test]
    fn resolution_change_cuts_the_sequence_and_the_batch() {
        // 10 frames of 4x2 then 7 of 2x2, L=4, B=2.
        let mut frames = vec![(4, 2); 10];
        frames.extend([(2, 2); 7]);
        for policy in [LastSequencePolicy::Partial, LastSequencePolicy::Pad] {
            let batches = run(&frames, 4, 2, policy, &BufferPool::new(8));
            let shapes: Vec<Vec<[usize; 4]>> = batches
                .iter()
                .map(|b| b.sequences().iter().map(|s| s.shape()).collect())
                .collect();
            let cut = if policy == LastSequencePolicy::Pad {
                4
            } else {
                2
            };
            let end = if policy == LastSequencePolicy::Pad {
                4
            } else {
                3
            };
            assert_eq!(
                shapes,
                vec![
                    vec![[4, 2, 4, 3], [4, 2, 4, 3]],
                    vec![[cut, 2, 4, 3]],
                    vec![[4, 2, 2, 3], [end, 2, 2, 3]],
                ]
            );
            assert_eq!(
                batches.iter().map(|b| b.is_last()).collect::<Vec<_>>(),
                [false, false, true]
            );
            assert_eq!(batches[1].sequence(0).valid_frames(), 2);
            assert_eq!(batches[2].sequence(0).first_frame(), 10);
        }
    }

    #[test]
    fn steady_state_reuses_buffers() {
        let pool = BufferPool::new(4);
        let video = VideoRef {
            id: VideoId(0),
            label: None,
        };
        let mut asm = Assembler::new(3, 2, LastSequencePolicy::Pad, pool.clone(), video);
        let mut emit = |batch: Batch| -> Result<(), VideoError> {
            drop(batch);
            Ok(())
        };
        for i in 0..1000u64 {
            asm.push_frame(
                8,
                8,
                FrameAt {
                    pts: 0.0,
                    index: 0,
                    arrival: Instant::now(),
                    orientation: Orientation::Upright,
                    damaged: false,
                },
                |_, out, f, _| {
                    let SeqOut::Host(HostOut::U8(out)) = out else {
                        unreachable!()
                    };
                    out[f * 192..(f + 1) * 192].fill(fill(i));
                    Ok(())
                },
                &mut emit,
            )
            .unwrap();
        }
        asm.finish(&mut emit).unwrap();
        assert!(
            pool.allocations() <= 3,
            "{} allocations",
            pool.allocations()
        );
    }

    proptest! {
        #[test]
        fn every_frame_once_in_order_padding_zero(n in 0usize..200, l in 1usize..12, b in 1usize..6, pad: bool) {
            let policy = if pad { LastSequencePolicy::Pad } else { LastSequencePolicy::Partial };
            let batches = run(&vec![(3, 2); n], l, b, policy, &BufferPool::new(4));
            check_video(&batches, n, l, b, policy);
        }

        #[test]
        fn eager_delivery_gives_the_same_batches_and_marks_only_short_last_ones(n in 1usize..120, l in 1usize..8, b in 1usize..5, pad: bool) {
            let policy = if pad { LastSequencePolicy::Pad } else { LastSequencePolicy::Partial };
            let (held, _) = run_mode(&vec![(3, 2); n], l, b, policy, &BufferPool::new(4), false);
            let (eager, finished) = run_mode(&vec![(3, 2); n], l, b, policy, &BufferPool::new(4), true);
            prop_assert_eq!(held.len(), eager.len());
            for (h, e) in held.iter().zip(&eager) {
                prop_assert_eq!(h.data(), e.data());
                prop_assert_eq!(h.index(), e.index());
            }
            let full_last = n % (l * b) == 0;
            prop_assert_eq!(eager.last().unwrap().is_last(), !full_last);
            prop_assert!(eager[..eager.len() - 1].iter().all(|x| !x.is_last()));
            let expected = if full_last { Finished::AlreadyDelivered } else { Finished::LastEmitted };
            prop_assert_eq!(finished, expected);
        }
    }
}
