"""Ray Data: ``framefeed.ray.read_videos`` gives a dataset with a row per sequence, decoded by a pool of actors
(each reads the files it decodes, so on a cluster they must be on storage every node reaches). Here a local Ray
started by this script, 2 actors, and a few videos.

Run: ``python examples/python/ray_data.py [video ...]`` (no argument: 4 copies of the built-in sample).
"""

import collections
import pathlib
import sys
import tempfile

import ray

import framefeed as ff
import framefeed.ray

ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)  # or ray.init(address="auto") on a cluster
ray.data.DataContext.get_current().enable_progress_bars = False

with tempfile.TemporaryDirectory() as tmp:
    files = sys.argv[1:]
    if not files:
        for i in range(4):
            files.append(str(pathlib.Path(tmp, f"video{i}.mp4")))
            pathlib.Path(files[-1]).write_bytes(ff.SAMPLE_MP4)

    # Paths, directories or URIs (s3://...). The transform keywords are VideoInput's.
    dataset = framefeed.ray.read_videos(files, sequence_length=8, resize=(64, 48), concurrency=2)
    rows = collections.Counter()
    frames = 0
    for batch in dataset.iter_batches(batch_size=8, batch_format="numpy"):
        # Columns: frames, valid_frames, path, first_frame, indices, pts, ... and error (None unless it failed).
        for path, valid in zip(batch["path"], batch["valid_frames"]):
            rows[pathlib.Path(path).name] += 1
            frames += int(valid)
    for name, count in sorted(rows.items()):
        print(f"{name}: {count} sequences")
    print(f"total: {sum(rows.values())} sequences, {frames} frames")
ray.shutdown()
