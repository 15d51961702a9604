"""The units the distributed readers decode (``framefeed._units``, used by ``framefeed.ray`` and
``framefeed.torch``): long files cut into keyframe segments and short ones kept whole; every unit in exactly one
shard per epoch over ranks and workers, reshuffled per epoch as files are; the units of a file, fed apart, give
the sequences of its whole decode."""

from __future__ import annotations

import collections

import pytest

import framefeed as ff
from conftest import FIXTURES
from framefeed import _units

LONG = str(FIXTURES / "sampling_h264_open_gop.mp4")  # 150 frames, keyframes every ~24
SHORT = str(FIXTURES / "h264.mp4")  # 23 frames


def test_long_files_are_cut_and_short_ones_stay_whole():
    units = _units.plan([SHORT, LONG, "s3://bucket/x.mp4", str(FIXTURES / "missing.mp4")], 40)
    assert units[0] == _units.Unit(SHORT, 0, None, 23)
    cut = [u for u in units if u.path == LONG]
    assert [u.segment for u in cut] == ff.segments(LONG, 40) and len(cut) >= 3
    assert all(u.position == 1 for u in cut)
    assert [u.frames for u in cut] == [b - a for a, b in ff.segments(LONG, 40)]
    assert sum(u.frames for u in cut) == 150
    assert units[-2:] == [_units.Unit("s3://bucket/x.mp4", 2, None),
                          _units.Unit(str(FIXTURES / "missing.mp4"), 3, None)]
    assert _units.plan([LONG], None) == [_units.Unit(LONG, 0, None)]
    with pytest.raises(ValueError, match="segment_frames is 0"):
        _units.plan([LONG], 0)


def test_longest_first_puts_unknown_lengths_first_and_keeps_ties_in_order():
    units = _units.plan([SHORT, LONG, "s3://bucket/x.mp4", SHORT], 40)
    ordered = _units.longest_first(units)
    assert collections.Counter(ordered) == collections.Counter(units)
    assert ordered[0].path == "s3://bucket/x.mp4"
    lengths = [u.frames for u in ordered[1:]]
    assert lengths == sorted(lengths, reverse=True)
    assert [u.position for u in ordered if u.path == SHORT] == [0, 3], "ties keep their order"


@pytest.mark.parametrize("seed", [None, 7])
def test_every_unit_once_per_epoch_over_ranks_and_workers(seed):
    units = _units.plan([SHORT, LONG, SHORT, LONG], 30)
    orders = []
    for epoch in range(3):
        seen = []
        for shard in range(4):  # 2 ranks x 2 workers
            seen += _units.for_epoch(units, seed, epoch, shard, 4)
        assert collections.Counter(seen) == collections.Counter(units), epoch
        orders.append(seen)
    if seed is None:
        assert orders[0] == orders[1]
    else:
        assert orders[0] != orders[1], "a new shuffle each epoch"
        assert _units.for_epoch(units, seed, 1, 2, 4) == _units.for_epoch(units, seed, 1, 2, 4)


def test_whole_files_keep_the_file_lists_order():
    paths = [SHORT, str(FIXTURES / "vp9.webm"), str(FIXTURES / "h264.mkv")]
    units = _units.plan(paths, 1800)
    for epoch in range(2):
        want = [str(p) for p in ff.FileList(paths).shuffle(3).shard(1, 2).epoch(epoch)]
        assert [u.path for u in _units.for_epoch(units, 3, epoch, 1, 2)] == want


def test_a_files_units_fed_apart_give_its_whole_decode():
    def decoded(inp):
        inp.close()
        return [(s.first_frame, s.numpy().tobytes()) for b in inp for s in b.sequences]

    kwargs = dict(crop=48, crop_pos="random", seed=4)
    whole = ff.VideoInput(4, 2, **kwargs)
    whole.feed_file(LONG, position=1, epoch=2)
    parts = ff.VideoInput(4, 2, **kwargs)
    units = _units.plan([SHORT, LONG], 30)
    for unit in reversed(units):  # any order, any worker
        if unit.path == LONG:
            parts.feed_file(unit.path, position=unit.position, epoch=2, segment=unit.segment)
    assert sorted(decoded(parts)) == decoded(whole)
