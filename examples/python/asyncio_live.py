"""Live input under asyncio: one task pushes a stream's chunks as they "arrive" (awaiting room, never blocking
the event loop), another consumes batches with ``async for`` while the video is still arriving.

Run: ``python examples/python/asyncio_live.py [clip.ts]`` (no argument: the repository's live MPEG-TS test clip,
100 frames of 96x64, in 4 KiB chunks; a file given is pushed in 64 KiB chunks). Live input reads MPEG-TS (what
encoders and cameras send), fragmented or faststart MP4, Matroska/WebM and raw H.264/HEVC.
"""

import asyncio
import pathlib
import sys

import framefeed as ff

#: A short MPEG-TS stream, as an encoder sends it (``tests/fixtures/make.sh``).
LIVE_TS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "h264_live.ts"


async def produce(live, data, chunk, progress):
    for start in range(0, len(data), chunk):
        await live.push_async(data[start:start + chunk])  # waits while the decoder is 8 MiB behind
        progress["pushed"] += len(data[start:start + chunk])
        await asyncio.sleep(0.005)  # the network's pace
    live.finish()  # the end of the stream: its last sequence is delivered


async def consume(inp, progress):
    frames = 0
    async for batch in inp.batches():  # ends after the last batch of the last video
        seq = batch.sequences[0]
        frames += seq.valid_frames
        print(f"frames {seq.indices} out after {progress['pushed']} bytes pushed")
    return frames


async def main():
    path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else LIVE_TS
    data = path.read_bytes()
    chunk = 64 << 10 if len(sys.argv) > 1 else 4 << 10
    # low_latency: a 64 KiB probe, frames out of the decoder at once, full batches out at once.
    inp = ff.VideoInput(8, 1, low_latency=True)
    live = inp.feed_live("camera-1")
    inp.close()  # no other video: the consumer's loop ends after this one
    progress = {"pushed": 0}
    _, frames = await asyncio.gather(produce(live, data, chunk, progress), consume(inp, progress))
    print(f"total: {frames} frames from {progress['pushed']} bytes")


asyncio.run(main())
