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

__all__ = ["ClipSampler", "ClipIndices", "clip_indices", "Readers"]

ClipSampler = Callable[[ff.VideoMetadata, random.Random], Sequence[int]]
"""Chooses a clip's display indices from a video's metadata and a random generator seeded for that item."""


class ClipIndices:
    """A sampler of ``num_frames`` frames ``stride`` apart (VideoMAE's ``clip_len`` and ``frame_sample_rate``),
    starting anywhere a whole clip fits (``random_start``) or centred; a video shorter than the clip repeats its
    last frame (TorchCodec's ``repeat_last``). A plain object: it pickles, so a dataset holding it goes to
    ``spawn`` and ``forkserver`` workers. Called with ``(metadata, rng)``, it gives a clip's display indices.

    Args:
        num_frames (int): Frames in a clip. Allowed: 1 or more.
        stride (int): Frames between consecutive frames of the clip. Default 1. Allowed: 1 or more.
        random_start (bool): ``True`` (default): the clip starts anywhere it fits, drawn from ``rng``; ``False``:
            centred.

    Raises:
        ValueError: ``num_frames`` or ``stride`` below 1.
    """

    def __init__(self, num_frames: int, stride: int = 1, *, random_start: bool = True) -> None:
        if num_frames < 1 or stride < 1:
            raise ValueError(f"num_frames is {num_frames} and stride {stride}; allowed: 1 or more each")
        self.num_frames = num_frames
        self.stride = stride
        self.random_start = random_start

    def __call__(self, meta: ff.VideoMetadata, rng: random.Random) -> List[int]:
        n = meta.num_frames
        span = (self.num_frames - 1) * self.stride + 1
        room = max(n - span, 0)
        start = rng.randint(0, room) if self.random_start else room // 2
        return [min(start + j * self.stride, n - 1) for j in range(self.num_frames)]

    def __repr__(self) -> str:
        return f"clip_indices({self.num_frames}, stride={self.stride}, random_start={self.random_start})"


def clip_indices(num_frames: int, stride: int = 1, *, random_start: bool = True) -> ClipIndices:
    """A sampler of ``num_frames`` frames ``stride`` apart, for :class:`framefeed.torch.VideoClipDataset`.

    Args:
        num_frames (int): Frames in a clip. Allowed: 1 or more.
        stride (int): Frames between consecutive frames of the clip. Default 1. Allowed: 1 or more.
        random_start (bool): ``True`` (default): each clip starts anywhere it fits; ``False``: centred.

    Returns:
        The :class:`ClipIndices` sampler.

    Raises:
        ValueError: ``num_frames`` or ``stride`` below 1.
    """
    return ClipIndices(num_frames, stride, random_start=random_start)


class Readers:
    """The readers one process keeps open, the most recently used first (at most ``capacity``), opened with
    ``keywords``. Readers opened before a fork keep working in the child (each opens its video again there,
    once: :class:`framefeed.VideoReader`); pickled (a dataset sent to ``spawn`` workers), it keeps its settings
    and none of its open readers."""

    def __init__(self, capacity: int, keywords: Dict[str, Any]) -> None:
        if capacity < 1:
            raise ValueError(f"readers is {capacity}; allowed: 1 or more")
        self.capacity = capacity
        self.keywords = keywords
        self._open: "OrderedDict[str, ff.VideoReader]" = OrderedDict()

    def __getstate__(self) -> Dict[str, Any]:
        return {"capacity": self.capacity, "keywords": self.keywords}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.capacity = state["capacity"]
        self.keywords = state["keywords"]
        self._open = OrderedDict()

    def get(self, path: Union[str, "os.PathLike[str]"]) -> ff.VideoReader:
        """The reader of ``path``, opened now if it is not kept."""
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


