"""Games for the tests: whole games of every ruleset, size and hazard map, played by the
reference rules with moves that are mostly sensible and sometimes not."""

from __future__ import annotations

import random
from typing import Iterator

from snake import rules
from snake.board import GameState
from snake.rules import MOVES, start

#: (ruleset, map, snake counts) of the games; each is played on 7x7, 11x11 and 19x19
#: (squad in squads of two).
KINDS = [
    ("standard", "standard", (2, 3, 4)), ("standard", "empty", (2, 4)),
    ("standard", "hz_spiral", (2, 4)), ("standard", "hz_rings", (4,)),
    ("standard", "hz_inner_wall", (2,)), ("standard", "hz_columns", (3,)),
    ("constrictor", "standard", (2, 3)), ("royale", "royale", (2, 4)),
    ("wrapped", "standard", (2, 4)), ("wrapped_constrictor", "standard", (2, 3)),
    ("solo", "standard", (1,)), ("squad", "standard", (4,)),
]


def choose_moves(state: GameState, rng: random.Random, style: int) -> dict[str, str]:
    """Moves for every living snake: mostly not certain death, sometimes anything (so that
    snakes also die by walls, bodies and heads), in style 1 heading for food; now and then
    an invalid move (the engine repeats the last one)."""
    obstacles = rules.obstacles_after_move(state)
    moves = {}
    for s in state.board.snakes:
        if not s.alive:
            continue
        candidates = rules.candidate_moves(state, s, obstacles)
        if rng.random() < 0.08:
            moves[s.id] = rng.choice(MOVES)
        elif style == 1 and state.board.food:
            fx, fy = min(state.board.food,
                         key=lambda f: abs(f[0] - s.head[0]) + abs(f[1] - s.head[1]))

            def distance(m: str) -> int:
                x, y = rules.next_square(state, s.head, m)
                return abs(x - fx) + abs(y - fy)
            moves[s.id] = min(candidates, key=distance)
        else:
            moves[s.id] = rng.choice(candidates)
        if rng.random() < 0.01:
            moves[s.id] = "sideways"
    return moves


def new_game(number: int, rng: random.Random) -> GameState:
    """Game ``number`` of the series: its kind, size and snake count."""
    ruleset, map_name, counts = KINDS[number % len(KINDS)]
    side = (7, 11, 19)[(number // len(KINDS)) % 3]
    n = rng.choice(counts)
    squads = [f"squad{k // 2}" for k in range(n)] if ruleset == "squad" else None
    state = start.new_game(ruleset, side, side, [f"s{k}" for k in range(n)], map=map_name,
                           rng=rng, squads=squads)
    if ruleset == "royale":
        state.game.ruleset.settings.shrink_every_n_turns = rng.choice((5, 10, 25))
    return state


def positions(seed: int, count: int, max_turns: int = 600) -> Iterator[GameState]:
    """``count`` positions of such games, every turn of each game in order."""
    rng = random.Random(seed)
    number = 0
    while True:
        state = new_game(number, rng)
        style = number % 2
        number += 1
        while not rules.is_game_over(state) and state.turn < max_turns:
            yield state
            count -= 1
            if count <= 0:
                return
            state = rules.play_turn(state, choose_moves(state, rng, style), rng)


# ---------------------------------------------------------------------------------------
# Drawn positions the record tests share (tests/test_arena.py, tests/test_results.py)

#: Three snakes; B and C at the left wall, A in the middle.
THREE = """
    . . . . . . .
    B b b . . . .
    . . . . . . .
    . . . . A a a
    . . . . . . .
    C c c . . . .
    . . . . . . .
"""

#: Three snakes at the top row: B and A can only go up twice and then hit the wall.
AT_THE_TOP = """
    . . . . . . .
    B b b . A a a
    . . . . . . .
    . . . . . . .
    . . . . . . .
    C c c . . . .
    . . . . . . .
"""
