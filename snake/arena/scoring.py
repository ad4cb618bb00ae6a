"""Who won an arena game, seen from each player.

The official rules say which *snake* (or, in squad, which squad) won. The arena compares
*players*, and one player may hold several seats (a 4-snake game of ``floodfill`` against
three ``random`` snakes). The arena scores each player against its opponents:

- A *side* is a snake, or in squad mode a squad. A side lasts until the turn its last
  snake is eliminated (``eliminated_on_turn``); a side with a snake alive at the end lasts
  forever.
- A player's sides are those holding one of its snakes; its *opponents* are the sides that
  hold none of its snakes.
- The player **wins** when its longest-lasting side outlasts every opponent, **draws** when
  it lasts exactly as long as the longest-lasting opponent (eliminated on the same final
  turn, or both still alive when a game is stopped at the turn limit), and **loses**
  otherwise. A player without opponents (it holds every seat) draws.

For one snake against one snake this is the official result. For the first player holding
a single seat it is the official result too (win: its snake is the last one left; draw:
it died on the final turn together with the last others). For a player with several seats
it means "one of my snakes outlasted every snake of the others".

Solo (one snake): a win when the snake made at least ``solo_target`` moves (100 by
default: the turn at which the solo training target of SPEC §5 reaches 1.0) or was still
alive when the game was stopped, a loss otherwise.
"""

from __future__ import annotations

import math
from typing import Mapping

from snake.board import GameState

WIN, DRAW, LOSS = "win", "draw", "loss"


def snake_lifetime(state: GameState, snake_id: str) -> float:
    """The turn a snake was eliminated on, or ``inf`` if it is alive."""
    snake = state.board.snake(snake_id)
    if snake is None:
        raise KeyError(snake_id)
    return math.inf if snake.alive else float(snake.eliminated_on_turn)


def player_results(state: GameState, owners: Mapping[str, int],
                   squads: Mapping[str, str] | None = None) -> dict[int, str]:
    """Each player's result in the finished game ``state``. ``owners`` maps every snake id
    to its player; ``squads`` (squad mode) maps snake ids to their squad."""
    side_of = {sid: (squads[sid] if squads and squads.get(sid) else sid) for sid in owners}
    lasts: dict[str, float] = {}
    members: dict[str, set[int]] = {}
    for sid, player in owners.items():
        side = side_of[sid]
        lasts[side] = max(lasts.get(side, -math.inf), snake_lifetime(state, sid))
        members.setdefault(side, set()).add(player)
    results: dict[int, str] = {}
    for player in set(owners.values()):
        mine = max(lasts[s] for s, ps in members.items() if player in ps)
        others = [lasts[s] for s, ps in members.items() if player not in ps]
        if not others:
            results[player] = DRAW
            continue
        best_other = max(others)
        results[player] = WIN if mine > best_other else DRAW if mine == best_other else LOSS
    return results


def solo_result(state: GameState, snake_id: str, solo_target: int) -> str:
    """Solo: a win when the snake made ``solo_target`` moves or is still alive."""
    snake = state.board.snake(snake_id)
    if snake is None:
        raise KeyError(snake_id)
    moves_made = state.turn if snake.alive else snake.eliminated_on_turn
    return WIN if snake.alive or moves_made >= solo_target else LOSS

