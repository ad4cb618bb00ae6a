"""The server's game-log writer process (snake/observability/gamelog/channel.py, writer.py):
whole games through it, a writer killed and started again without losing what was sent
meanwhile, moves that never wait for a dead or stopped writer, and, under gunicorn, both
workers killed with SIGKILL mid-game without losing one answered turn."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import signal
import sqlite3

import pytest

from app import create_app
from bench.gamelog_kill import logged_turns, play_and_kill, play_game, service, writer_pids
from snake.observability.gamelog import GameLog, connect_readonly, from_settings
from snake.observability.gamelog.channel import Channel, forget, open_server
from snake.observability.gamelog.reader import find_game, game_turns, replay_of
from snake.settings import Settings
from tests.test_gamelog import _record, _turn_count, _wait_for, game_bodies, play_through


@pytest.fixture
def db(tmp_path):
    return tmp_path / "games.db"


@contextlib.contextmanager
def writer_process(db, **options):
    """A channel to a writer process of its own, as gunicorn's master makes one; closed
    after (the writer then writes what was sent and exits), whatever state it was left in."""
    channel = Channel(db, max_games=1000, max_mb=100.0, **options)
    channel.start_writer()
    try:
        yield channel
    finally:
        pid = channel.status().pid
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        channel.close(timeout=30)
        for pid in writer_pids(db):                  # never leave one behind
            os.kill(pid, signal.SIGKILL)


def _writer_up(channel, than: int = 0):
    """Wait until a writer (another than pid ``than``) runs and has said so."""
    _wait_for(lambda: channel.alive() and channel.status().pid not in (0, than), 60)
    return channel.status().pid


def test_a_whole_game_through_the_writer_process(db, tmp_path):
    """A game played through the service with a writer process is logged as with a
    writer thread: every body, answer and reason, its /start and its /end's result."""
    bodies, end = game_bodies(seed=4)
    logs = {}
    for how in ("thread", "process"):
        path = tmp_path / how / "games.db"
        path.parent.mkdir()
        with contextlib.ExitStack() as stack:
            channel = stack.enter_context(writer_process(path)) if how == "process" else None
            log = GameLog(path, channel=channel)
            client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
            answers = play_through(client, bodies, end)
            assert log.flush() and log.dropped == 0 and log.written == len(bodies) + 2
            assert log.writer_alive() and log.problem is None
            health = client.get("/health").get_json()
            assert health["status"] == "ok" and health["game_log"]["written"] == log.written
            log.close()
        conn = connect_readonly(path)
        game = find_game(conn, "game-4")
        turns = game_turns(conn, game)
        assert [t.move for t in turns] == answers
        logs[how] = (game.result, game.turns, game.final_turn, game.opponents,
                     [(t.turn, t.move, t.reasons) for t in turns], replay_of(conn, game).turns)
        conn.close()
    assert logs["process"] == logs["thread"]


def test_the_service_uses_the_servers_channel_when_there_is_one(db, tmp_path):
    """from_settings gives the GameLog the channel gunicorn.conf.py opened for its file;
    for another file, or in a process with none, a writer thread."""
    settings = Settings.from_environ({"NUPPEPPOU_GAME_LOG": str(db)})
    assert from_settings(settings).channel is None
    channel = open_server(db, max_games=10, max_mb=1.0)
    try:
        assert open_server(db, max_games=10, max_mb=1.0) is channel     # a SIGHUP's reload
        assert from_settings(settings).channel is channel
        other = Settings.from_environ({"NUPPEPPOU_GAME_LOG": str(tmp_path / "other.db")})
        assert from_settings(other).channel is None
    finally:
        forget(channel)
        channel.close(timeout=30)


def test_a_killed_writer_is_started_again_and_loses_nothing_sent_meanwhile(db, monkeypatch):
    """kill -9 of the writer process: the records sent while no writer runs wait in the
    kernel; the first process to notice starts another writer, which writes them all."""
    bodies, _ = game_bodies(seed=3)
    with writer_process(db) as channel:
        log = GameLog(db, channel=channel)
        assert all(log.turn(_record(bodies[0], turn=t)) for t in range(3)) and log.flush()
        first = _writer_up(channel)
        os.kill(first, signal.SIGKILL)
        _wait_for(lambda: not channel.alive())
        assert not log.writer_alive()
        # no one notices for a while: the records are sent with no writer to read them
        with monkeypatch.context() as m:
            m.setattr(channel, "watch", lambda now=False: None)
            assert all(log.turn(_record(bodies[0], turn=t)) for t in range(3, 40))
            assert not channel.alive()
        assert log.flush(60)                # noticed: a writer is started, and writes them
        second = _writer_up(channel, than=first)
        assert second != first and log.writer_alive()
        turns = [r[0] for r in connect_readonly(db).execute("SELECT turn FROM turns "
                                                            "ORDER BY turn")]
        assert turns == list(range(40)) and log.dropped == 0
        assert log.written == 40 and channel.page.spawned()[1] == 2     # two writers started


def _padded(bodies, turn, rng):
    """A /move body with about 200 kB of padding that compresses badly."""
    return {**bodies[0], "turn": turn, "padding": rng.randbytes(100_000).hex()}


@pytest.mark.parametrize("writer", ["stopped", "dead"])
def test_a_move_never_waits_for_the_writer(db, writer, monkeypatch):
    """The writer stopped (SIGSTOP) or dead and not started again: moves are answered
    while the kernel's queue fills, then records are dropped and counted, /health says
    degraded and why; every record that was taken is written once a writer runs again."""
    rng = random.Random(5)
    bodies, _ = game_bodies(seed=5)
    with writer_process(db, send_buffer=256 * 1024) as channel:
        log = GameLog(db, channel=channel)
        client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
        assert client.post("/move", json=bodies[0]).status_code == 200 and log.flush()
        pid = _writer_up(channel)
        if writer == "dead":
            monkeypatch.setattr(channel, "start_writer", lambda: None)
            os.kill(pid, signal.SIGKILL)
            _wait_for(lambda: not channel.alive())
        else:
            os.kill(pid, signal.SIGSTOP)
        statuses = []
        for turn in range(1, 200):
            statuses.append(client.post("/move", json=_padded(bodies, turn, rng)).status_code)
            if log.dropped >= 3:
                break
        assert set(statuses) == {200} and log.dropped == 3
        health = client.get("/health").get_json()
        assert health["status"] == "degraded" and health["game_log"]["dropped"] == 3
        assert health["game_log"]["writer"] is (writer == "stopped")
        assert health["game_log"]["problem"] == "the writer is not taking records (they are " \
                                                "dropped)"
        taken = len(statuses) - 3
        if writer == "dead":
            monkeypatch.undo()
        else:
            os.kill(pid, signal.SIGCONT)
        assert log.flush(60)
        assert _turn_count(db) == 1 + taken and log.written == 1 + taken
        # a record taken again clears the problem
        assert client.post("/move", json={**bodies[0], "turn": 300}).status_code == 200
        assert client.get("/health").get_json()["status"] == "ok"


def _logged_so_far(db) -> set:
    """The turns in the log while the server runs (none while its file is being made)."""
    try:
        return logged_turns(db) if db.exists() else set()
    except sqlite3.OperationalError:
        return set()


def test_killing_both_workers_mid_game_loses_no_answered_turn(tmp_path):
    """The service under gunicorn, two workers: four games at once, every worker killed
    with SIGKILL twice mid-game; gunicorn forks new ones and the games go on. Stopped as
    an operator stops it, the log holds every turn any worker answered with a 200. Then
    the writer itself is killed while idle: the workers start another, and the game
    played after is logged whole too."""
    db = tmp_path / "games.db"
    with service(tmp_path, NUPPEPPOU_GAME_LOG=str(db), NUPPEPPOU_WORKERS="2",
                 NUPPEPPOU_THREADS="2", NUPPEPPOU_STRATEGY="floodfill") as running:
        played = play_and_kill(running, games=4, turns=50, kills=2, seed=7)
        assert played.kills == 2 and len(played.killed_workers) >= 3
        assert played.answered_after_kill > 0 and running.master.poll() is None
        _wait_for(lambda: played.answered <= _logged_so_far(db), 60)
        [writer] = writer_pids(db)
        os.kill(writer, signal.SIGKILL)
        for k in range(20):         # games until a worker has noticed (it looks twice a second)
            play_game(running.port, f"after-writer-{k}", 99 + k, 30, 500, played)
            if writer_pids(db) not in ([], [writer]):
                break
        assert writer_pids(db) not in ([], [writer])
    assert running.master.returncode == 0
    after = {turn for turn in played.answered if turn[0].startswith("after-writer")}
    assert after and len(played.answered) > 40
    assert played.answered - logged_turns(db) == set()
    output = running.output.read_text()
    assert "Traceback" not in output and "no writer process runs; starting one" in output
    conn = connect_readonly(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM games").fetchone()[0] == 4 + k + 1
    conn.close()
    _wait_for(lambda: not writer_pids(db))          # the writer stopped with the server


def test_a_record_larger_than_the_kernel_takes_is_dropped_alone(db):
    """A record the kernel's buffer could never hold (a huge body on a machine with a small
    ``net.core.wmem_max``) is refused at once and counted; it leaves no problem behind, and
    the records after it go through."""
    rng = random.Random(6)
    bodies, _ = game_bodies(seed=6)
    with writer_process(db, send_buffer=64 * 1024) as channel:
        log = GameLog(db, channel=channel)
        huge = {**bodies[0], "padding": rng.randbytes(300_000).hex()}
        told = []
        # on the logger itself: the service's logging setup may stop it propagating
        handler = logging.Handler(logging.ERROR)
        handler.emit = lambda record: told.append(record.getMessage())
        logger = logging.getLogger("nuppeppou.gamelog")
        logger.addHandler(handler)
        try:
            assert not log.turn(_record(huge, turn=0))
        finally:
            logger.removeHandler(handler)
        assert len(told) == 1 and "cannot be sent to the writer" in told[0]
        assert log.dropped == 1
        assert log.problem is None
        assert all(log.turn(_record(bodies[0], turn=t)) for t in (1, 2)) and log.flush()
        assert _turn_count(db) == 2 and log.dropped == 1
