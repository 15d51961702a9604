#!/usr/bin/env python3
"""Issue 33's benchmark: a mixed set of 1080p H.264 videos (4 of 180 frames and one of 60 s, 1800 frames; or
with SET=long10 one of 10 minutes, 18000 frames)
decoded with resize-shorter 256, a 224 crop, float32 and CFHW, by `framefeed.ray.read_videos` with whole files
and with segments (`segment_frames`), against the CLI doing the same job and the decode floor, side by side in
one run (rounds interleaved, medians).

Each Ray contender runs in its own process with its own one-node Ray instance (`ray.init(num_cpus=2)`: this
machine's cores), started before the clock; the clock covers building the dataset to the last row read
(`iter_batches`). The CLI and the floor are whole processes.

    pip install './python[ray]' && cargo build --release --features cli
    python3 benches/ray_segments.py [ROUNDS=2] [SEGMENT_FRAMES=300] [SET=mixed|mixed30|long10]
    CONTENDERS=floor,cli,ray-2x1-seg python3 benches/ray_segments.py 1 1800 long10   # some contenders only

Contenders:
  floor            `ffmpeg -threads 2 -i CLIP -f null -` on each clip in turn (decode only)
  cli              `framefeed run CLIPS --threads 2 -L 8 -B 1 --resize-shorter 256 --crop 224x224 --dtype f32
                   --layout cfhw`
  ray-2x1-whole    read_videos(concurrency=2, decoder_threads=1, segment_frames=None): a file per actor
  ray-2x1-seg      the same with segment_frames=SEGMENT_FRAMES: the long file's segments on both actors
  ray-2x1-auto     the same with the default segment_frames ("auto": sized for the job and the pool)
  ray-2x1-seg-1row the same with one row a yield (sequences_per_block=1, the default before)
  ray-1x2-whole    concurrency=1, decoder_threads=2, num_cpus=2
  ray-startup      the 2x1 pipeline over one 23-frame file: Ray's fixed cost (actor pool start, imports)
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLIPS = ROOT / "target" / "bench-clips" / "segments"
BIN = ROOT / "target" / "release" / "framefeed"
KEYWORDS = dict(resize_shorter=256, crop=224, dtype="float32", layout="CFHW")


SETS = {
    "mixed": [("short_0", 180, 0), ("short_1", 180, 10), ("short_2", 180, 20), ("short_3", 180, 30),
              ("long_60s", 1800, 40)],
    "long10": [("long_10min", 18000, 0)],
    # About 35 s of the CLI's job on this machine: a 3-minute file among four 18 s ones (issue 53).
    "mixed30": [("mid_0", 540, 0), ("mid_1", 540, 10), ("mid_2", 540, 20), ("mid_3", 540, 30),
                ("long_180s", 5400, 40)],
}


def clips(which: str) -> list:
    CLIPS.mkdir(parents=True, exist_ok=True)
    out = []
    for name, frames, offset in SETS[which]:
        path = CLIPS / f"{name}.mp4"
        if not path.exists():
            subprocess.run(
                ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                 f"testsrc2=size=1920x1080:rate=30,noise=alls=8:allf=t,setpts=PTS+{offset}/TB",
                 "-frames:v", str(frames), "-c:v", "libx264", "-preset", "veryfast", "-g", "60",
                 "-pix_fmt", "yuv420p", str(path)],
                check=True,
            )
        out.append(path)
    return out


RAY_RUN = """
import json, sys, time
import ray, ray.data
import framefeed.ray as fr
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
ray.data.DataContext.get_current().enable_progress_bars = False
args = json.loads(sys.argv[1])
start = time.monotonic()
ds = fr.read_videos(args["paths"], sequence_length=8, **args["options"], **args["keywords"])
rows = 0
segments = set()
for batch in ds.iter_batches(batch_size=16, batch_format="numpy"):
    rows += len(batch["first_frame"])
    if "segment" in batch:
        segments.update((p, tuple(s)) for p, s in zip(batch["path"], batch["segment"]))
print(json.dumps({"seconds": time.monotonic() - start, "rows": rows, "segments": len(segments)}))
"""


def ray_contender(paths: list, options: dict) -> dict:
    args = json.dumps({"paths": [str(p) for p in paths], "options": options, "keywords": KEYWORDS})
    out = subprocess.run([sys.executable, "-c", RAY_RUN, args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def timed(command: list) -> float:
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    segment_frames = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    paths = clips(sys.argv[3] if len(sys.argv) > 3 else "mixed")
    contenders = {
        "floor": lambda: {"seconds": sum(timed(["ffmpeg", "-v", "error", "-threads", "2", "-i", str(p), "-f",
                                                "null", "-"]) for p in paths)},
        "cli": lambda: {"seconds": timed([str(BIN), "run", *map(str, paths), "--threads", "2", "-L", "8", "-B", "1",
                                          "--resize-shorter", "256", "--crop", "224x224", "--dtype", "f32",
                                          "--layout", "cfhw"])},
        "ray-2x1-whole": lambda: ray_contender(paths, dict(concurrency=2, decoder_threads=1, segment_frames=None)),
        "ray-2x1-seg": lambda: ray_contender(paths, dict(concurrency=2, decoder_threads=1,
                                                         segment_frames=segment_frames)),
        # The default segments ("auto": sized for the job and the pool).
        "ray-2x1-auto": lambda: ray_contender(paths, dict(concurrency=2, decoder_threads=1)),
        # One row a yield (the default before): what yielding several rows at a time saves.
        "ray-2x1-seg-1row": lambda: ray_contender(paths, dict(concurrency=2, decoder_threads=1, sequences_per_block=1,
                                                              segment_frames=segment_frames)),
        "ray-1x2-whole": lambda: ray_contender(paths, dict(concurrency=1, decoder_threads=2, num_cpus=2,
                                                           segment_frames=None)),
        # The fixed cost: the same pipeline over one 23-frame file (the actor pool's start, the imports).
        "ray-startup": lambda: ray_contender([ROOT / "tests" / "fixtures" / "h264.mp4"],
                                             dict(concurrency=2, decoder_threads=1)),
    }
    chosen = os.environ.get("CONTENDERS")  # e.g. CONTENDERS=floor,cli,ray-2x1-seg
    if chosen:
        contenders = {name: contenders[name] for name in chosen.split(",")}
    results: dict = {name: [] for name in contenders}
    extra: dict = {}
    names = list(contenders)
    for r in range(rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            result = contenders[name]()
            results[name].append(result["seconds"])
            extra[name] = result
            print(f"round {r} {name}: {result}", file=sys.stderr, flush=True)
    # The ratios need the CLI and the floor among the contenders.
    cli = statistics.median(results["cli"]) if "cli" in results else float("nan")
    floor = statistics.median(results["floor"]) if "floor" in results else float("nan")
    print(f"| contender | median s ({rounds} rounds) | CLI's time / this | floor / this | rows | segments |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in names:
        m = statistics.median(results[name])
        print(f"| {name} | {m:.2f} | {cli / m:.2f}x | {floor / m:.2f} | {extra[name].get('rows', '')} | "
              f"{extra[name].get('segments', '')} |")


if __name__ == "__main__":
    main()
