"""Replay the official engine's recorded turns and check our rules engine against them.

    python -m snake.conformance FILE...            # .jsonl or .jsonl.gz, vectors format
    python -m snake.conformance -v FILE...         # print every mismatch in full
    python -m snake.conformance --engine compiled FILE...   # the compiled twin (snake.core)

Each line of a file is one turn (format: ``../shared/vectors/README.md``). For each line the
recorded ``before`` state and ``moves`` go through :func:`snake.rules.apply_rules` (royale's
side taken from ``royale_shrinks``) and the result must equal ``after_rules`` exactly: every
snake's body, health, elimination cause, by and turn, the food left and the hazards, all
in order. The line's ``spawned_food`` must obey the spawn rule of its map (standard: the
minimum, or at most one piece with a spawn chance, each on a square the map may use;
``empty``: never), ``after`` must be ``after_rules`` plus that food with ``turn`` + 1, the
next line of the same game must start from it, and ``game_over_after`` must agree with
:func:`snake.rules.is_game_over`.

With ``--engine compiled`` each turn goes through the compiled core instead: ``before`` is
encoded (:func:`snake.core.encode`), stepped (:func:`snake.core.apply_rules`), decoded for
``after_rules``; the recorded spawned food is added to the packed state and ``turn`` + 1
(:func:`snake.core.end_turn`), decoded again for ``after``.

Prints one line per file, ``FILE: N turns, M mismatches``, then
``conformance: N passed, M failed`` (files); exits 1 on any mismatch.

This module is also the one reader of recorded turns: :func:`read_lines` (the lines),
:func:`game_from_line` and :func:`state_from_vector` (the game and states of a line).
"""

from __future__ import annotations

import argparse
import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from snake.board import Board, Game, GameState, Ruleset, Snake, parse_settings
from snake.rules import apply_rules, is_game_over
from snake.rules.maps import food_spawn_squares, get_map, is_royale_shrink_turn


@dataclass
class FileResult:
    path: str
    turns: int = 0
    mismatches: int = 0
    reports: list[str] = field(default_factory=list)


def read_lines(path: str | Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a ``.jsonl`` or ``.jsonl.gz`` file (blank lines skipped)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{number}: not JSON ({e.msg})") from None


def game_from_line(line: dict[str, Any]) -> Game:
    """The game of a recorded line: its id, map and ruleset, whose settings are read as a
    request's are (:func:`snake.board.parse_settings`)."""
    rs = line["ruleset"]
    ruleset = Ruleset(name=rs["name"],
                      settings=parse_settings(rs.get("settings") or {}, "ruleset.settings"))
    return Game(id=str(line.get("game_id", "")), ruleset=ruleset, map=line.get("map", "standard"))


def _points(items: list[dict[str, int]]) -> list[tuple[int, int]]:
    return [(p["x"], p["y"]) for p in items]


def state_from_vector(obj: dict[str, Any], game: Game) -> GameState:
    """A vectors-format state (``before``/``after``) as a :class:`GameState`."""
    snakes = [
        Snake(id=s["id"], body=_points(s["body"]), health=s["health"], name=s.get("name", ""),
              squad=s.get("squad", ""), eliminated_cause=s.get("eliminated_cause", ""),
              eliminated_by=s.get("eliminated_by", ""),
              eliminated_on_turn=s.get("eliminated_on_turn", 0))
        for s in obj["snakes"]
    ]
    board = Board(obj["width"], obj["height"], _points(obj["food"]),
                  _points(obj.get("hazards") or []), snakes)
    return GameState(game, obj["turn"], board)


def state_to_vector(state: GameState) -> dict[str, Any]:
    """The vectors-format form of ``state`` (what is compared, field by field)."""
    b = state.board
    return {
        "turn": state.turn,
        "width": b.width,
        "height": b.height,
        "snakes": [
            {"id": s.id, "name": s.name, "squad": s.squad, "health": s.health,
             "body": [{"x": x, "y": y} for x, y in s.body],
             "eliminated_cause": s.eliminated_cause, "eliminated_by": s.eliminated_by,
             "eliminated_on_turn": s.eliminated_on_turn}
            for s in b.snakes
        ],
        "food": [{"x": x, "y": y} for x, y in b.food],
        "hazards": [{"x": x, "y": y} for x, y in b.hazards],
    }


def diff(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Human-readable differences between two JSON-like values."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in list(expected) + [k for k in actual if k not in expected]:
            if key not in actual:
                out.append(f"{path}.{key}: missing (expected {expected[key]!r})")
            elif key not in expected:
                out.append(f"{path}.{key}: unexpected {actual[key]!r}")
            else:
                out += diff(expected[key], actual[key], f"{path}.{key}")
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        if expected and isinstance(expected[0], dict) and "x" in expected[0]:
            if expected != actual:
                return [f"{path}: expected {_pts(expected)}, got {_pts(actual)}"]
            return []
        if len(expected) != len(actual):
            return [f"{path}: expected {len(expected)} items, got {len(actual)}"]
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += diff(e, a, f"{path}[{i}]")
        return out
    return [] if expected == actual else [f"{path}: expected {expected!r}, got {actual!r}"]


def _pts(items: list[Any]) -> str:
    return "[" + " ".join(f"({p['x']},{p['y']})" if isinstance(p, dict) else repr(p)
                          for p in items) + "]"


def check_spawned_food(after_rules: GameState, spawned: list[tuple[int, int]]) -> list[str]:
    """Problems with the food the map spawned after the rule stages, if any."""
    game = after_rules.game
    game_map = get_map(game.map)
    if not game_map.has_food:
        return [f"map {game.map!r} never spawns food, spawned {spawned}"] if spawned else []
    settings = game.ruleset.settings
    allowed = food_spawn_squares(after_rules.board)
    problems = []
    missing = settings.minimum_food - len(after_rules.board.food)
    if missing > 0:
        want = min(missing, len(allowed))
        if len(spawned) != want:
            problems.append(f"food below minimum: expected {want} spawned, got {len(spawned)}")
    elif len(spawned) > 1 or (spawned and settings.food_spawn_chance <= 1):
        problems.append(f"spawn chance {settings.food_spawn_chance}%: "
                        f"at most {int(settings.food_spawn_chance > 1)} food, got {len(spawned)}")
    allowed_set = set(allowed)
    for p in spawned:
        if p not in allowed_set:
            problems.append(f"food spawned on {p}, a square the map may not use")
    if len(set(spawned)) != len(spawned):
        problems.append(f"food spawned twice on one square: {spawned}")
    return problems


def _reference(before: GameState, moves: dict[str, str], side: int | None,
               spawned: list[tuple[int, int]]) -> tuple[GameState, GameState]:
    """(after the rule stages, after the whole turn) by :mod:`snake.rules`."""
    after_rules = apply_rules(before, moves, royale_side=side)
    after = after_rules.copy()
    after.board.food.extend(spawned)
    after.turn += 1
    return after_rules, after


def _compiled(before: GameState, moves: dict[str, str], side: int | None,
              spawned: list[tuple[int, int]]) -> tuple[GameState, GameState]:
    """The same through the compiled core: encode, step, decode."""
    from snake import core
    packed, _ = core.apply_rules(core.encode(before), moves, royale_side=side)
    return core.decode(packed), core.decode(core.end_turn(packed, spawned))


#: The rules engines a file can be checked against.
ENGINES = {"reference": _reference, "compiled": _compiled}


def check_file(path: str | Path, *, max_reports: int = 3, engine: str = "reference") -> FileResult:
    """Replay one file through ``engine`` (:data:`ENGINES`); ``max_reports`` mismatches are
    described in full (0: none)."""
    result = FileResult(str(path))
    previous: tuple[str, dict[str, Any]] | None = None  # (game_id, expected next before)
    for line in read_lines(path):
        result.turns += 1
        game = game_from_line(line)
        problems: list[str] = []
        if (previous is not None and previous[0] == line.get("game_id")
                and line["before"] != previous[1]):
            problems += ["before (differs from the previous line's after):"]
            problems += ["  " + d for d in diff(previous[1], line["before"], "before")]
        before = state_from_vector(line["before"], game)
        moves = {m["id"]: m["move"] for m in line["moves"]}
        side = None
        settings = game.ruleset.settings
        if (game.ruleset.name == "royale"
                and is_royale_shrink_turn(before.turn, settings.shrink_every_n_turns)):
            shrinks = line.get("royale_shrinks") or []
            if shrinks:
                side = shrinks[-1]
        spawned = _points(line.get("spawned_food") or [])
        try:
            ours, after_state = ENGINES[engine](before, moves, side, spawned)
        except Exception as e:  # a crash is a mismatch, reported with the turn
            problems.append(f"the {engine} engine raised {type(e).__name__}: {e}")
            ours = None
        if ours is not None:
            rule_problems = diff(line["after_rules"], state_to_vector(ours), "after_rules")
            problems += rule_problems
            problems += check_spawned_food(ours, spawned)
            after = state_to_vector(after_state)
            if "after" in line and not rule_problems:  # else the same diff again
                problems += diff(line["after"], after, "after")
            if ("game_over_after" in line
                    and bool(line["game_over_after"]) != is_game_over(after_state)):
                problems.append(f"game_over_after: expected {line['game_over_after']}, "
                                f"got {is_game_over(after_state)}")
        previous = (line.get("game_id"), line.get("after")) if "after" in line else None
        if problems:
            result.mismatches += 1
            if len(result.reports) < max_reports:
                head = (f"{path}: game {line.get('game_id')} turn {line.get('turn')} "
                        f"({game.ruleset.name}, map {game.map}), moves {moves}")
                result.reports.append("\n".join([head] + ["  " + p for p in problems]))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.conformance",
                                     description="Check the rules engine against recorded turns.")
    parser.add_argument("files", nargs="+", help=".jsonl or .jsonl.gz files in the vectors format")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="describe every mismatch (default: the first 3 per file)")
    parser.add_argument("--engine", choices=tuple(ENGINES), default="reference",
                        help="the readable rules (reference, default) or the compiled core")
    args = parser.parse_args(argv)
    passed = failed = 0
    for path in args.files:
        try:
            result = check_file(path, max_reports=10**9 if args.verbose else 3, engine=args.engine)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"{path}: cannot read ({type(e).__name__}: {e})")
            failed += 1
            continue
        print(f"{path}: {result.turns} turns, {result.mismatches} mismatches")
        for report in result.reports:
            print(report)
        if result.mismatches:
            failed += 1
        else:
            passed += 1
    print(f"conformance: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    from snake.cli import run_main
    run_main(main)
