"""Train the NNUE on shards from :mod:`training.datagen` (``python -m training.fit``).

    python -m training.fit --data data/main --run runs/main [--hidden 512 512]
        [--epochs 30] [--batch-size 1024] [--lr 1e-3] [--patience 3] [--resume]

With ``--freeze-dense`` (and ``--init``) only the first layer's rows learn: its bias and the
layers after it stay as they were, so the blocks (ruleset x board) the data does not cover
keep their weights, and with them their play (the seed network retrained on self-play that
covers some blocks only).

Loss: binary cross-entropy between ``sigmoid(out[played move])`` and the WDL target, on the
played move only (:func:`training.model.played_move_loss`); on self-play data, whose
shards carry a target for every move (``move_targets``: each move's exact search score
blended with the game's result, :func:`training.selfplay.blend_moves`), all four outputs
learn (:func:`training.model.all_moves_loss`; ``--loss played`` keeps the played move
only). Optimisers: ``SparseAdam`` for
the 32M-weight first layer (a step updates only the rows of features active in the batch)
and ``Adam`` for the rest.

Batches: each batch holds positions of one ruleset x board block (shuffled within the block,
batches in shuffled order; the order of epoch ``e`` depends only on ``--seed`` and ``e``).
A block touches at most 7220 of the 63720 first-layer rows, so the sparse update of a step
stays small; mixing all blocks in one batch measured about three times slower per position.

The run directory gets ``checkpoint.pt`` (everything needed to resume: weights, optimiser
moments, epoch, batch within the epoch, history; written every ``--checkpoint-every`` steps
and at each epoch end), ``best.pt`` (the weights with the lowest validation loss so far),
``history.json``, ``loss.png`` (the curves) and ``train.log`` lines on stdout. ``--resume``
continues from ``checkpoint.pt`` exactly where it stopped (a run that stopped early stays
stopped unless ``--patience`` is raised: the same command again changes nothing). Training stops
after ``--epochs``, after ``--patience`` epochs without a better validation loss, or when
``--time-limit`` seconds have passed (the weights reached inside the epoch are validated and
kept as ``best.pt`` if better; a checkpoint is saved: resume later).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from snake.progress import Progress
from training.metrics import bce
from training.model import NnueModel, all_moves_loss, make_optimisers, played_move_loss
from training.plot import plot_curves
from training.shards import Positions, load_split


def batch_tensors(pos: Positions, rows: np.ndarray,
                  all_moves: bool = False) -> tuple[torch.Tensor, ...]:
    """``(indices, offsets, moves, targets)`` tensors of the positions ``rows``; with
    ``all_moves`` the targets are the ``[B, 4]`` move targets."""
    sub = pos.select(rows)
    targets = sub.move_targets if all_moves else sub.targets
    return (torch.from_numpy(sub.indices.astype(np.int64)),
            torch.from_numpy(sub.offsets[:-1].copy()),
            torch.from_numpy(sub.moves.astype(np.int64)),
            torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32)))


def batch_loss(model: NnueModel, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """The training loss of one batch of :func:`batch_tensors`: every move's when the
    targets are per move, else the played move's."""
    idx, off, moves, targets = batch
    logits = model(idx, off)
    return (all_moves_loss(logits, targets) if targets.dim() == 2
            else played_move_loss(logits, moves, targets))


def epoch_batches(pos: Positions, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
    """The batches (row arrays) of one epoch: positions shuffled within their block, cut
    into batches, batches shuffled. Deterministic in ``(seed, epoch)``, so a resumed run
    replays the same order and skips the batches already done."""
    rng = np.random.default_rng([seed, epoch])
    batches: list[np.ndarray] = []
    for block in np.unique(pos.blocks):
        rows = np.flatnonzero(pos.blocks == block)
        rng.shuffle(rows)
        batches.extend(rows[i:i + batch_size] for i in range(0, len(rows), batch_size))
    order = rng.permutation(len(batches))
    return [batches[i] for i in order]


@torch.no_grad()
def predict_played(model: NnueModel, pos: Positions, batch_size: int = 4096) -> np.ndarray:
    """``sigmoid(out[played move])`` for every position (float64)."""
    model.eval()
    out = np.empty(len(pos), np.float64)
    for start in range(0, len(pos), batch_size):
        rows = np.arange(start, min(start + batch_size, len(pos)))
        idx, off, moves, _ = batch_tensors(pos, rows)
        logits = model(idx, off)
        out[rows] = torch.sigmoid(logits.gather(1, moves.view(-1, 1)).squeeze(1)).double().numpy()
    model.train()
    return out


@torch.no_grad()
def predict_all(model: NnueModel, pos: Positions, batch_size: int = 4096) -> np.ndarray:
    """All four sigmoid outputs ``[N, 4]`` for every position."""
    model.eval()
    out = np.empty((len(pos), 4), np.float32)
    for start in range(0, len(pos), batch_size):
        rows = np.arange(start, min(start + batch_size, len(pos)))
        idx, off, _, _ = batch_tensors(pos, rows)
        out[rows] = torch.sigmoid(model(idx, off)).numpy()
    model.train()
    return out


def mean_loss(model: NnueModel, pos: Positions, all_moves: bool = False) -> float:
    """The loss over ``pos``: the played move's, or (``all_moves``) every move's."""
    if not len(pos):
        return float("nan")
    if all_moves:
        return float(bce(predict_all(model, pos).astype(np.float64), pos.move_targets).mean())
    return float(bce(predict_played(model, pos), pos.targets).mean())


def _save_atomic(obj: Any, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def load_model(path: str | Path) -> tuple[NnueModel, dict[str, Any]]:
    """The model of a ``best.pt`` or ``checkpoint.pt`` and the file's dict; or of a network
    file (``.npz``, e.g. the shipped ``weights/nnue.npz``) and its manifest."""
    if str(path).endswith(".npz"):
        from nnue.network import Network
        network = Network.load(path)
        return NnueModel.from_network(network), {"epoch": None, "manifest": network.manifest,
                                                 "config": {"data": network.manifest.get("data")}}
    ck = torch.load(path, map_location="cpu", weights_only=False)
    model = NnueModel(tuple(ck["config"]["hidden"]))
    model.load_state_dict(ck["model"])
    return model, ck


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m training.fit",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="data directory written by training.datagen")
    ap.add_argument("--run", required=True, help="run directory (checkpoints, history, plot)")
    ap.add_argument("--hidden", type=int, nargs=2, default=[512, 512], metavar=("H1", "H2"))
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--lr-decay", type=float, default=0.75,
                    help="learning rate factor applied after every epoch")
    ap.add_argument("--patience", type=int, default=3,
                    help="stop after this many epochs without a better validation loss")
    ap.add_argument("--checkpoint-every", type=int, default=500, help="steps between checkpoints")
    ap.add_argument("--val-every", type=int, default=0,
                    help="also validate every this many steps (best.pt may then come from "
                         "inside an epoch); 0: only at epoch ends")
    ap.add_argument("--time-limit", type=float, default=0.0,
                    help="stop (checkpointed, resumable) after this many seconds; 0: no limit")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--resume", action="store_true", help="continue from RUN/checkpoint.pt")
    ap.add_argument("--init", default="",
                    help="start from the weights of this best.pt/checkpoint.pt or network file "
                         "(.npz, e.g. weights/nnue.npz; a new run, fresh optimisers: e.g. "
                         "continue on a larger data set, or on self-play)")
    ap.add_argument("--loss", choices=("auto", "moves", "played"), default="auto",
                    help="moves: all four outputs (needs self-play's move targets); played: the "
                         "played move's only; auto: moves when the data has them")
    ap.add_argument("--freeze-dense", action="store_true",
                    help="train only the first layer's rows (W1): its bias and the layers after "
                         "it stay as --init gave them, so a block (ruleset x board) the data "
                         "does not cover keeps its weights (needs --init)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    if args.batch_size < 1 or args.epochs < 1 or min(args.hidden) < 1:
        ap.error("--batch-size, --epochs and --hidden must be positive")
    if args.freeze_dense and not (args.init or args.resume):
        ap.error("--freeze-dense keeps the layers of --init: give --init")
    return args


def fit(args: argparse.Namespace, argv: list[str] | None = None) -> dict[str, Any]:
    """Train as configured by :func:`parse_args`; returns the final history record."""
    torch.set_num_threads(args.threads)
    run = Path(args.run)
    run.mkdir(parents=True, exist_ok=True)
    log = sys.stdout
    t_load = time.monotonic()
    train = load_split(args.data, "train")
    val = load_split(args.data, "val")
    print(f"data {args.data}: {len(train):,} training and {len(val):,} validation positions "
          f"(loaded in {time.monotonic() - t_load:.1f}s)", file=log, flush=True)

    has_moves = train.move_targets is not None and val.move_targets is not None
    if args.loss == "moves" and not has_moves:
        raise SystemExit(f"{args.data}: --loss moves needs move targets (self-play shards)")
    loss_kind = "moves" if args.loss == "moves" or (args.loss == "auto" and has_moves) else "played"
    config = {"hidden": list(args.hidden), "batch_size": args.batch_size, "lr": args.lr,
              "lr_decay": args.lr_decay, "seed": args.seed, "data": str(args.data),
              "patience": args.patience, "max_epochs": args.epochs, "loss": loss_kind,
              "freeze_dense": bool(args.freeze_dense)}
    ck_path, best_path = run / "checkpoint.pt", run / "best.pt"
    torch.manual_seed(args.seed)
    model = NnueModel(tuple(args.hidden))
    sparse_opt, dense_opt = make_optimisers(model, args.lr)
    state: dict[str, Any] = {"epoch": 0, "step_in_epoch": 0, "steps": 0, "history": [],
                             "best_val": float("inf"), "best_epoch": -1, "bad_epochs": 0,
                             "epoch_loss_sum": 0.0, "epoch_count": 0, "train_seconds": 0.0,
                             "stopped": "", "val_points": []}
    if args.init and not args.resume:
        init_model, init_ck = load_model(args.init)
        if list(init_model.hidden) != config["hidden"]:
            raise SystemExit(f"{args.init}: hidden sizes {list(init_model.hidden)} differ from "
                             f"--hidden {config['hidden']}")
        model.load_state_dict(init_model.state_dict())
        config["init"] = {"from": str(args.init), "epoch": init_ck.get("epoch"),
                          "data": init_ck.get("config", {}).get("data")}
        print(f"initialised from {args.init}", file=log, flush=True)
    if args.resume:
        if not ck_path.is_file():
            raise SystemExit(f"{ck_path}: no checkpoint to resume from")
        ck = torch.load(ck_path, map_location="cpu", weights_only=False)
        if ck["config"]["hidden"] != config["hidden"]:
            raise SystemExit(f"{ck_path}: hidden sizes {ck['config']['hidden']} differ from "
                             f"--hidden {config['hidden']}")
        if args.freeze_dense and not ck["config"].get("freeze_dense"):
            raise SystemExit(f"{ck_path}: this run trains every layer; --freeze-dense cannot "
                             "be switched on when resuming it")
        # An early stop stands unless the patience was raised: resuming a finished run
        # with the same command must not train it on (a time limit's stop is lifted).
        early_stop = ck["state"].get("stopped", "").startswith("early stop") and \
            args.patience <= ck["config"].get("patience", args.patience)
        config = {"loss": "played"} | ck["config"] | {"max_epochs": args.epochs,
                                                       "patience": args.patience}
        model.load_state_dict(ck["model"])
        sparse_opt.load_state_dict(ck["sparse_opt"])
        dense_opt.load_state_dict(ck["dense_opt"])
        state = ck["state"]
        if not early_stop:
            state["stopped"] = ""
        torch.set_rng_state(ck["torch_rng"])
        print(f"resumed {ck_path}: epoch {state['epoch'] + 1}, batch {state['step_in_epoch']}, "
              f"{state['steps']} steps done", file=log, flush=True)
    command = " ".join(["python -m training.fit", *(argv if argv is not None else sys.argv[1:])])
    all_moves = config["loss"] == "moves"
    frozen = bool(config.get("freeze_dense"))
    if frozen:
        for p in model.dense_parameters():
            p.requires_grad_(False)
        print("dense layers frozen: only the first layer's rows learn", file=log, flush=True)
    print(f"loss: {'every move (move targets)' if all_moves else 'the played move'}",
          file=log, flush=True)

    def set_lr(epoch: int) -> None:
        lr = config["lr"] * config["lr_decay"] ** epoch
        for opt in (sparse_opt, dense_opt):
            for group in opt.param_groups:
                group["lr"] = lr

    def keep_if_best(val_loss: float, at: float) -> bool:
        """Save the current weights as best.pt if ``val_loss`` is the best so far."""
        if val_loss >= state["best_val"]:
            return False
        state["best_val"], state["best_epoch"] = val_loss, round(at, 3)
        _save_atomic({"model": model.state_dict(), "config": config, "epoch": round(at, 3),
                      "val_loss": val_loss, "history": list(state["history"]),
                      "command": command}, best_path)
        return True

    def checkpoint() -> None:
        _save_atomic({"model": model.state_dict(), "sparse_opt": sparse_opt.state_dict(),
                      "dense_opt": dense_opt.state_dict(), "state": state, "config": config,
                      "torch_rng": torch.get_rng_state(), "command": command}, ck_path)

    def write_history() -> None:
        (run / "history.json").write_text(json.dumps(
            {"config": config, "history": state["history"], "best_val": state["best_val"],
             "best_epoch": state["best_epoch"], "stopped": state["stopped"],
             "val_points": state.get("val_points", []),
             "train_seconds": state["train_seconds"]}, indent=1))
        hist = state["history"]
        points = sorted([(h["epoch"], h["val_loss"]) for h in hist]
                        + [(p["epoch"], p["val_loss"]) for p in state.get("val_points", [])])
        if hist or points:
            epochs = [h["epoch"] for h in hist]
            plot_curves(run / "loss.png", {"train": (epochs, [h["train_loss"] for h in hist]),
                                           "val": ([p[0] for p in points], [p[1] for p in points])},
                        title=f"nnue {config['hidden'][0]}x{config['hidden'][1]} bce loss")

    t_start = time.monotonic()
    seconds_before = state["train_seconds"]
    while state["epoch"] < args.epochs and not state["stopped"]:
        epoch = state["epoch"]
        set_lr(epoch)
        batches = epoch_batches(train, config["batch_size"], config["seed"], epoch)
        bar = None if args.quiet else Progress(len(batches), f"epoch {epoch + 1}", unit="batch",
                                               start=state["step_in_epoch"], stream=sys.stderr)
        for b in range(state["step_in_epoch"], len(batches)):
            batch = batch_tensors(train, batches[b], all_moves)
            targets = batch[3]
            sparse_opt.zero_grad(set_to_none=True)
            dense_opt.zero_grad(set_to_none=True)
            loss = batch_loss(model, batch)
            loss.backward()
            sparse_opt.step()
            if not frozen:
                dense_opt.step()
            state["epoch_loss_sum"] += loss.item() * len(targets)
            state["epoch_count"] += len(targets)
            state["step_in_epoch"] = b + 1
            state["steps"] += 1
            state["train_seconds"] = seconds_before + time.monotonic() - t_start
            if bar is not None:
                bar.update(1, loss=state["epoch_loss_sum"] / state["epoch_count"])
            if args.val_every and state["steps"] % args.val_every == 0 and b + 1 < len(batches):
                at = epoch + (b + 1) / len(batches)
                val_loss = mean_loss(model, val, all_moves)
                state["val_points"].append({"epoch": round(at, 3), "steps": state["steps"],
                                            "val_loss": val_loss})
                best = keep_if_best(val_loss, at)
                print(f"\nepoch {at:.2f}: val {val_loss:.5f}{' (best)' if best else ''}",
                      file=log, flush=True)
            if state["steps"] % args.checkpoint_every == 0:
                checkpoint()
            if args.time_limit and time.monotonic() - t_start >= args.time_limit:
                state["stopped"] = f"time limit ({args.time_limit:g}s)"
                break
        if bar is not None:
            bar.close()
        if state["stopped"]:
            # Stopped inside an epoch: its weights may already beat the best epoch's.
            val_loss = mean_loss(model, val, all_moves)
            at = epoch + state["step_in_epoch"] / len(batches)
            state.setdefault("val_points", []).append(
                {"epoch": round(at, 3), "steps": state["steps"], "val_loss": val_loss})
            best = keep_if_best(val_loss, at)
            print(f"stopped at epoch {at:.2f}: val {val_loss:.5f}{' (best)' if best else ''}",
                  file=log, flush=True)
            checkpoint()
            break
        train_loss = state["epoch_loss_sum"] / max(state["epoch_count"], 1)
        val_loss = mean_loss(model, val, all_moves)
        record = {"epoch": epoch + 1, "train_loss": train_loss, "val_loss": val_loss,
                  "steps": state["steps"], "lr": config["lr"] * config["lr_decay"] ** epoch,
                  "seconds": round(state["train_seconds"], 1)}
        state["history"].append(record)
        improved = keep_if_best(val_loss, epoch + 1)
        if improved:
            state["bad_epochs"] = 0
        else:
            state["bad_epochs"] += 1
        print(f"epoch {epoch + 1}: train {train_loss:.5f} val {val_loss:.5f}"
              f"{' (best)' if improved else ''} steps {state['steps']} "
              f"time {state['train_seconds']:.0f}s", file=log, flush=True)
        state["epoch"] += 1
        state["step_in_epoch"] = 0
        state["epoch_loss_sum"], state["epoch_count"] = 0.0, 0
        if state["bad_epochs"] >= config["patience"]:
            state["stopped"] = (f"early stop: no better validation loss for "
                                f"{config['patience']} epochs")
        checkpoint()
        write_history()
    if not state["stopped"]:
        state["stopped"] = f"{args.epochs} epochs done"
    checkpoint()
    write_history()
    print(f"stopped: {state['stopped']}; best validation loss {state['best_val']:.5f} "
          f"(epoch {state['best_epoch']}), {run / 'best.pt'}", file=log, flush=True)
    return state


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    fit(args, argv)


if __name__ == "__main__":
    main()
