"""The result of a finished game for one snake (SPEC §5), in one place.

- :func:`outcome`: from a finished game's final state (the rules' own, which keeps the
  eliminated snakes and the turn each fell on);
- :func:`outcome_at_end`: from what an ``/end`` body shows (the living snakes only);
- :func:`recorded_outcome`, :func:`recorded_results` and :func:`place`: from a game record
  (who was alive on each recorded turn, and the record's verdict: the official result
  line). :class:`snake.records.replay.Replay` reads a record's JSON into these.
"""

from __future__ import annotations

from typing import AbstractSet, Mapping

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


#: Who was alive on each recorded turn of a game: turn number -> the ids of the snakes on
#: the board that turn (a record lists the living snakes only), in order of turns.
Alive = Mapping[int, AbstractSet[str]]


def recorded_outcome(alive: Alive, snakes: AbstractSet[str] | str, winner: str,
                     is_draw: bool) -> str:
    """``"win"``, ``"draw"`` or ``"loss"`` for ``snakes`` (a snake's id, or the ids of the
    snakes one player holds) in a game record: from who was alive on each recorded turn
    (:data:`Alive`; its last turn is the last recorded) and the record's verdict, the
    official result line (``winner``: the winning snake's id, or ""; ``is_draw``).

    - win: the verdict names one of them the winner, and is no draw;
    - draw: the verdict is a draw and one of them is among the last: alive on the last
      recorded turn (a game stopped at the turn cap is a draw for the snakes still alive)
      or, no snake being left on it, alive on the turn before (it fell on the final turn
      together with the others; a record that lacks that turn, as a game log may, does not
      show a draw);
    - loss otherwise: it fell earlier, another won, or the record has no result (no winner
      and no draw: a game stopped before it was settled, or a solo game lost).

    In squad the verdict names one snake of the winning squad: a player holding the squad
    wins with it, a snake alone only if it is the one named."""
    mine = {snakes} if isinstance(snakes, str) else set(snakes)
    if not is_draw:
        return "win" if winner in mine else "loss"
    turns = sorted(alive)
    if not turns:
        return "loss"
    last = alive[turns[-1]]
    if mine & last:
        return "draw"
    before = alive.get(turns[-1] - 1, set())
    return "draw" if not last and mine & before else "loss"


def recorded_results(alive: Alive, winner: str, is_draw: bool) -> dict[str, str] | str:
    """Every snake's result in a game record, by id (:func:`recorded_outcome` of each snake
    alone), or why the record does not settle them all: ``"no turns"``; ``"no result"``
    (neither a winner nor a draw); ``"stopped early"`` (no draw, and another snake than the
    winner still alive on the last recorded turn: a game stopped once one player's result
    was settled, ``--until-decided``, whose other survivors' results are not known; or a
    squad win, which the verdict credits to one of the squad)."""
    if not alive:
        return "no turns"
    everyone = set().union(*alive.values())
    if not is_draw:
        if not winner:
            return "no result"
        if set(alive[max(alive)]) != {winner}:
            return "stopped early"
    return {sid: recorded_outcome(alive, sid, winner, is_draw) for sid in everyone}


def place(alive: Alive, snake_id: str) -> float:
    """A snake's place among the game's snakes, 1 the best, from who was alive on each
    recorded turn (:data:`Alive`): one more than the snakes that outlived it (those alive on
    the recorded turn after its last); the snakes that fell on the same turn as it, or are
    still alive with it on the last recorded turn, share their places, each getting their
    mean (three snakes alive at the end share 1, 2 and 3: 2 each). So over all the snakes
    of a game the places add up to those of a strict order, and even play is
    ``(snakes + 1) / 2``. A record stopped once its player is out (``--until-decided``)
    still holds all this needs: who was alive on the turn after it fell. Raises
    ``ValueError`` if the snake is never alive in ``alive``."""
    turns = sorted(alive)
    last = max((k for k, turn in enumerate(turns) if snake_id in alive[turn]), default=None)
    if last is None:
        raise ValueError(f"no snake {snake_id!r} in the record")
    with_it = len(alive[turns[last]]) - 1
    outlived = 0 if last == len(turns) - 1 else len(alive[turns[last + 1]])
    return 1 + outlived + (with_it - outlived) / 2
