"""Damaged videos from Python: one numbering (a hole keeps its index), damage reported per frame (``damaged`` on
sequences and ``Frames``), one damage policy (``strict``), the same in ``VideoInput``, ``VideoReader`` and
``framefeed.compat.decord``. The damage is made here, deterministically, on a committed fixture (the Rust
``tests/damaged_videos.rs`` covers every container and API against the ffmpeg CLI)."""

from __future__ import annotations

import hashlib
import pathlib
from typing import Dict, List, Set, Tuple

import numpy as np
import pytest

import framefeed as ff
import framefeed.compat.decord as decord
from conftest import all_results, fixture
from framefeed.compat.decord.base import DECORDError


def damaged_copy(tmp_path: pathlib.Path) -> pathlib.Path:
    """``damage_h264.mp4`` with 400 random bytes (seeded) written at 55 %: a picture that does not decode (a hole)
    and damaged frames around it."""
    data = bytearray(fixture("damage_h264.mp4"))
    start = int(len(data) * 0.55)
    data[start:start + 400] = np.random.default_rng(7).integers(0, 256, 400, dtype=np.uint8).tobytes()
    path = tmp_path / "damaged.mp4"
    path.write_bytes(bytes(data))
    return path


def plain_run(path: pathlib.Path, **kwargs) -> Tuple[Dict[int, Tuple[str, bool]], Set[int], List[ff.VideoError]]:
    """Every frame of a plain run by display index, as (MD5, damaged); the holes; the errors."""
    frames: Dict[int, Tuple[str, bool]] = {}
    holes: Set[int] = set()
    errors: List[ff.VideoError] = []
    inp = ff.VideoInput(8, 2, **kwargs)
    inp.feed_file(str(path))
    inp.close()
    for batch in all_results(inp):
        if isinstance(batch, ff.VideoError):
            errors.append(batch)
            continue
        assert isinstance(batch, ff.Batch)
        for seq in batch.sequences:
            assert len(seq.damaged) == seq.valid_frames
            holes.update(index for index, _ in seq.holes)
            for frame, index, damaged in zip(seq.numpy()[: seq.valid_frames], seq.indices, seq.damaged):
                frames[index] = (hashlib.md5(frame.tobytes()).hexdigest(), damaged)
    return frames, holes, errors


def test_every_door_gives_one_index_one_picture(tmp_path: pathlib.Path) -> None:
    path = damaged_copy(tmp_path)
    frames, holes, errors = plain_run(path)
    assert errors == [], "the default delivers what decodes"
    assert holes, "the damage leaves a hole"
    assert any(damaged for _, damaged in frames.values()), "and damaged frames"
    # A hole keeps its index: frames and holes together number 0..n.
    assert set(frames) | holes == set(range(len(frames) + len(holes)))

    reader = ff.VideoReader(str(path))
    assert len(reader) == len(frames) + len(holes)
    clean = [i for i, (_, damaged) in frames.items() if not damaged]
    read = reader.get_frames_at(clean)
    assert len(read.damaged) == len(clean)
    for frame, index, damaged in zip(read.data, read.indices, read.damaged):
        if not damaged:
            assert hashlib.md5(frame.tobytes()).hexdigest() == frames[index][0], f"frame {index}"
    hole = min(holes)
    with pytest.raises(ff.VideoError, match=f"display index {hole} .* no picture"):
        reader.get_frames_at([hole])
    assert hole in [index for index, _ in reader.metadata.holes]

    # decord's drop-in: the same frames; a hole raises DECORDError, as decord's own test expects.
    vr = decord.VideoReader(str(path))
    assert len(vr) == len(reader)
    first_clean = clean[0]
    assert hashlib.md5(vr[first_clean].asnumpy().tobytes()).hexdigest() == frames[first_clean][0]
    with pytest.raises(DECORDError):
        vr.get_batch([hole])


def test_strict_fails_the_video_at_its_first_damage(tmp_path: pathlib.Path) -> None:
    path = damaged_copy(tmp_path)
    _, holes, _ = plain_run(path)
    frames, strict_holes, errors = plain_run(path, strict=True)
    assert len(errors) == 1 and errors[0].code == "corrupt", errors
    assert errors[0].reason
    assert strict_holes == set() and all(i < min(holes) for i in frames)
    assert not any(damaged for _, damaged in frames.values())
    reader = ff.VideoReader(str(path), strict=True)
    reader.get_frames_at([0, 1])
    with pytest.raises(ff.VideoError):
        reader.get_frames_in_range(0, len(reader))


def test_undamaged_videos_have_no_damage() -> None:
    inp = ff.VideoInput(30, 1)
    inp.feed(ff.SAMPLE_MP4)
    inp.close()
    for batch in inp:
        for seq in batch.sequences:
            assert seq.damaged == [False] * seq.valid_frames and seq.holes == [] and seq.ended_early is None
    reader = ff.VideoReader(ff.SAMPLE_MP4)
    assert reader.get_frames_at([0, 59]).damaged == [False, False] and reader.metadata.holes == []


def test_a_file_cut_short_gives_its_frames_without_failing(tmp_path: pathlib.Path) -> None:
    data = fixture("damage_h264.mp4")
    path = tmp_path / "cut.mp4"
    path.write_bytes(data[: len(data) * 3 // 5])
    frames, holes, errors = plain_run(path)
    assert errors == [] and 0 < len(frames) < 100
    reader = ff.VideoReader(str(path))
    # Samples past the end of the data are not the video's: the reader's length is the plain run's numbering.
    assert len(reader) == len(frames) + len(holes)
