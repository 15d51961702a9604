"""decord's array type: a read's frames, viewed without a copy."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

__all__ = ["NDArray", "cpu", "gpu", "DECORDContext"]


class DECORDContext:
    """Where decord decodes: ``cpu(n)`` or ``gpu(n)`` (NVDEC on GPU n, in a framefeed build with CUDA).

    Args:
        device_type (str): ``"cpu"`` or ``"gpu"``.
        device_id (int): The device's number. Default 0.
    """

    def __init__(self, device_type: str, device_id: int = 0) -> None:
        self.device_type = device_type
        self.device_id = device_id

    @property
    def device(self) -> str:
        """framefeed's name for it."""
        return "cpu" if self.device_type == "cpu" else f"cuda:{self.device_id}"

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DECORDContext) and (other.device_type, other.device_id) == (
            self.device_type,
            self.device_id,
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))


def cpu(dev_id: int = 0) -> DECORDContext:
    """Decode on the CPU.

    Args:
        dev_id (int): Accepted as decord takes it. Default 0.

    Returns:
        The :class:`DECORDContext`.
    """
    return DECORDContext("cpu", dev_id)


def gpu(dev_id: int = 0) -> DECORDContext:
    """Decode on a GPU (NVDEC).

    Args:
        dev_id (int): The GPU's number. Default 0.

    Returns:
        The :class:`DECORDContext`.
    """
    return DECORDContext("gpu", dev_id)


class NDArray:
    """Frames as decord gives them: ``asnumpy()``, ``shape``, ``dtype``, indexing, and DLPack (``to_dlpack`` or
    ``torch.from_dlpack``). Views the read's buffer: no copy.

    Args:
        data (numpy.ndarray | Any): The frames: a NumPy array or anything with DLPack.
    """

    def __init__(self, data: Any) -> None:
        self._data = data

    def asnumpy(self) -> np.ndarray:
        """The frames as a NumPy array.

        Returns:
            The array (a view when they are in host memory).
        """
        if isinstance(self._data, np.ndarray):
            return self._data
        return np.from_dlpack(self._data)

    @property
    def shape(self) -> Tuple[int, ...]:
        """The frames' shape."""
        return tuple(self.asnumpy().shape) if self.context.device_type == "cpu" else tuple(self._data.shape)

    @property
    def dtype(self) -> np.dtype:
        """The element type."""
        return self.asnumpy().dtype

    @property
    def context(self) -> DECORDContext:
        """Where the frames are: ``cpu(0)`` or ``gpu(n)``."""
        kind, ordinal = self.__dlpack_device__()
        return cpu(ordinal) if kind == 1 else gpu(ordinal)

    @property
    def ctx(self) -> DECORDContext:
        """The same as ``context``."""
        return self.context

    def __len__(self) -> int:
        return int(self.shape[0])

    def __getitem__(self, key: Any) -> "NDArray":
        return NDArray(self.asnumpy()[key])

    def __array__(self, dtype: Optional[Any] = None, copy: Optional[bool] = None) -> np.ndarray:
        array = self.asnumpy()
        return array.astype(dtype) if dtype is not None else array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        kind, ordinal = self._data.__dlpack_device__()
        return int(kind), int(ordinal)

    def to_dlpack(self) -> Any:
        """The frames for DLPack.

        Returns:
            A DLPack capsule of the frames.
        """
        return self.__dlpack__()

    def __repr__(self) -> str:
        return f"<decord.NDArray shape={self.shape} {self.context}>"
