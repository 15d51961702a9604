"""PyTorch: :class:`VideoDataset`, an ``IterableDataset`` of video files decoded by framefeed.

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
"""

from __future__ import annotations

import threading
import warnings
from os import PathLike
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import torch
import torch.distributed as dist
from torch.utils.data import IterableDataset, get_worker_info

import framefeed as ff

__all__ = ["VideoDataset"]


class VideoDataset(IterableDataset):
    """Batches of frame sequences from video files, sharded over DataLoader workers and distributed ranks.

    Args:
        paths: the video files.
        sequence_length, batch_size: as for :class:`framefeed.VideoInput`.
        shuffle: shuffle the files every epoch (a permutation drawn from ``seed`` and the epoch).
        seed: the shuffle's seed (the same on every rank, so that the shards partition the files).
        rank, world_size: this process's rank among ``world_size`` (default: ``torch.distributed``'s, when it
            is initialized, else 0 of 1).
        on_error: ``"warn"`` (default: a video that fails is skipped with a warning, after its decoded batches),
            ``"skip"`` (silently) or ``"raise"``.
        **keywords: any other keyword of :class:`framefeed.VideoInput` (``last_sequence_policy`` defaults to
            ``"pad"`` here, so that every batch is one tensor; with ``"partial"`` a video's ragged last batch
            comes as a list of one tensor per sequence).

    Yields ``(frames, info)``: the batch as a tensor (no copy), and a dict with ``video_id``, ``label`` (the
    file's path), ``index``, ``is_last``, ``valid_frames`` (per sequence), ``first_frame`` (per sequence) and
    ``pts`` (per sequence, seconds).
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
        **keywords: Any,
    ) -> None:
        super().__init__()
        if on_error not in ("warn", "skip", "raise"):
            raise ValueError(f"on_error is {on_error!r}; allowed: 'warn', 'skip', 'raise'")
        self.paths = [str(p) for p in paths]
        self.sequence_length = sequence_length
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self.on_error = on_error
        keywords.setdefault("last_sequence_policy", "pad")
        self.keywords = keywords
        self.epoch = 0
        # Checks the keywords once, here, rather than in every worker.
        ff.VideoInput(sequence_length, batch_size, **keywords).close()

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next iteration decodes (its shuffle and its shards)."""
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

    def __iter__(self) -> Iterator[Tuple[Union[torch.Tensor, List[torch.Tensor]], Dict[str, Any]]]:
        shard, shards = self.shard()
        files = self._file_list().shard(shard, shards)
        inp = ff.VideoInput(self.sequence_length, self.batch_size, **self.keywords)
        failure: List[BaseException] = []

        def feed() -> None:
            try:
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
                yield self._tensor(batch), self._info(batch)
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
            "pts": [s.pts for s in sequences],
        }
