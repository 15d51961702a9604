"""Clip sampling, side by side in one run (issue 32): 10 random 8-frame clips of a video taken by framefeed
(seeking, decoding only the GOPs the clips need; the file fed by path, read from disk as it is decoded), by
decoding every frame with framefeed, by decord's `VideoReader.get_batch`, by PyAV seek-and-decode and by
TorchCodec's `VideoDecoder.get_frames_at` (the core of its samplers), all of the same clips (framefeed's, by
display index), RGB uint8 out; TorchCodec's own `clips_at_random_indices` sampler (its own 10 clips); and
`stride=4` sequences over the whole video against the full decode. Rounds are interleaved and medians reported.
Every peer opens the file itself in each job, as framefeed does.

Usage: python benches/clip_sampling.py ROUNDS VIDEO[:clips]...   (decord, av, torch and torchcodec from PyPI,
where they install; framefeed installed)
A VIDEO given as PATH:clips runs the clip jobs only (no full decode: a long video).
"""

from __future__ import annotations

import statistics
import sys
import time
from fractions import Fraction

import framefeed as ff


def framefeed_run(path: str, **kwargs: object) -> list[list[int]]:
    inp = ff.VideoInput(8, 4, decoder_threads=2, **kwargs)  # type: ignore[arg-type]
    inp.feed_file(path)
    inp.close()
    out = []
    for batch in inp:
        for seq in batch.sequences:
            seq.numpy()  # the frames, as a user takes them
            out.append(seq.indices)
    return out


def torchcodec_clips(path: str, clips: list[list[int]]) -> None:
    from torchcodec.decoders import VideoDecoder

    decoder = VideoDecoder(path, num_ffmpeg_threads=2)
    for clip in clips:
        decoder.get_frames_at(clip).data.numpy()


def torchcodec_sampler(path: str) -> None:
    from torchcodec.decoders import VideoDecoder
    from torchcodec.samplers import clips_at_random_indices

    decoder = VideoDecoder(path, num_ffmpeg_threads=2)
    clips_at_random_indices(decoder, num_clips=10, num_frames_per_clip=8).data.numpy()


def has_torchcodec() -> bool:
    try:
        import torchcodec.decoders  # noqa: F401
    except Exception as error:  # noqa: BLE001 (any failure to load it: say so and go on)
        print(f"TorchCodec not run: {error}")
        return False
    return True


def decord_clips(path: str, clips: list[list[int]]) -> None:
    import decord

    vr = decord.VideoReader(path, num_threads=2)
    for clip in clips:
        vr.get_batch(clip).asnumpy()


def pyav_clips(path: str, clips: list[list[int]], fps: Fraction) -> None:
    import av

    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        stream.codec_context.thread_count = 2
        tb = stream.time_base
        start = stream.start_time or 0
        for clip in clips:
            # A CFR clip: frame i at start + i / fps.
            targets = {start + int(Fraction(i) / fps / tb) for i in clip}
            container.seek(min(targets), stream=stream, backward=True, any_frame=False)
            for frame in container.decode(stream):
                if frame.pts in targets:
                    frame.to_ndarray(format="rgb24")
                    targets.discard(frame.pts)
                if not targets or frame.pts > max(targets):
                    break


def main() -> None:
    rounds = int(sys.argv[1])
    torchcodec = has_torchcodec()
    for arg in sys.argv[2:]:
        path, _, only = arg.partition(":")
        with open(path, "rb") as f:
            info = ff.probe(f.read())
        video = next(s for s in info["streams"] if s["kind"] == "video")
        rate = Fraction(video["frame_rate"] or 30).limit_denominator(1001)
        clips = framefeed_run(path, clips=10, seed=1)
        times: dict[str, list[float]] = {}
        jobs = {
            "framefeed all frames": lambda: framefeed_run(path),
            "framefeed 10 clips": lambda: framefeed_run(path, clips=10, seed=1),
            "decord get_batch, same clips": lambda: decord_clips(path, clips),
            "PyAV seek + decode, same clips": lambda: pyav_clips(path, clips, rate),
            "framefeed stride 4 (step 8)": lambda: framefeed_run(path, stride=4),
            "framefeed stride 4, step 32": lambda: framefeed_run(path, stride=4, step=32),
        }
        if torchcodec:
            jobs["TorchCodec get_frames_at, same clips"] = lambda: torchcodec_clips(path, clips)
            jobs["TorchCodec clips_at_random_indices"] = lambda: torchcodec_sampler(path)
        if only == "clips":
            jobs = {k: v for k, v in jobs.items() if "all frames" not in k and "stride" not in k}
        for _ in range(rounds):
            for name, job in jobs.items():
                t = time.perf_counter()
                job()
                times.setdefault(name, []).append(time.perf_counter() - t)
        full = statistics.median(times.get("framefeed all frames", [float("nan")]))
        clip = statistics.median(times["framefeed 10 clips"])
        print(f"\n{path}: {video['width']}x{video['height']} {video['codec']}, {rounds} rounds (median seconds)")
        for name, ts in times.items():
            m = statistics.median(ts)
            print(f"  {name:34s} {m:8.3f} s   all/this {full / m:6.2f}x   this/ff-clips {m / clip:6.2f}x")


if __name__ == "__main__":
    main()
