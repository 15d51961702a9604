"""Shared helpers of the Python tests: the repository's fixtures, the shared corpus, the ffmpeg CLI's own decode,
clips of N frames made on demand, and the Rust CLI (the Rust counterpart the transform tests compare with)."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
from typing import Dict, List, Optional

import numpy as np
import pytest

import framefeed as ff

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared" / "videos"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def needs_ffmpeg() -> None:
    if shutil.which("ffmpeg") is None:
        pytest.fail("the ffmpeg CLI is needed (apt-get install ffmpeg)")


def ffmpeg_rgb(path: pathlib.Path, width: int, height: int) -> np.ndarray:
    """The ffmpeg CLI's rgb24 decode of `path` (default stream, no frame-rate conversion), as (N, H, W, 3)."""
    needs_ffmpeg()
    out = subprocess.run(
        ["ffmpeg", "-v", "quiet", "-threads", "2", "-i", str(path), "-fps_mode", "passthrough",
         "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True,
    ).stdout
    return np.frombuffer(out, np.uint8).reshape(-1, height, width, 3)


class FfmpegFrames:
    """The ffmpeg CLI's rgb24 decode of a file, read frame by frame from its pipe (memory stays flat)."""

    def __init__(self, path: pathlib.Path) -> None:
        needs_ffmpeg()
        self.process = subprocess.Popen(
            ["ffmpeg", "-v", "quiet", "-threads", "2", "-i", str(path), "-fps_mode", "passthrough",
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
    """The Rust CLI built by `cargo test` or `cargo build` (debug or release), if present."""
    for profile in ("debug", "release"):
        path = ROOT / "target" / profile / "framefeed"
        if path.is_file():
            return path
    return None


def manifest() -> Optional[list]:
    if not (SHARED / "MANIFEST.json").is_file():
        return None
    return json.loads((SHARED / "MANIFEST.json").read_text())
