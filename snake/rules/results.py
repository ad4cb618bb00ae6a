"""The result of a finished game for one snake (SPEC §5)."""

from __future__ import annotations

from ..board import GameState, Snake
from .stages import is_game_over, plays_solo


def outcome(state: GameState, snake_id: str) -> str:
    """``"win"``, ``"draw"`` or ``"loss"`` for ``snake_id`` in a finished game.

    Win: the snake is the last one alive (squad: its squad is the one left). Draw: nobody
    is left and the snake was eliminated on the final turn together with every other
    snake still alive before it. Loss otherwise, and always in solo, or a game of one snake
    (:func:`~.stages.plays_solo`; such a game is scored by its length instead). Raises
    ``ValueError`` if the game is not over or the snake is unknown."""
    board = state.board
    snake = board.snake(snake_id)
    if snake is None:
        raise ValueError(f"no snake {snake_id!r} in this game")
    if not is_game_over(state):
        raise ValueError("the game is not over")
    ruleset = state.game.ruleset.name
    if plays_solo(state):
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


def outcome_at_end(state: GameState, you: Snake, last_turn: int | None = None) -> str:
    """The result for ``you`` as the ``/end`` body shows it, where ``board.snakes`` lists only
    the living snakes (who fell on which turn is not there).

    ``win``: ``you``, or in squad ``you``'s squad, is all that is left. ``loss``: someone
    else is left, or no one is and ``you`` stopped playing before the final turn (known
    from ``last_turn``, the last turn ``you`` moved on; without it, no one left is a draw).
    ``draw``: no one is left and ``you`` fell on the final turn. ``unfinished``: ``you`` and
    others are still alive (a game stopped early). ``ended``: solo, which has no winner
    (:func:`outcome` counts it a loss; a solo game is scored by its length)."""
    # (by name: the /end of a duel we won lists us alone, which plays_solo cannot tell
    # from a game of one snake)
    if state.game.ruleset.name == "solo":
        return "ended"
    living = [s for s in state.board.snakes if not s.eliminated_cause]
    squad = state.game.ruleset.squad
    you_alive = any(s.id == you.id for s in living)
    mates = [s for s in living if squad and you.is_squadmate(s)]
    others = [s for s in living if s.id != you.id and s not in mates]
    if you_alive or mates:
        return "unfinished" if others else "win"
    if others:
        return "loss"
    if last_turn is not None and last_turn < state.turn - 1:
        return "loss"
    return "draw"
