"""The types of framefeed's Python surface, for type checkers: the names every string setting accepts (the Rust
core's one vocabulary, also the CLI's and the service's), and the dictionaries ``probe()``, ``Batch.gap``,
``FileList.feed_epoch`` and ``Mux.stats`` return.

The native module also takes any case and the CLI's aliases (``"f32"``, ``"fhwc"``); checkers hold code to the
canonical names below.
"""

from __future__ import annotations

from os import PathLike
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "SeekMode",
    "ResizeStage",
    "LastSequencePolicy",
    "DType",
    "Layout",
    "ResizeMode",
    "Interpolation",
    "CropPosition",
    "OutOfBounds",
    "NvdecDriver",
    "ClipSampler",
    "ClipPolicy",
    "Orientation",
    "DimensionOrder",
    "RtspTransport",
    "MuxPolicy",
    "DynamicRange",
    "MasteringDisplay",
    "ContentLight",
    "ColorInfo",
    "StreamInfo",
    "ContainerInfo",
    "FfmpegBuild",
    "Gap",
    "EpochFeed",
    "CameraStats",
    "CameraSettings",
]

LastSequencePolicy = Literal["partial", "pad"]
"""What the last, incomplete sequence of a video becomes."""
DType = Literal["uint8", "uint16", "float32", "float16", "float32_unit", "float16_unit"]
"""The output element type (``VideoInput`` also takes a NumPy dtype)."""
Layout = Literal["FHWC", "FCHW", "CFHW"]
"""The layout of each sequence."""
ResizeMode = Literal["exact", "fill", "letterbox"]
"""How a resize to a width and height treats the aspect ratio."""
Interpolation = Literal["bilinear", "nearest", "bicubic", "area"]
"""The resize filter."""
CropPosition = Union[Literal["center", "random"], Tuple[float, float]]
"""Where the crop window sits: named, or ``(x, y)`` in [0, 1]."""
OutOfBounds = Literal["error", "pad", "trim"]
"""What a crop larger than the frame does."""
NvdecDriver = Literal["direct", "hwaccel"]
"""How NVDEC is driven on a CUDA device."""
ClipSampler = Literal["random", "regular"]
"""How clips' start frames are chosen."""
ClipPolicy = Literal["cut", "repeat_last", "wrap", "error"]
"""What a clip holds when the video is shorter than its span: the frames it has (then the last sequence
policy), its last frame repeated, its frames again from its first, or the video fails."""
DimensionOrder = Literal["NHWC", "NCHW"]
"""The order of a :class:`VideoReader`'s frame arrays: frames, then height, width, channels (or channels first)."""
ResizeStage = Literal["yuv", "rgb"]
"""Where a resize happens: on the YUV planes before the conversion to RGB (``"yuv"``, the default), or in one
swscale pass to RGB at the new size (``"rgb"``: the ``ffmpeg`` CLI's ``-vf scale=W:H:flags=F -pix_fmt rgb24``,
decord's resize)."""
SeekMode = Literal["exact", "approximate"]
"""TorchCodec's ``seek_mode``, accepted by :class:`VideoReader`: framefeed's index is exact in both (read from the
container's index, nothing decoded to build it)."""
Orientation = Literal["none", "rotate90", "rotate180", "rotate270", "hflip", "vflip", "transpose", "transverse"]
"""How frames were turned by a video's display matrix to be shown upright (``rotate90``: a quarter clockwise)."""
RtspTransport = Literal["tcp", "udp"]
"""RTSP's media transport."""
MuxPolicy = Literal["every_frame", "latest_only"]
"""What a ``Mux`` does with sequences a slow consumer has not taken: keep every one (backpressure reaches the
cameras) or keep each camera's newest (counting the dropped)."""


DynamicRange = Literal["sdr", "pq", "hlg"]
"""A stream's dynamic range, from its transfer: PQ (SMPTE ST 2084, HDR10) or HLG (ARIB STD-B67) HDR, else SDR."""


class MasteringDisplay(TypedDict):
    """A mastering display's colour volume (SMPTE ST 2086): CIE 1931 ``(x, y)`` and cd/m², each ``None`` when
    the stream leaves it out."""

    primaries: Optional[List[Tuple[float, float]]]
    """Red, green, blue."""
    white_point: Optional[Tuple[float, float]]
    min_luminance: Optional[float]
    max_luminance: Optional[float]


class ContentLight(TypedDict):
    """Content light levels (CTA-861.3), cd/m²."""

    max_cll: int
    max_fall: int


class ColorInfo(TypedDict):
    """A video stream's colour (``VideoReader.metadata.color``), each part ``None`` when unspecified; FFmpeg's
    names (``bt2020``, ``smpte2084``, ``arib-std-b67``, ``bt2020nc``, ``tv``...)."""

    bit_depth: Optional[int]
    primaries: Optional[str]
    transfer: Optional[str]
    matrix: Optional[str]
    range: Optional[str]
    dynamic_range: DynamicRange
    mastering_display: Optional[MasteringDisplay]
    """HDR static metadata, where the container gives it."""
    content_light: Optional[ContentLight]


class AudioStreamInfo(TypedDict):
    """The audio stream a :class:`framefeed.VideoReader` reads (``metadata.audio``), as its container describes
    it: each part ``None`` when the container does not say."""

    stream_index: int
    codec: str
    sample_rate: Optional[int]
    num_channels: Optional[int]
    duration_seconds: Optional[float]


class StreamInfo(TypedDict):
    """One stream of a container, as ``probe()`` reads it."""

    index: int
    kind: str
    codec: str
    profile: Optional[str]
    width: int
    height: int
    pixel_format: Optional[str]
    color_space: Optional[str]
    color_range: Optional[str]
    color_primaries: Optional[str]
    color_transfer: Optional[str]
    bit_depth: Optional[int]
    dynamic_range: Optional[DynamicRange]
    """``None`` for a stream that is not video."""
    mastering_display: Optional[MasteringDisplay]
    content_light: Optional[ContentLight]
    frame_rate: Optional[float]
    sample_rate: Optional[int]
    channels: Optional[int]
    duration: Optional[float]
    frames: Optional[int]
    rotation: Optional[float]
    """Degrees counter-clockwise from the display matrix (as ffprobe and TorchCodec report); ``None`` without
    one."""
    orientation: Optional[Orientation]
    """How framefeed turns the frames by default; ``None`` for a matrix that is not a quarter turn or a flip."""


class ContainerInfo(TypedDict):
    """What ``probe()`` returns: a container's format, duration and streams, read without decoding."""

    format: str
    format_long: str
    duration: Optional[float]
    bit_rate: Optional[int]
    streams: List[StreamInfo]


class FfmpegBuild(TypedDict):
    """What ``ffmpeg_build()`` returns: the FFmpeg this module decodes with (the one inside the module in the
    self-contained wheel, the system's when built from source)."""

    version: str
    configuration: str
    license: str
    libavcodec: Tuple[int, int, int]
    protocols: List[str]


class Gap(TypedDict):
    """``Batch.gap``: a URL source's break before this batch, and the reconnects it took."""

    frames_before: int
    seconds: float
    attempts: int
    reconnects: int


class EpochFeed(TypedDict):
    """What ``FileList.feed_epoch`` did: files fed, and those that could not be read with why."""

    fed: int
    unreadable: List[Tuple[PathLike[str], str]]


class CameraStats(TypedDict):
    """One row of ``Mux.stats()``: what a camera has done so far."""

    camera: int
    label: Union[str, int]
    sequences: int
    dropped: int
    ended: bool


_Rgb = Tuple[float, float, float]


class CameraSettings(TypedDict, total=False):
    """The keywords of a ``Mux``'s camera operators: every keyword of ``VideoInput`` but ``sequence_length``
    (the mux's own keyword) and ``batch_size`` (1: the mux makes the batches)."""

    last_sequence_policy: LastSequencePolicy
    blocking: bool
    decoder_threads: Optional[int]
    prefetch_batches: int
    device: str
    cpu_fallback: bool
    nvdec_driver: NvdecDriver
    resize: Optional[Tuple[int, int]]
    resize_shorter: Optional[int]
    resize_mode: ResizeMode
    interpolation: Interpolation
    resize_stage: ResizeStage
    crop: Optional[Union[int, Tuple[int, int]]]
    crop_pos: Optional[CropPosition]
    out_of_bounds: OutOfBounds
    fill: _Rgb
    seed: Optional[int]
    dtype: Union[DType, "np.dtype[Any]", type]
    normalize: Optional[Tuple[_Rgb, _Rgb]]
    tonemap: Optional[str]
    layout: Layout
    pack: bool
    huge_pages: bool
    autorotate: bool
    strict: bool
    low_latency: bool
    max_queued: Optional[Tuple[int, int]]
    max_batch_bytes: Optional[int]
    max_container_samples: Optional[int]
    live_buffer_bytes: Optional[int]
    stall_timeout: Optional[float]
    stride: Optional[int]
    step: Optional[int]
    clips: Optional[int]
    clip_sampler: ClipSampler
    clip_policy: ClipPolicy
    fps: Optional[float]
    start: Optional[float]
    end: Optional[float]
    indices: Optional[List[int]]
    audio: bool
    audio_sample_rate: Optional[int]
    audio_channels: Optional[int]
    audio_stream: Optional[int]
    storage_options: Optional[Dict[str, Any]]
    index_cache: Optional[Union[str, "PathLike[str]"]]
