"""asyncio: polling without blocking the loop, cancellation that loses no batch and feeds nothing, async
iteration, and live pushing from coroutines."""

from __future__ import annotations

import asyncio
import random

import framefeed as ff
from conftest import fixture


def test_async_polls_wait_without_blocking_the_loop():
    async def main():
        inp = ff.VideoInput(23, 1)
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        tick = asyncio.ensure_future(ticker())
        later = asyncio.get_running_loop().call_later(0.3, lambda: (inp.feed(fixture("h264.mkv")), inp.close()))
        batch = await inp.next_batch_async()
        assert batch.valid_frames == 23 and ticks > 20, ticks
        assert await inp.next_batch_async() is None
        tick.cancel()
        later.cancel()

    asyncio.run(main())


def test_cancelled_polls_lose_no_batch():
    async def main():
        inp = ff.VideoInput(2, 1)
        for _ in range(4):
            inp.feed(fixture("hevc.hevc"))  # 23 frames each
        inp.close()
        frames, cancelled = 0, 0
        rng = random.Random(7)
        while True:
            task = asyncio.ensure_future(inp.next_batch_async())
            await asyncio.sleep(rng.choice([0, 0, 0.0005, 0.002]))
            if not task.done() and rng.random() < 0.5:
                task.cancel()
                cancelled += 1
                continue
            batch = await task
            if batch is None:
                break
            frames += batch.valid_frames
        assert frames == 4 * 23, (frames, cancelled)
        assert cancelled > 0

    asyncio.run(main())


def test_async_iteration_and_errors():
    async def main():
        inp = ff.VideoInput(4, 2)
        inp.feed(fixture("h264.mp4"))
        inp.feed(b"junk", label="junk")
        inp.feed(fixture("vp9.webm"))
        inp.close()
        frames, errors = 0, []
        while True:
            try:
                async for batch in inp.batches():
                    frames += batch.valid_frames
                break
            except ff.VideoError as e:
                errors.append(e.label)
        assert (frames, errors) == (46, ["junk"])

    asyncio.run(main())


def test_feed_async_waits_for_room_and_a_cancelled_feed_feeds_nothing():
    async def main():
        inp = ff.VideoInput(23, 1, max_queued=(1, 1 << 30))
        live = inp.feed_live()  # the decoder waits on it
        first = await inp.feed_async(fixture("h264.mp4"), label="queued")
        blocked = asyncio.ensure_future(inp.feed_async(fixture("h264.mp4"), label="cancelled"))
        await asyncio.sleep(0.2)
        assert not blocked.done()
        blocked.cancel()
        waiting = asyncio.ensure_future(inp.feed_async(fixture("vp9.webm"), label="fed"))
        await live.push_async(fixture("h264.ts"))
        live.finish()
        consumer = asyncio.ensure_future(collect(inp))
        third = await waiting
        inp.close()
        labels = await consumer
        assert first == 1 and third == 2
        assert labels == [None, "queued", "fed"], labels  # the cancelled feed never happened

    async def collect(inp):
        out = []
        async for batch in inp.batches():
            out.append(batch.label)
        return out

    asyncio.run(main())


def test_push_async_waits_for_the_decoder():
    async def main():
        inp = ff.VideoInput(4, 1, live_buffer_bytes=4096)
        live = inp.feed_live()
        data = fixture("h264_live.ts")
        consumer = asyncio.ensure_future(count(inp))
        for i in range(0, len(data), 1000):
            await live.push_async(data[i : i + 1000])
        live.finish()
        inp.close()
        assert await consumer == 100

    async def count(inp):
        frames = 0
        async for batch in inp.batches():
            frames += batch.valid_frames
        return frames

    asyncio.run(main())


#: Pushes a live stream in small chunks while another task consumes it, then exits: the bridge thread is
#: often delivering to the loop (inside Python) as the interpreter exits.
EXIT_WHILE_DELIVERING = """
import asyncio, sys
import framefeed as ff

async def main():
    inp = ff.VideoInput(8, 1, low_latency=True)
    live = inp.feed_live()
    inp.close()
    data = open(sys.argv[1], "rb").read()

    async def produce():
        for i in range(0, len(data), 4096):
            await live.push_async(data[i : i + 4096])
            await asyncio.sleep(0.002)
        live.finish()

    async def consume():
        return sum([b.valid_frames async for b in inp.batches()])

    _, frames = await asyncio.gather(produce(), consume())
    print(frames)

asyncio.run(main())
"""


def test_the_process_exits_cleanly_while_the_bridge_delivers(tmp_path):
    # A native thread that takes the GIL once the interpreter finalizes is ended by CPython with pthread_exit,
    # which cannot unwind Rust frames: the process aborted at exit in about 4 runs of 10. framefeed's threads
    # leave Python before finalizing (an atexit hook), so every run exits 0.
    import subprocess
    import sys

    from conftest import FIXTURES

    script = tmp_path / "exit_while_delivering.py"
    script.write_text(EXIT_WHILE_DELIVERING)
    for run in range(10):
        done = subprocess.run([sys.executable, str(script), str(FIXTURES / "h264_live.ts")],
                              capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout.strip()) == (0, "100"), (run, done.returncode, done.stderr)
