"""The compiled feature transformer against the reference features: after every step of the
compiled core, the accumulator kept from the step's change report holds exactly the
features of :func:`nnue.features.active_features` on the decoded state, and the sum of
their rows; and the compiled forward pass gives the numpy forward pass's scores."""

from __future__ import annotations

import random

import numpy as np
import pytest

from nnue.accumulator import Accumulator
from nnue.feature_transformer import CoreAccumulator
from nnue.features import active_features
from nnue.network import Network
from snake import core
from snake.rules import candidate_moves, obstacles_after_move
from tests.games import positions


@pytest.fixture(scope="module")
def net():
    return Network.random(7, hidden=(32, 16), quantise=True)


def moves_for(state, rng):
    obstacles = obstacles_after_move(state)
    moves = {}
    for s in state.board.snakes:
        if s.alive:
            options = candidate_moves(state, s, obstacles) or ["up"]
            moves[s.id] = rng.choice(options) if rng.random() > 0.1 else rng.choice(
                ["up", "down", "left", "right"])
    return moves


def test_the_accumulator_kept_from_change_reports_equals_a_refresh(net):
    rng = random.Random(5)
    steps = views = 0
    rulesets = set()
    for k, start in enumerate(positions(seed=11, count=4000)):
        if k % 40:
            continue
        packed = core.encode(start)
        accumulators = {}
        for index, snake in enumerate(start.board.snakes):
            if snake.alive and active_features(start, snake) is not None:
                accumulators[index] = CoreAccumulator.of(net, packed, index)
        if not accumulators:
            continue
        rulesets.add(start.game.ruleset.name)
        for _ in range(12):
            state = core.decode(packed)
            if not any(s.alive for s in state.board.snakes):
                break
            packed, changes = core.apply_rules(packed, moves_for(state, rng), report=True)
            after = core.decode(packed)
            steps += 1
            for index, acc in list(accumulators.items()):
                you = after.board.snakes[index]
                acc.apply(packed, changes)
                if not you.alive:          # no features for a dead view: stop keeping it
                    del accumulators[index]
                    continue
                expected = active_features(after, after.board.snake(you.id))
                assert np.array_equal(acc.active(), expected), (after.game.ruleset.name, after.turn)
                assert np.array_equal(acc.acc, net.accumulate(expected))
                views += 1
    assert steps >= 500 and views >= 1000
    assert {"standard", "constrictor", "royale", "wrapped", "solo", "squad"} <= rulesets


def test_no_block_no_accumulator(net):
    from snake.rules.start import new_game
    state = new_game("wrapped_constrictor", 11, 11, ["a", "b"], rng=random.Random(1))
    assert CoreAccumulator.of(net, core.encode(state), 0) is None
    state = new_game("standard", 9, 9, ["a", "b"], rng=random.Random(1))
    assert CoreAccumulator.of(net, core.encode(state), 0) is None


def test_compiled_forward_pass_equals_numpy_to_float32_rounding():
    big = Network.random(3, quantise=True)
    rng = np.random.default_rng(0)
    for _ in range(50):
        active = np.unique(rng.integers(0, big.n_features, 60)).astype(np.int32)
        acc = Accumulator(big)
        acc.refresh(active)
        assert np.allclose(acc.scores(), big.evaluate(active), atol=1e-6, rtol=0)
    float_net = Network.random(3, hidden=(64, 32))
    acc = Accumulator(float_net)
    acc.refresh(active)
    assert np.allclose(acc.scores(), float_net.evaluate(active), atol=1e-5, rtol=0)
