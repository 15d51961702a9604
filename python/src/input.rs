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

/// The native operator under `framefeed.VideoInput`, whose docstring documents every keyword: feed encoded videos,
/// poll batches of `batch_size` sequences of `sequence_length` frames.
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
                    framefeed::ErrorCode::Forked.as_str(),
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

    /// Queues one whole encoded video, waiting (without the GIL) while the feed queue is full.
    ///
    /// Args:
    ///     data (bytes | bytearray | memoryview | numpy.ndarray): The encoded video (any container and codec
    ///         FFmpeg reads), as any buffer. ``bytes`` and other read-only buffers are referenced, not copied
    ///         (kept alive until decoded); writable ones (``bytearray``, a writable NumPy array) are copied once.
    ///     label (str | int | None): The video's label, carried by its batches and errors. Default ``None``.
    ///     position (int | None): The video's place in its dataset, which decides its random clips and crops with
    ///         the seed and ``epoch``. Default ``None``: its id.
    ///     epoch (int): The epoch, with ``position``: new random clips each epoch. Default 0; another value needs
    ///         ``position``.
    ///     segment (tuple[int, int] | None): ``(first, end)``: only the sequences whose first frame's display
    ///         index is in ``first..end`` (one of :func:`segments`). Default ``None``: the whole video. Allowed:
    ///         ``end > first`` (else the video fails with :class:`VideoError`, code ``bad_sampling``).
    ///
    /// Returns:
    ///     The video's id (0, 1, 2... in feeding order).
    ///
    /// Raises:
    ///     ValueError: ``epoch`` without ``position``.
    ///     TypeError: A label that is not a ``str`` or a non-negative ``int``.
    ///     ClosedError: The operator was closed.
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

    /// Queues the video in a file, read from disk as it is decoded (never whole in memory: a long video costs no
    /// more memory than a short one, and clips read only what they need), waiting (without the GIL) while the feed
    /// queue is full.
    ///
    /// Args:
    ///     path (str | os.PathLike): The file; or a remote video's URL (``s3://``, ``gs://``, ``az://``,
    ///         ``https://``...), opened here (one ``HEAD``) and read by byte ranges with the operator's
    ///         ``storage_options`` and ``index_cache``.
    ///     label (str | int | None): The video's label. Default ``None``: the path (a URL without its
    ///         credentials).
    ///     position (int | None): As for :meth:`feed`. Default ``None``.
    ///     epoch (int): As for :meth:`feed`. Default 0.
    ///     segment (tuple[int, int] | None): As for :meth:`feed`. Default ``None``.
    ///
    /// Returns:
    ///     The video's id.
    ///
    /// Raises:
    ///     OSError: The file cannot be opened (with its errno).
    ///     VideoError: A remote video that cannot be reached (code ``source_unavailable``).
    ///     ValueError: ``epoch`` without ``position``.
    ///     ClosedError: The operator was closed.
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

    /// Like :meth:`feed`, but never waits.
    ///
    /// Args:
    ///     data (bytes | bytearray | memoryview | numpy.ndarray): The encoded video (any container and codec
    ///         FFmpeg reads), as any buffer. ``bytes`` and other read-only buffers are referenced, not copied
    ///         (kept alive until decoded); writable ones (``bytearray``, a writable NumPy array) are copied once.
    ///     label (str | int | None): The video's label, carried by its batches and errors. Default ``None``.
    ///     position (int | None): The video's place in its dataset, which decides its random clips and crops with
    ///         the seed and ``epoch``. Default ``None``: its id.
    ///     epoch (int): The epoch, with ``position``: new random clips each epoch. Default 0; another value needs
    ///         ``position``.
    ///     segment (tuple[int, int] | None): ``(first, end)``: only the sequences whose first frame's display
    ///         index is in ``first..end`` (one of :func:`segments`). Default ``None``: the whole video. Allowed:
    ///         ``end > first`` (else the video fails with :class:`VideoError`, code ``bad_sampling``).
    ///
    /// Returns:
    ///     The video's id, or ``None`` when the feed queue is full now (nothing was queued).
    ///
    /// Raises:
    ///     ValueError: ``epoch`` without ``position``.
    ///     ClosedError: The operator was closed.
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

    /// :meth:`feed` as an awaitable (asyncio): waits for room in the feed queue without holding a thread; a
    /// cancelled feed feeds nothing.
    ///
    /// Args:
    ///     data (bytes | bytearray | memoryview | numpy.ndarray): The encoded video (any container and codec
    ///         FFmpeg reads), as any buffer. ``bytes`` and other read-only buffers are referenced, not copied
    ///         (kept alive until decoded); writable ones (``bytearray``, a writable NumPy array) are copied once.
    ///     label (str | int | None): The video's label, carried by its batches and errors. Default ``None``.
    ///     position (int | None): The video's place in its dataset, which decides its random clips and crops with
    ///         the seed and ``epoch``. Default ``None``: its id.
    ///     epoch (int): The epoch, with ``position``: new random clips each epoch. Default 0; another value needs
    ///         ``position``.
    ///     segment (tuple[int, int] | None): ``(first, end)``: only the sequences whose first frame's display
    ///         index is in ``first..end`` (one of :func:`segments`). Default ``None``: the whole video. Allowed:
    ///         ``end > first`` (else the video fails with :class:`VideoError`, code ``bad_sampling``).
    ///
    /// Returns:
    ///     An awaitable of the video's id.
    ///
    /// Raises:
    ///     ValueError: ``epoch`` without ``position``.
    ///     ClosedError: The operator was closed (raised by the awaitable).
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

    /// Queues a video pulled by URL.
    ///
    /// An object in a store or a file over HTTP(S) (``s3://``, ``gs://``, ``az://``, ``https://...mp4``) is read
    /// by byte ranges, a whole video that sampling seeks in; a live source (``rtsp://``, ``srt://``, ``rtmp://``,
    /// an HLS playlist) is read through FFmpeg's protocols, and a drop is reopened and reported on the next batch
    /// (``Batch.gap``).
    ///
    /// Args:
    ///     url (str): The video's URL.
    ///     label (str | int | None): The video's label. Default ``None``.
    ///     schemes (list[str] | None): The schemes allowed, from ``rtsp``, ``srt``, ``rtmp``, ``http``, ``https``,
    ///         ``s3``, ``gs``, ``az`` and ``file``. Default ``None``: all but ``file``.
    ///     open_timeout (float): Seconds opening the source may take. Default 10.0. Allowed: 0.1 to 3600.
    ///     read_timeout (float): Seconds a read may wait for data before the source counts as dropped. Default
    ///         5.0. Allowed: 0.1 to 3600.
    ///     reconnect (int): Reopen attempts after a drop; 0: a drop fails the video. Default 5. Allowed: 0 to
    ///         1000.
    ///     reconnect_initial (float): Seconds before the first reopen attempt, doubling at each one. Default 0.5.
    ///         Allowed: at most ``reconnect_max``.
    ///     reconnect_max (float): The longest wait between attempts, in seconds. Default 4.0. Allowed: at most
    ///         3600.
    ///     rtsp_transport (str): ``"tcp"`` (default) or ``"udp"``, for ``rtsp://``.
    ///     storage_options (dict[str, Any] | None): A remote object's credentials and settings, as
    ///         ``VideoInput(storage_options=...)`` takes them. Default ``None``: the operator's.
    ///     index_cache (str | os.PathLike | None): A directory of remote videos' indexes. Default ``None``: the
    ///         operator's.
    ///     ranged (bool): ``True`` (default): an object's URL (``is_remote_url``) is read by byte ranges.
    ///         ``False``: every URL is pulled through FFmpeg's protocols, as a live stream (an MPEG-TS sender over
    ///         HTTP that takes one connection, as ``ffmpeg -listen 1``'s does: reading it by ranges would spend
    ///         that connection on probing it). ``Mux.add_url`` pulls its cameras so.
    ///
    /// Returns:
    ///     The video's id.
    ///
    /// Raises:
    ///     ValueError: A scheme outside ``schemes``, or a setting out of its allowed range.
    ///     VideoError: A remote object that cannot be reached (code ``source_unavailable``).
    ///     ClosedError: The operator was closed.
    #[pyo3(signature = (url, label=None, *, schemes=None, open_timeout=10.0, read_timeout=5.0, reconnect=5,
                        reconnect_initial=0.5, reconnect_max=4.0, rtsp_transport="tcp", storage_options=None,
                        index_cache=None, ranged=true))]
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
        ranged: bool,
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
            .remote(remote)
            .ranged(ranged);
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

    /// Queues a live video whose bytes arrive over time: its batches come out while it is still arriving.
    ///
    /// Args:
    ///     label (str | int | None): The video's label. Default ``None``.
    ///
    /// Returns:
    ///     The :class:`LiveVideo` to push its chunks to, then ``finish()`` (or ``abort(why)``).
    ///
    /// Raises:
    ///     ClosedError: The operator was closed.
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

    /// No more videos will be fed: once every video fed is delivered, polls return ``None`` (and iteration ends).
    /// Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.op(py)?.close();
        Ok(())
    }

    /// Whether `close` was called.
    #[getter]
    fn is_closed(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.op(py)?.is_closed())
    }

    /// The next batch, waiting (without the GIL) until one is ready.
    ///
    /// Args:
    ///     timeout (float | None): The most seconds to wait. Default ``None``: no limit.
    ///
    /// Returns:
    ///     The next :class:`Batch`, or ``None`` after :meth:`close` and the last batch.
    ///
    /// Raises:
    ///     TimeoutError: ``timeout`` passed (``framefeed.FramefeedTimeoutError``, also the builtin one).
    ///     NoDataError: Nothing is fed, with ``blocking=False``.
    ///     VideoError: A video failed, after its decoded batches; the next call goes on with the next video.
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

    /// The next batch if one is ready now; never waits.
    ///
    /// Returns:
    ///     The next :class:`Batch`, or ``None`` after :meth:`close` and the last batch.
    ///
    /// Raises:
    ///     NotReadyError: Videos are still decoding.
    ///     NoDataError: Nothing is fed.
    ///     VideoError: A video failed, after its decoded batches.
    fn try_next_batch(&self, py: Python<'_>) -> PyResult<Option<PyBatch>> {
        batch(py, self.op(py)?.try_next_batch())
    }

    /// :meth:`next_batch` as an awaitable (asyncio), waiting without holding a thread (one thread serves every
    /// waiting task). Cancelling it loses no batch.
    ///
    /// Returns:
    ///     An awaitable of the next :class:`Batch`, or of ``None`` after :meth:`close` and the last batch.
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
    ///
    /// Args:
    ///     width (int): The new width in pixels. Allowed: 1 to 16384.
    ///     height (int): The new height in pixels. Allowed: 1 to 16384.
    ///
    /// Raises:
    ///     ValueError: The operator has no sized resize, or a size out of range.
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

    /// Frames in a full sequence.
    #[getter]
    fn sequence_length(&self) -> usize {
        self.config.get_sequence_length()
    }

    /// The most sequences in a batch.
    #[getter]
    fn batch_size(&self) -> usize {
        self.config.get_max_batch_size()
    }
}

/// The producer's handle on a live video (:meth:`VideoInput.feed_live`): ``push`` chunks as they arrive, then
/// ``finish()`` (or ``abort(why)``). Dropping it unfinished aborts the video.
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

    /// Queues the next chunk, waiting (without the GIL) while the live buffer is full (``live_buffer_bytes``).
    ///
    /// Args:
    ///     chunk (bytes | bytearray | memoryview | numpy.ndarray): The next bytes of the video, as any buffer
    ///         (referenced, not copied, when read-only).
    ///
    /// Raises:
    ///     ClosedError: The video no longer takes data (finished, aborted or failed).
    fn push(&self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<()> {
        let chunk = data_bytes(chunk)?;
        let slot = &self.slot;
        py.detach(|| match slot.read().as_ref() {
            Some(live) => live.push(chunk),
            None => Err(Error::Closed),
        })
        .py_err(py)
    }

    /// Queues the next chunk if there is room now; never waits.
    ///
    /// Args:
    ///     chunk (bytes | bytearray | memoryview | numpy.ndarray): The next bytes of the video.
    ///
    /// Returns:
    ///     Whether it was queued (``False``: the live buffer is full).
    ///
    /// Raises:
    ///     ClosedError: The video no longer takes data.
    fn try_push(&self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<bool> {
        let chunk = data_bytes(chunk)?;
        match self.slot.read().as_ref().map(|live| live.try_push(chunk)) {
            Some(Ok(())) => Ok(true),
            Some(Err(TryFeedError::Full(_))) => Ok(false),
            _ => Err(Self::ended(py)),
        }
    }

    /// :meth:`push` as an awaitable (asyncio); a cancelled push queues nothing.
    ///
    /// Args:
    ///     chunk (bytes | bytearray | memoryview | numpy.ndarray): The next bytes of the video.
    ///
    /// Returns:
    ///     An awaitable of ``None``, done once the chunk is queued.
    fn push_async(&self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        aio::push(py, &self.slot, data_bytes(chunk)?)
    }

    /// Ends the video normally: its last sequences come out.
    fn finish(&self) {
        if let Some(live) = self.slot.write().take() {
            live.finish();
        }
    }

    /// Ends the video as failed: it raises :class:`VideoError` (code ``aborted``) after its decoded batches.
    ///
    /// Args:
    ///     reason (str): Why, carried by the error.
    fn abort(&self, reason: &str) {
        if let Some(live) = self.slot.write().take() {
            live.abort(reason);
        }
    }
}

/// A list of files fed epoch by epoch: shuffled per epoch, sharded over workers (every file in exactly one shard).
///
/// Args:
///     paths (list[str | os.PathLike]): The files, in their order.
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

    /// A copy that shuffles every epoch with a permutation drawn from ``seed`` and the epoch.
    ///
    /// Args:
    ///     seed (int): The seed; the same seed gives the same order for the same epoch.
    ///
    /// Returns:
    ///     The shuffling :class:`FileList`.
    fn shuffle(&self, seed: u64) -> Self {
        Self {
            inner: self.inner.clone().shuffle(seed),
        }
    }

    /// A copy keeping only one shard of the files.
    ///
    /// Args:
    ///     rank (int): This shard. Allowed: ``0 <= rank < world``.
    ///     world (int): The number of shards. Allowed: at least 1.
    ///
    /// Returns:
    ///     The :class:`FileList` of shard ``rank``.
    ///
    /// Raises:
    ///     ValueError: ``rank`` or ``world`` out of range.
    fn shard(&self, py: Python<'_>, rank: usize, world: usize) -> PyResult<Self> {
        Ok(Self {
            inner: self.inner.clone().shard(rank, world).py_err(py)?,
        })
    }

    /// This shard's files for an epoch, in feeding order.
    ///
    /// Args:
    ///     epoch (int): The epoch.
    ///
    /// Returns:
    ///     The paths.
    fn epoch(&self, epoch: u64) -> Vec<std::path::PathBuf> {
        self.inner.epoch(epoch)
    }

    /// Reads and feeds this shard's files for an epoch into an operator (each labelled with its path), waiting
    /// without the GIL while its queue is full. Does not close it; run it in a thread beside the consumer.
    ///
    /// Args:
    ///     input (VideoInput): The operator to feed.
    ///     epoch (int): The epoch.
    ///
    /// Returns:
    ///     ``{"fed": n, "unreadable": [(path, why), ...]}`` (``framefeed.types.EpochFeed``).
    ///
    /// Raises:
    ///     ClosedError: The operator was closed.
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
