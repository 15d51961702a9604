"""decord 0.6's ``AudioReader`` and ``AVReader`` on framefeed: the samples are the ``ffmpeg`` CLI's (decoded and
resampled by the same libraries), from any container with audio; the frames are framefeed's (see ``VideoReader``).

Where decord is wrong, this is right: ``add_padding`` adds the padding's seconds to ``duration()`` (decord adds
samples times the rate), and with ``sample_rate=-1`` ``sample_rate`` is the stream's (decord keeps -1, so its
``AVReader`` cannot map times to samples).
"""

from __future__ import annotations

import logging
import os
from typing import Any, List, Tuple, Union

import numpy as np

from ... import decode_audio as _decode_audio
from ...exceptions import FramefeedError
from . import bridge
from .base import DECORDError
from .ndarray import DECORDContext, cpu

__all__ = ["AudioReader", "AVReader"]

_log = logging.getLogger("framefeed.compat.decord")


class _Shape(tuple):  # type: ignore[type-arg]
    """``(channels, samples)``: decord's tests read ``ar.shape`` as a tuple, its docs call ``ar.shape()``; both
    work."""

    def __call__(self) -> Tuple[int, int]:
        return (int(self[0]), int(self[1]))


def _source(uri: Any) -> Any:
    """A path as framefeed reads it, or a file object's bytes."""
    if hasattr(uri, "read"):
        return uri.read()
    return os.fspath(uri)


def _indices(indices: Any, n: int) -> np.ndarray:
    """decord's index check: negative from the end; ``IndexError`` out of bounds."""
    out = np.array(indices.tolist() if hasattr(indices, "tolist") else indices, dtype=np.int64).reshape(-1)
    out[out < 0] += n
    if not (out >= 0).all():
        raise IndexError(f"Invalid negative indices: {out[out < 0] - n}")
    if not (out < n).all():
        raise IndexError(f"Out of bound indices: {out[out >= n]}")
    return out


def _index(idx: int, n: int) -> int:
    """decord's check of one index: negative from the end; ``IndexError`` out of bounds."""
    if idx < 0:
        idx += n
    if not 0 <= idx < n:
        raise IndexError(f"Index: {idx} out of bound: {n}")
    return idx


class AudioReader:
    """decord's ``AudioReader``: the whole audio stream of ``uri`` (a path or a binary file object), decoded at
    once, as (channels, samples) float32 in [-1, 1]; ``sample_rate`` (-1: the stream's) and ``mono`` (``True``:
    mixed down to one channel, as ``ffmpeg -ac 1``).

    Args:
        uri (str | os.PathLike | BinaryIO): A path or a binary file object.
        ctx (DECORDContext): Accepted as decord takes it; audio is decoded on the CPU. Default ``cpu(0)``.
        sample_rate (int): Samples a second. Default -1: the stream's.
        mono (bool): ``True`` (default): mixed down to one channel; ``False``: the stream's channels.

    Raises:
        DECORDError: A file without audio, or one that cannot be read.
    """

    def __init__(self, uri: Any, ctx: DECORDContext = cpu(0), sample_rate: int = -1, mono: bool = True) -> None:
        try:
            samples = _decode_audio(
                _source(uri),
                sample_rate=sample_rate if sample_rate > 0 else None,
                channels=1 if mono else None,
            )
        except (FramefeedError, ValueError, OSError) as error:
            raise DECORDError(f"Error reading {uri}: {error}") from error
        self._ctx = ctx
        self._array: np.ndarray = samples.data
        self.sample_rate: int = samples.sample_rate
        self._start = samples.pts_seconds
        self._duration = samples.duration_seconds

    @property
    def shape(self) -> _Shape:
        """``(channels, samples)``; also callable, as decord's docs write it."""
        return _Shape(self._array.shape)

    def __len__(self) -> int:
        """Samples a channel."""
        return int(self._array.shape[1])

    def __getitem__(self, idx: Union[int, slice]) -> Any:
        """Sample ``idx`` of every channel (C,), or a slice of samples (C, S)."""
        if isinstance(idx, slice):
            return self.get_batch(range(*idx.indices(len(self))))
        return bridge.convert(np.ascontiguousarray(self._array[:, _index(idx, len(self))]))

    def get_batch(self, indices: Any) -> Any:
        """The samples at these indices.

        Args:
            indices (list[int] | numpy.ndarray | range): Sample indices (negative from the end).

        Returns:
            The samples of every channel, (C, S), as the bridge's type.
        """
        picked = self._array[:, _indices(indices, len(self))]
        return bridge.convert(np.ascontiguousarray(picked))

    def duration(self) -> float:
        """Seconds the samples play.

        Returns:
            The duration in seconds.
        """
        return float(self._duration)

    def _padding(self) -> int:
        return max(0, round(self._start * self.sample_rate))

    def add_padding(self) -> int:
        """Prepends the silence from time 0 to the audio's first sample (its stream's start time), so that
        sample ``k`` plays at ``k / sample_rate``.

        Returns:
            How many samples were added.
        """
        padding = self._padding()
        if padding:
            self._array = np.pad(self._array, ((0, 0), (padding, 0)))
            self._duration += padding / self.sample_rate
            self._start -= padding / self.sample_rate
        return padding

    def get_info(self) -> None:
        """Logs the audio's shape, rate, start and duration (decord prints its stream's)."""
        channels, samples = self.shape
        message = (
            f"audio: {channels} channels, {samples} samples at {self.sample_rate} Hz, "
            f"from {self._start:.6f} s, {self._duration:.6f} s"
        )
        _log.info(message)
        print(message)

    def _time_to_sample(self, timestamp: float) -> int:
        """decord's rule from a time to a sample index: ``ceil(t * sample_rate)``."""
        return int(np.ceil(timestamp * self.sample_rate))


class AVReader:
    """decord's ``AVReader``: ``len`` the video's frames; ``av[i]`` and ``get_batch(indices)`` give each frame's
    audio (the samples from its start to its end, as decord cuts them: the audio padded to start at time 0,
    times to samples by ``ceil(t * sample_rate)``, consecutive frames' audio continuous) with the frames.

    Args:
        uri (str | os.PathLike | BinaryIO): A path or a binary file object.
        ctx (DECORDContext): Where the frames are decoded, as for :class:`VideoReader`. Default ``cpu(0)``.
        sample_rate (int): Audio samples a second. Default 44100; -1: the stream's.
        mono (bool): ``True`` (default): audio mixed down to one channel.
        width (int): As for :class:`VideoReader`. Default -1.
        height (int): As for :class:`VideoReader`. Default -1.
        num_threads (int): As for :class:`VideoReader`. Default 0.
        fault_tol (int): As for :class:`VideoReader` (no effect). Default -1.

    Raises:
        DECORDError: The file cannot be read, or has no audio.
    """

    def __init__(
        self,
        uri: Any,
        ctx: DECORDContext = cpu(0),
        sample_rate: int = 44100,
        mono: bool = True,
        width: int = -1,
        height: int = -1,
        num_threads: int = 0,
        fault_tol: int = -1,
    ) -> None:
        from . import VideoReader

        if hasattr(uri, "read"):
            uri = uri.read()
        self._audio = AudioReader(uri, ctx, sample_rate, mono)
        self._audio.add_padding()
        self._video = VideoReader(uri, ctx, width, height, num_threads, fault_tol)

    def __len__(self) -> int:
        """The video's frames."""
        return len(self._video)

    def _span(self, idx: int, after: Any = None) -> Tuple[int, int]:
        start, end = self._video.get_frame_timestamp(idx)
        first = after if after is not None else self._audio._time_to_sample(float(start))
        return first, self._audio._time_to_sample(float(end))

    def __getitem__(self, idx: Union[int, slice]) -> Tuple[Any, Any]:
        """Frame ``idx``'s audio (C, S) and the frame; a slice as :meth:`get_batch`."""
        if isinstance(idx, slice):
            return self.get_batch(range(*idx.indices(len(self))))
        idx = _index(idx, len(self))
        first, last = self._span(idx)
        return self._audio[first:last], self._video[idx]

    def get_batch(self, indices: Any) -> Tuple[List[Any], Any]:
        """Frames with their audio.

        Args:
            indices (list[int] | numpy.ndarray | range): Display indices (negative from the end).

        Returns:
            ``(audio, frames)``: each frame's audio (a list of (C, S)) and the frames (N, H, W, 3).
        """
        picked = _indices(indices, len(self))
        audio: List[Any] = []
        previous = None
        for idx in picked.tolist():
            # Consecutive frames: the audio goes on from where the previous frame's ended.
            after = previous[1] if previous is not None and idx == previous[0] + 1 else None
            first, last = self._span(idx, after)
            audio.append(self._audio[first:last])
            previous = (idx, last)
        return audio, self._video.get_batch(picked)
