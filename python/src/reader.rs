//! `VideoReader`: random access to one whole video (framefeed's `VideoReader`), with TorchCodec's vocabulary;
//! each read gives `Frames`, one buffer exported without copying (NumPy, DLPack). The GIL is released while a
//! video is opened and while a read decodes.

use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PySlice, PyString};

use crate::batch::{self, Shared};
use crate::config::{AudioArgs, Rgb, SamplingArgs, Settings};
use crate::errors::IntoPyResult;
use crate::fork::PerProcess;

/// The native reader under `framefeed.VideoReader`, whose docstring documents every keyword: a whole video opened
/// for random access, frames by index, by range and by time, decoded only where asked.
#[pyclass(
    module = "framefeed._framefeed",
    name = "VideoReader",
    frozen,
    subclass
)]
pub(crate) struct PyVideoReader {
    /// The open reader, re-made in a process forked after it was opened (`fork`); `None` once closed.
    inner: PerProcess<Option<Arc<framefeed::VideoReader>>>,
    /// What it was opened from, to open it again (in a forked process, or where it is unpickled): the path or
    /// URL as given, the buffer, the file object, or the bytes a file object that cannot seek gave.
    source: Py<PyAny>,
    /// Its settings.
    config: framefeed::Config,
    /// Whether `threads` was left to the default, which depends on the process (`framefeed._threads`).
    auto_threads: bool,
    /// How a remote source is read (`storage_options`, `index_cache`).
    remote: framefeed::RemoteOptions,
}

/// What a reader knows of its video, read when it opened it.
#[pyclass(
    module = "framefeed._framefeed",
    name = "VideoMetadata",
    frozen,
    get_all
)]
pub(crate) struct PyVideoMetadata {
    /// The container's index of the video stream read (the one the `ffmpeg` CLI picks).
    stream_index: usize,
    /// Frames a full decode gives.
    num_frames: u64,
    /// Average frame rate.
    average_fps: f64,
    /// From the first frame's time to the end of the last one's, in seconds.
    duration_seconds: f64,
    /// The first frame's time, in stream seconds.
    begin_stream_seconds: f64,
    /// When the last frame's display ends, in stream seconds.
    end_stream_seconds: f64,
    /// Width as shown (turned), before transforms.
    width: u32,
    /// Height as shown.
    height: u32,
    /// FFmpeg's codec name.
    codec: String,
    /// Degrees counter-clockwise from the display matrix (`None` without one).
    rotation: Option<f64>,
    /// How frames are turned to be shown.
    orientation: &'static str,
    /// Display indices of the keyframes.
    key_frame_indices: Vec<u64>,
    /// The stream's colour (`types.ColorInfo`): bit depth, primaries, transfer, matrix, range, dynamic range
    /// (`"sdr"`, `"pq"`, `"hlg"`) and HDR static metadata.
    color: Py<PyDict>,
    /// The holes the reader's reads met so far, as `(display index, seconds)`: indices whose pictures do not
    /// decode (a read asking for one raises `VideoError`).
    holes: Vec<(u64, f64)>,
    /// The audio stream `get_samples_played_in_range` reads (`types.AudioStreamInfo`: `stream_index`, `codec`,
    /// `sample_rate`, `num_channels`, `duration_seconds`), or `None` without audio.
    audio: Option<Py<PyDict>>,
}

/// The fields of a `VideoMetadata`, by name (what it pickles as), in the order they are declared.
const METADATA_FIELDS: [&str; 15] = [
    "stream_index",
    "num_frames",
    "average_fps",
    "duration_seconds",
    "begin_stream_seconds",
    "end_stream_seconds",
    "width",
    "height",
    "codec",
    "rotation",
    "orientation",
    "key_frame_indices",
    "color",
    "holes",
    "audio",
];

/// A `VideoMetadata` from the dict it pickled as (`VideoMetadata.__reduce__`).
#[pyfunction]
pub(crate) fn _video_metadata(fields: &Bound<'_, PyDict>) -> PyResult<PyVideoMetadata> {
    let get = |name: &str| -> PyResult<Bound<'_, PyAny>> {
        fields.get_item(name)?.ok_or_else(|| {
            PyValueError::new_err(format!("a pickled VideoMetadata without '{name}'"))
        })
    };
    let orientation: String = get("orientation")?.extract()?;
    Ok(PyVideoMetadata {
        stream_index: get("stream_index")?.extract()?,
        num_frames: get("num_frames")?.extract()?,
        average_fps: get("average_fps")?.extract()?,
        duration_seconds: get("duration_seconds")?.extract()?,
        begin_stream_seconds: get("begin_stream_seconds")?.extract()?,
        end_stream_seconds: get("end_stream_seconds")?.extract()?,
        width: get("width")?.extract()?,
        height: get("height")?.extract()?,
        codec: get("codec")?.extract()?,
        rotation: get("rotation")?.extract()?,
        orientation: framefeed::Orientation::ALL
            .iter()
            .map(|o| o.as_str())
            .find(|name| *name == orientation)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "orientation '{orientation}' is not one framefeed names"
                ))
            })?,
        key_frame_indices: get("key_frame_indices")?.extract()?,
        color: get("color")?.cast_into::<PyDict>()?.unbind(),
        holes: get("holes")?.extract()?,
        audio: get("audio")?.extract()?,
    })
}

#[pymethods]
impl PyVideoMetadata {
    /// Pickles as its fields (`framefeed._framefeed._video_metadata` makes it again).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyDict>,))> {
        let py = slf.py();
        let fields = PyDict::new(py);
        for name in METADATA_FIELDS {
            fields.set_item(name, slf.getattr(name)?)?;
        }
        let make = py
            .import("framefeed._framefeed")?
            .getattr("_video_metadata")?;
        Ok((make, (fields,)))
    }

    fn __repr__(&self) -> String {
        format!(
            "VideoMetadata(num_frames={}, average_fps={}, duration_seconds={}, width={}, height={}, codec='{}', \
             rotation={:?})",
            self.num_frames,
            self.average_fps,
            self.duration_seconds,
            self.width,
            self.height,
            self.codec,
            self.rotation
        )
    }
}

/// The frames one read gave: `data` is one array of them (N, H, W, 3) or (N, 3, H, W) per the reader's
/// `dimension_order`, in the order asked for; `indices`, `pts_seconds`, `duration_seconds` and `damaged` describe
/// each.
/// `np.from_dlpack(frames)` / `torch.from_dlpack(frames)` view it without copying.
#[pyclass(module = "framefeed._framefeed", name = "Frames", frozen)]
pub(crate) struct PyFrames {
    pixels: Pixels,
    shape: [usize; 4],
    indices: Vec<u64>,
    pts: Vec<f64>,
    durations: Vec<f64>,
    damaged: Vec<bool>,
}

/// Where a `Frames`' pixels are: the read's buffer, or, for frames that were unpickled, a NumPy array of them.
enum Pixels {
    Read(Shared),
    Unpickled(Py<PyAny>),
}

impl Pixels {
    fn is_on_gpu(&self) -> bool {
        matches!(self, Pixels::Read(batch) if batch.is_on_gpu())
    }
}

/// A `Frames` from what it pickled as (`Frames.__reduce__`): its array (a copy of the frames) and its
/// per-frame lists.
#[pyfunction]
pub(crate) fn _frames(
    data: &Bound<'_, PyAny>,
    indices: Vec<u64>,
    pts: Vec<f64>,
    durations: Vec<f64>,
    damaged: Vec<bool>,
) -> PyResult<PyFrames> {
    let shape: Vec<usize> = data.getattr("shape")?.extract()?;
    let shape: [usize; 4] = shape
        .try_into()
        .map_err(|_| PyValueError::new_err("a pickled Frames' array has four dimensions"))?;
    if [pts.len(), durations.len(), damaged.len(), shape[0]] != [indices.len(); 4] {
        return Err(PyValueError::new_err(
            "a pickled Frames' lists and array differ in length",
        ));
    }
    Ok(PyFrames {
        pixels: Pixels::Unpickled(data.clone().unbind()),
        shape,
        indices,
        pts,
        durations,
        damaged,
    })
}

impl PyFrames {
    fn new(frames: framefeed::Frames) -> Self {
        let shape = frames.shape();
        let indices = frames.indices().to_vec();
        let pts = frames.pts_seconds().to_vec();
        let durations = frames.duration_seconds().to_vec();
        let damaged = frames.damaged().to_vec();
        Self {
            pixels: Pixels::Read(Arc::new(frames.into_batch())),
            shape,
            indices,
            pts,
            durations,
            damaged,
        }
    }
}

#[pymethods]
impl PyFrames {
    /// The frames as one array: a NumPy view of the read's buffer (no copy); for frames in GPU memory, export
    /// with DLPack (`torch.from_dlpack(frames)`).
    #[getter]
    fn data<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        if slf.get().pixels.is_on_gpu() {
            return Err(PyValueError::new_err(
                "these frames are in GPU memory: export them with DLPack (torch.from_dlpack(frames), cupy)",
            ));
        }
        if let Pixels::Unpickled(array) = &slf.get().pixels {
            return Ok(array.bind(slf.py()).clone());
        }
        slf.py()
            .import("numpy")?
            .call_method1("from_dlpack", (slf.as_any(),))
    }

    /// The same as `data` (NumPy), for symmetry with `Batch` and `Sequence`.
    ///
    /// Returns:
    ///     The frames' array, (N, H, W, 3) or (N, 3, H, W).
    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::data(slf)
    }

    /// The display index of each frame, in the order asked for.
    #[getter]
    fn indices(&self) -> Vec<u64> {
        self.indices.clone()
    }

    /// Each frame's presentation time, in stream seconds.
    #[getter]
    fn pts_seconds(&self) -> Vec<f64> {
        self.pts.clone()
    }

    /// Each frame's duration, in seconds.
    #[getter]
    fn duration_seconds(&self) -> Vec<f64> {
        self.durations.clone()
    }

    /// Whether each frame is damaged (concealed, or decoded from damaged data), in the order asked for.
    #[getter]
    fn damaged(&self) -> Vec<bool> {
        self.damaged.clone()
    }

    /// The array's shape.
    #[getter]
    fn shape(&self) -> (usize, usize, usize, usize) {
        let [a, b, c, d] = self.shape;
        (a, b, c, d)
    }

    /// `"cpu"` or `"cuda:N"`: where the frames are.
    #[getter]
    fn device(&self) -> String {
        match &self.pixels {
            Pixels::Read(batch) if batch.is_on_gpu() => {
                format!("cuda:{}", crate::cuda::gpu_ordinal(batch))
            }
            _ => "cpu".into(),
        }
    }

    /// Pickles as a copy of its array and its lists (`framefeed._framefeed._frames` makes it again, its `data`
    /// that array); frames in GPU memory do not pickle.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = slf.py();
        if slf.get().pixels.is_on_gpu() {
            return Err(PyTypeError::new_err(
                "frames in GPU memory do not pickle: copy them to the host first (torch.from_dlpack(frames).cpu())",
            ));
        }
        let this = slf.get();
        let data = Self::data(slf)?.call_method0("copy")?;
        let args = (
            data,
            this.indices.clone(),
            this.pts.clone(),
            this.durations.clone(),
            this.damaged.clone(),
        )
            .into_pyobject(py)?
            .into_any();
        let make = py.import("framefeed._framefeed")?.getattr("_frames")?;
        Ok((make, args))
    }

    fn __len__(&self) -> usize {
        self.indices.len()
    }

    /// The DLPack protocol, for the frames' array.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let batch = match &self.pixels {
            Pixels::Read(batch) => batch,
            Pixels::Unpickled(array) => {
                let kwargs = pyo3::types::PyDict::new(py);
                if let Some(stream) = stream {
                    kwargs.set_item("stream", stream)?;
                }
                return Ok(array
                    .bind(py)
                    .call_method("__dlpack__", (), Some(&kwargs))?
                    .unbind());
            }
        };
        let shape = self.shape.iter().map(|&n| n as i64).collect();
        batch::export_region(py, batch, (0, shape), stream, max_version, dl_device, copy)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        match &self.pixels {
            Pixels::Read(batch) => batch::device_pair(batch),
            Pixels::Unpickled(_) => (1, 0), // kDLCPU
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<framefeed.Frames {} frames shape {:?} on {}>",
            self.indices.len(),
            self.shape,
            self.device()
        )
    }
}

/// A Python slice over `len` frames, as display indices.
fn slice_indices(slice: &Bound<'_, PySlice>, len: u64) -> PyResult<Vec<u64>> {
    let s = slice.indices(len as isize)?;
    let mut out = Vec::with_capacity(s.slicelength);
    let mut i = s.start;
    for _ in 0..s.slicelength {
        out.push(i as u64);
        i += s.step;
    }
    Ok(out)
}

impl PyVideoReader {
    /// The reader for this process: the one opened here, or in a process forked after it was opened, the same
    /// source opened again (the parent's decoder threads are not in this process); `ClosedError` once closed.
    fn reader(&self, py: Python<'_>) -> PyResult<Arc<framefeed::VideoReader>> {
        let reader = self.inner.get(|| {
            let config = crate::fork::process_threads(py, self.config.clone(), self.auto_threads)?;
            Ok(Some(Arc::new(
                open_source(py, self.source.bind(py), &config, &self.remote)?.0,
            )))
        })?;
        match &*reader {
            Some(reader) => Ok(reader.clone()),
            None => Err(crate::errors::closed_error(
                py,
                "the reader is closed (close() or the end of its `with` block): open a new one to read",
            )),
        }
    }

    /// The index `i` (negative from the end) as a display index, or `IndexError`.
    fn index(&self, py: Python<'_>, i: i64) -> PyResult<u64> {
        let n = self.reader(py)?.len() as i64;
        let d = if i < 0 { i + n } else { i };
        if (0..n).contains(&d) {
            Ok(d as u64)
        } else {
            Err(PyIndexError::new_err(format!(
                "frame index {i} is out of range for a video of {n} frames"
            )))
        }
    }

    fn read(
        &self,
        py: Python<'_>,
        read: impl FnOnce(&framefeed::VideoReader) -> framefeed::Result<framefeed::Frames> + Send,
    ) -> PyResult<PyFrames> {
        let inner = self.reader(py)?;
        let frames = py.detach(move || read(&inner)).py_err(py)?;
        Ok(PyFrames::new(frames))
    }
}

/// Opens `source` ([`open_any`]); where opening read a remote video (or a file object) through to index it
/// (a container without an index read by ranges, in the exact seek mode), a `RuntimeWarning` says so, as the
/// Rust library's log does. (The count is the process's: a reader opened on another thread at the same time
/// may be the one read through.)
fn open_source(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    config: &framefeed::Config,
    remote: &framefeed::RemoteOptions,
) -> PyResult<(framefeed::VideoReader, Py<PyAny>)> {
    let scans = framefeed::remote_index_scans();
    let opened = open_any(py, source, config, remote)?;
    if framefeed::remote_index_scans() > scans {
        let named = match source.extract::<String>() {
            Ok(url) => framefeed::redact_url(&url),
            Err(_) => "a file object".to_owned(),
        };
        let warning = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        let message = format!(
            "framefeed: {} has no container index framefeed reads by ranges: it was read through once to \
             index it (index_cache= keeps that index for its next opening; for Matroska and WebM, \
             seek_mode=\"approximate\" numbers frames by time from the Cues instead)",
            named
        );
        PyErr::warn(py, &warning, &std::ffi::CString::new(message)?, 1)?;
    }
    Ok(opened)
}

/// What `source` is: a URL (a string with a scheme other than `file`), a path, a buffer or a file object.
fn open_any(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    config: &framefeed::Config,
    remote: &framefeed::RemoteOptions,
) -> PyResult<(framefeed::VideoReader, Py<PyAny>)> {
    if source.is_instance_of::<PyString>() {
        let text: String = source.extract()?;
        let text = text.as_str();
        let scheme = framefeed::Scheme::of(text);
        if text.contains("://") && scheme != Some(framefeed::Scheme::File) {
            let url = text.to_owned();
            let config = config.clone();
            let options = framefeed::UrlOptions::new().remote(remote.clone());
            let reader = py
                .detach(move || framefeed::VideoReader::open_url(url, options, &config))
                .py_err(py)?;
            return Ok((reader, source.clone().unbind()));
        }
    }
    let (video, kept) = if source.hasattr("read")? && !source.hasattr("__buffer__")? {
        // A binary file object: read at the offsets the reader needs (its file on disk, or `seek`/`read`); one
        // that cannot seek is read through once, and its bytes are what the reader keeps.
        match crate::fileobj::lazy(py, source, remote.get_seek_mode())? {
            Some(video) => (video, source.clone().unbind()),
            None => {
                let data = source.call_method0("read")?;
                if !data.is_instance_of::<pyo3::types::PyBytes>() {
                    return Err(PyTypeError::new_err(
                        "the file object must be opened in binary mode (read() gave no bytes)",
                    ));
                }
                (
                    framefeed::Encoded::new(crate::input::data_bytes(&data)?),
                    data.unbind(),
                )
            }
        }
    } else {
        (crate::whole_video(py, source)?.0, source.clone().unbind())
    };
    let config = config.clone();
    let reader = py
        .detach(move || framefeed::VideoReader::open(video, &config))
        .py_err(py)?;
    Ok((reader, kept))
}

#[pymethods]
impl PyVideoReader {
    #[new]
    #[pyo3(signature = (
        source, *, dimension_order="NHWC", threads=None, device="cpu", cpu_fallback=true, nvdec_driver="direct",
        resize=None, resize_shorter=None, resize_mode="exact", interpolation="bilinear", resize_stage="yuv", crop=None, crop_pos=None,
        out_of_bounds="error", fill=(0.0, 0.0, 0.0), seed=None, dtype="uint8", normalize=None, tonemap=None, autorotate=true,
        strict=false, audio_sample_rate=None, audio_channels=None, audio_stream=None, storage_options=None,
        index_cache=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        dimension_order: &'py str,
        threads: Option<usize>,
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
        autorotate: bool,
        strict: bool,
        audio_sample_rate: Option<u32>,
        audio_channels: Option<u32>,
        audio_stream: Option<usize>,
        storage_options: Option<Bound<'py, pyo3::types::PyDict>>,
        index_cache: Option<std::path::PathBuf>,
    ) -> PyResult<Self> {
        let remote = crate::remote::remote_options(storage_options.as_ref(), index_cache)?;
        let layout = match dimension_order.to_ascii_uppercase().as_str() {
            "NHWC" => "FHWC",
            "NCHW" => "FCHW",
            _ => {
                return Err(PyValueError::new_err(format!(
                    "dimension_order is '{dimension_order}'; allowed: 'NHWC', 'NCHW'"
                )))
            }
        };
        let center = "center".into_pyobject(py)?.into_any();
        let config = Settings {
            sequence_length: 1,
            batch_size: 1,
            last_sequence_policy: "partial",
            blocking: true,
            decoder_threads: threads,
            prefetch_batches: 1,
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
            pack: false,
            huge_pages: false,
            autorotate,
            strict,
            low_latency: false,
            max_queued: None,
            max_batch_bytes: None,
            max_container_samples: None,
            live_buffer_bytes: None,
            stall_timeout: None,
            sampling: SamplingArgs::none(),
            // The reader's audio is read on demand (`get_samples_played_in_range`); these set its rate,
            // channels and stream.
            audio: AudioArgs {
                audio: true,
                sample_rate: audio_sample_rate,
                channels: audio_channels,
                stream: audio_stream,
            },
        }
        .config()?;
        let auto_threads = threads.is_none();
        let config = crate::fork::process_threads(py, config, auto_threads)?;
        let (reader, source) = open_source(py, source, &config, &remote)?;
        Ok(Self {
            inner: PerProcess::new(Some(Arc::new(reader))),
            source,
            config,
            auto_threads,
            remote,
        })
    }

    /// What the reader was opened from: the path or URL as given, the buffer, the file object, or the bytes a
    /// file object that cannot seek gave (what a pickled reader opens again).
    #[getter]
    fn _source(&self, py: Python<'_>) -> Py<PyAny> {
        self.source.clone_ref(py)
    }

    /// Frees the decoder and the video's index now (in this process); later reads raise :class:`ClosedError`.
    /// Closing twice does nothing.
    fn close(&self) {
        self.inner.replace(None);
    }

    /// Whether `close` was called (in this process, or before a fork).
    #[getter]
    fn closed(&self) -> bool {
        self.inner.current().is_none()
    }

    /// What the video holds (no frame decoded to know it).
    #[getter]
    fn metadata(&self, py: Python<'_>) -> PyResult<PyVideoMetadata> {
        let reader = self.reader(py)?;
        let m = reader.metadata();
        Ok(PyVideoMetadata {
            stream_index: m.stream_index,
            num_frames: m.num_frames,
            average_fps: m.average_fps,
            duration_seconds: m.duration_seconds,
            begin_stream_seconds: m.begin_stream_seconds,
            end_stream_seconds: m.end_stream_seconds(),
            width: m.width,
            height: m.height,
            codec: m.codec.clone(),
            rotation: m.rotation,
            orientation: m.orientation.as_str(),
            key_frame_indices: m.key_frame_indices.clone(),
            color: crate::colour::color_dict(py, &m.color)?.unbind(),
            holes: reader.holes().iter().map(|h| (h.index, h.pts)).collect(),
            audio: m
                .audio
                .as_ref()
                .map(|a| -> PyResult<Py<PyDict>> {
                    let d = PyDict::new(py);
                    d.set_item("stream_index", a.stream_index)?;
                    d.set_item("codec", &a.codec)?;
                    d.set_item("sample_rate", a.sample_rate)?;
                    d.set_item("num_channels", a.num_channels)?;
                    d.set_item("duration_seconds", a.duration_seconds)?;
                    Ok(d.unbind())
                })
                .transpose()?,
        })
    }

    /// `"cpu"` or `"cuda:N"`: where the reader decodes.
    #[getter]
    fn device(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.reader(py)?.device().to_string())
    }

    /// Packets sent to the decoder by the reads so far (reading on forward adds only the packets past the
    /// last read).
    #[getter]
    fn packets_decoded(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.reader(py)?.packets_decoded())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.reader(py)?.len() as usize)
    }

    /// Each frame's ``(start, end)`` display time in stream seconds, from the index (nothing is decoded).
    ///
    /// Returns:
    ///     One ``(start, end)`` pair a frame, in display order.
    fn frame_times(&self, py: Python<'_>) -> PyResult<Vec<(f64, f64)>> {
        let reader = self.reader(py)?;
        let m = reader.metadata();
        Ok((0..m.num_frames)
            .map(|d| {
                let t = m.pts_seconds(d);
                (t, t + m.duration_of(d))
            })
            .collect())
    }

    /// ``reader[i]``: frame ``i`` (negative from the end) as an array, (H, W, 3) or (3, H, W); ``reader[a:b:s]``:
    /// those frames as one array. On a GPU reader, the :class:`Frames` (export them with DLPack).
    ///
    /// Raises:
    ///     IndexError: An index out of range.
    fn __getitem__<'py>(
        slf: &Bound<'py, Self>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        let (indices, single) = if let Ok(slice) = key.cast::<PySlice>() {
            (slice_indices(slice, this.reader(py)?.len())?, false)
        } else {
            let i: i64 = key.extract().map_err(|_| {
                PyTypeError::new_err(
                    "a reader is indexed by an int or a slice (use get_frames_at for lists)",
                )
            })?;
            (vec![this.index(py, i)?], true)
        };
        let frames = Bound::new(py, this.read(py, move |r| r.frames_at(&indices))?)?;
        if frames.get().pixels.is_on_gpu() {
            return Ok(frames.into_any());
        }
        let data = PyFrames::data(&frames)?;
        if single {
            data.get_item(0)
        } else {
            Ok(data)
        }
    }

    /// The frames at these display indices, in this order, repeats allowed.
    ///
    /// Args:
    ///     indices (list[int]): Display indices (negative from the end).
    ///
    /// Returns:
    ///     A :class:`Frames` of them.
    ///
    /// Raises:
    ///     IndexError: An index out of range.
    fn get_frames_at(&self, py: Python<'_>, indices: Vec<i64>) -> PyResult<PyFrames> {
        let indices = indices
            .iter()
            .map(|&i| self.index(py, i))
            .collect::<PyResult<Vec<u64>>>()?;
        self.read(py, move |r| r.frames_at(&indices))
    }

    /// The frames from ``start`` up to ``stop`` (excluded), ``step`` apart, as Python's ``range`` over the video's
    /// indices and as TorchCodec takes them: negative ones count from the end, and the range is clamped to the
    /// video (``(-10, 1000)``: the last 10 frames; a range past the end gives the frames up to the end, or none).
    ///
    /// Args:
    ///     start (int): The first index.
    ///     stop (int): The index to stop before.
    ///     step (int): Frames between those read. Default 1. Allowed: 1 or more.
    ///
    /// Returns:
    ///     A :class:`Frames` of them, in display order.
    ///
    /// Raises:
    ///     ValueError: ``step`` below 1.
    #[pyo3(signature = (start, stop, step=1))]
    fn get_frames_in_range(
        &self,
        py: Python<'_>,
        start: isize,
        stop: isize,
        step: isize,
    ) -> PyResult<PyFrames> {
        if step < 1 {
            return Err(PyValueError::new_err(format!(
                "step is {step}; allowed: 1 or more"
            )));
        }
        let n = self.reader(py)?.len();
        let slice = PySlice::new(py, start, stop, step);
        let s = slice.indices(n as isize)?;
        let (start, stop) = (s.start as u64, s.stop.max(s.start) as u64);
        self.read(py, move |r| r.frames_in_range(start, stop, step as u64))
    }

    /// The frame shown at each of these times.
    ///
    /// Args:
    ///     seconds (list[float]): Times in stream seconds.
    ///
    /// Returns:
    ///     A :class:`Frames` of them, in this order.
    fn get_frames_played_at(&self, py: Python<'_>, seconds: Vec<f64>) -> PyResult<PyFrames> {
        self.read(py, move |r| r.frames_played_at(&seconds))
    }

    /// The audio played from ``start_seconds`` to ``stop_seconds``, as TorchCodec's
    /// ``AudioDecoder.get_samples_played_in_range``: that span of the ``ffmpeg`` CLI's decode, at the reader's
    /// ``audio_sample_rate`` and ``audio_channels`` (default: the stream's). A read behind the last one decodes
    /// the audio again from its start.
    ///
    /// Args:
    ///     start_seconds (float): Where the span starts, in stream seconds.
    ///     stop_seconds (float | None): Where it ends. Default ``None``: the end of the audio.
    ///
    /// Returns:
    ///     The :class:`AudioSamples`.
    ///
    /// Raises:
    ///     VideoError: The video has no audio (code ``no_audio_stream``).
    #[pyo3(signature = (start_seconds, stop_seconds=None))]
    fn get_samples_played_in_range(
        &self,
        py: Python<'_>,
        start_seconds: f64,
        stop_seconds: Option<f64>,
    ) -> PyResult<crate::audio::PyAudioSamples> {
        let inner = self.reader(py)?;
        let clip = py
            .detach(move || inner.audio_played_in_range(start_seconds, stop_seconds))
            .py_err(py)?;
        Ok(crate::audio::PyAudioSamples { clip })
    }

    /// The frames shown in ``[start_seconds, stop_seconds)``.
    ///
    /// Args:
    ///     start_seconds (float): The range's start, in stream seconds.
    ///     stop_seconds (float): Its end (excluded).
    ///
    /// Returns:
    ///     A :class:`Frames` of them, in display order.
    fn get_frames_played_in_range(
        &self,
        py: Python<'_>,
        start_seconds: f64,
        stop_seconds: f64,
    ) -> PyResult<PyFrames> {
        self.read(py, move |r| {
            r.frames_played_in_range(start_seconds, stop_seconds)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match self.reader(py) {
            Ok(reader) => {
                let m = reader.metadata();
                format!(
                    "<framefeed.VideoReader {} frames {}x{} {}>",
                    m.num_frames, m.width, m.height, m.codec
                )
            }
            Err(_) => "<framefeed.VideoReader (closed)>".into(),
        }
    }
}
