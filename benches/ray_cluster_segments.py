#!/usr/bin/env python3
"""Issue 33: one long video's segments over a 3-node local Ray cluster (`ray.cluster_utils.Cluster`, one CPU a
node, on this machine): which node decoded each segment, and that the rows are those of one decode.

The pipeline is `framefeed.ray.read_videos`' own (the same segment rows, one block each, into `Decoder` actors),
with a `Decoder` that also names the node it runs on.

    pip install './python[ray]' && python3 benches/ray_cluster_segments.py [VIDEO] [SEGMENT_FRAMES=300]
    (default VIDEO: target/bench-clips/segments/long_60s.mp4, made by benches/ray_segments.py)
"""

from __future__ import annotations

import collections
import pathlib
import sys
import time
from typing import Any, Dict, Iterator

import numpy as np
import ray
import ray.data
from ray.cluster_utils import Cluster

import framefeed.ray as fr

ROOT = pathlib.Path(__file__).resolve().parents[1]


class NodeDecoder(fr.Decoder):
    """The reader's actor, each row also naming the node it was decoded on."""

    def __call__(self, batch: Dict[str, np.ndarray]) -> Iterator[Dict[str, Any]]:
        node = ray.get_runtime_context().get_node_id()
        for rows in super().__call__(batch):
            rows["node"] = np.array([node] * len(rows["first_frame"]), dtype=object)
            yield rows


def main() -> None:
    video = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/bench-clips/segments/long_60s.mp4")
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    for _ in range(2):
        cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    start = time.monotonic()
    items = fr._segment_rows([video], every)
    dataset = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
        NodeDecoder,
        fn_constructor_kwargs=dict(sequence_length=8, resize_shorter=256, crop=224, dtype="float32",
                                   layout="CFHW"),
        batch_size=1,
        batch_format="numpy",
        concurrency=3,
        num_cpus=1,
    )
    nodes: Dict[tuple, set] = collections.defaultdict(set)
    firsts = []
    for row in dataset.iter_rows():
        nodes[tuple(row["segment"])].add(row["node"][:8])
        firsts.append(row["first_frame"])
    seconds = time.monotonic() - start
    names = {n: f"node {i}" for i, n in enumerate(sorted({n for s in nodes.values() for n in s}))}
    print(f"{video}: {len(items)} segments of >= {every} frames, {len(firsts)} rows in {seconds:.1f} s")
    print("| segment (frames) | decoded on |")
    print("|---|---|")
    for segment in sorted(nodes):
        print(f"| {segment[0]}-{segment[1]} | {', '.join(names[n] for n in sorted(nodes[segment]))} |")
    print(f"nodes used: {len(names)} of 3; rows once each: {sorted(firsts) == list(range(0, max(firsts) + 1, 8))}")
    ray.shutdown()
    cluster.shutdown()


if __name__ == "__main__":
    main()
