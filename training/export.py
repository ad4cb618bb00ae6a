"""Export a trained model to the shipped weight format (``python -m training.export``).

    python -m training.export --run runs/main --data data/main --out weights/nnue.npz

Takes ``RUN/best.pt`` (the weights with the best validation loss), converts it to
:class:`nnue.network.Network` (``Network.from_float``; torch ``Linear`` weights are
``[out, in]`` and are transposed), and saves it quantised (int8 first layer) with a manifest:
data seed and command, games and positions per ruleset x board and split, epochs, validation
and test loss, training time, date, command lines, quantisation. ``MANIFEST.json`` beside the
weight file mirrors the embedded manifest (plus the file's size and sha256); its
``value_head`` entry, which describes the value head shipped beside the network
(``weights/value-duel.npz``), is kept as it was.

The network is written to a file beside ``--out`` first, reloaded with
:meth:`Network.load`, and checked before it replaces anything: the numpy network's four
outputs against the torch model's on the whole test split (the largest and mean absolute
difference, the share of positions with the same best move, both test losses), and the
serving path (an :class:`nnue.accumulator.Accumulator` refreshed from each position's
features and its compiled forward pass) against the numpy one on up to
:data:`SERVING_SAMPLE` of them. An export whose outputs differ from torch's by more than
``--max-diff`` (0.1; quantisation moves them by a few hundredths, a trained network's
layer exported wrong by far more), or whose serving path differs from the numpy one, is refused:
``--out`` and ``MANIFEST.json`` are left as they were. (The best move is reported, not
gated: in a barely trained network near-ties make it flip under any rounding.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nnue.accumulator import Accumulator
from nnue.network import Network
from training.fit import load_model, predict_all
from training.metrics import bce, network_predict, played
from training.shards import SPLITS, load_meta, load_split


def _per_block(meta: dict, split: str, key: str) -> dict[str, int]:
    """Counts by block name (``meta["blocks"]`` names the blocks in the order of the
    counts, whichever numbering the data was made with)."""
    counts = meta.get("counts", {}).get(split, {}).get(key)
    if not counts:
        return {}
    return {name: int(n) for name, n in zip(meta["blocks"], counts)}


def _capped_rule(meta: dict) -> str:
    """What became of games still going at the turn cap, in words (per run when several
    runs were merged)."""
    def words(rule):
        return "kept, the snakes still in drawing" if rule == "draw" else "dropped"
    rule = meta.get("capped", "drop")
    if isinstance(rule, list):
        dirs = [m.get("dir", "?") for m in meta.get("merged_from", [])] or ["?"] * len(rule)
        return "; ".join(f"{d}: {words(r)}" for d, r in zip(dirs, rule))
    return words(rule)


#: The largest difference (in [0, 1] score) allowed between the exported network's outputs
#: and the torch model's on the test split.
MAX_DIFF = 0.1
#: Test positions scored through the serving path (accumulator and compiled forward pass).
SERVING_SAMPLE = 1000
#: The serving path and the numpy batch path compute the same float32 values in another
#: order: they may differ by rounding, no more.
SERVING_TOLERANCE = 1e-4
#: The entry of ``MANIFEST.json`` that describes the shipped value head, not the network.
VALUE_HEAD_KEY = "value_head"


class ExportError(RuntimeError):
    """An exported network that does not compute what the trained model does."""


def export(run: str | Path, data: str | Path, out: str | Path, *, checkpoint: str = "best.pt",
           command: str = "", threads: int = 2, eval_data: str | Path | None = None,
           note: str = "", max_diff: float = MAX_DIFF) -> dict[str, Any]:
    """Export ``run/checkpoint`` to ``out``; returns the manifest (with the agreement
    check filled in). ``data`` describes the training data in the manifest; validation and
    test losses are measured on ``eval_data`` (default: ``data``). Raises
    :class:`ExportError`, leaving ``out`` and its ``MANIFEST.json`` untouched, when the
    exported network's outputs differ from the model's by more than ``max_diff`` or the
    serving path disagrees with the numpy one."""
    eval_data = data if eval_data is None else eval_data
    torch.set_num_threads(threads)
    run, out = Path(run), Path(out)
    model, ck = load_model(run / checkpoint)
    meta = load_meta(data)
    history_path = run / "history.json"
    history = json.loads(history_path.read_text()) if history_path.is_file() else {}
    val = load_split(eval_data, "val")
    val_scores = predict_all(model, val)
    val_loss = float(bce(played(val_scores, val.moves), val.targets).mean())
    test = load_split(eval_data, "test")
    torch_scores = predict_all(model, test)
    torch_loss = float(bce(played(torch_scores, test.moves), test.targets).mean())

    all_moves = ck.get("config", {}).get("loss") == "moves"
    move_losses = {}
    if all_moves and val.move_targets is not None and test.move_targets is not None:
        move_losses = {"validation_loss_every_move":
                           float(bce(val_scores, val.move_targets).mean()),
                       "test_loss_every_move": float(bce(torch_scores, test.move_targets).mean())}
    capped = meta.get("capped_games", 0)
    self_play = meta.get("source") == "self-play"
    generator = (f"training.selfplay: the compiled search at {meta.get('nodes')} nodes a move, "
                 f"lambda {meta.get('lambda')}, up to {meta.get('opening')} random first turns"
                 if self_play else
                 "training.datagen: random snakes (no move back onto the own neck), "
                 "all six rulesets x 7x7/11x11/19x19")

    train_targets = [np.load(p, allow_pickle=False)["targets"]
                     for p in sorted(Path(data).glob("train-*.npz"))]
    train_mean = (float(np.concatenate(train_targets).astype(np.float64).mean())
                  if train_targets else None)

    manifest: dict[str, Any] = {
        "trained_by": ("training on self-play (search scores and results)" if self_play
                       else "training (supervised, SPEC section 5)"),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "data": {
            "generator": generator,
            "seed": meta.get("seed"), "command": meta.get("command"),
            "games": meta.get("games"), "positions": meta.get("positions"),
            "max_turns": meta.get("max_turns"),
            "capped_games": capped if isinstance(capped, int) else sum(capped),
            "capped_games_were": _capped_rule(meta),
            "datagen_seconds": meta.get("seconds"), "datagen_workers": meta.get("workers"),
            "games_per_block": {s: _per_block(meta, s, "games") for s in SPLITS},
            "positions_per_block": {s: _per_block(meta, s, "positions") for s in SPLITS},
            "train_mean_target": train_mean,
            **({"merged_from": meta["merged_from"]} if "merged_from" in meta else {}),
        },
        "training": {
            "command": ck.get("command"), "config": ck.get("config"),
            "checkpoint": checkpoint,
            # best.pt records the epoch it is from; checkpoint.pt where the run stood
            "epoch": ck.get("epoch", ck.get("state", {}).get("epoch")),
            "batches_into_next_epoch": ck.get("state", {}).get("step_in_epoch", 0),
            "epochs_run": len(history.get("history", [])),
            "stopped": history.get("stopped"), "train_seconds": history.get("train_seconds"),
            "torch_threads": threads, "history": history.get("history"),
        },
        "note": note,
        "evaluated_on": str(eval_data),
        "loss": ("binary cross-entropy of sigmoid(every move's output) vs its target (trained); "
                 "validation_loss and test_loss: the played move's" if all_moves else
                 "binary cross-entropy of sigmoid(output of the played move) vs WDL target"),
        "validation_loss": val_loss,
        **move_losses,
        "test_loss_torch": torch_loss,
        "export_command": command,
        "quantisation": "w1 int8 with one float32 scale per hidden unit, b1 int32 in those "
                        "units, int32 accumulator; w2 int8 with one float32 scale per row; "
                        "activations, b2, w3 and b3 float32",
    }
    net = Network.from_float(**model.float_weights())
    out.parent.mkdir(parents=True, exist_ok=True)
    trial = out.with_name(out.name + ".checking.npz")   # nothing is replaced until it passes
    try:
        net.save(trial, manifest)
        shipped = Network.load(trial)
        np_scores = network_predict(shipped, test)
        diff = np.abs(np_scores.astype(np.float64) - torch_scores.astype(np.float64))
        np_loss = float(bce(played(np_scores, test.moves), test.targets).mean())
        agreement = {"positions": len(test),
                     "max_abs_diff": float(diff.max()) if len(test) else 0.0,
                     "mean_abs_diff": float(diff.mean()) if len(test) else 0.0,
                     "test_loss_numpy": np_loss, "test_loss_torch": torch_loss,
                     "same_best_move_fraction": float((np_scores.argmax(1)
                                                       == torch_scores.argmax(1)).mean())
                     if len(test) else 1.0,
                     "serving_path_max_abs_diff": _serving_diff(shipped, test, np_scores)}
        if agreement["max_abs_diff"] > max_diff:
            raise ExportError(f"the exported network's outputs differ from the model's by up to "
                              f"{agreement['max_abs_diff']:.4f} on the test split (allowed "
                              f"{max_diff}): not exported")
        if agreement["serving_path_max_abs_diff"] > SERVING_TOLERANCE:
            raise ExportError(f"the serving path (accumulator, compiled forward pass) differs "
                              f"from the numpy network by "
                              f"{agreement['serving_path_max_abs_diff']:.2e}: "
                              "not exported")
        # The agreement is only known once the file exists: save again with it included.
        manifest["test_loss"] = np_loss
        manifest["agreement_numpy_vs_torch"] = agreement
        net.save(trial, manifest)
        Network.load(trial)  # the final file must load
        os.replace(trial, out)
    finally:
        trial.unlink(missing_ok=True)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    mirror = {"weights_file": out.name, "bytes": out.stat().st_size, "sha256": digest,
              "manifest": manifest}
    path = out.parent / "MANIFEST.json"
    try:    # the value head shipped beside the network is described here too: keep that
        head = json.loads(path.read_text()).get(VALUE_HEAD_KEY)
    except (OSError, ValueError, AttributeError):
        head = None
    if head is not None:
        mirror[VALUE_HEAD_KEY] = head
    path.write_text(json.dumps(mirror, indent=1) + "\n")
    return manifest


def _serving_diff(net: Network, test, np_scores: np.ndarray) -> float:
    """The largest difference between what the service computes for a position (an
    accumulator refreshed from its features, the compiled forward pass) and the numpy
    batch path, over up to :data:`SERVING_SAMPLE` test positions spread over the split."""
    if not len(test):
        return 0.0
    rows = np.unique(np.linspace(0, len(test) - 1, min(len(test), SERVING_SAMPLE)).astype(np.int64))
    accumulator = Accumulator(net)
    worst = 0.0
    for i in rows:
        accumulator.refresh(test.features(int(i)))
        worst = max(worst, float(np.abs(accumulator.scores().astype(np.float64)
                                        - np_scores[i].astype(np.float64)).max()))
    return worst


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m training.export",
                                 description="Export a trained run to the NNUE weight file.")
    ap.add_argument("--run", required=True, help="run directory of training.fit")
    ap.add_argument("--data", required=True, help="the data directory it was trained on")
    ap.add_argument("--out", default="weights/nnue.npz")
    ap.add_argument("--checkpoint", default="best.pt", help="file in the run directory")
    ap.add_argument("--eval-data", default=None,
                    help="data directory whose val and test splits are measured (default --data; "
                         "its test games must be test games of --data too)")
    ap.add_argument("--note", default="", help="free text for the manifest (how it was trained)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-diff", type=float, default=MAX_DIFF,
                    help="refuse the export when its outputs differ from the model's by more "
                         "(default %(default)s)")
    args = ap.parse_args(argv)
    command = " ".join(["python -m training.export", *(argv if argv is not None else sys.argv[1:])])
    try:
        manifest = export(args.run, args.data, args.out, checkpoint=args.checkpoint,
                          command=command, threads=args.threads, eval_data=args.eval_data,
                          note=args.note, max_diff=args.max_diff)
    except ExportError as exc:
        raise SystemExit(f"export: {exc}") from None
    a = manifest["agreement_numpy_vs_torch"]
    out = Path(args.out)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB) and {out.parent / 'MANIFEST.json'}")
    print(f"validation loss {manifest['validation_loss']:.5f}; test loss torch "
          f"{a['test_loss_torch']:.5f}, exported numpy (quantised) {a['test_loss_numpy']:.5f}")
    print(f"numpy vs torch on {a['positions']:,} test positions: max |diff| "
          f"{a['max_abs_diff']:.5f}, mean |diff| {a['mean_abs_diff']:.6f}, same best move "
          f"{100 * a['same_best_move_fraction']:.2f}%; serving path vs numpy: max |diff| "
          f"{a['serving_path_max_abs_diff']:.1e}")


if __name__ == "__main__":
    main()
