"""The kill -9 experiment on the game log: ``python -m bench.gamelog_kill``.

Starts the service under gunicorn with the repo's gunicorn.conf.py on a free loopback port
(its game log in a temporary directory), plays games against it over HTTP as the engine
would (the rules engine, flood-fill opponents, one keep-alive connection per game, a
failed request answered as the engine does: by the snake's last move), and kills every
gunicorn worker with SIGKILL ``--kills`` times mid-game (and the game log's writer process
too with ``--kill-writer``). gunicorn forks new workers and the games go on. Once they are
over the server is stopped as an operator would (SIGTERM), and the log is read:

    answered 212 turns (200 OK) in 4 games, 3 requests failed; killed 2 workers twice
    the game log holds 212 of the 212 answered turns: none missing

Every turn a worker answered must be there: the worker handed it to the kernel before the
answer left (snake/observability/gamelog/channel.py). Options: ``--games``, ``--turns``
(cap per game), ``--kills``, ``--kill-writer``, ``--strategy`` (the service's default, a
search, unless given), ``--timeout-ms`` (the games' timeout: the search thinks less with
less), ``--workers``, ``--threads``, ``--seed``, ``--keep`` (a folder to keep the log and
gunicorn's output in). It exits with status 1 when a turn is missing, unless the writer was
killed too: a writer killed loses the records it had read and not yet committed (never
those still in the kernel), which the line then counts.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OURS = "us"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Service:
    """A running service: its port, the gunicorn master's process and output."""

    port: int
    master: subprocess.Popen
    output: Path

    def workers(self) -> list[int]:
        """The master's worker processes (its children that run gunicorn)."""
        return [pid for pid in children(self.master.pid) if b"gunicorn" in _cmdline(pid)]


def children(parent: int) -> list[int]:
    """The processes whose parent is ``parent`` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # the command name, in parentheses, may hold spaces: the fields follow its last ")"
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            out.append(int(entry))
    return out


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def writer_pids(db: Path) -> list[int]:
    """The game-log writer processes writing ``db``."""
    wanted = str(db.resolve()).encode()
    return [int(e) for e in os.listdir("/proc") if e.isdigit()
            and b"snake.observability.gamelog.writer" in (line := _cmdline(int(e)))
            and wanted in line.split(b"\0")]


@contextlib.contextmanager
def service(folder: Path, **settings: str) -> Iterator[Service]:
    """The service under the repo's gunicorn.conf.py on a free loopback port with these
    environment settings; stopped with SIGTERM after (its game log then written whole)."""
    port = free_port()
    env = dict(os.environ, PORT=str(port), **settings)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)      # gunicorn.conf.py makes a fresh one
    output = folder / "gunicorn.log"
    with open(output, "wb") as sink:
        master = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py",
             "-b", f"127.0.0.1:{port}", "app:app"],
            cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    running = Service(port, master, output)
    try:
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(OSError):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/")
                if conn.getresponse().status == 200:
                    conn.close()
                    break
            if master.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not start:\n" + output.read_text())
            time.sleep(0.1)
        yield running
    finally:
        stop(running)


def stop(running: Service, timeout: float = 60.0) -> None:
    """SIGTERM, as an operator stops it: the workers finish, the master has the game
    log's writer write what they sent, then exits."""
    if running.master.poll() is None:
        running.master.terminate()
        try:
            running.master.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            running.master.kill()
            running.master.wait()


@dataclass
class Played:
    """What the client saw: the turns answered with a 200, the requests that failed, and
    the processes killed."""

    games: int = 0
    answered: set[tuple[str, str, int]] = field(default_factory=set)
    failed: int = 0
    killed_workers: list[int] = field(default_factory=list)
    killed_writers: list[int] = field(default_factory=list)
    kills: int = 0
    answered_after_kill: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _post(conn: http.client.HTTPConnection, path: str, body: dict) -> tuple[int, dict | None]:
    conn.request("POST", path, body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    payload = response.read()
    return response.status, (json.loads(payload) if payload else None)


def play_game(port: int, game_id: str, seed: int, turns: int, timeout_ms: int,
              played: Played) -> None:
    """One duel of our snake against a flood-fill snake, as the engine plays it."""
    from snake.board import parse_request, state_to_request
    from snake.rules import is_game_over, play_turn
    from snake.rules.start import new_game
    from snake.strategies import get_strategy

    rng = random.Random(seed)
    state = new_game("standard", 11, 11, [OURS, "them"], rng=rng, game_id=game_id,
                     timeout=timeout_ms)
    local = get_strategy("floodfill")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def send(path: str, body: dict) -> tuple[int, dict | None]:
        nonlocal conn
        try:
            return _post(conn, path, body)
        except (OSError, http.client.HTTPException):
            # the worker holding the connection was killed: the engine counts no answer
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            return 0, None

    send("/start", state_to_request(state, OURS))
    last = "up"
    while not is_game_over(state) and state.turn < turns and state.board.snake(OURS).alive:
        status, answer = send("/move", state_to_request(state, OURS))
        with played.lock:
            if status == 200:
                played.answered.add((game_id, OURS, state.turn))
                played.answered_after_kill += played.kills > 0
                last = answer["move"]
            else:
                played.failed += 1
        theirs = local.choose(parse_request(state_to_request(state, "them")), None).move
        state = play_turn(state, {OURS: last, "them": theirs}, rng)
    send("/end", state_to_request(state, OURS))
    conn.close()
    with played.lock:
        played.games += 1


def kill_workers(running: Service, played: Played, db: Path | None = None) -> None:
    """SIGKILL every worker (and the game log's writer when ``db`` is given)."""
    pids = running.workers()
    writers = writer_pids(db) if db is not None else []
    for pid in pids + writers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with played.lock:
        played.killed_workers += pids
        played.killed_writers += writers
        played.kills += 1


def play_and_kill(running: Service, games: int, turns: int, kills: int, seed: int,
                  timeout_ms: int = 500, writer_of: Path | None = None) -> Played:
    """Play ``games`` games at once, killing every worker (and with ``writer_of`` the
    writer of that log) after each ``turns * games / (kills + 1)`` answered turns."""
    played = Played()
    threads = [threading.Thread(target=play_game,
                                args=(running.port, f"kill9-{seed}-{g}", seed * 100 + g, turns,
                                      timeout_ms, played))
               for g in range(games)]
    for t in threads:
        t.start()
    step = max(1, turns * games // (kills + 1) // 2)
    for k in range(1, kills + 1):
        while any(t.is_alive() for t in threads):
            with played.lock:
                if len(played.answered) >= k * step:
                    break
            time.sleep(0.01)
        if not any(t.is_alive() for t in threads):
            break
        kill_workers(running, played, writer_of)
    for t in threads:
        t.join()
    return played


def logged_turns(db: Path) -> set[tuple[str, str, int]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return {(g, y, t) for g, y, t in conn.execute("SELECT game_id, you_id, turn FROM turns")}
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gamelog_kill",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4, help="games at once (4)")
    parser.add_argument("--turns", type=int, default=60, help="turns per game at most (60)")
    parser.add_argument("--kills", type=int, default=2,
                        help="times every worker is killed mid-game (2)")
    parser.add_argument("--kill-writer", action="store_true",
                        help="kill the game log's writer process with the workers")
    parser.add_argument("--strategy", help="NUPPEPPOU_STRATEGY (the service's default)")
    parser.add_argument("--timeout-ms", type=int, default=200,
                        help="the games' timeout (200: a search thinks about 75 ms)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="a folder to keep the log and output in")
    args = parser.parse_args(argv)

    from nnue.network import Network

    with contextlib.ExitStack() as stack:
        if args.keep is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        else:
            folder = args.keep
            folder.mkdir(parents=True, exist_ok=True)
        db = folder / "games.db"
        weights = folder / "net.npz"
        # a small random network: what this measures does not depend on the weights
        Network.random(args.seed, hidden=(32, 32)).save(weights)
        settings = {"NUPPEPPOU_GAME_LOG": str(db), "NUPPEPPOU_WEIGHTS": str(weights),
                    "NUPPEPPOU_WORKERS": str(args.workers),
                    "NUPPEPPOU_THREADS": str(args.threads)}
        if args.strategy:
            settings["NUPPEPPOU_STRATEGY"] = args.strategy
        with service(folder, **settings) as running:
            played = play_and_kill(running, args.games, args.turns, args.kills, args.seed,
                                   args.timeout_ms, db if args.kill_writer else None)
        # stopped: the writer has written what the workers sent
        logged = logged_turns(db)
        missing = played.answered - logged
        writers = (f" and the writer {len(played.killed_writers)} times"
                   if args.kill_writer else "")
        print(f"answered {len(played.answered)} turns (200 OK) in {played.games} games, "
              f"{played.failed} requests failed; killed {len(played.killed_workers)} workers "
              f"in {played.kills} rounds{writers}, {played.answered_after_kill} turns "
              f"answered after the first")
        why = " (the killed writers', read and not yet committed)" if args.kill_writer else ""
        print(f"the game log holds {len(played.answered) - len(missing)} of the "
              f"{len(played.answered)} answered turns: "
              + (f"{len(missing)} missing{why}, e.g. {sorted(missing)[:3]}" if missing
                 else "none missing"))
        return 1 if missing and not args.kill_writer else 0


if __name__ == "__main__":
    sys.exit(main())
