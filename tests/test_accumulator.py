"""The accumulator (SPEC §4): incremental updates equal a full refresh, turn after turn.

Whole games come from two sources: games played here with the rules engine
(``snake.rules.play_turn``, started by ``snake.rules.start.new_game``), and the official engine's
recorded games in ``tests/data/vectors`` (read by :mod:`snake.conformance`).
Each living snake keeps its own accumulator, moved on every turn, and is compared with a
fresh refresh.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from nnue.accumulator import Accumulator
from nnue.features import (
    BOARD_SIDES,
    N_FEATURES,
    RULESETS,
    FeatureChange,
    active_features,
    feature_change,
    feature_parts,
)
from nnue.network import Network
from snake.board import GameState
from snake.diagram import from_ascii
from snake.rules import candidate_moves, obstacles_after_move

HIDDEN = (32, 16)
VECTORS = Path(__file__).resolve().parent / "data" / "vectors"


@pytest.fixture(scope="module")
def float_net() -> Network:
    return Network.random(5, hidden=HIDDEN)


@pytest.fixture(scope="module")
def quant_net(float_net) -> Network:
    return float_net.quantise()


# --- games ----------------------------------------------------------------------------


def start_state(ruleset: str, side: int, n: int, rng: random.Random) -> GameState:
    """The start of a game of ``n`` snakes (squads of two in squad)."""
    from snake.rules.start import new_game
    ids = [f"s{i}" for i in range(n)]
    squads = [f"q{i % 2}" for i in range(n)] if ruleset == "squad" else None
    return new_game(ruleset, side, side, ids, map="royale" if ruleset == "royale" else "standard",
                    rng=rng, game_id="acc-test", squads=squads)


def pick_moves(state: GameState, rng: random.Random) -> dict[str, str]:
    """Mostly survivable random moves: among each snake's candidate moves (not its neck, a
    wall or a body)."""
    obstacles = obstacles_after_move(state)
    return {s.id: rng.choice(candidate_moves(state, s, obstacles))
            for s in state.board.living_snakes}


def rules_games(n_games: int, seed: int):
    """States of whole games played with the rules engine, all rulesets and sizes."""
    from snake.rules import is_game_over, play_turn
    rng = random.Random(seed)
    for g in range(n_games):
        ruleset = RULESETS[g % len(RULESETS)]
        side = BOARD_SIDES[(g // len(RULESETS)) % len(BOARD_SIDES)]
        n = 1 if ruleset == "solo" else rng.choice([2, 3, 4])
        state = start_state(ruleset, side, n, rng)
        states = [state]
        while not is_game_over(state) and state.turn < 150:
            state = play_turn(state, pick_moves(state, rng), rng)
            states.append(state)
        yield states


def vector_games(turns_per_file: int = 100):
    """The official engine's recorded games (the first ``turns_per_file`` turns of each
    file), one list of states per game."""
    from snake.conformance import game_from_line, read_lines, state_from_vector
    for path in sorted(VECTORS.glob("*.jsonl.gz")):
        games: dict[str, list[GameState]] = {}
        for _, line in zip(range(turns_per_file), read_lines(path)):
            game = game_from_line(line)
            states = games.setdefault(game.id, [])
            states.append(state_from_vector(line["before"], game))
            if line.get("last_turn"):
                states.append(state_from_vector(line["after"], game))
        yield from games.values()


def assert_sum_is(acc: Accumulator, active: np.ndarray) -> None:
    """``acc`` holds exactly ``active`` and the sum of a refresh of it."""
    net = acc.network
    assert np.array_equal(acc.active, active)
    expected = net.accumulate(active)
    if net.quantised:
        assert np.array_equal(acc.acc, expected)
        # the compiled forward pass: the same sum gives the same scores, and the numpy
        # reference's to float32 rounding (the hidden layers sum in another order)
        assert np.array_equal(acc.scores(), net.score(expected))
        assert np.allclose(acc.scores(), net.evaluate(active), atol=1e-6, rtol=0)
    else:
        assert np.allclose(acc.acc, expected, atol=1e-4, rtol=0)
        assert np.allclose(acc.scores(), net.evaluate(active), atol=1e-5)


def check_game_states(states: list[GameState], net: Network) -> tuple[int, int]:
    """Follow every snake through ``states`` with ``update_to`` (and a copy taken every
    turn and advanced one turn further, as a search would), checking each step against a
    refresh. Returns (updates done incrementally, checks)."""
    ids = [s.id for s in states[0].board.snakes]
    accs = {sid: Accumulator(net) for sid in ids}
    incremental = checks = 0
    for turn, state in enumerate(states):
        for sid in ids:
            you = state.board.snake(sid)
            active = active_features(state, you) if you is not None else None
            acc = accs[sid]
            before = acc.acc.copy()
            assert acc.update_to(state, you) == (active is not None)
            if active is None:
                assert np.array_equal(acc.acc, before)
                continue
            incremental += not acc.last_refreshed
            assert_sum_is(acc, active)
            checks += 1
            if turn + 1 < len(states):
                nxt = states[turn + 1]
                twin = acc.copy()
                if twin.update_to(nxt, nxt.board.snake(sid)):
                    assert_sum_is(twin, active_features(nxt, nxt.board.snake(sid)))
                assert_sum_is(acc, active)   # the original is untouched
    return incremental, checks


def check_game_changes(states: list[GameState], nets: list[Network]) -> tuple[int, int]:
    """Follow every snake through ``states`` with one accumulator per net, moved by
    :meth:`Accumulator.apply` with hand-made changes (the set differences of the active
    arrays, no parts), checking each step against a refresh. Returns (updates done
    incrementally, checks)."""
    ids = [s.id for s in states[0].board.snakes]
    accs = {(sid, k): Accumulator(net) for sid in ids for k, net in enumerate(nets)}
    incremental = checks = 0
    for state in states:
        for sid in ids:
            you = state.board.snake(sid)
            active = active_features(state, you) if you is not None else None
            for k, net in enumerate(nets):
                acc = accs[(sid, k)]
                if active is None:
                    acc.reset()
                    continue
                if acc.empty:
                    acc.refresh(active)
                else:
                    old, new = set(acc.active.tolist()), set(active.tolist())
                    acc.apply(FeatureChange(sorted(new - old), sorted(old - new)))
                    incremental += not acc.last_refreshed
                assert_sum_is(acc, active)
                checks += 1
    return incremental, checks


def test_hand_made_changes_equal_refresh_in_rules_engine_games(float_net, quant_net):
    incremental = checks = 0
    rulesets_seen = set()
    for states in rules_games(36, seed=1):
        rulesets_seen.add((states[0].game.ruleset.name, states[0].board.width))
        i, c = check_game_changes(states, [float_net, quant_net])
        incremental += i
        checks += c
    assert len(rulesets_seen) == 18
    assert checks > 2000 and incremental > checks * 0.8


def test_update_to_equals_refresh_in_rules_engine_games(float_net, quant_net):
    incremental = checks = 0
    for k, states in enumerate(rules_games(36, seed=3)):
        i, c = check_game_states(states, quant_net if k % 3 else float_net)
        incremental += i
        checks += c
    assert checks > 2000 and incremental > checks * 0.8


def test_incremental_equals_refresh_in_recorded_games(quant_net):
    assert VECTORS.is_dir(), f"no recorded games in {VECTORS.resolve()}"
    incremental = checks = 0
    for states in vector_games():
        i, c = check_game_changes(states, [quant_net])
        incremental += i
        checks += c
        i, c = check_game_states(states, quant_net)
        incremental += i
        checks += c
    assert checks > 4000 and incremental > checks * 0.8


def test_update_to_in_random_order_with_copies(quant_net, float_net):
    """Accumulators that mostly follow a game turn by turn but also jump to other states
    and views, get copied from each other, refreshed and moved by hand-made changes:
    every result equals a refresh."""
    rng = random.Random(12)
    states = [s for g in rules_games(12, seed=5) for s in g[:60]]
    for net in (quant_net, float_net):
        pool = [[Accumulator(net), 0, "s0"] for _ in range(3)]   # accumulator, state, view
        for _ in range(800):
            entry = rng.choice(pool)
            r = rng.random()
            if r < 0.1:
                other = rng.choice(pool)
                entry[:] = [other[0].copy(), other[1], other[2]]
            elif r < 0.2:
                entry[1] = rng.randrange(len(states))
            entry[1] = min(entry[1] + 1, len(states) - 1)
            acc, state = entry[0], states[entry[1]]
            you = state.board.snake(entry[2])
            if you is None or rng.random() < 0.05:
                you = rng.choice(state.board.snakes)
                entry[2] = you.id
            active = active_features(state, you)
            if r > 0.97 and active is not None:
                acc.refresh(active)
            elif r > 0.94 and active is not None and not acc.empty:
                old, new = set(acc.active.tolist()), set(active.tolist())
                acc.apply(FeatureChange(list(new - old), list(old - new)))
            else:
                before = None if acc.empty else acc.active
                assert acc.update_to(state, you) == (active is not None)
                if active is None:
                    assert (before is None and acc.empty) or np.array_equal(acc.active, before)
                    continue
            assert_sum_is(acc, active)
        assert sum(a[0].updates for a in pool) > 200


def test_update_to_after_refresh_and_hand_made_changes(quant_net):
    rng = random.Random(8)
    from snake.rules import play_turn
    state = start_state("squad", 11, 4, rng)
    acc = Accumulator(quant_net)
    for turn in range(40):
        you = state.board.snake("s0")
        if not you.alive:
            break
        active = active_features(state, you)
        if turn % 4 == 3 and turn:
            old, new = set(acc.active.tolist()), set(active.tolist())
            acc.apply(FeatureChange(list(new - old), list(old - new)))   # no parts
        elif turn % 7 == 6:
            acc.refresh(active)
        else:
            assert acc.update_to(state, you)
        assert_sum_is(acc, active)
        state = play_turn(state, pick_moves(state, rng), rng)
    assert acc.updates > 10


def test_update_to_odd_states(quant_net):
    req = from_ascii("""
        . . . . . . .
        . A a a . * .
        . . . a . . .
        . . . . . . .
        . B b b . . .
        . . . b . . .
        . . . . . . .
    """, "royale", hazards=[(0, 0), (0, 0)])
    acc = Accumulator(quant_net)
    assert acc.update_to(req.state, req.you)
    # Food off the board, then a body that is not a chain: the careful path, same result.
    req.state.board.food.append((9, 9))
    assert acc.update_to(req.state, req.you)
    assert_sum_is(acc, active_features(req.state, req.you))
    req.state.board.snake("B").body[2] = (5, 0)
    assert acc.update_to(req.state, req.you)
    assert_sum_is(acc, active_features(req.state, req.you))
    req.state.board.food.pop()
    req.state.board.snake("B").body[2] = (3, 2)
    assert acc.update_to(req.state, req.you)
    assert_sum_is(acc, active_features(req.state, req.you))
    # No block: False and nothing changes.
    before = acc.acc.copy()
    req.state.game.ruleset.name = "wrapped_constrictor"
    assert not acc.update_to(req.state, req.you)
    assert np.array_equal(acc.acc, before)


def test_feature_change_of_a_move_touches_head_neck_and_tail():
    req = from_ascii("""
        . . . . . . .
        . A a a . * .
        . . . a . . .
        . . . . . . .
        . . . . . . .
        . . . . . b B
        . . . . . . .
    """)
    from snake.rules import play_turn
    state, you = req.state, req.you
    old = feature_parts(state, you)
    nxt = play_turn(state, {you.id: "down", "B": "up"}, random.Random(1))
    new = feature_parts(nxt, nxt.board.snake(you.id))
    change = feature_change(old, new)
    assert change.parts is new
    # per snake that moved: new head and neck pieces added, old head and tail removed
    assert len(change.added) == 4 and len(change.removed) == 4
    assert set(active_features(nxt, nxt.board.snake(you.id)).tolist()) == (
        set(active_features(state, you).tolist()) - set(change.removed) | set(change.added))
    assert len(feature_change(new, new)) == 0


# --- behaviour on hand-made changes ---------------------------------------------------


def test_random_changes_small_and_large(quant_net, float_net):
    """Random multiset changes (an index may be added several times): a feature is on
    while it occurs at least once, and the sum always equals a refresh of those."""
    rng = np.random.default_rng(9)
    for net in (quant_net, float_net):
        acc = Accumulator(net)
        occurrences = rng.integers(0, N_FEATURES, 60).tolist()
        acc.refresh(occurrences)
        assert acc.last_refreshed and acc.refreshes == 1
        for step in range(300):
            size = int(rng.choice([1, 3, 8, 200]))   # small changes, and whole-set ones
            removed = [f for f in occurrences if rng.random() < size / 100]
            added = rng.integers(0, N_FEATURES, size).tolist()
            added += added[:size // 3]               # some occur twice
            if rng.random() < 0.2 and occurrences:
                added.append(occurrences[0])         # one more occurrence of an active one
            before = set(occurrences)
            for f in removed:
                occurrences.remove(f)
            occurrences += added
            after = set(occurrences)
            switched = len(after - before) + len(before - after)
            acc.apply(FeatureChange(added, removed))
            if switched < len(after):
                assert not acc.last_refreshed and acc.last_columns == switched
            else:
                assert acc.last_refreshed and acc.last_columns == len(after)
            assert_sum_is(acc, np.array(sorted(after), dtype=np.int32))
        assert acc.updates > 100 and acc.refreshes > 10


def test_a_change_that_keeps_the_set_touches_nothing(quant_net):
    acc = Accumulator(quant_net)
    acc.refresh([3, 70, 900, 900])
    before = acc.acc.copy()
    acc.apply(FeatureChange())
    assert not acc.last_refreshed and acc.last_columns == 0
    acc.apply(FeatureChange([3], [900]))      # 3 twice now, 900 still once: same set
    assert not acc.last_refreshed and acc.last_columns == 0
    assert np.array_equal(acc.acc, before)
    acc.apply(FeatureChange([], [900]))
    assert acc.last_columns == 1 and np.array_equal(acc.active, [3, 70])


def test_empty_set_and_refresh_fallback(quant_net):
    acc = Accumulator(quant_net)
    acc.refresh(np.array([], dtype=np.int32))
    assert np.array_equal(acc.acc, quant_net.b1) and not acc.empty
    acc.apply(FeatureChange([5, 6]))
    assert acc.last_refreshed   # 2 switched on >= 2 in the new set
    assert_sum_is(acc, np.array([5, 6], dtype=np.int32))


def test_scores_from_a_drawn_board(quant_net):
    req = from_ascii("""
        . . . . . . .
        . A a a . * .
        . . . a . . .
        . . . . . . .
        . B b b . . .
        . . . b . . .
        . . . . . . .
    """)
    active = active_features(req.state, req.you)
    acc = Accumulator(quant_net)
    assert acc.update_to(req.state, req.you)
    scores = acc.scores()
    assert scores.shape == (4,) and ((0 <= scores) & (scores <= 1)).all()
    assert np.allclose(scores, quant_net.evaluate(active), atol=1e-6, rtol=0)


def test_copy_is_independent(quant_net):
    acc = Accumulator(quant_net)
    a = np.array([10, 20, 30, 40], dtype=np.int32)
    b = np.array([10, 20, 30, 41], dtype=np.int32)
    acc.refresh(a)
    twin = acc.copy()
    twin.apply(FeatureChange([41], [40]))
    assert_sum_is(acc, a)
    assert_sum_is(twin, b)
    acc.apply(FeatureChange([41], [40]))
    assert np.array_equal(acc.acc, twin.acc)


def test_reset_forgets(quant_net):
    acc = Accumulator(quant_net)
    acc.refresh(np.array([1, 2, 3], dtype=np.int32))
    acc.reset()
    assert acc.empty and acc.active is None and not acc.acc.any() and acc.refreshes == 0
    with pytest.raises(RuntimeError):
        acc.scores()
    with pytest.raises(RuntimeError):
        acc.apply(FeatureChange([1]))
    req = from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . A . . .
        . . . a . . .
        . . . . . . .
        . . . . . . .
    """)
    assert acc.update_to(req.state, req.you) and acc.last_refreshed


def test_bad_input_is_refused_and_changes_nothing(quant_net):
    acc = Accumulator(quant_net)
    for bad, error in [
        (np.array([5, -1], dtype=np.int32), IndexError),
        (np.array([-1, 3], dtype=np.int32), IndexError),
        (np.array([N_FEATURES], dtype=np.int32), IndexError),
        (np.array([[1, 2]], dtype=np.int32), TypeError),
        (np.array([1.5]), TypeError),
        ([1, "x"], TypeError),
    ]:
        with pytest.raises(error):
            acc.refresh(bad)
    assert acc.empty and acc.active is None
    acc.refresh([1, 2, 2])
    expected = quant_net.accumulate(np.array([1, 2], dtype=np.int32))
    for change, error in [
        (FeatureChange([7], [3]), ValueError),              # 3 is not active
        (FeatureChange([7], [1, 1]), ValueError),           # 1 occurs once only
        (FeatureChange([7, N_FEATURES], [2]), IndexError),
        (FeatureChange([-5], [1]), IndexError),
        (FeatureChange([1.5], [1]), TypeError),
    ]:
        with pytest.raises(error):
            acc.apply(change)
        assert np.array_equal(acc.active, [1, 2]) and np.array_equal(acc.acc, expected)
    # The counts survived too: removing one of the two occurrences of 2 keeps it active.
    acc.apply(FeatureChange([], [2]))
    assert np.array_equal(acc.active, [1, 2]) and np.array_equal(acc.acc, expected)
    # Unsorted and numpy integers are fine.
    acc.refresh(np.array([7, 2, 1], dtype=np.int64))
    assert acc.active.dtype == np.int32
    assert_sum_is(acc, np.array([1, 2, 7], dtype=np.int32))
    acc.apply(FeatureChange([np.int64(9)], [np.int32(7)]))
    assert_sum_is(acc, np.array([1, 2, 9], dtype=np.int32))
