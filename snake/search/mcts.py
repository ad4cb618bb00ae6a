"""Decoupled UCT: Monte Carlo tree search over simultaneous moves, with move priors.

Each tree node is one state (a whole turn played by the rules engine). At a node, each
*searched* snake (``you`` and the planned opponents still alive) picks its own move
independently from its own statistics with the PUCT rule

    Q(m) + c * P(m) * sqrt(N + 1) / (1 + n(m))

(``Q`` its mean value for move ``m``, ``n`` the visits of ``m``, ``N`` the node's visits,
``P`` the prior: the evaluator's move scores when it has them (NNUE), else uniform over
the candidate moves); the joint move leads to the child. A new child is evaluated once,
from every searched snake's own view (no random playouts), and the values are backed up
along the path, each snake's into its own statistics. Terminal states are exact (win 1,
draw -0.5, see :data:`.state.DRAW`, loss -1). Snakes not searched play their cheap move.

Because each snake chooses separately, the cost grows linearly with the number of
searched snakes instead of exponentially, so MCTS can search every nearby opponent of an
8-snake game. The answer is ``you``'s most visited move at the root. A node of the
budget is one simulation (at most one new tree node each).
"""

from __future__ import annotations

import math
import time
from typing import Any

from ..board import GameState
from .clock import Budget, SearchTimeout
from .result import SearchResult
from ..rules import apply_rules, candidate_moves, obstacles_after_move
from .state import SnakePlan, cheap_move, living, terminal_values

EXPLORATION = 1.0


class _Node:
    __slots__ = ("state", "context", "actors", "moves", "priors", "n", "w", "visits",
                 "children", "terminal", "value")

    def __init__(self, state: GameState, context: Any, actors: tuple[str, ...],
                 moves: list[tuple[str, ...]], priors: list[list[float]]) -> None:
        self.state = state
        self.context = context
        self.actors = actors
        self.moves = moves
        self.priors = priors
        self.n = [[0] * len(m) for m in moves]
        self.w = [[0.0] * len(m) for m in moves]
        self.visits = 0
        self.children: dict[tuple[int, ...], _Node] = {}
        self.terminal: dict[str, float] | None = None
        self.value: dict[str, float] = {}


class DecoupledUct:
    """One search (one move decision)."""

    name = "mcts"

    def __init__(self, evaluator: Any, plan: SnakePlan, budget: Budget,
                 exploration: float = EXPLORATION) -> None:
        self.evaluator = evaluator
        self.plan = plan
        self.budget = budget
        self.c = exploration
        self.searched = (plan.you,) + plan.opponents
        self.max_depth = 0

    def _make_node(self, state: GameState, context: Any) -> _Node:
        snakes = living(state)
        actors = tuple(sid for sid in self.searched if sid in snakes)
        occupied = obstacles_after_move(state)
        moves, priors = [], []
        for sid in actors:
            ms = candidate_moves(state, snakes[sid], occupied)
            p = self.evaluator.priors(context, state, sid, ms) if len(ms) > 1 else None
            moves.append(ms)
            priors.append([p[m] for m in ms] if p else [1.0 / len(ms)] * len(ms))
        node = _Node(state, context, actors, moves, priors)
        terminal = terminal_values(state, self.searched)
        if terminal is not None:
            node.terminal = terminal
        else:
            values = self.evaluator.values(context, state, actors)
            node.value = {sid: values.get(sid, -1.0) for sid in self.searched}
        return node

    def _select(self, node: _Node) -> tuple[int, ...]:
        picks = []
        root_n = math.sqrt(node.visits + 1)
        c = self.c
        for n, w, p in zip(node.n, node.w, node.priors):
            best, best_i = -math.inf, 0
            for i in range(len(n)):
                ni = n[i]
                q = w[i] / ni if ni else 0.0
                u = q + c * p[i] * root_n / (1 + ni)
                if u > best:
                    best, best_i = u, i
            picks.append(best_i)
        return tuple(picks)

    def _expand(self, node: _Node, picks: tuple[int, ...]) -> _Node:
        state = node.state
        snakes = living(state)
        occupied = obstacles_after_move(state)
        moves = {sid: cheap_move(state, snakes[sid], occupied)
                 for sid in self.plan.cheap if sid in snakes}
        for sid, ms, i in zip(node.actors, node.moves, picks):
            moves[sid] = ms[i]
        child_state = apply_rules(state, moves)
        context = self.evaluator.child(node.context, child_state)
        return self._make_node(child_state, context)

    def simulate(self, root: _Node) -> None:
        self.budget.tick()   # one node per simulation (a simulation may end on a known terminal)
        path: list[tuple[_Node, tuple[int, ...]]] = []
        node = root
        while True:
            if node.terminal is not None:
                values = node.terminal
                break
            picks = self._select(node)
            path.append((node, picks))
            child = node.children.get(picks)
            if child is None:
                child = self._expand(node, picks)
                node.children[picks] = child
                values = child.terminal if child.terminal is not None else child.value
                break
            node = child
        if len(path) > self.max_depth:
            self.max_depth = len(path)
        for n, picks in path:
            n.visits += 1
            for k, (sid, i) in enumerate(zip(n.actors, picks)):
                n.n[k][i] += 1
                n.w[k][i] += values.get(sid, -1.0)

    def search(self, state: GameState, root_context: Any) -> SearchResult:
        started = time.perf_counter()
        result = SearchResult(None, algorithm=self.name, evaluator=self.evaluator.name)
        root = self._make_node(state, root_context)
        if root.terminal is not None or not root.actors or root.actors[0] != self.plan.you:
            result.stopped = "terminal"
            return result
        if len(root.moves[0]) == 1:
            result.move = root.moves[0][0]
            result.stopped = "single move"
            return result
        simulations = 0
        try:
            while True:
                self.simulate(root)
                simulations += 1
        except SearchTimeout:
            result.stopped = "nodes" if self.budget.max_nodes is not None and \
                self.budget.nodes > self.budget.max_nodes else "deadline"
        if root.visits:
            n, w, ms = root.n[0], root.w[0], root.moves[0]
            best = max(range(len(ms)), key=lambda i: (n[i], w[i] / n[i] if n[i] else -2.0))
            result.move = ms[best]
            result.score = w[best] / n[best] if n[best] else 0.0
            result.scores = {m: (w[i] / n[i] if n[i] else 0.0) for i, m in enumerate(ms)}
            result.visits = {m: n[i] for i, m in enumerate(ms)}
            result.pv = self._principal_variation(root)
        result.depth = self.max_depth
        result.nodes = self.budget.nodes
        result.elapsed_ms = (time.perf_counter() - started) * 1000.0
        result.simulations = simulations
        result.opponents = self.plan.opponents
        result.cheap = self.plan.cheap
        return result

    def _principal_variation(self, root: _Node) -> list[dict[str, str]]:
        line = []
        node = root
        while node is not None and node.terminal is None and node.visits:
            picks = tuple(max(range(len(n)), key=n.__getitem__) for n in node.n)
            line.append({sid: ms[i] for sid, ms, i in zip(node.actors, node.moves, picks)})
            node = node.children.get(picks)
        return line
