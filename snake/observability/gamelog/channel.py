"""The way from a server's workers to its game-log writer process, held by the kernel.

Under gunicorn a record must not wait in a worker's memory: a worker killed with ``kill -9``
would take it along (a writer thread per worker that batched a quarter second of records
lost 5 of 407 answered turns that way). So the server has one **writer process**
(:mod:`.writer`) and one :class:`Channel` to it, made in the gunicorn master before the app
is loaded and the workers are forked (gunicorn.conf.py):

- **A ``SOCK_SEQPACKET`` socket pair.** Every worker inherits the sending end and hands
  each record to the kernel with one non-blocking ``send()`` before its answer is returned:
  once ``send()`` returned the record is in the kernel's queue, whole (a message is sent
  whole or not at all, whichever process sends it), and outlives the worker. A full queue
  (the writer dead, stopped or far behind) refuses the record at once: it is counted as
  dropped, and the ``/move`` is answered as if nothing happened. The master keeps both
  ends open, so the queue outlives the writer too: a writer that died is replaced and the
  new one reads on where the old one stopped. When every sending end is closed (the server
  is gone) the writer reads what is left, then the end of the stream, and exits. Records
  are pickled (:func:`encode`): only processes of the server hold these anonymous sockets.
  The kernel holds :data:`SEND_BUFFER` bytes at most (less where ``net.core.wmem_max`` is
  lower: twice that setting), the writer reads them promptly into its own bounded queue.
- **A status page**, a small temporary file the master makes and every process maps: the
  writer publishes there its pid, what it wrote, its errors, its queue, the file's problem
  and the last flush it reached (a sequence number tells a torn read). The writer holds a
  POSIX record lock on the file while it runs, which the kernel releases when it dies, so
  anyone can tell whether a writer runs (:meth:`Channel.alive`) without asking it.
- **Whoever notices, restarts it.** A worker looks at most every :data:`CHECK_EVERY`
  seconds, on its way to send a record (and at once when a record was refused), and the
  master looks when it forks a worker; the first that finds no writer starts one
  (:meth:`Channel.start_writer`): ``sh`` starts the writer in the background and exits, so
  that the writer is nobody's child (the master would otherwise reap it as an unknown
  worker, and a worker would leave it a zombie). Two that notice at once start two; the
  second finds the lock held and leaves. A writer takes a fresh interpreter (``python -m
  snake.observability.gamelog.writer``), so it inherits no thread, lock or compiled code
  of the process that started it.

What a ``kill -9`` loses: of a worker, nothing it answered (its records are in the
kernel); of the writer, the records it had read and not yet committed (it commits every
:data:`snake.observability.gamelog.writer.WRITE_EVERY` seconds; more while its file cannot
be written), never those still in the kernel.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import mmap
import os
import pickle
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
import zlib
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("nuppeppou.gamelog")

#: Bytes of records the kernel may hold for the writer (asked for; the kernel gives at most
#: twice ``net.core.wmem_max``, 416 KiB on a default Linux, about 150 turns of a duel).
SEND_BUFFER = 8 << 20
#: The largest message: a record is refused past it (a body is at most 1 MiB, and a large
#: record is compressed first).
MAX_MESSAGE = 2 << 20
#: A record larger than this (bytes, pickled) is compressed before it is sent.
COMPRESS_OVER = 64 << 10
#: Seconds between two looks of a process at whether the writer runs.
CHECK_EVERY = 0.5
#: Seconds after a writer was started in which no other is started (it is starting up).
SPAWN_GRACE = 2.0
#: Seconds a new writer waits for the lock (a process looking at it holds it a moment)
#: before it concludes that another writer runs, and leaves.
LOCK_WAIT = 2.0

_SEQ = struct.Struct("<Q")
#: pid, written, errors, queue, flushed (a flush's mark), started, problem's length, problem
_BODY = struct.Struct("<qqqqqdH256s")
_BODY_AT = 8
#: when a writer was last started (CLOCK_MONOTONIC, shared by every process), how many
_SPAWN = struct.Struct("<dq")
_SPAWN_AT = 512
PAGE = 4096


@dataclass(frozen=True)
class WriterStatus:
    """What the writer process last published (zeros before any writer ran)."""

    pid: int = 0
    written: int = 0          # records committed, this server's writers together
    errors: int = 0           # failures (as GameLog.errors), this server's writers together
    queue: int = 0            # records read from the kernel and not yet written or lost
    flushed: int = 0          # the last flush mark reached (time.monotonic_ns of its sender)
    started: float = 0.0      # when the last writer took the lock (time.monotonic)
    problem: str | None = None


class StatusPage:
    """The status page (module docstring) over the file open as ``fd``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._map = mmap.mmap(fd, PAGE)

    def read(self) -> WriterStatus:
        for _ in range(1000):
            (before,) = _SEQ.unpack_from(self._map, 0)
            body = _BODY.unpack_from(self._map, _BODY_AT)
            (after,) = _SEQ.unpack_from(self._map, 0)
            if before == after and before % 2 == 0:
                break
        pid, written, errors, queue, flushed, started, length, text = body
        problem = text[:length].decode("utf-8", "replace") if length else None
        return WriterStatus(pid, written, errors, queue, flushed, started, problem)

    def publish(self, status: WriterStatus) -> None:
        """Write ``status`` (the writer only): odd sequence numbers mark a write under way."""
        (seq,) = _SEQ.unpack_from(self._map, 0)
        busy = seq + 1 if seq % 2 == 0 else seq      # a writer may have died mid-way
        _SEQ.pack_into(self._map, 0, busy)
        problem = (status.problem or "").encode("utf-8")[:256]
        _BODY.pack_into(self._map, _BODY_AT, status.pid, status.written, status.errors,
                        status.queue, status.flushed, status.started, len(problem), problem)
        _SEQ.pack_into(self._map, 0, busy + 1)

    def spawned(self) -> tuple[float, int]:
        """When a writer was last started (``time.monotonic()``), and how many were."""
        return _SPAWN.unpack_from(self._map, _SPAWN_AT)

    def mark_spawned(self, at: float) -> None:
        _, starts = self.spawned()
        _SPAWN.pack_into(self._map, _SPAWN_AT, at, starts + 1)

    def take_lock(self, wait: float) -> bool:
        """Hold the writer's lock (the writer process only), trying for ``wait`` seconds."""
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.02)


def encode(item: tuple) -> bytes:
    """A record as one message: ``("turn", TurnRecord)``, ``("start", GameInfo, seen_at)``,
    ``("end", body, received_at)`` (the writer parses the body again: the parsed request is
    large to pickle), ``("mark", token)`` or ``("stop",)``."""
    if item[0] == "end":
        record = item[1]
        item = ("end", record.body, record.received_at)
    data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) > COMPRESS_OVER:
        return b"z" + zlib.compress(data, 1)
    return b"p" + data


def decode(message: bytes | memoryview) -> tuple:
    """The item :func:`encode` made (``("end", ...)`` still as body and time)."""
    kind, data = bytes(message[:1]), message[1:]
    if kind == b"z":
        return pickle.loads(zlib.decompress(data))
    if kind == b"p":
        return pickle.loads(data)
    raise ValueError(f"not a game-log message (first byte {kind!r})")


def _project_root() -> str:
    return str(Path(__file__).resolve().parents[3])


class Channel:
    """One server's channel to its writer process, for the game log at ``path`` (module
    docstring). Made once, in the process that will fork the workers; ``max_games`` and
    ``max_mb`` are the writer's retention limits, ``send_buffer`` the bytes asked of the
    kernel for records in flight."""

    def __init__(self, path: str | Path, *, max_games: int, max_mb: float,
                 send_buffer: int = SEND_BUFFER) -> None:
        # absolute: a writer started later, or by a worker, reads it whatever its directory
        self.path = Path(path).resolve()
        self.max_games = max_games
        self.max_mb = max_mb
        self._sender, self._receiver = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with contextlib.suppress(OSError):
            self._sender.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        self._sender.setblocking(False)
        self._file = tempfile.TemporaryFile(prefix="nuppeppou-gamelog-")
        self._file.truncate(PAGE)
        self.page = StatusPage(self._file.fileno())
        self._closed = False
        self._owner = os.getpid()
        self._fresh()
        # Per process: a forked worker starts with its own look-up clock and locks, never
        # with a lock another thread of the master held. (A weak reference: the hook must
        # not keep a closed channel's sockets open.)
        me = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: (channel := me()) and channel._fresh())

    def _fresh(self) -> None:
        self._check_lock = threading.Lock()     # the record lock is the process's, not a thread's
        self._next_check = 0.0
        self._refused = False                   # the last record this process sent was refused
        self._too_large_told = False

    # -- a worker's side --------------------------------------------------------------------

    def send(self, item: tuple) -> bool:
        """Hand a record to the kernel, never waiting: ``False`` when it was refused (the
        queue is full, or the record larger than :data:`MAX_MESSAGE`)."""
        self.watch()
        return self._send(encode(item))

    def _send(self, data: bytes) -> bool:
        if len(data) > MAX_MESSAGE:
            self._too_large(len(data))
            return False
        try:
            self._sender.send(data, socket.MSG_DONTWAIT)
        except BlockingIOError:
            # The writer is dead, stopped or behind: the kernel's queue is full.
            self._refused = True
            self.watch(now=True)
            return False
        except OSError as exc:          # ENOBUFS, EMSGSIZE: more than the buffer can ever hold
            self._too_large(len(data), exc)
            return False
        self._refused = False
        return True

    def _too_large(self, size: int, exc: OSError | None = None) -> None:
        if not self._too_large_told:    # once per process
            self._too_large_told = True
            log.error("game log: a record of %d bytes cannot be sent to the writer%s; such "
                      "records are dropped", size, f" ({exc})" if exc else "")

    def watch(self, now: bool = False) -> None:
        """Start a writer if none runs; looks at most every :data:`CHECK_EVERY` seconds
        per process unless ``now``."""
        if self._closed:
            return
        at = time.monotonic()
        if not now and at < self._next_check:
            return
        self._next_check = at + CHECK_EVERY
        if not self.alive():
            self.start_writer()

    def alive(self) -> bool:
        """Whether a writer process runs (holds the status page's lock)."""
        fd = self.page.fd
        with self._check_lock:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.lockf(fd, fcntl.LOCK_UN)
            return False

    def status(self) -> WriterStatus:
        return self.page.read()

    @property
    def problem(self) -> str | None:
        """Why records are not written now (``None``: nothing known wrong): this process's
        last record was refused, or the writer's file's problem."""
        if self._refused:
            return "the writer is not taking records (they are dropped)"
        return self.page.read().problem

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until the writer has written (or lost) every record this process sent so
        far, starting one if none runs; ``False`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        token = time.monotonic_ns()
        # Any mark sent after the records reached means they are done: the queue is
        # first in, first out, and the writer publishes the largest mark it reached.
        while not self._send(encode(("mark", token))):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        while self.page.read().flushed < token:
            self.watch()
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    # -- the master's side ----------------------------------------------------------------

    def start_writer(self) -> None:
        """Start a writer process unless one was started less than :data:`SPAWN_GRACE`
        seconds ago and has not come up yet (it may still be starting). A worker starts it
        from a thread of its own, so that its request does not wait for ``sh``; the
        process that made the channel (gunicorn's master) starts it itself, as a thread
        there could hold a lock when a worker is forked."""
        at = time.monotonic()
        last, starts = self.page.spawned()
        if starts and at - last < SPAWN_GRACE and self.page.read().started < last:
            return
        self.page.mark_spawned(at)
        if starts:
            log.warning("game log: no writer process runs; starting one (pid %d noticed)",
                        os.getpid())
        if os.getpid() != self._owner:
            threading.Thread(target=self._spawn, name="game-log-spawn", daemon=True).start()
        else:
            self._spawn()

    def _spawn(self) -> None:
        rfd, sfd = self._receiver.fileno(), self.page.fd
        args = [sys.executable, "-m", "snake.observability.gamelog.writer",
                "--socket", str(rfd), "--status", str(sfd), "--db", str(self.path),
                "--max-games", str(self.max_games), "--max-mb", repr(self.max_mb)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [_project_root(), *filter(None, [env.get("PYTHONPATH")])])
        try:
            # sh starts the writer in the background and exits: the writer is then the
            # child of no process of the server (it is reparented to init).
            sh = subprocess.Popen(["/bin/sh", "-c", '"$@" &', "nuppeppou-game-log", *args],
                                  pass_fds=(rfd, sfd), stdin=subprocess.DEVNULL, env=env,
                                  start_new_session=True)
            sh.wait()
        except OSError:
            log.exception("game log: the writer process could not be started")

    def close(self, timeout: float = 10.0) -> bool:
        """At the server's exit, its workers gone: have the writer write everything sent so
        far and exit; whether it did within ``timeout`` seconds."""
        if self._closed:
            return True
        deadline = time.monotonic() + timeout
        if not self.alive():
            self.start_writer()         # what waits in the kernel is still written
        done = self.flush(timeout)
        self._closed = True
        with contextlib.suppress(OSError):
            self._sender.send(encode(("stop",)), socket.MSG_DONTWAIT)
        self._sender.close()
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        self._receiver.close()
        return done


_CHANNELS: dict[Path, Channel] = {}


def open_server(path: str | Path, *, max_games: int, max_mb: float) -> Channel:
    """The server's channel for the game log at ``path``, made on the first call in this
    process (gunicorn reads its configuration again on SIGHUP: the same channel then)."""
    key = Path(path).resolve()
    if key not in _CHANNELS:
        _CHANNELS[key] = Channel(key, max_games=max_games, max_mb=max_mb)
    return _CHANNELS[key]


def for_file(path: str | Path) -> Channel | None:
    """The channel this process (or the master it was forked from) opened for the game
    log at ``path``; ``None``: none, records are written by a thread of this process."""
    if not _CHANNELS:
        return None
    return _CHANNELS.get(Path(path).resolve())


def forget(channel: Channel) -> None:
    """Drop ``channel`` from this process's channels (tests)."""
    for key, value in list(_CHANNELS.items()):
        if value is channel:
            del _CHANNELS[key]
