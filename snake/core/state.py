"""The compact game state of the compiled core: one flat ``int32`` vector per position.

:func:`encode` turns a :class:`~snake.board.GameState` into a :class:`Packed` game: ``g``,
the game's constants (board, ruleset, settings, and where each field lies in a state
vector; an ``int64`` array indexed by the ``G_*`` names below), and ``s``, the state vector.
Copying a position is one slice copy (a search keeps a stack of them), and every compiled
function takes ``(g, s)``. :func:`decode` rebuilds the ``GameState`` (ids, names and squad
strings from the game it was encoded from), for tests, conformance and explain.

**Squares** are *padded* indices ``P = (y + 1) * (width + 2) + (x + 1)``: a ring of cells
around the board takes the head of a snake that left it (the official engine keeps such a
body frozen where it died), so a neighbour of any board square is an index without a bounds
check. ``x = P % (width + 2) - 1``, ``y = P // (width + 2) - 1``, which ``g`` also holds
as tables (``g[g[G_X] + P]``, ``g[g[G_Y] + P]``), since a division costs the hot loops more
than a lookup.

**Snakes** keep the board's order (ties in length go to the snake listed first, and squad
stages run in board order); :data:`G_YOU` says which one is ``you``. Each body is a ring
buffer of ``capacity`` cells (a power of two at least the board's area plus room to grow):
the head at ``body[hp]``, segment ``k`` at ``body[(hp - k) & mask]``. Moving writes one cell
and advances ``hp``; growing copies the tail cell once more.

**Squares' contents**, kept up to date by the step so that most questions are one lookup:
``occ`` counts the segments of living snakes on each cell, ``food_at`` and ``hazard_at``
count food and hazard copies; the food and hazard *lists* keep the order the rules and the
wire use.

The state vector, in order: ``turn``, the food count, the hazard count; per snake health,
length, head position ``hp``, elimination cause (:data:`CAUSES` index, 0 alive), eliminated
by (snake index, -1 nobody), eliminated on turn, squad number (0 for no squad: equal squads
for the squad stages, but never squadmates); the bodies (``n * capacity``);
the food list; the hazard list; ``occ``, ``food_at``, ``hazard_at`` (a cell each).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snake.board import Board, GameState, Point, Snake
from snake.rules import stages

# --- the game's constants: indices into ``g`` -----------------------------------------
G_WIDTH, G_HEIGHT, G_PW, G_CELLS, G_N, G_CAPACITY, G_MASK = 0, 1, 2, 3, 4, 5, 6
G_PIPELINE, G_WRAPS, G_CONSTRICTOR = 7, 8, 9
G_DAMAGE, G_SHRINK_EVERY, G_ALLOW_BODY, G_SHARED_ELIMINATION, G_SHARED_HEALTH, G_SHARED_LENGTH = (
    10, 11, 12, 13, 14, 15)
G_FOOD_CAPACITY, G_HAZARD_CAPACITY, G_YOU = 16, 17, 18
# offsets of the state vector's fields
G_HEALTH, G_LENGTH, G_HP, G_CAUSE, G_BY, G_ON_TURN, G_SQUAD = 19, 20, 21, 22, 23, 24, 25
G_BODY, G_FOOD, G_HAZARDS, G_OCC, G_FOOD_AT, G_HAZARD_AT, G_SIZE = 26, 27, 28, 29, 30, 31, 32
# where the tables of each padded cell's board coordinates lie in ``g`` (after the fields)
G_X, G_Y = 33, 34
G_FIELDS = 35

# --- the state vector's header ----------------------------------------------------------
S_TURN, S_N_FOOD, S_N_HAZARDS = 0, 1, 2
HEADER = 3

#: Pipelines of the compiled step, by ruleset (:data:`snake.rules.STAGES`; a ruleset the
#: rules do not know is played as ``standard``).
PIPELINES: tuple[str, ...] = ("standard", "solo", "wrapped", "royale", "constrictor",
                              "wrapped_constrictor", "squad")
PIPELINE_OF = {name: i for i, name in enumerate(PIPELINES)}
STANDARD, SOLO, WRAPPED, ROYALE, CONSTRICTOR, WRAPPED_CONSTRICTOR, SQUAD = range(7)

#: Elimination causes by number (0: not eliminated), as :mod:`snake.rules` spells them.
CAUSES: tuple[str, ...] = ("", stages.WALL_COLLISION, stages.SELF_COLLISION,
                           stages.BODY_COLLISION, stages.HEAD_COLLISION, stages.OUT_OF_HEALTH,
                           stages.HAZARD, stages.SQUAD_ELIMINATED)
CAUSE_OF = {name: i for i, name in enumerate(CAUSES)}
ALIVE, WALL, SELF, BODY, HEAD, STARVED, HAZARD, SQUAD_OUT = range(8)

#: Move numbers (:data:`snake.rules.MOVES` order); -1 is "no move" (the engine repeats the last).
UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3


class EncodeError(ValueError):
    """A state the compiled core cannot hold (a living segment off the board, a body whose
    segments are not neighbours, an unknown elimination cause...). The caller plays it with
    the reference rules instead."""


@dataclass(slots=True)
class Packed:
    """A game in the compiled core's form: its constants ``g`` and a state vector ``s``,
    and the state it was encoded from (ids, names and squad strings for :func:`decode`)."""

    g: np.ndarray
    s: np.ndarray
    template: GameState

    def copy(self) -> Packed:
        return Packed(self.g, self.s.copy(), self.template)


def _capacity(cells: int, longest: int) -> int:
    need = max(cells, longest) + 16
    capacity = 16
    while capacity < need:
        capacity *= 2
    return capacity


def encode(state: GameState, you_id: str | None = None, *, horizon: int = 0) -> Packed:
    """``state`` in the compiled form (module docstring). ``horizon``: the turns this
    packed game will be played for (a search's depth): each body's ring then holds the
    longest body now plus one segment a turn, whatever the board's size (a body grows by
    at most one a turn; in squad, to its longest squadmate's length). Without one (0, a
    whole game), it holds the board's area: a living body is never longer than the board
    has room for, plus a stacked tail. Raises :class:`EncodeError` for what the core
    cannot hold."""
    board = state.board
    ruleset = state.game.ruleset
    settings = ruleset.settings
    width, height = board.width, board.height
    pw = width + 2
    cells = pw * (height + 2)
    snakes = board.snakes
    n = len(snakes)
    if n == 0:
        raise EncodeError("no snakes")
    longest = max(len(s.body) for s in snakes)
    # Food and hazards off the board are out of every snake's reach: left out (SPEC §4
    # ignores them too), not refused, so that such a request is still searched here.
    food = [p for p in board.food if 0 <= p[0] < width and 0 <= p[1] < height]
    hazards = [p for p in board.hazards if 0 <= p[0] < width and 0 <= p[1] < height]
    # (a search's states are copied at every node: on a large board, rings the size of the
    # area made each state megabytes)
    capacity = _capacity(0 if horizon else width * height, longest + horizon)
    food_capacity = max(width * height, len(food))
    hazard_capacity = max(width * height, len(hazards))

    # The fields, then each padded cell's x and y (-1 and ``width``/``height`` on the ring
    # around the board): a lookup where the compiled code would otherwise divide.
    g = np.zeros(G_FIELDS + 2 * cells, dtype=np.int64)
    g[G_X], g[G_Y] = G_FIELDS, G_FIELDS + cells
    g[G_FIELDS:G_FIELDS + cells] = np.arange(cells) % pw - 1
    g[G_FIELDS + cells:] = np.arange(cells) // pw - 1
    g[G_WIDTH], g[G_HEIGHT], g[G_PW], g[G_CELLS], g[G_N] = width, height, pw, cells, n
    g[G_CAPACITY], g[G_MASK] = capacity, capacity - 1
    g[G_PIPELINE] = PIPELINE_OF.get(ruleset.name, STANDARD)
    g[G_WRAPS], g[G_CONSTRICTOR] = ruleset.wraps, ruleset.constrictor
    g[G_DAMAGE], g[G_SHRINK_EVERY] = settings.hazard_damage_per_turn, settings.shrink_every_n_turns
    g[G_ALLOW_BODY] = settings.allow_body_collisions
    g[G_SHARED_ELIMINATION] = settings.shared_elimination
    g[G_SHARED_HEALTH], g[G_SHARED_LENGTH] = settings.shared_health, settings.shared_length
    g[G_FOOD_CAPACITY], g[G_HAZARD_CAPACITY] = food_capacity, hazard_capacity
    ids = [s.id for s in snakes]
    g[G_YOU] = ids.index(you_id) if you_id in ids else -1
    offset = HEADER
    for field, size in ((G_HEALTH, n), (G_LENGTH, n), (G_HP, n), (G_CAUSE, n), (G_BY, n),
                        (G_ON_TURN, n), (G_SQUAD, n), (G_BODY, n * capacity),
                        (G_FOOD, food_capacity), (G_HAZARDS, hazard_capacity), (G_OCC, cells),
                        (G_FOOD_AT, cells), (G_HAZARD_AT, cells)):
        g[field] = offset
        offset += size
    g[G_SIZE] = offset

    def cell(point: Point, what: str, margin: int) -> int:
        x, y = point
        if not (-margin <= x < width + margin and -margin <= y < height + margin):
            raise EncodeError(f"{what} at {point} is off the board")
        return (y + 1) * pw + (x + 1)

    s = np.zeros(offset, dtype=np.int32)
    s[S_TURN] = state.turn
    squads: dict[str, int] = {"": 0}     # squad 0: no squad (never a squadmate)
    for i, snake in enumerate(snakes):
        if snake.eliminated_cause not in CAUSE_OF:
            raise EncodeError(f"snake {snake.id}: "
                              f"unknown elimination cause {snake.eliminated_cause!r}")
        alive = not snake.eliminated_cause
        s[g[G_HEALTH] + i] = snake.health
        s[g[G_LENGTH] + i] = len(snake.body)
        s[g[G_HP] + i] = len(snake.body) - 1
        s[g[G_CAUSE] + i] = CAUSE_OF[snake.eliminated_cause]
        if snake.eliminated_by and snake.eliminated_by not in ids:
            raise EncodeError(f"snake {snake.id}: "
                              f"eliminated by unknown snake {snake.eliminated_by!r}")
        s[g[G_BY] + i] = ids.index(snake.eliminated_by) if snake.eliminated_by else -1
        s[g[G_ON_TURN] + i] = snake.eliminated_on_turn
        s[g[G_SQUAD] + i] = squads.setdefault(snake.squad, len(squads))
        base = g[G_BODY] + i * capacity
        previous = None
        # Written tail first, so that the head lands at hp = length - 1.
        for k, point in enumerate(reversed(snake.body)):
            # A living body lies on the board; an eliminated one may keep a head that left it.
            c = cell(point, f"snake {snake.id}", 0 if alive else 1)
            if alive and previous is not None and c != previous and not _neighbours(
                    point, _point_of(previous, pw), width, height, ruleset.wraps):
                raise EncodeError(f"snake {snake.id}: segments {point} and "
                                  f"{_point_of(previous, pw)} are not neighbours")
            s[base + k] = c
            previous = c
            if alive:
                s[g[G_OCC] + c] += 1
    for k, point in enumerate(food):
        c = cell(point, "food", 0)
        s[g[G_FOOD] + k] = c
        s[g[G_FOOD_AT] + c] += 1
    s[S_N_FOOD] = len(food)
    for k, point in enumerate(hazards):
        c = cell(point, "hazard", 0)
        s[g[G_HAZARDS] + k] = c
        s[g[G_HAZARD_AT] + c] += 1
    s[S_N_HAZARDS] = len(hazards)
    return Packed(g, s, state)


def _point_of(c: int, pw: int) -> Point:
    return (c % pw - 1, c // pw - 1)


def _neighbours(a: Point, b: Point, width: int, height: int, wraps: bool) -> bool:
    dx, dy = abs(a[0] - b[0]), abs(a[1] - b[1])
    if wraps:
        dx, dy = min(dx, width - dx), min(dy, height - dy)
    return dx + dy == 1


def decode(packed: Packed) -> GameState:
    """The :class:`~snake.board.GameState` of ``packed`` (names, ids and squads from the
    state it was encoded from; wire-only fields are not kept, as in :mod:`snake.rules`)."""
    g, s, template = packed.g, packed.s, packed.template
    pw, capacity, mask = int(g[G_PW]), int(g[G_CAPACITY]), int(g[G_MASK])
    snakes = []
    ids = [t.id for t in template.board.snakes]
    for i, t in enumerate(template.board.snakes):
        length, hp = int(s[g[G_LENGTH] + i]), int(s[g[G_HP] + i])
        base = int(g[G_BODY]) + i * capacity
        body = [_point_of(int(s[base + ((hp - k) & mask)]), pw) for k in range(length)]
        by = int(s[g[G_BY] + i])
        snakes.append(Snake(t.id, body, int(s[g[G_HEALTH] + i]), t.name, t.squad,
                            eliminated_cause=CAUSES[int(s[g[G_CAUSE] + i])],
                            eliminated_by=ids[by] if by >= 0 else "",
                            eliminated_on_turn=int(s[g[G_ON_TURN] + i])))
    food = [_point_of(int(c), pw) for c in s[g[G_FOOD]:g[G_FOOD] + s[S_N_FOOD]]]
    hazards = [_point_of(int(c), pw) for c in s[g[G_HAZARDS]:g[G_HAZARDS] + s[S_N_HAZARDS]]]
    board = Board(int(g[G_WIDTH]), int(g[G_HEIGHT]), food, hazards, snakes)
    return GameState(template.game, int(s[S_TURN]), board)
