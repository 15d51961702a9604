//! The decoding thread: takes fed videos one at a time from the feed queue, demuxes and decodes each
//! incrementally, and sends its batches (then its error, if any) into the bounded output channel, whose
//! capacity is the prefetch depth.
//!
//! ## One frame's path
//! 1. [`Worker::decode_packets`] reads a packet from the demuxer (`demux`) and hands it to the video's decoder
//!    backend ([`Decoder::decode`], `decode::cpu` or the NVDEC backend) with a *sink*, a closure of the worker.
//! 2. The backend's `DecodeLoop` sends the packet to libavcodec; for each frame that comes out, the backend
//!    wraps it as a [`FrameRef`]: `Host` (the CPU backend's frame, converted on request) or `Device` (an NVDEC
//!    surface), and calls the sink with it. The frame is only valid during this call.
//! 3. The sink checks the stop flag and the frame size, then calls [`Assembler::push_frame`] with the frame's
//!    size and time, a *write* closure and an *emit* closure.
//! 4. The assembler decides where the frame goes: a new sequence gets its geometry from the planner (resize,
//!    crop window), a new batch gets a buffer (the host pool, or the GPU runtime for NVDEC videos); it calls
//!    the write closure with the geometry and the sequence's output region (`SeqOut`).
//! 5. The write closure calls [`transform::apply`], which converts the frame straight into that region: a host
//!    frame through swscale (back into the backend's frame, which converts the region `transform::host`
//!    plans) and `transform::write`; a device frame through the CUDA kernel, launched on the buffer's stream.
//! 6. Back in the assembler, the frame is counted; a full batch is held until the next frame tells it is not
//!    the video's last (or emitted at once in eager mode) and goes to the emit closure: [`Worker::send_batch`],
//!    which uploads a CPU-decoded batch when the operator has a GPU and sends it into the output channel.
//!
//! Control goes back and forth (worker → decoder → worker → assembler → worker → transform → decoder's frame)
//! for two reasons. Zero copy: a decoded frame lives only inside the decoder's callback, and it is written
//! once, straight into its slot of the batch buffer, so the decoder must call out while it holds the frame,
//! and the assembler must say where the slot is. Separation: the decoder knows nothing of batches, and the
//! assembler nothing of decoders or conversion (it takes closures), so the batching rules are unit-tested
//! with a fake writer (`assemble`'s tests) and each backend is swapped without touching them.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use crossbeam_channel::Sender;

use crate::assembly::assembler::{Assembler, Finished};
use crate::assembly::batch::Gap;
use crate::assembly::batch::{Batch, BatchData};
use crate::assembly::pool::BufferPool;
use crate::decode::cpu::CpuDecoder;
use crate::decode::frame::FrameRef;
use crate::decode::{nvdec_support, open_nvdec, Decoder, FrameInfo, Stop};
use crate::demux::mp4::live::Mp4Gate;
use crate::demux::{check_frame_size, Demuxer, UrlOpenError};
use crate::device::GpuRuntime;
use crate::error::{AvError, Error, VideoError};
use crate::ffi::format::Interrupt;
use crate::ffi::io::StreamSource;
use crate::ffi::packet::Packet;
use crate::settings::config::Config;
use crate::settings::config::MoovAtEnd;
use crate::signal::Signals;
use crate::source::feed::{FeedQueue, QueuedVideo, Source};
use crate::source::live::{Failure, LiveReader, LiveShared, Mp4Layout};
use crate::source::url::{redact_url, Reconnect, UrlSource};
use crate::transform;
use crate::transform::plan::OutputSize;
use crate::video::VideoRef;

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

    fn send_batch(&self, batch: Batch) -> Result<(), Shutdown> {
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

    fn open_cpu_decoder(&self, demuxer: &Demuxer) -> Result<CpuDecoder, VideoError> {
        CpuDecoder::open(demuxer, self.config.decoder_threads, self.config.threading)
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

    /// Decodes one video to its end (or its failure), sending its batches and then its error, if any.
    fn process(&self, queued: QueuedVideo) -> Result<(), Shutdown> {
        let QueuedVideo { video, source } = queued;
        match source {
            Source::Whole(data) => self.decode(&video, Input::Whole(data), None),
            Source::Live(live) => {
                // Whatever happens, the producer learns that no more data is read.
                let _close = CloseLive(live.clone());
                let stall = self.config.stall_timeout;
                let reader = || LiveReader::new(live.clone(), self.shared.clone(), stall);
                let input = match live.sniff(&self.shared, stall) {
                    Ok(Mp4Layout::Mp4) => Input::Live {
                        reader: Box::new(Mp4Gate::new(reader(), live.clone(), &self.config)),
                        mp4: true,
                    },
                    Ok(Mp4Layout::Other) => Input::Live {
                        reader: Box::new(reader()),
                        mp4: false,
                    },
                    Ok(Mp4Layout::MoovAtEnd) => match self.config.moov_at_end {
                        MoovAtEnd::Fail => {
                            live.close();
                            return self.fail(&video, VideoError::MoovAtEndLive);
                        }
                        MoovAtEnd::Buffer { max_bytes } => {
                            tracing::debug!("live MP4 has its moov at the end: buffering it whole");
                            match live.collect_all(&self.shared, stall, max_bytes) {
                                Ok(data) => Input::Whole(data),
                                Err(failure) => return self.live_failed(&video, failure),
                            }
                        }
                    },
                    Err(failure) => return self.live_failed(&video, failure),
                };
                self.decode(&video, input, Some(&live))
            }
            Source::Url(source) => self.pull(&video, &source),
        }
    }

    fn fail(&self, video: &VideoRef, error: VideoError) -> Result<(), Shutdown> {
        // Packed batches of earlier videos come first.
        self.flush_packer()?;
        self.send_item(Item {
            result: Some(Err(Error::Video {
                video: video.clone(),
                error,
            })),
            ended: 1,
        })
    }

    fn live_failed(&self, video: &VideoRef, failure: Failure) -> Result<(), Shutdown> {
        match failure {
            Failure::Shutdown => Err(Shutdown),
            Failure::Video(error) => self.fail(video, error),
        }
    }

    /// Decodes `input` to its end (or its failure). For a live video, a read failure (abort, stall) is
    /// reported as such rather than as FFmpeg's I/O error.
    fn decode(
        &self,
        video: &VideoRef,
        input: Input,
        live: Option<&Arc<LiveShared>>,
    ) -> Result<(), Shutdown> {
        let live_failure = || live.and_then(|l| l.failure());
        let opened = match input {
            Input::Whole(data) => Demuxer::open(data, &self.config),
            Input::Live { reader, mp4 } => Demuxer::open_live(reader, mp4, &self.config),
        }
        .and_then(|demuxer| {
            let decoder = self.open_decoder(&demuxer)?;
            Ok((demuxer, decoder))
        });
        let (mut demuxer, (mut decoder, on_gpu)) = match opened {
            Ok(x) => x,
            Err(error) => {
                return match live_failure() {
                    Some(failure) => self.live_failed(video, failure),
                    None => self.fail(video, error),
                }
            }
        };
        let mut asm = self.assembler(video, on_gpu)?;
        let outcome = self.decode_all(&mut demuxer, &mut decoder, &mut asm);
        let error = match (outcome, live_failure()) {
            (Err(Stop::Shutdown), _) | (_, Some(Failure::Shutdown)) => return Err(Shutdown),
            (_, Some(Failure::Video(error))) => Some(error),
            (Err(Stop::Video(error)), None) => Some(error),
            (
                Ok(Outcome {
                    demux_error: Some(source),
                    ..
                }),
                None,
            ) => Some(VideoError::Demux {
                frames: asm.frames(),
                source,
            }),
            (
                Ok(Outcome {
                    failed_packets,
                    first_failure: Some(first),
                    ..
                }),
                None,
            ) => Some(VideoError::Corrupt {
                failed_packets,
                frames: asm.frames(),
                first,
            }),
            (Ok(_), None) => None,
        };
        self.end(video, asm, error)
    }

    /// The assembler for `video`: the packed one kept from the previous video, or a new one.
    fn assembler(&self, video: &VideoRef, on_gpu: bool) -> Result<Assembler, Shutdown> {
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

    /// Ends the video: delivers what was decoded, then its error, if any.
    fn end(
        &self,
        video: &VideoRef,
        mut asm: Assembler,
        error: Option<VideoError>,
    ) -> Result<(), Shutdown> {
        let pack = self.config.pack_batches;
        // Whatever was decoded is delivered before the error. A packed batch with room waits for the next
        // video's sequences (or the input's close).
        let error_follows = error.is_some();
        let flush = !pack || error_follows;
        let delivered = asm.end_video(&mut |batch| self.send_batch(batch), flush, error_follows)?;
        if pack {
            *self.packer.borrow_mut() = Some(asm);
        }
        match (error, delivered) {
            (Some(error), _) => self.fail(video, error),
            (None, Finished::NoFrames) => self.fail(video, VideoError::NoFrames),
            (None, Finished::AlreadyDelivered) => self.send_item(Item {
                result: None,
                ended: 1,
            }),
            (None, Finished::LastEmitted | Finished::Pending) => Ok(()),
        }
    }

    /// Pulls a video by URL: opens it (retrying per its reconnect policy), decodes it, and on a drop closes the
    /// open sequence, reopens the source and goes on, the next batch reporting the gap.
    fn pull(&self, video: &VideoRef, source: &UrlSource) -> Result<(), Shutdown> {
        let shared = self.shared.clone();
        let interrupt = Interrupt::new(move || shared.stop.load(Ordering::Relaxed));
        let policy = source.options.reconnect;
        let (mut demuxer, mut decoder, on_gpu) = match self.open_url(source, &interrupt, true)? {
            Ok((opened, _)) => opened,
            Err(error) => return self.fail(video, error),
        };
        let mut asm = self.assembler(video, on_gpu)?;
        let mut reconnects = 0;
        let error = loop {
            let outcome = self.decode_all(&mut demuxer, &mut decoder, &mut asm);
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Shutdown);
            }
            let dropped = match outcome {
                Err(Stop::Shutdown) => return Err(Shutdown),
                Err(Stop::Video(error)) => break Some(error),
                Ok(Outcome {
                    demux_error: Some(e),
                    ..
                }) => {
                    if interrupt.timed_out() {
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
            let silence = if interrupt.timed_out() {
                source.options.read_timeout
            } else {
                Duration::ZERO
            };
            let lost_at = Instant::now()
                .checked_sub(silence)
                .unwrap_or_else(Instant::now);
            asm.break_sequence(&mut |batch| self.send_batch(batch))?;
            match self.open_url(source, &interrupt, false)? {
                Ok(((d, dec, gpu), attempts)) => {
                    (demuxer, decoder) = (d, dec);
                    asm.set_on_gpu(gpu, &mut |batch| self.send_batch(batch))?;
                    reconnects += 1;
                    asm.resume_after(Gap {
                        frames_before: asm.frames(),
                        duration: lost_at.elapsed(),
                        attempts,
                        reconnects,
                    });
                }
                Err(VideoError::SourceUnavailable {
                    attempts, reason, ..
                }) => {
                    break Some(VideoError::SourceLost {
                        url: redact_url(&source.url),
                        frames: asm.frames(),
                        reconnects,
                        reason: format!(
                            "{dropped}; then {attempts} reopen attempts failed, the last: {reason}"
                        ),
                    })
                }
                Err(error) => break Some(error),
            }
        };
        self.end(video, asm, error)
    }

    /// Opens `source` with its decoder: `first`, at once and then per the reconnect policy; after a drop, per
    /// the policy only. Returns the attempts it took, or the video's error (`SourceUnavailable`).
    #[allow(clippy::type_complexity)]
    fn open_url(
        &self,
        source: &UrlSource,
        interrupt: &Arc<Interrupt>,
        first: bool,
    ) -> Result<Result<((Demuxer, Box<dyn Decoder>, bool), u32), VideoError>, Shutdown> {
        let policy = source.options.reconnect;
        let mut attempts = 0;
        let mut reason = String::new();
        loop {
            let wait = if first && attempts == 0 {
                Some(Duration::ZERO)
            } else {
                policy.delay(attempts - u32::from(first))
            };
            let Some(wait) = wait else {
                return Ok(Err(VideoError::SourceUnavailable {
                    url: redact_url(&source.url),
                    attempts,
                    reason,
                }));
            };
            self.sleep(wait)?;
            attempts += 1;
            let opened = Demuxer::open_url(source, interrupt.clone(), &self.config);
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Shutdown);
            }
            match opened {
                Ok(demuxer) => match self.open_decoder(&demuxer) {
                    Ok((decoder, on_gpu)) => return Ok(Ok(((demuxer, decoder, on_gpu), attempts))),
                    Err(error) => return Ok(Err(error)),
                },
                // Not a video framefeed takes: reopening will not change that.
                Err(UrlOpenError::Video(error)) => return Ok(Err(error)),
                Err(UrlOpenError::Open(e)) => {
                    reason = if interrupt.timed_out() {
                        format!(
                            "not opened within {:?} (open_timeout)",
                            source.options.open_timeout
                        )
                    } else {
                        e.message
                    };
                    tracing::debug!(%reason, attempts, "could not open the source");
                }
            }
        }
    }

    /// Waits `duration`, or less when the operator stops.
    fn sleep(&self, duration: Duration) -> Result<(), Shutdown> {
        let until = Instant::now() + duration;
        loop {
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Shutdown);
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
    }

    /// Reads and decodes every packet, then drains the decoder.
    fn decode_all(
        &self,
        demuxer: &mut Demuxer,
        decoder: &mut Box<dyn Decoder>,
        asm: &mut Assembler,
    ) -> Result<Outcome, Stop> {
        let mut outcome = Outcome::default();
        let mut packet = Packet::new().map_err(|e| Stop::Video(e.into()))?;
        let mut resend = false;
        loop {
            let result =
                self.decode_packets(demuxer, decoder, asm, &mut packet, resend, &mut outcome);
            match result {
                // NVDEC refused the stream when decoding started (get_format offered software formats only):
                // the video moves to the CPU decoder, from the packet NVDEC refused. Not after frames were
                // delivered, nor while draining (nothing left to resend).
                Err(Stop::Video(VideoError::NvdecUnsupported { reason }))
                    if self.config.cpu_fallback && asm.frames() == 0 && !outcome.drained =>
                {
                    tracing::info!(%reason, "moving the video to the CPU decoder");
                    *decoder = Box::new(self.open_cpu_decoder(demuxer).map_err(Stop::Video)?);
                    asm.set_on_gpu(false, &mut |b| {
                        self.send_batch(b).map_err(|_| Stop::Shutdown)
                    })?;
                    resend = true;
                }
                other => return other.map(|()| outcome),
            }
        }
    }

    /// Reads and decodes packets to the end (first decoding `packet` again when `resend`), then drains.
    fn decode_packets(
        &self,
        demuxer: &mut Demuxer,
        decoder: &mut Box<dyn Decoder>,
        asm: &mut Assembler,
        packet: &mut Packet,
        mut resend: bool,
        outcome: &mut Outcome,
    ) -> Result<(), Stop> {
        let transforms = &self.config.transforms;
        let mut host = transform::HostScratch::new();
        // When the packet being decoded was read: the arrival of the frames its decoding gives.
        let arrival = std::cell::Cell::new(Instant::now());
        let mut sink = |info: FrameInfo, frame: FrameRef<'_>| -> Result<(), Stop> {
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Stop::Shutdown);
            }
            check_frame_size(info.width as u32, info.height as u32, &self.config)
                .map_err(Stop::Video)?;
            asm.push_frame(
                info.width,
                info.height,
                info.pts,
                arrival.get(),
                |geometry, out, f, frames| {
                    transform::apply(frame, geometry, transforms, out, f, frames, &mut host)
                        .map_err(Stop::Video)
                },
                &mut |batch| self.send_batch(batch).map_err(|_| Stop::Shutdown),
            )
        };
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
                    arrival.set(Instant::now());
                    if let Some(e) = decoder.decode(Some(packet), &mut sink)? {
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
        if let Some(e) = decoder.decode(None, &mut sink)? {
            outcome.reject(e);
        }
        Ok(())
    }
}

/// What a video is read from.
enum Input {
    Whole(Bytes),
    /// A live stream; `mp4`: through the box gate, by the MOV demuxer only.
    Live {
        reader: Box<dyn StreamSource>,
        mp4: bool,
    },
}

/// Closes a live video's producer side when its decoding ends, however it ends.
struct CloseLive(Arc<LiveShared>);

impl Drop for CloseLive {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The thread must stop: the operator was dropped.
struct Shutdown;

/// What went wrong, short of stopping, while decoding a video.
#[derive(Default)]
struct Outcome {
    demux_error: Option<AvError>,
    failed_packets: u64,
    first_failure: Option<AvError>,
    /// The decoder is being drained (every packet was sent).
    drained: bool,
}

impl Outcome {
    fn reject(&mut self, e: AvError) {
        tracing::debug!(error = %e, "decoder rejected data");
        self.failed_packets += 1;
        self.first_failure.get_or_insert(e);
    }
}
