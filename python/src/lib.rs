//! framefeed for Python: a thin PyO3 binding over the Rust operator (`framefeed`), built by maturin as the
//! abi3 module `framefeed._framefeed` (CPython 3.9+); the package's Python part (`python/framefeed/`) adds the
//! exceptions, the buffer helper, `framefeed.torch` and the type stubs.
//!
//! Layers: `config` (keywords → `framefeed::Config`), `input` (the operator, live videos, file lists; the GIL
//! released around every wait), `reader` (random access to one video), `mux` (batches across cameras), `batch` (batches and sequences, exported through DLPack), `aio` (asyncio, one
//! thread for all waiting tasks), `errors` (framefeed's errors as the package's exceptions), `cuda` (GPU
//! batches; `cuda_none.rs` without the feature), and `ffi`, the only module with `unsafe` code.
#![deny(unsafe_code)]

mod aio;
mod audio;
mod batch;
mod colour;
mod config;
#[cfg_attr(not(feature = "cuda"), path = "cuda_none.rs")]
mod cuda;
mod errors;
mod events;
mod exiting;
mod ffi;
mod fileobj;
mod fork;
mod input;
mod mux;
mod reader;
mod remote;

use framefeed::Choice;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::to_py;

/// A whole video given as a path (opened here, read from disk where the demuxer looks, never whole) or as a
/// buffer; with its path as its label.
fn whole_video(
    py: Python<'_>,
    video: &Bound<'_, PyAny>,
) -> PyResult<(framefeed::Encoded, Option<String>)> {
    whole_video_with(py, video, framefeed::RemoteOptions::new())
}

/// [`whole_video`], a remote video read with `options`.
fn whole_video_with(
    py: Python<'_>,
    video: &Bound<'_, PyAny>,
    options: framefeed::RemoteOptions,
) -> PyResult<(framefeed::Encoded, Option<String>)> {
    // A remote video's URL: read by byte ranges.
    if let Some(url) = video
        .extract::<String>()
        .ok()
        .filter(|u| framefeed::is_remote_url(u))
    {
        let encoded = py
            .detach(|| framefeed::Encoded::remote(&url, &options))
            .map_err(|e| to_py(py, e))?;
        return Ok((encoded, Some(framefeed::redact_url(&url))));
    }
    if let Ok(path) = video.extract::<std::path::PathBuf>() {
        let encoded = input::open_file(py, &path)?;
        let label = path.display().to_string();
        Ok((encoded.label(label.clone()), Some(label)))
    } else {
        Ok((framefeed::Encoded::new(input::data_bytes(video)?), None))
    }
}

/// What a container holds (format, streams, codecs, sizes, colour tags), without decoding it.
///
/// Args:
///     data (str | os.PathLike | bytes): A path (read where the demuxer looks, never whole), a remote video's URL
///         (``s3://``, ``https://``...; by byte ranges, credentials from the environment) or the encoded bytes
///         (any buffer).
///
/// Returns:
///     A ``framefeed.types.ContainerInfo`` dict: ``format``, ``format_long``, ``duration``, ``bit_rate`` and
///     ``streams`` (each a ``framefeed.types.StreamInfo``: ``index``, ``kind``, ``codec``, ``width``,
///     ``height``, ``pixel_format``, colour tags, ``frame_rate``, ``sample_rate``, ``channels``, ``frames``,
///     ``rotation``...).
///
/// Raises:
///     VideoError: The data is not a container FFmpeg reads, or a remote video cannot be reached.
///     OSError: A path that cannot be opened.
#[pyfunction]
fn probe<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let (video, label) = whole_video(py, data)?;
    let info = py.detach(|| framefeed::probe(video)).map_err(|error| {
        to_py(
            py,
            framefeed::Error::Video {
                video: framefeed::VideoRef {
                    id: framefeed::VideoId(0),
                    label: label.map(Into::into),
                },
                error,
            },
        )
    })?;
    let out = PyDict::new(py);
    out.set_item("format", &info.format)?;
    out.set_item("format_long", &info.format_long)?;
    out.set_item("duration", info.duration)?;
    out.set_item("bit_rate", info.bit_rate)?;
    let streams = info
        .streams
        .iter()
        .map(|s| {
            let d = PyDict::new(py);
            d.set_item("index", s.index)?;
            d.set_item("kind", s.kind.as_str())?;
            d.set_item("codec", &s.codec)?;
            d.set_item("profile", &s.profile)?;
            d.set_item("width", s.width)?;
            d.set_item("height", s.height)?;
            d.set_item("pixel_format", &s.pixel_format)?;
            d.set_item("color_space", &s.color_space)?;
            d.set_item("color_range", &s.color_range)?;
            d.set_item("color_primaries", &s.color_primaries)?;
            d.set_item("color_transfer", &s.color_transfer)?;
            d.set_item("bit_depth", s.bit_depth)?;
            d.set_item(
                "dynamic_range",
                (s.kind == framefeed::MediaKind::Video).then(|| s.dynamic_range().as_str()),
            )?;
            d.set_item(
                "mastering_display",
                colour::mastering_dict(py, s.mastering_display.as_ref())?,
            )?;
            d.set_item(
                "content_light",
                colour::content_light_dict(py, s.content_light)?,
            )?;
            d.set_item("frame_rate", s.fps())?;
            d.set_item("sample_rate", s.sample_rate)?;
            d.set_item("channels", s.channels)?;
            d.set_item("duration", s.duration)?;
            d.set_item("frames", s.frames)?;
            d.set_item("rotation", s.rotation())?;
            d.set_item("orientation", s.orientation().map(|o| o.as_str()))?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("streams", streams)?;
    Ok(out)
}

/// The whole audio stream of a file or buffer (any container, with or without video): the ``ffmpeg`` CLI's
/// samples.
///
/// Args:
///     data (str | os.PathLike | bytes): A path, a remote video's URL, or the encoded bytes (any buffer).
///     sample_rate (int | None): Samples a second. Default ``None``: the stream's. Allowed: 1000 to 384000.
///     channels (int | None): Channels. Default ``None``: the stream's. Allowed: 1 to 16.
///     stream (int | None): The container's index of the audio stream. Default ``None``: the one ``ffmpeg`` picks.
///
/// Returns:
///     The :class:`AudioSamples`.
///
/// Raises:
///     VideoError: No audio stream (code ``no_audio_stream``), or data FFmpeg cannot read.
///     ValueError: A setting out of its allowed range.
#[pyfunction]
#[pyo3(signature = (data, *, sample_rate=None, channels=None, stream=None))]
fn decode_audio(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    sample_rate: Option<u32>,
    channels: Option<u32>,
    stream: Option<usize>,
) -> PyResult<audio::PyAudioSamples> {
    let (video, _) = whole_video(py, data)?;
    let mut settings = framefeed::Audio::new();
    if let Some(rate) = sample_rate {
        settings = settings.sample_rate(rate);
    }
    if let Some(channels) = channels {
        settings = settings.channels(channels);
    }
    if let Some(stream) = stream {
        settings = settings.stream(stream);
    }
    let clip = py
        .detach(|| framefeed::decode_audio(video, settings))
        .map_err(|e| to_py(py, e))?;
    Ok(audio::PyAudioSamples { clip })
}

/// The FFmpeg this module decodes with.
///
/// Returns:
///     A ``framefeed.types.FfmpegBuild`` dict: ``version`` (its release), ``configuration`` (its configure
///     line), ``license``, ``libavcodec`` (major, minor, micro) and ``protocols`` (its input protocols: a URL
///     needs its scheme's).
#[pyfunction]
fn ffmpeg_build(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let build = framefeed::ffmpeg_build();
    let out = PyDict::new(py);
    out.set_item("version", &build.version)?;
    out.set_item("configuration", &build.configuration)?;
    out.set_item("license", &build.license)?;
    out.set_item("libavcodec", build.libavcodec)?;
    out.set_item("protocols", &build.protocols)?;
    Ok(out)
}

/// Whether this build can decode on a GPU (the ``cuda`` feature, a driver and NVDEC), and why not if it cannot.
///
/// Returns:
///     ``(True, what GPU)`` or ``(False, why not)``.
#[pyfunction]
fn cuda_status() -> (bool, String) {
    match framefeed::cuda_status() {
        Ok(status) => (true, status),
        Err(reason) => (false, reason),
    }
}

/// A whole video's frames cut at keyframes into parts of at least ``every`` frames (read by demuxing, not
/// decoding), to feed each with ``segment=(first, end)``: a video's parts, decoded anywhere, give exactly the
/// sequences of one whole decode.
///
/// Args:
///     video (str | os.PathLike | bytes): A path (read from disk), a remote video's URL (read by byte ranges; an
///         MP4's ``moov`` only), or the encoded bytes (any buffer).
///     every (int): The shortest part, in frames (the last may be shorter).
///     storage_options (dict[str, Any] | None): A remote video's credentials and settings, as
///         ``VideoInput(storage_options=...)`` takes them. Default ``None``: the environment's.
///     index_cache (str | os.PathLike | None): A directory of remote videos' indexes. Default ``None``.
///
/// Returns:
///     The parts as ``(first, end)`` display indices, in order.
///
/// Raises:
///     VideoError: The video cannot be read.
///     OSError: A path that cannot be opened.
#[pyfunction]
#[pyo3(signature = (video, every, *, storage_options=None, index_cache=None))]
fn segments(
    py: Python<'_>,
    video: &Bound<'_, PyAny>,
    every: u64,
    storage_options: Option<Bound<'_, PyDict>>,
    index_cache: Option<std::path::PathBuf>,
) -> PyResult<Vec<(u64, u64)>> {
    let parts = cut(py, video, every, storage_options, index_cache, true)?;
    Ok(parts.unwrap_or_default())
}

/// :func:`segments` from the container's own index only (an MP4's ``moov``).
///
/// Args:
///     video (str | os.PathLike | bytes): As for :func:`segments`.
///     every (int): As for :func:`segments`.
///     storage_options (dict[str, Any] | None): As for :func:`segments`.
///     index_cache (str | os.PathLike | None): As for :func:`segments`.
///
/// Returns:
///     The parts, or ``None`` where the container does not list its packets.
#[pyfunction]
#[pyo3(signature = (video, every, *, storage_options=None, index_cache=None))]
fn _segments_from_index(
    py: Python<'_>,
    video: &Bound<'_, PyAny>,
    every: u64,
    storage_options: Option<Bound<'_, PyDict>>,
    index_cache: Option<std::path::PathBuf>,
) -> PyResult<Option<Vec<(u64, u64)>>> {
    cut(py, video, every, storage_options, index_cache, false)
}

/// The cut of [`segments`] (`scan`: a container without an index demuxed whole) or of
/// [`_segments_from_index`] (`None` for such a container).
fn cut(
    py: Python<'_>,
    video: &Bound<'_, PyAny>,
    every: u64,
    storage_options: Option<Bound<'_, PyDict>>,
    index_cache: Option<std::path::PathBuf>,
    scan: bool,
) -> PyResult<Option<Vec<(u64, u64)>>> {
    let options = remote::remote_options(storage_options.as_ref(), index_cache)?;
    let (encoded, _) = whole_video_with(py, video, options)?;
    let config = framefeed::Config::new(1, 1);
    let parts = py
        .detach(|| {
            if scan {
                framefeed::segments(&encoded, &config, every).map(Some)
            } else {
                framefeed::segments_from_index(&encoded, &config, every)
            }
        })
        .map_err(|e| to_py(py, e))?;
    Ok(parts.map(|parts| parts.into_iter().map(|p| (p.start, p.end)).collect()))
}

/// The objects under a remote URL, as URLs, in name order, hidden entries (a path part starting with ``.``) left
/// out.
///
/// Args:
///     url (str): A prefix (``s3://bucket/videos/``, ``gs://``, ``az://``) or an object; an ``http(s)://`` URL is
///         given back as it is (HTTP has no listing).
///     storage_options (dict[str, Any] | None): Credentials and endpoint, as ``VideoInput(storage_options=...)``
///         takes them. Default ``None``: the environment's.
///
/// Returns:
///     The objects' URLs; ``[url]`` where it names one object.
///
/// Raises:
///     VideoError: Nothing is there (code ``source_unavailable``), or the store refused the listing.
#[pyfunction]
#[pyo3(signature = (url, *, storage_options=None))]
fn list_remote(
    py: Python<'_>,
    url: &str,
    storage_options: Option<Bound<'_, PyDict>>,
) -> PyResult<Vec<String>> {
    let options = remote::remote_options(storage_options.as_ref(), None)?;
    py.detach(|| framefeed::list_remote(url, &options))
        .map_err(|e| to_py(py, e))
}

/// A URL without its credentials (``rtsp://admin:pw@cam/1`` becomes ``rtsp://…@cam/1``), as framefeed labels and
/// logs URLs.
///
/// Args:
///     url (str): The URL.
///
/// Returns:
///     The URL without its user name and password.
#[pyfunction]
fn redact_url(url: &str) -> String {
    framefeed::redact_url(url)
}

/// Whether framefeed reads a URL by byte ranges as a remote object (``s3://``, ``gs://``, ``az://``, and
/// ``http(s)://`` but for an HLS or DASH playlist), with ``storage_options``.
///
/// Args:
///     url (str): The URL.
///
/// Returns:
///     ``True`` for a remote object's URL.
#[pyfunction]
fn is_remote_url(url: &str) -> bool {
    framefeed::is_remote_url(url)
}

/// How many remote videos (or file objects) this process has read through to index them: those whose
/// container has no index framefeed reads by ranges (Matroska and WebM in the exact seek mode, MPEG-TS, AVI),
/// opened without an index cache that kept theirs. Each such opening reads the whole object once; ``VideoReader``
/// also warns (``RuntimeWarning``) when it does.
///
/// Returns:
///     The count since the process started.
#[pyfunction]
fn remote_index_scans() -> u64 {
    framefeed::remote_index_scans()
}

/// framefeed's table of error codes (`framefeed::ErrorCode`): code → (`"library"` or `"service"`, the HTTP
/// status the service refuses a request with, or `None`, what went wrong).
fn error_codes(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let table = PyDict::new(py);
    for code in framefeed::ErrorCode::ALL {
        let source = match code.source() {
            framefeed::CodeSource::Library => "library",
            _ => "service",
        };
        table.set_item(code.as_str(), (source, code.status(), code.description()))?;
    }
    Ok(table)
}

/// The library's defaults of the keywords that name a choice or a URL option: what the keyword defaults of
/// `VideoInput`, `feed_url` and `Mux.add_url` must equal (held by `tests/test_defaults.py`).
fn library_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use framefeed::{
        ClipPolicy, ClipSampler, DType, Device, Interpolation, LastSequencePolicy, Layout,
        NvdecDriver, OutOfBoundsMode, Reconnect, ResizeMode, RtspTransport, UrlOptions,
    };
    let d = PyDict::new(py);
    d.set_item("last_sequence_policy", LastSequencePolicy::default().name())?;
    d.set_item("device", Device::default().to_string())?;
    d.set_item("nvdec_driver", NvdecDriver::default().name())?;
    d.set_item("resize_mode", ResizeMode::default().name())?;
    d.set_item("interpolation", Interpolation::default().name())?;
    d.set_item("out_of_bounds", OutOfBoundsMode::default().name())?;
    d.set_item("dtype", DType::default().name())?;
    d.set_item("layout", Layout::default().name())?;
    d.set_item("clip_sampler", ClipSampler::default().name())?;
    d.set_item("clip_policy", ClipPolicy::default().name())?;
    d.set_item(
        "open_timeout",
        UrlOptions::DEFAULT_OPEN_TIMEOUT.as_secs_f64(),
    )?;
    d.set_item(
        "read_timeout",
        UrlOptions::DEFAULT_READ_TIMEOUT.as_secs_f64(),
    )?;
    d.set_item("reconnect", Reconnect::DEFAULT_TRIES)?;
    d.set_item(
        "reconnect_initial",
        Reconnect::DEFAULT_INITIAL.as_secs_f64(),
    )?;
    d.set_item("reconnect_max", Reconnect::DEFAULT_MAX.as_secs_f64())?;
    d.set_item("rtsp_transport", RtspTransport::default().name())?;
    Ok(d)
}

#[pymodule]
fn _framefeed(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<input::PyVideoInput>()?;
    m.add_class::<input::PyLiveVideo>()?;
    m.add_class::<input::PyFileList>()?;
    m.add_class::<batch::PyBatch>()?;
    m.add_class::<batch::PySequence>()?;
    m.add_class::<audio::PyAudioSamples>()?;
    m.add_class::<mux::PyMux>()?;
    m.add_class::<events::PyMuxBatch>()?;
    m.add_class::<events::PyMuxEntry>()?;
    m.add_class::<events::PyCameraEnded>()?;
    m.add_class::<reader::PyVideoReader>()?;
    m.add_class::<reader::PyVideoMetadata>()?;
    m.add_class::<reader::PyFrames>()?;
    m.add_function(wrap_pyfunction!(reader::_video_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(reader::_frames, m)?)?;
    m.add_function(wrap_pyfunction!(redact_url, m)?)?;
    m.add_function(wrap_pyfunction!(is_remote_url, m)?)?;
    m.add_function(wrap_pyfunction!(remote_index_scans, m)?)?;
    m.add_function(wrap_pyfunction!(segments, m)?)?;
    m.add_function(wrap_pyfunction!(_segments_from_index, m)?)?;
    m.add_function(wrap_pyfunction!(list_remote, m)?)?;
    m.add_function(wrap_pyfunction!(probe, m)?)?;
    m.add_function(wrap_pyfunction!(decode_audio, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_status, m)?)?;
    m.add_function(wrap_pyfunction!(ffmpeg_build, m)?)?;
    m.add("SAMPLE_MP4", PyBytes::new(m.py(), framefeed::SAMPLE_MP4))?;
    m.add("ERROR_CODES", error_codes(m.py())?)?;
    m.add("LIBRARY_DEFAULTS", library_defaults(m.py())?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    exiting::register(m.py())?;
    Ok(())
}
