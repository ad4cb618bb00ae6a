"""Board control: the value of a position for a snake, in (-1, 1), at the leaves of a search;
the readable reference of :mod:`snake.evaluation.compiled.control`.

Evaluators share one interface (:class:`Evaluator`), so the same search can run with any:

:class:`BoardControlEvaluator` (``"voronoi"``)
    A simultaneous breadth-first search from every living head (a Voronoi partition of the
    board in moves): a square belongs to the snake that reaches it first; when two reach
    it on the same move the longer one gets it, and equal lengths leave it contested (no
    one's). Body squares open up as the body moves away: a square is free from the move
    on which its segment has left it (:func:`snake.rules.turns_until_vacated`: segment
    ``k`` of a body of length ``L`` after ``L - k`` moves, never in constrictor). A hazard
    square counts 1/4. The value of snake ``i`` is

        0.50 * (own squares - most squares of another snake) / board area
      + 0.25 * tanh((own length - longest other length) / 3)
      - 0.40 * (1 - own squares / own length)        if it owns fewer squares than its length
      - 0.50                                          if its health runs out before it can
                                                      reach the nearest food it owns
      - 0.10 * (distance to that food) / (width + height)   when health < 50

    clamped into (-1, 1). One partition gives every snake's value at once.

The other evaluator, the network's, is :class:`snake.evaluation.network.NnueEvaluator`.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from snake.board import GameState, Point
from snake.rules import neighbour_table, turns_until_vacated

#: Values are clamped into (-LIMIT, LIMIT): only exact results reach the ends.
LIMIT = 0.999


class Evaluator(Protocol):
    """``root`` builds the per-node context of the root for the snakes in ``views``,
    ``child`` derives a child's context from its parent's (the node stack), ``value``
    scores a position for a living snake, ``priors`` gives move weights for a snake (move
    ordering) or ``None``."""

    name: str

    def root(self, state: GameState, views: tuple[str, ...], accumulator: Any | None) -> Any: ...

    def child(self, context: Any, state: GameState) -> Any: ...

    def value(self, context: Any, state: GameState, snake_id: str) -> float: ...

    def priors(self, context: Any, state: GameState, snake_id: str,
               moves: tuple[str, ...]) -> dict[str, float] | None: ...


# ---------------------------------------------------------------------------------------
# Board control

_HAZARD_WEIGHT = 0.25


def board_control(state: GameState) -> dict[str, tuple[float, int | None]]:
    """For each living snake: (squares it controls, moves to the nearest food it controls
    or ``None``), by the partition described in the module docstring."""
    snakes, _, counts, food_at = _partition(state)
    return {s.id: (counts[i], food_at[i]) for i, s in enumerate(snakes)}


def ownership(state: GameState) -> dict[str, set[Point]]:
    """For each living snake, the squares it controls in the partition (its head's square
    among them)."""
    snakes, owner, _, _ = _partition(state)
    width = state.board.width
    out: dict[str, set[Point]] = {s.id: set() for s in snakes}
    for c, o in enumerate(owner):
        if o >= 0:
            out[snakes[o].id].add((c % width, c // width))
    return out


def _partition(state: GameState):
    """The partition: the living snakes, each square's owner (an index into them, -1 nobody,
    -2 contested; by ``y * width + x``), each snake's squares and food distance."""
    board = state.board
    width, height = board.width, board.height
    neighbours = neighbour_table(width, height, state.ruleset.wraps)
    snakes = [s for s in board.snakes if not s.eliminated_cause]
    n = width * height
    free_at = [0] * n     # the move from which each square is free
    ruleset = state.ruleset
    for s in snakes:
        body = s.body
        for t, (x, y) in zip(turns_until_vacated(ruleset, len(body)), body):
            if 0 <= x < width and 0 <= y < height:
                i = y * width + x
                if t > free_at[i]:
                    free_at[i] = t
    weight = [1.0] * n
    for x, y in board.hazards:
        if 0 <= x < width and 0 <= y < height:
            weight[y * width + x] = _HAZARD_WEIGHT
    is_food = bytearray(n)
    for x, y in board.food:
        if 0 <= x < width and 0 <= y < height:
            is_food[y * width + x] = 1

    # Layer by layer; within a layer the longer snakes claim first, so a square reached on
    # the same move by a shorter snake is simply taken, and one reached by an equally long
    # snake becomes contested (owner -2, counted for nobody).
    owner = [-1] * n          # -1 unclaimed, -2 contested, else snake index
    dist = [-1] * n
    lengths = [len(s.body) for s in snakes]
    counts = [0.0] * len(snakes)
    food_at: list[int | None] = [None] * len(snakes)
    fronts: list[list[int]] = []
    for i, s in enumerate(snakes):
        x, y = s.head
        if 0 <= x < width and 0 <= y < height:
            c = y * width + x
            owner[c] = i
            dist[c] = 0
            fronts.append([c])
        else:
            fronts.append([])
    order = sorted(range(len(snakes)), key=lambda k: -lengths[k])
    d = 0
    while any(fronts):
        d += 1
        contested = False
        for i in order:
            li = lengths[i]
            new_front = []
            add = new_front.append
            count = 0.0
            for c in fronts[i]:
                for m in neighbours[c]:
                    dm = dist[m]
                    if dm < 0:
                        if free_at[m] <= d:
                            dist[m] = d
                            owner[m] = i
                            add(m)
                            count += weight[m]
                    elif dm == d:
                        o = owner[m]
                        if o >= 0 and o != i and lengths[o] == li:
                            owner[m] = -2
                            counts[o] -= weight[m]
                            contested = True
            counts[i] += count
            fronts[i] = new_front
        if contested:   # nobody expands from a contested square
            fronts = [[c for c in front if owner[c] >= 0] for front in fronts]
        # a food square is a snake's once the layer's contests are settled: one an equally
        # long snake reached on the same move is nobody's (until 2026-11-26 it stayed the
        # food of whichever of them came first in board order)
        for i, front in enumerate(fronts):
            if food_at[i] is None and any(is_food[c] for c in front):
                food_at[i] = d
    return snakes, owner, counts, food_at


def control_values(state: GameState, ids: tuple[str, ...]) -> dict[str, float]:
    """The board-control value of each living snake in ``ids`` (module docstring)."""
    control = board_control(state)
    board = state.board
    area = board.width * board.height
    lengths = {s.id: len(s.body) for s in board.snakes if not s.eliminated_cause}
    health = {s.id: s.health for s in board.snakes if not s.eliminated_cause}
    out: dict[str, float] = {}
    for sid in ids:
        if sid not in control:
            out[sid] = -LIMIT
            continue
        squares, food = control[sid]
        others = [c[0] for k, c in control.items() if k != sid]
        other_len = [v for k, v in lengths.items() if k != sid]
        length = lengths[sid]
        v = 0.5 * (squares - (max(others) if others else 0.0)) / area
        if other_len:
            v += 0.25 * math.tanh((length - max(other_len)) / 3.0)
        if squares < length:
            v -= 0.4 * (1.0 - squares / length)
        hp = health[sid]
        if food is None:
            if hp <= squares // 2 or hp < 15:
                v -= 0.5 * (1.0 - hp / 100.0)
        else:
            if hp < food:
                v -= 0.5
            elif hp < 50:
                v -= 0.1 * food / (board.width + board.height)
        out[sid] = max(-LIMIT, min(LIMIT, v))
    return out


class BoardControlEvaluator:
    """Board control (Voronoi) evaluation; needs no per-node state."""

    name = "voronoi"

    def root(self, state: GameState, views: tuple[str, ...], accumulator: Any | None) -> None:
        return None

    def child(self, context: None, state: GameState) -> None:
        return None

    def value(self, context: None, state: GameState, snake_id: str) -> float:
        return control_values(state, (snake_id,))[snake_id]

    def priors(self, context: None, state: GameState, snake_id: str,
               moves: tuple[str, ...]) -> dict[str, float] | None:
        return None
