"""The arena against tiny HTTP Battlesnakes started by the test on 127.0.0.1.

Each server records what it was sent. A well-behaved one plays flood fill (so its games can
be compared move for move with the built-in ``floodfill``); a late one sleeps past the
timeout; a broken one answers garbage or HTTP 500. None of them may stop the arena."""

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from snake.arena.__main__ import main
from snake.arena.players import HttpSeat
from snake.board import parse_request
from snake.records.replay import read_replay
from snake.strategies import get_strategy

LAST_LINE = re.compile(r"^arena: (\d+) wins, (\d+) draws, (\d+) losses for (\S+)$")


class SnakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.calls = []            # (route, body) in order received
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = 0     # /move requests being answered at once
        self.floodfill = get_strategy("floodfill")
        super().__init__(("127.0.0.1", 0), Handler)

    def handle_error(self, request, client_address):
        pass   # a late answer meets a closed socket: expected here

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def routes(self, route):
        return [body for r, body in self.calls if r == route]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive, like a real snake server

    def log_message(self, *args):
        pass

    def send(self, status, data: bytes):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.send(200, json.dumps({"apiversion": "1", "color": "#123456",
                                   "head": "pixel", "tail": "pixel"}).encode())

    def do_POST(self):
        server = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        route = self.path.rsplit("/", 1)[-1]
        with server.lock:
            server.calls.append((route, body))
        if route != "move":
            return self.send(200, b"")
        behaviour = server.behaviour
        if behaviour == "slow":
            # a snake that thinks a while: counts how many of its seats think at once
            with server.lock:
                server.in_flight += 1
                server.most_in_flight = max(server.most_in_flight, server.in_flight)
            time.sleep(0.05)
            with server.lock:
                server.in_flight -= 1
            return self.send(200, b'{"move": "up"}')
        if behaviour == "late":
            time.sleep(0.25)
        if behaviour == "garbage":
            if body["turn"] % 2:
                return self.send(500, b'{"error": "boom"}')
            return self.send(200, b"this is not json")
        if behaviour == "badmove":
            return self.send(200, b'{"move": "sideways"}')
        if behaviour == "trickle":
            # valid headers, then the body a byte at a time: 6 s for the whole answer
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "300")
            self.end_headers()
            try:
                for _ in range(300):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.02)
            except OSError:
                pass
            return
        if behaviour == "closes idle":
            # answer, then close the kept-alive connection once it has been idle a while,
            # as servers do (gunicorn's gthread after 2 s, uvicorn after 5)
            self.close_connection = True
            self.send(200, b'{"move": "up"}')
            return
        request = parse_request(body)
        move = server.floodfill.choose(request, None).move
        self.send(200, json.dumps({"move": move, "shout": f"going {move}"}).encode())


@pytest.fixture
def snake_server():
    servers = []

    def start(behaviour):
        server = SnakeServer(behaviour)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def run(capsys, *args):
    code = main([*args, "--quiet", "--parallel", "1"])
    out = capsys.readouterr()
    return code, out.out, out.err


def answers_row(out, label):
    for line in out.splitlines():
        cells = line.split()
        if cells and cells[0] == label and cells[1] in ("http", "built-in"):
            return cells
    raise AssertionError(f"no answers row for {label}\n{out}")


def test_http_snake_plays_exactly_like_the_builtin(capsys, tmp_path, snake_server):
    server = snake_server("floodfill")
    code, out, _ = run(capsys, f"ff={server.url}", "random", "-g", "2", "--size", "7",
                       "--seed", "4", "-o", str(tmp_path / "http"))
    assert code == 0
    run(capsys, "ff=floodfill", "random", "-g", "2", "--size", "7", "--seed", "4",
        "-o", str(tmp_path / "builtin"))
    for name in ("game-00001.jsonl", "game-00002.jsonl"):
        over_http = read_replay(tmp_path / "http" / name)
        builtin = read_replay(tmp_path / "builtin" / name)
        assert len(over_http.turns) == len(builtin.turns)
        for a, b in zip(over_http.turns, builtin.turns):
            assert [s["body"] for s in a["board"]["snakes"]] == \
                   [s["body"] for s in b["board"]["snakes"]]
        assert over_http.result == builtin.result
    # the engine's conversation: /start once per game, /end to every snake at the end,
    # showing the finished game one turn past its final turn, as the official CLI does
    assert len(server.routes("start")) == 2 and len(server.routes("end")) == 2
    finals = sorted(read_replay(tmp_path / "http" / name).turns[-1]["turn"]
                    for name in ("game-00001.jsonl", "game-00002.jsonl"))
    assert sorted(e["turn"] for e in server.routes("end")) == [t + 1 for t in finals]
    moves = server.routes("move")
    assert moves and all(m["game"]["timeout"] == 500 for m in moves)
    assert all(m["you"]["customizations"]["color"] == "#123456" for m in moves)
    row = answers_row(out, "ff")
    assert row[1] == "http" and int(row[2]) == len(moves)
    assert row[-2:] == ["0", "0"]                       # no timeouts, no invalid answers


def test_late_snake_repeats_its_last_move_and_counts_timeouts(capsys, tmp_path, snake_server):
    server = snake_server("late")
    code, out, err = run(capsys, f"late={server.url}", "floodfill", "-g", "2", "--size", "7",
                         "--timeout", "100", "-o", str(tmp_path))
    assert code == 0
    assert LAST_LINE.match(out.splitlines()[-1]).group(4) == "late"
    row = answers_row(out, "late")
    moves, p50, timeouts = int(row[2]), float(row[3]), int(row[5])
    assert moves > 0 and timeouts == moves and p50 >= 100
    assert "timeout" in err
    # no answer ever came: the snake goes "up" from its start until it leaves the board
    replay = read_replay(tmp_path / "game-00001.jsonl")
    late_id = next(s["id"] for s in replay.turns[0]["board"]["snakes"] if s["name"] == "late")
    heads = [next(s["head"] for s in t["board"]["snakes"] if s["id"] == late_id)
             for t in replay.turns if any(s["id"] == late_id for s in t["board"]["snakes"])]
    assert all(b["x"] == a["x"] and b["y"] == a["y"] + 1 for a, b in zip(heads, heads[1:]))


@pytest.mark.parametrize("behaviour", ["garbage", "badmove"])
def test_invalid_answers_are_counted_and_the_games_go_on(capsys, tmp_path, snake_server, behaviour):
    server = snake_server(behaviour)
    code, out, err = run(capsys, f"bad={server.url}", "random", "-g", "3", "--size", "7",
                         "-o", str(tmp_path))
    assert code == 0
    row = answers_row(out, "bad")
    assert int(row[2]) > 0 and int(row[-1]) == int(row[2]) and int(row[-2]) == 0
    assert len(list(tmp_path.glob("game-*.jsonl"))) == 3
    w, d, losses, _ = LAST_LINE.match(out.splitlines()[-1]).groups()
    assert int(w) + int(d) + int(losses) == 3
    assert "invalid" in err


@pytest.mark.parametrize("one_at_a_time", [False, True])
def test_one_at_a_time_asks_the_snakes_in_turn(capsys, snake_server, one_at_a_time):
    # three seats of one HTTP snake: asked together, as the engine asks, they think at once;
    # one at a time, never two of them
    server = snake_server("slow")
    code, out, _ = run(capsys, f"slow={server.url}", "random", "-n", "4",
                       "--seats", "slow,slow,slow,random", "-g", "1", "--size", "11",
                       "--max-turns", "4", "--timeout", "2000",
                       *(["--one-at-a-time"] if one_at_a_time else []))
    assert code == 0
    moves = len(server.routes("move"))
    assert moves >= 3 and int(answers_row(out, "slow")[2]) == moves
    assert answers_row(out, "slow")[-2:] == ["0", "0"]      # every answer on time and valid
    if one_at_a_time:
        assert server.most_in_flight == 1
    else:
        assert server.most_in_flight > 1


def test_unreachable_snake_stops_the_run_before_it_starts(capsys, snake_server):
    server = snake_server("floodfill")
    url = server.url
    server.shutdown()
    server.server_close()
    code, out, err = run(capsys, url, "random", "-g", "1")
    assert code == 2 and "GET / failed" in err


def test_http_seat_keeps_its_connection_and_drops_it_after_a_timeout(snake_server):
    server = snake_server("floodfill")
    seat = HttpSeat(server.url + "/", 500)
    status, data, _, problem = seat.post("end", b"{}")
    assert (status, problem) == (200, "")
    conn = seat.conn
    seat.post("start", b"{}")
    assert seat.conn is conn                         # keep-alive
    late = snake_server("late")
    seat = HttpSeat(late.url, 50)
    body = json.dumps({"turn": 0}).encode()
    answer = seat.move_payload(body)
    assert answer.move is None and answer.problem == "timeout" and seat.conn is None


def test_a_snake_that_trickles_its_answer_is_cut_off_at_the_timeout(snake_server):
    """A server that sends its headers and then a byte at a time never holds the game:
    the timeout bounds the whole exchange (a socket's timeout bounds each read only)."""
    server = snake_server("trickle")
    seat = HttpSeat(server.url, 300)
    body = _move_body()
    answer = seat.move_payload(json.dumps(body).encode())
    assert answer.move is None and answer.problem == "timeout"
    # cut off near its 300 ms, not when the server finished after 6 s (a bound ten times
    # the timeout: this is no speed test)
    assert answer.latency_ms < 3000
    seat.close()


def test_a_kept_alive_connection_the_server_closed_is_dialled_again(snake_server):
    """The server closes each connection after answering (an idle limit reached between
    turns): the next request goes on a new connection and is answered, not lost."""
    server = snake_server("closes idle")
    seat = HttpSeat(server.url, 2000)
    payload = json.dumps(_move_body()).encode()
    for _ in range(3):
        answer = seat.move_payload(payload)
        assert (answer.move, answer.problem) == ("up", "")
        time.sleep(0.05)
    seat.close()


def _move_body():
    from snake.board import state_to_request
    from snake.diagram import from_ascii
    return state_to_request(from_ascii("""
        . . . . .
        . A a . .
        . . . . .
        . B b . .
        . . . . .
    """).state, "A")
