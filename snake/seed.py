"""The one-step strategies: ``seed`` (SPEC §2), ``floodfill`` and ``random``.

``seed``
    The move filter (:mod:`snake.moves`); if every move is removed, ``up``; otherwise, when
    the session holds an accumulator and the network covers this ruleset and board size, the
    NNUE scores (the accumulator is brought to this state's features first); otherwise the
    flood-fill sums (:mod:`snake.floodfill`). The allowed move with the greatest score wins,
    ties broken in the order up, down, left, right.
``floodfill``
    The same filter, then always flood fill (never the network).
``random``
    The data-generation snake of SPEC §5 (:func:`random_move`): never back onto its own
    neck, otherwise uniformly random (it does walk into walls and bodies).

The registry of every strategy by name, the search included, is :mod:`snake.strategies`.
"""

from __future__ import annotations

import logging
import random
import threading
from typing import Any

from snake.board import GameState, MoveRequest, Snake
from snake.decision import NO_SAFE_MOVE, Decision
from snake.floodfill import best_move, flood_fill_scores
from snake.moves import filter_moves
from snake.rules import MOVES, next_square

log = logging.getLogger(__name__)

#: ``Decision.note`` when the network has no block for a position.
NO_FEATURES = "no feature block for this ruleset or board size"


class SeedStrategy:
    """SPEC §2: filter, then NNUE scores if the session has an accumulator, else flood fill."""

    name = "seed"
    use_network = True

    def choose(self, request: MoveRequest, accumulator: Any | None) -> Decision:
        state, you = request.state, request.you
        verdict = filter_moves(state, you)
        if not verdict.allowed:
            return Decision(NO_SAFE_MOVE, method="no safe move", filter=verdict)
        note = ""
        if self.use_network and accumulator is not None:
            # Incremental: only the pieces that changed since the session's last turn.
            if accumulator.update_to(state, you):
                scores = {m: float(s) for m, s in zip(MOVES, accumulator.scores())}
                return Decision(best_move(scores, verdict.allowed), method="nnue",
                                filter=verdict, scores=scores)
            note = NO_FEATURES
        scores = flood_fill_scores(state, you, MOVES)
        return Decision(best_move(scores, verdict.allowed), method="flood fill",
                        filter=verdict, scores=scores, note=note)


class FloodFillStrategy(SeedStrategy):
    """The seed behaviour without the network: filter, then flood fill."""

    name = "floodfill"
    use_network = False


def not_back_onto_neck(state: GameState, snake: Snake) -> tuple[str, ...]:
    """The moves that do not go back onto ``snake``'s neck (all four when it has none, or
    its neck is under its head), in MOVES order."""
    head, neck = snake.head, snake.neck
    if neck is None or neck == head:
        return MOVES
    return tuple(m for m in MOVES if next_square(state, head, m) != neck)


def random_move(state: GameState, snake: Snake, rng: random.Random) -> str:
    """The random snake's move (SPEC §5): uniform among :func:`not_back_onto_neck`."""
    return rng.choice(not_back_onto_neck(state, snake))


class RandomStrategy:
    """:func:`random_move`, drawn from its own generator seeded with ``seed``."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()  # random.Random is not safe to share between threads

    def choose(self, request: MoveRequest, accumulator: Any | None) -> Decision:
        candidates = not_back_onto_neck(request.state, request.you)
        with self._lock:
            move = self._rng.choice(candidates)
        return Decision(move, method="random", candidates=candidates)


def fallback_decision(request: MoveRequest) -> Decision:
    """A legal answer that does not touch any accumulator: the filter and flood fill. Used
    when a strategy fails, so that a parsed state still gets a considered move; should
    flood fill fail too, the first move the filter allows (never one it knows to be
    certain death). Raises only when the filter itself fails."""
    try:
        return FloodFillStrategy().choose(request, None)
    except Exception:
        log.exception("flood fill failed; answering the filter's first allowed move")
    verdict = filter_moves(request.state, request.you)
    return Decision(verdict.allowed[0] if verdict.allowed else NO_SAFE_MOVE,
                    method="the filter's first allowed move", filter=verdict)
