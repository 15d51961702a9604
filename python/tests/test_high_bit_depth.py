"""Lossless high bit depth (issue 62) from Python: ``dtype="uint16"`` (or ``np.uint16``) is the ffmpeg CLI's
``-pix_fmt rgb48le`` decode of 10/12-bit sources, from ``VideoInput`` and ``VideoReader`` alike; 8-bit sources are
widened exactly; ``float32_unit`` is the 16-bit level / 65535; torch tensors and Ray rows carry ``uint16``."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import framefeed as ff
from conftest import FIXTURES, needs_ffmpeg, require_module

DEEP = ["hdr_pq_hevc10.mp4", "hdr_pq_hevc12.mkv", "hdr_hlg_hevc10_422.mp4", "hdr_hlg_vp9_10.webm",
        "hdr_pq_hevc444_odd.mp4"]


def ffmpeg_rgb48(name: str) -> np.ndarray:
    """The CLI's rgb48le decode of a fixture, as (N, H, W, 3) uint16."""
    needs_ffmpeg()
    path = FIXTURES / name
    size = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0",
         str(path)], check=True, capture_output=True, text=True).stdout.strip().split(",")
    width, height = int(size[0]), int(size[1])
    out = subprocess.run(
        ["ffmpeg", "-v", "quiet", "-i", str(path), "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt",
         "rgb48le", "-"], check=True, capture_output=True).stdout
    return np.frombuffer(out, "<u2").reshape(-1, height, width, 3)


def decode(name: str, **keywords) -> np.ndarray:
    """Every real frame of a fixture through VideoInput, as one (N, H, W, 3) array."""
    frames = []
    with ff.VideoInput(4, 2, **keywords) as inp:
        inp.feed((FIXTURES / name).read_bytes())
        inp.close()
        for batch in inp:
            for seq in batch:
                frames.append(seq.numpy()[: seq.valid_frames])
    return np.concatenate(frames)


@pytest.mark.parametrize("name", DEEP)
def test_uint16_is_rgb48le_byte_for_byte(name: str) -> None:
    want = ffmpeg_rgb48(name)
    got = decode(name, dtype="uint16")
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(decode(name, dtype=np.uint16), got)
    reader = ff.VideoReader(FIXTURES / name, dtype="uint16")
    np.testing.assert_array_equal(np.asarray(reader[0:len(reader)]), want)


def test_eight_bit_sources_are_widened_exactly() -> None:
    eight = decode("h264.mp4")
    sixteen = decode("h264.mp4", dtype="uint16")
    np.testing.assert_array_equal(sixteen, eight.astype(np.uint16) * 257)


def test_floats_come_from_the_sixteen_bit_levels() -> None:
    levels = decode("hdr_pq_hevc10.mp4", dtype="uint16")
    unit = decode("hdr_pq_hevc10.mp4", dtype="float32_unit")
    np.testing.assert_array_equal(unit, levels.astype(np.float32) / np.float32(65535))
    assert len(np.unique(levels)) > 256


def test_normalize_refuses_uint16() -> None:
    with pytest.raises(ValueError, match="normalize needs a float dtype"):
        ff.VideoInput(4, 2, dtype="uint16", normalize=((0.5, 0.5, 0.5), (0.2, 0.2, 0.2)))


def test_torch_gets_uint16_tensors() -> None:
    torch = require_module("torch", "the torch uint16 test")
    with ff.VideoInput(4, 1, dtype="uint16") as inp:
        inp.feed((FIXTURES / "hdr_pq_hevc10.mp4").read_bytes())
        inp.close()
        batch = next(iter(inp))
        tensor = torch.from_dlpack(batch)
        assert tensor.dtype == torch.uint16
        np.testing.assert_array_equal(tensor.numpy(), batch.numpy())


def ffmpeg_chain(name: str, spec: str, shape) -> np.ndarray:
    """The reference tone-mapping chain's rgb24 frames."""
    needs_ffmpeg()
    vf = f"zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap={spec},zscale=t=bt709:m=bt709:r=tv"
    out = subprocess.run(
        ["ffmpeg", "-v", "quiet", "-i", str(FIXTURES / name), "-vf", vf, "-pix_fmt", "rgb24", "-f", "rawvideo", "-"],
        check=True, capture_output=True).stdout
    return np.frombuffer(out, np.uint8).reshape(-1, *shape)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255 ** 2 / mse)


@pytest.mark.parametrize("spec", ["hable", "mobius:param=0.5", "reinhard", "clip"])
def test_tonemap_keyword_matches_the_ffmpeg_chain(spec: str) -> None:
    for name in ["tonemap_pq_hevc10.mp4", "tonemap_hlg_hevc10.mp4"]:
        got = decode(name, tonemap=spec)
        want = ffmpeg_chain(name, spec, got.shape[1:])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert psnr(g, w) >= 45.0, (name, spec)
        reader = ff.VideoReader(FIXTURES / name, tonemap=spec)
        np.testing.assert_array_equal(np.asarray(reader[0:len(reader)]), got)


def test_a_bad_tonemap_names_the_allowed_values() -> None:
    with pytest.raises(ValueError, match="allowed: 'hable', 'mobius', 'reinhard', 'clip'"):
        ff.VideoInput(4, 2, tonemap="filmic")
    with pytest.raises(ValueError, match="tonemap peak is 0"):
        ff.VideoReader(FIXTURES / "h264.mp4", tonemap="hable:peak=0")
