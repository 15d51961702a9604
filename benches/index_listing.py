#!/usr/bin/env python3
"""What indexing a long MP4 costs, before and after listing its packets from its index (`demux::indexed`:
the `moov` box, not the media data), for the two places issue 33's segments index a file:

- **cut**: `framefeed.segments(clip, 1800)`, the driver's cut of a file into segments (Ray's `read_videos`,
  torch's `VideoDataset`, `framefeed info --segments`), before any worker starts;
- **worker**: a fresh `VideoInput` (one decoder thread) fed one segment in the middle of the file, cut to the
  sequences starting in its first 8 frames: a worker's first segment of a file (its index, then a decode from
  the keyframe);
- **plan of 100 files**: `framefeed._units.plan` (what `read_videos` and `VideoDataset` run in the driver) over
  100 one-minute 1080p files (hard links to long_60s.mp4, `segment_frames=300`): after this change the files
  are cut on a few threads at once.

Each contender is a Python with a framefeed build (a venv's `bin/python`), run in its own process; rounds
interleaved, medians. With `COLD=1` the page cache is dropped before each run (`/proc/sys/vm/drop_caches`,
root only), so a scan reads the file from disk.

    python3 benches/index_listing.py OLD_PYTHON NEW_PYTHON [ROUNDS=3] [CLIP_OR_FOLDER...]

CLIPs default to target/bench-clips/segments/long_10min.mp4 (`benches/ray_segments.py 1 1800 long10` makes
it: 18,000 frames of 1080p H.264, 1.07 GB) and long_10h_small.mp4 (ten hours, 1,080,000 frames of 64x36:
the sample count of a ten-hour video; made here by concatenating a 10-minute encode 60 times with `-c copy`).
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLIPS = ROOT / "target" / "bench-clips" / "segments"

RUN = """
import json, sys, time
import framefeed as ff
clip, what = sys.argv[1], sys.argv[2]
start = time.monotonic()
if what == "cut":
    parts = ff.segments(clip, 1800)
    out = {"segments": len(parts)}
elif what == "plan":
    import glob
    from framefeed import _units
    units = _units.plan(sorted(glob.glob(clip + "/*.mp4")), 300)
    out = {"units": len(units)}
else:
    first = int(sys.argv[3])
    inp = ff.VideoInput(8, 1, decoder_threads=1)
    inp.feed_file(clip, segment=(first, first + 8))
    sequences = 0
    while True:
        batch = inp.next_batch()
        sequences += len(batch.sequences)
        if batch.is_last:
            break
    out = {"sequences": sequences}
out["seconds"] = time.monotonic() - start
print(json.dumps(out))
"""


def ten_hours() -> pathlib.Path:
    path = CLIPS / "long_10h_small.mp4"
    if not path.exists():
        CLIPS.mkdir(parents=True, exist_ok=True)
        ten_minutes = CLIPS / "ten_min_small.mp4"
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                        "testsrc2=size=64x36:rate=30,noise=alls=8:allf=t", "-frames:v", "18000", "-c:v", "libx264",
                        "-preset", "veryfast", "-g", "60", "-pix_fmt", "yuv420p", str(ten_minutes)], check=True)
        listing = CLIPS / "ten_min_small.txt"
        listing.write_text("".join(f"file '{ten_minutes}'\n" for _ in range(60)))
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", str(listing), "-c",
                        "copy", str(path)], check=True)
    return path


def hundred_files() -> pathlib.Path:
    folder = CLIPS / "hundred"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(100):
        link = folder / f"v{i:03}.mp4"
        if not link.exists():
            os.link(CLIPS / "long_60s.mp4", link)
    return folder


def run(python: str, clip: str, what: str, middle: int, cold: bool) -> dict:
    if cold:
        subprocess.run(["sync"], check=True)
        pathlib.Path("/proc/sys/vm/drop_caches").write_text("1")
    out = subprocess.run([python, "-c", RUN, clip, what, str(middle)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    clips = sys.argv[4:] or [str(CLIPS / "long_10min.mp4"), str(ten_hours()), str(hundred_files())]
    cold = os.environ.get("COLD") == "1"
    pythons = {"before (read)": old, "after (listed)": new}
    print(f"medians of {rounds}; page cache {'dropped before each run' if cold else 'warm'}")
    print("| clip | what | before: read (s) | after: listed (s) | before / after |")
    print("|---|---|---:|---:|---:|")
    for clip in clips:
        if pathlib.Path(clip).is_dir():
            jobs = [("plan", 0)]
        else:
            count = f"import framefeed as ff, json; print(json.dumps(ff.segments({clip!r}, 1)[-1][1]))"
            frames = json.loads(subprocess.run([new, "-c", count], check=True, capture_output=True,
                                               text=True).stdout)
            jobs = [("cut", 0), ("worker", frames // 2)]
        for what, middle in jobs:
            times: dict = {name: [] for name in pythons}
            results: dict = {}
            for r in range(rounds):
                order = list(pythons.items()) if r % 2 == 0 else list(reversed(pythons.items()))
                for name, python in order:
                    result = run(python, clip, what, middle, cold)
                    times[name].append(result["seconds"])
                    results.setdefault(name, result)
                    print(f"{pathlib.Path(clip).name} {what} {name}: {result}", file=sys.stderr, flush=True)
            # The same answer both ways.
            a, b = (dict((k, v) for k, v in results[n].items() if k != "seconds") for n in pythons)
            assert a == b, (a, b)
            before, after = (statistics.median(times[n]) for n in pythons)
            print(f"| {pathlib.Path(clip).name} | {what} | {before:.3f} | {after:.3f} | {before / after:.1f}x |")


if __name__ == "__main__":
    main()
