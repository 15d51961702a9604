"""framefeed.ray on a local Ray cluster of three nodes (ray.cluster_utils.Cluster): every frame of every video
exactly once, in order per video, byte-identical to the single-process decode; bad files per `on_error`; a
decoding worker killed mid-run (whole files, and mid-segment); an actor's memory flat on a 9000-frame video;
long videos in segments giving one decode's rows, a damaged GOP failing only its segment. Skipped, with the reason printed,
where Ray is absent."""

from __future__ import annotations

import collections
import os
import pathlib
import shutil
import signal
import subprocess

import numpy as np
import pytest

from conftest import missing, require_module  # noqa: E402

ray = require_module("ray", "the framefeed.ray tests")
require_module("ray.data", "the framefeed.ray tests")

import framefeed as ff  # noqa: E402
import framefeed.ray as fr  # noqa: E402
from framefeed import _units  # noqa: E402
from conftest import FIXTURES, SHARED  # noqa: E402

CLIPS = ["h264.mp4", "vp9.webm", "h264.mkv", "mpeg4.avi", "hevc_10bit.mp4", "av1.mkv", "vp9_odd_129x129.webm"]


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    # Ray spills rows from a full object store to disk, and by default refuses to once the disk is 95% used: a
    # shared CI disk was, and the tests failed with OutOfDiskError. So each node's object store is 1 GiB of
    # /dev/shm, not cluster_utils' 150 MB (the little still spilled, about 85 MiB, is written while the disk has
    # room), and the refusal is set at a disk entirely full.
    store = 1 << 30
    c = Cluster(initialize_head=True,
                head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": store,
                                "_system_config": {"local_fs_capacity_threshold": 1.0}})
    for _ in range(2):
        c.add_node(num_cpus=1, object_store_memory=store)
    ray.init(address=c.address, log_to_driver=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    yield c
    ray.shutdown()
    c.shutdown()


def reference(path: pathlib.Path, sequence_length: int, position=None, **keywords) -> list:
    """(first_frame, valid_frames, frames) of every sequence, decoded in this process (at `position` in its
    dataset, as `read_videos` places it, for random clips and crops)."""
    inp = ff.VideoInput(sequence_length, 4, **keywords)
    inp.feed(path.read_bytes(), position=position)
    inp.close()
    host = [b if b.device == "cpu" else b.to_host() for b in inp]
    return [(s.first_frame, s.valid_frames, s.numpy().copy()) for b in host for s in b.sequences]


def corpus_files(tmp_path) -> list:
    files = [FIXTURES / n for n in CLIPS]
    if not (SHARED / "MANIFEST.json").is_file():
        missing("corpus", "../shared/videos is absent: only the fixtures were read")
    else:
        files += [p for p in sorted(SHARED.rglob("*")) if p.is_file() and p.suffix != ".json"
                  and "9000f" not in p.name and not p.name.startswith("corrupted")]
    return files


def rows_by_path(dataset) -> dict:
    by = collections.defaultdict(list)
    for row in dataset.iter_rows():
        by[row["path"]].append(row)
    return by


def test_every_sequence_exactly_once_in_order_and_byte_identical(cluster, tmp_path):
    files = corpus_files(tmp_path)
    by = rows_by_path(fr.read_videos(files, sequence_length=8, concurrency=3))
    assert set(by) == {str(f) for f in files}
    for f in files:
        rows = by[str(f)]
        want = reference(f, 8)
        assert [r["first_frame"] for r in rows] == [w[0] for w in want], f"{f.name}: order or duplicates"
        for row, (first, valid, frames) in zip(rows, want):
            assert row["valid_frames"] == valid and row["error"] is None
            assert np.array_equal(row["frames"], frames), f"{f.name}: frames from {first} differ"
            assert len(row["pts"]) == valid
            assert list(row["damaged"]) == [False] * valid, f"{f.name}: undamaged"
            assert (row["bit_depth"], row["dynamic_range"]) == (10 if "10bit" in f.name else 8, "sdr"), f.name


def test_by_default_a_long_file_among_short_ones_is_cut_for_the_pool(cluster, monkeypatch):
    # Auto's floor scaled down to the fixtures (300 frames in real use): 150 + 2 x 23 frames on 2 actors.
    monkeypatch.setattr(_units, "_AUTO_SHORTEST", 20)
    long, short = FIXTURES / "sampling_h264_open_gop.mp4", FIXTURES / "h264.mp4"
    by = rows_by_path(fr.read_videos([short, long, short], sequence_length=4, concurrency=2))
    segments = {tuple(r["segment"]) for r in by[str(long)]}
    assert len(segments) >= 3 and (0, -1) not in segments, segments
    assert {tuple(r["segment"]) for r in by[str(short)]} == {(0, -1)}
    rows = sorted(by[str(long)], key=lambda r: r["first_frame"])
    want = reference(long, 4)
    assert [r["first_frame"] for r in rows] == [w[0] for w in want], "every sequence once"
    assert all(np.array_equal(r["frames"], w[2]) for r, w in zip(rows, want))


def test_blocks_are_sized_to_the_smallest_object_store():
    mib = 1 << 20
    # 32 MiB (Ray's target if lower; None: none), held to an eighth of the smallest store, at least 1 MiB.
    assert fr._block_limit(None, []) == 32 * mib
    assert fr._block_limit(128 * mib, []) == 32 * mib
    assert fr._block_limit(16 * mib, []) == 16 * mib
    assert fr._block_limit(128 * mib, [150 * mib, 8 << 30]) == 150 * mib // 8  # cluster_utils' default stores
    assert fr._block_limit(None, [8 << 30, 0]) == 32 * mib  # a node that names no store does not count
    assert fr._block_limit(None, [4 * mib]) == mib
    # Rows a yield: as many as fit, at least one, at most 4.
    row = 8 * 1080 * 1920 * 3  # a full 1080p RGB sequence of 8 frames
    assert fr._rows_per_yield(row, 150 * mib // 8) == 1
    assert fr._rows_per_yield(row, 32 * mib) == 1
    assert fr._rows_per_yield(row, 128 * mib) == 2
    assert fr._rows_per_yield(8 * 3 * 224 * 224 * 4, 32 * mib) == 4  # a 224 crop in float32
    assert fr._rows_per_yield(0, 1) == 1
    for limit in (1, row // 2, row, 3 * row, 100 * row):
        n = fr._rows_per_yield(row, limit)
        assert 1 <= n <= 4 and (n == 1 or n * row <= limit) and (n == 4 or (n + 1) * row > limit)


def test_auto_yields_gather_the_sequences_that_fit_the_block_size_and_keep_every_row():
    clip = np.array([str(FIXTURES / "h264.mp4")], dtype=object)
    whole = list(fr.Decoder(4, sequences_per_block=4)({"path": clip}))
    assert [len(y["valid_frames"]) for y in whole] == [4, 2]
    rows = [(int(f), frames) for y in whole for f, frames in zip(y["first_frame"], y["frames"])]
    one_row = 4 * 64 * 96 * 3
    # Six sequences (the last of 3 frames), gathered up to 4 a yield while they fit.
    for limit, yields in ((None, [4, 2]), (1, [1] * 6), (2 * one_row, [2, 2, 2]), (3 * one_row - 1, [2, 2, 2]),
                          (3 * one_row, [3, 3])):
        parts = list(fr.Decoder(4, block_bytes=limit)({"path": clip}))
        assert [len(y["valid_frames"]) for y in parts] == yields, limit
        got = [(int(f), frames) for y in parts for f, frames in zip(y["first_frame"], y["frames"])]
        assert [f for f, _ in got] == [f for f, _ in rows]
        assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(got, rows))
        assert all(len(v) == len(y["valid_frames"]) for y in parts for v in y.values())
    with pytest.raises(ValueError, match="sequences_per_block is 0; allowed: 1 or more, or 'auto'"):
        fr.Decoder(4, sequences_per_block=0)
    with pytest.raises(ValueError, match="block_bytes is 0; allowed"):
        fr.read_videos([FIXTURES / "h264.mp4"], sequence_length=4, block_bytes=0)


def test_on_small_object_stores_the_dataset_gets_blocks_that_fit(cluster, monkeypatch):
    """On nodes with cluster_utils' 150 MiB stores, blocks of an eighth of that: the returned dataset's own
    target block size, not the global context's; on large stores, 32 MiB."""
    ctx = ray.data.DataContext.get_current()
    before = ctx.target_max_block_size
    monkeypatch.setattr(fr, "_object_stores", lambda: [150 << 20, 1 << 30])
    small = fr.read_videos([FIXTURES / "h264.mp4"], sequence_length=4, concurrency=1)
    assert small.context.target_max_block_size == (150 << 20) // 8
    assert ctx.target_max_block_size == before, "the global context is left alone"
    assert sum(r["valid_frames"] for r in small.iter_rows()) == 23
    monkeypatch.setattr(fr, "_object_stores", lambda: [8 << 30])
    large = fr.read_videos([FIXTURES / "h264.mp4"], sequence_length=4)
    assert large.context.target_max_block_size == min(before or (32 << 20), 32 << 20)
    # Given by hand, above the context's: the context is kept.
    kept = fr.read_videos([FIXTURES / "h264.mp4"], sequence_length=4, block_bytes=1 << 40)
    assert kept.context.target_max_block_size == before


def test_transforms_and_errors_per_on_error(cluster, tmp_path):
    corrupt = tmp_path / "corrupt.mp4"
    data = (FIXTURES / "h264.mp4").read_bytes()
    corrupt.write_bytes(data[: len(data) // 2])
    text = tmp_path / "notes.txt"
    text.write_bytes(b"not a video")
    good = FIXTURES / "vp9.webm"
    keywords = dict(resize_shorter=32, crop=24, crop_pos="random", seed=3, dtype="float16", layout="CFHW")
    # strict: a file cut short fails its video (by default it gives its frames and no error: test_damaged.py).
    by = rows_by_path(fr.read_videos([good, corrupt, text], sequence_length=4, concurrency=2, strict=True, **keywords))
    assert [r["error"] for r in by[str(good)]] == [None] * 6
    assert all(r["frames"].shape[:2] == (3, r["valid_frames"]) and r["frames"].dtype == np.float16 for r in by[str(good)])
    assert all(len(r["crop_window"]) == 4 for r in by[str(good)])
    for bad in (corrupt, text):
        errors = [r for r in by[str(bad)] if r["error"] is not None]
        assert len(errors) == 1 and errors[0]["valid_frames"] == 0, bad
    assert sum(r["valid_frames"] for r in by[str(corrupt)]) > 0  # the frames before the failure
    skipped = rows_by_path(fr.read_videos([good, text], sequence_length=4, on_error="skip"))
    assert set(skipped) == {str(good)} and "error" not in skipped[str(good)][0]
    with pytest.raises(Exception, match="not a recognised video container"):
        fr.read_videos([text], sequence_length=4, on_error="raise").materialize()


def test_directories_uris_and_files_gone_before_reading(cluster, tmp_path, monkeypatch):
    """Directories expand recursively in name order without hidden entries, `file://` URIs go through pyarrow's
    filesystems, every row names its file as it was spelled (local paths made absolute, for actors in other
    working directories), and a file that is gone by the time an actor reads it fails that one video per
    `on_error`."""
    (tmp_path / "clips" / "more").mkdir(parents=True)
    (tmp_path / "clips" / ".cache").mkdir()
    for name in ("b.webm", "more/a.mp4", ".hidden.mp4", ".cache/c.mp4"):
        shutil.copyfile(FIXTURES / ("vp9.webm" if name.endswith("webm") else "h264.mp4"), tmp_path / "clips" / name)
    gone = tmp_path / "gone.mp4"
    shutil.copyfile(FIXTURES / "h264.mp4", gone)
    uri = f"file://{tmp_path}/clips/"
    assert fr._list_files([str(tmp_path / "clips"), uri]) == [
        f"{tmp_path}/clips/b.webm", f"{tmp_path}/clips/more/a.mp4", f"{uri}b.webm", f"{uri}more/a.mp4"]
    monkeypatch.chdir(tmp_path)
    assert fr._list_files(["clips/more"]) == [f"{tmp_path}/clips/more/a.mp4"]
    dataset = fr.read_videos([uri, gone], sequence_length=8, concurrency=2)
    gone.unlink()  # listed when the dataset was made, read when it runs
    by = rows_by_path(dataset)
    assert set(by) == {f"{uri}b.webm", f"{uri}more/a.mp4", str(gone)}
    for name, clip in (("b.webm", "vp9.webm"), ("more/a.mp4", "h264.mp4")):
        want = reference(FIXTURES / clip, 8)
        rows = by[f"{uri}{name}"]
        assert [r["first_frame"] for r in rows] == [w[0] for w in want]
        assert all(np.array_equal(r["frames"], w[2]) for r, w in zip(rows, want))
    [error] = by[str(gone)]
    assert error["valid_frames"] == 0 and "cannot read the file" in error["error"], error["error"]
    with pytest.raises(FileNotFoundError, match="missing.mp4"):
        fr.read_videos([tmp_path / "missing.mp4"], sequence_length=8)


def decoder_pids() -> list:
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"MapBatches(Decoder)" in title:
                pids.append(int(entry.name))
    return pids


def rows_killing_a_decoder_at(dataset, at: int) -> collections.Counter:
    """How often each (path, first_frame) came, a decoding worker SIGKILLed after row `at`."""
    seen: collections.Counter = collections.Counter()
    killed = []
    for i, row in enumerate(dataset.iter_rows()):
        seen[(row["path"], row["first_frame"])] += 1
        if i == at and not killed:
            pids = decoder_pids()
            assert pids, "no decoding worker found"
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])
    assert killed
    return seen


def test_a_worker_killed_mid_run_loses_and_repeats_nothing(cluster, tmp_path):
    files = []
    for i in range(24):
        name = CLIPS[i % 3]
        path = tmp_path / f"{i:02d}_{name}"
        shutil.copyfile(FIXTURES / name, path)
        files.append(path)
    dataset = fr.read_videos(files, sequence_length=4, concurrency=2)
    seen = rows_killing_a_decoder_at(dataset, 20)
    want = {(str(f), first) for f in files for first in range(0, 23, 4)}
    assert set(seen) == want and set(seen.values()) == {1}


def test_an_actor_killed_mid_segment_redoes_it_without_duplicates(cluster, tmp_path):
    files = []
    for i in range(6):
        path = tmp_path / f"{i:02d}_long.mp4"
        shutil.copyfile(FIXTURES / "sampling_h264_open_gop.mp4", path)
        files.append(path)
    dataset = fr.read_videos(files, sequence_length=4, concurrency=2, segment_frames=40)
    seen = rows_killing_a_decoder_at(dataset, 30)
    want = {(str(f), first) for f in files for first in range(0, 150, 4)}
    assert set(seen) == want and set(seen.values()) == {1}


def rss_rows(paths: list) -> dict:
    """The decoding actor's own memory (KiB) and framefeed's output buffers allocated so far, at each row, by
    path, for `paths` decoded one after the other by one actor (16-frame sequences, 4 a yield)."""

    class Measured(fr.Decoder):
        def _rows(self, batch, name):
            rows = super()._rows(batch, name)
            status = pathlib.Path("/proc/self/status").read_text()
            # The actor's own memory: not the object store's shared pages it writes rows into (in VmRSS).
            rss = int(next(l.split()[1] for l in status.splitlines() if l.startswith("RssAnon:")))
            n = len(rows["first_frame"])
            rows["rss"] = np.array([rss] * n, dtype=np.int64)
            rows["buffers"] = np.array([self.input.buffer_allocations] * n, dtype=np.int64)
            return rows

    # Ray Data gathers an actor's yields into blocks of up to `target_max_block_size` (128 MiB) before it stores
    # them: it holds the yields' frames (views of framefeed's pooled batches, 56 MB each here) and then the block
    # built from them, so the actor's memory rose and fell by steps of 56 MB at random rows (up to 230 MB over
    # its settled level), as the timing went. With 1 MiB blocks each yield is stored as it comes, and what is
    # measured is the actor's own memory. (MALLOC_ARENA_MAX=1 takes glibc's per-thread arenas out, another
    # source of such steps.)
    ctx = ray.data.DataContext.get_current()
    block_size = ctx.target_max_block_size
    ctx.target_max_block_size = 1 << 20
    try:
        # One block, in this order: the actor decodes the warm-up video first.
        encoded = ray.data.from_items([{"bytes": p.read_bytes(), "path": str(p)} for p in paths],
                                      override_num_blocks=1)
        dataset = encoded.map_batches(Measured, fn_constructor_kwargs=dict(sequence_length=16, on_error="skip"),
                                      batch_size=1, batch_format="numpy", concurrency=1,
                                      runtime_env={"env_vars": {"MALLOC_ARENA_MAX": "1"}})
        rows: dict = collections.defaultdict(list)
        for row in dataset.iter_rows():
            rows[row["path"]].append((int(row["rss"]), int(row["buffers"])))
        return rows
    finally:
        ctx.target_max_block_size = block_size


@pytest.mark.needs("corpus")
def test_an_actors_memory_stays_flat_on_a_long_video(cluster, tmp_path):
    """The actor's memory grows over its first rows whatever the video (framefeed's batch pool, Ray's and
    Arrow's pools filling), then stays flat. One actor decodes a 3000-frame video, then the 9000-frame one: the
    long video's memory is compared with the same actor's once settled (the last third of the first video; two
    actors' levels differ by tens of MB from their start, so two actors are not compared)."""
    long = SHARED / "long_640x480_9000f.mp4"
    warm_up = tmp_path / "first3000.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(long), "-map", "0:v:0", "-c", "copy",
                    "-frames:v", "3000", str(warm_up)], check=True)
    rows = rss_rows([warm_up, long])
    warm, long_ = rows[str(warm_up)], rows[str(long)]
    assert (len(warm), len(long_)) == (188, 563)
    third = len(long_) // 3
    settled = [rss for rss, _ in warm[-len(warm) // 3:]]
    rss = [r for r, _ in long_]
    print(f"actor memory (MB): settled at most {max(settled) / 1024:.0f}, long video {np.median(rss) / 1024:.0f}, "
          f"long video's first third at most {max(rss[:third]) / 1024:.0f}, last third {max(rss[-third:]) / 1024:.0f}; "
          f"framefeed's batch buffers: {warm[-1][1]} after the first video, {long_[-1][1]} after the long one")
    # The pool may take one buffer more late in the warm-up or in the long video (seen at row 172 of 188: when Ray
    # holds a yield a little longer), a step of one batch (4 x 16 frames of 640x480, 56 MiB). Two batches are
    # allowed: a leak of 13 KB a frame (a frame is 900 KB) exceeds that over the 9000 frames, against the
    # settled actor and from the first third of the long video to the last.
    allowance = 2 * 4 * 16 * 640 * 480 * 3 // 1024
    assert np.median(rss) <= max(settled) + allowance, (max(settled), np.median(rss))
    assert max(rss[-third:]) <= max(rss[:third]) + allowance, (max(rss[:third]), max(rss[-third:]))


def test_gpu_actors_decode_like_the_single_process_gpu_decode(cluster):
    usable, why = ff.cuda_status()
    if not usable:
        missing("gpu", f"no usable GPU ({why}): the Ray GPU actor test did not run")
    cluster.add_node(num_cpus=1, num_gpus=1)
    clip = FIXTURES / "h264.mp4"
    keywords = dict(device="cuda", resize_shorter=32, crop=24, dtype="float16")
    by = rows_by_path(fr.read_videos([clip], sequence_length=4, num_gpus=1, concurrency=1, **keywords))
    want = reference(clip, 4, **keywords)
    assert [r["first_frame"] for r in by[str(clip)]] == [w[0] for w in want]
    for row, (_, valid, frames) in zip(by[str(clip)], want):
        assert row["valid_frames"] == valid and np.array_equal(row["frames"], frames)


def test_bad_settings_fail_at_once_with_the_operators_message(tmp_path):
    with pytest.raises(ValueError, match="sequence_length"):
        fr.read_videos([FIXTURES / "h264.mp4"], sequence_length=0)
    with pytest.raises(ValueError, match="on_error"):
        fr.read_videos([FIXTURES / "h264.mp4"], sequence_length=4, on_error="ignore")
    with pytest.raises(ValueError, match="on_error"):
        fr.Decoder(4, on_error="ignore")
    # A batch size over the operator's range fails here, not in the actors.
    with pytest.raises(ValueError, match="max_batch_size is 100000; allowed: 1 to 65536"):
        fr.read_videos([FIXTURES / "h264.mp4"], sequence_length=4, sequences_per_block=100_000)
    with pytest.raises(ValueError, match="block_bytes is 0; allowed"):
        fr.Decoder(4, block_bytes=0)


def test_a_row_per_clip_with_its_indices_the_same_clips_whichever_actor(cluster, tmp_path):
    files = [FIXTURES / n for n in ("h264.mp4", "vp9.webm", "h264.mkv")] + [FIXTURES / "sampling_h264_open_gop.mp4"]
    keywords = dict(clips=3, seed=4, crop=32, crop_pos=(0.5, 0.5))

    def clips(epoch: int, concurrency, segment_frames=1800) -> dict:
        by = rows_by_path(fr.read_videos(files, sequence_length=4, concurrency=concurrency, epoch=epoch,
                                         segment_frames=segment_frames, **keywords))
        return {p: sorted(list(r["indices"]) for r in rows) for p, rows in by.items()}

    first = clips(0, 2)
    assert set(first) == {str(f) for f in files} and all(len(c) == 3 for c in first.values())
    assert clips(0, (1, 3)) == first, "the clips do not depend on the actors (an autoscaling pool)"
    # The long file in segments of 20 frames: most hold no clip (a segment that gives nothing ends at once).
    assert clips(0, 2, segment_frames=20) == first, "the same clips, segment by segment"
    assert clips(1, 2) != first, "another epoch, other clips"
    # Each row's frames are the single-process decode's at its indices, placed as the listing places it.
    by = rows_by_path(fr.read_videos(files, sequence_length=4, concurrency=2, **keywords))
    for position, f in enumerate(files):
        inp = ff.VideoInput(4, 4, **keywords)
        inp.feed(f.read_bytes(), position=position)
        inp.close()
        want = [(s.indices, s.numpy().copy()) for b in inp for s in b.sequences]
        rows = by[str(f)]
        assert [list(r["indices"]) for r in rows] == [w[0] for w in want], f.name
        for row, (indices, frames) in zip(rows, want):
            assert np.array_equal(row["frames"], frames) and len(row["pts"]) == len(indices)


def test_a_segment_no_sequence_starts_in_gives_no_row_and_the_actor_goes_on():
    """Frames 145-149 of a 150-frame video hold no sequence start (sequences of 8 start every 8 frames): the
    Decoder gives no row for them and at once takes the next video (it used to wait for a batch forever)."""
    import threading

    clip = str(FIXTURES / "sampling_h264_open_gop.mp4")
    decoder = fr.Decoder(8)
    rows: list = []
    done = threading.Thread(target=lambda: rows.extend(decoder({
        "path": np.array([clip, clip], dtype=object), "segment": np.array([[145, 150], [136, 150]])})),
        daemon=True)
    done.start()
    done.join(timeout=60)
    assert not done.is_alive(), "the Decoder still waits for a batch of the empty segment"
    assert [list(r["first_frame"]) for r in rows] == [[136, 144]]
    assert [list(r["segment"][0]) for r in rows] == [[136, 150]]


def test_a_long_video_in_segments_gives_the_rows_of_one_decode(cluster, tmp_path):
    """Segments of one video over the actor pool (H.264 and HEVC with open GOPs, an edit list, VP9): the rows of
    one whole decode, none lost, none twice, each naming its segment; with a resize, a random crop and stride the
    same (a sequence's window comes from the seed, the video's place and its first frame)."""
    vp9 = tmp_path / "vp9_gop20.webm"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-frames:v", "90",
                    "-c:v", "libvpx-vp9", "-g", "20", "-keyint_min", "20", "-deadline", "realtime", "-cpu-used", "8",
                    "-pix_fmt", "yuv420p", str(vp9)], check=True)
    files = [FIXTURES / "sampling_h264_open_gop.mp4", FIXTURES / "sampling_hevc_open_gop.mp4",
             FIXTURES / "sampling_edit_list.mp4", vp9, FIXTURES / "h264.mp4",
             # A damaged start and a turned video: numbered and shown alike.
             FIXTURES / "cut_start.ts", FIXTURES / "rotated_90.mp4"]
    cut = {"sampling_h264_open_gop.mp4", "sampling_hevc_open_gop.mp4", "sampling_edit_list.mp4", vp9.name}
    # One row a yield, and several (the default, 4): the same rows.
    for keywords in ({"sequences_per_block": 1},
                     dict(stride=2, step=3, resize_shorter=32, crop=24, crop_pos="random", seed=5)):
        if "stride" in keywords:
            # A change of frame size: sampled, its sequences keep the sampling's grid in segments as whole (a plain
            # run starts its grid again at the change, as at a new video, which a segment cannot know of).
            files = files + [FIXTURES / "res_change.ts"]
        by = rows_by_path(fr.read_videos(files, sequence_length=4, concurrency=3, segment_frames=20, **keywords))
        keywords.pop("sequences_per_block", None)
        assert set(by) == {str(f) for f in files}
        for position, f in enumerate(files):
            # A sequence split at a change of frame size gives two rows, the second starting after sequences
            # that start before it: both sides in the order of (first frame, frames).
            rows = sorted(by[str(f)], key=lambda r: (r["first_frame"], r["valid_frames"]))
            want = sorted(reference(f, 4, position=position, **keywords), key=lambda w: (w[0], w[1]))
            assert [r["first_frame"] for r in rows] == [w[0] for w in want], f"{f.name}: lost or repeated"
            for row, (first, valid, frames) in zip(rows, want):
                assert row["valid_frames"] == valid and row["error"] is None
                assert np.array_equal(row["frames"], frames), f"{f.name}: frames from {first} differ"
                start, end = row["segment"]
                # (The part after a change of size of a sequence that starts in a segment is that segment's,
                # and may start past its end.)
                after_a_split = f.name == "res_change.ts" and valid < 4
                assert start <= first and (end == -1 or first < end or after_a_split), (f.name, first, row["segment"])
            if f.name in cut:
                assert len({tuple(r["segment"]) for r in rows}) >= 3, f"{f.name}: not cut"
            elif f.name in ("h264.mp4", "rotated_90.mp4"):  # 23 and 12 frames: whole
                assert {tuple(r["segment"]) for r in rows} == {(0, -1)}


def test_a_corrupt_gop_fails_only_its_segment(cluster, tmp_path):
    """With strict=True a segment whose GOP is damaged gives its error row naming its frames; the other segments'
    rows are whole."""
    src = FIXTURES / "sampling_h264_open_gop.mp4"
    data = bytearray(src.read_bytes())
    parts = ff.segments(bytes(data), 40)
    assert len(parts) >= 3
    # Damage the middle of the file's media data: one GOP's packets (mdat sits after the index here).
    mid = len(data) * 3 // 5
    data[mid : mid + 3000] = bytes(3000)
    bad = tmp_path / "damaged.mp4"
    bad.write_bytes(bytes(data))
    # By default the damage is reported on the rows (`damaged`), and no segment fails; strict=True fails the
    # damaged GOP's segment alone.
    lenient = rows_by_path(fr.read_videos([bad], sequence_length=4, concurrency=2, segment_frames=40))[str(bad)]
    assert all(r["error"] is None for r in lenient) and any(r["damaged"].any() for r in lenient)
    rows = rows_by_path(
        fr.read_videos([bad], sequence_length=4, concurrency=2, segment_frames=40, strict=True)
    )[str(bad)]
    errors = [r for r in rows if r["error"] is not None]
    good = [r for r in rows if r["error"] is None]
    assert errors, "the damaged GOP failed its segment"
    failed = {tuple(e["segment"]) for e in errors}
    whole = {tuple(r["segment"]) for r in good} - failed
    assert whole and whole | failed == set(map(tuple, parts)), (whole, failed, parts)
    # The undamaged segments gave every one of their sequences.
    want = [w[0] for w in reference(src, 4) if any(a <= w[0] < b for a, b in whole)]
    assert sorted(r["first_frame"] for r in good if tuple(r["segment"]) in whole) == want
    for e in errors:
        start, end = e["segment"]
        assert f"segment of frames {start} to {end}" in e["error"], e["error"]


def operator_sequences(path: pathlib.Path, length: int, **keywords) -> list:
    """Every sequence of `path` as VideoInput gives it, as arrays."""
    with ff.VideoInput(length, 1, **keywords) as inp:
        inp.feed(path.read_bytes())
        inp.close()
        return [seq.numpy() for batch in inp for seq in batch]


def test_uint16_rows_of_a_ten_bit_video_are_its_rgb48_levels(cluster):
    """``dtype="uint16"`` (issue 62): the rows of a 10-bit HDR file are uint16, the same levels VideoInput gives, and
    say the video's bit depth and dynamic range."""
    path = FIXTURES / "hdr_pq_hevc10.mp4"
    rows = rows_by_path(fr.read_videos([path], sequence_length=4, dtype="uint16"))[str(path)]
    want = operator_sequences(path, 4, dtype="uint16")
    assert [r["frames"].dtype for r in rows] == [np.uint16] * len(want)
    for row, frames in zip(rows, want):
        np.testing.assert_array_equal(row["frames"], frames)
        assert (row["bit_depth"], row["dynamic_range"]) == (10, "pq")


def test_tonemapped_rows_are_the_operators_sdr_frames(cluster):
    """``tonemap="hable"`` (issue 62) on Ray: the rows hold the same SDR frames VideoInput gives."""
    path = FIXTURES / "tonemap_pq_hevc10.mp4"
    rows = rows_by_path(fr.read_videos([path], sequence_length=2, tonemap="hable"))[str(path)]
    want = operator_sequences(path, 2, tonemap="hable")
    assert len(rows) == len(want)
    for row, frames in zip(rows, want):
        np.testing.assert_array_equal(row["frames"], frames)


def test_rows_carry_each_sequences_audio(cluster, tmp_path):
    # audio=True (issue 63): each row has the sound played with its frames, as VideoInput gives it.
    from test_audio import _clip

    path = _clip(tmp_path)
    keywords = dict(audio=True, audio_sample_rate=16000, audio_channels=1)
    rows = list(fr.read_videos([path], sequence_length=8, concurrency=1, **keywords).iter_rows())
    inp = ff.VideoInput(8, 4, **keywords)
    inp.feed_file(str(path))
    inp.close()
    want = [s.audio for b in inp for s in b.sequences]
    assert len(rows) == len(want) == 8
    for row, audio in zip(rows, want):
        assert np.array_equal(row["audio"], audio.data)
        assert row["audio_pts"] == audio.pts_seconds and row["audio_sample_rate"] == 16000
