"""The shuffle buffer behind ``framefeed.torch.VideoDataset(shuffle_buffer=N)`` (DALI's ``random_shuffle`` with
``initial_fill``): every item out exactly once, never more than N held, the order decided by the seed, and items
far apart in the input mixed. Needs no torch."""

from __future__ import annotations

import random

import pytest

from framefeed._shuffle import ShuffleBuffer


def shuffled(items: list[int], size: int, seed: object) -> tuple[list[int], int]:
    buffer: ShuffleBuffer[int] = ShuffleBuffer(size, seed)
    out, most = [], 0
    for item in items:
        taken = buffer.push(item)
        most = max(most, len(buffer))
        if taken is not None:
            out.append(taken)
    out.extend(buffer.drain())
    assert len(buffer) == 0
    return out, most


def test_every_item_once_and_never_more_than_the_size_held() -> None:
    cases = random.Random(7)
    for _ in range(500):  # lists of 0 to 300 items (repeats included), buffers of 1 to 50
        items = [cases.randrange(100) for _ in range(cases.randrange(300))]
        size, seed = cases.randrange(1, 51), cases.randrange(1 << 32)
        out, most = shuffled(items, size, seed)
        assert sorted(out) == sorted(items), (items, size, seed)
        assert most <= size
        assert shuffled(items, size, seed)[0] == out, "the same seed, the same order"


def test_sequences_of_several_videos_are_mixed() -> None:
    # Ten videos of 20 sequences each, in feeding order: video = item // 20.
    items = list(range(200))
    out, _ = shuffled(items, 32, "0:0:0")
    assert out != items and shuffled(items, 32, "0:1:0")[0] != out, "seeds and epochs differ"
    windows = [{i // 20 for i in out[k : k + 8]} for k in range(0, 192, 8)]
    assert sum(len(w) > 1 for w in windows) >= len(windows) * 3 // 4, "batches of 8 mostly span videos"


def test_a_bad_size_is_refused_with_what_is_allowed() -> None:
    for size in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="allowed: an int of 1 or more"):
            ShuffleBuffer(size, 0)  # type: ignore[arg-type]
