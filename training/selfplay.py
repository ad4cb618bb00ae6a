"""Self-play data: games played by the compiled search, kept as training positions.

    python -m training.selfplay --out data/sp1 --games 2000 [--nodes 20000] [--lambda 0.5]
        [--workers 2 | --ray auto] [--seed 1] [--opening 6] [--chunk 20]
        [--weights runs/loop/gen-1/nnue.npz --network-weight 0.5]

**Games.** Game ``n`` depends only on ``(seed, n)``. Its kind is drawn from :data:`KINDS`,
weighted by how Battlesnake is played: 11x11 standard first (duels and four-snake games),
then royale, wrapped, constrictor, the other board sizes, squad and solo. Every snake is the
compiled search with ``search-joint``'s tree (:mod:`snake.search.compiled.tree`: paranoid
alpha-beta, joint replies of the two nearest opponents; board control, with ``--weights`` leaves
valued ``(1 - w) * board control + w * network`` at ``w`` = ``--network-weight``) limited to
``--nodes`` nodes per move, not to a time: the games are reproducible and do not depend on
the machine's load. Openings are diverse: each game starts with a random number (0 to
``--opening``) of turns in which every snake plays a random move that is not certain death
(:func:`snake.seed.random_move` on the filter's moves). Food spawns as in the rules.

**Positions.** Every turn after the opening, every living snake contributes one position
from its own view (:func:`nnue.features.active_features`): the move its search played, the
game's result for it (SPEC section 5: 1 win, 0.5 draw, 0 loss; solo ``min(T/100, 1)``), and
its search's score mapped to [0, 1] (a proven win 1, a proven loss 0, a board-control value
``v`` in (-1, 1) as ``(v + 1) / 2``). The target is ``lambda * result + (1 - lambda) * score``
(nnue-pytorch's lambda); the shards also keep ``results`` and ``scores`` apart, so the data
can be blended again. The search scores every root move exactly (not only the best), so a
position also has ``move_targets``, one per move (:func:`blend_moves`): the played move's
blended target, each other move's search score blended with the result the same way, 0 for
a move that is certain death; the trainer learns all four outputs from them. The four
scores themselves are kept as ``move_scores``. All four come from the search's last completed
iteration, the played move's too: the move may come from a deeper iteration cut short (its
first move searched to the end), whose score does not compare with the others'.

**Long games.** A game still going at ``--max-turns`` is kept and scored as the arena
scores it (``--capped draw``, the default: each snake still in draws, one already out has
lost; :func:`training.targets.capped_targets`), or dropped (``--capped drop``, what
self-play did before; a directory made that way is resumed that way). Strong snakes on
19x19 seldom end a game: dropping them threw away most of the worker time spent there.

**Output** is datagen's: shards ``<split>-<chunk>.npz`` (:mod:`training.shards`), a marker
``chunk-<n>.json`` per finished chunk (a rerun resumes: finished chunks are skipped), and
``meta.json`` with the counts, the wall time and **positions per hour**. Workers are
processes on this machine (``--workers``), or, with ``--ray ADDRESS`` (``auto`` for a running
cluster, ``local`` to start one here), tasks on a Ray cluster: one command uses every
machine of the cluster (``local`` starts one with ``--workers`` CPUs, its workers at normal
priority rather than Ray's nice 15). Ray is a training requirement only
(requirements-train.txt). Either way the workers only play: each chunk comes back to this
process, which knows what is done (the markers) and writes every shard, so a cluster's
machines need not share a disk, and ``--weights`` travels to them as bytes. A worker that
dies stops the run with an error (the same command resumes it), and an interrupted run
plays no more chunks.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import multiprocessing
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nnue.features import N_BLOCKS
from snake.board import GameState, MoveRequest
from snake.progress import Progress
from snake.rules import MOVES
from snake.search.compiled.tree import PROVEN
from snake.seed import random_move
from training.datagen import DEFAULT_HOLDOUT, DataGame, RecordedGame, chunk_done, record_game
from training.shards import BLOCK_NAMES, SPLITS, PositionBuilder, write_chunk

#: (ruleset, side, snakes, weight): the kinds of game and how often each is played.
KINDS: tuple[tuple[str, int, int, float], ...] = (
    ("standard", 11, 2, 30.0), ("standard", 11, 4, 30.0),
    ("royale", 11, 4, 8.0), ("wrapped", 11, 2, 4.0), ("wrapped", 11, 4, 4.0),
    ("constrictor", 11, 2, 5.0), ("standard", 7, 2, 5.0), ("standard", 19, 4, 4.0),
    ("standard", 19, 8, 2.0), ("squad", 11, 4, 4.0), ("solo", 7, 1, 2.0), ("solo", 11, 1, 2.0),
)
DEFAULT_NODES = 20_000
DEFAULT_MAX_TURNS = 1000


@dataclass(frozen=True)
class SelfPlayGame(DataGame):
    """A data game (:class:`training.datagen.DataGame`) and its number of random first
    turns."""

    opening: int = 0


def selfplay_game(seed: int, number: int, opening: int,
                  holdout: float = DEFAULT_HOLDOUT) -> SelfPlayGame:
    game_seed = f"nuppeppou-selfplay/{seed}/{number}"
    rng = random.Random(game_seed + "/spec")
    ruleset, side, snakes, _ = rng.choices(KINDS, weights=[k[3] for k in KINDS])[0]
    u = rng.random()
    split = "train" if u < 1 - 2 * holdout else "val" if u < 1 - holdout else "test"
    return SelfPlayGame(number, ruleset, side, snakes, split, game_seed,
                        opening=rng.randint(0, opening))


def score_target(score: float) -> float:
    """A search score as a probability of winning (see the module docstring)."""
    if score >= PROVEN:
        return 1.0
    if score <= -PROVEN:
        return 0.0
    return float(min(max((score + 1.0) / 2.0, 0.0), 1.0))


_NETWORKS: dict[object, object] = {}


def _network(weights: str | bytes):
    """The network of a weight file, loaded once per process: ``weights`` is its path, or
    its bytes (a Ray task on another machine, where the driver's path does not exist)."""
    key = weights if isinstance(weights, str) else hashlib.sha256(weights).hexdigest()
    if key not in _NETWORKS:
        from nnue.network import Network
        _NETWORKS[key] = (Network.load(weights) if isinstance(weights, str)
                          else Network.from_bytes(weights))
    return _NETWORKS[key]


def blend_moves(scores: np.ndarray, move: int, target: float, result: float,
                lam: float) -> np.ndarray:
    """Every move's target from its search score (certain death 0): the played move's is
    ``target``; another move's blends the game's result in as the played one does,
    ``lam * result + (1 - lam) * score``, so the targets rank the moves as the search did
    (a result for the played move alone would make it look worse than the others in every
    lost game); a proven value (0 or 1: certain death, a forced loss or win) stays as it is."""
    out = np.asarray(scores, np.float32).copy()
    open_ = (out > 0.0) & (out < 1.0)
    out[open_] = lam * result + (1.0 - lam) * out[open_]
    out[move] = target
    return out


def play_game(spec: SelfPlayGame, nodes: int, max_turns: int = DEFAULT_MAX_TURNS,
              weights: str | bytes | None = None, network_weight: float = 0.0) -> RecordedGame:
    """Play ``spec`` with the compiled search at ``nodes`` per move for every snake
    (random moves, not recorded, in the opening): datagen's game loop with this player.
    The search scores every root move exactly (``exact_root``), so each position also
    keeps the four moves' scores: a move that is certain death scores 0. With ``weights``
    the search values its leaves with that network at ``network_weight`` (a generation of
    :mod:`training.loop` playing the next one's data)."""
    from snake.search.strategy import SearchStrategy

    network = _network(weights) if weights and network_weight > 0 else None
    search = SearchStrategy(network, evaluator="auto", think_ms=None, max_nodes=nodes,
                            engine="compiled", max_concurrent=None, exact_root=True,
                            network_weight=network_weight if network is not None else 1.0)

    def player(state: GameState, snake, rng: random.Random):
        if state.turn < spec.opening:
            return random_move(state, snake, rng), None
        result = search.search(MoveRequest(state, snake))
        if result.move is None:
            # Nothing completed: no score for any move, so the position is played, not kept.
            return random_move(state, snake, rng), None
        if result.move not in result.scores:
            # No iteration completed (the move is a cut-short first iteration's): no score
            # to trust for any move, so the position is played but not kept.
            return result.move, None
        move_scores = np.array([score_target(result.scores[m]) if m in result.scores else 0.0
                                for m in MOVES], np.float32)
        # The root scores are those of the last completed iteration; the move may come from
        # a deeper, partial one (its first move searched to the end), and its score with it.
        # Scores of two depths do not compare (a paranoid search sees its own move last at
        # odd depths), so the played move's score is its completed-iteration one too: the
        # four moves' targets then rank the moves as one search did.
        played = result.scores.get(result.move, result.score)
        return result.move, score_target(played), move_scores

    return record_game(spec, max_turns, player, prefix="selfplay")


def play_chunk(task: tuple) -> tuple[dict, dict[str, tuple]]:
    """Play games ``[first, first + count)`` of one chunk (on a worker: a process, or a Ray
    task on any machine); returns its counts and, by split, its shard (the positions and
    their extra arrays), which the driver writes (:func:`write_chunk`)."""
    (seed, chunk, first, count, nodes, opening, lam, max_turns, holdout, weights, weight,
     keep_capped) = task
    t0 = time.monotonic()
    builders = {s: PositionBuilder() for s in SPLITS}
    extra = {s: ([], [], [], []) for s in SPLITS}   # results, scores, move targets, move scores
    counts = {s: {"games": [0] * N_BLOCKS, "positions": [0] * N_BLOCKS} for s in SPLITS}
    capped = 0
    for number in range(first, first + count):
        spec = selfplay_game(seed, number, opening, holdout)
        game = play_game(spec, nodes, max_turns, weights, weight)
        if game.capped:
            capped += 1
            if not keep_capped:
                continue
        b = builders[spec.split]
        results, scores, move_targets, move_scores = extra[spec.split]
        for feats, move, sid, turn, score, each in zip(game.features, game.moves, game.snake_ids,
                                                       game.turns, game.scores, game.move_scores):
            result = game.targets[sid]
            target = lam * result + (1 - lam) * score
            b.add(feats, move, target, spec.block, number, turn)
            results.append(result)
            scores.append(score)
            move_targets.append(blend_moves(each, move, target, result, lam))
            move_scores.append(each)
        counts[spec.split]["games"][spec.block] += 1
        counts[spec.split]["positions"][spec.block] += len(game.moves)
    shards = {split: (b.build(), {"results": np.asarray(extra[split][0], np.float32),
                                  "scores": np.asarray(extra[split][1], np.float32),
                                  "move_targets":
                                      np.asarray(extra[split][2], np.float32).reshape(-1, 4),
                                  "move_scores":
                                      np.asarray(extra[split][3], np.float32).reshape(-1, 4)})
              for split, b in builders.items() if len(b)}
    result = {"chunk": chunk, "first": first, "count": count, "blocks": list(BLOCK_NAMES),
              "counts": counts, "capped": capped, "seconds": time.monotonic() - t0}
    return result, shards


def _write_json(path: Path, value: dict) -> None:
    """``value`` as JSON in ``path``, atomically (a run stopped while writing must not leave
    a truncated file that stops the next from resuming)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=1))
    tmp.replace(path)


def _ray_results(address: str, tasks: list[tuple], workers: int):
    """The chunks played as tasks on the Ray cluster at ``address`` (``local``: one started
    here with ``workers`` CPUs), as they finish (:func:`snake.arena.cluster.ray_map`)."""
    from snake.arena.cluster import ray_map

    # The weights (tens of MB) go to the object store once, not with every task.
    weights = next((t[WEIGHTS] for t in tasks if t[WEIGHTS] is not None), None)
    return ray_map(_play_with_weights, [t[:WEIGHTS] + (None,) + t[WEIGHTS + 1:] for t in tasks],
                   address=address, cpus=workers, shared=weights)


#: Where a chunk's task holds its weights (see :func:`play_chunk`).
WEIGHTS = 9


def _play_with_weights(task: tuple, weights: bytes | None) -> tuple[dict, dict[str, tuple]]:
    """:func:`play_chunk` with the weights given apart (a Ray task's shared object)."""
    return play_chunk(task[:WEIGHTS] + (weights,) + task[WEIGHTS + 1:])


def _process_results(tasks: list[tuple], workers: int, play=None):
    """The chunks played (by ``play``, :func:`play_chunk`) in ``workers`` processes, as they
    finish. A worker that dies (killed, out of memory) stops the run with an error instead
    of leaving it waiting for ever, and an interrupted run does not go on playing the
    queued chunks."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    futures = set()
    try:
        futures = {executor.submit(play or play_chunk, t) for t in tasks}
        try:
            for future in as_completed(list(futures)):
                futures.discard(future)       # its chunk is not kept here once handed on
                yield future.result()
        except BrokenProcessPool:
            raise SystemExit("selfplay: a worker process died; the chunks finished are kept, "
                             "and the same command resumes the run") from None
    finally:
        # (shutdown's own cancel_futures comes too late for a pool dropped at once)
        for future in futures:
            future.cancel()
        executor.shutdown(wait=False, cancel_futures=True)


def generate(args: argparse.Namespace, argv: list[str] | None = None) -> dict:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta_path = out / "meta.json"
    if args.capped is None:
        # A directory is resumed with the rule it was made with (one made before capped
        # games could be kept dropped them); a new one keeps them.
        old = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        args.capped = old.get("capped", "drop") if old else "draw"
    settings = {"seed": args.seed, "chunk": args.chunk, "nodes": args.nodes,
                "opening": args.opening, "lambda": args.lam, "max_turns": args.max_turns,
                "holdout": args.holdout, "weights": args.weights,
                "network_weight": args.network_weight if args.weights else None,
                "capped": args.capped}
    if meta_path.is_file():
        old = json.loads(meta_path.read_text())
        old.setdefault("capped", "drop")    # written before capped games could be kept
        if {k: old.get(k) for k in settings} != settings:
            raise SystemExit(f"{out} holds self-play made with other settings "
                             f"({ {k: old.get(k) for k in settings} }); use another --out")
    # The weights go to the workers as bytes for Ray (its nodes need not share our disk),
    # as the path for local processes.
    weights = (Path(args.weights).read_bytes() if args.ray else args.weights) \
        if args.weights else None
    tasks = [(args.seed, c, first, min(args.chunk, args.games - first), args.nodes,
              args.opening, args.lam, args.max_turns, args.holdout, weights,
              settings["network_weight"], args.capped == "draw")
             for c, first in enumerate(range(0, args.games, args.chunk))]
    # Written before any game, so a run stopped by hand still says what it is.
    _write_json(meta_path, settings | {"source": "self-play", "games_requested": args.games})
    # What is done is known here, on the driver, where the shards are written: workers
    # (Ray's on other machines too) only play, and send their chunk back.
    done, todo = [], []
    for t in tasks:
        marker = out / f"chunk-{t[1]:05d}.json"
        (done if chunk_done(marker, t[2], t[3]) else todo).append(t)
    bar = Progress(args.games, "selfplay", unit="game", start=sum(t[3] for t in done),
                   enabled=not args.quiet)
    totals = {s: {"games": [0] * N_BLOCKS, "positions": [0] * N_BLOCKS} for s in SPLITS}
    capped = 0
    worker_seconds = 0.0
    new_positions = 0

    def count(result: dict) -> None:
        nonlocal capped
        for split in SPLITS:
            for key in ("games", "positions"):
                for i, v in enumerate(result["counts"][split][key]):
                    totals[split][key][i] += v
        capped += result["capped"]

    for t in done:
        count(json.loads((out / f"chunk-{t[1]:05d}.json").read_text()))
    t0 = time.monotonic()
    if not todo:
        results = iter(())
    elif args.ray:
        results = _ray_results(args.ray, todo, args.workers)
    elif args.workers == 1:
        results = map(play_chunk, todo)
    else:
        results = _process_results(todo, args.workers)
    with contextlib.closing(results) if hasattr(results, "close") else contextlib.nullcontext():
        for result, shards in results:
            write_chunk(out, result, shards)
            count(result)
            worker_seconds += result["seconds"]
            new_positions += sum(sum(result["counts"][s]["positions"]) for s in SPLITS)
            positions = sum(sum(totals[s]["positions"]) for s in SPLITS)
            bar.update(result["count"], positions=positions)
    bar.close()
    seconds = time.monotonic() - t0
    games = sum(sum(totals[s]["games"]) for s in SPLITS)
    positions = sum(sum(totals[s]["positions"]) for s in SPLITS)
    meta = settings | {
        "source": "self-play", "games_requested": args.games, "games": games,
        "positions": positions, "capped_games": capped, "seconds": round(seconds, 1),
        "worker_seconds": round(worker_seconds, 1),
        "positions_per_hour": (round(new_positions / seconds * 3600)
                               if seconds and new_positions else None),
        "workers": args.workers if not args.ray else f"ray {args.ray}",
        "command": " ".join(["python -m training.selfplay",
                             *(argv if argv is not None else sys.argv[1:])]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "split_fractions": {"train": 1 - 2 * args.holdout, "val": args.holdout,
                            "test": args.holdout},
        "blocks": list(BLOCK_NAMES), "counts": totals,
        "turns_played": [0] * N_BLOCKS,
    }
    _write_json(meta_path, meta)
    return meta


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m training.selfplay",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="data directory (created; a rerun resumes)")
    ap.add_argument("--games", type=int, required=True)
    ap.add_argument("--nodes", type=int, default=DEFAULT_NODES, help="search nodes per move")
    ap.add_argument("--weights", default=None,
                    help="a network the search values its leaves with "
                         "(default: board control only)")
    ap.add_argument("--network-weight", type=float, default=0.5,
                    help="with --weights: the network's share of a leaf's value (0.5)")
    ap.add_argument("--lambda", dest="lam", type=float, default=0.5,
                    help="target = lambda * result + (1 - lambda) * search score (0.5)")
    ap.add_argument("--opening", type=int, default=6, help="at most this many random first turns")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2, help="processes on this machine")
    ap.add_argument("--ray", metavar="ADDRESS",
                    help="run on a Ray cluster (auto, local, host:port)")
    ap.add_argument("--chunk", type=int, default=20, help="games per chunk (resume unit)")
    ap.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS)
    ap.add_argument("--capped", choices=("draw", "drop"), default=None,
                    help="a game still going at --max-turns: kept, the snakes still in it "
                         "drawing (as the arena scores it), or dropped (default: draw for a "
                         "new directory, the directory's own rule when resuming)")
    ap.add_argument("--holdout", type=float, default=DEFAULT_HOLDOUT)
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    if not 0 <= args.lam <= 1:
        ap.error("--lambda must be in [0, 1]")
    if min(args.games, args.nodes, args.workers, args.chunk, args.max_turns) < 1:
        ap.error("--games, --nodes, --workers, --chunk and --max-turns must be positive")
    if not 0 < args.network_weight <= 1:
        ap.error("--network-weight must be in (0, 1]")
    if args.weights:
        from nnue.network import Network
        try:        # a bad file stops the run here, not in every worker
            if not Network.load(args.weights).quantised:
                ap.error(f"--weights {args.weights}: the compiled search needs a quantised network")
        except (OSError, ValueError) as exc:     # NetworkFileError is a ValueError
            ap.error(f"--weights {args.weights}: {exc}")
        args.weights = str(Path(args.weights).resolve())
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    meta = generate(args, argv)
    print(f"{meta['games']:,} games, {meta['positions']:,} positions in {meta['seconds']:.0f}s"
          f" ({meta['capped_games']} stopped at {args.max_turns} turns, "
          f"{'kept as draws' if args.capped == 'draw' else 'dropped'}); "
          f"{meta['positions_per_hour'] or 0:,} positions/hour on {meta['workers']} worker(s)")


if __name__ == "__main__":
    main()
