"""Games played from positions: collecting them from records, playing them with the seats
rotating, and the errors of a bad positions file."""

import json

import pytest

from snake.arena.__main__ import main as arena
from snake.arena.positions import load_positions
from snake.arena.positions import main as positions
from snake.board import state_to_request
from snake.diagram import from_ascii
from snake.records.replay import read_replay
from tests.test_arena import write_record

#: C, in the corner, dies on the first move whatever it does; A and B play on.
THREE = """
    C c c . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . *
    A a a . . . .
    . . . . . . .
    . . . . B b b
"""

#: A duel on 7x7 at turn 150: A is long, B short; food in the open.
DUEL = """
    . . . . . . .
    . A a a a a .
    . . . . . a .
    . . . * . a .
    . . . . . a .
    . . . . . . .
    . . . B b b .
"""


def write_positions(path, *drawings, turn=150, **kwargs):
    lines = []
    for drawing in drawings:
        request = from_ascii(drawing, turn=turn, **kwargs)
        lines.append(json.dumps(state_to_request(request.state, request.you.id)))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_positions_are_collected_where_the_count_of_snakes_is_reached(capsys, tmp_path):
    """From a record in which C dies on the first move: the first turn with two snakes
    alive (turn 11: the drawing is turn 10), and with --later 2 the body two turns on. A
    positions file written among the records is not read as one of them."""
    write_record(tmp_path / "game-00001.jsonl", THREE,
                 [{"A": "up", "B": "up", "C": "up"}, {"A": "right", "B": "up"},
                  {"A": "right", "B": "up"}, {"A": "up", "B": "up"}])
    out = tmp_path / "duels.jsonl"
    assert positions([str(tmp_path), "-o", str(out), "--later", "2"]) == 0
    assert "2 from 1 records" in capsys.readouterr().out
    bodies = [json.loads(line) for line in out.read_text().splitlines()]
    assert [b["turn"] for b in bodies] == [11, 13]
    assert [[s["id"] for s in b["board"]["snakes"]] for b in bodies] == [["A", "B"]] * 2
    assert positions([str(tmp_path), "-o", str(out), "--later", "2"]) == 0   # again, over it
    assert "2 from 1 records" in capsys.readouterr().out
    # gzipped elsewhere, the same positions; three snakes: the record's first body; four: none
    other = tmp_path / "other"
    other.mkdir()
    packed = other / "duels.jsonl.gz"
    assert positions([str(tmp_path / "game-00001.jsonl"), "-o", str(packed), "--later", "2"]) == 0
    assert load_positions(packed) == load_positions(out)
    assert positions([str(tmp_path / "game-00001.jsonl"), "-o", str(other / "three.jsonl"),
                      "--snakes", "3"]) == 0
    assert [json.loads(line)["turn"]
            for line in (other / "three.jsonl").read_text().splitlines()] == [10]
    assert positions([str(tmp_path / "game-00001.jsonl"), "-o", str(other / "four.jsonl"),
                      "--snakes", "4"]) == 0
    assert (other / "four.jsonl").read_text() == ""
    capsys.readouterr()


def test_a_position_is_played_from_its_board_with_the_seats_swapped(capsys, tmp_path):
    """Two games from one duel: each starts at the position's turn with its snakes (ids,
    bodies, health, food) as given, and the players swap sides between them; the run's
    food settings, not the position's, spawn food."""
    suite = write_positions(tmp_path / "suite.jsonl", DUEL, health={"A": 40, "B": 90})
    out = tmp_path / "run"
    code = arena(["floodfill", "random", "--positions", str(suite), "-g", "2", "--size", "7",
                  "--parallel", "1", "-o", str(out), "--food-spawn-chance", "0", "--quiet"])
    assert code == 0
    text = capsys.readouterr().out
    assert "from the 1 positions of" in text
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert sorted(tuple(g["seats"]) for g in games) == [("floodfill", "random"),
                                                         ("random", "floodfill")]
    drawn = from_ascii(DUEL, turn=150, health={"A": 40, "B": 90}).state
    sides = []
    for record in sorted(out.glob("game-*.jsonl")):
        replay = read_replay(record)
        first = replay.turns[0]
        sides.append({s["id"]: s["name"] for s in first["board"]["snakes"]})
        assert first["turn"] == 150
        assert [(s["id"], s["health"], s["body"]) for s in first["board"]["snakes"]] == [
            (s.id, s.health, [{"x": p[0], "y": p[1]} for p in s.body]) for s in drawn.board.snakes]
        assert first["board"]["food"] == [{"x": 3, "y": 3}]
        assert replay.game["ruleset"]["settings"]["foodSpawnChance"] == 0
        assert replay.turns[-1]["turn"] > 150
    # each player played each side: A (and B) by floodfill in one game, by random in the other
    assert sides == [{"A": "floodfill", "B": "random"}, {"A": "random", "B": "floodfill"}]


def test_every_opponent_meets_every_position(capsys, tmp_path):
    """With three players in 1v1, the first player meets each of the two others on each
    position (the positions do not lock to the cycle of opponents)."""
    suite = write_positions(tmp_path / "suite.jsonl", DUEL, DUEL.replace("*", "."))
    out = tmp_path / "run"
    assert arena(["floodfill", "random", "floodfill", "--positions", str(suite), "-g", "8",
                  "--size", "7", "--parallel", "1", "-o", str(out), "--quiet"]) == 0
    capsys.readouterr()
    met = set()
    for record in sorted(out.glob("game-*.jsonl")):
        first = read_replay(record).turns[0]
        names = sorted(s["name"] for s in first["board"]["snakes"])
        met.add((tuple(names), len(first["board"]["food"])))
    assert met == {(("floodfill", "random"), 1), (("floodfill", "random"), 0),
                   (("floodfill", "floodfill#2"), 1), (("floodfill", "floodfill#2"), 0)}


def test_a_snake_without_an_answer_keeps_going_the_way_it_went(capsys, tmp_path):
    """From a position, the move repeated for a snake that gives none is its last one (as
    the head and neck show: A came from the right, so it goes on left), not ``up``."""
    from snake.arena.match import play_game
    from snake.arena.players import parse_players
    from snake.arena.schedule import plan_games
    suite = write_positions(tmp_path / "suite.jsonl", DUEL)
    from snake.arena.positions import load_positions as load
    spec = plan_games(n_players=2, games=1, seed=0, ruleset="standard", map_name="standard",
                      width=7, height=7, timeout=1, n_snakes=2, max_turns=152,
                      builtin_timeout=True, positions=load(suite))[0]
    slow = parse_players(["search[max_nodes=100000,think_ms=600000]", "floodfill"])
    result = play_game(spec, slow, replay_dir=tmp_path)
    replay = read_replay(result.replay_path)
    assert result.timing[0].timeouts >= 1
    heads = [next(s["head"] for s in t["board"]["snakes"] if s["id"] == "A")
             for t in replay.turns[:2]]
    assert heads == [{"x": 1, "y": 5}, {"x": 0, "y": 5}]


def test_a_block_of_games_plays_each_position_in_turn(capsys, tmp_path):
    """Four games from two positions: games 1-2 from the first, 3-4 from the second."""
    other = DUEL.replace("*", ".")
    suite = write_positions(tmp_path / "suite.jsonl", DUEL, other)
    out = tmp_path / "run"
    assert arena(["floodfill", "floodfill", "--positions", str(suite), "-g", "4", "--size", "7",
                  "--parallel", "1", "-o", str(out), "--quiet"]) == 0
    capsys.readouterr()
    food = [read_replay(out / f"game-{i:05d}.jsonl").turns[0]["board"]["food"]
            for i in (1, 2, 3, 4)]
    assert food == [[{"x": 3, "y": 3}], [{"x": 3, "y": 3}], [], []]


@pytest.mark.parametrize("content, extra, message", [
    ("{not json\n", [], "suite.jsonl:1: not JSON"),
    ('{"game": {"id": "g"}, "turn": 3}\n', [], "suite.jsonl:1: board"),
    ("", [], "no positions"),
    (b"not gzip", [], "suite.jsonl.gz: cannot be read (Not a gzipped file"),
    ("corrupt", [], "suite.jsonl.gz: cannot be read ("),
    (None, ["--size", "7", "--max-turns", "150"], "a position at turn 150 is past the turn "
                                                  "games stop at (150: --max-turns)"),
    (None, ["--size", "7", "--map", "empty"], "on the map standard; this run plays empty (--map)"),
    (None, ["--size", "7", "-r", "squad"], "not played in squad mode"),
    (None, ["--size", "11"], "played on 11x11 (--size) but are 7x7"),
    (None, ["--size", "7", "--snakes", "4"], "--snakes 4: the positions have 2 snakes alive"),
    (None, ["--size", "7", "-r", "constrictor"],
     "include standard games; this run plays constrictor"),
])
def test_a_bad_positions_file_gets_a_clear_error(capsys, tmp_path, content, extra, message):
    packed = isinstance(content, bytes) or content == "corrupt"
    suite = tmp_path / ("suite.jsonl.gz" if packed else "suite.jsonl")
    if content is None:
        write_positions(suite, DUEL)
    elif content == "corrupt":
        # a gzipped suite damaged in the middle of its stream (a bad distance code)
        import gzip
        write_positions(tmp_path / "plain.jsonl", DUEL, DUEL.replace("*", "."))
        data = bytearray(gzip.compress((tmp_path / "plain.jsonl").read_bytes()))
        for i in range(20, len(data) - 8):
            data[i] ^= 0xFF
        suite.write_bytes(bytes(data))
    elif isinstance(content, bytes):
        suite.write_bytes(content)
    else:
        suite.write_text(content)
    code = arena(["floodfill", "random", "--positions", str(suite), "-g", "2", "--parallel", "1",
                  "--quiet", *extra])
    assert code == 2
    err = capsys.readouterr().err
    assert "arena: error:" in err and message in err


def test_positions_from_positions_of_different_sizes_are_refused(capsys, tmp_path):
    """A file mixing duels and three-snake positions cannot be seated one way."""
    suite = tmp_path / "suite.jsonl"
    write_positions(suite, DUEL)
    three = write_positions(tmp_path / "three.jsonl", THREE)
    suite.write_text(suite.read_text() + three.read_text())
    assert arena(["floodfill", "random", "--positions", str(suite), "--size", "7", "-g", "2",
                  "--quiet"]) == 2
    assert "different numbers of snakes alive (2, 3)" in capsys.readouterr().err


def test_royale_on_a_map_that_adds_hazards_is_refused_from_positions_too(capsys, tmp_path):
    """Games from positions skip the set-up; the arena refuses the pair all the same."""
    suite = write_positions(tmp_path / "suite.jsonl", DUEL)
    assert arena(["floodfill", "random", "--positions", str(suite), "--size", "7", "-g", "2",
                  "-r", "royale", "-m", "hz_spiral", "--quiet"]) == 2
    assert "the royale ruleset on map 'hz_spiral' is not supported" in capsys.readouterr().err


def test_the_suite_of_last_duels_is_playable(capsys, tmp_path):
    """The committed suite (docs/evidence) loads: 57 duels on 11x11 standard, each of two
    living snakes; its first position plays out between two quick players."""
    from pathlib import Path
    suite = Path(__file__).resolve().parent.parent / "docs/evidence/last-duels-500.jsonl.gz"
    loaded = load_positions(suite)
    assert len(loaded) == 57
    assert {(p["board"]["width"], p["board"]["height"], len(p["board"]["snakes"]),
             p["game"]["ruleset"]["name"]) for p in loaded} == {(11, 11, 2, "standard")}
    assert arena(["floodfill", "random", "--positions", str(suite), "-g", "2", "--parallel", "1",
                  "--quiet"]) == 0
    assert "from the 57 positions of" in capsys.readouterr().out
