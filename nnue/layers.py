"""The layers after the accumulator, compiled (numba; cached on disk, releases the GIL).

:func:`forward_one` goes from one accumulator to the four scores: the first layer's scale,
ReLU, the 512x512 layer as a sum of the rows of ``W2`` for the units that are on (about half
are off after the ReLU, and are skipped; the others' rows are added four at a time), ReLU,
the output layer and the sigmoid. A quantised network's ``W2`` rows are int8 with one scale
per row (:mod:`nnue.network`): the scale multiplies the unit's activation once, and the row
is read as a quarter of the bytes of a float32 row, which is most of what the pass costs.

These compute what :meth:`nnue.network.Network.forward` computes with numpy (batches still
go through it, as BLAS matrix products with ``W2`` dequantised); activations and sums are
float32 in both, summed in another order, so scores agree to float32 rounding (tested to
1e-5).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from snake.core.jit import JIT_NRT


@njit(fastmath=True, **JIT_NRT)
def forward_one(acc, scale, w2, w2_scale, b2, w3, b3, hidden, out):
    """The scores of one accumulator ``acc`` ([H1], int32 or float32) into ``out`` ([4]):
    ``sigmoid(relu(relu(acc * scale) @ W2 + b2) @ W3 + b3)`` with ``W2 = w2 * w2_scale[:, None]``
    (``w2`` int8 or float32). ``hidden`` is a float32 scratch of [H2]."""
    n_in, n_hidden = w2.shape
    for j in range(n_hidden):
        hidden[j] = b2[j]
    # The rows of the units that are on are added four at a time: one pass over `hidden`
    # per four rows instead of one per row (half the time of the layer, measured).
    on = np.empty(n_in, np.int64)
    xs = np.empty(n_in, np.float32)
    n_on = 0
    for i in range(n_in):
        x = np.float32(acc[i] * scale[i])
        if x > 0:
            on[n_on] = i
            xs[n_on] = np.float32(x * w2_scale[i])
            n_on += 1
    k = 0
    while k + 4 <= n_on:
        r0, r1, r2, r3 = w2[on[k]], w2[on[k + 1]], w2[on[k + 2]], w2[on[k + 3]]
        x0, x1, x2, x3 = xs[k], xs[k + 1], xs[k + 2], xs[k + 3]
        for j in range(n_hidden):
            hidden[j] += ((x0 * np.float32(r0[j]) + x1 * np.float32(r1[j]))
                          + (x2 * np.float32(r2[j]) + x3 * np.float32(r3[j])))
        k += 4
    while k < n_on:            # the last one to three rows
        row, x = w2[on[k]], xs[k]
        for j in range(n_hidden):
            hidden[j] += x * np.float32(row[j])
        k += 1
    n_out = out.shape[0]
    for k in range(n_out):
        out[k] = b3[k]
    for j in range(n_hidden):
        h = hidden[j]
        if h > 0:
            for k in range(n_out):
                out[k] += h * w3[j, k]
    for k in range(n_out):
        out[k] = 0.5 * (1.0 + math.tanh(0.5 * out[k]))


def warm_up() -> None:
    """Compile (or load from the cache) the forward pass, so that no move pays for it (done
    when a network is loaded)."""
    for acc_type, w2_type in ((np.int32, np.int8), (np.float32, np.float32)):
        forward_one(np.zeros(4, acc_type), np.ones(4, np.float32), np.zeros((4, 2), w2_type),
                    np.ones(4, np.float32), np.zeros(2, np.float32), np.zeros((2, 4), np.float32),
                    np.zeros(4, np.float32), np.zeros(2, np.float32), np.zeros(4, np.float32))
