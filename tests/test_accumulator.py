"""The accumulator (SPEC §4): incremental updates equal a full refresh, turn after turn.

Whole games come from two sources: games played here with the rules engine
(``snake.rules.play_turn``, started by ``snake.setup.new_game`` when it exists, else from a
drawn start of stacked snakes), and the official engine's recorded games in
``../shared/vectors`` (when present). Each living snake keeps its own accumulator, updated
every turn from its previous active set, and is compared with a fresh refresh.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest

from nnue.accumulator import Accumulator
from nnue.features import N_FEATURES, active_features
from nnue.network import Network
from snake.board import MOVES, Board, Game, GameState, Ruleset, Settings, Snake
from snake.diagram import from_ascii

HIDDEN = (32, 16)
RULESETS = ("standard", "constrictor", "royale", "wrapped", "solo", "squad")
VECTORS = Path(__file__).resolve().parents[2] / "shared" / "vectors"


@pytest.fixture(scope="module")
def float_net() -> Network:
    return Network.random(5, hidden=HIDDEN)


@pytest.fixture(scope="module")
def quant_net(float_net) -> Network:
    return float_net.quantise()


# --- games ----------------------------------------------------------------------------


def start_state(ruleset: str, side: int, n: int, rng: random.Random) -> GameState:
    """The start of a game: ``snake.setup.new_game`` if the rules helper's module exists,
    else ``n`` stacked snakes on distinct random squares with some food."""
    ids = [f"s{i}" for i in range(n)]
    squads = [f"q{i % 2}" for i in range(n)] if ruleset == "squad" else None
    game_map = "royale" if ruleset == "royale" else "standard"
    try:
        from snake.setup import new_game
    except ImportError:
        new_game = None
    if new_game is not None:
        return new_game(ruleset, side, side, ids, map=game_map, rng=rng, game_id="acc-test",
                        squads=squads)
    squares = rng.sample([(x, y) for x in range(1, side - 1) for y in range(1, side - 1)], n + 3)
    snakes = [Snake(i, [squares[k]] * 3, squad=(squads[k] if squads else ""))
              for k, i in enumerate(ids)]
    board = Board(side, side, squares[n:], [], snakes)
    return GameState(Game("acc-test", Ruleset(ruleset, settings=Settings()), map=game_map), 0,
                     board)


def pick_moves(state: GameState, rng: random.Random) -> dict[str, str]:
    """Mostly survivable random moves: avoid the neck, walls (unless wrapping) and bodies."""
    board = state.board
    blocked = {p for s in board.living_snakes for p in s.body[:-1]}
    moves = {}
    for s in board.living_snakes:
        safe = []
        for m in MOVES:
            p = state.step(s.head, m)
            if p != s.neck and board.in_bounds(p) and p not in blocked:
                safe.append(m)
        moves[s.id] = rng.choice(safe or list(MOVES))
    return moves


def rules_games(n_games: int, seed: int):
    """States of whole games played with the rules engine, all rulesets and sizes."""
    from snake.rules import is_game_over, play_turn
    rng = random.Random(seed)
    for g in range(n_games):
        ruleset = RULESETS[g % len(RULESETS)]
        side = (7, 11, 19)[(g // len(RULESETS)) % 3]
        n = 1 if ruleset == "solo" else rng.choice([2, 3, 4])
        state = start_state(ruleset, side, n, rng)
        states = [state]
        while not is_game_over(state) and state.turn < 150:
            state = play_turn(state, pick_moves(state, rng), rng)
            states.append(state)
        yield states


def _state_from_record(record: dict, raw: dict) -> GameState:
    pts = lambda items: [(p["x"], p["y"]) for p in items]  # noqa: E731
    snakes = [Snake(s["id"], pts(s["body"]), s["health"], s.get("name", ""), s.get("squad", ""),
                    eliminated_cause=s.get("eliminated_cause", ""))
              for s in raw["snakes"]]
    board = Board(raw["width"], raw["height"], pts(raw["food"]), pts(raw["hazards"]), snakes)
    return GameState(Game(record["game_id"], Ruleset(record["ruleset"]["name"])), raw["turn"],
                     board)


def vector_games(turns_per_file: int = 100):
    """The official engine's recorded games (the first ``turns_per_file`` turns of each
    file), one list of states per game."""
    for path in sorted(VECTORS.glob("*.jsonl.gz")):
        games: dict[str, list[GameState]] = {}
        with gzip.open(path, "rt") as fh:
            for _, line in zip(range(turns_per_file), fh):
                record = json.loads(line)
                games.setdefault(record["game_id"], []).append(
                    _state_from_record(record, record["before"]))
                if record.get("last_turn"):
                    games[record["game_id"]].append(_state_from_record(record, record["after"]))
        yield from games.values()


def check_game_states(states: list[GameState], net: Network) -> tuple[int, int]:
    """Follow every snake through ``states`` with ``update_state`` (and a copy taken every
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
            assert acc.update_state(state, you) == (active is not None)
            if active is None:
                assert np.array_equal(acc.acc, before)
                continue
            incremental += not acc.last_refreshed
            assert np.array_equal(acc.active, active)
            expected = net.accumulate(active)
            if net.quantised:
                assert np.array_equal(acc.acc, expected)
            else:
                assert np.allclose(acc.acc, expected, atol=1e-4, rtol=0)
            checks += 1
            if turn + 1 < len(states):
                nxt = states[turn + 1]
                twin = acc.copy()
                if twin.update_state(nxt, nxt.board.snake(sid)):
                    assert np.array_equal(twin.active, active_features(nxt, nxt.board.snake(sid)))
                    if net.quantised:
                        assert np.array_equal(twin.acc, net.accumulate(twin.active))
                assert np.array_equal(acc.active, active)   # the original is untouched
    return incremental, checks


def check_game(states: list[GameState], nets: list[Network]) -> tuple[int, int]:
    """Follow every snake through ``states`` with one accumulator per net, checking each
    update against a refresh. Returns (updates done incrementally, checks)."""
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
                acc.update(active)
                incremental += not acc.last_refreshed
                fresh = Accumulator(net)
                fresh.refresh(active)
                assert np.array_equal(acc.active, active)
                if net.quantised:
                    assert np.array_equal(acc.acc, fresh.acc)
                    assert np.array_equal(acc.scores(), fresh.scores())
                    assert np.array_equal(acc.scores(), net.evaluate(active))
                else:
                    assert np.allclose(acc.acc, fresh.acc, atol=1e-4, rtol=0)
                    assert np.allclose(acc.scores(), fresh.scores(), atol=1e-5)
                checks += 1
    return incremental, checks


def test_incremental_equals_refresh_in_rules_engine_games(float_net, quant_net):
    pytest.importorskip("snake.rules")
    incremental = checks = 0
    rulesets_seen = set()
    for states in rules_games(36, seed=1):
        rulesets_seen.add((states[0].game.ruleset.name, states[0].board.width))
        i, c = check_game(states, [float_net, quant_net])
        incremental += i
        checks += c
    assert len(rulesets_seen) == 18
    assert checks > 2000 and incremental > checks * 0.8


def test_update_state_equals_refresh_in_rules_engine_games(float_net, quant_net):
    incremental = checks = 0
    for k, states in enumerate(rules_games(36, seed=3)):
        i, c = check_game_states(states, quant_net if k % 3 else float_net)
        incremental += i
        checks += c
    assert checks > 2000 and incremental > checks * 0.8


@pytest.mark.skipif(not VECTORS.is_dir(), reason="no recorded games in ../shared/vectors")
def test_incremental_equals_refresh_in_recorded_games(quant_net):
    incremental = checks = 0
    for states in vector_games():
        i, c = check_game(states, [quant_net])
        incremental += i
        checks += c
        i, c = check_game_states(states, quant_net)
        incremental += i
        checks += c
    assert checks > 4000 and incremental > checks * 0.8


def test_update_state_mixed_with_array_updates(quant_net):
    rng = random.Random(8)
    from snake.rules import play_turn
    state = start_state("squad", 11, 4, rng)
    acc = Accumulator(quant_net)
    for turn in range(40):
        you = state.board.snake("s0")
        if not you.alive:
            break
        active = active_features(state, you)
        if turn % 4 == 3:
            acc.update(active)          # an array update in between
        elif turn % 7 == 6:
            acc.refresh(active)
        else:
            assert acc.update_state(state, you)
        assert np.array_equal(acc.active, active)
        assert np.array_equal(acc.acc, quant_net.accumulate(active))
        state = play_turn(state, pick_moves(state, rng), rng)
    assert acc.updates > 10


def test_update_state_odd_states(quant_net):
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
    assert acc.update_state(req.state, req.you)
    # Food off the board, then a body that is not a chain: the careful path, same result.
    req.state.board.food.append((9, 9))
    assert acc.update_state(req.state, req.you)
    assert np.array_equal(acc.acc, quant_net.accumulate(active_features(req.state, req.you)))
    req.state.board.snake("B").body[2] = (5, 0)
    assert acc.update_state(req.state, req.you)
    assert np.array_equal(acc.acc, quant_net.accumulate(active_features(req.state, req.you)))
    req.state.board.food.pop()
    req.state.board.snake("B").body[2] = (3, 2)
    assert acc.update_state(req.state, req.you)
    assert np.array_equal(acc.acc, quant_net.accumulate(active_features(req.state, req.you)))
    # No block: False and nothing changes.
    before = acc.acc.copy()
    req.state.game.ruleset.name = "wrapped_constrictor"
    assert not acc.update_state(req.state, req.you)
    assert np.array_equal(acc.acc, before)


# --- behaviour on hand-made sets ------------------------------------------------------


def test_random_diffs_small_and_large(quant_net, float_net):
    rng = np.random.default_rng(9)
    for net in (quant_net, float_net):
        acc = Accumulator(net)
        current = np.unique(rng.integers(0, N_FEATURES, 60)).astype(np.int32)
        acc.update(current)
        assert acc.last_refreshed and acc.refreshes == 1
        for step in range(300):
            size = int(rng.choice([1, 3, 8, 200]))   # small diffs, and whole-set changes
            keep = current[rng.random(len(current)) > size / 100]
            new = np.unique(np.concatenate((keep, rng.integers(0, N_FEATURES, size))))
            new = new.astype(np.int32)
            appeared = len(np.setdiff1d(new, current))
            vanished = len(np.setdiff1d(current, new))
            acc.update(new)
            if appeared + vanished < len(new):
                assert not acc.last_refreshed and acc.last_columns == appeared + vanished
            else:
                assert acc.last_refreshed and acc.last_columns == len(new)
            expected = net.accumulate(new)
            if net.quantised:
                assert np.array_equal(acc.acc, expected)
            else:
                assert np.allclose(acc.acc, expected, atol=1e-4, rtol=0)
            current = new
        assert acc.updates > 100 and acc.refreshes > 10


def test_same_set_touches_nothing(quant_net):
    acc = Accumulator(quant_net)
    active = np.array([3, 70, 900], dtype=np.int32)
    acc.update(active)
    before = acc.acc.copy()
    acc.update(active.copy())
    assert not acc.last_refreshed and acc.last_columns == 0
    assert np.array_equal(acc.acc, before)


def test_empty_set_and_refresh_fallback(quant_net):
    acc = Accumulator(quant_net)
    acc.update(np.array([], dtype=np.int32))
    assert np.array_equal(acc.acc, quant_net.b1)
    acc.update(np.array([5, 6], dtype=np.int32))
    assert acc.last_refreshed   # 2 appeared >= 2 in the new set


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
    acc.refresh(active)
    scores = acc.scores()
    assert scores.shape == (4,) and ((0 <= scores) & (scores <= 1)).all()
    assert np.array_equal(scores, quant_net.evaluate(active))


def test_copy_is_independent(quant_net):
    acc = Accumulator(quant_net)
    a = np.array([10, 20, 30, 40], dtype=np.int32)
    b = np.array([10, 20, 30, 41], dtype=np.int32)
    acc.refresh(a)
    twin = acc.copy()
    twin.update(b)
    assert np.array_equal(acc.acc, quant_net.accumulate(a)) and np.array_equal(acc.active, a)
    assert np.array_equal(twin.acc, quant_net.accumulate(b)) and np.array_equal(twin.active, b)
    acc.update(b)
    assert np.array_equal(acc.acc, twin.acc)


def test_reset_forgets(quant_net):
    acc = Accumulator(quant_net)
    acc.refresh(np.array([1, 2, 3], dtype=np.int32))
    acc.reset()
    assert acc.active is None and not acc.acc.any() and acc.refreshes == 0
    with pytest.raises(RuntimeError):
        acc.scores()
    acc.update(np.array([1, 2], dtype=np.int32))
    assert acc.last_refreshed


def test_bad_sets_are_refused(quant_net):
    acc = Accumulator(quant_net)
    for bad, error in [
        (np.array([3, 3], dtype=np.int32), ValueError),           # repeated
        (np.array([9, 3, 9], dtype=np.int32), ValueError),        # repeated, unsorted
        (np.array([5, -1], dtype=np.int32), IndexError),
        (np.array([-1, 3], dtype=np.int32), IndexError),
        (np.array([N_FEATURES], dtype=np.int32), IndexError),
        (np.array([[1, 2]], dtype=np.int32), TypeError),
        (np.array([1.5]), TypeError),
        ([1, 2], TypeError),
    ]:
        with pytest.raises(error):
            acc.refresh(bad)
        with pytest.raises(error):
            acc.update(bad)
    assert acc.active is None
    acc.refresh(np.array([1, 2], dtype=np.int32))
    for bad, error in [(np.array([3, 3], dtype=np.int32), ValueError),
                       (np.array([1, N_FEATURES], dtype=np.int32), IndexError),
                       (np.array([-5, 1], dtype=np.int32), IndexError)]:
        with pytest.raises(error):
            acc.update(bad)
    assert np.array_equal(acc.active, [1, 2])
    assert np.array_equal(acc.acc, quant_net.accumulate(np.array([1, 2], dtype=np.int32)))
    # Unique but unsorted sets are fine.
    acc.update(np.array([7, 2, 1], dtype=np.int32))
    assert np.array_equal(acc.acc, quant_net.accumulate(np.array([1, 2, 7], dtype=np.int32)))
    acc.reset()
    acc.update(np.array([1, 2], dtype=np.int64))
    assert acc.active.dtype == np.int32


def test_update_with_the_encoders_set(quant_net):
    from nnue.features import active_features_and_set
    from snake.rules import play_turn
    rng = random.Random(4)
    state = start_state("standard", 11, 3, rng)
    acc, plain = Accumulator(quant_net), Accumulator(quant_net)
    for _ in range(30):
        you = state.board.snake("s0")
        got = active_features_and_set(state, you)
        if got is None:
            break
        active, as_set = got
        assert np.array_equal(active, active_features(state, you))
        assert as_set == frozenset(active.tolist())
        acc.update(active, as_set=as_set)
        plain.update(active)
        assert np.array_equal(acc.acc, plain.acc)
        assert np.array_equal(acc.acc, quant_net.accumulate(active))
        state = play_turn(state, pick_moves(state, rng), rng)
    assert acc.updates > 10
    with pytest.raises(ValueError, match="as_set"):
        acc.update(np.array([1, 2, 3], dtype=np.int32), as_set=frozenset({1, 2}))
    with pytest.raises(ValueError, match="as_set"):
        acc.refresh(np.array([1, 2, 3], dtype=np.int32), as_set=frozenset({1, 2}))
