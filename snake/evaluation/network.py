"""The network's value of a position, for the readable search.

:class:`NnueEvaluator` (``"nnue"``)
    The network's move scores seen from a snake (``nnue.features.active_features``): the
    value is ``2 * max(score) - 1`` over the snake's candidate moves (scores are win
    probabilities). Each search node holds, for every snake whose view is needed, its own
    :class:`~nnue.accumulator.Accumulator`, made from the parent's by ``copy()`` and
    ``update_to()`` the node's state; nothing is ever undone by subtraction, so
    returning to a parent is free and every node's sums equal a full refresh. Its scores
    also order ``you``'s moves in alpha-beta (:meth:`NnueEvaluator.priors`).
"""

from __future__ import annotations

from typing import Any

from snake.board import GameState
from snake.evaluation.control import LIMIT, control_values
from snake.rules import MOVES, candidate_moves, obstacles_after_move


class NodeNets:
    """One node's accumulators, by snake id (``None`` for a snake without features), and
    their scores once computed."""

    __slots__ = ("accumulators", "scores")

    def __init__(self, accumulators: dict[str, Any]) -> None:
        self.accumulators = accumulators
        self.scores: dict[str, Any] = {}


class NnueEvaluator:
    """NNUE evaluation with one accumulator per node and view (module docstring)."""

    name = "nnue"

    def __init__(self, network: Any) -> None:
        from nnue.accumulator import Accumulator
        from nnue.features import active_features
        self.network = network
        self._accumulator = Accumulator
        self._features = active_features
        #: accumulators made along search paths (copies of a parent, updated)
        self.updates = 0

    def covers(self, state: GameState, snake_id: str) -> bool:
        """The network has a feature block for this ruleset and board size."""
        you = state.board.snake(snake_id)
        return you is not None and self._features(state, you) is not None

    def root(self, state: GameState, views: tuple[str, ...], accumulator: Any | None) -> NodeNets:
        """The root's accumulators: the session's (brought up to date with this state)
        for the first view when given, fresh ones for the others."""
        accs: dict[str, Any] = {}
        for k, sid in enumerate(views):
            snake = state.board.snake(sid)
            session = accumulator if k == 0 else None
            acc = session if session is not None else self._accumulator(self.network)
            # (the session's is already at this state after the seed step: no change then)
            if snake is None or not acc.update_to(state, snake):
                accs[sid] = None
                continue
            accs[sid] = acc.copy() if acc is session else acc
        return NodeNets(accs)

    def child(self, context: NodeNets, state: GameState) -> NodeNets:
        accs: dict[str, Any] = {}
        for sid, parent in context.accumulators.items():
            snake = state.board.snake(sid)
            if parent is None or snake is None or snake.eliminated_cause:
                accs[sid] = None
                continue
            acc = parent.copy()
            if not acc.update_to(state, snake):
                accs[sid] = None
                continue
            self.updates += 1
            accs[sid] = acc
        return NodeNets(accs)

    def move_scores(self, context: NodeNets, snake_id: str):
        """The four scores (up, down, left, right) of ``snake_id`` at this node, or None."""
        scores = context.scores.get(snake_id)
        if scores is None:
            acc = context.accumulators.get(snake_id)
            if acc is None:
                return None
            scores = acc.scores()
            context.scores[snake_id] = scores
        return scores

    def value(self, context: NodeNets, state: GameState, snake_id: str) -> float:
        scores = self.move_scores(context, snake_id)
        if scores is None:
            return control_values(state, (snake_id,))[snake_id]
        snake = state.board.snake(snake_id)
        moves = candidate_moves(state, snake, obstacles_after_move(state))
        best = max(float(scores[MOVES.index(m)]) for m in moves)
        return max(-LIMIT, min(LIMIT, 2.0 * best - 1.0))

    def priors(self, context: NodeNets, state: GameState, snake_id: str,
               moves: tuple[str, ...]) -> dict[str, float] | None:
        scores = self.move_scores(context, snake_id)
        if scores is None:
            return None
        raw = {m: float(scores[MOVES.index(m)]) + 1e-3 for m in moves}
        total = sum(raw.values())
        return {m: v / total for m, v in raw.items()}

