"""The layers after the accumulator, compiled (numba; cached on disk, releases the GIL).

:func:`forward_one` goes from one accumulator to the four scores: the first layer's scale,
ReLU, the 512x512 layer as a sum of the rows of ``W2`` for the units that are on (about half
are off after the ReLU, and are skipped), ReLU, the output layer and the sigmoid.

These compute what :meth:`nnue.network.Network.forward` computes with numpy (batches still
go through it, as BLAS matrix products); the hidden layers are float32 in both, summed in
another order, so scores agree to float32 rounding (tested to 1e-5).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True)


@njit(fastmath=True, **_JIT)
def forward_one(acc, scale, w2, b2, w3, b3, hidden, out):
    """The scores of one accumulator ``acc`` ([H1], int32 or float32) into ``out`` ([4]):
    ``sigmoid(relu(relu(acc * scale) @ W2 + b2) @ W3 + b3)``. ``hidden`` is a float32
    scratch of [H2]."""
    n_in, n_hidden = w2.shape
    for j in range(n_hidden):
        hidden[j] = b2[j]
    for i in range(n_in):
        x = np.float32(acc[i] * scale[i])
        if x > 0:
            row = w2[i]
            for j in range(n_hidden):
                hidden[j] += x * row[j]
    for k in range(out.shape[0]):
        z = b3[k]
        for j in range(n_hidden):
            h = hidden[j]
            if h > 0:
                z += h * w3[j, k]
        out[k] = 0.5 * (1.0 + math.tanh(0.5 * z))


def warm_up() -> None:
    """Compile (or load from the cache) the forward pass, so that no move pays for it (done
    when a network is loaded)."""
    for acc_type in (np.int32, np.float32):
        forward_one(np.zeros(4, acc_type), np.ones(4, np.float32), np.zeros((4, 2), np.float32),
                    np.zeros(2, np.float32), np.zeros((2, 4), np.float32),
                    np.zeros(4, np.float32), np.zeros(2, np.float32), np.zeros(4, np.float32))
