"""Strategies by name: seed (NNUE or flood fill after the filter), floodfill, random."""

import numpy as np
import pytest

from nnue.accumulator import Accumulator
from nnue.features import active_features
from nnue.network import Network
from snake.decision import Decision
from snake.diagram import from_ascii
from snake.rules import MOVES
from snake.strategies import STRATEGIES, get_strategy, register_strategy

OPEN = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . A a a .
    . . . . . . .
    . B b b . . .
    . . . . . . .
"""


@pytest.fixture(scope="module")
def network():
    return Network.random(5, hidden=(16, 16), quantise=True)


def test_registry(monkeypatch):
    import snake.strategies as strategy_module

    assert {"seed", "floodfill", "random"} <= set(STRATEGIES)
    with pytest.raises(ValueError, match="unknown strategy 'nope'.*seed"):
        get_strategy("nope")

    class Always:
        name = "always-left"

        def choose(self, request, accumulator):
            return Decision("left")

    # Register into a copy, so other tests see the built-in registry only.
    monkeypatch.setattr(strategy_module, "_REGISTRY", dict(strategy_module._REGISTRY))
    monkeypatch.setattr(strategy_module, "STRATEGIES", strategy_module.STRATEGIES)
    register_strategy("always-left", lambda network=None, seed=None: Always())
    assert "always-left" in strategy_module.STRATEGIES
    assert get_strategy("always-left").choose(None, None).move == "left"


def test_seed_plays_the_network_among_allowed_moves(network):
    game = from_ascii(OPEN)
    acc = Accumulator(network)
    decision = get_strategy("seed", network=network).choose(game, acc)
    assert decision.method == "nnue"
    active = active_features(game.state, game.you)
    scores = decision.scores
    values = np.array([scores[m] for m in MOVES], dtype=np.float32)
    # a full refresh's sum scored by the same compiled forward pass: bit for bit; the
    # numpy reference only to float32 rounding (its matrix product sums in another order,
    # which differs between CPUs)
    assert np.array_equal(values, network.score(network.accumulate(active)))
    assert np.allclose(values, network.evaluate(active), atol=1e-6, rtol=0)
    allowed = decision.filter.allowed
    assert "right" not in allowed  # the neck
    best = max(allowed, key=lambda m: (scores[m], -MOVES.index(m)))
    assert decision.move == best


def test_seed_never_plays_a_removed_move_even_if_the_network_likes_it(network):
    # 7x7 (a size with features), A in the corner: only down is safe.
    game = from_ascii("""
        A a a . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . B b
    """)
    for seed in range(8):
        net = Network.random(seed, hidden=(8, 8), quantise=True)
        d = get_strategy("seed").choose(game, Accumulator(net))
        assert d.move == "down"


def test_floodfill_ignores_the_network(network):
    game = from_ascii(OPEN)
    acc = Accumulator(network)
    d = get_strategy("floodfill", network=network).choose(game, acc)
    assert d.method == "flood fill" and acc.active is None


def test_seed_falls_back_for_rulesets_without_features(network):
    game = from_ascii(OPEN, "wrapped_constrictor")
    d = get_strategy("seed").choose(game, Accumulator(network))
    assert d.method == "flood fill"


def test_random_is_seeded_uniform_and_never_reverses():
    game = from_ascii(OPEN)
    a = get_strategy("random", seed=42)
    b = get_strategy("random", seed=42)
    moves_a = [a.choose(game, None).move for _ in range(300)]
    moves_b = [b.choose(game, None).move for _ in range(300)]
    assert moves_a == moves_b
    assert "right" not in moves_a  # onto its own neck
    counts = {m: moves_a.count(m) for m in ("up", "down", "left")}
    assert all(70 <= c <= 130 for c in counts.values()), counts
    # It does walk into walls: it is the data-generation snake, not a careful one.
    corner = from_ascii("""
        A a a
        . . .
    """)
    seen = {get_strategy("random", seed=s).choose(corner, None).move for s in range(40)}
    assert seen == {"up", "down", "left"}
