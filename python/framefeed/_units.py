"""Units of decoding work for the distributed readers (``framefeed.ray``, ``framefeed.torch``): a whole file, or
one segment of a long one (:func:`framefeed.segments`), each with the file's position in its dataset (which,
with the seed and the epoch, decides its random clips and crop windows, whoever decodes it).

No Ray or torch here: the plan and the sharding are tested on their own.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import List, NamedTuple, Optional, Sequence, Tuple

import framefeed as ff

# Threads that cut files at once, at most: reading files waits on I/O; each holds one file's index while it
# cuts (up to 0.5 GB for a ten-hour 60 fps video with audio), so not as many as there may be cores.
_MAX_THREADS = 4


class Unit(NamedTuple):
    """One video to feed: its path, its position in its dataset, its segment (``None``: whole), and how many
    frames it covers (``None`` where the plan did not read the file: a URI, or no cutting asked for)."""

    path: str
    position: int
    segment: Optional[Tuple[int, int]]
    frames: Optional[int] = None


def check_segment_frames(segment_frames: Optional[int]) -> None:
    if segment_frames is not None and segment_frames < 1:
        raise ValueError(f"segment_frames is {segment_frames}; allowed: 1 or more, or None (whole files)")


def plan(paths: Sequence[str], segment_frames: Optional[int]) -> List[Unit]:
    """The units of ``paths``, in order: each local file longer than ``segment_frames`` in keyframe-aligned
    segments (an MP4's read from its index, others by demuxing without decoding), the others whole, as are
    files given by URI (read whole by whoever decodes them) and files that cannot be read here (their decoder
    reports why). The files are read on a few threads at once (:func:`framefeed.segments` lets go of the GIL):
    a dataset of many files, or files on a network filesystem, is cut in a fraction of the time one by one
    takes."""
    check_segment_frames(segment_frames)

    def cut(path: str) -> List[Tuple[int, int]]:
        if segment_frames is None or "://" in path:
            return []
        try:
            return ff.segments(path, segment_frames)
        except (OSError, ff.FramefeedError, ValueError):
            return []

    workers = min(_MAX_THREADS, len(paths), (os.cpu_count() or 1) + 4)
    if workers > 1 and segment_frames is not None:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="framefeed-cut") as pool:
            cuts = list(pool.map(cut, paths))
    else:
        cuts = [cut(path) for path in paths]
    units: List[Unit] = []
    for position, (path, parts) in enumerate(zip(paths, cuts)):
        if len(parts) <= 1:
            units.append(Unit(path, position, None, parts[0][1] - parts[0][0] if parts else None))
        else:
            units.extend(Unit(path, position, part, part[1] - part[0]) for part in parts)
    return units


def longest_first(units: Sequence[Unit]) -> List[Unit]:
    """``units`` with the longest first (those of unknown length before all, as they may be the longest), ties
    in their given order: handed out in this order to whichever worker is free, the last units to finish are
    the shortest, so no worker idles long while another ends a long one (longest-processing-time-first)."""
    return sorted(units, key=lambda u: -(u.frames if u.frames is not None else float("inf")))


def for_epoch(units: Sequence[Unit], seed: Optional[int], epoch: int, shard: int, shards: int) -> List[Unit]:
    """Shard ``shard`` of ``shards`` of ``units`` for ``epoch``, in feeding order: shuffled per epoch when
    ``seed`` is given (the permutation :class:`framefeed.FileList` draws, so whole files keep their order of
    before), every unit in exactly one shard."""
    order = ff.FileList([str(i) for i in range(len(units))])
    if seed is not None:
        order = order.shuffle(seed)
    return [units[int(str(i))] for i in order.shard(shard, shards).epoch(epoch)]
