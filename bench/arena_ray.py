"""What playing a match on Ray costs: ``python -m bench.arena_ray``.

    python -m bench.arena_ray [--games 40] [--cpus 2] [--size 11] [--nodes 2000]
        [--rounds 1] [--seed 1] [PLAYER PLAYER ...]

Plays the same arena match (``--games`` games, the players below, ``--seed``) twice on
this machine: in ``--cpus`` worker processes (``python -m snake.arena --parallel CPUS``)
and as tasks on a local Ray of ``--cpus`` CPUs (``--parallel CPUS --ray local``), and
prints the games per hour of each and the overhead of Ray: its wall time over the
processes', less one. The local Ray is started before its match and not timed (its start,
a few seconds, is printed apart): on a cluster it is started once, while the overhead per
game is what a match pays. ``--rounds`` plays both matches that many times, in alternate
order, and counts each one's best (the steadiest figure on a shared machine).

The players default to two fixed-node searches (the default's and one without its value
head, ``--nodes`` a move, the clock set far out): the games are then the same both ways,
which the benchmark checks (every game's turns and results), and long enough that the
figure is a match's rather than Ray's start-up. The last line reads ``arena_ray: parallel
X games/h, ray Y games/h, overhead Z %``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path

from snake.arena.__main__ import main as arena


def play(players: list[str], args: argparse.Namespace, folder: Path, ray: bool) -> float:
    """Play the match once into ``folder``; its wall time in seconds."""
    argv = [*players, "-g", str(args.games), "--size", str(args.size), "--seed",
            str(args.seed), "--parallel", str(args.cpus), "-q", "-o", str(folder)]
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):     # (its report: not what is measured)
        code = arena(argv + (["--ray", "local"] if ray else []))
    seconds = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"arena_ray: the match {'on ray' if ray else 'in processes'} "
                         f"failed ({code})")
    return seconds


def games_of(folder: Path) -> list[tuple]:
    """Each game's index, turns and results, in order (what must not depend on the way)."""
    entries = [json.loads(x) for x in (folder / "games.jsonl").read_text().splitlines()]
    return sorted((e["index"], e["turns"], sorted(e["results"].items())) for e in entries)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.arena_ray",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("players", nargs="*", metavar="PLAYER",
                    help="arena players (default: two fixed-node searches)")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--cpus", type=int, default=2, help="processes, and the local Ray's CPUs")
    ap.add_argument("--size", type=int, default=11)
    ap.add_argument("--nodes", type=int, default=2000, help="the default players' nodes a move")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    players = args.players or [
        f"search[max_nodes={args.nodes},think_ms=600000]",
        f"nohead=search[max_nodes={args.nodes},think_ms=600000,value_head=none]"]
    import ray

    best = {"parallel": float("inf"), "ray": float("inf")}
    with tempfile.TemporaryDirectory(prefix="arena-ray-") as tmp:
        os.environ.setdefault("RAY_worker_niceness", "0")
        t0 = time.perf_counter()
        # Started here, so that the match on Ray plays on it (snake.arena.cluster.connect);
        # a process already connected (a test's) plays on its own
        ours = not ray.is_initialized()
        if ours:
            ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
        started = time.perf_counter() - t0
        try:
            for round_ in range(args.rounds):
                ways = ["parallel", "ray"] if round_ % 2 == 0 else ["ray", "parallel"]
                for way in ways:
                    folder = Path(tmp) / f"{way}-{round_}"
                    seconds = play(players, args, folder, way == "ray")
                    best[way] = min(best[way], seconds)
                    print(f"round {round_ + 1}, {way}: {args.games} games in {seconds:.1f} s",
                          flush=True)
                if games_of(Path(tmp) / f"parallel-{round_}") != games_of(
                        Path(tmp) / f"ray-{round_}"):
                    raise SystemExit("arena_ray: the two ways played different games "
                                     "(players that are not reproducible?)")
        finally:
            if ours:
                ray.shutdown()
    rate = {way: args.games / seconds * 3600 for way, seconds in best.items()}
    overhead = best["ray"] / best["parallel"] - 1
    print(f"local Ray of {args.cpus} CPUs started in {started:.1f} s (not counted); "
          f"the same {args.games} games both ways, best of {args.rounds}")
    print(f"arena_ray: parallel {rate['parallel']:.0f} games/h, ray {rate['ray']:.0f} games/h, "
          f"overhead {overhead * 100:+.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
