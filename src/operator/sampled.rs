//! The decoding thread's path for a sampled video ([`Sampling`](crate::Sampling)): a whole video is indexed and
//! only the GOPs its sequences need are decoded (`sample::seek`); a live video, a pulled one, or a whole one
//! whose packets give no display order is decoded in order (`sample::InOrder`). Either way the sampler's
//! slots say which frame goes into which sequence; only those frames are converted (`transform::apply`) and
//! assembled. Sampled videos are decoded on the CPU; with a GPU their batches are uploaded.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::worker::{outcome_error, Outcome, Shutdown, Worker};
use crate::assembly::assembler::{Assembler, FrameAt};
use crate::decode::cpu::CpuDecoder;
use crate::decode::frame::FrameRef;
use crate::decode::Stop;
use crate::demux::check_frame_size;
use crate::demux::open::Opened;
use crate::error::VideoError;
use crate::ffi::frame::AvFrame;
use crate::ffi::packet::Packet;
use crate::sample::seek::{decode_needed, SeekOutcome};
use crate::sample::slots::Out;
use crate::sample::{
    list_whole, plan_whole, scan_whole, virtual_range, InOrder, Planned, Scanned, WholePlan,
};
use crate::transform;
use crate::video::ClipKey;
use crate::video::VideoRef;

impl Worker {
    /// Decodes a sampled video to its end (or its failure).
    pub(super) fn sampled(&self, video: &VideoRef, mut opened: Opened) -> Result<(), Shutdown> {
        let mut decoder = match self.open_cpu_decoder(&opened.demuxer) {
            Ok(decoder) => decoder,
            Err(error) => {
                let failure = opened
                    .failure()
                    .unwrap_or(crate::source::live::Failure::Video(error));
                return self.failed(video, failure);
            }
        };
        let mut asm = self.assembler(video, false)?;
        asm.place(opened.clip_key());
        // A whole video is indexed and sought in; so is a URL when clips need its length (a file served
        // with range requests: the index reads it once through, then only the clips' GOPs are read again).
        let segment = self.config.sampling.segment.or(opened.clip_key().segment);
        let needs_whole = self.config.sampling.needs_whole_video();
        // A file indexed for the video before (its previous segment) is not indexed again.
        let file = opened.file_identity();
        let kept = file.as_ref().and_then(|file| self.indexes.get(file));
        let fresh = kept.is_none();
        if fresh {
            // Another file's index is not held while this one is built.
            self.indexes.clear();
        }
        // An MP4's index is listed by the demuxer that decodes it; other whole videos are scanned by a second.
        let listed = match kept {
            None if opened.is_whole() => list_whole(&opened.demuxer, &self.config),
            _ => None,
        };
        let again = if kept.is_some() || listed.is_some() {
            None
        } else if opened.is_whole() || needs_whole {
            self.opener().open_again(&opened)
        } else {
            None
        };
        let indexed = match (kept, listed, again) {
            (Some(index), _, _) => Ok(Some(Scanned::Index(index))),
            (None, Some(scanned), _) => Ok(Some(scanned)),
            (None, None, Some(Ok(demuxer))) => scan_whole(demuxer, &self.config).map(Some),
            (None, None, Some(Err(failure))) => return self.failed(video, failure),
            (None, None, None) => Ok(None),
        };
        let scanned = match indexed {
            Ok(scanned) => scanned,
            Err(error) => return self.end(video, asm, Some(error)),
        };
        if let (true, Some(file), Some(Scanned::Index(index))) = (fresh, file, &scanned) {
            self.indexes.keep(file, index.clone());
        }
        let plan = match scanned {
            Some(scanned) => {
                let key = opened.clip_key();
                let key = ClipKey {
                    position: key.position.or(Some(video.id.0)),
                    ..key
                };
                match plan_whole(scanned, &self.config, key) {
                    Ok(plan) => plan,
                    Err(error) => return self.end(video, asm, Some(error)),
                }
            }
            None if needs_whole => {
                let error = VideoError::Sampling {
                    reason: "clips need the whole video, and this URL cannot seek (a live stream, or a \
                             server that does not take range requests): sample it with stride, step, fps or a \
                             time range instead"
                        .into(),
                };
                return self.end(video, asm, Some(error));
            }
            None => WholePlan::InOrder(Box::new(InOrder::new(
                &self.config.sampling,
                self.config.sequence_length,
                None,
            ))),
        };
        let error = match plan {
            WholePlan::Seek(mut planned) => {
                let outcome =
                    self.seek_and_decode(&mut opened, &mut decoder, &mut planned, &mut asm);
                match outcome {
                    Err(Stop::Shutdown) => return Err(Shutdown),
                    Err(Stop::Video(error)) => Some(error),
                    Ok(outcome) => seek_error(outcome, asm.frames()),
                }
            }
            WholePlan::InOrder(mut sampler) => {
                let outcome =
                    self.decode_in_order(&mut opened, &mut decoder, &mut sampler, &mut asm);
                outcome_error(outcome, opened.failure(), asm.frames())?
            }
        };
        // A segment no sequence starts in (clips elsewhere, a time range past it) gives none.
        self.end_with(video, asm, error, segment.is_some())
    }

    /// Hands what the slots give to the transform and assembly stages.
    fn put(
        &self,
        asm: &mut Assembler,
        host: &mut transform::HostScratch,
        out: Out<'_, AvFrame>,
    ) -> Result<(), Stop> {
        if self.shared.stop.load(Ordering::Relaxed) {
            return Err(Stop::Shutdown);
        }
        let emit = &mut |batch| self.send_batch(batch).map_err(|_| Stop::Shutdown);
        match out {
            Out::EndShort => asm.end_sequence(emit),
            Out::Frame {
                frame,
                display,
                pts,
            } => {
                check_frame_size(frame.width(), frame.height(), &self.config)?;
                let at = FrameAt {
                    pts,
                    index: display,
                    arrival: Instant::now(),
                };
                let transforms = &self.config.transforms;
                asm.push_frame(
                    frame.width() as usize,
                    frame.height() as usize,
                    at,
                    |geometry, out, f, frames| {
                        transform::apply(
                            FrameRef::Host(frame),
                            geometry,
                            transforms,
                            out,
                            f,
                            frames,
                            host,
                        )
                        .map_err(Stop::Video)
                    },
                    emit,
                )
            }
        }
    }

    /// A whole video with an index: decodes the frames its sequences take, seeking past the GOPs they do not.
    fn seek_and_decode(
        &self,
        opened: &mut Opened,
        decoder: &mut CpuDecoder,
        planned: &mut Planned,
        asm: &mut Assembler,
    ) -> Result<SeekOutcome, Stop> {
        let time_base = opened.demuxer.stream().seconds_per_unit();
        let mut host = transform::HostScratch::new();
        let Planned {
            index,
            virtual_frames,
            slots,
            needed,
        } = planned;
        let (index, virtual_frames) = (&*index, &*virtual_frames);
        let mut put = |out: Out<'_, AvFrame>| self.put(asm, &mut host, out);
        let mut deliver = |d: u64, frame: &AvFrame| -> Result<(), Stop> {
            let pts = index.pts_of(d) as f64 * time_base;
            let held = Rc::new(frame.new_ref().map_err(|e| Stop::Video(e.into()))?);
            for v in virtual_range(virtual_frames, d) {
                slots.push(v, d, pts, &held, &mut put)?;
            }
            Ok(())
        };
        let outcome = decode_needed(
            &mut opened.demuxer,
            decoder,
            index,
            needed,
            &self.shared.stop,
            &mut deliver,
        )?;
        slots.finish(&mut put)?;
        Ok(outcome)
    }

    /// Decodes every frame in order, converting the ones the sampler's sequences take.
    fn decode_in_order(
        &self,
        opened: &mut Opened,
        decoder: &mut CpuDecoder,
        sampler: &mut InOrder,
        asm: &mut Assembler,
    ) -> Result<Outcome, Stop> {
        let mut host = transform::HostScratch::new();
        let mut outcome = Outcome::default();
        let mut packet = Packet::new().map_err(|e| Stop::Video(e.into()))?;
        let time_base = opened.demuxer.stream().seconds_per_unit();
        let last_duration = Cell::new(None);
        let mut put = |out: Out<'_, AvFrame>| self.put(asm, &mut host, out);
        let mut on_frame = |info: crate::decode::FrameInfo, frame: FrameRef<'_>| {
            let FrameRef::Host(frame) = frame else {
                unreachable!("the CPU decoder gives host frames")
            };
            last_duration.set(frame.duration().map(|d| d as f64 * time_base));
            sampler.frame(frame, info.pts, &mut put)
        };
        self.read_and_decode(
            &mut opened.demuxer,
            decoder,
            &mut packet,
            false,
            &mut outcome,
            &mut || {},
            &mut on_frame,
        )?;
        sampler.finish(last_duration.get(), &mut put)?;
        Ok(outcome)
    }
}

/// The error a seeking decode ended with: the demuxer's, rejected packets, then frames it could not give.
fn seek_error(outcome: SeekOutcome, frames: u64) -> Option<VideoError> {
    if let Some(source) = outcome.demux_error {
        return Some(VideoError::Demux { frames, source });
    }
    if let Some(first) = outcome.first_rejection {
        return Some(VideoError::Corrupt {
            failed_packets: outcome.rejected,
            frames,
            first,
        });
    }
    outcome
        .missing
        .first()
        .map(|&first| VideoError::SampledFramesMissing {
            missing: outcome.missing.len() as u64,
            first,
        })
}
