"""The search strategy (snake.search): tactics on drawn boards, budgets, determinism and the
NNUE accumulator stack. Searches run with node limits, not wall-clock time, except the one
generous deadline check."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from snake.board import MoveRequest, Settings
from snake.diagram import from_ascii
from snake.evaluation.control import board_control
from snake.evaluation.network import NnueEvaluator
from snake.rules import MOVES, play_turn
from snake.rules.start import new_game
from snake.search.clock import Budget, SearchTimeout, think_time_ms
from snake.search.plan import PROVEN, plan_snakes
from snake.search.strategy import VARIANTS, SearchStrategy, make_search_strategy

#: The searches: the Python alpha-beta and the compiled alpha-beta (snake.core).
ALGORITHMS = ("alphabeta", "compiled")


def strategy_for(algorithm, **options):
    if algorithm == "compiled":
        options["engine"] = "compiled"
    return SearchStrategy(**options)


def search(request, algorithm="alphabeta", nodes=4000, **options):
    return strategy_for(algorithm, max_nodes=nodes, think_ms=60_000, **options).search(request)


# --- tactics ---------------------------------------------------------------------------

# Hazards deal 100 damage: the ~ squares are walls. Left of A is a corridor two squares
# long that ends in a hazard: entering it is death on the third turn.
CORRIDOR = """
. . . . . B b
~ ~ ~ . . . .
. . . A a a .
~ ~ ~ . . . .
. . . . . . .
"""


def corridor():
    return from_ascii(CORRIDOR, hazards=[(0, 2)],
                      settings=Settings(hazard_damage_per_turn=100))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_avoids_a_dead_end_corridor(algorithm):
    result = search(corridor(), algorithm)
    assert result.move in ("up", "down")


@pytest.mark.parametrize("algorithm", ("alphabeta", "compiled"))
def test_alphabeta_proves_the_corridor_is_lost(algorithm):
    result = search(corridor(), algorithm, nodes=3000)
    assert result.depth >= 3
    assert result.scores["left"] <= -PROVEN
    assert result.score > -PROVEN


# A (length 3) must not step onto the food next to the head of the longer B: B can meet it
# there and A loses the head-to-head.
HEAD_TO_HEAD = """
. . . b b . .
. . . b . . .
. . . B . . .
. . . * . . .
. . . A . . .
. . . a . . .
. . . a . . .
"""


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_avoids_a_losing_head_to_head(algorithm):
    request = from_ascii(HEAD_TO_HEAD, health={"A": 30})
    result = search(request, algorithm)
    assert result.move in ("left", "right")


@pytest.mark.parametrize("algorithm", ("alphabeta", "compiled"))
def test_alphabeta_sees_the_head_to_head_as_lost(algorithm):
    result = search(from_ascii(HEAD_TO_HEAD, health={"A": 30}), algorithm)
    assert result.scores["up"] <= -PROVEN


# B is cornered: its only move is down, next to A's head. A is longer and wins by meeting it.
CORNERED = """
B b b . . . .
. . . . . . .
A a a a a . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
"""


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_takes_a_winning_head_to_head(algorithm):
    result = search(from_ascii(CORNERED), algorithm)
    assert result.move == "up"


@pytest.mark.parametrize("algorithm", ("alphabeta", "compiled"))
def test_alphabeta_proves_the_head_to_head_win(algorithm):
    result = search(from_ascii(CORNERED), algorithm)
    assert result.score >= PROVEN
    assert result.stopped == "proven"
    assert result.pv[0] == {"A": "up", "B": "down"}


# Both snakes are starving (health 3) and there is one food. A is two moves from it, B
# three: going straight there wins (B starves); dawdling lets B meet A on the food.
FOOD_RACE = """
. . . . . . .
* . . B b b .
. A a a . . .
. . . . . . .
. . . . . . .
"""


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_wins_a_food_race(algorithm):
    request = from_ascii(FOOD_RACE, health={"A": 3, "B": 3})
    result = search(request, algorithm, nodes=6000)
    assert result.move in ("left", "up")


@pytest.mark.parametrize("algorithm", ("alphabeta", "compiled"))
def test_alphabeta_proves_the_food_race(algorithm):
    result = search(from_ascii(FOOD_RACE, health={"A": 3, "B": 3}), algorithm, nodes=6000)
    assert result.score >= PROVEN
    assert result.scores["down"] < PROVEN


# --- the strategy --------------------------------------------------------------------


def game_position(n_snakes=4, side=11, turns=12, seed=5):
    """A position a few turns into a game where everyone moved sensibly (the default
    without its duel head, so that a retuned head moves no test's position)."""
    rng = random.Random(seed)
    ids = [chr(ord("A") + i) for i in range(n_snakes)]
    state = new_game("standard", side, side, ids, rng=rng)
    players = {sid: make_search_strategy("search", overrides={"value_head": None}) for sid in ids}
    for _ in range(turns):
        moves = {}
        for s in state.board.living_snakes:
            strategy = players[s.id]
            strategy.max_nodes, strategy.think_ms = 40, 60_000
            moves[s.id] = strategy.choose(MoveRequest(state, s), None).move
        state = play_turn(state, moves, rng)
    return MoveRequest(state, state.board.snake("A"))


def test_deadline_holds_under_a_tiny_budget():
    """A 20 ms game thinks 5 ms: every search stops by its deadline (or finishes first) and
    answers a legal move. (How far past the deadline a stop lands is measured by
    ``python -m bench.search``, not asserted here: the machine is shared.)"""
    request = game_position()
    request.state.game.timeout = 20          # thinks max(20 - 150, 25% of 20) = 5 ms
    assert think_time_ms(20) == 5
    for algorithm in ALGORITHMS:
        strategy = strategy_for(algorithm)
        began = time.perf_counter()
        assert strategy.budget(request, started=began).deadline == began + 0.005
        request.received = began
        decision = strategy.choose(request, None)
        assert decision.move in MOVES
        assert decision.search is None or decision.search.stopped in (
            "deadline", "proven", "single move", "max depth"), decision.search.stopped


def test_a_move_whose_time_is_gone_before_the_search_is_the_seed_move():
    """When parsing a huge body and the seed step have used the move's time (here it came
    a second ago), the seed move is answered at once: no search is begun that could only
    complete nothing after encoding the state."""
    request = game_position()
    request.received = time.perf_counter() - 1.0
    for engine in ("compiled", "python"):
        decision = SearchStrategy(engine=engine).choose(request, None)
        assert decision.search is None and decision.method.endswith("no time left to search")
        from snake.seed import SeedStrategy
        assert decision.move == SeedStrategy().choose(request, None).move


def test_falls_back_to_the_seed_move_when_nothing_completes():
    request = from_ascii(CORRIDOR, hazards=[(0, 2)], settings=Settings(hazard_damage_per_turn=100))
    strategy = SearchStrategy(max_nodes=1, think_ms=60_000)
    decision = strategy.choose(request, None)
    assert decision.method.startswith("seed")
    from snake.seed import SeedStrategy
    assert decision.move == SeedStrategy().choose(request, None).move


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("n_snakes", (2, 4))
def test_same_position_and_node_limit_give_the_same_answer(algorithm, n_snakes):
    request = game_position(n_snakes)
    first = search(request, algorithm, nodes=300)
    second = search(request, algorithm, nodes=300)
    assert (first.move, first.score, first.depth, first.pv, first.scores) == \
        (second.move, second.score, second.depth, second.pv, second.scores)


def test_decision_details_show_the_search():
    decision = SearchStrategy(max_nodes=500, think_ms=60_000).choose(from_ascii(CORNERED), None)
    info = decision.search
    assert decision.method == "search (alphabeta, voronoi)"
    assert info.depth >= 1 and info.nodes >= 1 and info.pv


def test_many_snakes_search_the_near_ones_and_play_the_rest_cheaply():
    request = game_position(8, side=19, turns=3)
    plan = plan_snakes(request.state, "A", max_opponents=2, reach=6)
    assert 1 <= len(plan.opponents) <= 2
    assert set(plan.opponents) | set(plan.cheap) == \
        {s.id for s in request.state.board.living_snakes} - {"A"}
    for algorithm in ALGORITHMS:
        result = search(request, algorithm, nodes=200)
        assert result.move in MOVES


def test_board_control_splits_a_symmetric_board_evenly():
    request = from_ascii("""
    . . . . .
    . A . B .
    . a . b .
    . . . . .
    """)
    control = board_control(request.state)
    assert control["A"][0] == control["B"][0]


def test_unknown_options_are_refused():
    with pytest.raises(ValueError, match="engine"):
        SearchStrategy(engine="minimax")
    with pytest.raises(ValueError, match="evaluator"):
        SearchStrategy(evaluator="magic")
    with pytest.raises(ValueError, match="network"):
        SearchStrategy(evaluator="nnue")
    with pytest.raises(ValueError, match="unknown search strategy"):
        make_search_strategy("search-deluxe")


def test_bad_margin_in_the_environment_is_refused(monkeypatch):
    monkeypatch.setenv("NUPPEPPOU_SEARCH_MARGIN_MS", "soon")
    with pytest.raises(ValueError, match="NUPPEPPOU_SEARCH_MARGIN_MS"):
        make_search_strategy("search")


def test_a_node_limit_from_the_environment_makes_arena_searches_reproducible(monkeypatch):
    """``NUPPEPPOU_SEARCH_MAX_NODES``: every variant stops at that many nodes (besides the
    clock), so two searches of one position give one answer; a bad value is refused."""
    monkeypatch.setenv("NUPPEPPOU_SEARCH_MAX_NODES", "400")
    request = game_position(4)
    for name in ("search", "search-joint", "grower"):
        strategy = make_search_strategy(name)
        assert strategy.max_nodes == 400
        first, second = strategy.search(request), strategy.search(request)
        assert 1 <= first.nodes <= 401
        assert (first.move, first.score, first.depth, first.nodes) == \
            (second.move, second.score, second.depth, second.nodes)
    for bad in ("many", "0"):
        monkeypatch.setenv("NUPPEPPOU_SEARCH_MAX_NODES", bad)
        with pytest.raises(ValueError, match="NUPPEPPOU_SEARCH_MAX_NODES|max_nodes"):
            make_search_strategy("search")


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_the_default_searches_a_duel_as_search_joint_does_but_for_its_value_head(seed):
    """The default searches three snakes or more by best replies of the three nearest,
    valued by the hungry weights (search-joint: joint replies of the two nearest within
    six moves, the default weights); with one opponent the default without its value head
    and search-joint are the same search, node for node: same move, score, depth, nodes
    and line. With the head, the same tree is valued otherwise."""
    request = game_position(2, seed=seed)
    results = []
    for name, overrides in (("search", {"value_head": None}), ("search-joint", {}),
                            ("search", {})):
        strategy = make_search_strategy(name, overrides={"max_nodes": 3000, **overrides})
        strategy.think_ms = 60_000
        results.append(strategy.search(request))
    default, joint, headed = results
    assert default.evaluator == joint.evaluator == "voronoi"
    assert headed.evaluator == "voronoi + value head" and headed.replies == "joint"
    assert headed.scores != joint.scores
    assert default.replies == joint.replies == "joint"
    assert (default.move, default.score, default.depth, default.nodes, default.pv,
            default.scores) == (joint.move, joint.score, joint.depth, joint.nodes, joint.pv,
                                joint.scores)
    # every iteration alike: its depth, best move, score and nodes so far (not its time)
    assert [i[:4] for i in default.iterations] == [i[:4] for i in joint.iterations]
    # with four snakes they differ: who is searched, and how
    request = game_position(4, seed=seed)
    default = make_search_strategy("search", overrides={"max_nodes": 500}).search(request)
    joint = make_search_strategy("search-joint", overrides={"max_nodes": 500}).search(request)
    assert default.replies == "best" and joint.replies == "joint"
    assert default.evaluator == "voronoi (hungry)" and joint.evaluator == "voronoi"
    assert len(default.opponents) == 3 and not default.cheap
    assert len(joint.opponents) <= 2 and joint.cheap


@pytest.mark.parametrize("seed", (3, 8))
def test_a_multi_style_weighs_board_control_only_while_three_snakes_or_more_live(seed):
    """``multi_style`` is the style of three snakes or more: a four-snake position is valued
    with its weights, a duel (a four-snake game come down to two) as without it, node for
    node."""
    def searched(multi_style: str | None, snakes: int):
        strategy = make_search_strategy(
            "search", overrides={"max_nodes": 2000, "multi_style": multi_style})
        strategy.think_ms = 60_000
        return strategy.search(game_position(snakes, seed=seed))
    assert searched("grower", 4).evaluator == searched("grower", 3).evaluator == "voronoi (grower)"
    assert searched(None, 4).evaluator == "voronoi"
    duel, plain = searched("grower", 2), searched(None, 2)
    assert duel.evaluator == plain.evaluator == "voronoi + value head"   # the duel head's
    assert (duel.move, duel.score, duel.nodes, duel.pv, duel.scores) == (
        plain.move, plain.score, plain.nodes, plain.pv, plain.scores)
    with pytest.raises(ValueError, match="style 'eager'"):
        make_search_strategy("search", overrides={"multi_style": "eager"})


@pytest.mark.parametrize("variable, value", (("NUPPEPPOU_SEARCH_ENGINE", "python"),
                                             ("NUPPEPPOU_SEARCH_EVAL", "auto")))
def test_the_default_searched_in_python_values_every_position_by_the_reference(
        monkeypatch, variable, value):
    """The Python search has only the reference's weights: the default made to search in
    Python drops its multi_style instead of refusing to start, and says which it used."""
    monkeypatch.setenv(variable, value)
    strategy = make_search_strategy("search", overrides={"max_nodes": 300})
    assert strategy.engine == "python" and strategy.multi_style is None
    strategy.think_ms = 60_000
    found = strategy.search(game_position(4, seed=3))
    assert found.engine == "python" and found.style == "default"


def test_the_default_values_duels_by_the_shipped_head_and_nothing_else_by_it():
    """The default's duels are valued by board control corrected by its value head
    (weights/value-duel.npz); with three snakes or more, by board control alone; told to
    weigh board control otherwise, or ``value_head=none``, it searches without the head."""
    from snake.search.strategy import DEFAULT_VALUE_HEAD
    from snake.strategies import get_strategy

    default = make_search_strategy("search", overrides={"max_nodes": 300, "think_ms": 60_000})
    assert DEFAULT_VALUE_HEAD.is_file() and default.value_head.snakes == (2,)
    assert default.search(game_position(2, seed=3)).evaluator.endswith("+ value head")
    assert not default.search(game_position(4, seed=3)).evaluator.endswith("+ value head")
    # a duel is valued by it in games begun as duels only: not in a four-snake game's last
    duel = game_position(2, seed=3)
    duel.snakes_at_start = 4
    assert default.search(duel).evaluator == "voronoi"
    assert get_strategy("search[value_head=none]").value_head is None
    assert get_strategy("search[style=space]").value_head is None
    assert get_strategy("search-joint").value_head is None
    with pytest.raises(ValueError, match="value_head"):     # asked for, and never used
        get_strategy(f"search[style=space,value_head={DEFAULT_VALUE_HEAD}]")


def test_the_shipped_head_is_the_one_its_manifest_describes():
    """weights/MANIFEST.json's ``value_head`` names the head's bytes and checksum, how it
    was tuned and what it won, so the file in weights/ and the account of it cannot drift
    apart."""
    import hashlib
    import json

    from snake.evaluation.value_head import load_head
    from snake.search.strategy import DEFAULT_VALUE_HEAD

    manifest = json.loads((DEFAULT_VALUE_HEAD.parent / "MANIFEST.json").read_text())["value_head"]
    data = DEFAULT_VALUE_HEAD.read_bytes()
    assert manifest["weights_file"] == DEFAULT_VALUE_HEAD.name
    assert (manifest["bytes"], manifest["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
    head = load_head(DEFAULT_VALUE_HEAD)
    assert (manifest["digest"], manifest["games"]) == (head.digest, head.meta["games"])
    assert head.boards == ("standard 11x11",)       # where it was tuned and measured
    assert head.began == (2,)                       # in games begun as duels: where it won


def test_without_its_head_file_the_default_runs_on_board_control_and_says_so(
        monkeypatch, tmp_path, caplog):
    """An absent head file is like an absent network: logged, and the default searches
    without it; a file present but unreadable stops the start, as a bad network does."""
    import logging

    from snake.evaluation.value_head import HeadError
    from snake.search.strategy import VARIANTS

    monkeypatch.setitem(VARIANTS["search"], "value_head", str(tmp_path / "value-duel.npz"))
    # the service's loggers stop at "nuppeppou" once the app has set them up: listen there
    monkeypatch.setattr(logging.getLogger("nuppeppou"), "propagate", True)
    with caplog.at_level("WARNING", logger="nuppeppou.search"):
        strategy = make_search_strategy("search")
    assert strategy.value_head is None
    assert "value-duel.npz absent" in caplog.text
    (tmp_path / "value-duel.npz").write_bytes(b"not a head")
    with pytest.raises(HeadError, match="not a value head"):
        make_search_strategy("search")


def test_options_in_a_strategy_name_override_the_variant():
    from snake.strategies import get_strategy
    strategy = get_strategy("search[max_opponents=3, reach=9, last_chance=off]")
    assert (strategy.max_opponents, strategy.reach, strategy.last_chance) == (3, 9, False)
    assert get_strategy("search-joint[reach=none]").reach is None     # no distance limit
    assert get_strategy("search[multi_style=grower]").multi_style == "grower"
    assert get_strategy("search[multi_style=none]").multi_style is None
    assert get_strategy("search[value_head=none]").value_head is None     # no learned head
    assert strategy.engine == "compiled"
    assert get_strategy("grower[max_opponents=1]").style == "grower"
    assert get_strategy("search").last_chance is True
    for bad in ("search[max_opponents]", "search[depth=3]", "random[reach=1]", "search]"):
        with pytest.raises(ValueError, match="strategy"):
            get_strategy(bad)


@pytest.mark.parametrize("variable", ("NUPPEPPOU_SEARCH_ENGINE", "NUPPEPPOU_SEARCH_EVAL"))
def test_an_unknown_search_option_in_the_environment_is_refused(monkeypatch, variable):
    monkeypatch.setenv(variable, "minimax")
    with pytest.raises(ValueError, match=f"{variable}='minimax': expected one of"):
        make_search_strategy("search")


def test_budget_counts_nodes_and_stops():
    budget = Budget(None, max_nodes=3)
    for _ in range(3):
        budget.tick()
    with pytest.raises(SearchTimeout):
        budget.tick()
    with pytest.raises(ValueError):
        Budget(None, max_nodes=0)


def test_the_registry_offers_every_search_variant():
    from snake import strategies
    for name in VARIANTS:
        assert name in strategies.STRATEGIES
        assert strategies.get_strategy(name, network=None).name == name


# --- NNUE along the search path -------------------------------------------------------


@pytest.fixture(scope="module")
def network():
    from nnue.network import Network
    return Network.random(7, hidden=(32, 32), quantise=True)


class CheckingEvaluator(NnueEvaluator):
    """Checks every accumulator made along the search against a full refresh."""

    checked = 0

    def child(self, context, state):
        from nnue.features import active_features
        made = super().child(context, state)
        for sid, acc in made.accumulators.items():
            if acc is not None:
                fresh = self.network.accumulate(active_features(state, state.board.snake(sid)))
                assert np.array_equal(acc.acc, fresh)
                CheckingEvaluator.checked += 1
        return made


def test_nnue_accumulators_along_the_path_equal_full_refreshes(network, monkeypatch):
    # (the Python search: the NNUE evaluator's accumulators are Python objects)
    import snake.search.strategy as module
    monkeypatch.setattr(module, "NnueEvaluator", CheckingEvaluator)
    CheckingEvaluator.checked = 0
    request = game_position(4)
    session = __import__("nnue.accumulator", fromlist=["x"]).Accumulator(network)
    result = SearchStrategy(network, evaluator="nnue", max_nodes=150,
                            think_ms=60_000).search(request, session)
    assert result.evaluator == "nnue" and result.move in MOVES
    assert CheckingEvaluator.checked >= 100
    # the session's accumulator holds the root position, untouched by the search
    from nnue.features import active_features
    assert np.array_equal(session.acc,
                          network.accumulate(active_features(request.state, request.you)))


def test_nnue_search_is_deterministic_and_falls_back_off_its_boards(network):
    request = game_position(2)
    strategy = SearchStrategy(network, evaluator="nnue", max_nodes=200, think_ms=60_000)
    a, b = strategy.search(request), strategy.search(request)
    assert (a.move, a.score, a.pv) == (b.move, b.score, b.pv)
    odd = from_ascii(CORNERED)                     # 7x7 is covered ...
    assert strategy.search(odd).evaluator == "nnue"
    wide = from_ascii("""
    . . . . . . . .
    A a . . . . B b
    . . . . . . . .
    """)                                           # ... 8x3 is not: board control
    result = strategy.search(wide)
    assert result.evaluator == "voronoi" and "ruleset or board size" in result.note


@pytest.mark.parametrize("ruleset,n_snakes,side", [
    ("solo", 1, 7), ("wrapped", 2, 11), ("royale", 4, 11), ("constrictor", 2, 7),
    ("squad", 4, 11), ("wrapped_constrictor", 2, 11), ("standard", 8, 19),
])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_ruleset_gets_a_searched_legal_move(ruleset, n_snakes, side, algorithm):
    rng = random.Random(3)
    ids = [chr(ord("A") + i) for i in range(n_snakes)]
    squads = ["x", "x", "y", "y"] if ruleset == "squad" else None
    state = new_game(ruleset, side, side, ids, rng=rng, squads=squads)
    state = play_turn(state, {}, rng)
    request = MoveRequest(state, state.board.snake("A"))
    decision = strategy_for(algorithm, max_nodes=60, think_ms=60_000).choose(request, None)
    assert decision.move in MOVES
    assert decision.method.startswith("search")
    assert decision.search.nodes >= 1
    assert decision.search.engine == ("compiled" if algorithm == "compiled" else "python")


def test_a_snake_not_on_the_board_gets_the_seed_answer():
    request = from_ascii(CORNERED)
    request.you = request.you.copy()
    request.you.id = "ghost"
    request.you.eliminated_cause = "not-on-board"
    decision = SearchStrategy(max_nodes=50, think_ms=60_000).choose(request, None)
    assert decision.move == "up"
    assert "nothing to search" in decision.method


def test_a_single_candidate_move_is_answered_without_deepening():
    # A's only move that is not certain death is right (B just ate: its tail stays).
    request = from_ascii("""
    b b B . .
    A . . . .
    a a . . .
    """, stacked={"B": 1})
    result = search(request, nodes=5000)
    assert result.move == "right"
    assert result.stopped in ("single move", "proven")
    assert result.nodes < 50


def test_deadlines_hold_for_searches_sharing_the_cpu():
    """Searches in several threads at once each stop by their own deadline."""
    import threading
    request = game_position()
    stopped: list[str] = []

    def run(algorithm):
        decision = strategy_for(algorithm, think_ms=20).choose(request, None)
        assert decision.move in MOVES
        stopped.append(decision.search.stopped if decision.search else "seed")

    threads = [threading.Thread(target=run, args=(a,)) for a in ALGORITHMS * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(stopped) == 2 * len(ALGORITHMS)
    assert set(stopped) <= {"deadline", "proven", "single move", "seed"}, stopped


def test_a_busy_process_answers_the_seed_move_instead_of_searching():
    """With ``max_concurrent`` searches running, another move is the seed's, at once; the
    slot is free again once a search ends."""
    import threading

    entered, release = threading.Event(), threading.Event()

    class HeldSearch(SearchStrategy):   # a search that waits until the test lets it go
        def search(self, request, accumulator=None, *, started=None):
            entered.set()
            release.wait(30)
            return super().search(request, accumulator, started=started)

    request = game_position()
    strategy = HeldSearch(max_concurrent=1, max_nodes=200, think_ms=60_000)
    first: list = []
    worker = threading.Thread(target=lambda: first.append(strategy.choose(request, None)))
    worker.start()
    assert entered.wait(30)
    busy = strategy.choose(request, None)
    release.set()
    worker.join(30)
    assert busy.method.startswith("seed") and "1 searches already running" in busy.method
    assert busy.search is None
    assert first[0].method.startswith("search")
    assert strategy.choose(request, None).method.startswith("search")


def test_bad_concurrency_limit_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="max_concurrent"):
        SearchStrategy(max_concurrent=0)
    monkeypatch.setenv("NUPPEPPOU_SEARCH_MAX_CONCURRENT", "many")
    with pytest.raises(ValueError, match="NUPPEPPOU_SEARCH_MAX_CONCURRENT"):
        make_search_strategy("search")
