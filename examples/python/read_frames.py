"""Reading frames into NumPy: random access with ``VideoReader`` (a dataset's ``__getitem__``), and a stream of
batches with ``VideoInput`` (every frame, in sequences). Both give NumPy views of framefeed's buffers, no copy.

Run: ``python examples/python/read_frames.py [video]`` (no argument: the built-in sample, 60 frames of 320x240).
"""

import sys

import numpy as np

import framefeed as ff

# A path, a URL, bytes or a file object; here the sample's bytes when no path is given.
source = sys.argv[1] if len(sys.argv) > 1 else ff.SAMPLE_MP4

# Random access: opening indexes the video (no frame decoded); each read decodes only the GOPs it needs.
reader = ff.VideoReader(source)
meta = reader.metadata
print(f"{meta.num_frames} frames of {meta.width}x{meta.height} at {meta.average_fps:.2f} fps, {meta.codec}")
frame = reader[10]  # (H, W, 3) uint8
clip = reader[0:32:4]  # every 4th of the first 32 frames: (8, H, W, 3)
print(f"frame 10: {frame.shape} {frame.dtype}; reader[0:32:4]: {clip.shape}")
last = len(reader) - 1
frames = reader.get_frames_at([last, 0, 0, last // 2])  # any order, repeats allowed
print(f"frames {frames.indices} at {[round(t, 3) for t in frames.pts_seconds]} s: {frames.data.shape}")
shown = reader.get_frames_played_in_range(0.5, 0.6)  # by time: the frames shown in [0.5 s, 0.6 s)
print(f"shown in [0.5 s, 0.6 s): {shown.indices}")

# A stream of batches: sequences of 16 frames, 2 a batch, the last padded with zero frames; resized and as
# floats in [0, 1], as a model takes them.
inp = ff.VideoInput(16, 2, last_sequence_policy="pad", resize=(160, 120), dtype="float32_unit")
if isinstance(source, str):
    inp.feed_file(source)  # read from disk as it is decoded, never whole in memory
else:
    inp.feed(source, label="sample.mp4")
inp.close()  # no more videos: the loop ends after the last batch
real = 0
for batch in inp:
    array = batch.numpy()  # (N, F, H, W, 3), a view of the batch's buffer
    valid = [s.valid_frames for s in batch.sequences]  # real frames in each sequence; the rest is padding
    real += sum(valid)
    print(f"batch {batch.index}: {array.shape} {array.dtype}, real frames {valid}, mean {float(np.mean(array)):.3f}")
print(f"total: {real} frames")
