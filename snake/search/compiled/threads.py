"""One compiled search on several threads ("lazy SMP"), and what it found.

:func:`run` is the compiled search's entry point from Python: it sets up the search of
:mod:`.tree` (the table, the history, the leaf evaluator) for each thread, runs them, and
chooses the answer (:class:`CoreResult`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from snake.core.state import G_CELLS, G_N, Packed
from snake.evaluation.compiled.leaf import leaf_evaluator
from snake.search.compiled.table import Table, new_table
from snake.search.compiled.tree import (
    INF,
    MAX_OPPONENTS,
    MAX_PLY,
    NEVER_YIELD,
    SEARCHING_SLOTS,
    STOP_DEADLINE,
    STOP_HALTED,
    STOP_MAX_DEPTH,
    STOP_PROVEN,
    STOP_REASONS,
    search,
)


@dataclass(slots=True)
class CoreResult:
    """What a compiled search found (moves as numbers, :data:`snake.rules.MOVES` order)."""

    move: int
    score: float
    depth: int
    nodes: int
    stopped: str
    root_scores: dict[int, float]
    iterations: list[tuple[int, int, float, int, float]]
    pv: list[tuple[int, tuple[int, ...]]]   # (your move, the searched opponents' moves)
    elapsed_ms: float
    evaluated_by_network: bool = False
    #: per thread (this one first, then the helpers): depth completed, nodes, why it stopped
    threads: list[tuple[int, int, str]] = field(default_factory=list)
    #: the thread whose iteration answered (0: this one)
    answered_by: int = 0
    #: replies the threads left for last because another thread was in them
    deferred: int = 0


def run(packed: Packed, you: int, opponents: list[int], cheap: list[int], *, deadline: float,
        hard_deadline: float | None = None,
        max_nodes: int | None = None, max_depth: int = MAX_PLY - 2,
        table: Table | None = None, salt: int = 0, pvs: bool = True,
        network=None, network_weight: float = 0.0, style: str = "default",
        exact_root: bool = False, best_reply: bool = False, head=None,
        threads: int = 1, halt: np.ndarray | None = None, ledger: np.ndarray | None = None,
        cores: int = 1) -> CoreResult:
    """Search ``packed`` for snake ``you`` (board indices) until ``deadline``
    (``time.perf_counter`` seconds), or until ``hard_deadline`` (default ``deadline``) while
    no iteration is complete; see :func:`search`. With a (quantised) ``network`` and
    ``network_weight`` > 0 the leaves are valued ``(1 - w) * board control + w * network``,
    the network's accumulator kept along the path from the step's change reports.
    ``style`` weighs board control's terms (:data:`snake.evaluation.control.STYLES`);
    ``exact_root`` gives every root move an exact score (:func:`search`); ``best_reply``
    searches best replies instead of joint ones (:func:`_joint_move`: one opponent at a
    time answers your move, the others play their cheap move; the caller asks for it only
    with two or three searched opponents: :meth:`snake.search.plan.SnakePlan.replies`).
    ``head``: a learned value head (:class:`snake.evaluation.value_head.ValueHead`) that values
    the leaves from board control's measurements (the style's value among them), in place
    of that value.

    ``threads`` > 1 searches as "lazy SMP" does: helper threads run the same iterative
    deepening on the same table, every other depth (so half of them are a depth ahead of
    this thread), and what they store orders and cuts this thread's search. In a duel
    (one searched opponent) this thread searches the other depths while a helper searches,
    and every depth once none does: a duel's iterations grow slowly, so repeating the
    helper's shallower ones cost a tenth more nodes; with more snakes, whose iterations
    grow fast, it searches every depth, its own last one ordering the next (the other
    depths measured slower there: docs/evidence/issue-56-speed.md). Every thread
    leaves for last an opponents' reply that another thread is searching (ABDADA's
    deferral, :func:`snake.search.compiled.tree._tree`), so that they divide the replies
    of a node rather than all search the first. This thread
    stops as it would alone, and the helpers are then halted; a helper that finishes the
    search (a proof, the depth limit) halts this thread. Out of time or halted, the answer
    is the deepest completed iteration's among the threads (this thread's on a tie);
    stopped for any other reason (a proof, a single move, the depth limit), it is this
    thread's. ``halt``: an ``int64`` array of one, shared with the caller;
    setting it non-zero stops the search and its helpers where they next read the clock
    (every :data:`CHECK_EVERY` nodes), stop reason "halted"; it is set when the search
    returns (that is how the helpers are stopped). ``ledger``: the server's searches in
    flight (:attr:`snake.search.cores.CoreLedger.slots`) on its ``cores``: helper ``h``
    gives its core back when more than ``cores // (h + 1)`` searches are in flight (so
    that each has an equal share); without one, helpers run to the end. No thread goes past
    ``max_depth``, so a search to a fixed depth still finds that depth's exact value (a
    position recurs only at one ply: health falls every turn). Threads make a search
    depend on timing: a node-limited search (reproducible) takes one thread."""
    g = packed.g
    if len(opponents) > MAX_OPPONENTS:
        raise ValueError(f"at most {MAX_OPPONENTS} searched opponents")
    threads = 1 if max_nodes is not None else max(1, int(threads))
    cells = int(g[G_CELLS])
    n = int(g[G_N])
    if (table is None or table.zobrist.shape[0] < n or table.zobrist.shape[1] < cells):
        table = new_table(n, cells)
    started = time.perf_counter()
    if halt is None:
        halt = np.zeros(1, dtype=np.int64)
    shared = (g, packed.s, you, np.array(opponents, dtype=np.int64),
              np.array(cheap, dtype=np.int64), float(deadline),
              float(max(deadline, deadline if hard_deadline is None else hard_deadline)))
    salt_word = np.uint64(salt & (2**64 - 1))
    yield_above = [NEVER_YIELD] + [NEVER_YIELD if ledger is None else cores // (h + 1)
                                   for h in range(1, threads)]
    if ledger is None:
        ledger = np.zeros((1, 2), dtype=np.int64)
    searching = np.zeros(SEARCHING_SLOTS, dtype=np.uint64)    # this search's threads' marks
    running = np.ones(threads, dtype=np.int64)      # 1 while that thread searches
    # In a duel the main thread searches the depths the first helper does not (while one
    # searches); with more snakes, every depth (see the docstring).
    main_parity = 0 if threads > 1 and len(opponents) == 1 else -1
    found = []
    for h in range(threads):
        found.append(dict(
            result=np.zeros(8), root_scores=np.full(4, -INF), iterations=np.zeros((MAX_PLY, 5)),
            pv=np.zeros((MAX_PLY, 2), dtype=np.int64),
            args=(int(max_nodes if max_nodes is not None else 2**62), int(max_depth), salt_word,
                  table.keys, table.values, table.info, table.zobrist, table.zobrist_health,
                  table.zobrist_food, np.zeros((n, cells, 4), dtype=np.int64)),   # history
            leaf=leaf_evaluator(packed, you, MAX_PLY, style, head, network, network_weight),
            parity=main_parity if h == 0 else h % 2, yield_above=yield_above[h]))

    failures: list[BaseException] = []

    def search_as(h: int) -> None:
        f = found[h]
        search(*shared, *f["args"], f["leaf"], f["result"], f["root_scores"], f["iterations"],
               f["pv"], bool(pvs), bool(exact_root), bool(best_reply), halt, f["parity"],
               ledger, f["yield_above"], searching, threads > 1, running, h)

    def helper(h: int) -> None:
        try:
            search_as(h)
        except BaseException as e:      # a helper's failure is the search's
            failures.append(e)

    helpers = [threading.Thread(target=helper, args=(h,), name=f"search-helper-{h}",
                                daemon=True) for h in range(1, threads)]
    try:
        for thread in helpers:
            thread.start()
        search_as(0)
    finally:
        halt[0] = 1
        for thread in helpers:
            if thread.ident is not None:      # started
                thread.join()
    if failures:
        raise failures[0]
    # Out of time, or halted by a helper that finished, the deepest completed iteration
    # answers (this thread's on a tie); otherwise this thread's answer is final (a proof,
    # a single move, the depth limit).
    answered_by = 0
    if int(found[0]["result"][4]) in (STOP_DEADLINE, STOP_HALTED):
        for h in range(1, threads):
            if (found[h]["result"][0] >= 0
                    and found[h]["result"][2] > found[answered_by]["result"][2]):
                answered_by = h
    chosen = found[answered_by]
    stop = int(found[0]["result"][4])
    if stop == STOP_HALTED:     # by the caller, or by a helper that finished the search
        for f in found[1:]:
            if int(f["result"][4]) in (STOP_MAX_DEPTH, STOP_PROVEN):
                stop = int(f["result"][4])
    result, root_scores = chosen["result"], chosen["root_scores"]
    k = len(opponents)
    line = []
    for q in range(int(result[6])):
        code = int(chosen["pv"][q, 1])
        line.append((int(chosen["pv"][q, 0]), tuple((code >> (2 * j)) & 3 for j in range(k))))
    return CoreResult(
        move=int(result[0]), score=float(result[1]), depth=int(result[2]),
        nodes=int(sum(f["result"][3] for f in found)),
        stopped=STOP_REASONS[stop],
        root_scores={m: float(root_scores[m]) for m in range(4) if root_scores[m] > -INF},
        iterations=[(int(r[0]), int(r[1]), float(r[2]), int(r[3]), round(float(r[4]), 2))
                    for r in chosen["iterations"][:int(result[5])]],
        pv=line, elapsed_ms=(time.perf_counter() - started) * 1000.0,
        evaluated_by_network=found[0]["leaf"].weight > 0,
        threads=[(int(f["result"][2]), int(f["result"][3]), STOP_REASONS[int(f["result"][4])])
                 for f in found],
        answered_by=answered_by, deferred=int(sum(f["result"][7] for f in found)))
