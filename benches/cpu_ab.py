"""CPU time over the decode floor: how much CPU framefeed spends beyond decoding (issue 14, target 3).

On this 2-core machine the floor keeps both cores nearly busy, so every CPU-second framefeed adds shows up as
about a second of wall time (`idle_cost.py`); CPU time is also far steadier than wall time on a noisy VM. For
each case, in one interleaved loop of RUNS rounds: the decode-only floor (`ffmpeg -threads 2 -i X -f null -`),
the release CLI, and the framefeed binary named by BEFORE. Prints the medians of user + system time and the
excess over the floor, as a Markdown table.

Usage: cargo build --release --features cli && bash benches/clips.sh &&
       BEFORE=path/to/old/framefeed python3 benches/cpu_ab.py [RUNS=9]
"""

import os
import resource
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIP = os.path.join(ROOT, "target/bench-clips/1080p.mp4")
AFTER = os.path.join(ROOT, "target/release/framefeed")
CASES = {
    "1080p H.264, resize 256 + crop 224, f32 CFHW": ["--resize-shorter", "256", "--crop", "224x224", "--seed", "1",
                                                     "--dtype", "f32", "--layout", "cfhw"],
    "1080p H.264, resize to 1280x720 (whole frame)": ["--resize", "1280x720"],
    "1080p H.264, crop 224 only": ["--crop", "224x224", "--seed", "1"],
}


def cpu(cmd: list[str]) -> float:
    """User + system seconds of `cmd` (run to completion)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    before_bin = os.environ["BEFORE"]
    print("| case | floor CPU (s) | before CPU (s) | after CPU (s) | before - floor | after - floor |")
    print("|---|---|---|---|---|---|")
    for name, args in CASES.items():
        cmds = {
            "floor": ["ffmpeg", "-v", "error", "-threads", "2", "-i", CLIP, "-f", "null", "-"],
            "before": [before_bin, "run", CLIP, "--threads", "2", "-L", "8", "-B", "4", *args],
            "after": [AFTER, "run", CLIP, "--threads", "2", "-L", "8", "-B", "4", *args],
        }
        times: dict[str, list[float]] = {k: [] for k in cmds}
        keys = list(cmds)
        for r in range(runs):
            for k in keys[r % len(keys):] + keys[:r % len(keys)]:
                times[k].append(cpu(cmds[k]))
        m = {k: statistics.median(v) for k, v in times.items()}
        print(f"| {name} | {m['floor']:.2f} | {m['before']:.2f} | {m['after']:.2f} | "
              f"{m['before'] - m['floor']:+.2f} | {m['after'] - m['floor']:+.2f} |", flush=True)


if __name__ == "__main__":
    main()
