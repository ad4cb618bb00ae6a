"""The service's dashboard: its games, read from the game log, as web pages.

:func:`games_view` and :func:`game_view` answer ``GET /games`` and ``GET /games/<id>``
as (status, content type, body), without Flask; the service's routes only check access
(:mod:`.access`) and send what these return. Pages are in :mod:`.pages`, charts in
:mod:`.charts`.
"""

from __future__ import annotations

import logging
import math
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator

from snake.observability.dashboard.pages import game_page, games_page
from snake.observability.gamelog.reader import (
    RESULT_CHOICES,
    GameFilter,
    GameRow,
    RecordTooLarge,
    Summary,
    TurnRow,
    count_games,
    find_game,
    game_turns,
    has_record,
    recent_games,
    record_lines,
    replay_of,
    rulesets,
    summary,
)
from snake.observability.gamelog.store import connect_readonly
from snake.records.ending import how_it_ended, seen_lost_from
from snake.records.replay import Replay, ReplayError
from snake.search.plan import PROVEN

PER_PAGE = 50
#: The most bytes of stored bodies (decompressed) of a game whose board a page draws: an
#: 11×11 game of 500 turns is about 1.5 MB, a page takes some twenty times its record's
#: size to build, and anyone who reaches ``/move`` chooses what one game's log holds.
MAX_RECORD_BYTES = 8 << 20

log = logging.getLogger("nuppeppou.dashboard")


@dataclass(frozen=True, slots=True)
class View:
    status: int
    content_type: str
    body: str | Iterable[str]        # a long record is streamed


HTML = "text/html; charset=utf-8"
NOTHING = Summary(games=0, results={}, by_day=[], latency_ms=[], depths=[], answered_by={})


def _message(status: int, text: str) -> View:
    return View(status, HTML, f"<!DOCTYPE html><html><body><p>{text}</p>"
                              '<p><a href="/games">all games</a></p></body></html>')


def _open(path: Path | None) -> sqlite3.Connection | None:
    if path is None or not Path(path).exists():
        return None
    return connect_readonly(path)


def games_view(path: Path | None, page: str | None, about: dict[str, str],
               which: GameFilter = GameFilter()) -> View:
    try:
        number = max(1, int(page or 1))
    except ValueError:
        return _message(400, "page: expected a number")
    if which.result and which.result not in RESULT_CHOICES:
        return _message(400, "result: one of " + ", ".join(RESULT_CHOICES))
    if path is None:
        return _message(404, "The game log is off (NUPPEPPOU_GAME_LOG=off): no games are recorded.")
    conn = _open(path)
    if conn is None:
        return View(200, HTML, games_page(NOTHING, [], page=1, pages=1, about=about))
    try:
        total = count_games(conn, which)
        pages = max(1, math.ceil(total / PER_PAGE))
        number = min(number, pages)
        games = recent_games(conn, PER_PAGE, (number - 1) * PER_PAGE, which)
        # the games the default list leaves out, counted so that the page can say so
        hidden = (count_games(conn, replace(which, result="not-finished"))
                  if which.result in ("", "finished") else 0)
        return View(200, HTML, games_page(summary(conn), games, page=number, pages=pages,
                                          about=about, which=which, rulesets=rulesets(conn),
                                          hidden=hidden))
    finally:
        conn.close()


def game_view(path: Path | None, game_id: str, you_id: str | None, fmt: str | None) -> View:
    conn = _open(path)
    if conn is None:
        return _message(404, "No such game.")
    try:
        game = find_game(conn, game_id, you_id or None)
        if game is None:
            return _message(404, "No such game.")
        if fmt == "jsonl":
            if not has_record(conn, game):
                return _message(404, "No turn of this game was recorded.")
            # streamed a body at a time: a record of any size, in little memory
            return View(200, "application/x-ndjson; charset=utf-8", _streamed(path, game))
        turns = game_turns(conn, game)
        note = ""
        try:
            replay = replay_of(conn, game, MAX_RECORD_BYTES)
        except RecordTooLarge:
            replay, note = None, (f"This game's record is more than {MAX_RECORD_BYTES >> 20} MB, "
                                  "more than this page draws: download it (record, above) and "
                                  "draw it with python -m snake.records.render RECORD.")
        except ReplayError as exc:
            log.warning("the record of game %s cannot be read: %s", game.game_id, exc)
            replay, note = None, f"This game's record cannot be drawn: {exc}."
        return View(200, HTML, game_page(game, turns, replay, ending_of(replay, turns), note))
    finally:
        conn.close()


def _streamed(path: Path, game: GameRow) -> Iterator[str]:
    """The game's record as JSONL, read a body at a time on a connection of its own (the
    response is sent after :func:`game_view` returns)."""
    conn = connect_readonly(path)
    try:
        for line in record_lines(conn, game):
            yield line + "\n"
    except ReplayError as exc:       # the response has begun: it ends here, and says why
        log.warning("the record of game %s was cut short: %s", game.game_id, exc)
    finally:
        conn.close()


def ending_of(replay: Replay | None, turns: list[TurnRow]) -> list[str]:
    """How our snake's death came about, for its game's page (nothing if it did not die);
    a record the replay of the rules cannot read shows nothing rather than no page."""
    if replay is None:
        return []
    try:
        ending = how_it_ended(replay)
        seen = seen_lost(turns) if ending else None
    except Exception:                       # an odd record must not cost the whole page
        log.exception("how game %s ended could not be read", replay.game.get("id"))
        return []
    return ending + [seen] if seen else ending


def seen_lost(turns: list[TurnRow]) -> str | None:
    """From the answers the game log holds: since which turn every position with a choice
    was a proven loss for its search, to its last answer (forced moves, which are not
    searched, and a position with no safe move are no choice; an answer by anything but the
    search ends the run, as :func:`snake.records.ending.seen_lost_from` does for the
    post-mortem). ``None`` when no answer came from a search (a game imported from an arena
    record has no reasons)."""
    if not any(turn.answered_by == "search" for turn in turns):
        return None
    nearest_first = turns[::-1]
    index = seen_lost_from(
        (turn.answered_by == "no safe move"
         or (turn.answered_by == "search"
             and (turn.reasons.get("search") or {}).get("stopped") == "single move"),
         turn.answered_by == "search" and turn.score is not None and turn.score <= -PROVEN)
        for turn in nearest_first)
    if index is None:
        return "its search had not proven the loss at its last choice"
    return (f"its search saw the loss proven from turn {nearest_first[index].turn} to its last "
            f"answer, on turn {turns[-1].turn}")
