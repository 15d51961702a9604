//! The decoding thread: takes fed videos one at a time from the feed queue, demuxes and decodes each
//! incrementally, and sends its batches (then its error, if any) into the bounded output channel, whose
//! capacity is the prefetch depth.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use crate::assemble::Assembler;
use crate::batch::Batch;
use crate::config::Config;
use crate::decode::cpu::CpuDecoder;
use crate::decode::{Decoder, FrameInfo, RgbWriter, Stop};
use crate::demux::{check_frame_size, Demuxer};
use crate::error::{AvError, Error, VideoError};
use crate::feed::QueuedVideo;
use crate::ffi::packet::Packet;
use crate::pool::BufferPool;

/// One message of the output channel.
pub(crate) struct Item {
    pub(crate) result: Result<Batch, Error>,
    /// This is the video's final message: nothing more will come from it.
    pub(crate) ends_video: bool,
}

/// State shared by the operator's handle and its thread.
#[derive(Default)]
pub(crate) struct Shared {
    /// Tasks waiting in an async poll; woken when a message is sent, the input is closed or the thread ends.
    pub(crate) wakers: parking_lot::Mutex<Vec<std::task::Waker>>,
    /// Set by the handle when it is dropped: the thread stops at the next frame or packet.
    pub(crate) stop: AtomicBool,
    /// Set by the thread when it ends normally (not by a panic).
    pub(crate) exited_cleanly: AtomicBool,
}

impl Shared {
    /// Wakes every task waiting in an async poll.
    pub(crate) fn wake_all(&self) {
        let wakers = std::mem::take(&mut *self.wakers.lock());
        for w in wakers {
            w.wake();
        }
    }

    /// Registers a task to wake at the next message (once per task).
    pub(crate) fn register(&self, waker: &std::task::Waker) {
        let mut wakers = self.wakers.lock();
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            wakers.push(waker.clone());
        }
    }
}

/// Everything the decoding thread owns.
pub(crate) struct Worker {
    pub(crate) config: Config,
    pub(crate) feed: Receiver<QueuedVideo>,
    pub(crate) out: Sender<Item>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) pool: BufferPool,
}

impl Worker {
    /// Runs until the feed queue is closed and empty, or the operator is dropped.
    pub(crate) fn run(self) {
        for video in self.feed.iter() {
            if self.shared.stop.load(Ordering::Relaxed) {
                break;
            }
            let span = tracing::debug_span!("video", id = video.video.id.0);
            let _enter = span.enter();
            if let Err(Shutdown) = self.process(video) {
                break;
            }
        }
        self.shared.exited_cleanly.store(true, Ordering::Release);
        // Disconnect the channel before waking, so that woken async pollers see the end.
        drop(self.out);
        self.shared.wake_all();
    }

    fn send(&self, result: Result<Batch, Error>, ends_video: bool) -> Result<(), Shutdown> {
        self.out
            .send(Item { result, ends_video })
            .map_err(|_| Shutdown)?;
        self.shared.wake_all();
        Ok(())
    }

    /// Decodes one video to its end (or its failure), sending its batches and then its error, if any.
    fn process(&self, video: QueuedVideo) -> Result<(), Shutdown> {
        let QueuedVideo { video, data } = video;
        let fail = |error: VideoError| {
            Err(Error::Video {
                video: video.clone(),
                error,
            })
        };
        let opened = Demuxer::open(data, &self.config).and_then(|demuxer| {
            let decoder = CpuDecoder::open(&demuxer, self.config.decoder_threads)?;
            Ok((demuxer, decoder))
        });
        let (mut demuxer, mut decoder) = match opened {
            Ok(x) => x,
            Err(error) => return self.send(fail(error), true),
        };
        let mut asm = Assembler::new(
            self.config.sequence_length,
            self.config.max_batch_size,
            self.config.last_sequence_policy,
            self.pool.clone(),
            video.clone(),
        );
        let outcome = self.decode_all(&mut demuxer, &mut decoder, &mut asm);
        let error = match outcome {
            Err(Stop::Shutdown) => return Err(Shutdown),
            Err(Stop::Video(error)) => Some(error),
            Ok(Outcome {
                demux_error: Some(source),
                ..
            }) => Some(VideoError::Demux {
                frames: asm.frames(),
                source,
            }),
            Ok(Outcome {
                failed_packets,
                first_failure: Some(first),
                ..
            }) => Some(VideoError::Corrupt {
                failed_packets,
                frames: asm.frames(),
                first,
            }),
            Ok(_) => None,
        };
        // Whatever was decoded is delivered before the error.
        let error_follows = error.is_some();
        let delivered = asm
            .finish(&mut |batch: Batch| {
                let ends = batch.is_last() && !error_follows;
                self.send(Ok(batch), ends)
            })
            .map_err(|_| Shutdown)?;
        match error {
            Some(error) => self.send(fail(error), true),
            None if !delivered => self.send(fail(VideoError::NoFrames), true),
            None => Ok(()),
        }
    }

    /// Reads and decodes every packet, then drains the decoder.
    fn decode_all(
        &self,
        demuxer: &mut Demuxer,
        decoder: &mut CpuDecoder,
        asm: &mut Assembler,
    ) -> Result<Outcome, Stop> {
        let mut outcome = Outcome::default();
        let mut packet = Packet::new().map_err(|e| Stop::Video(e.into()))?;
        let mut sink = |info: FrameInfo, write: &mut RgbWriter<'_>| -> Result<(), Stop> {
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Stop::Shutdown);
            }
            check_frame_size(info.width as u32, info.height as u32, &self.config)
                .map_err(Stop::Video)?;
            asm.push_frame(
                info.width,
                info.height,
                info.pts,
                |dst| write(dst).map_err(|e| Stop::Video(e.into())),
                &mut |batch| self.send(Ok(batch), false).map_err(|_| Stop::Shutdown),
            )
        };
        loop {
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Stop::Shutdown);
            }
            match demuxer.next_packet(&mut packet) {
                Ok(true) => {
                    if let Some(e) = decoder.decode(Some(&packet), &mut sink)? {
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
        if let Some(e) = decoder.decode(None, &mut sink)? {
            outcome.reject(e);
        }
        Ok(outcome)
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
}

impl Outcome {
    fn reject(&mut self, e: AvError) {
        tracing::debug!(error = %e, "decoder rejected data");
        self.failed_packets += 1;
        self.first_failure.get_or_insert(e);
    }
}
