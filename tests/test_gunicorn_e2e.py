"""End to end: the service under gunicorn (the repo's gunicorn.conf.py) on a free loopback
port, playing a whole game over real HTTP, driven by the rules engine."""

import contextlib
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nnue.network import Network
from snake.board import parse_request, state_to_request
from snake.rules import MOVES, is_game_over, play_turn
from snake.rules.start import new_game
from snake.strategies import get_strategy
from tests.test_app import answers_in

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def gunicorn(tmp: Path, **settings: str):
    """The service under the repo's gunicorn.conf.py on a free loopback port, with these
    environment settings; yields (port, log path) once it answers, and stops it after."""
    port = free_port()
    env = dict(os.environ, PORT=str(port), **settings)
    log_path = tmp / "gunicorn.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py",
             "-b", f"127.0.0.1:{port}", "app:app"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                status, _, _ = request(port, "GET", "/")
                if status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not start:\n" + log_path.read_text())
            time.sleep(0.1)
        yield port, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    weights = tmp / "net.npz"
    Network.random(11, hidden=(32, 32)).save(weights)
    with gunicorn(tmp, NUPPEPPOU_WEIGHTS=str(weights), NUPPEPPOU_WORKERS="2",
                  NUPPEPPOU_THREADS="2", NUPPEPPOU_LOG_LEVEL="INFO") as running:
        yield running


def request(port, method, path, body=None, conn=None, chunked=False):
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        raw = isinstance(body, bytes) or chunked
        data = body if raw or body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=data, headers=headers, encode_chunked=chunked)
        r = conn.getresponse()
        payload = r.read()
        return r.status, dict(r.getheaders()), json.loads(payload) if payload else None
    finally:
        if own:
            conn.close()


def test_info_over_http(server):
    port, _ = server
    status, headers, info = request(port, "GET", "/")
    assert status == 200 and info["apiversion"] == "1"
    assert headers["Server"].startswith("Nuppeppou/")


def test_a_whole_game_over_http(server):
    """Two of our snakes in one game (sessions keyed by game and snake) against a local
    flood-fill snake, turn after turn until the game is over."""
    port, log_path = server
    rng = random.Random(2024)
    ours = ("us-1", "us-2")
    # The service's default strategy searches until timeout - margin; a 100 ms timeout
    # keeps the game short (the search thinks 25 ms a move).
    state = new_game("standard", 11, 11, [*ours, "them"], rng=rng, game_id="e2e-game",
                     timeout=100)
    local = get_strategy("floodfill")
    conns = {sid: http.client.HTTPConnection("127.0.0.1", port, timeout=10) for sid in ours}
    for sid in ours:
        assert request(port, "POST", "/start", state_to_request(state, sid), conns[sid])[0] == 200
    turns = 0
    while not is_game_over(state) and turns < 400:
        moves = {}
        for snake in state.board.living_snakes:
            body = state_to_request(state, snake.id)
            if snake.id in ours:
                status, headers, answer = request(port, "POST", "/move", body, conns[snake.id])
                assert status == 200 and answer["move"] in MOVES
                moves[snake.id] = answer["move"]
            else:
                moves[snake.id] = local.choose(parse_request(body), None).move
        state = play_turn(state, moves, rng)
        turns += 1
    assert turns > 5
    for sid in ours:  # /end goes to every snake of the game, eliminated ones too
        status, _, answer = request(port, "POST", "/end", _end_body(state, sid), conns[sid])
        assert status == 200 and answer == {}
        conns[sid].close()
    time.sleep(0.3)
    text = log_path.read_text()
    assert "game start e2e-game you=us-1" in text and "game end   e2e-game you=us-1" in text
    assert "accumulator=yes" in text
    assert "strategy search" in text   # the service's default
    # every answer the search's (the server answers a legal move even when the strategy
    # fails, so a legal game alone would not show it)
    assert "/move failed" not in text
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    metrics = conn.getresponse().read().decode()
    conn.close()
    by = answers_in(metrics)
    assert by.get("search", 0) > 0 and by.get("error", 0) == 0, by


def _end_body(state, sid):
    snake = state.board.snake(sid)
    if snake.alive:
        return state_to_request(state, sid)
    snake.eliminated_cause, cause = "", snake.eliminated_cause  # wire only lists the living
    body = state_to_request(state, sid)
    snake.eliminated_cause = cause
    body["board"]["snakes"] = [s for s in body["board"]["snakes"] if s["id"] != sid]
    return body


def test_bad_input_over_http(server):
    port, _ = server
    status, _, answer = request(port, "POST", "/move", b"{oops")
    assert status == 400 and "JSON" in answer["error"]
    big = (b" " * 65536 for _ in range(20))  # 1.25 MiB streamed without a Content-Length
    status, _, answer = request(port, "POST", "/move", big, chunked=True)
    assert status == 413 and "larger" in answer["error"]
    # A small valid body sent chunked is read whole.
    body = state_to_request(new_game("standard", 7, 7, ["a", "b"], rng=random.Random(1)), "a")
    status, _, answer = request(port, "POST", "/move", iter([json.dumps(body).encode()]),
                                chunked=True)
    assert status == 200 and answer["move"] in MOVES
    status, _, answer = request(port, "GET", "/move")
    assert status == 405
    # The workers are still alive and answering.
    assert request(port, "GET", "/")[0] == 200


def test_a_bad_setting_stops_the_service_before_it_starts(tmp_path):
    """gunicorn, and the development server, refuse to start with a bad value and say
    which and why, without a traceback, and leave no metrics folder behind."""
    env = dict(os.environ, NUPPEPPOU_WORKERS="0", NUPPEPPOU_SEARCH_MARGIN_MS="soon",
               TMPDIR=str(tmp_path))
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    for command in (["-m", "gunicorn", "-c", "gunicorn.conf.py", "-b", "127.0.0.1:0", "app:app"],
                    ["app.py"]):
        done = subprocess.run([sys.executable, *command], cwd=ROOT, env=env, timeout=120,
                              capture_output=True, text=True)
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip().splitlines() == [
            "nuppeppou: not started: 2 bad settings:",
            "  NUPPEPPOU_WORKERS='0': expected an integer ≥ 1",
            "  NUPPEPPOU_SEARCH_MARGIN_MS='soon': expected a number ≥ 0"], command
    assert not list(tmp_path.glob("nuppeppou-metrics-*"))


def test_every_search_strategy_gets_a_thread_per_game(tmp_path):
    """The configuration's default threads: 16 for any search variant (with options or
    not), 4 for the one-step strategies. (Read in a child process: the configuration sets
    process-wide environment variables.)"""
    cases = {"": 16, "search": 16, "grower": 16, "search[max_opponents=3]": 16,
             "seed": 4, "floodfill": 4}
    for strategy, threads in cases.items():
        env = {k: v for k, v in os.environ.items() if k != "NUPPEPPOU_STRATEGY"}
        env["PROMETHEUS_MULTIPROC_DIR"] = str(tmp_path)      # no metrics folder left behind
        if strategy:
            env["NUPPEPPOU_STRATEGY"] = strategy
        script = ("import runpy; print(runpy.run_path('gunicorn.conf.py')"
                  "['_default_threads']())")
        out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True,
                             capture_output=True, text=True).stdout
        assert int(out.split()[-1]) == threads, strategy


def test_a_move_that_waited_for_a_thread_counts_its_wait(tmp_path):
    """One worker with one thread, two games' moves sent together: the second waits while
    the first is searched. Its move's time counts from when it was ready to be read, not
    from when the thread took it up, so its search gets what is left of the turn (a short
    think, or none) instead of a whole one: both think in the time of one."""
    import threading

    from snake.observability.gamelog import connect_readonly
    db = tmp_path / "games.db"
    with gunicorn(tmp_path, NUPPEPPOU_WORKERS="1", NUPPEPPOU_THREADS="1",
                  NUPPEPPOU_GAME_LOG=str(db), NUPPEPPOU_LOG_LEVEL="INFO",
                  NUPPEPPOU_STRATEGY="search") as (port, _):
        rng = random.Random(3)
        bodies = []
        for game in ("first", "second"):
            state = new_game("standard", 11, 11, ["a", "b", "c", "d"], rng=rng, game_id=game)
            for _ in range(3):
                state = play_turn(state, {s.id: "up" if s.body[0][1] < 8 else "left"
                                          for s in state.board.snakes}, rng)
            bodies.append(state_to_request(state, "a"))
        answers = {}

        def send(body):
            answers[body["game"]["id"]] = request(port, "POST", "/move", body)[0]
        first = threading.Thread(target=send, args=(bodies[0],))
        first.start()
        time.sleep(0.05)                      # the first is being searched when the second comes
        send(bodies[1])
        first.join()
        assert answers == {"first": 200, "second": 200}
        rows = {}
        for _ in range(100):                  # the log is written a few times a second
            conn = connect_readonly(db) if db.exists() else None
            if conn is not None:
                rows = {r[0]: (r[1], r[2]) for r in conn.execute(
                    "SELECT game_id, think_ms, answer_ms FROM turns")}
                conn.close()
            if len(rows) == 2:
                break
            time.sleep(0.1)
        (first_think, _), (second_think, second_answer) = rows["first"], rows["second"]
        # the second's time counts its wait (about the first's whole think) ...
        assert second_answer > 0.8 * first_think
        # ... so it thinks for what is left, not for a whole turn as the first did
        assert second_think is None or second_think < first_think / 2


def test_one_game_in_flight_searches_on_every_core_whatever_the_workers(tmp_path):
    """Two workers, one game: its searches take every core the machine gives (each
    worker's share was half of them before the server counted its searches across workers,
    snake.search.cores); the game log says how many threads searched each move."""
    import re

    from snake.search.cores import available_cores
    rng = random.Random(7)
    state = new_game("standard", 11, 11, ["us", "them"], rng=rng, game_id="cores-game",
                     timeout=200)
    local = get_strategy("floodfill")
    with gunicorn(tmp_path, NUPPEPPOU_WORKERS="2", NUPPEPPOU_THREADS="2",
                  NUPPEPPOU_GAME_LOG=str(tmp_path / "games.sqlite")) as (port, _):
        assert request(port, "POST", "/start", state_to_request(state, "us"))[0] == 200
        for _ in range(6):
            if is_game_over(state):
                break
            status, _, answer = request(port, "POST", "/move", state_to_request(state, "us"))
            assert status == 200
            moves = {"us": answer["move"],
                     "them": local.choose(parse_request(state_to_request(state, "them")),
                                          None).move}
            state = play_turn(state, moves, rng)
        request(port, "POST", "/end", _end_body(state, "us"))
        time.sleep(0.5)                                 # the log's writer
        page = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        page.request("GET", "/games/cores-game?you=us")
        text = page.getresponse().read().decode()
        page.close()
    why = json.loads(re.search(r'<script id="why-data" type="application/json">(.*?)</script>',
                               text, re.S).group(1))
    threads = [w["reasons"]["search"]["threads"] for w in why.values() if w["by"] == "search"]
    assert threads and set(threads) == {available_cores()}, threads
