"""Many cameras' senders in one light process, for `benches/mux_cameras.py` (SENDER=paced): each port serves one
client an MPEG-TS stream over HTTP at real-time pace, as `ffmpeg -re -c copy -f mpegts -listen 1` does, but
without an ffmpeg process per camera (0.008 cores a camera on the 2-core VM, taken from the machine that
batches them; real cameras are other machines). Each frame's bytes (its PES's TS packets, from the file's
packet positions) are written at its time from the client's connection on.

    python3 benches/paced_sender.py CLIP.ts PORT...   (prints "listening" once every port listens; the clip's
                                                       packet table is kept beside it, CLIP.ts.packets.json)
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from typing import List, Tuple


def frames_of(path: str) -> List[Tuple[float, int]]:
    """(time from the first frame in seconds, byte offset) of each video packet, in file order: from
    `PATH.packets.json` when it is there (written here the first time, so that a machine without ffprobe, the GPU
    machine, can serve a clip packed elsewhere), else from ffprobe."""
    table = path + ".packets.json"
    try:
        with open(table) as f:
            return [(float(t), int(pos)) for t, pos in json.load(f)]
    except FileNotFoundError:
        pass
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=dts_time,pos", "-of", "json",
         path],
        check=True, capture_output=True, text=True,
    )
    packets = [(float(p["dts_time"]), int(p["pos"])) for p in json.loads(probe.stdout)["packets"]]
    first = packets[0][0]
    frames = [(t - first, pos) for t, pos in packets]
    with open(table, "w") as f:
        json.dump(frames, f)
    return frames


def serve(listener: socket.socket, data: bytes, frames: List[Tuple[float, int]]) -> None:
    client, _ = listener.accept()
    listener.close()
    with client:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = client.recv(4096)
            if not chunk:
                return
            request += chunk
        # Chunked, as ffmpeg's HTTP server sends: the stream's end is the last chunk, not a dropped connection.
        client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nTransfer-Encoding: chunked\r\n\r\n")
        start = time.monotonic()
        sent = 0
        try:
            # Frame i's bytes run from its offset to the next frame's (the first frame's include the tables
            # before it; the last runs to the end).
            for i, (at, _) in enumerate(frames):
                end = frames[i + 1][1] if i + 1 < len(frames) else len(data)
                delay = start + at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                client.sendall(b"%x\r\n%s\r\n" % (end - sent, data[sent:end]))
                sent = end
            client.sendall(b"0\r\n\r\n")
        except OSError:
            return


def main() -> None:
    path, ports = sys.argv[1], [int(p) for p in sys.argv[2:]]
    with open(path, "rb") as f:
        data = f.read()
    frames = frames_of(path)
    threads = []
    for port in ports:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(1)
        threads.append(threading.Thread(target=serve, args=(listener, data, frames), daemon=True))
    for t in threads:
        t.start()
    print("listening", flush=True)
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
