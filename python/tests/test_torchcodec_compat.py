"""VideoReader's edges as TorchCodec's (issue 71): ranges clamped and negative from the end, tensors and NumPy
arrays as index lists, single frames, ``seek_mode`` and ``stream_index``, the context manager, checked against
TorchCodec itself on the same files. Skipped, with the reason printed, where TorchCodec is absent."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import FIXTURES, require_module

torch = require_module("torch", "the TorchCodec comparison")
decoders = require_module("torchcodec.decoders", "the TorchCodec comparison")

import framefeed as ff  # noqa: E402

FILES = [FIXTURES / n for n in ("h264.mp4", "vp9.webm", "sampling_h264_open_gop.mp4", "hevc_10bit.mp4")]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_ranges_indices_and_single_frames_are_torchcodecs(path) -> None:
    tc = decoders.VideoDecoder(str(path), dimension_order="NHWC", seek_mode="exact")
    with ff.VideoReader(path, seek_mode="approximate", stream_index=tc.metadata.stream_index) as reader:
        n = len(reader)
        assert n == len(tc)
        for args in [(-10, -1), (5, n + 100), (-(n + 100), 3), (0, n, 5), (n, n + 5), (-1, n)]:
            want, got = tc.get_frames_in_range(*args), reader.get_frames_in_range(*args)
            assert got.pts_seconds == pytest.approx(want.pts_seconds.tolist()), args
            if "10bit" not in path.name:  # TorchCodec's 10-bit conversion is its own (framefeed's is the CLI's)
                assert np.array_equal(got.data, want.data.numpy()), args
        for indices in [torch.tensor([3, 0, -1]), np.array([1, 1, 2]), [n - 1, -n]]:
            want, got = tc.get_frames_at(indices), reader.get_frames_at(indices)
            assert got.pts_seconds == pytest.approx(want.pts_seconds.tolist())
        for i in (0, -1, n // 2):
            assert reader.get_frame_at(i).pts_seconds == pytest.approx(tc.get_frame_at(i).pts_seconds)
            assert reader.get_frame_at(i).data.shape == tuple(tc.get_frame_at(i).data.shape)
        t = tc.metadata.begin_stream_seconds + 0.1
        assert reader.get_frame_played_at(t).pts_seconds == pytest.approx(tc.get_frame_played_at(t).pts_seconds)
        assert len(reader.get_all_frames()) == len(tc.get_all_frames().pts_seconds)
        for call in (lambda d: d.get_frame_at(n), lambda d: d.get_frames_at([n]),
                     lambda d: d.get_frame_played_at(1e6)):
            with pytest.raises(IndexError):
                call(tc)
            with pytest.raises(IndexError):
                call(reader)
    with pytest.raises(ff.ClosedError, match="closed"):
        reader[0]


def test_seek_mode_and_stream_index_are_checked() -> None:
    with pytest.raises(ValueError, match="seek_mode is 'fast'; allowed: 'exact', 'approximate'"):
        ff.VideoReader(FILES[0], seek_mode="fast")
    with pytest.raises(ValueError, match="stream_index is 5; allowed: 0"):
        ff.VideoReader(FILES[0], stream_index=5)
