"""Losses and batched predictions of the numpy network (no torch needed)."""

from __future__ import annotations

import numpy as np

from nnue.network import Network
from training.shards import Positions


def bce(pred: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per-position binary cross-entropy of predictions in [0, 1] against targets in [0, 1]
    (predictions clipped to [1e-12, 1 - 1e-12])."""
    p = np.clip(np.asarray(pred, np.float64), 1e-12, 1 - 1e-12)
    t = np.asarray(target, np.float64)
    return -(t * np.log(p) + (1 - t) * np.log(1 - p))


def network_predict(net: Network, pos: Positions, chunk: int = 2048) -> np.ndarray:
    """The network's four scores ``[N, 4]`` for every position: a full refresh of the
    accumulator (in the network's own arithmetic: exact int32 sums for a quantised net)
    and the forward pass, batched."""
    out = np.empty((len(pos), 4), np.float32)
    for start in range(0, len(pos), chunk):
        stop = min(start + chunk, len(pos))
        lo, hi = int(pos.offsets[start]), int(pos.offsets[stop])
        local = pos.offsets[start:stop] - lo
        rows = net.w1[pos.indices[lo:hi]]
        if np.all(np.diff(pos.offsets[start:stop + 1]) > 0):
            acc = np.add.reduceat(rows.astype(net.acc_dtype), local, axis=0)
            acc += net.b1
        else:  # reduceat mishandles empty segments: do those one at a time
            acc = np.stack([net.accumulate(pos.features(i)) for i in range(start, stop)])
        out[start:stop] = net.forward(net.pre_activation(acc))
    return out


def played(scores: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """The score of the move played in each position."""
    return scores[np.arange(len(moves)), moves.astype(np.int64)]
