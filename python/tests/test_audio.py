"""Audio beside the frames (issue 63): ``VideoInput(audio=True)`` gives each sequence an ``AudioSamples`` with
the samples played while its frames are shown, equal to that span of the ``ffmpeg`` CLI's decode (``-ac``/``-ar``
resampled the same way), and empty samples for a video without audio."""

import pathlib
import subprocess

import numpy as np
import pytest

import framefeed as ff
from conftest import needs_ffmpeg


def _clip(directory: pathlib.Path, audio: bool = True) -> pathlib.Path:
    needs_ffmpeg()
    path = directory / ("av.mp4" if audio else "silent.mp4")
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30"]
    if audio:
        cmd += ["-f", "lavfi", "-i", "aevalsrc=0.5*sin(2*PI*440*t)|0.3*sin(2*PI*660*t):s=44100", "-c:a", "aac"]
    cmd += ["-t", "2", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(path)]
    subprocess.run(cmd, check=True)
    return path


def _reference(path: pathlib.Path, channels: int, rate: int) -> np.ndarray:
    out = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-vn", "-ac", str(channels), "-ar", str(rate), "-f", "f32le", "-"],
        check=True,
        capture_output=True,
    ).stdout
    return np.frombuffer(out, dtype="<f4").reshape(-1, channels).T


def _first_audio_time(path: pathlib.Path) -> float:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "frame=best_effort_timestamp",
         "-of", "csv=p=0", str(path)],
        check=True, capture_output=True, text=True,
    ).stdout.split()[0].rstrip(",")
    return int(out) / 44100  # the AAC stream's time base is 1/44100


@pytest.mark.needs("ffmpeg")
def test_each_sequence_carries_the_clis_samples(tmp_path):
    path = _clip(tmp_path)
    want = _reference(path, 1, 16000)
    first = _first_audio_time(path)
    inp = ff.VideoInput(8, 2, audio=True, audio_sample_rate=16000, audio_channels=1)
    inp.feed_file(str(path))
    inp.close()
    carried = 0
    for batch in inp:
        for seq in batch.sequences:
            audio = seq.audio
            assert isinstance(audio, ff.AudioSamples)
            assert audio.sample_rate == 16000 and audio.num_channels == 1
            data = audio.data
            assert data.dtype == np.float32 and data.shape == (1, len(audio))
            start = round((audio.pts_seconds - first) * 16000)
            assert start == carried, "each sequence's sound follows the one before's"
            np.testing.assert_array_equal(data, want[:, start:start + data.shape[1]])
            assert audio.duration_seconds == pytest.approx(data.shape[1] / 16000)
            np.testing.assert_array_equal(np.from_dlpack(audio), data)
            carried += data.shape[1]
    assert carried >= 31000


@pytest.mark.needs("ffmpeg")
def test_stereo_at_the_streams_rate_and_empty_audio_without_a_stream(tmp_path):
    path = _clip(tmp_path)
    inp = ff.VideoInput(30, 1, audio=True)
    inp.feed(path.read_bytes())
    inp.close()
    seqs = [s for b in inp for s in b.sequences]
    assert [s.audio.num_channels for s in seqs] == [2, 2]
    assert all(s.audio.sample_rate == 44100 for s in seqs)
    silent = _clip(tmp_path, audio=False)
    inp = ff.VideoInput(30, 1, audio=True)
    inp.feed_file(str(silent))
    inp.close()
    seqs = [s for b in inp for s in b.sequences]
    assert len(seqs) == 2
    assert all(len(s.audio) == 0 and s.audio.data.shape == (0, 0) for s in seqs)
    # Without audio=True, none.
    inp = ff.VideoInput(30, 1)
    inp.feed(path.read_bytes())
    inp.close()
    assert all(s.audio is None for b in inp for s in b.sequences)


def test_audio_settings_are_checked():
    with pytest.raises(ValueError, match="allowed: 1000 to 384000"):
        ff.VideoInput(8, 1, audio=True, audio_sample_rate=10)
    with pytest.raises(ValueError, match="allowed: 1 to 16"):
        ff.VideoInput(8, 1, audio=True, audio_channels=0)
    with pytest.raises(ValueError, match="need audio=True"):
        ff.VideoInput(8, 1, audio_channels=1)


@pytest.mark.needs("ffmpeg")
def test_a_readers_samples_played_in_range_are_the_clis(tmp_path):
    path = _clip(tmp_path)
    first = _first_audio_time(path)
    reader = ff.VideoReader(str(path), audio_sample_rate=16000, audio_channels=1)
    assert reader.metadata.audio == {
        "stream_index": 1, "codec": "aac", "sample_rate": 44100, "num_channels": 2,
        "duration_seconds": pytest.approx(2.0, abs=0.05),
    }
    want = _reference(path, 1, 16000)
    for start, stop in [(0.5, 1.0), (0.2, 0.3), (1.5, None)]:
        samples = reader.get_samples_played_in_range(start, stop)
        begin = round((start - first) * 16000)
        end = want.shape[1] if stop is None else round((stop - first) * 16000)
        assert samples.pts_seconds == pytest.approx(first + begin / 16000)
        np.testing.assert_array_equal(samples.data, want[:, begin:end])
    silent = ff.VideoReader(str(_clip(tmp_path, audio=False)))
    assert silent.metadata.audio is None
    with pytest.raises(ff.VideoError) as raised:
        silent.get_samples_played_in_range(0.0)
    assert raised.value.code == "no_audio_stream"
