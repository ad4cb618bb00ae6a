"""What a strategy answers, and what a strategy is; what a search returns.

A strategy turns a parsed request (:class:`~snake.board.MoveRequest`) and the session's NNUE
accumulator (or ``None``) into a :class:`Decision`: the move, an optional shout, and the
reasoning behind it, typed, so that ``python -m snake.explain``, the server's log and the
tests read the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from snake.board import MoveRequest
from snake.moves import MoveFilter

#: The answer when no move survives the filter (SPEC §2 step 2).
NO_SAFE_MOVE = "up"


@dataclass(slots=True)
class SearchResult:
    """The answer of a search and how it was found.

    ``move`` is ``None`` when no iteration completed (the caller falls back to the seed
    move). ``depth`` is the deepest completed iteration, in turns. ``pv`` is the principal
    variation: one dict of moves (snake id -> move) per turn. ``scores``: the root moves'
    values from the last completed iteration (exact for the best move, upper bounds for the
    others unless the search was asked for exact root scores). ``nodes``: nodes visited over
    all iterations. ``elapsed_ms``: the search's own time; ``since_arrival_ms``: from the
    request's arrival to the answer (set by the strategy). ``iterations``: per completed
    iteration (depth, best move, score, nodes so far, ms so far). ``opponents`` / ``cheap``:
    the snakes searched and those played cheaply; ``replies``: how the searched ones answer
    (``joint``: every combination; ``best``: one at a time). ``style``: board control's
    weights (:data:`snake.evaluation.control.STYLES`; the Python search has only the
    default's). ``note``: why the configured evaluator
    could not be used, or that the last chance changed the move. ``engine``: which
    implementation ran. ``threads``: how many threads searched (``nodes`` counts them all),
    ``answered_by``: which one's iteration gave the move (0: the thread that asked; a
    helper when, out of time, it had completed a deeper iteration: ``iterations``,
    ``scores`` and ``pv`` are then that helper's, its iterations every other depth and
    their node counts its own; in a duel the asking thread's iterations are every other
    depth too, the depths its helper does not search, while one searches)."""

    move: str | None
    score: float = 0.0
    depth: int = 0
    nodes: int = 0
    pv: list[dict[str, str]] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    algorithm: str = ""
    evaluator: str = ""
    elapsed_ms: float = 0.0
    stopped: str = ""          # "deadline", "nodes", "proven", "max depth", "single move"
    since_arrival_ms: float = 0.0
    iterations: list[tuple[int, str, float, int, float]] = field(default_factory=list)
    opponents: tuple[str, ...] = ()
    cheap: tuple[str, ...] = ()
    replies: str = "joint"
    style: str = "default"
    note: str = ""
    engine: str = "python"     # "python" (snake.search) or "compiled" (snake.core)
    threads: int = 1           # threads that searched (compiled: lazy SMP)
    answered_by: int = 0       # the thread whose iteration answered (0: the one that asked)
    exact_scores: bool = False  # every root score exact (exact_root), not only the best's


@dataclass(slots=True)
class Decision:
    """A chosen move and why.

    ``method``: how the move was chosen (``nnue``, ``flood fill``, ``no safe move``,
    ``random``, ``search (alphabeta, voronoi)``, or ``seed (...): <why not searched>``).
    ``filter``: the move filter's verdict. ``scores``: the seed step's NNUE scores or
    flood-fill sums, by move. ``note``: why something expected was not used (no NNUE
    features for this ruleset or board size, say). ``candidates``: the moves a random
    choice was drawn from. ``search``: the look-ahead's result, when one ran. ``shout``:
    at most 256 characters reach the wire."""

    move: str
    method: str = ""
    shout: str = ""
    filter: MoveFilter | None = None
    scores: dict[str, float] | None = None
    note: str = ""
    candidates: tuple[str, ...] = ()
    search: SearchResult | None = None


class Strategy(Protocol):
    """Chooses moves. ``choose`` may be called from several threads at once, but never twice
    at once with the same accumulator (the session manager locks each session)."""

    name: str

    def choose(self, request: MoveRequest, accumulator: Any | None) -> Decision: ...


def answered_by(decision: Decision) -> str:
    """Which part of the snake gave the move: ``search`` (the look-ahead), ``seed`` (a
    search strategy's one-step fallback: the search was skipped or completed nothing),
    ``nnue`` / ``flood fill`` / ``random`` (one-step strategies), ``no safe move`` (every
    move was certain death), ``error`` (the strategy failed and the server's last resort
    answered). Read off :attr:`Decision.method`."""
    method = decision.method
    if method.startswith("error"):
        return "error"
    if "no safe move" in method:
        return "no safe move"
    if method.startswith("search"):
        return "search"
    if method.startswith("seed ("):
        return "seed"
    for kind in ("nnue", "flood fill", "random"):
        if method.startswith(kind):
            return kind
    return method or "unknown"
