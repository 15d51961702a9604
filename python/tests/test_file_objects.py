"""Binary file objects as VideoReader sources, read lazily (issue 72, its Python file object part): only the
bytes the index and each read's GOPs need, through ``seek``/``read`` (the GIL taken inside each call) or, for a
file object over a file on disk, from that file at offsets; one that cannot seek is read through once. Frames
equal the same video's read from bytes; a failing read fails the read with an error; across fork and pickle the
file object goes along."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
from pathlib import Path

import numpy as np
import pytest

import framefeed as ff
from conftest import needs_ffmpeg


@pytest.fixture(scope="module")
def long_video(tmp_path_factory) -> Path:
    """A minute of 320x240 H.264 at 30 fps, a keyframe a second, its index at the end (as libx264 writes)."""
    needs_ffmpeg()
    path = tmp_path_factory.mktemp("videos") / "long.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "1800",
                    "-c:v", "libx264", "-g", "30", "-pix_fmt", "yuv420p", str(path)], check=True)
    return path


class Counting(io.BytesIO):
    """A file object that counts the bytes read from it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.read_bytes = 0

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        out = super().read(n)
        self.read_bytes += len(out)
        return out


class Unseekable(io.RawIOBase):
    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, b) -> int:  # type: ignore[override]
        chunk = self._data.read(len(b))
        b[: len(chunk)] = chunk
        return len(chunk)


def test_a_file_object_is_read_only_where_the_reads_need(long_video) -> None:
    data = long_video.read_bytes()
    want = ff.VideoReader(data).get_frames_at([900, 1500, 3])
    counting = Counting(data)
    reader = ff.VideoReader(counting)
    assert len(reader) == 1800 and counting.read_bytes < len(data) // 4, "the index alone when it opens"
    got = reader.get_frames_at([900, 1500, 3])
    assert np.array_equal(got.data, want.data) and got.pts_seconds == want.pts_seconds
    assert counting.read_bytes < len(data) // 2, f"{counting.read_bytes} of {len(data)} bytes for three GOPs"


def test_a_file_on_disk_is_read_at_offsets_and_an_unseekable_one_through_once(long_video) -> None:
    want = ff.VideoReader(long_video).get_frames_at([10, 1799]).data
    with open(long_video, "rb") as f:
        f.seek(5)
        reader = ff.VideoReader(f)
        assert np.array_equal(reader.get_frames_at([10, 1799]).data, want)
        assert f.tell() == 5, "the object's own position is left alone"
    stream = io.BufferedReader(Unseekable(long_video.read_bytes()))
    assert np.array_equal(ff.VideoReader(stream).get_frames_at([10, 1799]).data, want)


def test_a_failing_file_object_fails_the_read_not_the_process(long_video) -> None:
    class Failing(Counting):
        fail = False

        def read(self, n: int = -1) -> bytes:  # type: ignore[override]
            if self.fail:
                raise OSError("the store went away")
            return super().read(n)

    source = Failing(long_video.read_bytes())
    reader = ff.VideoReader(source)
    source.fail = True
    with pytest.raises(ff.FramefeedError):
        reader.get_frames_at([1700])
    source.fail = False
    assert reader.get_frames_at([5]).data.shape == (1, 240, 320, 3), "the reader goes on once reads work"


def test_a_file_object_reader_works_after_a_fork_and_pickles_as_its_file_object(long_video) -> None:
    data = long_video.read_bytes()
    reader = ff.VideoReader(io.BytesIO(data))
    want = reader.get_frames_at([0, 1000]).data.copy()
    pid = os.fork()
    if pid == 0:
        os._exit(0 if np.array_equal(reader.get_frames_at([0, 1000]).data, want) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    copy = pickle.loads(pickle.dumps(reader))  # io.BytesIO pickles (a copy of its bytes)
    assert np.array_equal(copy.get_frames_at([0, 1000]).data, want)
    with open(long_video, "rb") as f, pytest.raises(TypeError):
        pickle.dumps(ff.VideoReader(f))  # open()'s file objects do not pickle
