//! The decoding thread's path for a sampled video ([`Sampling`](crate::Sampling)): a whole video is indexed and
//! only the GOPs its sequences need are decoded (`sample::seek`); a live video, a pulled one, or a whole one
//! whose packets give no display order is decoded in order (`sample::InOrder`). Either way the sampler's
//! slots say which frame goes into which sequence; only those frames are converted (`transform::apply`) and
//! assembled. With a GPU, a whole video sought in is decoded on NVDEC where NVDEC takes its stream: each
//! needed picture is copied out of the decoder's surface once (`decode::HeldPicture`) and converted by the
//! CUDA kernel into every slot that takes it, each with its sequence's crop; videos decoded in order (live,
//! pulled, or with no index) are decoded on the CPU, their batches uploaded.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::worker::{Outcome, Shutdown, Worker};
use crate::assembly::assembler::{Assembler, FrameAt};
use crate::decode::cpu::CpuDecoder;
use crate::decode::frame::FrameRef;
use crate::decode::{damage, hold_picture, nvdec_support, open_nvdec, Decoder, HeldPicture, Stop};
use crate::demux::open::Opened;
use crate::error::VideoError;
use crate::ffi::frame::AvFrame;
use crate::ffi::packet::Packet;
use crate::orientation::Orientation;
use crate::sample::numbering::{HoleAt, Numbering};
use crate::sample::seek::{decode_needed, Needed, Position, SeekOutcome};
use crate::sample::slots::{Out, Shown, Slots};
use crate::sample::start::leave_out_undecodable_start;
use crate::sample::{
    list_whole, plan_whole, scan_whole, virtual_range, InOrder, Planned, Scanned, WholePlan,
};
use crate::source::live::Failure;
use crate::transform;
use crate::video::ClipKey;
use crate::video::VideoRef;

impl Worker {
    /// Decodes a sampled video to its end (or its failure).
    pub(super) fn sampled(&self, video: &VideoRef, mut opened: Opened) -> Result<(), Shutdown> {
        // Batches start in the memory NVDEC would decode into, so that a packed batch of the video before goes
        // on filling; a video decoded on the CPU after all moves them (`seek`, `decode_in_order` below).
        let nvdec = self.gpu.is_some() && nvdec_support(opened.demuxer.stream()).is_ok();
        let mut asm = self.assembler(video, nvdec)?;
        asm.set_color(opened.demuxer.stream().color());
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
        let mut scanned = scanned;
        if let (true, Some(Scanned::Index(index))) = (fresh, &mut scanned) {
            // A damaged start is decoded once, before the index is kept or planned on.
            if let Some(index) = Arc::get_mut(index).filter(|i| i.leading_frames().is_some()) {
                let left_out = self.cpu_decoder_for(&opened).and_then(|mut decoder| {
                    leave_out_undecodable_start(
                        index,
                        &mut opened.demuxer,
                        &mut decoder,
                        &self.shared.stop,
                    )
                });
                match left_out {
                    Ok(_) => {}
                    Err(Stop::Shutdown) => return Err(Shutdown),
                    Err(Stop::Video(error)) => return self.end(video, asm, Some(error)),
                }
            }
        }
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
            WholePlan::Seek(planned) => match self.seek(&mut opened, &planned, &mut asm) {
                Err(Stop::Shutdown) => return Err(Shutdown),
                Err(Stop::Video(error)) => Some(error),
                Ok(outcome) => {
                    let early = outcome.ended_early();
                    let error = outcome.error(asm.frames(), self.config.strict);
                    Self::note_ended_early(&mut asm, &error, early);
                    error
                }
            },
            WholePlan::InOrder(mut sampler) => {
                let emit = &mut |batch| self.send_batch(batch).map_err(|_| Stop::Shutdown);
                let outcome = asm.set_on_gpu(false, emit).and_then(|()| {
                    let mut decoder = self.cpu_decoder_for(&opened)?;
                    self.decode_in_order(&mut opened, &mut decoder, &mut sampler, &mut asm)
                });
                self.outcome_error(outcome, opened.failure(), &mut asm)?
            }
        };
        // A segment no sequence starts in (clips elsewhere, a time range past it) gives none.
        self.end_with(video, asm, error, segment.is_some())
    }

    /// The CPU decoder for an opened video; a live source's own failure (abort, stall) comes first.
    fn cpu_decoder_for(&self, opened: &Opened) -> Result<CpuDecoder, Stop> {
        self.open_cpu_decoder(&opened.demuxer)
            .map_err(|error| match opened.failure() {
                Some(Failure::Shutdown) => Stop::Shutdown,
                Some(Failure::Video(e)) => Stop::Video(e),
                None => Stop::Video(error),
            })
    }

    /// A whole video with an index: its needed frames decoded on NVDEC when the operator has a GPU and NVDEC
    /// takes the stream (on the CPU when NVDEC refuses it before its first picture, unless the config forbids
    /// it), else on the CPU.
    fn seek(
        &self,
        opened: &mut Opened,
        planned: &Planned,
        asm: &mut Assembler,
    ) -> Result<SeekOutcome, Stop> {
        let emit = &mut |batch| self.send_batch(batch).map_err(|_| Stop::Shutdown);
        if let Some(gpu) = &self.gpu {
            match nvdec_support(opened.demuxer.stream()) {
                Ok(()) => {
                    let mut decoder = open_nvdec(&opened.demuxer, gpu, self.config.nvdec_driver)?;
                    asm.set_on_gpu(true, emit)?;
                    let held = Cell::new(0_u64);
                    let mut hold = |frame: FrameRef<'_>| match frame {
                        FrameRef::Device(frame) => {
                            held.set(held.get() + 1);
                            hold_picture(gpu, frame).map_err(Stop::Video)
                        }
                        FrameRef::Host(_) => Err(Stop::Video(VideoError::NvdecUnsupported {
                            reason: "NVDEC gave a software frame".into(),
                        })),
                    };
                    match self.seek_and_decode(opened, &mut *decoder, planned, asm, &mut hold) {
                        // Refused when decoding started (a profile or size this GPU does not decode): the
                        // whole plan again on the CPU, nothing having been taken yet.
                        Err(Stop::Video(VideoError::NvdecUnsupported { reason }))
                            if self.config.cpu_fallback && held.get() == 0 && asm.frames() == 0 =>
                        {
                            tracing::info!(%reason, "moving the sampled video to the CPU decoder");
                        }
                        other => return other,
                    }
                }
                Err(reason) if !self.config.cpu_fallback => {
                    return Err(Stop::Video(VideoError::NvdecUnsupported { reason }))
                }
                Err(reason) => {
                    tracing::info!(%reason, "NVDEC cannot decode this video: decoding it on the CPU");
                }
            }
        }
        asm.set_on_gpu(false, emit)?;
        let mut decoder = self.cpu_decoder_for(opened)?;
        let mut hold = |frame: FrameRef<'_>| {
            let frame = frame.host().map_err(Stop::Video)?;
            frame.new_ref().map_err(|e| Stop::Video(e.into()))
        };
        self.seek_and_decode(opened, &mut decoder, planned, asm, &mut hold)
    }

    /// [`put`](Self::put) after the holes met so far (`holes`, drained), so that they are reported on the
    /// sequence of the frame that follows them.
    fn put_after<F: Picture>(
        &self,
        asm: &mut Assembler,
        holes: &RefCell<Vec<HoleAt>>,
        time_base: f64,
        host: &mut transform::HostScratch,
        out: Out<'_, Shown<F>>,
    ) -> Result<(), Stop> {
        let met = std::mem::take(&mut *holes.borrow_mut());
        self.holes(asm, met, time_base)?;
        self.put(asm, host, out)
    }

    /// Hands what the slots give to the transform and assembly stages (with
    /// [`Config::strict`](crate::Config::strict), a damaged frame fails the video instead).
    fn put<F: Picture>(
        &self,
        asm: &mut Assembler,
        host: &mut transform::HostScratch,
        out: Out<'_, Shown<F>>,
    ) -> Result<(), Stop> {
        if self.shared.stop.load(Ordering::Relaxed) {
            return Err(Stop::Shutdown);
        }
        if let Out::Frame {
            frame,
            display,
            pts,
        } = &out
        {
            if frame.damaged && self.config.strict {
                let error = damage::damaged_frame(asm.frames(), *display, *pts);
                return Err(Stop::Video(error));
            }
        }
        let emit = &mut |batch| self.send_batch(batch).map_err(|_| Stop::Shutdown);
        match out {
            Out::EndSequence => asm.end_sequence(emit),
            Out::Frame {
                frame,
                display,
                pts,
            } => {
                let at = FrameAt {
                    pts,
                    index: display,
                    arrival: Instant::now(),
                    orientation: frame.orientation,
                    damaged: frame.damaged,
                };
                self.push_frame(asm, host, frame.picture.view(), at)
            }
        }
    }

    /// A whole video with an index: decodes the frames its sequences take, seeking past the GOPs they do not.
    /// Each needed frame is held once (`hold`: a new reference to a host frame, a copy of an NVDEC picture)
    /// for every slot that takes it.
    fn seek_and_decode<F: Picture>(
        &self,
        opened: &mut Opened,
        decoder: &mut dyn Decoder,
        planned: &Planned,
        asm: &mut Assembler,
        hold: &mut dyn FnMut(FrameRef<'_>) -> Result<F, Stop>,
    ) -> Result<SeekOutcome, Stop> {
        let time_base = opened.demuxer.stream().seconds_per_unit();
        let mut host = transform::HostScratch::new();
        let orienter = transform::Orienter::new(opened.demuxer.stream(), &self.config);
        let Planned {
            index,
            virtual_frames,
            plan,
            needed,
        } = planned;
        let mut slots = Slots::new(plan.clone());
        // Needed frames that did not come out, reported on the sequence of the next frame put.
        let holes = RefCell::new(Vec::new());
        let mut put =
            |out: Out<'_, Shown<F>>| self.put_after(asm, &holes, time_base, &mut host, out);
        // The turn of the frame the decoder gave last (every frame is seen, needed or not).
        let turn = Cell::new(Orientation::Upright);
        let mut seen = |frame: &FrameRef<'_>, _: bool| turn.set(orienter.observe(frame));
        let mut deliver = |d: u64, needed: Needed<'_>| -> Result<(), Stop> {
            let pts = index.seconds_of(d);
            let (frame, damaged) = match needed {
                Needed::Frame { frame, damaged } => (frame, damaged),
                Needed::Missing => {
                    holes.borrow_mut().push(HoleAt {
                        index: d,
                        pts: index.pts_of(d),
                    });
                    return Ok(());
                }
            };
            let held = Rc::new(Shown {
                picture: hold(frame)?,
                orientation: turn.get(),
                damaged,
            });
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
            &mut Position::default(),
            &mut seen,
            &mut deliver,
        )?;
        slots.finish(&mut put)?;
        self.holes(asm, holes.into_inner(), time_base)?;
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
        let orienter = transform::Orienter::new(opened.demuxer.stream(), &self.config);
        let mut outcome = Outcome::default();
        let mut packet = Packet::new().map_err(|e| Stop::Video(e.into()))?;
        let time_base = opened.demuxer.stream().seconds_per_unit();
        let last_duration = Cell::new(None);
        let numbering = RefCell::new(Numbering::new());
        // Holes met, reported on the sequence of the next frame put.
        let holes = RefCell::new(Vec::new());
        let mut put =
            |out: Out<'_, Shown<AvFrame>>| self.put_after(asm, &holes, time_base, &mut host, out);
        let meet =
            |met: Vec<HoleAt>, sampler: &mut InOrder, mut put: &mut Put<'_>| -> Result<(), Stop> {
                for hole in met {
                    holes.borrow_mut().push(hole);
                    sampler.hole(hole.pts as f64 * time_base, &mut put)?;
                }
                Ok(())
            };
        let mut on_frame = |info: crate::decode::FrameInfo, frame: FrameRef<'_>| {
            let orientation = orienter.observe(&frame);
            let frame = frame.host().map_err(Stop::Video)?;
            last_duration.set(frame.duration().map(|d| d as f64 * time_base));
            let (display, met) = numbering.borrow_mut().frame(info.packet_pts);
            meet(met, sampler, &mut put)?;
            let Some(display) = display else {
                return Ok(()); // a picture for an index already passed (damage): not given
            };
            sampler.frame(
                frame,
                display,
                orientation,
                info.damaged,
                info.pts,
                &mut put,
            )
        };
        self.read_and_decode(
            &mut opened.demuxer,
            decoder,
            &mut packet,
            false,
            &mut outcome,
            &mut |packet| {
                numbering
                    .borrow_mut()
                    .packet(packet.pts(), packet.is_key(), packet.is_discarded());
            },
            &mut on_frame,
        )?;
        meet(numbering.into_inner().finish(), sampler, &mut put)?;
        sampler.finish(last_duration.get(), &mut put)?;
        self.holes(asm, holes.into_inner(), time_base)?;
        Ok(outcome)
    }
}

/// What takes the slots' output in order (`Worker::put` over a video's assembler).
type Put<'a> = dyn FnMut(Out<'_, Shown<AvFrame>>) -> Result<(), Stop> + 'a;

/// A picture the slots hold for later sequences: where the transform stage reads it.
trait Picture {
    fn view(&self) -> FrameRef<'_>;
}

impl Picture for AvFrame {
    fn view(&self) -> FrameRef<'_> {
        FrameRef::Host(self)
    }
}

impl Picture for HeldPicture {
    fn view(&self) -> FrameRef<'_> {
        FrameRef::Device(self.frame())
    }
}
