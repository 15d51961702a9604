"""Distributed data parallel training on CPUs: 2 processes (started by ``torch.multiprocessing.spawn``, as
``torchrun`` would start them) join a ``gloo`` process group; each makes its ``VideoDataset`` after joining, so
the dataset finds its rank there and reads its own, even share of the videos (as ``DistributedSampler`` does).

Run: ``python examples/python/ddp.py [video ...]`` (no argument: 4 copies of the built-in sample). Under
``torchrun --nproc-per-node 2``, call ``run`` with the rank and world size from ``RANK`` and ``WORLD_SIZE``.
"""

import pathlib
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

import framefeed as ff
from framefeed.torch import VideoDataset


def run(rank, world_size, port, paths):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    try:
        # Made after init_process_group: its rank and world size come from the group.
        dataset = VideoDataset(paths, sequence_length=8, batch_size=4, resize=(32, 24), dtype="float32_unit",
                               layout="CFHW", labels=[i % 2 for i in range(len(paths))])
        assert (dataset.rank, dataset.world_size) == (rank, world_size)
        model = DistributedDataParallel(torch.nn.Sequential(
            torch.nn.Conv3d(3, 4, 3, padding=1), torch.nn.AdaptiveAvgPool3d(1), torch.nn.Flatten(),
            torch.nn.Linear(4, 2)))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = DataLoader(dataset, batch_size=None)  # add num_workers=N for decoding workers per rank
        steps, seen = 0, set()
        for clips, info in loader:
            loss = torch.nn.functional.cross_entropy(model(clips), torch.tensor(info["label"]))
            optimizer.zero_grad()
            loss.backward()  # DDP averages the gradients across the ranks here
            optimizer.step()
            steps += 1
            seen.update(pathlib.Path(p).name for p in info["path"])
        shares = [None] * world_size
        dist.all_gather_object(shares, (steps, sorted(seen)))  # what each rank read, gathered on every rank
        if rank == 0:
            for r, (n, names) in enumerate(shares):
                print(f"rank {r}: {n} steps on {names}")
            print(f"total: {sum(n for n, _ in shares)} steps over {world_size} ranks")
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        files = sys.argv[1:]
        if not files:
            for i in range(4):
                files.append(str(pathlib.Path(tmp, f"video{i}.mp4")))
                pathlib.Path(files[-1]).write_bytes(ff.SAMPLE_MP4)
        with socket.socket() as s:  # a free port for the group's rendezvous
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mp.spawn(run, args=(2, port, files), nprocs=2, join=True)
