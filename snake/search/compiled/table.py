"""The transposition table of the compiled search (:mod:`.tree`): where a search keeps, per
position of ``you``'s, the value found, its bound, depth and best move, keyed by a
Zobrist-style hash of the rule state (every living snake's pieces and health, the food, the
hazard count), bounded in size (:func:`new_table`).

Threads of one search share a table and write its entries without a lock: an entry's key
is XORed with its contents (:func:`entry_check`), so an entry torn by two threads writing
at once is a miss. Each Python thread keeps its own table between searches
(:func:`thread_table`), so a game's next turn reuses what the last one stored; a search on
several threads has a table as large as theirs together.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

from snake.core.jit import JIT
from snake.core.state import ALIVE, G_CAUSE, G_FOOD, G_HEALTH, G_LENGTH, G_N, S_N_FOOD, S_N_HAZARDS
from snake.core.step import piece_between, segment

#: The bound a stored value is: exact, at least (a cut-off), at most.
EXACT, LOWER, UPPER = 1, 2, 3
#: Spreads an entry's packed info over 64 bits for its check (:func:`entry_check`).
_INFO_SPREAD = np.uint64(0x9E3779B97F4A7C15)


@njit(**JIT)
def position_key(g, s, salt, zobrist, zobrist_health, zobrist_food):
    """A 64-bit key of the rule state: a sum (so that stacked pieces count twice) of a
    random number per living snake's piece (snake, cell, piece), per snake's health, per
    food, plus the hazard count, plus ``salt`` (one per game and searching snake, so that a
    table shared by a thread's searches never mixes games or points of view)."""
    key = np.uint64(salt)
    for i in range(g[G_N]):
        if s[g[G_CAUSE] + i] != ALIVE:
            continue
        previous = segment(g, s, i, 0)
        key += zobrist[i, previous, 0]
        for k in range(1, s[g[G_LENGTH] + i]):
            cell = segment(g, s, i, k)
            key += zobrist[i, cell, piece_between(g, previous, cell)]
            previous = cell
        key += zobrist_health[i, min(max(s[g[G_HEALTH] + i], 0), 100)]
    for k in range(s[S_N_FOOD]):
        key += zobrist_food[s[g[G_FOOD] + k]]
    key += np.uint64(s[S_N_HAZARDS]) * np.uint64(0x9E3779B97F4A7C15)
    return key


@intrinsic
def _float_bits(typingctx, x):
    """The bits of a ``float64`` as a ``uint64`` (reinterpreted, not converted)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.uint64(types.float64), codegen


@njit(**JIT)
def entry_check(value, info):
    """What a table entry's key is XORed with: its value's bits and its info. Threads of
    one search share the table (:func:`run`) and write an entry as three words without a
    lock, so a reader may meet words of two different writes; the key then no longer
    matches and the torn entry is a miss, never a wrong value (Hyatt's lockless hashing)."""
    return _float_bits(value) ^ (np.uint64(np.int64(info)) * _INFO_SPREAD)


@dataclass(slots=True)
class Table:
    """The transposition table and what a search keeps between its iterations (and, per
    thread, between searches): keys, values, packed (depth, move, bound), random numbers
    for the keys, the history table."""

    keys: np.ndarray
    values: np.ndarray
    info: np.ndarray
    zobrist: np.ndarray = field(repr=False)
    zobrist_health: np.ndarray = field(repr=False)
    zobrist_food: np.ndarray = field(repr=False)


_ZOBRIST: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
_ZOBRIST_LOCK = threading.Lock()


def _zobrist(n_snakes: int, cells: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The random numbers of :func:`position_key` for these sizes, drawn once per process
    and shared (only read) by every thread's table: for 64 snakes on 100x100 they are 32 MB,
    which each of a worker's 16 threads drew again before."""
    with _ZOBRIST_LOCK:
        numbers = _ZOBRIST.get((n_snakes, cells, seed))
        if numbers is None:
            rng = np.random.default_rng(seed)
            limit = np.iinfo(np.uint64).max
            numbers = (rng.integers(0, limit, size=(n_snakes, cells, 6), dtype=np.uint64,
                                    endpoint=True),
                       rng.integers(0, limit, size=(n_snakes, 101), dtype=np.uint64,
                                    endpoint=True),
                       rng.integers(0, limit, size=cells, dtype=np.uint64, endpoint=True))
            _ZOBRIST[(n_snakes, cells, seed)] = numbers     # (never written: shared)
        return numbers


def table_entries(megabytes: float) -> int:
    """The entries of a table of about ``megabytes``: the greatest power of two of 16 bytes
    each that fits (at least one). An entry takes 20 bytes (key, value, and the info word),
    so the table is 1.25 times ``megabytes``; the count is kept as it is, since a table of
    other entries would search differently."""
    entries = 1
    while entries * 2 * 16 <= megabytes * 1024 * 1024:
        entries *= 2
    return entries


def new_table(n_snakes: int, cells: int, megabytes: float = 16.0, seed: int = 20261123) -> Table:
    """A table of about ``megabytes`` (a power of two of entries, :func:`table_entries`),
    for games of up to ``n_snakes`` snakes on boards of up to ``cells`` padded cells."""
    entries = table_entries(megabytes)
    zobrist, zobrist_health, zobrist_food = _zobrist(n_snakes, cells, seed)
    return Table(
        keys=np.zeros(entries, dtype=np.uint64),
        values=np.zeros(entries, dtype=np.float64),
        info=np.zeros(entries, dtype=np.int32),
        zobrist=zobrist, zobrist_health=zobrist_health, zobrist_food=zobrist_food,
    )


_local = threading.local()


def thread_table(n_snakes: int, cells: int, megabytes: float, threads: int = 1) -> Table:
    """This thread's table for a search on ``threads`` threads: ``megabytes`` per thread of
    the search (its helpers share it and each brings its share, the room it would have
    searching a game of its own). The thread keeps room for the most threads it has
    searched with, made (again) when a search needs more, or when the game needs more
    room than it has; a search on fewer threads uses the first part of it (a view: the
    entries a search on more threads stored there are found too)."""
    threads = max(1, int(threads))
    table = getattr(_local, "table", None)
    if (table is None or table.zobrist.shape[0] < n_snakes or table.zobrist.shape[1] < cells
            or getattr(_local, "megabytes", None) != megabytes
            or getattr(_local, "threads", 0) < threads):
        table = new_table(max(n_snakes, 8), max(cells, 21 * 21), megabytes * threads)
        _local.table, _local.megabytes, _local.threads = table, megabytes, threads
    entries = table_entries(megabytes * threads)
    if entries == table.keys.shape[0]:
        return table
    return Table(keys=table.keys[:entries], values=table.values[:entries],
                 info=table.info[:entries], zobrist=table.zobrist,
                 zobrist_health=table.zobrist_health, zobrist_food=table.zobrist_food)
