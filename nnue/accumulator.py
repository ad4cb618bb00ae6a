"""The accumulator: the first layer's pre-activation of one game, kept from turn to turn.

It holds ``b1 + sum W1[f]`` over the active features ``f`` and the active set it was built
from. From one turn to the next only a few features change (a snake's head moves, its neck
becomes a body piece, its tail leaves a square, food is eaten), so an update adds the rows
of the features that appeared and subtracts those that vanished instead of summing every
active row again. For a quantised network the sum is int32 and exact, so the result is bit
for bit that of :meth:`Accumulator.refresh`; for a float network it agrees to float32
rounding.

Two ways in:

- :meth:`Accumulator.update` takes the new active set (what
  :func:`nnue.features.active_features` returns) and finds the difference with the previous
  one on Python sets: O(size of the sets), about 35 ns per element and pass.
- :meth:`Accumulator.update_state` takes the state itself. It encodes it part by part
  (:func:`nnue.features.feature_parts`: each snake, food, hazards) and diffs each part with
  the same part last turn: an unchanged part (hazards, usually food) is one C-level list
  comparison; a snake that moved is recognised as its old list shifted by one, so only its
  head, neck and tail pieces are looked at; anything else falls back to diffing that part
  as a multiset. A count per active feature keeps the set semantics (a tuple present twice
  is one input). This is the cheap path a server or search should use.

Both end in one fancy-index gather of every touched row from ``[W1; -W1]``
(:meth:`Network.signed_w1`: a vanished feature's row comes negated) and one reduction. When
the difference is not smaller than the new set a full refresh is done instead (no dearer,
and it resets any float drift).

An accumulator is owned by one game session at a time and is not thread-safe; the pool
(:mod:`nnue.pool`) hands them out under a lock.
"""

from __future__ import annotations

import numpy as np

from snake.board import GameState, Snake

from .features import feature_parts
from .network import INT16_ROWS, Network

_INT32 = np.dtype(np.int32)


class Accumulator:
    """``b1 + sum W1[active]`` for one game, and the ``active`` set it was built from."""

    __slots__ = ("network", "acc", "_active", "_set", "_parts", "_counts", "refreshes",
                 "updates", "columns_touched", "last_columns", "last_refreshed")

    def __init__(self, network: Network) -> None:
        self.network = network
        #: the sum, in ``network.acc_dtype`` (int32 when quantised); meaningless while
        #: :attr:`active` is ``None``
        self.acc = np.zeros(network.hidden[0], dtype=network.acc_dtype)
        self._active: np.ndarray | None = None
        # The same set as a frozenset for the next difference (built lazily; never mutated,
        # so copies share it).
        self._set: frozenset[int] | None = None
        # update_state's memory: last turn's parts and a count per active feature.
        self._parts: dict[object, list[int]] | None = None
        self._counts: dict[int, int] | None = None
        #: counters (for benchmarks and logs): full refreshes, incremental updates, W1 rows
        #: gathered in all, rows gathered by the last call, and whether it refreshed
        self.refreshes = 0
        self.updates = 0
        self.columns_touched = 0
        self.last_columns = 0
        self.last_refreshed = False

    @property
    def active(self) -> np.ndarray | None:
        """The sorted unique int32 feature indices the sum was built from, or ``None``."""
        active = self._active
        if active is None and self._counts is not None:
            active = self._active = np.array(sorted(self._counts), dtype=np.int32)
        return active

    def reset(self) -> None:
        """Forget the game: no active set, counters at zero (what the pool does on release)."""
        self._active = None
        self._set = None
        self._parts = self._counts = None
        self.acc.fill(0)
        self.refreshes = self.updates = self.columns_touched = self.last_columns = 0
        self.last_refreshed = False

    # --- from an active set -------------------------------------------------------------

    def refresh(self, active: np.ndarray, *, as_set: frozenset[int] | None = None) -> None:
        """Rebuild the sum from scratch for ``active`` (unique int32 indices, as
        :func:`nnue.features.active_features` returns them: sorted). ``as_set``, the same
        indices as a frozenset, is kept for the next update if given."""
        active = _as_features(active, self.network)
        if as_set is not None and len(as_set) != len(active):
            raise ValueError("as_set does not match the active features")
        self._store_refresh(active, as_set)

    def _store_refresh(self, active: np.ndarray, as_set: frozenset[int] | None) -> None:
        self.acc = self.network.accumulate(active)
        self._active = active
        self._set = as_set
        self._parts = self._counts = None
        self.refreshes += 1
        self.last_columns = len(active)
        self.columns_touched += len(active)
        self.last_refreshed = True

    def update(self, active: np.ndarray, *, as_set: frozenset[int] | None = None) -> None:
        """Move the sum to ``active``: add the rows of the features that appeared and
        subtract those that vanished, in one gather. Refreshes when there is no previous
        set or the difference is at least as large as the new set.

        ``as_set`` may give the same indices as a frozenset (what
        :func:`nnue.features.active_features_and_set` returns); it saves building it."""
        if self._active is None and self._counts is None:
            self.refresh(active, as_set=as_set)
            return
        if not isinstance(active, np.ndarray) or active.ndim != 1:
            raise TypeError("active features must be a 1-D numpy array of indices")
        if active.dtype != _INT32:
            active = _as_features(active, self.network)
        if as_set is None:
            as_set = frozenset(active.tolist())
            if len(as_set) != len(active):
                raise ValueError("active features must be unique")
        elif len(as_set) != len(active):
            raise ValueError("as_set does not match the active features")
        new_set = as_set
        old_set = self._set
        if old_set is None:
            old_set = (frozenset(self._counts) if self._counts is not None
                       else frozenset(self._active.tolist()))
        appeared = new_set - old_set
        vanished = old_set - new_set
        n = len(appeared) + len(vanished)
        if appeared and (min(appeared) < 0 or max(appeared) >= self.network.n_features):
            raise IndexError("active feature index out of range")
        if n >= len(active):
            self._store_refresh(active, new_set)
            return
        self._apply(appeared, vanished)
        self._active = active
        self._set = new_set
        self._parts = self._counts = None

    def _apply(self, appeared, vanished) -> None:
        """Add the rows of ``appeared`` and subtract those of ``vanished``: one gather from
        ``[W1; -W1]`` (a vanished feature's row comes negated), one sum."""
        net = self.network
        n = len(appeared) + len(vanished)
        if n:
            f = net.n_features
            # take() on an intp array is several times cheaper than fancy indexing.
            idx = np.array([*appeared, *[v + f for v in vanished]], dtype=np.intp)
            rows = net.signed_w1().take(idx, 0)
            if n <= INT16_ROWS:
                self.acc += np.add.reduce(rows, 0, net.sum_dtype)
            else:
                self.acc += net.sum_rows(rows)
        self.updates += 1
        self.last_columns = n
        self.columns_touched += n
        self.last_refreshed = False

    # --- from the state -----------------------------------------------------------------

    def update_state(self, state: GameState, you: Snake) -> bool:
        """Move the sum to the features of ``state`` seen from ``you``, diffing part by
        part against the previous call (see the module docstring). Returns ``False``, and
        leaves the accumulator as it was, when the state has no features (ruleset or board
        without a block, ``you`` not alive): the caller then plays without the network.
        Gives exactly the sum of ``refresh(active_features(state, you))``."""
        parts = feature_parts(state, you)
        if parts is None:
            return False
        old_parts, counts = self._parts, self._counts
        if old_parts is None:
            # No part-wise memory (first turn, or the last call was an array update).
            counts = {}
            for part in parts.values():
                for f in part:
                    counts[f] = counts.get(f, 0) + 1
            active = np.array(sorted(counts), dtype=np.int32)
            self.update(active, as_set=frozenset(counts))
            self._parts, self._counts = parts, counts
            return True
        added: list[int] = []
        removed: list[int] = []
        matched = 0
        for key, new in parts.items():
            old = old_parts.get(key)
            if old is None:
                added += new
                continue
            matched += 1
            if old == new:
                continue
            if key.__class__ is tuple and len(new) >= 2:
                k = len(new) - 1
                if k <= len(old) and new[2:] == old[1:k]:
                    # The snake moved: new head and neck pieces; old head and tail gone.
                    added += new[:2]
                    removed.append(old[0])
                    removed += old[k:]
                    continue
            added += new
            removed += old
        if matched < len(old_parts):   # a snake died (or the odd-input part went away)
            for key, old in old_parts.items():
                if key not in parts:
                    removed += old
        # Additions first: a feature that one part drops and another brings (the same
        # piece on the same square) then never leaves the set.
        appeared, vanished = [], []
        for f in added:
            c = counts.get(f, 0)
            counts[f] = c + 1
            if not c:
                appeared.append(f)
        for f in removed:
            c = counts[f] - 1
            if c:
                counts[f] = c
            else:
                del counts[f]
                vanished.append(f)
        if len(appeared) + len(vanished) >= len(counts):
            self._store_refresh(np.array(sorted(counts), dtype=np.int32), None)
        else:
            self._apply(appeared, vanished)
            self._active = None   # rebuilt from the counts when asked for
            self._set = None
        self._parts, self._counts = parts, counts
        return True

    # --- scores -------------------------------------------------------------------------

    def pre_activation(self) -> np.ndarray:
        """The float first-layer pre-activation ``[H1]`` (stack several and pass them to
        ``network.forward`` to score a batch)."""
        if self._active is None and self._counts is None:
            raise RuntimeError("accumulator is empty: refresh or update it first")
        return self.network.pre_activation(self.acc)

    def scores(self) -> np.ndarray:
        """The four move scores ``[up, down, left, right]`` in [0, 1] for the current set."""
        return self.network.forward(self.pre_activation())

    def copy(self) -> Accumulator:
        """An independent accumulator in the same state (for search: update the copy
        along a line without disturbing the original)."""
        other = Accumulator.__new__(Accumulator)
        other.network = self.network
        other.acc = self.acc.copy()
        # These are never mutated in place (updates rebind them), so share...
        other._active = self._active
        other._set = self._set
        other._parts = self._parts
        # ... but update_state edits the counts in place.
        other._counts = None if self._counts is None else self._counts.copy()
        other.refreshes = self.refreshes
        other.updates = self.updates
        other.columns_touched = self.columns_touched
        other.last_columns = self.last_columns
        other.last_refreshed = self.last_refreshed
        return other


def _as_features(active: np.ndarray, network: Network) -> np.ndarray:
    """Check an index array: 1-D integers, unique and inside the layout; returned as int32.
    Sorted input (what :func:`nnue.features.active_features` gives) is checked in a few
    microseconds; unsorted input costs a set. Keeps a bad caller from corrupting the sum."""
    if not isinstance(active, np.ndarray) or active.ndim != 1:
        raise TypeError("active features must be a 1-D numpy array of indices")
    if active.dtype != _INT32:
        if active.dtype.kind not in "iu" and active.size:
            raise TypeError(f"active features must be integers, got {active.dtype}")
        if active.size and (active.min() < 0 or active.max() >= network.w1.shape[0]):
            raise IndexError("active feature index out of range")
        active = active.astype(np.int32)
    if active.size > 1 and not (active[1:] > active[:-1]).all():
        if len(set(active.tolist())) != active.size:
            raise ValueError("active features must be unique")
        if active.min() < 0 or active.max() >= network.w1.shape[0]:
            raise IndexError("active feature index out of range")
    elif active.size and (active[0] < 0 or active[-1] >= network.w1.shape[0]):
        raise IndexError("active feature index out of range")
    return active
