"""framefeed.VideoReader: every method's frames are the ffmpeg CLI's at the indices it reports (open GOPs, a
B-pyramid, an edit list, variable frame rate, rotation, 10-bit, a damaged start), indexing like a sequence (negative
indices, slices), times to the frames shown then, the sources users have (paths, bytes, file objects), one reader
shared by threads, transforms and NCHW, and clear errors."""

from __future__ import annotations

import hashlib
import io
import subprocess
import threading
from typing import List

import numpy as np
import pytest

import framefeed as ff
from conftest import FIXTURES, fixture, needs_ffmpeg

VIDEOS = [
    "sampling_h264_open_gop.mp4",
    "sampling_hevc_open_gop.mp4",
    "sampling_edit_list.mp4",
    "sampling_vfr.mp4",
    "sampling_hevc10_open_gop_192x144.mp4",
    "rotated_90.mp4",
    "cut_start.ts",
]


def ffmpeg_md5s(name: str) -> List[str]:
    needs_ffmpeg()
    out = subprocess.run(
        ["ffmpeg", "-v", "quiet", "-i", str(FIXTURES / name), "-noautoscale", "-fps_mode", "passthrough",
         "-f", "framemd5", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True, text=True,
    ).stdout
    return [line.rsplit(",", 1)[1].strip() for line in out.splitlines() if not line.startswith("#")]


def md5s(frames: np.ndarray) -> List[str]:
    return [hashlib.md5(np.ascontiguousarray(f).tobytes()).hexdigest() for f in frames]


@pytest.mark.parametrize("name", VIDEOS)
def test_every_method_gives_ffmpegs_frames_at_the_indices_it_reports(name: str) -> None:
    reference = ffmpeg_md5s(name)
    reader = ff.VideoReader(FIXTURES / name)
    n = len(reader)
    assert n == len(reference) == reader.metadata.num_frames
    assert md5s([reader[i] for i in range(n)]) == reference  # one at a time, in order
    assert md5s([reader[-1]]) == [reference[-1]]
    assert md5s(reader[::3]) == reference[::3]
    assert md5s(reader[n - 1 : 0 : -4]) == reference[n - 1 : 0 : -4]
    picked = [n - 1, 0, n // 2, n // 2, 2]
    frames = reader.get_frames_at(picked)
    assert frames.indices == picked and md5s(frames.data) == [reference[i] for i in picked]
    ranged = reader.get_frames_in_range(1, n, 2)
    assert ranged.indices == list(range(1, n, 2)) and md5s(ranged.data) == reference[1::2]
    # Times: each frame's own, the middle of its display, the whole video's range.
    every = reader.get_frames_in_range(0, n)
    times = every.pts_seconds
    assert [t for t, _ in reader.frame_times()] == pytest.approx(times)
    played = reader.get_frames_played_at(times)
    assert played.indices == list(range(n)) and md5s(played.data) == reference
    mids = [(a + b) / 2 for a, b in zip(times, times[1:])]
    assert reader.get_frames_played_at(mids).indices == list(range(n - 1))
    meta = reader.metadata
    whole = reader.get_frames_played_in_range(meta.begin_stream_seconds, meta.end_stream_seconds)
    assert whole.indices == list(range(n))
    durations = every.duration_seconds
    assert all(d > 0 for d in durations) and sum(durations) == pytest.approx(meta.duration_seconds)


def test_metadata_without_decoding_and_turned_videos() -> None:
    reader = ff.VideoReader(ff.SAMPLE_MP4)
    m = reader.metadata
    assert (m.num_frames, m.width, m.height, m.codec) == (60, 320, 240, "h264")
    assert m.average_fps == pytest.approx(30.0) and m.duration_seconds == pytest.approx(2.0)
    assert m.key_frame_indices == [0, 30] and m.rotation is None and m.orientation == "none"
    assert reader.packets_decoded == 0
    turned = ff.VideoReader(FIXTURES / "rotated_90.mp4")
    assert (turned.metadata.width, turned.metadata.height, turned.metadata.rotation) == (60, 100, 90.0)
    assert turned[0].shape == (100, 60, 3)
    assert ff.VideoReader(FIXTURES / "rotated_90.mp4", autorotate=False)[0].shape == (60, 100, 3)


def test_reading_on_forward_decodes_each_packet_once() -> None:
    reader = ff.VideoReader(ff.SAMPLE_MP4)
    for i in range(60):
        reader[i]
    assert reader.packets_decoded == 60


def test_sources_paths_bytes_buffers_and_file_objects_give_the_same_frames(tmp_path) -> None:
    path = FIXTURES / "h264.mp4"
    want = ff.VideoReader(path)[5]
    for source in (str(path), path, fixture("h264.mp4"), bytearray(fixture("h264.mp4")), io.BytesIO(fixture("h264.mp4"))):
        assert np.array_equal(ff.VideoReader(source)[5], want), type(source)
    with open(path, "rb") as f:
        assert np.array_equal(ff.VideoReader(f)[5], want)
    with open(path, "r") as text, pytest.raises((TypeError, UnicodeDecodeError)):
        ff.VideoReader(text)


def test_transforms_dtype_and_nchw() -> None:
    reader = ff.VideoReader(ff.SAMPLE_MP4, resize_shorter=120, crop=96, dtype=np.float32, dimension_order="NCHW")
    frames = reader.get_frames_at([0, 1, 2])
    assert frames.data.shape == (3, 3, 96, 96) and frames.data.dtype == np.float32
    inp = ff.VideoInput(3, 1, resize_shorter=120, crop=96, dtype="float32", layout="FCHW")
    inp.feed(ff.SAMPLE_MP4)
    inp.close()
    assert np.array_equal(frames.data, inp.next_batch().sequences[0].numpy())
    with pytest.raises(ValueError, match="dimension_order is 'HWC'; allowed: 'NHWC', 'NCHW'"):
        ff.VideoReader(ff.SAMPLE_MP4, dimension_order="HWC")  # type: ignore[arg-type]


def test_dlpack_views_the_read_without_a_copy() -> None:
    frames = ff.VideoReader(ff.SAMPLE_MP4).get_frames_at([4, 9])
    a, b = np.from_dlpack(frames), frames.data
    assert a.shape == (2, 240, 320, 3) and np.shares_memory(a, b)
    assert frames.__dlpack_device__() == (1, 0) and frames.device == "cpu" and len(frames) == 2


def test_one_reader_shared_by_threads() -> None:
    reader = ff.VideoReader(ff.SAMPLE_MP4)
    alone = {t: reader.get_frames_at([t * 13, t * 13 + 2]).data.copy() for t in range(4)}
    errors: List[BaseException] = []

    def work(t: int) -> None:
        try:
            for _ in range(5):
                assert np.array_equal(reader.get_frames_at([t * 13, t * 13 + 2]).data, alone[t])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_bad_input_and_requests_fail_clearly() -> None:
    reader = ff.VideoReader(ff.SAMPLE_MP4)
    with pytest.raises(IndexError, match="frame index 60 is out of range for a video of 60 frames"):
        reader[60]
    with pytest.raises(IndexError):
        reader.get_frames_at([0, -61])
    # Times outside the video: IndexError for the frames played at them (as for one frame), ValueError for a
    # range (TorchCodec's checks); floats are no indices.
    with pytest.raises(IndexError, match="no frame is shown at 2.5 s: allowed from 0.0 s up to"):
        reader.get_frames_played_at([0.5, 2.5])
    with pytest.raises(ValueError, match="start_seconds is 1.5; allowed: at most stop_seconds"):
        reader.get_frames_played_in_range(1.5, 1.0)
    with pytest.raises(ValueError, match="stop_seconds is 9.0; allowed: at most 2.0"):
        reader.get_frames_played_in_range(1.0, 9.0)
    with pytest.raises(ValueError, match="start_seconds is 2.0; allowed: from 0.0 up to"):
        reader.get_frames_played_in_range(2.0, 2.0)
    with pytest.raises(TypeError):
        reader.get_frames_at([1.0, 2.9])  # type: ignore[list-item]
    # Ranges as TorchCodec (and Python's slices) take them: clamped to the video, negative from the end.
    assert reader.get_frames_in_range(5, 61).indices == list(range(5, 60))
    assert reader.get_frames_in_range(-10, -1).indices == list(range(50, 59))
    assert reader.get_frames_in_range(70, 80).indices == [] and reader.get_frames_in_range(9, 3).indices == []
    with pytest.raises(ValueError, match="step is 0; allowed: 1 or more"):
        reader.get_frames_in_range(0, 10, 0)
    assert reader.get_frames_at([]).data.shape == (0, 240, 320, 3)
    with pytest.raises(ff.VideoError) as caught:
        ff.VideoReader(b"not a video at all")
    assert caught.value.code == "not_a_video"
    # A raw stream (no timestamps) is indexed by decoding it once: it reads by index like any other.
    raw = ff.VideoReader(FIXTURES / "h264.h264")
    assert len(raw) == 23 and raw.get_frames_at([22, 0]).indices == [22, 0]
    with pytest.raises(TypeError):
        reader["5"]  # type: ignore[index]
