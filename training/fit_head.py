"""Train a value head (:mod:`snake.evaluation.value_head`) on game records.

    python -m training.fit_head --records runs/a runs/b --out runs/heads/duel.npz

A position is a living snake on a recorded turn with the number of living snakes the head
is for (``--snakes``, 2 by default); its inputs are board control's measurements of that
snake, as the compiled search computes them at its leaves (``--style`` weighs the
``value`` among them: the search uses the head only with that style), its target the
game's result for it (1 win, 0.5 draw, 0 loss: :func:`record_results`), or with
``--label-nodes N`` ``lambda * result + (1 - lambda) * score``, ``score`` the default
search's tree's score of the position from that snake's view at ``N`` nodes, valued by
the ``--style`` alone (no value head, no ``multi_style``), as a probability
(a proven win 1, a proven loss 0, a value ``v`` ``(v + 1) / 2``). ``--every K`` takes every
K-th turn; ``--cache DIR`` keeps each record's positions (labelled ones are slow to make:
about 5 seconds a record at 10,000 nodes, every fourth turn), so a run resumes and later
heads reuse them. Records with no result for their snakes (a match stopped once one
player's place was settled) are skipped. The split is by game (``--holdout`` of the games
each for validation and test, at least one, by a shuffle seeded with ``--seed``), so
positions of one game never straddle two splits. The head names the boards its records
were played on and the numbers of snakes their games began with (``boards``, ``began``:
a search uses it there only), so a duel head learned from four-snake games' last duels
is for those, not for games begun as duels; both are printed.

``--playout D`` moves each position on by ``D`` turns in which every living snake plays a
uniformly random move that is not certain death (the rules without food spawning, seeded by
the record and turn), as the leaves of a search lie a few turns from a real position and
include moves no good snake plays; such a position has no game result, so its target is the
search's score alone (``--label-nodes``, ``--lambda 0``), and the test figures compare the
head with the search's score instead of with results.

Training: Adam on the binary cross-entropy of the head's logit (with ``--residual``, added
to the logit of the style's value, the head's output layer starting at zero), ``--epochs``
at most, the epoch with the lowest validation loss kept. The test figures printed (and kept
in the file's ``meta``): the loss of the constant mean, of the style's own value made a
probability by a logistic fit on the training split (``sigmoid(a v + b)``: the best that
value can do as a prediction), and of the head; also by game phase (turns).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
import zlib
from pathlib import Path
from typing import Sequence

import numpy as np

from snake.board import MoveRequest, parse_request
from snake.core import EncodeError, encode
from snake.evaluation.control import MEASUREMENTS, N_MEASUREMENTS, STYLES
from snake.evaluation.value_head import ValueHead, board_of, measurements
from snake.progress import Progress
from snake.records.replay import ReplayError, read_replay, records_in
from snake.rules import apply_rules, candidate_moves, is_game_over
from snake.search.compiled.tree import PROVEN
from snake.search.strategy import make_search_strategy
from training.metrics import bce
from training.targets import OUTCOME_TARGET

PHASES = ((0, 50), (50, 150), (150, 300), (300, 10**9))
#: Part of the cache's key: raised when what a cached record holds changes meaning.
CACHE_VERSION = 3


def split_games(count: int, holdout: float, seed: int) -> np.ndarray:
    """``train``, ``val`` or ``test`` for each of ``count`` games: a seeded shuffle, then
    ``holdout`` of them (at least one each, and never all) for test and for validation
    (``count`` at least 3)."""
    held = min(max(1, round(holdout * count)), (count - 1) // 2)   # at least one to train on
    split = np.full(count, "train", dtype=object)
    order = np.random.default_rng(seed).permutation(count)
    split[order[:held]] = "test"
    split[order[held:2 * held]] = "val"
    return split


def record_files(paths: Sequence[str | Path]) -> list[Path]:
    """The game records in ``paths`` (files, or folders searched recursively:
    :func:`snake.records.replay.records_in`), sorted."""
    files: set[Path] = set()
    for path in map(Path, paths):
        if path.is_dir():
            files.update(records_in(path, recursive=True))
        elif path.exists():
            files.add(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return sorted(files)


def searched_score(strategy, state, snake) -> float:
    """The search's score of ``state`` for ``snake`` as a probability: a proven win 1, a
    proven loss 0, a value ``v`` of the search's scale ``(v + 1) / 2``."""
    score = strategy.search(MoveRequest(state, snake)).score
    if score >= PROVEN:
        return 1.0
    if score <= -PROVEN:
        return 0.0
    return min(1.0, max(0.0, (score + 1.0) / 2.0))


def record_results(replay) -> dict[str, float] | str:
    """Each snake's result in a game record as a target (by snake id: win 1, draw 0.5, loss
    0), or why there is none: the record's results by the rules
    (:meth:`snake.records.replay.Replay.results`), which a game stopped with several snakes
    alive and no draw (the arena's ``--until-decided``, once one player's place was
    settled), or a record without a winner, does not settle."""
    results = replay.results()
    if isinstance(results, str):
        return results
    return {sid: OUTCOME_TARGET[outcome] for sid, outcome in results.items()}


def played_out(state, plies: int, rng: random.Random):
    """``state`` moved on by ``plies`` turns of random moves that are not certain death (the
    rule stages, no food spawning), or None when the game ends first."""
    for _ in range(plies):
        if is_game_over(state):
            return None
        moves = {snake.id: rng.choice(candidate_moves(state, snake))
                 for snake in state.board.snakes if not snake.eliminated_cause}
        turn = state.turn
        state = apply_rules(state, moves)
        state.turn = turn + 1
    return None if is_game_over(state) else state


def record_positions(path: Path, snakes: Sequence[int], style: str, every: int,
                     strategy=None, playout: int = 0) -> dict[str, np.ndarray] | str:
    """One record's positions (every ``every``-th turn, each moved on by ``playout`` random
    turns: :func:`played_out`): ``x``, ``result`` (NaN after a playout), ``score`` (the
    search's, with ``strategy``; else NaN), ``turn``; or why the record is skipped."""
    try:
        replay = read_replay(path)
    except (ReplayError, OSError, UnicodeDecodeError):
        return "not a record"
    results = record_results(replay)
    if isinstance(results, str):
        return results
    xs, outcomes, scores, turns = [], [], [], []
    for body in replay.turns[::every]:
        state = parse_request(body).state
        if playout:
            state = played_out(state, playout, random.Random(
                zlib.crc32(f"{path.name}|{state.turn}".encode())))
            if state is None:
                continue
        alive = [s for s in state.board.snakes if not s.eliminated_cause]
        if len(alive) not in snakes:
            continue
        try:
            measured = measurements(encode(state), style)
        except EncodeError:
            continue
        for i, snake in enumerate(state.board.snakes):
            if snake.eliminated_cause:
                continue
            xs.append(measured[i])
            outcomes.append(np.nan if playout else results[snake.id])
            scores.append(searched_score(strategy, state, snake) if strategy else np.nan)
            turns.append(state.turn)
    return {"x": np.array(xs, np.float64).reshape(-1, N_MEASUREMENTS),
            "result": np.array(outcomes), "score": np.array(scores),
            "turn": np.array(turns, np.int64)}


def record_game(path: Path) -> tuple[str, int]:
    """The ruleset and size a record was played on (:func:`snake.evaluation.value_head.board_of`)
    and the number of snakes its game began with."""
    state = parse_request(read_replay(path).turns[0]).state
    return (board_of(state.ruleset.name, state.board.width, state.board.height),
            len(state.board.living_snakes))


def cache_key(path: Path, snakes: Sequence[int], style: str, every: int,
              label_nodes: int | None, playout: int) -> str:
    """The name of a record's positions in the cache: the record (its path, size and time,
    so that a record written again is labelled again) and what its labels depend on. The
    measurements are not part of it: a cached record measured with other ones is measured
    again and keeps its labels."""
    stat = path.stat()
    # (the playout joins the key only when set: caches made before it stay valid)
    text = (f"{CACHE_VERSION}|{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|"
            f"{sorted(snakes)}|{style}|{every}|{label_nodes}"
            + (f"|playout {playout}" if playout else ""))
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def _keep(kept: Path, part: dict[str, np.ndarray] | str) -> None:
    """Write a record's positions (or why it was skipped) to the cache file ``kept``."""
    kept.parent.mkdir(parents=True, exist_ok=True)
    temporary = kept.with_suffix(".part.npz")
    if isinstance(part, str):
        np.savez(temporary, skipped=np.array(part))
    else:
        np.savez(temporary, measurements=np.array(MEASUREMENTS), **part)
    temporary.replace(kept)


def positions(files: Sequence[Path], snakes: Sequence[int], style: str, *, every: int = 1,
              label_nodes: int | None = None, cache: Path | None = None,
              show_progress: bool = True, playout: int = 0) -> dict[str, np.ndarray]:
    """The positions of the records (module docstring): ``x`` [N, measurements],
    ``result``, ``score`` (NaN without ``label_nodes``), ``game`` (index into ``files``),
    ``turn``, and ``skipped`` (records, by why). With ``cache``, each record's positions
    are kept in that folder (:func:`cache_key`) and read back by a later run: labelling is
    the slow part, and an interrupted run resumes. A cached record measured with other
    :data:`MEASUREMENTS` than today's is measured again (its labels kept)."""
    strategy = None
    if label_nodes:
        strategy = make_search_strategy("search", overrides={
            "max_nodes": label_nodes, "last_chance": False, "style": style,
            "multi_style": None, "value_head": None,      # board control's own scores
            "think_ms": 600_000.0})   # the node limit alone: reproducible
    parts, skipped = [], {}
    bar = Progress(len(files), "records", unit="records", enabled=show_progress)
    for index, path in enumerate(files):
        bar.update(1)
        kept = None
        if cache is not None:
            key = cache_key(path, snakes, style, every, label_nodes, playout)
            kept = cache / f"{key}.npz"
            if kept.exists():
                with np.load(kept) as data:
                    part = {k: data[k] for k in data.files}
                if "skipped" in part:
                    why = str(part["skipped"])
                    skipped[why] = skipped.get(why, 0) + 1
                    continue
                if tuple(str(n) for n in part.pop("measurements", ())) == MEASUREMENTS:
                    parts.append((index, part))
                    continue
                # Labelled before the measurements changed: measure again, keep the labels.
                fresh = record_positions(path, snakes, style, every, None, playout)
                if not isinstance(fresh, str) and np.array_equal(fresh["turn"], part["turn"]):
                    part["x"] = fresh["x"]
                    _keep(kept, part)
                    parts.append((index, part))
                    continue
        part = record_positions(path, snakes, style, every, strategy, playout)
        if kept is not None:
            _keep(kept, part)
        if isinstance(part, str):
            skipped[part] = skipped.get(part, 0) + 1
        else:
            parts.append((index, part))
    bar.close()
    parts = [(i, p) for i, p in parts if len(p["result"])]
    if not parts:
        return {"x": np.zeros((0, N_MEASUREMENTS)), "result": np.zeros(0), "score": np.zeros(0),
                "game": np.zeros(0, np.int64), "turn": np.zeros(0, np.int64), "skipped": skipped}
    joined = {k: np.concatenate([p[k] for _, p in parts]) for k in ("x", "result", "score", "turn")}
    joined["game"] = np.concatenate([np.full(len(p["result"]), i) for i, p in parts])
    joined["skipped"] = skipped
    return joined


def fit_head(x: np.ndarray, y: np.ndarray, val_x: np.ndarray, val_y: np.ndarray, *,
             hidden: int, epochs: int, seed: int, residual: bool = False, lr: float = 3e-3,
             weight_decay: float = 1e-4, batch: int = 4096, held: Sequence[int] = (),
             log=print) -> tuple[ValueHead, list[float]]:
    """A head trained on ``(x, y)``, the epoch with the lowest validation loss; and the
    validation loss of every epoch. A ``residual`` head starts at zero (the style's value).
    The first layer's weights on the inputs ``held`` stay zero: the head does not read them
    (a residual head's base still reads the style's value)."""
    import torch

    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, 1))
    if residual:
        torch.nn.init.zeros_(model[2].weight)
        torch.nn.init.zeros_(model[2].bias)
    held = list(held)

    def hold() -> None:
        with torch.no_grad():
            model[0].weight[:, held] = 0.0
    hold()
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    xt, yt = torch.tensor(x), torch.tensor(y)
    vx, vy = torch.tensor(val_x), torch.tensor(val_y)

    def base(inputs):
        """The logit a residual head corrects: the style's value's."""
        if not residual:
            return 0.0
        return 2.0 * torch.atanh(inputs[:, 0].clamp(-0.999, 0.999))

    def loss_fn(logits, inputs, target):
        return torch.nn.functional.binary_cross_entropy_with_logits(logits + base(inputs), target)
    best, best_state, history = float("inf"), None, []
    generator = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(yt), generator=generator)
        for start in range(0, len(yt), batch):
            idx = order[start:start + batch]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]).squeeze(-1), xt[idx], yt[idx])
            loss.backward()
            opt.step()
            hold()
        model.eval()
        with torch.no_grad():
            val = float(loss_fn(model(vx).squeeze(-1), vx, vy))
        history.append(round(val, 5))
        log(f"epoch {epoch + 1}: validation loss {val:.4f}")
        if val < best or best_state is None:
            best = val
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    first, last = model[0], model[2]
    head = ValueHead(first.weight.detach().double().numpy().copy(),
                     first.bias.detach().double().numpy().copy(),
                     last.weight.detach().double().numpy()[0].copy(),
                     float(last.bias.detach()[0]), residual=residual)
    return head, history


def calibrate(v: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` of the logistic fit ``sigmoid(a v + b)`` of the results ``y`` (Newton's
    method on the two parameters)."""
    a, b = 1.0, 0.0
    X = np.stack([v, np.ones_like(v)], axis=1).astype(np.float64)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(X @ [a, b])))
        grad = X.T @ (p - y)
        hess = X.T @ (X * (p * (1 - p))[:, None]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        a, b = a - step[0], b - step[1]
        if np.abs(step).max() < 1e-10:
            break
    return float(a), float(b)


def report(head: ValueHead, data: dict[str, np.ndarray], split: np.ndarray) -> dict:
    """Test losses against the games' results (module docstring), overall and by phase;
    with the search's scores, also the search's own loss against the results and the
    head's against the scores. Positions without results (``--playout``) are measured
    against the search's scores instead (``against``), the head's excess over their
    entropy beside."""
    x, y, turn = data["x"], data["result"], data["turn"]
    train, test = split == "train", split == "test"
    score = data["score"]
    labelled = not np.isnan(score).any()
    with_results = not np.isnan(y).any()
    truth = y if with_results else score
    a, b = calibrate(x[train, 0], truth[train])
    p_style = 1.0 / (1.0 + np.exp(-(a * x[:, 0] + b)))
    p_head = (head.value(x.astype(np.float64)) + 1.0) / 2.0
    mean = float(truth[train].mean())

    def loss(p: np.ndarray, mask: np.ndarray, target: np.ndarray = truth) -> float:
        return round(float(bce(p[mask], target[mask]).mean()), 4)

    def losses(mask: np.ndarray) -> dict[str, float]:
        if not mask.any():
            return {"positions": 0}
        row = {"positions": int(mask.sum()), "constant": loss(np.full(len(truth), mean), mask),
               "style": loss(p_style, mask), "head": loss(p_head, mask)}
        if labelled:
            if with_results:
                row["search"] = loss(score, mask)
            row["head_vs_search"] = round(loss(p_head, mask, score) - loss(score, mask, score), 4)
        return row

    phases = {f"turns {lo}-{hi if hi < 10**9 else ''}": losses(test & (turn >= lo) & (turn < hi))
              for lo, hi in PHASES}
    return {"against": "results" if with_results else "search scores", "test": losses(test),
            "by_phase": phases, "style_fit": [round(a, 4), round(b, 4)]}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m training.fit_head",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--records", nargs="+", required=True, help="game records (files or folders)")
    p.add_argument("--out", type=Path, required=True, help="the head's file (.npz)")
    p.add_argument("--snakes", type=int, nargs="+", default=[2],
                   help="numbers of living snakes of the positions (default 2: duels)")
    p.add_argument("--style", default="default", choices=sorted(STYLES),
                   help="board control's weights of the value input (default: default)")
    p.add_argument("--every", type=int, default=1, help="every N-th turn of a record (default 1)")
    p.add_argument("--label-nodes", type=int, default=0,
                   help="search each position at this many nodes and learn its score too "
                        "(0: the results only)")
    p.add_argument("--lambda", dest="lam", type=float, default=0.5,
                   help="with --label-nodes, the target is lambda * result + (1 - lambda) * score")
    p.add_argument("--playout", type=int, default=0, metavar="D",
                   help="move each position on by D turns of random moves first (needs "
                        "--label-nodes and --lambda 0)")
    p.add_argument("--cache", type=Path, help="keep each record's positions here (resumes, reuses)")
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--without", nargs="+", default=[], metavar="NAME", choices=MEASUREMENTS,
                   help="measurements the head does not read (its weights on them stay zero), "
                        "e.g. value own most others cramped: the style's weighing of room kept")
    p.add_argument("--residual", action="store_true",
                   help="learn a correction of the style's value (a head of zeros is the style)")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--holdout", type=float, default=0.1,
                   help="fraction of games for validation, and again for test")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 < args.holdout < 0.5:
        print("--holdout: between 0 and 0.5", file=sys.stderr)
        return 2
    if args.hidden < 1 or args.epochs < 1 or min(args.snakes) < 1 or args.every < 1:
        print("--hidden, --epochs, --every and --snakes: at least 1", file=sys.stderr)
        return 2
    if args.label_nodes < 0 or not 0.0 <= args.lam <= 1.0:
        print("--label-nodes: at least 0; --lambda: between 0 and 1", file=sys.stderr)
        return 2
    if args.playout < 0 or (args.playout and (not args.label_nodes or args.lam != 0.0)):
        print("--playout: at least 0, and with --label-nodes and --lambda 0 (a position moved "
              "on by random turns has no game result)", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    try:
        files = record_files(args.records)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    data = positions(files, args.snakes, args.style, every=args.every,
                     label_nodes=args.label_nodes or None, cache=args.cache,
                     playout=args.playout,
                     show_progress=not args.quiet)
    if len(data["result"]) == 0:
        print(f"no positions with {args.snakes} living snakes in {len(files)} records "
              f"(skipped: {data['skipped']})", file=sys.stderr)
        return 1
    games = np.unique(data["game"])
    if len(games) < 3:
        print(f"{len(games)} records with positions: too few to keep games apart for "
              "training, validation and test", file=sys.stderr)
        return 1
    by_game = dict(zip(games.tolist(), split_games(len(games), args.holdout, args.seed)))
    split = np.array([by_game[g] for g in data["game"].tolist()])
    train, val = split == "train", split == "val"
    log = (lambda *a: None) if args.quiet else print
    target = data["result"]
    if args.label_nodes:
        target = (data["score"] if args.playout
                  else args.lam * data["result"] + (1.0 - args.lam) * data["score"])
    target = target.astype(np.float32)
    x = data["x"].astype(np.float32)
    print(f"{len(files)} records, {len(target)} positions "
          f"({int(train.sum())} train, {int(val.sum())} validation, "
          f"{int((split == 'test').sum())} test); skipped {data['skipped'] or 'none'}")
    head, history = fit_head(x[train], target[train], x[val], target[val],
                             hidden=args.hidden, epochs=args.epochs, seed=args.seed,
                             residual=args.residual, log=log,
                             held=[MEASUREMENTS.index(n) for n in args.without])
    figures = report(head, data, split)
    meta = {"records": len(files), "positions": int(len(target)), "snakes": args.snakes,
            "every": args.every, "label_nodes": args.label_nodes, "residual": args.residual,
            "lambda": args.lam if args.label_nodes else 1.0, "playout": args.playout,
            "without": args.without,
            "sources": sorted({str(Path(a)) for a in args.records}), "hidden": args.hidden,
            "epochs": args.epochs, "seed": args.seed, "validation_loss": history,
            "seconds": round(time.perf_counter() - started, 1), **figures}
    # the boards it learned on and how its games began, so that a search uses it there only
    played = {record_game(files[i]) for i in games.tolist()}
    head = ValueHead(head.w1, head.b1, head.w2, head.b2, args.style, tuple(args.snakes), meta,
                     args.residual, tuple(sorted({board for board, _ in played})),
                     tuple(sorted({began for _, began in played})))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    head.save(args.out)
    test = figures["test"]
    if test["positions"]:
        print(f"test loss (binary cross-entropy of the {figures['against']}, "
              f"{test['positions']} positions): constant {test['constant']}, the style's value "
              f"{test['style']}, head {test['head']}"
              + (f", the search's score {test['search']}" if "search" in test else "")
              + (f"; the head against the search's score: {test['head_vs_search']} above its "
                 "entropy" if "head_vs_search" in test else ""))
    else:
        print("test loss: no test positions (too few records)")
    for phase, row in figures["by_phase"].items():
        print(f"  {phase}: {row}")
    print(f"wrote {args.out} ({meta['seconds']} s): for {args.snakes} snakes alive on "
          f"{', '.join(head.boards)}, in games begun with {' or '.join(map(str, head.began))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
