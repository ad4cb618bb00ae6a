"""The compiled core: the rules compiled with numba, the twin of :mod:`snake.rules`.

- :mod:`.state`: the compact game state (one ``int32`` vector), :func:`encode`, :func:`decode`;
- :mod:`.step`: the turn step, the twin of :mod:`snake.rules.stages`, with a report of the
  pieces that changed.

:func:`apply_rules` here is the convenient form for Python callers (tests, conformance, the
arena): moves by snake id, a new :class:`Packed` back. The compiled functions take and edit
the arrays directly. :mod:`snake.rules` stays the readable reference; everything here is
held equal to it by tests. :mod:`.jit` is how every compiled function of the project is
compiled and cached; the compiled search and evaluation are twins of their own
(:mod:`snake.search.compiled`, :mod:`snake.evaluation.compiled`).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from snake.board import Point
from snake.core.state import (
    G_CAPACITY,
    G_FOOD,
    G_FOOD_AT,
    G_FOOD_CAPACITY,
    G_HAZARD_AT,
    G_HAZARD_CAPACITY,
    G_HAZARDS,
    G_HEIGHT,
    G_N,
    G_PW,
    G_WIDTH,
    S_N_FOOD,
    S_N_HAZARDS,
    S_TURN,
    EncodeError,
    Packed,
    decode,
    encode,
)
from snake.core.step import OVERFLOW
from snake.core.step import apply_rules as _apply_rules
from snake.rules import MOVES

__all__ = ["EncodeError", "Packed", "apply_rules", "decode", "encode", "end_turn", "move_numbers"]

_MOVE_NUMBER = {m: i for i, m in enumerate(MOVES)}
_NO_REPORT = np.zeros((0, 4), dtype=np.int32)


def move_numbers(packed: Packed, moves: Mapping[str, str]) -> np.ndarray:
    """The move number of each snake, in board order (-1 for a missing or invalid move)."""
    return np.array([_MOVE_NUMBER.get(moves.get(s.id, ""), -1)  # type: ignore[arg-type]
                     for s in packed.template.board.snakes], dtype=np.int32)


def report_rows(g: np.ndarray) -> int:
    """Rows a change report may need in one turn: every piece of every snake, all food,
    the hazards twice (a royale shrink replaces them all)."""
    return int(g[G_N] * (g[G_CAPACITY] + 8) + g[G_FOOD_CAPACITY] + 2 * g[G_HAZARD_CAPACITY] + 8)


def apply_rules(packed: Packed, moves: Mapping[str, str], *, royale_side: int | None = None,
                report: bool = False) -> tuple[Packed, np.ndarray | None]:
    """The rule stages of one turn on a copy of ``packed`` (as :func:`snake.rules.apply_rules`),
    and, with ``report``, the pieces that changed (rows ``sign, snake, cell, piece``; see
    :mod:`.step`). Raises ``OverflowError`` when a body outgrows its buffer."""
    after = packed.copy()
    g = packed.g
    changes = _NO_REPORT
    if report:
        changes = np.zeros((report_rows(g), 4), dtype=np.int32)
    count = _apply_rules(g, after.s, move_numbers(packed, moves),
                         -1 if royale_side is None else royale_side, changes)
    if count == OVERFLOW:
        raise OverflowError("a body outgrew the packed state: encode with a larger horizon")
    return after, (changes[:count] if report else None)


def end_turn(packed: Packed, spawned_food: list[Point] = (),
             hazards: list[Point] | None = None) -> Packed:
    """A copy of ``packed`` with what a map stage did (the compiled step has no random food
    and no map hazards): ``spawned_food`` appended to the food, the hazards replaced by
    ``hazards`` when given, and ``turn`` + 1."""
    after = packed.copy()
    g, s = after.g, after.s
    width, height, pw = int(g[G_WIDTH]), int(g[G_HEIGHT]), int(g[G_PW])

    def cell(point: Point) -> int:
        x, y = point
        if not (0 <= x < width and 0 <= y < height):
            raise EncodeError(f"{point} is off the board")
        return (y + 1) * pw + x + 1

    n_food = int(s[S_N_FOOD])
    if n_food + len(spawned_food) > g[G_FOOD_CAPACITY]:
        raise EncodeError("more food than the packed state holds")
    for point in spawned_food:
        c = cell(point)
        s[g[G_FOOD] + n_food] = c
        s[g[G_FOOD_AT] + c] += 1
        n_food += 1
    s[S_N_FOOD] = n_food
    if hazards is not None:
        if len(hazards) > g[G_HAZARD_CAPACITY]:
            raise EncodeError("more hazards than the packed state holds")
        for k in range(int(s[S_N_HAZARDS])):
            s[g[G_HAZARD_AT] + s[g[G_HAZARDS] + k]] -= 1
        for k, point in enumerate(hazards):
            c = cell(point)
            s[g[G_HAZARDS] + k] = c
            s[g[G_HAZARD_AT] + c] += 1
        s[S_N_HAZARDS] = len(hazards)
    s[S_TURN] += 1
    return after
