"""Which moves are not certain death, compiled: the twin of :mod:`snake.rules.occupancy`.

A square is an obstacle for snake ``i`` after this turn's movement when a living body still
occupies it: ``occ`` counts every living segment, minus each tail that moves away (every
snake's last segment, unless the ruleset is a constrictor one; a stacked tail keeps its
other copy), minus the segments of squadmates whose bodies ``i`` passes through (squad with
``allowBodyCollisions``), minus every segment of another snake the rules eliminate before
collisions whatever it plays (:func:`removed_before_collisions`). Held equal to the
reference by tests/test_core_search.py.
"""

from __future__ import annotations

from numba import njit

from snake.core.jit import JIT
from snake.core.state import (
    ALIVE,
    G_ALLOW_BODY,
    G_CAUSE,
    G_CONSTRICTOR,
    G_DAMAGE,
    G_FOOD_AT,
    G_HAZARD_AT,
    G_HEALTH,
    G_HEIGHT,
    G_LENGTH,
    G_N,
    G_OCC,
    G_PIPELINE,
    G_SQUAD,
    G_WIDTH,
    G_WRAPS,
    S_N_HAZARDS,
    SQUAD,
)
from snake.core.step import cell_x, cell_y, default_move, next_cell, segment


@njit(**JIT)
def on_board(g, cell):
    x, y = cell_x(g, cell), cell_y(g, cell)
    return 0 <= x < g[G_WIDTH] and 0 <= y < g[G_HEIGHT]


@njit(**JIT)
def passes_through(g, s, i, j):
    """``j``'s body is no obstacle to ``i`` (squadmates with ``allowBodyCollisions``)."""
    return (g[G_PIPELINE] == SQUAD and g[G_ALLOW_BODY] != 0 and i != j
            and s[g[G_SQUAD] + i] == s[g[G_SQUAD] + j] and s[g[G_SQUAD] + i] != 0)


@njit(**JIT)
def dies_of_health(g, s, j, cell):
    """Snake ``j`` moving onto ``cell`` is eliminated by health this turn (twin of
    :func:`snake.rules.occupancy.dies_of_health`)."""
    if g[G_CONSTRICTOR] != 0 or s[g[G_FOOD_AT] + cell] > 0:
        return False
    return s[g[G_HEALTH] + j] - 1 - g[G_DAMAGE] * s[g[G_HAZARD_AT] + cell] <= 0


@njit(**JIT)
def removed_before_collisions(g, s, j):
    """Snake ``j`` leaves the board or dies of health on every move, so the rules eliminate
    it before collisions (twin of :func:`snake.rules.occupancy.removed_before_collisions`)."""
    if s[g[G_HEALTH] + j] > 1 and s[S_N_HAZARDS] == 0:
        return False
    head = segment(g, s, j, 0)
    wraps = g[G_WRAPS] != 0
    for move in range(4):
        cell = next_cell(g, head, move, wraps)
        if on_board(g, cell) and not dies_of_health(g, s, j, cell):
            return False
    return True


@njit(**JIT)
def blocked(g, s, i, cell):
    """A living body occupies ``cell`` after this turn's movement, as an obstacle for ``i``."""
    count = s[g[G_OCC] + cell]
    if count == 0:
        return False
    constrictor = g[G_CONSTRICTOR] != 0
    for j in range(g[G_N]):
        if s[g[G_CAUSE] + j] != ALIVE:
            continue
        length = s[g[G_LENGTH] + j]
        if passes_through(g, s, i, j) or (
                j != i and (s[g[G_HEALTH] + j] <= 1 or s[S_N_HAZARDS] != 0)  # (rare: at a glance)
                and removed_before_collisions(g, s, j)):
            for k in range(length):         # none of its segments counts
                if segment(g, s, j, k) == cell:
                    count -= 1
        elif not constrictor and segment(g, s, j, length - 1) == cell:
            count -= 1
    return count > 0


@njit(**JIT)
def candidate_moves(g, s, i, out):
    """The moves of snake ``i`` that are not certain death, in move order, into ``out``;
    returns how many. With none, its first move that is not back onto its neck (up if
    even that is missing), as the reference does."""
    head = segment(g, s, i, 0)
    neck = -1
    if s[g[G_LENGTH] + i] > 1:
        neck = segment(g, s, i, 1)
        if neck == head:
            neck = -1
    count = 0
    fallback = -1
    for move in range(4):
        cell = next_cell(g, head, move, g[G_WRAPS] != 0)
        if cell == neck:
            continue
        if fallback < 0:
            fallback = move
        if not on_board(g, cell) or blocked(g, s, i, cell):
            continue
        out[count] = move
        count += 1
    if count == 0:
        out[0] = fallback if fallback >= 0 else 0
        count = 1
    return count


@njit(**JIT)
def cheap_move(g, s, i, scratch):
    """The one move of a snake the search does not branch on: straight ahead if that is a
    candidate, else the first candidate (the reference's ``snake.search.plan.cheap_move``)."""
    count = candidate_moves(g, s, i, scratch)
    straight = default_move(g, s, i)
    for k in range(count):
        if scratch[k] == straight:
            return straight
    return scratch[0]
