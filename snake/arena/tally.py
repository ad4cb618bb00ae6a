"""Totals of game records already written: ``python -m snake.arena.tally DIR_OR_FILE ...``.

An arena run writes every game as it ends (``--output-dir``), so a long match stopped early,
or played in pieces over several sessions (different ``--seed`` each), can still be scored:

    python -m snake.arena.tally runs/duel-a runs/duel-b --player search

For the named player (default: the snake named in turn 0's ``you``, the arena's first
player) it counts, from each file's result line, wins (it is the winner), draws (``isDraw``
with it alive on the last recorded turn) and losses, then prints the score with its 95%
Wilson interval and Elo, as the arena does. In games of more than two snakes a win is a
first place. Also: game length, the player's length at turns 50 and 100 beside the mean of
the others', how many of its deaths came with health 1 on its last turn (starvation), and
per ruleset, board size, number of snakes and opponents when they are mixed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .replay import ReplayError, read_replay
from .stats import Score

#: Turns at which lengths are compared.
LENGTH_TURNS = (50, 100)


@dataclass(slots=True)
class GameSummary:
    """What one record says about the player."""

    kind: str                      # "standard 11x11, 2 snakes, against search-py"
    outcome: str                   # "win", "draw" or "loss"
    turns: int
    starved: bool                  # died with health 1 on its last turn
    length_at: dict[int, tuple[int, float]] = field(default_factory=dict)   # turn: (own, others' mean)


def summarise(path: Path, player: str | None) -> tuple[str, GameSummary]:
    """The player's name and its summary of the game in ``path``."""
    replay = read_replay(path)
    first = replay.turns[0]
    name = player or first["you"]["name"]
    board = first["board"]
    others = Counter(s["name"] for s in board["snakes"] if s["name"] != name)
    kind = (f"{replay.game['ruleset']['name']} {board['width']}x{board['height']}, "
            f"{len(board['snakes'])} snakes, against "
            + " ".join(f"{n}" if c == 1 else f"{c}x {n}" for n, c in sorted(others.items())))
    last_alive: dict | None = None
    length_at: dict[int, tuple[int, float]] = {}
    for turn in replay.turns:
        snakes = turn["board"]["snakes"]
        mine = [s for s in snakes if s["name"] == name]
        if mine:
            last_alive = mine[0]
        if turn["turn"] in LENGTH_TURNS and mine:
            others = [s["length"] for s in snakes if s["name"] != name]
            length_at[turn["turn"]] = (mine[0]["length"],
                                       statistics.mean(others) if others else float("nan"))
    if not any(s["name"] == name for s in board["snakes"]):
        raise ReplayError(f"{path}: no snake named {name!r}")
    result = replay.result
    alive_at_end = any(s["name"] == name for s in replay.turns[-1]["board"]["snakes"])
    if result["winnerName"] == name and not result["isDraw"]:
        outcome = "win"
    elif result["isDraw"] and (alive_at_end or _died_last(replay.turns, name)):
        outcome = "draw"
    else:
        outcome = "loss"
    starved = (not alive_at_end and outcome == "loss" and last_alive is not None
               and last_alive["health"] == 1)
    return name, GameSummary(kind, outcome, replay.turns[-1]["turn"], starved, length_at)


def _died_last(turns: list[dict], name: str) -> bool:
    """Whether the player was alive on the turn before the last (so it fell with the last
    snakes: a draw)."""
    return len(turns) >= 2 and any(s["name"] == name for s in turns[-2]["board"]["snakes"])


def record_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        files.extend(sorted(p.glob("game-*.jsonl")) if p.is_dir() else [p])
    return files


def report(name: str, games: list[GameSummary]) -> list[str]:
    counts = Counter(g.outcome for g in games)
    score = Score(counts["win"], counts["draw"], counts["loss"])
    lo, hi = score.interval
    multi = any(", 2 snakes" not in g.kind for g in games)
    lines = [f"{name}: {score.games} games, +{score.wins} ={score.draws} -{score.losses}"
             f"{' (a win is a first place)' if multi else ''}: score {score.fraction:.1%} "
             f"[{lo:.1%}, {hi:.1%}], Elo {score.elo_text()} {score.elo_interval_text()}"]
    turns = [g.turns for g in games]
    lines.append(f"  game length: median {statistics.median(turns):g} turns, "
                 f"range {min(turns)}-{max(turns)}")
    deaths = sum(1 for g in games if g.outcome == "loss")
    starved = sum(g.starved for g in games)
    lines.append(f"  its deaths by starvation (health 1 on its last turn): {starved} of {deaths}")
    for turn in LENGTH_TURNS:
        pairs = [g.length_at[turn] for g in games if turn in g.length_at]
        if pairs:
            own = statistics.mean(p[0] for p in pairs)
            others = statistics.mean(p[1] for p in pairs if p[1] == p[1])
            lines.append(f"  length at turn {turn}: {own:.1f}, the others {others:.1f} "
                         f"({len(pairs)} games with it alive)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.arena.tally",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", metavar="DIR_OR_FILE",
                        help="game records (game-*.jsonl) or directories of them")
    parser.add_argument("--player", help="the snake's name (default: turn 0's you)")
    args = parser.parse_args(argv)
    files = record_files(args.paths)
    if not files:
        print("no game records found", file=sys.stderr)
        return 1
    by_kind: dict[str, list[GameSummary]] = defaultdict(list)
    names: set[str] = set()
    for path in files:
        try:
            name, summary = summarise(path, args.player)
        except (ReplayError, OSError, KeyError, IndexError) as exc:
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        names.add(name)
        by_kind[summary.kind].append(summary)
    if len(names) > 1:
        print(f"the records name different players {sorted(names)}: give --player",
              file=sys.stderr)
        return 1
    if not by_kind:
        return 1
    name = names.pop()
    if len(by_kind) > 1:
        for kind, games in sorted(by_kind.items()):
            print(kind)
            print("\n".join("  " + line for line in report(name, games)))
        print("all these records together:")
    print("\n".join(report(name, [g for games in by_kind.values() for g in games])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
