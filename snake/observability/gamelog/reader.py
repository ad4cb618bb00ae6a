"""Reading the game log: the dashboard's queries, replays, and games for training.

Every query takes a read-only connection (:func:`.store.connect_readonly`) and binds its
parameters (``?``): nothing a request sends is ever spliced into SQL.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterator

from snake.board import RequestError, parse_request
from snake.observability.gamelog.records import FINISHED, RESULTS
from snake.observability.gamelog.store import decompress
from snake.records.names import snake_names
from snake.records.replay import Replay, ReplayError, parse_replay, result_line
from snake.rules import final_turn_at_end

#: Bodies :func:`record_lines` reads per query (a body is at most the request size limit).
RECORD_PAGE = 8

_GAME_COLUMNS = ("game_id, you_id, you_name, origin, started_at, last_seen, ended_at, ruleset, "
                 "map, width, height, timeout, source, snakes, turns, final_turn, result")


@dataclass(slots=True)
class GameRow:
    """A game of the log with what the list shows about it."""

    game_id: str
    you_id: str
    you_name: str
    origin: str
    started_at: float
    last_seen: float
    ended_at: float | None
    ruleset: str
    map: str
    width: int
    height: int
    timeout: int
    source: str
    snakes: list[dict[str, str]]
    turns: int
    final_turn: int | None
    result: str | None
    latency_p50: float | None = None
    latency_max: float | None = None
    depth_median: float | None = None
    searched: int = 0

    @property
    def names(self) -> dict[str, str]:
        """The name a person reads for each snake of the game, ours included, by id
        (:func:`snake.records.names.snake_names`)."""
        return snake_names([(str(s.get("id", "")), str(s.get("name") or ""))
                            for s in self.snakes] + [(self.you_id, self.you_name)])

    @property
    def you(self) -> str:
        """Our snake's name as the game's pages show it."""
        return self.names[self.you_id]

    @property
    def opponents(self) -> list[str]:
        """The other snakes' names as the game's pages show them."""
        names = self.names
        return [names[str(s.get("id", ""))] for s in self.snakes if s.get("id") != self.you_id]

    @property
    def length(self) -> int:
        """Turns the game lasted (its final turn), or our last answered one so far."""
        return self.final_turn if self.final_turn is not None else self.turns


def _game_row(row: sqlite3.Row) -> GameRow:
    values = dict(row)
    values["snakes"] = json.loads(values["snakes"] or "[]")
    return GameRow(**{k: values[k] for k in _GAME_COLUMNS.split(", ")})


#: The SQL condition "a finished game", its parameters :data:`FINISHED` (bound).
_FINISHED_SQL = f"result IN ({', '.join('?' * len(FINISHED))})"

#: What :attr:`GameFilter.result` may be besides one result: groups of results.
#: ``finished`` (the default): :data:`FINISHED`; ``not-finished``: the rest (``unfinished``,
#: such as the one-position probes a client sends, ``abandoned``, and games in play);
#: ``all``; ``playing``: no result yet.
RESULT_GROUPS = ("finished", "not-finished", "all", "playing")
#: Every value :attr:`GameFilter.result` takes (``""`` is ``finished``).
RESULT_CHOICES = RESULT_GROUPS + RESULTS


@dataclass(frozen=True, slots=True)
class GameFilter:
    """Which games a list shows: a ruleset; a result, or a group of them
    (:data:`RESULT_GROUPS`: finished games unless told otherwise, so that probes and
    abandoned games do not bury the games played); an opponent's name. An empty ruleset or
    opponent does not filter."""

    ruleset: str = ""
    result: str = ""
    opponent: str = ""

    def where(self) -> tuple[str, tuple]:
        """The SQL condition and its parameters (bound, never spliced)."""
        clauses, params = [], []
        if self.ruleset:
            clauses.append("ruleset = ?")
            params.append(self.ruleset)
        if self.result in ("", "finished", "not-finished"):
            clauses.append(_FINISHED_SQL if self.result != "not-finished"
                           else f"(result IS NULL OR NOT {_FINISHED_SQL})")
            params += FINISHED
        elif self.result == "playing":
            clauses.append("result IS NULL")
        elif self.result != "all":
            clauses.append("result = ?")
            params.append(self.result)
        if self.opponent:
            # snakes is JSON written by the log: {"id": ..., "name": <the JSON string>}
            clauses.append("instr(snakes, ?) > 0 AND you_name != ?")
            params += [f'"name": {json.dumps(self.opponent)}', self.opponent]
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def recent_games(conn: sqlite3.Connection, limit: int = 50, offset: int = 0,
                 which: GameFilter = GameFilter()) -> list[GameRow]:
    """The latest games (of ``which``), newest first, with their latency p50/max and
    median depth."""
    where, params = which.where()
    rows = conn.execute(f"SELECT {_GAME_COLUMNS} FROM games{where} ORDER BY started_at DESC "
                        "LIMIT ? OFFSET ?", params + (int(limit), int(offset))).fetchall()
    games = [_game_row(r) for r in rows]
    for g in games:
        answers = conn.execute("SELECT answer_ms, depth FROM turns "
                               "WHERE game_id = ? AND you_id = ?",
                               (g.game_id, g.you_id)).fetchall()
        times = [a[0] for a in answers if a[0] is not None]
        depths = [a[1] for a in answers if a[1] is not None]
        if times:
            g.latency_p50 = statistics.median(times)
            g.latency_max = max(times)
        if depths:
            g.depth_median = statistics.median(depths)
        g.searched = len(depths)
    return games


def count_games(conn: sqlite3.Connection, which: GameFilter = GameFilter()) -> int:
    where, params = which.where()
    return conn.execute(f"SELECT count(*) FROM games{where}", params).fetchone()[0]


def rulesets(conn: sqlite3.Connection) -> list[str]:
    """The rulesets of the games recorded (for the dashboard's filter)."""
    return [r[0] for r in conn.execute("SELECT DISTINCT ruleset FROM games ORDER BY ruleset")]


def find_game(conn: sqlite3.Connection, game_id: str, you_id: str | None = None) -> GameRow | None:
    """The game ``game_id`` as played by ``you_id`` (or by whichever of our snakes, the first
    recorded, when not given)."""
    if you_id:
        row = conn.execute(f"SELECT {_GAME_COLUMNS} FROM games WHERE game_id = ? AND you_id = ?",
                           (game_id, you_id)).fetchone()
    else:
        row = conn.execute(f"SELECT {_GAME_COLUMNS} FROM games WHERE game_id = ? "
                           "ORDER BY you_id LIMIT 1", (game_id,)).fetchone()
    return _game_row(row) if row is not None else None


@dataclass(slots=True)
class TurnRow:
    turn: int
    received_at: float
    move: str
    shout: str
    answered_by: str
    method: str
    depth: int | None
    score: float | None
    nodes: int | None
    think_ms: float | None
    answer_ms: float | None
    engine_latency_ms: float | None
    reasons: dict[str, Any] = field(default_factory=dict)


def game_turns(conn: sqlite3.Connection, game: GameRow) -> list[TurnRow]:
    rows = conn.execute(
        "SELECT turn, received_at, move, shout, answered_by, method, depth, score, nodes, "
        "think_ms, answer_ms, engine_latency_ms, reasons FROM turns WHERE game_id = ? AND "
        "you_id = ? ORDER BY turn", (game.game_id, game.you_id)).fetchall()
    out = []
    for r in rows:
        values = dict(r)
        values["reasons"] = json.loads(values["reasons"] or "{}")
        out.append(TurnRow(**values))
    return out


def as_recorded(body: dict[str, Any]) -> dict[str, Any]:
    """A stored body as a game record holds it: what the service reads as its default when
    absent or null (a standard ruleset; no food, no hazards) written out, as the official
    engine always sends it. The rest stays as it came."""
    game = body.get("game")
    if isinstance(game, dict):
        ruleset = game.get("ruleset")
        if not isinstance(ruleset, dict):
            game["ruleset"] = ruleset = {}
        if not isinstance(ruleset.get("name"), str):
            ruleset["name"] = "standard"
    board = body.get("board")
    if isinstance(board, dict):
        for key in ("food", "hazards"):
            if not isinstance(board.get(key), list):
                board[key] = []
    return body


class RecordTooLarge(ReplayError):
    """A game whose stored bodies are more than a reader would hold in memory."""


def has_record(conn: sqlite3.Connection, game: GameRow) -> bool:
    """Whether any body of the game was recorded (a turn's, or the final one)."""
    return conn.execute(
        "SELECT EXISTS (SELECT 1 FROM turns WHERE game_id = ? AND you_id = ?) OR EXISTS "
        "(SELECT 1 FROM games WHERE game_id = ? AND you_id = ? AND final_body IS NOT NULL)",
        (game.game_id, game.you_id, game.game_id, game.you_id)).fetchone()[0] == 1


def record_lines(conn: sqlite3.Connection, game: GameRow,
                 max_bytes: int | None = None) -> Iterator[str]:
    """The game as a CLI-format record (``snake.records.replay``), line by line without the
    newlines, one stored body at a time: the ``game`` object, every body we received
    (:func:`as_recorded`), the final body from ``/end`` as the final turn, and a result line
    read off the final board. Nothing when no body was recorded; :class:`RecordTooLarge` once the
    bodies pass ``max_bytes``. The bodies are read :data:`RECORD_PAGE` at a time, each page a
    short query: between two lines no statement is open on ``conn``."""
    total = 0
    last: dict[str, Any] | None = None

    def read(blob: bytes) -> dict[str, Any]:
        nonlocal total
        text = decompress(blob)
        total += len(text)
        if max_bytes is not None and total > max_bytes:
            raise RecordTooLarge(f"game {game.game_id}: its record is more than "
                                 f"{max_bytes >> 20} MB")
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if not (isinstance(body, dict) and isinstance(body.get("game"), dict)
                and isinstance(body.get("board"), dict)
                and isinstance(body["board"].get("snakes"), list)):
            raise ReplayError(f"game {game.game_id}: a stored body is not a request body")
        return as_recorded(body)

    after = -(1 << 63)               # below any turn SQLite can hold
    while True:
        # A page at a time, each a query of its own run to its end: no statement, and so no
        # read snapshot pinning the write-ahead log, stays open while a consumer (a slow
        # client downloading the record) holds the lines.
        page = conn.execute("SELECT turn, body FROM turns WHERE game_id = ? AND you_id = ? "
                            "AND turn > ? ORDER BY turn LIMIT ?",
                            (game.game_id, game.you_id, after, RECORD_PAGE)).fetchall()
        for turn, blob in page:
            body = read(blob)
            if last is None:
                yield json.dumps(body["game"])
            yield json.dumps(body)
            last = body
            after = turn
        if len(page) < RECORD_PAGE:
            break
    final = conn.execute("SELECT final_body FROM games WHERE game_id = ? AND you_id = ?",
                         (game.game_id, game.you_id)).fetchone()
    if final is not None and final[0] is not None:
        body = read(final[0])
        try:
            # the engine shows a finished game one turn on (snake.rules.END_AFTER_FINAL); a
            # record's last line is its final turn (the food the map may spawn on the turn
            # after is in it too)
            body["turn"] = final_turn_at_end(parse_request(body).state)
        except RequestError:
            pass
        if last is None or body.get("turn", -1) > last.get("turn", -1):
            if last is None:
                yield json.dumps(body["game"])
            yield json.dumps(body)
            last = body
    if last is None:
        return
    living = last["board"]["snakes"] if game.result is not None else []
    if game.result is None or game.result == "abandoned" or len(living) > 1:
        result = result_line("", "", False)
    elif not living:
        # no snake left is a draw, but never in solo (the official CLI's rule)
        result = result_line("", "", game.ruleset != "solo")
    else:
        result = result_line(living[0]["id"], living[0].get("name", ""), False)
    yield json.dumps(result)


def replay_of(conn: sqlite3.Connection, game: GameRow,
              max_bytes: int | None = None) -> Replay | None:
    """The game's record (:func:`record_lines`), read and checked; ``None`` when no body was
    recorded; :class:`ReplayError` when the stored bodies do not make a record, or
    :class:`RecordTooLarge` past ``max_bytes``."""
    lines = list(record_lines(conn, game, max_bytes))
    if not lines:
        return None
    return parse_replay(lines, f"game {game.game_id}")


@dataclass(slots=True)
class Summary:
    """What the dashboard's charts show."""

    games: int
    results: dict[str, int]
    by_day: list[tuple[str, int, int, float]]       # day, games, wins, mean length
    latency_ms: list[float]                         # recent answers' times
    depths: list[int]                               # recent searched answers' depths
    answered_by: dict[str, int]


def summary(conn: sqlite3.Connection, recent_turns: int = 20_000, days: int = 60) -> Summary:
    results = {r[0] or "playing": r[1] for r in conn.execute(
        "SELECT result, count(*) FROM games GROUP BY result")}
    by_day = [(r[0], r[1], r[2] or 0, float(r[3] or 0.0)) for r in conn.execute(
        "SELECT date(started_at, 'unixepoch') AS day, count(*), "
        "sum(result = 'win'), avg(coalesce(final_turn, turns)) FROM games "
        # finished games only: a day of probes (one position, unfinished) is no day of losses
        f"WHERE {_FINISHED_SQL} "
        "GROUP BY day ORDER BY day DESC LIMIT ?", (*FINISHED, int(days)))][::-1]
    recent = conn.execute("SELECT answer_ms, depth, answered_by FROM turns "
                          "ORDER BY received_at DESC LIMIT ?", (int(recent_turns),)).fetchall()
    answered: dict[str, int] = {}
    for r in recent:
        answered[r[2]] = answered.get(r[2], 0) + 1
    return Summary(
        games=sum(results.values()), results=results, by_day=by_day,
        latency_ms=[r[0] for r in recent if r[0] is not None],
        depths=[r[1] for r in recent if r[1] is not None], answered_by=answered)


def training_games(conn: sqlite3.Connection,
                   unreadable: list[str] | None = None) -> Iterator[tuple[GameRow, Replay]]:
    """Every finished game (won, lost or drawn, or a solo game ended) with its record,
    oldest first: what the training pipeline reads with ``--from-game-log``. A game whose
    record cannot be read is passed over (its id added to ``unreadable``), not the end of
    the reading."""
    query = f"SELECT {_GAME_COLUMNS} FROM games WHERE {_FINISHED_SQL} ORDER BY started_at"
    for row in conn.execute(query, FINISHED).fetchall():
        game = _game_row(row)
        try:
            replay = replay_of(conn, game)
        except ReplayError:
            if unreadable is not None:
                unreadable.append(game.game_id)
            continue
        if replay is not None:
            yield game, replay

