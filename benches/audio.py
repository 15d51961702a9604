"""Audio beside the frames (issue 63): what `--audio` costs a plain run, and that memory stays flat in the video's
length. `framefeed run` on 1080p30 H.264 with 48 kHz stereo AAC, with and without `--audio` (and with the sound
resampled to 16 kHz mono), side by side: every round runs each command once, in turn, so that the machine's
drifting speed hits them alike. Prints the median wall time and CPU time (user + system) of each and the ratios
(CPU time is the steadier measure of what the audio adds on a shared machine); then the peak RSS of a run
with `--audio` on the short clip and on one four times longer.

    cargo build --release --features cli && python3 benches/audio.py [ROUNDS]

The clips (made once, in target/bench-clips): 20 s and 80 s of 1920x1080 `testsrc2` at 30 fps (x264 ultrafast)
with a two-tone stereo sine at 48 kHz (AAC 128 kb/s).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIPS = ROOT / "target" / "bench-clips"
FRAMEFEED = ROOT / "target" / "release" / "framefeed"


def clip(seconds: int) -> Path:
    path = CLIPS / f"1080p_aac48k_{seconds}s.mp4"
    if path.exists():
        return path
    CLIPS.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
         "testsrc2=size=1920x1080:rate=30", "-f", "lavfi", "-i",
         "aevalsrc=0.5*sin(2*PI*440*t)|0.3*sin(2*PI*660*t):s=48000", "-t", str(seconds),
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k",
         str(path)],
        check=True)
    return path


def run(cmd: list[str]) -> dict:
    out = subprocess.run(cmd + ["--json"], check=True, capture_output=True, text=True,
                         env=dict(os.environ, RUST_LOG="error")).stdout
    return json.loads(out.strip().splitlines()[-1])["summary"]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    short, long = clip(20), clip(80)
    base = [str(FRAMEFEED), "run", str(short), "-L", "16", "-B", "2", "--threads", "2"]
    runs = [
        ("video only", base),
        ("--audio (48 kHz stereo)", base + ["--audio"]),
        ("--audio 16 kHz mono", base + ["--audio", "--audio-rate", "16000", "--audio-channels", "1"]),
    ]
    times: dict[str, list[float]] = {name: [] for name, _ in runs}
    cpu: dict[str, list[float]] = {name: [] for name, _ in runs}
    for _ in range(rounds):
        for name, cmd in runs:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, RUST_LOG="error"))
            times[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    median = {name: statistics.median(t) for name, t in times.items()}
    median_cpu = {name: statistics.median(t) for name, t in cpu.items()}
    print(f"{rounds} rounds, 600 frames of 1920x1080 H.264 with 48 kHz stereo AAC, "
          "medians of wall time and of CPU time")
    print("| command | wall s | frames/s | wall vs video only | CPU s | CPU vs video only |")
    print("|---|---|---|---|---|---|")
    for name, _ in runs:
        t, c = median[name], median_cpu[name]
        print(f"| {name} | {t:.2f} | {600 / t:.1f} | {t / median['video only']:.3f}x | {c:.2f} | "
              f"{c / median_cpu['video only']:.3f}x |")
    print()
    print("| clip | frames | peak RSS, video only (MiB) | peak RSS, --audio (MiB) |")
    print("|---|---|---|---|")
    for path, seconds in ((short, 20), (long, 80)):
        cmd = [str(FRAMEFEED), "run", str(path), "-L", "16", "-B", "2", "--threads", "2"]
        plain, audio = run(cmd), run(cmd + ["--audio"])
        print(f"| {seconds} s | {audio['frames']} | {plain['peak_rss_mib']:.1f} | {audio['peak_rss_mib']:.1f} |")
    audio_alone(short, rounds, median["video only"])


def audio_alone(path: Path, rounds: int, video_seconds: float) -> None:
    """The audio's own work on the short clip (demux, decode, resample: the Python package's `decode_audio`, the
    same code the operator runs), beside the video-only run's wall time: the share a run's audio can cost."""
    try:
        import framefeed
    except ImportError as e:
        print(f"\nthe audio alone: not measured ({e}; install ./python to measure it)")
        return
    data = path.read_bytes()
    print()
    print("| the audio alone, 20 s | s | share of the video-only run |")
    print("|---|---|---|")
    for name, kw in (("48 kHz stereo", {}), ("16 kHz mono", {"sample_rate": 16000, "channels": 1})):
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            framefeed.decode_audio(data, **kw)
            times.append(time.perf_counter() - start)
        t = statistics.median(times)
        print(f"| {name} | {t:.3f} | {t / video_seconds:.1%} |")


if __name__ == "__main__":
    main()
