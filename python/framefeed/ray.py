"""Ray: decode a dataset of videos across a cluster with framefeed, on Ray Data's scheduling, object store and
fault tolerance.

:func:`read_videos` lists the files; a pool of actors reads and decodes them, in one Ray Data stage, each actor
holding one :class:`framefeed.VideoInput` for its whole life (its buffer pool and decoder threads reused across
videos). Rows stream out as they are decoded, **one row per sequence** (with ``clips=N``, one row per clip, its
display ``indices`` beside its ``pts``): a long video never sits decoded in memory, and an actor's memory stays
bounded whatever the video's length (a local file is read from disk as it is decoded, never whole). :class:`Decoder` is the same callable
class, for pipelines that already hold the encoded bytes in a column (Parquet, object storage...) or the files'
paths.

Ray is imported only by this module.

>>> import framefeed.ray
>>> ds = framefeed.ray.read_videos(paths, sequence_length=16, resize_shorter=128, crop=112, dtype="float16")
>>> for row in ds.iter_rows():
...     row["frames"], row["path"], row["first_frame"], row["valid_frames"]
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow.fs  # type: ignore[import-untyped]
import ray
import ray.data

import framefeed as ff
from framefeed import _units

__all__ = ["read_videos", "Decoder"]

_ON_ERROR = ("record", "skip", "raise")
# The audio of a row without any (a failed video's).
_NO_AUDIO = np.zeros((0, 0), dtype=np.float32)
# The most a block of framefeed's rows holds by default. Until a block is stored, an actor holds the rows gathered
# for it and then the block built from them, so its memory swings by about twice this; rows of a few MB (a 224
# crop's) still go several to a block, and full-frame rows one.
_BLOCK_BYTES = 32 << 20
# A block holds at most this share of the smallest node's object store: the store must hold what is in flight
# (each actor's yields Ray buffers, two blocks by default, and the block it builds; the consumer's prefetch)
# with room to spare. Past that, Ray spills blocks to disk and reads them back (full 1080p frames on
# cluster_utils' 150 MiB stores took 45-48 s in 150-200 MB blocks, 15-20 s in blocks of one 50 MB row).
_STORE_SHARE = 8
# `sequences_per_block="auto"`: at most this many rows a yield (Ray's cost is per yield).
_AUTO_SEQUENCES = 4
# One block per video (an actor task decodes one video, and a retried task repeats that one video), up to this
# many blocks for the whole dataset.
_MAX_BLOCKS = 10_000


def _filesystem(path: str) -> Tuple[pyarrow.fs.FileSystem, str]:
    """The filesystem holding ``path`` and the path inside it: a local path, or a URI of a filesystem pyarrow
    knows (``s3://``, ``gs://``, ``hdfs://``, ``file://``...)."""
    if "://" in path:
        return pyarrow.fs.FileSystem.from_uri(path)
    return pyarrow.fs.LocalFileSystem(), os.path.abspath(path)


def _list_files(paths: Sequence[str], storage_options: Optional[Dict[str, Any]] = None) -> List[str]:
    """Every file named in ``paths``, directories expanded recursively (in name order, hidden entries left
    out): URIs as they were given (a directory's files under its spelling), local paths made absolute (the
    actors' working directories are not the driver's). A remote video's URI (``s3://``, ``gs://``, ``az://``)
    is listed by framefeed's own object store client with ``storage_options`` (the credentials and endpoint the
    actors read with); an ``http(s)://`` URL is one file; other URIs through pyarrow's filesystems. Raises
    ``FileNotFoundError`` for a path that does not exist."""
    files: List[str] = []
    for path in paths:
        if ff.is_remote_url(path):
            try:
                files.extend(ff.list_remote(path, storage_options=storage_options))
            except ff.VideoError as e:
                if e.code == "source_unavailable" and "no such object" in str(e):
                    raise FileNotFoundError(f"{ff.redact_url(path)}: no such object or prefix") from e
                raise
            continue
        filesystem, inner = _filesystem(path)
        path = path if "://" in path else inner
        info = filesystem.get_file_info(inner)
        if info.type == pyarrow.fs.FileType.NotFound:
            raise FileNotFoundError(f"{path}: no such file or directory")
        if info.type != pyarrow.fs.FileType.Directory:
            files.append(path)
            continue
        found = filesystem.get_file_info(pyarrow.fs.FileSelector(inner, recursive=True))
        base = inner.rstrip("/")
        for entry in sorted(found, key=lambda e: e.path):
            relative = entry.path[len(base) :].lstrip("/")
            if entry.type == pyarrow.fs.FileType.File and not any(
                part.startswith(".") for part in relative.split("/")
            ):
                files.append(path.rstrip("/") + "/" + relative)
    return files


def _segment_rows(
    files: List[str],
    every: _units.SegmentFrames,
    workers: int,
    storage_options: Optional[Dict[str, Any]] = None,
    index_cache: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """One row per video to decode: each local file longer than `every` frames (``"auto"``: sized for
    `workers` actors) in its segments, the others whole (``segment`` ``[0, -1]``), as
    :func:`framefeed._units.plan` cuts them, longest first (:func:`framefeed._units.longest_first`: the actors
    that finish last finish short units)."""
    return [
        {"path": u.path, "position": u.position, "segment": list(u.segment or (0, -1))}
        for u in _units.longest_first(_units.plan(files, every, workers, storage_options, index_cache))
    ]


def _pool_size(concurrency: Optional[Union[int, Tuple[int, int]]], num_cpus: Optional[float]) -> int:
    """The actors the pool will have at most: ``concurrency``'s, or (Ray's default pool) the cluster's CPUs
    over each actor's."""
    if isinstance(concurrency, tuple):
        return max(1, int(concurrency[1]))
    if concurrency is not None:
        return max(1, int(concurrency))
    cpus = (
        float(ray.cluster_resources().get("CPU", 1.0))  # type: ignore[no-untyped-call]
        if ray.is_initialized()
        else float(os.cpu_count() or 1)
    )
    return max(1, int(cpus // (num_cpus or 1)))


def _compute(concurrency: Optional[Union[int, Tuple[int, int]]]) -> Dict[str, Any]:
    """``map_batches``' pool of actors for ``concurrency`` (``None``: Ray Data's own default)."""
    if concurrency is None:
        return {}
    if isinstance(concurrency, tuple):
        low, high = concurrency
        return {"compute": ray.data.ActorPoolStrategy(min_size=low, max_size=high)}
    return {"compute": ray.data.ActorPoolStrategy(size=concurrency)}


def _block_limit(target: Optional[int], stores: Sequence[float]) -> int:
    """The most bytes a block of rows should hold: 32 MiB or Ray Data's ``target`` (its context's
    ``target_max_block_size``; ``None``: no limit) if lower, held to an eighth of the smallest object store of
    ``stores`` (each node's, in bytes; none known: no hold), and at least 1 MiB."""
    limit = min(int(target), _BLOCK_BYTES) if target else _BLOCK_BYTES
    known = [int(s) for s in stores if s and s > 0]
    if known:
        limit = min(limit, min(known) // _STORE_SHARE)
    return max(1 << 20, limit)


def _object_stores() -> List[float]:
    """Each live node's object store, in bytes (none where Ray is not started yet)."""
    if not ray.is_initialized():
        return []
    return [
        float(node.get("Resources", {}).get("object_store_memory", 0))
        for node in ray.nodes()  # type: ignore[no-untyped-call]
        if node.get("Alive")
    ]


def _rows_per_yield(row_bytes: int, limit: int) -> int:
    """How many rows of ``row_bytes`` each to gather into one yield of at most ``limit`` bytes: at least one, at
    most 4."""
    return max(1, min(_AUTO_SEQUENCES, limit // max(1, row_bytes)))


def _read_file(path: str) -> bytes:
    """The whole file ``path`` (local or a URI, as :func:`_list_files` writes it)."""
    filesystem, inner = _filesystem(path)
    with filesystem.open_input_file(inner) as stream:
        return stream.readall()


class Decoder:
    """A Ray Data callable class (``map_batches``): encoded videos in, one row per sequence out.

    Each input row holds one encoded video (column ``bytes_column``) and its name (``path_column``); where the
    input has no ``bytes_column``, the actor reads the file the path names (a local file from disk as it is
    decoded; a remote URI such as ``s3://...`` or ``https://...`` by byte ranges, with the ``storage_options``
    keyword; another URI pyarrow reads, whole), and a file it cannot read fails that one video, per
    ``on_error``. An optional ``position`` column places each video in its dataset: with ``epoch`` and the
    seed it decides the video's random clips, so that they do not depend on which actor decodes it. The instance keeps one
    operator for its life; videos are decoded one after the other, and each framefeed batch is yielded as soon
    as it is decoded (a generator UDF).

    An optional ``segment`` column (``[first, end]``, end ``-1`` for the whole video) decodes only that part of
    the video (:func:`framefeed.segments`).

    Each yield holds up to ``sequences_per_block`` rows of one video (Ray's cost is per yield); ``"auto"`` (the
    default): batches of one sequence gathered up to 4 a yield while they fit in ``block_bytes`` (default: 32 MiB,
    or Ray Data's ``target_max_block_size`` if lower), so that full-frame rows leave one at a time and small
    transformed rows in fours.

    Output columns: ``frames`` (the sequence, in the chosen dtype and layout), ``valid_frames``, ``path``,
    ``first_frame``, ``indices`` (the display index of each real frame), ``pts`` (seconds, one per real frame),
    ``damaged`` (whether each real frame is damaged: concealed, or decoded from damaged data), ``bit_depth`` and
    ``dynamic_range`` (``"sdr"``, ``"pq"`` or ``"hlg"``: the video's, from its stream; ``None`` in an error row),
    ``crop_window`` (``(x, y, w, h)``, when cropping), with ``audio=True`` ``audio`` (the sound played with the
    frames, float32 (channels, samples); empty without audio), ``audio_pts`` and ``audio_sample_rate``,
    ``segment`` (when the input has it), and ``error``
    (``None``, or why the video failed, when ``on_error="record"``).

    Args:
        sequence_length (int): As for :class:`framefeed.VideoInput`.
        last_sequence_policy (str): As for :class:`framefeed.VideoInput`. Default ``"partial"``.
        decoder_threads (int): libavcodec threads of the actor's operator. Default 1.
        on_error (str): ``"record"`` (default; a failed video gives one row with an ``error`` column, after its
            decoded rows), ``"skip"`` or ``"raise"``.
        bytes_column (str): The input column of encoded videos. Default ``"bytes"``.
        path_column (str): The input column of their names (or the paths to read). Default ``"path"``.
        sequences_per_block (int | str): Rows a yield holds at most, as for :func:`read_videos`. Default
            ``"auto"``.
        block_bytes (int | None): The most bytes a yield should hold, as for :func:`read_videos`. Default
            ``None``.
        epoch (int): The epoch, with the ``position`` column: the videos' random clips. Default 0.
        **keywords: Any other keyword of :class:`framefeed.VideoInput` (``resize``, ``crop``, ``dtype``,
            ``device``, ``storage_options``...).

    Raises:
        ValueError: A setting out of its allowed range.
    """

    def __init__(
        self,
        sequence_length: int,
        *,
        last_sequence_policy: str = "partial",
        decoder_threads: int = 1,
        on_error: str = "record",
        bytes_column: str = "bytes",
        path_column: str = "path",
        sequences_per_block: Union[int, str] = "auto",
        block_bytes: Optional[int] = None,
        epoch: int = 0,
        **keywords: Any,
    ) -> None:
        if on_error not in _ON_ERROR:
            raise ValueError(f"on_error is {on_error!r}; allowed: 'record', 'skip', 'raise'")
        _check_sequences_per_block(sequences_per_block)
        _check_block_bytes(block_bytes)
        # "auto": batches of one sequence (an actor's pooled buffers hold one: 50 MB for 8 full 1080p frames),
        # gathered into yields of up to 4 that fit in `block_bytes`; two finished ones wait ahead (the decoding
        # goes on while Ray stores a yield), where 4 did in a batch of 4 before.
        self.limit: Optional[int] = None
        if sequences_per_block == "auto":
            sequences_per_block = 1
            keywords.setdefault("prefetch_batches", 2)
            self.limit = block_bytes or _block_limit(ray.data.DataContext.get_current().target_max_block_size, [])
        self.on_error = on_error
        self.bytes_column = bytes_column
        self.path_column = path_column
        self.epoch = epoch
        self.segment: Optional[Tuple[int, int]] = None
        self.cropping = keywords.get("crop") is not None
        self.audio = bool(keywords.get("audio"))
        # An error row's (empty) frames take the element type of the others: one tensor column.
        dtype = keywords.get("dtype", "uint8")
        self.dtype = np.dtype(dtype.split("_")[0] if isinstance(dtype, str) else dtype)
        # Non-blocking: a poll waits while the video fed last is still decoding, and says `NoDataError` once
        # it has been delivered, batches or not (a segment no sequence starts in ends with none).
        self.input = ff.VideoInput(
            sequence_length,
            int(sequences_per_block),
            last_sequence_policy=last_sequence_policy,
            decoder_threads=decoder_threads,
            blocking=False,
            **keywords,
        )

    def __call__(self, batch: Dict[str, np.ndarray]) -> Iterator[Dict[str, Any]]:
        paths = batch.get(self.path_column)
        encoded = batch.get(self.bytes_column)
        rows = encoded if encoded is not None else paths
        if rows is None:
            raise KeyError(f"the input has neither a {self.bytes_column!r} nor a {self.path_column!r} column")
        positions = batch.get("position")
        segments = batch.get("segment")
        for i in range(len(rows)):
            path = str(paths[i]) if paths is not None else str(i)
            place: Dict[str, Any] = {}
            if positions is not None:
                place = {"position": int(positions[i]), "epoch": self.epoch}
            self.segment = None
            if segments is not None:
                self.segment = (int(segments[i][0]), int(segments[i][1]))
                if self.segment[1] >= 0:
                    place["segment"] = self.segment
            try:
                if encoded is not None:
                    data = encoded[i]
                    self.input.feed(bytes(data) if not isinstance(data, bytes) else data, path, **place)
                elif "://" not in path or ff.is_remote_url(path):
                    # A local file from disk, a remote object by byte ranges: neither read whole.
                    self.input.feed_file(path, path, **place)
                else:
                    self.input.feed(_read_file(path), path, **place)
            except OSError as error:
                yield from self._failed(path, f"cannot read the file: {error}", error)
                continue
            except ff.VideoError as error:
                yield from self._failed(path, str(error), error)
                continue
            yield from self._decode(path)

    def _failed(self, path: str, reason: str, error: Exception) -> Iterator[Dict[str, Any]]:
        """A video that failed, per ``on_error``."""
        if self.on_error == "raise":
            raise error
        if self.on_error == "record":
            if self.segment is not None and self.segment[1] >= 0:
                reason = f"{reason} (segment of frames {self.segment[0]} to {self.segment[1]})"
            yield self._error_row(path, reason)

    def _decode(self, path: str) -> Iterator[Dict[str, Any]]:
        """The rows of the video just fed."""
        gathered: List[Dict[str, Any]] = []  # "auto": sequences (batches of one) gathered for one yield
        while True:
            try:
                batch = self.input.next_batch()
            except ff.NoDataError:
                break  # the video was delivered (with no batch at all when no sequence starts in it)
            except ff.VideoError as error:
                if gathered:
                    yield _joined(gathered)
                yield from self._failed(path, error.reason, error)
                return
            if batch is None:  # never: the input is not closed
                break
            rows = self._rows(batch, path)
            if self.limit is None:
                yield rows
            else:
                gathered.append(rows)
                if len(gathered) >= _rows_per_yield(_frames_bytes(gathered[0]["frames"]), self.limit):
                    yield _joined(gathered)
                    gathered = []
            # Not `batch.is_last`: a video's last batch may still be followed by its error.
            if self.input.is_depleted:
                break
        if gathered:
            yield _joined(gathered)

    def _rows(self, batch: ff.Batch, path: str) -> Dict[str, Any]:
        if batch.device != "cpu":
            # Ray's object store holds host memory: a GPU batch, transformed on the GPU (crop, resize, cast
            # make it small), is copied to the host once, here.
            batch = batch.to_host()
        sequences = batch.sequences
        # Views of the pooled buffer, not copies: Ray copies the rows into its object store when they are
        # yielded, and the buffer goes back to the pool once nothing references it.
        frames: Union[np.ndarray, List[np.ndarray]]
        if batch.shape is not None:
            frames = batch.numpy()
        else:
            frames = [s.numpy() for s in sequences]
        rows: Dict[str, Any] = {
            "frames": frames,
            "valid_frames": np.array([s.valid_frames for s in sequences], dtype=np.int64),
            "path": np.array([path] * len(sequences), dtype=object),
            "first_frame": np.array([s.first_frame for s in sequences], dtype=np.int64),
            "indices": [np.array(s.indices, dtype=np.int64) for s in sequences],
            "pts": [np.array(s.pts, dtype=np.float64) for s in sequences],
            "damaged": [np.array(s.damaged, dtype=bool) for s in sequences],
            "bit_depth": np.array([s.color["bit_depth"] for s in sequences], dtype=object),
            "dynamic_range": np.array([s.color["dynamic_range"] for s in sequences], dtype=object),
        }
        if self.cropping:
            rows["crop_window"] = np.array([s.crop_window for s in sequences], dtype=np.int64)
        if self.audio:
            # The sound played with each sequence's frames: (channels, samples) float32, its start and rate.
            rows["audio"] = [s.audio.data if s.audio is not None else _NO_AUDIO for s in sequences]
            rows["audio_pts"] = np.array(
                [s.audio.pts_seconds if s.audio is not None else np.nan for s in sequences], dtype=np.float64
            )
            rows["audio_sample_rate"] = np.array(
                [s.audio.sample_rate if s.audio is not None else 0 for s in sequences], dtype=np.int64
            )
        if self.segment is not None:
            rows["segment"] = np.array([self.segment] * len(sequences), dtype=np.int64)
        if self.on_error == "record":
            rows["error"] = np.array([None] * len(sequences), dtype=object)
        return rows

    def _error_row(self, path: str, reason: str) -> Dict[str, Any]:
        rows: Dict[str, Any] = {
            "frames": [np.zeros((0, 0, 0, 0), dtype=self.dtype)],
            "valid_frames": np.array([0], dtype=np.int64),
            "path": np.array([path], dtype=object),
            "first_frame": np.array([0], dtype=np.int64),
            "indices": [np.zeros(0, dtype=np.int64)],
            "pts": [np.zeros(0, dtype=np.float64)],
            "damaged": [np.zeros(0, dtype=bool)],
            "bit_depth": np.array([None], dtype=object),
            "dynamic_range": np.array([None], dtype=object),
            "error": np.array([reason], dtype=object),
        }
        if self.cropping:
            rows["crop_window"] = np.zeros((1, 4), dtype=np.int64)
        if self.audio:
            rows["audio"] = [_NO_AUDIO]
            rows["audio_pts"] = np.array([np.nan], dtype=np.float64)
            rows["audio_sample_rate"] = np.array([0], dtype=np.int64)
        if self.segment is not None:
            rows["segment"] = np.array([self.segment], dtype=np.int64)
        return rows


def _joined(parts: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The rows of ``parts`` (consecutive batches of one video) as one yield: a column of arrays of one shape and
    type joined into one array (a copy; only small rows are gathered), any other as a list of its rows."""
    if len(parts) == 1:
        return parts[0]
    joined: Dict[str, Any] = {}
    for key in parts[0]:
        values = [part[key] for part in parts]
        if (
            all(isinstance(v, np.ndarray) for v in values)
            and len({v.shape[1:] for v in values}) == 1
            and len({v.dtype for v in values}) == 1
        ):
            joined[key] = np.concatenate(values)
        else:
            joined[key] = [row for value in values for row in value]
    return joined


def _frames_bytes(frames: Union[np.ndarray, List[np.ndarray]]) -> int:
    return int(frames.nbytes) if isinstance(frames, np.ndarray) else sum(int(f.nbytes) for f in frames)


def _check_block_bytes(block_bytes: Optional[int]) -> None:
    if block_bytes is not None and (isinstance(block_bytes, bool) or not isinstance(block_bytes, int) or block_bytes < 1):
        raise ValueError(f"block_bytes is {block_bytes!r}; allowed: 1 or more, or None (sized for the cluster)")


def _check_sequences_per_block(sequences_per_block: Union[int, str]) -> None:
    if sequences_per_block == "auto":
        return
    if isinstance(sequences_per_block, bool) or not isinstance(sequences_per_block, int) or sequences_per_block < 1:
        raise ValueError(f"sequences_per_block is {sequences_per_block!r}; allowed: 1 or more, or 'auto'")


def read_videos(
    paths: Union[str, Sequence[Union[str, os.PathLike]]],
    *,
    sequence_length: int,
    last_sequence_policy: str = "partial",
    decoder_threads: int = 1,
    sequences_per_block: Union[int, str] = "auto",
    block_bytes: Optional[int] = None,
    concurrency: Optional[Union[int, tuple]] = None,
    num_cpus: float = 1,
    num_gpus: float = 0,
    on_error: str = "record",
    max_restarts: Optional[int] = None,
    epoch: int = 0,
    segment_frames: _units.SegmentFrames = _units.AUTO,
    **keywords: Any,
) -> "ray.data.Dataset":
    """A Ray dataset of every sequence of every video in ``paths`` (files or directories, local or URIs such as
    ``s3://bucket/videos/``), read and decoded by a pool of :class:`Decoder` actors.

    The files are listed here (directories recursively, hidden entries left out; a path that does not exist
    raises ``FileNotFoundError``); each actor reads the files it decodes, so on a cluster they must be on a
    filesystem every node reaches (shared, or object storage). A file an actor cannot read fails that video,
    per ``on_error``.

    Args:
        paths: a file, a directory, or a list of them: local paths or URIs (``s3://bucket/videos/``...).
        sequence_length: as for :class:`framefeed.VideoInput`.
        last_sequence_policy: as for :class:`framefeed.VideoInput`. Default ``"partial"``.
        decoder_threads: libavcodec threads per actor (set it: actors times threads should not exceed the
            node's cores).
        sequences_per_block: rows (sequences) an actor yields at a time, at most (never two videos' rows
            together): Ray's cost is per yield (each is converted to a table), so a few rows a yield cost it
            less than one. An ``int`` is also the actor's batch size (its pooled
            buffers hold that many sequences). Default ``"auto"``: batches of one sequence (``prefetch_batches``
            2 unless given), gathered up to 4 a yield as long as they fit in ``block_bytes``: full 1080p frames
            in sequences of 8, 50 MB a row, leave one at a time from buffers of one row; a 224 crop's rows in
            fours.
        block_bytes: the most bytes a block of rows should hold; it becomes the returned dataset's
            ``target_max_block_size`` (``dataset.context``, shared by the datasets made from it; the global
            context is left alone) where lower than that. Until a block is stored, an actor holds the rows
            gathered for it and then the block, so its memory swings by about twice this over its steady level.
            Default: 32 MiB (or Ray Data's ``target_max_block_size`` if lower), held to an eighth of the
            smallest node's object store, so that the blocks in flight fit in the store instead of spilling to
            disk.
        concurrency: actors in the pool: an ``int``, or ``(min, max)`` to autoscale (default: Ray's).
        num_cpus: CPUs reserved per actor. Default 1.
        num_gpus: GPUs reserved per actor. Default 0; with ``num_gpus=1``, give ``device="cuda"`` (a CUDA
            build).
        on_error: ``"record"`` (a failed video gives one row with an ``error`` column, after its decoded
            rows), ``"skip"`` (dropped) or ``"raise"`` (the dataset fails).
        max_restarts: how often Ray restarts an actor that died (default: Ray Data's, always; the actor's
            task is retried, and the rows it had already produced are not produced twice: a retried task
            decodes the same video, or segment, again and Ray's streaming generator skips the rows it already
            holds).
        segment_frames: a local file longer than this many frames is cut at keyframes into segments of at least
            this many (:func:`framefeed.segments`, read here: an MP4's from its index, others by demuxing without
            decoding), each decoded by whichever actor is free: one long video keeps the whole pool busy. The rows
            are those of one decode of the whole video (a sequence straddling a boundary belongs to the segment of
            its first frame), each with a ``segment`` column ``[first, end]`` (``[0, -1]``: whole); a video's rows
            then come segment by segment, in no set order across segments (sort by ``first_frame``). Segments and
            files are handed out longest first, so the pool's last work is short and no actor idles long at the end.
            A segment that fails (a corrupt GOP) gives its error row naming its frames; the others go on. ``None``:
            whole files, as one actor each, in the given order. Default ``"auto"``: sized for the job, the listed
            files' frames in about 4 units an actor of the pool (``concurrency``, or the cluster's CPUs over
            ``num_cpus``), within 300 and 1800 frames, so that a long file among short ones, or a few long files
            on a large pool, keep every actor busy while many short files stay whole. A remote video is cut only
            where it is an MP4 (its index read by byte ranges); other remote videos and other URIs are not cut.
        epoch: the epoch: with each video's place in the listing and the seed, it decides random clips.
            Default 0.
        **keywords: the transform keywords of :class:`framefeed.VideoInput` (``resize``, ``resize_shorter``,
            ``crop``, ``crop_pos``, ``seed``, ``dtype``, ``normalize``, ``layout``...), and ``device``.

    Returns:
        A lazy ``ray.data.Dataset``, one row per sequence (the columns of :class:`Decoder`).

    Raises:
        FileNotFoundError: A path that does not exist.
        ValueError: A setting out of its allowed range.
    """
    if on_error not in _ON_ERROR:
        raise ValueError(f"on_error is {on_error!r}; allowed: 'record', 'skip', 'raise'")
    _units.check_segment_frames(segment_frames)
    _check_sequences_per_block(sequences_per_block)
    _check_block_bytes(block_bytes)
    given = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    # Checks the settings here, before any actor starts; not the device, which the actors' nodes have and the
    # driver's may not.
    settings = {key: value for key, value in keywords.items() if key != "device"}
    batch = sequences_per_block if isinstance(sequences_per_block, int) else 1
    ff.VideoInput(sequence_length, batch, last_sequence_policy=last_sequence_policy, **settings).close()
    files = _list_files(given, keywords.get("storage_options"))
    restarts: Dict[str, Any] = {} if max_restarts is None else {"max_restarts": max_restarts}
    # Only the paths travel to the actors, which read the files themselves: one stage, no read tasks' workers
    # to start and no encoded bytes through the object store.
    if segment_frames is None:
        items = [{"path": f, "position": i} for i, f in enumerate(files)]
    else:
        items = _segment_rows(
            files,
            segment_frames,
            _pool_size(concurrency, num_cpus),
            keywords.get("storage_options"),
            keywords.get("index_cache"),
        )
    listed = ray.data.from_items(items, override_num_blocks=max(1, min(len(items), _MAX_BLOCKS)))
    # The dataset's own context (a copy of the global one, shared by the datasets made from it).
    target = listed.context.target_max_block_size
    if block_bytes is None:
        block_bytes = _block_limit(target, _object_stores())
    if target is None or block_bytes < target:
        listed.context.target_max_block_size = block_bytes
    return listed.map_batches(
        Decoder,
        fn_constructor_kwargs=dict(
            sequence_length=sequence_length,
            last_sequence_policy=last_sequence_policy,
            decoder_threads=decoder_threads,
            sequences_per_block=sequences_per_block,
            block_bytes=block_bytes,
            on_error=on_error,
            epoch=epoch,
            **keywords,
        ),
        batch_size=1,
        batch_format="numpy",
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        # Ray Data's actor pools restart dead actors and retry their tasks by default; only a caller's own
        # limit is passed on.
        **restarts,
        **_compute(concurrency),
    )
