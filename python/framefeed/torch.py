"""PyTorch: :class:`VideoDataset`, an ``IterableDataset`` of video files decoded by framefeed, and
:class:`VideoClipDataset`, a map-style dataset of clips read by :class:`framefeed.VideoReader` (the shape of
torchvision's and VideoMAE's datasets: an index in, a clip out).

``torch`` is imported only by this module. Each DataLoader worker (and each ``torch.distributed`` rank) makes its
own operator, after the fork, and takes its own shard of the files: every file is decoded exactly once per
epoch across all of them. Batches reach PyTorch through DLPack, without a copy.

>>> from torch.utils.data import DataLoader
>>> dataset = VideoDataset(paths, sequence_length=16, batch_size=4, resize_shorter=128, crop=112,
...                        dtype="float32_unit", layout="CFHW")
>>> for epoch in range(10):
...     dataset.set_epoch(epoch)
...     for frames, info in DataLoader(dataset, batch_size=None, num_workers=4):
...         ...  # frames: (4, 3, 16, 112, 112) float32; info["label"] is the file's path

Training on long videos, a few clips of each per epoch, sequences of several videos mixed in every batch:

>>> dataset = VideoDataset(paths, sequence_length=8, batch_size=16, clips=4, shuffle_buffer=256, crop=224,
...                        dtype="float32_unit", layout="CFHW")
>>> dataset.set_epoch(epoch)  # new clips (and a new order) every epoch; the same ones for the same seed
"""

from __future__ import annotations

import threading
import warnings
from itertools import chain
from os import PathLike
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import torch
import torch.distributed as dist
from torch.utils.data import Dataset, IterableDataset, get_worker_info

import framefeed as ff
from framefeed import _units
from framefeed._clips import ClipSampler, Readers, clip_indices, frame_indices, item_rng
from framefeed._shuffle import ShuffleBuffer

__all__ = ["VideoDataset", "VideoClipDataset", "clip_indices"]


class VideoDataset(IterableDataset):
    """Batches of frame sequences from video files, sharded over DataLoader workers and distributed ranks.

    Args:
        paths: the video files.
        sequence_length, batch_size: as for :class:`framefeed.VideoInput`.
        shuffle: shuffle the files every epoch (a permutation drawn from ``seed`` and the epoch).
        seed: the shuffle's seed (the same on every rank, so that the shards partition the files), also the
            seed of random clips (``clips=N``): each file's clips are decided by the seed, its position in
            ``paths`` and the epoch, so :meth:`set_epoch` gives new clips and the same seed the same ones,
            whichever worker decodes the file.
        shuffle_buffer: 0 (default) yields framefeed's batches as they are (every batch from one video); N > 0
            mixes sequences of several videos through a shuffle buffer of N sequences (DALI's
            ``random_shuffle`` with ``initial_fill=N``), seeded by ``seed``, the epoch and the shard, and
            yields batches of ``batch_size`` sequences from any of them. Each buffered sequence is a copy, so
            memory is N sequences (plus the batch being decoded) whatever the videos.
        rank, world_size: this process's rank among ``world_size`` (default: ``torch.distributed``'s, when it
            is initialized, else 0 of 1).
        on_error: ``"warn"`` (default: a video that fails is skipped with a warning, after its decoded batches),
            ``"skip"`` (silently) or ``"raise"``.
        segment_frames: a local file longer than this many frames is cut at keyframes into segments of at least this
            many (:func:`framefeed.segments`, read once, here: an MP4's from its index, others by demuxing without
            decoding), and the segments, not the files, are shuffled and sharded over ranks and workers: one long video
            keeps every worker busy. Together they give the sequences of one decode of each whole video (a sequence
            straddling a boundary belongs to the segment of its first frame; random clips and crop windows follow the
            file's position and the epoch), every segment exactly once per epoch. ``None``: whole files. Default 1800 (a
            minute at 30 fps).
        **keywords: any other keyword of :class:`framefeed.VideoInput` (``last_sequence_policy`` defaults to
            ``"pad"`` here, so that every batch is one tensor; with ``"partial"`` a video's ragged last batch
            comes as a list of one tensor per sequence).

    Yields ``(frames, info)``: the batch as a tensor (no copy), and a dict with ``video_id``, ``label`` (the
    file's path), ``index``, ``is_last``, ``valid_frames`` (per sequence), ``first_frame`` (per sequence),
    ``indices`` (per sequence: the display index of each real frame), ``pts`` (per sequence, seconds),
    ``damaged`` (per sequence: whether each real frame is damaged) and ``color`` (per sequence: its video's
    :class:`framefeed.types.ColorInfo`, bit depth, transfer and HDR metadata included); with ``audio=True``,
    ``audio`` (per sequence: the sound played with its frames, a float32 tensor of (channels, samples)),
    ``audio_pts`` and ``audio_sample_rate``. With
    ``shuffle_buffer``, the batch is stacked from the sequences that came out of the buffer (a list of tensors
    when they differ in shape, as a ``"partial"`` policy's last sequences do) and every entry of ``info`` is a
    list with one item per sequence.
    """

    def __init__(
        self,
        paths: Sequence[Union[str, PathLike]],
        sequence_length: int,
        batch_size: int = 1,
        *,
        shuffle: bool = True,
        seed: int = 0,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
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
        self.sequence_length = sequence_length
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self.on_error = on_error
        keywords.setdefault("last_sequence_policy", "pad")
        if keywords.get("clips") is not None:
            # Random clips follow the dataset's seed (with each file's position and the epoch).
            keywords.setdefault("seed", seed)
        self.keywords = keywords
        self.epoch = 0
        # Checks the keywords once, here, rather than in every worker.
        ff.VideoInput(sequence_length, batch_size, **keywords).close()
        # Cut once, here (the workers get the plan with the dataset).
        self.units = _units.plan(self.paths, segment_frames)

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next iteration decodes (its shuffle, its shards and its random clips)."""
        self.epoch = epoch

    def shard(self) -> Tuple[int, int]:
        """``(shard, shards)`` of the calling worker: ranks times DataLoader workers."""
        rank, world = self.rank, self.world_size
        if rank is None or world is None:
            initialized = dist.is_available() and dist.is_initialized()
            rank = dist.get_rank() if initialized and rank is None else (rank or 0)
            world = dist.get_world_size() if initialized and world is None else (world or 1)
        worker = get_worker_info()
        workers, worker_id = (worker.num_workers, worker.id) if worker is not None else (1, 0)
        return rank * workers + worker_id, world * workers

    def files(self) -> List[str]:
        """The calling worker's files for the current epoch, in decoding order."""
        shard, shards = self.shard()
        return [str(p) for p in self._file_list().shard(shard, shards).epoch(self.epoch)]

    def _file_list(self) -> ff.FileList:
        files = ff.FileList(self.paths)
        return files.shuffle(self.seed) if self.shuffle else files

    def segments(self) -> List[_units.Unit]:
        """The calling worker's units for the current epoch, in decoding order: ``(path, position, segment)``,
        ``segment`` ``None`` for a whole file."""
        shard, shards = self.shard()
        return _units.for_epoch(self.units, self.seed if self.shuffle else None, self.epoch, shard, shards)

    def __iter__(self) -> Iterator[Tuple[Union[torch.Tensor, List[torch.Tensor]], Dict[str, Any]]]:
        if not self.shuffle_buffer:
            for batch in self._batches():
                yield self._tensor(batch), self._info(batch)
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
        for batch in self._batches():
            for i, seq in enumerate(batch.sequences):
                info = {
                    "video_id": batch.video_id,
                    "label": batch.label,
                    "index": batch.index,
                    "is_last": batch.is_last and i == len(batch.sequences) - 1,
                    "valid_frames": seq.valid_frames,
                    "first_frame": seq.first_frame,
                    "indices": seq.indices,
                    "pts": seq.pts,
                    "damaged": seq.damaged,
                    "color": seq.color,
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

    def _batches(self) -> Iterator[ff.Batch]:
        """This worker's framefeed batches for the current epoch, as they are decoded."""
        shard, shards = self.shard()
        files = self._file_list().shard(shard, shards)
        cut = any(u.segment is not None for u in self.units)
        inp = ff.VideoInput(self.sequence_length, self.batch_size, **self.keywords)
        failure: List[BaseException] = []

        def feed_units() -> None:
            for unit in self.segments():
                try:
                    inp.feed_file(unit.path, unit.path, position=unit.position, epoch=self.epoch,
                                  segment=unit.segment)
                except OSError as error:
                    self._failed(f"{unit.path}: {error}")

        def feed() -> None:
            try:
                if cut:
                    feed_units()
                else:
                    report = files.feed_epoch(inp, self.epoch)
                    for path, why in report["unreadable"]:
                        self._failed(f"{path}: {why}")
            except BaseException as error:  # noqa: BLE001 (handed to the consumer)
                failure.append(error)
            finally:
                inp.close()

        feeder = threading.Thread(target=feed, name="framefeed-feed", daemon=True)
        feeder.start()
        try:
            while True:
                try:
                    batch = inp.next_batch()
                except ff.VideoError as error:
                    self._failed(str(error))
                    continue
                if batch is None:
                    break
                yield batch
        finally:
            del inp  # stops the decoder at once if the consumer stopped early
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

    @staticmethod
    def _info(batch: ff.Batch) -> Dict[str, Any]:
        sequences = batch.sequences
        return {
            "video_id": batch.video_id,
            "label": batch.label,
            "index": batch.index,
            "is_last": batch.is_last,
            "valid_frames": [s.valid_frames for s in sequences],
            "first_frame": [s.first_frame for s in sequences],
            "indices": [s.indices for s in sequences],
            "pts": [s.pts for s in sequences],
            "damaged": [s.damaged for s in sequences],
            "color": [s.color for s in sequences],
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
            ``frame_sample_rate``), or any callable ``(metadata, rng) -> indices``.
        labels: one label per path, given back in each item's info.
        readers: how many readers each worker keeps open (re-reading a video skips its index).
        **keywords: :class:`framefeed.VideoReader`'s keywords (``dimension_order``, ``resize``, ``crop``,
            ``dtype``, ``device``...).

    An item is ``(frames, info)``: frames (N, H, W, 3) (or per ``dimension_order``), and ``info`` with ``path``,
    ``label``, ``indices``, ``pts`` (seconds) and ``damaged`` (whether each frame is damaged).

    >>> dataset = VideoClipDataset(paths, clip_indices(16, stride=4), resize_shorter=128, crop=112,
    ...                            dtype="float32_unit", dimension_order="NCHW")
    >>> loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=4)
    """

    def __init__(
        self,
        paths: Sequence[Union[str, PathLike]],
        sampler: ClipSampler,
        *,
        labels: Optional[Sequence[Any]] = None,
        seed: int = 0,
        readers: int = 8,
        **keywords: Any,
    ) -> None:
        self.paths = [str(p) for p in paths]
        if labels is not None and len(labels) != len(self.paths):
            raise ValueError(f"{len(labels)} labels for {len(self.paths)} paths; allowed: one a path")
        self.labels = list(labels) if labels is not None else None
        self.sampler = sampler
        self.seed = seed
        self.epoch = 0
        self._readers = Readers(readers, keywords)

    def set_epoch(self, epoch: int) -> None:
        """New clips for a new epoch (the same for the same seed and epoch)."""
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> Tuple[torch.Tensor, Dict[str, Any]]:
        path = self.paths[index]
        reader = self._readers.get(path)
        indices = frame_indices(self.sampler, reader.metadata, item_rng(self.seed, self.epoch, index))
        frames = reader.get_frames_at(indices)
        info = {
            "path": path,
            "label": self.labels[index] if self.labels is not None else None,
            "indices": frames.indices,
            "pts": frames.pts_seconds,
            "damaged": frames.damaged,
        }
        return torch.from_dlpack(frames), info
