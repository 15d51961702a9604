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

from typing import TYPE_CHECKING, Any, AsyncIterator, List, Optional, Tuple, Union

import numpy as np

from . import exceptions, types
from .exceptions import (
    ClosedError,
    DeviceError,
    FramefeedError,
    FramefeedTimeoutError,
    NoDataError,
    NotReadyError,
    OutOfMemoryError,
    TimeoutError,
    VideoError,
)
from .types import (
    ClipSampler,
    CropPosition,
    DType,
    Interpolation,
    LastSequencePolicy,
    Layout,
    NvdecDriver,
    OutOfBounds,
    ResizeMode,
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
    "FramefeedTimeoutError",
    "ClosedError",
    "DeviceError",
    "OutOfMemoryError",
    "exceptions",
    "types",
    "__version__",
]
# `TimeoutError` (the same class as `FramefeedTimeoutError`) stays an attribute, left out of `__all__` so that a
# star import does not shadow the builtin.


class VideoInput(_NativeVideoInput):
    """The operator. See the package README for every keyword; ``dtype`` also takes NumPy dtypes."""

    if TYPE_CHECKING:
        # For checkers: the native signature (`_framefeed.pyi`), every keyword typed; `dtype` also takes NumPy
        # dtypes. `tests/test_typing.py` holds the two lists of keywords equal.
        def __new__(
            cls,
            sequence_length: int,
            batch_size: int,
            *,
            last_sequence_policy: LastSequencePolicy = "partial",
            blocking: bool = True,
            decoder_threads: Optional[int] = None,
            prefetch_batches: int = 1,
            device: str = "cpu",
            cpu_fallback: bool = True,
            nvdec_driver: NvdecDriver = "direct",
            resize: Optional[Tuple[int, int]] = None,
            resize_shorter: Optional[int] = None,
            resize_mode: ResizeMode = "exact",
            interpolation: Interpolation = "bilinear",
            crop: Optional[Union[int, Tuple[int, int]]] = None,
            crop_pos: Optional[CropPosition] = None,
            out_of_bounds: OutOfBounds = "error",
            fill: Tuple[float, float, float] = ...,
            seed: Optional[int] = None,
            dtype: Union[DType, "np.dtype[Any]", type] = "uint8",
            normalize: Optional[Tuple[Tuple[float, float, float], Tuple[float, float, float]]] = None,
            layout: Layout = "FHWC",
            pack: bool = False,
            huge_pages: bool = False,
            low_latency: bool = False,
            max_queued: Optional[Tuple[int, int]] = None,
            max_batch_bytes: Optional[int] = None,
            max_container_samples: Optional[int] = None,
            live_buffer_bytes: Optional[int] = None,
            stall_timeout: Optional[float] = None,
            stride: Optional[int] = None,
            step: Optional[int] = None,
            clips: Optional[int] = None,
            clip_sampler: ClipSampler = "random",
            fps: Optional[float] = None,
            start: Optional[float] = None,
            end: Optional[float] = None,
            indices: Optional[List[int]] = None,
    ) -> "VideoInput": ...

    else:

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
