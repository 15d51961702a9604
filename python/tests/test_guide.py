"""Every ``python`` code block of the guide (``docs/guide/*.md``), the docs' home page and the README, run as
written, each in a fresh namespace, in a working directory where the paths the blocks name resolve:
``sample.mp4``, ``clip.mp4``, ``a.mp4`` and ``video.mp4`` (copies of the built-in sample: 60 frames of 320x240 at
30 fps), and the repository's ``tests/fixtures`` and ``assets`` (``assets/sample.mp4``), as ``fixtures/``,
``tests/fixtures/`` and ``assets/``.

A block may be preceded by HTML comments (invisible on the page) that this runner reads:

- ``<!-- requires: torch, gpu -->``: what the block needs (modules: torch, ray, decord, torchcodec; or a need of
  ``conftest.NEEDS``: ffmpeg, corpus, gpu); without it the block is skipped, saying why
  (``FRAMEFEED_REQUIRE`` makes that a failure, as for every test);
- ``<!-- no-run: why -->``: a block that cannot run here (it needs a camera, a remote server): it is compiled
  only, then reported as skipped with the reason.

The Rust blocks of the same pages are compiled by ``cargo test --doc`` through ``src/guide_doctests.rs``; a test
here checks that file names every guide page."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import List

import pytest

from conftest import FIXTURES, NEEDS, ROOT, missing, require_module

PAGES = sorted((ROOT / "docs" / "guide").glob("*.md")) + [ROOT / "docs" / "index.md", ROOT / "README.md"]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
MARKER = re.compile(r"^<!--\s*(requires|no-run):\s*(.*?)\s*-->\s*$")
#: What ``requires:`` may name: Python modules, and the needs of ``conftest.NEEDS``.
MODULES = {"torch", "ray", "decord", "torchcodec"}


@dataclass
class Block:
    page: Path
    line: int
    code: str
    requires: List[str] = field(default_factory=list)
    no_run: str = ""

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> List[Block]:
    text = page.read_text()
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        block = Block(page, line, match.group(1))
        # The comment lines right above the fence are its markers.
        for above in reversed(text[: match.start()].splitlines()):
            marker = MARKER.match(above)
            if not marker:
                break
            if marker.group(1) == "requires":
                block.requires += [n.strip() for n in marker.group(2).split(",") if n.strip()]
            else:
                block.no_run = marker.group(2)
        found.append(block)
    return found


BLOCKS = [b for page in PAGES for b in blocks(page)]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    sample = ROOT / "assets" / "sample.mp4"
    for name in ["sample.mp4", "clip.mp4", "a.mp4", "video.mp4"]:
        shutil.copy(sample, tmp_path / name)
    (tmp_path / "fixtures").symlink_to(FIXTURES)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "fixtures").symlink_to(FIXTURES)
    (tmp_path / "assets").symlink_to(ROOT / "assets")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_the_block_runs_as_written(block: Block, workdir) -> None:
    code = compile(block.code, block.name, "exec")
    if block.no_run:
        pytest.skip(f"{block.name} is compiled only: {block.no_run}")
    for need in block.requires:
        if need in MODULES:
            require_module(need, block.name)
        elif need in NEEDS:
            present, absent = NEEDS[need]
            if not present():
                missing(need, f"{absent}: {block.name} did not run")
        else:
            pytest.fail(f"{block.name}: unknown requirement {need!r}; allowed: {sorted(MODULES | set(NEEDS))}")
    if "ray" in block.requires:
        import ray

        if ray.is_initialized():  # a block starts Ray as a user's program does: on its own
            ray.shutdown()
    try:
        exec(code, {"__name__": "__guide__"})
    finally:
        if "ray" in block.requires:
            import ray

            if ray.is_initialized():
                ray.shutdown()


def test_the_pages_have_python_blocks_to_run() -> None:
    # Held to what the pages hold, so that a change of the fence pattern cannot make every test vanish.
    runnable = [b for b in BLOCKS if not b.no_run]
    assert len(BLOCKS) >= 20 and len(runnable) >= 15, [b.name for b in BLOCKS]
    assert any(b.page.name == "README.md" for b in runnable)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_marker_stands_above_a_python_block(page: Path) -> None:
    lines = page.read_text().splitlines()
    for i, line in enumerate(lines):
        if MARKER.match(line):
            below = next((l for l in lines[i + 1:] if not MARKER.match(l)), "")
            assert below == "```python", f"{page.name}:{i + 1}: a marker above {below!r}, not a python block"


def test_every_guide_page_is_compiled_by_the_rust_doctests() -> None:
    source = (ROOT / "src" / "guide_doctests.rs").read_text()
    included = set(re.findall(r'include_str!\("\.\./(.*?)"\)', source))
    pages = {str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "guide").glob("*.md")} | {"README.md"}
    assert included == pages
