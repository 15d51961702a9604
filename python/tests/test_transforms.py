"""Transforms and layouts through Python give the bytes of their Rust counterparts: the same settings through
the Rust CLI (`framefeed run --raw-out`, the operator's exact output tensors) and through the package."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import framefeed as ff
from conftest import FIXTURES, cli, fixture

CASES = [
    # (Python keywords, CLI arguments)
    ({}, []),
    ({"resize": (48, 32)}, ["--resize", "48x32"]),
    ({"resize_shorter": 40, "crop": 32, "crop_pos": "random", "seed": 7},
     ["--resize-shorter", "40", "--crop", "32x32", "--crop-pos", "random", "--seed", "7"]),
    ({"crop": (40, 30), "crop_pos": (0.25, 1.0), "dtype": "float32", "layout": "CFHW"},
     ["--crop", "40x30", "--crop-pos", "0.25,1", "--dtype", "f32", "--layout", "cfhw"]),
    ({"resize_shorter": 32, "crop": 24, "dtype": "float32_unit",
      "normalize": ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)), "layout": "FCHW"},
     ["--resize-shorter", "32", "--crop", "24x24", "--dtype", "f32-unit",
      "--normalize", "0.485,0.456,0.406/0.229,0.224,0.225", "--layout", "fchw"]),
    ({"dtype": np.float16, "layout": "CFHW"}, ["--dtype", "f16", "--layout", "cfhw"]),
]


@pytest.mark.parametrize("policy", ["partial", "pad"])
@pytest.mark.parametrize("keywords,args", CASES, ids=[str(k) for k, _ in CASES])
def test_transforms_equal_the_rust_operator(keywords, args, policy, tmp_path):
    binary = cli()
    if binary is None:
        pytest.skip("the Rust CLI is not built (run `cargo build --features cli` first)")
    raw = tmp_path / "out.raw"
    subprocess.run(
        [str(binary), "run", str(FIXTURES / "h264.mp4"), "-L", "5", "-B", "2", "--policy", policy,
         "--raw-out", str(raw), *args],
        check=True, capture_output=True,
    )
    inp = ff.VideoInput(5, 2, last_sequence_policy=policy, **keywords)
    inp.feed(fixture("h264.mp4"))
    inp.close()
    got = b"".join(
        b"".join(np.ascontiguousarray(s.numpy()).tobytes() for s in batch.sequences) for batch in inp
    )
    assert got == raw.read_bytes()


def test_shapes_and_types_follow_the_settings():
    inp = ff.VideoInput(4, 2, resize_shorter=32, crop=24, dtype="float16", layout="CFHW",
                        last_sequence_policy="pad")
    inp.feed(fixture("h264.mp4"))
    inp.close()
    batch = inp.next_batch()
    assert batch.shape == (2, 3, 4, 24, 24) and batch.dtype == "float16" and batch.layout == "CFHW"
    array = batch.numpy()
    assert array.dtype == np.float16 and array.shape == batch.shape
    seq = batch.sequences[0]
    assert seq.resized == (48, 32) and seq.crop_window == (12, 4, 24, 24)
