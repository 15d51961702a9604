"""`framefeed serve` under the hostile clients of issue 52, each against one or more builds in one run.

    python3 benches/serve_attacks.py 8k      BINARY [BINARY...]   # 8K headers: peak RSS
    python3 benches/serve_attacks.py slots   BINARY [BINARY...]   # drips holding every slot
    python3 benches/serve_attacks.py memory  BINARY [BINARY...]   # drips holding the memory pool
    python3 benches/serve_attacks.py connections BINARY [BINARY...]  # 1,030 idle /mux waits from one address

Each starts its own server on loopback (default settings unless said), attacks from several 127.0.0.x
addresses, then sends an honest upload from another address, and prints what that client got (status, code,
frames) and the server's peak RSS (VmHWM). Clips are made with the ffmpeg CLI under /tmp/framefeed-attacks.
"""

import os
import re
import socket
import subprocess
import sys
import threading
import time

WORK = "/tmp/framefeed-attacks"


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def clip(name, *args):
    path = os.path.join(WORK, name)
    if not os.path.exists(path):
        os.makedirs(WORK, exist_ok=True)
        ffmpeg(*args, path)
    return open(path, "rb").read()


def header_8k(codec):
    fmt = "hevc" if codec == "libx265" else "h264"
    data = clip(f"8k.{fmt}", "-f", "lavfi", "-i", "testsrc2=size=8192x8192:rate=25", "-frames:v", "1",
                "-c:v", codec, "-preset", "ultrafast", "-x265-params", "log-level=error", "-f", fmt)
    return data[:4096]


def ts_1080p():
    return clip("1080p.ts", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30", "-frames:v", "120",
                "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "30", "-f", "mpegts")


def ts_small():
    return clip("320x240.ts", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "60",
                "-c:v", "libx264", "-preset", "veryfast", "-g", "30", "-f", "mpegts")


class Server:
    def __init__(self, binary, *args):
        self.port = 20000 + (os.getpid() * 7 + int(time.time() * 1000)) % 20000
        self.proc = subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{self.port}", *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port)).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the server did not start")

    def status(self, key):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith(key):
                return int(line.split()[1]) * 1024
        return 0

    def connect(self, source):
        return socket.create_connection(("127.0.0.1", self.port), source_address=(source, 0))

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def read_all(sock):
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data.decode(errors="replace")
        data += chunk


def outcome(text):
    """(status, last error code or None, frames in the summary)."""
    status = text.split(" ", 2)[1] if text.startswith("HTTP/") else "reset"
    codes = re.findall(r'"code":"(\w+)"', text)
    frames = re.findall(r'"summary":\{"frames":(\d+)', text)
    return status, codes[-1] if codes else None, int(frames[-1]) if frames else 0


def post(server, source, query, body):
    try:
        s = server.connect(source)
        s.sendall(f"POST /videos?{query} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
                  f"Connection: close\r\n\r\n".encode() + body)
        return outcome(read_all(s))
    except OSError as e:
        return ("reset", type(e).__name__, 0)


class Drip(threading.Thread):
    """A chunked upload that sends `head`, then `rate` bytes a second of the rest, until stopped."""

    def __init__(self, server, source, query, data, head, rate):
        super().__init__(daemon=True)
        self.server, self.source, self.query = server, source, query
        self.data, self.head, self.rate = data, head, rate
        self.stop = threading.Event()
        self.result = None

    def run(self):
        try:
            s = self.server.connect(self.source)
            s.sendall(f"POST /videos?{self.query} HTTP/1.1\r\nHost: x\r\n"
                      f"Transfer-Encoding: chunked\r\n\r\n".encode())
            at = 0
            piece = self.head
            while not self.stop.is_set() and at < len(self.data):
                chunk = self.data[at:at + piece]
                s.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                at += len(chunk)
                piece = self.rate
                self.stop.wait(1.0)
            s.settimeout(0.5)
            try:
                text = s.recv(65536).decode(errors="replace")
            except OSError:
                text = ""
            self.result = outcome(text) if text else ("open", None, 0)
            s.close()
        except OSError as e:
            self.result = ("reset", type(e).__name__, 0)


def addresses(n, per):
    return [f"127.0.0.{2 + i // per}" for i in range(n)]


def attack_8k(binary):
    server = Server(binary, "--max-memory", "1G")
    idle = server.status("VmHWM:")
    bodies = [header_8k("libx264"), header_8k("libx265")]
    results = []
    for _ in range(3):
        threads = []
        for i in range(8):
            t = threading.Thread(target=lambda i=i: results.append(
                post(server, f"127.0.0.{2 + i % 3}", "sequence_length=8&batch_size=2", bodies[i % 2])))
            threads.append(t)
            t.start()
        for t in threads:
            t.join()
    time.sleep(3)  # idle for a few seconds: the server gives free heap memory back after 1 s
    peak, now = server.status("VmHWM:"), server.status("VmRSS:")
    honest = post(server, "127.0.0.9", "sequence_length=8&batch_size=2", ts_small())
    server.stop()
    codes = sorted({r[1] for r in results})
    print(f"8k  {binary}: 24 uploads (3 rounds of 8, H.264 and HEVC), codes {codes}; "
          f"peak RSS {peak >> 20} MiB (idle {idle >> 20}), 3 s after {now >> 20} MiB; honest {honest}")


def under_drips(server, drips, gap, settle, honest):
    """Starts `drips` (`gap` seconds apart), waits `settle` seconds, runs `honest()` (timed), then stops the
    drips: (what `honest` returned, its seconds, the server's peak RSS, how many drips were shed)."""
    for d in drips:
        d.start()
        time.sleep(gap)
    time.sleep(settle)
    began = time.time()
    got = honest()
    took = time.time() - began
    peak = server.status("VmHWM:")
    for d in drips:
        d.stop.set()
    for d in drips:
        d.join()
    shed = sum(1 for d in drips if d.result and d.result[1] == "shed")
    server.stop()
    return got, took, peak, shed


def attack_slots(binary):
    server = Server(binary)
    data = ts_small() * 40
    drips = [Drip(server, a, "sequence_length=4", data, 4096, 600) for a in addresses(32, 4)]
    honest, took, peak, shed = under_drips(
        server, drips, 0.02, 8, lambda: post(server, "127.0.0.200", "sequence_length=4", ts_small()))
    print(f"slots {binary}: 32 drips at 600 B/s from 8 addresses; honest upload {honest} in {took:.2f} s; "
          f"drips shed {shed}; peak RSS {peak >> 20} MiB")


def attack_memory(binary):
    server = Server(binary)
    data = ts_1080p()
    drips = [Drip(server, a, "sequence_length=8&batch_size=2", data, 192 << 10, 1024)
             for a in addresses(28, 4)]

    def honest():
        began = time.time()
        big = post(server, "127.0.0.200", "sequence_length=8&batch_size=2", data)
        return big, time.time() - began, post(server, "127.0.0.201", "sequence_length=4", ts_small())

    (big, took, small), _, peak, shed = under_drips(server, drips, 0.05, 10, honest)
    print(f"memory {binary}: 28 drips (1080p, L=8 B=2, 192 KiB then 1 KiB/s) from 7 addresses; "
          f"honest 1080p {big} in {took:.2f} s, honest 320x240 {small}; drips shed {shed}; "
          f"peak RSS {peak >> 20} MiB")


def get(server, source, path):
    try:
        s = server.connect(source)
        s.settimeout(5)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        return read_all(s)
    except OSError as e:
        return f"reset ({type(e).__name__})"


def attack_connections(binary):
    server = Server(binary)
    held = []
    for _ in range(1030):
        try:
            s = server.connect("127.0.0.2")
            s.sendall(b"GET /mux?streams=ghost&wait=60 HTTP/1.1\r\nHost: x\r\n\r\n")
            held.append(s)
        except OSError:
            pass
    time.sleep(1)
    health = get(server, "127.0.0.3", "/health").split("\r\n", 1)[0]
    metrics = get(server, "127.0.0.3", "/metrics")
    open_now = re.findall(r"^framefeed_connections_open (\d+)", metrics, re.M)
    for s in held:
        s.close()
    server.stop()
    print(f"connections {binary}: 1,030 GET /mux?wait=60 from one address; /health from another: {health!r}; "
          f"connections open: {open_now[0] if open_now else 'no answer'}")


def main():
    kind, binaries = sys.argv[1], sys.argv[2:]
    run = {"8k": attack_8k, "slots": attack_slots, "memory": attack_memory,
           "connections": attack_connections}[kind]
    for binary in binaries:
        run(binary)


if __name__ == "__main__":
    main()
