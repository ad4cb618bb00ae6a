"""Board control: the value of a position for a snake, in [-LIMIT, LIMIT], at the leaves of
a search; the readable reference of :mod:`snake.evaluation.compiled.control`, which plays
every term below under the same names (tests/test_evaluation_twin.py holds the two equal).

Evaluators share one interface (:class:`Evaluator`), so the same search can run with any:
:class:`BoardControlEvaluator` (``"voronoi"``) is this one, the network's is
:class:`snake.evaluation.network.NnueEvaluator`.

**The partition** (:func:`partition`). A simultaneous breadth-first search from every living
head (a Voronoi partition of the board in moves): a square belongs to the snake that
reaches it first; when two reach it on the same move the longer one gets it, and equal
lengths leave it contested (no one's, and no one expands from it). Body squares open up as
the body moves away: a square is free from the move on which its segment has left it
(:func:`snake.rules.turns_until_vacated`: segment ``k`` of a body of length ``L`` after
``L - k`` moves, never in constrictor). A hazard square counts 1/4; a head's own square
counts for no one. A snake's food is the first move on which it owns a food square.

**The value** (:func:`style_value`) of a living snake by a style's weights (:class:`Style`,
:data:`STYLES`), with ``S`` its squares, ``L`` its length, ``h`` its health, ``f`` the moves
to the first food it owns, ``A`` the board's area, ``R`` its width + height::

      control * (S - most squares of another snake) / A
    + length  * tanh((L - longest other length) / 3)              when there are others
    - cramped * (1 - S / L)                                        when S < L
    + hunt    * max(1 - min(1, S_j / L_j) over the others j shorter than it; 0)
    and, owning no food:
    - 0.5 * (1 - h / 100)                                          when h <= S // 2 or h < 15
    - hunger * min(1, (HUNGER_MARGIN - (h - d)) / HUNGER_MARGIN)   when h - d < HUNGER_MARGIN,
          ``d`` the board distance from its head to the nearest food (:func:`nearest_food`)
    or, owning food:
    - 0.5                                                          when h < f
    - food * f / R                                                 else when h < food_health

clamped into [-LIMIT, LIMIT]; a hungry style's (``hunger > 0``) squashed there instead
(:func:`soft`). The default style plays

    0.5 * (S - most of another) / A + 0.25 * tanh((L - longest other) / 3)
    - 0.4 * (1 - S / L) if S < L, the starving terms above, - 0.1 * f / R if h < 50.

One partition gives every snake's value at once (:func:`control_values`).

**With a learned value head** (:mod:`snake.evaluation.value_head`) the value is instead the
head's output on the snake's :data:`MEASUREMENTS` (:func:`measure`), clamped into
[-LIMIT, LIMIT] (:func:`control_value`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np

from snake.board import GameState, Point, Snake
from snake.rules import (
    MOVES,
    distance,
    fatal_reason,
    neighbour_table,
    next_square,
    obstacles_after_move,
    turns_until_vacated,
)

#: Values are clamped into [-LIMIT, LIMIT]: only exact results reach the ends; a snake that
#: is not alive gets ``-LIMIT``.
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
# Styles


class Style(NamedTuple):
    """The weights of the value's terms (module docstring), in the order the compiled
    workspace holds them."""

    control: float          # the squares lead over the best other snake, per board area
    length: float           # the length lead, tanh(lead / 3)
    cramped: float          # fewer squares than length: 1 - S / L
    food: float             # the moves to the food it owns, per (width + height)
    food_health: float      # the health below which that distance counts (above 100: always)
    hunt: float             # how cramped the most cramped shorter opponent is
    hunger: float           # owning no food, its health near the distance to any food


#: Styles of play. ``default`` is what the search plays in a duel; the others are the
#: arena's opponents (docs/arena.md), and ``hungry`` is the default search's weights with
#: three snakes or more: the grower's, and hungry. (Issue 14 also tried a stray-food pull
#: at any health, with a food margin, which lost its screens, and a roomier "cramped",
#: never screened; both were deleted: docs/arena.md.)
STYLES: dict[str, Style] = {
    "default": Style(0.5, 0.25, 0.4, 0.1, 50.0, 0.0, 0.0),
    "grower": Style(0.5, 0.6, 0.4, 0.15, 101.0, 0.0, 0.0),
    "hunter": Style(0.5, 0.35, 0.4, 0.1, 50.0, 0.4, 0.0),
    "space": Style(1.0, 0.1, 0.4, 0.1, 50.0, 0.0, 0.0),
    "hungry": Style(0.5, 0.6, 0.4, 0.15, 101.0, 0.0, 0.5),
}
#: The styles above (:data:`STYLES` also holds the style files read: :func:`resolve_style`).
SHIPPED_STYLES = tuple(STYLES)
#: A style file's name ends so (:func:`resolve_style`).
STYLE_FILE = ".json"


def save_style(path: str | Path, style: Style, meta: dict[str, Any] | None = None) -> None:
    """Write ``style``'s weights, by term, as a style file (JSON) that a search plays with
    ``style=PATH`` (:func:`resolve_style`); ``meta`` says where they come from."""
    text = json.dumps({"weights": style._asdict(), "meta": dict(meta or {})}, indent=1)
    Path(path).write_text(text + "\n", encoding="utf-8")


def resolve_style(style: str) -> str:
    """The name :data:`STYLES` knows ``style`` by: a style's name as it is, or a style file
    (a path ending in :data:`STYLE_FILE`, :func:`save_style`: a tuner's weights,
    :mod:`training.tune`) read now and known by its path in this process from then on
    (a search reads its style's weights when it starts). ``ValueError`` names what is wrong
    with a file that is not one."""
    if not style.endswith(STYLE_FILE):
        return style
    try:
        weights = json.loads(Path(style).read_text(encoding="utf-8"))["weights"]
        values = [float(weights[term]) for term in Style._fields]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"style file {style}: not a style's weights "
                         f"({type(exc).__name__}: {exc}); terms {', '.join(Style._fields)}"
                         ) from None
    STYLES[style] = Style(*values)
    return style


#: A hungry style's margin, in moves of health (the hunger term of the module docstring).
#: Owning no food, such a snake has fallen behind (every food nearer to another snake, or
#: contested by one as long), and the plain value, which counts only food it owns, would
#: let it starve with food on the board (docs/arena.md).
HUNGER_MARGIN = 25.0
#: A hungry style's values beyond ``±SOFT`` are squashed smoothly into ``±LIMIT`` rather
#: than clamped (:func:`soft`): the positions where hunger matters are the desperate ones,
#: where the clamp would leave every leaf at ``-LIMIT`` and every move alike.
SOFT = 0.9


def food_health(style: str) -> float:
    """The health below which ``style`` counts the distance to the food it owns (above
    100: at any health)."""
    return STYLES[style].food_health


def hunger(style: str) -> float:
    """How much ``style`` counts, owning no food, the distance to the nearest food as its
    health comes within :data:`HUNGER_MARGIN` of it (0: not at all)."""
    return STYLES[style].hunger


# ---------------------------------------------------------------------------------------
# The partition

_HAZARD_WEIGHT = 0.25


class Partition(NamedTuple):
    """The board divided among the living snakes (module docstring)."""

    snakes: list[Snake]             # the living snakes, in board order
    owner: list[int]                # per square y * width + x: an index into ``snakes``,
                                    # -1 nobody, -2 contested (a head: its snake's)
    squares: dict[str, float]       # per living snake: the squares it owns (hazards 1/4)
    food: dict[str, int | None]     # per living snake: the move it first owns a food on
    width: int

    def owns(self, snake_id: str, square: Point) -> bool:
        """Whether ``square`` is ``snake_id``'s (its head's square is)."""
        o = self.owner[square[1] * self.width + square[0]]
        return o >= 0 and self.snakes[o].id == snake_id


def partition(state: GameState) -> Partition:
    """Divide the board among the living snakes (module docstring)."""
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
    return Partition(snakes, owner, {s.id: counts[i] for i, s in enumerate(snakes)},
                     {s.id: food_at[i] for i, s in enumerate(snakes)}, width)


def board_control(state: GameState) -> dict[str, tuple[float, int | None]]:
    """For each living snake: (squares it controls, moves to the nearest food it controls
    or ``None``), by :func:`partition`."""
    part = partition(state)
    return {sid: (part.squares[sid], part.food[sid]) for sid in part.squares}


def ownership(state: GameState) -> dict[str, set[Point]]:
    """For each living snake, the squares it controls in the partition (its head's square
    among them)."""
    part = partition(state)
    width = state.board.width
    out: dict[str, set[Point]] = {s.id: set() for s in part.snakes}
    for c, o in enumerate(part.owner):
        if o >= 0:
            out[part.snakes[o].id].add((c % width, c // width))
    return out


# ---------------------------------------------------------------------------------------
# Values


def style_value(state: GameState, snake_id: str, style: str = "default",
                part: Partition | None = None) -> float:
    """The value of living snake ``snake_id`` by ``style``'s weights (module docstring),
    from the partition ``part`` (made when not given)."""
    if part is None:
        part = partition(state)
    w = STYLES[style]
    board = state.board
    me = board.snake(snake_id)
    squares, food, length = part.squares[snake_id], part.food[snake_id], len(me.body)
    others = [s for s in part.snakes if s.id != snake_id]
    most = max((part.squares[s.id] for s in others), default=0.0)
    v = w.control * (squares - most) / (board.width * board.height)
    if others:
        v += w.length * math.tanh((length - max(len(s.body) for s in others)) / 3.0)
    if squares < length:
        v -= w.cramped * (1.0 - squares / length)
    if w.hunt > 0:
        v += w.hunt * max((1.0 - min(1.0, part.squares[s.id] / len(s.body))
                           for s in others if len(s.body) < length), default=0.0)
    hp = me.health
    if food is None:
        if hp <= squares // 2 or hp < 15:
            v -= 0.5 * (1.0 - hp / 100.0)
        nearest = nearest_food(state, snake_id) if w.hunger > 0 else None
        if nearest is not None and hp - nearest < HUNGER_MARGIN:
            v -= w.hunger * min(1.0, (HUNGER_MARGIN - (hp - nearest)) / HUNGER_MARGIN)
    elif hp < food:
        v -= 0.5
    elif hp < w.food_health:
        v -= w.food * food / (board.width + board.height)
    return soft(v) if w.hunger > 0 else max(-LIMIT, min(LIMIT, v))


def nearest_food(state: GameState, snake_id: str) -> int | None:
    """The board distance (moves on an empty board, the short way round when it wraps) from
    ``snake_id``'s head to the nearest food, anyone's; ``None`` with no food."""
    board = state.board
    head = board.snake(snake_id).head
    return min((distance(head, f, board.width, board.height, state.ruleset.wraps)
                for f in board.food), default=None)


def soft(v: float) -> float:
    """``v`` within ``±SOFT`` as it is; beyond, ``|v|`` squashed into ``(SOFT, LIMIT)`` as
    ``SOFT + (LIMIT - SOFT) * x / (1 + x)`` with ``x = (|v| - SOFT) / (LIMIT - SOFT)``:
    slope 1 at ``SOFT`` and increasing, so the order of values is kept. (A rational
    squash: far out it still tells 0.01 apart by 1e-5 at ``|v| = 3``, well above the
    search's null window; an exponential would not.)"""
    a = abs(v)
    if a <= SOFT:
        return v
    x = (a - SOFT) / (LIMIT - SOFT)
    a = SOFT + (LIMIT - SOFT) * x / (1.0 + x)
    return a if v > 0 else -a


#: What a learned value head (:mod:`snake.evaluation.value_head`) reads of a living snake
#: (:func:`measure` defines each).
MEASUREMENTS = ("value", "own", "most", "others", "lead_tanh", "lead", "cramped", "health",
                "food", "no_food", "short_of_food", "opponents", "length", "longer",
                "moves", "risky", "prey", "threat", "tail")
N_MEASUREMENTS = len(MEASUREMENTS)


def measure(state: GameState, snake_id: str, style: str = "default",
            part: Partition | None = None) -> list[float]:
    """Living snake ``snake_id``'s :data:`MEASUREMENTS`, from the partition ``part`` (made
    when not given); the others are every other living snake, ``A`` the board's area and
    ``R`` its width + height:

    - ``value``: :func:`style_value` by ``style``;
    - ``own``, ``most``, ``others``: the squares it owns, the most another owns and all the
      others own, each / A;
    - ``lead_tanh``, ``lead``: its length lead over the longest other (0 with no other),
      ``tanh(lead / 3)`` and ``lead / 10``;
    - ``cramped``: ``max(0, 1 - squares / length)``;
    - ``health``: health / 100;
    - ``food``: the moves to the first food it owns / R (1 with none); ``no_food``: 1 when
      it owns none; ``short_of_food``: 1 when its health is below those moves;
    - ``opponents``: the others / 3; ``length``: its length / A (the game's phase);
      ``longer``: the others at least as long / 3;
    - what lies around its head, which the partition does not see: :func:`around_head`."""
    if part is None:
        part = partition(state)
    board = state.board
    area, reach = board.width * board.height, board.width + board.height
    me = board.snake(snake_id)
    length = len(me.body)
    squares, food = part.squares[snake_id], part.food[snake_id]
    others = [s for s in part.snakes if s.id != snake_id]
    theirs = [part.squares[s.id] for s in others]
    lead = length - max(len(s.body) for s in others) if others else 0
    return [style_value(state, snake_id, style, part), squares / area,
            max(theirs, default=0.0) / area, sum(theirs) / area, math.tanh(lead / 3.0),
            lead / 10.0, max(0.0, 1.0 - squares / length), me.health / 100.0,
            (food if food is not None else reach) / reach, float(food is None),
            float(food is not None and me.health < food), len(others) / 3.0,
            length / area, sum(len(s.body) >= length for s in others) / 3.0,
            *around_head(state, snake_id, part)]


def around_head(state: GameState, snake_id: str,
                part: Partition | None = None) -> list[float]:
    """The last five :data:`MEASUREMENTS` of living snake ``snake_id`` (distances are board
    distances, :func:`snake.rules.distance`; R is width + height):

    - ``moves``: its moves that are not certain death (:func:`snake.rules.fatal_reason`) / 4;
    - ``risky``: those of them next to the head of another at least as long (a
      head-to-head it loses or draws) / 4;
    - ``prey``: the shorter others whose heads are within 2 of its own (a head-to-head it
      could win) / 3;
    - ``threat``: the distance to the nearest head of another at least as long / R (1 with
      none);
    - ``tail``: 1 when the square of its last segment is its own in the partition (its
      head's square is): a tail it can follow."""
    if part is None:
        part = partition(state)
    board, wraps = state.board, state.ruleset.wraps
    me = board.snake(snake_id)
    others = [s for s in part.snakes if s.id != snake_id]
    obstacles = obstacles_after_move(state, me)

    def apart(a: Point, b: Point) -> int:
        return distance(a, b, board.width, board.height, wraps)
    moves = [next_square(state, me.head, m) for m in MOVES
             if not fatal_reason(state, me, m, obstacles)]
    longer = [s for s in others if len(s.body) >= len(me.body)]
    risky = [c for c in moves if any(apart(c, s.head) == 1 for s in longer)]
    prey = [s for s in others if len(s.body) < len(me.body) and apart(me.head, s.head) <= 2]
    reach = board.width + board.height
    threat = min((apart(me.head, s.head) for s in longer), default=reach)
    return [len(moves) / 4, len(risky) / 4, len(prey) / 3, threat / reach,
            float(part.owns(snake_id, me.body[-1]))]


def control_value(state: GameState, snake_id: str, style: str = "default", head: Any = None,
                  part: Partition | None = None) -> float:
    """The value of snake ``snake_id``: ``-LIMIT`` when it is not alive, else by ``style``
    (:func:`style_value`), or with a learned value head ``head``
    (:class:`snake.evaluation.value_head.ValueHead`) the head's value of its
    :func:`measure`-ments by ``style``, clamped into [-LIMIT, LIMIT]."""
    if part is None:
        part = partition(state)
    if snake_id not in part.squares:
        return -LIMIT
    if head is None:
        return style_value(state, snake_id, style, part)
    value = float(head.value(np.array(measure(state, snake_id, style, part))))
    return max(-LIMIT, min(LIMIT, value))


def control_values(state: GameState, ids: tuple[str, ...], style: str = "default",
                   head: Any = None) -> dict[str, float]:
    """The value (:func:`control_value`) of each snake in ``ids``, from one partition."""
    part = partition(state)
    return {sid: control_value(state, sid, style, head, part) for sid in ids}


class BoardControlEvaluator:
    """Board control (Voronoi) evaluation by ``style``'s weights; needs no per-node state."""

    name = "voronoi"

    def __init__(self, style: str = "default") -> None:
        if style not in STYLES:
            raise ValueError(f"style {style!r}: one of {', '.join(STYLES)}")
        self.style = style

    def root(self, state: GameState, views: tuple[str, ...], accumulator: Any | None) -> None:
        return None

    def child(self, context: None, state: GameState) -> None:
        return None

    def value(self, context: None, state: GameState, snake_id: str) -> float:
        return control_value(state, snake_id, self.style)

    def priors(self, context: None, state: GameState, snake_id: str,
               moves: tuple[str, ...]) -> dict[str, float] | None:
        return None
