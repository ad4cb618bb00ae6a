"""The game model: one typed picture of a Battlesnake game, shared by every part of Nuppeppou.

The server parses request bodies into it (:func:`parse_request`), the rules engine advances
it, the move filter, flood fill and the NNUE feature encoder read it, and the arena writes it
back to the wire (:func:`state_to_request`).

Conventions (those of the official API):

- A point is a tuple ``(x, y)``; ``(0, 0)`` is the bottom-left square and ``up`` is ``y + 1``.
  Points may lie off the board: the frozen body of a snake eliminated by a wall keeps its
  off-board head, exactly as the official engine records it.
- ``Snake.body`` lists segments head first. Two equal consecutive segments are *stacked*:
  every snake starts with three stacked segments, and eating duplicates the tail.
- ``Board.snakes`` holds every snake of the game. On the wire only living snakes are sent;
  the rules engine keeps eliminated ones (``eliminated_cause`` set, body frozen) so that
  a game can be replayed and scored.
- Moves are the strings ``up``, ``down``, ``left``, ``right`` (:data:`snake.rules.MOVES`).

The model states facts about a game and holds no rule: moving, colliding, feeding and
the geometry of moves are :mod:`snake.rules`, which imports this module (never the reverse).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

Point = tuple[int, int]

#: Rulesets this model understands. ``wrapped_constrictor`` is sent by the official engine;
#: ``squad`` was dropped by it in 2022 and is played as its last release did.
RULESETS: tuple[str, ...] = (
    "standard", "constrictor", "royale", "wrapped", "solo", "squad", "wrapped_constrictor",
)

# Limits on request contents: anything past them is absurd and refused with HTTP 400.
MAX_BOARD_SIDE = 100
MAX_SNAKES = 64
MAX_BODY = MAX_BOARD_SIDE * MAX_BOARD_SIDE + 2
MAX_POINTS = 4 * MAX_BOARD_SIDE * MAX_BOARD_SIDE  # food or hazards (hazards may stack)


def max_segments(width: int, height: int, snakes: int) -> int:
    """The most body segments a board's living snakes can have: one per square, twice over
    (squadmates' bodies may overlap), and the stacked segments of a start or a meal."""
    return 2 * width * height + 3 * snakes
MAX_ID = 1024
#: A health or a ruleset setting beyond this magnitude (the engine's are below 1,000) would
#: overflow the arithmetic of the filter and the compact state.
MAX_NUMBER = 1_000_000


@dataclass(slots=True)
class Settings:
    """``ruleset.settings``; defaults are the official engine's."""

    food_spawn_chance: int = 15
    minimum_food: int = 1
    hazard_damage_per_turn: int = 14
    shrink_every_n_turns: int = 25
    allow_body_collisions: bool = False
    shared_elimination: bool = False
    shared_health: bool = False
    shared_length: bool = False

    def to_wire(self) -> dict[str, Any]:
        return {
            "foodSpawnChance": self.food_spawn_chance,
            "minimumFood": self.minimum_food,
            "hazardDamagePerTurn": self.hazard_damage_per_turn,
            "royale": {"shrinkEveryNTurns": self.shrink_every_n_turns},
            "squad": {
                "allowBodyCollisions": self.allow_body_collisions,
                "sharedElimination": self.shared_elimination,
                "sharedHealth": self.shared_health,
                "sharedLength": self.shared_length,
            },
        }


@dataclass(slots=True)
class Ruleset:
    """The ruleset a game is played under. ``name`` may be one this model does not know;
    such a game is still served (by flood fill), never refused."""

    name: str = "standard"
    version: str = ""
    settings: Settings = field(default_factory=Settings)

    @property
    def wraps(self) -> bool:
        """Heads leaving the board come back on the opposite edge."""
        return self.name in ("wrapped", "wrapped_constrictor")

    @property
    def constrictor(self) -> bool:
        """Every snake grows every turn, so no tail ever moves out of the way."""
        return self.name in ("constrictor", "wrapped_constrictor")

    @property
    def squad(self) -> bool:
        return self.name == "squad"


@dataclass(slots=True)
class Game:
    """``game``: identity, ruleset, map and the time allowed for an answer (ms)."""

    id: str
    ruleset: Ruleset = field(default_factory=Ruleset)
    map: str = "standard"
    timeout: int = 500
    source: str = ""


@dataclass(slots=True)
class Snake:
    """One snake. ``body`` is head first; it is never empty."""

    id: str
    body: list[Point]
    health: int = 100
    name: str = ""
    squad: str = ""
    latency: str = ""
    shout: str = ""
    customizations: dict[str, Any] | None = None
    eliminated_cause: str = ""
    eliminated_by: str = ""
    eliminated_on_turn: int = 0

    @property
    def head(self) -> Point:
        return self.body[0]

    @property
    def neck(self) -> Point | None:
        """The segment behind the head, or ``None`` for a one-segment body."""
        return self.body[1] if len(self.body) > 1 else None

    @property
    def tail(self) -> Point:
        return self.body[-1]

    @property
    def length(self) -> int:
        return len(self.body)

    @property
    def alive(self) -> bool:
        return not self.eliminated_cause

    @property
    def latency_ms(self) -> float | None:
        """``latency`` as a number: the milliseconds the engine measured for this snake's
        previous answer (the game's timeout when it did not answer in time; "0" before its
        first). ``None`` when it is not a finite number of 0 or more."""
        try:
            value = float(self.latency)
        except ValueError:
            return None
        return value if math.isfinite(value) and value >= 0 else None

    def is_squadmate(self, other: Snake) -> bool:
        """Equal non-empty ``squad`` strings make two different snakes squadmates."""
        return bool(self.squad) and self.squad == other.squad and self.id != other.id

    def copy(self) -> Snake:
        return Snake(
            self.id, list(self.body), self.health, self.name, self.squad, self.latency,
            self.shout, self.customizations, self.eliminated_cause, self.eliminated_by,
            self.eliminated_on_turn,
        )

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "health": self.health,
            "body": [{"x": x, "y": y} for x, y in self.body],
            "latency": self.latency,
            "head": {"x": self.head[0], "y": self.head[1]},
            "length": len(self.body),
            "shout": self.shout,
            "squad": self.squad,
        }
        if self.customizations is not None:
            out["customizations"] = self.customizations
        return out


@dataclass(slots=True)
class Board:
    """``board``: its size, food, hazards (a square may repeat: stacked hazards) and snakes."""

    width: int
    height: int
    food: list[Point] = field(default_factory=list)
    hazards: list[Point] = field(default_factory=list)
    snakes: list[Snake] = field(default_factory=list)

    def in_bounds(self, point: Point) -> bool:
        x, y = point
        return 0 <= x < self.width and 0 <= y < self.height

    @property
    def living_snakes(self) -> list[Snake]:
        return [s for s in self.snakes if not s.eliminated_cause]

    def snake(self, snake_id: str) -> Snake | None:
        for s in self.snakes:
            if s.id == snake_id:
                return s
        return None

    def copy(self) -> Board:
        return Board(self.width, self.height, list(self.food), list(self.hazards),
                     [s.copy() for s in self.snakes])


@dataclass(slots=True)
class GameState:
    """A whole game at one turn: what the rules engine advances and every decision reads."""

    game: Game
    turn: int
    board: Board

    @property
    def ruleset(self) -> Ruleset:
        return self.game.ruleset

    def copy(self) -> GameState:
        return GameState(self.game, self.turn, self.board.copy())


@dataclass(slots=True)
class MoveRequest:
    """A parsed request body: the state and the snake we play (``you``).

    ``you`` is the object in ``state.board.snakes`` when it is listed there; a ``you`` that
    is not listed (already eliminated) is kept apart and marked eliminated."""

    state: GameState
    you: Snake
    #: When the request arrived (``time.perf_counter``), set by the server: the move is due
    #: ``game.timeout`` ms after it. ``None`` for requests built elsewhere.
    received: float | None = None
    #: The time (ms) to keep for what happens outside the server's own handling, measured in
    #: this game and set by the server's sessions (:mod:`snake.serving.sessions`); ``None``: not
    #: known yet, the strategy's own margin holds.
    margin_ms: float | None = None
    #: The move the server answered, set once it is decided: the next turn's request shows
    #: whether the engine applied it (:mod:`snake.serving.sessions`).
    answer: str | None = None
    #: How many snakes the game began with, as far as its player knows: the snakes of the
    #: first request it saw of this game (the server's sessions, :mod:`snake.serving.sessions`, and
    #: the arena's seats set it; a game played from a position begins there). ``None``: not
    #: known (a request alone does not say), taken as the snakes in this one.
    snakes_at_start: int | None = None

    @property
    def began_with(self) -> int:
        """The number of snakes the game began with, as far as known
        (:attr:`snakes_at_start`, else the snakes in this request)."""
        if self.snakes_at_start is not None:
            return self.snakes_at_start
        return len(self.state.board.living_snakes)


class RequestError(ValueError):
    """A request body that cannot be understood; ``str()`` names the offending field."""


# ---------------------------------------------------------------------------------------
# Parsing the wire format


def _get(obj: Any, key: str, where: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    if not isinstance(obj, dict):
        raise RequestError(f"{where or 'body'}: expected an object")
    path = f"{where}.{key}" if where else key
    if key not in obj or obj[key] is None:
        if default is ...:
            raise RequestError(f"{path}: missing")
        return default
    value = obj[key]
    # bool is an int in Python; a count or coordinate given as true/false is still wrong.
    if kind is int or kind == (int, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RequestError(f"{path}: expected a number")
        if isinstance(value, float):
            if not value.is_integer():
                raise RequestError(f"{path}: expected an integer")
            value = int(value)
        return value
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds):
        # (true is no id: an int kind does not admit a bool)
        names = "/".join(k.__name__ for k in kinds)
        raise RequestError(f"{path}: expected {names}")
    return value


def _number(obj: Any, key: str, where: str, default: Any = ...) -> int:
    """An integer field within :data:`MAX_NUMBER` either way (negative values are odd, not
    absurd: an eliminated snake's health may be below 0)."""
    value = _get(obj, key, where, int, default)
    if not -MAX_NUMBER <= value <= MAX_NUMBER:
        raise RequestError(f"{where}.{key}: out of range (beyond {MAX_NUMBER:,} either way)")
    return value


def _point(obj: Any, path: str) -> Point:
    if not isinstance(obj, dict):
        raise RequestError(f"{path}: expected a point {{x, y}}")
    x = _get(obj, "x", path, int)
    y = _get(obj, "y", path, int)
    if abs(x) > 10 * MAX_BOARD_SIDE or abs(y) > 10 * MAX_BOARD_SIDE:
        raise RequestError(f"{path}: coordinate out of range")
    return (x, y)


def _points(obj: Any, key: str, where: str, limit: int, required: bool) -> list[Point]:
    items = _get(obj, key, where, list, ... if required else [])
    path = f"{where}.{key}"
    if len(items) > limit:
        raise RequestError(f"{path}: too many entries ({len(items)} > {limit})")
    return [_point(p, f"{path}[{i}]") for i, p in enumerate(items)]


def _text(value: str) -> str:
    """``value`` as text every consumer can encode: JSON may carry lone UTF-16 surrogates
    (``"\\ud800"``), which UTF-8 (SQLite, logs) refuses; they are kept as ``\\ud800``
    escapes instead, so that an opponent's odd name never costs us a move."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _short_str(obj: Any, key: str, where: str, default: Any = ...,
               kinds: tuple[type, ...] = (str, int)) -> str:
    value = _get(obj, key, where, kinds, default)
    value = _text(str(value))
    if len(value) > MAX_ID:
        raise RequestError(f"{where}.{key}: too long")
    return value


def _snake(obj: Any, path: str) -> Snake:
    body = _points(obj, "body", path, MAX_BODY, True)
    if not body:
        raise RequestError(f"{path}.body: empty")
    health = _number(obj, "health", path)
    return Snake(
        id=_short_str(obj, "id", path),
        body=body,
        health=health,
        name=_short_str(obj, "name", path, ""),
        squad=_short_str(obj, "squad", path, ""),
        # a string on the official engine's wire; other engines send a number
        latency=_short_str(obj, "latency", path, "", (str, int, float)),
        shout=_text(str(_get(obj, "shout", path, str, "")))[:256],
        customizations=_get(obj, "customizations", path, dict, None),
    )


def parse_settings(obj: Any, path: str = "game.ruleset.settings") -> Settings:
    """``ruleset.settings`` as sent on the wire (also in recorded games): every field
    optional (absent or ``null``: the engine's default), numbers integral and within
    :data:`MAX_NUMBER`, flags booleans; unknown keys ignored. Raises
    :class:`RequestError` naming the field (under ``path``)."""
    d = Settings()
    royale = _get(obj, "royale", path, dict, {})
    squad = _get(obj, "squad", path, dict, {})
    return Settings(
        food_spawn_chance=_number(obj, "foodSpawnChance", path, d.food_spawn_chance),
        minimum_food=_number(obj, "minimumFood", path, d.minimum_food),
        hazard_damage_per_turn=_number(obj, "hazardDamagePerTurn", path, d.hazard_damage_per_turn),
        shrink_every_n_turns=_number(royale, "shrinkEveryNTurns", f"{path}.royale",
                                     d.shrink_every_n_turns),
        allow_body_collisions=bool(_get(squad, "allowBodyCollisions", f"{path}.squad", bool,
                                        False)),
        shared_elimination=bool(_get(squad, "sharedElimination", f"{path}.squad", bool, False)),
        shared_health=bool(_get(squad, "sharedHealth", f"{path}.squad", bool, False)),
        shared_length=bool(_get(squad, "sharedLength", f"{path}.squad", bool, False)),
    )


def parse_game(obj: Any) -> Game:
    """Parse the ``game`` object of a request (all it needs is ``id``)."""
    game = _get({"game": obj}, "game", "", dict)
    ruleset_obj = _get(game, "ruleset", "game", dict, {})
    ruleset = Ruleset(
        name=_short_str(ruleset_obj, "name", "game.ruleset", "standard"),
        version=_short_str(ruleset_obj, "version", "game.ruleset", ""),
        settings=parse_settings(_get(ruleset_obj, "settings", "game.ruleset", dict, {})),
    )
    timeout = _get(game, "timeout", "game", int, 500)
    if not 1 <= timeout <= 60_000:
        raise RequestError("game.timeout: must be between 1 and 60000 ms")
    return Game(
        id=_short_str(game, "id", "game"),
        ruleset=ruleset,
        map=_short_str(game, "map", "game", "standard"),
        timeout=timeout,
        source=_short_str(game, "source", "game", ""),
    )


def parse_request(body: Any) -> MoveRequest:
    """Validate a ``/start``, ``/move`` or ``/end`` body and build the model.

    Raises :class:`RequestError` naming the first field that is missing, of the wrong
    type, or absurd (a board side outside 1..100, more than 64 snakes, ...). A state that is
    well formed but odd (unknown ruleset, ``you`` not on the board) is accepted."""
    if not isinstance(body, dict):
        raise RequestError("body: expected a JSON object")
    game = parse_game(_get(body, "game", "", dict))
    turn = _get(body, "turn", "", int)
    if not 0 <= turn <= 10_000_000:
        raise RequestError("turn: out of range")
    board_obj = _get(body, "board", "", dict)
    width = _get(board_obj, "width", "board", int)
    height = _get(board_obj, "height", "board", int)
    for name, side in (("width", width), ("height", height)):
        if not 1 <= side <= MAX_BOARD_SIDE:
            raise RequestError(f"board.{name}: must be between 1 and {MAX_BOARD_SIDE}")
    snakes_obj = _get(board_obj, "snakes", "board", list)
    if len(snakes_obj) > MAX_SNAKES:
        raise RequestError(f"board.snakes: too many snakes ({len(snakes_obj)} > {MAX_SNAKES})")
    snakes = [_snake(s, f"board.snakes[{i}]") for i, s in enumerate(snakes_obj)]
    segments = sum(len(s.body) for s in snakes)
    if segments > max_segments(width, height, len(snakes)):
        # (absurd, and all of it would be Python work before any search could stop it)
        raise RequestError(f"board.snakes: {segments} segments, more than a {width}x{height} "
                           "board holds")
    if len({s.id for s in snakes}) != len(snakes):
        raise RequestError("board.snakes: duplicate snake id")
    board = Board(
        width=width,
        height=height,
        food=_points(board_obj, "food", "board", MAX_POINTS, True),
        hazards=_points(board_obj, "hazards", "board", MAX_POINTS, False),
        snakes=snakes,
    )
    you = _snake(_get(body, "you", "", dict), "you")
    listed = board.snake(you.id)
    if listed is not None:
        you = listed
    else:
        you.eliminated_cause = you.eliminated_cause or "not-on-board"
    return MoveRequest(GameState(game, turn, board), you)


# ---------------------------------------------------------------------------------------
# Writing the wire format


def game_to_wire(game: Game) -> dict[str, Any]:
    return {
        "id": game.id,
        "ruleset": {"name": game.ruleset.name, "version": game.ruleset.version,
                    "settings": game.ruleset.settings.to_wire()},
        "map": game.map,
        "timeout": game.timeout,
        "source": game.source,
    }


def state_to_request(state: GameState, you_id: str) -> dict[str, Any]:
    """The request body the official engine would send to snake ``you_id`` in ``state``
    (living snakes only on the board)."""
    board = state.board
    snakes = [s.to_wire() for s in board.snakes if s.alive]
    you = board.snake(you_id)
    if you is None:
        raise KeyError(you_id)
    return {
        "game": game_to_wire(state.game),
        "turn": state.turn,
        "board": {
            "height": board.height,
            "width": board.width,
            "food": [{"x": x, "y": y} for x, y in board.food],
            "hazards": [{"x": x, "y": y} for x, y in board.hazards],
            "snakes": snakes,
        },
        "you": you.to_wire(),
    }
