"""framefeed: a streaming video input operator.

Feed encoded videos (whole buffers, or live streams chunk by chunk); poll batches of ``batch_size`` sequences
of ``sequence_length`` consecutive frames, decoded incrementally by FFmpeg (or NVDEC) in a native thread. Batches
view their pooled buffer without copying: ``batch.numpy()``, ``np.from_dlpack(batch)``, ``torch.from_dlpack(batch)``.

>>> import framefeed as ff
>>> inp = ff.VideoInput(16, 2, last_sequence_policy="pad")
>>> inp.feed(ff.SAMPLE_MP4, label="sample.mp4")
0
>>> inp.close()
>>> [batch.numpy().shape for batch in inp]
[(2, 16, 240, 320, 3), (2, 16, 240, 320, 3)]
"""

from __future__ import annotations

import operator
import os
from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, List, Optional, Protocol, Tuple, Union
from typing import Sequence as PySequence

if TYPE_CHECKING:
    import numpy as np
    from typing_extensions import Unpack

from . import exceptions, types
from .exceptions import (
    ClosedError,
    DeviceError,
    FramefeedError,
    FramefeedTimeoutError,
    NoDataError,
    NotReadyError,
    OutOfMemoryError,
    TimeoutError,
    VideoError,
)
from .types import (
    ClipPolicy,
    DimensionOrder,
    ClipSampler,
    CropPosition,
    DType,
    Interpolation,
    ResizeStage,
    LastSequencePolicy,
    Layout,
    NvdecDriver,
    OutOfBounds,
    ResizeMode,
    SeekMode,
)
from ._framefeed import (
    ERROR_CODES,
    SAMPLE_MP4,
    AudioSamples,
    Batch,
    CameraEnded,
    FileList,
    LiveVideo,
    MuxBatch,
    MuxEntry,
    Sequence,
    __version__,
    cuda_status,
    decode_audio,
    ffmpeg_build,
    probe,
    redact_url,
    is_remote_url,
    list_remote,
    segments,
)
from ._framefeed import Frames, VideoMetadata
from ._framefeed import Mux as _NativeMux
from ._framefeed import VideoInput as _NativeVideoInput
from ._framefeed import VideoReader as _NativeVideoReader

__all__ = [
    "VideoInput",
    "VideoReader",
    "VideoMetadata",
    "Frames",
    "Frame",
    "LiveVideo",
    "Batch",
    "Sequence",
    "AudioSamples",
    "FileList",
    "Mux",
    "MuxBatch",
    "MuxEntry",
    "CameraEnded",
    "MuxEvent",
    "probe",
    "decode_audio",
    "cuda_status",
    "ffmpeg_build",
    "redact_url",
    "is_remote_url",
    "list_remote",
    "segments",
    "SAMPLE_MP4",
    "ERROR_CODES",
    "FramefeedError",
    "VideoError",
    "NoDataError",
    "NotReadyError",
    "FramefeedTimeoutError",
    "ClosedError",
    "DeviceError",
    "OutOfMemoryError",
    "exceptions",
    "types",
    "__version__",
]
# `TimeoutError` (the same class as `FramefeedTimeoutError`) stays an attribute, left out of `__all__` so that a
# star import does not shadow the builtin.


def _dtype_name(dtype: Any) -> str:
    """A NumPy dtype or scalar type given for ``dtype=``, by name. NumPy is imported here, not with the package:
    a loop that starts decoding and then takes its first batch as an array imports it while the decoder
    threads already run (about 60 ms of a process's start)."""
    import numpy as np

    return str(np.dtype(dtype).name)


class VideoInput(_NativeVideoInput):
    """The operator. See the package README for every keyword; ``dtype`` also takes NumPy dtypes."""

    if TYPE_CHECKING:
        # For checkers: the native signature (`_framefeed.pyi`), every keyword typed; `dtype` also takes NumPy
        # dtypes. `tests/test_typing.py` holds the two lists of keywords equal.
        def __new__(
            cls,
            sequence_length: int,
            batch_size: int,
            *,
            last_sequence_policy: LastSequencePolicy = "partial",
            blocking: bool = True,
            decoder_threads: Optional[int] = None,
            prefetch_batches: int = 1,
            device: str = "cpu",
            cpu_fallback: bool = True,
            nvdec_driver: NvdecDriver = "direct",
            resize: Optional[Tuple[int, int]] = None,
            resize_shorter: Optional[int] = None,
            resize_mode: ResizeMode = "exact",
            interpolation: Interpolation = "bilinear",
            resize_stage: ResizeStage = "yuv",
            crop: Optional[Union[int, Tuple[int, int]]] = None,
            crop_pos: Optional[CropPosition] = None,
            out_of_bounds: OutOfBounds = "error",
            fill: Tuple[float, float, float] = ...,
            seed: Optional[int] = None,
            dtype: Union[DType, "np.dtype[Any]", type] = "uint8",
            normalize: Optional[Tuple[Tuple[float, float, float], Tuple[float, float, float]]] = None,
            tonemap: Optional[str] = None,
            layout: Layout = "FHWC",
            pack: bool = False,
            huge_pages: bool = False,
            autorotate: bool = True,
            strict: bool = False,
            low_latency: bool = False,
            max_queued: Optional[Tuple[int, int]] = None,
            max_batch_bytes: Optional[int] = None,
            max_container_samples: Optional[int] = None,
            live_buffer_bytes: Optional[int] = None,
            stall_timeout: Optional[float] = None,
            stride: Optional[int] = None,
            step: Optional[int] = None,
            clips: Optional[int] = None,
            clip_sampler: ClipSampler = "random",
            clip_policy: ClipPolicy = "cut",
            fps: Optional[float] = None,
            start: Optional[float] = None,
            end: Optional[float] = None,
            indices: Optional[List[int]] = None,
            audio: bool = False,
            audio_sample_rate: Optional[int] = None,
            audio_channels: Optional[int] = None,
            audio_stream: Optional[int] = None,
            storage_options: Optional[Dict[str, Any]] = None,
            index_cache: Optional[Union[str, "os.PathLike[str]"]] = None,
        ) -> "VideoInput": ...

    else:

        def __new__(cls, sequence_length: int, batch_size: int, **kwargs: Any) -> "VideoInput":
            dtype = kwargs.get("dtype")
            if dtype is not None and not isinstance(dtype, str):
                kwargs["dtype"] = _dtype_name(dtype)
            return super().__new__(cls, sequence_length, batch_size, **kwargs)

    async def batches(self) -> AsyncIterator[Batch]:
        """Every batch, as an async iterator (``async for batch in inp.batches()``), until close and the last
        batch. A failed video raises ``VideoError`` out of the loop; iterate again to go on."""
        while True:
            batch = await self.next_batch_async()
            if batch is None:
                return
            yield batch

    def __enter__(self) -> "VideoInput":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Frame:
    """One frame of a :class:`VideoReader` (TorchCodec's ``Frame``): ``data`` (a NumPy view (H, W, 3), or (3, H, W)
    per the reader's ``dimension_order``), ``pts_seconds``, ``duration_seconds``, and framefeed's ``index`` (its
    display index) and ``damaged``. ``torch.from_dlpack(frame)`` views it without a copy. For a GPU reader's
    frame, ``frames`` (the one-frame :class:`Frames`) is what exports it."""

    __slots__ = ("frames",)

    def __init__(self, frames: Frames) -> None:
        self.frames = frames

    @property
    def data(self) -> "np.ndarray":
        return self.frames.data[0]

    @property
    def pts_seconds(self) -> float:
        return self.frames.pts_seconds[0]

    @property
    def duration_seconds(self) -> float:
        return self.frames.duration_seconds[0]

    @property
    def index(self) -> int:
        return self.frames.indices[0]

    @property
    def damaged(self) -> bool:
        return self.frames.damaged[0]

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.data.__dlpack_device__()

    def __repr__(self) -> str:
        return f"<framefeed.Frame {self.index} at {self.pts_seconds:.6f} s>"


class _HasToList(Protocol):
    """An array or a tensor: anything with NumPy's and torch's ``tolist``."""

    def tolist(self) -> Any: ...


IndexList = Union[PySequence[int], range, _HasToList]
"""Display indices as the reader takes them: a list or tuple, a range, a NumPy array or a torch tensor."""
TimeList = Union[PySequence[float], _HasToList]
"""Times (stream seconds) as the reader takes them: a list or tuple, a NumPy array or a torch tensor."""


def _index_list(indices: Any, kind: type = int) -> List[Any]:
    """Indices (or times) as a list: a list or tuple, a range, a NumPy array or a torch tensor (anything with
    ``tolist``), or one number. Indices must be integers (``operator.index``: a float raises ``TypeError``)."""
    if hasattr(indices, "tolist"):
        indices = indices.tolist()
    if isinstance(indices, (int, float)):
        indices = [indices]
    if kind is int:
        return [operator.index(i) for i in indices]
    return [float(i) for i in indices]


def _open_reader(cls: type, source: Any, keywords: Dict[str, Any]) -> "VideoReader":
    """A reader made again where it is unpickled."""
    return cls(source, **keywords)


class VideoReader(_NativeVideoReader):
    """Random access to one whole video, in TorchCodec's words: ``metadata``, ``len(reader)``, ``reader[i]`` and
    ``reader[a:b:s]``, ``get_frame_at(i)``, ``get_frames_at(indices)``, ``get_frames_in_range(start, stop, step)``,
    ``get_frame_played_at(seconds)``, ``get_frames_played_at(seconds)``, ``get_frames_played_in_range(start,
    stop)``, ``get_all_frames()``. Each read decodes only the GOPs its frames need (going on from where the last
    read left off when it can) and gives a :class:`Frames`: ``data`` (a NumPy view; ``torch.from_dlpack(frames)``
    for a tensor), ``indices``, ``pts_seconds``, ``duration_seconds``. The frames are byte for byte the ``ffmpeg``
    CLI's at those indices, turned upright.

    ``source``: a path, a remote video's URL (``s3://``, ``gs://``, ``az://``, ``https://``: read by byte ranges,
    only the index and each read's GOPs; credentials from the environment or ``storage_options``, a dict with
    fsspec's names such as ``key``, ``secret``, ``endpoint_url``, ``anon``, and framefeed's ``ca_file``,
    ``in_flight``, ``timeout``...; ``index_cache=DIR`` opens it again with one ``HEAD``; README "Remote videos"),
    ``bytes`` (or any buffer), or a binary file object
    (fsspec's, s3fs', smart_open's, ``open()``'s, ``io.BytesIO``): read lazily, only the bytes the index and each
    read's GOPs need (a file object over a file on disk is read from that file at offsets; any other through
    ``seek`` and ``read``, the GIL taken only inside each call); one that cannot seek is read through once. Keywords: ``dimension_order`` (``"NHWC"`` or
    ``"NCHW"``), ``threads`` (decoder threads; by default the cores this process may use, shared among the
    DataLoader's workers when it runs in one: ``framefeed._threads``), ``device`` (``"cpu"``, ``"cuda"``,
    ``"cuda:N"``, ``"auto"``), and the transform keywords of :class:`VideoInput` (``resize``, ``crop``, ``dtype``,
    ``normalize``, ``autorotate``...; ``dtype`` also takes NumPy dtypes). TorchCodec's ``seek_mode``
    (``"exact"`` or ``"approximate"``) is accepted and changes nothing: framefeed's index is exact either way, read
    from the container's index without decoding. ``stream_index`` is accepted when it names the video stream
    framefeed reads (``metadata.stream_index``, the one the ``ffmpeg`` CLI picks); another raises ``ValueError``.

    Indices and ranges as TorchCodec takes them: negative ones count from the end; ``get_frames_in_range`` is
    clamped to the video as Python's slices are; index lists may be lists, NumPy arrays or torch tensors.

    One reader may be shared by threads; the GIL is released while it decodes. ``with VideoReader(...) as r:``
    closes it at the end (``close()``). A reader used in a process forked after it opened (a DataLoader worker)
    opens its source again there, once; a reader pickles as its source and keywords and opens again where it is
    unpickled (a buffer travels as its bytes; a file object as itself, so fsspec's files travel and ``open()``'s
    do not; a file object that cannot seek, as the bytes it gave).

    >>> import framefeed as ff
    >>> reader = ff.VideoReader(ff.SAMPLE_MP4)
    >>> reader.metadata.num_frames, len(reader), reader[5].shape
    (60, 60, (240, 320, 3))
    >>> frames = reader.get_frames_at([59, 0, 0])
    >>> frames.data.shape, frames.indices
    ((3, 240, 320, 3), [59, 0, 0])
    >>> reader.get_frames_in_range(-10, 1000).indices == list(range(50, 60))
    True
    """

    if TYPE_CHECKING:
        # For checkers: the native signature (`_framefeed.pyi`); `dtype` also takes NumPy dtypes.
        def __new__(
            cls,
            source: Any,
            *,
            seek_mode: SeekMode = "exact",
            stream_index: Optional[int] = None,
            dimension_order: DimensionOrder = "NHWC",
            threads: Optional[int] = None,
            device: str = "cpu",
            cpu_fallback: bool = True,
            nvdec_driver: NvdecDriver = "direct",
            resize: Optional[Tuple[int, int]] = None,
            resize_shorter: Optional[int] = None,
            resize_mode: ResizeMode = "exact",
            interpolation: Interpolation = "bilinear",
            resize_stage: ResizeStage = "yuv",
            crop: Optional[Union[int, Tuple[int, int]]] = None,
            crop_pos: Optional[CropPosition] = None,
            out_of_bounds: OutOfBounds = "error",
            fill: Tuple[float, float, float] = ...,
            seed: Optional[int] = None,
            dtype: Union[DType, "np.dtype[Any]", type] = "uint8",
            normalize: Optional[Tuple[Tuple[float, float, float], Tuple[float, float, float]]] = None,
            tonemap: Optional[str] = None,
            autorotate: bool = True,
            strict: bool = False,
            audio_sample_rate: Optional[int] = None,
            audio_channels: Optional[int] = None,
            audio_stream: Optional[int] = None,
            storage_options: Optional[Dict[str, Any]] = None,
            index_cache: Optional[Union[str, "os.PathLike[str]"]] = None,
        ) -> "VideoReader": ...

    else:

        def __new__(
            cls,
            source: Any,
            *,
            seek_mode: str = "exact",
            stream_index: Optional[int] = None,
            **kwargs: Any,
        ) -> "VideoReader":
            if seek_mode not in ("exact", "approximate"):
                raise ValueError(f"seek_mode is {seek_mode!r}; allowed: 'exact', 'approximate'")
            dtype = kwargs.get("dtype")
            if dtype is not None and not isinstance(dtype, str):
                kwargs["dtype"] = _dtype_name(dtype)
            self = super().__new__(cls, source, **kwargs)
            if stream_index is not None:
                read = self.metadata.stream_index
                if stream_index != read:
                    raise ValueError(
                        f"stream_index is {stream_index}; allowed: {read}, the video stream framefeed reads in this "
                        "file (the one the ffmpeg CLI picks), or None"
                    )
            self._keywords = dict(kwargs, seek_mode=seek_mode, stream_index=stream_index)
            return self

    def __reduce__(self) -> Tuple[Any, ...]:
        source = self._source
        if isinstance(source, (str, bytes)):
            pass
        elif hasattr(source, "__fspath__"):
            source = os.fspath(source)
        elif not hasattr(source, "read"):
            source = bytes(memoryview(source))  # a buffer travels as its bytes
        # A file object travels as itself: fsspec's files pickle (and open again), `open()`'s do not.
        return (_open_reader, (type(self), source, self._keywords))

    def __enter__(self) -> "VideoReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_frames_at(self, indices: IndexList) -> Frames:  # type: ignore[override]
        """The frames at these display indices (negative from the end), in this order, repeats allowed: a list, a
        range, a NumPy array or a torch tensor. An index out of range raises ``IndexError``."""
        return super().get_frames_at(_index_list(indices))

    def get_frames_played_at(self, seconds: TimeList) -> Frames:  # type: ignore[override]
        """The frame shown at each of these times (stream seconds): a list, a NumPy array or a torch tensor. A
        time outside ``[metadata.begin_stream_seconds, metadata.end_stream_seconds)`` raises ``IndexError``, as
        :meth:`get_frame_played_at` does."""
        times = _index_list(seconds, float)
        meta = self.metadata
        outside = [t for t in times if not meta.begin_stream_seconds <= t < meta.end_stream_seconds]
        if outside:
            raise IndexError(
                f"no frame is shown at {outside[0]} s: allowed from {meta.begin_stream_seconds} s up to (not "
                f"including) {meta.end_stream_seconds} s"
            )
        return super().get_frames_played_at(times)

    def get_frames_played_in_range(self, start_seconds: float, stop_seconds: float) -> Frames:  # type: ignore[override]
        """The frames shown in ``[start_seconds, stop_seconds)``, as TorchCodec checks the range: ``ValueError``
        when ``start_seconds`` is after ``stop_seconds``, outside ``[metadata.begin_stream_seconds,
        metadata.end_stream_seconds)``, or ``stop_seconds`` after ``metadata.end_stream_seconds``."""
        meta = self.metadata
        begin, end = meta.begin_stream_seconds, meta.end_stream_seconds
        if not start_seconds <= stop_seconds:
            raise ValueError(f"start_seconds is {start_seconds}; allowed: at most stop_seconds ({stop_seconds})")
        if not begin <= start_seconds < end:
            raise ValueError(f"start_seconds is {start_seconds}; allowed: from {begin} up to (not including) {end}")
        if not stop_seconds <= end:
            raise ValueError(f"stop_seconds is {stop_seconds}; allowed: at most {end}")
        return super().get_frames_played_in_range(start_seconds, stop_seconds)

    def get_frame_at(self, index: int) -> Frame:
        """Frame ``index`` (negative from the end) as a :class:`Frame`; ``IndexError`` out of range."""
        return Frame(super().get_frames_at([operator.index(index)]))

    def get_frame_played_at(self, seconds: float) -> Frame:
        """The frame shown at ``seconds`` (stream seconds) as a :class:`Frame`; ``IndexError`` outside
        ``[metadata.begin_stream_seconds, metadata.end_stream_seconds)``, as TorchCodec."""
        meta = self.metadata
        if not meta.begin_stream_seconds <= seconds < meta.end_stream_seconds:
            raise IndexError(
                f"no frame is shown at {seconds} s: allowed from {meta.begin_stream_seconds} s up to (not including) "
                f"{meta.end_stream_seconds} s"
            )
        return Frame(super().get_frames_played_at([float(seconds)]))

    def get_all_frames(self) -> Frames:
        """Every frame of the video, in display order (memory: the whole decoded video)."""
        return self.get_frames_in_range(0, len(self))


MuxEvent = Union[MuxBatch, CameraEnded]
"""What a ``Mux`` poll gives: a batch across cameras, or a camera's end."""


class Mux(_NativeMux):
    """Many live cameras, one model: batches of up to ``batch_size`` sequences from any of the cameras, each out
    when full or ``deadline`` seconds after its oldest sequence was ready (DeepStream's ``nvstreammux``, Triton's
    dynamic batching). One sequence shape a batch (give every camera a ``resize`` to make them one), oldest first.

    ``policy``: ``"every_frame"`` (nothing lost; a consumer that falls behind holds the cameras back within their
    buffers) or ``"latest_only"`` (each camera's newest sequence; ``stats()`` counts what was dropped).

    The cameras' operators take ``sequence_length`` (1 for per-frame models) and any other keyword of
    :class:`VideoInput` (``camera``), checked here; their batch size is 1. Cameras join with :meth:`add_url`,
    :meth:`add_live` or :meth:`add_input` and leave with :meth:`remove` while the mux runs; each ends alone,
    with a :class:`CameraEnded` after its last sequence.

    >>> import framefeed as ff
    >>> mux = ff.Mux(4, 0.033, resize=(64, 64))
    >>> camera, live = mux.add_live("front door")
    >>> live.push(ff.SAMPLE_MP4); live.finish()
    >>> mux.close()
    >>> events = list(mux)
    >>> events[0].sequence_shape, events[-1]
    ((1, 64, 64, 3), <framefeed.CameraEnded camera 0>)
    """

    _camera: Dict[str, Any]

    if TYPE_CHECKING:

        def __new__(
            cls,
            batch_size: int,
            deadline: float,
            *,
            policy: types.MuxPolicy = "every_frame",
            sequence_length: int = 1,
            **camera: Unpack[types.CameraSettings],
        ) -> "Mux": ...

    else:

        def __new__(cls, batch_size, deadline, *, policy="every_frame", sequence_length=1, **camera):
            self = super().__new__(cls, batch_size, deadline, policy=policy)
            # The cameras' settings are checked now, not at the first camera.
            VideoInput(sequence_length, 1, **camera).close()
            self._camera = dict(camera, sequence_length=sequence_length, batch_size=1)
            return self

    def _operator(self) -> VideoInput:
        return VideoInput(**self._camera)

    def add_url(
        self,
        url: str,
        label: Optional[Union[str, int]] = None,
        *,
        schemes: Optional[List[str]] = None,
        open_timeout: float = 10.0,
        read_timeout: float = 5.0,
        reconnect: int = 5,
        reconnect_initial: float = 0.5,
        reconnect_max: float = 4.0,
        rtsp_transport: types.RtspTransport = "tcp",
    ) -> int:
        """Adds a camera pulled from ``url`` (the keywords as for :meth:`VideoInput.feed_url`: a drop reconnects
        by them); its number. The label defaults to the URL without its credentials."""
        camera = self._operator()
        if label is None:
            label = redact_url(url)
        camera.feed_url(
            url,
            label,
            schemes=schemes,
            open_timeout=open_timeout,
            read_timeout=read_timeout,
            reconnect=reconnect,
            reconnect_initial=reconnect_initial,
            reconnect_max=reconnect_max,
            rtsp_transport=rtsp_transport,
        )
        camera.close()
        return self.add_input(camera, label)

    def add_live(self, label: Union[str, int]) -> Tuple[int, LiveVideo]:
        """Adds a camera the application pushes chunks to: its number and its :class:`LiveVideo`."""
        camera = self._operator()
        live = camera.feed_live(label)
        camera.close()
        return self.add_input(camera, label), live

    async def events(self) -> AsyncIterator[MuxEvent]:
        """Every event, as an async iterator, until close and every camera's end (``async for event in mux``
        does the same)."""
        while True:
            event = await self.next_event_async()
            if event is None:
                return
            yield event

    def __aiter__(self) -> AsyncIterator[MuxEvent]:
        return self.events()

    def __enter__(self) -> "Mux":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
