//! The decoding thread's audio (with [`Config::audio`](crate::Config::audio)): each video's track, opened
//! beside its frames (a whole video's over its own demuxer; a video read once, live or by URL, from the packets
//! its demuxer sets aside), and the sound attached to each sequence as its batch leaves. A video read once has
//! its batches wait, in order, until their sound is decoded (or its stream ends, or the frames are
//! [`MAX_LAG`](crate::assembly::audio::MAX_LAG) past it).

use super::worker::{Shutdown, Worker};
use crate::assembly::assembler::Assembler;
use crate::assembly::audio::VideoAudio;
use crate::assembly::batch::Batch;
use crate::decode::audio::AudioTrack;
use crate::demux::open::Opened;
use crate::video::VideoRef;

/// The most batches that wait for their sound: memory stays bounded (the service counts them) whatever the
/// audio's lag.
pub(crate) const MAX_WAITING: usize = 2;

impl Worker {
    /// Opens `video`'s audio beside its frames, when the operator decodes audio.
    pub(super) fn open_audio(&self, video: &VideoRef, opened: &mut Opened) {
        let audio = self.config.audio.and_then(|settings| {
            let (fps, tick) = {
                let stream = opened.demuxer.stream();
                (stream.fps(), stream.seconds_per_unit())
            };
            match opened.whole().cloned() {
                Some(whole) => {
                    let track = AudioTrack::open(&whole, &self.config);
                    Some(VideoAudio::new(video.id, track, fps, tick))
                }
                // Sampling a video read once seeks in it (buffered whole): its packets come out of order, and
                // its sequences carry no audio (`None`).
                None if !self.config.sampling.is_everything() => None,
                None => match opened.demuxer.tap_audio(settings.stream) {
                    Some((index, tap)) => {
                        let track = AudioTrack::tapped(
                            opened.demuxer.format(),
                            index,
                            tap.clone(),
                            settings,
                        );
                        Some(VideoAudio::new(video.id, track, fps, tick).with_tap(tap))
                    }
                    None => Some(VideoAudio::new(video.id, None, fps, tick)),
                },
            }
        });
        *self.audio.borrow_mut() = audio;
    }

    /// Sends `batch`, or with a video read once, queues it until its sound is there (batches leave in order).
    pub(super) fn send_batch(&self, batch: Batch) -> Result<(), Shutdown> {
        if self.audio.borrow().as_ref().is_some_and(VideoAudio::waits) {
            self.audio_waiting.borrow_mut().push_back(batch);
            return self.release_audio(false);
        }
        self.deliver(batch)
    }

    /// Sends the waiting batches whose sound is there, in order (with `all`, every one; past
    /// [`MAX_WAITING`] batches, the oldest goes with the sound there is).
    pub(super) fn release_audio(&self, all: bool) -> Result<(), Shutdown> {
        loop {
            let ready = {
                let waiting = self.audio_waiting.borrow();
                let Some(head) = waiting.front() else {
                    return Ok(());
                };
                all || waiting.len() > MAX_WAITING
                    || self
                        .audio
                        .borrow_mut()
                        .as_mut()
                        .is_none_or(|audio| audio.ready(&head.sequences))
            };
            if !ready {
                return Ok(());
            }
            let batch = self.audio_waiting.borrow_mut().pop_front();
            if let Some(batch) = batch {
                self.deliver(batch)?;
            }
        }
    }

    /// A frame at `pts` seconds was decoded: waiting batches whose sound is there go.
    pub(super) fn frame_decoded(&self, pts: f64) -> Result<(), Shutdown> {
        if let Some(audio) = self.audio.borrow_mut().as_mut() {
            audio.note_frame(pts);
        }
        if self.audio_waiting.borrow().is_empty() {
            return Ok(());
        }
        self.release_audio(false)
    }

    /// The video's reading ended (or failed): its waiting batches go, and the sequences `asm` still holds get
    /// their sound while the track is open.
    pub(super) fn finish_audio(&self, asm: Option<&mut Assembler>) -> Result<(), Shutdown> {
        if let Some(audio) = self.audio.borrow().as_ref() {
            audio.finish();
        }
        self.release_audio(true)?;
        if let (Some(audio), Some(asm)) = (self.audio.borrow_mut().as_mut(), asm) {
            audio.attach(asm.pending_sequences());
        }
        Ok(())
    }
}
