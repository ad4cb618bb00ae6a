"""Board-control evaluation speed: the compiled evaluator beside its Python reference.

    python -m bench.control [--seconds S] [--positions P]

Positions: ``P`` positions (default 1,000) of seeded standard games of random snakes (moves
that are not certain death), taken every third turn from turn 10 on while every snake is
alive, so that they are ones a game reaches. Each is evaluated once per pass: with as many,
the processor cannot learn their branches, as it learns a hundred (which once made a
queue-based evaluator look twice as fast as it was on new positions; the leaves of a search
are new positions). Scenarios: 11x11 with 2 and 4 snakes, 19x19 with 8.

- ``python``: :func:`snake.evaluation.control.control_values` for the first snake, one call per
  position (what the Python search's leaf does);
- ``compiled``: :func:`snake.evaluation.compiled.control.control_value` for the first snake,
  called from a compiled loop over the positions with one workspace (what the compiled search's
  leaf does), and its ratio to the Python version (CPU time, the same run);
- ``partition``: the partition alone (most of a leaf's cost), by the way the board takes
  (two words a set up to 128 squares) and by the general any-size way, which every board
  took before (issue 56), in nanoseconds per position, and their ratio (the same run).

Rates are the best of 5 runs of ``S / 5`` seconds each, by the wall clock (the headline) and,
in brackets, by the process's CPU time, which other jobs on a shared machine disturb less.
The last line reads ``control: N evaluations/s on 11x11 with 4 snakes`` (compiled, wall).
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Callable

import numpy as np
from numba import njit

from snake import core, rules
from snake.board import GameState
from snake.core.jit import JIT
from snake.evaluation.compiled.control import (
    control_value,
    partition,
    partition_any_size,
    workspace,
)
from snake.evaluation.control import control_values
from snake.rules.start import new_game

SCENARIOS = ((11, 2), (11, 4), (19, 8))


def positions(side: int, n_snakes: int, count: int) -> list[GameState]:
    """``count`` positions of seeded random games with every snake alive (module docstring)."""
    out: list[GameState] = []
    seed = 0
    while len(out) < count:
        seed += 1
        rng = random.Random(seed)
        state = new_game("standard", side, side, [f"s{k}" for k in range(n_snakes)], rng=rng)
        while len(state.board.living_snakes) == n_snakes and len(out) < count:
            if state.turn >= 10 and state.turn % 3 == 0:
                out.append(state)
            obstacles = rules.obstacles_after_move(state)
            moves = {s.id: rng.choice(rules.candidate_moves(state, s, obstacles))
                     for s in state.board.living_snakes}
            state = rules.play_turn(state, moves, rng)
    return out


def best_of(run: Callable[[int], int], seconds: float, repeats: int = 5) -> tuple[float, float]:
    """Evaluations per second by the wall clock and by CPU time: the best of ``repeats``
    runs of ``seconds / repeats`` each. ``run(k)`` does a batch ``k`` times and returns how
    many evaluations it made; batches double until the run's time is up."""
    best_wall = best_cpu = 0.0
    for _ in range(repeats):
        evaluations, k = 0, 1
        t0, c0 = time.perf_counter(), time.process_time()
        deadline = t0 + seconds / repeats
        while time.perf_counter() < deadline:
            evaluations += run(k)
            k *= 2
        best_wall = max(best_wall, evaluations / (time.perf_counter() - t0))
        best_cpu = max(best_cpu, evaluations / max(time.process_time() - c0, 1e-9))
    return best_wall, best_cpu


@njit(**JIT)
def _partition_rounds(g, states, work, rounds, any_size):
    """The partition of every row of ``states``, ``rounds`` times, the any-size way or the
    board's; returns the sum of the living counts."""
    total = 0
    for _ in range(rounds):
        for p in range(states.shape[0]):
            if any_size:
                total += partition_any_size(g, states[p], work)
            else:
                total += partition(g, states[p], work)
    return total


@njit(**JIT)
def _compiled_rounds(g, states, work, rounds):
    """``control_value`` of snake 0 in every row of ``states``, ``rounds`` times; returns
    the sum of the values (so that nothing is optimised away)."""
    total = 0.0
    for _ in range(rounds):
        for p in range(states.shape[0]):
            total += control_value(g, states[p], 0, work)
    return total


def measure(states: list[GameState], seconds: float) -> tuple[tuple[float, float], ...]:
    """(python, compiled, partition, any-size partition) rates on ``states``, after checking
    that the compiled values are the reference's."""
    packed = [core.encode(state) for state in states]
    g = packed[0].g
    if any(not np.array_equal(p.g, g) for p in packed):
        raise RuntimeError("positions of one scenario must share the game's constants")
    table = np.stack([p.s for p in packed])
    work = workspace(g)
    ids = [state.board.snakes[0].id for state in states]
    expected = sum(control_values(state, (sid,))[sid] for state, sid in zip(states, ids))
    if abs(_compiled_rounds(g, table, work, 1) - expected) > 1e-9:
        raise RuntimeError("the compiled values differ from the reference")

    def python(k: int) -> int:
        for _ in range(k):
            for state, sid in zip(states, ids):
                control_values(state, (sid,))
        return k * len(states)

    def compiled(k: int) -> int:
        _compiled_rounds(g, table, work, k)
        return k * len(states)

    def partitions(any_size: bool):
        def run(k: int) -> int:
            _partition_rounds(g, table, work, k, any_size)
            return k * len(states)
        return run
    return (best_of(python, seconds), best_of(compiled, seconds),
            best_of(partitions(False), seconds), best_of(partitions(True), seconds))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.control",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="time per measurement, split in 5 runs of which the best counts "
                             "(default 1)")
    parser.add_argument("--positions", type=int, default=1000,
                        help="positions per scenario (default 1000)")
    args = parser.parse_args(argv)

    headline = 0.0
    for side, n in SCENARIOS:
        (py_wall, py_cpu), (c_wall, c_cpu), (_, p_cpu), (_, a_cpu) = measure(
            positions(side, n, args.positions), args.seconds)
        print(f"{side}x{side}, {n} snakes: python {py_wall:,.0f} evaluations/s "
              f"(CPU time {py_cpu:,.0f}), "
              f"compiled {c_wall:,.0f} evaluations/s (CPU time {c_cpu:,.0f}, "
              f"{1e9 / c_cpu:,.0f} ns each), {c_cpu / py_cpu:.0f}x python; "
              f"partition {1e9 / p_cpu:,.0f} ns, the any-size way {1e9 / a_cpu:,.0f} ns "
              f"({p_cpu / a_cpu:.1f}x as fast)")
        if (side, n) == (11, 4):
            headline = c_wall
    print(f"control: {headline:.0f} evaluations/s on 11x11 with 4 snakes")


if __name__ == "__main__":
    main()
