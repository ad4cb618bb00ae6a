"""The compiled search (:mod:`snake.search.compiled.tree`) behind the search strategy's interface.

:class:`CompiledAlphaBeta` encodes the request's state once (:func:`snake.core.encode`),
maps the plan's snake ids to board indices, runs the compiled iterative deepening until the
budget's deadline (or node limit), and turns what it found into a :class:`SearchResult`
(moves by name, the principal variation by snake id) as the Python search does, so the
strategy, ``snake.explain`` and the server read one result type.

Each thread keeps its own transposition table between searches (:func:`thread_table`), so a
game's next turn can reuse what the last one stored (the key is salted per game and snake);
a node-limited search (reproducible, for tests) starts from an empty one. A search's helper
threads (``threads`` > 1) share the table of the thread that asked, which has room for them
all (``table_mb`` per thread: two threads write twice the entries one does).
"""

from __future__ import annotations

import random
import threading
import time
import zlib
from typing import Any

from snake.board import GameState
from snake.core import encode
from snake.core.state import G_CELLS, G_N
from snake.decision import SearchResult
from snake.rules import MOVES
from snake.rules.start import new_game
from snake.search.clock import Budget
from snake.search.compiled.table import new_table, thread_table
from snake.search.compiled.threads import CoreResult, run
from snake.search.compiled.tree import MAX_PLY
from snake.search.cores import CoreLedger
from snake.search.plan import SnakePlan, plan_snakes

#: Size of each thread's transposition table (``NUPPEPPOU_SEARCH_TABLE_MB``).
DEFAULT_TABLE_MB = 4.0

def _evaluation_salt(weight: float, style: str = "default", replies: str = "joint",
                     head: str = "") -> int:
    """Table entries of searches valued differently must not meet: a salt per weight,
    style, kind of replies and value head (its digest; 0 for the default search)."""
    if weight <= 0 and style == "default" and replies == "joint" and not head:
        return 0
    text = f"network {weight:.6f} style {style} replies {replies}"
    return zlib.crc32((text + (f" head {head}" if head else "")).encode()) << 16


def salt_of(state: GameState, you_id: str) -> int:
    """A stable 64-bit salt per game and snake (see
    :func:`snake.search.compiled.table.position_key`), and per rules the key does not see: the
    ruleset and its settings, and where the hazards lie (the key counts them only; a map may move
    them and keep their number, and a thread's table outlives the turn), and the board's size (which
    gives a cell number its square: a client may send one game id on two boards). A standard 11×11
    game without hazards, the common case, salts by game and snake alone, as it always has (its
    searches stay node for node those of the evidence games)."""
    text = f"{state.game.id}\x00{you_id}"
    ruleset, board = state.game.ruleset, state.board
    if ruleset.name != "standard" or board.hazards or (board.width, board.height) != (11, 11):
        text += f"\x00{ruleset.name}\x00{board.width}x{board.height}\x00{ruleset.settings}"
        text += "\x00" + ";".join(f"{x},{y}" for x, y in sorted(board.hazards))
    data = text.encode()
    return (zlib.crc32(data) << 32) | zlib.adler32(data)


class CompiledAlphaBeta:
    """Paranoid alpha-beta in the compiled core (docs/core.md)."""

    name = "alphabeta"

    def __init__(self, plan: SnakePlan, budget: Budget, max_depth: int,
                 table_mb: float = DEFAULT_TABLE_MB, network: Any | None = None,
                 network_weight: float = 0.0, style: str = "default",
                 exact_root: bool = False, replies: str = "joint",
                 head: Any | None = None, threads: int = 1,
                 ledger: CoreLedger | None = None) -> None:
        self.plan = plan
        self.head = head
        self.budget = budget
        self.max_depth = min(max_depth, MAX_PLY - 2)
        self.table_mb = table_mb
        self.network = network if network_weight > 0 else None
        self.network_weight = network_weight if network is not None else 0.0
        self.style = style
        self.exact_root = exact_root
        self.replies = plan.replies(replies)
        self.threads = threads
        self.ledger = ledger        # the server's searches in flight: helpers give cores back

    def search(self, state: GameState) -> SearchResult:
        """Raises :class:`snake.core.EncodeError` for a state the core cannot hold."""
        packed = encode(state, self.plan.you, horizon=MAX_PLY)
        ids = [s.id for s in state.board.snakes]
        index = {sid: i for i, sid in enumerate(ids)}
        deadline = self.budget.deadline if self.budget.deadline is not None else float("inf")
        hard = self.budget.hard_deadline if self.budget.hard_deadline is not None else deadline
        n, cells = int(packed.g[G_N]), int(packed.g[G_CELLS])
        # A node-limited search is meant to be reproducible: it starts from an empty table.
        table = (new_table(n, cells, self.table_mb) if self.budget.max_nodes is not None
                 else thread_table(n, cells, self.table_mb, self.threads))
        found = run(packed, index[self.plan.you], [index[o] for o in self.plan.opponents],
                    [index[c] for c in self.plan.cheap], deadline=min(deadline, 1e15),
                    hard_deadline=min(hard, 1e15),
                    max_nodes=self.budget.max_nodes, max_depth=self.max_depth, table=table,
                    salt=(salt_of(state, self.plan.you)
                          ^ _evaluation_salt(self.network_weight, self.style, self.replies,
                                             self.head.digest if self.head else "")),
                    network=self.network, network_weight=self.network_weight, style=self.style,
                    exact_root=self.exact_root, best_reply=self.replies == "best",
                    head=self.head, threads=self.threads,
                    ledger=None if self.ledger is None else self.ledger.slots,
                    cores=1 if self.ledger is None else self.ledger.cores)
        voronoi = "voronoi" if self.style == "default" else f"voronoi ({self.style})"
        if self.head is not None:
            voronoi += " + value head"
        self.evaluator = voronoi if found.evaluated_by_network is False else (
            "nnue" if self.network_weight >= 1.0 else f"{voronoi}+nnue {self.network_weight:g}")
        self.budget.nodes = found.nodes
        return self._result(found)

    def _result(self, found: CoreResult) -> SearchResult:
        plan = self.plan
        # The move of the deepest completed iteration, or of a partial first iteration
        # whose first move was searched to the end; None when nothing finished.
        result = SearchResult(MOVES[found.move] if found.move >= 0 else None,
                              algorithm=self.name, evaluator=self.evaluator)
        result.score = found.score
        result.depth = found.depth
        result.nodes = found.nodes
        result.stopped = found.stopped
        result.elapsed_ms = found.elapsed_ms
        result.scores = {MOVES[m]: v for m, v in found.root_scores.items()}
        result.exact_scores = self.exact_root
        result.pv = [{plan.you: MOVES[mine],
                      **{o: MOVES[m] for o, m in zip(plan.opponents, theirs)}}
                     for mine, theirs in found.pv]
        result.iterations = [(d, MOVES[m], round(v, 4), n, ms)
                             for d, m, v, n, ms in found.iterations]
        result.opponents = plan.opponents
        result.cheap = plan.cheap
        result.replies = self.replies
        result.style = self.style
        result.engine = "compiled"
        result.threads = len(found.threads)
        result.answered_by = found.answered_by
        return result


_warm = threading.Lock()
_warmed: set[bool] = set()


def warm_up(network: Any | None = None) -> float:
    """Compile (or load from the disk cache) the core on a small game, once per process,
    and with ``network`` the path that values leaves by a network too; returns the seconds
    it took (0 when already done). A compiled search strategy calls it when it is made, so
    the server does it in the master before forking its workers (and the arena in each
    worker process before its first game): no move pays for it."""
    with_network = network is not None and getattr(network, "quantised", False)
    with _warm:
        if with_network in _warmed:
            return 0.0
        _warmed.add(with_network)
    started = time.perf_counter()
    state = new_game("standard", 7, 7, ["a", "b", "c"], rng=random.Random(0))
    CompiledAlphaBeta(plan_snakes(state, "a"), Budget(None, max_nodes=200), 3,
                      network=network if with_network else None,
                      network_weight=0.5 if with_network else 0.0).search(state)
    return time.perf_counter() - started
