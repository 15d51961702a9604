"""FileList: every file in exactly one shard per epoch, shuffled per epoch, fed with its path as label."""

from __future__ import annotations

import threading

import pytest

import framefeed as ff
from conftest import FIXTURES


def test_shards_cover_every_file_once_and_epochs_reshuffle():
    paths = [f"{i}.mp4" for i in range(50)]
    files = ff.FileList(paths).shuffle(3)
    for epoch in range(3):
        shards = [files.shard(r, 4).epoch(epoch) for r in range(4)]
        assert sorted(str(p) for s in shards for p in s) == sorted(paths)
    assert files.epoch(0) != files.epoch(1)
    assert ff.FileList(paths).epoch(5) == [__import__("pathlib").Path(p) for p in paths]
    with pytest.raises(ValueError, match="shard_id is 4 and num_shards is 4"):
        files.shard(4, 4)


def test_feed_epoch_labels_each_video_with_its_path_and_reports_unreadable_files():
    names = ["h264.mp4", "vp9.webm", "missing.mp4"]
    files = ff.FileList([FIXTURES / n for n in names])
    inp = ff.VideoInput(23, 1, max_queued=(1, 1 << 30))
    report = {}
    t = threading.Thread(target=lambda: (report.update(files.feed_epoch(inp, 0)), inp.close()))
    t.start()
    labels = [batch.label for batch in inp]
    t.join()
    assert labels == [str(FIXTURES / "h264.mp4"), str(FIXTURES / "vp9.webm")]
    assert report["fed"] == 2 and [str(p) for p, _ in report["unreadable"]] == [str(FIXTURES / "missing.mp4")]


def test_probe_takes_a_path_as_well_as_the_bytes(tmp_path):
    path = FIXTURES / "h264.mp4"
    by_path = ff.probe(path)
    assert by_path == ff.probe(str(path)) == ff.probe(path.read_bytes())
    assert by_path["streams"][0]["codec"] == "h264"
    with pytest.raises(OSError, match="missing.mp4"):
        ff.probe(FIXTURES / "missing.mp4")
    bad = tmp_path / "not_a_video.mp4"
    bad.write_bytes(b"this is not a video at all" * 10)
    with pytest.raises(ff.VideoError, match="not_a_video.mp4"):
        ff.probe(bad)
