"""The compiled search's leaf evaluator, one piece chosen once per search: board control by a
style (:mod:`.control`), board control corrected by a learned value head, or either blended
with the network's value (:mod:`.network`). The search holds one :class:`Leaf` and knows
nothing else of how a position is valued: it calls :func:`start` at its root,
:func:`evaluate` at its horizon, and, when the evaluator follows the path
(:attr:`Leaf.follows_path`: the network's accumulator moves along it), lets
:func:`play_turn` play each turn.

Speed: the :class:`Leaf` holds some fourteen arrays, and while numba counted a reference to
each in and out wherever it was handed to a compiled function or one of its tuples was taken
out, that cost the search 5-8 % of its nodes per second (the compiled code now runs without
numba's reference counting: :mod:`snake.core.jit`; a call still hands them over). So these
functions are
inlined where the search calls them (``inline="always"``, numba's own inlining), and the
search reads plain numbers of the leaf (``follows_path``, ``weight``) before anything
touches its arrays: without the network, a node touches only the workspace.
"""

from __future__ import annotations

from collections import namedtuple

from numba import njit

from nnue.feature_transformer import apply_changes
from nnue.feature_transformer import refresh as refresh_accumulator
from snake.core.jit import JIT
from snake.core.state import Packed
from snake.core.step import OVERFLOW, apply_rules
from snake.evaluation.compiled.control import control_value, workspace
from snake.evaluation.compiled.network import network_stack, network_value

#: A leaf evaluator: board control's workspace (its style's weights and a learned head's,
#: if any), the network's share of a leaf's value (``weight``, the stack's: 0 for none),
#: whether it follows the search's path (``follows_path``: with the network, whose
#: accumulator is kept per ply), the network's arrays (``net``) and its per-ply stack
#: (``nn``, :class:`.network.NetworkStack`).
Leaf = namedtuple("Leaf", "work weight follows_path net nn")


def leaf_evaluator(packed: Packed, you: int, plies: int, style: str = "default", head=None,
                   network=None, network_weight: float = 0.0) -> Leaf:
    """The leaf evaluator of a search of ``packed`` from ``you``'s view, ``plies`` deep:
    board control by ``style`` (:data:`.control.STYLES`), or ``head``'s value
    (:class:`snake.evaluation.value_head.ValueHead`) of its measurements, and with a
    (quantised) ``network`` at ``network_weight`` > 0 the blend ``(1 - w) * that + w *
    network``. One per thread: it holds the search's scratch."""
    work = workspace(packed.g, style, None if head is None else head.fields())
    net, nn = network_stack(packed, you, network, network_weight, plies)
    return Leaf(work, nn.weight, nn.weight > 0.0, net, nn)


@njit(inline="always", **JIT)
def start(g, root, you, leaf):
    """Set up ``leaf``'s state at the root ``root`` (ply 0): the network's accumulator of
    ``you``'s view."""
    if leaf.follows_path:
        nn = leaf.nn
        refresh_accumulator(g, root, you, nn.offset, leaf.net[1], leaf.net[0], nn.counts[0],
                            nn.acc[0])


@njit(inline="always", **JIT)
def play_turn(g, child, moves, you, ply, leaf):
    """Play ``moves`` on ``child`` (a copy of the position at ``ply``) for an evaluator that
    follows the path, and move its state along to ply + 1: the network's accumulator is the
    parent's moved on by the step's change report (a full refresh when the report
    overflowed)."""
    nn = leaf.nn
    changes = nn.changes[ply]
    n_changes = apply_rules(g, child, moves, -1, changes)
    for k in range(nn.counts.shape[1]):     # (a slice assigned from a row goes through a copy)
        nn.counts[ply + 1, k] = nn.counts[ply, k]
    for k in range(nn.acc.shape[1]):
        nn.acc[ply + 1, k] = nn.acc[ply, k]
    if n_changes == OVERFLOW:
        refresh_accumulator(g, child, you, nn.offset, leaf.net[1], leaf.net[0],
                            nn.counts[ply + 1], nn.acc[ply + 1])
    else:
        apply_changes(g, child, you, nn.offset, leaf.net[0], changes, n_changes,
                      nn.counts[ply + 1], nn.acc[ply + 1])


@njit(inline="always", **JIT)
def evaluate(g, s, you, ply, leaf, moves):
    """The value of the position ``s`` at ``ply`` for ``you`` (alive, the game not over):
    board control's (:func:`.control.control_value`), blended with the network's
    (:func:`.network.network_value`, from the accumulator at ``ply``) when ``leaf`` has
    one. ``moves``: scratch for four moves."""
    value = control_value(g, s, you, leaf.work)
    if leaf.weight > 0.0:
        nn = leaf.nn
        value = (1.0 - leaf.weight) * value + leaf.weight * network_value(
            g, s, you, leaf.net, nn.acc[ply], nn.hidden, nn.out, moves)
    return value
