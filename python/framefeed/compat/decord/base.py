"""decord's error type, where decord code imports it from."""

from __future__ import annotations

from ...exceptions import FramefeedError

__all__ = ["DECORDError"]


class DECORDError(FramefeedError):
    """What decord raises for a video it cannot open or read (also a :class:`framefeed.FramefeedError`)."""
