"""The type stubs (`framefeed/_framefeed.pyi`) describe the native module as built: mypy's stubtest compares
them. Skipped, with the reason printed, where mypy is absent."""

from __future__ import annotations

import subprocess
import sys

from conftest import require_module

require_module("mypy", "the stubs' check")


def test_the_stubs_match_the_native_module():
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "framefeed._framefeed"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
