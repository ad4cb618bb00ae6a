"""Game sessions and the 32-slot accumulator stack (SPEC §3)."""

import json
import random
import threading

import numpy as np
import pytest

from nnue.features import active_features
from nnue.network import Network
from nnue.pool import AccumulatorPool
from snake.board import MoveRequest, parse_request, state_to_request
from snake.rules import is_game_over, outcome_at_end, play_turn
from snake.rules.start import new_game
from snake.serving.sessions import SessionManager
from snake.strategies import get_strategy


@pytest.fixture(scope="module")
def network():
    return Network.random(7, hidden=(16, 16), quantise=True)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def play(ruleset="standard", side=11, snakes=4, seed=0, turns=60, game_id=None):
    """The requests snake s0 receives in one game played by flood-fill snakes with the
    rules engine (the last one is the /end body)."""
    rng = random.Random(seed)
    ids = [f"s{i}" for i in range(snakes)]
    state = new_game(ruleset, side, side, ids, rng=rng, game_id=game_id or f"g{seed}")
    players = {i: get_strategy("floodfill") for i in ids}
    requests = []
    while True:
        requests.append(parse_request(state_to_request(state, "s0")))
        if is_game_over(state) or not state.board.snake("s0").alive or state.turn >= turns:
            return requests
        moves = {}
        for s in state.board.living_snakes:
            req = parse_request(state_to_request(state, s.id))
            moves[s.id] = players[s.id].choose(req, None).move
        state = play_turn(state, moves, rng)


def start_request(game_id: str) -> MoveRequest:
    return play(game_id=game_id, turns=0)[0]


def test_32_leases_then_flood_fill_and_end_returns_the_slot(network):
    pool = AccumulatorPool(network, capacity=32)
    manager = SessionManager(pool)
    first = start_request("x")
    games = []
    for i in range(33):
        req = parse_request({**state_to_request(first.state, "s0"),
                             "game": {"id": f"game-{i}"}})
        games.append(req)
        manager.start(req)
    leased = [manager.session(f"game-{i}", "s0").accumulator for i in range(33)]
    assert all(a is not None for a in leased[:32])
    assert leased[32] is None
    assert pool.created == 32 and pool.free_count == 0
    with manager.use(games[32]) as acc:
        assert acc is None  # the 33rd game plays by flood fill
    assert manager.end(games[0]) is not None
    assert pool.free_count == 1 and ("game-0", "s0") not in manager
    late = parse_request({**state_to_request(first.state, "s0"), "game": {"id": "late"}})
    manager.start(late)
    assert manager.session("late", "s0").accumulator is leased[0]  # the recycled slot
    assert pool.created == 32


def test_repeated_start_keeps_the_session(network):
    pool = AccumulatorPool(network)
    manager = SessionManager(pool)
    req = start_request("g")
    a = manager.start(req)
    b = manager.start(req)
    assert a is b and pool.created == 1 and pool.free_count == 0   # one accumulator leased


def test_idle_sessions_are_reclaimed(network):
    clock = Clock()
    pool = AccumulatorPool(network, capacity=2)
    manager = SessionManager(pool, idle_limit=120, clock=clock)
    a, b = start_request("a"), start_request("b")
    manager.start(a)
    manager.start(b)
    assert pool.free_count == 0
    clock.now += 100
    with manager.use(b):
        pass
    clock.now += 30  # a idle 130 s, b 30 s
    c = start_request("c")
    manager.start(c)  # reclaims a first, so c gets its slot
    assert ("a", "s0") not in manager and ("b", "s0") in manager
    assert manager.session("c", "s0").accumulator is not None
    clock.now += 121
    assert manager.reclaim_idle() == 2
    assert len(manager) == 0 and pool.free_count == 2


def test_an_idle_service_does_not_report_its_last_games_as_open(network):
    """/health and /metrics read the stats: sessions past the idle limit are reclaimed
    first, though no game request has come since."""
    clock = Clock()
    pool = AccumulatorPool(network, capacity=2)
    manager = SessionManager(pool, idle_limit=120, clock=clock)
    manager.start(start_request("a"))
    assert manager.stats()["sessions"] == 1 and manager.stats()["free"] == 0
    clock.now += 121
    assert manager.stats() == {"sessions": 0, "created": 1, "free": 1, "capacity": 2}


def test_idle_sessions_are_looked_for_at_most_once_a_second(network):
    """Every request asks for a sweep of the table; it is made at most once a second (a
    table of 10,000 sessions took 219 ms a sweep), so a session past its limit waits at
    most that much longer."""
    from snake.serving.sessions import SWEEP_EVERY
    clock = Clock()
    manager = SessionManager(AccumulatorPool(network), idle_limit=1, clock=clock)
    manager.start(start_request("a"))          # a sweep, at 0
    clock.now += 0.6
    manager.start(start_request("b"))          # too soon for another
    clock.now += 0.6                            # a idle 1.2 s, past its limit
    assert manager.reclaim_idle() == 1 and ("a", "s0") not in manager
    clock.now += SWEEP_EVERY / 2                # b idle 1.1 s, but a sweep was just made
    assert manager.reclaim_idle() == 0 and ("b", "s0") in manager
    clock.now += SWEEP_EVERY / 2
    assert manager.reclaim_idle() == 1


def test_busy_sessions_are_not_reclaimed(network):
    clock = Clock()
    manager = SessionManager(AccumulatorPool(network), idle_limit=1, clock=clock)
    req = start_request("g")
    with manager.use(req) as acc:
        clock.now += 10
        assert manager.reclaim_idle() == 0
        assert acc is not None
    clock.now += 10
    assert manager.reclaim_idle() == 1


def test_unknown_games(network):
    pool = AccumulatorPool(network)
    manager = SessionManager(pool)
    requests = play(seed=3, turns=5)
    assert manager.end(requests[-1]) is None  # /end for a game never seen: nothing to do
    with manager.use(requests[3]) as acc:  # /move for an unknown game opens the session
        assert acc is not None and acc.active is None
        decision = get_strategy("seed").choose(requests[3], acc)
    assert decision.method == "nnue"
    assert manager.session("g3", "s0").accumulator is acc
    assert manager.end(requests[-1]) is not None and pool.free_count == 1


def test_games_the_network_does_not_cover_get_no_slot(network):
    pool = AccumulatorPool(network)
    manager = SessionManager(pool)
    odd = play(side=9, seed=1, turns=0, game_id="nine")[0]
    manager.start(odd)
    assert manager.session("nine", "s0").accumulator is None and pool.created == 0
    assert get_strategy("seed").choose(odd, None).method == "flood fill"


def test_scores_equal_a_full_refresh_whatever_the_order(network):
    """The cache never changes results: in order, repeated, out of order, interleaved."""
    manager = SessionManager(AccumulatorPool(network, capacity=4))
    seed = get_strategy("seed")
    game1 = play(seed=11, turns=40, game_id="one")[:-1]
    game2 = play(ruleset="wrapped", side=19, snakes=8, seed=12, turns=30, game_id="two")[:-1]
    rng = random.Random(5)
    shuffled = game1[:]
    rng.shuffle(shuffled)
    sequence = game1 + game1[5:9] + game1[3:4] * 3 + shuffled
    sequence = [r for pair in zip(sequence, game2 * 4) for r in pair]
    assert len(sequence) > 100
    for req in sequence:
        with manager.use(req) as acc:
            assert acc is not None
            decision = seed.choose(req, acc)
        # a full refresh's sum, scored by the same (compiled) forward pass: bit for bit
        reference = network.score(network.accumulate(active_features(req.state, req.you)))
        assert np.array_equal(np.array(list(decision.scores.values()),
                                       dtype=np.float32), reference)
    # The sequence did exercise the incremental path, not only refreshes.
    assert manager.session("one", "s0").accumulator.updates > 20


def test_an_exception_resets_the_accumulator(network):
    manager = SessionManager(AccumulatorPool(network))
    req = play(seed=2, turns=3)[2]
    with pytest.raises(RuntimeError):
        with manager.use(req) as acc:
            acc.update_to(req.state, req.you)
            raise RuntimeError("strategy failed")
    assert manager.session("g2", "s0").accumulator.active is None


def test_many_threads_at_once(network):
    """Many games on many threads, and several threads on one game: every answer equals
    the one computed alone from scratch, and the stack ends up whole."""
    pool = AccumulatorPool(network, capacity=6)
    manager = SessionManager(pool)
    seed = get_strategy("seed")
    games = [play(seed=20 + i, turns=25, game_id=f"t{i}") for i in range(8)]
    errors = []

    def reference(req, with_network):
        if not with_network:
            return get_strategy("floodfill").choose(req, None).move
        return get_strategy("seed").choose(req, _FreshAccumulator(network)).move

    def player(requests, shuffle_seed):
        try:
            order = requests[:-1]
            if shuffle_seed is not None:
                order = order[:]
                random.Random(shuffle_seed).shuffle(order)
            else:
                manager.start(requests[0])
            for req in order:
                with manager.use(req) as acc:
                    move = seed.choose(req, acc).move
                    with_network = acc is not None
                if move != reference(req, with_network):
                    errors.append((req.state.game.id, req.state.turn))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=player, args=(g, None)) for g in games]
    # Two more threads replay games 0 and 1 out of order at the same time.
    threads += [threading.Thread(target=player, args=(games[i], i)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for g in games:
        manager.end(g[-1])
    assert len(manager) == 0
    assert pool.free_count == pool.created == 6


class _FreshAccumulator:
    """Full refresh every time (the reference an accumulator must equal)."""

    def __init__(self, network):
        self.network = network
        self.active = None

    def update_to(self, state, you):
        self.active = active_features(state, you)
        return self.active is not None

    def scores(self):
        return self.network.evaluate(self.active)


def test_too_many_sessions_evicts_the_oldest(network):
    clock = Clock()
    pool = AccumulatorPool(network, capacity=2)
    manager = SessionManager(pool, max_sessions=3, clock=clock)
    for name in "abcd":
        clock.now += 1
        manager.start(start_request(name))
    assert len(manager) == 3 and ("a", "s0") not in manager
    assert manager.session("d", "s0").accumulator is not None  # a's slot went to c, b's kept
    assert pool.created == 2


def test_outcome_from_the_end_body():
    requests = play(seed=4, turns=400)
    last = requests[-1]
    you_alive = last.state.board.snake("s0") is not None
    others = [s for s in last.state.board.snakes if s.id != "s0"]
    expected = ("win" if you_alive and not others else "unfinished" if you_alive
                else "loss" if others else "draw")
    assert outcome_at_end(last.state, last.you) == expected
    # Built bodies for each case.
    from snake.diagram import from_ascii
    won = from_ascii(". A a a .")
    assert outcome_at_end(won.state, won.you) == "win"
    lost = from_ascii(". A a a . B")
    lost.state.board.snakes.remove(lost.you)
    lost.you.eliminated_cause = "not-on-board"
    assert outcome_at_end(lost.state, lost.you) == "loss"
    draw = from_ascii(". A a a .")
    draw.state.board.snakes.clear()
    draw.you.eliminated_cause = "not-on-board"
    draw.state.turn = 10
    assert outcome_at_end(draw.state, draw.you) == "draw"
    # /end comes one turn past the final turn (9): a last move on 8 fell on the final turn
    assert outcome_at_end(draw.state, draw.you, last_turn=9) == "draw"
    assert outcome_at_end(draw.state, draw.you, last_turn=8) == "draw"
    assert outcome_at_end(draw.state, draw.you, last_turn=7) == "loss"   # fell earlier
    assert outcome_at_end(draw.state, draw.you, last_turn=8, final_turn=10) == "loss"
    mates = from_ascii("B A a a .", "squad", squads={"A": "x", "B": "x"})
    assert outcome_at_end(mates.state, mates.you) == "win"
    not_mates = from_ascii("B A a a .", "standard", squads={"A": "x", "B": "x"})
    assert outcome_at_end(not_mates.state, not_mates.you) == "unfinished"
    solo = from_ascii(". A a a .", "solo")
    assert outcome_at_end(solo.state, solo.you) == "ended"


def test_a_process_that_did_not_serve_every_turn_does_not_guess_a_loss(network):
    """No one is left at the end: a draw if our snake fell on the final turn, a loss if
    before. A process that served every turn knows its last; one whose last turns may have
    gone to another worker says it cannot tell."""
    requests = play(seed=4, turns=12)
    end = requests[-1]
    end.state.board.snakes.clear()
    end.you.eliminated_cause = "not-on-board"
    for served, expected in ((requests[:6], "loss"), (requests[:6:2], "draw or loss")):
        manager = SessionManager(AccumulatorPool(network))
        for request in served:
            with manager.use(request):
                pass
        assert manager.end(end) == expected


def _with_latency(request: MoveRequest, latency: str) -> MoveRequest:
    """The request as the engine sends it after our last answer took ``latency`` ms."""
    request.you.latency = latency
    return request


def _margins(manager, requests, answers_ms, latencies):
    """The margin each /move got: the server spent ``answers_ms[t]`` on turn t (its arrival
    set that long before the ``with`` block ends), and the engine reports ``latencies[t]``
    for turn t - 1 in turn t's request."""
    import time
    margins = []
    for request, answer, latency in zip(requests, answers_ms, latencies):
        _with_latency(request, latency)
        with manager.use(request):
            margins.append(request.margin_ms)
            request.received = time.perf_counter() - answer / 1000.0
    return margins


def test_the_margin_follows_what_the_engine_measured():
    """The engine saw each answer 120 ms later than the server sent it: the game's margin
    becomes 120 ms + the safety; a late answer raises it for the next turns the margin
    looks at; before any latency is known the game has no margin of its own."""
    from snake.search.clock import MARGIN_SAFETY_MS, OVERHEAD_TURNS
    manager = SessionManager(None)
    turns = 4 + OVERHEAD_TURNS + 1
    requests = play(snakes=2, seed=3, turns=turns)[:turns]
    assert len(requests) == turns
    answers = [300.0] * turns
    latencies = ["0", "420", "420", "500.0", "420"] + ["421"] * (turns - 5)
    margins = _margins(manager, requests, answers, latencies)
    near = pytest.approx
    assert margins[0] is None
    assert margins[1] == near(120 + MARGIN_SAFETY_MS, abs=3)
    assert margins[2] == near(120 + MARGIN_SAFETY_MS, abs=3)
    # turn 3 says turn 2's answer was late (the engine reports the timeout): 200 ms over,
    # counted double since a late answer only bounds it from below
    assert margins[3] == near(2 * 200 + MARGIN_SAFETY_MS, abs=6)
    assert margins[3 + OVERHEAD_TURNS - 1] == margins[3]
    assert margins[3 + OVERHEAD_TURNS] == near(121 + MARGIN_SAFETY_MS, abs=3)


def test_the_margin_ignores_what_it_cannot_pair():
    """A latency that is no number, a request repeated for the same turn, a turn whose
    predecessor the server did not answer, or a late request for an older turn add
    nothing; with adaptation off there is none."""
    manager = SessionManager(None)
    requests = play(snakes=2, seed=4, turns=6)
    first, second, third, fourth = requests[0], requests[1], requests[3], requests[4]
    _margins(manager, [first], [300.0], ["0"])
    assert _margins(manager, [second], [300.0], ["fast"]) == [None]
    assert _margins(manager, [second], [300.0], ["450"]) == [None]  # turn 1 again: not turn 0's
    assert _margins(manager, [third], [300.0], ["450"]) == [None]   # turn 2 was never answered
    _margins(manager, [second], [300.0], ["450"])                   # turn 1, late and out of order
    assert _margins(manager, [fourth], [300.0], ["450"])[0] is not None  # turn 3 pairs with 4
    off = SessionManager(None, adaptive_margin=False)
    assert _margins(off, requests[:3], [300.0] * 3, ["0", "420", "420"]) == [None] * 3


#: Turn 10, A heading up; turn 11 after ``up``, and after ``left`` (the drawings of the
#: next two tests).
TURN_10 = """
    . . . . .
    . . A . .
    . . a . .
    . . a . .
    . . . . .
"""
WENT_UP = """
    . . A . .
    . . a . .
    . . a . .
    . . . . .
    . . . . .
"""
WENT_LEFT = """
    . . . . .
    . A a . .
    . . a . .
    . . . . .
    . . . . .
"""


def _next_turn_after(manager, answers, after):
    """A's request for turn 10 answered with each of ``answers`` in turn (300 ms each),
    then its request for turn 11 as drawn in ``after``, latency 0; that request."""
    import time

    from snake.diagram import from_ascii
    before = from_ascii(TURN_10, turn=10, game_id="missed")
    for answer in answers:
        request = parse_request(state_to_request(before.state, "A"))
        with manager.use(request):
            request.received = time.perf_counter() - 0.3
            request.answer = answer
    nxt = parse_request(state_to_request(from_ascii(after, turn=11, game_id="missed").state, "A"))
    nxt.you.latency = "0"
    with manager.use(nxt):
        pass
    return nxt


def test_an_answer_the_engine_did_not_apply_was_late_whatever_latency_it_reports():
    """We answered ``up`` on turn 10; turn 11 shows the engine moved us ``left`` (it
    repeats our last move when our answer is late or lost) and reports latency 0: the turn
    counts as a late answer (twice the time left after our 300 ms). Had it applied ``up``,
    latency 0 would tell nothing."""
    from snake.observability.metrics import ENGINE_MISSED
    from snake.search.clock import MARGIN_SAFETY_MS
    for after, expected, missed in ((WENT_LEFT, 2 * 200 + MARGIN_SAFETY_MS, 1),
                                    (WENT_UP, None, 0)):
        counted = ENGINE_MISSED._value.get()
        nxt = _next_turn_after(SessionManager(None), ("up",), after)
        assert nxt.margin_ms == (None if expected is None else pytest.approx(expected, abs=5))
        assert ENGINE_MISSED._value.get() - counted == missed


def test_no_missed_answer_when_the_engine_took_any_answer_of_the_turn_or_checks_are_off():
    """Turn 10 was asked twice (a retry) and answered ``up`` then ``left``: the engine
    taking ``left`` is no miss. A manager made with ``check_moves=False`` (requests replayed
    from games we did not play) never counts one."""
    from snake.observability.metrics import ENGINE_MISSED
    for check, answers in ((True, ("up", "left")), (False, ("up",))):
        counted = ENGINE_MISSED._value.get()
        nxt = _next_turn_after(SessionManager(None, check_moves=check), answers, WENT_LEFT)
        assert nxt.margin_ms is None and ENGINE_MISSED._value.get() == counted


def test_the_service_tells_the_engine_missed_its_answer(tmp_path):
    """Through the service: the next turn shows another move than the one answered, and
    /metrics counts the missed answer."""
    from app import create_app
    from snake.diagram import from_ascii
    app = create_app(network=None, strategy="floodfill", game_log=None)
    client = app.test_client()
    first = state_to_request(from_ascii("""
        . . . . .
        . . . . .
        . . A . .
        . . a . .
        . . a . .
    """, turn=3, game_id="metrics-missed").state, "A")
    answer = client.post("/move", json=first).get_json()["move"]
    other = next(m for m in ("left", "right") if m != answer)
    x = 1 if other == "left" else 3
    second = json.loads(json.dumps(first))
    second["turn"] = 4
    body = [{"x": x, "y": 2}, {"x": 2, "y": 2}, {"x": 2, "y": 1}]
    for snake in (second["you"], second["board"]["snakes"][0]):
        snake["body"], snake["head"], snake["latency"] = body, body[0], "0"

    def missed():
        text = client.get("/metrics").get_data(as_text=True)
        return sum(float(line.split()[-1]) for line in text.splitlines()
                   if line.startswith("nuppeppou_engine_missed_total"))

    before = missed()
    assert client.post("/move", json=second).status_code == 200
    assert missed() - before == 1


def test_the_next_turn_finds_the_answer_of_a_turn_still_being_answered():
    """Turn 2's request arrives while turn 1 is still being answered (late): it waits for
    the session and then pairs the engine's latency with turn 1's answer."""
    import time
    manager = SessionManager(None)
    requests = play(snakes=2, seed=7, turns=4)
    _margins(manager, requests[:1], [100.0], ["0"])
    turn1, turn2 = _with_latency(requests[1], "100"), _with_latency(requests[2], "500")
    seen = []
    inside = threading.Event()

    def answer_turn1():
        with manager.use(turn1):
            turn1.received = time.perf_counter() - 0.45
            inside.set()
            time.sleep(0.1)

    worker = threading.Thread(target=answer_turn1)
    worker.start()
    inside.wait(5)
    with manager.use(turn2):
        seen.append(turn2.margin_ms)
    worker.join()
    # the engine waited 500 (the timeout) for an answer the server took ~550 ms over: the
    # lateness was ours, counted as no overhead; the game now has a margin of its own
    from snake.search.clock import MARGIN_SAFETY_MS
    assert seen[0] == pytest.approx(MARGIN_SAFETY_MS, abs=1)


def test_the_search_thinks_until_the_wider_of_its_margin_and_the_games():
    """The search's budget is the game's timeout less its own margin, or less the margin
    the game's network calls for when that is wider. A quarter of the timeout is the
    least its own margin leaves (tiny timeouts), but a margin the game measured leaves what
    it leaves: thinking past it only answers late."""
    from snake.search.strategy import SearchStrategy
    strategy = SearchStrategy(None, margin_ms=150)
    request = play(snakes=2, seed=5, turns=1)[0]
    started = 1000.0
    assert strategy.budget(request, started=started).deadline == pytest.approx(started + 0.350)
    request.margin_ms = 70.0
    assert strategy.budget(request, started=started).deadline == pytest.approx(started + 0.350)
    request.margin_ms = 300.0
    assert strategy.budget(request, started=started).deadline == pytest.approx(started + 0.200)
    request.margin_ms = 480.0
    assert strategy.budget(request, started=started).deadline == pytest.approx(started + 0.020)
    request.margin_ms = 600.0
    assert strategy.budget(request, started=started).deadline == pytest.approx(started)
    request.margin_ms = None
    request.state.game.timeout = 100           # its own margin is wider than the timeout
    assert strategy.budget(request, started=started).deadline == pytest.approx(started + 0.025)


def test_a_move_is_told_how_many_snakes_its_game_began_with():
    """A request does not say how its game began; the session does (the default's value
    head is meant for games begun as duels, not for a four-snake game's last duel). A game
    first seen mid-way is taken as begun with the snakes alive then."""
    manager = SessionManager(None)
    manager.start(start_request("g-began"))                 # four snakes at turn 0
    later = play(game_id="g-began", turns=20)[-1]
    assert later.state.turn == 20 and len(later.state.board.living_snakes) == 4
    body = state_to_request(later.state, "s0")
    body["board"]["snakes"] = [s for s in body["board"]["snakes"] if s["id"] in ("s0", "s1")]
    last_duel = parse_request(body)                         # two of the four gone
    assert last_duel.snakes_at_start is None and last_duel.began_with == 2
    with manager.use(last_duel):
        pass
    assert last_duel.snakes_at_start == 4 and last_duel.began_with == 4
    unseen = parse_request({**body, "game": {**body["game"], "id": "g-unseen"}})
    with manager.use(unseen):                               # opened by this /move
        pass
    assert unseen.snakes_at_start == 2


def test_a_game_first_seen_mid_way_asks_how_it_began():
    """A /move that opens a session past turn 0 (the other worker had the game) asks
    ``began_with`` once: its answer stands for the whole game. No answer, a failing one,
    or one that lacks a snake alive now (another game's record) leaves the snakes alive
    then. At turn 0 every snake is alive: nothing to ask."""
    asked = []
    four = ("s0", "s1", "s2", "s3")

    def began_with(game_id, you_id):
        asked.append((game_id, you_id))
        if game_id == "g-broken":
            raise OSError("the file is gone")
        return {"g-told": four, "g-other": ("s0", "s5", "s6")}.get(game_id)

    manager = SessionManager(None, began_with=began_with)
    later = play(game_id="g-told", turns=20)[-1]
    body = state_to_request(later.state, "s0")
    body["board"]["snakes"] = [s for s in body["board"]["snakes"] if s["id"] in ("s0", "s1")]
    games = (("g-told", 4), ("g-untold", 2), ("g-broken", 2), ("g-other", 2))
    for game_id, expected in games:
        for _ in range(2):
            request = parse_request({**body, "game": {**body["game"], "id": game_id}})
            with manager.use(request) as accumulator:
                assert accumulator is None
            assert request.snakes_at_start == expected, game_id
    assert asked == [(game_id, "s0") for game_id, _ in games]
    manager.start(start_request("g-started"))               # /start seen here: not asked
    with manager.use(start_request("g-started")):
        pass
    first_move = start_request("g-first-move")              # opened by turn 0's /move
    with manager.use(first_move):
        pass
    assert len(asked) == len(games) and first_move.snakes_at_start == 4
