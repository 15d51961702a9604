#!/usr/bin/env python3
"""Issue 33: what a segment costs beyond its own frames, indexing its file, with and without the operator
keeping the index of the file it indexed last.

One `VideoInput` (one decoder thread) is fed SEGMENTS segments of one long file one after another, as a Ray
actor or a DataLoader worker that is handed several segments of one video is; each segment is cut to the
sequences that start in its first 8 frames, so that what is left of its time is indexing the file (a scan of
the whole file by demuxing) and decoding from its keyframe. Each contender is a Python with a framefeed build
(a venv's `bin/python`), run in its own process; rounds interleaved, medians.

    python3 benches/segment_index.py OLD_PYTHON NEW_PYTHON [CLIP] [SEGMENTS=10] [ROUNDS=3]

CLIP defaults to target/bench-clips/segments/long_10min.mp4 (`benches/ray_segments.py 1 1800 long10` makes
it).
"""

from __future__ import annotations

import json
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

RUN = """
import json, sys, time
import framefeed as ff
clip, segments = sys.argv[1], int(sys.argv[2])
frames = ff.segments(clip, 1)[-1][1]
inp = ff.VideoInput(8, 1, decoder_threads=1)
start = time.monotonic()
sequences = 0
for k in range(segments):
    first = k * frames // segments
    inp.feed_file(clip, segment=(first, first + 8))
    while True:
        batch = inp.next_batch()
        sequences += len(batch.sequences)
        if batch.is_last:
            break
print(json.dumps({"seconds": time.monotonic() - start, "sequences": sequences}))
"""


def main() -> None:
    old, new = sys.argv[1], sys.argv[2]
    clip = sys.argv[3] if len(sys.argv) > 3 else str(ROOT / "target" / "bench-clips" / "segments" / "long_10min.mp4")
    segments = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    results: dict = {"before (an index per segment)": [], "after (the file's index kept)": []}
    for _ in range(rounds):
        for name, python in zip(results, (old, new)):
            out = subprocess.run([python, "-c", RUN, clip, str(segments)], check=True, capture_output=True,
                                 text=True)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            results[name].append(result["seconds"])
            print(f"{name}: {result}", file=sys.stderr, flush=True)
    print(f"{clip}: {segments} segments, the sequences starting in each one's first 8 frames; medians of {rounds}")
    print("| contender | s | s a segment |")
    print("|---|---:|---:|")
    for name, times in results.items():
        m = statistics.median(times)
        print(f"| {name} | {m:.2f} | {m / segments:.3f} |")


if __name__ == "__main__":
    main()
