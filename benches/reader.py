"""Random access side by side (issue 51): 10 random 8-frame clips (the same clips for every reader, by display
index) from 60 s of 1080p H.264 and from a 10-minute 1080p video, read by framefeed's `VideoReader.get_frames_at`,
TorchCodec's `VideoDecoder.get_frames_at` (`seek_mode="exact"`), decord 0.6's and decord2's `get_batch`, and
video-reader-rs's `get_batch`; every frame of the 60 s video read with `reader[i]` in order against `framefeed run`
on it; and the peak resident memory of a reader of each video. Each job is its own process (it opens the file,
reads, and reports its time and peak RSS); rounds are interleaved and medians reported; every reader gets 2
decoding threads (this machine's cores).

Usage: python benches/reader.py ROUNDS [--json PATH]
  --json PATH                   also write the figures there (benches/results/random_access.json is what
                                benches/plot.py draws), with the command, the date and the machine
  PYTHON=/tmp/bv/bin/python     an interpreter with framefeed, torch, torchcodec, decord 0.6 and video-reader-rs
  DECORD2=/tmp/bv2/bin/python   one with decord2 (it installs as `decord`, so it cannot share the first's)
  VRR_LIBS=...                  video-reader-rs 0.4.5's bundled libraries' folder (its wheel misses one RPATH)
The clips are made here (from benches/clips.sh's 10 s 1080p clip, stream-copied 6 and 60 times) in
target/bench-clips.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import platform
import random
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLIPS = ROOT / "target" / "bench-clips"
PYTHON = os.environ.get("PYTHON", sys.executable)
DECORD2 = os.environ.get("DECORD2")
CLI = ROOT / "target" / "release" / "framefeed"

JOB = r"""
import json, resource, sys, time
kind, path, clips = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
start = time.monotonic()
frames = 0
if kind == "framefeed":
    import framefeed as ff
    r = ff.VideoReader(path, threads=2)
    for c in clips:
        frames += len(r.get_frames_at(c).data)
elif kind == "framefeed_every":
    import framefeed as ff
    r = ff.VideoReader(path, threads=2)
    for i in range(len(r)):
        r[i]
        frames += 1
elif kind == "torchcodec":
    from torchcodec.decoders import VideoDecoder
    d = VideoDecoder(path, seek_mode="exact", num_ffmpeg_threads=2)
    for c in clips:
        frames += len(d.get_frames_at(c).data)
elif kind == "decord":
    import decord
    vr = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=2)
    for c in clips:
        frames += len(vr.get_batch(c).asnumpy())
elif kind == "video_reader_rs":
    from video_reader import PyVideoReader
    vr = PyVideoReader(path, threads=2)
    for c in clips:
        frames += len(vr.get_batch(c))
seconds = time.monotonic() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "frames": frames, "peak_mib": peak}))
"""


def make_clips() -> dict:
    base = CLIPS / "1080p.mp4"
    if not base.exists():
        subprocess.run(["bash", str(ROOT / "benches" / "clips.sh")], check=True, stdout=subprocess.DEVNULL)
    out = {}
    for name, copies in (("1080p_60s", 6), ("1080p_10min", 60)):
        path = CLIPS / f"{name}.mp4"
        if not path.exists():
            listing = CLIPS / f"{name}.txt"
            listing.write_text(f"file '{base}'\n" * copies)
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", str(listing), "-c",
                            "copy", str(path)], check=True)
        out[name] = path
    return out


def frame_count(path: pathlib.Path) -> int:
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-count_packets", "-show_entries",
                          "stream=nb_read_packets", "-of", "csv=p=0", str(path)], check=True, capture_output=True,
                         text=True).stdout
    return int(out.strip().strip(","))


def job(python: str, kind: str, path: pathlib.Path, clips: list) -> dict:
    env = dict(os.environ)
    if kind == "video_reader_rs" and os.environ.get("VRR_LIBS"):
        env["LD_LIBRARY_PATH"] = os.environ["VRR_LIBS"]
    run = subprocess.run([python, "-c", JOB, kind, str(path), json.dumps(clips)], capture_output=True, text=True,
                         env=env)
    if run.returncode != 0:
        return {"error": run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"}
    return json.loads(run.stdout.strip().splitlines()[-1])


def cli(path: pathlib.Path) -> dict:
    import time

    start = time.monotonic()
    subprocess.run([str(CLI), "run", str(path), "--threads", "2", "-L", "1", "-B", "1"], check=True,
                   stdout=subprocess.DEVNULL)
    return {"seconds": time.monotonic() - start}


def machine() -> str:
    """This machine in a few words: cores, architecture, OS, the ffmpeg CLI's release."""
    system = platform.system()
    try:
        for line in pathlib.Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                system = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    try:
        ffmpeg = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.split()[2]
    except (OSError, IndexError):
        ffmpeg = "unknown"
    return f"{os.cpu_count()}-core {platform.machine()}, {system}, FFmpeg {ffmpeg}"


def write_json(path: str, rounds: int, results: dict) -> None:
    env = " ".join(f"{k}={os.environ[k]}" for k in ("PYTHON", "DECORD2", "VRR_LIBS") if k in os.environ)
    rows = []
    for (name, kind), runs in results.items():
        ok = [x for x in runs if "seconds" in x]
        if ok:
            peaks = [x["peak_mib"] for x in ok if "peak_mib" in x]
            seconds = statistics.median(x["seconds"] for x in ok)
            rows.append({"video": name, "reader": kind, "median_s": round(seconds, 3),
                         "peak_mib": round(statistics.median(peaks), 1) if peaks else None,
                         "runs": [round(x["seconds"], 2) for x in ok]})
    data = {"benchmark": "random_access",
            "title": "10 random 8-frame clips (seed 7, the same for every reader), 2 decoding threads each, "
                     "one process per job",
            "command": f"{env + ' ' if env else ''}python3 benches/reader.py {rounds}",
            "date": datetime.date.today().isoformat(), "machine": machine(),
            "unit": f"seconds per job, the reader's import and open included; median of {rounds} interleaved rounds",
            "rows": rows}
    pathlib.Path(path).write_text(json.dumps(data, indent=2) + "\n")


def main() -> None:
    json_path = None
    if "--json" in sys.argv:
        at = sys.argv.index("--json")
        json_path = sys.argv[at + 1]
        del sys.argv[at:at + 2]
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    videos = make_clips()
    readers = [("framefeed", PYTHON), ("torchcodec", PYTHON), ("decord", PYTHON), ("video_reader_rs", PYTHON)]
    if DECORD2:
        readers.append(("decord2", DECORD2))
    results: dict = {}
    for name, path in videos.items():
        n = frame_count(path)
        rng = random.Random(7)
        clips = sorted([s + j for j in range(8)] for s in (rng.randrange(0, n - 8) for _ in range(10)))
        for r in range(rounds):
            for kind, python in readers:
                real = "decord" if kind == "decord2" else kind
                results.setdefault((name, kind), []).append(job(python, real, path, clips))
            if name == "1080p_60s":
                results.setdefault((name, "framefeed_every"), []).append(job(PYTHON, "framefeed_every", path, []))
                results.setdefault((name, "cli_run"), []).append(cli(path))
            print(f"round {r + 1} of {name} done", file=sys.stderr)
    print(f"{'video':<13} {'reader':<17} {'median s':>9} {'peak MiB':>9}  runs")
    for (name, kind), runs in results.items():
        ok = [x for x in runs if "seconds" in x]
        if not ok:
            print(f"{name:<13} {kind:<17} failed: {runs[0].get('error')}")
            continue
        seconds = statistics.median(x["seconds"] for x in ok)
        peak = statistics.median(x.get("peak_mib", 0.0) for x in ok)
        each = " ".join(f"{x['seconds']:.2f}" for x in ok)
        print(f"{name:<13} {kind:<17} {seconds:9.3f} {peak:9.1f}  {each}")
    if json_path:
        write_json(json_path, rounds, results)


if __name__ == "__main__":
    main()
