"""Do searches with the network blended in play alike? Fixed-node compiled searches with a
random network, to compare checkouts (what :mod:`bench.same_play` does without a network).

    python -m bench.blended_play --out FILE [--nodes 3000] [--positions 6]
    cd OLD && PYTHONPATH=. python NEW/bench/blended_play.py --out old.jsonl

A random quantised network (``Network.random(1, HIDDEN, quantise=True)``: the same on every
checkout that has it) is blended into the leaves at weights 0.5 and 1 (``evaluator=nnue``,
``network_weight``) of node-limited compiled searches (one thread, the clock set far out)
on :func:`bench.search.positions`' duels and four-snake positions, each from a fresh
accumulator. Each search is one JSON line (snakes, weight, move, score, depth, nodes, root
scores, the line), so two checkouts that search alike write the same file to the byte:
``cmp old.jsonl new.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

if __package__ in (None, ""):       # run as a file from another checkout (docstring)
    sys.path.insert(0, str(Path.cwd()))

from bench.search import positions  # noqa: E402
from nnue.accumulator import Accumulator  # noqa: E402
from nnue.network import HIDDEN, Network  # noqa: E402
from snake.search.strategy import SearchStrategy  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.blended_play",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="where to write the record")
    parser.add_argument("--nodes", type=int, default=3000, help="nodes a search (3000)")
    parser.add_argument("--positions", type=int, default=6,
                        help="positions of each kind, duels and four snakes (6)")
    args = parser.parse_args(argv)
    network = Network.random(1, tuple(HIDDEN), quantise=True)
    lines = 0
    with args.out.open("w") as out:
        for n_snakes in (2, 4):
            for request in positions(n_snakes, args.positions):
                for weight in (0.5, 1.0):
                    strategy = SearchStrategy(network, evaluator="nnue", engine="compiled",
                                              max_nodes=args.nodes, think_ms=600_000,
                                              max_concurrent=None, network_weight=weight,
                                              threads=1)
                    r = strategy.search(request, Accumulator(network))
                    out.write(json.dumps({"snakes": n_snakes, "weight": weight, "move": r.move,
                                          "score": r.score, "depth": r.depth, "nodes": r.nodes,
                                          "scores": r.scores, "pv": r.pv}) + "\n")
                    lines += 1
    print(f"{lines} searches at {args.nodes} nodes: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
