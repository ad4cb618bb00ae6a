"""The result of a finished game for one snake (SPEC §5)."""

from __future__ import annotations

from ..board import GameState
from .stages import is_game_over


def outcome(state: GameState, snake_id: str) -> str:
    """``"win"``, ``"draw"`` or ``"loss"`` for ``snake_id`` in a finished game.

    Win: the snake is the last one alive (squad: its squad is the one left). Draw: nobody
    is left and the snake was eliminated on the final turn together with every other
    snake still alive before it. Loss otherwise, and always in solo (a solo game is
    scored by its length instead). Raises ``ValueError`` if the game is not over or the
    snake is unknown."""
    board = state.board
    snake = board.snake(snake_id)
    if snake is None:
        raise ValueError(f"no snake {snake_id!r} in this game")
    if not is_game_over(state):
        raise ValueError("the game is not over")
    ruleset = state.game.ruleset.name
    if ruleset == "solo":
        return "loss"
    living = [s for s in board.snakes if not s.eliminated_cause]
    if living:
        if snake.alive:
            return "win"
        if ruleset == "squad" and snake.squad == living[0].squad:
            return "win"
        return "loss"
    final_turn = max(s.eliminated_on_turn for s in board.snakes)
    return "draw" if snake.eliminated_on_turn == final_turn else "loss"
