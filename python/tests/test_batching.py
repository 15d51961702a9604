"""The batching contract through Python: the reference's outline (DALI's table and documented example) under
both policies, padding frames zero and counted, and videos never sharing a batch."""

from __future__ import annotations

import numpy as np
import pytest

import framefeed as ff
from conftest import fixture


def reference_outline(n: int, l: int, b: int, pad: bool) -> list:
    """DALI's DetermineBatchOutline: full batches, then one short batch of the rest (frames per sequence)."""
    full_batches, remaining = divmod(n, l * b)
    batches = [[l] * b for _ in range(full_batches)]
    if remaining:
        full_sequences, frames_last = divmod(remaining, l)
        last = [l] * full_sequences
        if frames_last:
            last.append(l if pad else frames_last)
        batches.append(last)
    return batches


def outline(data: bytes, l: int, b: int, policy: str) -> list:
    inp = ff.VideoInput(l, b, last_sequence_policy=policy)
    inp.feed(data)
    inp.close()
    return [[(s.shape[0], s.valid_frames) for s in batch.sequences] for batch in inp]


@pytest.mark.parametrize("policy", ["partial", "pad"])
@pytest.mark.parametrize("l,b", [(1, 1), (4, 2), (5, 3), (7, 1), (23, 1), (24, 2), (2, 11), (3, 8), (50, 4)])
def test_a_real_video_follows_the_reference_outline(l, b, policy):
    got = outline(fixture("h264.mp4"), l, b, policy)  # 23 frames
    assert [[f for f, _ in batch] for batch in got] == reference_outline(23, l, b, policy == "pad")
    assert sum(v for batch in got for _, v in batch) == 23


# DALI's own test table: (N, L, B) -> (full batches, full sequences in the last batch, frames in the last one).
TABLE = [
    (60, 7, 1, (8, 0, 4)), (60, 4, 3, (5, 0, 0)), (50, 4, 3, (4, 0, 2)), (40, 7, 3, (1, 2, 5)),
    (100, 50, 2, (1, 0, 0)), (100, 49, 2, (1, 0, 2)), (1, 10, 10, (0, 0, 1)), (1, 1, 1, (1, 0, 0)),
    (8, 2, 3, (1, 1, 0)),
]


@pytest.mark.parametrize("n,l,b,expected", TABLE)
@pytest.mark.parametrize("policy", ["partial", "pad"])
def test_the_reference_table(clip_of, n, l, b, expected, policy):
    got = outline(clip_of(n), l, b, policy)
    full_batches, full_sequences, frames_last = expected
    want = [[(l, l)] * b] * full_batches
    if full_sequences or frames_last:
        last = [(l, l)] * full_sequences
        if frames_last:
            last.append((l if policy == "pad" else frames_last, frames_last))
        want.append(last)
    assert got == want


@pytest.mark.parametrize("policy", ["partial", "pad"])
def test_the_documented_example_67_frames_l5_b3(clip_of, policy):
    got = outline(clip_of(67), 5, 3, policy)
    assert got[:4] == [[(5, 5)] * 3] * 4
    assert got[4] == [(5, 5), (5 if policy == "pad" else 2, 2)]
    assert len(got) == 5


def test_padding_frames_are_zero_and_a_padded_batch_is_one_array():
    inp = ff.VideoInput(10, 3, last_sequence_policy="pad")
    inp.feed(fixture("h264.mp4"))
    inp.close()
    batches = list(inp)
    last = batches[-1]
    assert last.shape == (3, 10, 64, 96, 3) and last.is_last
    array = last.numpy()
    seq = last.sequences[-1]
    assert (seq.valid_frames, seq.padded_frames) == (3, 7)
    assert not array[-1, 3:].any() and array[-1, :3].any()


def test_a_ragged_batch_is_not_one_array_and_says_where_to_look():
    inp = ff.VideoInput(10, 3)
    inp.feed(fixture("h264.mp4"))
    inp.close()
    last = list(inp)[-1]
    assert last.shape is None
    with pytest.raises(ValueError, match="sequences"):
        last.numpy()
    assert [s.numpy().shape[0] for s in last.sequences] == [10, 10, 3]


def test_batches_never_span_videos_and_carry_ids_and_labels():
    inp = ff.VideoInput(4, 4)
    ids = [inp.feed(fixture("h264.mp4"), label="a.mp4"), inp.feed(fixture("vp9.webm"), label=7)]
    inp.close()
    batches = list(inp)
    assert [b.video_id for b in batches] == [ids[0]] * 2 + [ids[1]] * 2
    assert [b.label for b in batches] == ["a.mp4"] * 2 + [7] * 2
    assert [b.index for b in batches] == [0, 1, 0, 1]
    assert [b.is_last for b in batches] == [False, True, False, True]
    assert sum(b.valid_frames for b in batches) == 46
    firsts = [s.first_frame for b in batches for s in b.sequences]
    assert firsts == [0, 4, 8, 12, 16, 20] * 2
