"""The compiled search's pieces against the reference, and the compiled search itself.

Move generation (candidate and cheap moves) and exact results must be those of the Python
search (snake.rules.candidate_moves, snake.search.plan.cheap_move / terminal_value) on
positions of every ruleset; the search's tactics are tested with the Python search's in
tests/test_search.py (the ``compiled`` parameter)."""

from __future__ import annotations

import numpy as np
import pytest

from snake import core, rules
from snake.core.occupancy import candidate_moves, cheap_move
from snake.core.state import EncodeError
from snake.diagram import from_ascii
from snake.rules import MOVES
from snake.search import plan as search_plan
from snake.search.compiled.tree import terminal_value
from snake.search.strategy import SearchStrategy
from tests.games import positions


def test_move_generation_equals_the_reference():
    checked = 0
    out = np.zeros(4, dtype=np.int64)
    for state in positions(seed=7, count=6000):
        packed = core.encode(state)
        obstacles = rules.obstacles_after_move(state)
        for i, snake in enumerate(state.board.snakes):
            if not snake.alive:
                continue
            count = candidate_moves(packed.g, packed.s, i, out)
            assert (tuple(MOVES[m] for m in out[:count])
                    == rules.candidate_moves(state, snake, obstacles))
            assert MOVES[cheap_move(packed.g, packed.s, i, out)] == \
                search_plan.cheap_move(state, snake, obstacles)
            checked += 1
    assert checked > 10_000
    # snakes about to starve, whose bodies block nothing (snake.rules.removed_before_collisions)
    starving = 0
    for k, state in enumerate(positions(seed=9, count=3000)):
        for j, snake in enumerate(state.board.snakes):
            if (j + k) % 2:
                snake.health = 1
        packed = core.encode(state)
        obstacles = rules.obstacles_after_move(state)
        for i, snake in enumerate(state.board.snakes):
            if snake.alive:
                starving += rules.removed_before_collisions(state, snake)
                count = candidate_moves(packed.g, packed.s, i, out)
                assert tuple(MOVES[m] for m in out[:count]) == \
                    rules.candidate_moves(state, snake, obstacles), (k, i)
    assert starving > 1000


def test_threads_share_one_draw_of_the_key_numbers():
    """Every thread keeps its own table of positions, but the random numbers of the keys
    are drawn once per size and shared (32 MB for 64 snakes on 100x100, drawn by each of a
    worker's threads before)."""
    import threading

    from snake.search.compiled.table import thread_table
    tables = []
    workers = [threading.Thread(target=lambda: tables.append(thread_table(64, 102 * 102, 1.0)))
               for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    a, b = tables
    assert a.zobrist is b.zobrist and a.zobrist_food is b.zobrist_food
    assert a.keys is not b.keys and a.zobrist.shape == (64, 102 * 102, 6)


def test_a_search_on_two_threads_has_the_room_of_two():
    """``table_mb`` is per thread of a search: two threads share a table of twice the
    entries. The thread keeps that room, and a one-thread search afterwards uses the first
    half of the same memory, so what the two stored there is still found."""
    import threading

    from snake.search.compiled.table import thread_table
    seen = []

    def serve():        # one serving thread: a search on one thread, two, then one again
        for threads in (1, 2, 1):
            seen.append(thread_table(4, 13 * 13, 1.0, threads))

    worker = threading.Thread(target=serve)
    worker.start()
    worker.join()
    one, two, one_again = seen
    assert two.keys.shape[0] == 2 * one.keys.shape[0] == 2 * 65536
    assert one_again.keys.shape[0] == one.keys.shape[0]
    two.keys[7] = 12345         # stored by the search on two threads
    assert one_again.keys[7] == 12345 and np.shares_memory(one_again.keys, two.keys)


def test_a_body_gone_before_collisions_is_no_obstacle_in_either_engine():
    """A (boxed in) can only go through B's body, free when the rules eliminate B before
    collisions whatever it plays: starving at health 1, or on hazards that take what health
    it has (hazard damage 14); not in constrictor (every snake is fed), nor with food in
    its reach. Both engines' move generation agree (wrapped: A also wraps up and left)."""
    from snake.board import Settings
    boxed = """
        A b b b . . .
        a b . b . . .
        a a . B . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """
    everywhere = [(x, y) for x in range(7) for y in range(7)]
    cases = [
        (dict(health={"B": 1}), ("right",)),
        (dict(health={"B": 15}, hazards=everywhere, settings=Settings(hazard_damage_per_turn=14)),
         ("right",)),
        (dict(health={"B": 16}, hazards=everywhere, settings=Settings(hazard_damage_per_turn=14)),
         ("up",)),                                     # it may live: its body stays
        (dict(health={"B": 1}, ruleset="constrictor"), ("up",)),
        (dict(health={"B": 1}, ruleset="wrapped"), ("up", "left", "right")),
        (dict(health={"B": 1}, ruleset="wrapped", food=True), ("up", "left")),
    ]
    out = np.zeros(4, dtype=np.int64)
    for kw, mine in cases:
        drawing = boxed.replace("a a . B", "a a * B") if kw.pop("food", False) else boxed
        state = from_ascii(drawing, kw.pop("ruleset", "standard"), **kw).state
        packed = core.encode(state)
        for i, snake in enumerate(state.board.snakes):
            count = candidate_moves(packed.g, packed.s, i, out)
            assert tuple(MOVES[m] for m in out[:count]) == rules.candidate_moves(state, snake), kw
        assert rules.candidate_moves(state, state.board.snake("A")) == mine, kw


def test_exact_results_equal_the_reference():
    checked = finished = 0
    for state in positions(seed=8, count=6000):
        after = rules.apply_rules(state, {})           # everyone repeats its last move
        packed = core.encode(after)
        for i, snake in enumerate(after.board.snakes):
            expected = search_plan.terminal_value(after, snake.id, 3)
            got = terminal_value(packed.g, packed.s, i, 3)
            assert (got == 1e8) == (expected is None), snake.id
            if expected is not None:
                assert got == expected
                finished += 1
            checked += 1
    assert checked > 10_000 and finished > 500


def test_a_node_limit_is_kept_and_named():
    request = from_ascii("""
    . . . . . . .
    . A a a . . .
    . . . . . . .
    . . . B b b .
    . . . . . . .
    """)
    result = SearchStrategy(engine="compiled", max_nodes=500, think_ms=60_000).search(request)
    assert result.engine == "compiled" and result.stopped == "nodes"
    assert 1 <= result.nodes <= 501 and result.depth >= 1
    assert result.pv[0]["A"] == result.move
    assert [it[0] for it in result.iterations] == list(range(1, result.depth + 1))


def test_a_state_the_core_cannot_hold_is_answered_by_the_seed_step():
    """No engine sends a broken body; the Python search could play it, but unbounded (it
    holds the GIL for its whole thinking time), so the seed step answers at once."""
    request = from_ascii("""
    . . . . .
    . A a . .
    . . . . .
    . . B b .
    . . . . .
    """)
    request.state.board.snakes[0].body.append((4, 4))    # a broken body: no compact form
    strategy = SearchStrategy(engine="compiled", max_nodes=200, think_ms=60_000)
    with pytest.raises(EncodeError, match="not neighbours"):
        strategy.search(request)
    decision = strategy.choose(request, None)
    assert decision.move in MOVES and decision.search is None
    assert decision.method.startswith("seed (") and "cannot hold this state" in decision.method


def test_food_and_hazards_off_the_board_are_left_out_not_a_reason_for_python():
    """Nothing can reach food or a hazard off the board: the compiled search leaves them out
    and searches (before, one stray item sent the whole move to the Python search)."""
    request = from_ascii("""
    . . . . .
    . A a . .
    . . . . .
    . . B b .
    . . . . .
    """)
    plain = SearchStrategy(engine="compiled", max_nodes=300, think_ms=60_000).search(request)
    request.state.board.food.append((9, 9))
    request.state.board.hazards.append((-1, 2))
    result = SearchStrategy(engine="compiled", max_nodes=300, think_ms=60_000).search(request)
    assert result.engine == "compiled"
    assert (result.move, result.nodes, result.scores) == (plain.move, plain.nodes, plain.scores)


def test_a_search_cut_short_in_its_first_depth_answers_nothing_it_did_not_compare():
    """A (at the bottom left) can go up into a dead end by B's body, or right into the
    open. Stopped after 3 nodes, the first depth has scored only its first move, up: that
    is no answer (the seed move answers), where before it was adopted alone."""
    request = from_ascii("""
    . . . . . . .
    b . . . . . .
    b . . . . . .
    b b . . . . .
    . b b B . . .
    A . . . . . .
    a a . . . . .
    """)
    for nodes in (3, 5):
        decision = SearchStrategy(engine="compiled", max_nodes=nodes, think_ms=60_000
                                  ).choose(request, None)
        assert decision.search.move is None and decision.search.depth == 0
        assert decision.search.pv == []
        assert "search completed nothing" in decision.method and decision.move == "right"
    assert SearchStrategy(engine="compiled", max_nodes=2000, think_ms=60_000
                          ).choose(request, None).move == "right"


def test_on_a_huge_board_with_many_snakes_the_clock_is_read_every_node():
    """A node on a 60×60 board with 40 snakes costs far more than an 11×11 one: past its
    deadline, the search stops at its first node, not 64 nodes later; and the packed
    state's rings hold the longest body and the search's depth, not the board's area."""
    import random
    import time

    from snake.board import Board, Game, GameState, Ruleset, Snake
    from snake.core.state import G_CAPACITY
    from snake.search.compiled.threads import run
    from snake.search.compiled.tree import MAX_PLY
    rng = random.Random(3)
    snakes = []
    for i in range(40):
        x, y = 1 + (i % 8) * 7, 2 + (i // 8) * 11
        snakes.append(Snake(f"s{i}", [(x, y + k) for k in range(9)], 90))
    state = GameState(Game("huge", Ruleset("standard")), 5,
                      Board(60, 60, [(rng.randrange(60), rng.randrange(60)) for _ in range(30)],
                            [], snakes))
    packed = core.encode(state, "s0", horizon=MAX_PLY)
    assert packed.g[G_CAPACITY] == 128                  # 9 + 64 + 16, a power of two
    found = run(packed, 0, [1, 2, 3], list(range(4, 40)), deadline=time.monotonic() - 1.0)
    assert found.nodes <= 1 and found.stopped == "deadline"
    assert core.encode(state, "s0").g[G_CAPACITY] == 4096     # a whole game: the area


def test_table_entries_of_other_rules_or_hazards_never_meet():
    """A thread's table outlives a search: its salt keeps apart a game's positions under
    other rules, settings or hazard squares (a map may move its hazards and keep their
    number) or on another board, and leaves a standard 11x11 game without hazards salted by
    game and snake alone."""
    from snake.search.compiled.alphabeta import salt_of
    request = from_ascii("""
    . . . . .
    . A a . .
    . . . . .
    . . B b .
    . . . . .
    """, game_id="salty")
    state = request.state
    plain = salt_of(state, "A")
    assert plain == salt_of(from_ascii("""
    . . . . .
    . A a . .
    . . . . .
    . . B b .
    . . . . .
    """, game_id="salty").state, "A")
    state.board.hazards = [(0, 0)]
    first = salt_of(state, "A")
    state.board.hazards = [(4, 4)]
    moved = salt_of(state, "A")
    wrapped = salt_of(from_ascii("""
    . . . . .
    . A a . .
    . . . . .
    . . B b .
    . . . . .
    """, "wrapped", game_id="salty").state, "A")
    wider = salt_of(from_ascii("""
    . . . . . .
    . A a . . .
    . . . . . .
    . . B b . .
    . . . . . .
    """, game_id="salty").state, "A")          # one game id sent on another board
    assert len({plain, first, moved, wrapped, wider}) == 5
    # the common case, standard 11x11 without hazards: by game and snake alone
    from snake.board import parse_request

    def eleven(body):
        you = {"id": "A", "health": 90, "body": [{"x": x, "y": 5} for x in body]}
        return parse_request({"game": {"id": "salty"}, "turn": 3, "you": you, "board": {
            "width": 11, "height": 11, "food": [], "snakes": [you]}}).state
    assert salt_of(eleven([1, 2, 3]), "A") == salt_of(eleven([7, 6]), "A")


def test_at_equal_depth_the_compiled_search_finds_the_python_search_value():
    """Same tree, same evaluation: whatever the order of moves and the table, alpha-beta's
    value of the root is the minimax value, so the two must agree exactly."""
    from snake.board import MoveRequest
    compared = 0
    for k, state in enumerate(positions(seed=3, count=3000)):
        living = [s for s in state.board.snakes if s.alive]
        if k % 60 or len(living) < 2:
            continue
        request = MoveRequest(state, living[0])
        for depth in (1, 2, 3):
            python = SearchStrategy(think_ms=60_000, max_depth=depth).search(request)
            compiled = SearchStrategy(think_ms=60_000, max_depth=depth,
                                      engine="compiled").search(request)
            assert compiled.depth == python.depth == depth or compiled.stopped == python.stopped
            assert abs(compiled.score - python.score) < 1e-9, (state.game.ruleset.name, depth)
            compared += 1
    assert compared >= 100


def test_best_replies_the_compiled_search_finds_the_python_search_value():
    """Best-reply search (``replies="best"``) is the same smaller tree in both engines:
    with two or three searched opponents, equal values at equal depth; and it is a
    different tree from the joint replies' (fewer nodes)."""
    from snake.board import MoveRequest
    compared = three = 0
    nodes = {"joint": 0, "best": 0}
    for k, state in enumerate(positions(seed=9, count=3000)):
        living = [s for s in state.board.snakes if s.alive]
        if k % 20 or len(living) < 3 or len(search_plan.plan_snakes(
                state, living[0].id, max_opponents=3, reach=30).opponents) < 2:
            continue      # (squad games: squadmates are not opponents)
        request = MoveRequest(state, living[0])
        for depth in (1, 2):
            python, compiled = (SearchStrategy(think_ms=60_000, max_depth=depth, replies="best",
                                               max_opponents=3, reach=30,
                                               engine=engine).search(request)
                                for engine in ("python", "compiled"))
            assert compiled.engine == "compiled" and python.engine == "python"
            assert len(python.opponents) >= 2 and python.replies == compiled.replies == "best"
            assert abs(compiled.score - python.score) < 1e-9, (state.game.ruleset.name, depth)
            compared += 1
            three += len(python.opponents) == 3
            if depth == 2:
                nodes["best"] += python.nodes
                nodes["joint"] += SearchStrategy(think_ms=60_000, max_depth=2, max_opponents=3,
                                                 reach=30).search(request).nodes
    assert compared >= 40 and three >= 20
    assert nodes["best"] < nodes["joint"]


def test_best_replies_against_one_opponent_are_its_joint_replies():
    """With one searched opponent every reply is a best reply: the same search, node for
    node (so 1v1 play does not change)."""
    from snake.board import MoveRequest
    compared = 0
    for k, state in enumerate(positions(seed=10, count=2000)):
        living = [s for s in state.board.snakes if s.alive]
        if k % 40 or len(living) != 2:
            continue
        request = MoveRequest(state, living[0])
        joint, best = (SearchStrategy(think_ms=60_000, max_nodes=3000, replies=replies,
                                      engine="compiled").search(request)
                       for replies in ("joint", "best"))
        assert (joint.move, joint.score, joint.nodes, joint.depth) == \
            (best.move, best.score, best.nodes, best.depth)
        assert best.replies == "joint"      # and it says so (explain, the game log)
        python = SearchStrategy(think_ms=60_000, max_depth=2, replies="best").search(request)
        assert python.replies == "joint"
        compared += 1
    assert compared >= 10


def test_best_replies_see_deeper_than_joint_ones_with_three_opponents():
    """At equal nodes, the tree of best replies is narrower with three opponents: it
    completes deeper iterations."""
    from snake.board import MoveRequest
    depth = {"joint": 0, "best": 0}
    for k, state in enumerate(positions(seed=9, count=3000)):
        living = [s for s in state.board.snakes if s.alive]
        if k % 30 or len(living) < 4 or len(search_plan.plan_snakes(
                state, living[0].id, max_opponents=3, reach=30).opponents) < 3:
            continue
        request = MoveRequest(state, living[0])
        for replies in depth:
            found = SearchStrategy(think_ms=60_000, max_nodes=5000, replies=replies,
                                   max_opponents=3, reach=30, engine="compiled").search(request)
            assert len(found.opponents) == 3
            depth[replies] += found.depth
    assert depth["best"] > depth["joint"] > 0


def test_principal_variation_search_keeps_the_value_and_saves_nodes():
    """PVS only narrows windows: deeper than the Python search can go in a test, the value
    with it equals the plain alpha-beta's, in every ruleset, and over many positions it
    visits fewer nodes."""
    import time

    from snake.search.compiled.threads import run
    nodes = {True: 0, False: 0}
    compared = 0
    for k, state in enumerate(positions(seed=5, count=2000)):
        living = [s for s in state.board.snakes if s.alive]
        if k % 50 or len(living) < 2:
            continue
        packed = core.encode(state)
        plan = search_plan.plan_snakes(state, living[0].id)
        index = {s.id: i for i, s in enumerate(state.board.snakes)}
        depth = 5 if len(living) == 2 else 3
        values = {}
        for pvs in (False, True):
            found = run(packed, index[plan.you], [index[o] for o in plan.opponents],
                        [index[c] for c in plan.cheap], deadline=time.perf_counter() + 600,
                        max_depth=depth, pvs=pvs)
            values[pvs] = (found.score, found.depth)
            nodes[pvs] += found.nodes
        assert abs(values[True][0] - values[False][0]) < 1e-9, (state.game.ruleset.name, values)
        compared += 1
    assert compared >= 30
    assert nodes[True] < nodes[False]


def test_many_searches_in_flight_share_the_cores_fairly():
    from snake.search.clock import think_time_ms
    request = from_ascii("""
    . . . . .
    . A a . .
    . . . . .
    . . B b .
    . . . . .
    """)
    import time

    from snake.search.strategy import MIN_SHARE_MS
    strategy = SearchStrategy(engine="compiled", max_concurrent=None)
    strategy.cores = 2
    full = think_time_ms(request.state.game.timeout)
    now = time.perf_counter()

    def ms(started, which="deadline"):
        return (getattr(strategy.budget(request, started=started), which) - started) * 1000
    strategy._in_flight = 2                      # as many searches as cores: the whole time
    assert ms(now) == pytest.approx(full)
    strategy._in_flight = 8                      # four times too many: a quarter each...
    assert ms(now) == pytest.approx(full / 4)
    assert ms(now, "hard_deadline") == pytest.approx(full)   # (the first iteration: all)
    strategy._in_flight = 1000                   # ...never below the floor
    assert ms(now) >= MIN_SHARE_MS
    # A move whose share passed while it waited for the CPU still thinks the floor from
    # now, within its whole time; past that, none.
    arrived = time.perf_counter() - full / 2 / 1000
    assert full / 2 + MIN_SHARE_MS <= ms(arrived) <= full
    assert ms(time.perf_counter() - 2 * full / 1000) == pytest.approx(full)


def test_with_the_network_the_compiled_search_finds_the_python_nnue_search_value():
    """The network's value in the leaves (accumulator kept from the step's change reports
    along the path): at equal depth the compiled search's root value is the Python search's
    with the NNUE evaluator (which brings each node's accumulator up to date from the
    state). Board control half and half is checked against the two values it blends."""
    from nnue.network import Network
    from snake.board import MoveRequest
    network = Network.random(5, hidden=(64, 32), quantise=True)
    compared = 0
    for k, state in enumerate(positions(seed=12, count=3000)):
        living = [s for s in state.board.snakes if s.alive]
        if k % 50 or len(living) < 2:
            continue
        request = MoveRequest(state, living[0])
        for depth in (1, 2):
            python = SearchStrategy(network, evaluator="nnue", think_ms=60_000,
                                    max_depth=depth).search(request)
            compiled = SearchStrategy(network, evaluator="nnue", think_ms=60_000, max_depth=depth,
                                      engine="compiled", network_weight=1.0).search(request)
            assert compiled.evaluator == python.evaluator or "no NNUE" in python.note
            assert abs(compiled.score - python.score) < 1e-5, (state.game.ruleset.name, depth)
            compared += 1
    assert compared >= 60


def test_the_arena_styles_are_compiled_searches_with_their_weights():
    from snake.board import MoveRequest
    from snake.strategies import get_strategy
    state = next(s for k, s in enumerate(positions(seed=2, count=500))
                 if k > 30 and len([x for x in s.board.snakes if x.alive]) >= 2)
    request = MoveRequest(state, [s for s in state.board.snakes if s.alive][0])
    for name, style in (("grower", "grower"), ("hunter", "hunter"), ("space-taker", "space")):
        strategy = get_strategy(name)
        assert strategy.engine == "compiled" and strategy.style == style
        found = strategy.search(request)
        assert found.move in rules.MOVES and found.evaluator == f"voronoi ({style})"
    with pytest.raises(ValueError):
        SearchStrategy(style="berserk", engine="compiled")
    with pytest.raises(ValueError):
        SearchStrategy(style="grower")          # the Python search has only the default


def test_exact_root_scores_are_each_moves_own_value():
    """With ``exact_root`` every root move is searched with a full window (self-play learns
    all four moves' values): the best move and value stay those of the normal search, and
    each move's score is its minimax value, the worst of the opponent's replies each
    searched one ply less from the position after both moves (checked in 1v1 standard,
    where no food spawns in the search and the turn number changes nothing)."""
    import time

    from snake.search.compiled.threads import run
    from snake.search.compiled.tree import PROVEN
    checked = 0
    for k, state in enumerate(positions(seed=8, count=3000)):
        living = [s for s in state.board.snakes if s.alive]
        if k % 20 or len(living) != 2 or state.game.ruleset.name != "standard":
            continue
        you, them = living
        index = {s.id: i for i, s in enumerate(state.board.snakes)}

        def search(st, depth, exact=False):
            return run(core.encode(st), index[you.id], [index[them.id]], [],
                       deadline=time.perf_counter() + 600, max_depth=depth, exact_root=exact)

        plain, exact = search(state, 3), search(state, 3, exact=True)
        assert (exact.move, exact.score, exact.depth) == (plain.move, plain.score, plain.depth)
        for move, score in exact.root_scores.items():
            assert score <= plain.root_scores[move] + 1e-9     # the plain one is a bound
            if abs(score) >= PROVEN / 2:
                continue
            replies = []
            for reply in rules.candidate_moves(state, them):
                after = rules.apply_rules(state, {you.id: MOVES[move], them.id: reply})
                mine = next(s for s in after.board.snakes if s.id == you.id)
                if rules.is_game_over(after) or len(rules.candidate_moves(after, mine)) < 2:
                    break       # a terminal or one-move child: valued without depth
                replies.append(search(after, 2).score)
            else:
                assert abs(score - min(replies)) < 1e-9, (move, score, replies)
                checked += 1
    assert checked >= 40


def _core_search(state, you_index=0, **options):
    """``snake.search.compiled.threads.run`` on ``state`` for its ``you_index``-th living snake,
    with the default plan of opponents."""
    from snake.search.compiled.threads import run
    living = [s for s in state.board.snakes if s.alive]
    plan = search_plan.plan_snakes(state, living[you_index].id)
    index = {s.id: i for i, s in enumerate(state.board.snakes)}
    return run(core.encode(state), index[plan.you], [index[o] for o in plan.opponents],
               [index[c] for c in plan.cheap], **options)


def test_threads_at_equal_depth_find_the_one_thread_value():
    """Lazy SMP: helper threads share the table but go no deeper than ``max_depth``, so
    the root value at that depth is the minimax value, as one thread finds it."""
    import time
    compared = 0
    for k, state in enumerate(positions(seed=9, count=2000)):
        living = [s for s in state.board.snakes if s.alive]
        if k % 50 or len(living) < 2:
            continue
        depth = 5 if len(living) == 2 else 3
        one = _core_search(state, deadline=time.perf_counter() + 600, max_depth=depth)
        two = _core_search(state, deadline=time.perf_counter() + 600, max_depth=depth, threads=3)
        assert abs(one.score - two.score) < 1e-9, (state.game.ruleset.name, one.score, two.score)
        assert one.depth == two.depth or one.stopped == two.stopped == "proven"
        # whichever thread finished first, the search says why it ended
        assert two.stopped == one.stopped, (one.stopped, two.threads)
        assert len(two.threads) == 3 and two.nodes == sum(n for _, n, _ in two.threads)
        compared += 1
    assert compared >= 30
    # Deeper, the threads meet in nodes and leave the replies and moves another is in for last:
    # the value is still the one thread's.
    deferred = 0
    for k, state in enumerate(positions(seed=9, count=600)):
        living = [s for s in state.board.snakes if s.alive]
        if k % 100 or len(living) != 2:
            continue
        one = _core_search(state, deadline=time.perf_counter() + 600, max_depth=8)
        two = _core_search(state, deadline=time.perf_counter() + 600, max_depth=8, threads=2)
        assert abs(one.score - two.score) < 1e-9, (one.score, two.score, two.deferred)
        assert one.deferred == 0        # alone, a thread never meets another
        deferred += two.deferred
    assert deferred > 0
    # One move: every thread stops after depth 1 (no helper skips to depth 2), and the
    # answer is the main thread's.
    request = from_ascii("""
    b . . . . . .
    b b b b B . .
    A a a a . . .
    . . . . . . .
    . . . . . . .
    """)
    one = _core_search(request.state, deadline=time.perf_counter() + 600, max_depth=6)
    three = _core_search(request.state, deadline=time.perf_counter() + 600, max_depth=6, threads=3)
    assert one.stopped == three.stopped == "single move" and MOVES[one.move] == "down"
    assert (three.depth, three.score, three.answered_by) == (one.depth, one.score, 0)


def test_a_search_and_its_helpers_stop_when_halted():
    """``halt`` stops the main thread and every helper where they next read the clock;
    the same flag stops the helpers when the main thread is done."""
    import threading
    import time
    halt = np.zeros(1, dtype=np.int64)
    found = []
    runner = threading.Thread(target=lambda: found.append(_core_search(
        from_ascii(OPEN_DUEL).state, deadline=time.perf_counter() + 60, threads=2, halt=halt)))
    runner.start()
    time.sleep(0.1)
    halt[0] = 1
    runner.join(timeout=30)
    assert not runner.is_alive() and found
    assert [reason for _, _, reason in found[0].threads] == ["halted", "halted"]


OPEN_DUEL = """
. . . . . . . . . . .
. . . . . . . . . . .
. . A a a . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . B b b .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
"""


OPEN_FOUR = """
. . . . . . . . . . .
. . . . . . . . . . .
. . A a a . . . . . .
. . . . . . . . . . .
. . . . . B b b . . .
. . . . . . . . . . .
. . d . . . . . . . .
. . d . . . . . . . .
. . D . . . . . . C .
. . . . . . . . . c .
. . . . . . . . . c .
"""


def test_in_a_duel_two_threads_take_turns_at_the_depths():
    """In a duel the helper searches the odd depths and the main thread the even ones
    (both the last), so that neither repeats the other's iterations; with more snakes
    searched (two opponents here) the main thread searches every depth. Whichever thread
    finishes answers with its own iterations."""
    import time
    duel = _core_search(from_ascii(OPEN_DUEL).state, deadline=time.perf_counter() + 600,
                        max_depth=8, threads=2)
    depths = [depth for depth, *_ in duel.iterations]
    assert depths == ([2, 4, 6, 8] if duel.answered_by == 0 else [1, 3, 5, 7, 8])
    assert duel.stopped == "max depth" and duel.depth == 8
    four = _core_search(from_ascii(OPEN_FOUR).state, deadline=time.perf_counter() + 600,
                        max_depth=4, threads=2)
    depths = [depth for depth, *_ in four.iterations]
    assert depths == ([1, 2, 3, 4] if four.answered_by == 0 else [1, 3, 4]), four.threads
    assert four.stopped == "max depth" and four.depth == 4


def test_threads_stop_with_the_search_and_a_node_limit_takes_one():
    import threading
    import time
    request = from_ascii(OPEN_DUEL)
    _core_search(request.state, deadline=time.perf_counter() + 600, max_nodes=100)   # compiled
    before = threading.active_count()
    found = _core_search(request.state, deadline=time.perf_counter() + 0.2, threads=2)
    assert threading.active_count() == before           # no helper left running
    assert found.move in range(4) and found.stopped == "deadline"
    assert len(found.threads) == 2 and found.threads[1][2] in ("halted", "deadline")
    assert found.nodes == sum(n for _, n, _ in found.threads)
    limited = _core_search(request.state, deadline=time.perf_counter() + 600, max_nodes=2000,
                           threads=2)
    assert len(limited.threads) == 1 and limited.stopped == "nodes"


def test_a_torn_table_entry_is_a_miss_not_a_wrong_value():
    """Threads write an entry's three words without a lock; a reader that meets words of
    two writes must not use them. Scrambling every stored value (keys and info kept) makes
    every entry such a torn one: the search then finds what it finds on an empty table."""
    import time

    from snake.search.compiled.table import new_table
    state = from_ascii(OPEN_DUEL).state
    cells = int(core.encode(state).g[core.state.G_CELLS])
    fresh = _core_search(state, deadline=time.perf_counter() + 600, max_depth=5,
                         table=new_table(8, cells, 1.0))
    table = new_table(8, cells, 1.0)
    _core_search(state, deadline=time.perf_counter() + 600, max_depth=5, table=table)
    reused = _core_search(state, deadline=time.perf_counter() + 600, max_depth=5, table=table)
    assert reused.nodes < fresh.nodes                   # the table is used when it is sound
    stored = table.keys != 0
    assert stored.sum() > 100
    table.values[stored] = np.roll(table.values[stored], 1) + 0.125
    torn = _core_search(state, deadline=time.perf_counter() + 600, max_depth=5, table=table)
    assert (torn.score, torn.nodes, torn.move) == (fresh.score, fresh.nodes, fresh.move)


def test_a_search_takes_its_share_of_the_servers_cores(monkeypatch):
    from snake.search.cores import LEDGER, CoreLedger
    from snake.search.strategy import make_search_strategy
    monkeypatch.delenv("NUPPEPPOU_SEARCH_THREADS", raising=False)
    request = from_ascii("""
    . . . . . . .
    . A a a . . .
    . . . . . . .
    . . . B b b .
    . . . . . . .
    """)
    strategy = make_search_strategy("search")          # every core unless told
    four = CoreLedger(cores=4)
    assert [strategy.search_threads(k, four) for k in (1, 2, 3, 4, 6)] == [4, 2, 1, 1, 1]
    capped = make_search_strategy("search", overrides={"threads": 2})
    assert [capped.search_threads(k, four) for k in (1, 2, 3)] == [2, 2, 1]
    result = strategy.search(request)
    assert result.threads == LEDGER.share(1) and result.move in MOVES
    assert LEDGER.in_flight() == 0                     # counted while it searched only
    limited = make_search_strategy("search", overrides={"max_nodes": 300}).search(request)
    assert limited.threads == 1 and limited.stopped == "nodes"
    with pytest.raises(ValueError, match="threads"):
        make_search_strategy("search", overrides={"threads": 0})


def test_a_helper_gives_its_core_back_when_another_search_starts():
    """Helper ``h`` runs while at most ``cores // (h + 1)`` searches are in flight on the
    server; past that it stops where it next reads the clock, and the main thread
    searches on alone to its deadline."""
    import threading
    import time

    from snake.search.cores import CoreLedger
    ledger = CoreLedger(cores=2)
    ledger.slots[0] = (1, 1)                          # this search
    found = []
    runner = threading.Thread(target=lambda: found.append(_core_search(
        from_ascii(OPEN_DUEL).state, deadline=time.perf_counter() + 1.2, threads=2,
        ledger=ledger.slots, cores=ledger.cores)))
    runner.start()
    time.sleep(0.2)
    ledger.slots[1] = (1, 1)                          # another game's search starts
    runner.join(timeout=30)
    (main_depth, main_nodes, main_reason), (_, helper_nodes, helper_reason) = found[0].threads
    assert (main_reason, helper_reason) == ("deadline", "core given back")
    assert helper_nodes > 0 and main_nodes > helper_nodes
    # In this duel the main thread searched the even depths while the helper searched,
    # and the odd ones again once the helper had gone (at 200 ms).
    depths = [(depth, ms) for depth, _, _, _, ms in found[0].iterations]
    assert found[0].answered_by == 0 and all(d % 2 == 0 for d, ms in depths if ms < 150)
    assert any(d % 2 == 1 for d, ms in depths if ms > 200), depths


def test_the_cores_available_count_a_containers_quota(tmp_path, monkeypatch):
    """os.cpu_count() counts the host's CPUs; a container's quota may allow fewer, and
    searches sized to the host would answer late."""
    import os

    from snake.search import cores
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "cpu.max").write_text("150000 100000\n")
    assert cores.cgroup_cpu_quota(str(v2)) == 1.5
    (v2 / "cpu.max").write_text("max 100000\n")
    assert cores.cgroup_cpu_quota(str(v2)) is None
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("200000")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000")
    assert cores.cgroup_cpu_quota(str(v1)) == 2.0
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1")
    assert cores.cgroup_cpu_quota(str(v1)) is None
    assert cores.cgroup_cpu_quota(str(tmp_path / "none")) is None
    monkeypatch.setattr(cores, "cgroup_cpu_quota", lambda: 1.5)
    assert cores.available_cores() == 1
    monkeypatch.setattr(cores, "cgroup_cpu_quota", lambda: None)
    assert cores.available_cores() == len(os.sched_getaffinity(0))
    # a strategy reads the cores when a move is asked: a worker sets them after the fork
    monkeypatch.setenv("NUPPEPPOU_SEARCH_CORES", "3")
    search = SearchStrategy(engine="compiled")
    assert search.cores == 3
    monkeypatch.setenv("NUPPEPPOU_SEARCH_CORES", "1")
    assert search.cores == 1

