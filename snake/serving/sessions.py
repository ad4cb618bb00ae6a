"""Game sessions and their NNUE accumulators (SPEC §3).

A session is keyed by ``(game.id, you.id)``: two of our snakes may play in the same game.
It holds the accumulator leased from the process's recycle stack
(:class:`nnue.pool.AccumulatorPool`, 32 slots), which remembers the feature encoding of the
previous turn so that the next turn is an incremental update.

Life of a session:

- ``/start`` opens it and leases an accumulator when the stack has one free (or can still
  create one) and the network covers the game's ruleset and board size. Otherwise the
  session has none and the game is played by flood fill. A repeated ``/start`` is harmless.
- ``/move`` uses it under the session's own lock, so two requests of one game never touch
  its accumulator at once, while different games run in parallel. A ``/move`` for a session
  this process does not know (restart, another gunicorn worker, a reclaimed session) opens
  one first, exactly like ``/start``; the accumulator then starts with a full refresh.
- The session remembers how many snakes the game began with (the snakes of the first
  request it saw, ``/start``'s normally) and tells each ``/move`` request
  (``request.snakes_at_start``): the default search's value head is meant for games begun
  as duels, and a request alone does not say how its game began. A process that first
  sees a game mid-way (a restart, an eviction, the engine's connection moved to the other
  gunicorn worker) asks ``began_with`` (the service's game log, which every worker writes:
  the snakes of the game's ``/start``, whichever worker received it) once, on that first
  move, unless it is turn 0 (every snake alive). An answer that does not hold every snake
  alive is another game's and is ignored. With no answer it takes the game as begun with
  the snakes then alive: if some had died, it takes a four-snake game's last duel for a
  duel from the start.
- ``/end`` closes it: the accumulator is reset and pushed back on the stack, and the
  outcome (:func:`snake.rules.outcome_at_end`) and the number of turns are logged.
  ``/end`` for an unknown session does nothing.
- Each session also measures the network: what the engine reports of our previous answer
  (``latency``) minus the time the server spent on it (from ``request.received`` to the end
  of the ``with`` block of :meth:`SessionManager.use`, under the session's lock, so that
  the next turn's request always finds it) is that turn's overhead; ``/move`` sets
  ``request.margin_ms`` from the last few (:func:`snake.search.clock.adaptive_margin_ms`)
  unless the manager was made with ``adaptive_margin=False``. The next turn also shows
  which move the engine applied: when it is not the one we answered, the engine repeated
  our last move because our answer came late or never (whatever latency it reports; an
  engine may report 0 then), and the turn counts as a late answer (unless the manager was
  made with ``check_moves=False``: requests replayed from games we did not play).
- The engine does not guarantee ``/end``: a session idle for longer than ``idle_limit``
  seconds (120 by default) is reclaimed the same way. Reclamation runs lazily at every
  request (a sweep of the session table; there are few sessions per process).

The cache never changes results: the accumulator diffs the new state's features with those
it was built from (whatever turn that was, even a later one from a replayed request), so its
scores always equal a full refresh of the state it is given.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterator

from snake.board import MoveRequest
from snake.observability.metrics import ENGINE_MISSED, ENGINE_OVERHEAD
from snake.rules import last_move, outcome_at_end
from snake.search.clock import OVERHEAD_TURNS, adaptive_margin_ms, overhead_ms

log = logging.getLogger("nuppeppou.sessions")

DEFAULT_IDLE_LIMIT = 120.0
#: More sessions than this in one process means a client opening games and never ending
#: them: the least recently used idle one is closed to make room.
DEFAULT_MAX_SESSIONS = 10_000


def network_covers(request: MoveRequest) -> bool:
    """The network has input features for this game (ruleset and board size)."""
    from nnue.features import active_features

    return active_features(request.state, request.you) is not None


@dataclass(eq=False)
class Session:
    """One game as one of our snakes plays it."""

    game_id: str
    you_id: str
    accumulator: Any | None
    leased: bool
    description: str
    last_seen: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    turn: int = 0
    moves: int = 0
    busy: int = 0  # requests holding or waiting for the lock (guarded by the manager's lock)
    closed: bool = False
    #: (turn, ms, moves) of our last answer, until the next turn's request shows the
    #: engine's view of it: the moves answered for that turn (a request given twice may be
    #: answered twice), ``None`` when one was not recorded.
    answered: tuple[int, float, frozenset[str] | None] | None = None
    #: The overheads (ms) of the last turns: the engine's latency minus our time.
    overheads: deque = field(default_factory=lambda: deque(maxlen=OVERHEAD_TURNS))
    #: The most snakes seen alive in this game: how many it began with, when the session
    #: saw its first turn (``request.snakes_at_start``; a value head may be meant only for
    #: games that began so).
    snakes_at_start: int = 0
    #: Opened mid-game by a ``/move``: how the game began is still to be asked (on that
    #: move, under the session's lock, not the manager's).
    began_unknown: bool = False

    def margin_ms(self, request: MoveRequest, check_moves: bool = True) -> float | None:
        """Takes in what this request shows of our previous answer, and returns the margin
        this game's network calls for (``None`` until known). Call with the session's lock
        held.

        The previous turn's answer is late when the engine applied another move (it repeats
        a snake's last move for an answer that is late or lost), whatever latency it
        reports: its overhead is then counted as a late answer's (``check_moves=False``
        skips that, for requests replayed from a game whose moves were not ours). Otherwise
        the engine's latency (when it reports one) less our own time is the turn's
        overhead."""
        if self.answered is None or self.answered[0] != request.state.turn - 1:
            return self._margin()
        _, answer_ms, moves = self.answered
        you = request.you
        timeout = request.state.game.timeout
        latency = you.latency_ms
        if check_moves and moves is not None and you.neck not in (None, you.head) \
                and last_move(you.head, you.neck) not in moves:
            ENGINE_MISSED.inc()
            self.overheads.append(overhead_ms(max(timeout, latency or 0.0), answer_ms, timeout))
            self.answered = None
        elif latency is not None and latency > 0:
            ENGINE_OVERHEAD.observe(max(0.0, latency - answer_ms) / 1000.0)
            self.overheads.append(overhead_ms(latency, answer_ms, timeout))
            self.answered = None
        return self._margin()

    def _margin(self) -> float | None:
        return adaptive_margin_ms(self.overheads) if self.overheads else None

    def note_answer(self, request: MoveRequest) -> None:
        """Remember how long the server took on this request (arrival to now) and what it
        answered, for the next turn's request; a request for an older turn than the one
        remembered changes nothing. Call with the session's lock held."""
        if request.received is None:
            return
        turn = request.state.turn
        if self.answered is None or turn > self.answered[0]:
            moves = None if request.answer is None else frozenset((request.answer,))
        elif turn == self.answered[0]:
            # the same turn again: the engine may have taken either answer
            earlier = self.answered[2]
            moves = None if earlier is None or request.answer is None \
                else earlier | {request.answer}
        else:
            return
        self.answered = (turn, (time.perf_counter() - request.received) * 1000.0, moves)


#: Seconds between two looks for idle sessions (:meth:`SessionManager.reclaim_idle`).
SWEEP_EVERY = 1.0


class SessionManager:
    """Maps ``(game.id, you.id)`` to sessions and lends them accumulators from ``pool``
    (``None``: no network, every game is played by flood fill). Thread-safe."""

    def __init__(
        self,
        pool: Any | None = None,
        *,
        idle_limit: float = DEFAULT_IDLE_LIMIT,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
        adaptive_margin: bool = True,
        check_moves: bool = True,
        began_with: Callable[[str, str], Collection[str] | None] | None = None,
    ) -> None:
        self.pool = pool
        #: The ids of the snakes the game ``(game id, you id)`` began with, as recorded
        #: elsewhere (``None``: no record); asked when a ``/move`` opens a session mid-game.
        self.began_with = began_with
        self.adaptive_margin = adaptive_margin
        self.check_moves = check_moves
        self.idle_limit = idle_limit
        self.max_sessions = max_sessions
        self.clock = clock
        self._sessions: dict[tuple[str, str], Session] = {}
        self._lock = threading.Lock()  # guards _sessions, Session.busy and the pool
        self._swept: float | None = None       # when reclaim_idle last looked

    # -- the three routes ---------------------------------------------------------------

    def start(self, request: MoveRequest) -> Session:
        """``/start``: open the session (or touch it if it is already open)."""
        self.reclaim_idle()
        key = self._key(request)
        with self._lock:
            session = self._sessions.get(key)
            if session is not None:
                session.last_seen = self.clock()
                log.debug("repeated /start for game %s you %s", *key)
                return session
            return self._open(request, via="start")

    @contextmanager
    def use(self, request: MoveRequest) -> Iterator[Any | None]:
        """``/move``: hold the session's lock and yield its accumulator (``None``: play
        without the network). Opens the session when it is unknown. If the body of the
        ``with`` raises, the accumulator is reset so that the next move refreshes it fully."""
        self.reclaim_idle()
        key = self._key(request)
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = self._open(request, via="move")
            session.busy += 1
            session.last_seen = self.clock()
        try:
            with session.lock:
                if session.began_unknown:
                    session.began_unknown = False
                    self._ask_how_it_began(session, request)
                accumulator = None if session.closed else session.accumulator
                if self.adaptive_margin:
                    request.margin_ms = session.margin_ms(request, self.check_moves)
                session.snakes_at_start = max(session.snakes_at_start,
                                              len(request.state.board.living_snakes))
                request.snakes_at_start = session.snakes_at_start
                try:
                    yield accumulator
                except BaseException:
                    if accumulator is not None:
                        accumulator.reset()
                    raise
                finally:
                    session.moves += 1
                    session.turn = max(session.turn, request.state.turn)
                    if self.adaptive_margin:
                        session.note_answer(request)
        finally:
            with self._lock:
                session.busy -= 1
                session.last_seen = self.clock()

    def end(self, request: MoveRequest) -> str | None:
        """``/end``: close the session, return its accumulator, log the outcome. Returns the
        outcome, or ``None`` for a session this process does not know.

        With no one left, whether ``you`` fell on the final turn (a draw) or before (a
        loss) is told by the last turn it moved on, which this process knows only if it
        served every turn: when other processes served some (gunicorn's workers share a
        game's requests), its last turns may have gone to one of them, and the outcome
        is ``"draw or loss"`` (the game log, which every worker writes, tells)."""
        key = self._key(request)
        with self._lock:
            session = self._sessions.pop(key, None)
        outcome = outcome_at_end(request.state, request.you,
                                 session.turn if session is not None else None)
        if (outcome == "loss" and session is not None and session.moves < session.turn + 1
                and outcome_at_end(request.state, request.you) == "draw"):
            outcome = "draw or loss"
        if session is None:
            log.info("game end   %s you=%s outcome=%s turns=%d (session unknown here)",
                     key[0], key[1], outcome, request.state.turn)
        else:
            self._close(session)
            log.info("game end   %s you=%s outcome=%s turns=%d moves=%d accumulator=%s",
                     key[0], key[1], outcome, request.state.turn, session.moves,
                     "yes" if session.leased else "no")
        self.reclaim_idle()
        return outcome if session is not None else None

    # -- housekeeping --------------------------------------------------------------------

    def reclaim_idle(self) -> int:
        """Close every session idle for longer than ``idle_limit``; returns how many. It
        looks at most once per :data:`SWEEP_EVERY` seconds: a sweep reads the whole table,
        and every request asks for one (10,000 open sessions took 219 ms a sweep)."""
        now = self.clock()
        if self._swept is not None and now - self._swept < SWEEP_EVERY:
            return 0
        self._swept = now
        with self._lock:
            stale = [k for k, s in self._sessions.items()
                     if s.busy == 0 and now - s.last_seen > self.idle_limit]
            sessions = [self._sessions.pop(k) for k in stale]
        for session in sessions:
            self._close(session)
            log.info("game idle  %s you=%s reclaimed after %.0f s (turn %d, %d moves)",
                     session.game_id, session.you_id, now - session.last_seen,
                     session.turn, session.moves)
        return len(sessions)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def __contains__(self, key: tuple[str, str]) -> bool:
        with self._lock:
            return key in self._sessions

    def session(self, game_id: str, you_id: str) -> Session | None:
        with self._lock:
            return self._sessions.get((game_id, you_id))

    def stats(self) -> dict[str, int]:
        """Sessions open, and the stack's created / free / capacity counts (idle sessions
        reclaimed first, so that an idle service does not show its last games as open)."""
        self.reclaim_idle()
        with self._lock:
            out = {"sessions": len(self._sessions)}
            if self.pool is not None:
                out.update(created=self.pool.created, free=self.pool.free_count,
                           capacity=self.pool.capacity)
            return out

    # -- internals -----------------------------------------------------------------------

    @staticmethod
    def _key(request: MoveRequest) -> tuple[str, str]:
        return (request.state.game.id, request.you.id)

    def _open(self, request: MoveRequest, via: str) -> Session:
        """Open a session; the caller holds ``self._lock``."""
        if len(self._sessions) >= self.max_sessions:
            self._evict_one()
        accumulator = None
        if self.pool is not None and request.you.alive and self._covered(request):
            accumulator = self.pool.lease()
        state = request.state
        key = self._key(request)
        board = state.board
        description = (
            f"ruleset={state.ruleset.name} size={board.width}x{board.height} "
            f"snakes={len(board.living_snakes)} accumulator={'yes' if accumulator else 'no'}"
        )
        session = Session(key[0], key[1], accumulator, accumulator is not None, description,
                          self.clock(), turn=state.turn,
                          snakes_at_start=len(board.living_snakes),
                          began_unknown=(via == "move" and state.turn > 0
                                         and self.began_with is not None))
        self._sessions[key] = session
        free = f" (stack: {self.pool.free_count} free of {self.pool.created} created, " \
               f"capacity {self.pool.capacity})" if self.pool is not None else ""
        opened = "" if via == "start" else " [opened by /move]" if session.began_unknown \
            else " [opened by /move: taken as begun with these snakes]"
        log.info("game start %s you=%s turn=%d %s%s%s", key[0], key[1], state.turn, description,
                 opened, free)
        return session

    def _ask_how_it_began(self, session: Session, request: MoveRequest) -> None:
        """A session opened mid-game by ``request``: ask ``began_with`` which snakes its
        game began with. A record that lacks a snake alive now is another game's (ids
        reused); a failing answer is no answer. Either way the game is served, as begun
        with the snakes alive."""
        try:
            began = self.began_with(session.game_id, session.you_id)
        except Exception:
            log.exception("asking how game %s began failed", session.game_id)
            began = None
        alive = {snake.id for snake in request.state.board.living_snakes}
        if began is None:
            how = "alive when first seen here: no record read"
        elif not alive <= set(began):
            how = (f"alive when first seen here: the record read, {len(began)} snakes, "
                   "lacks some alive now (another game's)")
        else:
            session.snakes_at_start = max(session.snakes_at_start, len(began))
            how = "as recorded"
        log.info("game began %s you=%s with %d snakes (%s)", session.game_id,
                 session.you_id, session.snakes_at_start, how)

    def _covered(self, request: MoveRequest) -> bool:
        try:
            return network_covers(request)
        except Exception:  # an odd state must not stop the game from being served
            log.exception("feature check failed for game %s", request.state.game.id)
            return False

    def _evict_one(self) -> None:
        """Close the least recently used idle session; the caller holds ``self._lock``."""
        idle = [s for s in self._sessions.values() if s.busy == 0]
        if not idle:
            return
        victim = min(idle, key=lambda s: s.last_seen)
        del self._sessions[(victim.game_id, victim.you_id)]
        victim.closed = True
        if victim.accumulator is not None:
            victim.accumulator.reset()
            self.pool.release(victim.accumulator)
            victim.accumulator = None
        log.warning("game evict %s you=%s: more than %d sessions open",
                    victim.game_id, victim.you_id, self.max_sessions)

    def _close(self, session: Session) -> None:
        """Mark a session closed (already out of the table) and return its accumulator."""
        with session.lock:
            session.closed = True
            accumulator, session.accumulator = session.accumulator, None
            if accumulator is not None:
                accumulator.reset()
        if accumulator is not None:
            with self._lock:
                self.pool.release(accumulator)
