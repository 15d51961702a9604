"""How ``feed`` and ``push`` take a buffer without copying it.

CPython's buffer protocol is part of the stable ABI only from 3.11, and the native module is built for 3.9+, so
the address of a buffer is found here, through a NumPy view: a read-only, C-contiguous buffer is referenced
(the view keeps the exporter alive until the decoder is done with it); a writable one is copied once, since the
caller could change it while the video is decoded. ``bytes`` never comes here: it is referenced directly.
"""

from __future__ import annotations

from typing import Any, Tuple, Union

import numpy as np


def readonly_view(data: Any) -> Union[bytes, Tuple[np.ndarray, int, int]]:
    """``(view, address, length)`` of a read-only C-contiguous buffer, or a ``bytes`` copy of any other."""
    if isinstance(data, str):
        raise TypeError("feed takes the encoded video's bytes (bytes, bytearray, memoryview, a NumPy array...), not str")
    try:
        view = np.frombuffer(data, dtype=np.uint8)
    except (TypeError, ValueError, BufferError):
        # Not a C-contiguous buffer (a strided NumPy array...): its bytes in C order.
        return np.ascontiguousarray(data).tobytes()
    if view.flags.writeable:
        return view.tobytes()
    return view, int(view.__array_interface__["data"][0]), int(view.nbytes)
