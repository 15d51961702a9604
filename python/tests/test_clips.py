"""The map-style clip dataset's parts that need no torch: clip indices from a seeded generator (the same clip for the
same seed, epoch and item, whichever worker), short videos, and the readers a worker keeps (none from its parent)."""

from __future__ import annotations

import os

import pytest

import framefeed as ff
from framefeed._clips import Readers, clip_indices, frame_indices, item_rng


def test_clips_are_seeded_by_seed_epoch_and_item_and_stay_inside_the_video() -> None:
    meta = ff.VideoReader(ff.SAMPLE_MP4).metadata  # 60 frames
    sampler = clip_indices(8, stride=4)  # spans 29 frames
    a = frame_indices(sampler, meta, item_rng(1, 0, 5))
    assert a == frame_indices(sampler, meta, item_rng(1, 0, 5))
    assert len({tuple(frame_indices(sampler, meta, item_rng(1, e, 5))) for e in range(8)}) > 1, "epochs differ"
    assert all(b - a_ == 4 for a_, b in zip(a, a[1:])) and 0 <= a[0] and a[-1] < 60
    assert frame_indices(clip_indices(8, 4, random_start=False), meta, item_rng(0, 0, 0))[0] == (60 - 29) // 2
    # Longer than the video: the last frame repeated.
    long = frame_indices(clip_indices(20, stride=4), meta, item_rng(0, 0, 0))
    assert long[:15] == list(range(0, 60, 4)) and long[15:] == [59] * 5
    with pytest.raises(ValueError, match="allowed: 1 or more"):
        clip_indices(0)
    with pytest.raises(ValueError, match="the sampler chose frame 60 of a video of 60 frames"):
        frame_indices(lambda m, r: [60], meta, item_rng(0, 0, 0))


def test_readers_are_kept_most_recent_first_work_across_a_fork_and_pickle_without_them(tmp_path) -> None:
    import pickle

    paths = []
    for i in range(3):
        p = tmp_path / f"{i}.mp4"
        p.write_bytes(ff.SAMPLE_MP4)
        paths.append(p)
    readers = Readers(2, {"resize": (32, 24)})
    first = readers.get(paths[0])
    assert readers.get(paths[0]) is first and first[0].shape == (24, 32, 3)
    readers.get(paths[1])
    readers.get(paths[2])
    assert len(readers) == 2 and readers.get(paths[0]) is not first, "the least recent was closed"
    kept = readers.get(paths[0])
    want = kept[7]
    pid = os.fork()
    if pid == 0:  # a DataLoader worker started by fork: the parent's readers work here (opened again)
        ok = readers.get(paths[0]) is kept and (kept[7] == want).all() and len(readers) == 2
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    copy = pickle.loads(pickle.dumps(readers))
    assert len(copy) == 0 and copy.capacity == 2 and copy.get(paths[1])[0].shape == (24, 32, 3)
