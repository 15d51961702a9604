"""framefeed.torch.VideoDataset: every file (or segment of a long one) exactly once per epoch over DataLoader
workers and ranks, tensors through DLPack (no copy), per-epoch reshuffling. framefeed.torch.VideoClipDataset: each
item the reader's frames at the sampler's indices, the same clip for the same seed, epoch and item in any worker,
new clips each epoch. Skipped, with the reason printed, where torch is absent."""

from __future__ import annotations

import collections
import threading
import time

import numpy as np
import pytest

from conftest import FIXTURES, require_module  # noqa: E402

torch = require_module("torch", "the framefeed.torch tests")

import framefeed as ff  # noqa: E402
from framefeed.torch import VideoClipDataset, VideoDataset, clip_indices  # noqa: E402

NAMES = ["h264.mp4", "vp9.webm", "h264.mkv", "mpeg4.avi", "vp8.webm", "hevc_10bit.mp4", "av1.mkv"]
PATHS = [str(FIXTURES / n) for n in NAMES]


def labels(dataset, workers: int) -> list:
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=workers)
    return [info["label"][0] for _, info in loader if info["index"] == 0]


@pytest.mark.parametrize("workers", [0, 2, 3])
def test_every_file_once_per_epoch_over_workers_and_ranks(workers):
    """7 files over 2 ranks: each rank gets 4 (DistributedSampler's padding repeats the epoch's first file);
    with drop_last, 3 each and one file left out. Every file once otherwise."""
    for epoch in range(2):
        seen, dropped = [], []
        for rank in range(2):
            dataset = VideoDataset(PATHS, 23, 1, rank=rank, world_size=2, seed=5)
            dataset.set_epoch(epoch)
            mine = labels(dataset, workers)
            assert len(mine) == 4 == dataset.units_per_rank(), (rank, mine)
            seen += mine
            short = VideoDataset(PATHS, 23, 1, rank=rank, world_size=2, seed=5, drop_last=True)
            short.set_epoch(epoch)
            dropped += labels(short, workers)
        counts = collections.Counter(seen)
        assert set(counts) == set(PATHS) and sorted(counts.values()) == [1] * 6 + [2], (epoch, seen)
        assert len(dropped) == 6 and len(set(dropped)) == 6, dropped


def test_tensors_share_the_batch_memory_and_carry_metadata():
    dataset = VideoDataset([PATHS[0]], 5, 2, shuffle=False, dtype="float32_unit", layout="CFHW")
    items = list(dataset)
    frames, info = items[0]
    assert isinstance(frames, torch.Tensor) and frames.shape == (2, 3, 5, 64, 96)
    assert frames.dtype == torch.float32 and 0.0 <= float(frames.min()) and float(frames.max()) <= 1.0
    assert info["label"] == [PATHS[0]] * 2 == info["path"] and info["first_frame"] == [0, 5] and info["valid_frames"] == [5, 5]
    last_frames, last = items[-1]
    assert last["is_last"] and last["valid_frames"] == [3] and last_frames.shape[2] == 5  # padded
    assert sum(sum(i["valid_frames"]) for _, i in items) == 23


def test_epochs_reshuffle_and_a_bad_file_is_skipped_with_a_warning(tmp_path):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video")
    dataset = VideoDataset(PATHS + [str(bad)], 23, 1, seed=1)
    orders = []
    for epoch in range(3):
        dataset.set_epoch(epoch)
        with pytest.warns(RuntimeWarning, match="bad.mp4"):
            orders.append([info["label"][0] for _, info in dataset])
    assert all(sorted(o) == sorted(PATHS) for o in orders) and len({tuple(o) for o in orders}) > 1
    with pytest.raises(RuntimeError, match="bad.mp4"):
        list(VideoDataset([str(bad)], 4, on_error="raise"))


def _feeders_end(limit: float = 60.0) -> bool:
    """Whether every ``framefeed-feed`` thread ends within ``limit`` seconds (generous: a loaded machine)."""
    deadline = time.monotonic() + limit
    while any(t.name == "framefeed-feed" for t in threading.enumerate()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_an_epoch_stopped_early_ends_its_feeder_and_decoder_without_a_thread_error(monkeypatch, tmp_path):
    errors: list = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(repr(args.exc_value)))
    assert _feeders_end(), "no feeder left from an earlier test"
    # More videos than the feed queue holds: when the loop breaks, the feeder is waiting for room.
    dataset = VideoDataset(PATHS * 6, 4, 1, max_queued=(1, 1 << 30))
    for stopped in range(3):
        for step, _ in enumerate(dataset):
            if step == stopped:
                break  # a training loop's break: the generator is closed
        assert _feeders_end(), f"the feeder still runs after a break at step {stopped}"
    # A consumer that fails (on_error="raise") stops the epoch early too.
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video")
    with pytest.raises(RuntimeError, match="bad.mp4"):
        list(VideoDataset([str(bad)] + PATHS * 3, 4, on_error="raise", shuffle=False, max_queued=(1, 1 << 30)))
    assert _feeders_end(), "the feeder still runs after the consumer raised"
    assert errors == [], "the feeder thread raised"
    # And a whole epoch after them still gives every file.
    assert sorted({info["label"][0] for _, info in VideoDataset(PATHS, 23, 1)}) == sorted(PATHS)


def test_torch_from_dlpack_views_the_batch_without_a_copy():
    import framefeed as ff

    inp = ff.VideoInput(4, 2, last_sequence_policy="pad")
    inp.feed(open(PATHS[0], "rb").read())
    inp.close()
    batch = inp.next_batch()
    tensor = torch.from_dlpack(batch)
    assert tensor.data_ptr() == batch.numpy().ctypes.data
    assert np.array_equal(tensor.numpy(), batch.numpy())
    del batch  # the tensor keeps the buffer alive
    assert tensor.sum() > 0


def test_clips_per_video_per_epoch_new_each_epoch_the_same_for_the_seed():
    def clips(epoch: int, workers: int, seed: int = 3) -> dict:
        dataset = VideoDataset(PATHS, 4, 2, clips=3, seed=seed)
        dataset.set_epoch(epoch)
        loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=workers)
        out: dict = collections.defaultdict(list)
        for frames, info in loader:
            assert frames.shape[0] == len(info["indices"]) == len(info["damaged"]) == len(info["color"])
            depth = 10 if "10bit" in info["label"][0] else 8
            assert all(c["dynamic_range"] == "sdr" and c["bit_depth"] == depth for c in info["color"])
            for label, indices in zip(info["label"], info["indices"]):
                out[label].append(indices)
        return dict(out)

    first = clips(0, 0)
    assert set(first) == set(PATHS) and all(len(c) == 3 for c in first.values())
    assert clips(0, 2) == first, "the same clips whichever worker decodes the file"
    assert clips(1, 0) != first and clips(0, 0, seed=4) != first


def test_a_shuffle_buffer_mixes_videos_in_every_batch_and_keeps_every_sequence():
    def run(epoch: int) -> list:
        dataset = VideoDataset(PATHS, 4, 4, clips=4, seed=1, shuffle_buffer=12, crop=32)
        dataset.set_epoch(epoch)
        return list(dataset)

    batches = run(0)
    seen = [(label, tuple(idx)) for _, info in batches for label, idx in zip(info["label"], info["indices"])]
    assert collections.Counter(label for label, _ in seen) == {p: 4 for p in PATHS}, "every clip once"
    mixed = sum(len(set(info["label"])) > 1 for _, info in batches)
    assert mixed >= len(batches) // 2, f"{mixed} of {len(batches)} batches mix videos"
    frames, info = batches[0]
    assert isinstance(frames, torch.Tensor) and frames.shape == (4, 4, 32, 32, 3)
    assert [(label, list(i)) for label, i in zip(info["label"], info["indices"])] == [
        (label, list(i)) for label, i in zip(run(0)[0][1]["label"], run(0)[0][1]["indices"])
    ], "seeded: the same order again"
    with pytest.raises(ValueError, match="shuffle_buffer is -1"):
        VideoDataset(PATHS, 4, shuffle_buffer=-1)


@pytest.mark.parametrize("workers", [0, 2])
def test_every_segment_once_per_epoch_over_workers_and_ranks(workers, tmp_path):
    """Long files (H.264 and HEVC with open GOPs and B-frames, VP9) cut into segments sharded like files: over 2
    ranks x `workers` workers every sequence of every file comes exactly once per epoch, with the frames of one
    single-worker decode of the file (compared by MD5)."""
    import hashlib
    import subprocess

    import framefeed as ff

    vp9 = tmp_path / "vp9_gop20.webm"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-frames:v", "90",
                    "-c:v", "libvpx-vp9", "-g", "20", "-keyint_min", "20", "-deadline", "realtime", "-cpu-used", "8",
                    "-pix_fmt", "yuv420p", str(vp9)], check=True)
    files = [str(FIXTURES / "sampling_h264_open_gop.mp4"), str(FIXTURES / "sampling_hevc_open_gop.mp4"), str(vp9),
             PATHS[0]]
    want = collections.Counter()
    for f in files:
        inp = ff.VideoInput(4, 1)
        inp.feed_file(f)
        inp.close()
        want.update((f, s.first_frame, hashlib.md5(s.numpy().tobytes()).hexdigest()) for b in inp
                    for s in b.sequences)
    for epoch in range(2):
        seen = collections.Counter()
        for rank in range(2):
            dataset = VideoDataset(files, 4, 1, rank=rank, world_size=2, seed=5, segment_frames=30)
            assert len([u for u in dataset.units if u.segment is not None]) >= 9, "the three long files cut"
            dataset.set_epoch(epoch)
            loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=workers)
            for frames, info in loader:
                assert len(info["first_frame"]) == 1
                # The real frames (a partial last sequence's tail is not a frame).
                digest = hashlib.md5(frames[0][: info["valid_frames"][0]].numpy().tobytes()).hexdigest()
                seen[(info["label"][0], info["first_frame"][0], digest)] += 1
        assert seen == want, epoch


def clip_items(dataset, workers: int) -> list:
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=workers)
    return [(frames.clone(), info) for frames, info in loader]


@pytest.mark.parametrize("workers", [0, 2])
def test_clip_dataset_items_are_the_readers_frames_at_the_samplers_indices(workers):
    dataset = VideoClipDataset(PATHS[:4], clip_indices(4, stride=2), labels=list("abcd"), seed=3)
    items = clip_items(dataset, workers)
    assert [info["label"] for _, info in items] == list("abcd")
    for (frames, info), path in zip(items, PATHS[:4]):
        reader = ff.VideoReader(path)
        start = info["indices"][0]
        assert info["indices"] == [start + 2 * j for j in range(4)]
        assert 0 <= start and info["indices"][-1] < len(reader)
        want = reader.get_frames_at(info["indices"])
        assert frames.shape == (4, reader.metadata.height, reader.metadata.width, 3) and frames.dtype == torch.uint8
        assert np.array_equal(frames.numpy(), np.asarray(want.data)), path
        assert info["pts"] == pytest.approx(want.pts_seconds)
    # The same clips in one process and over workers; new ones for a new epoch, the same again for its seed.
    assert [i["indices"] for _, i in clip_items(dataset, 0)] == [i["indices"] for _, i in items]
    dataset.set_epoch(1)
    moved = [i["indices"] for _, i in clip_items(dataset, 0)]
    assert moved != [i["indices"] for _, i in items]
    again = VideoClipDataset(PATHS[:4], clip_indices(4, stride=2), seed=3)
    again.set_epoch(1)
    assert [i["indices"] for _, i in clip_items(again, workers)] == moved


def test_clip_dataset_transforms_layout_and_short_videos():
    # A clip longer than the video repeats its last frame; the reader's keywords reach every item.
    dataset = VideoClipDataset([PATHS[0]], clip_indices(40, stride=1), resize=(32, 24), dtype="float32_unit",
                               dimension_order="NCHW")
    frames, info = dataset[0]
    n = len(ff.VideoReader(PATHS[0]))
    assert n < 40 and info["indices"] == [min(j, n - 1) for j in range(40)]
    assert frames.shape == (40, 3, 24, 32) and frames.dtype == torch.float32
    assert torch.equal(frames[-1], frames[n - 1]) and 0.0 <= float(frames.min()) <= float(frames.max()) <= 1.0
    with pytest.raises(ValueError, match="allowed"):
        VideoClipDataset(PATHS[:2], clip_indices(4), labels=["one"])


def test_with_audio_each_sequence_carries_its_sound_as_a_tensor(tmp_path):
    from test_audio import _clip

    path = _clip(tmp_path)
    dataset = VideoDataset([str(path)], 10, 2, shuffle=False, audio=True, audio_channels=1)
    (frames, info), *_ = list(dataset)
    assert len(info["audio"]) == 2 and info["audio_sample_rate"] == [44100, 44100]
    first = info["audio"][0]
    assert first.dtype == torch.float32 and first.shape[0] == 1
    assert info["audio_pts"][1] == pytest.approx(info["audio_pts"][0] + first.shape[1] / 44100)
