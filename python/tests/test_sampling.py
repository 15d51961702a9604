"""Clip sampling from Python: the keywords reach the operator, each sequence reports its display indices, and
the frames are those of a full decode at those indices; a file list's epochs give new random clips; a video's
segments, fed apart, give its sequences once each."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import framefeed as ff
from conftest import FIXTURES


def sequences(inp: ff.VideoInput) -> list[tuple[list[int], np.ndarray]]:
    out = []
    for batch in inp:
        for seq in batch.sequences:
            out.append((seq.indices, np.array(seq.numpy()[: seq.valid_frames])))
    return out


def decode(data: bytes, **kwargs: object) -> list[tuple[list[int], np.ndarray]]:
    inp = ff.VideoInput(4, 2, **kwargs)  # type: ignore[arg-type]
    inp.feed(data)
    inp.close()
    return sequences(inp)


def test_sampled_frames_are_the_full_decodes_frames_at_their_indices() -> None:
    full = decode(ff.SAMPLE_MP4)
    frames = np.concatenate([f for _, f in full])
    assert [i for idx, _ in full for i in idx] == list(range(60))
    for kwargs in (
        {"clips": 3, "seed": 4, "stride": 2},
        {"clips": 2, "clip_sampler": "regular"},
        {"stride": 3, "step": 10},
        {"fps": 7.5, "start": 0.5, "end": 1.5},
        {"indices": [1, 1, 30, 59]},
    ):
        got = decode(ff.SAMPLE_MP4, **kwargs)
        assert got, kwargs
        for indices, data in got:
            assert len(indices) == len(data)
            for i, frame in zip(indices, data):
                assert np.array_equal(frame, frames[i]), (kwargs, i)


def test_regular_clips_and_indices_are_where_asked() -> None:
    got = decode(ff.SAMPLE_MP4, clips=3, clip_sampler="regular")
    assert [idx for idx, _ in got] == [[0, 1, 2, 3], [28, 29, 30, 31], [56, 57, 58, 59]]
    got = decode(ff.SAMPLE_MP4, indices=[5, 6, 7, 9, 40])
    assert [idx for idx, _ in got] == [[5, 6, 7, 9], [40]]


def test_bad_sampling_keywords_name_what_is_allowed() -> None:
    with pytest.raises(ValueError, match="stride is 0; allowed: 1 to"):
        ff.VideoInput(4, 1, stride=0)
    with pytest.raises(ValueError, match="clip_sampler is 'uniform'; allowed: 'random', 'regular'"):
        ff.VideoInput(4, 1, clips=2, clip_sampler="uniform")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="end"):
        ff.VideoInput(4, 1, start=3.0, end=1.0)
    inp = ff.VideoInput(4, 1, clips=2)
    with pytest.raises(ValueError, match="clips need the whole video"):
        inp.feed_live()


def test_a_file_lists_epochs_give_new_random_clips(tmp_path: Path) -> None:
    path = tmp_path / "sample.mp4"
    path.write_bytes(ff.SAMPLE_MP4)

    def epoch(n: int) -> list[list[int]]:
        inp = ff.VideoInput(4, 4, clips=4, seed=9)
        ff.FileList([str(path)]).feed_epoch(inp, n)
        inp.close()
        return [idx for idx, _ in sequences(inp)]

    assert epoch(0) == epoch(0)
    assert epoch(0) != epoch(1)


def test_a_video_placed_in_its_dataset_gets_the_same_clips_fed_any_way(tmp_path: Path) -> None:
    path = tmp_path / "sample.mp4"
    path.write_bytes(ff.SAMPLE_MP4)

    def clips(feed: str, position: int, epoch: int, before: int = 0) -> list[list[int]]:
        inp = ff.VideoInput(4, 4, clips=3, seed=2)
        for _ in range(before):  # other videos fed first: the feeding id is not what decides
            inp.feed(ff.SAMPLE_MP4, position=99)
        fed = {
            "bytes": lambda: inp.feed(ff.SAMPLE_MP4, position=position, epoch=epoch),
            "file": lambda: inp.feed_file(path, position=position, epoch=epoch),
            "try": lambda: inp.try_feed(ff.SAMPLE_MP4, position=position, epoch=epoch),
        }[feed]()
        inp.close()
        return [s.indices for b in inp if b.video_id == fed for s in b.sequences]

    same = clips("bytes", 5, 1)
    assert len(same) == 3
    assert clips("file", 5, 1, before=2) == same and clips("try", 5, 1, before=1) == same
    assert clips("bytes", 5, 2) != same, "another epoch, other clips"
    assert clips("bytes", 6, 1) != same, "another position, other clips"
    # The file list places its files the same way.
    inp = ff.VideoInput(4, 4, clips=3, seed=2)
    ff.FileList([str(path)] * 6).feed_epoch(inp, 1)
    inp.close()
    by_video: dict[int, list[list[int]]] = {}
    for b in inp:
        by_video.setdefault(b.video_id, []).extend(s.indices for s in b.sequences)
    assert by_video[5] == same
    with pytest.raises(ValueError, match="epoch is 3 but position is None"):
        ff.VideoInput(4, 1).feed(ff.SAMPLE_MP4, epoch=3)


def test_a_file_fed_by_path_decodes_as_its_bytes_and_is_labelled_with_it(tmp_path: Path) -> None:
    path = tmp_path / "sample.mp4"
    path.write_bytes(ff.SAMPLE_MP4)
    inp = ff.VideoInput(8, 2, clips=2, seed=1)
    inp.feed_file(path, position=0)
    inp.feed(ff.SAMPLE_MP4, position=0)
    inp.close()
    batches = list(inp)
    by_video: dict[int, list[tuple[list[int], bytes]]] = {}
    for b in batches:
        by_video.setdefault(b.video_id, []).extend((s.indices, s.numpy().tobytes()) for s in b.sequences)
    assert by_video[0] == by_video[1] and len(by_video[0]) == 2
    assert {b.label for b in batches if b.video_id == 0} == {str(path)}
    with pytest.raises(FileNotFoundError, match="missing.mp4"):
        ff.VideoInput(4, 1).feed_file(tmp_path / "missing.mp4")
    with pytest.raises(OSError, match="not a regular file"):
        ff.VideoInput(4, 1).feed_file(tmp_path)


async def _feed_async_placed() -> list[list[int]]:
    inp = ff.VideoInput(4, 4, clips=3, seed=2)
    await inp.feed_async(ff.SAMPLE_MP4, position=5, epoch=1)
    inp.close()
    return [s.indices for b in inp for s in b.sequences]


def test_feed_async_places_the_video_too() -> None:
    import asyncio

    inp = ff.VideoInput(4, 4, clips=3, seed=2)
    inp.feed(ff.SAMPLE_MP4, position=5, epoch=1)
    inp.close()
    assert asyncio.run(_feed_async_placed()) == [s.indices for b in inp for s in b.sequences]


def test_the_segments_of_a_video_give_its_sequences_once_each():
    path = FIXTURES / "sampling_hevc_open_gop.mp4"

    def decoded(inp):
        inp.close()
        return [(s.first_frame, s.indices, s.numpy().tobytes()) for b in inp for s in b.sequences]

    whole = ff.VideoInput(4, 2, stride=2, step=3)
    whole.feed_file(path)
    parts = ff.segments(str(path), 30)
    assert len(parts) >= 3 and parts[0][0] == 0 and parts[-1][1] == 150
    assert ff.segments(path.read_bytes(), 30) == parts
    joined = ff.VideoInput(4, 2, stride=2, step=3)
    for part in parts:
        joined.feed_file(path, segment=part)
    assert decoded(joined) == decoded(whole)
    with pytest.raises(ff.VideoError, match="allowed: end > first"):
        bad = ff.VideoInput(4, 1)
        bad.feed(path.read_bytes(), segment=(9, 3))
        bad.close()
        list(bad)
