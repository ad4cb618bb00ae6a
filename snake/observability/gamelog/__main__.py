"""The game log from the command line.

    # arena / CLI records in
    python -m snake.observability.gamelog import RECORDS... [--db games.db]
    # games, results, answers
    python -m snake.observability.gamelog summary [--db games.db]

``import`` reads game records in the official CLI's JSONL format (``snake.arena
--output-dir``, ``battlesnake play --output``) into the log as the game of the snake in
turn 0's ``you``, so the dashboard opens them like the service's own games (marked
``arena``): its move each turn is read off the next turn's head (none on the turn it fell:
the record no longer shows it); there are no reasons. A game already in the log (its game
id and snake) is left as it is, and said so: the service's own record of a game it played
holds its reasons and times, and another game under the same ids is not this one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from snake.board import RequestError, parse_request
from snake.decision import Decision
from snake.observability.gamelog.reader import GameFilter, count_games, summary
from snake.observability.gamelog.records import end_record, turn_record
from snake.observability.gamelog.store import connect, connect_readonly, write_end, write_turn
from snake.records.replay import ReplayError, read_replay, records_in
from snake.rules import END_AFTER_FINAL, finished_at_end, last_move, next_square


class AlreadyLogged(ValueError):
    """A record whose game (id and snake) the log already holds."""


def import_record(conn, path: Path) -> int:
    """Import one record; returns the number of turns written. :class:`AlreadyLogged` when
    the log holds its game already (nothing is written)."""
    replay = read_replay(path)
    you_id = replay.turns[0]["you"]["id"]
    game_id = replay.game.get("id")
    if conn.execute("SELECT 1 FROM games WHERE game_id = ? AND you_id = ?",
                    (game_id, you_id)).fetchone() is not None:
        raise AlreadyLogged(f"game {game_id} of {you_id} is in the log already")
    written = 0
    started = path.stat().st_mtime - len(replay.turns) * 0.5   # about when it was played
    conn.execute("BEGIN IMMEDIATE")
    try:
        for index, body in enumerate(replay.turns[:-1]):
            if not any(s["id"] == you_id for s in body["board"]["snakes"]):
                continue
            following = replay.turns[index + 1]
            request = parse_request(body)
            mine = [s for s in following["board"]["snakes"] if s["id"] == you_id]
            move = None
            if mine:
                head = (mine[0]["body"][0]["x"], mine[0]["body"][0]["y"])
                move = last_move(head, request.you.head)
                if next_square(request.state, request.you.head, move) != head:
                    move = None            # not one step: a record we cannot read
            record = turn_record(request, json.dumps(body).encode(),
                                 Decision(move or "up", method="arena record"), 0.0)
            # the turn it fell on: where it went is not in the record
            record = replace(record, received_at=started + 0.5 * index, answer_ms=None,
                             move=move or "")
            write_turn(conn, record, origin="arena")
            written += 1
        final = replay.turns[-1]
        if finished_at_end(parse_request(final).state):
            # the /end the engine sends: the finished game one turn on (the food its map
            # may spawn then is not in the record)
            final = {**final, "turn": final["turn"] + END_AFTER_FINAL}
        end = end_record(parse_request(final), json.dumps(final).encode())
        end = replace(end, received_at=started + 0.5 * len(replay.turns))
        write_end(conn, end, origin="arena")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.observability.gamelog",
                                     description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    imp = commands.add_parser("import", help="read game records (CLI JSONL) into the log")
    imp.add_argument("records", nargs="+", help="game-*.jsonl files or directories of them")
    imp.add_argument("--db", default="games.db", help="the game log (games.db)")
    show = commands.add_parser("summary", help="games, results and what answered")
    show.add_argument("--db", default="games.db", help="the game log (games.db)")
    args = parser.parse_args(argv)

    if args.command == "import":
        files: list[Path] = []
        for p in map(Path, args.records):
            files.extend(records_in(p) if p.is_dir() else [p])
        conn = connect(args.db)
        games = turns = present = 0
        for path in files:
            try:
                turns += import_record(conn, path)
                games += 1
            except AlreadyLogged as exc:
                present += 1
                print(f"left {path}: {exc}", file=sys.stderr)
            except (ReplayError, RequestError, OSError, KeyError, IndexError, TypeError) as exc:
                print(f"skipped {path}: {exc}", file=sys.stderr)
        conn.close()
        print(f"imported {games} games, {turns} turns into {args.db}"
              + (f"; {present} already in it" if present else ""))
        return 0 if games or present or not files else 1

    if not Path(args.db).exists():
        print(f"no game log at {args.db}", file=sys.stderr)
        return 1
    conn = connect_readonly(args.db)
    s = summary(conn)
    print(f"{count_games(conn, GameFilter(result='all'))} games: "
          + ", ".join(f"{k} {v}" for k, v in sorted(s.results.items())))
    if s.answered_by:
        print("recent answers by: "
              + ", ".join(f"{k} {v}" for k, v in sorted(s.answered_by.items())))
    if s.latency_ms:
        ordered = sorted(s.latency_ms)
        print(f"answer time p50 {ordered[len(ordered) // 2]:.0f} ms, max {ordered[-1]:.0f} ms "
              f"({len(ordered)} recent answers; "
              f"as of {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC)")
    return 0


if __name__ == "__main__":
    from snake.cli import run_main
    run_main(main)
