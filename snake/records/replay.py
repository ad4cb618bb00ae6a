"""Game records in the official Battlesnake CLI's ``--output`` format (JSON Lines).

``battlesnake play --output FILE`` writes, one JSON document per line:

1. the ``game`` object (``id``, ``ruleset {name, version, settings}``, ``map``, ``timeout``,
   ``source``), its settings carrying the deprecated empty ``hazardMap`` and
   ``hazardMapAuthor`` as the CLI does;
2. one full request body per turn, from turn 0 to the final state: ``{game, turn, board,
   you}`` exactly as a snake receives it (``board.snakes`` lists the living snakes only);
   ``you`` is one snake of the game (the CLI picks an arbitrary one; the arena always
   picks the first player's first snake, frozen in place once it is eliminated);
3. ``{"winnerId", "winnerName", "isDraw"}``: the winner is a snake alive at the end, the
   game is a draw when no snake is left (never in solo), the winner is empty otherwise.

:func:`request_body` builds those bodies (the ones the arena also posts to HTTP snakes);
:func:`write_replay` and :func:`read_replay` write and read whole files. This is the one
reader of a record's JSON: a game's results are asked of :class:`Replay`, which hands the
rules (:mod:`snake.rules.results`) who was alive on each turn and the result line.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from snake.board import GameState, game_to_wire, state_to_request
from snake.records.names import snake_names
from snake.rules import results as game_results

#: The arena's log of a run's games (``snake.arena.report``), kept beside its records: a
#: ``.jsonl`` file that is not a game record.
GAMES_LOG = "games.jsonl"


def records_in(folder: Path, recursive: bool = False) -> list[Path]:
    """The game records (``*.jsonl``, and gzipped ``*.jsonl.gz`` as the official CLI's
    games are often kept; the arena's :data:`GAMES_LOG` left out) in ``folder``, or in it
    and every folder below it, sorted."""
    found = [p for pattern in ("*.jsonl", "*.jsonl.gz")
             for p in (folder.rglob(pattern) if recursive else folder.glob(pattern))]
    return sorted(p for p in found if p.name != GAMES_LOG)


def open_text(path: str | Path):
    """``path`` opened for reading text, through gzip when the file is gzipped (its first
    bytes say so, whatever its name)."""
    path = Path(path)
    with path.open("rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gzipped else path.open(encoding="utf-8")


@dataclass(slots=True)
class SnakeLook:
    """What the wire says about a snake beyond the rules: its name and looks, its last
    latency (ms, as a string) and shout."""

    name: str
    color: str = "#888888"
    head: str = "default"
    tail: str = "default"
    latency: str = "0"
    shout: str = ""


def game_object(state: GameState) -> dict[str, Any]:
    """The ``game`` object in the CLI's shape (settings with ``hazardMap`` fields)."""
    game = game_to_wire(state.game)
    settings = game["ruleset"]["settings"]
    game["ruleset"]["settings"] = {
        "foodSpawnChance": settings["foodSpawnChance"],
        "minimumFood": settings["minimumFood"],
        "hazardDamagePerTurn": settings["hazardDamagePerTurn"],
        "hazardMap": "",
        "hazardMapAuthor": "",
        "royale": settings["royale"],
        "squad": settings["squad"],
    }
    return game


def request_body(state: GameState, you_id: str, looks: Mapping[str, SnakeLook],
                 game: dict[str, Any] | None = None) -> dict[str, Any]:
    """The body the engine posts to snake ``you_id`` in ``state`` (``/start``, ``/move``,
    ``/end``), names, latencies, shouts and customizations filled in from ``looks``."""
    body = state_to_request(state, you_id)
    body["game"] = game if game is not None else game_object(state)
    for snake in body["board"]["snakes"]:
        _dress(snake, looks)
    _dress(body["you"], looks)
    return body


def _dress(snake: dict[str, Any], looks: Mapping[str, SnakeLook]) -> None:
    look = looks.get(snake["id"])
    if look is None:
        return
    snake["name"] = look.name
    snake["latency"] = look.latency
    snake["shout"] = look.shout
    snake["customizations"] = {"color": look.color, "head": look.head, "tail": look.tail}


def result_line(winner_id: str, winner_name: str, is_draw: bool) -> dict[str, Any]:
    return {"winnerId": winner_id, "winnerName": winner_name, "isDraw": is_draw}


@dataclass(slots=True)
class Replay:
    """A game record: the game object, one request body per turn, the result."""

    game: dict[str, Any]
    turns: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=lambda: result_line("", "", False))

    def alive(self) -> dict[int, frozenset[str]]:
        """Who was alive on each recorded turn (:data:`snake.rules.results.Alive`): the
        ids on its board (the wire lists the living snakes only)."""
        return {turn["turn"]: frozenset(s["id"] for s in turn["board"]["snakes"])
                for turn in self.turns}

    def outcome(self, snakes: str | frozenset[str]) -> str:
        """``"win"``, ``"draw"`` or ``"loss"`` of a snake (its id), or of a player (the ids of
        its snakes), by :func:`snake.rules.results.recorded_outcome`."""
        return game_results.recorded_outcome(self.alive(), snakes, self.result["winnerId"],
                                             bool(self.result["isDraw"]))

    def results(self) -> dict[str, str] | str:
        """Every snake's result by id, or why the record does not settle them all
        (:func:`snake.rules.results.recorded_results`)."""
        return game_results.recorded_results(self.alive(), self.result["winnerId"],
                                             bool(self.result["isDraw"]))

    def place(self, snake_id: str) -> float:
        """The snake's place among the game's snakes (:func:`snake.rules.results.place`)."""
        return game_results.place(self.alive(), snake_id)

    def names(self) -> dict[str, str]:
        """The name a person reads for every snake of the record, by id
        (:func:`snake.records.names.snake_names`): those on any turn's board, and ``you``."""
        def snakes():
            for turn in self.turns:
                you = turn["you"]
                for s in [*turn["board"]["snakes"], *([you] if isinstance(you, dict) else [])]:
                    if "id" in s:
                        yield s["id"], str(s.get("name") or "")
        return snake_names(snakes())


def dumps_replay(replay: Replay) -> str:
    lines = [replay.game, *replay.turns, replay.result]
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


def write_replay(path: str | Path, replay: Replay) -> None:
    """Write ``replay`` to ``path`` (replacing it) in the CLI's JSONL format."""
    Path(path).write_text(dumps_replay(replay), encoding="utf-8")


class ReplayError(ValueError):
    """A file that is not a game record in the CLI's format; ``str()`` says where."""


def parse_replay(lines: Iterable[str], source: str = "replay") -> Replay:
    docs: list[Any] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            docs.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{source}:{number}: not JSON ({exc.msg})") from None
    if len(docs) < 2:
        raise ReplayError(f"{source}: needs a game line and a result line, has {len(docs)} lines")
    game, *turns, result = docs
    if not isinstance(game, dict) or "id" not in game or "ruleset" not in game:
        raise ReplayError(f"{source}:1: the first line is not a game object")
    if not isinstance(result, dict) or not {"winnerId", "winnerName", "isDraw"} <= result.keys():
        raise ReplayError(f"{source}: the last line is not a result "
                          "({\"winnerId\", \"winnerName\", \"isDraw\"})")
    for index, turn in enumerate(turns):
        if not isinstance(turn, dict) or not {"game", "turn", "board", "you"} <= turn.keys():
            raise ReplayError(f"{source}:{index + 2}: not a request body (game, turn, board, you)")
        snakes = turn["board"].get("snakes") if isinstance(turn["board"], dict) else None
        if not isinstance(snakes, list) or not all(
                isinstance(s, dict) and "id" in s and isinstance(s.get("body"), list) and s["body"]
                and all(isinstance(p, dict) and {"x", "y"} <= p.keys() for p in s["body"])
                for s in snakes):
            raise ReplayError(f"{source}:{index + 2}: board.snakes is not a list of snakes with "
                              "an id and a body of {x, y} points")
    return Replay(game, turns, result)


def read_replay(path: str | Path) -> Replay:
    """Read a CLI-format game record; raises :class:`ReplayError` naming the bad line."""
    path = Path(path)
    try:
        with open_text(path) as f:
            return parse_replay(f, str(path))
    except (EOFError, UnicodeDecodeError, zlib.error) as exc:   # a broken gzip file, or binary
        raise ReplayError(f"{path}: not a readable game record ({exc})") from None
