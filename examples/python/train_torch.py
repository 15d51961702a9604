"""A tiny training loop: ``framefeed.torch.VideoDataset`` shards the videos over a ``DataLoader``'s 2 workers,
each decoding its own files, and yields batches of clips as tensors (through DLPack, no copy) with each
sequence's label. A small 3D convolutional network learns to tell the videos' two labels apart.

Run: ``python examples/python/train_torch.py [video ...]`` (no argument: 4 copies of the built-in sample).
"""

import pathlib
import sys
import tempfile

import torch
from torch.utils.data import DataLoader

import framefeed as ff
from framefeed.torch import VideoDataset


def main(paths):
    dataset = VideoDataset(
        paths,
        sequence_length=8,
        batch_size=4,
        labels=[i % 2 for i in range(len(paths))],  # any object per video; here a class
        resize=(64, 48),
        dtype="float32_unit",
        layout="CFHW",  # (N, C, F, H, W), as 3D CNNs take it
    )
    # batch_size=None: the dataset's batches as they are. Persistent workers keep their decoders across epochs.
    loader = DataLoader(dataset, batch_size=None, num_workers=2, persistent_workers=True)
    model = torch.nn.Sequential(
        torch.nn.Conv3d(3, 8, kernel_size=3, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool3d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 2),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        dataset.set_epoch(epoch)  # a new order of the files; reaches the persistent workers
        steps, frames, loss_sum = 0, 0, 0.0
        for clips, info in loader:
            labels = torch.tensor(info["label"])  # one per sequence
            loss = torch.nn.functional.cross_entropy(model(clips), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
            frames += sum(info["valid_frames"])  # padded sequences say how many frames are real
            loss_sum += loss.item()
        print(f"epoch {epoch}: {steps} steps, {frames} real frames, {tuple(clips.shape)}, loss {loss_sum / steps:.3f}")


if __name__ == "__main__":  # the workers import this file: start only in the main process
    with tempfile.TemporaryDirectory() as tmp:
        files = sys.argv[1:]
        if not files:
            for i in range(4):
                files.append(str(pathlib.Path(tmp, f"video{i}.mp4")))
                pathlib.Path(files[-1]).write_bytes(ff.SAMPLE_MP4)
        main(files)
