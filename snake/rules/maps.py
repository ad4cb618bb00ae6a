"""Game maps: where snakes start, where food spawns, where hazards appear.

A map acts twice, as in the official engine (github.com/BattlesnakeOfficial/rules, ``maps/``):

- :meth:`GameMap.setup` builds turn 0: snakes, starting food and static hazards
  (placement itself lives in :mod:`snake.rules.start`);
- :meth:`GameMap.update` runs after the rule stages of every turn (the official
  ``PostUpdateBoard``), on the state the rules produced, before ``turn`` + 1. It spawns food
  and, for dynamic hazard maps, hazards.

Maps here:

``standard``
    Standard placement; food: when there is less than ``minimumFood``, exactly the
    difference is added; otherwise one piece with probability (``foodSpawnChance`` − 1)%
    (the engine draws r in 0..99 and spawns when 100 − r < ``foodSpawnChance``). Food lands
    on a square with no food, no living snake's body and not orthogonally next to a living
    snake's head ("next to" never wraps); hazard squares are allowed.
``empty``
    Standard snake placement, no food ever (neither at the start nor later).
``royale``
    Standard, plus every ``shrinkEveryNTurns`` turns one random side of the safe zone
    moves in by one square; every square outside the safe zone is a hazard.
``hz_inner_wall``
    Standard, plus a static ring of hazards inset two squares from the edge.
``hz_rings``
    Standard, plus static concentric hazard rings at insets 2, 4, 6, ... (< side / 2).
``hz_columns``
    Standard, plus static hazards on every square with odd x and odd y.
``hz_spiral``
    Standard, plus a hazard spiral: on turn 3 one hazard at a random square in the
    middle 40% of the board, then every 3 turns the next square of a clockwise spiral
    around it (squares of the spiral off the board are skipped but take their turn).

All randomness comes from the ``random.Random`` passed in, so a game replays from its seed.
"""

from __future__ import annotations

import random
from typing import Iterable

from snake.board import Board, GameState, Point

#: Sides of the royale safe zone, as the engine numbers its random draw.
ROYALE_LEFT, ROYALE_RIGHT, ROYALE_BOTTOM, ROYALE_TOP = 0, 1, 2, 3

SPIRAL_EVERY_N_TURNS = 3


# ---------------------------------------------------------------------------------------
# Food


def food_spawn_squares(board: Board) -> list[Point]:
    """Squares where the map may spawn food, in the engine's order (x, then y): no food,
    no living snake's body, not orthogonally next to a living snake's head (no wrapping).
    Hazards do not matter."""
    taken: set[Point] = set(board.food)
    for snake in board.snakes:
        if snake.eliminated_cause:
            continue
        taken.update(snake.body)
        x, y = snake.body[0]
        taken.update(((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)))
    return [p for p in board_squares(board.width, board.height) if p not in taken]


_SQUARES: dict[tuple[int, int], tuple[Point, ...]] = {}


def board_squares(width: int, height: int) -> tuple[Point, ...]:
    """Every square of a board, x then y (the engine's order); cached per size."""
    squares = _SQUARES.get((width, height))
    if squares is None:
        squares = tuple((x, y) for x in range(width) for y in range(height))
        if len(_SQUARES) < 64:
            _SQUARES[(width, height)] = squares
    return squares


def food_needed(state: GameState, rng: random.Random) -> int:
    """How many pieces the standard map spawns this turn (draws from ``rng`` only when
    there is already ``minimumFood``, as the engine does)."""
    settings = state.game.ruleset.settings
    missing = settings.minimum_food - len(state.board.food)
    if missing > 0:
        return missing
    chance = settings.food_spawn_chance
    # r uniform in 0..99 (int(random() * 100) is the cheaper equivalent of randrange(100)).
    if chance > 0 and 100 - int(rng.random() * 100) < chance:
        return 1
    return 0


def spawn_food(state: GameState, rng: random.Random) -> list[Point]:
    """The standard map's food stage: add the food that :func:`food_needed` asks for on
    random squares from :func:`food_spawn_squares` (fewer if there is no room). Mutates
    ``state`` and returns the squares added, in order."""
    n = food_needed(state, rng)
    if n <= 0:
        return []
    squares = food_spawn_squares(state.board)
    added = rng.sample(squares, min(n, len(squares)))
    state.board.food.extend(added)
    return added


# ---------------------------------------------------------------------------------------
# Royale


def is_royale_shrink_turn(turn: int, shrink_every_n_turns: int) -> bool:
    """Whether playing ``turn`` shrinks the safe zone: the turn being produced,
    ``turn`` + 1, is a positive multiple of ``shrinkEveryNTurns``."""
    n = shrink_every_n_turns
    return n >= 1 and (turn + 1) >= n and (turn + 1) % n == 0


def royale_safe_zone(width: int, height: int,
                     hazards: Iterable[Point]) -> tuple[int, int, int, int] | None:
    """The safe zone ``(min_x, max_x, min_y, max_y)`` that royale hazards leave, or
    ``None`` when every square is a hazard. Royale hazards are exactly the squares
    outside one rectangle, so the bounding box of the squares without hazard is it."""
    hazard_set = set(hazards)
    xs = [x for x in range(width) for y in range(height) if (x, y) not in hazard_set]
    if not xs:
        return None
    ys = [y for x in range(width) for y in range(height) if (x, y) not in hazard_set]
    return min(xs), max(xs), min(ys), max(ys)


def royale_shrink(width: int, height: int, hazards: Iterable[Point], side: int) -> list[Point]:
    """The hazards after one more shrink of ``side`` (0 left, 1 right, 2 bottom, 3 top),
    listed in the engine's order (x, then y). The engine does not stop at a one-square
    zone: sides may cross, and then every square is a hazard."""
    if side not in (0, 1, 2, 3):
        raise ValueError(f"royale side must be 0..3, not {side!r}")
    zone = royale_safe_zone(width, height, hazards)
    if zone is None:
        return [(x, y) for x in range(width) for y in range(height)]
    min_x, max_x, min_y, max_y = zone
    if side == ROYALE_LEFT:
        min_x += 1
    elif side == ROYALE_RIGHT:
        max_x -= 1
    elif side == ROYALE_BOTTOM:
        min_y += 1
    else:
        max_y -= 1
    return [(x, y) for x in range(width) for y in range(height)
            if x < min_x or x > max_x or y < min_y or y > max_y]


# ---------------------------------------------------------------------------------------
# Static hazard shapes


def hazard_ring(width: int, height: int, inset: int) -> list[Point]:
    """A one-square ring of hazards ``inset`` squares in from the edge (inset 1 is the
    outermost ring), in the engine's order. A ring only two rows high lists its squares
    twice (stacked hazards), as the engine does."""
    if not 1 <= inset < min(width, height) - 1:
        raise ValueError(f"ring inset {inset} does not fit a {width}x{height} board")
    x0, x1 = inset - 1, width - inset
    y0, y1 = inset - 1, height - inset
    ring: list[Point] = []
    for x in range(x0, x1 + 1):
        ring += [(x, y0), (x, y1)]
    for y in range(y0 + 1, y1):
        ring += [(x0, y), (x1, y)]
    return ring


def spiral_square(start: Point, index: int) -> Point:
    """The ``index``-th square (1-based) of the clockwise spiral around ``start``: ring r
    (r = 1, 2, ...) has 8r squares and begins at (start.x − r + 1, start.y + r), going right
    along its top row, down its right column, left along its bottom row and up its left
    column."""
    sx, sy = start
    ring = 1
    while index > 8 * ring:
        index -= 8 * ring
        ring += 1
    # Walk the ring: 2r squares per side, the first one already one step into the top row.
    side, step = divmod(index - 1, 2 * ring)
    if side == 0:   # top row, moving right from x = sx - r + 1
        return (sx - ring + 1 + step, sy + ring)
    if side == 1:   # right column, moving down from y = sy + r - 1
        return (sx + ring, sy + ring - 1 - step)
    if side == 2:   # bottom row, moving left from x = sx + r - 1
        return (sx + ring - 1 - step, sy - ring)
    return (sx - ring, sy - ring + 1 + step)  # left column, moving up from y = sy - r + 1


# ---------------------------------------------------------------------------------------
# Maps


class GameMap:
    """The ``standard`` map; other maps override :meth:`static_hazards` or :meth:`update`."""

    id = "standard"
    #: Whether the map ever places food (the ``empty`` map does not).
    has_food = True
    #: Most snakes the map can place (the engine's limit for its maps).
    max_snakes = 16
    #: Whether the map adds hazards during the game (in :meth:`update`), not only at setup.
    adds_hazards = False

    def static_hazards(self, width: int, height: int) -> list[Point]:
        """Hazards placed at setup (none for the standard map)."""
        return []

    def update(self, state: GameState, rng: random.Random) -> list[Point]:
        """The map stage of a turn, on the state after the rule stages (turn not yet
        incremented). Mutates ``state``; returns the food it spawned."""
        return spawn_food(state, rng)


class EmptyMap(GameMap):
    id = "empty"
    has_food = False

    def update(self, state: GameState, rng: random.Random) -> list[Point]:
        return []


class RoyaleMap(GameMap):
    """Standard food, and the royale shrink every ``shrinkEveryNTurns`` turns (skipped when
    the ``royale`` ruleset already shrinks the board in its rule stages, so the zone never
    shrinks twice in a turn)."""

    id = "royale"

    def update(self, state: GameState, rng: random.Random) -> list[Point]:
        spawned = spawn_food(state, rng)
        if state.game.ruleset.name == "royale":
            return spawned
        n = state.game.ruleset.settings.shrink_every_n_turns
        if is_royale_shrink_turn(state.turn, n):
            board = state.board
            board.hazards = royale_shrink(board.width, board.height, board.hazards,
                                          rng.randrange(4))
        return spawned


class InnerWallMap(GameMap):
    id = "hz_inner_wall"

    def static_hazards(self, width: int, height: int) -> list[Point]:
        return hazard_ring(width, height, 2)


class RingsMap(GameMap):
    id = "hz_rings"

    def static_hazards(self, width: int, height: int) -> list[Point]:
        hazards: list[Point] = []
        for inset in range(2, width // 2, 2):
            hazards += hazard_ring(width, height, inset)
        return hazards


class ColumnsMap(GameMap):
    id = "hz_columns"

    def static_hazards(self, width: int, height: int) -> list[Point]:
        return [(x, y) for x in range(width) for y in range(height) if x % 2 == 1 and y % 2 == 1]


class SpiralMap(GameMap):
    """The spiral's centre is drawn once, on turn 3, and is the first hazard of the board
    from then on; later squares are found from it, so the state alone carries the map."""

    id = "hz_spiral"
    adds_hazards = True

    def update(self, state: GameState, rng: random.Random) -> list[Point]:
        spawned = spawn_food(state, rng)
        board = state.board
        turn = state.turn + 1  # the turn being produced
        every = SPIRAL_EVERY_N_TURNS
        if turn < every or turn % every != 0:
            return spawned
        if not board.hazards:
            # The centre lies in the middle of the board: 30% of each side is left out.
            off_x, off_y = int(board.width * 0.3), int(board.height * 0.3)
            board.hazards.append((rng.randint(off_x, board.width - 1 - off_x),
                                  rng.randint(off_y, board.height - 1 - off_y)))
            if turn == every:
                return spawned
        square = spiral_square(board.hazards[0], turn // every - 1)
        if board.in_bounds(square):
            board.hazards.append(square)
        return spawned


MAPS: dict[str, GameMap] = {m.id: m for m in (
    GameMap(), EmptyMap(), RoyaleMap(), InnerWallMap(), RingsMap(), ColumnsMap(), SpiralMap(),
)}


def get_map(map_id: str) -> GameMap:
    """The map named ``map_id``; raises ``ValueError`` listing the known ones."""
    try:
        return MAPS[map_id]
    except KeyError:
        raise ValueError(f"unknown map {map_id!r}; known maps: {', '.join(MAPS)}") from None
