"""High bit depth (issue 62): 4K 10-bit HEVC decoded to 8-bit RGB, to lossless RGB48 (`--dtype uint16`), to
floats from the 16-bit levels (`--dtype float32_unit`) and tone-mapped to SDR (`--tonemap hable`) by `framefeed
run`, against the `ffmpeg` CLI doing the same (`-pix_fmt rgb24`, `-pix_fmt rgb48le`, the zscale/tonemap chain),
side by side: every round runs each command once, in turn, so that the machine's drifting speed hits them alike.
Prints the median wall time of each, frames/s, and the ratios.

    cargo build --release --features cli && python3 benches/high_bit_depth.py [ROUNDS]

The clip (made once, in target/bench-clips): 48 frames of 3840x2160 `testsrc2`, 10-bit 4:2:0 HEVC (x265
ultrafast), tagged BT.2020 PQ.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIPS = ROOT / "target" / "bench-clips"
CLIP = CLIPS / "4k_hevc10_pq.mp4"
FRAMES = 48
FRAMEFEED = ROOT / "target" / "release" / "framefeed"
CHAIN = "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=hable,zscale=t=bt709:m=bt709:r=tv"


def make_clip() -> None:
    if CLIP.exists():
        return
    CLIPS.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
         "testsrc2=size=3840x2160:rate=24", "-frames:v", str(FRAMES), "-c:v", "libx265", "-preset", "ultrafast",
         "-x265-params", "log-level=none", "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020",
         "-colorspace", "bt2020nc", "-color_trc", "smpte2084", str(CLIP)],
        check=True)


def commands() -> list[tuple[str, list[str]]]:
    ff = [str(FRAMEFEED), "run", str(CLIP), "-L", "8", "-B", "2", "--threads", "2"]
    cli = ["ffmpeg", "-v", "quiet", "-threads", "2", "-i", str(CLIP)]
    sink = ["-f", "rawvideo", "-y", "/dev/null"]
    return [
        ("framefeed uint8", ff),
        ("framefeed uint16", ff + ["--dtype", "uint16"]),
        ("framefeed float32_unit", ff + ["--dtype", "float32_unit"]),
        ("framefeed tonemap hable", ff + ["--tonemap", "hable"]),
        ("ffmpeg rgb24", cli + ["-pix_fmt", "rgb24"] + sink),
        ("ffmpeg rgb48le", cli + ["-pix_fmt", "rgb48le"] + sink),
        ("ffmpeg zscale/tonemap hable", cli + ["-vf", CHAIN, "-pix_fmt", "rgb24"] + sink),
    ]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    make_clip()
    runs = commands()
    times: dict[str, list[float]] = {name: [] for name, _ in runs}
    for _ in range(rounds):
        for name, cmd in runs:
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, RUST_LOG="error"))
            times[name].append(time.perf_counter() - start)
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"{rounds} rounds, {FRAMES} frames of 3840x2160 10-bit HEVC, medians of wall time")
    print("| command | s | frames/s | vs framefeed uint8 | vs ffmpeg, same output |")
    print("|---|---|---|---|---|")
    same = {
        "framefeed uint8": "ffmpeg rgb24",
        "framefeed uint16": "ffmpeg rgb48le",
        "framefeed tonemap hable": "ffmpeg zscale/tonemap hable",
    }
    for name, _ in runs:
        t = median[name]
        ref = same.get(name)
        versus = f"{median[ref] / t:.2f}x faster" if ref else ""
        print(f"| {name} | {t:.2f} | {FRAMES / t:.1f} | {median['framefeed uint8'] / t:.2f} | {versus} |")


if __name__ == "__main__":
    main()
