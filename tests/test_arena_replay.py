"""Game records (the CLI's JSONL format) and the HTML renderer."""

import json
import random

import pytest

from snake.diagram import from_ascii
from snake.records.render import frames_of, render_html
from snake.records.render import main as render_main
from snake.records.replay import (
    Replay,
    ReplayError,
    SnakeLook,
    dumps_replay,
    game_object,
    read_replay,
    request_body,
    result_line,
    write_replay,
)
from snake.rules import play_turn


def two_turn_replay():
    state = from_ascii("""
        . . . . .
        . A a . *
        . . . . .
        . B b b .
        . . . . .
    """, turn=0).state
    looks = {"A": SnakeLook("alpha", color="#ff0000"), "B": SnakeLook("beta", latency="12")}
    replay = Replay(game_object(state))
    replay.turns.append(request_body(state, "A", looks))
    state = play_turn(state, {"A": "up", "B": "down"}, random.Random(1))
    replay.turns.append(request_body(state, "A", looks))
    replay.result = result_line("", "", True)
    return replay


def test_request_body_is_dressed_like_the_cli():
    replay = two_turn_replay()
    first = replay.turns[0]
    assert first["game"]["ruleset"]["settings"]["hazardMap"] == ""
    snakes = {s["id"]: s for s in first["board"]["snakes"]}
    assert snakes["A"]["name"] == "alpha" and snakes["B"]["latency"] == "12"
    assert snakes["A"]["customizations"] == {"color": "#ff0000", "head": "default",
                                            "tail": "default"}
    assert first["you"]["id"] == "A" and first["you"]["name"] == "alpha"


def test_round_trip(tmp_path):
    replay = two_turn_replay()
    path = tmp_path / "game.jsonl"
    write_replay(path, replay)
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[-1]) == {
        "winnerId": "", "winnerName": "", "isDraw": True}
    back = read_replay(path)
    assert back == replay
    assert dumps_replay(back) == path.read_text()


@pytest.mark.parametrize("text, message", [
    ("", "needs a game line"),
    ('{"id": "g", "ruleset": {}}\nnot json\n{"winnerId": "", "winnerName": "", "isDraw": false}',
     ":2: not JSON"),
    ('{"turn": 0}\n{"winnerId": "", "winnerName": "", "isDraw": false}', "not a game object"),
    ('{"id": "g", "ruleset": {}}\n{"game": {}}', "not a result"),
    ('{"id": "g", "ruleset": {}}\n{"turn": 1}\n{"winnerId": "", "winnerName": "", "isDraw": false}',
     ":2: not a request body"),
])
def test_bad_records_are_refused_naming_the_line(tmp_path, text, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(ReplayError, match=message):
        read_replay(path)


def test_renderer_makes_a_self_contained_page(tmp_path):
    replay = two_turn_replay()
    replay.turns[0]["board"]["snakes"][0]["name"] = "</script><b>x"
    page = render_html(replay)
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        '"http://www.w3.org/2000/svg"', "")                      # nothing fetched
    assert "</script><b>x" not in page                           # names cannot break out
    data = frames_of(replay)
    assert [f["turn"] for f in data["frames"]] == [0, 1]
    assert {s["name"] for s in data["snakes"]} == {"</script><b>x", "beta"}
    assert data["game"]["width"] == 5 and data["frames"][0]["food"] == [[4, 3]]


def test_render_command(tmp_path, capsys):
    path = tmp_path / "game.jsonl"
    write_replay(path, two_turn_replay())
    assert render_main([str(path), "-o", str(tmp_path / "out.html")]) == 0
    assert (tmp_path / "out.html").read_text().count("<svg") == 1
    assert render_main([str(path)]) == 0 and (tmp_path / "game.html").exists()
    (tmp_path / "bad.jsonl").write_text("nope\n")
    assert render_main([str(tmp_path / "bad.jsonl")]) == 2
    assert "render: error" in capsys.readouterr().err


def test_the_viewer_names_snakes_and_tells_apart_two_that_share_a_name():
    """The viewer's list of snakes names each by its name; two that share one, by the name
    and the start of the id (snake.records.names), on every view alike."""
    state = from_ascii("""
        . . . . . . .
        . A a . . . .
        . . . . . . .
        . B b b . . .
        . . . . . . .
        . C c c . . .
        . . . . . . .
    """, turn=0).state
    looks = {"A": SnakeLook("alpha"), "B": SnakeLook("twin"), "C": SnakeLook("twin")}
    replay = Replay(game_object(state))
    replay.turns.append(request_body(state, "A", looks))
    replay.result = result_line("C", "twin", False)
    assert replay.names() == {"A": "alpha", "B": "twin#B", "C": "twin#C"}
    assert [s["name"] for s in frames_of(replay)["snakes"]] == ["alpha", "twin#B", "twin#C"]
