"""Positions to play games from: ``python -m snake.arena.positions RECORD_OR_DIR ... -o FILE``.

A *position* is a request body (``{game, turn, board, you}``, what the engine posts to
``/move``); a positions file holds one per line. ``python -m snake.arena --positions FILE``
(gzipped if its name ends in ``.gz``) plays its games from them instead of new set-ups: a
position gives the board (snakes, health, food, hazards) and the turn; the run gives the game's
settings and timeout (its ruleset and map must be the positions'). The games of one position rotate
the seats, so that every player plays every side of it, and every line-up of opponents plays a
position before the next is taken (cycling through the file); in 1v1 between two players, game
``g`` starts from position ``g // 2``, played twice with the seats swapped, which is what
makes a suite of positions a fair test: the side that the position favours is played by
each player once (so play a multiple of twice the positions). Turns count on from the
position's: ``--max-turns`` and the game lengths the arena and the tally report are turns
of the whole game.

This command collects positions from game records (CLI ``--output`` files, the arena's
``-o`` folders): from each record, the first turn with exactly ``--snakes`` snakes alive
(2: the last duel of a four-snake game), and with ``--later N[,N...]`` also those ``N``
turns later while the count holds. For example, the last duels of a run's games, to play
them out again between two candidate searches:

    python -m snake.arena.positions runs/four -o duels.jsonl
    python -m snake.arena "A=search[style=space]" search --positions duels.jsonl -g 114
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import zlib
from pathlib import Path
from typing import Any, Iterable, Sequence

from snake.board import RequestError, game_to_wire, parse_request
from snake.records.replay import read_replay, records_in


class PositionError(ValueError):
    """A positions file that cannot be played; ``str()`` names the file and line."""


def load_positions(path: str | Path) -> list[dict[str, Any]]:
    """The positions of a file, one request body per line (blank lines skipped), each
    checked by :func:`snake.board.parse_request`. A body without ``you`` gets its first
    snake. Raises :class:`PositionError` naming the line of the first bad one."""
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as f:
                text = f.read()
        else:
            text = path.read_text(encoding="utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise PositionError(f"{path}: cannot be read "
                            f"({getattr(exc, 'strerror', None) or exc})") from None
    positions = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            body = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PositionError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(body, dict):
            raise PositionError(f"{where}: not a request body (a JSON object)")
        board = body.get("board")
        if isinstance(board, dict) and isinstance(board.get("snakes"), list) and board["snakes"]:
            body.setdefault("you", board["snakes"][0])
        try:
            request = parse_request(body)
        except RequestError as exc:
            raise PositionError(f"{where}: {exc}") from None
        board = request.state.board
        if not board.snakes:
            raise PositionError(f"{where}: no snake on the board")
        for snake in board.snakes:
            if snake.health < 1 or not all(0 <= x < board.width and 0 <= y < board.height
                                           for x, y in snake.body):
                raise PositionError(f"{where}: snake {snake.id!r} is not alive on the board "
                                    "(health below 1, or a segment off the board)")
        body["game"] = game_to_wire(request.state.game)    # the defaults filled in
        positions.append(body)
    if not positions:
        raise PositionError(f"{path}: no positions")
    return positions


def positions_from_records(paths: Iterable[Path], snakes: int,
                           later: Sequence[int] = ()) -> list[dict[str, Any]]:
    """From each record, the first body with exactly ``snakes`` snakes alive, and those
    ``later`` turns after it while the count holds; records in the order given."""
    out = []
    for path in paths:
        first = None
        for body in read_replay(path).turns:
            alive = len(body["board"]["snakes"])
            if first is None and alive == snakes:
                first = body["turn"]
            if first is not None:
                if alive != snakes:
                    break
                if body["turn"] == first or body["turn"] - first in later:
                    out.append(body)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m snake.arena.positions",
                                description="Collect positions from game records, to play "
                                            "games from (python -m snake.arena --positions).")
    p.add_argument("records", nargs="+", type=Path, metavar="RECORD_OR_DIR",
                   help="game records (CLI --output files) or folders of them")
    p.add_argument("-o", "--output", type=Path, required=True,
                   help="the positions file (gzipped if its name ends in .gz)")
    p.add_argument("--snakes", type=int, default=2,
                   help="take the first turn with this many snakes alive (2)")
    p.add_argument("--later", default="",
                   help="also this many turns after it, while as many snakes live: N[,N...]")
    args = p.parse_args(argv)
    try:
        later = [int(n) for n in args.later.split(",") if n.strip()]
    except ValueError:
        print(f"positions: error: --later {args.later!r}: expected N[,N...]", file=sys.stderr)
        return 2
    if args.snakes < 1 or any(n < 1 for n in later):
        print("positions: error: --snakes and --later take numbers from 1", file=sys.stderr)
        return 2
    paths: list[Path] = []
    for given in args.records:
        paths.extend(records_in(given) if given.is_dir() else [given])
    # the positions file itself, if written among the records, is not one of them
    paths = [p for p in paths if p.resolve() != args.output.resolve()]
    if not paths:
        print("positions: error: no game records found (*.jsonl, *.jsonl.gz)", file=sys.stderr)
        return 2
    try:
        bodies = positions_from_records(paths, args.snakes, later)
        text = "".join(json.dumps(b, separators=(",", ":")) + "\n" for b in bodies)
        if args.output.suffix == ".gz":
            with gzip.open(args.output, "wt", encoding="utf-8") as f:
                f.write(text)
        else:
            args.output.write_text(text, encoding="utf-8")
    except (ValueError, OSError) as exc:     # a bad record (ReplayError, not text) or file
        print(f"positions: error: {exc}", file=sys.stderr)
        return 2
    print(f"positions: {len(bodies)} from {len(paths)} records -> {args.output}")
    return 0


if __name__ == "__main__":
    from snake.cli import run_main
    run_main(main)
