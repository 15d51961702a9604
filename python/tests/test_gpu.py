"""GPU batches (a build with the `cuda` feature, on a machine with NVDEC): kDLCUDA export read by a consumer on
another stream gives the bytes of `to_host()`. Skipped, with the reason printed, without a usable GPU."""

from __future__ import annotations

import numpy as np
import pytest

import framefeed as ff
from conftest import fixture, require_module

pytestmark = pytest.mark.needs("gpu")


def gpu_batch():
    inp = ff.VideoInput(4, 2, device="cuda", last_sequence_policy="pad")
    inp.feed(fixture("hevc_10bit_146x144.mp4"))
    inp.close()
    return inp, inp.next_batch()


def test_gpu_batches_export_kdlcuda_and_match_the_host_copy():
    inp, batch = gpu_batch()
    assert batch.device == "cuda" and batch.__dlpack_device__() == (2, 0)
    with pytest.raises(ValueError, match="GPU memory"):
        batch.numpy()
    host = batch.to_host().numpy()
    assert host.shape == batch.shape
    copy = np.from_dlpack(batch.to_host())
    assert np.array_equal(copy, host)


def test_a_consumer_on_another_stream_reads_the_bytes_of_to_host():
    torch = require_module("torch", "the CUDA consumer test")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    inp, batch = gpu_batch()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        tensor = torch.from_dlpack(batch)  # torch passes its current stream: ordered after the batch
        on_host = tensor.cpu().numpy()
    assert np.array_equal(on_host, batch.to_host().numpy())
