"""``python -m snake.explain``: one decision explained."""

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from nnue.network import Network
from snake.board import state_to_request
from snake.diagram import from_ascii
from snake.explain import main

ROOT = Path(__file__).resolve().parent.parent

DRAWING = """
    . . . . .
    b b b b B
    . . A . *
    . . a . .
    . . a . .
"""


def drawn_request(tmp_path, drawing, **kw):
    """A /move request for A in ``drawing`` (:func:`snake.diagram.from_ascii`), as a file."""
    game = from_ascii(drawing, **kw)
    path = tmp_path / "request.json"
    path.write_text(json.dumps(state_to_request(game.state, "A")))
    return path


def request_file(tmp_path, **kw):
    return drawn_request(tmp_path, DRAWING, stacked={"B": 1}, health={"A": 50}, **kw)


def run(argv, stdin=""):
    out = io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin), out=out)
    return code, out.getvalue()


def test_flood_fill_explanation(tmp_path):
    code, text = run([str(request_file(tmp_path)), "--strategy", "seed", "--no-network"])
    assert code == 0
    assert "b b b b B" in text  # the board
    assert "up     removed: into a body" in text
    assert "down   removed: back onto own neck" in text
    assert "flood-fill sums:" in text and "left   62.0000" in text
    assert text.strip().endswith("move: left  (strategy seed, by flood fill)")


def test_stdin_and_nnue_scores(tmp_path):
    weights = tmp_path / "net.npz"
    Network.random(1, hidden=(8, 8)).save(weights)
    # An 11x11 board so the network has features for it.
    game = from_ascii("\n".join([". " * 11] * 5 + [". . . A a a . . . . ."] + [". " * 11] * 5))
    body = json.dumps(state_to_request(game.state, "A"))
    code, text = run(["-", "--strategy", "seed", "--weights", str(weights)], stdin=body)
    assert code == 0
    assert "NNUE scores (win probability):" in text and "by nnue" in text
    assert "right  removed: back onto own neck" in text


def test_bad_input(tmp_path, capsys):
    assert run([str(tmp_path / "missing.json")])[0] == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert run([str(bad), "--no-network"])[0] == 2
    bad.write_text(json.dumps({"game": {"id": "x"}}))
    assert run([str(bad), "--no-network"])[0] == 2
    assert "invalid request: turn: missing" in capsys.readouterr().err


def test_as_a_command(tmp_path):
    """With no ``--strategy``, the service's default (search) explains the move."""
    path = request_file(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "NUPPEPPOU_STRATEGY"}
    result = subprocess.run([sys.executable, "-m", "snake.explain", str(path), "--no-network"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith(("move: left", "move: right")) and "strategy search" in last


def test_search_explanation_shows_depth_nodes_and_line(tmp_path):
    code, text = run([str(request_file(tmp_path)), "--strategy", "search", "--no-network"])
    assert code == 0
    search_line = next(line for line in text.splitlines() if line.startswith("search: "))
    assert "alphabeta" in search_line and "depth" in search_line and "nodes" in search_line
    assert "  pv 1: A " in text  # the principal variation names our snake's move first
    # each completed iteration, with its time (from depth 2 when the main thread of a duel
    # on two threads answers: its helper searches the odd depths)
    assert re.search(r"  iterations: depth [12] ", text)
    # The dead end up and the neck down are still reported as the filter removed them.
    assert "down   removed: back onto own neck" in text
    last = text.strip().splitlines()[-1]
    assert last.startswith(("move: left", "move: right")) and "by search" in last


def test_the_line_shows_a_snake_only_while_it_lives_and_bounds_as_bounds(tmp_path):
    """B starves on the first move (health 1, no food in reach): the expected line names it
    on its first turn only. Root scores: the best move's is its value, the others' are
    bounds alpha-beta stopped at, and say so."""
    request = from_ascii("""
        . . . . . . .
        . A a a . . .
        . . . . . . .
        . . . . . . .
        C c c . . . .
        . . . . B b b
        . . . . . . .
    """, health={"B": 1}, game_id="starving")
    path = tmp_path / "starving.json"
    path.write_text(json.dumps(state_to_request(request.state, "A")))
    code, text = run([str(path), "--strategy", "search[max_nodes=3000,think_ms=inf]",
                      "--no-network"])
    assert code == 0
    pv = [line for line in text.splitlines() if line.startswith("  pv ")]
    assert len(pv) > 1 and " B " in pv[0] + " " and all(" B " not in line + " " for line in pv[1:])
    scores = next(line for line in text.splitlines() if line.startswith("  root scores"))
    assert scores.startswith("  root scores (the best exact, the others at most): ")
    figures = scores.split(": ", 1)[1].split(", ")
    assert sum("<=" not in f for f in figures) == 1 and len(figures) > 1   # one exact


def test_a_search_in_threads_says_how_many_and_whose_answer(tmp_path, monkeypatch):
    monkeypatch.setenv("NUPPEPPOU_SEARCH_CORES", "2")
    code, text = run([str(request_file(tmp_path)), "--strategy", "search[threads=2]",
                      "--no-network"])
    search_line = next(line for line in text.splitlines() if line.startswith("search: "))
    assert code == 0 and " nodes in 2 threads (the answer from " in search_line
    code, text = run([str(request_file(tmp_path)), "--strategy", "search[threads=1]",
                      "--no-network"])
    assert "threads" not in next(line for line in text.splitlines() if line.startswith("search: "))


def test_it_says_why_food_was_or_was_not_taken(tmp_path):
    """The one food is nearer to B, which is longer: not ours by board control, and the
    move (left, away from B) does not go nearer to it."""
    code, text = run([str(request_file(tmp_path)), "--strategy", "seed", "--no-network"])
    assert code == 0
    food = text[text.index("food:"):]
    assert "(4, 2): 2 squares away as the crow flies; B is nearer (1), as long or longer" in food
    assert "none of it is yours by board control" in food
    assert "the move left goes no nearer to the nearest food (4, 2)" in food


def test_it_says_which_opponents_were_searched_and_how(tmp_path):
    """Four snakes: with best replies the searched opponents answer one at a time; the
    explanation names them and says so, and the far one played cheaply."""
    path = drawn_request(tmp_path, """
    . . . . . . .
    . C c c . . .
    . . . . . . .
    . . A a a . .
    . . . . . . .
    . B b b . . .
    . . . . . D d
    """)
    code, text = run([str(path), "--strategy", "search[replies=best,reach=3,max_nodes=2000]",
                      "--no-network"])
    assert code == 0
    assert "  opponents searched (best replies: one at a time): C, B; played cheaply: D" in text \
        or "  opponents searched (best replies: one at a time): B, C; played cheaply: D" in text
    code, text = run([str(path), "--strategy", "search-joint[reach=3,max_nodes=2000]",
                      "--no-network"])
    assert "  opponents searched: " in text and "best replies" not in text
    # the default searches the three nearest, however far, by best replies
    code, text = run([str(path), "--strategy", "search[max_nodes=2000]", "--no-network"])
    prefix = "  opponents searched (best replies: one at a time): "
    searched = text[text.index(prefix) + len(prefix):].split("\n")[0]
    assert sorted(searched.split("; ")[0].split(", ")) == ["B", "C", "D"]
    assert searched.endswith("played cheaply: none")


def test_it_says_by_which_weights_food_counts(tmp_path):
    """Food A owns is valued by the search's weights: with three snakes or more a
    ``multi_style`` applies (the grower counts food distance at any health), in a duel or
    without one the default's (only below health 50)."""
    path = drawn_request(tmp_path, """
    . . . . . . .
    . C c c . . .
    . . . . . . .
    * . A a a . .
    . . . . . . .
    . B b b . . .
    . . . . . D d
    """, health={"A": 80})
    code, text = run([str(path), "--strategy", "search[multi_style=grower,max_nodes=2000]",
                      "--no-network"])
    assert code == 0
    assert "with voronoi (grower) evaluation" in text
    assert ("the nearest food you control is 2 moves away, within reach of its health, hazards "
            "aside; the value (grower weights) counts food distance at any health") in text
    code, text = run([str(path), "--strategy", "search[multi_style=none,max_nodes=2000]",
                      "--no-network"])
    assert "with voronoi evaluation" in text
    assert "the value (default weights) counts food distance only below health 50 " \
        "(health 80)" in text


def test_it_says_when_a_hungry_snake_owning_no_food_heads_for_food(tmp_path):
    """A (3 long) owns no food: the one food is nearer to C. With the hungry weights the
    value counts the distance to it once A's health comes within the margin (25) of its 11
    moves, and the explanation says whether it does yet."""
    drawing = """
    . . . . . . *
    . . . . . . .
    b b b b . . .
    . . . b . . .
    a a . b . C c
    A . . b . . c
    . . . b b B .
    """
    for health, says in ((30, "now"), (60, "not yet (health 60, 11 moves from food)")):
        path = drawn_request(tmp_path, drawing, health={"A": health})
        code, text = run([str(path), "--strategy", "search[multi_style=hungry,max_nodes=2000]",
                          "--no-network"])
        assert code == 0
        assert "none of it is yours by board control" in text
        assert ("the value (hungry weights) counts, owning no food, the distance to the nearest "
                f"food once health is within 25 moves of it: {says}") in text


def test_labels_stay_unique_past_26_snakes(tmp_path):
    # 30 snakes of three stacked segments on a 30x3 board, one to a column.
    snakes = [{"id": f"s{i}", "name": f"n{i}", "health": 90, "body": [{"x": i, "y": 1}] * 3,
               "head": {"x": i, "y": 1}, "length": 3} for i in range(30)]
    body = {"game": {"id": "g", "ruleset": {"name": "standard", "version": "v"}, "timeout": 500},
            "turn": 0, "board": {"width": 30, "height": 3, "food": [], "hazards": [],
                                 "snakes": snakes},
            "you": snakes[27]}
    code, text = run(["-", "--strategy", "seed", "--no-network"], stdin=json.dumps(body))
    assert code == 0
    labels = [line.split(":")[0].strip() for line in text.splitlines()
              if line.startswith("  ") and ": n" in line and "  length " in line]
    assert len(labels) == 30 and len(set(labels)) == 30
    assert labels[:2] == ["A", "B"] and labels[26:28] == ["A2", "B2"]
    assert "  B2: n27  length" in text and "<- you" in text.split("  B2: ")[1].splitlines()[0]
    assert "A2 is drawn A" in text


def test_it_says_when_the_duel_head_is_not_used_and_why(tmp_path):
    """The default values duels by its head only in games begun as duels: a request alone
    does not say how its game began, ``--snakes-at-start`` does."""
    path = drawn_request(tmp_path, """
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . A a a . . . . . .
    . . . * . . . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . . . . B b b . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    """)
    code, text = run([str(path), "--strategy", "search[max_nodes=2000]", "--no-network"])
    assert code == 0 and "with voronoi + value head evaluation" in text
    assert "only below health 50 (health 100), and a learned value head corrects it" in text
    code, text = run([str(path), "--strategy", "search[max_nodes=2000]", "--no-network",
                      "--snakes-at-start", "4"])
    assert code == 0 and "with voronoi evaluation" in text
    assert "a learned value head corrects it" not in text
    assert "value head not used: meant for games begun with 2 snakes, this one began with 4" \
        in text
    code, _ = run([str(path), "--snakes-at-start", "1", "--no-network"])
    assert code == 2


def test_it_names_snakes_by_their_names_and_tells_apart_two_that_share_one(tmp_path):
    """Four snakes with the official engine's UUIDs, two of them named alike: the legend,
    the searched opponents and the expected line name each snake by its name, the two
    alike by the name and the start of the id; no whole id is printed."""
    ids = {"A": "1f1f2b41-d8cb-4cc9-853f-c7ec4e880bce", "B": "908404b4-5b4e-4f6c-9a51-2b4c7f1e0a11",
           "C": "3c0ffee0-0000-4000-8000-000000000001", "D": "3c0ffee1-0000-4000-8000-000000000002"}
    names = {"A": "nuppeppou", "B": "copperhead", "C": "hydra", "D": "hydra"}
    game = from_ascii("""
    . . . . . . .
    . C c c . . .
    . . . . . . .
    . . A a a . .
    . . . . . . .
    . B b b . . .
    . . . . . D d
    """)
    body = state_to_request(game.state, "A")
    for snake in body["board"]["snakes"] + [body["you"]]:
        snake["name"], snake["id"] = names[snake["id"]], ids[snake["id"]]
    code, text = run(["-", "--strategy", "search[max_nodes=2000]", "--no-network"],
                     stdin=json.dumps(body))
    assert code == 0
    assert not any(uuid in text for uuid in ids.values())
    assert "  A: nuppeppou  length 3" in text and "  B: copperhead  length 3" in text
    assert "  C: hydra#3c0ffee0  length 3" in text and "  D: hydra#3c0ffee1  length 2" in text
    prefix = "  opponents searched (best replies: one at a time): "
    searched = text[text.index(prefix) + len(prefix):].split(";")[0]
    assert sorted(searched.split(", ")) == ["copperhead", "hydra#3c0ffee0", "hydra#3c0ffee1"]
    pv = next(line for line in text.splitlines() if line.startswith("  pv 1: "))
    assert pv.startswith("  pv 1: nuppeppou ") and "copperhead " in pv and "hydra#3c0ffee" in pv
