"""PyTorch: :class:`VideoDataset`, an ``IterableDataset`` of video files decoded by framefeed, and
:class:`VideoClipDataset`, a map-style dataset of clips read by :class:`framefeed.VideoReader` (the shape of
torchvision's and VideoMAE's datasets: an index in, a clip out).

``torch`` is imported only by this module. Each DataLoader worker (and each ``torch.distributed`` rank) makes its
own operator, in the worker, and takes its own shard of the files: every file is decoded once per epoch across
all of them, but for the few that even the ranks out (``drop_last=False``, as ``DistributedSampler`` pads: read
again on another rank) or are left out (``drop_last=True``). Batches reach PyTorch through DLPack,
without a copy. The datasets pickle (``spawn`` and ``forkserver`` workers, ``torch.multiprocessing.spawn``) and
their epoch reaches persistent workers.

>>> from torch.utils.data import DataLoader
>>> dataset = VideoDataset(paths, sequence_length=16, batch_size=4, resize_shorter=128, crop=112,
...                        dtype="float32_unit", layout="CFHW")
>>> loader = DataLoader(dataset, batch_size=None, num_workers=2, persistent_workers=True)
>>> for epoch in range(2):
...     dataset.set_epoch(epoch)  # reaches the persistent workers
...     for frames, info in loader:
...         step = frames.mean()  # frames: (4, 3, 16, 112, 112) float32; info["label"]: each sequence's path

Training on long videos, a few clips of each per epoch, sequences of several videos mixed in every batch:

>>> dataset = VideoDataset(paths, sequence_length=8, batch_size=16, clips=4, shuffle_buffer=256, crop=224,
...                        dtype="float32_unit", layout="CFHW")
>>> dataset.set_epoch(epoch)  # new clips (and a new order) every epoch; the same ones for the same seed

In a DDP job (``torchrun``, or ``torch.multiprocessing.spawn`` with a process group), make the dataset in each
rank's main process, after ``torch.distributed.init_process_group``: it finds its rank there and every rank
reads its own, even share. (A dataset made before the group that finds the group in a forked worker raises;
one that cannot see it, in a spawn worker, reads as rank 0 of 1: pass ``rank=`` and ``world_size=`` if it
must be made first.)
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import warnings
from itertools import chain
from multiprocessing import context as _mp_context
from os import PathLike
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import torch
import torch.distributed as dist
from torch.utils.data import Dataset, IterableDataset, get_worker_info

import framefeed as ff
from framefeed import _units
from framefeed._clips import ClipIndices, ClipSampler, Readers, clip_indices, frame_indices, item_rng
from framefeed._shuffle import ShuffleBuffer

__all__ = ["VideoDataset", "VideoClipDataset", "ClipIndices", "clip_indices", "distributed_rank"]


def distributed_rank(rank: Optional[int] = None, world_size: Optional[int] = None) -> Tuple[int, int]:
    """``(rank, world_size)`` of this process, found as PyTorch's ``DistributedSampler`` finds them, in the
    rank's main process: the values given (both, or neither), else the initialized ``torch.distributed``
    process group's, else ``RANK`` and ``WORLD_SIZE`` as ``torchrun`` sets them, else 0 of 1.

    Args:
        rank (int | None): This process's rank; given with ``world_size``, or neither. Default ``None``: found.
        world_size (int | None): The number of ranks. Default ``None``: found.

    Returns:
        ``(rank, world_size)``.

    Raises:
        ValueError: Only one of them given, ``RANK`` or ``WORLD_SIZE`` not integers, or not ``0 <= rank <
            world_size``.
    """
    if (rank is None) != (world_size is None):
        raise ValueError(
            f"rank is {rank} and world_size {world_size}; allowed: both given, or neither (found from "
            "torch.distributed, or RANK and WORLD_SIZE)"
        )
    if rank is None or world_size is None:
        if dist.is_available() and dist.is_initialized():
            rank, world_size = dist.get_rank(), dist.get_world_size()
        elif "RANK" in os.environ and "WORLD_SIZE" in os.environ:
            try:
                rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
            except ValueError as error:
                raise ValueError(
                    f"RANK is {os.environ['RANK']!r} and WORLD_SIZE {os.environ['WORLD_SIZE']!r}; allowed: integers"
                ) from error
        else:
            rank, world_size = 0, 1
    if not (isinstance(rank, int) and isinstance(world_size, int) and world_size >= 1 and 0 <= rank < world_size):
        raise ValueError(f"rank is {rank!r} and world_size {world_size!r}; allowed: 0 <= rank < world_size")
    return rank, world_size


class _Epoch:
    """An epoch number shared with the DataLoader's workers, persistent ones included: a value in shared memory
    made with the dataset, which workers started by fork inherit and workers started by spawn or forkserver
    receive with the dataset. Pickled any other way (saved, sent elsewhere), it travels as its number."""

    def __init__(self, value: int = 0) -> None:
        self._shared: Any = multiprocessing.RawValue("q", value)
        self._plain = value

    @property
    def value(self) -> int:
        return int(self._shared.value) if self._shared is not None else self._plain

    @value.setter
    def value(self, epoch: int) -> None:
        if self._shared is not None:
            self._shared.value = epoch
        self._plain = epoch

    def __getstate__(self) -> Dict[str, Any]:
        if _mp_context.get_spawning_popen() is not None:
            return {"shared": self._shared, "plain": self.value}
        return {"shared": None, "plain": self.value}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self._shared = state["shared"]
        self._plain = state["plain"]


def _collatable_color(color: Any) -> Dict[str, Any]:
    """A sequence's colour as the default collate takes it: no ``None`` (``"unknown"`` for an unnamed primary,
    transfer, matrix or range, FFmpeg's own word; 0 for an unknown bit depth and, as CTA-861.3 has it, for
    absent light levels; NaN for absent mastering luminances); the mastering display's primaries and white
    point are left out (``framefeed.Sequence.color`` and ``VideoReader.metadata.color`` keep them)."""
    mastering = color.get("mastering_display") or {}
    light = color.get("content_light") or {}

    def number(value: Any) -> float:
        return float(value) if value is not None else float("nan")

    return {
        "bit_depth": color.get("bit_depth") or 0,
        "primaries": color.get("primaries") or "unknown",
        "transfer": color.get("transfer") or "unknown",
        "matrix": color.get("matrix") or "unknown",
        "range": color.get("range") or "unknown",
        "dynamic_range": color.get("dynamic_range") or "sdr",
        "max_luminance": number(mastering.get("max_luminance")),
        "min_luminance": number(mastering.get("min_luminance")),
        "max_cll": light.get("max_cll") or 0,
        "max_fall": light.get("max_fall") or 0,
    }


class VideoDataset(IterableDataset):
    """Batches of frame sequences from video files, sharded over DataLoader workers and distributed ranks.

    Args:
        paths: the video files.
        sequence_length: as for :class:`framefeed.VideoInput`.
        batch_size: as for :class:`framefeed.VideoInput`. Default 1.
        labels: one label per path (any object: an int class, a str, a tensor...), given back for each sequence
            (default: the path).
        shuffle: shuffle the files every epoch (a permutation drawn from ``seed`` and the epoch).
        seed: the shuffle's seed (the same on every rank, so that the shards partition the files), also the
            seed of random clips (``clips=N``): each file's clips are decided by the seed, its position in
            ``paths`` and the epoch, so :meth:`set_epoch` gives new clips and the same seed the same ones,
            whichever worker decodes the file.
        shuffle_buffer: 0 (default) yields framefeed's batches as they are (every batch from one video, or with
            ``pack=True`` from consecutive videos); N > 0 mixes sequences of several videos through a shuffle
            buffer of N sequences (DALI's ``random_shuffle`` with ``initial_fill=N``), seeded by ``seed``, the
            epoch and the shard, and yields batches of ``batch_size`` sequences from any of them. Each buffered
            sequence is a copy, so memory is N sequences (plus the batch being decoded) whatever the videos.
        rank: this process's rank among ``world_size`` ranks; given with ``world_size``, or neither. Default:
            found when the dataset is made, in the rank's main process, as ``DistributedSampler`` finds them
            (:func:`distributed_rank`: the ``torch.distributed`` process group, else ``RANK``/``WORLD_SIZE``
            as ``torchrun`` sets them, else 0 of 1), and carried to the DataLoader's workers with the dataset
            (spawn and forkserver workers have no process group of their own).
        world_size: the number of ranks, with ``rank``. Default: found with it.
        drop_last: how the ranks are evened out, as ``DistributedSampler``'s ``drop_last``: ``False`` (default)
            repeats the epoch's first units (files or segments) so that every rank gets as many; ``True`` drops
            the epoch's last units beyond a multiple of ``world_size``. Where the files' frame counts are known
            (cut into segments, the default for local files), the units are dealt so as to even out the ranks'
            frames too; the sequences still differ by a unit's worth at most, so a DDP loop that needs equal
            steps should stop every rank at the smallest count (or use ``clips=N``: N clips a unit).
        on_error: ``"warn"`` (default: a video that fails is skipped with a warning, after its decoded batches),
            ``"skip"`` (silently) or ``"raise"``.
        segment_frames: a file longer than this many frames is cut at keyframes into segments of at least this
            many (:func:`framefeed.segments`, read once, here: an MP4's from its index, other local files by
            demuxing without decoding; a remote video only where it is an MP4, its index read by byte ranges with
            ``storage_options``, others decoded whole rather than read through to cut), and the segments, not
            the files, are shuffled and sharded over ranks and workers: one long video keeps every worker busy.
            Together they give the sequences of one decode of each whole video (a sequence straddling a boundary
            belongs to the segment of its first frame; random clips and crop windows follow the file's position
            and the epoch), every segment exactly once per epoch. ``None``: whole files. Default 1800 (a minute
            at 30 fps).
        **keywords: any other keyword of :class:`framefeed.VideoInput` (``last_sequence_policy`` defaults to
            ``"pad"`` here, so that every batch is one tensor; with ``"partial"`` a video's ragged last batch
            comes as a list of one tensor per sequence; ``decoder_threads`` defaults to the worker's share of the
            cores).

    Yields ``(frames, info)``: the batch as a tensor (no copy), and a dict with, per sequence (a list with one
    item a sequence, right also for ``pack=True`` batches of several videos and for shuffled ones):
    ``label`` (its video's label, or path), ``path``, ``video_id`` (its video's place in the epoch, unique across
    workers and ranks), ``valid_frames``, ``first_frame``, ``indices`` (the display index of each real frame),
    ``pts`` (seconds), ``damaged`` (whether each real frame is damaged) and ``color`` (its video's colour, as
    the default collate takes it: see below); and per batch ``index`` (the batch's place in its first video)
    and ``is_last``; with ``audio=True``, ``audio`` (per sequence: a float32 tensor of (channels, samples)),
    ``audio_pts`` and ``audio_sample_rate``. With ``shuffle_buffer``, the batch is stacked from the sequences
    that came out of the buffer (a list of tensors when they differ in shape, as a ``"partial"`` policy's last
    sequences do), and ``index`` and ``is_last`` are per sequence too. No entry is ``None``: ``color`` has
    ``bit_depth`` (0 unknown), ``primaries``, ``transfer``, ``matrix``, ``range`` (``"unknown"`` where the
    video does not say), ``dynamic_range``, ``max_luminance``, ``min_luminance`` (NaN without HDR metadata),
    ``max_cll`` and ``max_fall`` (0 without).
    """

    def __init__(
        self,
        paths: Sequence[Union[str, PathLike]],
        sequence_length: int,
        batch_size: int = 1,
        *,
        labels: Optional[Sequence[Any]] = None,
        shuffle: bool = True,
        seed: int = 0,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        drop_last: bool = False,
        on_error: str = "warn",
        shuffle_buffer: int = 0,
        segment_frames: Optional[int] = 1800,
        **keywords: Any,
    ) -> None:
        super().__init__()
        if on_error not in ("warn", "skip", "raise"):
            raise ValueError(f"on_error is {on_error!r}; allowed: 'warn', 'skip', 'raise'")
        if shuffle_buffer:
            ShuffleBuffer(shuffle_buffer, 0)  # checks the setting
        self.shuffle_buffer = shuffle_buffer
        self.paths = [str(p) for p in paths]
        if labels is not None and len(labels) != len(self.paths):
            raise ValueError(f"{len(labels)} labels for {len(self.paths)} paths; allowed: one a path")
        self.labels = list(labels) if labels is not None else None
        self.sequence_length = sequence_length
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.rank, self.world_size = distributed_rank(rank, world_size)
        self._explicit_ranks = rank is not None
        self.drop_last = bool(drop_last)
        self.on_error = on_error
        keywords.setdefault("last_sequence_policy", "pad")
        if keywords.get("clips") is not None:
            # Random clips follow the dataset's seed (with each file's position and the epoch).
            keywords.setdefault("seed", seed)
        self.keywords = keywords
        self._epoch = _Epoch()
        # Checks the keywords once, here, rather than in every worker.
        ff.VideoInput(sequence_length, batch_size, **keywords).close()
        # Cut once, here (the workers get the plan with the dataset).
        self.units = _units.plan(
            self.paths,
            segment_frames,
            storage_options=keywords.get("storage_options"),
            index_cache=keywords.get("index_cache"),
        )

    @property
    def epoch(self) -> int:
        """The epoch the next iteration decodes."""
        return self._epoch.value

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch the next iteration decodes (its shuffle, its shards and its random clips), in this
        process and in the DataLoader's workers, persistent ones included (call it before iterating the loader).

        Args:
            epoch (int): The epoch.
        """
        self._epoch.value = int(epoch)

    def shard(self) -> Tuple[int, int]:
        """The calling worker's shard: ranks times DataLoader workers.

        Returns:
            ``(shard, shards)``.
        """
        worker = get_worker_info()
        workers, worker_id = (worker.num_workers, worker.id) if worker is not None else (1, 0)
        return self.rank * workers + worker_id, self.world_size * workers

    def placed(self) -> List[_units.Placed]:
        """The calling worker's units for the current epoch, in decoding order, each with its ``video_id``:
        this rank's share (:func:`framefeed._units.for_rank`), one in ``num_workers`` of it.

        Returns:
            The units, each with its place in the epoch.
        """
        self._check_group()
        worker = get_worker_info()
        workers, worker_id = (worker.num_workers, worker.id) if worker is not None else (1, 0)
        seed = self.seed if self.shuffle else None
        mine = _units.for_rank(self.units, seed, self.epoch, self.rank, self.world_size, self.drop_last)
        return mine[worker_id::workers]

    def _check_group(self) -> None:
        """A dataset that found no ranks (made before the process group) while a process group is there now
        would read every file on every rank: refused, saying so."""
        if self._explicit_ranks or not (dist.is_available() and dist.is_initialized()):
            return
        found = (dist.get_rank(), dist.get_world_size())
        if found != (self.rank, self.world_size):
            raise RuntimeError(
                f"this VideoDataset was made as rank {self.rank} of {self.world_size}, but torch.distributed's process "
                f"group says rank {found[0]} of {found[1]}: make the dataset after init_process_group (or pass "
                "rank= and world_size=), or every rank reads every file"
            )

    def files(self) -> List[str]:
        """The calling worker's files for the current epoch, in decoding order.

        Returns:
            The paths (a file cut into segments once per segment).
        """
        return [p.unit.path for p in self.placed()]

    def segments(self) -> List[_units.Unit]:
        """The calling worker's units for the current epoch, in decoding order.

        Returns:
            ``(path, position, segment)`` each, ``segment`` ``None`` for a whole file.
        """
        return [p.unit for p in self.placed()]

    def units_per_rank(self) -> int:
        """The units (files or segments) each rank decodes in an epoch, over all its workers: the same on every
        rank. (Not ``__len__``: a unit's batch count is known only once it is decoded, and a DataLoader would
        take a length for its batch count.)

        Returns:
            The units per rank.
        """
        n, world = len(self.units), self.world_size
        return n // world if self.drop_last else -(-n // world)

    def __iter__(self) -> Iterator[Tuple[Union[torch.Tensor, List[torch.Tensor]], Dict[str, Any]]]:
        if not self.shuffle_buffer:
            for batch, videos in self._batches():
                yield self._tensor(batch), self._info(batch, videos)
            return
        shard, _ = self.shard()
        buffer: ShuffleBuffer[Tuple[torch.Tensor, Dict[str, Any]]] = ShuffleBuffer(
            self.shuffle_buffer, f"{self.seed}:{self.epoch}:{shard}"
        )
        out: List[Tuple[torch.Tensor, Dict[str, Any]]] = []
        for item in chain(self._sequences(buffer), buffer.drain()):
            out.append(item)
            if len(out) == self.batch_size:
                yield self._mixed(out)
                out = []
        if out:
            yield self._mixed(out)

    def _sequences(
        self, buffer: "ShuffleBuffer[Tuple[torch.Tensor, Dict[str, Any]]]"
    ) -> Iterator[Tuple[torch.Tensor, Dict[str, Any]]]:
        """Every decoded sequence (a copy, which the buffer holds) through ``buffer``: what comes out."""
        for batch, videos in self._batches():
            for i, seq in enumerate(batch.sequences):
                info = {
                    **self._video_info(seq, videos),
                    "index": batch.index,
                    "is_last": batch.is_last and i == len(batch.sequences) - 1,
                    "valid_frames": seq.valid_frames,
                    "first_frame": seq.first_frame,
                    "indices": seq.indices,
                    "pts": seq.pts,
                    "damaged": seq.damaged,
                    "color": _collatable_color(seq.color),
                }
                if seq.audio is not None:
                    info["audio"] = torch.from_numpy(seq.audio.data)
                    info["audio_pts"] = seq.audio.pts_seconds
                    info["audio_sample_rate"] = seq.audio.sample_rate
                out = buffer.push((torch.from_dlpack(seq).clone(), info))
                if out is not None:
                    yield out

    @staticmethod
    def _mixed(items: List[Tuple[torch.Tensor, Dict[str, Any]]]) -> Tuple[Any, Dict[str, Any]]:
        """A batch of sequences from the shuffle buffer: stacked when they have one shape, and their info as
        lists."""
        tensors = [t for t, _ in items]
        frames: Union[torch.Tensor, List[torch.Tensor]] = (
            torch.stack(tensors) if len({t.shape for t in tensors}) == 1 else tensors
        )
        return frames, {key: [info[key] for _, info in items] for key in items[0][1]}

    def _video_info(self, seq: ff.Sequence, videos: List[_units.Placed]) -> Dict[str, Any]:
        """What a sequence's video is: its label, path and dataset-wide id (the sequence's label is its unit's
        place in ``videos``)."""
        placed = videos[int(seq.label)]  # type: ignore[arg-type]
        position = placed.unit.position
        label = self.labels[position] if self.labels is not None else placed.unit.path
        return {"label": label, "path": placed.unit.path, "video_id": placed.video_id}

    def _batches(self) -> Iterator[Tuple[ff.Batch, List[_units.Placed]]]:
        """This worker's framefeed batches for the current epoch, as they are decoded, with the worker's units:
        each video is fed labelled with its unit's place in that list, which its sequences carry."""
        placed = self.placed()
        epoch = self.epoch
        inp = ff.VideoInput(self.sequence_length, self.batch_size, **self.keywords)
        failure: List[BaseException] = []

        # The feeder gets the operator as an argument, not from this generator's scope: when the consumer stops
        # early, the generator closes the operator (which wakes a feeder waiting for room with ClosedError) and
        # drops its own reference, and the feeder, ending, drops the last one.
        def feed(inp: ff.VideoInput) -> None:
            try:
                for k, p in enumerate(placed):
                    unit = p.unit
                    try:
                        inp.feed_file(unit.path, k, position=unit.position, epoch=epoch, segment=unit.segment)
                    except OSError as error:
                        self._failed(f"{unit.path}: {error}")
            except ff.ClosedError:
                pass  # the consumer stopped early and closed the operator: nothing more to feed
            except BaseException as error:  # noqa: BLE001 (handed to the consumer)
                failure.append(error)
            finally:
                inp.close()

        feeder = threading.Thread(target=feed, args=(inp,), name="framefeed-feed", daemon=True)
        feeder.start()
        finished = False
        try:
            while True:
                try:
                    batch = inp.next_batch()
                except ff.VideoError as error:
                    where = placed[error.label].unit.path if isinstance(error.label, int) else error.label
                    self._failed(f"{where}: {error.reason or error}")
                    continue
                if batch is None:
                    break
                yield batch, placed
            finished = True
        finally:
            if not finished:
                inp.close()  # the consumer stopped early: a feeder waiting for room ends at once
            del inp  # with the feeder's reference gone, the decoder stops at once
        feeder.join()
        if failure:
            raise failure[0]

    def _failed(self, message: str) -> None:
        if self.on_error == "raise":
            raise RuntimeError(message)
        if self.on_error == "warn":
            warnings.warn(f"framefeed: skipping a video: {message}", RuntimeWarning, stacklevel=3)

    @staticmethod
    def _tensor(batch: ff.Batch) -> Union[torch.Tensor, List[torch.Tensor]]:
        if batch.shape is None:
            return [torch.from_dlpack(seq) for seq in batch.sequences]
        return torch.from_dlpack(batch)

    def _info(self, batch: ff.Batch, videos: List[_units.Placed]) -> Dict[str, Any]:
        sequences = batch.sequences
        per_video = [self._video_info(s, videos) for s in sequences]
        return {
            "label": [v["label"] for v in per_video],
            "path": [v["path"] for v in per_video],
            "video_id": [v["video_id"] for v in per_video],
            "index": batch.index,
            "is_last": batch.is_last,
            "valid_frames": [s.valid_frames for s in sequences],
            "first_frame": [s.first_frame for s in sequences],
            "indices": [s.indices for s in sequences],
            "pts": [s.pts for s in sequences],
            "damaged": [s.damaged for s in sequences],
            "color": [_collatable_color(s.color) for s in sequences],
            **_audio_info(sequences),
        }


def _audio_info(sequences: Sequence[ff.Sequence]) -> Dict[str, Any]:
    """With ``audio=True``, each sequence's sound: ``audio`` (a float32 tensor of (channels, samples)),
    ``audio_pts`` (seconds) and ``audio_sample_rate``; nothing without it."""
    if not sequences or sequences[0].audio is None:
        return {}
    samples = [s.audio for s in sequences if s.audio is not None]
    return {
        "audio": [torch.from_numpy(a.data) for a in samples],
        "audio_pts": [a.pts_seconds for a in samples],
        "audio_sample_rate": [a.sample_rate for a in samples],
    }


class VideoClipDataset(Dataset):
    """A map-style dataset: item ``i`` is a clip of video ``paths[i]``, its frames chosen by ``sampler`` and read
    by :class:`framefeed.VideoReader` (only the GOPs they need are decoded), as a tensor through DLPack (no copy).

    Args:
        paths: the video files.
        sampler: chooses a clip's display indices from the video's metadata and a generator seeded by ``seed``,
            the epoch and the item (the same clip for the same seed, whichever DataLoader worker reads it):
            :func:`clip_indices` (``num_frames`` frames ``stride`` apart, as VideoMAE's ``clip_len`` and
            ``frame_sample_rate``), or any callable ``(metadata, rng) -> indices`` (a module-level function or
            an object, for ``spawn`` workers, which receive the dataset pickled).
        labels: one label per path, given back in each item's info (default: the path).
        seed: seeds each item's clip, with the epoch and the item. Default 0.
        readers: how many readers each worker keeps open (re-reading a video skips its index); default 4.
        **keywords: :class:`framefeed.VideoReader`'s keywords (``dimension_order``, ``resize``, ``crop``,
            ``dtype``, ``device``...; ``threads`` defaults to the worker's share of the cores).

    An item is ``(frames, info)``: frames (N, H, W, 3) (or per ``dimension_order``), and ``info`` with ``path``,
    ``label``, ``indices``, ``pts`` (seconds) and ``damaged`` (whether each frame is damaged): nothing ``None``,
    so the default collate batches items. Use PyTorch's ``DistributedSampler`` across ranks, and
    :meth:`set_epoch` (it reaches persistent workers) for new clips each epoch.

    >>> dataset = VideoClipDataset(paths, clip_indices(16, stride=4), resize_shorter=128, crop=112,
    ...                            dtype="float32_unit", dimension_order="NCHW")
    >>> loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=2)
    >>> frames, info = next(iter(loader))
    >>> frames.shape, len(info["label"])
    (torch.Size([8, 16, 3, 112, 112]), 8)
    """

    def __init__(
        self,
        paths: Sequence[Union[str, PathLike]],
        sampler: ClipSampler,
        *,
        labels: Optional[Sequence[Any]] = None,
        seed: int = 0,
        readers: int = 4,
        **keywords: Any,
    ) -> None:
        self.paths = [str(p) for p in paths]
        if labels is not None and len(labels) != len(self.paths):
            raise ValueError(f"{len(labels)} labels for {len(self.paths)} paths; allowed: one a path")
        self.labels = list(labels) if labels is not None else None
        self.sampler = sampler
        self.seed = seed
        self._epoch = _Epoch()
        self._readers = Readers(readers, keywords)

    @property
    def epoch(self) -> int:
        """The epoch items are drawn for."""
        return self._epoch.value

    def set_epoch(self, epoch: int) -> None:
        """New clips for a new epoch (the same for the same seed and epoch), in this process and in the
        DataLoader's workers, persistent ones included (call it before iterating the loader).

        Args:
            epoch (int): The epoch.
        """
        self._epoch.value = int(epoch)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> Tuple[torch.Tensor, Dict[str, Any]]:
        path = self.paths[index]
        reader = self._readers.get(path)
        indices = frame_indices(self.sampler, reader.metadata, item_rng(self.seed, self.epoch, index))
        frames = reader.get_frames_at(indices)
        info = {
            "path": path,
            "label": self.labels[index] if self.labels is not None else path,
            "indices": frames.indices,
            "pts": frames.pts_seconds,
            "damaged": frames.damaged,
        }
        return torch.from_dlpack(frames), info
