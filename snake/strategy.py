"""Strategies: how a move is chosen, by name.

A strategy turns a parsed request (:class:`~snake.board.MoveRequest`) and the session's NNUE
accumulator (or ``None``) into a :class:`Decision`. The service picks one by the environment
variable ``NUPPEPPOU_STRATEGY`` (default :data:`DEFAULT_STRATEGY`, ``search``: it beats
``seed`` and ``floodfill`` in the arena, docs/search-evidence.md); the arena plays built-in
players with :func:`get_strategy`. Built in:

``seed``
    The seed behaviour of SPEC §2: the move filter (:mod:`snake.moves`); if every move is
    removed, ``up``; otherwise, when the session holds an accumulator and the network covers
    this ruleset and board size, the NNUE scores (the accumulator is brought up to date with
    this state's features first); otherwise the flood-fill sums (:mod:`snake.floodfill`).
    The allowed move with the greatest score wins, ties broken in the order up, down, left,
    right.
``floodfill``
    The same filter, then always flood fill (never the network).
``random``
    The data-generation snake of SPEC §5: never back onto its own neck, otherwise uniformly
    random (it does walk into walls and bodies). Seeded with ``seed`` for reproducible games.

``search``, ``search-mcts``, ``search-nnue``, ``search-mcts-nnue``
    Look-ahead within the time budget (:mod:`snake.search`, docs/search.md).

Other strategies plug in with :func:`register_strategy`.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from .board import MOVES, MoveRequest
from .floodfill import best_move, flood_fill_scores
from .moves import filter_moves

#: The answer when no move survives the filter (SPEC §2 step 2).
NO_SAFE_MOVE = "up"


@dataclass(slots=True)
class Decision:
    """A chosen move, an optional shout (at most 256 characters on the wire) and the
    reasoning behind it (``method``, ``filter``, ``scores``...), which ``snake.explain`` prints."""

    move: str
    shout: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class Strategy(Protocol):
    """Chooses moves. ``choose`` may be called from several threads at once, but never twice
    at once with the same accumulator (the session manager locks each session)."""

    name: str

    def choose(self, request: MoveRequest, accumulator: Any | None) -> Decision: ...


class SeedStrategy:
    """SPEC §2: filter, then NNUE scores if the session has an accumulator, else flood fill."""

    name = "seed"
    use_network = True

    def choose(self, request: MoveRequest, accumulator: Any | None) -> Decision:
        state, you = request.state, request.you
        verdict = filter_moves(state, you)
        details: dict[str, Any] = {"filter": verdict}
        if not verdict.allowed:
            details["method"] = "no safe move"
            return Decision(NO_SAFE_MOVE, details=details)
        if self.use_network and accumulator is not None:
            # Incremental: only the pieces that changed since the session's last turn.
            if accumulator.update_state(state, you):
                scores = {m: float(s) for m, s in zip(MOVES, accumulator.scores())}
                details.update(method="nnue", scores=scores)
                return Decision(best_move(scores, verdict.allowed), details=details)
            details["nnue"] = "no feature block for this ruleset or board size"
        scores = flood_fill_scores(state, you, MOVES)
        details.update(method="flood fill", scores=scores)
        return Decision(best_move(scores, verdict.allowed), details=details)


class FloodFillStrategy(SeedStrategy):
    """The seed behaviour without the network: filter, then flood fill."""

    name = "floodfill"
    use_network = False


class RandomStrategy:
    """Never back onto its own neck, otherwise uniformly random; seeded."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()  # random.Random is not safe to share between threads

    def choose(self, request: MoveRequest, accumulator: Any | None) -> Decision:
        you, state = request.you, request.state
        neck = you.neck if you.neck != you.head else None
        candidates = [m for m in MOVES if neck is None or state.step(you.head, m) != neck]
        with self._lock:
            move = self._rng.choice(candidates)
        return Decision(move, details={"method": "random", "candidates": tuple(candidates)})


StrategyFactory = Callable[..., Strategy]

_REGISTRY: dict[str, StrategyFactory] = {
    "seed": lambda network=None, seed=None: SeedStrategy(),
    "floodfill": lambda network=None, seed=None: FloodFillStrategy(),
    "random": lambda network=None, seed=None: RandomStrategy(seed),
}

# The search strategies (snake/search): imported lazily, so this registers names only.
from .search import SEARCH_STRATEGIES, make_search_strategy  # noqa: E402

for _name in SEARCH_STRATEGIES:
    _REGISTRY[_name] = lambda network=None, seed=None, _n=_name: make_search_strategy(_n, network, seed)

#: The service's strategy when ``NUPPEPPOU_STRATEGY`` is not set.
DEFAULT_STRATEGY = "search"

#: Names of the registered strategies.
STRATEGIES: tuple[str, ...] = tuple(_REGISTRY)


def register_strategy(name: str, factory: StrategyFactory) -> None:
    """Make ``factory(network=..., seed=...)`` available as strategy ``name``."""
    global STRATEGIES
    _REGISTRY[name] = factory
    STRATEGIES = tuple(_REGISTRY)


def get_strategy(name: str, *, network: Any | None = None, seed: int | None = None) -> Strategy:
    """A new strategy by name; ``ValueError`` listing the known names for an unknown one."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown strategy {name!r}; choose one of: {', '.join(_REGISTRY)}"
        ) from None
    return factory(network=network, seed=seed)


def fallback_decision(request: MoveRequest) -> Decision:
    """A legal answer that does not touch any accumulator: the filter and flood fill. Used
    when a strategy fails, so that a parsed state still gets a considered move."""
    return FloodFillStrategy().choose(request, None)
