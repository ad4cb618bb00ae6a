"""Decisions kept as data: 341 positions with the moves (and scores) every strategy gave.

``tests/data/decisions.jsonl.gz`` holds, per line, a ``/move`` request (positions from
33 games of flood-fill and random snakes across every ruleset, board size and the hazard
maps) and, by strategy, ``[move, {move: score}]``: ``floodfill`` (flood-fill sums),
``seed`` (the shipped network's scores), ``search`` (alpha-beta, board control, 150 nodes),
``search-nnue`` (alpha-beta with the network, 60 nodes) and ``default`` (the service's
default strategy, the compiled search with its value head in duels and its hungry weights
with three or more snakes, 2000 nodes: 89 standard 11x11 duels and 11 four-snake games
among the positions).
Node limits make the searches reproducible. The expected values were recorded before the
rules were reshaped into ``snake/rules/`` (issue 11), and ``default``'s at 4c2e08c, before
the house was reshaped by concept (issue 55), so a reshaping that changes no behaviour
keeps every line.

A change that is *meant* to change decisions (a new network, a new evaluation) rewrites
the file, and says so in its commit::

    python -m tests.test_decisions --rewrite
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from nnue.accumulator import Accumulator
from nnue.network import load_default
from snake.board import parse_request
from snake.search.strategy import SearchStrategy, make_search_strategy
from snake.strategies import get_strategy

DATA = Path(__file__).parent / "data" / "decisions.jsonl.gz"


#: Thinking time of the searches here: none to speak of, so that the node limit alone stops
#: them (``think_ms=None`` would take it from the game's timeout, and a loaded machine
#: would then cut a search short and change its decision).
UNTIMED = float("inf")


def default_strategy() -> SearchStrategy:
    """The service's default (``search``), stopped by its node limit alone."""
    return make_search_strategy("search", overrides={"max_nodes": 2000, "think_ms": UNTIMED})


def strategies(network):
    return {
        "floodfill": get_strategy("floodfill"),
        "seed": get_strategy("seed", network=network),
        "search": SearchStrategy(None, think_ms=UNTIMED, max_nodes=150, max_concurrent=None),
        "search-nnue": SearchStrategy(network, evaluator="nnue", think_ms=UNTIMED, max_nodes=60,
                                      max_concurrent=None),
        "default": default_strategy(),
    }


def decide(strategy, body: dict, network) -> list:
    """``[move, {move: score rounded to 6 places}]`` for one request, a fresh session."""
    request = parse_request(body)
    accumulator = Accumulator(network) if strategy.name in ("seed", "search-nnue") else None
    decision = strategy.choose(request, accumulator)
    scores = decision.scores or (decision.search.scores if decision.search is not None else {})
    return [decision.move, {m: round(float(v), 6) for m, v in (scores or {}).items()}]


def lines() -> list[dict]:
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def network():
    return load_default()


def test_every_strategy_gives_the_recorded_decisions(network):
    players = strategies(network)
    checked, wrong = 0, []
    for k, line in enumerate(lines()):
        for name, player in players.items():
            if name in line:
                got = decide(player, line["request"], network)
                checked += 1
                if got != line[name]:
                    wrong.append(f"line {k} {name}: expected {line[name]}, got {got}")
    assert checked >= 5 * 341
    assert not wrong, f"{len(wrong)} of {checked} decisions changed, e.g.\n" + "\n".join(wrong[:5])


def rewrite() -> None:
    network = load_default()
    players = strategies(network)
    rows = lines()
    for row in rows:
        for name, player in players.items():
            row[name] = decide(player, row["request"], network)
    with gzip.open(DATA, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, separators=(",", ":")) + "\n")
    print(f"{DATA}: {len(rows)} positions rewritten")


if __name__ == "__main__":
    if sys.argv[1:] != ["--rewrite"]:
        sys.exit("usage: python -m tests.test_decisions --rewrite")
    rewrite()
