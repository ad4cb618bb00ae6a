"""Board control, compiled: the twin of :mod:`snake.evaluation.control`, whose docstrings
state the definition, stage for stage and by the same names: :func:`partition`, the style's
value (:func:`_style_value`, :func:`_nearest_food`, :func:`_soft`), the measurements
(:func:`_measure`, :func:`_around_head`), a learned head's forward pass (:func:`_head_value`,
whose reference is :func:`snake.evaluation.value_head.head_value`) and a snake's value
(:func:`control_value`, :func:`control_values`). The definition's data (the styles' weights,
the hunger margin, the squash's threshold, the measurements' names) are the reference's.
tests/test_evaluation_twin.py and tests/test_core_control.py hold the twins equal.

A simultaneous breadth-first search from every living head, layer by layer, the longer
snakes claiming first (ties in board order): a square reached first by one snake is its, one
reached on the same move by an equally long one is contested (no one's) and stops expanding;
a body square is free from the move its segment has left it (segment ``k`` of a body of
length ``L`` after ``L - k`` moves, never in constrictor); hazard squares count 1/4.

**How.** Sets of squares are bitboards (bit ``y * width + x``; ``W`` 64-bit words), so that a
move of the search costs a few word operations per snake rather than a branch per square:
a queue-based search branches on every neighbour, which the processor mispredicts on every
new position (and the leaves of a search are new positions); it was about twice as slow on
11x11 (``python -m bench.control`` measures on positions it cannot learn). On move ``d``
snake ``i`` reaches ``R = neighbours(front) & unclaimed & free``; in claiming order
(longest first) it claims ``R`` minus what was claimed earlier on this move, and contests
what an equally long snake claimed earlier on this move (equal lengths are neighbours in
the order), which that snake then loses. The neighbours are four shifts (by one square,
masked so as not to run into the next row, and by a row), plus four across the edges when
the board wraps; only the words around a front's are computed (all of them on a wrapping
board). Squares are counted in quarters (a square 4, a hazard 1), so sums are exact.

**Two ways, one partition.** On a board of at most 128 squares (11x11 is 121), whose rows
are under 64, every set is two words: :func:`partition_two_words` keeps the board's sets in
registers, the fronts and claims by claiming rank, lists the squares each move frees once,
before the first layer, and indexes with unsigned integers (which numba does not wrap
around): several times as fast as the general :func:`partition_any_size` (``python -m
bench.control`` prints the ratio). :func:`partition` picks
one; tests/test_core_control.py holds the two equal on every board both can divide.

**The workspace**, one ``int64`` array made once per search by :func:`workspace` and reused
at every leaf, so that an evaluation allocates nothing (the bitboards are a ``uint64`` view
of it): by padded cell, the move from which a body square is free and each square's bit
(geometry); the board's sets (its squares, those not in the first or last column, the first
and last column and row: geometry, filled by :func:`workspace`) and the per-call sets
(unclaimed, blocked by bodies, free to claim on this move, hazards, food, claimed on this
move, by the current group of equal lengths, contested then, contested ever); per snake
its front, its claims on this move and all it owns; per snake the squares it owns (in
quarters), the move of the first food it claimed (-1 none), the claiming order, and the
words its front lies in (which :func:`partition_two_words` uses, by claiming rank, for the
rank where its group of equal lengths begins and the move of its first food); then the
style's weights (in millionths), scratch for a snake's :data:`MEASUREMENTS` (float64),
``tanh(k / 3)`` for every lead ``k`` in length (float64, :func:`_lead_tanh`), the squares
freed on each move (two words a move, :func:`_freed`) and a learned value head (its hidden
size, 0 for none, and its weights: :func:`workspace`). Every set has zero words on either
side, so that a shifted word is read without a bounds check.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.core.extending import intrinsic

from snake.core.jit import JIT
from snake.core.occupancy import blocked
from snake.core.state import (
    ALIVE,
    G_BODY,
    G_CAPACITY,
    G_CAUSE,
    G_CELLS,
    G_CONSTRICTOR,
    G_FOOD,
    G_HAZARDS,
    G_HEALTH,
    G_HEIGHT,
    G_HP,
    G_LENGTH,
    G_MASK,
    G_N,
    G_OCC,
    G_PW,
    G_WIDTH,
    G_WRAPS,
    G_X,
    G_Y,
    S_N_FOOD,
    S_N_HAZARDS,
)
from snake.core.step import cell_x, cell_y, next_cell

# The definition's data, owned by the reference: the styles' weights, the margins, the
# number of measurements.
from snake.evaluation.control import (
    HUNGER_MARGIN,
    LIMIT,
    N_MEASUREMENTS,
    SOFT,
    STYLES,
)

#: :func:`ownership` of a contested square.
CONTESTED = -2

# Per padded cell: the move a body square is free from, the square's bit.
_FREE, _BIT, _CELL_ARRAYS = range(3)
# The board's sets, then the per-call sets.
(_BOARD, _NOT_COL0, _NOT_COLL, _COL0, _COLL, _ROW0, _ROWT, _UNCLAIMED, _BLOCKED, _AVAIL,
 _HAZ, _FOODS, _CLAIMED, _GROUP, _CONT, _CONTESTED, _SETS) = range(17)
# Per-snake sets, then per-snake numbers.
_FRONT, _NEW, _OWN, _SNAKE_SETS = range(4)
_QUARTERS, _FOOD_D, _ORDER, _LO, _HI, _NUMBERS = range(6)
# The value's weights (a style: the fields of the reference's ``Style``, in its order),
# after the per-snake numbers, in millionths.
(_W_CONTROL, _W_LENGTH, _W_CRAMPED, _W_FOOD, _FOOD_HEALTH, _W_HUNT, _W_HUNGER,
 _STYLE_FIELDS) = range(8)
_MILLION = 1_000_000.0
# After the style: scratch for the measurements (float64), then ``tanh(k / 3)`` (float64)
# for every lead in length ``k`` a snake can have (:func:`_lead_tanh`), then the squares
# freed on each move (:func:`_freed`), then a learned value head's hidden size (0: none)
# and its weights (:func:`workspace`).
_MEASURED = _STYLE_FIELDS
_LEADS = _MEASURED + N_MEASUREMENTS

_ONE, _ZERO, _63, _64 = np.uint64(1), np.uint64(0), np.uint64(63), np.uint64(64)


@intrinsic
def _popcount(typingctx, x):
    """The set bits of a ``uint64`` (the processor's instruction)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


@intrinsic
def _as_float(typingctx, x):
    """The ``float64`` whose bits an ``int64`` word of the workspace holds, without making
    an array view at every call."""
    if x != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.int64), codegen


# ---------------------------------------------------------------------------------------
# The workspace's layout


@njit(**JIT)
def _words(g):
    """Words per set: at least two (:func:`partition_two_words` reads two on any board of
    at most 128 squares)."""
    return max((g[G_WIDTH] * g[G_HEIGHT] + 63) >> 6, 2)


@njit(**JIT)
def _pad(g):
    """Zero words on either side of a set: more than the longest shift (a row, or across
    the board when it wraps) spans."""
    longest = g[G_WIDTH] * g[G_HEIGHT] if g[G_WRAPS] else g[G_WIDTH]
    return (longest >> 6) + 2


@njit(**JIT)
def _set(g, which):
    """Where word 0 of the board's or per-call set ``which`` lies."""
    stride = _words(g) + 2 * _pad(g)
    return _CELL_ARRAYS * g[G_CELLS] + which * stride + _pad(g)


@njit(**JIT)
def _snake_set(g, which, i):
    """Where word 0 of snake ``i``'s set ``which`` lies."""
    return _set(g, _SETS + which * g[G_N] + i)


@njit(**JIT)
def _number(g, which):
    """Where the per-snake numbers ``which`` start."""
    return _set(g, _SETS + _SNAKE_SETS * g[G_N]) - _pad(g) + which * g[G_N]


@njit(**JIT)
def _leads(g):
    """Where the table of ``tanh(k / 3)`` holds ``k = 0``: a lead in length runs from
    ``-capacity`` to ``capacity`` (no body is longer than its ring)."""
    return _number(g, _NUMBERS) + _LEADS + g[G_CAPACITY]


@njit(**JIT)
def _freed(g):
    """Where :func:`partition_two_words` keeps, for every move ``m`` from 0 to the
    capacity, the two words of the squares freed on move ``m`` (at ``2 * m``)."""
    return _leads(g) + g[G_CAPACITY] + 1


@njit(**JIT)
def _head_at(g):
    """Where a learned value head's fields begin (its hidden size, 0 for none)."""
    return _freed(g) + 2 * (g[G_CAPACITY] + 1)


@njit(inline="always", **JIT)
def _lead_tanh(g, work, lead):
    """``math.tanh(lead / 3.0)`` from the workspace's table, filled by :func:`workspace`
    with the same function on the same numbers, so the same value: a leaf asked for it
    twice, and ``tanh`` was about a tenth of a leaf's time."""
    return _as_float(work[_leads(g) + lead])


def workspace(g: np.ndarray, style: str = "default", head: np.ndarray | None = None) -> np.ndarray:
    """A scratch array for the game ``g`` (module docstring), with the board's geometry
    filled in and the value's weights of ``style`` (:data:`STYLES`): made once per search,
    reused by every evaluation (one per thread). ``head``: a learned value head's weights
    in millionths (:meth:`snake.evaluation.value_head.ValueHead.fields`: its hidden size, whether
    it is residual, then its layers); the value is then the head's output on the
    :data:`MEASUREMENTS`."""
    width, height, pw = int(g[G_WIDTH]), int(g[G_HEIGHT]), int(g[G_PW])
    cells, area = int(g[G_CELLS]), width * height
    start = int(_number(g, _NUMBERS))
    fields = np.zeros(1, dtype=np.int64) if head is None else head
    at, leads, capacity = int(_head_at(g)), int(_leads(g)), int(g[G_CAPACITY])
    work = np.zeros(at + len(fields), dtype=np.int64)
    work[start:start + _STYLE_FIELDS] = [round(w * _MILLION) for w in STYLES[style]]
    work[leads - capacity:leads + capacity + 1].view(np.float64)[:] = [
        math.tanh(k / 3.0) for k in range(-capacity, capacity + 1)]
    work[at:] = fields
    if head is not None:        # its weights as float64, divided once here, not per leaf
        work[at + 2:].view(np.float64)[:] = fields[2:] / _MILLION
    squares = np.arange(area).reshape(height, width)
    padded = (squares // width + 1) * pw + squares % width + 1
    work[_BIT * cells + padded] = squares
    board = np.ones((height, width), dtype=bool)
    col0, row0 = board.copy(), board.copy()
    col0[:, 1:] = False
    row0[1:] = False
    for which, chosen in ((_BOARD, board), (_NOT_COL0, ~col0), (_NOT_COLL, ~col0[:, ::-1]),
                          (_COL0, col0), (_COLL, col0[:, ::-1]), (_ROW0, row0),
                          (_ROWT, row0[::-1])):
        start = int(_set(g, which))
        packed = np.packbits(np.pad(chosen.ravel(), (0, 64 * int(_words(g)) - area)),
                             bitorder="little")
        work[start:start + int(_words(g))] = packed.view("<u8").view(np.int64)
    return work


@njit(**JIT)
def _add(bits, base, b):
    bits[base + (b >> 6)] |= _ONE << np.uint64(b & 63)


@njit(**JIT)
def _remove(bits, base, b):
    bits[base + (b >> 6)] &= ~(_ONE << np.uint64(b & 63))


@njit(**JIT)
def _up(below, word, r):
    """Word ``j`` of a set moved up ``64q + r`` bits, from its words ``j - q - 1`` and
    ``j - q``. (``x >> 1 >> 63 - r`` is ``x >> 64 - r`` without a shift by 64 when r is 0.)"""
    return (word << r) | ((below >> _ONE) >> (_63 - r))


@njit(**JIT)
def _down(word, above, r):
    """Word ``j`` of a set moved down ``64q + r`` bits, from its words ``j + q`` and
    ``j + q + 1``."""
    return (word >> r) | ((above << _ONE) << (_63 - r))


@njit(**JIT)
def _both(bits, a, b, j):
    """Word ``j`` of the intersection of the sets at ``a`` and ``b``."""
    return bits[a + j] & bits[b + j]


# ---------------------------------------------------------------------------------------
# The partition


@njit(inline="always", **JIT)
def _claiming_rank(s, lengths, work, order, living, i):
    """Put snake ``i`` among the ``living`` snakes ranked at ``work[order:]`` in claiming
    order: longest first, ties in board order (a stable insertion)."""
    r = living
    while r > 0 and s[lengths + work[order + r - 1]] < s[lengths + i]:
        work[order + r] = work[order + r - 1]
        r -= 1
    work[order + r] = i


@njit(**JIT)
def partition(g, s, work):
    """Divide the board among the living snakes of ``s`` (module docstring); the squares
    owned and food distance of each snake are left in ``work``. Returns the number of
    living snakes. Boards of at most 128 squares (11x11) take :func:`partition_two_words`,
    larger ones :func:`partition_any_size`: the same partition."""
    if g[G_WIDTH] * g[G_HEIGHT] <= 128 and g[G_WIDTH] < 64:
        return partition_two_words(g, s, work)
    return partition_any_size(g, s, work)


@njit(**JIT)
def partition_any_size(g, s, work):
    """:func:`partition` on a board of any size: each set in as many words as the board
    needs, the work of a layer confined to the words around each snake's front."""
    bits = work.view(np.uint64)
    n, words, cells = g[G_N], _words(g), g[G_CELLS]
    width, height = g[G_WIDTH], g[G_HEIGHT]
    lengths, causes, hps = g[G_LENGTH], g[G_CAUSE], g[G_HP]
    bodies, capacity, mask = g[G_BODY], g[G_CAPACITY], g[G_MASK]
    constrictor, wraps = g[G_CONSTRICTOR], g[G_WRAPS]
    free, bit = _FREE * cells, _BIT * cells
    board, not_col0, not_coll = _set(g, _BOARD), _set(g, _NOT_COL0), _set(g, _NOT_COLL)
    col0, coll, row0, rowt = _set(g, _COL0), _set(g, _COLL), _set(g, _ROW0), _set(g, _ROWT)
    unclaimed, blocked, avail = _set(g, _UNCLAIMED), _set(g, _BLOCKED), _set(g, _AVAIL)
    hazards, foods, claimed = _set(g, _HAZ), _set(g, _FOODS), _set(g, _CLAIMED)
    group, cont, contested = _set(g, _GROUP), _set(g, _CONT), _set(g, _CONTESTED)
    fronts, news, owns = _snake_set(g, _FRONT, 0), _snake_set(g, _NEW, 0), _snake_set(g, _OWN, 0)
    stride = _set(g, 1) - _set(g, 0)
    quarters, food_d, order = _number(g, _QUARTERS), _number(g, _FOOD_D), _number(g, _ORDER)
    lo, hi = _number(g, _LO), _number(g, _HI)
    # Shifts (64q + r bits): a row, and across the board when it wraps.
    q_row, r_row = width >> 6, np.uint64(width & 63)
    across, up = width - 1, (height - 1) * width
    q_across, r_across = across >> 6, np.uint64(across & 63)
    q_up, r_up = up >> 6, np.uint64(up & 63)

    for j in range(words):
        bits[unclaimed + j] = bits[board + j]
        bits[blocked + j] = _ZERO
        bits[hazards + j] = _ZERO
        bits[foods + j] = _ZERO
        bits[contested + j] = _ZERO
    for k in range(s[S_N_HAZARDS]):
        _add(bits, hazards, work[bit + s[g[G_HAZARDS] + k]])
    for k in range(s[S_N_FOOD]):
        _add(bits, foods, work[bit + s[g[G_FOOD] + k]])
    # Bodies block their squares until the move each is free (the latest over its segments).
    living = 0
    for i in range(n):
        for j in range(words):
            bits[fronts + i * stride + j] = _ZERO
            bits[news + i * stride + j] = _ZERO
            bits[owns + i * stride + j] = _ZERO
        work[food_d + i] = -1
        work[lo + i], work[hi + i] = 0, 0
        if s[causes + i] != ALIVE:
            continue
        length, body, hp = s[lengths + i], bodies + i * capacity, s[hps + i]
        for k in range(length):
            c = s[body + ((hp - k) & mask)]
            _add(bits, blocked, work[bit + c])
            work[free + c] = 0
        _claiming_rank(s, lengths, work, order, living, i)
        living += 1
    if not constrictor:
        for i in range(n):
            if s[causes + i] == ALIVE:
                length, body, hp = s[lengths + i], bodies + i * capacity, s[hps + i]
                for k in range(length):
                    c = s[body + ((hp - k) & mask)]
                    work[free + c] = max(work[free + c], length - k)
    # The heads: claimed on move 0, each its snake's first front.
    for i in range(n):
        if s[causes + i] == ALIVE:
            head = s[bodies + i * capacity + (s[hps + i] & mask)]
            x, y = cell_x(g, head), cell_y(g, head)
            if 0 <= x < width and 0 <= y < height:
                _add(bits, fronts + i * stride, work[bit + head])
                _remove(bits, unclaimed, work[bit + head])
                work[lo + i] = work[bit + head] >> 6
                work[hi + i] = work[lo + i] + 1

    d = 0
    moving = True
    while moving:
        d += 1
        moving = False
        if not constrictor:         # the squares whose last segment leaves on this move
            for i in range(n):
                k = s[lengths + i] - d
                if s[causes + i] == ALIVE and k >= 0:
                    c = s[bodies + i * capacity + ((s[hps + i] - k) & mask)]
                    if work[free + c] == d:
                        _remove(bits, blocked, work[bit + c])
        for j in range(words):
            bits[avail + j] = bits[unclaimed + j] & ~bits[blocked + j]
            bits[claimed + j] = _ZERO
        group_length, first = -1, 0
        for r in range(living):
            i = work[order + r]
            if s[lengths + i] != group_length:
                group_length, first = s[lengths + i], r
                for j in range(words):
                    bits[group + j] = _ZERO
            if work[lo + i] >= work[hi + i]:
                continue                # an empty front (and so no claims on the last move)
            # The words the front's neighbours may lie in (all when the board wraps).
            if not wraps:
                work[lo + i] = max(work[lo + i] - q_row - 1, 0)
                work[hi + i] = min(work[hi + i] + q_row + 1, words)
            else:
                work[lo + i], work[hi + i] = 0, words
            front, new = fronts + i * stride, news + i * stride
            contest = False
            for j in range(work[lo + i], work[hi + i]):
                f = bits[front + j]
                near = ((_up(bits[front + j - 1], f, _ONE) & bits[not_col0 + j])
                        | (_down(f, bits[front + j + 1], _ONE) & bits[not_coll + j])
                        | _up(bits[front + j - q_row - 1], bits[front + j - q_row], r_row)
                        | _down(bits[front + j + q_row], bits[front + j + q_row + 1], r_row))
                if wraps:
                    a, b = j - q_across, j + q_across
                    near |= (_up(_both(bits, front, col0, a - 1), _both(bits, front, col0, a),
                                 r_across)
                             | _down(_both(bits, front, coll, b), _both(bits, front, coll, b + 1),
                                     r_across))
                    a, b = j - q_up, j + q_up
                    near |= (_up(_both(bits, front, row0, a - 1), _both(bits, front, row0, a), r_up)
                             | _down(_both(bits, front, rowt, b), _both(bits, front, rowt, b + 1),
                                     r_up))
                reach = near & bits[avail + j]
                fresh = reach & ~bits[claimed + j]
                bits[new + j] = fresh
                bits[claimed + j] |= fresh
                both = reach & bits[group + j]
                bits[cont + j] = both
                contest |= both != _ZERO
            if contest:             # lost by the equally long snakes that claimed them
                for j in range(work[lo + i], work[hi + i]):
                    both = bits[cont + j]
                    for o in range(first, r):
                        bits[news + work[order + o] * stride + j] &= ~both
                    bits[group + j] &= ~both
                    bits[contested + j] |= both
            for j in range(words):
                bits[group + j] |= bits[new + j]
        for r in range(living):
            i = work[order + r]
            front, new, own = fronts + i * stride, news + i * stride, owns + i * stride
            first_word, last_word = words, -1
            for j in range(work[lo + i], work[hi + i]):
                bits[front + j] = bits[new + j]
                bits[own + j] |= bits[new + j]
                if bits[new + j] != _ZERO:
                    first_word, last_word = min(first_word, j), j
                # a food square is its own once the layer's contests are settled (twin of
                # the Python partition's rule)
                if bits[new + j] & bits[foods + j] and work[food_d + i] < 0:
                    work[food_d + i] = d
            work[lo + i], work[hi + i] = first_word, last_word + 1
            moving |= last_word >= 0
        for j in range(words):
            bits[unclaimed + j] &= ~bits[claimed + j]
    for i in range(n):
        own = owns + i * stride
        total = 0
        for j in range(words):
            total += 4 * np.int64(_popcount(bits[own + j] & ~bits[hazards + j]))
            total += np.int64(_popcount(bits[own + j] & bits[hazards + j]))
        work[quarters + i] = total
    return living


# ---------------------------------------------------------------------------------------
# The partition on boards of at most 128 squares: two words a set


@njit(inline="always", **JIT)
def _shift_up(lo, hi, r):
    """The 128-bit set ``(lo, hi)`` moved up ``r`` bits (0 <= r < 128)."""
    if r == 0:
        return lo, hi
    if r < 64:
        return lo << np.uint64(r), (hi << np.uint64(r)) | (lo >> np.uint64(64 - r))
    return _ZERO, lo << np.uint64(r - 64)


@njit(inline="always", **JIT)
def _shift_down(lo, hi, r):
    """The 128-bit set ``(lo, hi)`` moved down ``r`` bits (0 <= r < 128)."""
    if r == 0:
        return lo, hi
    if r < 64:
        return (lo >> np.uint64(r)) | (hi << np.uint64(64 - r)), hi >> np.uint64(r)
    return hi >> np.uint64(r - 64), _ZERO


@njit(inline="always", **JIT)
def _shift_up_row(lo, hi, r):
    """``(lo, hi)`` moved up ``r`` bits, 0 < r < 64 (a square, or a row under 64)."""
    return lo << r, (hi << r) | (lo >> (_64 - r))


@njit(inline="always", **JIT)
def _shift_down_row(lo, hi, r):
    """``(lo, hi)`` moved down ``r`` bits, 0 < r < 64."""
    return (lo >> r) | (hi << (_64 - r)), hi >> r


@njit(inline="always", **JIT)
def _square(b):
    """The 128-bit set of square ``b`` alone."""
    if b < 64:
        return _ONE << np.uint64(b), _ZERO
    return _ZERO, _ONE << np.uint64(b - 64)


@njit(inline="always", **JIT)
def _index(i):
    """``i`` as an index numba need not wrap around: an unsigned one. (numba adds the
    array's length to a negative signed index, a compare and a select at every access,
    and the registers they hold: a fifth of the partition's time.)"""
    return np.uint64(i)


@njit(**JIT)
def partition_two_words(g, s, work):
    """:func:`partition` where a set is two words (a board of at most 128 squares, rows
    under 64): the same layers, each set in two machine words, the snakes' fronts and
    claims kept by claiming rank, and the squares freed on each move listed once, before
    the first layer (a square is freed on the move its last segment leaves)."""
    bits = work.view(np.uint64)
    n, cells = g[G_N], g[G_CELLS]
    width, height = g[G_WIDTH], g[G_HEIGHT]
    lengths, causes, hps = g[G_LENGTH], g[G_CAUSE], g[G_HP]
    bodies, capacity, mask = g[G_BODY], g[G_CAPACITY], g[G_MASK]
    constrictor, wraps = g[G_CONSTRICTOR] != 0, g[G_WRAPS] != 0
    left_on, bit, freed = _FREE * cells, _BIT * cells, _freed(g)
    board, not_col0, not_coll = _set(g, _BOARD), _set(g, _NOT_COL0), _set(g, _NOT_COLL)
    col0, coll, row0, rowt = _set(g, _COL0), _set(g, _COLL), _set(g, _ROW0), _set(g, _ROWT)
    # By claiming rank: the front (the _FRONT sets), what it owns (the _NEW sets) and the
    # move it first claimed food on (-1: not yet); the snake's own set (_OWN) and food
    # distance are written at the end.
    fronts, claims, owns = _snake_set(g, _FRONT, 0), _snake_set(g, _NEW, 0), _snake_set(g, _OWN, 0)
    stride = _set(g, 1) - _set(g, 0)
    quarters, food_d, order = _number(g, _QUARTERS), _number(g, _FOOD_D), _number(g, _ORDER)
    group_first, fed = _number(g, _LO), _number(g, _HI)
    nc0_lo, nc0_hi = bits[_index(not_col0)], bits[_index(not_col0 + 1)]
    ncl_lo, ncl_hi = bits[_index(not_coll)], bits[_index(not_coll + 1)]
    across, up, row = width - 1, (height - 1) * width, np.uint64(width)

    unclaimed_lo, unclaimed_hi = bits[_index(board)], bits[_index(board + 1)]
    blocked_lo, blocked_hi = _ZERO, _ZERO
    hazards_lo, hazards_hi = _ZERO, _ZERO
    foods_lo, foods_hi = _ZERO, _ZERO
    contested_lo, contested_hi = _ZERO, _ZERO
    for k in range(s[S_N_HAZARDS]):
        a, b = _square(work[_index(bit + s[_index(g[G_HAZARDS] + k)])])
        hazards_lo |= a
        hazards_hi |= b
    for k in range(s[S_N_FOOD]):
        a, b = _square(work[_index(bit + s[_index(g[G_FOOD] + k)])])
        foods_lo |= a
        foods_hi |= b
    living, longest = 0, 0
    for i in range(n):
        work[_index(food_d + i)] = -1
        if s[_index(causes + i)] == ALIVE:
            longest = max(longest, s[_index(lengths + i)])
            _claiming_rank(s, lengths, work, order, living, i)
            living += 1
    # Bodies block their squares. Segment k of a body of length L leaves on move L - k; a
    # square (stacked segments, or squadmates' bodies) is freed when its last one leaves
    # (``left_on``: that move, for the squares already blocked).
    if not constrictor:
        for m in range(1, longest + 1):
            bits[_index(freed + 2 * m)], bits[_index(freed + 2 * m + 1)] = _ZERO, _ZERO
    for r in range(living):
        i = work[_index(order + r)]
        length, body, hp = s[_index(lengths + i)], bodies + i * capacity, s[_index(hps + i)]
        for k in range(length):
            c = s[_index(body + ((hp - k) & mask))]
            b = work[_index(bit + c)]
            a_lo, a_hi = _square(b)
            if constrictor:         # nothing is freed: no move to list
                blocked_lo |= a_lo
                blocked_hi |= a_hi
                continue
            word, one, m = b >> 6, _ONE << np.uint64(b & 63), length - k
            if ((blocked_lo & a_lo) | (blocked_hi & a_hi)) != _ZERO:    # met again
                if m <= work[_index(left_on + c)]:
                    continue
                bits[_index(freed + 2 * work[_index(left_on + c)] + word)] &= ~one
            blocked_lo |= a_lo
            blocked_hi |= a_hi
            work[_index(left_on + c)] = m
            bits[_index(freed + 2 * m + word)] |= one
    # The heads: claimed on move 0, each its snake's first front; the rank where each
    # rank's group of equal lengths begins.
    for r in range(living):
        i = work[_index(order + r)]
        if r > 0 and s[_index(lengths + i)] == s[_index(lengths + work[_index(order + r - 1)])]:
            work[_index(group_first + r)] = work[_index(group_first + r - 1)]
        else:
            work[_index(group_first + r)] = r
        work[_index(fed + r)] = -1
        front, claim = fronts + r * stride, claims + r * stride
        bits[_index(front)], bits[_index(front + 1)] = _ZERO, _ZERO
        bits[_index(claim)], bits[_index(claim + 1)] = _ZERO, _ZERO
        head = s[_index(bodies + i * capacity + (s[_index(hps + i)] & mask))]
        x, y = cell_x(g, head), cell_y(g, head)
        if 0 <= x < width and 0 <= y < height:
            a, b = _square(work[_index(bit + head)])
            bits[_index(front)], bits[_index(front + 1)] = a, b
            unclaimed_lo &= ~a
            unclaimed_hi &= ~b

    d = 0
    moving = True
    while moving:
        d += 1
        if not constrictor and d <= longest:    # the squares left on this move
            blocked_lo &= ~bits[_index(freed + 2 * d)]
            blocked_hi &= ~bits[_index(freed + 2 * d + 1)]
        avail_lo, avail_hi = unclaimed_lo & ~blocked_lo, unclaimed_hi & ~blocked_hi
        claimed_lo, claimed_hi = _ZERO, _ZERO
        group_lo, group_hi = _ZERO, _ZERO
        for r in range(living):
            first = work[_index(group_first + r)]
            if first == r:
                group_lo, group_hi = _ZERO, _ZERO
            front = fronts + r * stride
            f_lo, f_hi = bits[_index(front)], bits[_index(front + 1)]
            if f_lo == _ZERO and f_hi == _ZERO:
                continue
            a, b = _shift_up_row(f_lo, f_hi, _ONE)
            near_lo, near_hi = a & nc0_lo, b & nc0_hi
            a, b = _shift_down_row(f_lo, f_hi, _ONE)
            near_lo |= a & ncl_lo
            near_hi |= b & ncl_hi
            a, b = _shift_up_row(f_lo, f_hi, row)
            near_lo |= a
            near_hi |= b
            a, b = _shift_down_row(f_lo, f_hi, row)
            near_lo |= a
            near_hi |= b
            if wraps:
                a, b = _shift_up(f_lo & bits[_index(col0)], f_hi & bits[_index(col0 + 1)], across)
                near_lo |= a
                near_hi |= b
                a, b = _shift_down(f_lo & bits[_index(coll)], f_hi & bits[_index(coll + 1)], across)
                near_lo |= a
                near_hi |= b
                a, b = _shift_up(f_lo & bits[_index(row0)], f_hi & bits[_index(row0 + 1)], up)
                near_lo |= a
                near_hi |= b
                a, b = _shift_down(f_lo & bits[_index(rowt)], f_hi & bits[_index(rowt + 1)], up)
                near_lo |= a
                near_hi |= b
            reach_lo, reach_hi = near_lo & avail_lo, near_hi & avail_hi
            fresh_lo, fresh_hi = reach_lo & ~claimed_lo, reach_hi & ~claimed_hi
            claimed_lo |= fresh_lo
            claimed_hi |= fresh_hi
            both_lo, both_hi = reach_lo & group_lo, reach_hi & group_hi
            if both_lo != _ZERO or both_hi != _ZERO:
                # lost by the equally long snakes that claimed them on this move, with the
                # food they found on it if that was all of it
                for o in range(first, r):
                    other, claim = fronts + o * stride, claims + o * stride
                    bits[_index(other)] &= ~both_lo
                    bits[_index(other + 1)] &= ~both_hi
                    bits[_index(claim)] &= ~both_lo
                    bits[_index(claim + 1)] &= ~both_hi
                    if work[_index(fed + o)] == d and (
                            (bits[_index(other)] & foods_lo)
                            | (bits[_index(other + 1)] & foods_hi)) == _ZERO:
                        work[_index(fed + o)] = -1
                group_lo &= ~both_lo
                group_hi &= ~both_hi
                contested_lo |= both_lo
                contested_hi |= both_hi
            claim = claims + r * stride
            bits[_index(front)], bits[_index(front + 1)] = fresh_lo, fresh_hi
            bits[_index(claim)] |= fresh_lo
            bits[_index(claim + 1)] |= fresh_hi
            group_lo |= fresh_lo
            group_hi |= fresh_hi
            eats = ((fresh_lo & foods_lo) | (fresh_hi & foods_hi)) != _ZERO
            if eats and work[_index(fed + r)] < 0:
                work[_index(fed + r)] = d
        unclaimed_lo &= ~claimed_lo
        unclaimed_hi &= ~claimed_hi
        moving = (claimed_lo | claimed_hi) != _ZERO
    contested = _set(g, _CONTESTED)
    bits[_index(contested)], bits[_index(contested + 1)] = contested_lo, contested_hi
    for i in range(n):
        own = owns + i * stride
        bits[_index(own)], bits[_index(own + 1)] = _ZERO, _ZERO
        work[_index(quarters + i)] = 0
    for r in range(living):
        i = work[_index(order + r)]
        work[_index(food_d + i)] = work[_index(fed + r)]
        claim, own = claims + r * stride, owns + i * stride
        o_lo, o_hi = bits[_index(claim)], bits[_index(claim + 1)]
        bits[_index(own)], bits[_index(own + 1)] = o_lo, o_hi
        work[_index(quarters + i)] = (4 * np.int64(_popcount(o_lo & ~hazards_lo))
                                      + 4 * np.int64(_popcount(o_hi & ~hazards_hi))
                                      + np.int64(_popcount(o_lo & hazards_lo))
                                      + np.int64(_popcount(o_hi & hazards_hi)))
    return living


# ---------------------------------------------------------------------------------------
# Values


@njit(inline="always", **JIT)
def _distance(g, a, b):
    """Board distance between cells ``a`` and ``b`` (moves on an empty board, around the
    edges when it wraps)."""
    dx, dy = abs(cell_x(g, a) - cell_x(g, b)), abs(cell_y(g, a) - cell_y(g, b))
    if g[G_WRAPS]:
        dx, dy = min(dx, g[G_WIDTH] - dx), min(dy, g[G_HEIGHT] - dy)
    return dx + dy


@njit(inline="always", **JIT)
def _style_value(g, s, i, work):
    """Snake ``i``'s value by the style's weights, from the partition in ``work`` (``i``
    alive): :func:`snake.evaluation.control.style_value`."""
    n = g[G_N]
    quarters, food_d = _number(g, _QUARTERS), _number(g, _FOOD_D)
    squares = work[quarters + i] / 4.0
    length = s[g[G_LENGTH] + i]
    others = False
    most = 0          # quarters of the best other snake
    longest = 0
    for j in range(n):
        if j == i or s[g[G_CAUSE] + j] != ALIVE:
            continue
        if not others or work[quarters + j] > most:
            most = work[quarters + j]
        if not others or s[g[G_LENGTH] + j] > longest:
            longest = s[g[G_LENGTH] + j]
        others = True
    style = _number(g, _NUMBERS)
    v = work[style + _W_CONTROL] / _MILLION * (squares - most / 4.0) / (g[G_WIDTH] * g[G_HEIGHT])
    if others:
        v += work[style + _W_LENGTH] / _MILLION * _lead_tanh(g, work, length - longest)
    if squares < length:
        v -= work[style + _W_CRAMPED] / _MILLION * (1.0 - squares / length)
    hunt = work[style + _W_HUNT]
    if hunt > 0:
        # A hunter: how cramped the most cramped shorter opponent is.
        cramped = 0.0
        for j in range(n):
            lj = s[g[G_LENGTH] + j]
            if j != i and s[g[G_CAUSE] + j] == ALIVE and lj < length:
                cramped = max(cramped, 1.0 - min(1.0, work[quarters + j] / 4.0 / lj))
        v += hunt / _MILLION * cramped
    hp = s[g[G_HEALTH] + i]
    food = work[food_d + i]
    hunger = work[style + _W_HUNGER]
    if food < 0:
        if hp <= squares // 2 or hp < 15:
            v -= 0.5 * (1.0 - hp / 100.0)
        if hunger > 0:
            nearest = _nearest_food(g, s, i)
            if nearest >= 0 and hp - nearest < HUNGER_MARGIN:
                v -= hunger / _MILLION * min(1.0, (HUNGER_MARGIN - (hp - nearest)) / HUNGER_MARGIN)
    elif hp < food:
        v -= 0.5
    elif hp < work[style + _FOOD_HEALTH] / _MILLION:
        v -= work[style + _W_FOOD] / _MILLION * food / (g[G_WIDTH] + g[G_HEIGHT])
    if hunger > 0:
        return _soft(v)
    return max(-LIMIT, min(LIMIT, v))


@njit(**JIT)
def _nearest_food(g, s, i):
    """The board distance from snake ``i``'s head to the nearest food (-1 with none):
    :func:`snake.evaluation.control.nearest_food`."""
    head = s[g[G_BODY] + i * g[G_CAPACITY] + (s[g[G_HP] + i] & g[G_MASK])]
    nearest = -1
    for k in range(s[S_N_FOOD]):
        d = _distance(g, head, s[g[G_FOOD] + k])
        if nearest < 0 or d < nearest:
            nearest = d
    return nearest


@njit(**JIT)
def _soft(v):
    """``v`` within ``±SOFT`` as it is, beyond it squashed smoothly into ``±LIMIT``
    (:func:`snake.evaluation.control.soft`)."""
    a = abs(v)
    if a <= SOFT:
        return v
    x = (a - SOFT) / (LIMIT - SOFT)
    a = SOFT + (LIMIT - SOFT) * x / (1.0 + x)
    return a if v > 0 else -a


@njit(inline="always", **JIT)
def _measure(g, s, i, work, out, o):
    """Snake ``i``'s :data:`MEASUREMENTS` into ``out[o:]``, from the partition in ``work``
    (``i`` alive): :func:`snake.evaluation.control.measure`. (An offset, not a slice: no
    array is made at every leaf.)"""
    n = g[G_N]
    quarters, food_d = _number(g, _QUARTERS), _number(g, _FOOD_D)
    area = g[G_WIDTH] * g[G_HEIGHT]
    squares = work[quarters + i] / 4.0
    length = s[g[G_LENGTH] + i]
    most, others, longest, opponents, longer = 0.0, 0.0, 0, 0, 0
    for j in range(n):
        if j == i or s[g[G_CAUSE] + j] != ALIVE:
            continue
        theirs = work[quarters + j] / 4.0
        most = max(most, theirs)
        others += theirs
        lj = s[g[G_LENGTH] + j]
        longest = max(longest, lj)
        opponents += 1
        if lj >= length:
            longer += 1
    lead = length - longest if opponents > 0 else 0
    food = work[food_d + i]
    hp = s[g[G_HEALTH] + i]
    reach = g[G_WIDTH] + g[G_HEIGHT]
    out[o + 0] = _style_value(g, s, i, work)
    out[o + 1] = squares / area
    out[o + 2] = most / area
    out[o + 3] = others / area
    out[o + 4] = _lead_tanh(g, work, lead)
    out[o + 5] = lead / 10.0
    out[o + 6] = max(0.0, 1.0 - squares / length)
    out[o + 7] = hp / 100.0
    out[o + 8] = (food if food >= 0 else reach) / reach
    out[o + 9] = 1.0 if food < 0 else 0.0
    out[o + 10] = 1.0 if food >= 0 and hp < food else 0.0
    out[o + 11] = opponents / 3.0
    out[o + 12] = length / area
    out[o + 13] = longer / 3.0
    _around_head(g, s, i, work, out, o)


@njit(inline="always", **JIT)
def _around_head(g, s, i, work, out, o):
    """The last five :data:`MEASUREMENTS` of snake ``i`` (alive): its moves, the risky
    ones, prey, the nearest threat and whether its tail is its own
    (:func:`snake.evaluation.control.around_head`). (Heads and squares are read here from
    the state and ``g``'s tables, not through the core's small functions: there were a
    dozen calls a leaf, each handing over two arrays; chosen while numba still counted
    references to them, 0.955x the time a node in a duel.)"""
    n, causes, lengths = g[G_N], g[G_CAUSE], g[G_LENGTH]
    bodies, capacity, mask, hps = g[G_BODY], g[G_CAPACITY], g[G_MASK], g[G_HP]
    xs, ys, width, height = g[G_X], g[G_Y], g[G_WIDTH], g[G_HEIGHT]
    wraps = g[G_WRAPS] != 0
    length = s[lengths + i]
    body, hp = bodies + i * capacity, s[hps + i]
    head = s[body + (hp & mask)]
    neck = s[body + ((hp - 1) & mask)] if length > 1 else -1
    moves, risky = 0, 0
    for move in range(4):
        cell = next_cell(g, head, move, wraps)
        x, y = g[xs + cell], g[ys + cell]
        if (cell == neck and neck != head or not (0 <= x < width and 0 <= y < height)
                or s[g[G_OCC] + cell] != 0 and blocked(g, s, i, cell)):
            continue
        moves += 1
        for j in range(n):
            if j != i and s[causes + j] == ALIVE and s[lengths + j] >= length:
                other = s[bodies + j * capacity + (s[hps + j] & mask)]
                if _distance(g, cell, other) == 1:
                    risky += 1
                    break
    reach = width + height
    prey, threat = 0, reach
    for j in range(n):
        if j == i or s[causes + j] != ALIVE:
            continue
        d = _distance(g, head, s[bodies + j * capacity + (s[hps + j] & mask)])
        if s[lengths + j] < length:
            if d <= 2:
                prey += 1
        else:
            threat = min(threat, d)
    tail = s[body + ((hp - (length - 1)) & mask)]
    b = work[_BIT * g[G_CELLS] + tail]
    own = np.uint64(work[_snake_set(g, _OWN, i) + (b >> 6)])
    out[o + 14] = moves / 4.0
    out[o + 15] = risky / 4.0
    out[o + 16] = prey / 3.0
    out[o + 17] = threat / reach
    out[o + 18] = 1.0 if tail == head or (own >> np.uint64(b & 63)) & _ONE else 0.0


@njit(inline="always", **JIT)
def _head_value(work, weights, at, x, o):
    """The learned head at ``work[at:]`` (hidden size, whether it is residual, then per
    hidden unit its weights and bias, then the output's weights and bias, as float64 in
    ``weights``, the workspace's float view: the millionths :func:`workspace` was given,
    divided) on the measurements ``x[o:]``: ``2 sigmoid(z) - 1``, and a residual head adds
    its ``z`` to the logit of the style's value ``x[o]``: ``tanh(atanh(x[o]) + z / 2)``
    (:func:`snake.evaluation.value_head.head_value`)."""
    hidden = work[at]
    k = N_MEASUREMENTS
    w = at + 2
    out_w = w + hidden * (k + 1)
    z = weights[out_w + hidden]
    for h in range(hidden):
        a = weights[w + k]
        for j in range(k):
            a += weights[w + j] * x[o + j]
        if a > 0.0:
            z += weights[out_w + h] * a
        w += k + 1
    if work[at + 1] != 0:
        z += 2.0 * math.atanh(max(-LIMIT, min(LIMIT, x[o])))
    return math.tanh(z / 2.0)


@njit(inline="always", **JIT)
def _value(g, s, i, work):
    """Snake ``i``'s value from the partition in ``work`` (``i`` alive): the style's, or
    the learned head's when the workspace holds one, clamped
    (:func:`snake.evaluation.control.control_value`)."""
    at = _head_at(g)
    if work[at] == 0:
        return _style_value(g, s, i, work)
    weights = work.view(np.float64)     # one view: the measurements and the head's weights
    measured = _number(g, _NUMBERS) + _MEASURED
    _measure(g, s, i, work, weights, measured)
    return max(-LIMIT, min(LIMIT, _head_value(work, weights, at, weights, measured)))


@njit(**JIT)
def measure(g, s, i, work, out):
    """Snake ``i``'s :data:`MEASUREMENTS` in ``s`` into ``out`` (float64): what a learned
    value head reads (zeros for a snake not alive)."""
    partition(g, s, work)
    if s[g[G_CAUSE] + i] != ALIVE:
        out[:] = 0.0
    else:
        _measure(g, s, i, work, out, 0)


@njit(**JIT)
def control_value(g, s, i, work):
    """The board-control value of snake ``i`` (board order) in ``s``, in [-LIMIT, LIMIT]:
    ``control_value(state, id, style, head)`` of the reference, with the workspace's style
    and head."""
    if s[g[G_CAUSE] + i] != ALIVE:
        return -LIMIT
    partition(g, s, work)
    return _value(g, s, i, work)


@njit(**JIT)
def control_values(g, s, out, work):
    """Every snake's board-control value into ``out`` (float64, one per snake), from one
    partition."""
    partition(g, s, work)
    for i in range(g[G_N]):
        out[i] = _value(g, s, i, work) if s[g[G_CAUSE] + i] == ALIVE else -LIMIT


def board_control(g: np.ndarray, s: np.ndarray, work: np.ndarray,
                  partition_with=partition) -> list[tuple[float, int | None] | None]:
    """Per snake (board order), as the reference's ``board_control``: (squares it controls,
    moves to the nearest food it controls or ``None``), ``None`` for a snake not alive.
    ``partition_with``: :func:`partition`, or one of its two ways (for tests)."""
    partition_with(g, s, work)
    n = int(g[G_N])
    quarters, food_d = int(_number(g, _QUARTERS)), int(_number(g, _FOOD_D))
    return [(work[quarters + i] / 4.0, int(work[food_d + i]) if work[food_d + i] >= 0 else None)
            if s[g[G_CAUSE] + i] == ALIVE else None for i in range(n)]


def ownership(g: np.ndarray, s: np.ndarray, work: np.ndarray,
              partition_with=partition) -> np.ndarray:
    """Who controls each square of ``s`` (a ``height x width`` array indexed ``[y, x]``:
    a snake index, -1 nobody, :data:`CONTESTED`; a head is its snake's, the later snake's
    when two share a square): for tests, explain and pictures. ``partition_with`` as in
    :func:`board_control`."""
    partition_with(g, s, work)
    width, height, pw = int(g[G_WIDTH]), int(g[G_HEIGHT]), int(g[G_PW])
    words = int(_words(g))

    def members(start: int) -> np.ndarray:
        packed = work[start:start + words].view(np.uint8)
        return np.unpackbits(packed, bitorder="little")[:width * height].reshape(height, width) == 1

    out = np.full((height, width), -1)
    out[members(int(_set(g, _CONTESTED)))] = CONTESTED
    for i in range(int(g[G_N])):
        out[members(int(_snake_set(g, _OWN, i)))] = i
        if s[g[G_CAUSE] + i] == ALIVE:
            head = int(s[g[G_BODY] + i * g[G_CAPACITY] + (s[g[G_HP] + i] & g[G_MASK])])
            out[head // pw - 1, head % pw - 1] = i
    return out
