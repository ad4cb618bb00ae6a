"""The game log: whole games through the service, results, drops on a full queue, several
writers, retention, abandoned games, and a kill -9 while writing."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from app import create_app
from snake.board import parse_request, state_to_request
from snake.decision import Decision
from snake.observability.gamelog import (
    GameInfo,
    GameLog,
    connect,
    connect_readonly,
    end_record,
    store,
    turn_record,
)
from snake.observability.gamelog.reader import (
    RECORD_PAGE,
    GameFilter,
    find_game,
    game_turns,
    recent_games,
    record_lines,
    replay_of,
    summary,
)
from snake.records.ending import how_it_ended
from snake.rules import is_game_over, outcome, play_turn
from snake.rules.start import new_game
from snake.strategies import get_strategy

ROOT = Path(__file__).resolve().parent.parent


def game_bodies(seed: int, snakes: int = 2, side: int = 7, game_id: str | None = None,
                ruleset: str = "standard", final: list | None = None) -> tuple[list[dict], dict]:
    """The /move bodies snake s0 receives in a game played to its end by flood-fill snakes,
    and the /end body (the final state is appended to ``final`` when given)."""
    rng = random.Random(seed)
    ids = [f"s{i}" for i in range(snakes)]
    squads = [f"q{i // 2}" for i in range(snakes)] if ruleset == "squad" else None
    state = new_game(ruleset, side, side, ids, rng=rng, game_id=game_id or f"game-{seed}",
                     squads=squads)
    players = {i: get_strategy("floodfill") for i in ids}
    moves_bodies = []
    while not is_game_over(state) and state.turn < 300:
        if state.board.snake("s0").alive:
            moves_bodies.append(state_to_request(state, "s0"))
        moves = {s.id: players[s.id].choose(parse_request(state_to_request(state, s.id)), None).move
                 for s in state.board.living_snakes}
        state = play_turn(state, moves, rng)
    if final is not None:
        final.append(state)
    # /end as the engine sends it: a finished game one turn on (snake.rules.END_AFTER_FINAL)
    ended = play_turn(state, {}, rng) if is_game_over(state) else state
    return moves_bodies, state_to_request(ended, "s0")


@pytest.fixture
def db(tmp_path):
    return tmp_path / "games.db"


def play_through(client, bodies, end):
    assert client.post("/start", json=bodies[0]).status_code == 200
    answers = [client.post("/move", json=b).get_json()["move"] for b in bodies]
    assert client.post("/end", json=end).status_code == 200
    return answers


def test_a_whole_game_round_trips(db):
    log = GameLog(db)
    app = create_app(network=None, strategy="search", game_log=log)
    client = app.test_client()
    bodies, end = game_bodies(seed=4)
    answers = play_through(client, bodies, end)
    assert log.flush()
    conn = connect_readonly(db)
    game = find_game(conn, "game-4")
    assert game is not None and game.you_id == "s0" and game.ruleset == "standard"
    assert game.turns == len(bodies) and game.final_turn == end["turn"] - 1   # /end: one on
    assert game.opponents == ["s1"]
    living = [s["id"] for s in end["board"]["snakes"]]
    expected = "win" if living == ["s0"] else ("draw" if not living and
                                               bodies[-1]["turn"] == end["turn"] - 2 else "loss")
    assert game.result == expected
    turns = game_turns(conn, game)
    assert [t.turn for t in turns] == [b["turn"] for b in bodies]
    assert [t.move for t in turns] == answers
    assert all(t.answered_by in ("search", "seed", "no safe move") for t in turns)
    searched = [t for t in turns if t.answered_by == "search"]
    assert searched and all(t.depth >= 1 and t.reasons["search"]["pv"] for t in searched)
    assert all(t.answer_ms > 0 and t.reasons["move"] == t.move for t in turns)
    # the record is the game: every body as received, then the final one, shown at the
    # final turn (the engine's /end comes one turn on)
    replay = replay_of(conn, game)
    assert replay.turns == bodies + [{**end, "turn": end["turn"] - 1}]
    assert replay.game == bodies[0]["game"]
    listed = recent_games(conn)
    assert [g.game_id for g in listed] == ["game-4"] and listed[0].latency_p50 > 0
    assert summary(conn).games == 1


def test_a_worker_that_first_sees_a_game_mid_way_reads_how_it_began(db):
    """Two workers share the game log. One received a four-snake game's /start; the other
    first sees the game in its last duel and is told, from the log, that it began with four
    (the default's duel head is not for it). A game the log does not hold is taken as begun
    with the snakes alive."""
    from tests.test_app import BeganRecorder

    told = []
    first = GameLog(db)
    other = GameLog(db)
    one = create_app(network=None, strategy=BeganRecorder(told), game_log=first).test_client()
    two = create_app(network=None, strategy=BeganRecorder(told), game_log=other).test_client()
    bodies, _ = game_bodies(seed=2, snakes=4, side=11, game_id="g-four")
    assert len(bodies[0]["board"]["snakes"]) == 4
    assert one.post("/start", json=bodies[0]).status_code == 200
    assert first.flush()
    assert other.snakes_at_start("g-four", "s0") == ("s0", "s1", "s2", "s3")
    assert other.snakes_at_start("g-four", "s1") is None       # another snake's game row
    duel = json.loads(json.dumps(bodies[0]))
    duel["turn"] = 150
    duel["board"]["snakes"] = duel["board"]["snakes"][:2]
    assert two.post("/move", json=duel).status_code == 200
    unlogged = {**duel, "game": {**duel["game"], "id": "g-unlogged"}}
    assert two.post("/move", json=unlogged).status_code == 200
    assert told == [("g-four", 4), ("g-unlogged", 2)]
    # once the game has ended, its ids are another game's if they come again
    assert one.post("/end", json=duel).status_code == 200
    assert first.flush()
    assert other.snakes_at_start("g-four", "s0") is None
    # a worker whose writer was held up: the other worker's mid-game turn is written
    # before the /start received earlier; the record keeps the start's four snakes
    late = parse_request({**duel, "game": {**duel["game"], "id": "g-late"}})
    other.turn(replace(turn_record(late, json.dumps(duel).encode(), Decision("up"), 1.0),
                       received_at=time.time() + 60))
    assert other.flush()
    assert other.snakes_at_start("g-late", "s0") == ("s0", "s1")
    start = parse_request({**bodies[0], "game": {**bodies[0]["game"], "id": "g-late"}})
    first.start(GameInfo.of(start))
    assert first.flush()
    assert other.snakes_at_start("g-late", "s0") == ("s0", "s1", "s2", "s3")
    missing = GameLog(db.parent / "nowhere" / "games.db")
    assert missing.snakes_at_start("g-four", "s0") is None     # no file: no answer, no error
    for log in (first, other, missing):
        log.close()


def _records(bodies, end, start_at):
    """The log's records of a game whose requests came one second apart from ``start_at``."""
    turns = [replace(turn_record(parse_request(b), json.dumps(b).encode(), Decision("up"), 1.0),
                     received_at=start_at + i) for i, b in enumerate(bodies)]
    ended = replace(end_record(parse_request(end), json.dumps(end).encode()),
                    received_at=start_at + len(bodies))
    return turns, ended


def _rows(db):
    conn = connect_readonly(db)
    try:
        return {(r[0], r[1]): (r[2], r[3]) for r in conn.execute(
            "SELECT game_id, you_id, result, (SELECT group_concat(turn) FROM turns t WHERE "
            "t.game_id = g.game_id AND t.you_id = g.you_id ORDER BY turn) FROM games g")}
    finally:
        conn.close()


def test_a_last_turn_written_after_the_end_settles_a_draw(db):
    """Two workers share a game's requests: our last /move (worker B) may be written after
    /end (worker A). No one is left at the end, and our last move came on the final turn's
    eve: a draw, whichever was written first."""
    from snake.diagram import from_ascii
    from snake.observability.gamelog.store import write_end, write_turn
    bodies = [state_to_request(from_ascii("""
        . . . . .
        . A a a .
        . . . . .
        . B b b .
        . . . . .
    """, turn=t, game_id="both").state, "A") for t in (0, 1)]
    end = json.loads(json.dumps(bodies[-1]))
    end["turn"], end["board"]["snakes"] = 3, []       # everyone fell on turn 2, the final
    turns, ended = _records(bodies, end, 1000.0)
    conn = connect(db)
    write_turn(conn, turns[0])
    write_end(conn, ended)
    conn.commit()
    assert _rows(db)[("both", "A")][0] == "loss"       # as far as the log knows yet
    write_turn(conn, turns[1])
    conn.commit()
    assert _rows(db)[("both", "A")] == ("draw", "0,1")
    conn.close()


def test_a_new_game_under_old_ids_is_logged_apart(db):
    """The arena run again with its seed (or a client reusing ids) sends a new game under a
    game's ids: the earlier game is kept as <id>~1, whole, and the new one is logged on its
    own; a turn of one game written late (another worker) stays in its game."""
    from snake.observability.gamelog.store import _upsert_game, write_end, write_turn
    first, first_end = game_bodies(seed=4, game_id="again")
    second, second_end = game_bodies(seed=5, game_id="again")
    conn = connect(db)
    turns, ended = _records(first, first_end, 1000.0)
    write_turn(conn, turns[1])                         # written before turn 0: same game
    write_turn(conn, turns[0])
    for record in turns[2:]:
        write_turn(conn, record)
    write_end(conn, ended)
    later, later_end = _records(second, second_end, 5000.0)
    _upsert_game(conn, later[0].game, 4999.0)          # its /start
    for record in later[:3]:
        write_turn(conn, record)
    conn.commit()
    rows = _rows(db)
    assert rows[("again~1", "s0")] == (ended.result(first[-1]["turn"]),
                                       ",".join(str(b["turn"]) for b in first))
    assert rows[("again", "s0")] == (None, "0,1,2")
    # a game that never ended, then another under its ids from turn 0
    third, _ = game_bodies(seed=6, game_id="again")
    for record in _records(third, second_end, 9000.0)[0][:2]:
        write_turn(conn, record)
    conn.commit()
    rows = _rows(db)
    assert rows[("again~2", "s0")] == (None, "0,1,2") and rows[("again", "s0")] == (None, "0,1")
    conn.close()


def test_importing_a_record_of_a_game_in_the_log_leaves_the_log_as_it_is(db, tmp_path, capsys):
    """The service's own record of a game holds its reasons and times: importing the arena's
    record of the same game (its ids) leaves it, and says so."""
    from snake.observability.gamelog.__main__ import main as gamelog
    from snake.records.replay import Replay, write_replay
    log = GameLog(db)
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    bodies, end = game_bodies(seed=4, game_id="kept")
    play_through(client, bodies, end)
    assert log.flush()
    log.close()
    conn = connect_readonly(db)
    before = [(t.turn, t.method, t.answer_ms) for t in game_turns(conn, find_game(conn, "kept"))]
    conn.close()
    write_replay(tmp_path / "game-00001.jsonl", Replay(
        bodies[0]["game"], bodies + [end], {"winnerId": "", "winnerName": "", "isDraw": False}))
    assert gamelog(["import", str(tmp_path / "game-00001.jsonl"), "--db", str(db)]) == 0
    out = capsys.readouterr()
    assert "imported 0 games, 0 turns" in out.out and "1 already in it" in out.out
    assert "is in the log already" in out.err
    conn = connect_readonly(db)
    game = find_game(conn, "kept")
    assert [(t.turn, t.method, t.answer_ms) for t in game_turns(conn, game)] == before
    assert game.origin == "service"
    conn.close()


@pytest.mark.parametrize("ruleset,snakes", [("standard", 2), ("standard", 3),
                                             ("standard", 4), ("squad", 4)])
def test_results_are_the_rules_outcome(db, ruleset, snakes):
    """What the log reads off the /end body is the reference's result of the game."""
    log = GameLog(db)
    app = create_app(network=None, strategy="floodfill", game_log=log)
    client = app.test_client()
    expected = {}
    for seed in range(8):
        final: list = []
        bodies, end = game_bodies(seed=seed, snakes=snakes, ruleset=ruleset, final=final,
                                  side=7 if snakes < 4 else 11)
        if not is_game_over(final[0]):
            continue
        play_through(client, bodies, end)
        expected[f"game-{seed}"] = outcome(final[0], "s0")
    assert log.flush()
    conn = connect_readonly(db)
    assert {g: find_game(conn, g).result for g in expected} == expected
    assert len(expected) >= 5


def test_solo_games_just_end(db):
    log = GameLog(db)
    app = create_app(network=None, strategy="floodfill", game_log=log)
    bodies, end = game_bodies(seed=1, snakes=1, ruleset="solo")
    play_through(app.test_client(), bodies, end)
    assert log.flush()
    conn = connect_readonly(db)
    game = find_game(conn, "game-1")
    assert game.result == "ended"
    # its record: no snake left, and yet no draw (there is no one to draw with)
    replay = replay_of(conn, game)
    assert replay.result["isDraw"] is False and replay.outcome("s0") == "loss"
    assert "a draw" not in how_it_ended(replay)[0]


def test_no_game_log_when_disabled(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NUPPEPPOU_GAME_LOG", "off")
    app = create_app(network=None, strategy="floodfill")
    bodies, end = game_bodies(seed=2)
    play_through(app.test_client(), bodies, end)
    assert app.extensions["nuppeppou"]["game_log"] is None
    assert list(tmp_path.iterdir()) == []


def test_on_by_default_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NUPPEPPOU_GAME_LOG", raising=False)
    app = create_app(network=None, strategy="floodfill")
    log = app.extensions["nuppeppou"]["game_log"]
    bodies, end = game_bodies(seed=2)
    play_through(app.test_client(), bodies, end)
    assert log.flush()
    assert find_game(connect_readonly(tmp_path / "games.db"), "game-2") is not None
    log.close()


def _record(request_body: dict, turn: int | None = None):
    body = dict(request_body)
    if turn is not None:
        body["turn"] = turn
    raw = json.dumps(body).encode()
    return turn_record(parse_request(body), raw, Decision("up", method="flood fill"), 1.0)


def test_a_full_queue_drops_turns_and_never_waits(db):
    """The writer is held up (another connection holds the file's write lock): turns past
    the queue's size are dropped and counted, at once; what was queued is written later."""
    log = GameLog(db, queue_size=4)
    bodies, _ = game_bodies(seed=3)
    connect(db).close()                        # the schema exists
    blocker = sqlite3.connect(str(db), isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        accepted = [log.turn(_record(bodies[0], turn=t)) for t in range(40)]
        assert accepted.count(False) == log.dropped
        # the writer waits for the lock with at most the queue's 4 in hand, 4 more queued
        assert 40 - 8 <= log.dropped <= 40 - 4
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert log.flush()
    written = connect_readonly(db).execute("SELECT count(*) FROM turns").fetchone()[0]
    assert written == accepted.count(True) and written + log.dropped == 40


def test_a_record_that_cannot_be_written_is_dropped_alone(db):
    """A record SQLite refuses (here text with a lone surrogate, which UTF-8 cannot hold;
    the parser escapes such text, so this one is made by hand) costs that record only: the
    writer goes on with the rest, and counts the error."""
    from dataclasses import replace
    log = GameLog(db)
    bodies, _ = game_bodies(seed=4)
    bad = _record(bodies[0], turn=0)
    bad = replace(bad, game=replace(bad.game, you_name="odd \ud800 name"))
    assert log.turn(bad)
    for t in range(1, 4):
        assert log.turn(_record(bodies[0], turn=t))
    assert log.flush() and log.writer_alive()
    turns = [r[0] for r in connect_readonly(db).execute("SELECT turn FROM turns ORDER BY turn")]
    assert turns == [1, 2, 3] and log.errors == 1 and log.written == 3


def test_an_odd_name_from_the_wire_is_logged_escaped(db):
    log = GameLog(db)
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    bodies, end = game_bodies(seed=5, game_id="surrogate")
    for body in bodies + [end]:
        for s in body["board"]["snakes"] + [body["you"]]:
            s["name"] = "\ud800"
    raw = [json.dumps(b) for b in bodies]
    assert all(r'"\ud800"' in r for r in raw)        # a lone surrogate on the wire
    assert client.post("/start", data=raw[0], content_type="application/json").status_code == 200
    for r in raw:
        assert client.post("/move", data=r, content_type="application/json").status_code == 200
    assert log.flush() and log.errors == 0 and log.writer_alive()
    names = [r[0] for r in connect_readonly(db).execute("SELECT you_name FROM games")]
    assert names == [r"\ud800"]
    assert connect_readonly(db).execute("SELECT count(*) FROM turns").fetchone()[0] == len(raw)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_writer_that_died_is_started_again(db, monkeypatch):
    log = GameLog(db)
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    real_run = GameLog._run
    calls = []

    def dies_once(self):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug in the writer")
        real_run(self)
    monkeypatch.setattr(GameLog, "_run", dies_once)
    bodies, _ = game_bodies(seed=6)
    log.turn(_record(bodies[0], turn=0))          # starts the writer, which dies
    log._thread.join(5)
    health = client.get("/health").get_json()
    assert health["status"] == "degraded" and health["game_log"]["writer"] is False
    assert log.turn(_record(bodies[0], turn=1))   # a new writer; the first record is still queued
    assert log.flush() and log.writer_alive() and log.errors == 1
    assert connect_readonly(db).execute("SELECT count(*) FROM turns").fetchone()[0] == 2
    assert client.get("/health").get_json()["status"] == "ok"


def _wait_for(condition, timeout: float = 10.0) -> None:
    """Poll ``condition`` until it holds (a writer thread's progress)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the writer never got there"
        time.sleep(0.005)


def _turn_count(db) -> int:
    return connect_readonly(db).execute("SELECT count(*) FROM turns").fetchone()[0]


#: A writer that retries at once and waits little for a lock (the defaults: 0.5-30 s, 10 s).
QUICK = {"busy_timeout": 0.02, "retry_min": 0.01, "retry_max": 0.05}


@pytest.mark.parametrize("cause", ["no directory", "locked"])
def test_a_file_that_cannot_be_opened_is_tried_again(tmp_path, cause):
    """The writer starts while its file cannot be opened (its directory is not made yet,
    or another process holds the lock past the busy timeout): it keeps the records and
    tries again, /health says degraded meanwhile, and once the file opens all is written."""
    db = tmp_path / "later" / "games.db"
    blocker = None
    if cause == "locked":
        db.parent.mkdir()
        connect(db).close()
        blocker = sqlite3.connect(str(db), isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
    log = GameLog(db, **QUICK)
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    bodies, _ = game_bodies(seed=11)
    assert all(log.turn(_record(bodies[0], turn=t)) for t in range(3))
    _wait_for(lambda: log.errors >= 2)               # tried, and tried again
    health = client.get("/health").get_json()
    assert health["status"] == "degraded"
    assert health["game_log"]["writer"] is True and health["game_log"]["problem"] == (
        "the file cannot be opened" if cause == "no directory"
        else "the file is locked by another connection")
    assert log.queue_depth() == 3 and log.dropped == 0
    if blocker is not None:
        blocker.execute("ROLLBACK")
        blocker.close()
    else:
        db.parent.mkdir()
    assert log.flush()
    assert _turn_count(db) == 3 and log.written == 3
    health = client.get("/health").get_json()
    assert health["status"] == "ok" and health["game_log"]["problem"] is None
    log.close()


def test_a_lock_held_past_the_busy_timeout_keeps_the_batch(db):
    """Another process holds the write lock longer than the writer's busy timeout: the
    batch is kept and written once the lock is let go, none of it lost."""
    log = GameLog(db, **QUICK)
    bodies, _ = game_bodies(seed=12)
    assert log.turn(_record(bodies[0], turn=0)) and log.flush()
    blocker = sqlite3.connect(str(db), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        assert all(log.turn(_record(bodies[0], turn=t)) for t in range(1, 6))
        _wait_for(lambda: log.problem is not None)
        assert log.problem == "the file is locked by another connection"
        assert log.queue_depth() == 5                 # kept, not dropped
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert log.flush()
    turns = [r[0] for r in connect_readonly(db).execute("SELECT turn FROM turns ORDER BY turn")]
    assert turns == list(range(6)) and log.written == 6 and log.problem is None
    log.close()


def test_the_queue_is_bounded_in_bytes_too(tmp_path):
    """Large bodies while the writer is held up (here its file cannot be opened yet): past
    the queue's bytes a record is dropped and counted, whatever the count; bodies written
    leave room again."""
    db = tmp_path / "later" / "games.db"
    bodies, _ = game_bodies(seed=13)
    big = {**bodies[0], "padding": "x" * 100_000}
    records = [_record(big, turn=t) for t in range(10, 20)]      # bodies of one size
    size = len(records[0].body)
    log = GameLog(db, queue_mb=3.5 * size / 2 ** 20, **QUICK)
    accepted = [log.turn(r) for r in records]
    assert accepted == [True] * 3 + [False] * 7 and log.dropped == 7
    db.parent.mkdir()
    assert log.flush() and _turn_count(db) == 3
    assert log.turn(_record(big, turn=20))
    assert log.flush() and _turn_count(db) == 4
    log.close()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_file_deleted_or_replaced_is_opened_again(tmp_path, db, how):
    """The file is deleted (or another moved in its place) while the service runs: the
    writer notices that its path names another file and writes there, not into the
    unlinked one."""
    log = GameLog(db)
    bodies, _ = game_bodies(seed=14, game_id="before")
    assert log.turn(_record(bodies[0])) and log.flush()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if how == "replaced":
        other = tmp_path / "other.db"
        connect(other).close()
        os.replace(other, db)
    later, _ = game_bodies(seed=15, game_id="after")
    assert log.turn(_record(later[0])) and log.flush()
    conn = connect_readonly(db)
    assert find_game(conn, "after") is not None and find_game(conn, "before") is None
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    log.close()


def test_retention_gives_the_space_back(db, monkeypatch):
    """Retention deletes the oldest games and returns their pages to the filesystem (the
    file shrinks), in short transactions of a few pages, over as many maintenance passes
    as it takes."""
    log = GameLog(db)
    rng = random.Random(16)
    bodies, _ = game_bodies(seed=16)
    for k in range(30):
        for t in range(4):
            body = {**bodies[0], "game": {**bodies[0]["game"], "id": f"g{k}"},
                    "padding": rng.randbytes(6000).hex()}      # about 6 KB once compressed
            assert log.turn(_record(body, turn=t))
    assert log.flush(30)
    log.close()
    conn = connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = db.stat().st_size
    monkeypatch.setattr(store, "VACUUM_CHUNK", 16)
    monkeypatch.setattr(store, "VACUUM_PASS", 64)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    trimmer = GameLog(db, max_games=3)
    passes = 1
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    while trimmer.maintain(conn):
        left = conn.execute("PRAGMA freelist_count").fetchone()[0]
        assert free - left == 64 or passes == 1    # the first pass also made them free
        free, passes = left, passes + 1
    conn.set_trace_callback(None)
    every = GameFilter(result="all")            # (these games have no /end: not finished)
    assert [g.game_id for g in recent_games(connect_readonly(db), which=every)] == [
        "g29", "g28", "g27"]
    assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0 and passes > 2
    chunks = [int(m.group(1)) for s in statements
              for m in [re.search(r"incremental_vacuum\((\d+)\)", s)] if m]
    assert chunks and max(chunks) == 16
    # each chunk is a transaction of its own
    assert sum(s.startswith("BEGIN IMMEDIATE") for s in statements) >= len(chunks)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert db.stat().st_size < before / 5


class _SmallDisk(GameLog):
    """A writer whose file may grow by ``room`` pages only: past them SQLite fails with
    SQLITE_FULL, as on a full disk."""

    room = 12

    def _open(self):
        conn = super()._open()
        if conn is not None:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages + self.room}")
        return conn


def test_a_full_disk_loses_only_what_cannot_be_written(db):
    """The disk fills in the middle of a batch (SQLite then undoes the whole transaction):
    the records that fit are written all the same, only the others are lost (counted), and
    /health says degraded."""
    connect(db).close()
    blocker = sqlite3.connect(str(db), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")     # holds the writer until the batch is all queued
    log = _SmallDisk(db, **QUICK)
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    rng = random.Random(17)
    bodies, _ = game_bodies(seed=17)
    try:
        for t in range(10):
            assert log.turn(_record({**bodies[0], "padding": rng.randbytes(6000).hex()}, turn=t))
        _wait_for(lambda: log.errors >= 1)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert log.flush()
    turns = [r[0] for r in connect_readonly(db).execute("SELECT turn FROM turns ORDER BY turn")]
    assert 1 <= len(turns) < 10 and log.written == len(turns)
    health = client.get("/health").get_json()
    assert health["status"] == "degraded"
    assert "full" in health["game_log"]["problem"]
    log.close()


def test_a_record_read_slowly_holds_no_statement_open(db):
    """A game's record half read (a slow client downloading it): no statement stays open
    between two lines, so a writer can checkpoint and reset the write-ahead log meanwhile;
    the record read so is the same as read at once."""
    log = GameLog(db)
    bodies, end = game_bodies(seed=18)
    assert len(bodies) > 2 * RECORD_PAGE
    for b in bodies:
        log.turn(_record(b))
    log.end(end_record(parse_request(end), json.dumps(end).encode()))
    assert log.flush()
    log.close()
    writer = connect(db, busy_timeout=0.05)
    writer.execute("INSERT INTO meta VALUES ('probe-1', '')")   # the log is not empty
    reader = connect_readonly(db)
    game = find_game(reader, "game-18")
    whole = list(record_lines(reader, game))
    lines = record_lines(reader, game)
    head = [next(lines) for _ in range(RECORD_PAGE + 3)]        # into the second page
    writer.execute("INSERT INTO meta VALUES ('probe-2', '')")
    busy, _, _ = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0 and Path(f"{db}-wal").stat().st_size == 0
    assert head + list(lines) == whole
    assert json.loads(whole[-2])["turn"] == end["turn"] - 1 and "isDraw" in whole[-1]


def test_dropped_start_and_end_records_count_in_the_metric(db):
    """nuppeppou_game_log_dropped_total counts every record the queue refused: /start's
    and /end's as well as the turns'."""
    from prometheus_client import REGISTRY

    class Refusing(GameLog):
        def _put(self, item):
            self.dropped += 1
            return False

    log = Refusing(db)
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    before = REGISTRY.get_sample_value("nuppeppou_game_log_dropped_total") or 0.0
    bodies, end = game_bodies(seed=19)
    play_through(client, bodies[:2], end)
    after = REGISTRY.get_sample_value("nuppeppou_game_log_dropped_total")
    assert after - before == log.dropped == 4          # /start, two /move, /end


def test_abandoned_when_no_end_comes(db):
    log = GameLog(db, abandon_after=0.0, maintain_every=0.05)
    bodies, _ = game_bodies(seed=5)
    for b in bodies[:3]:
        log.turn(_record(b))
    assert log.flush()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if find_game(connect_readonly(db), "game-5").result == "abandoned":
            break
        time.sleep(0.05)
    assert find_game(connect_readonly(db), "game-5").result == "abandoned"


def test_retention_keeps_the_newest_games(db):
    log = GameLog(db, max_games=3, maintain_every=0.05)
    for k in range(6):
        bodies, end = game_bodies(seed=10 + k, game_id=f"g{k}")
        for b in bodies[:4]:
            log.turn(_record(b))
        log.end(end_record(parse_request(end), json.dumps(end).encode()))
        assert log.flush()
        time.sleep(0.01)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        ids = [g.game_id for g in recent_games(connect_readonly(db),
                                               which=GameFilter(result="all"))]
        if len(ids) <= 3:
            break
        time.sleep(0.05)
    assert ids == ["g5", "g4", "g3"]
    conn = connect_readonly(db)
    assert {r[0] for r in conn.execute("SELECT DISTINCT game_id FROM turns")} == {"g3", "g4", "g5"}


WRITER = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, {root!r})
    from snake.board import parse_request
    from snake.decision import Decision
    from snake.observability.gamelog import GameLog, turn_record
    body = json.loads(open({body!r}).read())
    log = GameLog({db!r})
    for n in range({count}):
        body["game"]["id"] = {prefix!r} + str(n // 50)
        body["turn"] = n % 50
        raw = json.dumps(body).encode()
        while not log.turn(turn_record(parse_request(body), raw, """
                                    """Decision("up", method="flood fill"), 1.0)):
            time.sleep(0.001)
    log.flush(60)
    print("done", flush=True)
    time.sleep({linger})
""")


def _writer(tmp_path, db, prefix, count, linger=0.0):
    bodies, _ = game_bodies(seed=7)
    # one file per writer: rewriting a shared one while another process starts and reads
    # it gave that process an empty file (a race of the test, seen under load)
    body_file = tmp_path / f"body-{prefix.rstrip('-')}.json"
    body_file.write_text(json.dumps(bodies[0]))
    script = WRITER.format(root=str(ROOT), body=str(body_file), db=str(db), count=count,
                           prefix=prefix, linger=linger)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)


def test_several_processes_write_one_file(tmp_path, db):
    writers = [_writer(tmp_path, db, f"p{k}-", 300) for k in range(3)]
    for w in writers:
        out, _ = w.communicate(timeout=120)
        assert w.returncode == 0 and "done" in out
    conn = connect_readonly(db)
    assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == 900
    assert conn.execute("SELECT count(*) FROM games").fetchone()[0] == 18


def test_kill_9_while_writing_leaves_a_readable_file(tmp_path, db):
    writer = _writer(tmp_path, db, "k-", 1_000_000)
    try:
        deadline = time.monotonic() + 60
        seen = 0
        while time.monotonic() < deadline and seen < 500:
            time.sleep(0.1)
            if db.exists():
                try:
                    seen = connect_readonly(db).execute("SELECT count(*) FROM turns").fetchone()[0]
                except sqlite3.OperationalError:
                    seen = 0
        assert seen >= 500, "the writer wrote nothing"
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(30)
    conn = sqlite3.connect(str(db))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    count = conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    assert count >= seen
    ro = connect_readonly(db)
    game = find_game(ro, "k-0")
    assert game is not None and len(game_turns(ro, game)) == 50
    assert len(replay_of(ro, game).turns) == 50
    # and it can be written again
    log = GameLog(db)
    bodies, _ = game_bodies(seed=8)
    log.turn(_record(bodies[0]))
    assert log.flush()
    assert find_game(connect_readonly(db), "game-8") is not None


def test_queries_bind_what_they_are_given(db):
    log = GameLog(db)
    bodies, _ = game_bodies(seed=9)
    log.turn(_record(bodies[0]))
    assert log.flush()
    conn = connect_readonly(db)
    for evil in ("x' OR '1'='1", "game-9' --", "'; DROP TABLE games; --", "%", "game-9\x00"):
        assert find_game(conn, evil) is None
        assert find_game(conn, "game-9", evil) is None
    assert find_game(conn, "game-9") is not None


def test_arena_records_can_be_imported(tmp_path, capsys):
    """Records of snake.arena become games of the log (the dashboard opens them), with the
    arena's own results."""
    from snake.arena.__main__ import main as arena
    from snake.observability.gamelog.__main__ import main as gamelog
    runs = tmp_path / "runs"
    assert arena(["floodfill", "random", "-g", "4", "--size", "7", "--parallel", "1",
                  "--seed", "2", "-o", str(runs), "--quiet"]) == 0
    wins = json.loads((runs / "results.json").read_text())["players"][0]["wins"]
    db = tmp_path / "games.db"
    assert gamelog(["import", str(runs), "--db", str(db)]) == 0
    assert "imported 4 games" in capsys.readouterr().out
    conn = connect_readonly(db)
    games = recent_games(conn)
    assert len(games) == 4 and {g.origin for g in games} == {"arena"}
    assert sum(g.result == "win" for g in games) == wins
    for g in games:
        replay = replay_of(conn, g)
        turns = game_turns(conn, g)
        assert [t.turn for t in turns] == [b["turn"] for b in replay.turns
                                           if any(s["id"] == g.you_id
                                                  for s in b["board"]["snakes"])][:len(turns)]
        # the move recorded is the one that took the head to the next turn's square
        for t, body, following in zip(turns, replay.turns, replay.turns[1:]):
            mine = [s for s in following["board"]["snakes"] if s["id"] == g.you_id]
            if mine:
                head, nxt = body["you"]["head"], mine[0]["head"]
                dx, dy = nxt["x"] - head["x"], nxt["y"] - head["y"]
                assert {(0, 1): "up", (0, -1): "down", (-1, 0): "left",
                        (1, 0): "right"}[(dx, dy)] == t.move


def test_training_positions_from_the_game_log(db, tmp_path):
    """Every snake's positions on the turns the log holds, with the reference's result of
    the game as its target and the features of the state it was in."""
    import numpy as np

    from nnue.features import active_features
    from training.from_game_log import write_from_game_log
    from training.shards import ShardError, load_split
    log = GameLog(db)
    app = create_app(network=None, strategy="floodfill", game_log=log)
    client = app.test_client()
    expected = []
    finished = died = 0
    for seed in range(5):
        final: list = []
        bodies, end = game_bodies(seed=50 + seed, snakes=3, side=11, final=final)
        play_through(client, bodies, end)
        if not is_game_over(final[0]):
            continue                 # stopped at 300 turns: no result, no target
        finished += 1
        targets = {s.id: {"win": 1.0, "draw": 0.5, "loss": 0.0}[outcome(final[0], s.id)]
                   for s in final[0].board.snakes}
        # the record of the game in the log ends with the /end body at the final turn
        final_line = {**end, "turn": end["turn"] - 1}
        for body, following in zip(bodies, bodies[1:] + [final_line]):
            request = parse_request(body)
            if following["turn"] != body["turn"] + 1:
                continue
            alive_next = {s["id"] for s in following["board"]["snakes"]}
            for s in request.state.board.snakes:
                if s.id in alive_next:
                    expected.append((sorted(active_features(request.state, s).tolist()),
                                     targets[s.id]))
        if "s0" not in {s["id"] for s in end["board"]["snakes"]}:
            # the move that ended us is a position too (the /end body shows where it went)
            last = parse_request(bodies[-1])
            expected.append((sorted(active_features(last.state, last.you).tolist()),
                             targets["s0"]))
            died += 1
    assert log.flush()
    meta = write_from_game_log(db, tmp_path / "data", quiet=True)
    assert meta["games"] == finished >= 3 and meta["positions"] == len(expected)
    assert died >= 1
    got = []
    for split in ("train", "val", "test"):
        try:
            p = load_split(tmp_path / "data", split)
        except ShardError:      # a split with no shards (few games)
            continue
        for k in range(len(p.moves)):
            got.append((sorted(p.indices[p.offsets[k]:p.offsets[k + 1]].tolist()),
                        float(p.targets[k])))
    assert sorted(got) == sorted(expected)
    assert np.isfinite([t for _, t in got]).all()


def test_from_the_log_solo_games_and_the_move_that_ended_us(db, tmp_path):
    """A solo game from the log: every move, the last one into the wall included (the
    /end body shows our head off the board), with datagen's solo target min(T / 100, 1)."""
    from snake.diagram import from_ascii
    from training.from_game_log import game_positions, write_from_game_log
    t0 = state_to_request(from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . A
        . . . . . a a
    """, turn=0, ruleset="solo").state, "A")
    t1 = state_to_request(from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . A
        . . . . . . a
        . . . . . . a
    """, turn=1, ruleset="solo").state, "A")
    end = json.loads(json.dumps(t1))
    end["turn"] = 2                   # a record's last line: the final turn
    end["you"]["body"] = [{"x": 7, "y": 2}, {"x": 6, "y": 2}, {"x": 6, "y": 1}]
    end["you"]["head"] = {"x": 7, "y": 2}
    end["board"]["snakes"] = []
    rows = game_positions(SimpleNamespace(turns=[t0, t1, end]))
    assert [(move, target, turn) for _, move, target, _, turn in rows] == [
        (0, 0.02, 0), (3, 0.02, 1)]                 # up, then right into the wall; T = 2

    log = GameLog(db)
    app = create_app(network=None, strategy="floodfill", game_log=log)
    bodies, end = game_bodies(seed=1, snakes=1, ruleset="solo")
    play_through(app.test_client(), bodies, end)
    assert log.flush()
    meta = write_from_game_log(db, tmp_path / "data", quiet=True)
    assert meta["games"] == 1 and meta["positions"] == len(bodies) == end["turn"] - 1


@pytest.mark.parametrize("ruleset", ["solo", "standard"])
def test_from_the_log_the_move_that_ended_us_only_from_the_turn_we_fell_on(ruleset):
    """A turns up, right, then down into its own body (turns 0-2), alone on the board: in
    solo, or in standard played as solo (one snake), every move's target is the solo one,
    T = 3. With turns 1 and 2 missing from the log, the head at /end is still one step from
    turn 0's, but the body shows it is not turn 0's move: no position is made of it."""
    from snake.diagram import from_ascii
    from training.from_game_log import game_positions
    state = from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . A a a a a
        . . . . . . .
        . . . . . . .
    """, turn=0, ruleset=ruleset, game_id="fell").state
    bodies = []
    for move in ("up", "right", "down"):
        bodies.append(state_to_request(state, "A"))
        state = play_turn(state, {"A": move}, random.Random(0))
    assert state.board.snake("A").eliminated_cause == "snake-self-collision"
    end = state_to_request(state, "A")
    rows = game_positions(SimpleNamespace(turns=bodies + [end]))
    assert [(move, target, turn) for _, move, target, _, turn in rows] == [
        (0, 0.03, 0), (3, 0.03, 1), (1, 0.03, 2)]           # up, right, down; T = 3
    assert game_positions(SimpleNamespace(turns=[bodies[0], end])) == []


def test_from_the_log_a_result_we_could_not_see_is_no_target():
    """We (A) fell on turn 1→2; B and C, alive on our last turn, were gone at the /end of
    turn 5 with no one left. Whether each fell on the final turn (a draw) or before (a
    loss) is not in our log, so their positions are left out; ours is a loss."""
    from snake.diagram import from_ascii
    from training.from_game_log import game_positions
    t0 = state_to_request(from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . B b b . . .
        . . . . . . .
        . C c c . . .
        A a a . . . .
    """, turn=0).state, "A")
    t1 = state_to_request(from_ascii("""
        . . . . . . .
        . . . . . . .
        . B . . . . .
        . b b . . . .
        . C . . . . .
        A c c . . . .
        a a . . . . .
    """, turn=1).state, "A")
    end = json.loads(json.dumps(t1))
    end["turn"], end["board"]["snakes"] = 5, []
    rows = game_positions(SimpleNamespace(turns=[t0, t1, end]))
    assert [(move, target, turn) for _, move, target, _, turn in rows] == [(0, 0.0, 0)]  # A: up

