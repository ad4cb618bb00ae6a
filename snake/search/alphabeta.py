"""Paranoid alpha-beta over simultaneous moves, with iterative deepening.

One turn of the game is two plies of the tree: ``you`` chooses a move (a max node), then
the searched opponents choose a *joint* move together, knowing ``you``'s (a min node:
*paranoid*, they are assumed to play against ``you`` as a team), and the rules engine
plays the turn with every snake's move (:func:`snake.rules.apply_rules`); snakes the
search does not branch on play their cheap move. Assuming the opponents see ``you``'s move
is pessimistic, which is what keeps a snake alive: a line is only as good as its worst
case.

With ``replies="best"`` (best-reply search, after Schadd and Winands' BRS for multi-player
games) the opponents' node holds fewer joint moves: every searched opponent on its cheap
move, then one opponent at a time playing each of its other moves while the rest play
their cheap moves. The tree is then the sum of the opponents' moves wide, not their
product, so with three opponents it goes deeper; what it gives up is two opponents closing
in together within one turn.

Values are from ``you``'s view: exact terminal values (:func:`~snake.search.plan.terminal_value`,
a win or a loss outranks every evaluation) or the evaluator's value at depth 0.

Iterative deepening searches 1, 2, 3 ... turns deep until the budget runs out; the
answer is the best move of the deepest completed iteration (a partial iteration is
thrown away). It stops early once the result is proven (a forced win, or every move
loses by force).

Move ordering, so that cut-offs come early:

1. the previous iteration's principal variation first (at the root: the previous
   iteration's best move, then the others by their previous scores);
2. a killer move per ply (the last move that caused a cut-off there);
3. the history heuristic: ``depth**2`` credited to (snake, head square, move) on each cut-off;
4. the evaluator's move scores when it has them (NNUE), for ``you``'s moves.

No transposition table: with simultaneous moves and bodies in the key, transpositions
within the few turns searched are rare and hashing a state costs about as much as
expanding a node (see docs/search.md).
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from snake.board import GameState
from snake.decision import SearchResult
from snake.rules import apply_rules, candidate_moves, obstacles_after_move
from snake.search.clock import Budget, SearchTimeout
from snake.search.plan import PROVEN, SnakePlan, cheap_move, living, terminal_value

INF = float("inf")
MAX_DEPTH = 64


def _to_front(items: list, item: Any) -> None:
    """Move ``item`` to the front of ``items`` if it is there (move ordering)."""
    if item is not None and item in items:
        items.remove(item)
        items.insert(0, item)


class AlphaBeta:
    """One search (one move decision). ``search`` runs the iterative deepening."""

    name = "alphabeta"

    def __init__(self, evaluator: Any, plan: SnakePlan, budget: Budget,
                 max_depth: int = MAX_DEPTH, replies: str = "joint") -> None:
        self.evaluator = evaluator
        self.best_reply = plan.replies(replies) == "best"
        self.plan = plan
        self.budget = budget
        self.max_depth = max_depth
        self.you = plan.you
        self.history: dict[tuple, int] = {}
        self.killers: dict[tuple[int, str], Any] = {}
        self.pv: list[tuple[str, tuple[str, ...]]] = []   # (your move, opponents' joint move)
        self.use_priors = evaluator.name == "nnue"

    # --- driver ------------------------------------------------------------------------

    def search(self, state: GameState, root_context: Any) -> SearchResult:
        started = time.perf_counter()
        result = SearchResult(None, algorithm=self.name, evaluator=self.evaluator.name)
        me = state.board.snake(self.you)
        root_moves = candidate_moves(state, me, obstacles_after_move(state))
        previous: dict[str, float] = {}
        iterations = []
        for depth in range(1, self.max_depth + 1):
            order = sorted(root_moves, key=lambda m: -previous.get(m, 0.0))
            if self.pv:
                first = self.pv[0][0]
                order.sort(key=lambda m: m != first)
            try:
                score, move, line, scores = self._root(state, root_context, depth, order)
            except SearchTimeout:
                result.stopped = "nodes" if self.budget.max_nodes is not None and \
                    self.budget.nodes > self.budget.max_nodes else "deadline"
                break
            previous = scores
            self.pv = line
            result.move, result.score, result.depth = move, score, depth
            result.scores = dict(scores)
            result.pv = self._pv_moves(line)
            iterations.append((depth, move, round(score, 4), self.budget.nodes,
                               round((time.perf_counter() - started) * 1000.0, 2)))
            if abs(score) >= PROVEN or all(v <= -PROVEN for v in scores.values()):
                result.stopped = "proven"
                break
            if len(root_moves) == 1:
                result.stopped = "single move"   # nothing to choose between
                break
        else:
            result.stopped = "max depth"
        result.nodes = self.budget.nodes
        result.elapsed_ms = (time.perf_counter() - started) * 1000.0
        result.iterations = iterations
        result.opponents = self.plan.opponents
        result.replies = "best" if self.best_reply else "joint"
        result.cheap = self.plan.cheap
        return result

    def _pv_moves(self, line: list[tuple[str, tuple[str, ...]]]) -> list[dict[str, str]]:
        out = []
        for my_move, joint in line:
            turn = {self.you: my_move}
            turn.update(zip(self.plan.opponents, joint))
            out.append(turn)
        return out

    # --- the tree ----------------------------------------------------------------------

    def _root(self, state: GameState, context: Any, depth: int, order: list[str]):
        alpha, beta = -INF, INF
        best, best_move, best_line = -INF, order[0], []
        scores: dict[str, float] = {}
        for move in order:
            value, joint, rest = self._min(state, context, move, depth, 0, alpha, beta)
            scores[move] = value
            if value > best:
                best, best_move, best_line = value, move, [(move, joint)] + rest
            if value > alpha:
                alpha = value
        return best, best_move, best_line, scores

    def _my_moves(self, state: GameState, context: Any, ply: int, occupied) -> list[str]:
        me = living(state)[self.you]
        moves = list(candidate_moves(state, me, occupied))
        if len(moves) == 1:
            return moves
        history = self.history
        head = me.head
        key = {m: history.get((self.you, head, m), 0) for m in moves}
        if self.use_priors:
            priors = self.evaluator.priors(context, state, self.you, tuple(moves))
            if priors:
                for m in moves:
                    key[m] += priors[m]
        moves.sort(key=lambda m: -key[m])
        # The principal variation first, then the killer.
        _to_front(moves, self.killers.get((ply, "me")))
        if ply < len(self.pv):
            _to_front(moves, self.pv[ply][0])
        return moves

    def _joint_moves(self, state: GameState, snakes: dict, ply: int,
                     occupied) -> list[tuple[str, ...]]:
        per_snake = []
        history = self.history
        for sid in self.plan.opponents:
            s = snakes.get(sid)
            if s is None:
                per_snake.append(("up",))   # eliminated: its move is ignored by the engine
                continue
            moves = list(candidate_moves(state, s, occupied))
            head = s.head
            moves.sort(key=lambda m: -history.get((sid, head, m), 0))
            if self.best_reply and len(moves) > 1:
                # Its cheap move first: what it plays while another opponent replies.
                _to_front(moves, cheap_move(state, s, occupied))
            per_snake.append(moves)
        if self.best_reply:
            # Best replies: every opponent on its first move, then one at a time each of
            # its other moves.
            first = tuple(moves[0] for moves in per_snake)
            joints = [first] + [first[:j] + (m,) + first[j + 1:]
                                for j, moves in enumerate(per_snake) for m in moves[1:]]
        else:
            joints = list(itertools.product(*per_snake))
        if len(joints) > 1:
            _to_front(joints, self.killers.get((ply, "them")))
            if ply < len(self.pv):
                _to_front(joints, self.pv[ply][1])
        return joints

    def _max(self, state: GameState, context: Any, depth: int, ply: int,
             alpha: float, beta: float):
        """``you`` to move: (value, line), line a list of (your move, joint move)."""
        if depth == 0:
            return self.evaluator.value(context, state, self.you), []
        occupied = obstacles_after_move(state)
        best, best_line = -INF, []
        for move in self._my_moves(state, context, ply, occupied):
            value, joint, rest = self._min(state, context, move, depth, ply, alpha, beta, occupied)
            if value > best:
                best, best_line = value, [(move, joint)] + rest
            if value > alpha:
                alpha = value
            if alpha >= beta:
                self.killers[(ply, "me")] = move
                key = (self.you, living(state)[self.you].head, move)
                self.history[key] = self.history.get(key, 0) + depth * depth
                break
        return best, best_line

    def _min(self, state: GameState, context: Any, my_move: str, depth: int, ply: int,
             alpha: float, beta: float, occupied=None):
        """The opponents answer ``my_move``: (value, their best joint move, the line
        after it)."""
        if occupied is None:
            occupied = obstacles_after_move(state)
        snakes = living(state)
        moves = {sid: cheap_move(state, snakes[sid], occupied)
                 for sid in self.plan.cheap if sid in snakes}
        moves[self.you] = my_move
        opponents = self.plan.opponents
        budget = self.budget
        evaluator = self.evaluator
        best, best_joint, best_line = INF, (), []
        for joint in self._joint_moves(state, snakes, ply, occupied):
            budget.tick()
            for sid, m in zip(opponents, joint):
                moves[sid] = m
            child = apply_rules(state, moves)
            value = terminal_value(child, self.you, ply + 1)
            if value is not None:
                line = []
            else:
                child_context = evaluator.child(context, child)
                value, line = self._max(child, child_context, depth - 1, ply + 1, alpha, beta)
            if value < best:
                best, best_joint, best_line = value, joint, line
            if value < beta:
                beta = value
            if alpha >= beta:
                self.killers[(ply, "them")] = joint
                for sid, m in zip(opponents, joint):
                    s = snakes.get(sid)
                    if s is not None:
                        key = (sid, s.head, m)
                        self.history[key] = self.history.get(key, 0) + depth * depth
                break
        return best, best_joint, best_line
