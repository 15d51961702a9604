"""What CPU time the decode floor leaves for other work on this machine (issue 14, target 3).

The floor (`ffmpeg -threads 2 -i CLIP -f null -`) alone, and beside a busy loop that runs at the lowest
priority Linux has (`chrt --idle 0`, SCHED_IDLE: it gets a core only when nothing else wants one), in RUNS
interleaved rounds (the order alternating). Prints the medians of the floor's wall and user time. If the floor
kept a core partly idle that other work could use for free, the busy loop would not slow it.

Usage: bash benches/clips.sh && python3 benches/idle_cost.py [RUNS=7] [CLIP=target/bench-clips/1080p.mp4]
"""

import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def floor_run(clip: str) -> tuple[float, float]:
    """(wall, user) seconds of one decode-only run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    start = time.monotonic()
    subprocess.run(["ffmpeg", "-v", "error", "-threads", "2", "-i", clip, "-f", "null", "-"], check=True)
    wall = time.monotonic() - start
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    clip = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "target/bench-clips/1080p.mp4")
    results: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for i in range(runs):
        for spin in (False, True) if i % 2 else (True, False):
            spinner = None
            if spin:
                spinner = subprocess.Popen(["chrt", "--idle", "0", sys.executable, "-c", "while True: pass"])
                time.sleep(0.2)
            try:
                results[spin].append(floor_run(clip))
            finally:
                if spinner:
                    spinner.kill()
                    spinner.wait()
    print("| floor | wall (s) | user (s) |")
    print("|---|---|---|")
    for spin, label in ((False, "alone"), (True, "beside a SCHED_IDLE busy loop")):
        wall = statistics.median(r[0] for r in results[spin])
        user = statistics.median(r[1] for r in results[spin])
        print(f"| {label} | {wall:.3f} | {user:.2f} |")


if __name__ == "__main__":
    main()
