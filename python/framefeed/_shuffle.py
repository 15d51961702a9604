"""A bounded, seeded shuffle buffer: DALI's ``random_shuffle`` with ``initial_fill``, tf.data's ``shuffle``.

Items go in one at a time; once ``size`` are held, each new item takes the place of one drawn at random, which
comes out. At the end the rest come out in a random order. At most ``size`` items are held, so memory is bounded
by the setting; the order depends only on the seed and the order items went in.
"""

from __future__ import annotations

import random
from typing import Generic, Iterator, List, Optional, TypeVar

__all__ = ["ShuffleBuffer"]

T = TypeVar("T")


class ShuffleBuffer(Generic[T]):
    """``size`` items at most, shuffled with a generator seeded by ``seed`` (any hashable text or number)."""

    def __init__(self, size: int, seed: object) -> None:
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"shuffle_buffer is {size!r}; allowed: an int of 1 or more (0 or None: no shuffle)")
        self.size = size
        self._rng = random.Random(str(seed))
        self._held: List[T] = []

    def __len__(self) -> int:
        return len(self._held)

    def push(self, item: T) -> Optional[T]:
        """Holds ``item``; once the buffer is full, returns one held item drawn at random (``None`` while it
        fills)."""
        if len(self._held) < self.size:
            self._held.append(item)
            return None
        j = self._rng.randrange(self.size)
        out, self._held[j] = self._held[j], item
        return out

    def drain(self) -> Iterator[T]:
        """Every held item, in a random order, leaving the buffer empty."""
        held, self._held = self._held, []
        self._rng.shuffle(held)
        yield from held
