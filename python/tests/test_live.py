"""Live input through Python: pushing in small chunks gives the same frames as the whole-buffer decode; abort
and finish; pushing after the end."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import framefeed as ff
from conftest import all_results, fixture, real_frames


def decode_whole(name: str) -> list:
    inp = ff.VideoInput(8, 2)
    inp.feed(fixture(name))
    inp.close()
    return real_frames(list(inp))


@pytest.mark.parametrize("name", ["h264.ts", "h264_fragmented.mp4", "h264.mp4", "h264.mkv", "vp9.webm", "hevc.hevc"])
@pytest.mark.parametrize("chunk", [97, 4096])
def test_small_chunks_equal_the_whole_buffer(name, chunk):
    data = fixture(name)
    inp = ff.VideoInput(8, 2, low_latency=True)
    live = inp.feed_live(label=name)

    def producer():
        for i in range(0, len(data), chunk):
            live.push(memoryview(data)[i : i + chunk])  # read-only views: referenced, not copied
        live.finish()

    t = threading.Thread(target=producer)
    t.start()
    inp.close()
    got = real_frames(all_results(inp))
    t.join()
    want = decode_whole(name)
    assert len(got) == len(want) > 0
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_abort_fails_the_video_after_its_frames_and_later_pushes_are_refused():
    inp = ff.VideoInput(4, 1)
    live = inp.feed_live(label="cam")
    assert live.id == 0
    data = fixture("h264_live.ts")
    live.push(data[: len(data) // 2])
    first = inp.next_batch(timeout=30)  # decoding has begun
    received = live.received
    live.abort("camera unplugged")
    with pytest.raises(ff.ClosedError):
        live.push(b"more")
    inp.close()
    results = all_results(inp)
    error = results[-1]
    assert isinstance(error, ff.VideoError) and error.kind == "aborted" and error.label == "cam"
    assert "camera unplugged" in error.reason and received == len(data) // 2
    assert first.valid_frames == 4 and all(isinstance(b, ff.Batch) for b in results[:-1])


def test_try_push_hands_back_when_full():
    inp = ff.VideoInput(4, 1, live_buffer_bytes=4096)
    first = inp.feed_live()
    second = inp.feed_live()  # behind the first: its buffer is not read yet
    assert second.try_push(b"\x47" * 4096)
    assert not second.try_push(b"\x47" * 10)
    first.abort("x")
    second.abort("y")
    inp.close()
