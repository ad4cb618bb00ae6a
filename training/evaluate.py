"""Test loss per ruleset x board of a weight file vs the constant baseline
(``python -m training.evaluate``).

    python -m training.evaluate --data data/main [--weights weights/nnue.npz] [--split test]
        [--markdown]

The network is the numpy one the server runs (quantised, as loaded by
:meth:`nnue.network.Network.load`), so this needs no torch. For each block it prints the
number of positions, the network's binary cross-entropy on the played move, the loss of the
constant baseline (always predicting the mean target of the training split) and by how much
the network beats it; a last column gives the stricter baseline of the block's own mean
training target, for information.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from nnue.features import N_BLOCKS, block_name
from nnue.network import DEFAULT_WEIGHTS, Network
from training.metrics import bce, network_predict, played
from training.shards import Positions, load_split, shard_paths, shard_targets


def train_target_stats(data: str | Path) -> tuple[float, np.ndarray]:
    """The mean target of the training split, overall and per block (reads only the
    ``targets`` and ``blocks`` arrays of the shards)."""
    targets, blocks = [], []
    for path in shard_paths(data, "train"):
        t, b = shard_targets(path)
        targets.append(t.astype(np.float64))
        blocks.append(b)
    if not targets:
        raise SystemExit(f"{data}: no training shards")
    t, b = np.concatenate(targets), np.concatenate(blocks)
    per_block = np.array([t[b == k].mean() if np.any(b == k) else np.nan for k in range(N_BLOCKS)])
    return float(t.mean()), per_block


def block_table(net: Network, pos: Positions, train_mean: float,
                block_means: np.ndarray) -> list[dict]:
    """One row per block (and a final ``all`` row) of losses on ``pos``."""
    pred = played(network_predict(net, pos), pos.moves)
    net_loss = bce(pred, pos.targets)
    base_loss = bce(np.full(len(pos), train_mean), pos.targets)
    block_base = bce(block_means[pos.blocks.astype(np.int64)], pos.targets)
    rows = []
    for k in list(range(N_BLOCKS)) + [None]:
        mask = np.ones(len(pos), bool) if k is None else pos.blocks == k
        n = int(mask.sum())
        if n == 0:
            rows.append({"block": block_name(k), "positions": 0})
            continue
        a, b, c = net_loss[mask].mean(), base_loss[mask].mean(), block_base[mask].mean()
        rows.append({"block": "all" if k is None else block_name(k), "positions": n,
                     "network": float(a), "baseline": float(b),
                     "improvement": float((b - a) / b) if b > 0 else 0.0,
                     "block_mean_baseline": float(c)})
    return rows


def format_table(rows: list[dict], markdown: bool = False) -> str:
    head = ["block", "positions", "network loss", "baseline loss", "better by",
            "block-mean baseline"]
    lines = []
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
    else:
        lines.append(f"{head[0]:<18}{head[1]:>10}{head[2]:>14}{head[3]:>15}{head[4]:>11}{head[5]:>21}")
    for r in rows:
        if not r["positions"]:
            cells = [r["block"], "0", "-", "-", "-", "-"]
        else:
            cells = [r["block"], f"{r['positions']:,}", f"{r['network']:.4f}",
                     f"{r['baseline']:.4f}",
                     f"{100 * r['improvement']:.1f}%", f"{r['block_mean_baseline']:.4f}"]
        if markdown:
            lines.append("| " + " | ".join(cells) + " |")
        else:
            lines.append(f"{cells[0]:<18}{cells[1]:>10}{cells[2]:>14}{cells[3]:>15}{cells[4]:>11}{cells[5]:>21}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.evaluate",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="data directory of training.datagen")
    ap.add_argument("--weights", default=str(DEFAULT_WEIGHTS))
    ap.add_argument("--split", default="test", choices=("train", "val", "test"))
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args(argv)
    net = Network.load(args.weights)
    train_mean, block_means = train_target_stats(args.data)
    pos = load_split(args.data, args.split)
    rows = block_table(net, pos, train_mean, block_means)
    print(f"{args.weights} on the {args.split} split of {args.data} ({len(pos):,} positions); "
          f"baseline: constant {train_mean:.4f} (mean training target)")
    print(format_table(rows, args.markdown))
    losing = [r["block"] for r in rows if r["positions"] and r["network"] >= r["baseline"]]
    if losing:
        print(f"the network does NOT beat the baseline in: {', '.join(losing)}")
        return 1
    print("the network beats the constant baseline in every block")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
