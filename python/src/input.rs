//! `VideoInput`, `LiveVideo` and `FileList`: the operator's API as Python sees it. Every call that may wait
//! (feeding into a full queue, polling, pushing a live chunk) releases the GIL while it waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use framefeed::{
    Encoded, Error, FileList, Label, Reconnect, RtspTransport, Scheme, TryFeedError, UrlOptions,
    VideoInput,
};
use parking_lot::RwLock;
use pyo3::exceptions::{PyStopIteration, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::aio::{self, LiveSlot};
use crate::batch::PyBatch;
use crate::config::{choice, AudioArgs, Rgb, SamplingArgs, Settings};
use crate::errors::{to_py, IntoPyResult};
use crate::fork::PerProcess;

/// The bytes of a fed buffer, without copying when it is `bytes` or another read-only, C-contiguous buffer
/// (the exporter is kept alive until the decoder is done with it); writable buffers are copied once, since the
/// caller could change them while the video is decoded.
pub(crate) fn data_bytes(data: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if data.is_instance_of::<PyBytes>() {
        return data.extract::<Bytes>().map_err(Into::into);
    }
    let view = data
        .py()
        .import("framefeed._buffers")?
        .call_method1("readonly_view", (data,))?;
    if view.is_instance_of::<PyBytes>() {
        return view.extract::<Bytes>().map_err(Into::into); // the copy of a writable buffer
    }
    let (array, address, len): (Py<PyAny>, usize, usize) = view.extract()?;
    crate::ffi::buffer::borrow(array, address, len)
}

/// A fed video with its label, when `position` is given its place in its dataset (`position`, `epoch`: its
/// random clips), and the segment of it to decode (`framefeed.segments`). `epoch` without `position` is
/// refused: the clips would silently ignore it.
pub(crate) fn placed(
    video: Encoded,
    label: Option<Label>,
    position: Option<u64>,
    epoch: u64,
    segment: Option<(u64, u64)>,
) -> PyResult<Encoded> {
    let video = match label {
        Some(label) => video.label(label),
        None => video,
    };
    let video = match segment {
        Some((first, end)) => video.segment(first, end),
        None => video,
    };
    match position {
        Some(position) => Ok(video.position(position, epoch)),
        None if epoch != 0 => Err(PyValueError::new_err(format!(
            "epoch is {epoch} but position is None; allowed: an epoch with the video's position in its dataset"
        ))),
        None => Ok(video),
    }
}

/// A buffer fed from Python, with its label and place (see [`placed`]).
fn placed_bytes(
    data: &Bound<'_, PyAny>,
    label: Option<&Bound<'_, PyAny>>,
    position: Option<u64>,
    epoch: u64,
    segment: Option<(u64, u64)>,
) -> PyResult<Encoded> {
    placed(
        Encoded::new(data_bytes(data)?),
        self::label(label)?,
        position,
        epoch,
        segment,
    )
}

/// A label from Python: `str`, `int` or `None`.
fn label(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Label>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(n) = value.extract::<u64>() {
        return Ok(Some(Label::Number(n)));
    }
    if let Ok(s) = value.extract::<String>() {
        return Ok(Some(Label::Text(s)));
    }
    Err(PyTypeError::new_err(
        "a label is a str or a non-negative int",
    ))
}

fn batch(
    py: Python<'_>,
    result: Result<Option<framefeed::Batch>, Error>,
) -> PyResult<Option<PyBatch>> {
    Ok(result.py_err(py)?.map(|b| PyBatch { inner: Arc::new(b) }))
}

/// A streaming video input operator: feed encoded videos (whole buffers, or live streams chunk by chunk),
/// poll batches of `batch_size` sequences of `sequence_length` frames. See the package's documentation for
/// every keyword.
#[pyclass(module = "framefeed._framefeed", name = "VideoInput", frozen, subclass)]
pub(crate) struct PyVideoInput {
    /// The operator, re-made in a process forked after it was made, if nothing was fed to it yet.
    inner: PerProcess<VideoInput>,
    /// Its settings (`decoder_threads` left to the default: `framefeed._threads`' count, read again there).
    config: framefeed::Config,
    auto_threads: bool,
    /// Whether anything was fed: what the fed videos' decoding has reached is the making process's alone.
    fed: AtomicBool,
    /// How remote videos fed by URL are read (`storage_options`, `index_cache`).
    remote: framefeed::RemoteOptions,
}

impl PyVideoInput {
    /// The operator for this process (see [`PerProcess`]). In a process forked after it was made: the same
    /// settings made again when nothing was fed before the fork, else `FramefeedError` (the videos fed there,
    /// and their decoding, are the parent's: a fork cannot go on with them, and waiting would never end).
    pub(crate) fn op(&self, py: Python<'_>) -> PyResult<Arc<VideoInput>> {
        self.inner.get(|| {
            if self.fed.load(Ordering::Acquire) {
                return Err(crate::errors::framefeed_error(
                    py,
                    "this VideoInput was fed before the process forked, and the videos it holds are being \
                     decoded by the parent process's threads: make (or feed) the operator in the process that \
                     polls it, e.g. in a DataLoader worker's __iter__",
                    "forked",
                ));
            }
            let config = crate::fork::process_threads(py, self.config.clone(), self.auto_threads)?;
            py.detach(|| VideoInput::new(config)).py_err(py)
        })
    }

    /// The operator for feeding: as [`op`](Self::op), and marked as fed.
    pub(crate) fn feeding(&self, py: Python<'_>) -> PyResult<Arc<VideoInput>> {
        let input = self.op(py)?;
        self.fed.store(true, Ordering::Release);
        Ok(input)
    }

    /// Feeds `video`, waiting without the GIL while the queue is full; its id.
    fn feed_waiting(&self, py: Python<'_>, video: Encoded) -> PyResult<u64> {
        let input = self.feeding(py)?;
        let fed = py.detach(|| input.feed(video));
        Ok(fed.py_err(py)?.0)
    }
}

#[pymethods]
impl PyVideoInput {
    #[new]
    #[pyo3(signature = (
        sequence_length, batch_size, *, last_sequence_policy="partial", blocking=true, decoder_threads=None,
        prefetch_batches=1, device="cpu", cpu_fallback=true, nvdec_driver="direct", resize=None, resize_shorter=None,
        resize_mode="exact", interpolation="bilinear", resize_stage="yuv", crop=None, crop_pos=None, out_of_bounds="error",
        fill=(0.0, 0.0, 0.0), seed=None, dtype="uint8", normalize=None, tonemap=None, layout="FHWC", pack=false,
        huge_pages=false, autorotate=true, strict=false, low_latency=false, max_queued=None, max_batch_bytes=None, max_container_samples=None,
        live_buffer_bytes=None, stall_timeout=None, stride=None, step=None, clips=None, clip_sampler="random",
        clip_policy="cut", fps=None, start=None, end=None, indices=None, audio=false, audio_sample_rate=None,
        audio_channels=None, audio_stream=None, storage_options=None, index_cache=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        sequence_length: usize,
        batch_size: usize,
        last_sequence_policy: &'py str,
        blocking: bool,
        decoder_threads: Option<usize>,
        prefetch_batches: usize,
        device: &'py str,
        cpu_fallback: bool,
        nvdec_driver: &'py str,
        resize: Option<(u32, u32)>,
        resize_shorter: Option<u32>,
        resize_mode: &'py str,
        interpolation: &'py str,
        resize_stage: &'py str,
        crop: Option<Bound<'py, PyAny>>,
        crop_pos: Option<Bound<'py, PyAny>>,
        out_of_bounds: &'py str,
        fill: Rgb,
        seed: Option<u64>,
        dtype: &'py str,
        normalize: Option<(Rgb, Rgb)>,
        tonemap: Option<&'py str>,
        layout: &'py str,
        pack: bool,
        huge_pages: bool,
        autorotate: bool,
        strict: bool,
        low_latency: bool,
        max_queued: Option<(usize, usize)>,
        max_batch_bytes: Option<u64>,
        max_container_samples: Option<u64>,
        live_buffer_bytes: Option<usize>,
        stall_timeout: Option<f64>,
        stride: Option<usize>,
        step: Option<usize>,
        clips: Option<usize>,
        clip_sampler: &'py str,
        clip_policy: &'py str,
        fps: Option<f64>,
        start: Option<f64>,
        end: Option<f64>,
        indices: Option<Vec<u64>>,
        audio: bool,
        audio_sample_rate: Option<u32>,
        audio_channels: Option<u32>,
        audio_stream: Option<usize>,
        storage_options: Option<Bound<'py, pyo3::types::PyDict>>,
        index_cache: Option<std::path::PathBuf>,
    ) -> PyResult<Self> {
        let remote = crate::remote::remote_options(storage_options.as_ref(), index_cache)?;
        let center = "center".into_pyobject(py)?.into_any();
        let config = Settings {
            sequence_length,
            batch_size,
            last_sequence_policy,
            blocking,
            decoder_threads,
            prefetch_batches,
            device,
            cpu_fallback,
            nvdec_driver,
            resize,
            resize_shorter,
            resize_mode,
            interpolation,
            resize_stage,
            crop,
            crop_pos: crop_pos.unwrap_or(center),
            out_of_bounds,
            fill,
            seed,
            dtype,
            normalize,
            tonemap,
            layout,
            pack,
            huge_pages,
            autorotate,
            strict,
            low_latency,
            max_queued,
            max_batch_bytes,
            max_container_samples,
            live_buffer_bytes,
            stall_timeout,
            sampling: SamplingArgs {
                stride,
                step,
                clips,
                clip_sampler,
                clip_policy,
                fps,
                start,
                end,
                indices,
            },
            audio: AudioArgs {
                audio,
                sample_rate: audio_sample_rate,
                channels: audio_channels,
                stream: audio_stream,
            },
        }
        .config()?;
        let auto_threads = decoder_threads.is_none();
        let config = crate::fork::process_threads(py, config, auto_threads)?;
        let made = config.clone();
        let inner = py.detach(|| VideoInput::new(made)).py_err(py)?;
        Ok(Self {
            inner: PerProcess::new(inner),
            config,
            auto_threads,
            fed: AtomicBool::new(false),
            remote,
        })
    }

    /// An operator does not pickle: its queue and its decoding are this process's. Raises `TypeError` saying
    /// where to make it instead.
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a VideoInput does not pickle (its queue and its decoding belong to the process that made it): make it \
             in the process that polls it, e.g. in a DataLoader worker's __iter__ (framefeed.torch.VideoDataset does)",
        ))
    }

    /// Queues one whole encoded video and returns its id. `bytes` and other read-only buffers are referenced,
    /// not copied; writable ones (`bytearray`, a writable NumPy array) are copied once. Waits (without the GIL)
    /// while the queue is full. `position` and `epoch`: the video's place in its dataset, which decides its
    /// random clips with the seed (default: its id, epoch 0). `segment=(first, end)`: only the sequences whose
    /// first frame is in that part of the video (one of `framefeed.segments`).
    #[pyo3(signature = (data, label=None, *, position=None, epoch=0, segment=None))]
    fn feed(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        label: Option<&Bound<'_, PyAny>>,
        position: Option<u64>,
        epoch: u64,
        segment: Option<(u64, u64)>,
    ) -> PyResult<u64> {
        let video = placed_bytes(data, label, position, epoch, segment)?;
        self.feed_waiting(py, video)
    }

    /// Queues the video in the file at `path`, read from disk as it is decoded (never whole in memory: a long
    /// video costs no more memory than a short one, and clips read only what they need), and returns its id.
    /// A remote URL (`s3://`, `gs://`, `az://`, `https://`...) is opened here (one `HEAD`) and read by byte
    /// ranges with the operator's `storage_options` (`framefeed.SourceUnavailableError` when it cannot be
    /// reached). `label` defaults to the path. Raises `OSError` when the file cannot be opened; waits (without
    /// the GIL) while the queue is full. `position`, `epoch` and `segment` as for `feed`.
    #[pyo3(signature = (path, label=None, *, position=None, epoch=0, segment=None))]
    fn feed_file(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        label: Option<&Bound<'_, PyAny>>,
        position: Option<u64>,
        epoch: u64,
        segment: Option<(u64, u64)>,
    ) -> PyResult<u64> {
        if let Some(url) = path.to_str().filter(|p| framefeed::is_remote_url(p)) {
            let label =
                self::label(label)?.unwrap_or_else(|| Label::Text(framefeed::redact_url(url)));
            let (url, options) = (url.to_owned(), self.remote.clone());
            let video = py
                .detach(move || Encoded::remote(&url, &options))
                .py_err(py)?;
            return self.feed_waiting(py, placed(video, Some(label), position, epoch, segment)?);
        }
        let label = self::label(label)?.unwrap_or_else(|| Label::Text(path.display().to_string()));
        let file = open_file(py, &path)?;
        self.feed_waiting(py, placed(file, Some(label), position, epoch, segment)?)
    }

    /// Like `feed`, but never waits: `None` when the queue is full now.
    #[pyo3(signature = (data, label=None, *, position=None, epoch=0, segment=None))]
    fn try_feed(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        label: Option<&Bound<'_, PyAny>>,
        position: Option<u64>,
        epoch: u64,
        segment: Option<(u64, u64)>,
    ) -> PyResult<Option<u64>> {
        let video = placed_bytes(data, label, position, epoch, segment)?;
        let fed = self.feeding(py)?.try_feed(video);
        match fed {
            Ok(id) => Ok(Some(id.0)),
            Err(TryFeedError::Full(_)) => Ok(None),
            Err(_) => Err(to_py(py, Error::Closed)),
        }
    }

    /// `feed` as an awaitable (asyncio): waits for room without holding a thread; a cancelled feed feeds
    /// nothing.
    #[pyo3(signature = (data, label=None, *, position=None, epoch=0, segment=None))]
    fn feed_async(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        label: Option<&Bound<'_, PyAny>>,
        position: Option<u64>,
        epoch: u64,
        segment: Option<(u64, u64)>,
    ) -> PyResult<Py<PyAny>> {
        let data = data_bytes(data)?;
        let len = data.len();
        let video = placed(
            Encoded::new(data),
            self::label(label)?,
            position,
            epoch,
            segment,
        )?;
        aio::feed(py, &self.feeding(py)?, video, len)
    }

    /// Queues a video pulled by URL and returns its id: an object in a store or a file over HTTP(S) (`s3://`,
    /// `gs://`, `az://`, `https://...mp4`) read by byte ranges with `storage_options` and `index_cache` (by
    /// default the operator's), a whole video that sampling seeks in; a live source through FFmpeg's protocols
    /// (`rtsp://`, `srt://`, `rtmp://`, an HLS playlist; `file:` only when listed in `schemes`). `open_timeout` and
    /// `read_timeout` in seconds; `reconnect`: the reopen attempts after a drop (0: a drop fails the video),
    /// waiting `reconnect_initial` seconds, doubling up to `reconnect_max`. Raises `ValueError` for a scheme
    /// outside `schemes` or bad settings.
    #[pyo3(signature = (url, label=None, *, schemes=None, open_timeout=10.0, read_timeout=5.0, reconnect=5,
                        reconnect_initial=0.5, reconnect_max=4.0, rtsp_transport="tcp", storage_options=None,
                        index_cache=None))]
    #[allow(clippy::too_many_arguments)]
    fn feed_url(
        &self,
        py: Python<'_>,
        url: String,
        label: Option<&Bound<'_, PyAny>>,
        schemes: Option<Vec<String>>,
        open_timeout: f64,
        read_timeout: f64,
        reconnect: u32,
        reconnect_initial: f64,
        reconnect_max: f64,
        rtsp_transport: &str,
        storage_options: Option<Bound<'_, pyo3::types::PyDict>>,
        index_cache: Option<std::path::PathBuf>,
    ) -> PyResult<u64> {
        let remote = if storage_options.is_some() || index_cache.is_some() {
            crate::remote::remote_options(storage_options.as_ref(), index_cache)?
        } else {
            self.remote.clone()
        };
        let seconds =
            |name: &str, s: f64| framefeed::seconds_setting(name, s).map_err(PyValueError::new_err);
        let mut options = UrlOptions::new()
            .open_timeout(seconds("open_timeout", open_timeout)?)
            .read_timeout(seconds("read_timeout", read_timeout)?)
            .reconnect(match reconnect {
                0 => Reconnect::Never,
                tries => Reconnect::Backoff {
                    max_tries: tries,
                    initial: seconds("reconnect_initial", reconnect_initial)?,
                    max: seconds("reconnect_max", reconnect_max)?,
                },
            })
            .rtsp_transport(choice::<RtspTransport>(rtsp_transport)?)
            .remote(remote);
        if let Some(names) = schemes {
            let mut list = Vec::new();
            for name in names {
                match Scheme::of(&format!("{name}://")) {
                    Some(scheme) if scheme.as_str() == name.to_ascii_lowercase() => list.push(scheme),
                    _ => {
                        return Err(PyValueError::new_err(format!(
                            "scheme {name:?} is not one framefeed pulls from; allowed: rtsp, srt, rtmp, http, https, s3, gs, az, file"
                        )))
                    }
                }
            }
            options = options.schemes(list);
        }
        let label = self::label(label)?;
        let input = self.feeding(py)?;
        let fed = py.detach(|| match label {
            Some(label) => input.feed_url(url, options.label(label)),
            None => input.feed_url(url, options),
        });
        Ok(fed.py_err(py)?.0)
    }

    /// Queues a live video whose bytes arrive over time; returns its producer handle.
    #[pyo3(signature = (label=None))]
    fn feed_live(&self, py: Python<'_>, label: Option<&Bound<'_, PyAny>>) -> PyResult<PyLiveVideo> {
        let label = self::label(label)?;
        let input = self.feeding(py)?;
        let live = py
            .detach(|| match label {
                Some(label) => input.feed_live_with_label(label),
                None => input.feed_live(),
            })
            .py_err(py)?;
        Ok(PyLiveVideo {
            slot: Arc::new(RwLock::new(Some(live))),
        })
    }

    /// No more videos will be fed: once all are delivered, polls return `None`.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.op(py)?.close();
        Ok(())
    }

    /// Whether `close` was called.
    #[getter]
    fn is_closed(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.op(py)?.is_closed())
    }

    /// The next batch; `None` after `close()` and the last batch. `timeout` (seconds): raise `TimeoutError`
    /// after waiting that long. Non-blocking operators (`blocking=False`) raise `NoDataError` when nothing is
    /// fed. A failed video raises `VideoError` after its decoded batches; the next call goes on.
    #[pyo3(signature = (timeout=None))]
    fn next_batch(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<PyBatch>> {
        let input = self.op(py)?;
        let result = match timeout {
            None => py.detach(|| input.next_batch()),
            Some(seconds) => {
                let wait = framefeed::seconds_setting("timeout", seconds.max(0.0))
                    .map_err(pyo3::exceptions::PyValueError::new_err)?;
                py.detach(|| input.next_batch_timeout(wait))
            }
        };
        batch(py, result)
    }

    /// The next batch if one is ready now; raises `NotReadyError` while videos are still decoding and
    /// `NoDataError` when nothing is fed; `None` after close and the last batch.
    fn try_next_batch(&self, py: Python<'_>) -> PyResult<Option<PyBatch>> {
        batch(py, self.op(py)?.try_next_batch())
    }

    /// `next_batch` as an awaitable (asyncio), waiting without holding a thread. Cancelling it loses no
    /// batch.
    fn next_batch_async(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        aio::next_batch(py, &self.op(py)?)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<PyBatch> {
        let input = self.op(py)?;
        match py.detach(|| input.next_batch()) {
            Ok(Some(b)) => Ok(PyBatch { inner: Arc::new(b) }),
            Ok(None) | Err(Error::NoData) => Err(PyStopIteration::new_err(())),
            Err(e) => Err(to_py(py, e)),
        }
    }

    /// Changes a sized resize's output size from the next sequence on.
    fn set_output_size(&self, py: Python<'_>, width: u32, height: u32) -> PyResult<()> {
        self.op(py)?.set_output_size(width, height).py_err(py)
    }

    /// Videos fed whose batches have not all been polled yet.
    #[getter]
    fn queued_videos(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.op(py)?.queued_videos())
    }

    /// `(videos, bytes)` waiting in the feed queue.
    #[getter]
    fn feed_queue_len(&self, py: Python<'_>) -> PyResult<(usize, usize)> {
        Ok(self.op(py)?.feed_queue_len())
    }

    /// Whether the last poll returned a video's last batch (or its error).
    #[getter]
    fn is_depleted(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.op(py)?.is_depleted())
    }

    /// Output buffers allocated so far: it stops growing in the steady state, as buffers are recycled.
    #[getter]
    fn buffer_allocations(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.op(py)?.buffer_allocations())
    }

    /// How many of `buffer_allocations` are on the system's reserved huge pages (`huge_pages=True`).
    #[getter]
    fn huge_page_allocations(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.op(py)?.huge_page_allocations())
    }

    /// `'cpu'`, or `'cuda:N'`: where videos are decoded.
    #[getter]
    fn device(&self) -> String {
        self.inner.current().device().to_string()
    }

    #[getter]
    fn sequence_length(&self) -> usize {
        self.config.get_sequence_length()
    }

    #[getter]
    fn batch_size(&self) -> usize {
        self.config.get_max_batch_size()
    }
}

/// The producer's handle on a live video: `push` chunks as they arrive, then `finish()` (or `abort(why)`).
/// Dropping it unfinished aborts the video.
#[pyclass(module = "framefeed._framefeed", name = "LiveVideo", frozen)]
pub(crate) struct PyLiveVideo {
    slot: LiveSlot,
}

impl PyLiveVideo {
    fn ended(py: Python<'_>) -> PyErr {
        to_py(py, Error::Closed)
    }
}

#[pymethods]
impl PyLiveVideo {
    /// The video's id.
    #[getter]
    fn id(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self
            .slot
            .read()
            .as_ref()
            .ok_or_else(|| Self::ended(py))?
            .id()
            .0)
    }

    /// Bytes pushed so far.
    #[getter]
    fn received(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self
            .slot
            .read()
            .as_ref()
            .ok_or_else(|| Self::ended(py))?
            .received())
    }

    /// Queues the next chunk (referenced, not copied, when read-only), waiting without the GIL while the live
    /// buffer is full. Raises `ClosedError` once the video no longer takes data.
    fn push(&self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<()> {
        let chunk = data_bytes(chunk)?;
        let slot = &self.slot;
        py.detach(|| match slot.read().as_ref() {
            Some(live) => live.push(chunk),
            None => Err(Error::Closed),
        })
        .py_err(py)
    }

    /// Queues the chunk if there is room now; returns whether it did.
    fn try_push(&self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<bool> {
        let chunk = data_bytes(chunk)?;
        match self.slot.read().as_ref().map(|live| live.try_push(chunk)) {
            Some(Ok(())) => Ok(true),
            Some(Err(TryFeedError::Full(_))) => Ok(false),
            _ => Err(Self::ended(py)),
        }
    }

    /// `push` as an awaitable (asyncio); a cancelled push queues nothing.
    fn push_async(&self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        aio::push(py, &self.slot, data_bytes(chunk)?)
    }

    /// Ends the video normally.
    fn finish(&self) {
        if let Some(live) = self.slot.write().take() {
            live.finish();
        }
    }

    /// Ends the video as failed: it raises `VideoError` (kind `'aborted'`) after its decoded batches.
    fn abort(&self, reason: &str) {
        if let Some(live) = self.slot.write().take() {
            live.abort(reason);
        }
    }
}

/// A list of files fed epoch by epoch: shuffled per epoch, sharded over workers (every file in exactly one
/// shard).
#[pyclass(module = "framefeed._framefeed", name = "FileList", frozen)]
pub(crate) struct PyFileList {
    inner: FileList,
}

#[pymethods]
impl PyFileList {
    #[new]
    fn new(paths: Vec<std::path::PathBuf>) -> Self {
        Self {
            inner: FileList::new(paths),
        }
    }

    /// A copy that shuffles every epoch with a permutation drawn from `seed` and the epoch.
    fn shuffle(&self, seed: u64) -> Self {
        Self {
            inner: self.inner.clone().shuffle(seed),
        }
    }

    /// A copy keeping only shard `rank` of `world` (`0 <= rank < world`).
    fn shard(&self, py: Python<'_>, rank: usize, world: usize) -> PyResult<Self> {
        Ok(Self {
            inner: self.inner.clone().shard(rank, world).py_err(py)?,
        })
    }

    /// This shard's files for `epoch`, in feeding order.
    fn epoch(&self, epoch: u64) -> Vec<std::path::PathBuf> {
        self.inner.epoch(epoch)
    }

    /// Reads and feeds this shard's files for `epoch` into `input` (each labelled with its path), waiting
    /// without the GIL while the queue is full; returns `{"fed": n, "unreadable": [(path, why), ...]}`.
    /// Does not close the input.
    fn feed_epoch<'py>(
        &self,
        py: Python<'py>,
        input: &PyVideoInput,
        epoch: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (files, operator) = (&self.inner, input.feeding(py)?);
        let report = py
            .detach(|| files.feed_epoch(&operator, epoch))
            .py_err(py)?;
        let out = PyDict::new(py);
        out.set_item("fed", report.fed)?;
        let unreadable: Vec<(std::path::PathBuf, String)> = report
            .unreadable
            .into_iter()
            .map(|(p, e)| (p, e.to_string()))
            .collect();
        out.set_item("unreadable", unreadable)?;
        Ok(out)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// The video file at `path`, opened (the GIL let go: a network filesystem may take its time), read from disk
/// where the demuxer looks; `OSError` (with its errno) when it cannot be opened.
pub(crate) fn open_file(py: Python<'_>, path: &std::path::Path) -> PyResult<Encoded> {
    py.detach(|| Encoded::file(path)).map_err(|e| {
        pyo3::exceptions::PyOSError::new_err((
            e.raw_os_error().unwrap_or(0),
            format!("cannot open {}: {e}", path.display()),
        ))
    })
}
