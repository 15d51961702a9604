"""Polls: non-blocking, timeout and try polls; feeding from several Python threads while another polls; the
GIL released while framefeed waits or works; the operator dropped mid-video frees its threads."""

from __future__ import annotations

import os
import threading
import time

import pytest

import framefeed as ff
from conftest import fixture


def test_non_blocking_poll_with_nothing_fed_raises_no_data():
    inp = ff.VideoInput(4, 1, blocking=False)
    with pytest.raises(ff.NoDataError):
        inp.next_batch()
    assert list(inp) == []  # iteration ends on NoData
    inp.feed(fixture("h264.mp4"))
    assert inp.next_batch().valid_frames == 4  # fed: the poll waits for the batch
    inp.close()
    assert sum(b.valid_frames for b in inp) == 19
    assert inp.next_batch() is None


def test_timeout_and_try_polls():
    inp = ff.VideoInput(4, 1)
    with pytest.raises(ff.TimeoutError) as caught:
        inp.next_batch(timeout=0.05)
    assert isinstance(caught.value, TimeoutError)  # also the builtin
    with pytest.raises(ff.NoDataError):
        inp.try_next_batch()
    live = inp.feed_live()
    with pytest.raises(ff.NotReadyError):
        inp.try_next_batch()  # fed, still decoding (waiting for bytes)
    live.push(fixture("h264.ts"))
    live.finish()
    assert inp.next_batch(timeout=30).valid_frames == 4
    inp.close()
    assert sum(b.valid_frames for b in inp) == 19


def test_feeding_from_several_threads_while_another_polls():
    inp = ff.VideoInput(23, 1, max_queued=(2, 1 << 30))
    videos = [fixture(n) for n in ("h264.mp4", "vp9.webm", "h264.mkv", "mpeg4.avi")]
    fed = []

    def feeder(k):
        for v in videos:
            fed.append(inp.feed(v, label=k))  # waits for room: the queue holds 2

    threads = [threading.Thread(target=feeder, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    got = []

    def closer():
        for t in threads:
            t.join()
        inp.close()

    threading.Thread(target=closer).start()
    for batch in inp:
        got.append((batch.video_id, batch.valid_frames))
    assert sorted(i for i, _ in got) == sorted(fed) and len(fed) == 12
    assert all(frames == 23 for _, frames in got)


def test_the_gil_is_released_while_polling_and_feeding():
    """A Python thread counting in a loop keeps running while the main thread waits in next_batch (and in a
    feed into a full queue): without the GIL released it could not run at all."""
    inp = ff.VideoInput(4, 1, max_queued=(1, 1 << 30))
    count = [0]
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=counter)
    t.start()
    try:
        live = inp.feed_live()  # nothing arrives: next_batch waits
        before = count[0]
        with pytest.raises(ff.TimeoutError):
            inp.next_batch(timeout=0.5)
        assert count[0] - before > 1000, "the counting thread did not run during next_batch"
        inp.feed(fixture("h264.mp4"))  # the queue (1 video) is now full
        pusher = threading.Timer(0.5, lambda: (live.push(fixture("h264.ts")), live.finish()))
        pusher.start()
        before = count[0]
        threading.Thread(target=lambda: [b for b in inp]).start()
        inp.feed(fixture("h264.mp4"))  # waits until the decoder takes the queued video
        assert count[0] - before > 1000, "the counting thread did not run during feed"
        pusher.join()
    finally:
        stop.set()
        t.join()
        inp.close()


def threads_now() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_dropping_an_operator_mid_video_frees_everything():
    before = threads_now()
    for _ in range(5):
        inp = ff.VideoInput(2, 1, decoder_threads=2)
        for _ in range(3):
            inp.feed(fixture("h264_live.ts"))
        assert inp.next_batch() is not None  # mid-video
        live = inp.feed_live()
        del inp  # dropped with queued videos, a live one and batches in flight
        with pytest.raises(ff.ClosedError) as closed:
            for _ in range(100):
                live.push(b"\x47" * 188)
                time.sleep(0.01)
        assert closed.value.code == "live_ended"
    deadline = time.time() + 10
    while threads_now() > before and time.time() < deadline:
        time.sleep(0.05)
    assert threads_now() <= before
