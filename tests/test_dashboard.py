"""The dashboard (/games), /health and /metrics: what they show, who may see them, bad
input, and the pages in a real browser (headless Chromium)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from app import create_app
from snake.observability.gamelog import GameLog, connect_readonly
from tests.test_gamelog import game_bodies, play_through

REMOTE = {"REMOTE_ADDR": "203.0.113.7"}


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A game log with three games (2, 3 and 4 snakes) played by the default search with a
    small budget, and one whose opponent has a hostile name."""
    db = tmp_path_factory.mktemp("dash") / "games.db"
    log = GameLog(db)
    from snake.search.strategy import SearchStrategy
    app = create_app(network=None, strategy=SearchStrategy(think_ms=20, engine="compiled",
                                                           max_concurrent=None), game_log=log)
    client = app.test_client()
    for seed in range(3):
        bodies, end = game_bodies(seed=20 + seed, snakes=2 + seed, side=11)
        play_through(client, bodies, end)
    bodies, end = game_bodies(seed=30, snakes=2, game_id="hostile")
    for body in bodies + [end]:
        for s in body["board"]["snakes"] + [body["you"]]:
            if s["id"] == "s1":
                s["name"] = "<script>alert('x')</script>"
    play_through(client, bodies, end)
    assert log.flush()
    return db, log


@pytest.fixture
def client(played, monkeypatch):
    monkeypatch.delenv("NUPPEPPOU_DASHBOARD_TOKEN", raising=False)
    db, log = played
    app = create_app(network=None, strategy="floodfill", game_log=log)
    return app.test_client()


@pytest.fixture
def token_client(played, monkeypatch):
    """The service started with a dashboard token (read once, at start-up)."""
    monkeypatch.setenv("NUPPEPPOU_DASHBOARD_TOKEN", "s3cret-token")
    db, log = played
    return create_app(network=None, strategy="floodfill", game_log=log).test_client()


def test_the_overview_lists_the_games(client):
    page = client.get("/games")
    assert page.status_code == 200 and page.content_type.startswith("text/html")
    text = page.get_data(as_text=True)
    assert text.count('<tr><td><a href="/games/') == 4
    for game in ("game-20", "game-21", "game-22", "hostile"):
        assert f"/games/{game}?you=s0" in text
    assert "win rate" in text and "answer time of recent moves" in text
    assert "search depth of recent moves" in text and "<svg" in text


def test_a_game_page_has_the_replay_and_the_reasons(client, played):
    page = client.get("/games/game-21?you=s0")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert '<svg id="board"' in text and 'id="why"' in text and 'id="turns"' in text
    why = json.loads(re.search(r'<script id="why-data" type="application/json">(.*?)</script>',
                               text, re.S).group(1))
    assert (why["0"]["by"] in ("search", "seed")
            and why["0"]["move"] in ("up", "down", "left", "right"))
    searched = [w for w in why.values() if w["by"] == "search"]
    assert searched and all(w["reasons"]["search"]["depth"] == w["depth"] for w in searched)
    record = client.get("/games/game-21?you=s0&format=jsonl")
    assert record.status_code == 200
    lines = record.get_data(as_text=True).splitlines()
    assert json.loads(lines[0])["id"] == "game-21" and set(json.loads(lines[-1])) == {
        "winnerId", "winnerName", "isDraw"}


def test_names_from_requests_are_never_markup(client):
    for url in ("/games", "/games/hostile"):
        text = client.get(url).get_data(as_text=True)
        assert "<script>alert(" not in text
    assert "&lt;script&gt;alert(" in client.get("/games").get_data(as_text=True)


@pytest.mark.parametrize("url", [
    "/games/x' OR '1'='1", "/games/game-20' --", "/games/'; DROP TABLE games; --",
    "/games/game-20?you=s0' OR '1'='1", "/games/%25", "/games/game-20?you=%00"])
def test_injections_find_nothing_and_change_nothing(client, played, url):
    db, _ = played
    before = connect_readonly(db).execute("SELECT count(*) FROM games").fetchone()[0]
    assert client.get(url).status_code == 404
    assert connect_readonly(db).execute("SELECT count(*) FROM games").fetchone()[0] == before == 4


@pytest.mark.parametrize("page,status", [("2", 200), ("0", 200), ("-3", 200),
                                         ("1; DROP TABLE games", 400), ("x", 400)])
def test_page_numbers(client, page, status):
    assert client.get(f"/games?page={page}").status_code == status


@pytest.mark.parametrize("url", ["/games", "/games/game-20", "/metrics"])
def test_from_another_machine_without_a_token_it_does_not_exist(client, url):
    assert client.get(url, environ_base=REMOTE).status_code == 404
    # a proxy on this machine forwards others' requests: they are not local
    assert client.get(url, headers={"X-Forwarded-For": "203.0.113.7"}).status_code == 404
    assert client.get(url).status_code == 200


@pytest.mark.parametrize("url", ["/games", "/games/game-20", "/metrics"])
def test_from_another_machine_the_token_opens_it(token_client, url):
    client = token_client
    assert client.get(url, environ_base=REMOTE).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert client.get(url, environ_base=REMOTE, headers=wrong).status_code == 401
    assert client.get(url, environ_base=REMOTE, query_string={"token": "nope"}).status_code == 401
    right = {"Authorization": "Bearer s3cret-token"}
    assert client.get(url, environ_base=REMOTE, headers=right).status_code == 200
    # a browser: ?token= once sets a cookie and sends it back to the address without it
    first = client.get(url, environ_base=REMOTE, query_string={"token": "s3cret-token"})
    assert first.status_code == 303 and "token" not in first.headers["Location"]
    cookie = first.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert client.get(url, environ_base=REMOTE).status_code == 200      # the cookie


@pytest.mark.parametrize("url", ["/games", "/metrics"])
def test_with_a_token_set_this_machine_needs_it_too(token_client, url):
    """A reverse proxy or tunnel on this machine that adds no forwarding header makes a
    stranger's request come from loopback: with a token set, loopback is no pass."""
    client = token_client
    assert client.get(url).status_code == 401
    assert client.get(url, headers={"Authorization": "Bearer s3cret-token"}).status_code == 200


def test_the_pages_load_nothing_and_draw_only_real_colours(tmp_path):
    """A snake's colour goes into the page's styles: anything but #RRGGBB (``url(...)``
    would have the viewer's browser call the sender) is replaced; and the pages forbid
    loading anything at all."""
    log = GameLog(tmp_path / "games.db")
    app = create_app(network=None, strategy="floodfill", game_log=log)
    game = app.test_client()
    bodies, end = game_bodies(seed=31, snakes=2, game_id="colours")
    beacon = "url(http://198.51.100.9/beacon?who=viewer)"
    for body in bodies + [end]:
        for s in body["board"]["snakes"] + [body["you"]]:
            s["customizations"] = {"color": beacon if s["id"] == "s1" else "#12AB9f"}
    play_through(game, bodies, end)
    assert log.flush()
    page = game.get("/games/colours?you=s0")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "198.51.100.9" not in text and "#12AB9f" in text
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in game.get("/games").headers["Content-Security-Policy"]


def test_health_is_public_and_says_how_the_service_is(client):
    for environ in ({}, REMOTE):
        health = client.get("/health", environ_base=environ)
        assert health.status_code == 200
    body = health.get_json()
    assert body["status"] == "ok" and body["strategy"] == "floodfill"
    assert body["network"] is False and body["sessions"] == 0
    assert set(body["game_log"]) == {"queue", "dropped", "written", "errors", "writer",
                                     "problem"}                    # no path
    assert body["game_log"]["problem"] is None


def test_metrics_count_moves_answers_and_depth(played):
    db, log = played
    app = create_app(network=None, strategy="search", game_log=None)
    client = app.test_client()

    def value(text, name):
        match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
        return float(match.group(1)) if match else 0.0

    before = client.get("/metrics").get_data(as_text=True)
    bodies, end = game_bodies(seed=40, snakes=2, side=7)
    play_through(client, bodies[:5], end)
    after = client.get("/metrics").get_data(as_text=True)
    assert (value(after, "nuppeppou_move_seconds_count")
            - value(before, "nuppeppou_move_seconds_count") == 5)
    answered = sum(value(after, f'nuppeppou_answers_total{{by="{k}"}}')
                   - value(before, f'nuppeppou_answers_total{{by="{k}"}}')
                   for k in ("search", "seed", "no safe move"))
    assert answered == 5
    assert (value(after, "nuppeppou_search_depth_count")
            > value(before, "nuppeppou_search_depth_count"))
    assert 'nuppeppou_requests_total{route="/move",status="200"}' in after
    assert "nuppeppou_game_log_dropped_total" in after and "nuppeppou_sessions" in after


def test_a_lost_game_says_how_it_ended(tmp_path, monkeypatch):
    """A recorded loss imported into the log (the last turns of a 1v1 game, tests/data): the
    page says how our snake died, by the rules, and from when it was cut off. The same game
    as the winner saw it says nothing of the kind."""
    import gzip

    from snake.observability.gamelog.__main__ import main as gamelog
    from tests.test_arena import SEALED
    monkeypatch.delenv("NUPPEPPOU_DASHBOARD_TOKEN", raising=False)
    lines = [json.loads(line) for line in gzip.open(SEALED, "rt").read().splitlines()]
    for folder, you in (("loser", None), ("winner", "snake-0-4c4c870f")):
        records = tmp_path / folder
        records.mkdir()
        for line in lines:
            if you and "board" in line:
                line["you"] = next(s for s in line["board"]["snakes"] if s["id"] == you)
        (records / "game-00001.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        assert gamelog(["import", str(records), "--db", str(tmp_path / "games.db")]) == 0
    log = GameLog(tmp_path / "games.db")
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    page = "/games/4c4c870f-dd87-49c8-87a1-dd1967ec5727?you="
    text = client.get(page + "snake-1-4c4c870f").get_data(as_text=True)
    ending = re.search(r'<ul id="ending">(.*?)</ul>', text, re.S).group(1)
    assert ("died on its move from turn 330: snake-collision, by search-py; trapped (none of "
            "its moves would have lived)") in ending
    assert ("cut off from the others for good from turn 323 (8 moves before its death): it "
            "could reach 5 squares, the others at most 76") in ending
    # an arena record holds no search's reasons: nothing to say of what the search saw
    assert "loss proven from" not in ending and "not proven the loss" not in ending
    winner = client.get(page + "snake-0-4c4c870f").get_data(as_text=True)
    assert '<svg id="board"' in winner and 'id="ending"' not in winner
    log.close()


def test_a_record_the_ending_cannot_read_still_gets_its_page(client, monkeypatch):
    """Whatever goes wrong reading how a game ended, the page is served without it."""
    import snake.observability.dashboard as dashboard

    def broken(replay, look_back=200):
        raise KeyError("board")
    monkeypatch.setattr(dashboard, "how_it_ended", broken)
    page = client.get("/games/game-21?you=s0")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert '<svg id="board"' in text and 'id="ending"' not in text


def test_games_the_service_took_with_its_defaults_get_their_pages(tmp_path, monkeypatch):
    """The service reads an absent or null ruleset as standard and null hazards as none,
    and logs the bodies as they came: the game's page, its record and the training reader
    take them as the service did."""
    from snake.observability.gamelog.reader import training_games
    monkeypatch.delenv("NUPPEPPOU_DASHBOARD_TOKEN", raising=False)
    log = GameLog(tmp_path / "games.db")
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    odd = {"no-ruleset": lambda b: b["game"].pop("ruleset"),
           "null-ruleset": lambda b: b["game"].update(ruleset=None),
           "null-hazards": lambda b: b["board"].update(hazards=None)}
    for name, change in odd.items():
        bodies, end = game_bodies(seed=40, snakes=2, game_id=name)
        for body in bodies + [end]:
            change(body)
        play_through(client, bodies, end)
    assert log.flush()
    for name in odd:
        page = client.get(f"/games/{name}?you=s0")
        assert page.status_code == 200 and '<svg id="board"' in page.get_data(as_text=True)
        record = client.get(f"/games/{name}?you=s0&format=jsonl").get_data(as_text=True)
        first = json.loads(record.splitlines()[0])
        assert first["id"] == name and first["ruleset"]["name"] == "standard"
    conn = connect_readonly(tmp_path / "games.db")
    assert sorted(g.game_id for g, _ in training_games(conn)) == sorted(odd)
    conn.close()
    log.close()


def test_a_record_too_large_to_draw_is_streamed_not_drawn(tmp_path, monkeypatch):
    """Anyone who reaches /move chooses what one game's log holds: past a limit the page
    draws no board and says why (the turns are still listed), and the record is sent a
    body at a time, whole."""
    import snake.observability.dashboard as dashboard
    monkeypatch.delenv("NUPPEPPOU_DASHBOARD_TOKEN", raising=False)
    log = GameLog(tmp_path / "games.db")
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    bodies, end = game_bodies(seed=41, snakes=2, game_id="large")
    play_through(client, bodies, end)
    assert log.flush()
    monkeypatch.setattr(dashboard, "MAX_RECORD_BYTES", 4096)
    page = client.get("/games/large?you=s0")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and '<svg id="board"' not in text
    assert 'id="no-board"' in text and "more than this page draws" in text
    assert text.count('<tr class="turn"') == len(bodies)
    record = client.get("/games/large?you=s0&format=jsonl")
    assert record.status_code == 200 and record.is_streamed
    lines = record.get_data(as_text=True).splitlines()
    assert len(lines) == 1 + len(bodies) + 1 + 1          # game, turns, /end, result
    assert json.loads(lines[-2]) == {**end, "turn": end["turn"] - 1}   # at the final turn
    log.close()


def test_a_loss_the_service_played_says_from_when_its_search_saw_it(tmp_path, monkeypatch):
    """The same lost game played through the service by a search stopped at 10,000 nodes
    (the other snake's moves as recorded; untimed, as a loaded machine would cut a timed one
    short): its answers' scores are proven losses from turn 324 on (the forced moves between
    are not searched), and the page says so."""
    import gzip

    from snake.search.strategy import SearchStrategy
    from tests.test_arena import SEALED
    monkeypatch.delenv("NUPPEPPOU_DASHBOARD_TOKEN", raising=False)
    # the record's moves are not this search's: each next turn would look like an answer
    # the engine missed, and the margin that widens would cut the node-limited search short
    monkeypatch.setenv("NUPPEPPOU_CHECK_MOVES", "off")
    lines = [json.loads(line) for line in gzip.open(SEALED, "rt").read().splitlines()]
    bodies = [line for line in lines if "board" in line]
    log = GameLog(tmp_path / "games.db")
    client = create_app(network=None, strategy=SearchStrategy(max_nodes=10_000, think_ms=math.inf),
                        game_log=log).test_client()
    assert client.post("/start", json=bodies[0]).status_code == 200
    for body in bodies[:-1]:
        assert client.post("/move", json=body).status_code == 200
    # /end as the engine sends it: the finished game one turn on
    end = {**bodies[-1], "turn": bodies[-1]["turn"] + 1}
    assert client.post("/end", json=end).status_code == 200
    assert log.flush()
    text = client.get("/games/4c4c870f-dd87-49c8-87a1-dd1967ec5727?you=snake-1-4c4c870f"
                      ).get_data(as_text=True)
    ending = re.search(r'<ul id="ending">(.*?)</ul>', text, re.S).group(1)
    assert "died on its move from turn 330: snake-collision, by search-py; trapped" in ending
    assert ("its search saw the loss proven from turn 324 to its last answer, on turn "
            "330") in ending
    log.close()


def test_a_loss_whose_log_stops_at_its_last_move_says_what_it_cannot_tell(tmp_path,
                                                                          monkeypatch):
    """The service logs no turn after its snake's last /move, only the final board of /end,
    turns later when the others played on: the page says how is not known (the moves of
    that turn cannot be read off the board) and still from when it was cut off."""
    import gzip

    from snake.observability.gamelog.__main__ import main as gamelog
    from tests.test_arena import SEALED
    monkeypatch.delenv("NUPPEPPOU_DASHBOARD_TOKEN", raising=False)
    lines = [json.loads(line) for line in gzip.open(SEALED, "rt").read().splitlines()]
    lines[-2]["turn"] += 5            # the final board, five turns after its last move
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "game-00001.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines))
    assert gamelog(["import", str(tmp_path / "runs"), "--db", str(tmp_path / "games.db")]) == 0
    log = GameLog(tmp_path / "games.db")
    client = create_app(network=None, strategy="floodfill", game_log=log).test_client()
    text = client.get("/games/4c4c870f-dd87-49c8-87a1-dd1967ec5727?you=snake-1-4c4c870f"
                      ).get_data(as_text=True)
    ending = re.search(r'<ul id="ending">(.*?)</ul>', text, re.S).group(1)
    assert ("died after its last recorded move, from turn 330; the record holds no turn after "
            "it but the last (336), so how is not known") in ending
    assert "cut off from the others for good from turn 323" in ending
    log.close()


def test_with_the_game_log_off_the_dashboard_says_so(monkeypatch):
    app = create_app(network=None, strategy="floodfill", game_log=None)
    page = app.test_client().get("/games")
    assert page.status_code == 404 and "game log is off" in page.get_data(as_text=True)


# ---------------------------------------------------------------------------------------
# Names, not ids; finished games first

#: The official engine's ids, and names: two opponents named alike.
UUIDS = {"s0": "1f1f2b41-d8cb-4cc9-853f-c7ec4e880bce", "s1": "908404b4-5b4e-4f6c-9a51-2b4c7f1e0a11",
         "s2": "3c0ffee0-0000-4000-8000-000000000001", "s3": "3c0ffee1-0000-4000-8000-000000000002"}
NAMES = {"s0": "nuppeppou", "s1": "copperhead", "s2": "hydra", "s3": "hydra"}
#: How the pages name them (snake.records.names): the two alike by the start of their ids.
SHOWN = {"nuppeppou", "copperhead", "hydra#3c0ffee0", "hydra#3c0ffee1"}


def named(bodies: list[dict], end: dict) -> tuple[list[dict], dict]:
    """The bodies of a game of snakes s0..s3 with :data:`UUIDS` and :data:`NAMES`."""
    for body in bodies + [end]:
        for s in body["board"]["snakes"] + [body["you"]]:
            if s["id"] in UUIDS:
                s["name"], s["id"] = NAMES[s["id"]], UUIDS[s["id"]]
    return bodies, end


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    """A game log with a four-snake game the search played to its end, its snakes named as
    the official engine would (:func:`named`); a one-position probe (a /move, then an /end
    of the same position: unfinished); and a game in play (no /end yet)."""
    from snake.search.strategy import SearchStrategy
    log = GameLog(tmp_path_factory.mktemp("names") / "games.db")
    app = create_app(network=None, strategy=SearchStrategy(think_ms=20, engine="compiled",
                                                           max_concurrent=None), game_log=log)
    client = app.test_client()
    play_through(client, *named(*game_bodies(seed=22, snakes=4, side=11, game_id="four")))
    probe = game_bodies(seed=23, game_id="probe")[0][0]
    assert client.post("/move", json=probe).status_code == 200
    assert client.post("/end", json=probe).status_code == 200
    in_play = game_bodies(seed=24, game_id="in-play")[0][:3]
    assert client.post("/start", json=in_play[0]).status_code == 200
    assert all(client.post("/move", json=body).status_code == 200 for body in in_play)
    assert log.flush()
    yield log
    log.close()


@pytest.fixture
def games_client(games, monkeypatch):
    monkeypatch.delenv("NUPPEPPOU_DASHBOARD_TOKEN", raising=False)
    return create_app(network=None, strategy="floodfill", game_log=games).test_client()


def _why(text: str) -> dict:
    return json.loads(re.search(r'<script id="why-data" type="application/json">(.*?)</script>',
                                text, re.S).group(1))


def test_a_game_page_names_the_snakes_by_their_names(games_client):
    """The four-snake game's page: the header, and for every searched turn the opponents
    searched and played cheaply and the expected line (what "why this move" shows), name
    each snake by its name, the two named alike by the start of their ids; no id is left in
    what the panel shows."""
    text = games_client.get("/games/four").get_data(as_text=True)
    assert "as nuppeppou · against copperhead, hydra#3c0ffee0, hydra#3c0ffee1" in text
    why = _why(text)
    searches = [w["reasons"]["search"] for w in why.values() if w["by"] == "search"]
    assert searches
    searched = {name for s in searches for name in s["opponents"] + s["cheap"]}
    in_lines = {name for s in searches for ply in s["pv"] for name in ply}
    assert searched == SHOWN - {"nuppeppou"} and in_lines == SHOWN
    assert not any(uuid in json.dumps(why) for uuid in UUIDS.values())
    # the replay's list of snakes names them alike
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>',
                                text, re.S).group(1))
    assert {s["name"] for s in data["snakes"]} == SHOWN


def test_the_list_shows_finished_games_unless_asked_for_the_others(games_client):
    """Probes and games not finished do not bury the games played: the list shows finished
    games, says how many others there are with links to them, and its result filter shows
    them (``not-finished``, ``all``, or one result)."""
    def listed(**query):
        page = games_client.get("/games", query_string=query)
        assert page.status_code == 200
        text = page.get_data(as_text=True)
        return {g for g in ("four", "probe", "in-play") if f'href="/games/{g}?you=' in text}

    text = games_client.get("/games").get_data(as_text=True)
    assert listed() == listed(result="finished") == {"four"}
    assert ("copperhead, hydra#3c0ffee0, hydra#3c0ffee1</td>" in text
            and "<td>nuppeppou</td>" in text)                       # names in the list too
    hidden = re.search(r'<p class="muted" id="hidden">(.*?)</p>', text).group(1)
    assert hidden.startswith("2 games not finished")
    assert 'href="/games?page=1&amp;result=not-finished"' in hidden
    assert 'href="/games?page=1&amp;result=all"' in hidden
    assert listed(result="not-finished") == {"probe", "in-play"}
    assert listed(result="all") == {"four", "probe", "in-play"}
    assert listed(result="unfinished") == {"probe"} and listed(result="playing") == {"in-play"}
    form = re.search(r'<form id="filter".*?</form>', text, re.S).group(0)
    assert '<option value="" selected>finished</option>' in form
    assert '<option value="not-finished">' in form and '<option value="all">' in form
    every = games_client.get("/games?result=all").get_data(as_text=True)
    assert '<option value="all" selected>all</option>' in every and 'id="hidden"' not in every
    assert games_client.get("/games?result=unfinished;1").status_code == 400


# ---------------------------------------------------------------------------------------
# In a real browser


def _chromium() -> str:
    found = (shutil.which("chromium") or shutil.which("chromium-browser")
             or shutil.which("google-chrome"))
    if found is None:
        # CI sets NUPPEPPOU_REQUIRE_BROWSER_TESTS=1 (after installing Chromium), so there a
        # missing browser fails; a developer's machine without one skips, saying how to run it.
        how = "install headless Chromium (Debian: apt-get install chromium) to run it"
        if os.environ.get("NUPPEPPOU_REQUIRE_BROWSER_TESTS") == "1":
            pytest.fail(f"NUPPEPPOU_REQUIRE_BROWSER_TESTS=1 and no Chromium on PATH: {how}")
        pytest.skip(f"the dashboard in a real browser: no Chromium on PATH; {how}")
    return found


def _browse(chromium: str, url: str, tmp: Path, screenshot: Path | None = None) -> str:
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--disable-extensions", "--window-size=1300,1500",
            f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=3000"]
    if screenshot is not None:
        out = subprocess.run(args + [f"--screenshot={screenshot}", url], capture_output=True,
                             timeout=120, text=True)
        assert screenshot.exists() and screenshot.stat().st_size > 10_000, out.stderr[-2000:]
    out = subprocess.run(args + ["--dump-dom", url], capture_output=True, timeout=120, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_the_pages_in_a_real_browser(client, played, tmp_path):
    chromium = _chromium()
    db, log = played
    app = create_app(network=None, strategy="floodfill", game_log=log)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    port = server.server_port
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    shots = Path(os.environ.get("NUPPEPPOU_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    try:
        overview = _browse(chromium, f"http://127.0.0.1:{port}/games", tmp_path,
                           shots / "dashboard-games.png")
        assert overview.count('<tr><td><a href="/games/') == 4
        assert overview.count('class="chart"') >= 3
        game = _browse(chromium, f"http://127.0.0.1:{port}/games/game-21?you=s0&turn=5", tmp_path,
                       shots / "dashboard-game.png")
        # drawn by the page's scripts: the board, the snakes' panel, the reasons of turn 5
        board = re.search(r'<svg id="board".*?</svg>', game, re.S).group(0)
        assert board.count("<rect") > 121          # 11x11 squares, then snakes
        assert 'class="snake' in game
        why = re.search(r'<div id="why">(.*?)</div>', game, re.S).group(1)
        assert "<dt>turn</dt><dd>5</dd>" in why and "<dt>answered by</dt>" in why
        assert 'class="turn shown" data-turn="5"' in game
    finally:
        server.shutdown()
        thread.join(10)


def test_the_list_filters_by_ruleset_result_and_opponent(client, played):
    db, _ = played
    conn = connect_readonly(db)
    results = dict(conn.execute("SELECT game_id, result FROM games"))

    def listed(**query):
        page = client.get("/games", query_string=query)
        assert page.status_code == 200
        return {g for g in results if f"/games/{g}?you=s0" in page.get_data(as_text=True)}

    for result in set(results.values()):
        assert listed(result=result) == {g for g, r in results.items() if r == result}
    assert listed(ruleset="standard") == set(results)
    assert listed(ruleset="royale") == set()
    assert listed(opponent="<script>alert('x')</script>") == {"hostile"}
    assert listed(opponent="s3") == {"game-22"}            # the only four-snake game
    for evil in ("x' OR '1'='1", "%", "\\", '"name": "s1"} OR 1'):
        assert listed(opponent=evil) == set()
        assert listed(ruleset=evil) == set()
    assert client.get("/games", query_string={"result": "x' OR 1"}).status_code == 400
    form = client.get("/games").get_data(as_text=True)
    assert '<form id="filter"' in form and 'name="opponent"' in form


def test_a_four_snake_game_against_named_http_snakes_in_a_real_browser(tmp_path, monkeypatch):
    """The service plays a four-snake game in the arena against three HTTP snakes named
    copperhead, hydra and viper. Its page, loaded in Chromium, names them in what "why this
    move" shows (the searched opponents and the expected line), where it once printed
    their ids; a screenshot is kept (``dashboard-names.png`` in NUPPEPPOU_SCREENSHOTS)."""
    from snake.arena.__main__ import main as arena
    from snake.observability.gamelog.reader import find_game, game_turns
    from snake.search.strategy import SearchStrategy
    from tests.test_arena_http import SnakeServer
    chromium = _chromium()
    monkeypatch.delenv("NUPPEPPOU_DASHBOARD_TOKEN", raising=False)
    log = GameLog(tmp_path / "games.db")
    app = create_app(network=None, strategy=SearchStrategy(think_ms=20, engine="compiled",
                                                           max_concurrent=None), game_log=log)
    servers = [make_server("127.0.0.1", 0, app, threaded=True)]
    servers += [SnakeServer("floodfill") for _ in range(3)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    ours = f"http://127.0.0.1:{servers[0].server_port}"
    others = dict(zip(("copperhead", "hydra", "viper"), (s.url for s in servers[1:])))
    try:
        assert arena([f"nuppeppou={ours}", *(f"{n}={url}" for n, url in others.items()),
                      "--seats", "nuppeppou,copperhead,hydra,viper", "-g", "1", "--seed", "5",
                      "--max-turns", "30", "--parallel", "1", "--quiet",
                      "-o", str(tmp_path / "runs")]) == 0
        assert log.flush()
        conn = connect_readonly(tmp_path / "games.db")
        (game_id,) = conn.execute("SELECT game_id FROM games").fetchone()
        game = find_game(conn, game_id)
        ids = [s["id"] for s in game.snakes]
        assert game.you == "nuppeppou" and sorted(game.opponents) == sorted(others)
        # a turn whose search searched opponents and expects their moves
        turn = next(t.turn for t in game_turns(conn, game) if t.answered_by == "search"
                    and len(t.reasons["search"]["opponents"]) >= 2
                    and len(t.reasons["search"]["pv"][0]) >= 3)
        conn.close()
        shots = Path(os.environ.get("NUPPEPPOU_SCREENSHOTS", tmp_path))
        shots.mkdir(parents=True, exist_ok=True)
        page = _browse(chromium, f"{ours}/games/{game_id}?turn={turn}", tmp_path,
                       shots / "dashboard-names.png")
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        log.close()
    why = re.search(r'<div id="why">(.*?)</div>', page, re.S).group(1)
    assert f"<dt>turn</dt><dd>{turn}</dd>" in why
    searched = re.search(r"<dt>searched</dt><dd>(.*?)</dd>", why).group(1)
    line = re.search(r"<dt>expected line</dt><dd>(.*?)</dd>", why).group(1)
    assert sum(name in searched for name in others) >= 2
    assert line.startswith("1. nuppeppou ") and sum(f" {n} " in line for n in others) >= 2
    assert not any(snake_id in why for snake_id in ids)
