"""framefeed: a streaming video input operator.

Feed encoded videos (whole buffers, or live streams chunk by chunk); poll batches of ``batch_size`` sequences
of ``sequence_length`` consecutive frames, decoded incrementally by FFmpeg (or NVDEC) in a native thread. Batches
view their pooled buffer without copying: ``batch.numpy()``, ``np.from_dlpack(batch)``, ``torch.from_dlpack(batch)``.

>>> import framefeed as ff
>>> inp = ff.VideoInput(16, 2, last_sequence_policy="pad")
>>> inp.feed(ff.SAMPLE_MP4, label="sample.mp4")
0
>>> inp.close()
>>> [batch.numpy().shape for batch in inp]
[(2, 16, 240, 320, 3), (2, 16, 240, 320, 3)]
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import numpy as np

from ._errors import (
    ClosedError,
    DeviceError,
    FramefeedError,
    NoDataError,
    NotReadyError,
    OutOfMemoryError,
    TimeoutError,
    VideoError,
)
from ._framefeed import SAMPLE_MP4, Batch, FileList, LiveVideo, Sequence, __version__, cuda_status, probe
from ._framefeed import VideoInput as _NativeVideoInput

__all__ = [
    "VideoInput",
    "LiveVideo",
    "Batch",
    "Sequence",
    "FileList",
    "probe",
    "cuda_status",
    "SAMPLE_MP4",
    "FramefeedError",
    "VideoError",
    "NoDataError",
    "NotReadyError",
    "TimeoutError",
    "ClosedError",
    "DeviceError",
    "OutOfMemoryError",
    "__version__",
]


class VideoInput(_NativeVideoInput):
    """The operator. See the package README for every keyword; ``dtype`` also takes NumPy dtypes."""

    def __new__(cls, sequence_length: int, batch_size: int, **kwargs: Any) -> "VideoInput":
        dtype = kwargs.get("dtype")
        if dtype is not None and not isinstance(dtype, str):
            kwargs["dtype"] = np.dtype(dtype).name
        return super().__new__(cls, sequence_length, batch_size, **kwargs)

    async def batches(self) -> AsyncIterator[Batch]:
        """Every batch, as an async iterator (``async for batch in inp.batches()``), until close and the last
        batch. A failed video raises ``VideoError`` out of the loop; iterate again to go on."""
        while True:
            batch = await self.next_batch_async()
            if batch is None:
                return
            yield batch

    def __enter__(self) -> "VideoInput":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
