"""Benchmark of NNUE inference: ``python -m bench.nnue [--quick]``.

For typical mid-game turns (11x11 with 4 snakes of length ~10, 19x19 with 8 snakes) it
measures, in one run and one thread (as a server worker runs): the feature columns a refresh
and an incremental update touch; the time of feature extraction, full refresh, incremental
update (``Accumulator.apply`` of a precomputed change) and forward pass (hidden layers);
update+forward and refresh+forward; a whole turn from the state (``Accumulator.update_to``
on a copy, against ``active_features`` + refresh); the per-state time of scoring 64 sibling
states (``update_to`` on copies of the parent) in one batch versus one at a time; the weight
file's size and load time; and the quantisation error (float vs int8 first and second layers)
on the same states.

The compiled path (:mod:`nnue.feature_transformer`, :mod:`nnue.layers`), as the search
runs it: a run of steps of the compiled core with their change reports, applied to the
accumulator and each followed by the forward pass, in one compiled loop (forward through the
run and back, so it ends where it began), every snake alive throughout; beside it, in the
same run, the numpy path the compiled one replaced in 2026-11 (kept here as the yardstick
of the target: the same changes' rows gathered from a ``[W1; -W1]`` table and summed by
numpy, then ``Network.forward``'s BLAS products; no service code runs it now), and the
compiled walk with ``W2`` in float32 (what the int8 rows save). The last
line reads ``nnue: compiled update+forward X us (int8 W2; Z us with float32 W2), numpy path
Y us, ...``.

Positions come from the rules engine: snakes are laid out as random self-avoiding bodies of
the wanted length, then a few turns are played with random safe moves; each measured turn is
the step from one state to the next, seen from the first snake.
"""

from __future__ import annotations

import os

# One BLAS thread, as in a server worker; must be set before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import itertools  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from nnue.accumulator import Accumulator  # noqa: E402
from nnue.feature_transformer import CoreAccumulator, apply_changes  # noqa: E402
from nnue.features import active_features, feature_change, feature_parts  # noqa: E402
from nnue.layers import forward_one  # noqa: E402
from nnue.network import DEFAULT_WEIGHTS, Network  # noqa: E402
from snake.board import Board, Game, GameState, Ruleset, Snake  # noqa: E402
from snake.core.jit import JIT_NRT  # noqa: E402
from snake.rules import MOVES, apply_rules, candidate_moves, obstacles_after_move, play_turn  # noqa: E402

# --- positions ------------------------------------------------------------------------


def random_body(side: int, length: int, taken: set, rng: random.Random) -> list | None:
    """A self-avoiding chain of ``length`` squares (head first) avoiding ``taken``."""
    free = [(x, y) for x in range(side) for y in range(side) if (x, y) not in taken]
    for _ in range(50):
        body = [rng.choice(free)]
        while len(body) < length:
            x, y = body[-1]
            nxt = [(x + dx, y + dy) for dx, dy in ((0, 1), (0, -1), (1, 0), (-1, 0))]
            nxt = [p for p in nxt if 0 <= p[0] < side and 0 <= p[1] < side
                   and p not in taken and p not in body]
            if not nxt:
                break
            body.append(rng.choice(nxt))
        if len(body) == length:
            return body
    return None


def safe_moves(state: GameState, rng: random.Random) -> dict[str, str]:
    obstacles = obstacles_after_move(state)
    return {s.id: rng.choice(candidate_moves(state, s, obstacles))
            for s in state.board.living_snakes}


def mid_game(side: int, n_snakes: int, length: int, rng: random.Random,
             ruleset: str = "standard", border: int = 0) -> list[GameState]:
    """A short run of consecutive mid-game states (all snakes alive throughout). ``border``
    > 0 makes that many rings of hazard squares around the edge (royale's shrunk board)."""
    hazards = [(x, y) for x in range(side) for y in range(side)
               if min(x, y, side - 1 - x, side - 1 - y) < border]
    while True:
        taken: set = set(hazards)
        snakes = []
        for i in range(n_snakes):
            body = random_body(side, length, taken, rng)
            if body is None:
                break
            taken.update(body)
            snakes.append(Snake(f"s{i}", body, health=rng.randint(40, 100)))
        if len(snakes) < n_snakes:
            continue
        free = [(x, y) for x in range(side) for y in range(side) if (x, y) not in taken]
        board = Board(side, side, rng.sample(free, 3 + side // 6), list(hazards), snakes)
        state = GameState(Game("bench", Ruleset(ruleset)), 40, board)
        states = [state]
        for _ in range(12):
            state = play_turn(state, safe_moves(state, rng), rng)
            if len(state.board.living_snakes) < n_snakes:
                break
            states.append(state)
        if len(states) >= 8:
            return states


# --- the compiled path ------------------------------------------------------------------

#: A timed walk's turns wanted, every snake alive throughout, and the starts tried for it.
MIN_WALK, WALK_TRIES = 10, 50


@njit(**JIT_NRT)
def _walk(g, s_after, changes, n_changes, you, offset, w1, counts, acc, scale, w2, w2_scale, b2,
          w3, b3, hidden, out, repeats):
    """``repeats`` times: every step's report applied and scored, then every step undone
    (its report with the signs turned) and scored; 2 * steps * repeats updates+forwards."""
    steps = changes.shape[0]
    undo = changes.copy()
    for k in range(steps):
        for r in range(n_changes[k]):
            undo[k, r, 0] = -changes[k, r, 0]
    for _ in range(repeats):
        for k in range(steps):
            apply_changes(g, s_after[k], you, offset, w1, changes[k], n_changes[k], counts, acc)
            forward_one(acc, scale, w2, w2_scale, b2, w3, b3, hidden, out)
        for k in range(steps - 1, -1, -1):
            apply_changes(g, s_after[k], you, offset, w1, undo[k], n_changes[k], counts, acc)
            forward_one(acc, scale, w2, w2_scale, b2, w3, b3, hidden, out)


def compiled_path(net: Network, side: int, n_snakes: int, length: int, rng: random.Random,
                  budget: float, ruleset: str = "standard", border: int = 0) -> dict:
    """Microseconds per update+forward: compiled (from the core's change reports) and
    numpy (the same feature changes gathered and summed by numpy, BLAS forward)."""
    from snake import core

    # A walk with every snake alive throughout, so that the figure is of the board it names
    # (a walk that stopped only at two snakes left ran on three): the first of MIN_WALK
    # turns, or the longest of WALK_TRIES (crowded boards lose a snake soon).
    best = None
    for _ in range(WALK_TRIES):
        start = mid_game(side, n_snakes, length, rng, ruleset, border)[-1]
        for snake in start.board.snakes:
            snake.health = 100      # (no feature: only so that hazard rings spare them longer)
        packed = core.encode(start)
        acc = CoreAccumulator.of(net, packed, 0)
        reports, afters, feature_sets = [], [], [acc.active()]
        state = start
        for _ in range(40):
            packed, changes = core.apply_rules(packed, safe_moves(state, rng), report=True)
            state = core.decode(packed)
            if len(state.board.living_snakes) < n_snakes:
                break
            reports.append(changes)
            afters.append(packed.s.copy())
            acc.apply(packed, changes)
            feature_sets.append(acc.active())
        if best is None or len(reports) > len(best[1]):
            best = (start, reports, afters, feature_sets)
        if len(reports) >= MIN_WALK:
            break
    start, reports, afters, feature_sets = best
    if len(reports) < 2:
        raise RuntimeError(f"no walk with {n_snakes} snakes alive found")
    steps = len(reports)
    width = max(len(r) for r in reports)
    changes = np.zeros((steps, width, 4), np.int32)
    n_changes = np.zeros(steps, np.int64)
    for k, r in enumerate(reports):
        changes[k, :len(r)] = r
        n_changes[k] = len(r)
    s_after = np.stack(afters)
    acc = CoreAccumulator.of(net, core.encode(start), 0)
    hidden = np.zeros(net.w2.shape[1], np.float32)
    out = np.zeros(4, np.float32)

    def compiled(repeats=1, w2=net.w2, w2_scale=net.w2_scale):
        _walk(packed.g, s_after, changes, n_changes, 0, acc.offset, net.w1, acc.counts, acc.acc,
              net.w1_scale, w2, w2_scale, net.b2, net.w3, net.b3, hidden, out, repeats)

    # The same walk with W2 in float32 (the network's own weights dequantised, as version 1
    # of the weight file held them): what the int8 rows save.
    ones = np.ones_like(net.w2_scale)

    def compiled_float_w2(repeats=1):
        compiled(repeats, net.w2_float, ones)

    compiled(1)
    compiled_float_w2(1)
    # The numpy path: the same changes as feature indices switched on and off.
    diffs = []
    for a, b in zip(feature_sets, feature_sets[1:]):
        on, off = np.setdiff1d(b, a), np.setdiff1d(a, b)
        diffs.append((on.astype(np.intp), off.astype(np.intp)))
    signed = np.concatenate((net.w1, -net.w1))
    total = net.b1 + net.w1[feature_sets[0]].sum(0, dtype=np.int32)

    def numpy_path():
        nonlocal total
        for on, off in diffs:
            rows = signed.take(np.concatenate((on, off + net.n_features)), 0)
            total = total + np.add.reduce(rows, 0, np.int16)
            net.forward(net.pre_activation(total))
        for on, off in reversed(diffs):
            rows = signed.take(np.concatenate((off, on + net.n_features)), 0)
            total = total + np.add.reduce(rows, 0, np.int16)
            net.forward(net.pre_activation(total))

    times = interleaved({"compiled update+forward": (lambda: compiled(20), 40 * steps),
                         "compiled update+forward, float32 W2": (lambda: compiled_float_w2(20),
                                                                 40 * steps),
                         "numpy update+forward": (numpy_path, 2 * steps)}, budget)
    return times, steps


# --- timing ---------------------------------------------------------------------------


def interleaved(fns: dict, budget: float, rounds: int = 15) -> dict:
    """Time each ``fns[name] = (fn, calls)`` (``fn`` does ``calls`` operations and leaves
    the state as it found it) in microseconds per operation.

    CPU time of this process (``time.process_time``): the machine is shared, and CPU time
    is not inflated by waiting for a core; with one BLAS thread it is what the operation
    costs a worker. The candidates are run in interleaved rounds and each keeps its best
    round, so a burst of load from other processes hits all of them alike."""
    clock = time.process_time
    reps = {}
    for name, (fn, _) in fns.items():   # calibrate: one round ~ budget / rounds / len(fns)
        n = 1
        while True:
            t = clock()
            for _ in range(n):
                fn()
            if clock() - t > budget / rounds / len(fns) or n > 1 << 16:
                break
            n *= 2
        reps[name] = n
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, (fn, calls) in fns.items():
            n = reps[name]
            t = clock()
            for _ in range(n):
                fn()
            best[name] = min(best[name], (clock() - t) / (n * calls))
    return {name: v * 1e6 for name, v in best.items()}


_FLUSH = None


def cold_cache(net: Network, walks: list) -> dict:
    """Median time of one refresh and one update when neither ``W1`` nor the accumulator
    is in the CPU caches, as in a server where a game's next turn comes after other work:
    64 MB are written before each timed call."""
    global _FLUSH
    if _FLUSH is None:
        _FLUSH = np.zeros(64 << 20, dtype=np.uint8)
    clock = time.process_time
    upd, ref = [], []
    for walk in walks:
        half = len(walk.active) // 2
        for a, b, change in zip(walk.active, walk.active[1:half + 1], walk.changes):
            acc = Accumulator(net)
            acc.refresh(a)
            _FLUSH += 1
            t = clock()
            acc.apply(change)
            upd.append(clock() - t)
            _FLUSH += 1
            t = clock()
            acc.refresh(b)
            ref.append(clock() - t)
    return {"refresh, cold cache": statistics.median(ref) * 1e6,
            "update, cold cache": statistics.median(upd) * 1e6}


class Walk:
    """One run of states seen from one snake, forward and back to the start: the active
    features of each state and the change from each to the next."""

    def __init__(self, states: list[GameState], sid: str) -> None:
        states = states + states[-2::-1]
        parts = [feature_parts(s, s.board.snake(sid)) for s in states]
        self.active = [active_features(s, s.board.snake(sid)) for s in states]
        self.changes = [feature_change(a, b) for a, b in zip(parts, parts[1:])]


def measure_board(net: Network, side: int, n_snakes: int, length: int, rng: random.Random,
                  budget: float, ruleset: str = "standard", border: int = 0) -> dict:
    runs = [mid_game(side, n_snakes, length, rng, ruleset, border) for _ in range(4)]
    walks = [Walk(states, states[0].board.snakes[0].id) for states in runs]
    pairs = [(w.active[i], w.active[i + 1]) for w in walks for i in range(len(w.active) // 2)]
    refresh_cols = statistics.mean(len(b) for _, b in pairs)
    inc_cols, refreshed = [], 0
    for w in walks:
        for i in range(len(w.active) // 2):
            acc = Accumulator(net)
            acc.refresh(w.active[i])
            acc.apply(w.changes[i])
            inc_cols.append(acc.last_columns)
            refreshed += acc.last_refreshed
    state0 = runs[0][len(runs[0]) // 2]
    you0 = state0.board.snakes[0]

    # Every timed function leaves its accumulator where it found it.
    accs = [Accumulator(net) for _ in walks]
    for acc, walk in zip(accs, walks):
        acc.refresh(walk.active[0])
    steps = sum(len(w.changes) for w in walks)

    def updates():
        for acc, walk in zip(accs, walks):
            for change in walk.changes:
                acc.apply(change)

    def refreshes():
        for acc, walk in zip(accs, walks):
            for f in walk.active[1:]:
                acc.refresh(f)
        for acc, walk in zip(accs, walks):   # back to the start, untimed in effect: the
            acc.refresh(walk.active[0])      # same refreshes counted in `calls` below

    def updates_forward():
        for acc, walk in zip(accs, walks):
            for change in walk.changes:
                acc.apply(change)
                acc.scores()

    def refreshes_forward():
        for acc, walk in zip(accs, walks):
            for f in walk.active[1:]:
                acc.refresh(f)
                acc.scores()
        for acc, walk in zip(accs, walks):
            acc.refresh(walk.active[0])
            acc.scores()

    # One accumulator per state, built by update_to along the run; each timed step
    # copies the accumulator of state t and moves the copy to state t + 1 (what a search
    # does), so every step is a forward turn.
    steps_fwd = []
    for states in runs:
        sid = states[0].board.snakes[0].id
        acc = Accumulator(net)
        for st, nxt in zip(states, states[1:]):
            acc.update_to(st, st.board.snake(sid))
            steps_fwd.append((acc.copy(), nxt, sid))

    def turns_update_to(forward=False):
        for acc, nxt, sid in steps_fwd:
            c = acc.copy()
            c.update_to(nxt, nxt.board.snake(sid))
            if forward:
                c.scores()

    def turns_refresh(forward=False):
        for acc, nxt, sid in steps_fwd:
            c = acc.copy()
            c.refresh(active_features(nxt, nxt.board.snake(sid)))
            if forward:
                c.scores()

    cold = cold_cache(net, walks)
    pre = accs[0].pre_activation()
    fns = {
        "features": (lambda: active_features(state0, you0), 1),
        "features by parts": (lambda: feature_parts(state0, you0), 1),
        "refresh": (refreshes, steps + len(walks)),
        "update": (updates, steps),
        "forward": (lambda: net.forward(pre), 1),
        "update+forward": (updates_forward, steps),
        "refresh+forward": (refreshes_forward, steps + len(walks)),
        "turn: features + refresh": (turns_refresh, len(steps_fwd)),
        "turn: update_to (features included)": (turns_update_to, len(steps_fwd)),
        "turn: features + refresh + forward": (lambda: turns_refresh(True), len(steps_fwd)),
        "turn: update_to + forward": (lambda: turns_update_to(True), len(steps_fwd)),
    }
    t = interleaved(fns, budget * 4)
    t.update(cold)

    # 64 sibling states: joint moves of every snake from state0, the first 64 in which
    # the first snake (whose view is scored) survives.
    movers = [s.id for s in state0.board.living_snakes]
    siblings = []
    for combo in itertools.product(MOVES, repeat=len(movers)):
        child = apply_rules(state0, dict(zip(movers, combo)))
        you = child.board.snake(you0.id)
        if active_features(child, you) is not None:
            siblings.append((child, you))
            if len(siblings) == 64:
                break
    parent = Accumulator(net)
    parent.update_to(state0, you0)

    def one_at_a_time():
        for child, you in siblings:
            c = parent.copy()
            c.update_to(child, you)
            c.scores()

    def batched():
        pres = []
        for child, you in siblings:
            c = parent.copy()
            c.update_to(child, you)
            pres.append(c.pre_activation())
        net.forward(np.stack(pres))

    t.update(interleaved({
        "64 siblings one at a time, per state": (one_at_a_time, len(siblings)),
        "64 siblings batched, per state": (batched, len(siblings)),
    }, budget))
    return {"pairs": pairs, "refresh_cols": refresh_cols, "inc_cols": statistics.mean(inc_cols),
            "refreshed": refreshed, "times": t, "n_siblings": len(siblings)}


def quantisation_error(float_net: Network, feature_sets: list[np.ndarray]) -> dict:
    """Max and mean |quantised - float| over the outputs: the network as used (int8 ``W1``
    with per-hidden-unit scales, int8 ``W2`` with per-row scales) and, for comparison, ``W1``
    with per-feature-row scales instead (not exact in integers; ``W2`` int8 as used)."""
    q = float_net.quantise()
    f_out = np.stack([float_net.evaluate(a) for a in feature_sets])
    q_out = np.stack([q.evaluate(a) for a in feature_sets])
    # Per-row alternative: W1[f] ~ q_row[f] * s_row[f].
    w1 = float_net.w1
    s_row = np.abs(w1).max(axis=1, keepdims=True) / 127
    s_row[s_row == 0] = 1
    r_out = []
    for a in feature_sets:
        rows = np.rint(w1[a] / s_row[a]).astype(np.float32) * s_row[a]
        r_out.append(q.forward(float_net.b1 + rows.sum(axis=0)))   # W2 as the used one
    r_out = np.stack(r_out)
    best_f = f_out.argmax(axis=1)
    return {
        "per-unit max": float(np.abs(q_out - f_out).max()),
        "per-unit mean": float(np.abs(q_out - f_out).mean()),
        "per-row max": float(np.abs(r_out - f_out).max()),
        "per-row mean": float(np.abs(r_out - f_out).mean()),
        "best move changed": float((q_out.argmax(axis=1) != best_f).mean()),
        "states": len(feature_sets),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.nnue",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing budget")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    budget = 0.05 if args.quick else 0.3
    rng = random.Random(args.seed)

    t0 = time.perf_counter()
    float_net = Network.random(args.seed)
    net = float_net.quantise()
    print(f"network: random seed {args.seed}, 63720 -> 512 -> 512 -> 4, int8 first layer "
          f"({time.perf_counter() - t0:.1f} s to build)")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nnue.npz"
        t = time.perf_counter()
        net.save(path, {"note": "bench"})
        save_s = time.perf_counter() - t
        t = time.perf_counter()
        Network.load(path)
        load_s = time.perf_counter() - t
        size = path.stat().st_size
    print(f"weight file: {size / 1e6:.1f} MB ({size} bytes), save {save_s:.2f} s, "
          f"load {load_s:.2f} s (random weights barely compress)")
    if DEFAULT_WEIGHTS.exists():
        t = time.perf_counter()
        Network.load(DEFAULT_WEIGHTS)
        print(f"shipped {DEFAULT_WEIGHTS.name}: {DEFAULT_WEIGHTS.stat().st_size / 1e6:.1f} MB, "
              f"load {time.perf_counter() - t:.2f} s")

    results = {}
    boards = (("11x11, 4 snakes", 11, 4, 10, "standard", 0),
              ("19x19, 8 snakes", 19, 8, 12, "standard", 0),
              ("19x19 royale, 8 snakes, 2 hazard rings", 19, 8, 12, "royale", 2))
    for label, side, n, length, ruleset, border in boards:
        r = measure_board(net, side, n, length, rng, budget, ruleset, border)
        results[label] = r
        t = r["times"]
        print(f"\n{label} ({len(r['pairs'])} turns, {r['n_siblings']} siblings):")
        print(f"  columns touched: refresh {r['refresh_cols']:.1f}, incremental "
              f"{r['inc_cols']:.1f} (refresh fallback on {r['refreshed']} turns)")
        compiled_times, walked = compiled_path(net, side, n, length, rng, budget, ruleset, border)
        t.update(compiled_times)
        print("  (the rows above 'compiled': the service's session path, numpy)")
        for name, us in t.items():
            print(f"  {name:40s} {us:8.1f} us")
        print(f"  (the last three rows: a walk of {walked} turns, all {n} snakes alive)")
        print(f"  compiled / numpy update+forward: "
              f"{t['compiled update+forward'] / t['numpy update+forward']:.2f}")
        batched_ratio = (t['64 siblings batched, per state']
                         / t['64 siblings one at a time, per state'])
        print(f"  incremental / refresh time: {t['update'] / t['refresh']:.2f} "
              f"({t['update, cold cache'] / t['refresh, cold cache']:.2f} "
              f"with cold caches); per turn, state in: "
              f"{t['turn: update_to (features included)'] / t['turn: features + refresh']:.2f}; "
              f"batched / one at a time: {batched_ratio:.2f}")

    feature_sets = [b for r in results.values() for _, b in r["pairs"]]
    err = quantisation_error(float_net, feature_sets)
    print(f"\nquantisation (random net, {err['states']} states, int8 W2 in both): W1 with a "
          f"per-hidden-unit scale (used): "
          f"max {err['per-unit max']:.2e}, mean {err['per-unit mean']:.2e}; per-feature-row "
          f"scale: max {err['per-row max']:.2e}, mean {err['per-row mean']:.2e}; best move "
          f"changed in {100 * err['best move changed']:.1f}% of states")

    t = results["11x11, 4 snakes"]["times"]
    # The server's turn, state in and scores out: update_to (features included) +
    # forward, against active_features + refresh + forward.
    print(f"nnue: compiled update+forward {t['compiled update+forward']:.1f} us (int8 W2; "
          f"{t['compiled update+forward, float32 W2']:.1f} us with float32 W2), numpy path "
          f"{t['numpy update+forward']:.1f} us; session turn (update_to + forward) "
          f"{t['turn: update_to + forward']:.0f} us, refresh+forward "
          f"{t['turn: features + refresh + forward']:.0f} us on 11x11 with 4 snakes")


if __name__ == "__main__":
    main()
