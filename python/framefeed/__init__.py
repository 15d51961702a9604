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

import inspect
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
    remote_index_scans,
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
    "remote_index_scans",
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
    """The streaming video input operator: feed encoded videos, poll batches of ``batch_size`` sequences of
    ``sequence_length`` frames.

    Videos are fed whole (:meth:`feed`, :meth:`feed_file`), live chunk by chunk (:meth:`feed_live`) or pulled
    by URL (:meth:`feed_url`), and decoded in native threads with the GIL released; each poll
    (:meth:`next_batch`, ``for batch in inp``, ``async for batch in inp.batches()``) gives a :class:`Batch`
    viewing a pooled buffer without copying. A batch never spans two videos unless ``pack=True``. ``with
    VideoInput(...) as inp:`` closes it on exit. Settings are checked when it is made: a value out of range
    raises ``ValueError`` naming the allowed range.

    Args:
        sequence_length (int): Frames in a sequence. Allowed: 1 to 65536.
        batch_size (int): The most sequences in a batch (a video's last batch may hold fewer). Allowed: 1 to
            65536.
        last_sequence_policy (str): What a video's last, incomplete sequence becomes: ``"partial"`` (default;
            shorter) or ``"pad"`` (zero frames pad it to ``sequence_length``; ``Sequence.valid_frames`` counts
            the real ones).
        blocking (bool): ``True`` (default): :meth:`next_batch` waits for videos to be fed. ``False``: it raises
            :class:`NoDataError` at once when nothing is fed and nothing is ready.
        decoder_threads (int | None): libavcodec threads per video. Default ``None``: the cores this process
            may use, shared among the DataLoader's workers inside one (``framefeed._threads``). ``0``: one per
            core. Allowed: 0 to 256.
        prefetch_batches (int): Finished batches kept ready ahead of the consumer, besides the one being
            decoded (output memory is bounded by ``prefetch_batches + 1`` batches plus those the consumer
            holds). Default 1. Allowed: 1 to 64.
        device (str): Where videos are decoded and batches kept: ``"cpu"`` (default), ``"cuda"``,
            ``"cuda:N"`` (NVDEC, batches in GPU memory; needs a build with the ``cuda`` feature:
            :func:`cuda_status`) or ``"auto"`` (CUDA device 0 when a usable GPU with NVDEC is there, else the
            CPU). A CUDA device that cannot be used raises :class:`DeviceError`.
        cpu_fallback (bool): With a CUDA device, what happens to a video NVDEC cannot decode (a codec, profile,
            chroma format or size it lacks): ``True`` (default) decodes it on the CPU and uploads each batch
            (``Batch.decoded_on`` is ``"cpu"``); ``False`` fails that video with :class:`VideoError`.
        nvdec_driver (str): With a CUDA device, how NVDEC is driven: ``"direct"`` (default; framefeed's own
            nvcuvid decoder) or ``"hwaccel"`` (libavcodec's). Both give the same frames.
        resize (tuple[int, int] | None): ``(width, height)`` to resize every frame to (see ``resize_mode``).
            Default ``None``: no resize. Allowed: 1 to 16384 a side; not with ``resize_shorter``.
        resize_shorter (int | None): Resize so that the shorter side has this many pixels, the other in
            proportion ("resize 256, crop 224"). Default ``None``. Allowed: 1 to 16384; not with ``resize``.
        resize_mode (str): How ``resize`` treats the aspect ratio: ``"exact"`` (default; it may change),
            ``"fill"`` (aspect kept, covering the size, centre-cropped) or ``"letterbox"`` (aspect kept, fitting
            inside, padded with ``fill``). ``"fill"`` and ``"letterbox"`` take no ``crop``.
        interpolation (str): The resize's filter: ``"bilinear"`` (default), ``"nearest"``, ``"bicubic"`` or
            ``"area"`` (antialiased downscaling).
        resize_stage (str): ``"yuv"`` (default): resize the decoded YUV planes, then convert to RGB (the
            ``ffmpeg`` CLI's ``scale=W:H:flags=F,format=yuv420p``); ``"rgb"``: one swscale pass to RGB at the new
            size (the CLI's ``-vf scale=W:H:flags=F -pix_fmt rgb24``, decord's resize; CPU only, a GPU resizes
            as ``"yuv"``).
        crop (int | tuple[int, int] | None): A side, or ``(width, height)``, of a crop window, one per sequence,
            taken after the resize. Default ``None``: no crop. Allowed: 1 to 16384 a side.
        crop_pos (str | tuple[float, float] | None): Where the crop window lies: ``"center"`` (the default,
            also for ``None``), ``"random"`` (drawn per sequence from ``seed``) or ``(x, y)``, each in [0, 1]
            (0: left or top, 1: right or bottom).
        out_of_bounds (str): What a crop larger than the frame does: ``"error"`` (default; the video fails
            with :class:`VideoError`), ``"pad"`` (the window keeps its size, padded with ``fill``) or ``"trim"``
            (the window is cut to the frame).
        fill (tuple[float, float, float]): The R, G, B values of the letterbox's bars and of a crop's padding,
            in the output's units (0-255 levels for ``uint8``, the value itself for floats). Default
            ``(0.0, 0.0, 0.0)``, black. Allowed: finite numbers.
        seed (int | None): Seeds random crops and random clips (with each video's ``position`` and ``epoch``):
            the same seed gives the same windows and clips. Default ``None``: 0.
        dtype (str | numpy.dtype): The element type: ``"uint8"`` (default), ``"uint16"`` (RGB48: sources of
            10 or 12 bits lossless, as ``ffmpeg -pix_fmt rgb48le``; 8-bit ones times 257), ``"float32"`` or
            ``"float16"`` (0-255), ``"float32_unit"`` or ``"float16_unit"`` (0-1; from the 16-bit levels for
            sources of more than 8 bits). NumPy dtypes (``np.float32``) are taken by name.
        normalize (tuple[tuple[float, float, float], tuple[float, float, float]] | None): ``((mean_r, mean_g,
            mean_b), (std_r, std_g, std_b))``: ``(x - mean) / std`` per channel, in the dtype's units. Default
            ``None``. Allowed: a float ``dtype``, finite means, finite non-zero stds.
        tonemap (str | None): HDR (PQ, HLG) to SDR BT.709, fused into the conversion: ``"hable"``,
            ``"mobius"``, ``"reinhard"`` or ``"clip"``, with options as ffmpeg's ``tonemap`` filter spells them
            (``"hable:peak=10:desat=0"``, ``"mobius:param=0.5"``; ``peak`` 0.01 to 100, ``desat`` 0 to 100). SDR
            frames pass unchanged. Default ``None``: no tone mapping.
        layout (str): The order of each sequence's dimensions: ``"FHWC"`` (default), ``"FCHW"`` or ``"CFHW"``;
            a batch adds a leading N.
        pack (bool): ``True``: fill batches with sequences of consecutive videos whose frame shapes match (many
            short clips, full batches; each sequence names its video). Default ``False``: a batch never spans
            two videos.
        huge_pages (bool): ``True``: batch buffers of 8 MiB or more on the system's reserved huge pages
            (``sysctl vm.nr_hugepages=N``) while enough are free, ordinary memory otherwise (never an error;
            :attr:`huge_page_allocations` counts them). Default ``False``.
        autorotate (bool): ``True`` (default): frames turned upright by the video's display matrix (phone
            videos) before the resize and crop, as ``ffmpeg`` shows them. ``False``: as coded (``ffmpeg
            -noautorotate``); ``Sequence.orientation`` still says the turn.
        strict (bool): ``False`` (default, as the ``ffmpeg`` CLI): damaged data does not fail a video; every
            picture that decodes is delivered, marked in ``Sequence.damaged``, and those that do not leave
            ``Sequence.holes``. ``True`` (``ffmpeg -xerror``): the video fails at its first damage with
            :class:`VideoError` (code ``corrupt``), after the frames before it.
        low_latency (bool): ``True``: the live preset: slice threads only, a 64 KiB probe, no analysis beyond
            the first packets, and full batches delivered at once (a video's last batch is then not always
            marked ``is_last``). Default ``False``.
        max_queued (tuple[int, int] | None): ``(videos, bytes)``: the most videos and bytes fed but not yet
            taken by the decoder; :meth:`feed` waits and :meth:`try_feed` returns ``None`` while it is full (an
            empty queue always takes one video). Default ``None``: 64 videos and 1 GiB. Allowed: 1 to 2**20
            videos, at least 1 byte.
        max_batch_bytes (int | None): The most bytes one batch may take (``batch_size x sequence_length x``
            a frame's bytes), checked when the operator is made and before each batch: a video whose batches
            would not fit fails alone with :class:`VideoError`. Default ``None``: 4 GiB. Allowed: at least 1.
        max_container_samples (int | None): The most samples (frames and audio packets) an MP4/MOV's tables
            may claim; a video claiming more fails before the demuxer reads it. Default ``None``: 2**22.
            Allowed: at least 1.
        live_buffer_bytes (int | None): Bytes of a live video buffered ahead of the decoder; when full,
            :meth:`LiveVideo.push` waits. Default ``None``: 8 MiB. Allowed: at least 4096.
        stall_timeout (float | None): Seconds the decoder waits for a live video's next chunk before failing
            it with :class:`VideoError`. Default ``None``: 30 s. Allowed: at least 0.001.
        stride (int | None): Frames between consecutive frames of a sequence. Default ``None``: 1. Allowed: 1
            to 2**24.
        step (int | None): Frames between the first frames of consecutive sequences (smaller than a sequence's
            span: they overlap). Default ``None``: ``sequence_length``. Allowed: 1 to 2**24; not with
            ``clips``.
        clips (int | None): This many clips per whole video, each one sequence, placed by ``clip_sampler``
            (whole videos only: a live video fails). Default ``None``: every sequence. Allowed: 1 to 65536.
        clip_sampler (str): With ``clips``: ``"random"`` (default; start frames drawn from ``seed``, the video's
            ``position`` and ``epoch``: new clips every epoch) or ``"regular"`` (evenly spaced).
        clip_policy (str): With ``clips``, what a clip holds in a video shorter than its span: ``"cut"``
            (default; the frames there are, under ``last_sequence_policy``), ``"repeat_last"`` (the last frame
            repeated), ``"wrap"`` (from the first frame again) or ``"error"`` (the video fails).
        fps (float | None): Resample to this many frames per second (the frame shown at each ``k / fps``);
            stride, step and clips then count resampled frames. Default ``None``. Allowed: above 0, at most 1000.
        start (float | None): Only frames shown from ``start`` seconds (from the first frame) on. Default
            ``None``. Allowed: 0 or more, finite.
        end (float | None): Only frames shown before ``end`` seconds. Default ``None``. Allowed: finite, after
            ``start``.
        indices (list[int] | None): Exactly these display indices, ``sequence_length`` at a time (an index past
            a video's end fails that video). Default ``None``. Allowed: 1 to 2**20 entries, non-decreasing; not
            with any other sampling keyword.
        audio (bool): ``True``: each sequence carries the audio played while its frames are shown
            (``Sequence.audio``, an :class:`AudioSamples`; empty for a video without audio). Default ``False``.
        audio_sample_rate (int | None): With ``audio=True``, the samples a second. Default ``None``: the
            stream's. Allowed: 1000 to 384000.
        audio_channels (int | None): With ``audio=True``, the channels (downmixed or upmixed as ``ffmpeg -ac``).
            Default ``None``: the stream's. Allowed: 1 to 16.
        audio_stream (int | None): With ``audio=True``, the container's index of the audio stream. Default
            ``None``: the one ``ffmpeg`` picks.
        storage_options (dict[str, Any] | None): How remote videos (``s3://``, ``gs://``, ``az://``,
            ``https://``) fed by :meth:`feed_file` or :meth:`feed_url` are read: fsspec's names (``key``,
            ``secret``, ``token``, ``endpoint_url``, ``region_name``, ``anon``, ``account_name``,
            ``client_kwargs={...}``...) and framefeed's: ``ca_file``, ``request_bytes`` (64 KiB to 256 MiB,
            default 4 MiB), ``in_flight`` (1 to 64, default 8), ``memory_bytes`` (twice ``request_bytes`` to 16
            GiB, default 64 MiB), ``timeout`` (seconds, 0.1 to 3600, default 30), ``retries`` (0 to 100, default
            10), ``seek_mode`` (``"exact"``, the default, or ``"approximate"``: a Matroska or WebM video numbered
            by time from its Cues, not read through to index it; see the remote videos guide). Default
            ``None``: credentials from the environment.
        index_cache (str | os.PathLike | None): A directory where remote videos' indexes are kept, so that a
            video opened again costs one ``HEAD``. Default ``None``.

    Raises:
        ValueError: A setting out of its allowed range, or keywords that do not go together.
        DeviceError: ``device`` names a GPU that cannot be used.

    Examples:
        >>> import framefeed as ff
        >>> inp = ff.VideoInput(16, 2, last_sequence_policy="pad")
        >>> inp.feed(ff.SAMPLE_MP4, label="sample.mp4")
        0
        >>> inp.close()
        >>> [batch.numpy().shape for batch in inp]
        [(2, 16, 240, 320, 3), (2, 16, 240, 320, 3)]
    """

    if not TYPE_CHECKING:

        def __new__(cls, sequence_length: int, batch_size: int, **kwargs: Any) -> "VideoInput":
            dtype = kwargs.get("dtype")
            if dtype is not None and not isinstance(dtype, str):
                kwargs["dtype"] = _dtype_name(dtype)
            return super().__new__(cls, sequence_length, batch_size, **kwargs)

    else:
        # For checkers: the native signature (`_framefeed.pyi`), every keyword typed; `dtype` also takes NumPy
        # dtypes. `tests/test_typing.py` holds the two lists of keywords equal. Last, since the reference's
        # griffe keeps the last `__new__` it reads (mypy reads only this one; its body is a checker's `...`).
        def __new__(  # type: ignore[empty-body]
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

    async def batches(self) -> AsyncIterator[Batch]:
        """Every batch, as an async iterator (``async for batch in inp.batches()``), until close and the last
        batch; waiting without holding a thread.

        Yields:
            The next :class:`Batch`.

        Raises:
            VideoError: A video failed, after its decoded batches; iterate again to go on with the next one.
        """
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
    frame, ``frames`` (the one-frame :class:`Frames`) is what exports it.

    Args:
        frames (Frames): The one-frame :class:`Frames` of a read (:meth:`VideoReader.get_frame_at` makes it).
    """

    __slots__ = ("frames",)

    def __init__(self, frames: Frames) -> None:
        self.frames = frames

    @property
    def data(self) -> "np.ndarray":
        """The frame as a NumPy array: (H, W, 3), or (3, H, W) per the reader's ``dimension_order``."""
        return self.frames.data[0]

    @property
    def pts_seconds(self) -> float:
        """When the frame is shown, in stream seconds."""
        return self.frames.pts_seconds[0]

    @property
    def duration_seconds(self) -> float:
        """How long it is shown, in seconds."""
        return self.frames.duration_seconds[0]

    @property
    def index(self) -> int:
        """Its display index."""
        return self.frames.indices[0]

    @property
    def damaged(self) -> bool:
        """Whether it is damaged (concealed, or decoded from damaged data)."""
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
    """Random access to one whole video: frames by index, by range and by time, in TorchCodec's words.

    ``metadata``, ``len(reader)``, ``reader[i]`` and ``reader[a:b:s]``, :meth:`get_frame_at`,
    :meth:`get_frames_at`, :meth:`get_frames_in_range`, :meth:`get_frame_played_at`,
    :meth:`get_frames_played_at`, :meth:`get_frames_played_in_range`, :meth:`get_all_frames` and
    :meth:`get_samples_played_in_range`. Each read decodes only the GOPs its frames need (going on from where the
    last read left off when it can) and gives a :class:`Frames` (``data``, a NumPy view; ``torch.from_dlpack(frames)``
    for a tensor; ``indices``, ``pts_seconds``, ``duration_seconds``, ``damaged``). The frames are byte for byte
    the ``ffmpeg`` CLI's at those indices, turned upright. Indices and ranges as TorchCodec takes them: negative
    ones count from the end, :meth:`get_frames_in_range` is clamped to the video as Python's slices are, index
    lists may be lists, NumPy arrays or torch tensors.

    One reader may be shared by threads; the GIL is released while it decodes. ``with VideoReader(...) as r:``
    closes it at the end. A reader used in a process forked after it opened (a DataLoader worker) opens its
    source again there, once; a reader pickles as its source and keywords and opens again where it is unpickled
    (a buffer travels as its bytes; a file object as itself, so fsspec's files travel and ``open()``'s do not; a
    file object that cannot seek, as the bytes it gave).

    Args:
        source (str | os.PathLike | bytes | BinaryIO): The video: a path; a remote video's URL (``s3://``,
            ``gs://``, ``az://``, ``https://``: read by byte ranges, only the index and each read's GOPs, with
            ``storage_options``); ``bytes`` or any buffer; or a binary file object (fsspec's, s3fs',
            smart_open's, ``open()``'s, ``io.BytesIO``), read lazily through ``seek`` and ``read`` (a file object
            over a file on disk is read from that file at offsets; one that cannot seek is read through once).
        seek_mode (str): TorchCodec's ``"exact"`` (default) or ``"approximate"``. Exact: framefeed's index,
            read from the container without decoding (a remote Matroska or WebM video is read through once to
            index it). ``"approximate"``: a remote Matroska or WebM video (a URL, or a file object read through
            ``seek`` and ``read``) is numbered by time from its
            Cues and frame rate instead, frame ``i`` being the one shown ``i / fps`` after the first, and only
            the GOPs the reads need are fetched; on a constant frame rate these are the exact frames. Other
            sources give the same frames either way (``storage_options={"seek_mode": ...}`` sets it for every
            API).
        stream_index (int | None): Accepted when it names the video stream framefeed reads
            (``metadata.stream_index``, the one the ``ffmpeg`` CLI picks); another raises ``ValueError``. Default
            ``None``.
        dimension_order (str): ``"NHWC"`` (default; frames (H, W, 3)) or ``"NCHW"`` (frames (3, H, W)).
        threads (int | None): Decoder threads (TorchCodec's ``num_ffmpeg_threads``). Default ``None``: the cores
            this process may use, shared among the DataLoader's workers inside one (``framefeed._threads``).
            ``0``: one per core. Allowed: 0 to 256.
        device (str): ``"cpu"`` (default), ``"cuda"``, ``"cuda:N"`` or ``"auto"``, as for
            :class:`VideoInput`; on a GPU, reads give :class:`Frames` in GPU memory (export them with DLPack).
        cpu_fallback (bool): As for :class:`VideoInput`. Default ``True``.
        nvdec_driver (str): As for :class:`VideoInput`: ``"direct"`` (default) or ``"hwaccel"``.
        resize (tuple[int, int] | None): As for :class:`VideoInput`. Default ``None``.
        resize_shorter (int | None): As for :class:`VideoInput`. Default ``None``.
        resize_mode (str): As for :class:`VideoInput`: ``"exact"`` (default), ``"fill"`` or ``"letterbox"``.
        interpolation (str): As for :class:`VideoInput`: ``"bilinear"`` (default), ``"nearest"``,
            ``"bicubic"`` or ``"area"``.
        resize_stage (str): As for :class:`VideoInput`: ``"yuv"`` (default) or ``"rgb"``.
        crop (int | tuple[int, int] | None): As for :class:`VideoInput` (one window per read). Default ``None``.
        crop_pos (str | tuple[float, float] | None): As for :class:`VideoInput`. Default ``None``: centred.
        out_of_bounds (str): As for :class:`VideoInput`: ``"error"`` (default), ``"pad"`` or ``"trim"``.
        fill (tuple[float, float, float]): As for :class:`VideoInput`. Default ``(0.0, 0.0, 0.0)``.
        seed (int | None): As for :class:`VideoInput` (random crops). Default ``None``: 0.
        dtype (str | numpy.dtype): As for :class:`VideoInput`: ``"uint8"`` (default), ``"uint16"``,
            ``"float32"``, ``"float16"``, ``"float32_unit"``, ``"float16_unit"``, or a NumPy dtype.
        normalize (tuple[tuple[float, float, float], tuple[float, float, float]] | None): As for
            :class:`VideoInput`. Default ``None``.
        tonemap (str | None): As for :class:`VideoInput`. Default ``None``.
        autorotate (bool): As for :class:`VideoInput`. Default ``True``.
        strict (bool): As for :class:`VideoInput`; ``True`` fails a read that meets damaged data with
            :class:`VideoError`. Default ``False``.
        audio_sample_rate (int | None): The sample rate :meth:`get_samples_played_in_range` gives. Default
            ``None``: the stream's. Allowed: 1000 to 384000.
        audio_channels (int | None): The channels it gives. Default ``None``: the stream's. Allowed: 1 to 16.
        audio_stream (int | None): The container's index of the audio stream it reads. Default ``None``: the
            one ``ffmpeg`` picks.
        storage_options (dict[str, Any] | None): A remote source's credentials and settings, as for
            :class:`VideoInput`. Default ``None``: the environment's.
        index_cache (str | os.PathLike | None): A directory of remote videos' indexes, as for
            :class:`VideoInput`. Default ``None``.

    Raises:
        ValueError: A setting out of its allowed range, or a ``seek_mode`` or ``stream_index`` not allowed.
        OSError: A path that cannot be opened.
        VideoError: A source that is not a video framefeed can read, or a remote one that cannot be reached
            (code ``source_unavailable``).
        TypeError: A file object opened in text mode.

    Examples:
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

    if not TYPE_CHECKING:

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
            native = kwargs
            if seek_mode == "approximate":
                # The remote source's setting (`storage_options`' own key).
                native = dict(kwargs, storage_options={**(kwargs.get("storage_options") or {}), "seek_mode": seek_mode})
            self = super().__new__(cls, source, **native)
            if stream_index is not None:
                read = self.metadata.stream_index
                if stream_index != read:
                    raise ValueError(
                        f"stream_index is {stream_index}; allowed: {read}, the video stream framefeed reads in this "
                        "file (the one the ffmpeg CLI picks), or None"
                    )
            self._keywords = dict(kwargs, seek_mode=seek_mode, stream_index=stream_index)
            return self

    else:
        # For checkers: the native signature (`_framefeed.pyi`); `dtype` also takes NumPy dtypes.
        def __new__(  # type: ignore[empty-body]
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
        """The frames at these display indices, in this order, repeats allowed.

        Args:
            indices (list[int] | range | numpy.ndarray | torch.Tensor): Display indices (negative from the end):
                a list or tuple, a range, a NumPy array or a torch tensor of integers.

        Returns:
            A :class:`Frames` of them.

        Raises:
            IndexError: An index out of range.
            TypeError: An index that is not an integer.
            VideoError: A frame that does not decode (a hole), or damaged data with ``strict=True``.
        """
        return super().get_frames_at(_index_list(indices))

    def get_frames_played_at(self, seconds: TimeList) -> Frames:  # type: ignore[override]
        """The frame shown at each of these times.

        Args:
            seconds (list[float] | numpy.ndarray | torch.Tensor): Times in stream seconds: a list or tuple, a
                NumPy array or a torch tensor.

        Returns:
            A :class:`Frames` of them, in this order.

        Raises:
            IndexError: A time outside ``[metadata.begin_stream_seconds, metadata.end_stream_seconds)``, as
                :meth:`get_frame_played_at` raises.
        """
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
        """The frames shown in ``[start_seconds, stop_seconds)``, the range checked as TorchCodec checks it.

        Args:
            start_seconds (float): The range's start, in stream seconds: in ``[metadata.begin_stream_seconds,
                metadata.end_stream_seconds)``.
            stop_seconds (float): Its end (excluded): from ``start_seconds`` to ``metadata.end_stream_seconds``.

        Returns:
            A :class:`Frames` of them, in display order.

        Raises:
            ValueError: ``start_seconds`` after ``stop_seconds`` or outside the stream, or ``stop_seconds`` after
                ``metadata.end_stream_seconds``.
        """
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
        """One frame, by display index.

        Args:
            index (int): Its display index (negative from the end).

        Returns:
            The :class:`Frame`.

        Raises:
            IndexError: An index out of range.
        """
        return Frame(super().get_frames_at([operator.index(index)]))

    def get_frame_played_at(self, seconds: float) -> Frame:
        """The frame shown at a time.

        Args:
            seconds (float): The time, in stream seconds.

        Returns:
            The :class:`Frame`.

        Raises:
            IndexError: A time outside ``[metadata.begin_stream_seconds, metadata.end_stream_seconds)``, as
                TorchCodec raises.
        """
        meta = self.metadata
        if not meta.begin_stream_seconds <= seconds < meta.end_stream_seconds:
            raise IndexError(
                f"no frame is shown at {seconds} s: allowed from {meta.begin_stream_seconds} s up to (not including) "
                f"{meta.end_stream_seconds} s"
            )
        return Frame(super().get_frames_played_at([float(seconds)]))

    def get_all_frames(self) -> Frames:
        """Every frame of the video, in display order (memory: the whole decoded video).

        Returns:
            A :class:`Frames` of every frame.
        """
        return self.get_frames_in_range(0, len(self))


def _signature(native: type, *before: inspect.Parameter) -> inspect.Signature:
    """The native constructor's signature, which ``help()`` and ``inspect.signature`` show for the Python class
    (its ``__new__`` passes the keywords on): every keyword with its default (``fill``'s written out), and the
    Python class's own keywords (``before``) ahead of the native ones."""
    sig = inspect.signature(native)
    params = [
        p.replace(default=(0.0, 0.0, 0.0)) if p.name == "fill" and p.default is Ellipsis else p
        for p in sig.parameters.values()
    ]
    positional = [p for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    keywords = [p for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    return sig.replace(parameters=positional + list(before) + keywords)


setattr(VideoInput, "__signature__", _signature(_NativeVideoInput))
setattr(
    VideoReader,
    "__signature__",
    _signature(
        _NativeVideoReader,
        inspect.Parameter("seek_mode", inspect.Parameter.KEYWORD_ONLY, default="exact"),
        inspect.Parameter("stream_index", inspect.Parameter.KEYWORD_ONLY, default=None),
    ),
)

MuxEvent = Union[MuxBatch, CameraEnded]
"""What a ``Mux`` poll gives: a batch across cameras, or a camera's end."""


class Mux(_NativeMux):
    """Many live cameras, one model: batches of up to ``batch_size`` sequences from any of the cameras.

    A batch goes out when full or ``deadline`` seconds after its oldest sequence was ready (DeepStream's
    ``nvstreammux``, Triton's dynamic batching): a :class:`MuxBatch`, its sequences of one shape (give every camera
    a ``resize`` when they differ in size), oldest first. Cameras join with :meth:`add_url`, :meth:`add_live` or
    :meth:`add_input` and leave with :meth:`remove` while the mux runs; each ends alone, with a
    :class:`CameraEnded` after its last sequence (a failing camera's carries its exception). Poll with
    ``for event in mux``, ``async for event in mux``, :meth:`next_event`, :meth:`next_event_async` or
    :meth:`try_next_event`; iteration ends after :meth:`close` and every camera's end. Dropping the mux stops
    every camera it made.

    Args:
        batch_size (int): The most sequences a batch holds. Allowed: 1 to 65536.
        deadline (float): Seconds a batch waits at most after its oldest sequence was ready. Allowed: above 0,
            at most 3600.
        policy (str): ``"every_frame"`` (default; nothing lost: a consumer that falls behind holds the cameras
            back within their buffers) or ``"latest_only"`` (each camera's newest sequence; :meth:`stats` counts
            what was dropped).
        sequence_length (int): Frames in each camera's sequences. Default 1 (per-frame models). Allowed: 1 to
            65536.
        **camera: Any other keyword of :class:`VideoInput` (``resize``, ``dtype``, ``device``...; typed as
            ``framefeed.types.CameraSettings``) for every camera's operator, whose batch size is 1. Checked here.

    Raises:
        ValueError: A setting out of its allowed range, the mux's or a camera keyword's.

    Examples:
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

    if not TYPE_CHECKING:

        def __new__(cls, batch_size, deadline, *, policy="every_frame", sequence_length=1, **camera):
            self = super().__new__(cls, batch_size, deadline, policy=policy)
            # The cameras' settings are checked now, not at the first camera.
            VideoInput(sequence_length, 1, **camera).close()
            self._camera = dict(camera, sequence_length=sequence_length, batch_size=1)
            return self

    else:

        def __new__(  # type: ignore[empty-body]
            cls,
            batch_size: int,
            deadline: float,
            *,
            policy: types.MuxPolicy = "every_frame",
            sequence_length: int = 1,
            **camera: Unpack[types.CameraSettings],
        ) -> "Mux": ...

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
        """Adds a camera pulled from ``url``: a live source (``rtsp://``, ``srt://``, ``rtmp://``, an HLS
        playlist, MPEG-TS over ``http://``) read through FFmpeg's protocols, reconnected after a drop.

        Args:
            url (str): The camera's URL.
            label (str | int | None): The camera's label. Default ``None``: the URL without its credentials
                (:func:`redact_url`).
            schemes (list[str] | None): As for :meth:`VideoInput.feed_url`.
            open_timeout (float): As for :meth:`VideoInput.feed_url`. Default 10.0.
            read_timeout (float): As for :meth:`VideoInput.feed_url`. Default 5.0.
            reconnect (int): As for :meth:`VideoInput.feed_url`. Default 5.
            reconnect_initial (float): As for :meth:`VideoInput.feed_url`. Default 0.5.
            reconnect_max (float): As for :meth:`VideoInput.feed_url`. Default 4.0.
            rtsp_transport (str): As for :meth:`VideoInput.feed_url`: ``"tcp"`` (default) or ``"udp"``.

        Returns:
            The camera's number.

        Raises:
            ValueError: A scheme outside ``schemes``, or a setting out of its allowed range.
        """
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
            # A camera is live: through FFmpeg's protocols whatever its URL (a sender taking one connection
            # is read from its first).
            ranged=False,
        )
        camera.close()
        return self.add_input(camera, label)

    def add_live(self, label: Union[str, int]) -> Tuple[int, LiveVideo]:
        """Adds a camera the application pushes chunks to.

        Args:
            label (str | int): The camera's label.

        Returns:
            The camera's number, and the :class:`LiveVideo` to push its bytes to (then ``finish()``).
        """
        camera = self._operator()
        live = camera.feed_live(label)
        camera.close()
        return self.add_input(camera, label), live

    async def events(self) -> AsyncIterator[MuxEvent]:
        """Every event, as an async iterator, until close and every camera's end (``async for event in mux``
        does the same).

        Yields:
            A :class:`MuxBatch` or a :class:`CameraEnded`.
        """
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
