"""Runs every example of ``examples/python/`` as a user would (``python examples/python/NAME.py``, in a fresh
process, with a time limit) and checks what it prints: the frames, sequences and steps the built-in sample (60
frames of 320x240 at 30 fps) gives. An example needing torch or Ray is skipped, saying so, where it is not
installed (a failure where ``FRAMEFEED_REQUIRE`` names it)."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import framefeed as ff

from conftest import FIXTURES, ROOT, require_module

EXAMPLES = ROOT / "examples" / "python"

#: The most seconds one example may take (each takes a few).
LIMIT = 120


def run(name: str, *args: str) -> str:
    """The stdout of ``examples/python/NAME`` run with ``args``; fails on a non-zero exit or past the limit."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True,
                          timeout=LIMIT, cwd=ROOT)
    print(f"{name} {list(args)} ({time.monotonic() - start:.1f} s):\n{done.stdout}{done.stderr}")
    assert done.returncode == 0, f"{name} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def line(out: str, prefix: str) -> str:
    """The one line of ``out`` starting with ``prefix``."""
    found = [ln for ln in out.splitlines() if ln.startswith(prefix)]
    assert len(found) == 1, f"{len(found)} lines start with {prefix!r}:\n{out}"
    return found[0]


def test_every_example_is_tested() -> None:
    tested = {"read_frames.py", "train_torch.py", "ddp.py", "ray_data.py", "from_decord.py", "asyncio_live.py"}
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested


def test_read_frames() -> None:
    out = run("read_frames.py")
    assert line(out, "60 frames") == "60 frames of 320x240 at 30.00 fps, h264"
    assert line(out, "frame 10:") == "frame 10: (240, 320, 3) uint8; reader[0:32:4]: (8, 240, 320, 3)"
    assert line(out, "frames [59, 0, 0, 29]").endswith("s: (4, 240, 320, 3)")
    assert line(out, "shown in") == "shown in [0.5 s, 0.6 s): [15, 16, 17]"
    # Sequences of 16, 2 a batch, padded: 2 batches, the last sequence with 12 real frames.
    batches = [ln for ln in out.splitlines() if ln.startswith("batch ")]
    assert len(batches) == 2, out
    assert batches[1].startswith("batch 1: (2, 16, 120, 160, 3) float32, real frames [16, 12]"), out
    assert line(out, "total:") == "total: 60 frames"
    # A file from disk: 23 frames.
    assert line(run("read_frames.py", str(FIXTURES / "h264.mp4")), "total:") == "total: 23 frames"


def test_train_torch() -> None:
    require_module("torch", "the train_torch.py example")
    out = run("train_torch.py")
    # 4 videos of 60 frames in sequences of 8 (the last padded), 4 a batch: 2 batches each, every frame once.
    for epoch in range(2):
        found = re.fullmatch(rf"epoch {epoch}: 8 steps, 240 real frames, \(4, 3, 8, 48, 64\), loss (\S+)",
                             line(out, f"epoch {epoch}:"))
        assert found is not None, out
        assert 0 < float(found.group(1)) < 10, out


def test_ddp() -> None:
    require_module("torch", "the ddp.py example")
    out = run("ddp.py")
    # Each rank reads its own half of the 4 videos: 2 videos, 4 steps.
    ranks = [line(out, f"rank {r}:") for r in range(2)]
    names = [set(re.findall(r"video\d\.mp4", r)) for r in ranks]
    assert all("4 steps" in r for r in ranks), out
    assert [len(n) for n in names] == [2, 2] and not names[0] & names[1], out
    assert line(out, "total:") == "total: 8 steps over 2 ranks"


def test_ray_data() -> None:
    require_module("ray", "the ray_data.py example")
    require_module("ray.data", "the ray_data.py example")
    out = run("ray_data.py")
    for i in range(4):
        assert line(out, f"video{i}.mp4:") == f"video{i}.mp4: 8 sequences", out
    assert line(out, "total:") == "total: 32 sequences, 240 frames"


def test_from_decord() -> None:
    out = run("from_decord.py")
    assert line(out, "60 frames") == "60 frames at 30.00 fps, keyframes [0, 30]"
    assert line(out, "vr[0]:") == "vr[0]: (120, 160, 3); get_batch([0, 10, 20, 30]): (4, 120, 160, 3)"
    assert line(out, "timestamps") == "timestamps of frames 0-2: [[0.0, 0.033], [0.033, 0.067], [0.067, 0.1]]"
    assert line(out, "after seek(30)") == "after seek(30), next(): (120, 160, 3)"
    assert line(out, "vr[60]:").startswith("vr[60]: IndexError")
    assert line(out, "numpy bridge:") == "numpy bridge: ndarray"


def test_asyncio_live() -> None:
    # The repository's live MPEG-TS, 100 frames, in 4 KiB chunks: every frame, in order, in sequences of 8.
    out = run("asyncio_live.py")
    sequences = [ln for ln in out.splitlines() if ln.startswith("frames [")]
    assert len(sequences) == 13 and sequences[-1].startswith("frames [96, 97, 98, 99] out after"), out
    size = (FIXTURES / "h264_live.ts").stat().st_size
    pushed = [int(ln.split(" out after ")[1].split()[0]) for ln in sequences]
    assert pushed == sorted(pushed) and pushed[-1] == size, out
    assert line(out, "total:") == f"total: 100 frames from {size} bytes"
    # A file given, in 64 KiB chunks: the sample, 60 frames.
    out = run("asyncio_live.py", str(ROOT / "assets" / "sample.mp4"))
    assert line(out, "total:") == f"total: 60 frames from {len(ff.SAMPLE_MP4)} bytes"
