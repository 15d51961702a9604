"""decord 0.6's ``AudioReader`` and ``AVReader`` (issue 63): every case decord's own ``test_audio_reader.py``
and ``test_av_reader.py`` test, on files made here (decord's tests need media its repository does not ship): the
shapes are the ``ffmpeg`` CLI's sample counts (mono, stereo, resampled), a file object reads as its path, a file
without audio raises ``DECORDError``, indices and slices, ``get_batch``, ``get_info``, ``add_padding``, and the
AV reader's per-frame audio, continuous over consecutive frames."""

from __future__ import annotations

import io
import pathlib
import subprocess

import numpy as np
import pytest

import framefeed.compat.decord as decord
from conftest import needs_ffmpeg
from framefeed.compat.decord.base import DECORDError


@pytest.fixture(autouse=True)
def native_bridge():
    decord.bridge.reset_bridge()
    yield
    decord.bridge.reset_bridge()


def _make(directory: pathlib.Path, name: str, audio: bool = True) -> pathlib.Path:
    """2 s of 30 fps video; with stereo 44.1 kHz AAC that starts 0.25 s after the video (so it needs padding)."""
    needs_ffmpeg()
    path = directory / name
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30"]
    if audio:
        cmd += ["-itsoffset", "0.25", "-f", "lavfi", "-i",
                "aevalsrc=0.5*sin(2*PI*440*t)|0.3*sin(2*PI*660*t):s=44100", "-c:a", "aac"]
    cmd += ["-t", "2", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(path)]
    subprocess.run(cmd, check=True)
    return path


def _cli_samples(path: pathlib.Path, *args: str) -> int:
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-vn", *args, "-f", "f32le", "-"],
                         check=True, capture_output=True).stdout
    return len(out) // 4


@pytest.fixture(scope="module")
def av(tmp_path_factory) -> pathlib.Path:
    return _make(tmp_path_factory.mktemp("decord_audio"), "av.mp4")


@pytest.fixture(scope="module")
def silent(tmp_path_factory) -> pathlib.Path:
    return _make(tmp_path_factory.mktemp("decord_silent"), "silent.mp4", audio=False)


@pytest.mark.needs("ffmpeg")
def test_single_double_resampled_and_mixed_down_shapes_are_the_clis(av):
    assert decord.AudioReader(str(av), decord.cpu(0)).shape == (1, _cli_samples(av, "-ac", "1"))
    stereo = decord.AudioReader(str(av), decord.cpu(0), mono=False)
    assert stereo.shape == (2, _cli_samples(av) // 2)
    assert stereo.shape() == stereo.shape  # decord's docs call it
    resampled = decord.AudioReader(str(av), decord.cpu(0), 4410)
    assert resampled.shape == (1, _cli_samples(av, "-ac", "1", "-ar", "4410"))
    assert resampled.sample_rate == 4410 and stereo.sample_rate == 44100
    assert len(stereo) == stereo.shape[1]


@pytest.mark.needs("ffmpeg")
def test_no_audio_stream_raises(silent):
    with pytest.raises(DECORDError):
        decord.AudioReader(str(silent), decord.cpu(0))
    with pytest.raises(DECORDError):
        decord.AVReader(str(silent), decord.cpu(0))


@pytest.mark.needs("ffmpeg")
def test_a_file_object_reads_as_its_path(av):
    with open(av, "rb") as f:
        ar = decord.AudioReader(f)
    ar2 = decord.AudioReader(str(av))
    assert ar.shape == ar2.shape
    np.testing.assert_array_equal(ar[10].asnumpy(), ar2[10].asnumpy())
    avr = decord.AVReader(io.BytesIO(av.read_bytes()))
    avr2 = decord.AVReader(str(av))
    assert len(avr) == len(avr2) == 60
    (audio, video), (audio2, video2) = avr[10], avr2[10]
    np.testing.assert_array_equal(audio.asnumpy(), audio2.asnumpy())
    np.testing.assert_array_equal(video.asnumpy(), video2.asnumpy())


@pytest.mark.needs("ffmpeg")
def test_indices_slices_batches_info_and_free(av, capsys):
    ar = decord.AudioReader(str(av), decord.cpu(0), mono=False)
    n = ar.shape[1]
    assert ar[0].shape == (2,) and ar[-1].shape == (2,)
    np.testing.assert_array_equal(ar[-1].asnumpy(), ar[n - 1].asnumpy())
    assert ar[:].shape == (2, n)
    assert ar[-20:-10].shape == (2, 10)
    batch = ar.get_batch([-1, 0, 1, 2, 3]).asnumpy()
    np.testing.assert_array_equal(batch[:, 1:], ar[0:4].asnumpy())
    np.testing.assert_array_equal(batch[:, 0], ar[-1].asnumpy())
    with pytest.raises(IndexError):
        ar[n]
    with pytest.raises(IndexError):
        ar.get_batch([0, n])
    ar.get_info()
    assert "44100 Hz" in capsys.readouterr().out
    del ar


@pytest.mark.needs("ffmpeg")
def test_add_padding_starts_the_audio_at_time_zero(av):
    ar = decord.AudioReader(str(av))
    before, duration = ar.shape[1], ar.duration()
    padding = ar.add_padding()
    # The AAC starts 0.25 s in (less the encoder's priming, which the decoder drops).
    assert 0.2 * 44100 < padding < 0.26 * 44100
    assert ar.shape == (1, before + padding)
    assert np.array_equal(ar[:padding].asnumpy(), np.zeros((1, padding)))
    assert ar.duration() == pytest.approx(duration + padding / 44100)


@pytest.mark.needs("ffmpeg")
def test_the_av_readers_frames_carry_their_audio_continuously(av):
    avr = decord.AVReader(str(av), decord.cpu(0))
    assert len(avr) == 60
    audio, video = avr[0]
    assert video.shape == (48, 64, 3) and audio.shape[0] == 1
    audio, video = avr[:]
    assert len(audio) == 60 and video.shape == (60, 48, 64, 3)
    audio, video = avr.get_batch([-1, 0, 1, 2, 3])
    assert len(audio) == 5 and video.shape[0] == 5
    # decord's sync test played frames 25 to 40's audio: consecutive frames' audio is one continuous run of the
    # padded audio, from frame 25's start.
    padded = decord.AudioReader(str(av), decord.cpu(0), 44100)
    padded.add_padding()
    audio, _ = avr[25:40]
    joined = np.concatenate([a.asnumpy() for a in audio], axis=1)
    start = int(np.ceil(decord.VideoReader(str(av)).get_frame_timestamp(25)[0] * 44100))
    np.testing.assert_array_equal(joined, padded[start:start + joined.shape[1]].asnumpy())
    assert joined.shape[1] == pytest.approx(15 / 30 * 44100, abs=2)
