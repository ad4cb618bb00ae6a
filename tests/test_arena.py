"""The arena with built-in players: games, seating, reproducibility, the report, errors."""

import json
import re
from pathlib import Path

import pytest

from snake.arena.__main__ import main
from snake.arena.schedule import base_seats, plan_games
from snake.board import parse_request
from snake.records.replay import read_replay
from tests.games import AT_THE_TOP, THREE

LAST_LINE = re.compile(r"^arena: (\d+) wins, (\d+) draws, (\d+) losses for (\S+)$")


def run(capsys, *args):
    code = main([*args, "--quiet"])
    out = capsys.readouterr()
    return code, out.out, out.err


def table_row(out, label):
    for line in out.splitlines():
        cells = line.split()
        if cells and cells[0] == label and cells[1].isdigit():
            return [int(c) for c in cells[1:5]]   # games, wins, draws, losses
    raise AssertionError(f"no row for {label} in\n{out}")


def write_record(path, board, moves, winner="B", draw=False, health=None, game_id=None,
                 **drawn):
    """A game record of ``board`` (ASCII, snake A is ``you``, named "mine", the others
    "theirs"; ``health`` by snake letter, and ``drawn`` such as ``hazards`` or ``settings``,
    as :func:`snake.diagram.from_ascii` takes them) and the turns played from it with
    ``moves`` (snake: move; a list of them for several turns); ``game_id`` instead of the
    diagram's; returns the last state."""
    import random as random_module

    from snake.diagram import from_ascii
    from snake.records.replay import (
        Replay,
        SnakeLook,
        game_object,
        request_body,
        result_line,
        write_replay,
    )
    from snake.rules import play_turn
    state = (from_ascii(board, **drawn) if health is None
             else from_ascii(board, health=health, **drawn)).state
    looks = {s.id: SnakeLook("mine" if s.id == "A" else "theirs") for s in state.board.snakes}
    replay = Replay(game_object(state))
    if game_id is not None:
        replay.game["id"] = game_id
    replay.turns.append(request_body(state, "A", looks))
    for turn in moves if isinstance(moves, list) else [moves]:
        state = play_turn(state, turn, random_module.Random(1))
        replay.turns.append(request_body(state, "A", looks))
    replay.result = result_line(winner, "mine" if winner == "A" else "theirs", draw)
    write_replay(path, replay)
    return state


def test_floodfill_against_random_1v1(capsys, tmp_path):
    code, out, _ = run(capsys, "floodfill", "random", "-g", "6", "--size", "7",
                       "--parallel", "1", "--seed", "3", "-o", str(tmp_path))
    assert code == 0
    w, d, losses, who = LAST_LINE.match(out.splitlines()[-1]).groups()
    assert who == "floodfill" and int(w) + int(d) + int(losses) == 6
    games, *wdl = table_row(out, "floodfill")
    assert games == 6 and wdl == [int(w), int(d), int(losses)]
    # two players, one snake each: the second player's row mirrors the first's
    assert table_row(out, "random") == [6, int(losses), int(d), int(w)]
    assert "95% CI" in out and "Elo" in out and "p99 ms" in out
    assert len(list(tmp_path.glob("game-*.jsonl"))) == 6
    summary = json.loads((tmp_path / "results.json").read_text())
    assert summary["games"] == 6 and summary["players"][0]["wins"] == int(w)


def test_four_snakes_first_player_against_three(capsys, tmp_path):
    code, out, _ = run(capsys, "floodfill", "random", "-g", "4", "-n", "4", "--size", "11",
                       "--parallel", "1", "-o", str(tmp_path))
    assert code == 0
    assert table_row(out, "floodfill")[0] == 4
    for path in sorted(tmp_path.glob("game-*.jsonl")):
        replay = read_replay(path)
        names = sorted(s["name"] for s in replay.turns[0]["board"]["snakes"])
        assert names == ["floodfill", "random", "random", "random"]


def test_squad_mode_seats_squads_of_two(capsys, tmp_path):
    code, out, _ = run(capsys, "floodfill", "random", "-r", "squad", "-g", "2", "--size", "11",
                       "--parallel", "1", "-o", str(tmp_path))
    assert code == 0
    replay = read_replay(tmp_path / "game-00001.jsonl")
    assert replay.game["ruleset"]["settings"]["squad"]["allowBodyCollisions"] is True
    squads = {}
    for s in replay.turns[0]["board"]["snakes"]:
        squads.setdefault(s["squad"], set()).add(s["name"])
    assert sorted(map(sorted, squads.values())) == [["floodfill"], ["random"]]


def test_solo(capsys, tmp_path):
    code, out, _ = run(capsys, "floodfill", "-r", "solo", "-g", "2", "--size", "7",
                       "--parallel", "1", "-o", str(tmp_path))
    assert code == 0
    replay = read_replay(tmp_path / "game-00001.jsonl")
    assert len(replay.turns[0]["board"]["snakes"]) == 1
    assert replay.result["isDraw"] is False
    assert table_row(out, "floodfill")[0] == 2


def test_replay_is_the_cli_output_format(capsys, tmp_path):
    run(capsys, "floodfill", "random", "-g", "1", "--size", "7", "--parallel", "1",
        "-o", str(tmp_path))
    lines = (tmp_path / "game-00001.jsonl").read_text().splitlines()
    game, *turns, result = (json.loads(line) for line in lines)
    assert set(game) == {"id", "ruleset", "map", "timeout", "source"}
    assert set(game["ruleset"]["settings"]) == {
        "foodSpawnChance", "minimumFood", "hazardDamagePerTurn", "hazardMap",
        "hazardMapAuthor", "royale", "squad"}
    assert set(result) == {"winnerId", "winnerName", "isDraw"}
    assert [t["turn"] for t in turns] == list(range(len(turns)))
    you_ids = {t["you"]["id"] for t in turns}
    assert len(you_ids) == 1                          # always the first player's snake
    for t in turns:
        assert set(t) == {"game", "turn", "board", "you"} and t["game"] == game
        parse_request(t)                              # every line is a valid request body
        for s in t["board"]["snakes"]:
            assert set(s) == {"id", "name", "latency", "health", "body", "head", "length",
                              "shout", "squad", "customizations"}
    living = turns[-1]["board"]["snakes"]
    if len(living) == 1:
        assert result == {"winnerId": living[0]["id"], "winnerName": living[0]["name"],
                          "isDraw": False}
    else:
        assert not living and result["isDraw"] is True and result["winnerId"] == ""


def test_reproducible_from_the_seed(capsys, tmp_path):
    def replays(seed, out_dir, parallel):
        run(capsys, "floodfill", "random", "-g", "4", "-n", "3", "--size", "7",
            "--seed", str(seed), "--parallel", str(parallel), "-o", str(out_dir))
        return [p.read_text() for p in sorted(out_dir.glob("game-*.jsonl"))]

    first = replays(11, tmp_path / "a", 1)
    assert replays(11, tmp_path / "b", 2) == first    # same games in worker processes
    assert replays(12, tmp_path / "c", 1) != first


def test_a_block_of_games_rotates_the_same_start(capsys, tmp_path):
    run(capsys, "floodfill", "random", "-g", "2", "--size", "11", "--parallel", "1",
        "--seed", "5", "-o", str(tmp_path))
    starts = []
    for path in sorted(tmp_path.glob("game-*.jsonl")):
        snakes = read_replay(path).turns[0]["board"]["snakes"]
        starts.append({s["name"]: s["head"] for s in snakes})
    assert starts[0]["floodfill"] == starts[1]["random"]
    assert starts[0]["random"] == starts[1]["floodfill"]


def test_seating_cycles_the_other_players():
    assert base_seats(3, 4, squad=False, game=0) == [0, 1, 2, 1]
    assert base_seats(3, 4, squad=False, game=1) == [0, 2, 1, 2]
    assert base_seats(2, 4, squad=True) == [0, 0, 1, 1]
    assert base_seats(1, 2, squad=False) == [0, 0]
    specs = plan_games(n_players=2, games=4, seed=0, ruleset="standard", map_name="standard",
                       width=11, height=11, timeout=500, n_snakes=2)
    assert [s.seats for s in specs] == [(0, 1), (1, 0), (0, 1), (1, 0)]
    assert specs[0].setup_seed == specs[1].setup_seed != specs[2].setup_seed
    specs = plan_games(n_players=2, games=2, seed=0, ruleset="squad", map_name="standard",
                       width=11, height=11, timeout=500, n_snakes=4)
    assert [s.seats for s in specs] == [(0, 0, 1, 1), (1, 1, 0, 0)]
    assert specs[0].squads == ("1", "1", "2", "2")


def test_explicit_seats(capsys, tmp_path):
    code, out, _ = run(capsys, "floodfill", "random", "--seats", "random,floodfill,2",
                       "-g", "3", "--size", "11", "--parallel", "1", "-o", str(tmp_path))
    assert code == 0
    snakes = read_replay(tmp_path / "game-00001.jsonl").turns[0]["board"]["snakes"]
    assert sorted(s["name"] for s in snakes) == ["floodfill", "random", "random"]
    assert table_row(out, "floodfill")[0] == 3


@pytest.mark.parametrize("args, message", [
    (["nosuchsnake", "random"], "not a strategy"),
    (["floodfill", "random", "--seats", "floodfill,bogus"], "--seats"),
    (["floodfill", "random", "-r", "solo", "-n", "2"], "solo games have one snake"),
    (["floodfill", "random", "-n", "1"], "at least two snakes"),
    (["floodfill", "random", "-m", "nosuchmap"], "nosuchmap"),
    (["floodfill", "random", "-n", "9", "--size", "5"], "at most 8 snakes"),
    (["floodfill", "random", "-r", "squad", "-n", "3"], "even"),
    (["floodfill", "random", "-g", "0"], "--games"),
    (["floodfill", "random", "--max-turns", "-1"], "--max-turns"),
    (["floodfill", "random", "-n", "0"], "--snakes"),
    (["floodfill", "random", "-W", "0"], "--width"),
    (["floodfill", "-r", "solo", "--solo-target", "-5"], "--solo-target"),
])
def test_bad_options_get_a_clear_error(capsys, args, message):
    code, out, err = run(capsys, *args, "--parallel", "1")
    assert code == 2
    assert err.startswith("arena: error:") and message in err


def bodies(path):
    return [[s["body"] for s in t["board"]["snakes"]] for t in read_replay(path).turns]


def test_seed_players_get_a_network_accumulator_each(capsys, tmp_path, monkeypatch):
    from nnue import network
    weights = tmp_path / "tiny.npz"
    network.Network.random(7, hidden=(16, 16)).save(weights)
    common = ["random", "-g", "2", "--size", "7", "--parallel", "1", "--seed", "9"]
    code, out, err = run(capsys, "p=seed", *common, "--weights", str(weights),
                         "-o", str(tmp_path / "nnue"))
    assert code == 0 and "no network" not in err
    assert table_row(out, "p")[0] == 2
    run(capsys, "p=floodfill", *common, "-o", str(tmp_path / "ff"))
    # without a network the seed strategy falls back on flood fill: the very same games
    monkeypatch.setattr(network, "DEFAULT_WEIGHTS", tmp_path / "absent.npz")
    code, out, err = run(capsys, "p=seed", *common, "-o", str(tmp_path / "none"))
    assert code == 0 and "no network" in err
    game = "game-00001.jsonl"
    assert bodies(tmp_path / "none" / game) == bodies(tmp_path / "ff" / game)
    assert bodies(tmp_path / "nnue" / game) != bodies(tmp_path / "ff" / game)
    code, out, err = run(capsys, "seed", "random", "-g", "1", "--parallel", "1",
                         "--weights", str(tmp_path / "missing.npz"))
    assert code == 2 and "missing.npz" in err


def test_later_strategies_play_and_slow_built_ins_miss_their_turn(capsys, monkeypatch, tmp_path):
    import time

    from snake import strategies as strategy
    from snake.decision import Decision

    class Slowpoke:
        name = "slowpoke"

        def choose(self, request, accumulator):
            time.sleep(0.03)
            return Decision("left")

    monkeypatch.setattr(strategy, "_REGISTRY", dict(strategy._REGISTRY))
    monkeypatch.setattr(strategy, "STRATEGIES", strategy.STRATEGIES)
    strategy.register_strategy("slowpoke", lambda network=None, seed=None: Slowpoke())
    args = ["slowpoke", "random", "-g", "1", "--size", "7", "--parallel", "1", "--timeout", "10"]
    code, out, err = run(capsys, *args, "--builtin-timeout", "-o", str(tmp_path))
    cells = next(line.split() for line in out.splitlines()
                 if line.startswith("slowpoke ") and "built-in" in line)
    assert code == 0 and cells[1] == "built-in" and int(cells[5]) == int(cells[2]) > 0
    assert "over the 10 ms timeout" in err
    # results.json says in which game the late answers fell
    played = json.loads((tmp_path / "results.json").read_text())["games_played"]
    assert played[0]["timeouts"] == {"slowpoke": int(cells[5])} and played[0]["invalid"] == {}
    # and so does games.jsonl, written as each game ends (a killed run has no results.json)
    logged = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert logged == played
    late = int(cells[5])
    (tmp_path / "results.json").unlink()
    _tally_says_late(capsys, tmp_path, late)
    code, out, err = run(capsys, *args)
    cells = next(line.split() for line in out.splitlines()
                 if line.startswith("slowpoke ") and "built-in" in line)
    assert code == 0 and int(cells[5]) == 0


def test_each_game_process_searches_on_its_share_of_the_cores(capsys, monkeypatch):
    """During a run the built-in searches see the machine's cores divided among the game
    processes (what bounds a search's threads), unless the environment says otherwise;
    afterwards the environment is as it was."""
    import os

    from snake import strategies as strategy
    from snake.decision import Decision
    seen = []

    class Counter:
        name = "counter"

        def choose(self, request, accumulator):
            seen.append(os.environ.get("NUPPEPPOU_SEARCH_CORES"))
            return Decision("up")

    monkeypatch.setattr(strategy, "_REGISTRY", dict(strategy._REGISTRY))
    monkeypatch.setattr(strategy, "STRATEGIES", strategy.STRATEGIES)
    strategy.register_strategy("counter", lambda network=None, seed=None: Counter())
    monkeypatch.delenv("NUPPEPPOU_SEARCH_CORES", raising=False)
    args = ["counter", "random", "-g", "1", "--size", "7", "--parallel", "1", "--max-turns", "3"]
    assert run(capsys, *args)[0] == 0
    from snake.search.cores import available_cores
    assert seen and set(seen) == {str(available_cores())}
    assert "NUPPEPPOU_SEARCH_CORES" not in os.environ
    seen.clear()
    monkeypatch.setenv("NUPPEPPOU_SEARCH_CORES", "3")
    assert run(capsys, *args)[0] == 0
    assert set(seen) == {"3"} and os.environ["NUPPEPPOU_SEARCH_CORES"] == "3"


def _tally_says_late(capsys, folder, late):
    """The tally of ``folder`` (one game of ``slowpoke``, ``late`` of its answers late)
    reports them, and a ledger made from it keeps them."""
    from snake.arena.tally import main as tally
    ledger = folder / "ledger.jsonl"
    assert tally([str(folder), "--ledger", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert (f"late or invalid answers (recorded for 1 of 1 games): its own {late} in 1 games, "
            "the others' 0 in 0 games") in out
    line = json.loads(ledger.read_text())
    assert line["late"] == {"slowpoke": late} and line["invalid"] == {}
    assert tally([str(ledger)]) == 0 and f"its own {late} in 1 games" in capsys.readouterr().out
    # a line written before the tally knew late answers takes them from the record
    del line["late"], line["invalid"]
    ledger.write_text(json.dumps(line) + "\n")
    assert tally([str(folder), "--ledger", str(ledger)]) == 0
    assert "1 lines filled in" in capsys.readouterr().err
    assert json.loads(ledger.read_text())["late"] == {"slowpoke": late}


def test_the_tally_reads_late_answers_from_older_runs(capsys, tmp_path):
    """A run from before games.jsonl: its results.json gives the late answers; one from
    before they were recorded per game gives none, and the tally says nothing of them."""
    from snake.arena.tally import main as tally
    code, _, _ = run(capsys, "floodfill", "random", "-g", "2", "--size", "7", "--parallel", "1",
                     "--seed", "3", "-o", str(tmp_path))
    assert code == 0
    (tmp_path / "games.jsonl").unlink()
    results = json.loads((tmp_path / "results.json").read_text())
    results["games_played"][0]["timeouts"] = {"random": 2}
    (tmp_path / "results.json").write_text(json.dumps(results))
    assert tally([str(tmp_path)]) == 0
    assert ("late or invalid answers (recorded for 2 of 2 games): its own 0 in 0 games, "
            "the others' 2 in 1 games") in capsys.readouterr().out
    for game in results["games_played"]:
        del game["timeouts"], game["invalid"]
    (tmp_path / "results.json").write_text(json.dumps(results))
    assert tally([str(tmp_path)]) == 0
    assert "late or invalid" not in capsys.readouterr().out


def test_player_arguments():
    from snake.arena.players import PlayerError, parse_players
    players = parse_players(["floodfill", "floodfill", "me=http://127.0.0.1:9/snake"])
    assert [p.label for p in players] == ["floodfill", "floodfill#2", "me"]
    assert players[0].color != players[1].color
    assert players[2].is_http and players[2].target == "http://127.0.0.1:9/snake"
    for bad in (["http://:80"], ["http://127.0.0.1:notaport"], ["=floodfill"], ["bogus"], []):
        with pytest.raises(PlayerError):
            parse_players(bad)


def test_tally_of_written_records_equals_the_run(capsys, tmp_path):
    """A run's records, scored again later (as a long match played in pieces is), give the
    run's own wins, draws and losses."""
    from snake.arena.tally import main as tally
    run_dir = tmp_path / "run"
    code, out, _ = run(capsys, "floodfill", "random", "-g", "6", "--size", "7",
                       "--parallel", "1", "--seed", "5", "-o", str(run_dir))
    assert code == 0
    w, d, losses, _ = LAST_LINE.match(out.splitlines()[-1]).groups()
    assert tally([str(run_dir)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"floodfill: 6 games, +{w} ={d} -{losses}: score ")
    # the other side of the same records
    assert tally([str(run_dir), "--player", "random"]) == 0
    assert capsys.readouterr().out.startswith(f"random: 6 games, +{losses} ={d} -{w}")


def test_a_ledger_keeps_what_the_tally_needs_across_pieces(capsys, tmp_path):
    """Pieces of a match summarised into a ledger (then their records deleted) give the
    same totals as the records themselves; a game is never counted twice."""
    import shutil

    from snake.arena.tally import main as tally
    pieces = []
    for seed in (5, 6):
        piece = tmp_path / f"piece-{seed}"
        code, _, _ = run(capsys, "floodfill", "random", "-g", "4", "--size", "7",
                         "--parallel", "1", "--seed", str(seed), "-o", str(piece))
        assert code == 0
        pieces.append(piece)
    assert tally([str(p) for p in pieces]) == 0
    from_records = capsys.readouterr().out
    ledger = tmp_path / "duel.jsonl"
    assert tally([str(pieces[0]), "--ledger", str(ledger), "--tag", "main@one"]) == 0
    assert "4 games added" in capsys.readouterr().err
    # the first piece again (already in) and the second: only the second's games are added
    assert tally([str(pieces[0]), str(pieces[1]), "--ledger", str(ledger),
                  "--tag", "main@two"]) == 0
    assert "4 games added" in capsys.readouterr().err
    assert len(ledger.read_text().splitlines()) == 8
    for piece in pieces:
        shutil.rmtree(piece)
    assert tally([str(ledger)]) == 0
    from_ledger = capsys.readouterr().out
    assert "played by: main@one (4), main@two (4)" in from_ledger
    # the ledger's report is the records' with the versions named and scored apart
    pooled = [line for line in from_ledger.splitlines(keepends=True)
              if not line.startswith(("  played by: ", "  each version: main@one "))]
    assert "".join(pooled) == from_records
    # the ledger and a copy of it together: still 8 games
    shutil.copy(ledger, tmp_path / "copy.jsonl")
    assert tally([str(ledger), str(tmp_path / "copy.jsonl")]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("floodfill: 8 games")
    assert "8 games given twice counted once" in out.err
    # one game id with another result (a second run with the same --seed): both counted
    lines = ledger.read_text().splitlines()
    other = json.loads(lines[0])
    other["turns"] += 1
    (tmp_path / "rerun.jsonl").write_text(json.dumps(other) + "\n")
    assert tally([str(ledger), str(tmp_path / "rerun.jsonl")]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("floodfill: 9 games")
    assert "appears with another result" in out.err
    # the other player's side is not in this ledger
    assert tally([str(ledger), "--player", "random"]) == 1
    assert "no games of random" in capsys.readouterr().err


def test_two_matches_played_with_one_seed_are_different_games_in_a_ledger(capsys, tmp_path):
    """Game ids come from the run's seed: the same seed with other players gives other games,
    which the ledger keeps apart by player and opponents."""
    from snake.arena.tally import main as tally
    ledger = tmp_path / "screen.jsonl"
    for players in (["floodfill", "random"], ["random", "floodfill"]):
        piece = tmp_path / players[0]
        assert run(capsys, *players, "-g", "3", "--size", "7", "--parallel", "1",
                   "--seed", "5", "-o", str(piece))[0] == 0
        assert tally([str(piece), "--ledger", str(ledger)]) == 0
        assert "3 games added" in capsys.readouterr().err
    assert tally([str(ledger)]) == 1          # two players: say which
    assert "give --player" in capsys.readouterr().err
    for name in ("floodfill", "random"):
        assert tally([str(ledger), "--player", name]) == 0
        assert capsys.readouterr().out.startswith(f"{name}: 3 games")


def test_a_broken_ledger_line_is_named(capsys, tmp_path):
    from snake.arena.tally import main as tally
    ledger = tmp_path / "bad.jsonl"
    good = ('{"game": "g1", "player": "a", "kind": "standard 7x7, 2 snakes, against b", '
            '"outcome": "win", "turns": 3, "starved": false}\n')
    for bad, reason in (('{"game": "g2", "player": "a", "outcome": "won"}', "outcome 'won'"),
                        ('{"game": "g2", "player": "a", "kind": "k", "outcome": "win", '
                         '"turns": 3, "starved": false}', "how many snakes"),
                        ('{"game": "g2", "outcome": "win"}', "not a ledger line"),
                        ('[1, 2]', "not a ledger line")):
        ledger.write_text(good + bad + "\n")
        assert tally([str(ledger)]) == 1
        err = capsys.readouterr().err
        assert f"{ledger}:2" in err and reason in err
    # a file whose first line is not a summary is read as a game record, and skipped
    ledger.write_text("5\n")
    assert tally([str(ledger)]) == 1
    assert "skipped" in capsys.readouterr().err


def test_until_decided_stops_a_game_without_changing_any_result(capsys, tmp_path):
    """With four snakes, a game whose living snakes all belong to one player is decided:
    stopping it there gives every player the result the whole game gives (same seeds, so
    the same moves up to the stop), in fewer turns; the records score the same."""
    from snake.arena.tally import main as tally
    full, short = tmp_path / "full", tmp_path / "short"
    common = ["random", "floodfill", "-n", "4", "-g", "8", "--size", "7", "--parallel", "1",
              "--seed", "9"]
    code, out_full, _ = run(capsys, *common, "-o", str(full))
    assert code == 0
    code, out_short, _ = run(capsys, *common, "-o", str(short), "--until-decided")
    assert code == 0
    assert "stopped once decided" in out_short
    assert table_row(out_short, "random") == table_row(out_full, "random")
    assert table_row(out_short, "floodfill") == table_row(out_full, "floodfill")
    assert out_short.splitlines()[-1] == out_full.splitlines()[-1]
    full_results = json.loads((full / "results.json").read_text())
    short_results = json.loads((short / "results.json").read_text())
    assert short_results["decided"] > 0
    assert short_results["mean_turns"] < full_results["mean_turns"]
    # the records score each player as the whole game does: the first player (one seat,
    # its snake is "you"), and the player with three seats, who wins a decided game
    for player in ("random", "floodfill"):
        assert tally([str(full), "--player", player]) == 0
        whole = capsys.readouterr().out.splitlines()[0]
        assert tally([str(short), "--player", player]) == 0
        assert capsys.readouterr().out.splitlines()[0] == whole
    assert "even play 75.0%" in whole          # three of the four seats
    # the first player's place too (one seat): a stopped record still says who outlived it
    assert tally([str(full), "--player", "random"]) == 0
    place = [line for line in capsys.readouterr().out.splitlines() if "mean place" in line]
    assert tally([str(short), "--player", "random"]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if "mean place" in line] == place
    assert place and "even play 2.50; 8 games with a place" in place[0]
    for record in sorted(short.glob("game-*.jsonl")):
        stopped = read_replay(record)
        whole = read_replay(full / record.name)
        assert stopped.turns == whole.turns[:len(stopped.turns)]


#: A, in the corner, has no move that lives: walls, its own neck, B's body.
CORNERED = """
    A a a . . . .
    b b b B . . .
    b . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
"""


@pytest.mark.parametrize("move, cause, trapped", [
    ("up", "wall-collision", True),     # every move of A dies: walls, its neck, B
    ("down", "snake-collision", True),
])
def test_the_tally_says_how_the_snake_died(capsys, tmp_path, move, cause, trapped):
    """A record of one turn in which A, cornered, dies: the tally replays that turn through
    the rules with the move A's frozen body shows and B's move, and says the cause and that
    no move of A's would have lived."""
    from snake.arena.tally import main as tally
    after = write_record(tmp_path / "game-00001.jsonl", CORNERED, {"A": move, "B": "down"})
    assert after.board.snake("A").eliminated_cause == cause
    assert tally([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (f"how it died, by the rules: {cause} 1; trapped (no move of its own lived) in 1 of 1"
            in out)


#: Nobody dies in one turn here (A goes down, B up).
OPEN = """
    A a . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    b B . . . . .
"""


def test_the_tally_counts_deaths_at_low_health_whatever_the_cause(capsys, tmp_path):
    """A snake cornered at health 6 died of a collision, not of starvation, but on its way
    to food as much as a starving one: the tally says how many deaths began their turn at
    health 10 or less, beside the deaths by starvation (health 1). A win, and a loss whose
    record ends with the snake still alive, are no deaths. A ledger keeps the health, and a
    line written before it knew the health is filled in from the record."""
    from snake.arena.tally import main as tally
    write_record(tmp_path / "game-00001.jsonl", CORNERED, {"A": "up", "B": "down"},
                 health={"A": 10, "B": 90}, game_id="g1")
    write_record(tmp_path / "game-00002.jsonl", CORNERED, {"A": "down", "B": "down"},
                 health={"A": 11, "B": 90}, game_id="g2")
    write_record(tmp_path / "game-00003.jsonl", B_CORNERED, {"A": "right", "B": "down"},
                 winner="A", health={"A": 3, "B": 90}, game_id="g3")       # a win
    write_record(tmp_path / "game-00004.jsonl", OPEN, {"A": "down", "B": "up"},
                 health={"A": 2, "B": 90}, game_id="g4")     # a loss, alive at the end
    write_record(tmp_path / "game-00005.jsonl", HEAD_ON, {"A": "down", "B": "up"}, winner="",
                 draw=True, health={"A": 5, "B": 90}, game_id="g5")   # a draw it died in
    assert tally([str(tmp_path), "--player", "mine"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mine: 5 games, +1 =1 -3")
    assert "its deaths by starvation (health 1 on its last turn): 0 of 3\n" in out
    assert "its deaths with health 10 or less on its last turn, whatever the cause: 2 of 3\n" in out
    assert "how it died, by the rules: " in out and "head-collision 1" in out
    ledger = tmp_path / "ledger.jsonl"
    assert tally([str(tmp_path), "--player", "mine", "--ledger", str(ledger)]) == 0
    capsys.readouterr()
    rows = {json.loads(line)["game"]: json.loads(line) for line in ledger.read_text().splitlines()}
    assert {g: r["health_at_death"] for g, r in rows.items()} == {
        "g1": 10, "g2": 11, "g3": None, "g4": None, "g5": 5}
    assert tally([str(ledger)]) == 0
    assert capsys.readouterr().out == out
    # older lines: no health in two of them; the line says so
    for g in ("g2", "g4"):
        del rows[g]["health_at_death"]
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(r) + "\n" for r in rows.values()))
    assert tally([str(old)]) == 0
    assert ("its deaths with health 10 or less on its last turn, whatever the cause: 2 of 2 "
            "(2 deaths of older lines without it)") in capsys.readouterr().out
    # the records given to the old ledger fill those two lines in
    assert tally([str(tmp_path), "--player", "mine", "--ledger", str(old)]) == 0
    assert "0 games added to" in (err := capsys.readouterr().err) and "2 lines filled in" in err
    assert tally([str(old)]) == 0
    assert capsys.readouterr().out == out
    # a health that is not one is a bad line, not a traceback
    for bad in ("6", 6.5, True, -1, 101, [6]):
        (tmp_path / "bad.jsonl").write_text(json.dumps(rows["g1"] | {"health_at_death": bad})
                                            + "\n")
        assert tally([str(tmp_path / "bad.jsonl")]) != 0
        assert "not a health" in capsys.readouterr().err


#: B cornered at the top row by A, the longer: B dies whatever it does.
def test_a_death_before_the_turn_limit_is_a_loss_in_a_game_stopped_there(capsys, tmp_path):
    """A game stopped at --max-turns is a draw for the snakes still alive; one that fell
    the turn before lost (as the arena scored it)."""
    from snake.arena.tally import main as tally
    write_record(tmp_path / "game-00001.jsonl", """
        A a a . . . .
        . . . . . . .
        . . . . . . .
        B b b . . . .
        . . . . . . .
        C c c . . . .
        . . . . . . .
    """, [{"A": "down", "B": "up", "C": "down"}, {"A": "up", "B": "up", "C": "right"}], winner="",
                 draw=True, game_id="capped")
    assert tally([str(tmp_path), "--player", "mine"]) == 0
    assert capsys.readouterr().out.startswith("mine: 1 games, +0 =0 -1")


def test_sprt_is_refused_for_games_of_more_than_two(capsys):
    code, _, err = run(capsys, "floodfill", "random", "-n", "4", "-g", "2", "--size", "7",
                       "--sprt", "0,30")
    assert code == 2 and "--sprt tests duels" in err


HEAD_ON = """
    . . . . . . .
    A a a . . . .
    . . . . . . .
    B b b . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
"""

B_CORNERED = """
    B b b . . . .
    a a a A . . .
    a . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
"""


def test_the_tally_compares_lengths_in_wins_and_in_losses(capsys, tmp_path):
    """Lengths on the last turn on which another snake lived, apart in wins and losses (a
    player that loses the games in which it is longer is not turning its length into wins):
    A lost the game in which it was the shorter (3 against 5) and won the other (5 against
    3). A ledger line keeps it; a line without it (written before) is the same game still."""
    from snake.arena.tally import main as tally
    write_record(tmp_path / "game-00001.jsonl", CORNERED, {"A": "up", "B": "down"})
    write_record(tmp_path / "game-00002.jsonl", B_CORNERED, {"A": "right", "B": "down"},
                 winner="A")
    assert tally([str(tmp_path), "--player", "mine"]) == 0
    from_records = capsys.readouterr().out
    assert ("length on its last turn with another snake alive: 4.0, the others 4.0; "
            "in wins 5.0 against 3.0, in losses 3.0 against 5.0 (2 games)") in from_records
    ledger = tmp_path / "ledger.jsonl"
    assert tally([str(tmp_path), "--player", "mine", "--ledger", str(ledger)]) == 0
    capsys.readouterr()
    assert tally([str(ledger)]) == 0
    assert capsys.readouterr().out == from_records
    # a line from before: no last-turn lengths, only turns 50 and 100 (here another turn
    # is added, as a longer game would have it): the record given again is the same game
    old = []
    for line in ledger.read_text().splitlines():
        row = json.loads(line)
        del row["length_at_end"]
        row["length_at"]["300"] = [30, 25.0]
        old.append(json.dumps(row))
    (tmp_path / "old.jsonl").write_text("\n".join(old) + "\n")
    assert tally([str(tmp_path / "old.jsonl"), str(tmp_path), "--player", "mine"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("mine: 2 games") and "2 games given twice counted once" in out.err
    assert "in wins 5.0 against 3.0" in out.out         # the old lines took it from the records
    # adding the records to the old ledger fills its lines in, and adds no game
    assert tally([str(tmp_path), "--player", "mine", "--ledger", str(tmp_path / "old.jsonl")]) == 0
    assert "0 games added to" in (err := capsys.readouterr().err) and "2 lines filled in" in err
    rows = [json.loads(line) for line in (tmp_path / "old.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["length_at_end"] and "300" in r["length_at"] for r in rows)
    assert tally([str(tmp_path / "old.jsonl")]) == 0
    assert "in wins 5.0 against 3.0, in losses 3.0 against 5.0 (2 games)" in capsys.readouterr().out
    # a malformed last-turn length is a bad line, not a traceback
    rows[0]["length_at_end"] = []
    (tmp_path / "bad.jsonl").write_text(json.dumps(rows[0]) + "\n")
    assert tally([str(tmp_path / "bad.jsonl")]) != 0


def test_the_tally_pools_only_the_tags_asked_for(capsys, tmp_path):
    """A ledger played by two versions: --tags counts the lines of those named."""
    from snake.arena.tally import main as tally
    ledger = tmp_path / "ledger.jsonl"
    for n, (moves, winner, tag) in enumerate(
            [({"A": "up", "B": "left", "C": "left"}, "A", "main@old"),
             ({"A": "up", "B": "up", "C": "down"}, "B", "main@new")]):
        folder = tmp_path / f"piece-{n}"
        folder.mkdir()
        write_record(folder / "game-00001.jsonl", THREE, moves, winner=winner, game_id=f"g{n}")
        assert tally([str(folder), "--player", "mine", "--ledger", str(ledger), "--tag", tag]) == 0
    capsys.readouterr()
    assert tally([str(ledger), "--tags", "main@new"]) == 0
    out = capsys.readouterr().out
    assert "mine: 1 games, +0 =0 -1" in out and "played by: main@new (1)" in out
    assert "each version" not in out
    assert tally([str(ledger), "--tags", "main@old,main@new"]) == 0
    out = capsys.readouterr().out
    assert "mine: 2 games, +1 =0 -1" in out
    # pooled, each version's own score is shown beside the whole
    assert ("each version: main@new +0 =0 -1 (0% [0%, 79%]); "
            "main@old +1 =0 -0 (100% [21%, 100%])" in out)
    assert tally([str(ledger), "--tags", "main@other"]) == 1
    assert tally([str(tmp_path / "piece-0"), "--ledger", str(ledger), "--tags", "x"]) == 2


def test_tally_without_records_says_so(capsys, tmp_path):
    from snake.arena.tally import main as tally
    assert tally([str(tmp_path)]) == 1
    assert "no game records" in capsys.readouterr().err


def test_sprt_stops_the_run_when_it_decides(capsys):
    code, out, _ = run(capsys, "floodfill", "random", "-g", "60", "--size", "7",
                       "--parallel", "1", "--seed", "3", "--sprt", "0,100")
    assert code == 0
    w, d, losses, _ = LAST_LINE.match(out.splitlines()[-1]).groups()
    games = int(w) + int(d) + int(losses)
    assert games < 60
    assert f"H1 accepted: floodfill is at least 100 Elo stronger after {games} games" in out


def _first_games_finish_last(spec):
    import time

    from snake.arena import __main__ as arena_main
    if spec.index < 3:
        time.sleep(1.5)              # the other process plays on meanwhile
    return arena_main._REAL_PLAY(spec)


def test_sprt_stops_where_one_process_would_whatever_finishes_first(capsys, monkeypatch):
    """With games in parallel, the test counts them in their order: it stops after the
    same games as a single process, even when the first games finish after many later
    ones (counted as they finished, the run stopped elsewhere)."""
    import multiprocessing

    from snake.arena import __main__ as arena_main
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the patched game function reaches the workers by fork")
    lines = []
    for parallel in ("1", "2"):
        code, out, _ = run(capsys, "random", "random", "-g", "200", "--size", "7",
                           "--parallel", parallel, "--seed", "9", "--sprt=-60,60")
        assert code == 0
        lines.append(out.splitlines()[-1])
        monkeypatch.setattr(arena_main, "_REAL_PLAY", arena_main._play, raising=False)
        monkeypatch.setattr(arena_main, "_play", _first_games_finish_last)
    assert lines[0] == lines[1]


def _dies_in_game_2(spec):
    import os

    from snake.arena import __main__ as arena_main
    if spec.index == 1:
        os._exit(9)                  # as a game process killed (out of memory) would
    return arena_main._REAL_PLAY(spec)


def test_a_game_process_that_dies_stops_the_run_instead_of_hanging(capsys, monkeypatch):
    """A process pool waits for ever for the game of a worker that was killed; the arena
    stops, reports the games that finished, and exits with an error status."""
    import multiprocessing

    from snake.arena import __main__ as arena_main
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the patched game function reaches the workers by fork")
    monkeypatch.setattr(arena_main, "_REAL_PLAY", arena_main._play, raising=False)
    monkeypatch.setattr(arena_main, "_play", _dies_in_game_2)
    code, out, err = run(capsys, "floodfill", "random", "-g", "4", "--size", "7",
                         "--parallel", "2", "--seed", "5")
    assert code == 2 and "a game process died" in err
    w, d, losses, _ = LAST_LINE.match(out.splitlines()[-1]).groups()
    assert int(w) + int(d) + int(losses) < 4


def test_gzipped_records_are_read_like_plain_ones(capsys, tmp_path):
    """Official games are often kept gzipped (*.jsonl.gz): the readers take them as they
    are, and a record whose snake has no body is an error that names the line."""
    import gzip
    import shutil

    from snake.arena.tally import main as tally
    from snake.records.render import main as render
    code, _, _ = run(capsys, "floodfill", "random", "-g", "1", "--size", "7", "--parallel", "1",
                     "--seed", "2", "-o", str(tmp_path / "run"))
    assert code == 0
    plain = tmp_path / "run" / "game-00001.jsonl"
    kept = tmp_path / "kept"
    kept.mkdir()
    with open(plain, "rb") as f, gzip.open(kept / "one.jsonl.gz", "wb") as g:
        shutil.copyfileobj(f, g)
    assert read_replay(kept / "one.jsonl.gz") == read_replay(plain)
    assert tally([str(kept), "--player", "floodfill"]) == 0
    assert "1 games" in capsys.readouterr().out
    assert render([str(kept / "one.jsonl.gz"), "-o", str(tmp_path / "one.html")]) == 0
    lines = plain.read_text().splitlines()
    broken = json.loads(lines[1])
    del broken["board"]["snakes"][0]["body"]
    (tmp_path / "broken.jsonl").write_text("\n".join([lines[0], json.dumps(broken), lines[-1]]))
    capsys.readouterr()
    assert render([str(tmp_path / "broken.jsonl")]) == 2
    assert "broken.jsonl:2: board.snakes" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["30,0", "x", "1,2,3"])
def test_sprt_needs_two_increasing_elos(capsys, bad):
    with pytest.raises(SystemExit):
        run(capsys, "floodfill", "random", "--sprt", bad)


def test_a_search_player_may_carry_options(capsys):
    """``search[max_opponents=3]``: an experiment without a new variant; a label may name
    it; a bad option or options on a one-step strategy stop the run with the reason."""
    from snake.arena.players import PlayerError, parse_players
    players = parse_players(["search[max_opponents=3,last_chance=no]", "old=search[reach=8]",
                             "floodfill"])
    assert [(p.label, p.target) for p in players] == [
        ("search[max_opponents=3,last_chance=no]", "search[max_opponents=3,last_chance=no]"),
        ("old", "search[reach=8]"), ("floodfill", "floodfill")]
    for bad, reason in (("search[bogus=1]", "is not OPTION=VALUE"),
                        ("search[reach=far]", "is not an integer"),
                        ("seed[reach=2]", "only search strategies take options"),
                        ("search[reach=2", "one pair of brackets")):
        with pytest.raises(PlayerError, match=reason):
            parse_players([bad, "floodfill"])
    from snake.arena.players import BuiltinSeat
    seat = BuiltinSeat(players[0].target)
    assert (seat.strategy.max_opponents, seat.strategy.last_chance) == (3, False)
    assert BuiltinSeat(players[1].target).strategy.reach == 8
    assert BuiltinSeat("search[replies=best]").strategy.replies == "best"
    code, _, err = run(capsys, "search[replies=some]", "floodfill", "-g", "1", "--size", "7")
    assert code != 0 and "replies 'some': one of joint, best" in err
    code, out, _ = run(capsys, "search[max_nodes=200,max_opponents=1]", "floodfill", "-g", "2",
                       "--size", "7", "--parallel", "1", "--seed", "2")
    assert code == 0
    assert table_row(out, "search[max_nodes=200,max_opponents=1]")[0] == 2


def test_a_player_may_bring_its_own_network(capsys, tmp_path):
    """``STRATEGY@FILE``: that player's built-in strategy plays with the network in FILE
    (generation k+1 against generation k); a file that does not load stops the run."""
    from nnue.network import Network
    from snake.arena.players import parse_players
    players = parse_players(["seed@runs/g2/nnue.npz", "new=search-net@g3.npz", "floodfill"])
    assert [(p.label, p.target, p.weights) for p in players] == [
        ("seed@nnue", "seed", "runs/g2/nnue.npz"), ("new", "search-net", "g3.npz"),
        ("floodfill", "floodfill", "")]
    path = tmp_path / "tiny.npz"
    Network.random(3, hidden=(32, 16), quantise=True).save(path, {"note": "test"})
    code, out, _ = run(capsys, f"tiny=seed@{path}", "floodfill", "-g", "2", "--size", "7",
                       "--parallel", "1", "--seed", "4")
    assert code == 0 and table_row(out, "tiny")[0] == 2
    code, _, err = run(capsys, f"seed@{tmp_path / 'missing.npz'}", "floodfill", "-g", "1")
    assert code == 2 and "missing.npz" in err






@pytest.mark.parametrize("board, moves, place", [
    (THREE, {"A": "up", "B": "left", "C": "left"}, "1.00"),      # the others fall: it wins
    (THREE, {"A": "up", "B": "up", "C": "down"}, "2.00"),        # all three alive at the end
    (AT_THE_TOP, [{"A": "up", "B": "up", "C": "left"},           # C falls, then A and B
                  {"A": "up", "B": "up"}], "1.50"),              # together: a last-pair draw
])
def test_the_place_of_a_winner_a_survivor_and_a_draw(capsys, tmp_path, board, moves, place):
    from snake.arena.tally import main as tally
    write_record(tmp_path / "game-00001.jsonl", board, moves)
    assert tally([str(tmp_path), "--player", "mine"]) == 0
    assert f"mean place: {place} (1 is first, even play 2.00; 1 game with a place)" in \
        capsys.readouterr().out



def test_the_tally_says_which_starvations_came_in_the_last_duel(capsys, tmp_path):
    """With three snakes, A starves once after C has fallen (in its last duel, against B)
    and once while all three live: both are deaths by starvation, one of them in the duel."""
    from snake.arena.tally import main as tally
    write_record(tmp_path / "game-00001.jsonl", THREE,
                 [{"A": "up", "B": "up", "C": "left"}, {"A": "up", "B": "right"}],
                 health={"A": 2}, game_id="in-duel")
    write_record(tmp_path / "game-00002.jsonl", THREE, {"A": "up", "B": "up", "C": "down"},
                 health={"A": 1}, game_id="three-alive")
    assert tally([str(tmp_path), "--player", "mine"]) == 0
    assert ("its deaths by starvation (health 1 on its last turn): 2 of 2 "
            "(1 of them in its last duel)\n") in capsys.readouterr().out


def test_a_mean_place_interval_stays_within_the_places(capsys, tmp_path):
    """Two games, placed first and second of three: Student's t on one degree of freedom
    spans far more than the places can, and the interval is cut to 1 .. 3."""
    from snake.arena.tally import main as tally
    write_record(tmp_path / "game-00001.jsonl", THREE, {"A": "up", "B": "left", "C": "left"},
                 winner="A", game_id="first")
    write_record(tmp_path / "game-00002.jsonl", THREE, {"A": "up", "B": "up", "C": "down"},
                 game_id="second")
    assert tally([str(tmp_path), "--player", "mine"]) == 0
    assert "mean place: 1.50 [1.00, 3.00] (1 is first, even play 2.00; 2 games with a place)" \
        in capsys.readouterr().out


def test_the_tally_follows_the_last_duel(capsys, tmp_path):
    """With three snakes, the games that came down to A and one other: in the first C falls
    and A outlasts B (A and B both 3 long: level), in the second C falls and A and B fall
    together (a drawn duel), in the third A falls first (no duel of its own). A ledger keeps
    it; a line written before the tally looked for it is filled in from the record."""
    from snake.arena.tally import main as tally
    write_record(tmp_path / "game-00001.jsonl", THREE,
                 [{"A": "up", "B": "up", "C": "left"}, {"A": "up", "B": "left"}], winner="A")
    write_record(tmp_path / "game-00002.jsonl", AT_THE_TOP,
                 [{"A": "up", "B": "up", "C": "left"}, {"A": "up", "B": "up"}], winner="",
                 draw=True)
    write_record(tmp_path / "game-00003.jsonl", THREE, {"A": "right", "B": "up", "C": "down"})
    assert tally([str(tmp_path), "--player", "mine"]) == 0
    out = capsys.readouterr().out
    duel = [line for line in out.splitlines() if "its last duel" in line]
    assert len(duel) == 1
    assert duel[0].startswith("  its last duel (two snakes left, it one; recorded for 3 games): "
                              "reached in 2, +1 =1 -0 (75% [")
    assert "; longer at its start in 0; level or shorter in 2, +1 =1 -0 (75% [" in duel[0]
    # no food on these boards: nobody grew in the duel it won (the drawn one is in neither)
    assert ("  length gained in those duels, from their start to its last turn with the "
            "other alive: in wins it +0.0, the other +0.0 (1 games)") in out.splitlines()
    ledger = tmp_path / "ledger.jsonl"
    assert tally([str(tmp_path), "--player", "mine", "--ledger", str(ledger)]) == 0
    capsys.readouterr()
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert sorted(map(str, (r["last_duel"] for r in rows))) == ["None", "[11, 3, 3]", "[11, 3, 3]"]
    assert tally([str(ledger)]) == 0
    assert capsys.readouterr().out == out
    for row in rows:
        del row["last_duel"]
    ledger.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert tally([str(ledger)]) == 0
    assert "its last duel" not in capsys.readouterr().out        # not looked for: not said
    assert tally([str(tmp_path), "--player", "mine", "--ledger", str(ledger)]) == 0
    assert "3 lines filled in" in capsys.readouterr().err
    assert tally([str(ledger)]) == 0
    assert capsys.readouterr().out == out
    # a duel that is not (turn, own, other) is a bad line
    rows[0]["last_duel"] = [11, 3]
    (tmp_path / "bad.jsonl").write_text(json.dumps(rows[0]) + "\n")
    assert tally([str(tmp_path / "bad.jsonl")]) != 0


def test_the_postmortem_looks_back_at_a_death(capsys, tmp_path):
    """A cornered snake's death: the post-mortem says how it died (by the rules); its last
    position had no safe move, so it was no choice and the summary says so."""
    from snake.arena.postmortem import main as postmortem
    write_record(tmp_path / "game-00001.jsonl", CORNERED, {"A": "down", "B": "down"})
    # a game in which A lives (it moves away from B) is no death
    write_record(tmp_path / "game-00002.jsonl", """
        . . . . . . .
        A a a . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . B b b
        . . . . . . .
    """, {"A": "up", "B": "down"})
    assert postmortem([str(tmp_path), "--nodes", "500", "--moves", "3"]) == 0
    out = capsys.readouterr().out
    assert ("game-00001.jsonl: died on its move from turn 10 (snake-collision, by theirs; "
            "trapped); snakes: mine, theirs") in out
    assert "no safe move" in out
    assert "game-00002" not in out
    assert "looked at 3 moves back with search at 500 nodes a move:\n1 deaths (1 trapped)" in out
    assert "not at its last choice in 1" in out
    # boxed in at its last move (it can reach no square): no partition for all that
    assert "cut off from the others for good before its death: 0" in out


def test_the_postmortem_tells_food_let_go_from_food_beaten_to(capsys, tmp_path):
    """Three snakes that starve (no food appears: spawn chance and minimum 0).
    1. A owns the food three moves away with health 3 (just in time) and walks away from
       it: food let go, then its own food too far for its health.
    2. A could walk to the food with health 5, but B is nearer it every turn (board
       control's partition gives it to B): beaten to it.
    3. A eats on its move from turn 10, then walks through hazards (15 health a move) till
       its health runs out there."""
    from snake.arena.postmortem import main as postmortem
    from snake.board import Settings
    from snake.records.ending import how_it_ended
    from snake.records.replay import read_replay
    no_spawn = Settings(food_spawn_chance=0, minimum_food=0)
    down = {"A": "down", "B": "up"}
    write_record(tmp_path / "game-00001.jsonl", """
        * . . . . . .
        . . . . . . .
        . . . . . . .
        A a a . . . .
        . . . . . . .
        . . . . . . .
        . . . . B b b
    """, [down, down, {"A": "right", "B": "up"}], health={"A": 3}, settings=no_spawn)
    write_record(tmp_path / "game-00002.jsonl", """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        A a a . . . .
        . . . * . . .
        . . . . . . .
        . . . . B b b
    """, [down, down, down, {"A": "right", "B": "up"}, {"A": "up", "B": "up"}],
        health={"A": 5}, settings=no_spawn)
    left_part = [(x, y) for x in range(4) for y in range(7)]
    write_record(tmp_path / "game-00003.jsonl", """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        * A a a . . .
        . . . . . . .
        . . . . . . .
        . . . . B b b
    """, [{"A": "left", "B": "up"}, down, down, down] + [{"A": "right", "B": "up"}] * 2
        + [{"A": "right", "B": "right"}, {"A": "up", "B": "right"}], health={"A": 50},
        settings=no_spawn, hazards=left_part)
    let_go, beaten, hazards = (how_it_ended(read_replay(tmp_path / f"game-0000{k}.jsonl"))[-1]
                               for k in (1, 2, 3))
    assert let_go == ("starved: in its 3 positions (no meal in the record): 1 with a food of its "
                      "own within reach, 2 with its own food too far for its health, 0 with none "
                      "(beaten to every food); the last within reach on turn 10, 3 moves before "
                      "its death: 3 moves away, health 3, length 3 (the longest other 3)")
    assert beaten == ("starved: in its 5 positions (no meal in the record): 0 with a food of its "
                      "own within reach, 0 with its own food too far for its health, 5 with none "
                      "(beaten to every food)")
    assert hazards == ("its health ran out on a hazard: in its 7 positions after its last meal "
                       "(its move from turn 10): 0 with a food of its own within reach, 0 with "
                       "its own food too far for its health, 7 with none (beaten to every food) "
                       "(hazard damage not counted)")
    assert postmortem([str(tmp_path), "--nodes", "500", "--moves", "2"]) == 0
    out = capsys.readouterr().out
    assert all("  " + row in out for row in (let_go, beaten, hazards))
    assert ("health ran out: 3 (2 starved); a food of its own within reach after its last "
            "meal in 1 (the last a median 3 moves before its death)") in out
    # the food let go was A's last chance (health 3, 3 moves away): the search, looking
    # again at that position, sees the walk to it as its only way to live, not a loss
    there = re.search(r"  the search's score there \(turn 10\): ([^\n]+)\n", out)
    assert there and there.group(1) not in ("proven loss", "no safe move", "no search")
    assert out.count("the search's score there") == 1      # only the food let go
    assert ("    the search's score of that position: proven lost in 0 of 1, the others' "
            f"median {float(there.group(1)):+.3f}") in out


def test_the_postmortem_searches_as_in_a_game_begun_with_its_first_turns_snakes(tmp_path):
    """C and D die on the record's first turn; A dies on its second, by then in a duel. The
    post-mortem searches its positions as of a game begun with four snakes (the default's
    duel head is not for it), as the arena's seats played them."""
    from snake.arena.postmortem import look_back
    from snake.decision import Decision
    write_record(tmp_path / "game-00001.jsonl", """
        . . . . . . C
        . . . . . . c
        . . . . . . c
        A a a . . . .
        . . . . . . .
        . . . . . . .
        D d d . B b b
    """, [{"A": "up", "B": "up", "C": "up", "D": "down"}, {"A": "left", "B": "up"}])
    seen = []

    class Recorder:
        def choose(self, request, accumulator):
            seen.append((request.state.turn, len(request.state.board.living_snakes),
                         request.began_with))
            return Decision("up")

    post = look_back(tmp_path / "game-00001.jsonl", Recorder(), moves=2)
    assert post is not None and post.death.cause == "wall-collision"
    assert seen == [(11, 2, 4), (10, 4, 4)]       # the drawing is turn 10, its first


#: A (length 4) between B (length 3, next to its head) and C (length 5, two moves away).
BETWEEN = """
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . b b B A a a a . .
    . . . . . . . . . . .
    . . . . . C . . . . .
    . . . . . c . . . . .
    . . . . . c . . . . .
    . . . . . c c . . . .
"""


@pytest.mark.parametrize("strategy, role, cheap", [
    ("search[max_opponents=1]", "cheap", 1),     # only the nearest, B, is searched
    ("search[max_opponents=2]", "searched", 0),
])
def test_the_postmortem_says_whether_the_killer_was_searched(capsys, tmp_path, strategy,
                                                             role, cheap):
    """A walks into the head of the longer C. Searching only the nearest opponent, the
    search played C cheaply at that choice, still open: a death a search of C might have
    seen; searching both, C was searched."""
    from snake.arena.postmortem import main as postmortem
    write_record(tmp_path / "game-00001.jsonl", BETWEEN, {"A": "down", "B": "up", "C": "up"})
    assert postmortem([str(tmp_path), "--nodes", "2000", "--moves", "1",
                       "--strategy", strategy]) == 0
    out = capsys.readouterr().out
    # B and C share the name "theirs": each is told apart by the start of its id
    assert "(head-collision, by theirs#C); snakes: mine, theirs#B, theirs#C" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("10 "))
    assert row.rstrip().endswith(role)
    # the searched and cheap snakes by name: "theirs#B (joint)  theirs#C  cheap"
    searched = "theirs#B (" if cheap else "theirs#B, theirs#C ("
    assert searched in row and ("  theirs#C  " in row) == bool(cheap)
    assert ("killed by another snake: 1; that snake played cheaply at its last choice not yet "
            f"proven lost in {cheap}, at some such choice in {cheap}") in out


def test_the_tally_names_players_by_their_names_never_by_ids(capsys, tmp_path):
    """The tally speaks of players, by name (a player's snakes are the snakes of its name:
    the two named "theirs" are one player's two seats), and of no snake by its id, here
    the official engine's UUIDs."""
    from snake.arena.tally import main as tally
    write_record(tmp_path / "game-00001.jsonl", BETWEEN, {"A": "down", "B": "up", "C": "up"},
                 winner="C")
    write_record(tmp_path / "game-00002.jsonl", CORNERED, {"A": "down", "B": "down"})
    uuids = {k: f"{k.lower() * 8}-d8cb-4cc9-853f-c7ec4e880bce" for k in "ABC"}
    for path in tmp_path.glob("game-*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in lines[1:-1]:
            for snake in line["board"]["snakes"] + [line["you"]]:
                snake["id"] = uuids[snake["id"]]
        lines[-1]["winnerId"] = uuids.get(lines[-1]["winnerId"], "")
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert tally([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "standard 11x11, 3 snakes, against 2x theirs\n  mine: 1 games, +0 =0 -1" in out
    assert "standard 7x7, 2 snakes, against theirs\n  mine: 1 games, +0 =0 -1" in out
    assert not any(uuid[:8] in out for uuid in uuids.values())
    assert tally([str(tmp_path), "--player", "theirs"]) == 0
    assert "theirs: 2 games, +2 =0 -0" in capsys.readouterr().out


#: The last turns of a recorded loss (tests/data; the record of the arena game, trimmed).
SEALED = Path(__file__).parent / "data" / "sealed-by-food.jsonl.gz"


def _sealed_record(tmp_path, move_food=None):
    """The last turns of a recorded 1v1 loss of `search` to `search-py` (11x11, turns 319 to
    its death on 330); ``move_food`` (square, turn, square): the food that appears on the
    first square is there from the first turn instead (until it is eaten, as recorded),
    and food appears on the other square on that turn."""
    import gzip
    lines = [json.loads(line) for line in gzip.open(SEALED, "rt").read().splitlines()]
    if move_food:
        there, turn, appears = move_food
        first = min(r["turn"] for r in lines if "board" in r
                    and any((f["x"], f["y"]) == there for f in r["board"]["food"]))
        for record in lines:
            if "board" not in record:
                continue
            food = record["board"]["food"]
            if record["turn"] < first:
                food.append({"x": there[0], "y": there[1]})
            if record["turn"] >= turn:
                food.append({"x": appears[0], "y": appears[1]})
    path = tmp_path / "game-00001.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in lines))
    return path


def test_the_postmortem_finds_a_loss_sealed_by_food_that_appeared(capsys, tmp_path):
    """Its last open choice (turn 322) was not a proven loss; food then appeared on (9, 6),
    next to the other snake, which ate it, so its tail stayed where the loser was to get
    out: turn 324 is a proven loss. Played again from 322 with no food appearing, 324 is
    not, so the post-mortem says the food sealed it."""
    from snake.arena.postmortem import main as postmortem
    _sealed_record(tmp_path)
    assert postmortem([str(tmp_path), "--nodes", "10000", "--moves", "9",   # played before
                       "--strategy", "search[value_head=none]"]) == 0     # the duel head
    out = capsys.readouterr().out
    assert ("sealed by food that appeared: (9, 6) on turn 323; without it the position of "
            "turn 324 is not proven lost (its last open choice: turn 322)") in out
    assert ("cut off from the others for good from turn 323 (8 moves before its death): it "
            "could reach 5 squares, the others at most 76") in out
    assert ("cut off from the others for good before its death: 1 of 1, median 8 moves before; "
            "with less room than another snake in 1") in out
    assert "sealed by food that appeared after its last open choice (the search cannot " \
           "foresee it): 1 of 1" in out


def test_the_postmortem_does_not_blame_food_the_loss_stands_without(capsys, tmp_path):
    """The same game with (9, 6) on the board from the start and food appearing far away,
    on (0, 8), where no snake goes, on turn 323: without that food the loss is still proven."""
    from snake.arena.postmortem import main as postmortem
    _sealed_record(tmp_path, move_food=((9, 6), 323, (0, 8)))
    assert postmortem([str(tmp_path), "--nodes", "10000", "--moves", "9",   # played before
                       "--strategy", "search[value_head=none]"]) == 0     # the duel head
    out = capsys.readouterr().out
    assert "proven loss" in out
    assert "sealed by food that appeared: (" not in out
    assert "(the search cannot foresee it): 0 of 1" in out


def test_the_postmortem_lists_a_draw_and_does_not_count_it(capsys, tmp_path):
    """A falls with B on the game's last turn (C fell before): a draw, listed as one and
    left out of the deaths."""
    from snake.arena.postmortem import main as postmortem
    write_record(tmp_path / "game-00001.jsonl", AT_THE_TOP,
                 [{"A": "up", "B": "up", "C": "left"}, {"A": "up", "B": "up"}],
                 winner="", draw=True)
    assert postmortem([str(tmp_path), "--nodes", "500", "--moves", "2"]) == 0
    out = capsys.readouterr().out
    assert "(a draw: it fell with the last others)" in out
    assert "0 deaths (0 trapped), 1 draws not counted" in out


def test_a_death_in_a_game_capped_as_a_draw_is_a_death(capsys, tmp_path):
    """A dies on the last recorded turn of a game stopped at a turn cap, which the record
    calls a draw for the survivors: B lives on, so for A it is a death, not a draw."""
    from snake.arena.postmortem import main as postmortem
    write_record(tmp_path / "game-00001.jsonl", CORNERED, {"A": "down", "B": "down"},
                 winner="", draw=True)
    assert postmortem([str(tmp_path), "--nodes", "500", "--moves", "2"]) == 0
    out = capsys.readouterr().out
    assert "a draw" not in out and "1 deaths (1 trapped)" in out


def test_the_postmortem_refuses_what_it_cannot_search(capsys, tmp_path):
    from snake.arena.postmortem import main as postmortem
    write_record(tmp_path / "game-00001.jsonl", CORNERED, {"A": "down", "B": "down"})
    for bad in ("floodfill", "search[colour=red]", "search-net"):
        assert postmortem([str(tmp_path), "--strategy", bad]) == 2
        assert "error:" in capsys.readouterr().err


def test_a_game_with_no_other_snake_at_a_turn_counted_once_when_given_twice(capsys):
    """Its others' length at that turn is NaN (none alive), which equals nothing, not
    even itself: a ledger line and its record must still be one game (not another game
    with its id, which the tally would count and say so)."""
    from snake.arena.tally import Games, GameSummary
    games = Games()
    admitted = []
    for _ in range(2):
        summary = GameSummary("standard 11x11, 4 snakes, against 2x random", "win", 120, False,
                              {50: (7, 5.0), 100: (9, float("nan"))}, game_id="g1", seats=2)
        admitted.append(games.admit("mine", summary))
    assert admitted == [True, False] and games.duplicates == 1
    assert "another result" not in capsys.readouterr().err


def test_built_in_seats_are_told_how_many_snakes_the_game_began_with(monkeypatch):
    """As the server's sessions do: the duel left of a four-snake game is not a game begun
    as a duel (the default's value head is meant for those only)."""
    from snake import strategies
    from snake.arena.match import play_game
    from snake.arena.players import PlayerSpec
    from snake.arena.schedule import plan_games
    from snake.seed import FloodFillStrategy

    told = []     # (snakes alive, snakes at the start as the request says)

    class Recorder(FloodFillStrategy):
        def choose(self, request, accumulator):
            told.append((len(request.state.board.living_snakes), request.snakes_at_start))
            return super().choose(request, accumulator)

    monkeypatch.setitem(strategies._REGISTRY, "recorder",
                        lambda network=None, seed=None: Recorder())
    spec = plan_games(n_players=1, games=1, seed=4, ruleset="standard", map_name="standard",
                      width=7, height=7, timeout=500, n_snakes=4, max_turns=400)[0]
    play_game(spec, [PlayerSpec("recorder", "recorder")])
    assert {alive for alive, _ in told} >= {4, 2}       # the game came down to a duel
    assert {began for _, began in told} == {4}
