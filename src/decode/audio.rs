//! The audio beside the frames: a video's audio stream read by a demuxer of its own over the same whole video,
//! decoded by libavcodec and resampled by libswresample into packed `f32` (the `ffmpeg` CLI's `-ac N -ar R -f
//! f32le`), and cut by time into each sequence's [`AudioClip`]: the samples played from its first frame's start
//! to its last frame's end.
//!
//! Sample `k` of the stream plays at `first + k / rate`, `first` being its first decoded frame's time, as the
//! CLI's output does (it writes the decoded samples one after the other), except that a hole in the stream's
//! timestamps (over 100 ms) is kept as silence, where the CLI's raw output closes it up: the sound after it
//! plays with its frames. The track reads ahead only as far as
//! the sequence being cut ends, and keeps nothing before that sequence's start, so memory stays flat in the
//! video's length. Audio never fails a video: a stream that cannot be read stops giving samples (a warning says
//! why), and the sequences go on with what there was.

use std::collections::VecDeque;

use std::sync::Arc;

use crate::demux::{AudioTap, Demuxer};
use crate::error::{AvError, VideoError};
use crate::ffi::codec::{CodecContext, Received};
use crate::ffi::format::FormatContext;
use crate::ffi::frame::AvFrame;
use crate::ffi::packet::Packet;
use crate::ffi::resample::{frame_audio, AudioOut, Resampler};
use crate::settings::audio::Audio;
use crate::settings::config::Config;
use crate::video::Whole;

/// The audio played while a sequence's frames are shown: `f32` samples in [-1, 1], channel after channel
/// (`channels` rows of `samples()` values, TorchCodec's `AudioSamples.data` layout), with the time of the first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AudioClip {
    data: Vec<f32>,
    channels: u32,
    sample_rate: u32,
    pts: f64,
}

impl AudioClip {
    /// Every sample, channel after channel: `channels() x samples()` values.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    /// Channel `c`'s samples.
    ///
    /// # Panics
    /// When `c >= channels()`.
    pub fn channel(&self, c: usize) -> &[f32] {
        assert!(
            c < self.channels as usize,
            "channel {c} of {}",
            self.channels
        );
        let n = self.samples();
        &self.data[c * n..(c + 1) * n]
    }

    /// Channels (0 for a video without audio).
    pub fn channels(&self) -> u32 {
        self.channels
    }

    /// Samples a channel.
    pub fn samples(&self) -> usize {
        if self.channels == 0 {
            0
        } else {
            self.data.len() / self.channels as usize
        }
    }

    /// Samples a second (0 for a video without audio).
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// When the first sample plays, in seconds on the video's timeline (its frames' `pts`).
    pub fn pts_seconds(&self) -> f64 {
        self.pts
    }

    /// How long the samples play, in seconds.
    pub fn duration_seconds(&self) -> f64 {
        if self.sample_rate == 0 {
            0.0
        } else {
            self.samples() as f64 / f64::from(self.sample_rate)
        }
    }

    /// Whether it holds no sample.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// The shortest hole in an audio stream's timestamps kept as silence, in seconds (`aresample`'s
/// `min_hard_comp`).
const FILL_HOLES: f64 = 0.1;

/// The sample index of time `t` on a stream whose sample 0 plays at `first`.
fn sample_at(t: f64, first: f64, rate: u32) -> u64 {
    let k = ((t - first) * f64::from(rate)).round();
    if k.is_finite() && k > 0.0 {
        k.min(u64::MAX as f64 / 2.0) as u64
    } else {
        0
    }
}

/// The whole audio stream of `video` (any container FFmpeg reads, with or without video: an `.m4a`, an `.mp3`
/// too), decoded and resampled per `audio` (the stream FFmpeg picks unless it names one), as the `ffmpeg` CLI's
/// `-vn [-ac N] [-ar R] -f f32le` gives it, sample 0 at the stream's first decoded frame
/// ([`AudioClip::pts_seconds`]). What decord's `AudioReader` reads at once; the operator and the
/// [`VideoReader`](crate::VideoReader) cut the same samples by time instead. Fails with
/// [`Error::Config`](crate::Error::Config) for settings out of range and a video's error
/// ([`VideoError::NoAudioStream`] without audio) labelled with `video`'s label.
///
/// ```
/// let sound = framefeed::decode_audio(framefeed::SAMPLE_MP4, framefeed::Audio::new());
/// assert_eq!(sound.unwrap_err().code(), "no_audio_stream"); // the sample has no audio
/// ```
pub fn decode_audio(
    video: impl Into<crate::video::Encoded>,
    audio: Audio,
) -> crate::error::Result<AudioClip> {
    audio.validate()?;
    let video = video.into();
    let failed = |error: VideoError| crate::error::Error::Video {
        video: crate::video::VideoRef {
            id: crate::video::VideoId(0),
            label: video.label.clone(),
        },
        error,
    };
    let config = Config::new(1, 1).audio(audio);
    let mut reader = Reader::open(&video.data, &config, audio)
        .map_err(failed)?
        .ok_or_else(|| failed(VideoError::NoAudioStream))?;
    let clip = reader.cut(-WHOLE, WHOLE);
    if reader.first.is_none() {
        return Err(failed(VideoError::NoAudioStream));
    }
    Ok(clip)
}

/// Seconds past any stream's ends, both ways: "the whole stream".
const WHOLE: f64 = 1e12;

/// A video's audio stream, decoded and resampled on demand, cut by time.
pub(crate) struct AudioTrack {
    /// What reads the stream again from its start (a whole video's), if it can be.
    again: Option<(Whole, Config)>,
    settings: Audio,
    reader: Reader,
}

/// Where a track's packets come from.
enum Packets {
    /// Its own demuxer over the whole video.
    Demuxer(Box<Demuxer>),
    /// The packets the video's demuxer sets aside as it reads (a live video's, read once).
    Tap(Arc<AudioTap>),
}

/// The decoding state: rebuilt from the start when a cut reaches back before what it kept.
struct Reader {
    packets: Packets,
    /// A tapped stream has no packet waiting now (more may come).
    starved: bool,
    decoder: CodecContext,
    settings: Audio,
    resampler: Option<Resampler>,
    out: Option<AudioOut>,
    packet: Packet,
    frame: AvFrame,
    /// Packed samples by the index of their first: silence where there is none (a hole in the stream).
    kept: VecDeque<(u64, Vec<f32>)>,
    /// Nothing before this sample is kept any more.
    kept_from: u64,
    /// The index after the last sample decoded (or the last hole's end).
    end: u64,
    /// The resampler's output, before it is kept.
    scratch: Vec<f32>,
    /// When sample 0 plays, once the first frame is decoded.
    first: Option<f64>,
    /// The stream is read to its end, or stopped by an error.
    ended: bool,
    /// Seconds a timestamp unit of the stream.
    time_base: f64,
}

impl AudioTrack {
    /// The audio of the whole video `source`; `None` when it has no audio stream (or none framefeed can decode:
    /// the reason is logged).
    pub(crate) fn open(source: &Whole, config: &Config) -> Option<Self> {
        let settings = config.audio?;
        match Reader::open(source, config, settings) {
            Ok(Some(reader)) => Some(Self {
                again: Some((source.clone(), config.clone())),
                settings,
                reader,
            }),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e, "the video's audio cannot be read; its sequences carry none");
                None
            }
        }
    }

    /// The samples played from `start` to `end` (seconds on the video's timeline): those of the stream from
    /// the sample playing at `start` to the one at `end`, rounded to the nearest sample, less what the stream
    /// does not have (audio that starts later, or ends sooner).
    pub(crate) fn cut(&mut self, start: f64, end: f64) -> AudioClip {
        if let (Some(first), Some(out)) = (self.reader.first, self.reader.out) {
            let rate = out.sample_rate;
            let from = sample_at(start, first, rate);
            let behind = from < self.reader.kept_from;
            // Behind what is kept (clips out of order, a reader's earlier range): the stream is read again from
            // its start. A seek would not give the same samples: a decoder's state (AAC's noise substitution,
            // MP3's bit reservoir) and a resampler's phase depend on everything before.
            if let (true, Some((source, config))) = (behind, &self.again) {
                match Reader::open(source, config, self.settings) {
                    Ok(Some(reader)) => self.reader = reader,
                    _ => self.reader.ended = true,
                }
            }
        }
        self.reader.cut(start, end)
    }

    /// The audio of a video read once (live, or by URL): its stream `index` in the video's demuxer `format`,
    /// whose packets `tap` sets aside as the video is read (`Demuxer::tap_audio`); `None` when no decoder
    /// opens for it (the reason is logged).
    pub(crate) fn tapped(
        format: &FormatContext,
        index: usize,
        tap: Arc<AudioTap>,
        settings: Audio,
    ) -> Option<Self> {
        let opened = CodecContext::open_decoder(format, index, 1, false)
            .map_err(VideoError::from)
            .and_then(|decoder| {
                let (num, den) = format.time_base(index);
                let time_base = if den > 0 {
                    f64::from(num) / f64::from(den)
                } else {
                    0.0
                };
                Reader::new(Packets::Tap(tap), decoder, time_base, settings)
            });
        match opened {
            Ok(reader) => Some(Self {
                again: None,
                settings,
                reader,
            }),
            Err(e) => {
                tracing::warn!(error = %e, "the video's audio cannot be decoded; its sequences carry none");
                None
            }
        }
    }

    /// Decodes what is there to decode (a tapped stream's waiting packets) and says whether the samples up to
    /// `t` seconds are decoded, or will never be (the stream ended or failed).
    pub(crate) fn has_until(&mut self, t: f64) -> bool {
        self.reader.starved = false;
        loop {
            if self.reader.ended {
                return true;
            }
            if let (Some(first), Some(out)) = (self.reader.first, self.reader.out) {
                if self.reader.decoded() >= sample_at(t, first, out.sample_rate) {
                    return true;
                }
            }
            if self.reader.starved {
                return false;
            }
            self.reader.step();
        }
    }
}

impl Reader {
    fn open(source: &Whole, config: &Config, settings: Audio) -> Result<Option<Self>, VideoError> {
        let Some(demuxer) = Demuxer::open_audio(source.clone(), config, settings.stream)? else {
            return Ok(None);
        };
        let index = demuxer.stream().index;
        let decoder = CodecContext::open_decoder(demuxer.format(), index, 1, false)?;
        let time_base = demuxer.stream().seconds_per_unit();
        Self::new(
            Packets::Demuxer(Box::new(demuxer)),
            decoder,
            time_base,
            settings,
        )
        .map(Some)
    }

    fn new(
        packets: Packets,
        decoder: CodecContext,
        time_base: f64,
        settings: Audio,
    ) -> Result<Self, VideoError> {
        Ok(Self {
            packets,
            starved: false,
            decoder,
            settings,
            resampler: None,
            out: None,
            packet: Packet::new()?,
            frame: AvFrame::new()?,
            kept: VecDeque::new(),
            kept_from: 0,
            end: 0,
            scratch: Vec::new(),
            first: None,
            ended: false,
            time_base,
        })
    }

    /// Samples decoded so far (kept or dropped, holes included), per channel.
    fn decoded(&self) -> u64 {
        self.end
    }

    fn cut(&mut self, start: f64, end: f64) -> AudioClip {
        self.starved = false;
        while self.first.is_none() && !self.ended && !self.starved {
            self.step();
        }
        let (Some(first), Some(out)) = (self.first, self.out) else {
            return AudioClip::default();
        };
        let from = sample_at(start, first, out.sample_rate);
        let to = sample_at(end, first, out.sample_rate).max(from);
        self.starved = false;
        loop {
            self.drop_before(from);
            if self.decoded() >= to || self.ended || self.starved {
                break;
            }
            self.step();
        }
        self.drop_before(from);
        let channels = out.channels as usize;
        let last = to.min(self.decoded()).max(from);
        let n = (last - from) as usize;
        let mut data = Vec::new();
        if data.try_reserve_exact(n * channels).is_err() {
            tracing::warn!(
                samples = n,
                "no memory for a sequence's audio; it carries none"
            );
            return AudioClip::default();
        }
        // Silence where the stream has a hole; each kept run's samples where it has them.
        data.resize(n * channels, 0.0);
        for (at, samples) in &self.kept {
            let len = (samples.len() / channels) as u64;
            let (lo, hi) = ((*at).max(from), (at + len).min(last));
            for i in lo..hi {
                let src = (i - at) as usize * channels;
                let dst = (i - from) as usize;
                for c in 0..channels {
                    data[c * n + dst] = samples[src + c];
                }
            }
        }
        AudioClip {
            data,
            channels: out.channels,
            sample_rate: out.sample_rate,
            pts: first + from as f64 / f64::from(out.sample_rate),
        }
    }

    /// Forgets the samples before sample `from`.
    fn drop_before(&mut self, from: u64) {
        let channels = self.out.map_or(1, |o| o.channels.max(1) as usize);
        while let Some((at, samples)) = self.kept.front_mut() {
            let len = (samples.len() / channels) as u64;
            if *at + len <= from {
                self.kept.pop_front();
            } else {
                if *at < from {
                    samples.drain(..(from - *at) as usize * channels);
                    *at = from;
                }
                break;
            }
        }
        self.kept_from = self.kept_from.max(from);
    }

    /// Keeps what the resampler wrote into `scratch`, at the end.
    fn keep_scratch(&mut self) {
        let channels = self.out.map_or(1, |o| o.channels.max(1) as usize);
        let n = (self.scratch.len() / channels) as u64;
        if n > 0 {
            let samples = std::mem::take(&mut self.scratch);
            self.kept.push_back((self.end, samples));
            self.end += n;
        }
    }

    /// Reads and decodes the next packet, or at the stream's end drains the decoder and the resampler.
    fn step(&mut self) {
        if let Err(e) = self.try_step() {
            tracing::warn!(error = %e, "the video's audio stopped; its later sequences carry what was decoded");
            self.ended = true;
        }
    }

    fn try_step(&mut self) -> Result<(), AvError> {
        let read = match &mut self.packets {
            Packets::Demuxer(demuxer) => demuxer.next_packet(&mut self.packet)?,
            Packets::Tap(tap) => match tap.pop() {
                Some(mut packet) => {
                    self.packet.take_from(&mut packet);
                    true
                }
                None if tap.is_closed() => false,
                None => {
                    self.starved = true;
                    return Ok(());
                }
            },
        };
        if !read {
            self.decoder.send_packet(None)?;
            self.receive()?;
            if let Some(resampler) = &mut self.resampler {
                resampler.convert(None, &mut self.scratch)?;
                self.keep_scratch();
            }
            self.ended = true;
            return Ok(());
        }
        // A damaged packet is skipped, as the CLI skips it: the samples of the others are what there is.
        match self.decoder.send_packet(Some(&self.packet)) {
            Ok(true) => {}
            Ok(false) => {
                self.receive()?;
                let _ = self.decoder.send_packet(Some(&self.packet));
            }
            Err(e) => tracing::debug!(error = %e, "an audio packet could not be decoded"),
        }
        self.receive()
    }

    /// Converts every frame the decoder has ready.
    fn receive(&mut self) -> Result<(), AvError> {
        loop {
            match self.decoder.receive_frame(&mut self.frame) {
                Ok(Received::Frame) => self.convert()?,
                Ok(Received::Again | Received::Eof) => return Ok(()),
                // A frame that failed to decode: the next may not.
                Err(e) => tracing::debug!(error = %e, "an audio frame could not be decoded"),
            }
        }
    }

    fn convert(&mut self) -> Result<(), AvError> {
        if self.first.is_none() {
            self.first = Some(self.frame.timestamp().unwrap_or(0) as f64 * self.time_base);
        }
        let shape = frame_audio(&self.frame);
        if shape.channels == 0 || shape.sample_rate == 0 {
            return Ok(());
        }

        let out = *self.out.get_or_insert(AudioOut {
            channels: self
                .settings
                .channels
                .unwrap_or(shape.channels)
                .clamp(1, Audio::MAX_CHANNELS),
            sample_rate: self
                .settings
                .sample_rate
                .unwrap_or(shape.sample_rate)
                .clamp(Audio::MIN_SAMPLE_RATE, Audio::MAX_SAMPLE_RATE),
        });
        // A hole in the stream's timestamps longer than FILL_HOLES stays silent, so that what follows plays with
        // its frames (the CLI's raw output would close it up); shorter jitter is the container's rounding.
        let first = self.first.unwrap_or(0.0);
        let at = self
            .frame
            .timestamp()
            .map(|ts| sample_at(ts as f64 * self.time_base, first, out.sample_rate));
        let slack = (FILL_HOLES * f64::from(out.sample_rate)) as u64;
        let hole = at.filter(|&at| at > self.end + slack);
        let same_shape = self
            .resampler
            .as_ref()
            .is_some_and(|r| r.takes(&self.frame));
        if hole.is_some() || !same_shape {
            // A hole, or a new shape (the stream changed its layout or rate): the old resampler's last samples
            // first.
            if let Some(mut old) = self.resampler.take() {
                old.convert(None, &mut self.scratch)?;
                self.keep_scratch();
            }
            self.resampler = Some(Resampler::new(&self.frame, out)?);
        }
        if let Some(at) = hole {
            self.end = at;
        }
        let resampler = self.resampler.as_mut().expect("set above");
        resampler.convert(Some(&self.frame), &mut self.scratch)?;
        self.keep_scratch();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_map_to_the_nearest_sample_never_before_the_first() {
        assert_eq!(sample_at(1.0, 0.5, 48_000), 24_000);
        assert_eq!(sample_at(0.1, 0.5, 48_000), 0);
        assert_eq!(sample_at(1.0 / 30.0, 0.0, 44_100), 1470);
        assert_eq!(sample_at(f64::NAN, 0.0, 44_100), 0);
        assert_eq!(sample_at(f64::INFINITY, 0.0, 44_100), 0);
    }
}
