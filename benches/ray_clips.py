#!/usr/bin/env python3
"""Issue 32's Ray figure: 10 random 8-frame clips of each of N long videos, resized (shorter side 256),
cropped to 224x224, float32 in [0, 1], CFHW, by `framefeed.ray.read_videos` and by the CLI doing the same job
(`framefeed run --clips ...`), side by side in one run, rounds interleaved, medians.

Every contender runs in its own process; Ray starts (`ray.init(num_cpus=2)`) before the clock, which covers
building the dataset to the last row read by the driver (`iter_rows`, streaming). The CLI's time is its whole
process. Both take the same clips (the seed, and each file's position in the list).

    python3 benches/ray_clips.py ROUNDS FILE...     (framefeed with its [ray] extra installed; the CLI built:
                                                     cargo build --release --features cli)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "target" / "release" / "framefeed"
KEYWORDS = dict(clips=10, seed=1, resize_shorter=256, crop=224, dtype="float32_unit", layout="CFHW")


def ray_job(files: list[str], actors: int, threads: int) -> None:
    """In a child process: Ray up, then the timed read; prints the seconds and the rows."""
    import ray

    import framefeed.ray as fr

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    t = time.perf_counter()
    rows = 0
    dataset = fr.read_videos(files, sequence_length=8, concurrency=actors, decoder_threads=threads,
                             num_cpus=2 / actors, **KEYWORDS)
    for row in dataset.iter_rows():
        assert row["error"] is None and row["frames"].shape == (3, 8, 224, 224)
        rows += 1
    print(time.perf_counter() - t, rows)


def cli_job(files: list[str]) -> tuple[float, int]:
    args = [str(CLI), "run", *files, "-L", "8", "-B", "1", "--clips", "10", "--seed", "1", "--resize-shorter",
            "256", "--crop", "224x224", "--dtype", "float32_unit", "--layout", "CFHW", "--threads", "2", "--json"]
    t = time.perf_counter()
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t, sum('"sequences"' in line for line in out.splitlines())


def main() -> None:
    if sys.argv[1] == "--ray":
        ray_job(sys.argv[4:], int(sys.argv[2]), int(sys.argv[3]))
        return
    rounds, files = int(sys.argv[1]), [str(Path(f).resolve()) for f in sys.argv[2:]]
    times: dict[str, list[float]] = {}
    rows: dict[str, int] = {}
    for _ in range(rounds):
        seconds, n = cli_job(files)
        times.setdefault("CLI", []).append(seconds)
        rows["CLI"] = n
        for actors, threads in ((1, 2), (2, 1)):
            name = f"Ray {actors} actor(s) x {threads} thread(s)"
            out = subprocess.run([sys.executable, __file__, "--ray", str(actors), str(threads), *files], check=True,
                                 capture_output=True, text=True).stdout.split()
            times.setdefault(name, []).append(float(out[-2]))
            rows[name] = int(out[-1])
    cli = statistics.median(times["CLI"])
    print(f"{len(files)} files, {rounds} rounds (median seconds; throughput against the CLI's)")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"  {name:28s} {m:7.3f} s  {rows[name]:4d} clips  {cli / m:5.2f}x the CLI")


if __name__ == "__main__":
    main()
