"""Bad inputs fail alone, between good videos: each raises VideoError (with its id, label, reason and kind)
after its decoded batches, the next poll goes on, and iteration can be resumed."""

from __future__ import annotations

import framefeed as ff
from conftest import all_results, fixture


def test_each_bad_input_fails_alone_between_good_videos():
    good = fixture("h264.mp4")
    bad = {
        "empty": b"",
        "random": bytes(range(256)) * 40,
        "text": b"not a video at all",
        "truncated": good[: len(good) // 2],
        "audio only": fixture("audio_only.m4a"),
    }
    # strict: a file cut short is damage, which fails its video only with strict=True (by default its frames are
    # delivered and the damage reported: test_damaged.py).
    inp = ff.VideoInput(4, 2, strict=True)
    inp.feed(good, label="first")
    ids = {name: inp.feed(data, label=name) for name, data in bad.items()}
    inp.feed(good, label="last")
    inp.close()
    results = all_results(inp)
    errors = [r for r in results if isinstance(r, ff.VideoError)]
    assert {e.label for e in errors} == set(bad)
    for e in errors:
        assert e.video_id == ids[e.label] and e.reason and e.code != "decode_failed"
        assert e.kind == e.code  # the old name of the attribute
        assert isinstance(e, ff.FramefeedError) and e.label in str(e)
    codes = {e.label: e.code for e in errors}
    # The service's vocabulary (its JSON errors' `code`).
    expected = {
        "empty": "empty",
        "text": "not_a_video",
        "truncated": "corrupt",
        "audio only": "no_video_stream",
    }
    assert {label: codes[label] for label in expected} == expected, codes
    batches = [r for r in results if isinstance(r, ff.Batch)]
    by_label = {}
    for b in batches:
        by_label[b.label] = by_label.get(b.label, 0) + b.valid_frames
    assert by_label["first"] == 23 and by_label["last"] == 23
    # The truncated file gave what it could before its error.
    assert 0 < by_label.get("truncated", 0) < 23


def test_iteration_is_resumed_after_a_video_error():
    inp = ff.VideoInput(23, 1)
    inp.feed(fixture("h264.mp4"))
    inp.feed(b"junk")
    inp.feed(fixture("vp9.webm"))
    inp.close()
    seen, errors = [], 0
    while True:
        try:
            for batch in inp:
                seen.append(batch.video_id)
            break
        except ff.VideoError:
            errors += 1
    assert seen == [0, 2] and errors == 1


def test_bad_settings_are_value_errors_naming_the_range():
    import pytest

    with pytest.raises(ValueError, match="sequence_length is 0; allowed: 1 to 65536"):
        ff.VideoInput(0, 1)
    with pytest.raises(ValueError, match="max_batch_size"):
        ff.VideoInput(65536, 65536)
    with pytest.raises(ValueError, match="layout is 'NCHW'; allowed: 'FHWC', 'FCHW', 'CFHW'"):
        ff.VideoInput(4, 1, layout="NCHW")
    with pytest.raises(ValueError, match="dtype"):
        ff.VideoInput(4, 1, dtype="int64")
    with pytest.raises(ValueError, match="resize and resize_shorter"):
        ff.VideoInput(4, 1, resize=(32, 32), resize_shorter=16)
    with pytest.raises(ValueError, match="device"):
        ff.VideoInput(4, 1, device="tpu")
    # Every named setting parses through the Rust core's one vocabulary: the message the CLI and the service give.
    with pytest.raises(ValueError, match="nvdec_driver is 'npp'; allowed: 'direct', 'hwaccel'"):
        ff.VideoInput(4, 1, nvdec_driver="npp")
    with pytest.raises(ValueError, match="last_sequence_policy is 'drop'; allowed: 'partial', 'pad'"):
        ff.VideoInput(4, 1, last_sequence_policy="drop")
    ff.VideoInput(4, 1, nvdec_driver="HWACCEL", layout="cfhw", dtype="f32")  # any case; the CLI's aliases
    with pytest.raises(TypeError):
        ff.VideoInput(4, 1).feed("a string is not a video")
