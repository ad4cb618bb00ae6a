"""Does a change play alike? Node-limited decisions on fixed positions, to compare checkouts.

    python -m bench.same_play --out FILE [--strategy SPEC] [--nodes 8000] [--games 40]
    python -m bench.same_play --compare A B

A search stopped by its node limit alone (its clock set ten minutes out) decides the same
way on every machine and under any load, so two checkouts that search alike give the same
lines here: the same move, depth, node count and root scores, to the last bit. Searches that
value positions with the network are refused (none is loaded here). A change meant to
leave play alone (a reshaping, a speed-up) shows it by an empty comparison; a change meant
to alter play shows how much, by the number of snakes (the arena's pieces pool only lines
that play alike: docs/evidence/README.md).

Positions: ``--games`` seeded 11x11 standard games of random snakes (moves that are not
certain death; two and four snakes in turn, so three-snake positions come too), every 23rd
turn from turn 7 while the game lasts (to turn 400), each living snake's view, searched
twice: as played (set ``played``), and with every snake's health set to 20-44 (set
``hungry``), where food weighs in the evaluation (the duel weights without a value head
count food only below 50; docs/search.md). The first line of a record says what was
searched (strategy, the value head it resolved to: its digest and where it is used, or
none; nodes, games,
seed and the ``NUPPEPPOU_SEARCH_*`` environment); each other line is JSON: ``set``,
``snakes`` (alive), ``began`` (the snakes its game began with, told to the search as the
server's sessions tell it), ``position`` (a digest of the request searched), ``move``, ``depth``,
``nodes``, ``stopped`` (why the search ended) and ``scores``.

To record an older checkout, run this file with that checkout first on the path:
``cd OLD && PYTHONPATH=. python NEW/bench/same_play.py --out old.jsonl``. The positions
come from the rules of the checkout that records them; ``--compare`` refuses two records
made with other settings or whose positions differ (their rules or random streams differ,
or one was cut short) rather than count those as differences of play. Records of two
strategy names, or of two value heads, are compared (an older checkout's ``search``
against today's ``search[value_head=none]``, say, or today's default, whose head values
games begun as duels only, against an older one without a head), and the comparison names
both; it counts differences by set, snakes at the start and snakes alive, so a head shows
where it plays.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from collections import defaultdict

if not __package__ and sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
    # run as a file, to record another checkout: this folder (bench/, whose nnue.py would
    # shadow the nnue package) leaves the path, and the checkout on PYTHONPATH is searched
    sys.path.pop(0)

from snake import rules
from snake.board import parse_request, state_to_request
from snake.rules import start
from snake.search.strategy import VARIANTS, make_search_strategy, split_options

#: The first line of a record: what was searched, so that ``--compare`` refuses two records
#: made with other settings rather than count their differences as play.
FORMAT = "bench.same_play 3"   # 2: the header names the value head; 3: lines, ``began``
#: far beyond any search here: the node limit alone stops one (a deadline depends on load)
THINK_MS = 600_000

#: every this many turns a position is searched (a prime: turns of every parity and phase)
EVERY = 23
FIRST_TURN = 7
LAST_TURN = 400


def positions(games: int, seed: int):
    """``(snakes alive, snakes at the start, request body)`` for every searched view, game
    after game."""
    rng = random.Random(seed)
    for game in range(games):
        count = (2, 4)[game % 2]
        state = start.new_game("standard", 11, 11, [f"s{k}" for k in range(count)], rng=rng)
        while not rules.is_game_over(state) and state.turn < LAST_TURN:
            obstacles = rules.obstacles_after_move(state)
            moves = {s.id: rng.choice(rules.candidate_moves(state, s, obstacles))
                     for s in state.board.snakes if s.alive}
            if state.turn % EVERY == FIRST_TURN:
                alive = [s for s in state.board.snakes if s.alive]
                for snake in alive:
                    yield len(alive), count, state_to_request(state, snake.id)
            state = rules.play_turn(state, moves, rng)


def hungry(body: dict) -> dict:
    """The same position with every snake's health at 20-44 (by turn), so food counts."""
    health = 20 + body["turn"] % 25
    body = json.loads(json.dumps(body))
    for snake in body["board"]["snakes"]:
        snake["health"] = health
    body["you"]["health"] = health
    return body


def digest(body: dict) -> str:
    return hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def header(strategy_spec: str, value_head: str | None, nodes: int, games: int,
           seed: int) -> dict:
    environment = {k: v for k, v in sorted(os.environ.items())
                   if k.startswith("NUPPEPPOU_SEARCH_")}
    return {"format": FORMAT, "strategy": strategy_spec, "value_head": value_head,
            "nodes": nodes, "games": games, "seed": seed, "environment": environment}


def head_name(head) -> str | None:
    """A value head as a record's header names it: its digest (the weights and style) and
    where it is used, which the digest does not say (the same weights may be meant for
    other games): ``"a20715c9bd711e90 for 2 alive on standard 11x11 in games begun with 2"``."""
    if head is None:
        return None
    boards = getattr(head, "boards", ())        # older checkouts' heads name neither
    began = getattr(head, "began", ())
    return (f"{head.digest} for {' or '.join(map(str, head.snakes))} alive"
            + (f" on {', '.join(boards)}" if boards else "")
            + (f" in games begun with {' or '.join(map(str, began))}" if began else ""))


def record(strategy_spec: str, nodes: int, games: int, seed: int, out) -> tuple[int, int]:
    """Write the header and one line per search to ``out``; ``(searches, nodes)`` in all."""
    base, options = split_options(strategy_spec)
    if base not in VARIANTS:
        raise SystemExit(f"--strategy {strategy_spec!r}: not a search strategy "
                         f"({', '.join(VARIANTS)})")
    if VARIANTS[base].get("evaluator", "voronoi") != "voronoi":
        # without a network it would quietly search with board control, and two checkouts
        # whose networks differ would compare alike
        raise SystemExit(f"--strategy {strategy_spec!r}: values positions with the network; "
                         "only board-control searches are recorded here")
    options["max_nodes"] = nodes
    strategy = make_search_strategy(base, overrides=options)
    # set on the strategy, not as an option: older checkouts take it only as an argument
    strategy.think_ms = THINK_MS
    # the head resolved, not only named: a retuned weights/value-duel.npz plays otherwise
    head = getattr(strategy, "value_head", None)   # older checkouts have none
    out.write(json.dumps(header(strategy_spec, head_name(head), nodes, games, seed)) + "\n")
    searches = total = 0
    for snakes, began, body in positions(games, seed):
        for name, view in (("played", body), ("hungry", hungry(body))):
            request = parse_request(view)
            if hasattr(request, "snakes_at_start"):     # older checkouts' requests lack it
                request.snakes_at_start = began         # as the server's sessions tell it
            decision = strategy.choose(request, None)
            result = decision.search
            line = {"set": name, "snakes": snakes, "began": began, "position": digest(view),
                    "move": decision.move,
                    "depth": result.depth if result else None,
                    "nodes": result.nodes if result else 0,
                    "stopped": getattr(result, "stopped", "") if result else "",
                    "scores": ({m: float(v) for m, v in sorted(result.scores.items())}
                               if result and result.scores else {})}
            out.write(json.dumps(line) + "\n")
            searches += 1
            total += line["nodes"]
    return searches, total


def compare(path_a: str, path_b: str) -> int:
    """Print how two records differ, by set and number of snakes; 0 if they are equal,
    1 if play differs, 2 if their positions do (not comparable)."""
    try:
        a, b = ([json.loads(line) for line in open(path, encoding="utf-8")]
                for path in (path_a, path_b))
    except (OSError, ValueError) as error:
        raise SystemExit(f"--compare: {error}") from None
    for path, lines in ((path_a, a), (path_b, b)):
        if not lines or not str(lines[0].get("format", "")).startswith("bench.same_play"):
            raise SystemExit(f"--compare: {path} is not a record of bench.same_play")
        if lines[0]["format"] != FORMAT:
            raise SystemExit(f"--compare: {path} was recorded by {lines[0]['format']}, not "
                             f"{FORMAT}: record it again")
    asked = ("strategy", "value_head")
    settings_a, settings_b = ({k: v for k, v in h.items() if k not in asked}
                              for h in (a[0], b[0]))
    if settings_a != settings_b:
        print(f"not comparable: recorded with other settings ({a[0]} and {b[0]})")
        return 2
    if a[0]["strategy"] != b[0]["strategy"]:
        print(f"strategies {a[0]['strategy']!r} and {b[0]['strategy']!r}, compared as asked")
    if a[0]["value_head"] != b[0]["value_head"]:
        # where a head values positions the two play otherwise by design: the groups below
        # say where (a head may be meant for duels, or for games begun as duels, only)
        print(f"value heads {a[0]['value_head']} and {b[0]['value_head']}, compared as asked")
    a, b = a[1:], b[1:]
    if len(a) != len(b) or any(x["position"] != y["position"] for x, y in zip(a, b)):
        print(f"not comparable: the records searched different positions ({len(a)} and "
              f"{len(b)} searches: the checkouts' rules or random streams differ, or a "
              "record was cut short)")
        return 2
    groups: dict[tuple[str, int, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for x, y in zip(a, b):
        g = groups[x["set"], x["began"], x["snakes"]]
        g[0] += 1
        g[1] += x != y
        g[2] += x["move"] != y["move"]
    print(f"{'set':8} {'began':>5} {'snakes':>6} {'searches':>9} {'differ':>7} "
          f"{'move differs':>13}")
    for (name, began, snakes), (n, differ, moved) in sorted(groups.items()):
        print(f"{name:8} {began:>5} {snakes:>6} {n:>9} {differ:>7} {moved:>13}")
    differ = sum(g[1] for g in groups.values())
    moved = sum(g[2] for g in groups.values())
    print(f"in all: {len(a)} searches, {differ} differ ({moved} in their move); nodes "
          f"{sum(x['nodes'] for x in a):,} and {sum(y['nodes'] for y in b):,}")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.same_play",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="write the record here")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two records")
    parser.add_argument("--strategy", default="search",
                        help="a search strategy, options in brackets (default: search)")
    parser.add_argument("--nodes", type=int, default=8000, help="nodes a search (8000)")
    parser.add_argument("--games", type=int, default=40, help="games of positions (40)")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if not args.out:
        parser.error("give --out FILE to record, or --compare A B")
    if args.nodes < 1 or args.games < 1:
        parser.error("--nodes and --games must be at least 1")
    began = time.perf_counter()
    with open(args.out, "w", encoding="utf-8") as out:
        searches, nodes = record(args.strategy, args.nodes, args.games, args.seed, out)
    print(f"{searches} searches of {args.strategy} at {args.nodes} nodes, {nodes:,} nodes in "
          f"all, {time.perf_counter() - began:.1f} s: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
