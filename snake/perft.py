"""Perft: count and fingerprint every line of play to a depth, with either rules engine.

As chess engines check move generation with perft, this walks the game tree of a position:
at each node every living snake plays each of the four moves (all joint moves, fatal ones
included), a finished game is a leaf, and at ``depth`` turns every node is a leaf. The
result is the number of leaves and a fingerprint of them: the sum, modulo 2**64, of a hash of
each leaf's rule state (turn; every snake's id, body, health, elimination cause, by and
turn; food; hazards), so it does not depend on the order of the walk. Both engines
(:mod:`snake.rules`, the reference, and the compiled :mod:`snake.core`) must give the same
numbers; ``tests/data/perft.jsonl`` keeps them for a set of positions.

    python -m snake.perft tests/data/perft.jsonl                 # check every line, both engines
    python -m snake.perft tests/data/perft.jsonl --engine compiled
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

from snake.board import GameState, parse_request
from snake.rules import MOVES, apply_rules, is_game_over

MASK = (1 << 64) - 1


def leaf_hash(state: GameState) -> int:
    """A 64-bit hash of the rule state of ``state``."""
    snakes = [(s.id, s.body, s.health, s.eliminated_cause, s.eliminated_by, s.eliminated_on_turn)
              for s in state.board.snakes]
    text = repr((state.turn, snakes, state.board.food, state.board.hazards))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def _joint_moves(ids: list[str]):
    return (dict(zip(ids, joint)) for joint in itertools.product(MOVES, repeat=len(ids)))


def perft_reference(state: GameState, depth: int) -> tuple[int, int]:
    """(leaves, fingerprint) with :func:`snake.rules.apply_rules`."""
    if depth == 0 or is_game_over(state):
        return 1, leaf_hash(state)
    leaves = total = 0
    ids = [s.id for s in state.board.snakes if s.alive]
    for moves in _joint_moves(ids):
        child = apply_rules(state, moves)
        child.turn += 1
        n, h = perft_reference(child, depth - 1)
        leaves += n
        total = (total + h) & MASK
    return leaves, total


def perft_compiled(state: GameState, depth: int) -> tuple[int, int]:
    """(leaves, fingerprint) with the compiled core (:func:`snake.core.apply_rules`)."""
    from snake import core
    packed = core.encode(state, horizon=depth + 1)

    def walk(packed, depth):
        decoded = core.decode(packed)
        if depth == 0 or is_game_over(decoded):
            return 1, leaf_hash(decoded)
        leaves = total = 0
        ids = [s.id for s in decoded.board.snakes if s.alive]
        for moves in _joint_moves(ids):
            child, _ = core.apply_rules(packed, moves)
            child = core.end_turn(child)
            n, h = walk(child, depth - 1)
            leaves += n
            total = (total + h) & MASK
        return leaves, total

    return walk(packed, depth)


ENGINES = {"reference": perft_reference, "compiled": perft_compiled}


def read(path: str | Path) -> list[dict[str, Any]]:
    """The lines of a perft file: ``name``, ``request`` (a /move body), ``depth``,
    ``leaves``, ``hash`` (hex)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check(line: dict[str, Any], engine: str) -> str:
    """``""`` when ``engine`` gives the line's numbers, else what it gave."""
    state = parse_request(line["request"]).state
    leaves, fingerprint = ENGINES[engine](state, line["depth"])
    if leaves == line["leaves"] and f"{fingerprint:016x}" == line["hash"]:
        return ""
    return (f"{line['name']}: {engine} gives {leaves} leaves, hash {fingerprint:016x}; "
            f"expected {line['leaves']}, {line['hash']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.perft",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("file", help="a perft file (JSON lines)")
    parser.add_argument("--engine", choices=("both",) + tuple(ENGINES), default="both")
    args = parser.parse_args(argv)
    engines = tuple(ENGINES) if args.engine == "both" else (args.engine,)
    failed = 0
    for line in read(args.file):
        for engine in engines:
            problem = check(line, engine)
            print(problem or f"{line['name']} ({engine}): depth {line['depth']}, "
                             f"{line['leaves']} leaves, hash {line['hash']}: ok")
            failed += bool(problem)
    print(f"perft: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    from snake.cli import run_main
    run_main(main)
