"""The typed surface as a user's type checker sees it: a snippet using every kind of setting passes
``mypy --strict``; each keyword misspelt or given a value outside its choices is reported on its own line; the
wrapper ``VideoInput`` declares the native keywords exactly, and ``Mux`` the cameras' keywords; a star import
shadows no builtin. The mypy checks are skipped, with the reason printed, where mypy is absent."""

from __future__ import annotations

import ast
import builtins
import subprocess
import sys
from pathlib import Path

import framefeed as ff
from conftest import require_module

PACKAGE = Path(ff.__file__).parent

GOOD = """
import numpy as np
import framefeed as ff
from framefeed.types import CameraStats, ContainerInfo, Gap

inp = ff.VideoInput(
    16, 2, last_sequence_policy="pad", dtype="float32", layout="CFHW", resize_shorter=256,
    interpolation="area", crop=224, crop_pos="random", out_of_bounds="pad", nvdec_driver="hwaccel",
)
half = ff.VideoInput(4, 1, dtype=np.float16, crop_pos=(0.5, 0.25), resize=(64, 64), resize_mode="letterbox")
info: ContainerInfo = ff.probe(ff.SAMPLE_MP4)
width: int = info["streams"][0]["width"]
inp.feed(ff.SAMPLE_MP4, label="sample")
inp.close()
try:
    for batch in inp:
        gap: Gap | None = batch.gap
        if gap is not None:
            seconds: float = gap["seconds"]
except ff.exceptions.VideoError as error:
    code: str = error.code
except ff.FramefeedTimeoutError:
    pass

mux = ff.Mux(16, 0.033, policy="latest_only", resize=(640, 360), dtype=np.float32, layout="FCHW")
camera: int = mux.add_url("rtsp://cam/1", reconnect=3)
door, live = mux.add_live("door")
live.push(ff.SAMPLE_MP4)
mux.close()
for event in mux:
    if isinstance(event, ff.MuxBatch):
        stacked = event.numpy()
        first: int = event.entries[0].camera
        waited: float = event[0].waited
    elif event.error is not None:
        failed: BaseException = event.error
stats: list[CameraStats] = mux.stats()
dropped: int = stats[0]["dropped"]

reader = ff.VideoReader(ff.SAMPLE_MP4, dimension_order="NCHW", dtype=np.float32, resize=(64, 64), threads=2)
meta: ff.VideoMetadata = reader.metadata
count: int = meta.num_frames + len(reader)
rotation: float | None = meta.rotation
frames: ff.Frames = reader.get_frames_at([0, 1])
pts: list[float] = frames.pts_seconds
spans: list[tuple[float, float]] = reader.frame_times()
shown = reader.get_frames_played_in_range(0.5, 1.0).data

import framefeed.compat.decord as decord
vr = decord.VideoReader("clip.mp4", ctx=decord.cpu(0), width=224, height=224)
clip = vr.get_batch([0, 4, 8]).asnumpy()
stamps = vr.get_frame_timestamp(range(4))
decord.bridge.set_bridge("numpy")
"""

# One mistake per line; every line must be reported.
BAD = [
    'ff.VideoInput(4, 1, dtyp="uint8")',
    'ff.VideoInput(4, 1, dtype="int64")',
    'ff.VideoInput(4, 1, layout="NCHW")',
    'ff.VideoInput(4, 1, last_sequence_policy="drop")',
    'ff.VideoInput(4, 1, crop_pos="left")',
    'ff.VideoInput(4, 1, interpolation="lanczos")',
    'ff.VideoInput(4, 1, resize_mode="stretch")',
    'ff.VideoInput(4, 1, nvdec_driver="npp")',
    'ff.VideoInput(4, 1, out_of_bounds="wrap")',
    'ff.VideoInput("4", 1)',
    'ff.VideoInput(4, 1, pack="yes")',
    'ff.probe(ff.SAMPLE_MP4)["stream"]',
    'ff.Mux(4, 0.03, policy="newest")',
    'ff.Mux(4, 0.03, layuot="FCHW")',
    'ff.Mux(4, 0.03, batch_size=2)',
    'ff.Mux(4, 0.03).add_live(1.5)',
    'ff.VideoReader(ff.SAMPLE_MP4, dimension_order="HWC")',
    'ff.VideoReader(ff.SAMPLE_MP4).get_frames_at(3)',
    'ff.VideoReader(ff.SAMPLE_MP4, threds=2)',
]


def mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    require_module("mypy", "the typed surface's check")
    path = tmp_path / "snippet.py"
    path.write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )


def test_a_snippet_using_every_kind_of_setting_passes_mypy_strict(tmp_path: Path) -> None:
    run = mypy(tmp_path, GOOD)
    assert run.returncode == 0, run.stdout + run.stderr


def test_each_misspelt_or_mistyped_keyword_is_reported(tmp_path: Path) -> None:
    header = "import framefeed as ff\n"
    run = mypy(tmp_path, header + "\n".join(BAD) + "\n")
    reported = {
        int(line.split(":")[1]) for line in run.stdout.splitlines() if ": error:" in line
    }
    missed = [bad for n, bad in enumerate(BAD, start=2) if n not in reported]
    assert not missed, f"not reported: {missed}\n{run.stdout}"


def _new_keywords(tree: ast.AST) -> list[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "VideoInput":
            for item in ast.walk(node):
                if isinstance(item, ast.FunctionDef) and item.name == "__new__" and item.args.kwonlyargs:
                    return [a.arg for a in item.args.args + item.args.kwonlyargs]
    raise AssertionError("no typed VideoInput.__new__")


def test_the_wrapper_declares_exactly_the_native_keywords() -> None:
    stub = _new_keywords(ast.parse((PACKAGE / "_framefeed.pyi").read_text()))
    wrapper = _new_keywords(ast.parse((PACKAGE / "__init__.py").read_text()))
    assert wrapper == stub


def test_the_mux_takes_exactly_the_cameras_keywords() -> None:
    stub = _new_keywords(ast.parse((PACKAGE / "_framefeed.pyi").read_text()))
    camera = list(ff.types.CameraSettings.__annotations__)
    assert camera == [k for k in stub if k not in ("cls", "sequence_length", "batch_size")]


def test_a_star_import_shadows_no_builtin() -> None:
    namespace: dict[str, object] = {}
    exec("from framefeed import *", namespace)
    shadowed = [name for name in namespace if not name.startswith("__") and hasattr(builtins, name)]
    assert not shadowed
    assert ff.TimeoutError is ff.FramefeedTimeoutError is ff.exceptions.FramefeedTimeoutError
    assert issubclass(ff.FramefeedTimeoutError, builtins.TimeoutError)
    assert issubclass(ff.exceptions.OutOfMemoryError, MemoryError)
