"""The network's value of a leaf, compiled: the NNUE (:mod:`nnue`) read from the accumulator
the compiled search keeps along its path (its twin:
:class:`snake.evaluation.network.NnueEvaluator`).

A search with the network keeps, per ply, the accumulator of ``you``'s view, moved on from
the parent's by the step's change report (:func:`nnue.feature_transformer.apply_changes`),
and values a leaf by a blend of board control and :func:`network_value`
(:mod:`.leaf`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from nnue.feature_transformer import block_offset
from nnue.features import N_PIECES
from nnue.layers import forward_one
from snake.core import report_rows
from snake.core.jit import JIT
from snake.core.occupancy import candidate_moves
from snake.core.state import G_WIDTH, Packed
from snake.evaluation.compiled.control import LIMIT


@njit(**JIT)
def network_value(g, s, you, net, acc, hidden, out, moves):
    """The network's value of ``s`` for ``you`` from its accumulator ``acc``: ``2 p - 1``
    with ``p`` the best score among ``you``'s candidate moves (the Python search's
    :class:`snake.evaluation.network.NnueEvaluator`)."""
    w1, b1, scale, w2, w2_scale, b2, w3, b3 = net
    forward_one(acc, scale, w2, w2_scale, b2, w3, b3, hidden, out)
    count = candidate_moves(g, s, you, moves)
    best = -1.0
    for k in range(count):
        if out[moves[k]] > best:
            best = out[moves[k]]
    if count == 0:
        for m in range(4):
            best = max(best, out[m])
    return max(-LIMIT, min(LIMIT, 2.0 * best - 1.0))


#: What a search with the network keeps: ``weight`` of the network's value in the leaves'
#: value (0: board control only; the arrays are then empty and nothing is updated), the
#: feature block's first index ``offset``, per ply the accumulator of ``you``'s view and its
#: feature counts (``acc[ply]``, ``counts[ply]``) and the step's change report
#: (``changes[ply]``), and scratch for the forward pass.
NetworkStack = namedtuple("NetworkStack", "weight offset acc counts changes hidden out")


_NO_NETWORK = (np.zeros((1, 1), np.int8), np.zeros(1, np.int32), np.ones(1, np.float32),
               np.zeros((1, 1), np.int8), np.ones(1, np.float32), np.zeros(1, np.float32),
               np.zeros((1, 4), np.float32), np.zeros(4, np.float32))


def network_stack(packed: Packed, you: int, network, weight: float,
                  plies: int) -> tuple[tuple, NetworkStack]:
    """The network's arrays and a :class:`NetworkStack` for a search of ``packed`` from
    ``you``'s view with the network's value at ``weight`` in the leaves, ``plies`` deep;
    weight 0 (no network, or none for this ruleset and board) gives empty ones."""
    offset = block_offset(packed) if network is not None and weight > 0 else None
    if offset is None or not network.quantised:
        empty = NetworkStack(0.0, 0, np.zeros((1, 1), np.int32), np.zeros((1, 1), np.int16),
                             np.zeros((1, 1, 4), np.int32), np.zeros(1, np.float32),
                             np.zeros(4, np.float32))
        return _NO_NETWORK, empty
    g = packed.g
    side = int(g[G_WIDTH])
    hidden = network.hidden
    net = (network.w1, network.b1, network.w1_scale, network.w2, network.w2_scale, network.b2,
           network.w3, network.b3)
    stack = NetworkStack(float(weight), int(offset),
                         np.zeros((plies + 2, hidden[0]), np.int32),
                         np.zeros((plies + 2, side * side * N_PIECES), np.int16),
                         np.zeros((plies + 1, report_rows(g), 4), np.int32),
                         np.zeros(hidden[1], np.float32), np.zeros(4, np.float32))
    return net, stack
