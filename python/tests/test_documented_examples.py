"""The examples users copy, run as written, and checked for what their comments say: the README's quick starts, the
guide's reader example, the package README's first example, and every example in ``framefeed.torch``'s docstrings
(doctest, with ``paths`` bound to real files and ``epoch`` to 0). Skipped, with the reason printed, where torch is
absent. (``test_guide.py`` runs every Python block of the README and the guide; this file checks results.)"""

from __future__ import annotations

import doctest
import re
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, require_module

torch = require_module("torch", "the documented examples")

import framefeed.torch  # noqa: E402

PATHS = [str(FIXTURES / n) for n in ["h264.mp4", "vp9.webm", "h264.mkv", "mpeg4.avi", "vp8.webm", "hevc_10bit.mp4",
                                      "av1.mkv", "h264.mov", "rotated_90.mp4"]]


def python_blocks(readme: Path) -> list:
    return re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)


def block_with(readme: Path, text: str) -> str:
    found = [b for b in python_blocks(readme) if text in b]
    assert len(found) == 1, f"{readme.name}: one python block with {text!r}"
    return found[0]


def test_the_guides_reader_example_runs_as_written(tmp_path, monkeypatch) -> None:
    page = ROOT / "docs" / "guide" / "random-access.md"
    shutil.copy(ROOT / "tests" / "fixtures" / "sampling_h264_open_gop.mp4", tmp_path / "clip.mp4")
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(block_with(page, 'ff.VideoReader("clip.mp4"'), str(page), "exec"), scope)
    assert scope["tensor"].shape[1:] == (3, 224, 224)


def test_the_readmes_quick_starts_give_what_their_comments_say(tmp_path, monkeypatch, capsys) -> None:
    shutil.copy(ROOT / "assets" / "sample.mp4", tmp_path / "sample.mp4")
    shutil.copy(ROOT / "assets" / "sample.mp4", tmp_path / "clip.mp4")
    monkeypatch.chdir(tmp_path)
    readme = ROOT / "README.md"
    scope: dict = {}
    exec(compile(block_with(readme, 'ff.VideoReader("sample.mp4")'), "README.md", "exec"), scope)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "60 30.0"
    assert printed[1].startswith("(4, 240, 320, 3) [0.0, 0.333")
    assert printed[2] == "(4, 16, 240, 320, 3) [16, 16, 16, 12]"
    scope = {}
    exec(compile(block_with(readme, "framefeed.torch.VideoDataset("), "README.md", "exec"), scope)
    assert scope["frames"].shape[1:] == (3, 8, 112, 112)
    assert torch.isfinite(scope["loss"])


def test_the_package_readmes_first_example_runs_as_written(tmp_path, monkeypatch, capsys) -> None:
    shutil.copy(FIXTURES / "h264.mp4", tmp_path / "a.mp4")
    monkeypatch.chdir(tmp_path)
    exec(compile(python_blocks(ROOT / "python" / "README.md")[0], "python/README.md", "exec"), {})
    assert "a.mp4" in capsys.readouterr().out


def test_the_torch_modules_examples_run_as_written() -> None:
    from torch.utils.data import DataLoader

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(framefeed.torch, globs={"paths": PATHS, "epoch": 0, "DataLoader": DataLoader,
                                                             **vars(framefeed.torch)}) if t.examples]
    assert len(tests) >= 2, [t.name for t in tests]
    for test in tests:
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0 and results.attempted >= 8, results
