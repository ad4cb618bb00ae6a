"""What a strategy answers, and what a strategy is.

A strategy turns a parsed request (:class:`~snake.board.MoveRequest`) and the session's NNUE
accumulator (or ``None``) into a :class:`Decision`: the move, an optional shout, and the
reasoning behind it, typed, so that ``python -m snake.explain``, the server's log and the
tests read the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .board import MoveRequest
from .moves import MoveFilter

if TYPE_CHECKING:
    from .search.result import SearchResult

#: The answer when no move survives the filter (SPEC §2 step 2).
NO_SAFE_MOVE = "up"


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


#: What can answer a move, as :func:`answered_by` names it (the server's metrics and game
#: log count answers by these).
ANSWERED_BY = ("search", "seed", "nnue", "flood fill", "random", "no safe move", "error")


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
