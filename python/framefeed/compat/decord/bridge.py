"""What decord's reads give: its own arrays (``native``: :class:`~framefeed.compat.decord.ndarray.NDArray`, with
``asnumpy()``), NumPy arrays, or PyTorch tensors (through DLPack, no copy), as ``decord.bridge.set_bridge``
chooses, for the whole process."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["set_bridge", "reset_bridge", "get_bridge", "use_torch"]

_BRIDGES = ("native", "numpy", "torch")
_bridge = "native"


def set_bridge(new_bridge: str) -> None:
    """Chooses what reads give.

    Args:
        new_bridge (str): ``"native"`` (decord's NDArray), ``"numpy"`` or ``"torch"``.

    Raises:
        ValueError: Another bridge (mxnet, tensorflow and tvm are not here).
        ImportError: ``"torch"`` without PyTorch.
    """
    global _bridge
    if new_bridge not in _BRIDGES:
        allowed = ", ".join(f"'{b}'" for b in _BRIDGES)
        raise ValueError(f"bridge is '{new_bridge}'; allowed: {allowed} (mxnet, tensorflow and tvm are not here)")
    if new_bridge == "torch":
        importlib.import_module("torch")  # fail here, not at the first read, when torch is absent
    _bridge = new_bridge


def reset_bridge() -> None:
    """Back to decord's own arrays."""
    set_bridge("native")


def get_bridge() -> str:
    """The bridge in use.

    Returns:
        ``"native"``, ``"numpy"`` or ``"torch"``.
    """
    return _bridge


def use_torch() -> None:
    """The same as ``set_bridge("torch")``."""
    set_bridge("torch")


def convert(array: Any) -> Any:
    """An array (NumPy, or anything with DLPack) as the bridge gives it."""
    from .ndarray import NDArray

    if _bridge == "native":
        return NDArray(array)
    if _bridge == "torch":
        return importlib.import_module("torch").from_dlpack(array)
    import numpy as np

    return np.from_dlpack(array)
