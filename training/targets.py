"""Training targets in WDL space (SPEC section 5), one owner for every data source.

A snake's target is its result in the game: win 1.0 (it, or in squad its squad, is the last
left), draw 0.5 (it fell on the final turn with everyone left), loss 0.0; in solo, which
has no winner, ``min(T / 100, 1)`` for the ``T`` moves it made in the whole game.
"""

from __future__ import annotations

from typing import Mapping

from snake import rules
from snake.board import GameState

SOLO_FULL_MARKS = 100  # solo target: min(T / 100, 1)
OUTCOME_TARGET = {"win": 1.0, "draw": 0.5, "loss": 0.0}


def solo_target(moves: int) -> float:
    """A solo snake's target: ``min(T / 100, 1)`` for the ``T`` moves it made."""
    return min(moves / SOLO_FULL_MARKS, 1.0)


def game_targets(final: GameState, moves_made: Mapping[str, int]) -> dict[str, float]:
    """Each snake's target (SPEC section 5) from the finished game ``final`` and the number
    of moves each snake made: solo (or a game of one snake, played as solo:
    :func:`snake.rules.plays_solo`) ``min(T / 100, 1)``, otherwise win 1.0 / draw 0.5 /
    loss 0.0 by :func:`snake.rules.outcome`."""
    if rules.plays_solo(final):
        return {sid: solo_target(n) for sid, n in moves_made.items()}
    return {sid: OUTCOME_TARGET[rules.outcome(final, sid)] for sid in moves_made}


def capped_targets(state: GameState, moves_made: Mapping[str, int]) -> dict[str, float]:
    """Each snake's target when a game is stopped at the turn cap before it is over: a snake
    still in the game (alive, or in squad with a living squadmate) draws, 0.5, and one
    already out has lost, 0.0, as the arena scores a capped game; solo keeps its own target,
    ``min(T / 100, 1)`` (the arena calls a solo snake alive at the cap a win: the same when
    the cap is at least 100 turns)."""
    if rules.plays_solo(state):
        return game_targets(state, moves_made)
    # Still in (itself or a squadmate alive): "unfinished", or "win" were no one else left.
    return {sid: 0.5 if rules.outcome_at_end(state, state.board.snake(sid)) in ("unfinished", "win")
            else 0.0 for sid in moves_made}
