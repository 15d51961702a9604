#!/usr/bin/env python3
"""Request throughput and latency of `framefeed serve` on loopback, two binaries side by side (issue 35: the
service on libraries must not be slower). Interleaved rounds; per round and kind, the median latency and the
requests per second over one keep-alive connection; the table gives the medians over rounds and new/old.

    python3 benches/serve_requests.py OLD_BINARY NEW_BINARY [ROUNDS]

Kinds: GET /health and GET /metrics (N each, sequential, one connection), and POST /videos of
tests/fixtures/h264_live.ts (80 KB, 2 s of 320x240, chunked, L=4 B=1; M uploads, sequential).
"""

import http.client
import statistics
import subprocess
import sys
import time
from pathlib import Path

N, M = 400, 20
FIXTURE = (Path(__file__).resolve().parent.parent / "tests/fixtures/h264_live.ts").read_bytes()


def start(binary):
    proc = subprocess.Popen(
        [binary, "serve", "--addr", "127.0.0.1:0", "--max-streams", "64", "--max-streams-per-client", "64"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = proc.stdout.readline()
    host, port = line.strip().removeprefix("listening on ").rsplit(":", 1)
    return proc, (host, int(port))


def get_loop(addr, path):
    conn = http.client.HTTPConnection(*addr)
    lat = []
    t0 = time.perf_counter()
    for _ in range(N):
        t = time.perf_counter()
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        assert r.status == 200, r.status
        lat.append(time.perf_counter() - t)
    total = time.perf_counter() - t0
    conn.close()
    return statistics.median(lat) * 1000, N / total


def chunks():
    for i in range(0, len(FIXTURE), 16384):
        yield FIXTURE[i : i + 16384]


def upload_loop(addr):
    lat = []
    t0 = time.perf_counter()
    for _ in range(M):
        conn = http.client.HTTPConnection(*addr)
        t = time.perf_counter()
        conn.request("POST", "/videos?sequence_length=4&batch_size=1", body=chunks(), encode_chunked=True)
        r = conn.getresponse()
        body = r.read()
        assert r.status == 200 and b'"summary"' in body, (r.status, body[-200:])
        lat.append(time.perf_counter() - t)
        conn.close()
    total = time.perf_counter() - t0
    return statistics.median(lat) * 1000, M / total


def main():
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    servers = {"old": start(old), "new": start(new)}
    results = {}
    try:
        for _ in range(rounds):
            for who, (_, addr) in servers.items():
                for kind, run in [
                    ("GET /health", lambda: get_loop(addr, "/health")),
                    ("GET /metrics", lambda: get_loop(addr, "/metrics")),
                    ("POST /videos", lambda: upload_loop(addr)),
                ]:
                    results.setdefault((kind, who), []).append(run())
    finally:
        for proc, _ in servers.values():
            proc.terminate()
    print(f"| request | old median ms | new median ms | old req/s | new req/s | new/old req/s |")
    print("|---|---|---|---|---|---|")
    for kind in ["GET /health", "GET /metrics", "POST /videos"]:
        o, n = results[(kind, "old")], results[(kind, "new")]
        ol, nl = statistics.median(x[0] for x in o), statistics.median(x[0] for x in n)
        orate, nrate = statistics.median(x[1] for x in o), statistics.median(x[1] for x in n)
        print(f"| {kind} | {ol:.3f} | {nl:.3f} | {orate:.0f} | {nrate:.0f} | **{nrate / orate:.2f}** |")


if __name__ == "__main__":
    main()
