"""Latency of sources pulled by URL (issue 17): 1080p30 H.264 made by the ffmpeg CLI with -tune zerolatency,
sent at real-time pace over SRT (the ffmpeg CLI, -re -c copy, as the listener) and RTSP over TCP (GStreamer's RTSP
server, tests/peers/rtsp_server.py, serving the same H.264 in MP4), pulled by `framefeed run URL --low-latency
-L 8 -B 1 --json`. For each run: the time from starting the pull to its first batch line, and each batch's
`latency_ms` (the arrival of its last frame's packet to the poll that delivered it): median, p95, max.

Usage: python3 benches/url_latency.py [SECONDS=20] [RUNS=3]   (after cargo build --release --features cli)
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target/release/framefeed")


def free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pull(url: str, extra: list[str]) -> tuple[float, list[float], int]:
    """Runs the CLI on `url`: (seconds to the first batch, latencies in ms, frames)."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [BIN, "run", url, "--low-latency", "-L", "8", "-B", "1", "--json", "--reconnect", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    first = None
    latencies = []
    frames = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        value = json.loads(line)
        if "sequences" not in value:
            continue
        if first is None:
            first = time.monotonic() - start
        latencies.append(value["latency_ms"])
        frames += sum(s["valid_frames"] for s in value["sequences"])
    proc.wait()
    return first or float("nan"), latencies, frames


def srt(clip_ts: str) -> tuple[float, list[float], int]:
    port = free_port(socket.SOCK_DGRAM)
    url = f"srt://127.0.0.1:{port}"
    sender = subprocess.Popen(
        ["ffmpeg", "-v", "error", "-re", "-i", clip_ts, "-c", "copy", "-f", "mpegts", url + "?mode=listener"],
        stdin=subprocess.DEVNULL,
    )
    time.sleep(0.5)  # the listener is up
    try:
        return pull(url, [])
    finally:
        sender.wait()


def rtsp(clip_mp4: str) -> tuple[float, list[float], int]:
    server = subprocess.Popen(
        ["/usr/bin/python3", os.path.join(ROOT, "tests/peers/rtsp_server.py"), clip_mp4],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    port = int(server.stdout.readline().split()[1])
    try:
        return pull(f"rtsp://127.0.0.1:{port}/clip", ["--rtsp-transport", "tcp"])
    finally:
        server.kill()
        server.wait()


def main() -> None:
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as tmp:
        ts = os.path.join(tmp, "c.ts")
        mp4 = os.path.join(tmp, "c.mp4")
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30",
             "-t", str(seconds), "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency",
             "-g", "30", "-pix_fmt", "yuv420p", "-f", "mpegts", ts],
            check=True,
        )
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", ts, "-c", "copy", mp4], check=True)
        print(f"1080p30 H.264 (-tune zerolatency), {seconds} s, L=8 B=1 --low-latency, {runs} runs each")
        print()
        print("| source | run | frames | first batch after start (ms) | latency median (ms) | p95 | max |")
        print("|---|---|---|---|---|---|---|")
        for name, run in [("SRT", lambda: srt(ts)), ("RTSP/TCP", lambda: rtsp(mp4))]:
            for i in range(runs):
                first, lat, frames = run()
                lat_sorted = sorted(lat)
                p95 = lat_sorted[min(len(lat_sorted) - 1, int(0.95 * len(lat_sorted)))] if lat else float("nan")
                med = statistics.median(lat) if lat else float("nan")
                mx = max(lat) if lat else float("nan")
                print(f"| {name} | {i + 1} | {frames} | {first * 1000:.0f} | {med:.1f} | {p95:.1f} | {mx:.1f} |")


if __name__ == "__main__":
    main()
