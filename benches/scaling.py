"""How framefeed's cost grows with the work (issue 14, target 4): frames/s and peak RSS of the release CLI
(full-frame RGB u8, 2 decoder threads) against resolution (480p to 4K, -L 8 -B 4) and against
sequence_length x batch_size (1080p), each beside the decode-only floor (`ffmpeg -threads 2 -i X -f null -`)
of the same clip, interleaved, medians of RUNS.

Usage: cargo build --release --features cli && python3 benches/scaling.py [RUNS=3] [FRAMES=120]
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target/release/framefeed")

RESOLUTIONS = [("480p", "854x480"), ("720p", "1280x720"), ("1080p", "1920x1080"), ("1440p", "2560x1440"),
               ("4K", "3840x2160")]
SHAPES = [(1, 1), (4, 1), (8, 1), (8, 4), (16, 4), (32, 4)]


def clip(dir_: str, size: str, frames: int) -> str:
    path = os.path.join(dir_, f"{size}.mp4")
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=30", "-frames:v",
         str(frames), "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", path],
        check=True,
    )
    return path


def floor(path: str) -> float:
    start = time.monotonic()
    subprocess.run(["ffmpeg", "-v", "error", "-threads", "2", "-i", path, "-f", "null", "-"], check=True)
    return time.monotonic() - start


def framefeed(path: str, length: int, batch: int) -> tuple[float, float, float, int]:
    """(wall seconds, system seconds, peak RSS MiB, frames)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime
    start = time.monotonic()
    out = subprocess.run(
        [BIN, "run", path, "-L", str(length), "-B", str(batch), "--threads", "2", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    wall = time.monotonic() - start
    system = resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime - before
    summary = json.loads(out.strip().splitlines()[-1])["summary"]
    return wall, system, summary["peak_rss_mib"], summary["frames"]


def measure(path: str, length: int, batch: int, runs: int) -> tuple[float, float, float, float, int]:
    floors, walls, systems, rss = [], [], [], []
    frames = 0
    for _ in range(runs):
        floors.append(floor(path))
        wall, system, peak, frames = framefeed(path, length, batch)
        walls.append(wall)
        systems.append(system)
        rss.append(peak)
    median = statistics.median
    return median(floors), median(walls), median(systems), median(rss), frames


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    frames = int(sys.argv[2]) if len(sys.argv) > 2 else 120
    with tempfile.TemporaryDirectory() as tmp:
        clips = {name: clip(tmp, size, frames) for name, size in RESOLUTIONS}
        print(f"H.264 testsrc2, {frames} frames, 2 threads, medians of {runs}; floor = ffmpeg -f null")
        print()
        print("| clip | L x B | batch MB | floor fps | framefeed fps | framefeed / floor (time) | framefeed system s "
              "| peak RSS MiB |")
        print("|---|---|---|---|---|---|---|---|")
        cases = [(name, 8, 4) for name, _ in RESOLUTIONS] + [("1080p", l, b) for l, b in SHAPES if (l, b) != (8, 4)]
        for name, length, batch in cases:
            w, h = dict(RESOLUTIONS)[name].split("x")
            batch_mb = int(w) * int(h) * 3 * length * batch / 2**20
            fl, wall, system, rss, n = measure(clips[name], length, batch, runs)
            print(f"| {name} | {length} x {batch} | {batch_mb:.0f} | {n / fl:.0f} | {n / wall:.0f} | "
                  f"{wall / fl:.2f} | {system:.2f} | {rss:.0f} |", flush=True)


if __name__ == "__main__":
    main()
