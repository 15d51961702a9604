"""The self-contained wheel's decode speed against a build from source, side by side (issue 50).

    python3 benches/wheel_vs_source.py WHEEL_PYTHON SOURCE_PYTHON [ROUNDS] [VIDEO...]

Each interpreter is a venv's python with framefeed installed: one from the wheel (python/build-wheel.sh: FFmpeg
5.1 and dav1d compiled by zig's clang for glibc 2.28, linked into the module), one from `pip install ./python`
(Debian 12's FFmpeg 5.1 shared libraries, compiled by Debian's gcc). Each round runs every video in a fresh
process under each, alternating which goes first; a run feeds the whole file to a `VideoInput` (L=8, B=2, every
frame to RGB, the decoder's default threads) and times the loop until the last batch, after `import framefeed`.
Prints the medians and the wheel's ratio.
"""

import statistics
import subprocess
import sys
from pathlib import Path

RUN = r"""
import sys, time
import framefeed as ff
data = open(sys.argv[1], "rb").read()
inp = ff.VideoInput(sequence_length=8, batch_size=2)
start = time.perf_counter()
inp.feed(data, label=sys.argv[1])
inp.close()
frames = sum(s.valid_frames for b in inp for s in b.sequences)
print(time.perf_counter() - start, frames, ff.ffmpeg_build()["version"])
"""

DEFAULT = ["long_640x480_9000f.mp4", "testsrc2_h265.mp4", "av1_video.mkv", "testsrc2_vp9.webm", "cfr_720p60.mov"]


def run(python: str, video: Path) -> tuple:
    out = subprocess.run([python, "-c", RUN, str(video)], check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]), out[2]


def main() -> None:
    wheel, source = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    corpus = Path(__file__).resolve().parent.parent.parent / "shared" / "videos"
    videos = [Path(v) if "/" in v else corpus / v for v in (sys.argv[4:] or DEFAULT)]
    print(f"{'video':28} {'frames':>7} {'wheel s':>9} {'source s':>9} {'ratio':>6}")
    for video in videos:
        times = {"wheel": [], "source": []}
        for r in range(rounds):
            order = [("wheel", wheel), ("source", source)]
            for name, python in order if r % 2 == 0 else order[::-1]:
                seconds, frames, version = run(python, video)
                times[name].append(seconds)
        w, s = statistics.median(times["wheel"]), statistics.median(times["source"])
        print(f"{video.name:28} {frames:>7} {w:>9.3f} {s:>9.3f} {w / s:>6.2f}")


if __name__ == "__main__":
    main()
