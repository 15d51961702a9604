"""Many live cameras, one model: N live 720p30 H.264 cameras on loopback, each the ffmpeg CLI
serving a clip at real-time pace (`-re -c copy -listen 1`: MPEG-TS over HTTP, or with SENDER=rtmp FLV over
RTMP), pulled and batched across cameras by
`framefeed.Mux` (batch 16, deadline 33 ms, every frame; each camera's operator `low_latency`, one decoder
thread, RGB uint8 at 1280x720, or with RESIZE=WxH a fused resize). Cameras join at their own moments within
the first second (STAGGER seconds; 0: all at once, frames and keyframes in step), while the consumer polls.

For each run: frames lost (sent minus batched), the latency from a frame's arrival (the read of its packet) to
the batch that holds it, p50 and p99 (over the whole run, and after each camera's first 3 s, split into the
time to decode it and the time it waited in the mux for its batch), how far the last
frames were behind the cameras' clock (real time: the lag does not grow), and CPU: framefeed's process (all its
threads) and the senders', per camera, in cores. After the first run's row, its steady state: the process's CPU
per camera from 3 s after the last camera joined to 1 s before the clip's end (without the cameras' start-up),
its page faults and its peak resident memory.

Then, unless CAPACITY=0, the number of cameras one machine batches in real time without loss: N from START
(default CAMERAS) up by STEP (4) until a run loses frames or falls behind (a camera done more than 2.5 s
after the clip's end, start-up included), against
what the decode floor allows: the floor's frames per second from the file (`ffmpeg -threads 2 -i clip -f
null -`, and two single-thread decodes side by side, whichever is faster), divided by 30; and, at each N in
the same loop, the live floor: N ffmpeg CLI decoders (`-threads 1 -f null`, no conversion) pulling the same
senders, judged by the same rule (their frames counted from `-stats`).

On a GPU (DEVICE=cuda: cameras per card): every camera's operator decodes on NVDEC (no CPU
fallback), and the reference is the engines' measured rate on the same clip (FLOOR_OPERATORS operators, 14 by
default, decoding it side by side as fast as they go) instead of the CPU floors; the capacity loop goes on up to
MAX cameras (1024). With CLIPS pointing at a folder that already holds `cam720_{SECONDS}s.ts` and its packet
table (`benches/gpu-card-pack.sh` makes them) and SENDER=paced, no ffmpeg or ffprobe is needed.

Usage: pip install ./python && python3 benches/mux_cameras.py [CAMERAS=16] [SECONDS=20]
       env: CAPACITY=1 START=16 STEP=4 MAX=64 RESIZE=640x360 POLICY=every_frame STAGGER=1
            SENDER=http|rtmp|paced DEVICE=cpu|cuda CLIPS=DIR LIVE_FLOOR=1 FLOOR_OPERATORS=14
"""

from __future__ import annotations

import os
import resource
import socket
import statistics
import subprocess
import sys
import random
import re
import threading
import time
from typing import Dict, List, Tuple

import framefeed as ff

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIPS = os.environ.get("CLIPS", os.path.join(ROOT, "target", "bench-clips"))
# Where the cameras' operators decode: "cpu", or "cuda" (NVDEC, no CPU fallback: a camera NVDEC cannot take fails).
DEVICE = os.environ.get("DEVICE", "cpu")
FPS = 30
# How the senders serve: "http" (MPEG-TS over HTTP, progressive), "rtmp" (FLV over RTMP, 128-byte chunks), each
# camera an ffmpeg CLI process, or "paced" (MPEG-TS over HTTP, every camera from one light Python process:
# benches/paced_sender.py, so that the senders take less of the machine that batches them).
SENDER = os.environ.get("SENDER", "http")
SCHEME = "rtmp" if SENDER == "rtmp" else "http"
# Cameras join within this many seconds, each at its own moment (real cameras are not in step).
STAGGER = float(os.environ.get("STAGGER", "1"))
# The latency after each camera's first seconds (its connection, probe and first keyframe) is reported apart.
WARM_UP = 3.0
# A run is in real time when every camera is done within this many seconds of the clip's end (start-up
# included), with no frame lost.
SLACK = 2.5


def clip(seconds: int) -> str:
    """A 720p30 H.264 clip as an IP camera sends it: x264 veryfast, zerolatency (no B-frames), 2.5 Mb/s CBR,
    a keyframe every 2 s, FLV; `testsrc2` with temporal noise, so every frame carries detail."""
    os.makedirs(CLIPS, exist_ok=True)
    path = os.path.join(CLIPS, f"cam720_{seconds}s.flv")
    # Packed without the FLV (the GPU machine's bundle): the MPEG-TS the paced senders serve is the clip.
    if not os.path.exists(path) and SENDER == "paced" and os.path.exists(path[:-4] + ".ts"):
        return path[:-4] + ".ts"
    if not os.path.exists(path):
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
             "testsrc2=size=1280x720:rate=30,noise=alls=12:allf=t", "-t", str(seconds), "-c:v", "libx264",
             "-preset", "veryfast", "-tune", "zerolatency", "-b:v", "2500k", "-maxrate", "2500k",
             "-bufsize", "2500k", "-g", "60", "-pix_fmt", "yuv420p", "-f", "flv", path],
            check=True,
        )
    return path


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def floor(path: str, frames: int, rounds: int = 5) -> Tuple[float, float]:
    """The decode floor in frames per second: `-threads 2`, and two `-threads 1` decodes side by side."""
    two_threads, side_by_side = [], []
    for _ in range(rounds):
        start = time.monotonic()
        subprocess.run(["ffmpeg", "-v", "error", "-threads", "2", "-i", path, "-f", "null", "-"], check=True)
        two_threads.append(frames / (time.monotonic() - start))
        start = time.monotonic()
        procs = [subprocess.Popen(["ffmpeg", "-v", "error", "-threads", "1", "-i", path, "-f", "null", "-"])
                 for _ in range(2)]
        for p in procs:
            p.wait()
        side_by_side.append(2 * frames / (time.monotonic() - start))
    return statistics.median(two_threads), statistics.median(side_by_side)


def engines_floor(path: str, operators: int, resize) -> float:
    """On a GPU: the engines' measured rate on this clip, in frames per second: `operators` framefeed operators
    (`device`, one file each, RGB like the cameras' and the same resize) decoding it side by side as fast as
    they can (benches/RESULTS.md, "Operators in one process": 14 operators keep the card's NVDEC engines 96-100 % busy)."""
    with open(path, "rb") as f:
        data = f.read()
    counts = [0] * operators

    def one(i: int) -> None:
        inp = ff.VideoInput(16, 2, device=DEVICE, cpu_fallback=False, decoder_threads=1,
                            **({"resize": resize} if resize else {}))
        inp.feed(data, f"floor{i}")
        inp.close()
        for batch in inp:
            counts[i] += batch.valid_frames

    threads = [threading.Thread(target=one, args=(i,)) for i in range(operators)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.monotonic() - start)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(ports: List[int]) -> bool:
    """Whether every port is in LISTEN state (read from /proc/net/tcp: a test connection would be taken as the
    sender's one client)."""
    open_ports = set()
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":
                open_ports.add(int(fields[1].split(":")[1], 16))
    return all(p in open_ports for p in ports)


def resident_bytes() -> int:
    """This process's resident memory now (Linux), or 0."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def percentile(values: List[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def run(path: str, frames: int, cameras: int, policy: str, resize) -> Dict[str, float]:
    """One run of `cameras` cameras; what it measured."""
    sending, urls = senders(path, cameras)
    settings: Dict[str, object] = dict(low_latency=True, decoder_threads=1, device=DEVICE)
    if DEVICE != "cpu":
        settings["cpu_fallback"] = False
    if resize:
        settings["resize"] = resize
    mux = ff.Mux(16, 0.033, policy=policy, **settings)
    children_before = cpu_of_children()
    cpu_before, wall_before = time.process_time(), time.monotonic()

    def join() -> None:
        # Cameras are not in step: each joins at its own moment within the first second (STAGGER=0: at once).
        rng = random.Random(cameras)
        for i, url in enumerate(urls):
            time.sleep(rng.uniform(0, STAGGER / cameras))
            mux.add_url(url, f"cam{i}", schemes=[SCHEME], reconnect=0)
        mux.close()

    # The process's CPU time and resident memory every 0.25 s, for the steady state's CPU (from the last
    # camera's WARM_UP-th second to 1 s before the clip's end) apart from the start-up's, and the peak memory.
    samples: List[Tuple[float, float, int]] = []
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(0.25):
            samples.append((time.monotonic(), time.process_time(), resident_bytes()))

    faults_before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    joining = threading.Thread(target=join)
    joining.start()
    got = [0] * cameras
    latency, waited, decoding, lag = [], [], [], []
    steady_latency, steady_waited, steady_decoding = [], [], []
    start: Dict[int, float] = {}
    first: Dict[int, float] = {}
    errors = []
    for event in mux:
        now = time.time()
        if isinstance(event, ff.CameraEnded):
            if event.error is not None:
                errors.append(str(event.error))
            continue
        for entry in event.entries:
            seq = entry.sequence
            got[entry.camera] += seq.valid_frames
            total = now - seq.arrivals[-1]
            latency.append(total)
            waited.append(entry.waited)
            decoding.append(total - entry.waited)
            first.setdefault(entry.camera, now)
            if now - first[entry.camera] >= WARM_UP:
                steady_latency.append(total)
                steady_waited.append(entry.waited)
                steady_decoding.append(total - entry.waited)
            # The camera's clock: when its frame at pts 0 would have been sent (the earliest such estimate).
            behind = now - seq.pts[-1]
            start[entry.camera] = min(start.get(entry.camera, behind), behind)
            lag.append(behind - start[entry.camera])
    joining.join()
    wall = time.monotonic() - wall_before
    cpu = time.process_time() - cpu_before
    sampling.set()
    sampler.join()
    joined = wall_before + STAGGER
    steady = [x for x in samples if joined + WARM_UP <= x[0] <= joined + frames / FPS - 1]
    steady_cpu = ((steady[-1][1] - steady[0][1]) / (steady[-1][0] - steady[0][0]) / cameras
                  if len(steady) >= 2 else float("nan"))
    for s in sending:
        try:
            s.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a sender whose camera failed before connecting
            s.kill()
            s.wait()
    senders_cpu = cpu_of_children() - children_before
    stats = mux.stats()
    return {
        "cameras": cameras,
        "seconds": frames / FPS,
        "lost": cameras * frames - sum(got),
        "dropped": sum(r["dropped"] for r in stats),
        "errors": len(errors),
        "steady_latency_p50": percentile(steady_latency, 0.5) * 1000,
        "steady_latency_p99": percentile(steady_latency, 0.99) * 1000,
        "steady_wait_p99": percentile(steady_waited, 0.99) * 1000,
        "steady_decode_p50": percentile(steady_decoding, 0.5) * 1000,
        "steady_decode_p99": percentile(steady_decoding, 0.99) * 1000,
        "decode_p99": percentile(decoding, 0.99) * 1000,
        "latency_p50": percentile(latency, 0.5) * 1000,
        "latency_p99": percentile(latency, 0.99) * 1000,
        "wait_p50": percentile(waited, 0.5) * 1000,
        "wait_p99": percentile(waited, 0.99) * 1000,
        "lag_p99": percentile(lag, 0.99) * 1000,
        "lag_last": (statistics.median(lag[-cameras * 30:]) if lag else float("nan")) * 1000,
        "cpu_per_camera": cpu / wall / cameras,
        "steady_cpu_per_camera": steady_cpu,
        "page_faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults_before,
        "peak_resident_mb": max((x[2] for x in samples), default=0) / 1e6,
        "sender_cpu_per_camera": senders_cpu / wall / cameras,
        "wall": wall,
    }


def transport_stream(path: str) -> str:
    """The clip remuxed to MPEG-TS (no re-encoding), for the paced senders."""
    ts = path.rsplit(".", 1)[0] + ".ts"
    if not os.path.exists(ts):
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-c", "copy", "-f", "mpegts", ts], check=True)
    return ts


def senders(path: str, cameras: int) -> Tuple[List[subprocess.Popen], List[str]]:
    """`cameras` senders of `path` at real-time pace, listening; their URLs."""
    procs, urls, ports = [], [], []
    if SENDER == "paced":
        ports = [free_port() for _ in range(cameras)]
        script = os.path.join(ROOT, "benches", "paced_sender.py")
        proc = subprocess.Popen([sys.executable, script, transport_stream(path), *map(str, ports)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "listening", "the paced sender failed"
        return [proc], [f"http://127.0.0.1:{p}/cam.ts" for p in ports]
    for _ in range(cameras):
        ports.append(free_port())
        if SENDER == "rtmp":
            url, container = f"rtmp://127.0.0.1:{ports[-1]}/live/cam", "flv"
        else:
            url, container = f"http://127.0.0.1:{ports[-1]}/cam.ts", "mpegts"
        procs.append(subprocess.Popen(
            ["ffmpeg", "-v", "quiet", "-re", "-i", path, "-c", "copy", "-f", container, "-listen", "1", url],
            stdin=subprocess.DEVNULL))
        urls.append(url)
    deadline = time.monotonic() + 30
    while not listening(ports):
        assert time.monotonic() < deadline, "the senders did not listen within 30 s"
        time.sleep(0.05)
    return procs, urls


def run_ffmpeg(path: str, seconds: int, cameras: int) -> Dict[str, float]:
    """The live floor: `cameras` ffmpeg CLI decoders (`-threads 1 -f null`, decode only) pulling the same senders,
    joining as the mux's cameras do. Real time when all are done within 2.5 s of the clip's length."""
    procs, urls = senders(path, cameras)
    children_before = cpu_of_children()
    start = time.monotonic()
    rng = random.Random(cameras)
    pullers = []
    for url in urls:
        time.sleep(rng.uniform(0, STAGGER / cameras))
        pullers.append(subprocess.Popen(
            ["ffmpeg", "-v", "error", "-stats_period", "60", "-stats", "-threads", "1", "-i", url, "-f", "null",
             "-"],
            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    decoded = 0
    failed = 0
    for p in pullers:
        _, err = p.communicate()
        failed += p.returncode != 0
        counts = re.findall(r"frame=\s*(\d+)", err)
        decoded += int(counts[-1]) if counts else 0
    wall = time.monotonic() - start
    for p in procs:
        p.wait()
    cpu = cpu_of_children() - children_before
    lost = cameras * seconds * FPS - decoded
    return {"cameras": cameras, "wall": wall, "failed": failed, "lost": lost,
            "cpu_per_camera": cpu / wall / cameras,
            "realtime": failed == 0 and lost == 0 and wall <= seconds + STAGGER + SLACK}


def realtime(result: Dict[str, float]) -> bool:
    """No frame lost, no camera failed, and every camera done within SLACK s of the clip's end (as for the
    floor's decoders)."""
    return (result["lost"] == 0 and result["errors"] == 0
            and result["wall"] <= result["seconds"] + STAGGER + SLACK)


HEADER = (
    "| cameras | frames lost | arrival to batch p50 / p99 (ms): whole run | after each camera's first "
    f"{WARM_UP:.0f} s | of which decoding p50 / p99 | of which mux wait p99 | lag p99 (ms) | framefeed CPU per "
    "camera (cores) | sender CPU per camera (cores) | real time |\n|---|---|---|---|---|---|---|---|---|---|"
)


def row(r: Dict[str, float]) -> str:
    return (f"| {r['cameras']} | {r['lost']} | {r['latency_p50']:.1f} / {r['latency_p99']:.1f} | "
            f"{r['steady_latency_p50']:.1f} / {r['steady_latency_p99']:.1f} | "
            f"{r['steady_decode_p50']:.1f} / {r['steady_decode_p99']:.1f} | {r['steady_wait_p99']:.1f} | "
            f"{r['lag_p99']:.0f} | {r['cpu_per_camera']:.3f} | {r['sender_cpu_per_camera']:.3f} | "
            f"{'yes' if realtime(r) else 'no'} |")


def main() -> None:
    cameras = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    policy = os.environ.get("POLICY", "every_frame")
    resize = tuple(int(x) for x in os.environ["RESIZE"].split("x")) if os.environ.get("RESIZE") else None
    path = clip(seconds)
    frames = seconds * FPS
    if DEVICE == "cpu":
        two, side = floor(path, frames)
        best = max(two, side)
        print(f"clip {path}: {frames} frames; decode floor {two:.0f} fps (-threads 2), {side:.0f} fps "
              "(2 x -threads 1)")
        print(f"the floor allows {best / FPS:.1f} cameras at 30 fps; 0.9x of that: {0.9 * best / FPS:.1f}")
    else:
        operators = int(os.environ.get("FLOOR_OPERATORS", "14"))
        best = engines_floor(transport_stream(path), operators, resize)
        print(f"clip {path}: {frames} frames; on {DEVICE}: the engines' measured rate {best:.0f} fps "
              f"({operators} operators side by side, as fast as they go)")
        print(f"that allows {best / FPS:.1f} cameras at 30 fps; 0.8x of that: {0.8 * best / FPS:.1f}")
    print()
    print(HEADER)
    first = run(path, frames, cameras, policy, resize)
    print(row(first), flush=True)
    print(f"\nsteady state (from {WARM_UP:.0f} s after the last camera joined to 1 s before the clip's end): "
          f"{first['steady_cpu_per_camera']:.4f} cores a camera (the process); page faults in the run: "
          f"{first['page_faults']}; peak resident memory: {first['peak_resident_mb']:.0f} MB", flush=True)
    if os.environ.get("CAPACITY", "1") == "0":
        return
    # Capacity: framefeed's mux and the live floor (ffmpeg CLI decoders of the same senders), side by side at
    # each N, until both fall behind.
    n = int(os.environ.get("START", str(cameras)))
    step = int(os.environ.get("STEP", "4"))
    best_mux, best_ffmpeg = 0, 0
    rows = []
    # The live floor (ffmpeg CLI decoders pulling the same senders) is the CPU's; on a GPU the engines' rate
    # above is the reference (the GPU machine has no ffmpeg CLI with HTTP).
    live = DEVICE == "cpu" and os.environ.get("LIVE_FLOOR", "1") != "0"
    no_floor = {"realtime": False, "lost": float("nan"), "wall": float("nan"), "cpu_per_camera": float("nan")}
    while n <= int(os.environ.get("MAX", "64" if DEVICE == "cpu" else "1024")):
        live_floor = run_ffmpeg(path, seconds, n) if live else no_floor
        result = run(path, frames, n, policy, resize)
        rows.append((n, result, live_floor))
        print(f"N={n}: mux {'real time' if realtime(result) else 'behind'} (lost {result['lost']}, wall "
              f"{result['wall']:.1f} s, lag p99 {result['lag_p99']:.0f} ms, {result['cpu_per_camera']:.3f} "
              f"cores/camera); ffmpeg -f null {'real time' if live_floor['realtime'] else 'behind'} (lost "
              f"{live_floor['lost']}, wall {live_floor['wall']:.1f} s, {live_floor['cpu_per_camera']:.3f} "
              f"cores/camera with its sender)", flush=True)
        if realtime(result):
            best_mux = n
        if live_floor["realtime"]:
            best_ffmpeg = n
        if not realtime(result) and not live_floor["realtime"]:
            break
        n += step
    print()
    print(HEADER)
    for _, result, _ in rows:
        print(row(result))
    print()
    reference = "file decode floor" if DEVICE == "cpu" else "engines' rate"
    print(f"cameras batched in real time without loss: {best_mux}; the {reference} "
          f"allows {best / FPS:.1f} ({best_mux / (best / FPS):.2f}x)" + (
              f"; ffmpeg -f null decoders of the same live cameras keep up with {best_ffmpeg} "
              f"({best_mux / max(best_ffmpeg, 1):.2f}x)" if live else ""))


if __name__ == "__main__":
    main()
