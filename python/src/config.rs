//! The keyword arguments of `VideoInput(...)` as a framefeed [`Config`]: each one parsed here, then the whole
//! configuration validated once by framefeed (whose message, naming the allowed range, becomes the
//! `ValueError`).

use framefeed::{
    Choice, Config, CropPosition, Device, LastSequencePolicy, NvdecDriver, Sampling,
    SamplingOptions, TransformOptions, Transforms,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Per-channel values (R, G, B).
pub(crate) type Rgb = (f32, f32, f32);

/// Every keyword of `VideoInput(...)`.
pub(crate) struct Settings<'py> {
    pub(crate) sequence_length: usize,
    pub(crate) batch_size: usize,
    pub(crate) last_sequence_policy: &'py str,
    pub(crate) blocking: bool,
    pub(crate) decoder_threads: Option<usize>,
    pub(crate) prefetch_batches: usize,
    pub(crate) device: &'py str,
    pub(crate) cpu_fallback: bool,
    pub(crate) nvdec_driver: &'py str,
    pub(crate) resize: Option<(u32, u32)>,
    pub(crate) resize_shorter: Option<u32>,
    pub(crate) resize_mode: &'py str,
    pub(crate) interpolation: &'py str,
    pub(crate) resize_stage: &'py str,
    pub(crate) crop: Option<Bound<'py, PyAny>>,
    pub(crate) crop_pos: Bound<'py, PyAny>,
    pub(crate) out_of_bounds: &'py str,
    pub(crate) fill: Rgb,
    pub(crate) seed: Option<u64>,
    pub(crate) dtype: &'py str,
    pub(crate) normalize: Option<(Rgb, Rgb)>,
    pub(crate) tonemap: Option<&'py str>,
    pub(crate) layout: &'py str,
    pub(crate) pack: bool,
    pub(crate) huge_pages: bool,
    pub(crate) autorotate: bool,
    pub(crate) strict: bool,
    pub(crate) low_latency: bool,
    pub(crate) max_queued: Option<(usize, usize)>,
    pub(crate) max_batch_bytes: Option<u64>,
    pub(crate) max_container_samples: Option<u64>,
    pub(crate) live_buffer_bytes: Option<usize>,
    pub(crate) stall_timeout: Option<f64>,
    pub(crate) sampling: SamplingArgs<'py>,
    /// `audio=True` with `audio_sample_rate` and `audio_channels`.
    pub(crate) audio: AudioArgs,
}

/// The audio keywords: `audio`, `audio_sample_rate`, `audio_channels`, `audio_stream`.
#[derive(Default)]
pub(crate) struct AudioArgs {
    pub(crate) audio: bool,
    pub(crate) sample_rate: Option<u32>,
    pub(crate) channels: Option<u32>,
    pub(crate) stream: Option<usize>,
}

impl AudioArgs {
    /// The audio setting, or `None` without `audio=True` (its other keywords then refused).
    pub(crate) fn audio(&self) -> PyResult<Option<framefeed::Audio>> {
        if !self.audio {
            if self.sample_rate.is_some() || self.channels.is_some() || self.stream.is_some() {
                return Err(bad(
                    "audio_sample_rate, audio_channels and audio_stream need audio=True".into(),
                ));
            }
            return Ok(None);
        }
        let mut audio = framefeed::Audio::new();
        if let Some(rate) = self.sample_rate {
            audio = audio.sample_rate(rate);
        }
        if let Some(channels) = self.channels {
            audio = audio.channels(channels);
        }
        if let Some(stream) = self.stream {
            audio = audio.stream(stream);
        }
        Ok(Some(audio))
    }
}

/// The sampling keywords of `VideoInput(...)` (the seed is `seed`, shared with random crops).
pub(crate) struct SamplingArgs<'py> {
    pub(crate) stride: Option<usize>,
    pub(crate) step: Option<usize>,
    pub(crate) clips: Option<usize>,
    pub(crate) clip_sampler: &'py str,
    pub(crate) clip_policy: &'py str,
    pub(crate) fps: Option<f64>,
    pub(crate) start: Option<f64>,
    pub(crate) end: Option<f64>,
    pub(crate) indices: Option<Vec<u64>>,
}

impl SamplingArgs<'_> {
    /// No sampling (a reader's config).
    pub(crate) fn none() -> Self {
        Self {
            stride: None,
            step: None,
            clips: None,
            clip_sampler: "random",
            clip_policy: "cut",
            fps: None,
            start: None,
            end: None,
            indices: None,
        }
    }

    /// The framefeed sampling, seeded by `seed` (validated with the rest of the config).
    fn sampling(&self, seed: Option<u64>) -> PyResult<Sampling> {
        Ok(Sampling::from(SamplingOptions {
            stride: self.stride,
            step: self.step,
            clips: self.clips,
            clip_sampler: Some(choice(self.clip_sampler)?),
            clip_policy: Some(choice(self.clip_policy)?),
            seed,
            fps: self.fps,
            start: self.start,
            end: self.end,
            indices: self.indices.clone(),
        }))
    }
}

fn bad(message: String) -> PyErr {
    PyValueError::new_err(message)
}

/// The value of a choice setting given by its name (`"float32"`), parsed by framefeed's [`Choice`] as the CLI
/// and the service parse it: a wrong name is a `ValueError` naming the setting and its values. The one parser
/// of every choice keyword.
pub(crate) fn choice<T: Choice>(name: &str) -> PyResult<T> {
    T::parse_choice(name).map_err(bad)
}

fn rgb((r, g, b): Rgb) -> [f32; 3] {
    [r, g, b]
}

impl Settings<'_> {
    fn transforms(&self) -> PyResult<Transforms> {
        let crop = match &self.crop {
            None => None,
            Some(crop) => Some(match crop.extract::<u32>() {
                Ok(side) => (side, side),
                Err(_) => crop
                    .extract::<(u32, u32)>()
                    .map_err(|_| bad("crop must be a side in pixels or (width, height)".into()))?,
            }),
        };
        let crop_pos = match self.crop_pos.extract::<String>() {
            Ok(name) => name.parse::<CropPosition>().map_err(bad)?,
            Err(_) => {
                let (x, y) = self.crop_pos.extract::<(f32, f32)>().map_err(|_| {
                    bad("crop_pos must be 'center', 'random' or (x, y) in [0, 1]".into())
                })?;
                CropPosition::Fixed { x, y }
            }
        };
        Transforms::try_from(TransformOptions {
            resize: self.resize,
            resize_shorter: self.resize_shorter,
            resize_mode: Some(choice(self.resize_mode)?),
            fill: Some(rgb(self.fill)),
            interpolation: Some(choice(self.interpolation)?),
            resize_stage: Some(choice(self.resize_stage)?),
            crop,
            crop_pos: Some(crop_pos),
            out_of_bounds: Some(choice(self.out_of_bounds)?),
            dtype: Some(choice(self.dtype)?),
            normalize: self.normalize.map(|(mean, std)| (rgb(mean), rgb(std))),
            layout: Some(choice(self.layout)?),
            seed: self.seed,
            tonemap: self.tonemap.map(str::parse).transpose().map_err(bad)?,
        })
        .map_err(|e| bad(e.into_reason()))
    }

    /// The framefeed configuration, validated.
    pub(crate) fn config(&self) -> PyResult<Config> {
        let policy: LastSequencePolicy = choice(self.last_sequence_policy)?;
        let device: Device = self.device.parse().map_err(bad)?;
        let mut config = Config::new(self.sequence_length, self.batch_size);
        if self.low_latency {
            config = config.low_latency();
        }
        config = config
            .last_sequence_policy(policy)
            .blocking(self.blocking)
            .decoder_threads(self.decoder_threads.unwrap_or(0))
            .prefetch_batches(self.prefetch_batches)
            .device(device)
            .cpu_fallback(self.cpu_fallback)
            .nvdec_driver(choice::<NvdecDriver>(self.nvdec_driver)?)
            .pack_batches(self.pack)
            .huge_pages(self.huge_pages)
            .autorotate(self.autorotate)
            .strict(self.strict)
            .transforms(self.transforms()?)
            .sampling(self.sampling.sampling(self.seed)?);
        if let Some(audio) = self.audio.audio()? {
            config = config.audio(audio);
        }
        if let Some((videos, bytes)) = self.max_queued {
            config = config.max_queued(videos, bytes);
        }
        if let Some(bytes) = self.max_batch_bytes {
            config = config.max_batch_bytes(bytes);
        }
        if let Some(samples) = self.max_container_samples {
            config = config.max_container_samples(samples);
        }
        if let Some(bytes) = self.live_buffer_bytes {
            config = config.live_buffer_bytes(bytes);
        }
        if let Some(seconds) = self.stall_timeout {
            let timeout = framefeed::seconds_setting("stall_timeout", seconds).map_err(bad)?;
            config = config.stall_timeout(timeout);
        }
        config.validate().map_err(|e| bad(e.into_reason()))?;
        Ok(config)
    }
}
