"""Type stubs of the native module (the PyO3 binding); `framefeed` re-exports everything here."""

from os import PathLike
from typing import Any, Awaitable, BinaryIO, Dict, Iterator, List, Optional, Tuple, Union

from typing_extensions import Self, disjoint_base, final

from .types import (
    AudioStreamInfo,
    CameraStats,
    ClipPolicy,
    ClipSampler,
    ColorInfo,
    ContainerInfo,
    FfmpegBuild,
    DimensionOrder,
    CropPosition,
    DType,
    EpochFeed,
    Gap,
    Interpolation,
    ResizeStage,
    LastSequencePolicy,
    Layout,
    MuxPolicy,
    NvdecDriver,
    Orientation,
    OutOfBounds,
    ResizeMode,
    RtspTransport,
)

_Label = Union[str, int]
_Buffer = Any  # bytes, bytearray, memoryview, a NumPy array: anything with the buffer protocol

__all__ = [
    "VideoInput",
    "VideoReader",
    "VideoMetadata",
    "Frames",
    "LiveVideo",
    "FileList",
    "Batch",
    "Sequence",
    "AudioSamples",
    "decode_audio",
    "Mux",
    "MuxBatch",
    "MuxEntry",
    "CameraEnded",
    "probe",
    "cuda_status",
    "ffmpeg_build",
    "redact_url",
    "is_remote_url",
    "segments",
    "_segments_from_index",
    "list_remote",
    "_video_metadata",
    "_frames",
    "SAMPLE_MP4",
    "ERROR_CODES",
    "LIBRARY_DEFAULTS",
    "__version__",
]
SAMPLE_MP4: bytes
ERROR_CODES: Dict[str, Tuple[str, Optional[int], str]]
"""framefeed's table of error codes: code -> (``"library"`` or ``"service"``, the HTTP status the service refuses a
request with or ``None``, what went wrong)."""
LIBRARY_DEFAULTS: Dict[str, Union[str, float, int]]
"""The library's defaults of the keywords that name a choice or a URL option (what the keywords default to)."""
__version__: str

def decode_audio(
    data: Union[str, PathLike[str], _Buffer],
    *,
    sample_rate: Optional[int] = None,
    channels: Optional[int] = None,
    stream: Optional[int] = None,
) -> AudioSamples:
    """The whole audio stream (any container, with or without video), the ``ffmpeg`` CLI's samples."""

def probe(data: Union[str, PathLike[str], _Buffer]) -> ContainerInfo:
    """What a container holds (format, duration, streams), without decoding it: from a path (read where the
    demuxer looks, never whole), a remote video's URL (by byte ranges, credentials from the environment) or the
    encoded bytes."""

def ffmpeg_build() -> FfmpegBuild:
    """The FFmpeg this module decodes with: ``version``, ``configuration`` (its configure line), ``license``,
    ``libavcodec`` (major, minor, micro) and ``protocols`` (its input protocols: a URL needs its scheme's)."""

def cuda_status() -> Tuple[bool, str]:
    """Whether this build can decode on a GPU, and why not if it cannot."""

def segments(
    video: Union[str, PathLike[str], _Buffer],
    every: int,
    *,
    storage_options: Optional[Dict[str, Any]] = None,
    index_cache: Optional[Union[str, PathLike[str]]] = None,
) -> List[Tuple[int, int]]:
    """A whole video's frames cut at keyframes into parts of at least ``every`` frames, as ``(first, end)``
    display indices (feed each with ``segment=(first, end)``).

    Args:
        video: a path, a remote video's URL (read by byte ranges: an MP4's ``moov`` only), or the encoded bytes.
        every: the shortest part, in frames (the last may be shorter).
        storage_options: a remote video's credentials and settings, as :class:`VideoInput` takes them (default:
            the environment's).
        index_cache: a directory of remote videos' indexes, as :class:`VideoInput` takes it.
    """

def _segments_from_index(
    video: Union[str, PathLike[str], _Buffer],
    every: int,
    *,
    storage_options: Optional[Dict[str, Any]] = None,
    index_cache: Optional[Union[str, PathLike[str]]] = None,
) -> Optional[List[Tuple[int, int]]]:
    """:func:`segments` from the container's own index only: ``None`` where it lists no packets."""

def list_remote(url: str, *, storage_options: Optional[Dict[str, Any]] = None) -> List[str]:
    """The objects under a remote URL (``s3://bucket/videos/``, ``gs://``, ``az://``), as URLs in name order,
    hidden entries (a path part starting with ``.``) left out; ``url`` itself where it names one object (an
    ``http(s)://`` URL always: HTTP has no listing).

    Args:
        url: a prefix or an object.
        storage_options: credentials and endpoint, as :class:`VideoInput` takes them (default: the
            environment's).

    Raises:
        VideoError: nothing is there (``source_unavailable``), or the store refused the listing.
    """

def _frames(
    data: Any, indices: List[int], pts: List[float], durations: List[float], damaged: List[bool]
) -> Frames:
    """A :class:`Frames` from what it pickled as: a copy of its array, and its lists."""

def _video_metadata(fields: Dict[str, Any]) -> VideoMetadata:
    """A :class:`VideoMetadata` from the fields it pickled as."""

def redact_url(url: str) -> str:
    """``url`` without its credentials, as framefeed labels and logs URLs."""

def is_remote_url(url: str) -> bool:
    """Whether framefeed reads ``url`` by byte ranges as a remote object (``s3://``, ``gs://``, ``az://``,
    ``http(s)://`` but for an HLS or DASH playlist), with ``storage_options``."""

@final
class AudioSamples:
    """Audio samples (TorchCodec's ``AudioSamples`` fields): ``data`` float32 of shape (channels, samples) in
    [-1, 1], ``pts_seconds`` when the first plays, ``duration_seconds``, ``sample_rate``. Empty (shape (0, 0),
    rate 0) for a video without audio."""

    @property
    def data(self) -> Any: ...
    @property
    def pts_seconds(self) -> float: ...
    @property
    def duration_seconds(self) -> float: ...
    @property
    def sample_rate(self) -> int: ...
    @property
    def num_channels(self) -> int: ...
    def numpy(self) -> Any: ...
    def __dlpack__(self, **kwargs: Any) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...
    def __len__(self) -> int: ...

@final
class Sequence:
    """One sequence of a batch."""

    @property
    def shape(self) -> Tuple[int, int, int, int]: ...
    @property
    def valid_frames(self) -> int: ...
    @property
    def padded_frames(self) -> int: ...
    @property
    def first_frame(self) -> int: ...
    @property
    def indices(self) -> List[int]: ...
    @property
    def pts(self) -> List[float]: ...
    @property
    def audio(self) -> Optional[AudioSamples]:
        """With ``audio=True``: the samples played while its frames are shown (empty without audio); else
        ``None`` (and for sampled clips of a live video)."""
    @property
    def damaged(self) -> List[bool]:
        """Whether each real frame is damaged (concealed, or decoded from damaged data)."""
    @property
    def holes(self) -> List[Tuple[int, float]]:
        """``(display index, seconds)`` of the holes met since the video's previous sequence."""
    @property
    def ended_early(self) -> Optional[str]:
        """On a video's last sequence: why reading stopped before the end of its data, if it did."""
    @property
    def arrivals(self) -> List[float]: ...
    @property
    def crop_window(self) -> Optional[Tuple[int, int, int, int]]: ...
    @property
    def orientation(self) -> Orientation:
        """How the frames were turned by the video's display matrix before the resize and crop."""
    @property
    def color(self) -> ColorInfo:
        """The video's colour: bit depth, primaries, transfer, matrix, range, dynamic range (``"sdr"``,
        ``"pq"``, ``"hlg"``) and HDR static metadata, as its stream gives them."""
    @property
    def resized(self) -> Optional[Tuple[int, int]]: ...
    @property
    def video_id(self) -> int: ...
    @property
    def label(self) -> Optional[_Label]: ...
    @property
    def ends_video(self) -> bool: ...
    def numpy(self) -> Any:
        """The sequence as a NumPy array viewing the batch's buffer (no copy)."""
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...

@final
class Batch:
    """Up to `batch_size` sequences in one buffer; exported without a copy through DLPack."""

    @property
    def video_id(self) -> int: ...
    @property
    def label(self) -> Optional[_Label]: ...
    @property
    def index(self) -> int: ...
    @property
    def is_last(self) -> bool: ...
    @property
    def latency(self) -> Optional[float]: ...
    @property
    def gap(self) -> Optional[Gap]: ...
    @property
    def is_packed(self) -> bool: ...
    @property
    def shape(self) -> Optional[Tuple[int, ...]]: ...
    @property
    def frame_shape(self) -> Tuple[int, int, int]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def layout(self) -> str: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def valid_frames(self) -> int: ...
    @property
    def device(self) -> str: ...
    @property
    def decoded_on(self) -> str: ...
    @property
    def sequences(self) -> List[Sequence]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> Sequence: ...
    def numpy(self) -> Any:
        """The whole batch as one NumPy array viewing its buffer (no copy); ValueError for a ragged batch."""
    def to_host(self) -> Batch:
        """A copy in host memory."""
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...

@final
class LiveVideo:
    """A producer's handle on a live video."""

    @property
    def id(self) -> int: ...
    @property
    def received(self) -> int: ...
    def push(self, chunk: _Buffer) -> None: ...
    def try_push(self, chunk: _Buffer) -> bool: ...
    def push_async(self, chunk: _Buffer) -> Awaitable[None]: ...
    def finish(self) -> None: ...
    def abort(self, reason: str) -> None: ...

@final
class FileList:
    """Files fed epoch by epoch, shuffled and sharded."""

    def __new__(cls, paths: List[Union[str, PathLike[str]]]) -> Self: ...
    def shuffle(self, seed: int) -> FileList: ...
    def shard(self, rank: int, world: int) -> FileList: ...
    def epoch(self, epoch: int) -> List[PathLike[str]]: ...
    def feed_epoch(self, input: VideoInput, epoch: int) -> EpochFeed: ...
    def __len__(self) -> int: ...

@disjoint_base
class VideoInput:
    """The streaming video input operator."""

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
        dtype: DType = "uint8",
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
        index_cache: Optional[Union[str, PathLike[str]]] = None,
    ) -> Self: ...
    def feed(
        self,
        data: _Buffer,
        label: Optional[_Label] = None,
        *,
        position: Optional[int] = None,
        epoch: int = 0,
        segment: Optional[Tuple[int, int]] = None,
    ) -> int: ...
    def feed_file(
        self,
        path: Union[str, PathLike[str]],
        label: Optional[_Label] = None,
        *,
        position: Optional[int] = None,
        epoch: int = 0,
        segment: Optional[Tuple[int, int]] = None,
    ) -> int: ...
    def try_feed(
        self,
        data: _Buffer,
        label: Optional[_Label] = None,
        *,
        position: Optional[int] = None,
        epoch: int = 0,
        segment: Optional[Tuple[int, int]] = None,
    ) -> Optional[int]: ...
    def feed_async(
        self,
        data: _Buffer,
        label: Optional[_Label] = None,
        *,
        position: Optional[int] = None,
        epoch: int = 0,
        segment: Optional[Tuple[int, int]] = None,
    ) -> Awaitable[int]: ...
    def feed_live(self, label: Optional[_Label] = None) -> LiveVideo: ...
    def feed_url(
        self,
        url: str,
        label: Optional[_Label] = None,
        *,
        schemes: Optional[List[str]] = None,
        open_timeout: float = 10.0,
        read_timeout: float = 5.0,
        reconnect: int = 5,
        reconnect_initial: float = 0.5,
        reconnect_max: float = 4.0,
        rtsp_transport: RtspTransport = "tcp",
        storage_options: Optional[Dict[str, Any]] = None,
        index_cache: Optional[Union[str, PathLike[str]]] = None,
    ) -> int: ...
    def close(self) -> None: ...
    @property
    def is_closed(self) -> bool: ...
    def next_batch(self, timeout: Optional[float] = None) -> Optional[Batch]: ...
    def try_next_batch(self) -> Optional[Batch]: ...
    def next_batch_async(self) -> Awaitable[Optional[Batch]]: ...
    def __iter__(self) -> Iterator[Batch]: ...
    def __next__(self) -> Batch: ...
    def set_output_size(self, width: int, height: int) -> None: ...
    @property
    def queued_videos(self) -> int: ...
    @property
    def feed_queue_len(self) -> Tuple[int, int]: ...
    @property
    def is_depleted(self) -> bool: ...
    @property
    def buffer_allocations(self) -> int: ...
    @property
    def huge_page_allocations(self) -> int: ...
    @property
    def device(self) -> str: ...
    @property
    def sequence_length(self) -> int: ...
    @property
    def batch_size(self) -> int: ...

@final
class MuxEntry:
    """One camera's sequence in a ``MuxBatch``."""

    @property
    def camera(self) -> int: ...
    @property
    def label(self) -> _Label: ...
    @property
    def sequence(self) -> Sequence: ...
    @property
    def batch(self) -> Batch: ...
    @property
    def waited(self) -> float: ...

@final
class MuxBatch:
    """A batch across cameras: sequences of one shape, oldest first."""

    @property
    def entries(self) -> List[MuxEntry]: ...
    @property
    def cameras(self) -> List[int]: ...
    @property
    def sequence_shape(self) -> Tuple[int, int, int, int]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> MuxEntry: ...
    def numpy(self) -> Any:
        """``(N, *sequence_shape)``, a copy."""

@final
class CameraEnded:
    """A camera ended after its last sequence: its video ended (``error`` is ``None``) or failed."""

    @property
    def camera(self) -> int: ...
    @property
    def label(self) -> _Label: ...
    @property
    def error(self) -> Optional[BaseException]: ...

_MuxEvent = Union[MuxBatch, CameraEnded]

@disjoint_base
class Mux:
    """Cross-camera batching with a deadline."""

    def __new__(cls, batch_size: int, deadline: float, *, policy: MuxPolicy = "every_frame") -> Self: ...
    def add_input(self, input: VideoInput, label: _Label) -> int: ...
    def remove(self, camera: int) -> bool: ...
    def close(self) -> None: ...
    def stats(self) -> List[CameraStats]: ...
    def next_event(self, timeout: Optional[float] = None) -> Optional[_MuxEvent]: ...
    def try_next_event(self) -> Optional[_MuxEvent]: ...
    def next_event_async(self) -> Awaitable[Optional[_MuxEvent]]: ...
    def __iter__(self) -> Iterator[_MuxEvent]: ...
    def __next__(self) -> _MuxEvent: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def deadline(self) -> float: ...
    @property
    def policy(self) -> MuxPolicy: ...

@final
class VideoMetadata:
    """What a :class:`VideoReader` knows of its video, read when it opened it (no frame decoded). Pickles."""

    @property
    def stream_index(self) -> int: ...
    @property
    def num_frames(self) -> int: ...
    @property
    def average_fps(self) -> float: ...
    @property
    def duration_seconds(self) -> float: ...
    @property
    def begin_stream_seconds(self) -> float: ...
    @property
    def end_stream_seconds(self) -> float: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def codec(self) -> str: ...
    @property
    def rotation(self) -> Optional[float]: ...
    @property
    def orientation(self) -> Orientation: ...
    @property
    def key_frame_indices(self) -> List[int]: ...
    @property
    def color(self) -> ColorInfo:
        """Bit depth, primaries, transfer, matrix, range, dynamic range (``"sdr"``, ``"pq"``, ``"hlg"``) and
        HDR static metadata, as the container and the stream's parameters give them."""
    @property
    def holes(self) -> List[Tuple[int, float]]:
        """``(display index, seconds)`` of the holes the reader's reads met so far."""
    @property
    def audio(self) -> Optional[AudioStreamInfo]:
        """The audio stream ``get_samples_played_in_range`` reads, or ``None`` without audio."""

@final
class Frames:
    """The frames one read gave, as one array (``data``), with each frame's index, time and duration."""

    @property
    def data(self) -> Any:
        """A NumPy view of the frames (N, H, W, 3) or (N, 3, H, W): no copy."""
    def numpy(self) -> Any: ...
    @property
    def indices(self) -> List[int]: ...
    @property
    def pts_seconds(self) -> List[float]: ...
    @property
    def duration_seconds(self) -> List[float]: ...
    @property
    def damaged(self) -> List[bool]: ...
    @property
    def shape(self) -> Tuple[int, int, int, int]: ...
    @property
    def device(self) -> str: ...
    def __len__(self) -> int: ...
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...

@disjoint_base
class VideoReader:
    """Random access to one whole video: frames by index, range and time (see the package README)."""

    def __new__(
        cls,
        source: Union[str, PathLike[str], _Buffer, BinaryIO],
        *,
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
        dtype: DType = "uint8",
        normalize: Optional[Tuple[Tuple[float, float, float], Tuple[float, float, float]]] = None,
        tonemap: Optional[str] = None,
        autorotate: bool = True,
        strict: bool = False,
        audio_sample_rate: Optional[int] = None,
        audio_channels: Optional[int] = None,
        audio_stream: Optional[int] = None,
        storage_options: Optional[Dict[str, Any]] = None,
        index_cache: Optional[Union[str, PathLike[str]]] = None,
    ) -> Self: ...
    @property
    def metadata(self) -> VideoMetadata: ...
    @property
    def device(self) -> str: ...
    @property
    def packets_decoded(self) -> int: ...
    @property
    def _source(self) -> Any:
        """What the reader was opened from (a path or URL as given, the buffer, or a file object's bytes)."""
    def close(self) -> None:
        """Frees the decoder now; later reads raise ``ClosedError``."""
    @property
    def closed(self) -> bool: ...
    def __len__(self) -> int: ...
    def frame_times(self) -> List[Tuple[float, float]]:
        """Each frame's (start, end) display time in stream seconds, from the index (nothing decoded)."""
    def __getitem__(self, key: Union[int, slice], /) -> Any:
        """Frame ``i`` as an array (H, W, 3), or frames ``a:b:s`` as one (N, H, W, 3); ``Frames`` on a GPU."""
    def get_frames_at(self, indices: List[int]) -> Frames: ...
    def get_frames_in_range(self, start: int, stop: int, step: int = 1) -> Frames: ...
    def get_frames_played_at(self, seconds: List[float]) -> Frames: ...
    def get_frames_played_in_range(self, start_seconds: float, stop_seconds: float) -> Frames: ...
    def get_samples_played_in_range(
        self, start_seconds: float, stop_seconds: Optional[float] = None
    ) -> AudioSamples:
        """The audio played from ``start_seconds`` to ``stop_seconds`` (its end with ``None``): the ``ffmpeg``
        CLI's samples of that span. Raises ``VideoError`` (``no_audio_stream``) without audio."""
