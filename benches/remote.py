#!/usr/bin/env python3
"""Remote videos over a link like one object-store stream (issue 72): nginx with `limit_rate 50m` behind a delay
line of 10 ms each way (20 ms of round trip; a proxy of this script's own, since this machine's kernel has no
netem), everything on loopback. Side by side in one run, each measurement in a fresh process:

- 10 seeded random 8-frame clips of a 10-minute 1080p H.264 MP4 (moov first): framefeed's `VideoReader(url)`
  and `framefeed run --clips 10`, against TorchCodec 0.17's approximate mode over an fsspec HTTP file; bytes
  and requests from nginx's log, against what the index (the moov box) and the clips' GOPs' packets take;
  framefeed's frames checked against its own local read (the `ffmpeg` CLI's, by the conformance tests);
- the first frame of a one-hour 4K MP4 with its moov at the end (10 s of 4K looped with `-c copy`);
- a plain full run of the 10-minute video over the link against the same run on the local file;
- an epoch of 1,000 clips over 100 remote videos through `framefeed.torch.VideoClipDataset` and a DataLoader of
  8 workers, without and with the index cache.

    .venv/bin/python benches/remote.py [--work DIR] [--rounds N] [--skip-epoch] [--json PATH]
    .venv/bin/python benches/remote.py --matroska [--rounds N] [--json PATH]

`--matroska` runs only the Matroska section instead: the 10-minute video stream-copied into Matroska, its clips read
exactly (read through to index it) and in the approximate seek mode (by time from its Cues), against TorchCodec's
approximate mode (benches/results/remote_matroska.json).

Prints one JSON object per measurement and a summary; `--json PATH` also writes the medians there with the
command, the date and the machine (benches/results/remote.json is what benches/plot.py draws). The figures are in
benches/RESULTS.md ("Remote videos")."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import pathlib
import platform
import random
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Dict, List, Tuple

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLI = ROOT / "target" / "release" / "framefeed"
DELAY = 0.010  # each way
CLIPS, CLIP_LEN, SEED = 10, 8, 72


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def make_videos(work: pathlib.Path) -> Dict[str, pathlib.Path]:
    www = work / "www"
    www.mkdir(parents=True, exist_ok=True)
    hd = www / "ten_minutes_1080p.mp4"
    if not hd.exists():
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30", "-t", "600", "-c:v", "libx264",
               "-preset", "ultrafast", "-b:v", "4M", "-maxrate", "4M", "-bufsize", "8M", "-g", "250",
               "-pix_fmt", "yuv420p", "-movflags", "+faststart", str(hd.with_suffix(".tmp.mp4")))
        hd.with_suffix(".tmp.mp4").rename(hd)
    uhd = www / "one_hour_4k_moov_last.mp4"
    if not uhd.exists():
        part = work / "ten_seconds_4k.mp4"
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=3840x2160:rate=30", "-t", "10", "-c:v", "libx264",
               "-preset", "ultrafast", "-b:v", "8M", "-g", "60", "-pix_fmt", "yuv420p", str(part))
        ffmpeg("-stream_loop", "359", "-i", str(part), "-c", "copy", str(uhd.with_suffix(".tmp.mp4")))
        uhd.with_suffix(".tmp.mp4").rename(uhd)
    short = work / "thirty_seconds_720p.mp4"
    if not short.exists():
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-t", "30", "-c:v", "libx264",
               "-preset", "ultrafast", "-b:v", "2M", "-g", "60", "-pix_fmt", "yuv420p", "-movflags", "+faststart",
               str(short))
    many = www / "many"
    many.mkdir(exist_ok=True)
    for i in range(100):
        link = many / f"v{i:03}.mp4"
        if not link.exists():
            os.link(short, link)
    return {"hd": hd, "uhd": uhd, "short": short}


class Nginx:
    def __init__(self, work: pathlib.Path) -> None:
        self.dir = work / "nginx"
        self.dir.mkdir(exist_ok=True)
        self.port = free_port()
        d = self.dir
        (d / "nginx.conf").write_text(
            f"""user root root; worker_processes 2; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 1024; }}
http {{
  log_format ranges '$request_method $uri $http_range $status $body_bytes_sent';
  access_log {d}/access.log ranges;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  sendfile on;
  server {{ listen 127.0.0.1:{self.port}; root {work / 'www'}; limit_rate 50m; }}
}}
""")
        self.process = subprocess.Popen(["nginx", "-c", str(d / "nginx.conf"), "-p", str(d)])
        wait_port(self.port)

    def clear(self) -> None:
        (self.dir / "access.log").write_text("")

    def log(self) -> List[List[str]]:
        return [line.split(" ") for line in (self.dir / "access.log").read_text().splitlines()]

    def stop(self) -> None:
        # TERM to the master, which stops its workers (a KILL would leave them running, holding the port).
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def wait_port(port: int) -> None:
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on {port}")


def delay_proxy(target: int) -> int:
    """A TCP proxy on loopback that delivers every byte DELAY seconds after it arrived, each way (a delay line:
    the throughput is the server's, the round trip 2 * DELAY)."""
    port = free_port()

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue = asyncio.Queue()

        async def send() -> None:
            while True:
                due, data = await queue.get()
                if data is None:
                    break
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            writer.close()

        sender = asyncio.ensure_future(send())
        try:
            while True:
                data = await reader.read(1 << 16)
                if not data:
                    break
                queue.put_nowait((time.monotonic() + DELAY, data))
        except ConnectionError:
            pass
        queue.put_nowait((0, None))
        await sender

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(pipe(client_r, server_w), pipe(server_r, client_w), return_exceptions=True)

    def run() -> None:
        loop = asyncio.new_event_loop()
        loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", port))
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    wait_port(port)
    return port


def clip_starts(frames: int) -> List[int]:
    rng = random.Random(SEED)
    return sorted(rng.randrange(0, frames - CLIP_LEN) for _ in range(CLIPS))


def needed_bytes(path: pathlib.Path, starts: List[int]) -> Tuple[int, int]:
    """The moov box's size, and the bytes of the video packets of every GOP a clip's frames lie in."""
    moov = 0
    with open(path, "rb") as f:
        at, size = 0, path.stat().st_size
        while at < size:
            f.seek(at)
            head = f.read(16)
            box, kind = struct.unpack(">I4s", head[:8])
            if box == 1:
                box = struct.unpack(">Q", head[8:16])[0]
            if kind == b"moov":
                moov = box
            at += box or size
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "packet=pts,size,flags", "-of", "csv=p=0", str(path)], check=True, capture_output=True,
                         text=True).stdout
    packets = []
    for line in out.splitlines():
        pts, size, flags = line.split(",")[:3]
        packets.append((int(pts), int(size), "K" in flags))
    # GOP of each packet (decode order), display order by pts.
    gop, gops = -1, []
    for _, _, key in packets:
        gop += key
        gops.append(max(gop, 0))
    display = sorted(range(len(packets)), key=lambda i: packets[i][0])
    wanted = set()
    for s in starts:
        for d in range(s, s + CLIP_LEN):
            wanted.add(gops[display[d]])
    gop_bytes = sum(size for (_, size, _), g in zip(packets, gops) if g in wanted)
    return moov, gop_bytes


# The measurements, each run in a fresh process (`--one NAME ARGS`), printing one JSON line.

def one_framefeed_reader(url: str, local: str) -> Dict[str, object]:
    import numpy as np
    import framefeed as ff
    t0 = time.perf_counter()
    reader = ff.VideoReader(url)
    starts = clip_starts(len(reader))
    clips = [reader.get_frames_in_range(s, s + CLIP_LEN).data for s in starts]
    wall = time.perf_counter() - t0
    ref = ff.VideoReader(local)
    exact = all(np.array_equal(c, ref.get_frames_in_range(s, s + CLIP_LEN).data) for c, s in zip(clips, starts))
    return {"wall_s": wall, "exact": exact}


def one_framefeed_reader_mode(url: str, local: str, mode: str) -> Dict[str, object]:
    """`one_framefeed_reader` with `seek_mode=mode` (the Matroska section)."""
    import numpy as np
    import framefeed as ff
    t0 = time.perf_counter()
    reader = ff.VideoReader(url, seek_mode=mode)
    starts = clip_starts(len(reader))
    clips = [reader.get_frames_in_range(s, s + CLIP_LEN).data for s in starts]
    wall = time.perf_counter() - t0
    ref = ff.VideoReader(local)
    exact = len(reader) == len(ref) and all(
        np.array_equal(c, ref.get_frames_in_range(s, s + CLIP_LEN).data) for c, s in zip(clips, starts))
    return {"wall_s": wall, "exact": exact}


def one_framefeed_local(local: str) -> Dict[str, object]:
    """The same reads from the local file: the floor the link adds to."""
    import framefeed as ff
    t0 = time.perf_counter()
    reader = ff.VideoReader(local)
    for s in clip_starts(len(reader)):
        reader.get_frames_in_range(s, s + CLIP_LEN)
    return {"wall_s": time.perf_counter() - t0}


def one_torchcodec(url: str, local: str) -> Dict[str, object]:
    import fsspec
    from torchcodec.decoders import VideoDecoder
    t0 = time.perf_counter()
    with fsspec.open(url, "rb") as f:
        decoder = VideoDecoder(f, seek_mode="approximate")
        starts = clip_starts(decoder.metadata.num_frames)
        for s in starts:
            decoder.get_frames_at(list(range(s, s + CLIP_LEN)))
    return {"wall_s": time.perf_counter() - t0}


def one_first_frame(url: str) -> Dict[str, object]:
    import framefeed as ff
    t0 = time.perf_counter()
    frame = ff.VideoReader(url)[0]
    return {"wall_s": time.perf_counter() - t0, "shape": list(frame.shape)}


def one_epoch(base: str, cache: str, workers: str) -> Dict[str, object]:
    import torch
    import framefeed.torch as fft
    paths = [f"{base}/many/v{i:03}.mp4" for i in range(100)]
    keywords = {"index_cache": cache} if cache else {}
    dataset = fft.VideoClipDataset(paths * 10, fft.clip_indices(8), seed=SEED, readers=2, threads=1, **keywords)
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=int(workers), timeout=600,
                                         multiprocessing_context="fork")
    t0 = time.perf_counter()
    n = sum(1 for _ in loader)
    return {"wall_s": time.perf_counter() - t0, "clips": n}


def fresh(name: str, *args: str) -> Dict[str, object]:
    out = subprocess.run([sys.executable, __file__, "--one", name, *args], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def summarize(log: List[List[str]]) -> Dict[str, int]:
    return {"bytes": sum(int(f[4]) for f in log), "requests": len(log),
            "heads": sum(f[0] == "HEAD" for f in log),
            "open_ended": sum(f[0] == "GET" and (f[2] == "-" or f[2].endswith("-")) for f in log)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default="/tmp/framefeed-remote-bench")
    parser.add_argument("--skip-epoch", action="store_true")
    parser.add_argument("--epoch-only", action="store_true")
    parser.add_argument("--one", nargs="+")
    parser.add_argument("--json", help="also write the medians to this file")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the clip reads (default 5)")
    parser.add_argument("--matroska", action="store_true",
                        help="only the Matroska section: the 10-minute video stream-copied into Matroska, read "
                             "exactly and in the approximate seek mode, against TorchCodec's approximate mode")
    args = parser.parse_args()
    if args.one:
        name, *rest = args.one
        print(json.dumps(globals()[f"one_{name}"](*rest)))
        return
    work = pathlib.Path(args.work)
    videos = make_videos(work)
    nginx = Nginx(work)
    port = delay_proxy(nginx.port)
    base = f"http://127.0.0.1:{port}"
    if args.matroska:
        try:
            matroska(nginx, base, videos, args)
        finally:
            nginx.stop()
        return
    hd_url = f"{base}/{videos['hd'].name}"
    size = videos["hd"].stat().st_size
    results = {}
    try:
        import framefeed as ff
        if args.epoch_only:
            epoch(nginx, base, work, results)
            return
        frames = len(ff.VideoReader(str(videos["hd"])))
        moov, gop_bytes = needed_bytes(videos["hd"], clip_starts(frames))
        results["needed"] = {"moov": moov, "gop_bytes": gop_bytes, "file": size}
        print(json.dumps(results["needed"]))
        # Interleaved rounds (the local floor, then each reader over the link, in turn), so that the machine's
        # drift falls on every contender alike; medians over the rounds.
        contenders = [
            ("framefeed_local", lambda: fresh("framefeed_local", str(videos["hd"]))),
            ("framefeed_reader", lambda: fresh("framefeed_reader", hd_url, str(videos["hd"]))),
            ("framefeed_cli", lambda: cli_clips(hd_url)),
            ("torchcodec_approximate_fsspec", lambda: fresh("torchcodec", hd_url, str(videos["hd"]))),
        ]
        for _ in range(args.rounds):
            for name, run in contenders:
                nginx.clear()
                got = run()
                if name != "framefeed_local":
                    got.update(summarize(nginx.log()))
                results.setdefault(name, []).append(got)
                print(json.dumps({name: got}))
        nginx.clear()
        got = fresh("first_frame", f"{base}/{videos['uhd'].name}")
        got.update(summarize(nginx.log()), file=videos["uhd"].stat().st_size)
        results["first_frame_4k_hour"] = got
        print(json.dumps({"first_frame_4k_hour": got}))
        for where, source in [("local", str(videos["hd"])), ("remote", hd_url)]:
            nginx.clear()
            t0 = time.perf_counter()
            out = subprocess.run([str(CLI), "run", "--json", "-L", "16", "-B", "4", source], check=True,
                                 capture_output=True, text=True).stdout
            summary = json.loads(out.strip().splitlines()[-1])["summary"]
            got = {"wall_s": time.perf_counter() - t0, "frames": summary["frames"],
                   "peak_rss_mib": summary["peak_rss_mib"], **summarize(nginx.log())}
            results[f"full_run_{where}"] = got
            print(json.dumps({f"full_run_{where}": got}))
        if not args.skip_epoch:
            epoch(nginx, base, work, results)
    finally:
        nginx.stop()
        print(json.dumps({"summary": results}))
        if args.json:
            write_json(args.json, results)


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


def write_json(path: str, results: Dict[str, object]) -> None:
    """The run's medians in the shape benches/plot.py reads (benches/results/remote.json)."""
    import statistics

    def median(runs: object, key: str) -> object:
        values = [r[key] for r in runs if key in r] if isinstance(runs, list) else []
        return statistics.median(values) if values else None

    labels = {"framefeed_reader": "framefeed VideoReader(url)", "framefeed_cli": "framefeed run --clips 10 URL",
              "torchcodec_approximate_fsspec": "TorchCodec over fsspec"}
    data: Dict[str, object] = {
        "benchmark": "remote",
        "title": "10 seeded random 8-frame clips of a 10-minute 1080p H.264 MP4 over a 50 MB/s, 20 ms round-trip link",
        "command": shlex.join([".venv/bin/python", "benches/remote.py", *sys.argv[1:]]),
        "date": datetime.date.today().isoformat(),
        "machine": machine() + "; nginx (limit_rate 50m) behind the script's 10 ms-each-way delay proxy, on loopback",
        "unit": f"wall seconds and bytes nginx sent, median of {len(results.get('framefeed_reader', []))} "
                "interleaved rounds, each run in a fresh process",
        "readers": [{"name": name, "label": label, "wall_s": median(results[name], "wall_s"),
                     "bytes": median(results[name], "bytes"), "requests": median(results[name], "requests")}
                    for name, label in labels.items() if name in results],
        "local_reader_s": median(results.get("framefeed_local"), "wall_s"),
    }
    # Each round's ratio to TorchCodec in that round, then their median: the drift between rounds cancels.
    tc = results.get("torchcodec_approximate_fsspec")
    for name in ("framefeed_reader", "framefeed_cli"):
        runs = results.get(name)
        if isinstance(runs, list) and isinstance(tc, list) and runs and len(runs) == len(tc):
            data[f"{name}_vs_torchcodec_per_round"] = statistics.median(
                r["wall_s"] / t["wall_s"] for r, t in zip(runs, tc))
    needed = results.get("needed")
    if isinstance(needed, dict):
        data["needed"] = {"moov_bytes": needed["moov"], "gop_bytes": needed["gop_bytes"], "file_bytes": needed["file"]}
    for key in ("first_frame_4k_hour", "full_run_local", "full_run_remote", "epoch_no_cache", "epoch_cache_cold",
                "epoch_cache_warm"):
        if key in results:
            data[key] = results[key]
    pathlib.Path(path).write_text(json.dumps(data, indent=2) + "\n")


def epoch(nginx: "Nginx", base: str, work: pathlib.Path, results: Dict[str, object]) -> None:
    cache = work / "index-cache"
    shutil.rmtree(cache, ignore_errors=True)
    for label, cache_dir in [("no_cache", ""), ("cache_cold", str(cache)), ("cache_warm", str(cache))]:
        nginx.clear()
        got = fresh("epoch", base, cache_dir, "8")
        got.update(summarize(nginx.log()))
        results[f"epoch_{label}"] = got
        print(json.dumps({f"epoch_{label}": got}))


def matroska(nginx: "Nginx", base: str, videos: Dict[str, pathlib.Path], args: argparse.Namespace) -> None:
    """The clips of the 10-minute video as Matroska (`-c copy`: the same packets, Cues at the end): framefeed
    exact (read through to index it), framefeed approximate (by time from the Cues) through the reader and the
    CLI, and TorchCodec's approximate mode over fsspec, in interleaved rounds; medians, and each round's ratio."""
    import statistics
    mkv = videos["hd"].parent / "ten_minutes_1080p.mkv"
    if not mkv.exists():
        ffmpeg("-i", str(videos["hd"]), "-c", "copy", str(mkv.with_suffix(".tmp.mkv")))
        mkv.with_suffix(".tmp.mkv").rename(mkv)
    url = f"{base}/{mkv.name}"
    size = mkv.stat().st_size
    _, gop_bytes = needed_bytes(videos["hd"], clip_starts(len(__import__("framefeed").VideoReader(str(mkv)))))
    contenders = [
        ("framefeed_reader_exact", lambda: fresh("framefeed_reader_mode", url, str(mkv), "exact")),
        ("framefeed_reader_approximate", lambda: fresh("framefeed_reader_mode", url, str(mkv), "approximate")),
        ("framefeed_cli_approximate", lambda: cli_clips(url, "--seek-mode", "approximate")),
        ("torchcodec_approximate_fsspec", lambda: fresh("torchcodec", url, str(mkv))),
    ]
    results: Dict[str, List[Dict[str, object]]] = {}
    for _ in range(args.rounds):
        for name, run in contenders:
            nginx.clear()
            got = run()
            got.update(summarize(nginx.log()))
            results.setdefault(name, []).append(got)
            print(json.dumps({name: got}))
    tc = results["torchcodec_approximate_fsspec"]
    data: Dict[str, object] = {
        "benchmark": "remote_matroska",
        "title": "10 seeded random 8-frame clips of the 10-minute 1080p H.264 video as Matroska over a 50 MB/s, "
                 "20 ms round-trip link",
        "command": shlex.join([".venv/bin/python", "benches/remote.py", *sys.argv[1:]]),
        "date": datetime.date.today().isoformat(),
        "machine": machine() + "; nginx (limit_rate 50m) behind the script's 10 ms-each-way delay proxy, on loopback",
        "file_bytes": size,
        "clip_gop_bytes": gop_bytes,
        "rounds": args.rounds,
        "readers": {},
    }
    for name, runs in results.items():
        entry = {key: statistics.median(r[key] for r in runs) for key in ("wall_s", "bytes", "requests")}
        entry["exact"] = all(r.get("exact", True) for r in runs)
        if name != "torchcodec_approximate_fsspec":
            entry["vs_torchcodec_per_round"] = statistics.median(r["wall_s"] / t["wall_s"] for r, t in zip(runs, tc))
        data["readers"][name] = entry
    print(json.dumps({"summary": data}))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(data, indent=2) + "\n")


def cli_clips(url: str, *flags: str) -> Dict[str, object]:
    t0 = time.perf_counter()
    out = subprocess.run([str(CLI), "run", "--json", "--clips", str(CLIPS), "-L", str(CLIP_LEN), "--seed",
                          str(SEED), *flags, url], check=True, capture_output=True, text=True).stdout
    summary = json.loads(out.strip().splitlines()[-1])["summary"]
    return {"wall_s": time.perf_counter() - t0, "frames": summary["frames"]}


if __name__ == "__main__":
    main()
