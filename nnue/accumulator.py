"""The accumulator: the first layer's pre-activation of one game, kept from turn to turn.

It holds ``b1 + sum W1[f]`` over the active features ``f``. From one turn to the next only a
few features change (a snake's head moves, its neck becomes a body piece, its tail leaves a
square, food is eaten), so an update adds the rows of the features that appeared and
subtracts those that vanished instead of summing every active row again. For a quantised
network the sum is int32 and exact, so the result is bit for bit that of a full refresh;
for a float network it agrees to float32 rounding.

**State, in one form:** the feature encoding the sum was built from, part by part (what
:func:`nnue.features.feature_parts` gives: each snake, food, hazards), and a count per
feature of its occurrences in those parts (the encoding is a multiset; a feature is active,
and its row in the sum, while its count is positive). The sorted active array
(:attr:`Accumulator.active`) is derived from the counts when asked for.

**One way in:** :meth:`Accumulator.apply` takes what changed, a
:class:`nnue.features.FeatureChange` (the occurrences that appeared and vanished, as
Stockfish's ``DirtyPiece``): the counts turn it into the features switched on and off,
whose rows of ``W1`` are added to and subtracted from the sum by a compiled kernel
(:func:`nnue.feature_transformer.add_rows`). When that is not smaller than the new set, a full
refresh is done instead (no dearer, and it resets any float drift). Scores come from the compiled
forward pass (:meth:`Network.score`). :meth:`Accumulator.update_to` is the convenient form from a
state: it encodes the state by parts, diffs them with the parts held
(:func:`nnue.features.feature_change`: an unchanged part is one list comparison, a snake
that moved only its head, neck and tail pieces) and applies that change, or refreshes when
the accumulator holds nothing. :meth:`Accumulator.refresh` rebuilds from a list of features.

An accumulator is owned by one game session at a time and is not thread-safe; the pool
(:mod:`nnue.pool`) hands them out under a lock. A search gives each node a :meth:`copy` of
its parent's accumulator, moved on with :meth:`update_to`.
"""

from __future__ import annotations

import operator
from typing import Iterable

import numpy as np

from nnue import feature_transformer as transformer
from nnue.features import FeatureChange, feature_change, feature_parts
from nnue.network import Network
from snake.board import GameState, Snake


class Accumulator:
    """``b1 + sum W1[active]`` for one game, and the feature encoding it was built from."""

    __slots__ = ("network", "acc", "_counts", "_parts", "_active", "refreshes", "updates",
                 "columns_touched", "last_columns", "last_refreshed")

    def __init__(self, network: Network) -> None:
        self.network = network
        #: the sum, in ``network.acc_dtype`` (int32 when quantised); meaningless while
        #: :attr:`empty`
        self.acc = np.zeros(network.hidden[0], dtype=network.acc_dtype)
        # Occurrences of each active feature in the encoding (None: empty). Edited in
        # place by apply(), so copies get their own.
        self._counts: dict[int, int] | None = None
        # The encoding by parts the counts come from, for the next feature_change (None:
        # not known, after refresh() or a change without parts). Never mutated: shared.
        self._parts: dict[object, list[int]] | None = None
        # The sorted active array, derived from the counts on demand.
        self._active: np.ndarray | None = None
        #: counters (for benchmarks and logs): full refreshes, incremental updates, W1 rows
        #: gathered in all, rows gathered by the last call, and whether it refreshed
        self.refreshes = 0
        self.updates = 0
        self.columns_touched = 0
        self.last_columns = 0
        self.last_refreshed = False

    @property
    def empty(self) -> bool:
        """Holds no game (new, or reset): the next :meth:`update_to` refreshes."""
        return self._counts is None

    @property
    def active(self) -> np.ndarray | None:
        """The sorted unique int32 feature indices the sum is built from, or ``None``."""
        active = self._active
        if active is None and self._counts is not None:
            active = self._active = np.array(sorted(self._counts), dtype=np.int32)
        return active

    def reset(self) -> None:
        """Forget the game: nothing held, counters at zero (what the pool does on release)."""
        self._counts = self._parts = self._active = None
        self.acc.fill(0)
        self.refreshes = self.updates = self.columns_touched = self.last_columns = 0
        self.last_refreshed = False

    # --- full refresh -------------------------------------------------------------------

    def refresh(self, features: Iterable[int]) -> None:
        """Rebuild the sum from scratch for ``features``: feature indices (a 1-D integer
        array or a sequence, in any order; an index given twice is one active feature).
        The parts are not known, so the next :meth:`update_to` refreshes too."""
        active = _indices(features)
        if active.size > 1 and not (active[1:] > active[:-1]).all():
            active, repeats = np.unique(active, return_counts=True)
            counts = dict(zip(active.tolist(), repeats.tolist()))
        else:   # sorted and unique, as active_features gives them
            counts = dict.fromkeys(active.tolist(), 1)
        if active.size and (active[0] < 0 or active[-1] >= self.network.n_features):
            raise IndexError("feature index out of range")
        self._rebuild(counts, None, active)

    def _rebuild(self, counts: dict[int, int], parts: dict[object, list[int]] | None,
                 active: np.ndarray | None = None) -> None:
        """Sum the rows of every feature in ``counts`` (``active``: the same, sorted, if
        at hand)."""
        net = self.network
        if active is None:
            transformer.sum_rows(net.b1, net.w1, np.fromiter(counts, np.intp, len(counts)),
                                 self.acc)
            self._active = None
        else:
            transformer.sum_rows(net.b1, net.w1, active, self.acc)
            self._active = active.astype(np.int32)   # a copy: the caller keeps its array
        self._counts = counts
        self._parts = parts
        self.refreshes += 1
        self.last_columns = len(counts)
        self.columns_touched += len(counts)
        self.last_refreshed = True

    # --- the incremental update ---------------------------------------------------------

    def apply(self, change: FeatureChange) -> None:
        """Apply ``change`` (occurrences added and removed) to the encoding held: add the
        rows of the features switched on, subtract those switched off, in one gather; or
        refresh when that is not fewer rows than the new set. Keeps ``change.parts`` for
        the next :meth:`update_to` (``None``: that one refreshes).

        Raises ``RuntimeError`` on an empty accumulator, ``ValueError`` when the change
        removes a feature not held, ``IndexError``/``TypeError`` for an index outside the
        layout or not an integer; the accumulator is then left as it was."""
        counts = self._counts
        if counts is None:
            raise RuntimeError("accumulator is empty: refresh it or update_to a state first")
        # Additions first: a feature that one part drops and another brings (the same
        # piece on the same square) then never leaves the set.
        added, removed = change.added, change.removed
        appeared: list[int] = []
        vanished: list[int] = []
        _count_up(counts, added, appeared)
        done = _count_down(counts, removed, vanished)
        if done < len(removed):
            _undo(counts, added, removed[:done])
            raise ValueError(f"change removes feature {removed[done]!r}, which is not active")
        if appeared and not change.verified:
            try:
                if not all(f.__class__ is int for f in appeared):
                    appeared = [operator.index(f) for f in appeared]
                if min(appeared) < 0 or max(appeared) >= self.network.n_features:
                    raise IndexError("feature index out of range")
            except (IndexError, TypeError):
                _undo(counts, added, removed)
                raise
        n = len(appeared) + len(vanished)
        if n >= len(counts):
            self._rebuild(counts, change.parts)
            return
        if n:
            transformer.add_rows(self.acc, self.network.w1, np.array(appeared, dtype=np.intp),
                             np.array(vanished, dtype=np.intp))
            self._active = None
        self._parts = change.parts
        self.updates += 1
        self.last_columns = n
        self.columns_touched += n
        self.last_refreshed = False

    def update_to(self, state: GameState, you: Snake) -> bool:
        """Bring the sum to the features of ``state`` seen from ``you``: encode it by parts,
        diff them with the parts held and :meth:`apply` the change; refresh when the
        accumulator is empty or does not know its parts. Returns ``False``, and leaves the
        accumulator as it was, when the state has no features (ruleset or board without a
        block, ``you`` not alive): the caller then plays without the network. Gives exactly
        the sum of a refresh with ``active_features(state, you)``."""
        parts = feature_parts(state, you)
        if parts is None:
            return False
        old = self._parts
        if old is None:
            counts: dict[int, int] = {}
            for part in parts.values():
                for f in part:
                    counts[f] = counts.get(f, 0) + 1
            self._rebuild(counts, parts)
        else:
            self.apply(feature_change(old, parts))
        return True

    # --- scores -------------------------------------------------------------------------

    def pre_activation(self) -> np.ndarray:
        """The float first-layer pre-activation ``[H1]`` (stack several and pass them to
        ``network.forward`` to score a batch)."""
        if self._counts is None:
            raise RuntimeError("accumulator is empty: refresh it or update_to a state first")
        return self.network.pre_activation(self.acc)

    def scores(self) -> np.ndarray:
        """The four move scores ``[up, down, left, right]`` in [0, 1] for the current set
        (the compiled forward pass, :meth:`Network.score`)."""
        if self._counts is None:
            raise RuntimeError("accumulator is empty: refresh it or update_to a state first")
        return self.network.score(self.acc)

    def copy(self) -> Accumulator:
        """An independent accumulator in the same state (for search: update the copy
        along a line without disturbing the original)."""
        other = Accumulator.__new__(Accumulator)
        other.network = self.network
        other.acc = self.acc.copy()
        # apply() edits the counts in place; the parts and the active array are never
        # mutated (updates rebind them), so they are shared.
        other._counts = None if self._counts is None else self._counts.copy()
        other._parts = self._parts
        other._active = self._active
        other.refreshes = self.refreshes
        other.updates = self.updates
        other.columns_touched = self.columns_touched
        other.last_columns = self.last_columns
        other.last_refreshed = self.last_refreshed
        return other


def _count_up(counts: dict[int, int], features, switched_on: list[int]) -> None:
    """Count one more occurrence of each of ``features``; those that were not counted
    yet go to ``switched_on``."""
    for f in features:
        c = counts.get(f, 0)
        counts[f] = c + 1
        if not c:
            switched_on.append(f)


def _count_down(counts: dict[int, int], features, switched_off: list[int]) -> int:
    """Count one occurrence less of each of ``features``; those left with none go to
    ``switched_off``. Stops at a feature that is not counted; returns how many it took."""
    done = 0
    for f in features:
        c = counts.get(f)
        if c is None:
            break
        if c > 1:
            counts[f] = c - 1
        else:
            del counts[f]
            switched_off.append(f)
        done += 1
    return done


def _undo(counts: dict[int, int], added, removed) -> None:
    """Take back a change of which ``added`` and ``removed`` were counted."""
    _count_up(counts, removed, [])
    _count_down(counts, added, [])


def _indices(features: Iterable[int]) -> np.ndarray:
    """Feature indices as a 1-D integer array (range checked by the caller): keeps a bad
    caller from corrupting the sum."""
    active = np.asarray(features if isinstance(features, np.ndarray) else list(features))
    if active.ndim != 1:
        raise TypeError("features must be a 1-D sequence of indices")
    if active.size == 0:
        return np.zeros(0, dtype=np.int32)
    if active.dtype.kind not in "iu":
        raise TypeError(f"feature indices must be integers, got {active.dtype}")
    return active
