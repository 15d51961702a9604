"""framefeed's exceptions (``framefeed.exceptions``): one base class, :class:`FramefeedError`, and a class per way
things fail. Every one has ``code``, the same string the service's JSON errors carry.

The native module raises these classes (it imports them from here), so ``except framefeed.FramefeedError``
catches everything framefeed raises except ``ValueError`` for bad settings and ``TypeError`` for wrong
argument types.
"""

from __future__ import annotations

import builtins
from typing import Optional, Union

__all__ = [
    "FramefeedError",
    "VideoError",
    "NoDataError",
    "NotReadyError",
    "FramefeedTimeoutError",
    "ClosedError",
    "DeviceError",
    "OutOfMemoryError",
]


class FramefeedError(Exception):
    """The base of every framefeed exception.

    Attributes:
        code: a short stable name for the failure, the same string the service's JSON errors carry
            (``'not_a_video'``, ``'corrupt'``, ``'no_video_stream'``, ``'closed'``, ``'timeout'``...).
            ``framefeed.ERROR_CODES`` lists them all.

    Args:
        message (str): What went wrong. Default ``""``.
        code (str): The error code. Default ``"internal"``.
    """

    def __init__(self, message: str = "", code: str = "internal") -> None:
        super().__init__(message)
        self.code = code


class VideoError(FramefeedError):
    """One video failed (after its decoded batches were delivered); the next poll goes on with the next video.

    Attributes:
        video_id: the id ``feed`` returned for the video.
        label: the label it was fed with (``str``, ``int`` or ``None``).
        reason: why it failed, in words.
        code: a short stable name for the failure, as the service names it: ``'empty'``, ``'not_a_video'``,
            ``'no_video_stream'``, ``'unsupported_codec'``, ``'frame_too_large'``, ``'no_frames'``,
            ``'corrupt'``, ``'aborted'``, ``'stalled'``, ``'moov_at_end'``, ``'over_memory_budget'``...
        kind: the same as ``code`` (its name before 0.x; kept for compatibility).

    Args:
        message (str): What went wrong.
        video_id (int): The video's id. Default -1 (unknown).
        label (str | int | None): The video's label. Default ``None``.
        reason (str): Why it failed, in words. Default ``""``.
        code (str): The error code. Default ``"decode_failed"``.
        kind (str | None): The error code by its older name; wins over ``code`` when given. Default ``None``.
    """

    def __init__(
        self,
        message: str,
        video_id: int = -1,
        label: Optional[Union[str, int]] = None,
        reason: str = "",
        code: str = "decode_failed",
        kind: Optional[str] = None,
    ) -> None:
        super().__init__(message, kind or code)
        self.video_id = video_id
        self.label = label
        self.reason = reason
        self.kind = self.code


class NoDataError(FramefeedError):
    """A non-blocking poll (``blocking=False``) found nothing fed and nothing ready."""


class NotReadyError(FramefeedError):
    """``try_next_batch`` found no batch ready yet, though videos are being decoded."""


class FramefeedTimeoutError(FramefeedError, builtins.TimeoutError):
    """``next_batch(timeout=...)`` waited that long without a batch (also a ``builtins.TimeoutError``)."""


TimeoutError = FramefeedTimeoutError  # noqa: A001 (its first name; not in `__all__`, so a star import keeps the builtin)


class ClosedError(FramefeedError):
    """The input is closed (a feed after ``close()``), or a live video no longer takes data."""


class DeviceError(FramefeedError):
    """A GPU was asked for but cannot be used, or a CUDA call failed."""


class OutOfMemoryError(FramefeedError, MemoryError):
    """Memory for a copy could not be allocated."""
