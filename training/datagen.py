"""Training data: games of random snakes, stored as positions (``python -m training.datagen``).

    python -m training.datagen --out data/main --games 20000 [--seed 1] [--workers 2]
        [--chunk 50] [--max-turns 1000]
    python -m training.datagen --out data/prod --from-game-log games.db

(The second reads the service's own games instead: :mod:`training.from_game_log`.)

Games. Game ``n`` (0, 1, 2, ...) is played in the block ``SCHEDULE[n mod 18]``: the six
rulesets with features (standard, constrictor, royale, wrapped, solo, squad) times the three
boards (7x7, 11x11, 19x19), ruleset first, so every block gets the same number of games. The snake
count is drawn uniformly: 1 in solo; 2-4 on 7x7 and 2-8 on 11x11 and 19x19 otherwise; squad uses the
even counts of that range from 4 up, in squads of two (two snakes would form a single squad: a game
that is over before its first turn). Maps: ``royale`` for royale, ``standard`` for the rest, with
the engine's default settings (squad: all four squad settings on, as the last squad release
played). Every snake is the seed's ``random`` snake (SPEC section 5): never back onto its
own neck, otherwise uniformly random (:func:`snake.seed.random_move`, drawn from the
game's own seeded ``random.Random``, without a request per move); everything else (setup, movement,
collisions, feeding, food spawning, royale hazards, game over and result) comes from
:mod:`snake.rules.start` and :mod:`snake.rules`.

Game ``n`` depends only on ``(seed, n)``: its split (by default about 90% train, 5%
validation, 5% test, drawn per game, so the split is by game; ``--holdout``), its snake count and
all of its random choices. The output is therefore the same whatever ``--workers`` and ``--chunk``.

Positions. Before each turn, every living snake contributes one position from its own view:
its active features (:func:`nnue.features.active_features`), the move it then plays, and its
target (SPEC section 5): 1.0 if it (in squad: its squad) is the last left, 0.5 if every snake
still alive before the final turn, itself included, was eliminated on that turn, 0.0
otherwise (:func:`snake.rules.outcome`); in solo ``min(T / 100, 1)`` with ``T`` the number of
moves it made in the whole game.

A game still running after ``--max-turns`` turns is dropped (and counted in ``meta.json``):
two random snakes that keep finding food on a big board could otherwise run for thousands of
turns, and its result would not be known.

Output: shards ``<split>-<chunk>.npz`` (:mod:`training.shards`), one small
``chunk-<chunk>.json`` per finished chunk (a rerun with the same arguments skips finished
chunks, so an interrupted run resumes), and ``meta.json``: seed, command line, timing and
games / positions per split and ruleset x board. Counts per block are lists indexed by the
block numbers of :data:`nnue.features.BLOCKS`, whose names ``meta.json`` and every chunk
marker list under ``blocks``; a directory written with another numbering (before the
feature layout owned it) is not resumed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nnue.features import BOARD_SIDES, N_BLOCKS, RULESETS, active_features, block_of
from snake import rules
from snake.board import GameState
from snake.progress import Progress
from snake.rules import MOVES, start
from snake.seed import random_move
from training.shards import BLOCK_NAMES, SPLITS, PositionBuilder, write_chunk
from training.targets import capped_targets, game_targets

MOVE_INDEX = {m: i for i, m in enumerate(MOVES)}
DEFAULT_MAX_TURNS = 1000
DEFAULT_HOLDOUT = 0.05  # fraction of games for validation, and again for test


#: The order the blocks' games are played in: game ``n`` in ``SCHEDULE[n mod 18]``, ruleset
#: first (the order data generation has always used: a seed gives the same games).
SCHEDULE: tuple[tuple[str, int], ...] = tuple((r, s) for r in RULESETS for s in BOARD_SIDES)


@dataclass(frozen=True)
class DataGame:
    """What game ``number`` of a data set is: its ruleset, board, snake count, split and
    random seed (not an arena game: :class:`snake.arena.schedule.GameSpec`)."""

    number: int
    ruleset: str
    side: int
    snakes: int
    split: str
    seed: str

    @property
    def block(self) -> int:
        """Its block number in the feature layout (:data:`nnue.features.BLOCKS`)."""
        return block_of(self.ruleset, self.side)


def snake_counts(ruleset: str, side: int) -> list[int]:
    """The snake counts a game of this ruleset and board may have."""
    if ruleset == "solo":
        return [1]
    top = 4 if side == 7 else 8
    counts = list(range(2, top + 1))
    if ruleset == "squad":
        # Squads of two; two snakes would make one squad, a game over before it starts.
        counts = [n for n in counts if n % 2 == 0 and n >= 4]
    return counts


def data_game(seed: int, number: int, holdout: float = DEFAULT_HOLDOUT) -> DataGame:
    """The block, snake count and split of game ``number`` (deterministic in ``seed``,
    ``number`` and ``holdout``, the fraction of games in each of val and test)."""
    ruleset, side = SCHEDULE[number % len(SCHEDULE)]
    game_seed = f"nuppeppou-datagen/{seed}/{number}"
    rng = random.Random(game_seed + "/spec")
    u = rng.random()
    split = "train" if u < 1 - 2 * holdout else "val" if u < 1 - holdout else "test"
    snakes = rng.choice(snake_counts(ruleset, side))
    return DataGame(number, ruleset, side, snakes, split, game_seed)


@dataclass
class RecordedGame:
    """A finished game: one entry per position, and each snake's target."""

    spec: DataGame
    features: list[np.ndarray] = field(default_factory=list)
    moves: list[int] = field(default_factory=list)
    snake_ids: list[str] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)       # self-play's search scores
    move_scores: list[np.ndarray] = field(default_factory=list)   # self-play: all four moves
    targets: dict[str, float] = field(default_factory=dict)
    length: int = 0
    capped: bool = False    # stopped at the turn cap (targets: capped_targets)


def start_game(spec: DataGame, rng: random.Random, prefix: str = "datagen") -> GameState:
    """The first state of a data game: ``spec.snakes`` snakes ``s0, s1, ...`` (squads of
    two in squad), the royale map for royale and the standard one otherwise."""
    ids = [f"s{i}" for i in range(spec.snakes)]
    squads = [f"squad{i // 2}" for i in range(spec.snakes)] if spec.ruleset == "squad" else None
    return start.new_game(spec.ruleset, spec.side, spec.side, ids,
                          map="royale" if spec.ruleset == "royale" else "standard",
                          rng=rng, game_id=f"{prefix}-{spec.number}", squads=squads)


def random_player(state: GameState, snake, rng: random.Random) -> tuple[str, float | None]:
    """The seed's random snake, every position recorded (no search score)."""
    return random_move(state, snake, rng), float("nan")


def record_game(spec: DataGame, max_turns: int = DEFAULT_MAX_TURNS, player=random_player,
                prefix: str = "datagen") -> RecordedGame:
    """Play game ``spec`` through the rules engine, every living snake moved by
    ``player(state, snake, rng) -> (move, score[, move_scores])``, and record each position
    whose score is not ``None`` (with it: self-play's search score, ``nan`` for the random
    snake; and, from a player that gives them, the four moves' scores)."""
    rng = random.Random(spec.seed)
    state = start_game(spec, rng, prefix)
    played = RecordedGame(spec)
    moves_made = {s.id: 0 for s in state.board.snakes}
    while not rules.is_game_over(state):
        if state.turn >= max_turns:
            played.capped = True
            played.length = state.turn
            played.targets = capped_targets(state, moves_made)
            return played
        moves: dict[str, str] = {}
        for snake in state.board.snakes:
            if snake.eliminated_cause:
                continue
            move, score, *move_scores = player(state, snake, rng)
            moves[snake.id] = move
            moves_made[snake.id] += 1
            if score is None:
                continue
            active = active_features(state, snake)
            if active is None:  # cannot happen for the six rulesets and three boards
                raise RuntimeError(f"no features for {spec}")
            played.features.append(active)
            played.moves.append(MOVE_INDEX[move])
            played.snake_ids.append(snake.id)
            played.turns.append(state.turn)
            played.scores.append(score)
            if move_scores:
                played.move_scores.append(np.asarray(move_scores[0], np.float32))
        state = rules.play_turn(state, moves, rng)
    played.length = state.turn
    played.targets = game_targets(state, moves_made)
    return played


def _empty_counts() -> dict[str, dict[str, list[int]]]:
    # split -> {"games": [per block], "positions": [per block]}
    return {s: {"games": [0] * N_BLOCKS, "positions": [0] * N_BLOCKS} for s in SPLITS}


def chunk_done(marker: Path, first: int, count: int) -> bool:
    """Whether the chunk of games ``[first, first + count)`` is done: its marker says so
    for those very games. A marker of other games (the last chunk of a run grown with more
    --games) means the chunk is played again, its shards replaced; a marker written before
    markers said which games (no ``first``) is taken at its word."""
    if not marker.is_file():
        return False
    kept = json.loads(marker.read_text())
    return "first" not in kept or (kept["first"], kept["count"]) == (first, count)


def run_chunk(task: tuple[str, int, int, int, int, int, float]) -> dict:
    """Play games ``[first, first + count)`` and write this chunk's shards; returns its
    counts (also written to ``chunk-<n>.json``, the marker that the chunk is done)."""
    out, seed, chunk, first, count, max_turns, holdout = task
    out_dir = Path(out)
    marker = out_dir / f"chunk-{chunk:05d}.json"
    if chunk_done(marker, first, count):
        return json.loads(marker.read_text()) | {"skipped": True}
    t0 = time.monotonic()
    builders = {s: PositionBuilder() for s in SPLITS}
    counts = _empty_counts()
    capped = [0] * N_BLOCKS
    lengths = [0] * N_BLOCKS
    for number in range(first, first + count):
        spec = data_game(seed, number, holdout)
        game = record_game(spec, max_turns)
        if game.capped:
            capped[spec.block] += 1
            continue
        b = builders[spec.split]
        for feats, move, sid, turn in zip(game.features, game.moves, game.snake_ids, game.turns):
            b.add(feats, move, game.targets[sid], spec.block, number, turn)
        counts[spec.split]["games"][spec.block] += 1
        counts[spec.split]["positions"][spec.block] += len(game.moves)
        lengths[spec.block] += game.length
    result = {"chunk": chunk, "first": first, "count": count, "blocks": BLOCK_NAMES,
              "counts": counts,
              "capped": capped, "turns": lengths, "seconds": time.monotonic() - t0}
    write_chunk(out_dir, result,
                {split: (b.build(), {}) for split, b in builders.items() if len(b)})
    return result


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m training.datagen",
                                 description="Generate NNUE training positions from "
                                             "random-snake games.")
    ap.add_argument("--out", required=True, help="data directory (created)")
    ap.add_argument("--games", type=int, help="number of games (random snakes)")
    ap.add_argument("--from-game-log", metavar="DB",
                    help="instead: the finished games of the service's game log "
                         "(training/from_game_log.py)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2, help="processes")
    ap.add_argument("--chunk", type=int, default=54, help="games per shard chunk")
    ap.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS,
                    help="drop a game still running after this many turns")
    ap.add_argument("--holdout", type=float, default=DEFAULT_HOLDOUT,
                    help="fraction of games for validation, and the same again for test")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    if not 0 < args.holdout < 0.5:
        ap.error("--holdout must be between 0 and 0.5")
    if args.from_game_log:
        if args.games is not None:
            ap.error("--games and --from-game-log exclude each other")
        if not Path(args.from_game_log).is_file():
            ap.error(f"--from-game-log: no file {args.from_game_log}")
        return args
    if args.games is None:
        ap.error("--games (or --from-game-log) is required")
    if args.games < 1 or args.workers < 1 or args.chunk < 1 or args.max_turns < 1:
        ap.error("--games, --workers, --chunk and --max-turns must be positive")
    return args


def generate(args: argparse.Namespace, argv: list[str] | None = None) -> dict:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta_path = out / "meta.json"
    if meta_path.is_file():
        old = json.loads(meta_path.read_text())
        if ((old.get("seed"), old.get("chunk"), old.get("max_turns"), old.get("holdout"))
                != (args.seed, args.chunk, args.max_turns, args.holdout)):
            raise SystemExit(f"{out} holds data made with other --seed/--chunk/--max-turns/"
                             "--holdout; use another --out")
    else:
        # Written before any game, so that a stopped run's directory refuses other settings
        # (replaced by the full meta at the end).
        meta_path.write_text(json.dumps({"seed": args.seed, "chunk": args.chunk,
                                         "max_turns": args.max_turns, "holdout": args.holdout,
                                         "source": "random games"}, indent=1))
    tasks = [(str(out), args.seed, c, first, min(args.chunk, args.games - first), args.max_turns,
              args.holdout)
             for c, first in enumerate(range(0, args.games, args.chunk))]
    t0 = time.monotonic()
    totals = _empty_counts()
    capped = [0] * N_BLOCKS
    turns = [0] * N_BLOCKS
    finished = [t for t in tasks if chunk_done(out / f"chunk-{t[2]:05d}.json", t[3], t[4])]
    for t in finished:
        if (json.loads((out / f"chunk-{t[2]:05d}.json").read_text()).get("blocks")
                != list(BLOCK_NAMES)):
            raise SystemExit(f"{out} holds chunks counted with another block numbering (made "
                             "before the feature layout owned it); use another --out")
    done = sum(t[4] for t in finished)
    bar = None if args.quiet else Progress(args.games, "datagen", unit="game", start=done)
    if done:
        print(f"{done} games already generated in {out}: skipped", file=sys.stderr)
    positions = 0
    worker_seconds = 0.0
    skipped = 0

    def absorb(result: dict) -> None:
        nonlocal positions, worker_seconds, skipped
        worker_seconds += result["seconds"]
        skipped += bool(result.get("skipped"))
        for split in SPLITS:
            for key in ("games", "positions"):
                for i, v in enumerate(result["counts"][split][key]):
                    totals[split][key][i] += v
            positions += sum(result["counts"][split]["positions"])
        for i in range(N_BLOCKS):
            capped[i] += result["capped"][i]
            turns[i] += result["turns"][i]
        if bar is not None:
            bar.update(0 if result.get("skipped") else result["count"], positions=positions)

    if args.workers == 1:
        for task in tasks:
            absorb(run_chunk(task))
    else:
        # spawn, not fork: workers start clean whatever the parent imported (torch, threads).
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(args.workers) as pool:
            for result in pool.imap_unordered(run_chunk, tasks):
                absorb(result)
    if bar is not None:
        bar.close()
    seconds = time.monotonic() - t0
    games_total = sum(sum(totals[s]["games"]) for s in SPLITS)
    meta = {
        "seed": args.seed, "games_requested": args.games, "games": games_total,
        "positions": positions, "chunk": args.chunk, "max_turns": args.max_turns,
        "workers": args.workers, "seconds": round(seconds, 1),
        # summed over all chunks, also those written by an earlier (interrupted) run
        "worker_seconds": round(worker_seconds, 1), "chunks_skipped": skipped,
        "command": " ".join(["python -m training.datagen",
                             *(argv if argv is not None else sys.argv[1:])]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "holdout": args.holdout,
        "split_fractions": {"train": 1 - 2 * args.holdout, "val": args.holdout,
                            "test": args.holdout},
        "blocks": BLOCK_NAMES,
        "counts": totals, "capped_games": capped, "turns_played": turns,
    }
    meta_path.write_text(json.dumps(meta, indent=1))
    return meta


def summary(meta: dict) -> str:
    """A table of games / positions per block and split."""
    lines = [f"{'block':<18}" + "".join(f"{s + ' games':>12}{s + ' pos':>12}" for s in SPLITS)
             + f"{'capped':>8}"]
    for b, name in enumerate(meta["blocks"]):
        row = f"{name:<18}"
        for s in SPLITS:
            row += f"{meta['counts'][s]['games'][b]:>12,}{meta['counts'][s]['positions'][b]:>12,}"
        lines.append(row + f"{meta['capped_games'][b]:>8}")
    lines.append(f"{meta['games']:,} games, {meta['positions']:,} positions in "
                 f"{meta['seconds']:.0f}s on {meta['workers']} worker(s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.from_game_log:
        from training.from_game_log import write_from_game_log
        meta = write_from_game_log(args.from_game_log, args.out, args.holdout, quiet=args.quiet)
        print(f"{meta['games']:,} games, {meta['positions']:,} positions from {args.from_game_log} "
              f"({meta['games_skipped']} skipped: no features) in {meta['seconds']:.0f}s")
        return
    meta = generate(args, argv)
    print(summary(meta))


if __name__ == "__main__":
    main()
