"""The map-style clip dataset's parts that need no torch (``framefeed.torch.VideoClipDataset``): which frames a
clip of a video takes, drawn from the seed, the epoch and the video's place, and the readers a worker keeps open.

Tested on their own (torch is not needed).
"""

from __future__ import annotations

import os
import random
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Sequence, Union

import framefeed as ff

__all__ = ["ClipSampler", "clip_indices", "Readers"]

ClipSampler = Callable[[ff.VideoMetadata, random.Random], Sequence[int]]
"""Chooses a clip's display indices from a video's metadata and a random generator seeded for that item."""


def clip_indices(num_frames: int, stride: int = 1, *, random_start: bool = True) -> ClipSampler:
    """A sampler of ``num_frames`` frames ``stride`` apart (VideoMAE's ``clip_len`` and ``frame_sample_rate``),
    starting anywhere a whole clip fits (``random_start``) or centred; a video shorter than the clip repeats its
    last frame (TorchCodec's ``repeat_last``)."""
    if num_frames < 1 or stride < 1:
        raise ValueError(f"num_frames is {num_frames} and stride {stride}; allowed: 1 or more each")
    span = (num_frames - 1) * stride + 1

    def sample(meta: ff.VideoMetadata, rng: random.Random) -> List[int]:
        n = meta.num_frames
        room = max(n - span, 0)
        start = rng.randint(0, room) if random_start else room // 2
        return [min(start + j * stride, n - 1) for j in range(num_frames)]

    return sample


# Readers a forked process inherited from its parent: kept, never closed there (closing a decoder joins its
# threads, which the fork did not copy: it would wait forever); a DataLoader worker ends with os._exit.
_INHERITED: List[ff.VideoReader] = []


class Readers:
    """The readers one process keeps open, the most recently used first (at most ``capacity``), opened with
    ``keywords``. A process made by ``fork`` (DataLoader workers) starts with none of its parent's."""

    def __init__(self, capacity: int, keywords: Dict[str, Any]) -> None:
        if capacity < 1:
            raise ValueError(f"readers is {capacity}; allowed: 1 or more")
        self.capacity = capacity
        self.keywords = keywords
        self._open: "OrderedDict[str, ff.VideoReader]" = OrderedDict()
        self._pid = os.getpid()

    def get(self, path: Union[str, "os.PathLike[str]"]) -> ff.VideoReader:
        """The reader of ``path``, opened now if it is not kept."""
        if os.getpid() != self._pid:
            # The parent's readers (and their decoders' threads) are not this process's.
            _INHERITED.extend(self._open.values())
            self._open.clear()
            self._pid = os.getpid()
        key = os.fspath(path)
        reader = self._open.pop(key, None)
        if reader is None:
            reader = ff.VideoReader(key, **self.keywords)
        self._open[key] = reader
        while len(self._open) > self.capacity:
            self._open.popitem(last=False)
        return reader

    def __len__(self) -> int:
        return len(self._open)


def item_rng(seed: int, epoch: int, index: int) -> random.Random:
    """The generator of item ``index`` in ``epoch``: the same clip for the same seed, whichever worker reads it."""
    return random.Random(f"{seed}:{epoch}:{index}")


def frame_indices(sampler: ClipSampler, meta: ff.VideoMetadata, rng: random.Random) -> List[int]:
    """The sampler's indices, checked against the video."""
    indices = [int(i) for i in sampler(meta, rng)]
    bad = [i for i in indices if not 0 <= i < meta.num_frames]
    if bad:
        raise ValueError(f"the sampler chose frame {bad[0]} of a video of {meta.num_frames} frames")
    return indices


