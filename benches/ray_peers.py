#!/usr/bin/env python3
"""Issue 16's benchmark: a dataset of 16 generated 1080p H.264 clips decoded to RGB u8 frames on Ray Data, by
`framefeed.ray.read_videos` and by Ray Data's own `ray.data.read_videos` (decord), side by side in one run.

Every contender runs in its own process with its own one-node Ray instance of the same size (`ray.init(num_cpus=
2)`: this machine's cores); Ray starts before the clock, which covers building the dataset to the last row read
by the driver (`iter_batches`, streaming: nothing is materialized). Rounds are interleaved; medians are printed
as a Markdown table. Peak memory per worker: a sampler thread reads `/proc/PID/status` of every Ray worker
process (`ray::...`) every 50 ms and keeps each one's peak `VmRSS` (which counts the object-store pages the worker
wrote into) and `RssAnon` (its private memory).

    .venv/bin/pip install ./python 'ray[data]' decord
    python3 benches/ray_peers.py [ROUNDS]        # clips made on first use in target/bench-clips/ray/

Environment: CLIPS=COUNTxFRAMES (default 16x90), NODES=1 or 2 (default 1: one node of 2 CPUs; 2: a local
`ray.cluster_utils.Cluster` of 2 nodes of one CPU, each with its own raylet and object store), STORE_MB (each
node's object store with NODES=2; default cluster_utils' 150 MiB), CONTENDERS=a,b,... (default all below),
FRAMEFEED_OPTIONS='{"prefetch_batches": 2}' (more keywords for framefeed's `read_videos`, JSON). Issue 53's job:
`CLIPS=5x150 NODES=2 CONTENDERS=floor,ray-read_videos,framefeed-2x1,framefeed-2x1-before`.

Contenders:
  floor             no Ray: `ffmpeg -threads 2 -i CLIP -f null -` on each clip in turn (decode only, no conversion)
  ray-read_videos   ray.data.read_videos(paths): decord, one block per frame, Ray's default read parallelism
  framefeed-1x1     framefeed.ray.read_videos(paths, sequence_length=8, concurrency=1, decoder_threads=1)
  framefeed-2x1     the same with concurrency=2 (two actors, one decoder thread each)
  framefeed-1x2     concurrency=1, decoder_threads=2, num_cpus=2 (one actor, two threads)
  framefeed-2x1-before  2x1 with the yields and blocks of before issue 53 (`sequences_per_block=4`,
                    `block_bytes=128 MiB`: Ray's default block size whatever the object store's)
  ...-224           the same, every frame resized to 224x224 in the reader (`resize=(224, 224)`: decord's
                    (height, width), framefeed's (width, height)), so that the object store carries 150 KB frames
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLIPS = ROOT / "target" / "bench-clips" / "ray"
COUNT, FRAMES = (int(n) for n in os.environ.get("CLIPS", "16x90").split("x"))
NODES = int(os.environ.get("NODES", "1"))
if NODES not in (1, 2):
    raise SystemExit("NODES is 1 or 2 (the machine's 2 CPUs, shared out)")
CONTENDERS = os.environ.get(
    "CONTENDERS", "floor,ray-read_videos,framefeed-1x1,framefeed-2x1,framefeed-1x2,ray-read_videos-224,framefeed-2x1-224"
).split(",")


def make_clips() -> list:
    """16 different 1080p clips of 90 frames (3 s at 30 fps): testsrc2 from a different start + noise, x264
    veryfast, CRF 23, GOP 60 (B-frames on), MP4."""
    CLIPS.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(COUNT):
        path = CLIPS / (f"clip_{i:02d}.mp4" if FRAMES == 90 else f"clip_{i:02d}_{FRAMES}.mp4")
        if not path.is_file():
            source = f"testsrc2=size=1920x1080:rate=30,trim=start={i * 5},setpts=PTS-STARTPTS,noise=alls=12:allf=t+u"
            subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", source,
                            "-frames:v", str(FRAMES), "-c:v", "libx264", "-preset", "veryfast", "-crf", "23",
                            "-g", "60", "-pix_fmt", "yuv420p", str(path)], check=True)
        paths.append(str(path))
    return paths


class Sampler(threading.Thread):
    """Peak VmRSS and RssAnon (KiB) of each Ray worker process, by PID."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peaks: dict = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.05):
            for entry in pathlib.Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    if not (entry / "cmdline").read_bytes().startswith(b"ray::"):
                        continue
                    fields = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines())
                except (OSError, ValueError):
                    continue
                rss, anon = (int(fields[k].split()[0]) for k in ("VmRSS", "RssAnon"))
                old = self.peaks.get(entry.name, (0, 0))
                self.peaks[entry.name] = (max(old[0], rss), max(old[1], anon))


def run_one(name: str, paths: list) -> dict:
    """In the child: decode every clip with contender `name`."""
    if name == "floor":
        start = time.perf_counter()
        for path in paths:
            subprocess.run(["ffmpeg", "-v", "error", "-threads", "2", "-i", path, "-f", "null", "-"], check=True)
        return {"frames": COUNT * FRAMES, "seconds": time.perf_counter() - start, "workers": 0, "rss_mb": 0,
                "anon_mb": 0}
    import ray
    import ray.data

    if NODES == 1:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    else:
        from ray.cluster_utils import Cluster

        # The machine's 2 CPUs shared out among NODES local nodes (their own raylets and object stores): rows
        # decoded on a node that is not the driver's travel between object stores, as on a real cluster.
        store = {"object_store_memory": int(os.environ["STORE_MB"]) << 20} if "STORE_MB" in os.environ else {}
        cluster = Cluster(initialize_head=True,
                          head_node_args={"num_cpus": 2 // NODES, "include_dashboard": False, **store})
        for _ in range(NODES - 1):
            cluster.add_node(num_cpus=2 // NODES, **store)
        ray.init(address=cluster.address, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    sampler = Sampler()
    sampler.start()
    start = time.perf_counter()
    frames = 0
    small = "-224" in name
    if name.startswith("ray-read_videos"):
        dataset = ray.data.read_videos(paths, resize=(224, 224) if small else None)
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            frames += len(batch["frame"])
    else:
        import framefeed.ray

        actors, threads = (int(n) for n in name.split("-")[1].split("x"))
        options = json.loads(os.environ.get("FRAMEFEED_OPTIONS", "{}"))
        if name.endswith("-before"):  # the defaults before issue 53: 4 rows a yield, Ray's 128 MiB blocks
            options.update(sequences_per_block=4, block_bytes=128 << 20)
        dataset = framefeed.ray.read_videos(paths, sequence_length=8, concurrency=actors, decoder_threads=threads,
                                            num_cpus=threads, resize=(224, 224) if small else None, **options)
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            frames += int(batch["valid_frames"].sum())
    seconds = time.perf_counter() - start
    sampler.stop.set()
    sampler.join()
    ray.shutdown()
    if NODES > 1:
        cluster.shutdown()
    peaks = list(sampler.peaks.values()) or [(0, 0)]
    return {
        "frames": frames,
        "seconds": seconds,
        "workers": len(peaks),
        "rss_mb": max(p[0] for p in peaks) / 1024,
        "anon_mb": max(p[1] for p in peaks) / 1024,
    }


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(run_one(sys.argv[2], sys.argv[3:])))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    paths = make_clips()
    results: dict = {name: [] for name in CONTENDERS}
    for r in range(rounds):
        for name in CONTENDERS:
            run = subprocess.run([sys.executable, __file__, "--child", name, *paths], capture_output=True,
                                 text=True)
            if run.returncode != 0:
                print(f"{name}: failed\n{run.stderr[-3000:]}", file=sys.stderr)
                continue
            result = json.loads(run.stdout.strip().splitlines()[-1])
            results[name].append(result)
            print(f"round {r + 1} {name}: {result}", file=sys.stderr)
    def reference(name: str) -> float:
        peer = "ray-read_videos-224" if "-224" in name else "ray-read_videos"
        peer = name if name == "floor" else peer
        return statistics.median(x["frames"] / x["seconds"] for x in results[peer]) if results.get(peer) else 0.0

    print(f"\n{COUNT} clips x {FRAMES} frames, 1920x1080 H.264 -> RGB u8, medians of {rounds} rounds\n")
    print("| contender | frames | wall s | frames/s | vs ray.data.read_videos (same output) | workers | peak VmRSS/worker MB"
          " | peak RssAnon/worker MB |")
    print("|---|---|---|---|---|---|---|---|")
    for name in CONTENDERS:
        xs = results[name]
        if not xs:
            print(f"| {name} | failed | | | | | | |")
            continue
        fps = statistics.median(x["frames"] / x["seconds"] for x in xs)
        print(f"| {name} | {xs[0]['frames']} | {statistics.median(x['seconds'] for x in xs):.2f} | {fps:.1f} | "
              f"{fps / reference(name) if reference(name) else 0:.2f}x | {xs[0]['workers']} | {statistics.median(x['rss_mb'] for x in xs):.0f} | "
              f"{statistics.median(x['anon_mb'] for x in xs):.0f} |")


if __name__ == "__main__":
    main()
