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
    "remote_index_scans",
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
    """The whole audio stream of a file or buffer (any container, with or without video): the ``ffmpeg`` CLI's
    samples.

    Args:
        data (str | os.PathLike | bytes): A path, a remote video's URL, or the encoded bytes (any buffer).
        sample_rate (int | None): Samples a second. Default ``None``: the stream's. Allowed: 1000 to 384000.
        channels (int | None): Channels. Default ``None``: the stream's. Allowed: 1 to 16.
        stream (int | None): The container's index of the audio stream. Default ``None``: the one ``ffmpeg`` picks.

    Returns:
        The :class:`AudioSamples`.

    Raises:
        VideoError: No audio stream (code ``no_audio_stream``), or data FFmpeg cannot read.
        ValueError: A setting out of its allowed range.
    """

def probe(data: Union[str, PathLike[str], _Buffer]) -> ContainerInfo:
    """What a container holds (format, streams, codecs, sizes, colour tags), without decoding it.

    Args:
        data (str | os.PathLike | bytes): A path (read where the demuxer looks, never whole), a remote video's URL
            (``s3://``, ``https://``...; by byte ranges, credentials from the environment) or the encoded bytes
            (any buffer).

    Returns:
        A ``framefeed.types.ContainerInfo`` dict: ``format``, ``format_long``, ``duration``, ``bit_rate`` and
        ``streams`` (each a ``framefeed.types.StreamInfo``: ``index``, ``kind``, ``codec``, ``width``,
        ``height``, ``pixel_format``, colour tags, ``frame_rate``, ``sample_rate``, ``channels``, ``frames``,
        ``rotation``...).

    Raises:
        VideoError: The data is not a container FFmpeg reads, or a remote video cannot be reached.
        OSError: A path that cannot be opened.
    """

def ffmpeg_build() -> FfmpegBuild:
    """The FFmpeg this module decodes with.

    Returns:
        A ``framefeed.types.FfmpegBuild`` dict: ``version`` (its release), ``configuration`` (its configure
        line), ``license``, ``libavcodec`` (major, minor, micro) and ``protocols`` (its input protocols: a URL
        needs its scheme's).
    """

def cuda_status() -> Tuple[bool, str]:
    """Whether this build can decode on a GPU (the ``cuda`` feature, a driver and NVDEC), and why not if it cannot.

    Returns:
        ``(True, what GPU)`` or ``(False, why not)``.
    """

def segments(
    video: Union[str, PathLike[str], _Buffer],
    every: int,
    *,
    storage_options: Optional[Dict[str, Any]] = None,
    index_cache: Optional[Union[str, PathLike[str]]] = None,
) -> List[Tuple[int, int]]:
    """A whole video's frames cut at keyframes into parts of at least ``every`` frames (read by demuxing, not
    decoding), to feed each with ``segment=(first, end)``: a video's parts, decoded anywhere, give exactly the
    sequences of one whole decode.

    Args:
        video (str | os.PathLike | bytes): A path (read from disk), a remote video's URL (read by byte ranges; an
            MP4's ``moov`` only), or the encoded bytes (any buffer).
        every (int): The shortest part, in frames (the last may be shorter).
        storage_options (dict[str, Any] | None): A remote video's credentials and settings, as
            ``VideoInput(storage_options=...)`` takes them. Default ``None``: the environment's.
        index_cache (str | os.PathLike | None): A directory of remote videos' indexes. Default ``None``.

    Returns:
        The parts as ``(first, end)`` display indices, in order.

    Raises:
        VideoError: The video cannot be read.
        OSError: A path that cannot be opened.
    """

def _segments_from_index(
    video: Union[str, PathLike[str], _Buffer],
    every: int,
    *,
    storage_options: Optional[Dict[str, Any]] = None,
    index_cache: Optional[Union[str, PathLike[str]]] = None,
) -> Optional[List[Tuple[int, int]]]:
    """:func:`segments` from the container's own index only (an MP4's ``moov``).

    Args:
        video (str | os.PathLike | bytes): As for :func:`segments`.
        every (int): As for :func:`segments`.
        storage_options (dict[str, Any] | None): As for :func:`segments`.
        index_cache (str | os.PathLike | None): As for :func:`segments`.

    Returns:
        The parts, or ``None`` where the container does not list its packets.
    """

def list_remote(url: str, *, storage_options: Optional[Dict[str, Any]] = None) -> List[str]:
    """The objects under a remote URL, as URLs, in name order, hidden entries (a path part starting with ``.``) left
    out.

    Args:
        url (str): A prefix (``s3://bucket/videos/``, ``gs://``, ``az://``) or an object; an ``http(s)://`` URL is
            given back as it is (HTTP has no listing).
        storage_options (dict[str, Any] | None): Credentials and endpoint, as ``VideoInput(storage_options=...)``
            takes them. Default ``None``: the environment's.

    Returns:
        The objects' URLs; ``[url]`` where it names one object.

    Raises:
        VideoError: Nothing is there (code ``source_unavailable``), or the store refused the listing.
    """

def _frames(
    data: Any, indices: List[int], pts: List[float], durations: List[float], damaged: List[bool]
) -> Frames:
    """A `Frames` from what it pickled as (`Frames.__reduce__`): its array (a copy of the frames) and its
    per-frame lists.
    """

def _video_metadata(fields: Dict[str, Any]) -> VideoMetadata:
    """A `VideoMetadata` from the dict it pickled as (`VideoMetadata.__reduce__`)."""

def redact_url(url: str) -> str:
    """A URL without its credentials (``rtsp://admin:pw@cam/1`` becomes ``rtsp://…@cam/1``), as framefeed labels and
    logs URLs.

    Args:
        url (str): The URL.

    Returns:
        The URL without its user name and password.
    """

def is_remote_url(url: str) -> bool:
    """Whether framefeed reads a URL by byte ranges as a remote object (``s3://``, ``gs://``, ``az://``, and
    ``http(s)://`` but for an HLS or DASH playlist), with ``storage_options``.

    Args:
        url (str): The URL.

    Returns:
        ``True`` for a remote object's URL.
    """

def remote_index_scans() -> int:
    """How many remote videos (or file objects) this process has read through to index them: those whose
    container has no index framefeed reads by ranges (Matroska and WebM in the exact seek mode, MPEG-TS, AVI),
    opened without an index cache that kept theirs. Each such opening reads the whole object once; ``VideoReader``
    also warns (``RuntimeWarning``) when it does.

    Returns:
        The count since the process started.
    """

@final
class AudioSamples:
    """Samples of audio: `data` is a float32 NumPy array of shape (channels, samples), values in [-1, 1];
    `pts_seconds` when its first sample plays (on the video's timeline, as the frames' `pts`),
    `duration_seconds` how long it plays, `sample_rate` samples a second. A video without audio gives empty
    samples (shape (0, 0), rate 0).
    """

    @property
    def data(self) -> Any:
        """(channels, samples) float32, a new writable array."""
    @property
    def pts_seconds(self) -> float:
        """When its first sample plays, in seconds."""
    @property
    def duration_seconds(self) -> float:
        """How long it plays, in seconds."""
    @property
    def sample_rate(self) -> int:
        """Samples a second (0 without audio)."""
    @property
    def num_channels(self) -> int:
        """Channels (0 without audio)."""
    def numpy(self) -> Any:
        """`data` as a NumPy array (a new one each call).

        Returns:
            A float32 array of shape (channels, samples).
        """
    def __dlpack__(self, **kwargs: Any) -> Any:
        """The DLPack protocol, over a new array of `data`: `torch.from_dlpack(samples)`."""
    def __dlpack_device__(self) -> Tuple[int, int]:
        """Where `data` is: the host (`(kDLCPU, 0)`)."""
    def __len__(self) -> int: ...

@final
class Sequence:
    """One sequence of a batch: `sequence_length` frames (a partial last one has fewer; a padded one counts its
    real frames in `valid_frames`).
    """

    @property
    def shape(self) -> Tuple[int, int, int, int]:
        """`(F, H, W, 3)` per the layout; F counts padding frames."""
    @property
    def valid_frames(self) -> int:
        """How many frames are real; the rest, at the end, are zeros."""
    @property
    def padded_frames(self) -> int:
        """How many zero frames pad the sequence."""
    @property
    def first_frame(self) -> int:
        """Index in its video of the first frame."""
    @property
    def indices(self) -> List[int]:
        """Display index of each real frame (0-based, the video's display order): consecutive unless sampling
        chose them or a hole lies between (see `holes`).
        """
    @property
    def pts(self) -> List[float]:
        """Presentation time in seconds of each real frame."""
    @property
    def audio(self) -> Optional[AudioSamples]:
        """The audio played while its frames are shown (`AudioSamples`), with `audio=True`: empty for a video
        without audio; `None` without `audio=True`, and for sampled clips of a live video.
        """
    @property
    def damaged(self) -> List[bool]:
        """Whether each real frame is damaged: concealed by the decoder, or decoded from damaged data. A frame not
        damaged is the same picture whichever API decodes it, and the `ffmpeg` CLI's at its time.
        """
    @property
    def holes(self) -> List[Tuple[int, float]]:
        """The holes met since the video's previous sequence, as `(display index, seconds)`: indices whose pictures
        do not decode (the frames after keep their indices). On a video's last sequence, those after its last
        frame too.
        """
    @property
    def ended_early(self) -> Optional[str]:
        """On a video's last sequence: why reading stopped before the end of its data (a file cut short), if it did."""
    @property
    def arrivals(self) -> List[float]:
        """When each real frame arrived, in seconds since the Unix epoch (the read of the packet whose decoding
        gave it).
        """
    @property
    def crop_window(self) -> Optional[Tuple[int, int, int, int]]:
        """`(x, y, width, height)` of the crop window (in the resized frame's pixels), or `None` without a crop."""
    @property
    def orientation(self) -> Orientation:
        """How the frames were turned by the video's display matrix before the resize and crop: `"none"`,
        `"rotate90"` (a quarter clockwise), `"rotate180"`, `"rotate270"`, `"hflip"`, `"vflip"`, `"transpose"` or
        `"transverse"` (`"none"` with `autorotate=False`).
        """
    @property
    def color(self) -> ColorInfo:
        """The video's colour (`types.ColorInfo`): bit depth, primaries, transfer, matrix, range, dynamic range
        (`"sdr"`, `"pq"`, `"hlg"`) and HDR static metadata, as its stream gives them.
        """
    @property
    def resized(self) -> Optional[Tuple[int, int]]:
        """`(width, height)` frames were resized to before the crop, or `None` without a resize."""
    @property
    def video_id(self) -> int:
        """The id of the video the sequence comes from."""
    @property
    def label(self) -> Optional[_Label]:
        """The label of the video the sequence comes from."""
    @property
    def ends_video(self) -> bool:
        """Whether this is its video's last sequence."""
    def numpy(self) -> Any:
        """The sequence as a NumPy array viewing the batch's buffer (no copy).

        Returns:
            An array of shape ``shape``.

        Raises:
            ValueError: A sequence in GPU memory (export it with DLPack instead).
        """
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any:
        """The DLPack protocol, for this sequence's region of the batch."""
    def __dlpack_device__(self) -> Tuple[int, int]: ...

@final
class Batch:
    """Up to `batch_size` sequences of frames from one video (or, with `pack=True`, from consecutive videos), in
    one buffer. `numpy()` (or `np.from_dlpack(batch)`, `torch.from_dlpack(batch)`) views it without copying.
    """

    @property
    def video_id(self) -> int:
        """The id of the video the batch came from (its first sequence's, in a packed batch)."""
    @property
    def label(self) -> Optional[_Label]:
        """The label the video was fed with (`str`, `int` or `None`)."""
    @property
    def index(self) -> int:
        """The batch's index within its video: 0, 1, 2... (in packed mode, within the operator)."""
    @property
    def is_last(self) -> bool:
        """Whether this is the video's last batch."""
    @property
    def latency(self) -> Optional[float]:
        """Seconds from the arrival of the batch's last real frame to the poll that handed it over (for live and
        pulled sources, how far behind the source the consumer is); `None` without frames.
        """
    @property
    def gap(self) -> Optional[Gap]:
        """For a video pulled by URL whose source dropped and was reopened before this batch's frames:
        `{"frames_before", "seconds", "attempts", "reconnects"}`; else `None`.
        """
    @property
    def is_packed(self) -> bool:
        """Whether the batch holds sequences of several videos (`pack=True`)."""
    @property
    def shape(self) -> Optional[Tuple[int, ...]]:
        """`(N, ...)` per the layout (`(N, F, H, W, 3)` by default), or `None` when the last sequence is a shorter
        partial one (the batch is then not one array).
        """
    @property
    def frame_shape(self) -> Tuple[int, int, int]:
        """`(H, W, 3)` of every frame."""
    @property
    def dtype(self) -> str:
        """The element type's NumPy name: `'uint8'`, `'uint16'`, `'float32'` or `'float16'`."""
    @property
    def layout(self) -> str:
        """`'FHWC'`, `'FCHW'` or `'CFHW'`: the order of each sequence's dimensions."""
    @property
    def nbytes(self) -> int:
        """Bytes of the batch's data (padding included)."""
    @property
    def valid_frames(self) -> int:
        """Real frames in the batch (padding excluded)."""
    @property
    def device(self) -> str:
        """`'cpu'`, or `'cuda'` for a batch in GPU memory."""
    @property
    def decoded_on(self) -> str:
        """Where the frames were decoded: `'cpu'` or `'nvdec'`."""
    @property
    def sequences(self) -> List[Sequence]:
        """The sequences, in order."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> Sequence: ...
    def numpy(self) -> Any:
        """The whole batch as one NumPy array, viewing the batch's buffer without copying.

        Returns:
            An array of shape ``shape`` (``(N, F, H, W, 3)`` by default).

        Raises:
            ValueError: A ragged batch (its last sequence shorter, ``last_sequence_policy="partial"``: use
                ``sequences[i].numpy()``), or a batch in GPU memory (``to_host()`` first, or export it to CuPy or
                PyTorch with DLPack).
        """
    def to_host(self) -> Batch:
        """A copy of the batch in host memory (of a GPU batch: waits for the GPU to finish writing it).

        Returns:
            The host :class:`Batch`.
        """
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any:
        """The DLPack protocol: a capsule viewing the batch (see `numpy`). `stream` orders a CUDA consumer's stream
        after the batch's; `max_version >= (1, 0)` gets a versioned capsule; `dl_device=(1, 0)` or `copy=True`
        exports a host copy.
        """
    def __dlpack_device__(self) -> Tuple[int, int]:
        """`(1, 0)` for a host batch, `(2, ordinal)` for a GPU batch."""

@final
class LiveVideo:
    """The producer's handle on a live video (:meth:`VideoInput.feed_live`): ``push`` chunks as they arrive, then
    ``finish()`` (or ``abort(why)``). Dropping it unfinished aborts the video.
    """

    @property
    def id(self) -> int:
        """The video's id."""
    @property
    def received(self) -> int:
        """Bytes pushed so far."""
    def push(self, chunk: _Buffer) -> None:
        """Queues the next chunk, waiting (without the GIL) while the live buffer is full (``live_buffer_bytes``).

        Args:
            chunk (bytes | bytearray | memoryview | numpy.ndarray): The next bytes of the video, as any buffer
                (referenced, not copied, when read-only).

        Raises:
            ClosedError: The video no longer takes data (finished, aborted or failed).
        """
    def try_push(self, chunk: _Buffer) -> bool:
        """Queues the next chunk if there is room now; never waits.

        Args:
            chunk (bytes | bytearray | memoryview | numpy.ndarray): The next bytes of the video.

        Returns:
            Whether it was queued (``False``: the live buffer is full).

        Raises:
            ClosedError: The video no longer takes data.
        """
    def push_async(self, chunk: _Buffer) -> Awaitable[None]:
        """:meth:`push` as an awaitable (asyncio); a cancelled push queues nothing.

        Args:
            chunk (bytes | bytearray | memoryview | numpy.ndarray): The next bytes of the video.

        Returns:
            An awaitable of ``None``, done once the chunk is queued.
        """
    def finish(self) -> None:
        """Ends the video normally: its last sequences come out."""
    def abort(self, reason: str) -> None:
        """Ends the video as failed: it raises :class:`VideoError` (code ``aborted``) after its decoded batches.

        Args:
            reason (str): Why, carried by the error.
        """

@final
class FileList:
    """A list of files fed epoch by epoch: shuffled per epoch, sharded over workers (every file in exactly one shard).

    Args:
        paths (list[str | os.PathLike]): The files, in their order.
    """

    def __new__(cls, paths: List[Union[str, PathLike[str]]]) -> Self: ...
    def shuffle(self, seed: int) -> FileList:
        """A copy that shuffles every epoch with a permutation drawn from ``seed`` and the epoch.

        Args:
            seed (int): The seed; the same seed gives the same order for the same epoch.

        Returns:
            The shuffling :class:`FileList`.
        """
    def shard(self, rank: int, world: int) -> FileList:
        """A copy keeping only one shard of the files.

        Args:
            rank (int): This shard. Allowed: ``0 <= rank < world``.
            world (int): The number of shards. Allowed: at least 1.

        Returns:
            The :class:`FileList` of shard ``rank``.

        Raises:
            ValueError: ``rank`` or ``world`` out of range.
        """
    def epoch(self, epoch: int) -> List[PathLike[str]]:
        """This shard's files for an epoch, in feeding order.

        Args:
            epoch (int): The epoch.

        Returns:
            The paths.
        """
    def feed_epoch(self, input: VideoInput, epoch: int) -> EpochFeed:
        """Reads and feeds this shard's files for an epoch into an operator (each labelled with its path), waiting
        without the GIL while its queue is full. Does not close it; run it in a thread beside the consumer.

        Args:
            input (VideoInput): The operator to feed.
            epoch (int): The epoch.

        Returns:
            ``{"fed": n, "unreadable": [(path, why), ...]}`` (``framefeed.types.EpochFeed``).

        Raises:
            ClosedError: The operator was closed.
        """
    def __len__(self) -> int: ...

@disjoint_base
class VideoInput:
    """The native operator under `framefeed.VideoInput`, whose docstring documents every keyword: feed encoded videos,
    poll batches of `batch_size` sequences of `sequence_length` frames.
    """

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
    ) -> int:
        """Queues one whole encoded video, waiting (without the GIL) while the feed queue is full.

        Args:
            data (bytes | bytearray | memoryview | numpy.ndarray): The encoded video (any container and codec
                FFmpeg reads), as any buffer. ``bytes`` and other read-only buffers are referenced, not copied
                (kept alive until decoded); writable ones (``bytearray``, a writable NumPy array) are copied once.
            label (str | int | None): The video's label, carried by its batches and errors. Default ``None``.
            position (int | None): The video's place in its dataset, which decides its random clips and crops with
                the seed and ``epoch``. Default ``None``: its id.
            epoch (int): The epoch, with ``position``: new random clips each epoch. Default 0; another value needs
                ``position``.
            segment (tuple[int, int] | None): ``(first, end)``: only the sequences whose first frame's display
                index is in ``first..end`` (one of :func:`segments`). Default ``None``: the whole video. Allowed:
                ``end > first`` (else the video fails with :class:`VideoError`, code ``bad_sampling``).

        Returns:
            The video's id (0, 1, 2... in feeding order).

        Raises:
            ValueError: ``epoch`` without ``position``.
            TypeError: A label that is not a ``str`` or a non-negative ``int``.
            ClosedError: The operator was closed.
        """
    def feed_file(
        self,
        path: Union[str, PathLike[str]],
        label: Optional[_Label] = None,
        *,
        position: Optional[int] = None,
        epoch: int = 0,
        segment: Optional[Tuple[int, int]] = None,
    ) -> int:
        """Queues the video in a file, read from disk as it is decoded (never whole in memory: a long video costs no
        more memory than a short one, and clips read only what they need), waiting (without the GIL) while the feed
        queue is full.

        Args:
            path (str | os.PathLike): The file; or a remote video's URL (``s3://``, ``gs://``, ``az://``,
                ``https://``...), opened here (one ``HEAD``) and read by byte ranges with the operator's
                ``storage_options`` and ``index_cache``.
            label (str | int | None): The video's label. Default ``None``: the path (a URL without its
                credentials).
            position (int | None): As for :meth:`feed`. Default ``None``.
            epoch (int): As for :meth:`feed`. Default 0.
            segment (tuple[int, int] | None): As for :meth:`feed`. Default ``None``.

        Returns:
            The video's id.

        Raises:
            OSError: The file cannot be opened (with its errno).
            VideoError: A remote video that cannot be reached (code ``source_unavailable``).
            ValueError: ``epoch`` without ``position``.
            ClosedError: The operator was closed.
        """
    def try_feed(
        self,
        data: _Buffer,
        label: Optional[_Label] = None,
        *,
        position: Optional[int] = None,
        epoch: int = 0,
        segment: Optional[Tuple[int, int]] = None,
    ) -> Optional[int]:
        """Like :meth:`feed`, but never waits.

        Args:
            data (bytes | bytearray | memoryview | numpy.ndarray): The encoded video (any container and codec
                FFmpeg reads), as any buffer. ``bytes`` and other read-only buffers are referenced, not copied
                (kept alive until decoded); writable ones (``bytearray``, a writable NumPy array) are copied once.
            label (str | int | None): The video's label, carried by its batches and errors. Default ``None``.
            position (int | None): The video's place in its dataset, which decides its random clips and crops with
                the seed and ``epoch``. Default ``None``: its id.
            epoch (int): The epoch, with ``position``: new random clips each epoch. Default 0; another value needs
                ``position``.
            segment (tuple[int, int] | None): ``(first, end)``: only the sequences whose first frame's display
                index is in ``first..end`` (one of :func:`segments`). Default ``None``: the whole video. Allowed:
                ``end > first`` (else the video fails with :class:`VideoError`, code ``bad_sampling``).

        Returns:
            The video's id, or ``None`` when the feed queue is full now (nothing was queued).

        Raises:
            ValueError: ``epoch`` without ``position``.
            ClosedError: The operator was closed.
        """
    def feed_async(
        self,
        data: _Buffer,
        label: Optional[_Label] = None,
        *,
        position: Optional[int] = None,
        epoch: int = 0,
        segment: Optional[Tuple[int, int]] = None,
    ) -> Awaitable[int]:
        """:meth:`feed` as an awaitable (asyncio): waits for room in the feed queue without holding a thread; a
        cancelled feed feeds nothing.

        Args:
            data (bytes | bytearray | memoryview | numpy.ndarray): The encoded video (any container and codec
                FFmpeg reads), as any buffer. ``bytes`` and other read-only buffers are referenced, not copied
                (kept alive until decoded); writable ones (``bytearray``, a writable NumPy array) are copied once.
            label (str | int | None): The video's label, carried by its batches and errors. Default ``None``.
            position (int | None): The video's place in its dataset, which decides its random clips and crops with
                the seed and ``epoch``. Default ``None``: its id.
            epoch (int): The epoch, with ``position``: new random clips each epoch. Default 0; another value needs
                ``position``.
            segment (tuple[int, int] | None): ``(first, end)``: only the sequences whose first frame's display
                index is in ``first..end`` (one of :func:`segments`). Default ``None``: the whole video. Allowed:
                ``end > first`` (else the video fails with :class:`VideoError`, code ``bad_sampling``).

        Returns:
            An awaitable of the video's id.

        Raises:
            ValueError: ``epoch`` without ``position``.
            ClosedError: The operator was closed (raised by the awaitable).
        """
    def feed_live(self, label: Optional[_Label] = None) -> LiveVideo:
        """Queues a live video whose bytes arrive over time: its batches come out while it is still arriving.

        Args:
            label (str | int | None): The video's label. Default ``None``.

        Returns:
            The :class:`LiveVideo` to push its chunks to, then ``finish()`` (or ``abort(why)``).

        Raises:
            ClosedError: The operator was closed.
        """
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
        ranged: bool = True,
    ) -> int:
        """Queues a video pulled by URL.

        An object in a store or a file over HTTP(S) (``s3://``, ``gs://``, ``az://``, ``https://...mp4``) is read
        by byte ranges, a whole video that sampling seeks in; a live source (``rtsp://``, ``srt://``, ``rtmp://``,
        an HLS playlist) is read through FFmpeg's protocols, and a drop is reopened and reported on the next batch
        (``Batch.gap``).

        Args:
            url (str): The video's URL.
            label (str | int | None): The video's label. Default ``None``.
            schemes (list[str] | None): The schemes allowed, from ``rtsp``, ``srt``, ``rtmp``, ``http``, ``https``,
                ``s3``, ``gs``, ``az`` and ``file``. Default ``None``: all but ``file``.
            open_timeout (float): Seconds opening the source may take. Default 10.0. Allowed: 0.1 to 3600.
            read_timeout (float): Seconds a read may wait for data before the source counts as dropped. Default
                5.0. Allowed: 0.1 to 3600.
            reconnect (int): Reopen attempts after a drop; 0: a drop fails the video. Default 5. Allowed: 0 to
                1000.
            reconnect_initial (float): Seconds before the first reopen attempt, doubling at each one. Default 0.5.
                Allowed: at most ``reconnect_max``.
            reconnect_max (float): The longest wait between attempts, in seconds. Default 4.0. Allowed: at most
                3600.
            rtsp_transport (str): ``"tcp"`` (default) or ``"udp"``, for ``rtsp://``.
            storage_options (dict[str, Any] | None): A remote object's credentials and settings, as
                ``VideoInput(storage_options=...)`` takes them. Default ``None``: the operator's.
            index_cache (str | os.PathLike | None): A directory of remote videos' indexes. Default ``None``: the
                operator's.
            ranged (bool): ``True`` (default): an object's URL (``is_remote_url``) is read by byte ranges.
                ``False``: every URL is pulled through FFmpeg's protocols, as a live stream (an MPEG-TS sender over
                HTTP that takes one connection, as ``ffmpeg -listen 1``'s does: reading it by ranges would spend
                that connection on probing it). ``Mux.add_url`` pulls its cameras so.

        Returns:
            The video's id.

        Raises:
            ValueError: A scheme outside ``schemes``, or a setting out of its allowed range.
            VideoError: A remote object that cannot be reached (code ``source_unavailable``).
            ClosedError: The operator was closed.
        """
    def close(self) -> None:
        """No more videos will be fed: once every video fed is delivered, polls return ``None`` (and iteration ends).
        Closing twice does nothing.
        """
    @property
    def is_closed(self) -> bool:
        """Whether `close` was called."""
    def next_batch(self, timeout: Optional[float] = None) -> Optional[Batch]:
        """The next batch, waiting (without the GIL) until one is ready.

        Args:
            timeout (float | None): The most seconds to wait. Default ``None``: no limit.

        Returns:
            The next :class:`Batch`, or ``None`` after :meth:`close` and the last batch.

        Raises:
            TimeoutError: ``timeout`` passed (``framefeed.FramefeedTimeoutError``, also the builtin one).
            NoDataError: Nothing is fed, with ``blocking=False``.
            VideoError: A video failed, after its decoded batches; the next call goes on with the next video.
        """
    def try_next_batch(self) -> Optional[Batch]:
        """The next batch if one is ready now; never waits.

        Returns:
            The next :class:`Batch`, or ``None`` after :meth:`close` and the last batch.

        Raises:
            NotReadyError: Videos are still decoding.
            NoDataError: Nothing is fed.
            VideoError: A video failed, after its decoded batches.
        """
    def next_batch_async(self) -> Awaitable[Optional[Batch]]:
        """:meth:`next_batch` as an awaitable (asyncio), waiting without holding a thread (one thread serves every
        waiting task). Cancelling it loses no batch.

        Returns:
            An awaitable of the next :class:`Batch`, or of ``None`` after :meth:`close` and the last batch.
        """
    def __iter__(self) -> Iterator[Batch]: ...
    def __next__(self) -> Batch: ...
    def set_output_size(self, width: int, height: int) -> None:
        """Changes a sized resize's output size from the next sequence on.

        Args:
            width (int): The new width in pixels. Allowed: 1 to 16384.
            height (int): The new height in pixels. Allowed: 1 to 16384.

        Raises:
            ValueError: The operator has no sized resize, or a size out of range.
        """
    @property
    def queued_videos(self) -> int:
        """Videos fed whose batches have not all been polled yet."""
    @property
    def feed_queue_len(self) -> Tuple[int, int]:
        """`(videos, bytes)` waiting in the feed queue."""
    @property
    def is_depleted(self) -> bool:
        """Whether the last poll returned a video's last batch (or its error)."""
    @property
    def buffer_allocations(self) -> int:
        """Output buffers allocated so far: it stops growing in the steady state, as buffers are recycled."""
    @property
    def huge_page_allocations(self) -> int:
        """How many of `buffer_allocations` are on the system's reserved huge pages (`huge_pages=True`)."""
    @property
    def device(self) -> str:
        """`'cpu'`, or `'cuda:N'`: where videos are decoded."""
    @property
    def sequence_length(self) -> int:
        """Frames in a full sequence."""
    @property
    def batch_size(self) -> int:
        """The most sequences in a batch."""

@final
class MuxEntry:
    """One camera's sequence in a `MuxBatch`."""

    @property
    def camera(self) -> int:
        """Its camera's number."""
    @property
    def label(self) -> _Label:
        """Its camera's label."""
    @property
    def sequence(self) -> Sequence:
        """The sequence: its frames (`numpy()`, DLPack), `indices`, `pts` and `arrivals`."""
    @property
    def batch(self) -> Batch:
        """The camera's batch of this one sequence (its `latency`, `device`, `dtype`, `gap`)."""
    @property
    def waited(self) -> float:
        """Seconds from when it was ready (decoded and converted) to when its batch was given."""

@final
class MuxBatch:
    """A batch across cameras: up to `batch_size` sequences of one shape, oldest first."""

    @property
    def entries(self) -> List[MuxEntry]:
        """Its sequences with their cameras, oldest first."""
    @property
    def cameras(self) -> List[int]:
        """The camera of each entry, in order."""
    @property
    def sequence_shape(self) -> Tuple[int, int, int, int]:
        """The shape every sequence in it has (frames, then the layout's three dimensions)."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> MuxEntry: ...
    def numpy(self) -> Any:
        """The batch as one NumPy array: a copy, since the cameras' sequences live in their own buffers.

        Returns:
            An array of shape ``(N, *sequence_shape)``.

        Raises:
            ValueError: Sequences in GPU memory (stack their DLPack exports instead: ``torch.stack``,
                ``cupy.stack``).
        """

@final
class CameraEnded:
    """A camera ended, after its last sequence: its video ended (`error` is `None`) or failed (`error` is the
    exception, e.g. a `VideoError` naming the URL).
    """

    @property
    def camera(self) -> int:
        """The camera's number."""
    @property
    def label(self) -> _Label:
        """The camera's label."""
    @property
    def error(self) -> Optional[BaseException]:
        """Why it failed (the exception), or `None` if its video ended."""

_MuxEvent = Union[MuxBatch, CameraEnded]

@disjoint_base
class Mux:
    """The native mux under `framefeed.Mux`, whose docstring documents its keywords: cross-camera batching with a
    deadline.
    """

    def __new__(cls, batch_size: int, deadline: float, *, policy: MuxPolicy = "every_frame") -> Self: ...
    def add_input(self, input: VideoInput, label: _Label) -> int:
        """Adds a camera decoded by an operator of its own; the mux polls it from now on, and the camera ends when the
        operator has no more batches.

        Args:
            input (VideoInput): The camera's operator: ``batch_size=1``, and closed (now or later) once its video
                is fed.
            label (str | int): The camera's label.

        Returns:
            The camera's number.

        Raises:
            ValueError: An operator whose batch size is not 1.
            TypeError: A label that is not a ``str`` or a non-negative ``int``.
        """
    def remove(self, camera: int) -> bool:
        """Stops a camera and forgets what it queued; it gives no :class:`CameraEnded`.

        Args:
            camera (int): The camera's number.

        Returns:
            Whether there was such a camera (``False`` also for one that ended).
        """
    def close(self) -> None:
        """No more cameras: polls end (``None``) once every camera has ended and its sequences are delivered."""
    def stats(self) -> List[CameraStats]:
        """What each camera has done so far.

        Returns:
            One ``framefeed.types.CameraStats`` a camera: ``camera``, ``label``, ``sequences`` given, ``dropped``
            (``latest_only``) and ``ended``.
        """
    def next_event(self, timeout: Optional[float] = None) -> Optional[_MuxEvent]:
        """The next batch or camera end, waiting (without the GIL) until one is due.

        Args:
            timeout (float | None): The most seconds to wait. Default ``None``: no limit.

        Returns:
            A :class:`MuxBatch` or a :class:`CameraEnded`; ``None`` once closed and every camera has ended.

        Raises:
            TimeoutError: ``timeout`` passed (``framefeed.FramefeedTimeoutError``).
        """
    def try_next_event(self) -> Optional[_MuxEvent]:
        """The next batch or camera end if one is due now; never waits.

        Returns:
            A :class:`MuxBatch` or a :class:`CameraEnded`; ``None`` once closed and every camera has ended.

        Raises:
            NotReadyError: None is due yet.
        """
    def next_event_async(self) -> Awaitable[Optional[_MuxEvent]]:
        """:meth:`next_event` as an awaitable (asyncio), waiting without holding a thread. Cancelling it loses
        nothing.

        Returns:
            An awaitable of a :class:`MuxBatch`, a :class:`CameraEnded`, or ``None`` at the end.
        """
    def __iter__(self) -> Iterator[_MuxEvent]: ...
    def __next__(self) -> _MuxEvent: ...
    @property
    def batch_size(self) -> int:
        """The most sequences a batch holds."""
    @property
    def deadline(self) -> float:
        """Seconds a batch waits at most after its oldest sequence was ready."""
    @property
    def policy(self) -> MuxPolicy:
        """`"every_frame"` or `"latest_only"`."""

@final
class VideoMetadata:
    """What a reader knows of its video, read when it opened it."""

    @property
    def stream_index(self) -> int:
        """The container's index of the video stream read (the one the `ffmpeg` CLI picks)."""
    @property
    def num_frames(self) -> int:
        """Frames a full decode gives."""
    @property
    def average_fps(self) -> float:
        """Average frame rate."""
    @property
    def duration_seconds(self) -> float:
        """From the first frame's time to the end of the last one's, in seconds."""
    @property
    def begin_stream_seconds(self) -> float:
        """The first frame's time, in stream seconds."""
    @property
    def end_stream_seconds(self) -> float:
        """When the last frame's display ends, in stream seconds."""
    @property
    def width(self) -> int:
        """Width as shown (turned), before transforms."""
    @property
    def height(self) -> int:
        """Height as shown."""
    @property
    def codec(self) -> str:
        """FFmpeg's codec name."""
    @property
    def rotation(self) -> Optional[float]:
        """Degrees counter-clockwise from the display matrix (`None` without one)."""
    @property
    def orientation(self) -> Orientation:
        """How frames are turned to be shown."""
    @property
    def key_frame_indices(self) -> List[int]:
        """Display indices of the keyframes."""
    @property
    def color(self) -> ColorInfo:
        """The stream's colour (`types.ColorInfo`): bit depth, primaries, transfer, matrix, range, dynamic range
        (`"sdr"`, `"pq"`, `"hlg"`) and HDR static metadata.
        """
    @property
    def holes(self) -> List[Tuple[int, float]]:
        """The holes the reader's reads met so far, as `(display index, seconds)`: indices whose pictures do not
        decode (a read asking for one raises `VideoError`).
        """
    @property
    def audio(self) -> Optional[AudioStreamInfo]:
        """The audio stream `get_samples_played_in_range` reads (`types.AudioStreamInfo`: `stream_index`, `codec`,
        `sample_rate`, `num_channels`, `duration_seconds`), or `None` without audio.
        """

@final
class Frames:
    """The frames one read gave: `data` is one array of them (N, H, W, 3) or (N, 3, H, W) per the reader's
    `dimension_order`, in the order asked for; `indices`, `pts_seconds`, `duration_seconds` and `damaged` describe
    each.
    `np.from_dlpack(frames)` / `torch.from_dlpack(frames)` view it without copying.
    """

    @property
    def data(self) -> Any:
        """The frames as one array: a NumPy view of the read's buffer (no copy); for frames in GPU memory, export
        with DLPack (`torch.from_dlpack(frames)`).
        """
    def numpy(self) -> Any:
        """The same as `data` (NumPy), for symmetry with `Batch` and `Sequence`.

        Returns:
            The frames' array, (N, H, W, 3) or (N, 3, H, W).
        """
    @property
    def indices(self) -> List[int]:
        """The display index of each frame, in the order asked for."""
    @property
    def pts_seconds(self) -> List[float]:
        """Each frame's presentation time, in stream seconds."""
    @property
    def duration_seconds(self) -> List[float]:
        """Each frame's duration, in seconds."""
    @property
    def damaged(self) -> List[bool]:
        """Whether each frame is damaged (concealed, or decoded from damaged data), in the order asked for."""
    @property
    def shape(self) -> Tuple[int, int, int, int]:
        """The array's shape."""
    @property
    def device(self) -> str:
        """`"cpu"` or `"cuda:N"`: where the frames are."""
    def __len__(self) -> int: ...
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any:
        """The DLPack protocol, for the frames' array."""
    def __dlpack_device__(self) -> Tuple[int, int]: ...

@disjoint_base
class VideoReader:
    """The native reader under `framefeed.VideoReader`, whose docstring documents every keyword: a whole video opened
    for random access, frames by index, by range and by time, decoded only where asked.
    """

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
    def metadata(self) -> VideoMetadata:
        """What the video holds (no frame decoded to know it)."""
    @property
    def device(self) -> str:
        """`"cpu"` or `"cuda:N"`: where the reader decodes."""
    @property
    def packets_decoded(self) -> int:
        """Packets sent to the decoder by the reads so far (reading on forward adds only the packets past the
        last read).
        """
    @property
    def _source(self) -> Any:
        """What the reader was opened from: the path or URL as given, the buffer, the file object, or the bytes a
        file object that cannot seek gave (what a pickled reader opens again).
        """
    def close(self) -> None:
        """Frees the decoder and the video's index now (in this process); later reads raise :class:`ClosedError`.
        Closing twice does nothing.
        """
    @property
    def closed(self) -> bool:
        """Whether `close` was called (in this process, or before a fork)."""
    def __len__(self) -> int: ...
    def frame_times(self) -> List[Tuple[float, float]]:
        """Each frame's ``(start, end)`` display time in stream seconds, from the index (nothing is decoded).

        Returns:
            One ``(start, end)`` pair a frame, in display order.
        """
    def __getitem__(self, key: Union[int, slice], /) -> Any:
        """Frame ``i`` as an array (H, W, 3), or frames ``a:b:s`` as one (N, H, W, 3); ``Frames`` on a GPU."""
    def get_frames_at(self, indices: List[int]) -> Frames:
        """The frames at these display indices, in this order, repeats allowed.

        Args:
            indices (list[int]): Display indices (negative from the end).

        Returns:
            A :class:`Frames` of them.

        Raises:
            IndexError: An index out of range.
        """
    def get_frames_in_range(self, start: int, stop: int, step: int = 1) -> Frames:
        """The frames from ``start`` up to ``stop`` (excluded), ``step`` apart, as Python's ``range`` over the video's
        indices and as TorchCodec takes them: negative ones count from the end, and the range is clamped to the
        video (``(-10, 1000)``: the last 10 frames; a range past the end gives the frames up to the end, or none).

        Args:
            start (int): The first index.
            stop (int): The index to stop before.
            step (int): Frames between those read. Default 1. Allowed: 1 or more.

        Returns:
            A :class:`Frames` of them, in display order.

        Raises:
            ValueError: ``step`` below 1.
        """
    def get_frames_played_at(self, seconds: List[float]) -> Frames:
        """The frame shown at each of these times.

        Args:
            seconds (list[float]): Times in stream seconds.

        Returns:
            A :class:`Frames` of them, in this order.
        """
    def get_frames_played_in_range(self, start_seconds: float, stop_seconds: float) -> Frames:
        """The frames shown in ``[start_seconds, stop_seconds)``.

        Args:
            start_seconds (float): The range's start, in stream seconds.
            stop_seconds (float): Its end (excluded).

        Returns:
            A :class:`Frames` of them, in display order.
        """
    def get_samples_played_in_range(
        self, start_seconds: float, stop_seconds: Optional[float] = None
    ) -> AudioSamples:
        """The audio played from ``start_seconds`` to ``stop_seconds``, as TorchCodec's
        ``AudioDecoder.get_samples_played_in_range``: that span of the ``ffmpeg`` CLI's decode, at the reader's
        ``audio_sample_rate`` and ``audio_channels`` (default: the stream's). A read behind the last one decodes
        the audio again from its start.

        Args:
            start_seconds (float): Where the span starts, in stream seconds.
            stop_seconds (float | None): Where it ends. Default ``None``: the end of the audio.

        Returns:
            The :class:`AudioSamples`.

        Raises:
            VideoError: The video has no audio (code ``no_audio_stream``).
        """
