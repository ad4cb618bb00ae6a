"""The game log's file: an SQLite database (WAL) written by one thread per process.

Schema (version :data:`SCHEMA_VERSION`, in ``meta``):

``games``  one row per (game, our snake): the game as first seen (ruleset, map, size,
           timeout, source, every snake's id and name), when it started and was last seen,
           how many turns we answered, and at ``/end`` the final turn, the final body and
           the result (``win``, ``loss``, ``draw``, ``ended`` in solo; ``abandoned`` when no
           ``/end`` came within :data:`ABANDON_AFTER` seconds of the last request).
           ``origin`` is ``service`` or ``arena`` (imported replays).
``turns``  one row per answered ``/move``: the body as received (zlib), the move, shout,
           what answered it (search, seed, flood fill, ...), depth, score, nodes, the
           search's time, the answer's time from arrival, the engine's reported latency of
           the previous answer, and the reasons (JSON of the decision).

Writing (:class:`GameLog`): requests put records on a bounded queue and return at once; a
full queue drops the record and counts it (``dropped``), it never delays an answer. One
writer thread per process (started on first use, so again in each forked worker) commits
them in batches. Several processes write the same file: SQLite serialises the writers
(WAL, a busy timeout on the writer's connection only). A kill -9 loses at most what was
still queued; WAL keeps the file readable. Retention: past ``max_games`` games or
``max_mb`` megabytes the oldest games are deleted and the space returned (incremental
vacuum).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import sqlite3
import threading
import time
import zlib
from pathlib import Path
from typing import Any

from ..board import parse_request
from .records import EndRecord, GameInfo, TurnRecord, end_record

log = logging.getLogger("nuppeppou.gamelog")

SCHEMA_VERSION = 1
#: Seconds without a request after which a game with no ``/end`` is ``abandoned``.
ABANDON_AFTER = 600.0
DEFAULT_MAX_GAMES = 10_000
DEFAULT_MAX_MB = 1024.0
DEFAULT_QUEUE = 4096
#: Seconds between two maintenance passes (abandoned games, retention) of a writer.
MAINTAIN_EVERY = 30.0
#: Seconds a writer waits after writing a batch, so that records are written in batches.
WRITE_EVERY = 0.25

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT NOT NULL,
    you_id TEXT NOT NULL,
    you_name TEXT NOT NULL DEFAULT '',
    origin TEXT NOT NULL DEFAULT 'service',
    started_at REAL NOT NULL,
    last_seen REAL NOT NULL,
    ended_at REAL,
    ruleset TEXT NOT NULL DEFAULT '',
    map TEXT NOT NULL DEFAULT '',
    width INTEGER NOT NULL DEFAULT 0,
    height INTEGER NOT NULL DEFAULT 0,
    timeout INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT '',
    snakes TEXT NOT NULL DEFAULT '[]',
    turns INTEGER NOT NULL DEFAULT 0,
    final_turn INTEGER,
    result TEXT,
    final_body BLOB,
    PRIMARY KEY (game_id, you_id)
);
CREATE INDEX IF NOT EXISTS games_by_start ON games (started_at);
CREATE INDEX IF NOT EXISTS games_open ON games (result, last_seen);
CREATE TABLE IF NOT EXISTS turns (
    game_id TEXT NOT NULL,
    you_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    received_at REAL NOT NULL,
    body BLOB NOT NULL,
    move TEXT NOT NULL,
    shout TEXT NOT NULL DEFAULT '',
    answered_by TEXT NOT NULL DEFAULT '',
    method TEXT NOT NULL DEFAULT '',
    depth INTEGER,
    score REAL,
    nodes INTEGER,
    think_ms REAL,
    answer_ms REAL,
    engine_latency_ms REAL,
    reasons TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (game_id, you_id, turn)
);
CREATE INDEX IF NOT EXISTS turns_by_time ON turns (received_at);
"""


def connect(path: str | Path, *, busy_timeout: float = 10.0) -> sqlite3.Connection:
    """A connection that may write: WAL, ``synchronous=NORMAL`` (a commit survives a
    process crash; a power cut may lose the last ones, never the file), the schema made."""
    conn = sqlite3.connect(str(path), timeout=busy_timeout, isolation_level=None)
    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")      # takes effect on a new file only
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    # The write-ahead log is folded in every 1000 pages; keep its file from staying large.
    conn.execute("PRAGMA journal_size_limit=4194304")
    conn.executescript("BEGIN IMMEDIATE;" + SCHEMA + "COMMIT;")
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
    return conn


def connect_readonly(path: str | Path) -> sqlite3.Connection:
    """A read-only connection (the dashboard, training): it can never change the file."""
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=5.0)
    conn.row_factory = sqlite3.Row
    return conn


def compress(body: bytes) -> bytes:
    # level 1: a third of the time of the default for a few percent more bytes; the
    # writer shares the process (and the GIL) with the requests
    return zlib.compress(body, 1)


def decompress(blob: bytes) -> bytes:
    return zlib.decompress(blob)


# ---------------------------------------------------------------------------------------
# Writing


def _upsert_game(conn: sqlite3.Connection, game: GameInfo, seen_at: float,
                 origin: str = "service") -> None:
    """``/start``: the game's row (made, or its times widened). A ``/start`` received after
    the game under these ids ended, or after any of its turns, begins another game: the
    earlier one is set aside first (:func:`_set_aside`)."""
    g = game
    earlier = conn.execute(
        "SELECT 1 FROM games WHERE game_id = ? AND you_id = ? AND (ended_at < ? OR EXISTS "
        "(SELECT 1 FROM turns WHERE game_id = ? AND you_id = ? AND received_at < ?))",
        (g.game_id, g.you_id, seen_at, g.game_id, g.you_id, seen_at)).fetchone()
    if earlier is not None:
        _set_aside(conn, g)
    _upsert_row(conn, game, seen_at, origin)


def _set_aside(conn: sqlite3.Connection, game: GameInfo) -> str:
    """Keep the game under ``game``'s ids as ``<game id>~<n>`` (the first free ``n``), so
    that another game under the same ids (an arena run again with its seed, a client that
    reuses ids) is recorded apart instead of mixing its turns with the earlier ones.
    Returns the new id."""
    n = 1
    while conn.execute("SELECT 1 FROM games WHERE game_id = ? AND you_id = ?",
                       (f"{game.game_id}~{n}", game.you_id)).fetchone() is not None:
        n += 1
    kept = f"{game.game_id}~{n}"
    for table in ("turns", "games"):
        conn.execute(f"UPDATE {table} SET game_id = ? WHERE game_id = ? AND you_id = ?",
                     (kept, game.game_id, game.you_id))
    log.info("game log: a new game under the ids of game %s you=%s; the earlier one is kept "
             "as %s", game.game_id, game.you_id, kept)
    return kept


def _upsert_row(conn: sqlite3.Connection, game: GameInfo, seen_at: float,
                origin: str = "service") -> None:
    conn.execute(
        "INSERT INTO games (game_id, you_id, you_name, origin, started_at, last_seen, ruleset, "
        "map, width, height, timeout, source, snakes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT (game_id, you_id) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen), "
        "started_at = min(started_at, excluded.started_at)",
        (game.game_id, game.you_id, game.you_name, origin, seen_at, seen_at, game.ruleset,
         game.map, game.width, game.height, game.timeout, game.source,
         json.dumps([{"id": i, "name": n} for i, n in game.snakes])))


def write_turn(conn: sqlite3.Connection, record: TurnRecord, origin: str = "service") -> None:
    """One answered ``/move``. A turn received after the game under its ids ended, or
    after a later turn of it was received, is another game's: the earlier is set aside
    (:func:`_set_aside`). A turn of the same game written after its ``/end`` (another
    worker's writer came later) settles a result that depended on it (a draw is told from
    a loss by our last turn)."""
    g = record.game
    earlier = conn.execute(
        "SELECT 1 FROM games WHERE game_id = ? AND you_id = ? AND (ended_at < ? OR EXISTS "
        "(SELECT 1 FROM turns WHERE game_id = ? AND you_id = ? AND turn > ? AND received_at < ?))",
        (g.game_id, g.you_id, record.received_at, g.game_id, g.you_id, record.turn,
         record.received_at)).fetchone()
    if earlier is not None:
        _set_aside(conn, g)
    _upsert_row(conn, record.game, record.received_at, origin)
    conn.execute(
        "INSERT OR REPLACE INTO turns (game_id, you_id, turn, received_at, body, move, shout, "
        "answered_by, method, depth, score, nodes, think_ms, answer_ms, engine_latency_ms, "
        "reasons) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (g.game_id, g.you_id, record.turn, record.received_at, compress(record.body),
         record.move, record.shout, record.answered_by, record.method, record.depth,
         record.score, record.nodes, record.think_ms, record.answer_ms,
         record.engine_latency_ms, json.dumps(record.reasons, separators=(",", ":"))))
    conn.execute("UPDATE games SET turns = (SELECT count(*) FROM turns WHERE game_id = ? AND "
                 "you_id = ?) WHERE game_id = ? AND you_id = ?",
                 (g.game_id, g.you_id, g.game_id, g.you_id))
    ended = conn.execute("SELECT final_body FROM games WHERE game_id = ? AND you_id = ? AND "
                         "result = 'loss' AND final_body IS NOT NULL",
                         (g.game_id, g.you_id)).fetchone()
    if ended is not None:
        end = end_record(parse_request(json.loads(decompress(ended[0]))), b"")
        last = conn.execute("SELECT max(turn) FROM turns WHERE game_id = ? AND you_id = ?",
                            (g.game_id, g.you_id)).fetchone()[0]
        conn.execute("UPDATE games SET result = ? WHERE game_id = ? AND you_id = ?",
                     (end.result(last), g.game_id, g.you_id))


def write_end(conn: sqlite3.Connection, record: EndRecord, origin: str = "service") -> None:
    g = record.game
    _upsert_row(conn, g, record.received_at, origin)
    last = conn.execute("SELECT max(turn) FROM turns WHERE game_id = ? AND you_id = ?",
                        (g.game_id, g.you_id)).fetchone()[0]
    conn.execute("UPDATE games SET ended_at = ?, final_turn = ?, result = ?, final_body = ? "
                 "WHERE game_id = ? AND you_id = ?",
                 (record.received_at, record.turn, record.result(last),
                  compress(record.body), g.game_id, g.you_id))


def mark_abandoned(conn: sqlite3.Connection, now: float, after: float = ABANDON_AFTER) -> int:
    """Games with no ``/end`` and no request for ``after`` seconds: ``abandoned``."""
    return conn.execute("UPDATE games SET result = 'abandoned' WHERE result IS NULL AND "
                        "last_seen < ?", (now - after,)).rowcount


def enforce_retention(conn: sqlite3.Connection, max_games: int, max_mb: float) -> int:
    """Delete the oldest games (and their turns) past ``max_games`` or ``max_mb`` of data;
    returns how many were deleted."""
    deleted = 0
    excess = conn.execute("SELECT count(*) FROM games").fetchone()[0] - max_games
    if excess > 0:
        deleted += _delete_oldest(conn, excess)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    for _ in range(20):
        used = (conn.execute("PRAGMA page_count").fetchone()[0]
                - conn.execute("PRAGMA freelist_count").fetchone()[0]) * page_size
        games = conn.execute("SELECT count(*) FROM games").fetchone()[0]
        if used <= max_mb * 1024 * 1024 or games <= 1:
            break
        deleted += _delete_oldest(conn, max(1, games // 10))
    if deleted:
        conn.execute("PRAGMA incremental_vacuum")
    return deleted


def _delete_oldest(conn: sqlite3.Connection, count: int) -> int:
    rows = conn.execute("SELECT game_id, you_id FROM games ORDER BY started_at LIMIT ?",
                        (count,)).fetchall()
    conn.execute("BEGIN IMMEDIATE")
    for game_id, you_id in rows:
        conn.execute("DELETE FROM turns WHERE game_id = ? AND you_id = ?", (game_id, you_id))
        conn.execute("DELETE FROM games WHERE game_id = ? AND you_id = ?", (game_id, you_id))
    conn.execute("COMMIT")
    return len(rows)


_STOP = object()


class GameLog:
    """The service's game log (see the module docstring). ``path`` is the SQLite file."""

    def __init__(self, path: str | Path, *, queue_size: int = DEFAULT_QUEUE,
                 max_games: int = DEFAULT_MAX_GAMES, max_mb: float = DEFAULT_MAX_MB,
                 abandon_after: float = ABANDON_AFTER, maintain_every: float = MAINTAIN_EVERY,
                 write_every: float = WRITE_EVERY):
        self.path = Path(path)
        self.queue_size = queue_size
        self.max_games = max_games
        self.max_mb = max_mb
        self.abandon_after = abandon_after
        self.maintain_every = maintain_every
        self.write_every = write_every
        self.dropped = 0            # records dropped on a full queue, this process
        self.written = 0            # records committed, this process
        self.errors = 0             # batches or records not written, writer restarts, this process
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._queue: queue.Queue = queue.Queue(maxsize=queue_size)
        self._thread: threading.Thread | None = None
        self._closed = False        # closed on purpose: a stopped writer is not restarted

    # -- the request side: never blocks -----------------------------------------------

    def turn(self, record: TurnRecord) -> bool:
        return self._put(("turn", record))

    def start(self, game: GameInfo) -> bool:
        return self._put(("start", game, time.time()))

    def end(self, record: EndRecord) -> bool:
        return self._put(("end", record))

    def queue_depth(self) -> int:
        return self._queue.qsize() if self._pid == os.getpid() else 0

    def _put(self, item: tuple) -> bool:
        self._ensure_writer()
        try:
            self._queue.put_nowait(item)
            return True
        except queue.Full:
            self.dropped += 1
            return False

    def writer_alive(self) -> bool:
        """Whether this process's writer thread runs (none yet: nothing was queued)."""
        return self._pid != os.getpid() or (self._thread is not None and self._thread.is_alive())

    def _ensure_writer(self) -> None:
        if self._pid == os.getpid() and self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._pid == os.getpid() and self._thread is not None:
                if not self._thread.is_alive() and not self._closed:
                    # It died (a bug); what it had queued is still there: start another.
                    self.errors += 1
                    log.error("game log: the writer thread had stopped; starting another")
                    self._thread = threading.Thread(target=self._run, name="game-log",
                                                    daemon=True)
                    self._thread.start()
                return
            # A new process (a forked worker): the parent's queue and thread are not ours.
            self._queue = queue.Queue(maxsize=self.queue_size)
            self.dropped = self.written = self.errors = 0
            self._thread = threading.Thread(target=self._run, name="game-log", daemon=True)
            self._pid = os.getpid()
            self._closed = False
            self._thread.start()
            # A worker that exits normally writes what is queued first (a kill -9 cannot).
            atexit.register(self.close, 2.0)

    # -- the writer thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            conn = connect(self.path)
        except sqlite3.Error:
            log.exception("game log %s cannot be opened: nothing will be recorded", self.path)
            conn = None
        next_maintenance = time.monotonic()
        while True:
            try:
                item = self._queue.get(timeout=self.maintain_every)
            except queue.Empty:
                item = None
            batch = [] if item is None else [item]
            while len(batch) < 1024:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(b is _STOP for b in batch)
            work = [b for b in batch if b is not _STOP]
            if conn is None and work:
                self.errors += 1           # the file could not be opened: not written
            if conn is not None and work:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    written = 0
                    for b in work:
                        # One record that cannot be written (whatever the reason) is
                        # dropped alone; the batch and the writer go on.
                        conn.execute("SAVEPOINT record")
                        try:
                            if b[0] == "turn":
                                write_turn(conn, b[1])
                            elif b[0] == "end":
                                write_end(conn, b[1])
                            else:
                                _upsert_game(conn, b[1], b[2])
                            written += 1
                        except Exception:
                            self.errors += 1
                            log.exception("game log: a %s record not written", b[0])
                            conn.execute("ROLLBACK TO record")
                        conn.execute("RELEASE record")
                    conn.execute("COMMIT")
                    self.written += written
                except Exception:
                    self.errors += 1
                    log.exception("game log: %d records not written", len(work))
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
            for _ in batch:
                self._queue.task_done()
            if work and not stop:
                # Wake a few times a second, not once per record: every wake-up takes the
                # GIL from a request thread, and under load those hand-overs cost latency.
                time.sleep(self.write_every)
            if conn is not None and time.monotonic() >= next_maintenance:
                next_maintenance = time.monotonic() + self.maintain_every
                try:
                    self.maintain(conn)
                except Exception:
                    self.errors += 1
                    log.exception("game log: maintenance failed")
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
            if stop:
                if conn is not None:
                    conn.close()
                return

    def maintain(self, conn: sqlite3.Connection) -> None:
        mark_abandoned(conn, time.time(), self.abandon_after)
        enforce_retention(conn, self.max_games, self.max_mb)

    # -- for tests and shutdown -----------------------------------------------------------

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is written (or ``timeout`` seconds)."""
        if self._pid != os.getpid():
            return True
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def close(self, timeout: float = 5.0) -> None:
        if self._pid != os.getpid() or self._thread is None:
            return
        self._closed = True
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)
        self._pid = None


def from_environment(default_path: str = "games.db") -> GameLog | None:
    """The service's game log from ``NUPPEPPOU_GAME_LOG`` (a path; ``off`` disables; default
    ``games.db`` in the working directory), ``NUPPEPPOU_GAME_LOG_MAX_GAMES`` and
    ``NUPPEPPOU_GAME_LOG_MAX_MB``."""
    path = os.environ.get("NUPPEPPOU_GAME_LOG", default_path).strip()
    if path.lower() in ("off", "0", "no", "false", ""):
        return None
    return GameLog(path,
                   max_games=int(os.environ.get("NUPPEPPOU_GAME_LOG_MAX_GAMES", DEFAULT_MAX_GAMES)),
                   max_mb=float(os.environ.get("NUPPEPPOU_GAME_LOG_MAX_MB", DEFAULT_MAX_MB)))


def read_json(text: str | None) -> Any:
    return json.loads(text) if text else None
