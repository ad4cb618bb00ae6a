"""The result of a finished game for one snake (SPEC §5)."""

from __future__ import annotations

from snake.board import GameState, Snake
from snake.rules.stages import GAME_OVER, is_game_over, plays_solo


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


#: The official engine sends ``/end`` one turn past the game's final turn (the turn of its
#: last eliminations): its game-over test is the first stage of a turn, so the loop plays
#: one more turn on the finished game, in which the rules change nothing and the map may
#: spawn food, and ``turn`` + 1 (``battlesnake play``, cli/commands/play.go). The arena
#: sends it the same way.
END_AFTER_FINAL = 1


def finished_at_end(state: GameState) -> bool:
    """Whether the board an ``/end`` (or any request) shows is of a finished game: its
    ruleset's game-over test on the living snakes it lists. (A request lists no eliminated
    snake, so one snake left there is a duel won, not a game of one snake:
    :func:`~.stages.plays_solo` does not apply.)"""
    name = state.game.ruleset.name
    return GAME_OVER.get(name, GAME_OVER["standard"])[1](state)


def final_turn_at_end(state: GameState) -> int:
    """The game's final turn, from the state an ``/end`` body shows: one turn before it
    for a finished game (:data:`END_AFTER_FINAL`); a game stopped early (the arena's turn
    cap) shows its last turn."""
    return state.turn - END_AFTER_FINAL if finished_at_end(state) else state.turn


def outcome_at_end(state: GameState, you: Snake, last_turn: int | None = None, *,
                   final_turn: int | None = None) -> str:
    """The result for ``you`` as the ``/end`` body shows it, where ``board.snakes`` lists only
    the living snakes (who fell on which turn is not there).

    ``win``: ``you``, or in squad ``you``'s squad, is all that is left. ``loss``: someone
    else is left, or no one is and ``you`` fell before the final turn: its last move
    (``last_turn``, the last turn ``you`` was asked to move on) came before the final
    turn's eve; without ``last_turn``, no one left is a draw. The final turn is
    ``final_turn`` when given (a game record's last line is its final turn), else the one
    an ``/end`` body shows (:func:`final_turn_at_end`).
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
    if final_turn is None:
        final_turn = final_turn_at_end(state)
    if last_turn is not None and last_turn < final_turn - 1:
        return "loss"
    return "draw"
