"""Every frame of the shared corpus (../shared/videos) through Python is byte for byte the ffmpeg CLI's own
rgb24 decode, in the manifest's frame counts; the corrupted file gives its decodable frames, its undecodable
picture a hole (its index kept), and no error (``strict=True`` fails it)."""

from __future__ import annotations

import numpy as np
import pytest

import framefeed as ff
from conftest import SHARED, FfmpegFrames, manifest

ENTRIES = manifest()


@pytest.mark.needs("corpus", "ffmpeg")
@pytest.mark.parametrize("entry", ENTRIES or [None], ids=lambda e: e["file"] if e else "corpus")
def test_every_corpus_frame_equals_ffmpeg(entry):
    name = entry["file"]
    path = SHARED / name
    inp = ff.VideoInput(8, 4, decoder_threads=2)
    inp.feed(path.read_bytes(), label=name)
    inp.close()
    reference = FfmpegFrames(path)
    frames, errors, shape, holes = 0, [], None, []
    while True:
        try:
            batch = inp.next_batch()
        except ff.VideoError as error:
            errors.append(error)
            continue
        if batch is None:
            break
        shape = batch.frame_shape
        for seq in batch.sequences:
            holes.extend(index for index, _ in seq.holes)
            for frame in seq.numpy()[: seq.valid_frames]:
                theirs = reference.next(shape)
                assert theirs is not None, f"{name}: ffmpeg has no frame {frames}"
                assert np.array_equal(frame, theirs), f"{name}: frame {frames} differs from ffmpeg rgb24"
                frames += 1
    assert reference.close() == 0, f"{name}: ffmpeg decoded more frames than framefeed ({frames})"
    stream = next(s for s in entry["video_streams"] if (s["height"], s["width"]) == shape[:2])
    assert frames == int(stream["nb_read_frames"])
    assert errors == []
    if name.startswith("corrupted"):
        assert holes == [30]
        strict = ff.VideoInput(8, 4, decoder_threads=2, strict=True)
        strict.feed(path.read_bytes(), label=name)
        strict.close()
        with pytest.raises(ff.VideoError) as failed:
            for _ in strict:
                pass
        assert failed.value.code == "corrupt" and failed.value.label == name
    else:
        assert holes == []
