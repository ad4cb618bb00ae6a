"""The feature transformer, compiled: the accumulator ``b1 + sum W1[f]`` kept from the
compiled core's change reports, as Stockfish's accumulator is kept from ``DirtyPiece``.

The features are those of :mod:`nnue.features` (SPEC §4), computed here from the core's
packed state (:mod:`snake.core.state`) instead of a ``GameState``: a piece ``P`` of the
core's change report (``HEAD``, the body pieces, ``UNDER``, ``FOOD``, ``HAZARD``; SPEC's
numbers for *your* pieces) on padded cell ``c`` is, seen from snake ``you``, the feature

    BLOCK_OFFSET[block] + (y * S + x) * 20 + P + owner

with ``owner`` 0 for ``you``, 6 for a squadmate (equal non-zero squad number), 12 for an
opponent, and 0 for food and hazards; cells off the board have none. Features form a set,
so each accumulator keeps a **count** per feature of its block: a row of ``W1`` is added
when a count goes from 0 to 1 and subtracted when it goes back to 0. Everything is integer
(int8 rows into an int32 sum): an update gives bit for bit the refresh's sum.

- :func:`refresh` builds counts and sum from a state (every living snake's pieces, food,
  hazards);
- :func:`apply_changes` applies one step's report (``snake.core.step.apply_rules`` with a
  buffer): the compiled path of a search node, with no state diffing;
- :func:`add_rows` / :func:`sum_rows` are the row sums the Python
  :class:`nnue.accumulator.Accumulator` uses for its own updates.

Tests hold it equal to :func:`nnue.features.active_features` + a full refresh after every
step of thousands of games of every ruleset with features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from nnue.features import BLOCK_OFFSET, N_PIECES, OPPONENT, SQUADMATE, block_of
from snake.core.jit import JIT
from snake.core.state import (
    ALIVE,
    G_CAUSE,
    G_FOOD,
    G_HAZARDS,
    G_HEIGHT,
    G_LENGTH,
    G_N,
    G_PW,
    G_SQUAD,
    G_WIDTH,
    S_N_FOOD,
    S_N_HAZARDS,
    Packed,
)
from snake.core.step import HEAD, piece_between, segment


@njit(**JIT)
def add_rows(acc, w1, appeared, vanished):
    """``acc += W1[appeared].sum(0) - W1[vanished].sum(0)`` in ``acc``'s type."""
    width = acc.shape[0]
    for k in range(appeared.shape[0]):
        row = w1[appeared[k]]
        for j in range(width):
            acc[j] += row[j]
    for k in range(vanished.shape[0]):
        row = w1[vanished[k]]
        for j in range(width):
            acc[j] -= row[j]


@njit(**JIT)
def sum_rows(b1, w1, active, out):
    """``out = b1 + W1[active].sum(0)``."""
    width = out.shape[0]
    for j in range(width):
        out[j] = b1[j]
    for k in range(active.shape[0]):
        row = w1[active[k]]
        for j in range(width):
            out[j] += row[j]


@njit(**JIT)
def feature_of(g, s, you, owner_snake, cell, piece):
    """The feature of ``piece`` (of snake ``owner_snake``, -1 for food and hazards) on
    ``cell`` seen from ``you``, relative to the block (the caller adds its offset), or -1
    off the board."""
    pw = g[G_PW]
    x = cell % pw - 1
    y = cell // pw - 1
    width = g[G_WIDTH]
    if x < 0 or y < 0 or x >= width or y >= g[G_HEIGHT]:
        return -1
    p = piece
    if owner_snake >= 0 and owner_snake != you:
        squad = s[g[G_SQUAD] + you]
        if squad != 0 and s[g[G_SQUAD] + owner_snake] == squad:
            p += SQUADMATE
        else:
            p += OPPONENT
    return (y * width + x) * N_PIECES + p


@njit(**JIT)
def _count(counts, acc, w1, offset, f, sign):
    if f < 0:
        return
    c = counts[f]
    if sign > 0:
        counts[f] = c + 1
        if c == 0:
            row = w1[offset + f]
            for j in range(acc.shape[0]):
                acc[j] += row[j]
    else:
        counts[f] = c - 1
        if c == 1:
            row = w1[offset + f]
            for j in range(acc.shape[0]):
                acc[j] -= row[j]


@njit(**JIT)
def refresh(g, s, you, offset, b1, w1, counts, acc):
    """Counts and sum of the features of state ``s`` seen from ``you``."""
    counts[:] = 0
    for j in range(acc.shape[0]):
        acc[j] = b1[j]
    for i in range(g[G_N]):
        if s[g[G_CAUSE] + i] != ALIVE:
            continue
        previous = segment(g, s, i, 0)
        _count(counts, acc, w1, offset, feature_of(g, s, you, i, previous, HEAD), 1)
        for k in range(1, s[g[G_LENGTH] + i]):
            cell = segment(g, s, i, k)
            piece = piece_between(g, previous, cell)
            _count(counts, acc, w1, offset, feature_of(g, s, you, i, cell, piece), 1)
            previous = cell
    for k in range(s[S_N_FOOD]):
        _count(counts, acc, w1, offset, feature_of(g, s, you, -1, s[g[G_FOOD] + k], 18), 1)
    for k in range(s[S_N_HAZARDS]):
        _count(counts, acc, w1, offset, feature_of(g, s, you, -1, s[g[G_HAZARDS] + k], 19), 1)


@njit(**JIT)
def apply_changes(g, s, you, offset, w1, changes, n_changes, counts, acc):
    """Apply a step's report (rows ``sign, snake, cell, piece``) to counts and sum; ``s``
    is the state after the step (its squad numbers are all that is read)."""
    for r in range(n_changes):
        f = feature_of(g, s, you, changes[r, 1], changes[r, 2], changes[r, 3])
        _count(counts, acc, w1, offset, f, changes[r, 0])


def block_offset(packed: Packed) -> int | None:
    """The first feature index of the packed game's block, or ``None`` when the network
    has no block for its ruleset and board (as :func:`nnue.features.active_features`)."""
    g = packed.g
    if g[G_WIDTH] != g[G_HEIGHT]:
        return None
    block = block_of(packed.template.game.ruleset.name, int(g[G_WIDTH]))
    return None if block is None else int(BLOCK_OFFSET[block])


@dataclass(slots=True)
class CoreAccumulator:
    """One view's accumulator over the compiled core: its sum and its feature counts."""

    network: Any        # nnue.network.Network
    offset: int
    you: int
    acc: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, network: Any, packed: Packed, you: int) -> "CoreAccumulator | None":
        offset = block_offset(packed)
        if offset is None:
            return None
        side = int(packed.g[G_WIDTH])
        acc = np.zeros(network.hidden[0], network.acc_dtype)
        counts = np.zeros(side * side * N_PIECES, np.int16)
        made = cls(network, offset, you, acc, counts)
        made.refresh(packed)
        return made

    def refresh(self, packed: Packed) -> None:
        net = self.network
        refresh(packed.g, packed.s, self.you, self.offset, net.b1, net.w1, self.counts, self.acc)

    def apply(self, packed_after: Packed, changes: np.ndarray) -> None:
        apply_changes(packed_after.g, packed_after.s, self.you, self.offset, self.network.w1,
                      changes, changes.shape[0], self.counts, self.acc)

    def active(self) -> np.ndarray:
        return (np.flatnonzero(self.counts) + self.offset).astype(np.int32)


def warm_up() -> None:
    """Compile (or load from the cache) the row sums for both kinds of network."""
    for w1_type, acc_type in ((np.int8, np.int32), (np.float32, np.float32)):
        w1 = np.zeros((3, 4), w1_type)
        acc = np.zeros(4, acc_type)
        idx = np.zeros(1, np.intp)
        add_rows(acc, w1, idx, idx)
        sum_rows(acc.copy(), w1, idx, acc)
