"""How many decoder threads a reader gets when ``threads`` is left to the default: the cores this process may
use (its CPU affinity, as a job scheduler or ``taskset`` sets it), shared among the DataLoader's workers when
it runs in one, at least one. So ``num_workers`` readers of the default together start about as many threads
as there are cores, rather than a core's worth each (FFmpeg's own default, one per core plus one, starts
``num_workers * (cores + 1)``).

Read again where a reader is re-made: a reader opened in the main process and used in a forked DataLoader
worker gets the worker's share there.
"""

from __future__ import annotations

import os
import sys

__all__ = ["available_cores", "default_threads"]


def available_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _workers() -> int:
    """The DataLoader workers this process is one of (1 outside a worker). torch is asked only when it is
    already imported: a worker has imported it."""
    data = sys.modules.get("torch.utils.data")
    if data is None:
        return 1
    info = data.get_worker_info()
    return info.num_workers if info is not None else 1


def default_threads() -> int:
    """The default decoder threads of a reader made now, in this process."""
    return max(1, available_cores() // _workers())
