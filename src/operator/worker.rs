//! The decoding thread: takes fed videos one at a time from the feed queue, has the demux stage open each
//! (`demux::open`: sniffing, gating, buffering, reconnecting), decodes it incrementally, and sends its batches
//! (then its error, if any) into the bounded output channel, whose capacity is the prefetch depth. It only
//! opens, decodes and ends.
//!
//! ## One frame's path
//! 1. [`Worker::decode_packets`] reads a packet from the demuxer (`demux`) and hands it to the video's decoder
//!    backend ([`Decoder::decode`], `decode::cpu` or the NVDEC backend) with a *sink*, a closure of the worker.
//! 2. The backend's `DecodeLoop` sends the packet to libavcodec; for each frame that comes out, the backend
//!    wraps it as a [`FrameRef`]: `Host` (libavcodec's frame in host memory) or `Device` (an NVDEC surface), and calls the sink with it. The frame is only valid during this call.
//! 3. The sink checks the stop flag and the frame size, then calls [`Assembler::push_frame`] with the frame's
//!    size and time, a *write* closure and an *emit* closure.
//! 4. The assembler decides where the frame goes: a new sequence gets its geometry from the planner (resize,
//!    crop window), a new batch gets a buffer (the host pool, or the GPU runtime for NVDEC videos); it calls
//!    the write closure with the geometry and the sequence's output region (`SeqOut`).
//! 5. The write closure calls [`transform::apply`], which converts the frame straight into that region: a host
//!    frame through swscale (converting the region `transform::host` plans) and `transform::write`; a device frame through the CUDA kernel, launched on the buffer's stream.
//! 6. Back in the assembler, the frame is counted; a full batch is held until the next frame tells it is not
//!    the video's last (or emitted at once in eager mode) and goes to the emit closure: [`Worker::send_batch`],
//!    which uploads a CPU-decoded batch when the operator has a GPU and sends it into the output channel.
//!
//! Control goes back and forth (worker → decoder → worker → assembler → worker → transform)
//! for two reasons. Zero copy: a decoded frame lives only inside the decoder's callback, and it is written
//! once, straight into its slot of the batch buffer, so the decoder must call out while it holds the frame,
//! and the assembler must say where the slot is. Separation: the decoder knows nothing of batches, and the
//! assembler nothing of decoders or conversion (it takes closures), so the batching rules are unit-tested
//! with a fake writer (`assembly::assembler`'s tests) and each backend is swapped without touching them.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use crate::assembly::assembler::{Assembler, Finished, FrameAt};
use crate::assembly::audio::VideoAudio;
use crate::assembly::batch::{Batch, BatchData};
use crate::assembly::batch::{Gap, Hole};
use crate::assembly::pool::BufferPool;
use crate::decode::cpu::CpuDecoder;
use crate::decode::frame::FrameRef;
use crate::decode::{damage, nvdec_support, open_nvdec, Decoder, FrameInfo, FrameSink, Stop};
use crate::demux::open::{Opened, Opener};
use crate::demux::{check_frame_size, Demuxer};
use crate::device::GpuRuntime;
use crate::error::{AvError, Error, VideoError};
use crate::ffi::packet::Packet;
use crate::sample::index::IndexCache;
use crate::sample::numbering::{HoleAt, Numbering};
use crate::settings::config::Config;
use crate::signal::Signals;
use crate::source::feed::{FeedQueue, QueuedVideo};
use crate::source::live::Failure;
use crate::source::url::{redact_url, Reconnect, UrlSource};
use crate::transform;
use crate::transform::plan::OutputSize;
use crate::video::VideoRef;

/// Packets of an untrusted stream read ahead for its frame size before its decoder opens
/// ([`Demuxer::parse_frame_size`]): its parameter sets come with its first keyframe.
const PARSE_PACKETS: usize = 8;

/// One message of the output channel.
pub(crate) struct Item {
    /// A batch or an error; `None` only marks the end of a video whose batches were all delivered already
    /// (eager delivery), and is never shown to the caller.
    pub(crate) result: Option<Result<Batch, Error>>,
    /// How many videos this message ends (their final message: nothing more will come from them). A packed
    /// batch can end several.
    pub(crate) ended: u64,
}

/// Everything the decoding thread owns.
pub(crate) struct Worker {
    pub(crate) config: Config,
    pub(crate) feed: Arc<FeedQueue>,
    pub(crate) out: Sender<Item>,
    pub(crate) shared: Arc<Signals>,
    pub(crate) pool: BufferPool,
    /// The output size set while running, if any.
    pub(crate) output_size: Arc<OutputSize>,
    /// Packed batches: the assembler kept from one video to the next.
    pub(crate) packer: RefCell<Option<Assembler>>,
    /// The operator's GPU ([`Device::Cuda`](crate::Device::Cuda)): videos are decoded on NVDEC and batches
    /// kept in its memory.
    pub(crate) gpu: Option<Arc<GpuRuntime>>,
    /// The last file a sampled video indexed, kept for the next video from that file (its next segment).
    pub(crate) indexes: IndexCache,
    /// The audio of the video being decoded, when the operator decodes audio.
    pub(crate) audio: RefCell<Option<VideoAudio>>,
    /// A live video's batches waiting for their sound, in order.
    pub(crate) audio_waiting: RefCell<std::collections::VecDeque<Batch>>,
}

impl Worker {
    /// Runs until the feed queue is closed and empty, or the operator is dropped.
    pub(crate) fn run(self) {
        let mut shut_down = false;
        while let Some(video) = self.feed.pop(&self.shared.stop) {
            let span = tracing::debug_span!("video", id = video.video.id.0);
            let _enter = span.enter();
            if let Err(Shutdown) = self.process(video) {
                shut_down = true;
                break;
            }
        }
        if !shut_down && !self.shared.stop.load(Ordering::Relaxed) {
            // Packed batches: the last one waits for no further video.
            let _ = self.flush_packer();
        }
        self.shared.exited_cleanly.store(true, Ordering::Release);
        // Disconnect the channel before waking, so that woken async pollers see the end.
        drop(self.out);
        self.shared.wake_all();
    }

    /// Sends `batch` into the output channel, its sequences given their sound (`sound::send_batch` is the
    /// way in, which makes a live video's batches wait for theirs).
    pub(super) fn deliver(&self, mut batch: Batch) -> Result<(), Shutdown> {
        if let Some(audio) = self.audio.borrow_mut().as_mut() {
            audio.attach(&mut batch.sequences);
        }
        let ended = batch.videos_ended();
        let batch = match self.upload(batch) {
            Ok(batch) => batch,
            Err((video, error)) => {
                return self.send_item(Item {
                    result: Some(Err(Error::Video { video, error })),
                    ended,
                })
            }
        };
        self.send_item(Item {
            result: Some(Ok(batch)),
            ended,
        })
    }

    /// With a GPU, a batch decoded on the CPU (NVDEC could not take its video) goes to GPU memory in one copy.
    fn upload(&self, mut batch: Batch) -> Result<Batch, (VideoRef, VideoError)> {
        let Some(gpu) = &self.gpu else {
            return Ok(batch);
        };
        let Some(host) = batch.data.host() else {
            return Ok(batch);
        };
        let device = gpu.upload(host).map_err(|e| (batch.video.clone(), e))?;
        batch.data = BatchData::Device(device);
        Ok(batch)
    }

    /// The decoder for the demuxer's stream: NVDEC when the operator has a GPU and NVDEC takes the stream
    /// (`true`), else the CPU (or, with fallback disabled, the video's error).
    fn open_decoder(&self, demuxer: &Demuxer) -> Result<(Box<dyn Decoder>, bool), VideoError> {
        if let Some(gpu) = &self.gpu {
            match nvdec_support(demuxer.stream()) {
                Ok(()) => return Ok((open_nvdec(demuxer, gpu, self.config.nvdec_driver)?, true)),
                Err(reason) if !self.config.cpu_fallback => {
                    return Err(VideoError::NvdecUnsupported { reason })
                }
                Err(reason) => {
                    tracing::info!(%reason, "NVDEC cannot decode this video: decoding it on the CPU");
                }
            }
        }
        Ok((Box::new(self.open_cpu_decoder(demuxer)?), false))
    }

    pub(super) fn open_cpu_decoder(&self, demuxer: &Demuxer) -> Result<CpuDecoder, VideoError> {
        CpuDecoder::open(demuxer, self.config.decoder_threads, self.config.threading)
    }

    /// Hands one decoded frame, `at` its place and turn, to the assembly stage at its shown size, with the
    /// transform stage converting it into its slot (the plain and the sampled paths alike).
    pub(super) fn push_frame(
        &self,
        asm: &mut Assembler,
        host: &mut transform::HostScratch,
        frame: FrameRef<'_>,
        at: FrameAt,
    ) -> Result<(), Stop> {
        let (w, h) = frame.size();
        check_frame_size(w as u32, h as u32, &self.config).map_err(Stop::Video)?;
        let (width, height) = at.orientation.displayed_size(w, h);
        let transforms = &self.config.transforms;
        if asm.wants_frame_color() {
            asm.fill_frame_color(frame.bit_depth(), frame.hdr_metadata());
        }
        asm.push_frame(
            width,
            height,
            at,
            |geometry, out, f, frames| {
                let orientation = at.orientation;
                transform::apply(
                    frame,
                    orientation,
                    geometry,
                    transforms,
                    out,
                    f,
                    frames,
                    host,
                )
                .map_err(Stop::Video)
            },
            &mut |batch| self.send_batch(batch).map_err(|_| Stop::Shutdown),
        )?;
        self.frame_decoded(at.pts).map_err(|_| Stop::Shutdown)
    }

    /// Delivers a packed batch still being built (before an error or at the end of the input).
    fn flush_packer(&self) -> Result<(), Shutdown> {
        let mut packer = self.packer.borrow_mut();
        match packer.as_mut() {
            Some(asm) if asm.has_pending() => asm.flush(&mut |batch| self.send_batch(batch)),
            _ => Ok(()),
        }
    }

    fn send_item(&self, item: Item) -> Result<(), Shutdown> {
        self.out.send(item).map_err(|_| Shutdown)?;
        self.shared.wake_all();
        Ok(())
    }

    /// The source opener, with the operator's settings and stop signal.
    pub(super) fn opener(&self) -> Opener<'_> {
        Opener {
            config: &self.config,
            signals: &self.shared,
        }
    }

    /// Reads the frame size the stream's first packets give with FFmpeg's parser (no decoder) and holds it to
    /// the limits; the stream then takes that size (the container may have said another, or none).
    fn check_parsed_frame_size(&self, opened: &mut Opened) -> Result<(), VideoError> {
        let parsed = opened
            .demuxer
            .parse_frame_size(PARSE_PACKETS)
            .map_err(|source| VideoError::Demux { frames: 0, source })?;
        if let Some((width, height)) = parsed {
            check_frame_size(width, height, &self.config)?;
            opened.demuxer.set_frame_size(width, height);
        }
        Ok(())
    }

    /// Decodes one video to its end (or its failure), sending its batches and then its error, if any.
    fn process(&self, queued: QueuedVideo) -> Result<(), Shutdown> {
        let QueuedVideo { video, source } = queued;
        let mut opened = match self.opener().open(source) {
            Ok(opened) => opened,
            Err(failure) => return self.failed(&video, failure),
        };
        self.open_audio(&video, &mut opened);
        if !self.config.probe_decoders {
            // Untrusted input: the frame size its parameter sets give is checked before a decoder sees them.
            if let Err(error) = self.check_parsed_frame_size(&mut opened) {
                let failure = opened.failure().unwrap_or(Failure::Video(error));
                return self.failed(&video, failure);
            }
        }
        // Before the decoder opens: a live video's gate may refuse frames of this size.
        if let Err(error) = opened.announce_frame_size() {
            return self.failed(&video, Failure::Video(error));
        }
        if !self.config.sampling.is_everything() || opened.clip_key().segment.is_some() {
            return self.sampled(&video, opened);
        }
        self.indexes.clear(); // not kept over videos that are not indexed
        let (decoder, on_gpu) = match self.open_decoder(&opened.demuxer) {
            Ok(decoder) => decoder,
            Err(error) => {
                let failure = opened.failure().unwrap_or(Failure::Video(error));
                return self.failed(&video, failure);
            }
        };
        match opened.url().cloned() {
            Some(source) => self.pull(&video, &source, opened, decoder, on_gpu),
            None => self.decode(&video, opened, decoder, on_gpu),
        }
    }

    pub(super) fn fail(&self, video: &VideoRef, error: VideoError) -> Result<(), Shutdown> {
        // Batches waiting for their sound, and packed batches of earlier videos, come first.
        self.finish_audio(None)?;
        self.flush_packer()?;
        self.send_item(Item {
            result: Some(Err(Error::Video {
                video: video.clone(),
                error,
            })),
            ended: 1,
        })
    }

    pub(super) fn failed(&self, video: &VideoRef, failure: Failure) -> Result<(), Shutdown> {
        match failure {
            Failure::Shutdown => Err(Shutdown),
            Failure::Video(error) => self.fail(video, error),
        }
    }

    /// Decodes an opened source to its end (or its failure). For a live video, a read failure (abort, stall)
    /// is reported as such rather than as FFmpeg's I/O error.
    fn decode(
        &self,
        video: &VideoRef,
        mut opened: Opened,
        mut decoder: Box<dyn Decoder>,
        on_gpu: bool,
    ) -> Result<(), Shutdown> {
        let mut asm = self.assembler(video, on_gpu)?;
        asm.set_color(opened.demuxer.stream().color());
        asm.place(opened.clip_key());
        let mut numbering = Numbering::new();
        let outcome = self.decode_all(&mut opened.demuxer, &mut decoder, &mut asm, &mut numbering);
        let error = self.outcome_error(outcome, opened.failure(), &mut asm)?;
        self.end(video, asm, error)
    }

    /// The assembler for `video`: the packed one kept from the previous video, or a new one.
    pub(super) fn assembler(&self, video: &VideoRef, on_gpu: bool) -> Result<Assembler, Shutdown> {
        let asm = match self.packer.borrow_mut().take() {
            Some(mut asm) if self.config.pack_batches => {
                asm.start_video(video.clone());
                asm
            }
            _ => Assembler::new(
                self.config.sequence_length,
                self.config.max_batch_size,
                self.config.last_sequence_policy,
                self.pool.clone(),
                video.clone(),
            )
            .eager(!self.config.hold_last_batch)
            .max_batch_bytes(self.config.max_batch_bytes)
            .transforms(&self.config.transforms, self.output_size.clone()),
        };
        let mut asm = asm.gpu(self.gpu.clone());
        asm.set_on_gpu(on_gpu, &mut |batch| self.send_batch(batch))?;
        Ok(asm)
    }

    /// Ends the video: delivers what was decoded, then its error, if any (a video that gave no frame fails).
    pub(super) fn end(
        &self,
        video: &VideoRef,
        asm: Assembler,
        error: Option<VideoError>,
    ) -> Result<(), Shutdown> {
        self.end_with(video, asm, error, false)
    }

    /// [`end`](Self::end); with `empty_ok`, a video that gave no frame ends without an error (a segment no
    /// sequence starts in).
    pub(super) fn end_with(
        &self,
        video: &VideoRef,
        mut asm: Assembler,
        error: Option<VideoError>,
        empty_ok: bool,
    ) -> Result<(), Shutdown> {
        let pack = self.config.pack_batches;
        // Whatever was decoded is delivered before the error. A packed batch with room waits for the next
        // video's sequences (or the input's close).
        let error_follows = error.is_some();
        let flush = !pack || error_follows;
        // Batches waiting for their sound go, and the video's sequences a packed batch keeps get theirs now,
        // while its track is open.
        self.finish_audio(Some(&mut asm))?;
        let delivered = asm.end_video(&mut |batch| self.send_batch(batch), flush, error_follows)?;
        if pack {
            *self.packer.borrow_mut() = Some(asm);
        }
        match (error, delivered) {
            (Some(error), _) => self.fail(video, error),
            (None, Finished::NoFrames) if !empty_ok => self.fail(video, VideoError::NoFrames),
            (None, Finished::NoFrames | Finished::AlreadyDelivered) => self.send_item(Item {
                result: None,
                ended: 1,
            }),
            (None, Finished::LastEmitted | Finished::Pending) => Ok(()),
        }
    }

    /// Decodes a video pulled by URL; on a drop closes the open sequence, reopens the source (per its
    /// reconnect policy) and goes on, the next batch reporting the gap.
    fn pull(
        &self,
        video: &VideoRef,
        source: &UrlSource,
        mut opened: Opened,
        mut decoder: Box<dyn Decoder>,
        on_gpu: bool,
    ) -> Result<(), Shutdown> {
        let policy = source.options.reconnect;
        let mut asm = self.assembler(video, on_gpu)?;
        asm.set_color(opened.demuxer.stream().color());
        let mut reconnects = 0;
        let mut numbering = Numbering::new();
        let error = loop {
            let outcome =
                self.decode_all(&mut opened.demuxer, &mut decoder, &mut asm, &mut numbering);
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Shutdown);
            }
            let dropped = match outcome {
                Err(Stop::Shutdown) => return Err(Shutdown),
                Err(Stop::Video(error)) => break Some(error),
                Ok(Outcome {
                    first_failure: Some(first),
                    failed_packets,
                    ..
                }) if self.config.strict => {
                    break Some(damage::rejected(asm.frames(), failed_packets, &first))
                }
                Ok(Outcome {
                    demux_error: Some(e),
                    ..
                }) => {
                    if opened.timed_out() {
                        format!(
                            "no data for {:?} (read_timeout)",
                            source.options.read_timeout
                        )
                    } else {
                        e.message
                    }
                }
                // The source ended the stream: the end of the video. Undecodable packets on the way are not
                // the source's failure: a live stream joined mid-GOP starts with some.
                Ok(_) => break None,
            };
            if policy == Reconnect::Never {
                break Some(VideoError::SourceLost {
                    url: redact_url(&source.url),
                    frames: asm.frames(),
                    reconnects,
                    reason: dropped,
                });
            }
            tracing::info!(reason = %dropped, "the source dropped: reopening it");
            // The gap starts with the silence that timed out, if that is what the drop was.
            let silence = if opened.timed_out() {
                source.options.read_timeout
            } else {
                Duration::ZERO
            };
            let lost_at = Instant::now()
                .checked_sub(silence)
                .unwrap_or_else(Instant::now);
            asm.break_sequence(&mut |batch| self.send_batch(batch))?;
            // The sound read before the drop goes with its batches; the reopened source's is read anew.
            self.finish_audio(None)?;
            let attempts = match self.opener().reopen(&mut opened) {
                Ok(attempts) => attempts,
                Err(Failure::Shutdown) => return Err(Shutdown),
                Err(Failure::Video(VideoError::SourceUnavailable {
                    attempts, reason, ..
                })) => {
                    break Some(VideoError::SourceLost {
                        url: redact_url(&source.url),
                        frames: asm.frames(),
                        reconnects,
                        reason: format!(
                            "{dropped}; then {attempts} reopen attempts failed, the last: {reason}"
                        ),
                    })
                }
                Err(Failure::Video(error)) => break Some(error),
            };
            match self.open_decoder(&opened.demuxer) {
                Ok((dec, gpu)) => {
                    decoder = dec;
                    asm.set_on_gpu(gpu, &mut |batch| self.send_batch(batch))?;
                    reconnects += 1;
                    self.open_audio(video, &mut opened);
                    // The reopened source's timestamps start anew; its frames are numbered on from here.
                    numbering = Numbering::starting_at(numbering.next_index());
                    asm.resume_after(Gap {
                        frames_before: asm.frames(),
                        duration: lost_at.elapsed(),
                        attempts,
                        reconnects,
                    });
                }
                Err(error) => break Some(error),
            }
        };
        self.end(video, asm, error)
    }

    /// Reads and decodes every packet, then drains the decoder; frames are numbered by `numbering`.
    fn decode_all(
        &self,
        demuxer: &mut Demuxer,
        decoder: &mut Box<dyn Decoder>,
        asm: &mut Assembler,
        numbering: &mut Numbering,
    ) -> Result<Outcome, Stop> {
        let mut outcome = Outcome::default();
        let mut packet = Packet::new().map_err(|e| Stop::Video(e.into()))?;
        let mut resend = false;
        loop {
            let result = self.decode_packets(
                demuxer,
                decoder,
                asm,
                &mut packet,
                resend,
                &mut outcome,
                numbering,
            );
            match result {
                // NVDEC refused the stream when decoding started (get_format offered software formats only):
                // the video moves to the CPU decoder, from the packet NVDEC refused. Not after frames were
                // delivered, nor while draining (nothing left to resend).
                Err(Stop::Video(VideoError::NvdecUnsupported { reason }))
                    if self.config.cpu_fallback && asm.frames() == 0 && !outcome.drained =>
                {
                    tracing::info!(%reason, "moving the video to the CPU decoder");
                    *decoder = Box::new(self.open_cpu_decoder(demuxer).map_err(Stop::Video)?);
                    // The CPU decoder starts from the packet NVDEC refused, read again.
                    *numbering = Numbering::starting_at(numbering.next_index());
                    asm.set_on_gpu(false, &mut |b| {
                        self.send_batch(b).map_err(|_| Stop::Shutdown)
                    })?;
                    resend = true;
                }
                other => return other.map(|()| outcome),
            }
        }
    }

    /// Reads and decodes packets to the end (first decoding `packet` again when `resend`), then drains; each
    /// frame takes its display index from `numbering`, holes are reported where they fall.
    #[allow(clippy::too_many_arguments)]
    fn decode_packets(
        &self,
        demuxer: &mut Demuxer,
        decoder: &mut Box<dyn Decoder>,
        asm: &mut Assembler,
        packet: &mut Packet,
        resend: bool,
        outcome: &mut Outcome,
        numbering: &mut Numbering,
    ) -> Result<(), Stop> {
        let mut host = transform::HostScratch::new();
        let orienter = transform::Orienter::new(demuxer.stream(), &self.config);
        let time_base = demuxer.stream().seconds_per_unit();
        // When the packet being decoded was read: the arrival of the frames its decoding gives.
        let arrival = std::cell::Cell::new(Instant::now());
        let numbering = RefCell::new(numbering);
        let mut sink = |info: FrameInfo, frame: FrameRef<'_>| -> Result<(), Stop> {
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Stop::Shutdown);
            }
            let (index, holes) = numbering.borrow_mut().frame(info.packet_pts);
            self.holes(asm, holes, time_base)?;
            let Some(index) = index else {
                return Ok(()); // a picture for an index already passed (damage): not given
            };
            if info.damaged && self.config.strict {
                let error = damage::damaged_frame(asm.frames(), index, info.pts);
                return Err(Stop::Video(error));
            }
            let at = FrameAt {
                pts: info.pts,
                index,
                arrival: arrival.get(),
                orientation: orienter.observe(&frame),
                damaged: info.damaged,
            };
            self.push_frame(asm, &mut host, frame, at)
        };
        self.read_and_decode(
            demuxer,
            &mut **decoder,
            packet,
            resend,
            outcome,
            &mut |packet| {
                arrival.set(Instant::now());
                numbering
                    .borrow_mut()
                    .packet(packet.pts(), packet.is_key(), packet.is_discarded());
            },
            &mut sink,
        )?;
        self.holes(asm, numbering.into_inner().finish(), time_base)
    }

    /// Display indices with no picture (`time_base`: seconds per unit of their times): reported on the video's
    /// sequences, or with [`Config::strict`](crate::Config::strict) the video's failure at the first.
    pub(super) fn holes(
        &self,
        asm: &mut Assembler,
        holes: impl IntoIterator<Item = HoleAt>,
        time_base: f64,
    ) -> Result<(), Stop> {
        for hole in holes {
            let pts = hole.pts as f64 * time_base;
            if self.config.strict {
                return Err(Stop::Video(damage::hole(asm.frames(), hole.index, pts)));
            }
            asm.hole(Hole::new(hole.index, pts));
        }
        Ok(())
    }

    /// A video that ends with no `error` but stopped reading before the end of its data (`early`: why) ends
    /// early: said on its last sequence, and logged.
    pub(super) fn note_ended_early(
        asm: &mut Assembler,
        error: &Option<VideoError>,
        early: Option<String>,
    ) {
        if let (None, Some(why)) = (error, early) {
            tracing::warn!(reason = %why, "reading stopped before the end of the video's data");
            asm.ended_early(why);
        }
    }

    /// The error a video read in order ends with (see [`outcome_error`]); by default a demuxer's failure
    /// after frames is no error but ends the video early (reported on its last sequence).
    pub(super) fn outcome_error(
        &self,
        outcome: Result<Outcome, Stop>,
        failure: Option<Failure>,
        asm: &mut Assembler,
    ) -> Result<Option<VideoError>, Shutdown> {
        let early = match &outcome {
            Ok(Outcome {
                demux_error: Some(e),
                ..
            }) if failure.is_none() && !self.config.strict && asm.frames() > 0 => {
                Some(e.to_string())
            }
            _ => None,
        };
        let error = outcome_error(outcome, failure, asm.frames(), self.config.strict)?;
        Self::note_ended_early(asm, &error, early);
        Ok(error)
    }

    /// Reads every packet to the end of the demuxer and decodes it (first decoding `packet` again when
    /// `resend`), then drains the decoder; `on_read` is told of each packet read. Rejected packets and the
    /// demuxer's error go to `outcome`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_and_decode(
        &self,
        demuxer: &mut Demuxer,
        decoder: &mut dyn Decoder,
        packet: &mut Packet,
        mut resend: bool,
        outcome: &mut Outcome,
        on_read: &mut dyn FnMut(&Packet),
        sink: &mut FrameSink<'_>,
    ) -> Result<(), Stop> {
        loop {
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Stop::Shutdown);
            }
            let read = if std::mem::take(&mut resend) {
                Ok(true)
            } else {
                demuxer.next_packet(packet)
            };
            match read {
                Ok(true) => {
                    on_read(packet);
                    if let Some(e) = decoder.decode(Some(packet), sink)? {
                        outcome.reject(e);
                    }
                }
                Ok(false) => break,
                Err(e) => {
                    outcome.demux_error = Some(e);
                    break;
                }
            }
        }
        outcome.drained = true;
        if let Some(e) = decoder.decode(None, sink)? {
            outcome.reject(e);
        }
        Ok(())
    }
}

/// The error a video's decoding ended with, if any, after `frames` frames: the source's own failure (a live
/// video's abort or stall) first, then the decoder's. Damage is no error by default (it is reported on the
/// frames), except a demuxer's failure before any frame; `strict`, the demuxer's failure, then rejected
/// packets, fail the video.
pub(super) fn outcome_error(
    outcome: Result<Outcome, Stop>,
    failure: Option<Failure>,
    frames: u64,
    strict: bool,
) -> Result<Option<VideoError>, Shutdown> {
    Ok(match (outcome, failure) {
        (Err(Stop::Shutdown), _) | (_, Some(Failure::Shutdown)) => return Err(Shutdown),
        (_, Some(Failure::Video(error))) => Some(error),
        (Err(Stop::Video(error)), None) => Some(error),
        (
            Ok(Outcome {
                demux_error: Some(source),
                ..
            }),
            None,
        ) if strict || frames == 0 => Some(VideoError::Demux { frames, source }),
        (
            Ok(Outcome {
                failed_packets,
                first_failure: Some(first),
                ..
            }),
            None,
        ) if strict => Some(damage::rejected(frames, failed_packets, &first)),
        (Ok(outcome), None) => {
            if outcome.failed_packets > 0 {
                tracing::warn!(
                    packets = outcome.failed_packets,
                    "the decoder rejected damaged packets (their frames are holes or marked damaged)"
                );
            }
            None
        }
    })
}

/// The thread must stop: the operator was dropped.
pub(super) struct Shutdown;

/// What went wrong, short of stopping, while decoding a video.
#[derive(Default)]
pub(super) struct Outcome {
    pub(super) demux_error: Option<AvError>,
    pub(super) failed_packets: u64,
    pub(super) first_failure: Option<AvError>,
    /// The decoder is being drained (every packet was sent).
    pub(super) drained: bool,
}

impl Outcome {
    pub(super) fn reject(&mut self, e: AvError) {
        tracing::debug!(error = %e, "decoder rejected data");
        self.failed_packets += 1;
        self.first_failure.get_or_insert(e);
    }
}
