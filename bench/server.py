"""Server latency benchmark: ``python -m bench.server``.

Starts the service under gunicorn with the repo's gunicorn.conf.py on a free loopback port,
replays recorded games as the engine would send them (``/start``, one ``/move`` per turn,
``/end``) and prints the ``/move`` latency seen by the client (p50 / p99, milliseconds):

- per strategy and board: 11x11 with 4 snakes, 19x19 with 8, one game at a time;
- per strategy under load: 32 games played at once (half of each board).

The last line reads ``server: p50 X ms, p99 Y ms at 32 games`` for the service's default
strategy (``search``, which thinks until ``timeout - margin``: its latency is by design
close to 350 ms at the default 500 ms timeout). The games are played beforehand by flood-fill
snakes with the rules engine.
Unless ``--weights`` is given (the shipped ``weights/nnue.npz``, say) the benchmark writes a
random full-size network (63720 -> 512 -> 512 -> 4, quantised like a real weight file) to
a temporary directory and points the service at it with ``NUPPEPPOU_WEIGHTS``: the NNUE
path costs the same whatever its weights.

Options: ``--workers`` / ``--threads`` (default: gunicorn.conf.py's), ``--strategies``,
``--games`` (per board), ``--turns`` (cap per game), ``--concurrency`` (32; 0 skips the
load), ``--network-ms`` (a round trip the client adds to every request, as a distant engine
would see it) and ``--margins`` (``adaptive`` as shipped, ``fixed``, or ``both``: the
search's margin with ``NUPPEPPOU_ADAPTIVE_MARGIN`` off, then on, over the same games). As
the engine does, each ``/move`` reports in ``latency`` how long the client waited for the
previous answer (the timeout when it was late), which is what the adaptive margin reads.

Under load it also counts how the moves were answered (from the service's DEBUG log, the
one setting that differs from the service as shipped: a line per move): by a search, and at
what depth (median, lowest), or by a fallback (the seed step).

The service runs as shipped, with its game log (``NUPPEPPOU_GAME_LOG``, here a file in a
temporary directory) and metrics on (``--no-game-log`` turns the log off, to compare): after
each strategy the benchmark reads ``/metrics`` and the log, and prints the turns recorded
against the moves answered, the records dropped (a full queue), the answers at risk of
being late (within 50 ms of the timeout) and the log's size per 1,000 turns.

The client runs on the same machine (one Python thread per game, keep-alive connections),
so its own CPU use is part of what is measured: on a small machine the figures are an
upper bound on what the engine would see.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from snake.strategies import DEFAULT_STRATEGY

ROOT = Path(__file__).resolve().parent.parent
BOARDS = ((11, 4), (19, 8))
#: game.timeout of the recorded games (new_game's default): an answer later than this is
#: one the engine would not wait for.
TIMEOUT_MS = 500


def record_games(side: int, snakes: int, games: int, turns: int, seed: int) -> list[list[bytes]]:
    """Request bodies (JSON bytes) that snake s0 receives in ``games`` games: the /start
    body, the /move bodies, and the /end body last."""
    from snake.board import parse_request, state_to_request
    from snake.rules import is_game_over, play_turn
    from snake.rules.start import new_game
    from snake.strategies import get_strategy

    player = get_strategy("floodfill")
    out = []
    for g in range(games):
        rng = random.Random(seed * 1000 + g)
        ids = [f"s{i}" for i in range(snakes)]
        state = new_game("standard", side, side, ids, rng=rng, game_id=f"bench-{side}-{g}")
        bodies = []
        while True:
            bodies.append(state_to_request(state, "s0"))
            if is_game_over(state) or not state.board.snake("s0").alive or state.turn >= turns:
                break
            moves = {}
            for snake in state.board.living_snakes:
                req = parse_request(state_to_request(state, snake.id))
                # A little randomness keeps the opponents from mirroring each other.
                if snake.id != "s0" and rng.random() < 0.05:
                    moves[snake.id] = rng.choice(("up", "down", "left", "right"))
                else:
                    moves[snake.id] = player.choose(req, None).move
            state = play_turn(state, moves, rng)
        if len(bodies) > 2:
            bodies.append(bodies[-1])  # the /end body
            out.append([json.dumps(b).encode() for b in bodies])
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """gunicorn with the repo's config on a free loopback port."""

    def __init__(self, strategy: str, weights: Path, workers: int | None, threads: int | None,
                 game_log: Path | None = None, adaptive_margin: bool = True):
        self.port = free_port()
        self.game_log = game_log
        env = dict(os.environ, PORT=str(self.port), NUPPEPPOU_STRATEGY=strategy,
                   NUPPEPPOU_WEIGHTS=str(weights), NUPPEPPOU_LOG_LEVEL="DEBUG",
                   NUPPEPPOU_GAME_LOG=str(game_log) if game_log else "off",
                   NUPPEPPOU_ADAPTIVE_MARGIN="on" if adaptive_margin else "off",
                   # the games replayed are not the service's own: its answers differ from
                   # the moves recorded, which would all look like answers the engine missed
                   NUPPEPPOU_CHECK_MOVES="off")
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)      # gunicorn.conf.py makes a fresh one
        if workers:
            env["NUPPEPPOU_WORKERS"] = str(workers)
        if threads:
            env["NUPPEPPOU_THREADS"] = str(threads)
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py",
             "-b", f"127.0.0.1:{self.port}", "app:app"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/")
                if conn.getresponse().status == 200:
                    conn.close()
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                raise RuntimeError("gunicorn did not start:\n" + self.log.read().decode())
            time.sleep(0.2)
        time.sleep(1.0)  # let every worker finish booting

    def log_size(self) -> int:
        return os.fstat(self.log.fileno()).st_size

    def answers_since(self, offset: int) -> list[str]:
        """How each move logged since ``offset`` was answered (the ``by ...`` of the
        service's DEBUG line)."""
        self.log.seek(offset)
        text = self.log.read().decode(errors="replace")
        self.log.seek(0, os.SEEK_END)
        return re.findall(r" -> \w+ by (.+?) in [\d.]+ ms", text)

    def metrics(self) -> dict[str, float]:
        """``/metrics`` as {name with labels: value} (loopback: the dashboard's rule lets
        it in)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def game_log_report(self, answered: int) -> str:
        """Turns the game log holds against the moves answered, drops, late risks, size."""
        import sqlite3

        metrics = self.metrics()
        dropped = metrics.get("nuppeppou_game_log_dropped_total", 0.0)
        risky = metrics.get("nuppeppou_late_risk_total", 0.0)
        if self.game_log is None:
            return f"game log off; {risky:.0f} answers within 50 ms of the timeout"
        deadline = time.monotonic() + 30        # the writers catch up
        recorded = -1
        while time.monotonic() < deadline:
            conn = sqlite3.connect(f"file:{self.game_log}?mode=ro", uri=True, timeout=10)
            now = conn.execute("SELECT count(*) FROM turns").fetchone()[0]
            conn.close()
            if now == recorded or now + dropped >= answered:
                recorded = now
                break
            recorded = now
            time.sleep(1.0)
        # the file itself, once the write-ahead log is folded into it
        conn = sqlite3.connect(str(self.game_log), timeout=30)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        size = self.game_log.stat().st_size
        per = size / max(recorded, 1) * 1000 / 1024
        return (f"game log: {recorded} turns recorded of {answered} answered, "
                f"{dropped:.0f} dropped; {risky:.0f} answers within 50 ms of the timeout; "
                f"{size / 1024 / 1024:.1f} MiB, {per:.0f} KiB per 1,000 turns")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def play(port: int, bodies: list[bytes], game_id: str, latencies: list[float],
         errors: list[str], network_ms: float = 0.0) -> None:
    """Replay one game over one keep-alive connection; append /move latencies (s). As the
    engine does, each /move reports how long the previous one took (``latency``: the
    timeout when it was late); ``network_ms`` is a round trip added on the client's side,
    half before each request and half after its answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"}
    last_ms = 0.0

    def post(path: str, raw: bytes) -> float:
        body = json.loads(raw)
        body["game"]["id"] = game_id        # every replay its own game: no shared sessions
        you = body["you"]["id"]
        for snake in body["board"]["snakes"] + [body["you"]]:
            if snake["id"] == you:
                snake["latency"] = f"{min(last_ms, TIMEOUT_MS):.0f}"
        data = json.dumps(body).encode()
        began = time.perf_counter()
        time.sleep(network_ms / 2000.0)
        conn.request("POST", path, body=data, headers=headers)
        response = conn.getresponse()
        answer = response.read()
        time.sleep(network_ms / 2000.0)
        elapsed = time.perf_counter() - began
        if response.status != 200:
            errors.append(f"{path} {response.status} {answer[:200]!r}")
        return elapsed

    try:
        post("/start", bodies[0])
        for body in bodies[:-2]:  # the last state is the one the game ended in
            elapsed = post("/move", body)
            latencies.append(elapsed)
            last_ms = elapsed * 1000.0
        post("/end", bodies[-1])
    except OSError as exc:
        errors.append(f"{game_id}: {exc}")
    finally:
        conn.close()


def percentiles(latencies: list[float]) -> tuple[float, float, int]:
    """p50 and p99 in ms, and how many answers came later than :data:`TIMEOUT_MS`."""
    xs = sorted(latencies)
    if not xs:
        return float("nan"), float("nan"), 0
    p50 = xs[min(len(xs) - 1, int(0.50 * len(xs)))]
    p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
    return p50 * 1000, p99 * 1000, sum(x * 1000 > TIMEOUT_MS for x in xs)


def run_sequential(port: int, games: list[list[bytes]], tag: str,
                   network_ms: float = 0.0) -> tuple[float, float, int, int]:
    latencies: list[float] = []
    errors: list[str] = []
    for i, bodies in enumerate(games):
        play(port, bodies, f"{tag}-{i}", latencies, errors, network_ms)
    if errors:
        raise RuntimeError(f"{len(errors)} failed requests, first: {errors[0]}")
    return (*percentiles(latencies), len(latencies))


def run_concurrent(port: int, games: list[list[bytes]], n: int, tag: str,
                   network_ms: float = 0.0) -> tuple[float, float, int, int]:
    latencies: list[float] = []
    errors: list[str] = []
    threads = [threading.Thread(target=play, args=(port, games[i % len(games)],
                                                   f"{tag}-{i}", latencies, errors, network_ms))
               for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"{len(errors)} failed requests, first: {errors[0]}")
    return (*percentiles(latencies), len(latencies))


def how_answered(answers: list[str]) -> str:
    """Searched moves (with their depths) against fallbacks, from the log's ``by ...``."""
    depths = [int(m.group(1)) for a in answers if (m := re.search(r"depth (\d+)", a))]
    searched = sum(a.startswith("search") for a in answers)
    fallback = len(answers) - searched
    depth = (f", depth median {statistics.median(depths):g}, lowest {min(depths)}"
             if depths else "")
    # why the fallbacks fell back: the method's reason, after its "seed (...): "
    why = collections.Counter(a.split(": ", 1)[-1].split(" (", 1)[0] for a in answers
                              if not a.startswith("search"))
    reasons = "".join(f"; {n} {reason}" for reason, n in why.most_common(3))
    return (f"{searched} of {len(answers)} moves searched, {fallback} by a fallback{depth}"
            f"{reasons}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.server",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--strategies", default=f"floodfill,random,seed,{DEFAULT_STRATEGY}",
                        help="comma-separated; the service's default strategy "
                             f"({DEFAULT_STRATEGY}) is reported last")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--games", type=int, default=3, help="recorded games per board")
    parser.add_argument("--turns", type=int, default=120, help="turn cap per recorded game")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--weights", type=Path, default=None,
                        help="network file (default: a random full-size one in a temp dir)")
    parser.add_argument("--no-game-log", action="store_true",
                        help="run the service without its game log (NUPPEPPOU_GAME_LOG=off)")
    parser.add_argument("--network-ms", type=float, default=0.0,
                        help="a round trip (ms) the client adds to every request, as a "
                             "distant engine would see it (0)")
    parser.add_argument("--margins", choices=("adaptive", "fixed", "both"), default="adaptive",
                        help="the search's margin: as shipped (adaptive), fixed "
                             "(NUPPEPPOU_ADAPTIVE_MARGIN=off), or both, fixed first")
    args = parser.parse_args(argv)
    if args.network_ms < 0 or args.concurrency < 0:
        parser.error("--network-ms and --concurrency must be at least 0")

    strategies = [s for s in args.strategies.split(",") if s]
    if DEFAULT_STRATEGY in strategies:  # the default strategy's figures go last
        strategies = [s for s in strategies if s != DEFAULT_STRATEGY] + [DEFAULT_STRATEGY]

    print(f"recording games ({args.games} per board, at most {args.turns} turns)...", flush=True)
    recorded = {board: record_games(*board, args.games, args.turns, seed=1) for board in BOARDS}
    for (side, snakes), games in recorded.items():
        print(f"  {side}x{side} with {snakes} snakes: {len(games)} games, "
              f"{sum(len(g) - 2 for g in games)} moves, "
              f"{sum(len(b) for g in games for b in g) // sum(len(g) for g in games)} "
              "bytes per body")
    mixed = [g for pair in zip(*recorded.values()) for g in pair]

    with tempfile.TemporaryDirectory() as tmp:
        weights = args.weights
        if weights is None:
            from nnue.network import Network

            print("writing a random full-size network...", flush=True)
            weights = Path(tmp) / "random-nnue.npz"
            Network.random(1).save(weights, {"source": "bench.server: random, untrained"})
        workers = args.workers or "conf"
        threads = args.threads or "conf"
        print(f"gunicorn workers={workers} threads={threads}", flush=True)
        if args.network_ms:
            print(f"the client adds a {args.network_ms:g} ms round trip to every request",
                  flush=True)
        modes = {"adaptive": (True,), "fixed": (False,), "both": (False, True)}[args.margins]
        last = None
        for strategy, adaptive in ((st, m) for st in strategies for m in modes):
            label = strategy if args.margins != "both" else \
                f"{strategy} ({'adaptive' if adaptive else 'fixed'} margin)"
            game_log = None if args.no_game_log else Path(tmp) / f"games-{label}.db"
            server = Server(strategy, weights, args.workers, args.threads, game_log, adaptive)
            answered = 0
            try:
                for (side, snakes), games in recorded.items():
                    p50, p99, late, n = run_sequential(server.port, games, f"{strategy}-{side}",
                                                       args.network_ms)
                    answered += n
                    print(f"{label:>9} {side}x{side} {snakes} snakes, 1 game:  "
                          f"p50 {p50:.2f} ms, p99 {p99:.2f} ms ({n} moves, "
                          f"{late} later than {TIMEOUT_MS} ms)", flush=True)
                if args.concurrency:
                    offset = server.log_size()
                    p50, p99, late, n = run_concurrent(server.port, mixed, args.concurrency,
                                                       f"{strategy}-load", args.network_ms)
                    print(f"{label:>9} mixed, {args.concurrency} games at once: "
                          f"p50 {p50:.2f} ms, p99 {p99:.2f} ms ({n} moves, "
                          f"{late} later than {TIMEOUT_MS} ms)", flush=True)
                    answered += n
                    if strategy.startswith("search"):
                        print(f"{'':>9} {how_answered(server.answers_since(offset))}", flush=True)
                print(f"{'':>9} {server.game_log_report(answered)}", flush=True)
                last = (label, p50, p99)
            finally:
                server.stop()
    if last is not None:
        name, p50, p99 = last
        label = "" if name == DEFAULT_STRATEGY else f" [{name}]"
        games = f"{args.concurrency} games" if args.concurrency else "1 game at a time (19x19)"
        print(f"server{label}: p50 {p50:.1f} ms, p99 {p99:.1f} ms at {games}")


if __name__ == "__main__":
    main()
