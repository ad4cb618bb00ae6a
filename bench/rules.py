"""Rules engine throughput: turns per second on fixed, supplied move sequences.

    python -m bench.rules [--seconds S]

Each scenario starts from a fixed board where every snake (length 10) circles its own
5x5 ring of squares, and replays a fixed move sequence (precomputed: move choice is not
measured) for 90 turns, then starts over; every snake is alive throughout (checked).
Every turn builds a new state (the input is never modified), so the copy a search needs
per turn is included.

- ``apply_rules``: the rule stages only (movement, starvation, hazards, feeding,
  eliminations, mode stages);
- ``play_turn``: a whole turn as the engine plays it, with the standard map's random food
  spawning (seeded) and ``turn`` + 1;
- ``state.copy()``: the copy alone, for reference;
- ``compiled``: the compiled twin (:mod:`snake.core`) on the same positions and moves, the
  loop itself compiled, each turn a copy of the state vector into a preallocated row and the
  step (what a compiled search does per node); its ratio to ``apply_rules`` (CPU time, the
  same run) is printed.

Rates are by the wall clock (the headline) and, in brackets, by the process's CPU time,
which other jobs on a shared machine disturb less.

Scenarios: 11x11 with 4 snakes and 19x19 with 8 snakes, standard rules. The last line is
``rules: X turns/s on 11x11 with 4 snakes`` (whole turns, ``play_turn``).
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Callable

import numpy as np
from numba import njit

from snake import core
from snake.board import Board, Game, GameState, Point, Ruleset, Snake
from snake.core.jit import JIT_NRT
from snake.core.state import ALIVE, G_CAUSE, G_N
from snake.core.step import apply_rules as compiled_apply_rules
from snake.rules import apply_rules, play_turn

RING_SIDE = 5
SNAKE_LENGTH = 10
EPISODE_TURNS = 90


def ring(x0: int, y0: int) -> list[Point]:
    """The squares around the edge of the 5x5 square at (x0, y0), clockwise."""
    n = RING_SIDE - 1
    top = [(x0 + i, y0 + n) for i in range(n)]
    right = [(x0 + n, y0 + n - i) for i in range(n)]
    bottom = [(x0 + n - i, y0) for i in range(n)]
    left = [(x0, y0 + i) for i in range(n)]
    return top + right + bottom + left


def direction(a: Point, b: Point) -> str:
    dx, dy = b[0] - a[0], b[1] - a[1]
    return {(0, 1): "up", (0, -1): "down", (-1, 0): "left", (1, 0): "right"}[(dx, dy)]


def scenario(side: int, n_snakes: int) -> tuple[GameState, list[dict[str, str]]]:
    """The start state and the move sequence of one scenario."""
    origins = [(x, y) for y in range(0, side - RING_SIDE + 1, RING_SIDE + 1)
               for x in range(0, side - RING_SIDE + 1, RING_SIDE + 1)]
    if len(origins) < n_snakes:
        raise ValueError(f"no room for {n_snakes} rings on {side}x{side}")
    rings = [ring(*o) for o in origins[:n_snakes]]
    snakes = []
    for i, r in enumerate(rings):
        head = SNAKE_LENGTH - 1
        body = [r[(head - k) % len(r)] for k in range(SNAKE_LENGTH)]
        snakes.append(Snake(id=f"snake-{i + 1}", name=f"snake-{i + 1}", body=body, health=100))
    # Food on the gaps between rings: never eaten, but on the board as in a real game.
    mid = RING_SIDE
    food = [(mid, 1), (1, mid), (mid, mid)]
    state = GameState(Game("bench", Ruleset("standard")), 0, Board(side, side, food, [], snakes))
    moves = []
    for t in range(EPISODE_TURNS):
        turn_moves = {}
        for i, r in enumerate(rings):
            k = SNAKE_LENGTH - 1 + t
            turn_moves[f"snake-{i + 1}"] = direction(r[k % len(r)], r[(k + 1) % len(r)])
        moves.append(turn_moves)
    return state, moves


def measure(step: Callable[[GameState, dict[str, str]], GameState], start: GameState,
            moves: list[dict[str, str]], seconds: float, repeats: int = 5) -> tuple[float, float]:
    """Turns per second of ``step`` replaying ``moves`` from ``start``, by the wall clock
    and by this process's CPU time: the best of ``repeats`` runs of ``seconds / repeats``
    each (the machine may be shared; the best run is the one least disturbed)."""
    best_wall = best_cpu = 0.0
    for _ in range(repeats):
        turns = 0
        t0, c0 = time.perf_counter(), time.process_time()
        deadline = t0 + seconds / repeats
        while True:
            state = start
            for m in moves:
                state = step(state, m)
            turns += len(moves)
            if any(not s.alive for s in state.board.snakes):
                raise RuntimeError("a snake died: the benchmark would not measure living snakes")
            if time.perf_counter() >= deadline:
                break
        best_wall = max(best_wall, turns / (time.perf_counter() - t0))
        best_cpu = max(best_cpu, turns / max(time.process_time() - c0, 1e-9))
    return best_wall, best_cpu


@njit(**JIT_NRT)
def _compiled_episodes(g, start, moves, episodes):
    """Replay ``moves`` (turns x snakes) from ``start`` ``episodes`` times; every turn copies
    the state vector and steps it. Returns the number of snakes alive at the end."""
    no_report = np.zeros((0, 4), dtype=np.int32)
    stack = np.empty((2, start.shape[0]), dtype=start.dtype)   # a search's node stack, in small
    for _ in range(episodes):
        stack[0] = start
        for t in range(moves.shape[0]):
            stack[(t + 1) & 1] = stack[t & 1]
            compiled_apply_rules(g, stack[(t + 1) & 1], moves[t], -1, no_report)
    state = stack[moves.shape[0] & 1]
    alive = 0
    for i in range(g[G_N]):
        if state[g[G_CAUSE] + i] == ALIVE:
            alive += 1
    return alive


def measure_compiled(start: GameState, moves: list[dict[str, str]], seconds: float,
                     repeats: int = 5) -> tuple[float, float]:
    """:func:`measure` for the compiled step (compiled once before timing)."""
    packed = core.encode(start)
    table = np.array([core.move_numbers(packed, m) for m in moves], dtype=np.int32)
    n = len(start.board.snakes)
    if _compiled_episodes(packed.g, packed.s, table, 1) != n:
        raise RuntimeError("a snake died: the benchmark would not measure living snakes")
    best_wall = best_cpu = 0.0
    for _ in range(repeats):
        episodes = 1
        t0, c0 = time.perf_counter(), time.process_time()
        deadline = t0 + seconds / repeats
        turns = 0
        while time.perf_counter() < deadline:
            _compiled_episodes(packed.g, packed.s, table, episodes)
            turns += episodes * len(moves)
            episodes *= 2
        best_wall = max(best_wall, turns / (time.perf_counter() - t0))
        best_cpu = max(best_cpu, turns / max(time.process_time() - c0, 1e-9))
    return best_wall, best_cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rules",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="time per measurement, split in 5 runs of which the best counts "
                             "(default 1)")
    args = parser.parse_args(argv)

    headline = 0.0
    for side, n in ((11, 4), (19, 8)):
        start, moves = scenario(side, n)
        rng = random.Random(1)
        rules_wall, rules_cpu = measure(lambda s, m: apply_rules(s, m), start, moves, args.seconds)
        turn_wall, turn_cpu = measure(lambda s, m: play_turn(s, m, rng), start, moves, args.seconds)
        copy_wall, _ = measure(lambda s, m: s.copy(), start, moves, args.seconds)
        compiled_wall, compiled_cpu = measure_compiled(start, moves, args.seconds)
        print(f"{side}x{side}, {n} snakes of length {SNAKE_LENGTH}: "
              f"apply_rules {rules_wall:,.0f} turns/s (CPU time {rules_cpu:,.0f}), "
              f"play_turn {turn_wall:,.0f} turns/s (CPU time {turn_cpu:,.0f}), "
              f"state.copy() {copy_wall:,.0f}/s; "
              f"compiled {compiled_wall:,.0f} turns/s (CPU time {compiled_cpu:,.0f}), "
              f"{compiled_cpu / rules_cpu:.0f}x apply_rules")
        if (side, n) == (11, 4):
            headline = turn_wall
    print(f"rules: {headline:.0f} turns/s on 11x11 with 4 snakes")


if __name__ == "__main__":
    main()
