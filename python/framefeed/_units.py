"""Units of decoding work for the distributed readers (``framefeed.ray``, ``framefeed.torch``): a whole file, or
one segment of a long one (:func:`framefeed.segments`), each with the file's position in its dataset (which,
with the seed and the epoch, decides its random clips and crop windows, whoever decodes it).

No Ray or torch here: the plan and the sharding are tested on their own.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import framefeed as ff
from framefeed._framefeed import _segments_from_index

#: ``segment_frames="auto"``: segments sized for the job (:func:`auto_length`).
AUTO = "auto"
# The shortest segment "auto" makes: 10 s at 30 fps; shorter ones cost more to start (a keyframe to seek to, an
# actor's call) than they balance.
_AUTO_SHORTEST = 300
# The longest: a minute at 30 fps (the fixed default before "auto").
_AUTO_LONGEST = 1800
# Units each worker should have to pick from, so that handing the longest first leaves none idle long.
_UNITS_PER_WORKER = 4

SegmentFrames = Union[int, str, None]

# Threads that cut files at once, at most: reading files waits on I/O; each holds one file's index while it
# cuts (up to 0.5 GB for a ten-hour 60 fps video with audio), so not as many as there may be cores.
_MAX_THREADS = 4


class Unit(NamedTuple):
    """One video to feed: its path, its position in its dataset, its segment (``None``: whole), and how many
    frames it covers (``None`` where the plan did not read the file: a URI it does not cut, or no cutting asked
    for)."""

    path: str
    position: int
    segment: Optional[Tuple[int, int]]
    frames: Optional[int] = None


def check_segment_frames(segment_frames: SegmentFrames) -> None:
    if segment_frames == AUTO:
        return
    if isinstance(segment_frames, str) or (segment_frames is not None and segment_frames < 1):
        raise ValueError(
            f"segment_frames is {segment_frames!r}; allowed: 1 or more, 'auto', or None (whole files)"
        )


def auto_length(frame_counts: Sequence[Optional[int]], workers: int) -> int:
    """The segment length for a job of files of ``frame_counts`` frames (``None``: not known) on ``workers``
    workers: the job's frames in about ``_UNITS_PER_WORKER`` units a worker, within 300 and 1800 frames. A long
    file among short ones, or a few long files on a large pool, are then cut so that every worker has work,
    while a job of many short files is left whole."""
    total = sum(n for n in frame_counts if n)
    per_unit = -(-total // (max(1, workers) * _UNITS_PER_WORKER))
    return max(_AUTO_SHORTEST, min(_AUTO_LONGEST, per_unit))


def merge(parts: Sequence[Tuple[int, int]], every: int) -> List[Tuple[int, int]]:
    """Consecutive keyframe-aligned ``parts`` of a file joined into parts of at least ``every`` frames (a
    shorter rest joins the last): each boundary kept is one of the parts', so each part still starts at a
    keyframe."""
    merged: List[Tuple[int, int]] = []
    start = None
    for first, end in parts:
        start = first if start is None else start
        if end - start >= every:
            merged.append((start, end))
            start = None
    if start is not None:
        end = parts[-1][1]
        if merged:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def plan(
    paths: Sequence[str],
    segment_frames: SegmentFrames,
    workers: int = 1,
    storage_options: Optional[Dict[str, Any]] = None,
    index_cache: Optional[str] = None,
) -> List[Unit]:
    """The units of ``paths``, in order: each local file longer than ``segment_frames`` in keyframe-aligned
    segments (an MP4's read from its index, others by demuxing without decoding), and so each remote video
    (``s3://``, ``gs://``, ``az://``, ``https://``, with ``storage_options`` and ``index_cache``) whose container
    lists its packets (an MP4's ``moov``, read by byte ranges); the others whole: a remote video without such an
    index (Matroska, a transport stream: cutting it would read it through), another URI, and files that cannot
    be read here (their decoder reports why). The files are read on a few threads at once
    (:func:`framefeed.segments` lets go of the GIL): a dataset of many files, or files on a network filesystem
    or in an object store, is cut in a fraction of the time one by one takes.

    ``segment_frames="auto"``: the files are cut as finely as ``auto`` goes, then their parts joined to the
    length :func:`auto_length` picks for the job's frames on ``workers`` workers (one read of each file)."""
    check_segment_frames(segment_frames)
    finest = _AUTO_SHORTEST if segment_frames == AUTO else segment_frames

    def cut(path: str) -> List[Tuple[int, int]]:
        if finest is None:
            return []
        try:
            if ff.is_remote_url(path):
                parts = _segments_from_index(
                    path, int(finest), storage_options=storage_options, index_cache=index_cache
                )
                return parts or []
            if "://" in path:
                return []
            return ff.segments(path, int(finest))
        except (OSError, ff.FramefeedError, ValueError):
            return []

    threads = min(_MAX_THREADS, len(paths), (os.cpu_count() or 1) + 4)
    if threads > 1 and segment_frames is not None:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="framefeed-cut") as pool:
            cuts = list(pool.map(cut, paths))
    else:
        cuts = [cut(path) for path in paths]
    if segment_frames == AUTO:
        every = auto_length([parts[-1][1] if parts else None for parts in cuts], workers)
        cuts = [merge(parts, every) if parts else parts for parts in cuts]
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


class Placed(NamedTuple):
    """A unit placed in an epoch: ``video_id``, its place in the epoch's order over all ranks (unique across
    ranks and workers; a unit repeated to even the ranks out gets an id of its own), and the unit."""

    video_id: int
    unit: Unit


def for_rank(
    units: Sequence[Unit], seed: Optional[int], epoch: int, rank: int, world: int, drop_last: bool = False
) -> List[Placed]:
    """Rank ``rank``'s share of ``units`` for ``epoch`` (of ``world`` ranks), in feeding order, every rank
    getting the same number of units, as PyTorch's ``DistributedSampler`` shares indices: the epoch's order
    (shuffled when ``seed`` is given, the permutation :func:`for_epoch` draws) is padded by repeating its first
    units up to a multiple of ``world`` (``drop_last=False``), or its last units beyond one are dropped
    (``drop_last=True``). Where every unit's frame count is known (local files, cut or read), the units are
    dealt to the ranks so as to even out their frames (the longest first, each to the rank with the fewest frames
    among those still short of their count); otherwise one in ``world`` each, in order. Each rank's units then
    come in the epoch's order."""
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"rank is {rank} of world_size {world}; allowed: 0 <= rank < world_size")
    order = ff.FileList([str(i) for i in range(len(units))])
    if seed is not None:
        order = order.shuffle(seed)
    picked = [int(str(i)) for i in order.epoch(epoch)]
    n = len(picked)
    if drop_last:
        total = n // world * world
    else:
        total = -(-n // world) * world
    while len(picked) < total:
        picked += picked[: total - len(picked)]
    picked = picked[:total]
    per_rank = total // world
    if all(units[i].frames is not None for i in picked):
        owner = [0] * total
        frames = [0] * world
        counts = [0] * world
        for place in sorted(range(total), key=lambda p: -(units[picked[p]].frames or 0)):
            r = min((r for r in range(world) if counts[r] < per_rank), key=lambda r: (frames[r], r))
            owner[place] = r
            frames[r] += units[picked[place]].frames or 0
            counts[r] += 1
        mine = [p for p in range(total) if owner[p] == rank]
    else:
        mine = list(range(rank, total, world))
    return [Placed(p, units[picked[p]]) for p in mine]
