"""framefeed.compat.decord runs decord code unchanged: what decord's own unit tests check (length, sequential, slice
and random access, get_batch, timestamps on a video whose presentation times are not in decode order, rotated videos
with and without a target size, reading from a file object, a corrupted file raising DECORDError), the bridges,
seek/next, and frames right where decord's are not (the ffmpeg CLI's, upright)."""

from __future__ import annotations

import hashlib
import io
import subprocess
from typing import List

import numpy as np
import pytest

import framefeed.compat.decord as decord
from conftest import FIXTURES, SHARED, missing, needs_ffmpeg, require_module
from framefeed.compat.decord.base import DECORDError


def ffmpeg_md5s(path) -> List[str]:
    needs_ffmpeg()
    out = subprocess.run(
        ["ffmpeg", "-v", "quiet", "-i", str(path), "-fps_mode", "passthrough", "-f", "framemd5", "-pix_fmt",
         "rgb24", "-"], check=True, capture_output=True, text=True).stdout
    return [line.rsplit(",", 1)[1].strip() for line in out.splitlines() if not line.startswith("#")]


def md5(frame) -> str:
    return hashlib.md5(np.ascontiguousarray(frame).tobytes()).hexdigest()


@pytest.fixture(autouse=True)
def native_bridge():
    decord.bridge.set_bridge("native")
    yield
    decord.bridge.reset_bridge()


def test_length_sequential_slice_and_random_access() -> None:
    path = FIXTURES / "sampling_h264_open_gop.mp4"  # B-pyramid, open GOPs: presentation times out of decode order
    reference = ffmpeg_md5s(path)
    vr = decord.VideoReader(str(path), ctx=decord.cpu(0))
    assert len(vr) == len(reference) == 150
    assert [md5(vr[i].asnumpy()) for i in range(len(vr))] == reference
    assert md5(vr[-1].asnumpy()) == reference[-1]
    batch = vr[10:40:3]
    assert batch.shape == (10, 96, 160, 3) and [md5(f) for f in batch.asnumpy()] == reference[10:40:3]
    picked = [149, 0, 77, 77, 3]
    for indices in (picked, np.array(picked), range(20, 28)):
        frames = vr.get_batch(indices).asnumpy()
        assert [md5(f) for f in frames] == [reference[i] for i in list(indices)]


def test_timestamps_key_indices_and_fps() -> None:
    vr = decord.VideoReader(str(FIXTURES / "sampling_h264_open_gop.mp4"))
    stamps = vr.get_frame_timestamp(range(len(vr)))
    assert stamps.shape == (150, 2)
    assert np.all(np.diff(stamps[:, 0]) > 0), "in display order"
    assert np.allclose(stamps[:-1, 1], stamps[1:, 0]) and np.allclose(stamps[:, 1] - stamps[:, 0], 0.04, atol=1e-5)
    assert vr.get_frame_timestamp(3).shape == (2,)
    assert vr.get_key_indices() == list(range(0, 150, 24))
    assert vr.get_avg_fps() == pytest.approx(25.0)


def test_seek_next_and_skip() -> None:
    vr = decord.VideoReader(str(FIXTURES / "sampling_h264_open_gop.mp4"))
    vr.seek_accurate(30)
    assert np.array_equal(vr.next().asnumpy(), vr[30].asnumpy())
    vr.skip_frames(2)
    assert np.array_equal(vr.next().asnumpy(), vr[33].asnumpy())
    vr.seek(30)  # the keyframe at or before 30
    assert np.array_equal(vr.next().asnumpy(), vr[24].asnumpy())
    vr.seek_accurate(149)
    vr.next()
    with pytest.raises(StopIteration):
        vr.next()


def test_rotated_videos_upright_with_and_without_a_target_size() -> None:
    path = FIXTURES / "rotated_90.mp4"  # coded 100x60, shown 60x100
    vr = decord.VideoReader(str(path))
    assert vr[0].shape == (100, 60, 3)
    assert [md5(vr[i].asnumpy()) for i in range(len(vr))] == ffmpeg_md5s(path)
    assert decord.VideoReader(str(path), width=30, height=50)[0].shape == (50, 30, 3)
    assert decord.VideoReader(str(path), height=50)[0].shape == (50, 60, 3), "the other side as shown"


def test_reading_from_a_file_object_and_bytes() -> None:
    path = FIXTURES / "h264.mp4"
    want = decord.VideoReader(str(path))[7].asnumpy()
    with open(path, "rb") as f:
        assert np.array_equal(decord.VideoReader(f)[7].asnumpy(), want)
    assert np.array_equal(decord.VideoReader(io.BytesIO(path.read_bytes()), width=48, height=32)[7].shape, (32, 48, 3))


def test_corrupted_files_raise_decorderror() -> None:
    with pytest.raises(DECORDError):
        decord.VideoReader(io.BytesIO(b"\x00" * 1000))
    assert issubclass(decord.DECORDError, DECORDError)
    vr = decord.VideoReader(str(FIXTURES / "h264.mp4"))
    # An index out of range is decord's IndexError (decord 0.6: "Out of bound indices").
    with pytest.raises(IndexError, match="Out of bound indices"):
        vr.get_batch([0, 23])
    with pytest.raises(IndexError, match="Out of bound indices"):
        vr.get_frame_timestamp([23])
    with pytest.raises(IndexError):
        vr[23]
    corrupted = SHARED / "corrupted_720p.mp4"
    if not corrupted.is_file():
        missing("corpus", "../shared/videos is absent: decord's damaged clip was not read")
    else:
        vr = decord.VideoReader(str(corrupted))
        assert vr[0].shape == (720, 1280, 3)
        with pytest.raises(DECORDError):
            vr.get_batch(list(range(len(vr))))  # a packet the decoder rejects: its frame is missing


def test_bridges() -> None:
    vr = decord.VideoReader(str(FIXTURES / "h264.mp4"))
    native = vr.get_batch([1, 2])
    assert isinstance(native, decord.NDArray) and native.asnumpy().shape == (2, 64, 96, 3)
    assert np.shares_memory(np.from_dlpack(native), native.asnumpy())
    decord.bridge.set_bridge("numpy")
    assert isinstance(vr.get_batch([1, 2]), np.ndarray) and isinstance(vr[0], np.ndarray)
    with pytest.raises(ValueError, match="bridge is 'mxnet'"):
        decord.bridge.set_bridge("mxnet")
    torch = require_module("torch", "the torch bridge's check")
    decord.bridge.set_bridge("torch")
    tensor = vr.get_batch([1, 2])
    assert isinstance(tensor, torch.Tensor) and tuple(tensor.shape) == (2, 64, 96, 3)
    assert np.array_equal(tensor.numpy(), native.asnumpy())


def _resize_files() -> List[str]:
    files = [str(FIXTURES / n) for n in ("h264.mp4", "vp9.webm", "mpeg4.avi", "h264_100x60.mp4", "hevc_10bit.mp4")]
    if (SHARED / "MANIFEST.json").is_file():
        files += [str(SHARED / n) for n in ("dog_848x464_h264_aac.mp4", "testsrc2_odd_height_and_width_vp9.mp4",
                                             "h264_10bits.mp4", "testsrc2_vp8.webm", "nasa_13013.mp4")]
    else:
        missing("corpus", "../shared/videos is absent: the resize was compared on the fixtures only")
    return files


def test_width_and_height_resize_as_decord_itself() -> None:
    """decord's ``width=``/``height=`` is FFmpeg's ``scale=W:H:flags=bilinear`` straight to RGB; the drop-in gives
    the same pixels (compared with decord 0.6 itself: down, up, odd sizes, 8- and 10-bit)."""
    real = require_module("decord", "the resize comparison with decord itself")
    for path in _resize_files():
        n = len(real.VideoReader(path))
        indices = sorted({0, n // 2, n - 1})
        for width, height in [(224, 160), (171, 97), (640, 360)]:
            want = real.VideoReader(path, width=width, height=height).get_batch(indices).asnumpy()
            got = decord.VideoReader(path, width=width, height=height).get_batch(indices).asnumpy()
            assert got.shape == want.shape, (path, width, height)
            diff = np.abs(got.astype(np.int16) - want)
            assert diff.max() <= 1, (path, width, height, float(diff.mean()), int(diff.max()))
