"""Search speed: nodes per second and the depth reached in a fixed thinking time.

    python -m bench.search [--ms 400] [--positions 3] [--network [--hidden 128 32 | --weights F]]
        [--value-head F] [--profile] [--threads] [--pvs] [--smp THREADS]
        [--against COMMIT [--rounds 3] [--nodes N]]

Positions: a few turns into seeded games on 11x11 standard, 1v1 and 4 snakes, every snake
played by a quick search (so the positions are ones a game really reaches). For each
position, engine (compiled, Python) and evaluator (``voronoi``: board control, joint
replies of the two nearest opponents within six moves, as ``search-joint`` searches;
``default``: the default ``search`` as its variant and the environment make it, with 4
snakes the three nearest by best replies valued by the hungry weights, in 1v1 board
control corrected by the shipped value head, ``weights/value-duel.npz``);
with ``--network`` also the NNUE: a random network, 512x512 as shipped or ``--hidden``'s
sizes, as no trained one is needed for speed, or the file ``--weights``; the compiled search
also with board control and the network half and half, as ``search-blend``; with
``--value-head`` also the compiled search valuing leaves by that learned head,
:mod:`snake.evaluation.value_head`, in the positions it was trained for), one search of ``--ms``
milliseconds (wall clock: the machine may be shared, so the CPU time of the process is printed
too, and nodes/s by CPU time). A node is one turn played by the rules engine. Figures are
medians over the positions.

Also: the overrun of the deadline (the search's own stop, what the margin must cover),
and with ``--profile`` where one alpha-beta search spends its time.

The compiled search (the default ``search``: :mod:`snake.search.compiled.tree`) is measured first,
beside the Python searches in the same run, with its speed-up over the Python alpha-beta.
``--threads`` also measures two compiled searches at once in one process (two threads, one
each): their combined nodes per second against one search alone. Every other figure is of
one thread: the default search takes every core (lazy SMP, :mod:`snake.search.cores`), so the
rows above ask it for one. ``--against COMMIT`` compares the default search with COMMIT's,
each in its own checkout and process (a ``git archive`` in the temporary folder, compiled
there once), alternated ``--rounds`` times on the same positions: nodes per second on one
thread, this tree's on every core, and time to depth (the deepest depth both completed:
the ratio of the times); with ``--nodes N``, searches of N nodes on one thread and the
time a node, the best of the rounds per position (the same work each time: the steadiest
comparison on a noisy machine). ``--smp THREADS`` measures
the default search on THREADS threads (lazy SMP with deferral: one search, one table)
against one: the time to a fixed depth (one more than one thread completes in ``--ms``), the
runs alternated ``--rounds`` times, same positions, empty tables; the median ratio over the
positions, and their geometric mean with Student's 95 % interval (the same code moves by 0.05–0.08
from run to run: read the interval before a variant's figure), and the ratio's two parts:
the nodes the threads searched between them and their nodes per second, each over one
thread's (work the threads duplicate, or cores that give less than one each);
``--against`` ends with this measurement on every core.
``--pvs`` measures what principal
variation search saves: nodes and time to a fixed depth with and without it, same positions
(the values found must be equal).

The last line reads ``search: N nodes/s, depth D on 11x11 1v1`` (the default row: the
compiled alpha-beta as the default searches duels, wall clock).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from snake.arena.stats import t95
from snake.board import MoveRequest
from snake.rules import play_turn
from snake.rules.start import new_game
from snake.search.strategy import SearchStrategy, make_search_strategy


def positions(n_snakes: int, count: int, turns: int = 15) -> list[MoveRequest]:
    """``count`` positions ``turns`` turns into seeded 11x11 games (snake "A" to move)."""
    out: list[MoveRequest] = []
    seed = 1000
    while len(out) < count:
        seed += 1
        rng = random.Random(seed)
        ids = [chr(ord("A") + i) for i in range(n_snakes)]
        state = new_game("standard", 11, 11, ids, rng=rng)
        quick = SearchStrategy(max_nodes=60, think_ms=60_000)
        for _ in range(turns):
            moves = {s.id: quick.choose(MoveRequest(state, s), None).move
                     for s in state.board.living_snakes}
            state = play_turn(state, moves, rng)
        you = state.board.snake("A")
        if you is None or not you.alive or len(state.board.living_snakes) < 2:
            continue
        out.append(MoveRequest(state, you, snakes_at_start=n_snakes))
    return out


def measure(strategy: SearchStrategy, requests: list[MoveRequest], accumulator_for) -> dict:
    rates, cpu_rates, depths, overruns, nodes = [], [], [], [], []
    for request in requests:
        c0 = time.process_time()
        t0 = time.perf_counter()
        result = strategy.search(request, accumulator_for(request), started=t0)
        wall = time.perf_counter() - t0
        cpu = max(time.process_time() - c0, 1e-9)
        rates.append(result.nodes / wall)
        cpu_rates.append(result.nodes / cpu)
        depths.append(result.depth)
        nodes.append(result.nodes)
        overruns.append(wall * 1000 - strategy.think_ms)
    return {
        "nodes/s": statistics.median(rates), "cpu nodes/s": statistics.median(cpu_rates),
        "depth": statistics.median(depths), "nodes": statistics.median(nodes),
        "max overrun ms": max(overruns),
    }


def two_at_once(requests: list[MoveRequest], ms: float) -> None:
    """Nodes per second of one compiled search alone, then of two at once in two threads of
    this process (the compiled search releases the GIL), on the same positions. Every
    search runs in a thread of its own, so that each starts from an empty table (a thread
    keeps its table between searches: one that had searched the position before would
    find its early iterations there), and is timed by its own elapsed time."""

    strategy = SearchStrategy(think_ms=ms, engine="compiled", max_concurrent=None, threads=1)

    def rate(request: MoveRequest, out: list[float]) -> None:
        found = strategy.search(request)
        out.append(found.nodes / (found.elapsed_ms / 1000))

    def in_threads(chosen: list[MoveRequest]) -> list[float]:
        out: list[float] = []
        threads = [threading.Thread(target=rate, args=(r, out)) for r in chosen]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return out

    alone = [rate_ for r in requests for rate_ in in_threads([r])]
    together = in_threads(requests[:2])
    one = statistics.mean(alone[:2])
    both = sum(together)
    print(f"two compiled searches at once in one process: {both:,.0f} nodes/s together, "
          f"{one:,.0f} for one alone: {both / one:.2f}x")


def pvs_effect(count: int) -> None:
    """Nodes and time of the compiled search to a fixed depth (8 in 1v1, 6 with 4 snakes)
    with PVS and without, from an empty table, on the same positions."""
    from snake.core import encode
    from snake.search.compiled.threads import run
    from snake.search.plan import plan_snakes

    for n_snakes, depth in ((2, 8), (4, 6)):
        totals = {False: [0, 0.0], True: [0, 0.0]}
        for request in positions(n_snakes, count):
            packed = encode(request.state)
            index = {s.id: i for i, s in enumerate(request.state.board.snakes)}
            plan = plan_snakes(request.state, request.you.id)
            values = {}
            for pvs in (False, True):
                t0 = time.process_time()
                found = run(packed, index[plan.you], [index[o] for o in plan.opponents],
                            [index[c] for c in plan.cheap], deadline=time.perf_counter() + 3600,
                            max_depth=depth, pvs=pvs)
                totals[pvs][0] += found.nodes
                totals[pvs][1] += time.process_time() - t0
                values[pvs] = found.score
            if abs(values[True] - values[False]) > 1e-9:
                raise SystemExit(f"PVS changed the value: {values}")
        (n0, t0), (n1, t1) = totals[False], totals[True]
        print(f"11x11 {n_snakes} snakes, depth {depth}, {count} positions: PVS {n1:,} nodes "
              f"{t1:.2f} s CPU, without {n0:,} nodes {t0:.2f} s: {n1 / n0:.2f}x the nodes, "
              f"{t1 / t0:.2f}x the time, equal values")


def geometric_mean_interval(ratios: list[float]) -> tuple[float, float, float]:
    """The geometric mean of ``ratios`` and its 95 % interval over them: the mean of their
    logarithms with Student's interval (:func:`snake.arena.stats.t95`, as the arena's mean
    place), back from logarithms. Lazy SMP's time to a depth varies from run to run of the
    same position by more than the differences screened; the interval says how far one
    run's figure can be trusted."""
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    half = t95(len(logs) - 1) * statistics.stdev(logs) / len(logs) ** 0.5
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def smp_effect(count: int, ms: float, threads: int, rounds: int = 3) -> None:
    """Time to a fixed depth, the default search on ``threads`` threads against one: per
    position, the depth one thread completes in ``ms`` plus one is the target; then each
    configuration searches to exactly that depth (``max_depth``, no deadline), from an
    empty table (each search in a fresh thread, so with a fresh thread table), alternated
    ``rounds`` times. The ratio is of the medians per position; the line gives its median
    over the positions. With several threads the search is done when any thread completes
    the depth (:func:`snake.search.compiled.threads.run`)."""
    print(f"time to a fixed depth, the default search on {threads} threads against one: "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (helpers only help "
          f"on idle cores)")

    def timed(request: MoveRequest, k: int, **options):
        strategy = make_search_strategy("search", overrides={"threads": k, **options})
        box = []

        def go():
            t0 = time.perf_counter()
            found = strategy.search(request, None, started=t0)
            box.append((found, time.perf_counter() - t0))

        runner = threading.Thread(target=go)
        runner.start()
        runner.join()
        return box[0]

    for n_snakes, label in ((2, "1v1"), (4, "4 snakes")):
        cases = []
        for request in positions(n_snakes, count):
            found, _ = timed(request, 1, think_ms=ms)
            if found.stopped in ("proven", "single move"):
                continue        # nothing left to search deeper
            cases.append((request, found.depth + 1))
        times: dict[int, list[list[float]]] = {1: [[] for _ in cases],
                                               threads: [[] for _ in cases]}
        nodes: dict[int, list[list[int]]] = {1: [[] for _ in cases],
                                             threads: [[] for _ in cases]}
        for _ in range(rounds):
            for k in (1, threads):
                for c, (request, depth) in enumerate(cases):
                    found, wall = timed(request, k, think_ms=600_000, max_depth=depth)
                    if found.depth < depth and found.stopped not in ("proven", "single move"):
                        raise SystemExit(f"depth {depth} not completed ({found.stopped})")
                    times[k][c].append(wall)
                    nodes[k][c].append(found.nodes)
        one = [statistics.median(column) for column in times[1]]
        ratios = [statistics.median(column) / o for column, o in zip(times[threads], one)]
        mean, low, high = geometric_mean_interval(ratios)
        # The time's ratio is the nodes' (the work the threads did between them) over
        # the node rate's (what the cores gave): which one keeps it from 1 / threads.
        work, _, _ = geometric_mean_interval(
            [statistics.median(many) / statistics.median(alone)
             for many, alone in zip(nodes[threads], nodes[1])])
        rate, _, _ = geometric_mean_interval(
            [(sum(many_n) / sum(many_t)) / (sum(alone_n) / sum(alone_t))
             for many_n, many_t, alone_n, alone_t
             in zip(nodes[threads], times[threads], nodes[1], times[1])])
        print(f"11x11 {label:<8} time to a fixed depth (depths {min(d for _, d in cases)}-"
              f"{max(d for _, d in cases)}): with {threads} threads "
              f"{statistics.median(ratios):.2f}x one thread's (median over {len(cases)} "
              f"positions, {rounds} rounds; geometric mean {mean:.2f}x [{low:.2f}, "
              f"{high:.2f}], 95 % over the positions; per position "
              f"{', '.join(f'{r:.2f}' for r in ratios)}; one thread "
              f"{statistics.median(one) * 1000:,.0f} ms)")
        print(f"11x11 {label:<8} of which: the {threads} threads searched {work:.2f}x one "
              f"thread's nodes to the depth, at {rate:.2f}x its nodes per second (geometric "
              f"means over the positions; two separate searches at once: --threads)")


#: Run in a checkout (this one, or an archive of another commit) as ``python -c PROBE ms
#: count threads``: the default ``search`` on :func:`positions`' positions, 1v1 and 4 snakes,
#: each search in a thread of its own (so from an empty table), printing per search its
#: nodes, time (its own, which leaves out the table's making), threads and when each depth
#: was completed. It uses only what every
#: commit since the compiled search has (bench.search.positions, make_search_strategy, a
#: result's ``iterations``), so that one run can compare this tree with an older one.
PROBE = """
import json, sys, threading, time
from bench.search import positions
from snake.search.strategy import make_search_strategy
ms, count, threads = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
nodes = int(sys.argv[4]) if len(sys.argv) > 4 else 0
options = {"think_ms": ms, "threads": threads}
if nodes:
    options["max_nodes"] = nodes
strategy = make_search_strategy("search", overrides=options)
out = []
for n in (2, 4):
    for request in positions(n, count):
        box = []
        def go():
            t0 = time.perf_counter()
            found = strategy.search(request, None, started=t0)
            box.append((found, time.perf_counter() - t0))
        runner = threading.Thread(target=go)
        runner.start()
        runner.join()
        found, wall = box[0]
        wall = getattr(found, "elapsed_ms", wall * 1000) / 1000   # the search's own time
        out.append({"snakes": n, "nodes": found.nodes, "wall": wall,
                    "threads": getattr(found, "threads", 1),
                    "times": {str(d): ms_ for d, _, _, _, ms_ in found.iterations}})
print("PROBE " + json.dumps(out))
"""


def archive(ref: str) -> Path:
    """A checkout of commit ``ref``'s engine (``git archive`` of what a search needs) in the
    temporary folder, made once and reused: it compiles its own code there."""
    root = Path(__file__).resolve().parents[1]
    sha = subprocess.run(["git", "rev-parse", "--verify", f"{ref}^{{commit}}"], cwd=root,
                         check=True, capture_output=True, text=True).stdout.strip()
    folder = Path(tempfile.gettempdir()) / f"nuppeppou-bench-{sha[:12]}"
    if not (folder / ".complete").exists():
        folder.mkdir(exist_ok=True)
        tar = subprocess.run(["git", "archive", sha, "snake", "nnue", "bench", "weights/*.json",
                              "weights/value-duel.npz"], cwd=root, check=True,
                             capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=tar, check=True)
        (folder / ".complete").write_text(sha)
    return folder


def probe(tree: Path, ms: float, count: int, threads: int, nodes: int = 0) -> list[dict]:
    """:data:`PROBE` run in ``tree``, in a process of its own (its own compiled code);
    with ``nodes``, searches of that many nodes (one thread) instead of ``ms``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "NUPPEPPOU_NUMBA_CACHE_BASE", "PYTHONPATH")}
    done = subprocess.run([sys.executable, "-c", PROBE, str(ms), str(count), str(threads),
                           str(nodes)], cwd=tree, env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("PROBE ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"the probe failed in {tree}:\n{done.stderr[-2000:]}")
    return json.loads(lines[-1][len("PROBE "):])


def time_to_depth(a: list[dict], b: list[dict]) -> float:
    """The median over positions of ``b``'s time to the deepest depth both completed in
    every round, over ``a``'s (runs: one list of searches per round, same positions)."""
    ratios = []
    for k in range(len(a[0])):
        common = set.intersection(*(set(run[k]["times"]) for run in a + b))
        if not common:
            continue
        depth = max(common, key=int)
        ratios.append(statistics.median(run[k]["times"][depth] for run in b)
                      / max(statistics.median(run[k]["times"][depth] for run in a), 1e-6))
    return statistics.median(ratios) if ratios else float("nan")


def against_at_nodes(ref: str, nodes: int, count: int, rounds: int) -> None:
    """COMMIT's default search against this tree's at a fixed node count, one thread:
    the time a node, the best of ``rounds`` alternated runs per position (the same work
    each run, so the best is the least disturbed one), median over the positions."""
    old, here = archive(ref), Path(__file__).resolve().parents[1]
    runs: dict[str, list[list[dict]]] = {ref: [], "this tree": []}
    for _ in range(rounds):
        for label, tree in ((ref, old), ("this tree", here)):
            runs[label].append(probe(tree, 60_000, count, 1, nodes))
    print(f"against {ref} at {nodes:,} nodes a search, one thread, {count} positions each, "
          f"best of {rounds} alternated runs per position, median:")
    for n_snakes, label in ((2, "1v1"), (4, "4 snakes")):
        ns = {}
        for name, r in runs.items():
            per = [[s["wall"] / max(s["nodes"], 1) * 1e9 for s in run if s["snakes"] == n_snakes]
                   for run in r]
            ns[name] = statistics.median(min(column) for column in zip(*per))
        print(f"11x11 {label:<8} ns a node: {ref} {ns[ref]:,.0f}, this tree "
              f"{ns['this tree']:,.0f} ({ns['this tree'] / ns[ref]:.3f}x)")


def against(ref: str, ms: float, count: int, rounds: int) -> None:
    """The default search of commit ``ref`` (its own checkout and compiled code, one
    thread, as it played) against this tree's, on one thread and on every core, on the same
    positions: nodes per second and time to depth, the runs alternated ``rounds`` times so
    that a noisy machine disturbs each alike."""
    from snake.search.cores import available_cores

    old, here, cores = archive(ref), Path(__file__).resolve().parents[1], available_cores()
    configs = [(ref, old, 1), ("this tree", here, 1), (f"this tree, {cores} threads", here, cores)]
    runs: dict[str, list[list[dict]]] = {label: [] for label, _, _ in configs}
    for _ in range(rounds):
        for label, tree, threads in configs:
            runs[label].append(probe(tree, ms, count, threads))
    print(f"against {ref}: its default search on one thread (as it played) and this tree's "
          f"on one and on {cores}, {ms:g} ms, {count} positions each, {rounds} rounds "
          f"alternated, medians:")
    for n_snakes, label in ((2, "1v1"), (4, "4 snakes")):
        picked = {name: [[s for s in run if s["snakes"] == n_snakes] for run in r]
                  for name, r in runs.items()}
        rate = {name: statistics.median(s["nodes"] / s["wall"] for run in r for s in run)
                for name, r in picked.items()}
        old_name, one, many = (c[0] for c in configs)
        print(f"11x11 {label:<8} nodes/s: {ref} {rate[old_name]:,.0f}, this tree "
              f"{rate[one]:,.0f} ({rate[one] / rate[old_name]:.2f}x), with {cores} threads "
              f"{rate[many]:,.0f} in all")
        print(f"11x11 {label:<8} time to depth: this tree "
              f"{time_to_depth(picked[old_name], picked[one]):.2f}x {ref}'s; with {cores} "
              f"threads {time_to_depth(picked[one], picked[many]):.2f}x one thread's, "
              f"{time_to_depth(picked[old_name], picked[many]):.2f}x {ref}'s")
    smp_effect(count, ms, cores, rounds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.search",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--ms", type=float, default=400.0, help="thinking time per search (400)")
    parser.add_argument("--positions", type=int, default=3, help="positions per scenario (3)")
    parser.add_argument("--network", action="store_true",
                        help="also measure the NNUE evaluator (random 512x512 network)")
    parser.add_argument("--hidden", type=int, nargs=2, default=None, metavar=("H1", "H2"),
                        help="--network: the random network's hidden sizes (512 512)")
    parser.add_argument("--weights", default=None, help="--network: this network file instead")
    parser.add_argument("--value-head", default=None,
                        help="also measure the compiled search with this learned value head")
    parser.add_argument("--profile", action="store_true",
                        help="profile one alpha-beta search on 11x11 1v1")
    parser.add_argument("--threads", action="store_true",
                        help="also measure two compiled searches at once in one process")
    parser.add_argument("--smp", type=int, default=0, metavar="THREADS",
                        help="also measure the time to a fixed depth on THREADS threads "
                             "against one")
    parser.add_argument("--pvs", action="store_true",
                        help="also measure nodes and time to a fixed depth with and without PVS")
    parser.add_argument("--against", default=None, metavar="COMMIT",
                        help="also compare the default search with COMMIT's (nodes/s, time "
                             "to depth; one thread and every core)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="--against, --smp: rounds of runs, alternated (3)")
    parser.add_argument("--nodes", type=int, default=0,
                        help="--against: searches of this many nodes instead of --ms, and the "
                             "time a node (the steadiest A/B on a noisy machine)")
    args = parser.parse_args(argv)

    network = None
    if args.network or args.weights:
        from nnue.network import HIDDEN, Network
        network = (Network.load(args.weights) if args.weights else
                   Network.random(1, tuple(args.hidden or HIDDEN), quantise=True))
        print(f"network: {args.weights or 'random'}, "
              f"hidden {network.hidden[0]}x{network.hidden[1]}")

    head = None
    if args.value_head:
        from snake.evaluation.value_head import load_head
        head = load_head(args.value_head)
        print(f"value head: {args.value_head}, hidden {head.hidden}, for {head.snakes} snakes")

    def no_accumulator(request):
        return None

    def fresh_accumulator(request):
        from nnue.accumulator import Accumulator
        return Accumulator(network)

    headline = None
    for n_snakes, label in ((2, "1v1"), (4, "4 snakes")):
        requests = positions(n_snakes, args.positions)
        python_rate = None
        for engine, evaluator in ([("compiled", "voronoi"), ("python", "voronoi")]
                                  + [("compiled", "default")]
                                  + ([("compiled", "head")]
                                     if head is not None and head.covers(n_snakes) else [])
                                  + ([("compiled", "nnue"), ("compiled", "blend"),
                                      ("python", "nnue")] if network else [])):
            if evaluator == "default":  # as served: the variant's options, its duel head
                strategy = make_search_strategy("search", overrides={"think_ms": args.ms,
                                                                     "threads": 1})
            else:
                extra = {}
                if evaluator == "head":     # the head's own style, so that it is the one used
                    extra = dict(value_head=args.value_head, style=head.style, multi_style=None)
                strategy = SearchStrategy(network,
                                          evaluator={"blend": "nnue",
                                                     "head": "voronoi"}.get(evaluator, evaluator),
                                          think_ms=args.ms, engine=engine, max_concurrent=None,
                                          network_weight=0.5 if evaluator == "blend" else 1.0,
                                          threads=1, **extra)
            acc = fresh_accumulator if evaluator in ("nnue", "blend") else no_accumulator
            m = measure(strategy, requests, acc)
            print(f"11x11 {label:<8} {strategy.engine:<8} {evaluator:<7}: "
                  f"{m['nodes/s']:9,.0f} nodes/s (CPU time {m['cpu nodes/s']:9,.0f}), "
                  f"depth {m['depth']:g} in {args.ms:g} ms, {m['nodes']:,.0f} nodes, "
                  f"deadline overrun at most {m['max overrun ms']:.2f} ms")
            if (engine, evaluator) == ("compiled", "voronoi"):
                compiled = m
            elif evaluator == "default" and n_snakes == 2:
                headline = m
            elif (engine, evaluator) == ("python", "voronoi"):
                python_rate = m["cpu nodes/s"]
        print(f"11x11 {label}: compiled {compiled['cpu nodes/s'] / python_rate:.0f}x the Python "
              f"alpha-beta's nodes/s (CPU time, same positions, same run)")

    if args.threads:
        two_at_once(positions(2, 2), args.ms)

    if args.pvs:
        pvs_effect(max(args.positions, 6))

    if args.smp > 1:
        smp_effect(max(args.positions, 6), args.ms, args.smp, args.rounds)

    if args.against:
        if args.nodes:
            against_at_nodes(args.against, args.nodes, max(args.positions, 6), args.rounds)
        else:
            against(args.against, args.ms, max(args.positions, 6), args.rounds)

    if args.profile:
        request = positions(2, 1)[0]
        strategy = SearchStrategy(think_ms=args.ms, threads=1)
        profiler = cProfile.Profile()
        profiler.enable()
        strategy.search(request)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(10)
        print(out.getvalue())

    assert headline is not None
    print(f"search: {headline['nodes/s']:.0f} nodes/s, depth {headline['depth']:g} on 11x11 1v1")


if __name__ == "__main__":
    main()
