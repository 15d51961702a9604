"""`import framefeed` imports no NumPy (issue 53: about 60 ms of a process's start, and OpenBLAS's threads): NumPy
comes with the first array, or with a `dtype` given as a NumPy type. Each check runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_import_framefeed_leaves_numpy_for_the_first_array():
    out = run(
        "import sys, framefeed as ff\n"
        "print('numpy' in sys.modules)\n"
        "inp = ff.VideoInput(4, 2)\n"
        "inp.feed(ff.SAMPLE_MP4)\n"
        "inp.close()\n"
        "batch = inp.next_batch()\n"
        "print('numpy' in sys.modules)\n"
        "a = batch.sequences[0].numpy()\n"
        "print('numpy' in sys.modules, type(a).__module__, a.shape[0])\n"
    )
    assert out.splitlines() == ["False", "False", "True numpy 4"]


def test_a_numpy_dtype_still_names_the_output_type():
    out = run(
        "import numpy as np, framefeed as ff\n"
        "for dtype in (np.float16, np.dtype('float32'), 'float32'):\n"
        "    inp = ff.VideoInput(2, 1, dtype=dtype, resize=(32, 32))\n"
        "    inp.feed(ff.SAMPLE_MP4)\n"
        "    inp.close()\n"
        "    print(inp.next_batch().sequences[0].numpy().dtype)\n"
    )
    assert out.splitlines() == ["float16", "float32", "float32"]
