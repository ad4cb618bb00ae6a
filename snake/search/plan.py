"""The search's view of a game: which snakes it branches on, how the others move, and
exact terminal values. All game dynamics come from the one rules engine (:mod:`snake.rules`).

- **Advancing** is :func:`snake.rules.apply_rules` (the rule stages of a turn, a new state,
  no random food: the search cannot know where food will spawn, and the royale zone does
  not shrink inside the search). Nothing here moves a snake or decides a collision.
- **Candidate moves** of a snake are :func:`snake.rules.candidate_moves`: the moves that
  are not certain death whatever the others do. That is move-generation pruning, not a
  rule: the engine still decides every outcome.
- **Which snakes are searched** (:func:`plan_snakes`): ``you``, plus the nearest opponent
  and any other opponent whose head is within ``reach`` steps of ``you``'s head (Manhattan,
  wrapped when the board wraps; ``reach=None``: every opponent), at most ``max_opponents``
  of them, nearest first.
  Every other snake (far opponents and squadmates) is played *cheaply*: one move per node
  from :func:`cheap_move` (keep going straight if that is a candidate, else the first
  candidate), so it costs no branching but still moves, grows and dies by the rules.
- **Terminal values** are exact (:func:`terminal_value`): a win, loss or draw for ``you``
  by :func:`snake.rules.outcome`, and ``you`` eliminated while others play on is a loss.
  A win is worth ``WIN - ply`` and a loss ``-WIN + ply`` (sooner wins and later losses are
  better), a draw :data:`DRAW` (-0.5: worse than all but clearly lost positions); every
  evaluation lies strictly between -1 and 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from snake.board import GameState, Point, Snake
from snake.rules import candidate_moves, default_move, distance, is_game_over, outcome

WIN = 1000.0
#: A draw (everyone left dies on the same turn) is exact but valued below most evaluations:
#: at 0 the paranoid search, whose evaluations are pessimistic, walked into equal-length
#: head-to-heads to "secure" it (20 draws in the first 20 games it played against another
#: search, 7 turns each).
DRAW = -0.5
#: scores at or beyond this magnitude are proven results
PROVEN = WIN - 500.0


@dataclass(frozen=True, slots=True)
class SnakePlan:
    """Who the search branches on: ``you``, the searched opponents (nearest first) and
    the snakes played cheaply."""

    you: str
    opponents: tuple[str, ...]
    cheap: tuple[str, ...]

    def replies(self, wanted: str) -> str:
        """How the searched opponents answer, given the ``wanted`` kind (``joint`` or
        ``best``): against one opponent its best replies are its replies, so it is searched
        as joint replies, node for node as before."""
        return "best" if wanted == "best" and len(self.opponents) > 1 else "joint"

    def style(self, style: str, multi_style: str | None) -> str:
        """Board control's weights for this position
        (:data:`snake.evaluation.control.STYLES`): ``multi_style``, when given, while three
        snakes or more are alive, else ``style``; so a four-snake game that comes down to a duel is
        played out as a duel."""
        alive = 1 + len(self.opponents) + len(self.cheap)
        return multi_style if multi_style is not None and alive >= 3 else style


def head_distance(state: GameState, a: Point, b: Point) -> int:
    """Moves between two squares on ``state``'s board (:func:`snake.rules.distance`)."""
    board = state.board
    return distance(a, b, board.width, board.height, state.ruleset.wraps)


def plan_snakes(state: GameState, you_id: str, *, max_opponents: int = 2,
                reach: int | None = 6) -> SnakePlan:
    """Choose the searched opponents (see the module docstring)."""
    you = state.board.snake(you_id)
    if you is None:
        raise ValueError(f"no snake {you_id!r} on the board")
    others = [s for s in state.board.snakes if s.alive and s.id != you_id]
    opponents = [s for s in others if not you.is_squadmate(s)]
    ranked = sorted(opponents, key=lambda s: head_distance(state, you.head, s.head))
    searched = [s.id for i, s in enumerate(ranked)
                if i < max_opponents and (i == 0 or reach is None
                                          or head_distance(state, you.head, s.head) <= reach)]
    cheap = tuple(s.id for s in others if s.id not in searched)
    return SnakePlan(you_id, tuple(searched), cheap)


def cheap_move(state: GameState, snake: Snake, obstacles: set[Point]) -> str:
    """The one move of a snake the search does not branch on: straight ahead if that is a
    candidate, else the first candidate (``obstacles``:
    :func:`snake.rules.obstacles_after_move`)."""
    moves = candidate_moves(state, snake, obstacles)
    straight = default_move(snake)
    return straight if straight in moves else moves[0]


def living(state: GameState) -> dict[str, Snake]:
    return {s.id: s for s in state.board.snakes if not s.eliminated_cause}


def terminal_value(state: GameState, you_id: str, ply: int) -> float | None:
    """The exact value for ``you`` of a finished line, or ``None`` if play goes on."""
    you = state.board.snake(you_id)
    if you is None:
        raise ValueError(f"no snake {you_id!r} on the board")
    if is_game_over(state):
        result = outcome(state, you_id)
        if result == "win":
            return WIN - ply
        if result == "draw":
            return DRAW
        return -WIN + ply
    if you.eliminated_cause:
        return -WIN + ply
    return None

