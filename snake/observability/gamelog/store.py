"""The game log's file: an SQLite database (WAL), and :class:`GameLog`, which writes it.

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

Who writes. Requests hand their records to :class:`GameLog` and return at once; a record
refused (a full queue) is dropped and counted (``dropped``), it never delays an answer.

- **Under gunicorn** (the repo's gunicorn.conf.py opens a :class:`.channel.Channel` in the
  master): each record is sent to the server's one **writer process** through a socket the
  kernel holds, before the answer is returned, so a worker killed with ``kill -9`` loses
  none of the turns it answered, and the SQLite work is off the workers' GIL. The writer
  process (:mod:`.writer`) runs a GameLog of its own, as below; a dead one is started
  again by the first process to notice, and what was sent meanwhile waits in the kernel
  (:mod:`.channel` says how, and what a kill -9 of the writer loses).
- **In any other process** (``python app.py``, the tests, tools): one writer thread per
  process, started on first use (so again in a forked process, never inherited half
  started), which takes records off a queue bounded in records and in bytes of bodies.
  A kill -9 of the process loses what was still queued: a quarter second of records.

The writer (the thread, in whichever process) commits records in batches. Several
processes write the same file (the workers of a server without a channel, several servers):
SQLite serialises the writers (WAL, a busy timeout on the writer's connection only). What
cannot be written yet is kept and tried again after a backoff (the queue bounds it): a file
that cannot be opened, a lock held past the busy timeout. A batch undone by an error of the
file (disk full, I/O) is written again a record at a time, so only the records that cannot
be written are lost. While records cannot be written, :attr:`GameLog.problem` says why
(``/health``: degraded). A file deleted or replaced under the writer is noticed (its path
names another inode) and opened again. WAL keeps the file readable after any kill.
Retention: past ``max_games`` games or ``max_mb`` megabytes the oldest games are deleted,
and their pages given back to the filesystem (incremental vacuum, a few hundred pages per
transaction, so that the other writers wait little).
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

from snake.board import parse_request
from snake.observability.gamelog.channel import Channel
from snake.observability.gamelog.channel import for_file as channel_for_file
from snake.observability.gamelog.records import EndRecord, GameInfo, TurnRecord, end_record
from snake.settings import Settings

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
#: Bodies (bytes, in megabytes) a process may hold queued for its writer, besides the count.
DEFAULT_QUEUE_MB = 64.0
#: Records a writer commits in one transaction at most.
BATCH = 1024
#: Seconds a writer's statement waits for another's lock before it fails (and is retried).
BUSY_TIMEOUT = 10.0
#: Seconds a writer waits before it tries again after a failure, doubling up to RETRY_MAX.
RETRY_MIN = 0.5
RETRY_MAX = 30.0
#: Free pages given back per transaction, and at most per maintenance pass (4 KB pages).
VACUUM_CHUNK = 256
VACUUM_PASS = 16_384
#: Seconds a move waits at most for the file when it asks how its game began
#: (:meth:`GameLog.snakes_at_start`): the answer is a help, never worth a late move.
LOOKUP_TIMEOUT = 0.05

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


def _upsert_game(conn: sqlite3.Connection, game: GameInfo, seen_at: float) -> None:
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
    _upsert_row(conn, game, seen_at, "service")


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
        "ON CONFLICT (game_id, you_id) DO UPDATE SET "
        "last_seen = max(last_seen, excluded.last_seen), "
        "started_at = min(started_at, excluded.started_at), "
        # the longest list is the start's: snakes only die, so it holds every later list's
        # entries (same ids, same names) and its JSON is the longest, whichever worker's
        # record came first
        "snakes = CASE WHEN length(excluded.snakes) > length(snakes) THEN excluded.snakes "
        "ELSE snakes END",
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
    returns how many were deleted. Their pages stay in the file, free, until
    :func:`give_back_free_pages`."""
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


def give_back_free_pages(conn: sqlite3.Connection, max_pages: int | None = None,
                         chunk: int | None = None) -> int:
    """Return the file's free pages to the filesystem (incremental vacuum), ``chunk``
    (:data:`VACUUM_CHUNK`) pages per transaction, until none is left or ``max_pages`` were
    returned; returns how many were. (The file shrinks at the next checkpoint, as it is in
    WAL mode.)"""
    chunk = chunk or VACUUM_CHUNK
    returned = 0
    while max_pages is None or returned < max_pages:
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        if free == 0:
            break
        step = min(chunk, free) if max_pages is None else min(chunk, free, max_pages - returned)
        # Each page is one step of the pragma, and execute() steps a statement once: run
        # through executescript, which steps it to the end. A chunk is its own transaction,
        # so another process's writer waits for one chunk at most, never the whole vacuum.
        conn.executescript(f"BEGIN IMMEDIATE; PRAGMA incremental_vacuum({int(step)}); COMMIT;")
        left = conn.execute("PRAGMA freelist_count").fetchone()[0]
        if left >= free:
            break               # not an incremental auto-vacuum file (made before it was set)
        returned += free - left
    return returned


def _sqlite_code(exc: BaseException) -> int | None:
    """The primary SQLite result code of an error (``None``: not an SQLite error)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


#: Errors of the file, not of a record: SQLite may have undone the whole transaction.
_FILE_ERRORS = (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_NOMEM,
                sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY,
                sqlite3.SQLITE_NOTADB)


def _is_busy(exc: BaseException) -> bool:
    """An error that goes away when another connection lets go of the file's lock."""
    return (_sqlite_code(exc) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            or (isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)))


def _file_id(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _body_bytes(item: tuple) -> int:
    """The bytes a queued record holds in bodies (what the queue's byte bound counts: the
    rest of a record, an ``/end``'s parsed body included, grows with it)."""
    return len(item[1].body) if item[0] in ("turn", "end") else 0


_STOP = object()


class GameLog:
    """The service's game log (see the module docstring). ``path`` is the SQLite file;
    ``channel`` the server's channel to its writer process (:func:`from_settings` finds
    the one gunicorn.conf.py opened), without which a thread of this process writes."""

    def __init__(self, path: str | Path, *, queue_size: int = DEFAULT_QUEUE,
                 queue_mb: float = DEFAULT_QUEUE_MB,
                 max_games: int = DEFAULT_MAX_GAMES, max_mb: float = DEFAULT_MAX_MB,
                 abandon_after: float = ABANDON_AFTER, maintain_every: float = MAINTAIN_EVERY,
                 write_every: float = WRITE_EVERY, busy_timeout: float = BUSY_TIMEOUT,
                 retry_min: float = RETRY_MIN, retry_max: float = RETRY_MAX,
                 channel: Channel | None = None):
        self.path = Path(path)
        #: the server's writer process, which then writes this log's records (the queue's
        #: and the writer's settings above are then its own)
        self.channel = channel
        self.queue_size = queue_size
        self.queue_bytes = int(queue_mb * 1024 * 1024)
        self.max_games = max_games
        self.max_mb = max_mb
        self.abandon_after = abandon_after
        self.maintain_every = maintain_every
        self.write_every = write_every
        self.busy_timeout = busy_timeout
        self.retry_min = retry_min
        self.retry_max = max(retry_min, retry_max)
        # records refused by a full queue (count or bytes; with a channel, by the kernel),
        # this process
        self.dropped = 0
        self._written = 0           # records committed by this process's writer thread
        # failures of this process's writer thread: attempts to open or write that failed
        # (they are tried again), records not written, maintenance passes failed, restarts
        self._errors = 0
        self.records_done = 0       # records written or lost, in the order queued
        self._dropped_lock = threading.Lock()
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._queue: queue.Queue = queue.Queue(maxsize=queue_size)
        self._queued_bytes = 0      # bodies queued or in the writer's hands, not yet done
        self._bytes_lock = threading.Lock()
        self._pending: list = []    # records the writer took off the queue, not yet done
        self._problem: str | None = None
        self._file: tuple[int, int] | None = None   # the open file's device and inode
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False        # closed on purpose: a stopped writer is not restarted
        self._lookup_failed = False  # a lookup of how a game began failed (warned once)

    # -- the request side: never blocks -----------------------------------------------

    def turn(self, record: TurnRecord) -> bool:
        return self._put(("turn", record))

    def start(self, game: GameInfo) -> bool:
        return self._put(("start", game, time.time()))

    def end(self, record: EndRecord) -> bool:
        return self._put(("end", record))

    def snakes_at_start(self, game_id: str, you_id: str) -> tuple[str, ...] | None:
        """The ids of the snakes the game under these ids began with, as the file holds
        it: the longest list written of it (its ``/start``'s, whichever worker received
        that; :func:`_upsert_row`). Asked when a worker first sees a game mid-way
        (:mod:`snake.serving.sessions`); this process's own records still queued are not looked at
        (it knows their games). A game with a result (ended, abandoned) is not looked at
        either: a game asked about is being played, and a finished one under the same ids
        is an earlier game whose ids were reused. ``None``: no such game in the file, or
        the file could not be read within :data:`LOOKUP_TIMEOUT` seconds."""
        try:
            uri = self.path.resolve().as_uri() + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, timeout=LOOKUP_TIMEOUT)
            try:
                row = conn.execute("SELECT snakes FROM games WHERE game_id = ? AND you_id = ? "
                                   "AND result IS NULL", (game_id, you_id)).fetchone()
            finally:
                conn.close()
            snakes = json.loads(row[0]) if row is not None else None
            return tuple(str(s["id"]) for s in snakes) if snakes else None
        except (sqlite3.Error, ValueError, OSError, TypeError, KeyError) as exc:
            if self.path.exists() and not _is_busy(exc) and not self._lookup_failed:
                self._lookup_failed = True     # once: a broken file fails every lookup
                log.warning("game log: how games began cannot be read from it (%s); games "
                            "first seen mid-way are taken as begun with the snakes then alive",
                            exc)
            return None

    def queue_depth(self) -> int:
        """Records waiting: queued in this process, or held by the server's writer process
        (not counting those still in the kernel)."""
        if self.channel is not None:
            return self.channel.status().queue
        if self._pid != os.getpid():
            return 0
        return self._queue.qsize() + len(self._pending)

    @property
    def written(self) -> int:
        """Records committed: by this process's writer thread, or by the server's writer
        processes (all of them since the server started)."""
        return self.channel.status().written if self.channel is not None else self._written

    @property
    def errors(self) -> int:
        """Failures: this process's writer thread's, or the server's writer processes'."""
        return self.channel.status().errors if self.channel is not None else self._errors

    @property
    def problem(self) -> str | None:
        """Why records cannot be written now (``None``: nothing known wrong): the file's
        trouble, or (with a channel) this process's last record refused by a full kernel
        queue; no file path in it, as ``/health`` shows it."""
        if self.channel is not None:
            return self.channel.problem
        return self._problem if self._pid == os.getpid() else None

    def _put(self, item: tuple) -> bool:
        """Hand a record on; ``False`` (and counted as dropped) when it was refused: a
        writer that is held up never costs the requests time, nor the worker more memory
        than the queue's bounds. With a channel the record is in the kernel once this
        returned ``True``, and survives this process."""
        if self.channel is not None:
            sent = self.channel.send(item)
        else:
            sent = self._enqueue(item)
        if not sent:
            with self._dropped_lock:
                self.dropped += 1
        return sent

    def _enqueue(self, item: tuple) -> bool:
        """Queue a record for this process's writer thread, unless the queue is full in
        records or in bytes of bodies (``False``, not counted: the caller decides)."""
        self._ensure_writer()
        size = _body_bytes(item)
        with self._bytes_lock:
            if self._queued_bytes + size > self.queue_bytes:
                return False
            self._queued_bytes += size
        try:
            self._queue.put_nowait(item)
            return True
        except queue.Full:
            with self._bytes_lock:
                self._queued_bytes -= size
            return False

    def writer_alive(self) -> bool:
        """Whether the writer runs: the server's writer process, or this process's writer
        thread (none yet: nothing was queued)."""
        if self.channel is not None:
            return self.channel.alive()
        return self._pid != os.getpid() or (self._thread is not None and self._thread.is_alive())

    def _ensure_writer(self) -> None:
        if self._pid == os.getpid() and self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._pid == os.getpid() and self._thread is not None:
                if not self._thread.is_alive() and not self._closed:
                    # It died (a bug); what it had queued or in hand is still there: start
                    # another.
                    self._errors += 1
                    log.error("game log: the writer thread had stopped; starting another")
                    self._thread = threading.Thread(target=self._run, name="game-log",
                                                    daemon=True)
                    self._thread.start()
                return
            # A new process (a forked worker): the parent's queue and thread are not ours.
            self._queue = queue.Queue(maxsize=self.queue_size)
            self._bytes_lock = threading.Lock()
            self._queued_bytes = 0
            self._pending = []
            self._problem = None
            self._stopping = threading.Event()
            self.dropped = self._written = self._errors = self.records_done = 0
            self._thread = threading.Thread(target=self._run, name="game-log", daemon=True)
            self._pid = os.getpid()
            self._closed = False
            self._thread.start()
            # A worker that exits normally writes what is queued first (a kill -9 cannot).
            atexit.register(self.close, 2.0)

    # -- the writer thread ----------------------------------------------------------------

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        delay = 0.0                 # after a failure: seconds before trying again (doubling)
        next_maintenance = time.monotonic()
        stopping = False
        while True:
            if delay > 0 and not stopping:
                self._stopping.wait(delay)      # a backoff that close() cuts short
                wait = 0.0
            elif conn is None:
                wait = 0.0
            else:
                wait = max(0.0, next_maintenance - time.monotonic())
            stopping = self._take(wait) or self._stopping.is_set() or stopping
            maintenance_due = time.monotonic() >= next_maintenance
            if conn is not None and (self._pending or maintenance_due) and self._moved():
                # Deleted or replaced under us: what we wrote since went to a file no one
                # will read. (Closing is safe: SQLite neither checkpoints nor deletes the
                # -wal and -shm files by name when the database has moved.)
                log.error("game log %s: the file was deleted or replaced; opening it again",
                          self.path)
                conn.close()
                conn = None
            if conn is None:
                conn = self._open()
            failed = conn is None
            if conn is not None and self._pending:
                failed = not self._write(conn)
                if not failed and not stopping:
                    # Wake a few times a second, not once per record: every wake-up takes
                    # the GIL from a request thread, and under load those hand-overs cost
                    # latency.
                    self._stopping.wait(self.write_every)
            if (conn is not None and not failed and not stopping
                    and time.monotonic() >= next_maintenance):
                more = self._maintain_safely(conn)
                # more free pages to give back: soon, between batches, not all at once
                next_maintenance = time.monotonic() + (
                    self.write_every if more else self.maintain_every)
            delay = min(max(delay * 2, self.retry_min), self.retry_max) if failed else 0.0
            if stopping and (failed or (not self._pending and self._queue.empty())):
                self._give_up()
                if conn is not None:
                    conn.close()
                return

    def _take(self, wait: float) -> bool:
        """Top the records in hand up to a batch from the queue, waiting up to ``wait``
        seconds for one when there are none; whether a stop was asked."""
        stop = False
        first = not self._pending and wait > 0
        while len(self._pending) < BATCH:
            try:
                item = self._queue.get(timeout=wait) if first else self._queue.get_nowait()
            except queue.Empty:
                break
            first = False
            if item is _STOP:
                self._queue.task_done()
                stop = True
            else:
                self._pending.append(item)
        return stop

    def _open(self) -> sqlite3.Connection | None:
        """The writer's connection, or ``None`` (the file cannot be opened now: tried again
        after a backoff, the records kept meanwhile)."""
        conn = None
        try:
            conn = connect(self.path, busy_timeout=self.busy_timeout)
            self._file = _file_id(self.path)
        except (sqlite3.Error, OSError) as exc:
            if conn is not None:
                conn.close()
            self._errors += 1
            if self._problem is None:       # once, not at every attempt
                log.error("game log %s cannot be opened (%s): trying again, the records "
                          "kept meanwhile", self.path, exc)
            self._problem = ("the file is locked by another connection" if _is_busy(exc)
                             else "the file cannot be opened")
            return None
        if self._problem is not None:
            log.warning("game log %s opened at last; writing the records kept", self.path)
            self._problem = None
        return conn

    def _moved(self) -> bool:
        """Whether the path no longer names the file the writer has open."""
        try:
            return _file_id(self.path) != self._file
        except OSError:
            return True

    def _write(self, conn: sqlite3.Connection) -> bool:
        """Write the records in hand in one transaction (after an error that undid it, one
        at a time); what is written or cannot be is done with. ``False`` when the file was
        locked past the busy timeout: what is left is kept, to be tried again."""
        batch = list(self._pending)
        dropped: list[tuple] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for item in batch:
                # One record that cannot be written (whatever the reason) is dropped
                # alone; the batch and the writer go on.
                conn.execute("SAVEPOINT record")
                try:
                    self._write_record(conn, item)
                except Exception as exc:
                    if (_is_busy(exc) or _sqlite_code(exc) in _FILE_ERRORS
                            or not conn.in_transaction):
                        # the lock, or the file's trouble (disk full, I/O), which may
                        # have undone the whole transaction: not this record's fault
                        raise
                    self._errors += 1
                    dropped.append(item)
                    log.exception("game log: a %s record not written", item[0])
                    conn.execute("ROLLBACK TO record")
                conn.execute("RELEASE record")
            conn.execute("COMMIT")
        except Exception as exc:
            self._rollback(conn)
            self._errors += 1
            if _is_busy(exc):
                if self._problem is None:
                    log.error("game log %s: locked by another connection past %g s; %d "
                              "records kept, to be tried again", self.path,
                              self.busy_timeout, len(batch))
                self._problem = "the file is locked by another connection"
                return False
            log.warning("game log: a batch of %d records failed (%s); writing them one "
                        "at a time", len(batch), exc)
            return self._write_each(conn)
        self._written += len(batch) - len(dropped)
        self._problem = None
        self._done(len(batch))
        return True

    def _write_each(self, conn: sqlite3.Connection) -> bool:
        """Write the records in hand one transaction each, so that only those that cannot
        be written are lost; ``False`` when the file was locked (the rest is kept). The
        records are freed (:meth:`flush` returns) only once :attr:`problem` says what
        became of them."""
        problem = None
        lost = done = 0
        for item in self._pending:
            try:
                conn.execute("BEGIN IMMEDIATE")
                self._write_record(conn, item)
                conn.execute("COMMIT")
            except Exception as exc:
                self._rollback(conn)
                self._errors += 1
                if _is_busy(exc):
                    self._problem = "the file is locked by another connection"
                    self._done(done)
                    return False
                if not lost:                    # one line per batch, not one per record
                    log.error("game log: a %s record not written (%s)", item[0], exc)
                lost += 1
                if _sqlite_code(exc) in _FILE_ERRORS:   # the file's trouble, not the record's
                    problem = f"records cannot be written ({exc})"
            else:
                self._written += 1
            done += 1
        if lost:
            log.error("game log: %d records of the batch not written", lost)
        self._problem = problem
        self._done(done)
        return True

    def _write_record(self, conn: sqlite3.Connection, item: tuple) -> None:
        if item[0] == "turn":
            write_turn(conn, item[1])
        elif item[0] == "end":
            write_end(conn, item[1])
        else:
            _upsert_game(conn, item[1], item[2])

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                log.exception("game log: rollback failed")

    def _done(self, count: int) -> None:
        """The first ``count`` records in hand are written or lost: free their place."""
        items = self._pending[:count]
        del self._pending[:count]
        self.records_done += len(items)
        with self._bytes_lock:
            self._queued_bytes -= sum(_body_bytes(item) for item in items)
        for _ in items:
            self._queue.task_done()

    def _give_up(self) -> None:
        """On stop, what could not be written in time is lost (counted)."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is _STOP:
                self._queue.task_done()
            else:
                self._pending.append(item)
        if self._pending:
            self._errors += len(self._pending)
            log.error("game log: %d records not written at shutdown", len(self._pending))
            self._done(len(self._pending))

    def _maintain_safely(self, conn: sqlite3.Connection) -> bool:
        try:
            return self.maintain(conn)
        except Exception:
            self._errors += 1
            log.exception("game log: maintenance failed")
            self._rollback(conn)
            return False

    def maintain(self, conn: sqlite3.Connection) -> bool:
        """Mark abandoned games, enforce retention, and give back up to
        :data:`VACUUM_PASS` free pages; whether free pages are left for the next pass."""
        mark_abandoned(conn, time.time(), self.abandon_after)
        enforce_retention(conn, self.max_games, self.max_mb)
        give_back_free_pages(conn, VACUUM_PASS, VACUUM_CHUNK)
        return conn.execute("PRAGMA freelist_count").fetchone()[0] > 0

    # -- for tests and shutdown -----------------------------------------------------------

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is written or lost (or ``timeout`` seconds);
        with a channel, everything this process sent (the writer process is started if
        none runs)."""
        if self.channel is not None:
            return self.channel.flush(timeout)
        if self._pid != os.getpid():
            return True
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Stop the writer thread after one last try at what is queued (what it cannot
        write then is lost). With a channel, nothing to do: the records are in the kernel,
        and the server's writer process stops when the server does."""
        if self.channel is not None or self._pid != os.getpid() or self._thread is None:
            return
        self._closed = True
        self._stopping.set()
        try:
            self._queue.put_nowait(_STOP)     # wakes a writer waiting for records
        except queue.Full:
            pass                              # then it is not waiting: it sees the event
        self._thread.join(timeout)
        self._pid = None


def from_settings(settings: Settings) -> GameLog | None:
    """The service's game log as ``settings`` give it (``NUPPEPPOU_GAME_LOG``: its file,
    or none; ``NUPPEPPOU_GAME_LOG_MAX_GAMES``, ``NUPPEPPOU_GAME_LOG_MAX_MB``), written by
    the server's writer process when gunicorn.conf.py opened a channel for that file
    (:func:`.channel.open_server`), else by a thread of this process."""
    if settings.game_log is None:
        return None
    return GameLog(settings.game_log, max_games=settings.game_log_max_games,
                   max_mb=settings.game_log_max_mb, channel=channel_for_file(settings.game_log))
