"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass, field


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
    weights (:data:`snake.core.control.STYLES`; the Python search has only the default's).
    ``note``: why the configured evaluator
    could not be used, or that the last chance changed the move. ``engine``: which
    implementation ran. ``threads``: how many threads searched (``nodes`` counts them all),
    ``answered_by``: which one's iteration gave the move (0: the thread that asked; a
    helper when, out of time, it had completed a deeper iteration: ``iterations``,
    ``scores`` and ``pv`` are then that helper's, its iterations every other depth and
    their node counts its own)."""

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
