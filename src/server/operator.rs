//! An operator for a client's settings: what a client may set (`POST /videos`'s query, `POST /streams`'s
//! JSON), the configuration it gives sized to the per-upload memory budget, and the reservation trimmed to the
//! video's real need.

use serde_json::Value;

use super::budget::{PixelCost, Short, UploadShape};
use super::config::{ADMISSION_BYTES, LIVE_BUFFER_BYTES};
use super::errors::ApiError;
use super::service::{Service, Slot};
use crate::assembly::batch::Batch;
use crate::error_code::ErrorCode;
use crate::operator::sound::MAX_WAITING;
use crate::report;
use crate::settings::audio::Audio;
use crate::settings::config::{limits, Config, LastSequencePolicy, MoovAtEnd};
use crate::settings::sampling::Sampling;
use crate::transform::Transforms;

/// Bytes an upload's audio holds: its packets set aside (at most `AudioTap::MAX_BYTES`) and its decoded samples
/// (a few seconds of 48 kHz stereo float, the most a sequence and the audio's lag span).
const AUDIO_HELD_BYTES: u64 = crate::demux::AudioTap::MAX_BYTES as u64 + (8 << 20);

/// Batches the operator keeps ready ahead of the response.
const PREFETCH: usize = 1;
/// Batches alive at once: those prefetched, the one being decoded, the one the response holds.
const BATCHES_IN_FLIGHT: u64 = PREFETCH as u64 + 2;

/// What a client sets of an operator (by query for `POST /videos`, by JSON for `POST /streams`).
#[derive(Debug, Clone)]
pub(crate) struct BatchSettings {
    pub(crate) sequence_length: usize,
    pub(crate) batch_size: usize,
    pub(crate) policy: LastSequencePolicy,
    pub(crate) transforms: Transforms,
    /// Which frames: stride, step, fps, a time range or indices on any upload; clips on an upload decoded
    /// whole.
    pub(crate) sampling: Sampling,
    /// Frames turned by the video's display matrix (the default), or as coded.
    pub(crate) autorotate: bool,
    /// Fail the video at its first damage ([`Config::strict`]).
    pub(crate) strict: bool,
    /// Each sequence's line carries the MD5 of each frame's bytes (`report::BatchLine::with_md5`).
    pub(crate) md5: bool,
    /// Each sequence's sound, decoded beside its frames.
    pub(crate) audio: Option<Audio>,
}

/// What a client's audio settings are, checked: `audio` on, with `audio_rate` and `audio_channels` only then.
pub(crate) fn audio_setting(
    on: Option<bool>,
    rate: Option<u64>,
    channels: Option<u64>,
) -> Result<Option<Audio>, ApiError> {
    let bad = |m: &str| ApiError::new(ErrorCode::BadRequest, m);
    if !on.unwrap_or(false) {
        if rate.is_some() || channels.is_some() {
            return Err(bad("audio_rate and audio_channels are for audio=true"));
        }
        return Ok(None);
    }
    let mut audio = Audio::new();
    if let Some(rate) = rate {
        audio = audio.sample_rate(u32::try_from(rate).unwrap_or(u32::MAX));
    }
    if let Some(channels) = channels {
        audio = audio.channels(u32::try_from(channels).unwrap_or(u32::MAX));
    }
    audio
        .validate()
        .map_err(|e| ApiError::new(ErrorCode::BadRequest, e.into_reason()))?;
    Ok(Some(audio))
}

impl Default for BatchSettings {
    fn default() -> Self {
        Self {
            sequence_length: 16,
            batch_size: 1,
            policy: LastSequencePolicy::Partial,
            transforms: Transforms::new(),
            sampling: Sampling::new(),
            autorotate: true,
            strict: false,
            md5: false,
            audio: None,
        }
    }
}

/// The operator configuration for a client's settings, sized to the per-upload memory budget (and live, low
/// latency), and the upload's [`UploadShape`]; checked before anything is reserved, so that a bad one is a
/// 400 whatever the load.
pub(crate) fn operator_config(
    settings: &BatchSettings,
    service: &Service,
) -> Result<(Config, UploadShape), ApiError> {
    let bad = |m: String| ApiError::new(ErrorCode::BadRequest, m);
    let (length, batch) = (settings.sequence_length, settings.batch_size);
    let server = &service.config;
    let moov_bytes = server.moov_buffer_bytes();
    let moov = if moov_bytes == 0 {
        MoovAtEnd::Fail
    } else {
        MoovAtEnd::Buffer {
            max_bytes: moov_bytes,
        }
    };
    if settings.sampling.needs_whole_video() && moov_bytes == 0 {
        return Err(bad(
            "clips need the whole upload before decoding, and this server buffers no upload whole \
             (--moov-at-end fail); sample with stride, step, fps or a time range instead"
                .into(),
        ));
    }
    let mut config = Config::new(length, batch);
    if let Some(audio) = settings.audio {
        config = config.audio(audio);
    }
    let config = config
        .last_sequence_policy(settings.policy)
        .transforms(settings.transforms.clone())
        .sampling(settings.sampling.clone())
        .autorotate(settings.autorotate)
        .strict(settings.strict)
        // Low latency: batches leave as soon as their frames are decoded.
        .low_latency()
        .prefetch_batches(PREFETCH)
        .decoder_threads(server.decoder_threads_per_stream)
        .stall_timeout(server.stall_timeout)
        .live_buffer_bytes(LIVE_BUFFER_BYTES)
        // No decoder sees the stream before its frame size is checked against the budget.
        .probe_without_decoders()
        .moov_at_end(moov)
        .max_container_samples(server.container_samples());
    // With audio, batches may wait for their sound, and its packets and samples are held.
    let (waiting, audio_bytes) = match settings.audio {
        Some(_) => (MAX_WAITING as u64, AUDIO_HELD_BYTES),
        None => (0, 0),
    };
    let shape = UploadShape {
        frames_per_batch: (length as u64).saturating_mul(batch as u64),
        batches_in_flight: BATCHES_IN_FLIGHT + waiting,
        fixed_bytes: server.held_bytes(moov_bytes) + audio_bytes,
        pixel: PixelCost::of(&settings.transforms),
        audio_bytes,
    };
    let budget = server.max_upload_memory;
    let Some(max_batch_bytes) = shape.max_batch_bytes(budget) else {
        return Err(ApiError::new(ErrorCode::OverMemoryBudget, format!(
                "sequence_length x batch_size = {length} x {batch} frames cannot fit in this server's {budget} bytes per upload, even for a one-pixel video; lower sequence_length or batch_size"
            ),
        ));
    };
    // The decoders are held to the largest frame the upload's memory fits (FFmpeg's `max_pixels`, with the
    // frame-size check after it): a stream announcing a larger frame fails before a buffer of its size exists.
    let config = config
        .max_batch_bytes(max_batch_bytes.max(1))
        .max_frame_size(
            limits::DEFAULT_MAX_DIMENSION,
            shape
                .max_pixels(budget)
                .clamp(1, limits::DEFAULT_MAX_FRAME_PIXELS),
        );
    config.validate().map_err(|e| bad(e.into_reason()))?;
    Ok((config, shape))
}

/// What an upload is known to need once `received` body bytes came: before its stream's header gave the
/// frame size, [`ADMISSION_BYTES`] and the body it may hold (buffered ahead of the decoder, or collected for
/// a moov-at-end MP4); after, its batches and decoder at that size, the body buffered ahead and the index,
/// and the moov-at-end buffer only as far as the received bytes could fill it. Never more than
/// `max_upload_memory`.
pub(crate) fn known_need(
    shape: &UploadShape,
    service: &Service,
    received: u64,
    frame_size: Option<(u64, u64)>,
) -> u64 {
    let settings = &service.config;
    let ceiling = settings.max_upload_memory;
    let moov = settings.moov_buffer_bytes().min(received);
    let shape = UploadShape {
        fixed_bytes: settings.held_bytes(moov) + shape.audio_bytes,
        ..*shape
    };
    let need = match frame_size {
        Some((width, height)) => shape.need(width.saturating_mul(height)),
        None => ADMISSION_BYTES.checked_add(received.min(shape.fixed_bytes)),
    };
    need.unwrap_or(ceiling).min(ceiling)
}

/// Sets an upload's memory reservation to what its video needs, now that its first batch shows the frame
/// size ([`known_need`]): trimmed, or grown if the body's reader has not grown it yet; `Err` when the pool or
/// the client's share cannot cover that (the upload then fails; its batch is not sent).
pub(crate) fn settle_reservation(
    slot: &Slot,
    shape: &UploadShape,
    service: &Service,
    received: u64,
    frame_shape: [usize; 3],
) -> Result<(), Short> {
    let size = (frame_shape[0] as u64, frame_shape[1] as u64);
    let need = known_need(shape, service, received, Some(size));
    let mut memory = slot.memory.lock();
    memory.grow_to(need)?;
    memory.shrink_to(need);
    Ok(())
}

/// A batch's response line ([`report::BatchLine`]), with each frame's MD5 when the client asked for them.
pub(crate) fn batch_line(batch: &Batch, md5: bool) -> Value {
    let line = report::BatchLine::of(batch);
    let line = if md5 { line.with_md5(batch) } else { line };
    serde_json::to_value(line).unwrap_or(Value::Null)
}
