"""framefeed inside real PyTorch training jobs (issue 71): readers and operators made in the parent and used in
fork, spawn and forkserver DataLoader workers (and a bare ``os.fork()``), pickled datasets, readers and samplers,
two DDP ranks started by ``torch.multiprocessing.spawn`` over gloo, labels per sequence in packed and shuffled
batches, ``set_epoch`` reaching persistent workers, the default collate, and the decoder threads a worker gets.

Every DataLoader here has a ``timeout``: a worker that hangs fails the test instead of stopping the run. Skipped,
with the reason printed, where torch is absent."""

from __future__ import annotations

import collections
import hashlib
import os
import pickle
import socket
import tempfile
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

from conftest import FIXTURES, require_module

torch = require_module("torch", "the training-job tests")

import framefeed as ff  # noqa: E402
import framefeed.compat.decord as decord  # noqa: E402
from framefeed import _threads  # noqa: E402
from framefeed.torch import VideoClipDataset, VideoDataset, clip_indices, distributed_rank  # noqa: E402

NAMES = ["h264.mp4", "vp9.webm", "h264.mkv", "mpeg4.avi", "vp8.webm", "hevc_10bit.mp4", "av1.mkv"]
PATHS = [str(FIXTURES / n) for n in NAMES]
CONTEXTS = ["fork", "spawn", "forkserver"]
# A worker that has not answered in this long is taken as hung (the whole epoch takes well under a second).
TIMEOUT = 120


def loader(dataset: Any, context: str, workers: int = 2, **keywords: Any) -> Any:
    return torch.utils.data.DataLoader(
        dataset,
        num_workers=workers,
        multiprocessing_context=context if workers else None,
        timeout=TIMEOUT if workers else 0,
        **keywords,
    )


class ParentReaders(torch.utils.data.Dataset):
    """A decord-style dataset: its readers opened (and read once) in ``__init__``, in the parent process."""

    def __init__(self, paths: List[str], compat: bool) -> None:
        self.compat = compat
        if compat:
            self.readers: List[Any] = [decord.VideoReader(p, width=48, height=32) for p in paths]
            self.first = [r.get_batch([0]).asnumpy()[0] for r in self.readers]
        else:
            self.readers = [ff.VideoReader(p) for p in paths]  # default threads: more than one on 2 cores
            self.first = [r[0] for r in self.readers]

    def __len__(self) -> int:
        return len(self.readers)

    def __getitem__(self, i: int) -> Tuple[Any, Any, int]:
        r = self.readers[i]
        if self.compat:
            return r.get_batch([0, len(r) - 1]).asnumpy(), os.getpid(), i
        return r.get_frames_at([0, len(r) - 1]).data, os.getpid(), i


@pytest.mark.parametrize("compat", [False, True], ids=["VideoReader", "compat.decord"])
@pytest.mark.parametrize("context", CONTEXTS)
def test_readers_opened_in_the_parent_read_in_fork_spawn_and_forkserver_workers(context: str, compat: bool) -> None:
    dataset = ParentReaders(PATHS[:4], compat)
    want = {i: dataset[i][0] for i in range(len(dataset))}
    seen = {}
    for frames, pid, i in loader(dataset, context, batch_size=None):
        assert int(pid) != os.getpid()
        seen[int(i)] = frames.numpy()
        assert np.array_equal(seen[int(i)][0], dataset.first[int(i)])
    assert seen.keys() == want.keys()
    for i in want:
        assert np.array_equal(seen[i], want[i]), (context, PATHS[i])


def test_a_bare_fork_reads_with_the_parents_reader_and_makes_an_unfed_operator_again() -> None:
    reader = ff.VideoReader(PATHS[0])
    want = reader.get_frames_at([0, 10, 22]).data.copy()
    unfed = ff.VideoInput(5, 2)
    fed = ff.VideoInput(5, 2)
    fed.feed_file(PATHS[1])
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            ok = np.array_equal(reader.get_frames_at([0, 10, 22]).data, want)
            unfed.feed_file(PATHS[0])
            unfed.close()
            ok = ok and sum(len(b) for b in unfed) == 5
            try:
                fed.next_batch(timeout=5)
                ok = False
            except ff.FramefeedError as error:
                ok = ok and error.code == "forked" and "before the process forked" in str(error)
            del reader, unfed, fed  # dropping the parent's objects here must not wait on its threads
            code = 0 if ok else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    fed.close()
    assert sum(len(b) for b in fed) == 5, "the parent's operator goes on"


def test_async_polls_work_in_a_child_forked_after_the_parent_polled_asynchronously() -> None:
    import asyncio

    async def count(inp: Any) -> int:
        inp.feed_file(PATHS[0])
        inp.close()
        n = 0
        while (batch := await inp.next_batch_async()) is not None:
            n += len(batch)
        return n

    assert asyncio.run(count(ff.VideoInput(5, 2))) == 5  # the parent's asyncio bridge thread runs now
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if asyncio.run(asyncio.wait_for(count(ff.VideoInput(5, 2)), 60)) == 5 else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


def test_readers_metadata_samplers_and_datasets_pickle(tmp_path) -> None:
    path = tmp_path / "clip.mp4"
    path.write_bytes(ff.SAMPLE_MP4)
    import io

    from_file = ff.VideoReader(io.BytesIO(ff.SAMPLE_MP4), resize=(32, 24))  # travels as its file object
    for reader in [ff.VideoReader(str(path)), ff.VideoReader(path, dtype="float32_unit"),
                   ff.VideoReader(ff.SAMPLE_MP4), ff.VideoReader(bytearray(ff.SAMPLE_MP4)), from_file]:
        copy = pickle.loads(pickle.dumps(reader))
        assert type(copy) is ff.VideoReader and len(copy) == len(reader)
        assert np.array_equal(copy.get_frames_at([3, 40]).data, reader.get_frames_at([3, 40]).data)
    assert pickle.loads(pickle.dumps(from_file))[0].shape == (24, 32, 3), "keywords travel"
    frames = ff.VideoReader(ff.SAMPLE_MP4, dimension_order="NCHW").get_frames_at([4, 0])
    back = pickle.loads(pickle.dumps(frames))
    assert back.indices == [4, 0] and back.pts_seconds == frames.pts_seconds and back.damaged == frames.damaged
    assert back.shape == frames.shape and back.device == "cpu" and len(back) == 2
    assert np.array_equal(back.data, frames.data) and np.array_equal(np.from_dlpack(back), frames.data)
    assert torch.equal(torch.from_dlpack(back), torch.from_dlpack(frames))
    meta = ff.VideoReader(ff.SAMPLE_MP4).metadata
    again = pickle.loads(pickle.dumps(meta))
    assert repr(again) == repr(meta) and again.key_frame_indices == meta.key_frame_indices
    assert again.color == meta.color and again.stream_index == meta.stream_index
    vr = decord.VideoReader(str(path), width=32, height=24)
    assert np.array_equal(pickle.loads(pickle.dumps(vr)).get_batch([5]).asnumpy(), vr.get_batch([5]).asnumpy())
    sampler = pickle.loads(pickle.dumps(clip_indices(4, stride=2)))
    assert sampler(meta, __import__("random").Random(1)) == clip_indices(4, stride=2)(meta, __import__("random").Random(1))
    clips = VideoClipDataset(PATHS[:2], clip_indices(4, stride=2))
    first = clips[1][0].clone()  # a reader is open now
    assert torch.equal(pickle.loads(pickle.dumps(clips))[1][0], first)
    dataset = VideoDataset(PATHS[:2], 5, 2, resize=(32, 24))
    assert len(list(pickle.loads(pickle.dumps(dataset)))) == len(list(dataset))


def test_ranks_come_from_the_arguments_the_process_group_or_torchruns_environment(monkeypatch) -> None:
    assert distributed_rank() == (0, 1)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    assert distributed_rank() == (1, 3)
    dataset = VideoDataset(PATHS, 4, 1)
    assert (dataset.rank, dataset.world_size) == (1, 3), "found when the dataset is made"
    monkeypatch.delenv("RANK")
    monkeypatch.delenv("WORLD_SIZE")
    assert (pickle.loads(pickle.dumps(dataset)).rank, dataset.world_size) == (1, 3), "carried to workers"
    for bad in [dict(rank=1), dict(world_size=2), dict(rank=2, world_size=2), dict(rank=-1, world_size=2)]:
        with pytest.raises(ValueError, match="allowed"):
            VideoDataset(PATHS, 4, 1, **bad)
    # Made before the process group (as rank 0 of 1), iterated where the group is seen: refused, not read whole.
    early = VideoDataset(PATHS, 4, 1)
    explicit = VideoDataset(PATHS, 4, 1, rank=0, world_size=1)
    import torch.distributed as dist

    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_rank", lambda: 1)
    monkeypatch.setattr(dist, "get_world_size", lambda: 2)
    with pytest.raises(RuntimeError, match="made as rank 0 of 1, but torch.distributed's process group says rank 1 of 2"):
        next(iter(early))
    assert len(explicit.placed()) == len(PATHS), "explicit ranks are the user's word"
    with pytest.raises(TypeError, match="a VideoInput does not pickle"):
        pickle.dumps(ff.VideoInput(4, 1))


def _ddp_rank(rank: int, port: int, out: str, context: str) -> None:
    """One DDP rank: a process group over gloo, a dataset made without rank arguments, two workers started by
    ``context``; what it read, saved for the test."""
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        dataset = VideoDataset(PATHS, 4, 2, seed=3, segment_frames=None, resize=(32, 24))
        rows = []
        for frames, info in loader(dataset, context, batch_size=None, persistent_workers=True):
            for k in range(len(info["path"])):
                digest = hashlib.md5(frames[k][: info["valid_frames"][k]].numpy().tobytes()).hexdigest()
                rows.append((info["path"][k], info["video_id"][k], info["first_frame"][k], digest))
        counts = torch.tensor([dataset.units_per_rank()])
        dist.all_reduce(counts)  # the ranks meet: neither waits on the other
        with open(os.path.join(out, f"rank{rank}.pkl"), "wb") as f:
            pickle.dump({"rows": rows, "units": dataset.units_per_rank(), "total": int(counts)}, f)
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_two_ddp_ranks_read_disjoint_even_shares_found_from_the_process_group(context: str) -> None:
    with tempfile.TemporaryDirectory() as out:
        torch.multiprocessing.spawn(_ddp_rank, args=(_free_port(), out, context), nprocs=2, join=True)
        ranks = [pickle.load(open(os.path.join(out, f"rank{r}.pkl"), "rb")) for r in range(2)]
    # 7 files over 2 ranks: 4 each, the epoch's first file read again to even them out (DistributedSampler).
    assert [r["units"] for r in ranks] == [4, 4] and ranks[0]["total"] == 8
    videos = [{(p, v) for p, v, _, _ in r["rows"]} for r in ranks]
    assert [len(v) for v in videos] == [4, 4]
    ids = [v for r in videos for _, v in r]
    assert len(set(ids)) == 8, "video ids unique across ranks and workers"
    paths = collections.Counter(p for r in videos for p, _ in r)
    assert set(paths) == set(PATHS) and sorted(paths.values()) == [1] * 6 + [2]
    # Each rank read what a plain decode of its files gives, every sequence once.
    for r in ranks:
        per_video = collections.Counter((v, f) for _, v, f, _ in r["rows"])
        assert max(per_video.values()) == 1


def _sequence_digests(path: str, seq_len: int) -> Dict[int, str]:
    inp = ff.VideoInput(seq_len, 1, resize=(32, 24))
    inp.feed_file(path)
    inp.close()
    return {s.first_frame: hashlib.md5(s.numpy()[: s.valid_frames].tobytes()).hexdigest()
            for b in inp for s in b.sequences}


def test_packed_and_shuffled_batches_label_every_sequence_with_its_own_video() -> None:
    labels = list(range(10, 10 + len(PATHS)))
    want = {p: _sequence_digests(p, 4) for p in PATHS}
    for keywords in [dict(pack=True), dict(shuffle_buffer=16)]:
        dataset = VideoDataset(PATHS, 4, 4, labels=labels, seed=2, resize=(32, 24), **keywords)
        mixed = 0
        for frames, info in loader(dataset, "fork", batch_size=None):
            assert len(info["label"]) == len(info["path"]) == len(info["video_id"]) == len(frames)
            mixed += len(set(info["path"])) > 1
            for k, (path, label) in enumerate(zip(info["path"], info["label"])):
                assert label == labels[PATHS.index(path)]
                digest = hashlib.md5(frames[k][: info["valid_frames"][k]].numpy().tobytes()).hexdigest()
                assert want[path][info["first_frame"][k]] == digest, (keywords, path, info["first_frame"][k])
        assert mixed >= 2, (keywords, "batches of several videos")


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_set_epoch_reaches_persistent_workers(context: str) -> None:
    def epochs(dataset: Any, persistent: bool, **keywords: Any) -> List[Any]:
        out = []
        batches = loader(dataset, context, persistent_workers=persistent, **keywords)
        for epoch in range(3):
            dataset.set_epoch(epoch)
            seen = sorted((tuple(info["label"]) if isinstance(info["label"], list) else (info["label"],),
                           str(info["indices"])) for _, info in batches)
            out.append(seen)
        return out

    stream = VideoDataset(PATHS[:4], 4, 1, clips=2, seed=9, resize=(32, 24))
    got = epochs(stream, True, batch_size=None)
    assert len({str(e) for e in got}) == 3, "new clips every epoch"
    assert got == epochs(stream, False, batch_size=None), "the same clips as fresh workers get"
    clips = VideoClipDataset(PATHS[:4], clip_indices(3, stride=2), seed=9, resize=(32, 24))
    got = epochs(clips, True, batch_size=2)
    assert len({str(e) for e in got}) == 3 and got == epochs(clips, False, batch_size=2)


def test_the_default_collate_takes_the_documented_setups() -> None:
    clips = VideoClipDataset(PATHS[:4], clip_indices(4, stride=2), resize=(32, 24))
    frames, info = next(iter(loader(clips, "fork", batch_size=2)))
    assert frames.shape == (2, 4, 24, 32, 3) and info["label"] == PATHS[:2] == info["path"]
    stream = VideoDataset(PATHS[:4], 4, 1, clips=2, resize=(32, 24), shuffle=False)
    frames, info = next(iter(loader(stream, "fork", workers=0, batch_size=2)))
    assert frames.shape == (2, 1, 4, 24, 32, 3)
    assert list(info["color"][0]["primaries"]) == ["unknown"] * 2 and list(info["label"][0]) == [PATHS[0]] * 2
    for _, info in loader(VideoDataset(PATHS, 4, 2), "fork", batch_size=None):
        assert all(v is not None for c in info["color"] for v in c.values())


class WorkerThreads(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> int:
        return _threads.default_threads()


def test_a_worker_gets_its_share_of_the_cores() -> None:
    cores = _threads.available_cores()
    assert _threads.default_threads() == cores
    got = [int(t) for t in loader(WorkerThreads(), "fork", batch_size=None)]
    assert got == [max(1, cores // 2)] * 2
