"""A server's game-log writer process: ``python -m snake.observability.gamelog.writer``.

Started by :meth:`snake.observability.gamelog.channel.Channel.start_writer` (never by
hand), with the channel's receiving socket and status page as inherited descriptors. It
takes the status page's lock (or leaves at once with status 0 if another writer holds it),
then reads records from the socket into a :class:`~snake.observability.gamelog.store.GameLog`
of its own, whose thread writes them as in any process (batches, retries, retention): the
SQLite work is off the workers' GIL. Its queue is bounded as a worker's was; when it is
full the writer stops reading, and the records wait in the kernel (a worker's ``send()``
is refused once that is full too).

Every :data:`PUBLISH_EVERY` seconds, and as soon as a flush's mark is reached, it
publishes its counts, queue and problem on the status page. It exits with status 0 at the
end of the stream (every sending end closed: the server is gone), at a ``stop`` message
(the master's, at shutdown) or at SIGTERM, after a last try at the records it holds;
records still in the kernel are then left to the next writer. SIGINT and SIGHUP are
ignored: a terminal's Ctrl-C is the server's to handle, which then closes the stream.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import logging
import os
import signal
import socket
import sys
import threading
import time

from snake.board import parse_request
from snake.observability.gamelog.channel import LOCK_WAIT, MAX_MESSAGE, StatusPage, WriterStatus
from snake.observability.gamelog.channel import decode as decode_message
from snake.observability.gamelog.records import end_record
from snake.observability.gamelog.store import GameLog

log = logging.getLogger("nuppeppou.gamelog")

#: Seconds the writer's thread waits after a batch before the next: short, as it no longer
#: shares a GIL with requests, and what it holds is what a kill -9 of it would lose.
WRITE_EVERY = 0.05
#: Seconds between two publications of the writer's status.
PUBLISH_EVERY = 0.1
#: Seconds the writer tries to write what it holds when it is told to stop.
CLOSE_WAIT = 10.0


def item_of(message: bytes | memoryview) -> tuple:
    """The store's item for a message (an ``/end``'s body parsed again)."""
    item = decode_message(message)
    if item[0] == "end":
        _, body, received_at = item
        record = end_record(parse_request(json.loads(body)), body)
        item = ("end", dataclasses.replace(record, received_at=received_at))
    return item


class Writer:
    """Reads the channel's socket into ``game_log`` and publishes on ``page``."""

    def __init__(self, receiver: socket.socket, page: StatusPage, game_log: GameLog) -> None:
        self.receiver = receiver
        self.page = page
        self.game_log = game_log
        self.stopping = threading.Event()
        self.enqueued = 0           # records handed to game_log, in the order received
        self.errors = 0             # messages that could not be read
        self.marks: collections.deque[tuple[int, int]] = collections.deque()
        # the counts go on from those of the server's earlier writers
        earlier = page.read()
        self.flushed, self.written, self.failed = earlier.flushed, earlier.written, earlier.errors
        self.started = time.monotonic()
        self._published = 0.0

    def run(self) -> None:
        buffer = bytearray(MAX_MESSAGE)
        view = memoryview(buffer)
        # A timeout, so that the status is published and a stop seen while no record comes
        # (it makes the receiving end non-blocking for every process that holds it: only
        # the writer reads it).
        self.receiver.settimeout(PUBLISH_EVERY)
        while not self.stopping.is_set():
            try:
                size = self.receiver.recv_into(buffer)
            except TimeoutError:
                size = None
            if size == 0:
                log.info("game log writer: the server has closed the stream; stopping")
                break
            if size is not None and not self._take(view[:size]):
                break
            self.publish()
        self.game_log.close(CLOSE_WAIT)
        self.publish(force=True)

    def _take(self, message: memoryview) -> bool:
        """Hand one message to the game log (waiting while its queue is full, the rest then
        waiting in the kernel); ``False`` at a stop."""
        try:
            item = item_of(message)
        except Exception:
            self.errors += 1
            log.exception("game log writer: a message could not be read")
            return True
        if item[0] == "stop":
            log.info("game log writer: told to stop")
            return False
        if item[0] == "mark":
            self.marks.append((self.enqueued, item[1]))
            return True
        while not self.game_log._enqueue(item):
            if self.stopping.wait(0.01):
                log.error("game log writer: stopped with its queue full; a %s record lost",
                          item[0])
                self.errors += 1
                return False
            self.publish()
        self.enqueued += 1
        return True

    def publish(self, force: bool = False) -> None:
        """Publish the status: every :data:`PUBLISH_EVERY` seconds, and when a mark is
        reached (every record received before it written or lost)."""
        done = self.game_log.records_done
        reached = False
        while self.marks and self.marks[0][0] <= done:
            self.flushed = max(self.flushed, self.marks.popleft()[1])
            reached = True
        now = time.monotonic()
        if not (force or reached or now - self._published >= PUBLISH_EVERY):
            return
        self._published = now
        g = self.game_log
        self.page.publish(WriterStatus(
            pid=os.getpid(), written=self.written + g.written,
            errors=self.failed + g.errors + self.errors, queue=g.queue_depth(),
            flushed=self.flushed, started=self.started, problem=g.problem))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.observability.gamelog.writer",
                                     description="A server's game-log writer (started by "
                                                 "the server itself).")
    parser.add_argument("--socket", type=int, required=True,
                        help="the channel's receiving socket, an inherited descriptor")
    parser.add_argument("--status", type=int, required=True,
                        help="the channel's status page, an inherited descriptor")
    parser.add_argument("--db", required=True, help="the game log's SQLite file")
    parser.add_argument("--max-games", type=int, required=True)
    parser.add_argument("--max-mb", type=float, required=True)
    args = parser.parse_args(argv)
    level = os.environ.get("NUPPEPPOU_LOG_LEVEL", "INFO").upper()
    logging.basicConfig(level=level if level in logging.getLevelNamesMapping() else "INFO",
                        format="[%(asctime)s] [%(process)d] [%(levelname)s] %(message)s",
                        stream=sys.stderr)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    page = StatusPage(args.status)
    if not page.take_lock(LOCK_WAIT):
        return 0                    # another writer runs (two were started at once)
    receiver = socket.socket(fileno=args.socket)
    game_log = GameLog(args.db, max_games=args.max_games, max_mb=args.max_mb,
                       write_every=WRITE_EVERY)
    writer = Writer(receiver, page, game_log)
    signal.signal(signal.SIGTERM, lambda *_: writer.stopping.set())
    writer.publish(force=True)      # its pid, at once
    log.info("game log writer: writing %s", args.db)
    writer.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
