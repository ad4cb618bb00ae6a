"""Game setup: turn 0 of a game, placed as the official engine places it.

Snakes (``PlaceSnakesAutomatically`` in the engine's ``board.go``):

- Square boards of side ≥ 7 with at most 8 snakes: *fixed* spots one square in from the
  edge, the four corners ``(1, 1), (1, s−2), (s−2, 1), (s−2, s−2)`` and the four cardinal
  spots ``(1, m), (m, 1), (m, s−2), (s−2, m)`` with m = (s − 1) // 2. Corners and cardinals
  are each shuffled; a coin decides whether the corners or the cardinals come first;
  snakes take the spots in order.
- Square boards of side ≥ 11 with 9 to 16 snakes: *distributed* over the four quadrants,
  rotating from a random quadrant, each snake taking a random free spot of its quadrant
  (four spots per quadrant, set in by a third of the half side, mirrored across the board).
- More than 8 snakes on a square board of side < 7: refused.
- Any other board (not square, or small): each snake on a random free square with x + y
  even, never the centre.

Every body is three stacked segments on its spot; health is 100.

Food (``PlaceFoodAutomatically``), on maps that have food (not ``empty``):

- Square boards of side ≥ 7: for each snake (skipped when more than 4 snakes on a board
  smaller than 11×11) one food on a random diagonal neighbour of its head that is not the
  centre, not already food, not a corner of the board, and further from the centre than
  the head on at least one axis; then one food on the centre (which must be free).
- Otherwise one food per snake, each on a random square that is free and not next to
  a head.

The map then adds its static hazards. All randomness comes from the ``random.Random``
passed in, so a game is reproduced from its seed.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Sequence

from snake.board import MAX_BOARD_SIDE, Board, Game, GameState, Point, Ruleset, Settings, Snake
from snake.rules.maps import food_spawn_squares, get_map

SMALL, MEDIUM = 7, 11
START_LENGTH = 3
START_HEALTH = 100
MAX_FIXED = 8
MAX_DISTRIBUTED = 16


class SetupError(ValueError):
    """A game that cannot be set up (too many snakes, no room, bad arguments)."""


def make_ruleset(name: str, settings: Settings | None = None, *, version: str = "") -> Ruleset:
    """A ruleset named ``name`` with ``settings`` (default: the engine's defaults; never
    modified); ``squad`` gets all four squad settings on (as the official squad mode
    played), whatever ``settings`` says of them."""
    settings = replace(settings) if settings is not None else Settings()
    if name == "squad":
        settings.allow_body_collisions = True
        settings.shared_elimination = True
        settings.shared_health = True
        settings.shared_length = True
    return Ruleset(name=name, version=version, settings=settings)


def check_ruleset_on_map(ruleset: str, map_id: str) -> None:
    """Refuse (:class:`SetupError`) a ruleset these rules cannot play on ``map_id`` as the
    engine does: the ``royale`` ruleset on a map that adds hazards during the game
    (``hz_spiral``). The engine's royale stage empties the hazards every turn and redraws
    the zone from the game's seed; these rules read the zone from the hazards, which the
    map's would corrupt. (A static hazard map's hazards are emptied on the first turn here
    as there, so those games play alike.)"""
    if ruleset == "royale" and get_map(map_id).adds_hazards:
        raise SetupError(f"the royale ruleset on map {map_id!r} is not supported: the map adds "
                         "hazards every few turns and these rules read the royale zone from "
                         "the hazards (play royale on another map, or this map with another "
                         "ruleset)")


def new_game(
    ruleset: str | Ruleset,
    width: int,
    height: int,
    snake_ids: Sequence[str],
    *,
    map: str = "standard",
    rng: random.Random,
    game_id: str = "local-game",
    squads: Sequence[str] | None = None,
    timeout: int = 500,
) -> GameState:
    """Turn 0 of a new game: snakes placed, starting food (none in constrictor rulesets),
    the map's hazards.

    ``squads`` gives each snake's squad (same order as ``snake_ids``); a snake's name is its
    id. Raises :class:`SetupError` (a ``ValueError``) for
    a game that cannot be set up."""
    if isinstance(ruleset, str):
        ruleset = make_ruleset(ruleset)
    if not (1 <= width <= MAX_BOARD_SIDE and 1 <= height <= MAX_BOARD_SIDE):
        raise SetupError(f"board {width}x{height}: sides must be between 1 and {MAX_BOARD_SIDE}")
    ids = [str(i) for i in snake_ids]
    if not ids:
        raise SetupError("a game needs at least one snake")
    if len(set(ids)) != len(ids):
        raise SetupError("snake ids must be unique")
    if squads is not None and len(squads) != len(ids):
        raise SetupError(f"{len(squads)} squads given for {len(ids)} snakes")
    try:
        game_map = get_map(map)
    except ValueError as e:
        raise SetupError(str(e)) from None
    if len(ids) > game_map.max_snakes:
        raise SetupError(f"map {map!r} takes at most {game_map.max_snakes} snakes, not {len(ids)}")
    check_ruleset_on_map(ruleset.name, map)

    board = Board(width, height)
    spots = place_snakes(width, height, len(ids), rng)
    for i, (snake_id, spot) in enumerate(zip(ids, spots)):
        board.snakes.append(Snake(
            id=snake_id, body=[spot] * START_LENGTH, health=START_HEALTH,
            name=snake_id,
            squad=squads[i] if squads is not None else "",
        ))
    # Constrictor games start without food, as the official engine's do (its setup runs
    # the ruleset's stages once, and constrictor's removes all food).
    if game_map.has_food and "constrictor" not in ruleset.name:
        board.food = place_food(board, rng)
    board.hazards = game_map.static_hazards(width, height)
    game = Game(id=game_id, ruleset=ruleset, map=map, timeout=timeout)
    return GameState(game, 0, board)


def place_snakes(width: int, height: int, count: int, rng: random.Random) -> list[Point]:
    """Start squares for ``count`` snakes, in snake order (see the module docstring)."""
    if width == height:
        if count > MAX_FIXED and width < SMALL:
            raise SetupError(f"at most {MAX_FIXED} snakes on a {width}x{height} board")
        if count <= MAX_FIXED and width >= SMALL:
            return _fixed_spots(width, count, rng)
        if width >= MEDIUM:
            return _distributed_spots(width, height, count, rng)
    return _random_spots(width, height, count, rng)


def _fixed_spots(side: int, count: int, rng: random.Random) -> list[Point]:
    lo, mid, hi = 1, (side - 1) // 2, side - 2
    corners = [(lo, lo), (lo, hi), (hi, lo), (hi, hi)]
    cardinals = [(lo, mid), (mid, lo), (mid, hi), (hi, mid)]
    rng.shuffle(corners)
    rng.shuffle(cardinals)
    spots = corners + cardinals if rng.randrange(2) == 0 else cardinals + corners
    return spots[:count]


def _distributed_spots(width: int, height: int, count: int, rng: random.Random) -> list[Point]:
    if count > MAX_DISTRIBUTED:
        raise SetupError(f"at most {MAX_DISTRIBUTED} snakes on a {width}x{height} board")
    half_w, half_h = width // 2, height // 2
    dx, dy = half_w // 3, half_h // 3
    first = [(dx, dy), (half_w - dx, dy), (dx, half_h - dy), (half_w - dx, half_h - dy)]
    quadrants = [
        first,
        [(width - x - 1, y) for x, y in first],
        [(x, height - y - 1) for x, y in first],
        [(width - x - 1, height - y - 1) for x, y in first],
    ]
    spots = []
    quadrant = rng.randrange(4)
    for _ in range(count):
        bucket = quadrants[quadrant]
        spots.append(bucket.pop(rng.randrange(len(bucket))))
        quadrant = (quadrant + 1) % 4
    return spots


def _random_spots(width: int, height: int, count: int, rng: random.Random) -> list[Point]:
    centre = ((width - 1) // 2, (height - 1) // 2)
    free = [(x, y) for x in range(width) for y in range(height)
            if (x + y) % 2 == 0 and (x, y) != centre]
    spots = []
    for i in range(count):
        if not free:
            raise SetupError(f"no room for snake {i + 1} on a {width}x{height} board")
        spot = free.pop(rng.randrange(len(free)))
        spots.append(spot)
    return spots


def place_food(board: Board, rng: random.Random) -> list[Point]:
    """Starting food for the snakes on ``board`` (see the module docstring)."""
    width, height = board.width, board.height
    if width == height and width >= SMALL:
        return _fixed_food(board, rng)
    food: list[Point] = []
    for _ in board.snakes:
        free = food_spawn_squares(Board(width, height, food, [], board.snakes))
        if free:
            food.append(free[rng.randrange(len(free))])
    return food


def _fixed_food(board: Board, rng: random.Random) -> list[Point]:
    width, height = board.width, board.height
    cx, cy = (width - 1) // 2, (height - 1) // 2
    food: list[Point] = []
    small = width * height < MEDIUM * MEDIUM
    if len(board.snakes) <= 4 or not small:
        for snake in board.snakes:
            hx, hy = snake.head
            options = []
            for p in ((hx - 1, hy - 1), (hx - 1, hy + 1), (hx + 1, hy - 1), (hx + 1, hy + 1)):
                px, py = p
                if p == (cx, cy) or p in food:
                    continue
                away = ((px < hx < cx) or (cx < hx < px) or (py < hy < cy) or (cy < hy < py))
                corner = px in (0, width - 1) and py in (0, height - 1)
                if away and not corner:
                    options.append(p)
            if not options:
                raise SetupError(f"no room for starting food next to snake {snake.id}")
            food.append(options[rng.randrange(len(options))])
    occupied = set(food)
    for snake in board.snakes:
        occupied.update(snake.body)
    if (cx, cy) in occupied:
        raise SetupError("no room for food in the centre of the board")
    food.append((cx, cy))
    return food
