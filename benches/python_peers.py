#!/usr/bin/env python3
"""Issue 13's benchmark: every frame of a clip as a NumPy array (RGB u8, 2 decoder threads), through the Python
package and its peers, against `framefeed run` on the same file and settings, side by side in one run.

Each contender runs in its own process (imports done before the clock starts; the clock covers opening the video
to its last frame); peak RSS is the process's own (`ru_maxrss`; the CLI prints its own). Rounds are interleaved; medians are printed as a
Markdown table.

    bash benches/clips.sh   # target/bench-clips/1080p.mp4; the VP9 clip is made from it below
    python3 benches/python_peers.py [ROUNDS] [CLIP...]

Contenders: framefeed-cli (`framefeed run -L 8 -B 4 --threads 2`), framefeed (the Python package, every batch's
`numpy()`), pyav (`to_ndarray(format="rgb24")` per frame), decord (`VideoReader(num_threads=2)`, each frame's
`asnumpy()`), torchcodec (`VideoDecoder`, 32-frame batches as NumPy), dali (`fn.experimental.inputs.video` on
the CPU, sequences of 8 in batches of 4: VP9 only, its PyPI build has no CPU H.264). A contender whose package is
missing is reported as such.
"""

from __future__ import annotations

import pathlib
import re
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLIPS = ROOT / "target" / "bench-clips"
CONTENDERS = ["framefeed-cli", "framefeed", "pyav", "decord", "torchcodec", "dali"]


def run_one(name: str, clip: str) -> tuple:
    """In the child: decode `clip` with contender `name`; returns (frames, seconds)."""
    data = pathlib.Path(clip).read_bytes()
    if name == "framefeed":
        import framefeed as ff

        start = time.perf_counter()
        inp = ff.VideoInput(8, 4, decoder_threads=2)
        inp.feed(data)
        inp.close()
        frames = 0
        for batch in inp:
            for seq in batch.sequences:
                frames += len(seq.numpy()[: seq.valid_frames])
        return frames, time.perf_counter() - start
    if name == "pyav":
        import av

        start = time.perf_counter()
        with av.open(clip) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            stream.thread_count = 2
            frames = sum(1 for frame in container.decode(stream) if frame.to_ndarray(format="rgb24") is not None)
        return frames, time.perf_counter() - start
    if name == "decord":
        import decord

        start = time.perf_counter()
        reader = decord.VideoReader(clip, ctx=decord.cpu(0), num_threads=2)
        frames = 0
        for _ in range(len(reader)):
            reader.next().asnumpy()
            frames += 1
        return frames, time.perf_counter() - start
    if name == "torchcodec":
        from torchcodec.decoders import VideoDecoder

        start = time.perf_counter()
        decoder = VideoDecoder(clip, num_ffmpeg_threads=2, dimension_order="NHWC", seek_mode="approximate")
        total = decoder.metadata.num_frames
        frames = 0
        while frames < total:
            batch = decoder.get_frames_in_range(frames, min(frames + 32, total)).data.numpy()
            frames += len(batch)
        return frames, time.perf_counter() - start
    if name == "dali":
        import numpy as np
        from nvidia.dali import fn, pipeline_def

        @pipeline_def(batch_size=4, num_threads=2, device_id=None, prefetch_queue_depth=1)
        def pipe():
            return fn.experimental.inputs.video(name="video", sequence_length=8, device="cpu", blocking=False)

        start = time.perf_counter()
        p = pipe()
        p.build()
        p.feed_input("video", [np.frombuffer(data, dtype=np.uint8)])
        frames = 0
        while True:
            try:
                (out,) = p.run()
            except StopIteration:
                break
            except RuntimeError as error:  # "No data was provided..." once the video is consumed
                if "No data" in str(error):
                    break
                raise
            for i in range(len(out)):
                frames += np.asarray(out.at(i)).shape[0]
        return frames, time.perf_counter() - start
    raise ValueError(name)


def measure(name: str, clip: pathlib.Path) -> tuple:
    """(frames, seconds, peak RSS MiB) of one run in a fresh process, or None when the contender is missing."""
    if name == "framefeed-cli":
        binary = ROOT / "target" / "release" / "framefeed"
        command = [str(binary), "run", "-L", "8", "-B", "4", "--threads", "2", str(clip)]
    else:
        command = [sys.executable, __file__, "--one", name, str(clip)]
    process = subprocess.run(command, capture_output=True, text=True)
    out, err = process.stdout, process.stderr
    if process.returncode != 0:
        if "ModuleNotFoundError" in err or "No module named" in err:
            return None
        raise RuntimeError(f"{name} on {clip.name} failed:\n{err[-2000:]}")
    if name == "framefeed-cli":
        frames = int(re.search(r"frames: (\d+)", out).group(1))
        seconds = float(re.search(r"seconds: ([0-9.]+)", out).group(1))
        peak = float(re.search(r"peak RSS: ([0-9.]+) MiB", out).group(1))
    else:
        frames, seconds, peak = out.split()
        frames, seconds, peak = int(frames), float(seconds), float(peak)
    return frames, seconds, peak


def child(name: str, clip: str) -> None:
    frames, seconds = run_one(name, clip)
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(frames, f"{seconds:.4f}", f"{peak:.1f}")


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    vp9 = CLIPS / "1080p_vp9.webm"
    if not vp9.exists():
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(CLIPS / "1080p.mp4"), "-c:v", "libvpx-vp9",
                        "-deadline", "good", "-cpu-used", "4", "-row-mt", "1", "-b:v", "4M", "-g", "60",
                        "-pix_fmt", "yuv420p", str(vp9)], check=True)
    clips = [pathlib.Path(c) for c in sys.argv[2:]] or [CLIPS / "1080p.mp4", vp9]
    results: dict = {}
    for _ in range(rounds):
        for clip in clips:
            for name in CONTENDERS:
                if name == "dali" and clip.suffix != ".webm":
                    continue
                got = measure(name, clip)
                results.setdefault((clip.name, name), []).append(got)
                print(clip.name, name, got, file=sys.stderr, flush=True)
    print("| clip | contender | frames | seconds (median) | frames/s | vs framefeed run | peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for clip in clips:
        cli = statistics.median(r[1] for r in results[(clip.name, "framefeed-cli")])
        for name in CONTENDERS:
            runs = results.get((clip.name, name))
            if not runs:
                continue
            if runs[0] is None:
                print(f"| {clip.name} | {name} | not installed | | | | |")
                continue
            seconds = statistics.median(r[1] for r in runs)
            peak = statistics.median(r[2] for r in runs)
            frames = runs[0][0]
            print(f"| {clip.name} | {name} | {frames} | {seconds:.3f} | {frames / seconds:.1f} | "
                  f"{seconds / cli:.2f}x | {peak:.0f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
