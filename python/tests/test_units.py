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


def test_auto_sizes_the_segments_for_the_job():
    # A 60 s file among four 6 s ones (30 fps) on 2 workers: units of about a job's eighth, 315 frames.
    assert _units.auto_length([1800, 180, 180, 180, 180], 2) == 315
    # Never under 300 (tiny jobs, unknown lengths) nor over 1800 (a long job on a small pool).
    assert _units.auto_length([100, None], 8) == 300
    assert _units.auto_length([], 4) == 300
    assert _units.auto_length([36_000], 2) == 1800
    # Parts joined into at least `every` frames, every boundary one of the parts', the rest joining the last.
    parts = [(0, 300), (300, 620), (620, 900), (900, 1000)]
    assert _units.merge(parts, 600) == [(0, 1000)]  # (620, 1000) would be short: it joins
    assert _units.merge(parts, 300) == [(0, 300), (300, 620), (620, 1000)]
    assert _units.merge(parts, 5000) == [(0, 1000)]
    assert _units.merge(parts, 1) == parts
    for bad in ("fast", 0):
        with pytest.raises(ValueError, match="allowed: 1 or more, 'auto', or None"):
            _units.check_segment_frames(bad)


def test_auto_cuts_a_long_file_for_the_pool_and_keeps_short_ones_whole(monkeypatch):
    # The fixtures are short: auto's floor scaled down to them (150 + 23 frames on 2 workers: about 22 a unit).
    monkeypatch.setattr(_units, "_AUTO_SHORTEST", 20)
    units = _units.plan([SHORT, LONG], _units.AUTO, workers=2)
    assert units[0] == _units.Unit(SHORT, 0, None, 23)
    cut = [u.segment for u in units if u.path == LONG]
    assert len(cut) >= 3 and cut[0][0] == 0 and cut[-1][1] == 150
    assert all(a[1] == b[0] for a, b in zip(cut, cut[1:])), "contiguous"
    assert all(end - first >= 22 for first, end in cut)
    boundaries = {first for first, _ in ff.segments(LONG, 20)}
    assert {first for first, _ in cut} <= boundaries, "each starts where a finer cut starts: at a keyframe"
    # One worker and the same files: fewer, longer units.
    assert len([u for u in _units.plan([SHORT, LONG], _units.AUTO, workers=1) if u.path == LONG]) < len(cut)
    # Joined parts decode as the whole does.
    whole = ff.VideoInput(4, 2)
    whole.feed_file(LONG)
    parts = ff.VideoInput(4, 2)
    for unit in units:
        if unit.path == LONG:
            parts.feed_file(LONG, position=0, segment=unit.segment)
    for inp in (whole, parts):
        inp.close()
    frames = [sorted((s.first_frame, s.numpy().tobytes()) for b in inp for s in b.sequences) for inp in (whole, parts)]
    assert frames[0] == frames[1]


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
