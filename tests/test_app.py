"""The HTTP service through Flask's test client: routes, bad input, sessions, threads."""

import copy
import json
import logging
import random
import re
import threading

import pytest

from app import MAX_BODY_BYTES, SERVER_NAME, create_app
from nnue.network import Network
from snake import __version__
from snake.board import state_to_request
from snake.decision import Decision
from snake.diagram import from_ascii
from snake.rules import MOVES
from snake.settings import Settings, SettingsError
from snake.strategies import STRATEGIES
from tests.test_sessions import play


@pytest.fixture(scope="module")
def network():
    return Network.random(3, hidden=(16, 16), quantise=True)


@pytest.fixture()
def app(network):
    return create_app(network=network, strategy="seed")


@pytest.fixture()
def client(app):
    return app.test_client()


@pytest.fixture(autouse=True)
def move_failures(request):
    """The "/move failed" records the service logs during a test. The server answers a
    legal move even when the strategy breaks (its last resort), so a test that only checks
    for a legal move would pass with a broken strategy: every test here fails on such a
    record unless it is marked ``strategy_fails`` (and then it can check them)."""
    records = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = records.append
    logger = logging.getLogger("nuppeppou")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)
    if request.node.get_closest_marker("strategy_fails") is None:
        failed = [r.getMessage() for r in records if "/move failed" in r.getMessage()]
        assert not failed, f"the strategy failed and the last resort answered: {failed}"


def answers_in(metrics_text):
    """How many moves each part of the snake has answered, from ``/metrics``' text."""
    return {by: float(n) for by, n in re.findall(r'^nuppeppou_answers_total\{by="([^"]+)"\} (\S+)$',
                                                   metrics_text, re.M)}


def answers(client):
    """:func:`answers_in` of the app's ``/metrics`` now."""
    return answers_in(client.get("/metrics").get_data(as_text=True))


def answered(client, before):
    """The answers since ``before`` (:func:`answers`), by part, without zeros."""
    now = answers(client)
    return {by: n - before.get(by, 0.0) for by, n in now.items() if n != before.get(by, 0.0)}


def body_of(drawing="""
    . . . . .
    . A a a .
    . . . . .
    . B b b .
    . . . * .
""", ruleset="standard", you="A", **kw):
    game = from_ascii(drawing, ruleset, you=you, **kw)
    return state_to_request(game.state, you)


def sessions_of(app):
    return app.extensions["nuppeppou"]["sessions"]


def test_info(client):
    r = client.get("/")
    assert r.status_code == 200
    assert r.json == {"apiversion": "1", "author": "daedalean", "color": "#E80978",
                      "head": "pixel", "tail": "pixel", "version": __version__}
    assert r.headers["Server"] == SERVER_NAME and "Nuppeppou" in SERVER_NAME


def test_a_whole_game(app, client):
    # The wire bodies of a recorded game, as the engine sends them.
    wire = [_wire(r) for r in play(seed=1, turns=50)]
    assert client.post("/start", json=wire[0]).json == {}
    session = sessions_of(app).session("g1", "s0")
    assert session.accumulator is not None
    before = answers(client)
    for body in wire[:-1]:
        r = client.post("/move", json=body)
        assert r.status_code == 200 and r.json["move"] in MOVES
        assert set(r.json) <= {"move", "shout"}
    # every move by the network through the session's accumulator (none by a fallback)
    assert answered(client, before) == {"nnue": len(wire) - 1}
    assert client.post("/end", json=wire[-1]).json == {}
    assert ("g1", "s0") not in sessions_of(app)
    assert session.accumulator is None and session.moves == len(wire) - 1


def _wire(request):
    return state_to_request(request.state, request.you.id)


@pytest.mark.parametrize("route", ["/start", "/move", "/end"])
def test_not_json(client, route):
    r = client.post(route, data=b"{not json", content_type="application/json")
    assert r.status_code == 400 and "JSON" in r.json["error"]
    r = client.post(route, data=b"\xff\xfe\x00garbage")
    assert r.status_code == 400 and r.json["error"].startswith("body")
    assert r.headers["Server"] == SERVER_NAME


@pytest.mark.parametrize("mutate, field", [
    (lambda b: b.clear(), "game"),
    (lambda b: b.pop("you"), "you"),
    (lambda b: b.pop("turn"), "turn"),
    (lambda b: b["board"].pop("snakes"), "board.snakes"),
    (lambda b: b["board"].__setitem__("width", "eleven"), "board.width"),
    (lambda b: b["board"].__setitem__("height", True), "board.height"),
    (lambda b: b["board"]["snakes"][0].__setitem__("body", []), "board.snakes[0].body"),
    (lambda b: b["board"]["snakes"][1]["body"][0].__setitem__("x", 1.5),
     "board.snakes[1].body[0].x"),
    (lambda b: b["you"].__setitem__("health", "full"), "you.health"),
    (lambda b: b["game"].pop("id"), "game.id"),
    (lambda b: b["game"]["ruleset"].__setitem__("settings", []), "game.ruleset.settings"),
    (lambda b: b["board"]["food"].append({"x": 1}), "board.food[1].y"),
])
@pytest.mark.parametrize("route", ["/start", "/move", "/end"])
def test_invalid_bodies_name_the_field(client, route, mutate, field):
    body = body_of()
    mutate(body)
    r = client.post(route, json=body)
    assert r.status_code == 400
    assert r.json["error"].startswith(field), r.json


@pytest.mark.parametrize("payload", [[], "move", 42, None])
def test_json_that_is_not_an_object(client, payload):
    r = client.post("/move", data=json.dumps(payload), content_type="application/json")
    assert r.status_code == 400 and r.json["error"].startswith("body")


@pytest.mark.parametrize("mutate, field", [
    (lambda b: b["board"].__setitem__("width", 1000), "board.width"),
    (lambda b: b["board"].__setitem__("height", -11), "board.height"),
    (lambda b: b["board"].__setitem__("snakes", b["board"]["snakes"] * 40), "board.snakes"),
    (lambda b: b.__setitem__("turn", -1), "turn"),
    (lambda b: b["board"]["snakes"][0]["body"][0].__setitem__("x", 10 ** 30), "board.snakes[0]"),
    (lambda b: b["board"]["snakes"][0].__setitem__("health", -10 ** 30), "board.snakes[0].health"),
    (lambda b: b["you"].__setitem__("health", 10 ** 7), "you.health"),
    (lambda b: b["game"]["ruleset"].setdefault("settings", {}).__setitem__(
        "hazardDamagePerTurn", 10 ** 30), "game.ruleset.settings.hazardDamagePerTurn"),
    (lambda b: b["game"]["ruleset"].setdefault("settings", {}).setdefault("royale", {})
     .__setitem__("shrinkEveryNTurns", -10 ** 9), "game.ruleset.settings.royale.shrinkEveryNTurns"),
    (lambda b: b["game"].__setitem__("id", True), "game.id"),          # true is no id
    (lambda b: [s.__setitem__("body", s["body"] * 20) for s in b["board"]["snakes"]],
     "board.snakes"),                                                  # 120 segments on 25 squares
    (lambda b: b["you"].__setitem__("id", False), "you.id"),
])
def test_absurd_contents(client, mutate, field):
    body = body_of()
    mutate(body)
    r = client.post("/move", json=body)
    assert r.status_code == 400 and r.json["error"].startswith(field), r.json


def test_deeply_nested_and_huge_numbers(client):
    r = client.post("/move", data="[" * 100_000 + "]" * 100_000)
    assert r.status_code == 400 and r.json["error"].startswith("body")
    text = json.dumps(body_of())
    assert text.count('"turn": 10') == 1
    r = client.post("/move", data=text.replace('"turn": 10', '"turn": ' + "9" * 5000),
                    content_type="application/json")
    assert r.status_code == 400 and r.json["error"].startswith("body: not valid JSON")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400", "0.5", "-1e-9"])
def test_numbers_that_are_no_integers_name_the_field(client, value):
    # (Python's JSON reader takes NaN and Infinity; the engine never sends them)
    text = json.dumps(body_of())
    for field, number in (("turn", '"turn": 10'), ("board.snakes[0].health", '"health": 100')):
        assert number in text
        r = client.post("/move", data=text.replace(number, number.split(":")[0] + ": " + value, 1),
                        content_type="application/json")
        assert r.status_code == 400 and r.json["error"].startswith(field), r.json


def test_too_large(client):
    big = json.dumps({**body_of(), "padding": "x" * MAX_BODY_BYTES})
    r = client.post("/move", data=big, content_type="application/json")
    assert r.status_code == 413 and "larger" in r.json["error"]
    # (A streamed body without Content-Length: see tests/test_gunicorn_e2e.py.)


def test_unknown_routes_and_methods(client):
    r = client.get("/nope")
    assert r.status_code == 404 and "error" in r.json
    r = client.get("/move")
    assert r.status_code == 405 and "error" in r.json
    r = client.delete("/")
    assert r.status_code == 405 and "error" in r.json


def test_odd_but_well_formed_states_get_a_legal_move(app, client):
    unknown = body_of()
    unknown["game"]["ruleset"]["name"] = "battle-royale-2099"
    r = client.post("/move", json=unknown)
    assert r.status_code == 200 and r.json["move"] in ("up", "down", "left")
    dead = body_of()
    dead["board"]["snakes"] = dead["board"]["snakes"][1:]  # you already eliminated
    for route in ("/start", "/move", "/end"):
        assert client.post(route, json=dead).status_code == 200
    assert client.post("/move", json=dead).json == {"move": "up"}
    # A board size the network does not cover: flood fill, no slot leased.
    before = answers(client)
    assert client.post("/move", json=body_of()).status_code == 200
    assert answered(client, before) == {"flood fill": 1}
    assert sessions_of(app).session("drawn-game", "A").accumulator is None
    nine = body_of("\n".join([". " * 9] * 6 + [". A a a . . . . ."] + [". " * 9] * 2))
    assert client.post("/move", json=nine).json["move"] in ("up", "down", "left")


def test_unknown_games_on_move_and_end(app, client):
    body = body_of()
    body["game"]["id"] = "never-started"
    assert client.post("/end", json=body).status_code == 200
    assert client.post("/move", json=body).status_code == 200
    assert ("never-started", "A") in sessions_of(app)
    assert sessions_of(app).session("never-started", "A").accumulator is None  # 5x5: not covered
    client.post("/end", json=body)
    assert ("never-started", "A") not in sessions_of(app)


def test_the_33rd_game_plays_by_flood_fill(app, client):
    start = _wire(play(seed=5, turns=0)[0])
    for i in range(33):
        body = copy.deepcopy(start)
        body["game"]["id"] = f"game-{i}"
        assert client.post("/start", json=body).status_code == 200
    sessions = sessions_of(app)
    assert sessions.session("game-31", "s0").accumulator is not None
    assert sessions.session("game-32", "s0").accumulator is None
    assert sessions.stats() == {"sessions": 33, "created": 32, "free": 0, "capacity": 32}
    body = copy.deepcopy(start)
    body["game"]["id"] = "game-32"
    assert client.post("/move", json=body).json["move"] in MOVES
    body["game"]["id"] = "game-0"
    client.post("/end", json=body)
    assert sessions.stats()["free"] == 1


def test_idle_sessions_reclaimed_through_the_routes(network):
    now = [0.0]
    app = create_app(network=network, strategy="seed", clock=lambda: now[0],
                     config={"IDLE_LIMIT": 60})
    client = app.test_client()
    start = _wire(play(seed=6, turns=0)[0])
    client.post("/start", json=start)
    assert sessions_of(app).stats()["free"] == 0
    now[0] += 61
    client.get("/")  # no reclamation on the info route...
    other = copy.deepcopy(start)
    other["game"]["id"] = "other"
    client.post("/start", json=other)  # ...but on the next game request
    assert ("g6", "s0") not in sessions_of(app)
    assert sessions_of(app).stats() == {"sessions": 1, "created": 1, "free": 0, "capacity": 32}


class _Broken:
    name = "broken"

    def __init__(self, answer=None):
        self.answer = answer

    def choose(self, request, accumulator):
        if self.answer:
            return Decision(self.answer, shout="x" * 1000)
        raise RuntimeError("bug in a strategy")


@pytest.mark.strategy_fails
def test_a_failing_strategy_still_answers_a_considered_move(network, move_failures):
    client = create_app(network=network, strategy=_Broken()).test_client()
    body = body_of("""
        A a a .
        . . . .
    """)
    r = client.post("/move", json=body)
    assert r.status_code == 200 and r.json == {"move": "down"}  # the only safe move
    client = create_app(network=network, strategy=_Broken("sideways")).test_client()
    assert client.post("/move", json=body).json == {"move": "down"}
    assert [r.getMessage().split(";")[0] for r in move_failures] == \
        ["/move failed for game drawn-game turn 10"] * 2


@pytest.mark.strategy_fails
def test_when_flood_fill_fails_too_the_answer_is_the_filters_move(network, monkeypatch):
    """A strategy and the flood-fill fallback both failing still never answer a move the
    filter knows to be certain death (here ``up``, the neck, and ``right``, a wall)."""
    from snake.seed import FloodFillStrategy

    def broken(self, request, accumulator):
        raise OverflowError("flood fill broke")
    monkeypatch.setattr(FloodFillStrategy, "choose", broken)
    client = create_app(network=network, strategy=_Broken()).test_client()
    body = body_of("""
        . . . a
        . . . A
        . . . .
    """)
    r = client.post("/move", json=body)
    assert r.status_code == 200 and r.json == {"move": "down"}


def test_shout_is_cut_to_256(network):
    client = create_app(network=network, strategy=_Broken("left")).test_client()
    r = client.post("/move", json=body_of())
    assert r.json["move"] == "left" and len(r.json["shout"]) == 256


def test_no_500_on_random_mutations(client):
    """Fuzz: damaged versions of a real body give 200 or 400, never anything else."""
    rng = random.Random(0)
    base = _wire(play(seed=7, turns=8)[-2])
    junk = [None, -1, 0, 10 ** 9, 1.5, "", "x", [], {}, True, [{"x": 1, "y": 2}], {"x": -5, "y": 3}]

    def mutate(obj, depth=0):
        if isinstance(obj, dict) and obj:
            key = rng.choice(list(obj))
            if rng.random() < 0.2:
                del obj[key]
            elif rng.random() < 0.5 or depth > 4:
                obj[key] = rng.choice(junk)
            else:
                mutate(obj[key], depth + 1)
        elif isinstance(obj, list) and obj:
            i = rng.randrange(len(obj))
            if rng.random() < 0.4:
                obj[i] = rng.choice(junk)
            else:
                mutate(obj[i], depth + 1)

    statuses = set()
    for _ in range(300):
        body = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            mutate(body)
        route = rng.choice(["/start", "/move", "/end"])
        r = client.post(route, json=body)
        assert r.status_code in (200, 400), (route, body, r.json)
        if r.status_code == 200 and route == "/move":
            assert r.json["move"] in MOVES
        statuses.add(r.status_code)
    assert statuses == {200, 400}


def test_concurrent_games(app):
    games = [[_wire(r) for r in play(seed=30 + i, turns=20)] for i in range(6)]
    reference = {}
    solo = create_app(network=app.extensions["nuppeppou"]["network"], strategy="seed").test_client()
    for g in games:
        for body in g[:-1]:
            reference[(body["game"]["id"], body["turn"])] = solo.post("/move", json=body).json
    results, errors = {}, []

    def run(bodies):
        client = app.test_client()
        try:
            client.post("/start", json=bodies[0])
            for body in bodies[:-1]:
                results[(body["game"]["id"], body["turn"])] = client.post("/move", json=body).json
            client.post("/end", json=bodies[-1])
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(g,)) for g in games]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and results == reference
    assert len(sessions_of(app)) == 0


def test_the_default_strategy_is_search(monkeypatch, network):
    monkeypatch.delenv("NUPPEPPOU_STRATEGY", raising=False)
    app = create_app(network=network)
    assert app.extensions["nuppeppou"]["strategy"].name == "search"
    body = body_of(timeout=100)   # a short budget keeps the test quick
    client = app.test_client()
    before = answers(client)
    r = client.post("/move", json=body)
    # B (as long as A) could meet A's head on the left; the search plays up or down.
    assert r.status_code == 200 and r.json["move"] in ("up", "down")
    assert answered(client, before) == {"search": 1}


def _broken(body):
    """B's body with a gap: its tail two squares from the segment before it."""
    b = next(s for s in body["board"]["snakes"] if s["id"] == "B")
    assert [(p["x"], p["y"]) for p in b["body"]] == [(1, 1), (2, 1), (3, 1)]
    b["body"][2] = {"x": 4, "y": 1}


def _off_the_board(body):
    """A third snake hanging off the board's left edge."""
    body["board"]["snakes"].append({**body["board"]["snakes"][1], "id": "C", "name": "C",
                                    "head": {"x": -1, "y": 4},
                                    "body": [{"x": -1, "y": 4}, {"x": -2, "y": 4},
                                             {"x": -3, "y": 4}]})


@pytest.mark.parametrize("mutate", [_broken, _off_the_board])
def test_a_body_no_engine_sends_is_answered_at_once(monkeypatch, network, mutate):
    """A living snake whose body breaks or leaves the board: the compiled search cannot
    hold it, and the seed step answers (not the Python search, slow and unbounded)."""
    monkeypatch.delenv("NUPPEPPOU_STRATEGY", raising=False)
    client = create_app(network=network).test_client()
    body = body_of(timeout=100)
    mutate(body)
    before = answers(client)
    r = client.post("/move", json=body)
    assert r.status_code == 200 and r.json["move"] in MOVES
    assert answered(client, before) == {"seed": 1}


def test_configuration_from_the_environment(monkeypatch, tmp_path, network):
    path = tmp_path / "net.npz"
    network.save(path)
    monkeypatch.setenv("NUPPEPPOU_WEIGHTS", str(path))
    monkeypatch.setenv("NUPPEPPOU_STRATEGY", "floodfill")
    app = create_app()
    assert app.extensions["nuppeppou"]["network"] is not None
    assert app.extensions["nuppeppou"]["strategy"].name == "floodfill"
    monkeypatch.setenv("NUPPEPPOU_STRATEGY", "telepathy")
    with pytest.raises(ValueError, match="unknown strategy"):
        create_app()
    monkeypatch.setenv("NUPPEPPOU_STRATEGY", "seed")
    monkeypatch.setenv("NUPPEPPOU_WEIGHTS", str(tmp_path / "missing.npz"))
    with pytest.raises(Exception, match="missing"):
        create_app()
    monkeypatch.delenv("NUPPEPPOU_WEIGHTS")
    monkeypatch.setattr("nnue.network.load_default", lambda: None)
    no_net = create_app()
    assert no_net.extensions["nuppeppou"]["network"] is None
    r = no_net.test_client().post("/move", json=body_of())
    assert r.status_code == 200


def test_a_bad_setting_stops_the_start_up(monkeypatch):
    """Every bad value is named, with what it expects, before anything is built; given
    settings are used as they are."""
    monkeypatch.setenv("NUPPEPPOU_IDLE_LIMIT", "-3")
    monkeypatch.setenv("NUPPEPPOU_SEARCH_THREADS", "x")
    monkeypatch.setenv("NUPPEPPOU_STRATEGY", "telepathy")
    with pytest.raises(SettingsError) as raised:
        create_app(network=None, game_log=None)
    assert raised.value.problems[:2] == [
        "NUPPEPPOU_STRATEGY='telepathy': unknown strategy 'telepathy'; choose one of: "
        + ", ".join(STRATEGIES),
        "NUPPEPPOU_IDLE_LIMIT='-3': expected a number > 0"]
    assert raised.value.problems[2:] == ["NUPPEPPOU_SEARCH_THREADS='x': expected an integer ≥ 1"]
    app = create_app(settings=Settings(strategy="floodfill", idle_limit=7.0, check_moves=False),
                     network=None, game_log=None)
    sessions = sessions_of(app)
    assert app.extensions["nuppeppou"]["strategy"].name == "floodfill"
    assert (sessions.idle_limit, sessions.check_moves) == (7.0, False)


def test_a_latency_sent_as_a_number_is_read(network):
    """The official engine sends ``latency`` as a string; a number (as other engines send
    it) is read the same way, not refused."""
    timed = _Timed()
    client = create_app(network=None, strategy=timed, game_log=None).test_client()
    bodies = [state_to_request(r.state, "s0") for r in play(snakes=2, seed=8, turns=2)[:2]]
    for body, latency in zip(bodies, [0, 312.5]):
        for snake in body["board"]["snakes"] + [body["you"]]:
            snake["latency"] = latency
        assert client.post("/move", json=body).status_code == 200
    assert timed.margins[0] is None and timed.margins[1] is not None


class _Timed:
    """Answers up at once and remembers the margin each request came with."""

    name = "timed"

    def __init__(self):
        self.margins = []

    def choose(self, request, accumulator):
        self.margins.append(request.margin_ms)
        return Decision("up")


@pytest.mark.parametrize("adaptive", ["on", "off"])
def test_the_engine_latency_sets_the_next_margin(network, monkeypatch, adaptive):
    """The engine reports 140 ms for an answer the server sent in a few: about 140 ms went
    on the network, and the next move's request carries that plus the safety (a first move
    has none of its game's own); NUPPEPPOU_ADAPTIVE_MARGIN=off carries none. The figure is
    read from our snake's entry in board.snakes, which some engine versions fill when they
    send "0" in ``you``."""
    from snake.search.clock import MARGIN_SAFETY_MS
    monkeypatch.setenv("NUPPEPPOU_ADAPTIVE_MARGIN", adaptive)
    from snake.observability.metrics import ENGINE_OVERHEAD
    timed = _Timed()
    client = create_app(network=None, strategy=timed, game_log=None).test_client()
    bodies = [state_to_request(r.state, "s0") for r in play(snakes=2, seed=6, turns=3)[:3]]
    measured = ENGINE_OVERHEAD.collect()[0]
    count = next(x.value for x in measured.samples if x.name.endswith("_count"))
    for body, latency in zip(bodies, ["0", "140", "140"]):
        # some engine versions send "0" in `you` and the real figure in board.snakes
        body["you"]["latency"] = "0"
        for snake in body["board"]["snakes"]:
            if snake["id"] == "s0":
                snake["latency"] = latency
        assert client.post("/move", json=body).status_code == 200
    assert timed.margins[0] is None
    measured = ENGINE_OVERHEAD.collect()[0]
    counted = next(x.value for x in measured.samples if x.name.endswith("_count")) - count
    if adaptive == "off":
        assert timed.margins == [None, None, None] and counted == 0
    else:
        assert counted == 2          # turns 1 and 2 reported the engine's view of 0 and 1
        assert all(140 + MARGIN_SAFETY_MS - 20 < m <= 140 + MARGIN_SAFETY_MS
                   for m in timed.margins[1:])


def test_ids_with_control_characters_cannot_forge_log_lines(client):
    """A game id is the client's text, and it is logged: each record stays one line, its
    control characters escaped, and the game is played as any other."""
    import io
    import logging
    handler = next(h for h in logging.getLogger("nuppeppou").handlers
                   if getattr(h, "_nuppeppou", False))
    stream = io.StringIO()
    before = handler.setStream(stream)
    try:
        body = body_of()
        body["game"]["id"] = "g1\nERROR nuppeppou: forged\r\x1b[2K"
        assert client.post("/start", json=body).status_code == 200
        assert client.post("/move", json=body).status_code == 200
        assert client.post("/end", json=body).status_code == 200
    finally:
        handler.setStream(before)
    lines = stream.getvalue().splitlines()
    assert lines and not any(line.startswith("ERROR") for line in lines)
    assert any("g1\\x0aERROR nuppeppou: forged\\x0d\\x1b[2K" in line for line in lines)


class BeganRecorder:
    """A strategy that answers up and notes each request's (game id, snakes it began with)
    in ``told``."""

    name = "recorder"

    def __init__(self, told: list) -> None:
        self.told = told

    def choose(self, request, accumulator):
        self.told.append((request.state.game.id, request.began_with))
        return Decision("up")


def test_a_move_is_told_how_many_snakes_its_game_began_with(network):
    """/start shows four snakes; a later /move of the same game shows two (a four-snake
    game's last duel, which the default's duel head is not for): the strategy is told four.
    A game whose /start this process never saw is taken as begun with the snakes then."""
    told = []
    client = create_app(network=network, strategy=BeganRecorder(told),
                        game_log=None).test_client()
    start = state_to_request(play(game_id="g4", turns=0)[0].state, "s0")
    assert len(start["board"]["snakes"]) == 4
    assert client.post("/start", json=start).status_code == 200
    duel = copy.deepcopy(start)
    duel["turn"] = 150
    duel["board"]["snakes"] = duel["board"]["snakes"][:2]
    assert client.post("/move", json=duel).status_code == 200
    unseen = copy.deepcopy(duel)
    unseen["game"]["id"] = "g-unseen"
    assert client.post("/move", json=unseen).status_code == 200
    assert told == [("g4", 4), ("g-unseen", 2)]
