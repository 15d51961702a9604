"""Coming from decord: ``import framefeed.compat.decord as decord`` runs decord 0.6 code unchanged (decord itself
need not be installed). Where decord is wrong, it is right: phone videos come out upright, frames are the ones
the ``ffmpeg`` CLI shows at each index, 10-bit video keeps its colours.

Run: ``python examples/python/from_decord.py [video]`` (no argument: the built-in sample, 60 frames of 320x240).
"""

import pathlib
import sys
import tempfile

import numpy as np

import framefeed as ff
import framefeed.compat.decord as decord

with tempfile.TemporaryDirectory() as tmp:
    path = sys.argv[1] if len(sys.argv) > 1 else str(pathlib.Path(tmp, "sample.mp4"))
    if len(sys.argv) == 1:
        pathlib.Path(path).write_bytes(ff.SAMPLE_MP4)

    # As decord: a context, and a resize to decord's own pixels (width/height).
    vr = decord.VideoReader(path, ctx=decord.cpu(0), width=160, height=120)
    print(f"{len(vr)} frames at {vr.get_avg_fps():.2f} fps, keyframes {vr.get_key_indices()}")
    frame = vr[0].asnumpy()  # an NDArray, as decord's; .asnumpy() for NumPy
    batch = vr.get_batch([0, 10, 20, 30]).asnumpy()
    print(f"vr[0]: {frame.shape}; get_batch([0, 10, 20, 30]): {batch.shape}")
    print(f"timestamps of frames 0-2: {np.round(vr.get_frame_timestamp(range(3)).astype(float), 3).tolist()}")
    vr.seek(30)  # sequential reading from frame 30
    print(f"after seek(30), next(): {vr.next().shape}")
    try:
        vr[len(vr)]
    except IndexError as e:  # an index out of range raises IndexError, as decord's does
        print(f"vr[{len(vr)}]: IndexError ({e})")

    # The bridges: "native" (NDArray, the default), "numpy", "torch" (where torch is installed).
    decord.bridge.set_bridge("numpy")
    print(f"numpy bridge: {type(vr.get_batch([1, 2])).__name__}")
