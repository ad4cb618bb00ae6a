"""The recycle stack of accumulators (SPEC §3): at most ``capacity`` (32) per server process.

:meth:`AccumulatorPool.lease` pops the most recently released accumulator (LIFO: its memory
is the most likely to still be in cache) or creates a new one while fewer than ``capacity``
exist; when all exist and are leased it returns ``None`` and the game is played by flood fill.
:meth:`AccumulatorPool.release` resets the accumulator and pushes it back. Accumulators are
never deallocated: the pool keeps a reference to every one it created. All methods take one
lock, so sessions on several threads may lease and release at once.
"""

from __future__ import annotations

import threading

from nnue.accumulator import Accumulator
from nnue.network import Network

CAPACITY = 32


class PoolError(ValueError):
    """An accumulator released twice, or one this pool did not lease."""


class AccumulatorPool:
    """A LIFO stack of at most ``capacity`` accumulators over one network."""

    def __init__(self, network: Network, capacity: int = CAPACITY) -> None:
        if capacity < 0:
            raise ValueError("capacity must be >= 0")
        self.network = network
        self.capacity = capacity
        self._lock = threading.Lock()
        self._free: list[Accumulator] = []
        self._all: list[Accumulator] = []   # every accumulator created, never dropped
        self._leased: set[int] = set()      # id() of those out on lease

    @property
    def created(self) -> int:
        """How many accumulators exist (leased or free)."""
        with self._lock:
            return len(self._all)

    @property
    def free_count(self) -> int:
        """How many are on the stack, ready to lease."""
        with self._lock:
            return len(self._free)

    def lease(self) -> Accumulator | None:
        """A reset accumulator (popped, or new while fewer than ``capacity`` exist), or
        ``None`` when every one is leased."""
        with self._lock:
            if self._free:
                acc = self._free.pop()
            elif len(self._all) < self.capacity:
                acc = Accumulator(self.network)
                self._all.append(acc)
            else:
                return None
            self._leased.add(id(acc))
            return acc

    def release(self, acc: Accumulator) -> None:
        """Reset ``acc`` and push it back on the stack. Raises :class:`PoolError` if it
        is not on lease from this pool (released twice, or someone else's)."""
        with self._lock:
            key = id(acc)
            if key not in self._leased:
                if any(a is acc for a in self._all):
                    raise PoolError("accumulator released twice")
                raise PoolError("accumulator does not belong to this pool")
            acc.reset()
            self._leased.remove(key)
            self._free.append(acc)
