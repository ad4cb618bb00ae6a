"""The learning loop (training.loop) on tiny sizes: two generations play, learn, are
gated and reported; an interrupted loop resumes where it stopped."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from nnue.network import Network  # noqa: E402
from snake.arena.stats import Score  # noqa: E402
from training import loop  # noqa: E402

TINY = ["--games", "6", "--nodes", "60", "--chunk", "3", "--hidden", "8", "4", "--epochs", "1",
        "--gate-games", "4", "--gate-piece", "2", "--gate-timeout", "20", "--gate-size", "7",
        "--gate-max-turns", "25", "--workers", "1", "--seed", "11", "--holdout", "0.3"]


def run(directory, *extra):
    loop.main(["--dir", str(directory), *TINY, *extra])
    return json.loads((directory / "loop.json").read_text())


@pytest.fixture(scope="module")
def two_generations(tmp_path_factory):
    directory = tmp_path_factory.mktemp("loop") / "L"
    return directory, run(directory, "--generations", "2")


def test_each_generation_plays_learns_and_is_gated(two_generations):
    directory, state = two_generations
    gens = state["generations"]
    assert [g["generation"] for g in gens] == [1, 2]
    assert gens[0]["parent"] == 0 and gens[0]["data"]["player"] == "gen-0=search-joint"
    for g in gens:
        assert set(g["stages"]) == {"play", "train", "export", "gate"}
        assert g["data"]["positions"] > 0 and g["train"]["epochs"] == 1
        assert set(g["seconds"]) == {"play", "train", "export", "gate"}
        assert Network.load(directory / f"gen-{g['generation']}" / "nnue.npz").hidden == (8, 4)
        match = g["match"]
        assert (match["games"] in (2, 4)
                and match["wins"] + match["draws"] + match["losses"] == match["games"])
        assert match["against"] == g["parent"]
        assert (match["verdict"], g["promoted"]) == loop.decide(
            Score(match["wins"], match["draws"], match["losses"]), [0, 30], 0.05, 0.05,
            futility=True)
    # each learns from the games of the last three generations (--window's default): the
    # first from its own, the second from both, linked into one data directory
    assert gens[0]["train"]["generations"] == [1]
    assert gens[0]["train"]["positions"] == gens[0]["data"]["positions"]
    assert gens[1]["train"]["generations"] == [1, 2]
    assert gens[1]["train"]["positions"] == sum(g["data"]["positions"] for g in gens)
    assert gens[1]["train"]["games"] == sum(g["data"]["games"] for g in gens) == 12
    window = json.loads((directory / "gen-2" / "window" / "meta.json").read_text())
    assert [m["dir"] for m in window["merged_from"]] == [str(directory / f"gen-{k}" / "data")
                                                         for k in (1, 2)]
    shipped = Network.load(directory / "gen-2" / "nnue.npz").manifest["data"]
    assert (shipped["positions"] == gens[1]["train"]["positions"]
            and len(shipped["merged_from"]) == 2)
    # the second generation is played by the best of the first gate
    assert gens[1]["parent"] == (1 if gens[0]["promoted"] else 0)
    best = state["best"]
    assert best == (2 if gens[1]["promoted"] else gens[1]["parent"])
    assert (directory / "best.npz").is_file() == (best > 0)
    table = (directory / "generations.md").read_text()
    assert table.count("\n| 1 |") == 1 and table.count("\n| 2 |") == 1
    assert f"gens 1–2: 12 games, {gens[1]['train']['positions']:,} positions" in table
    assert (directory / "elo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def gate_undone(two_generations, tmp_path):
    """A copy of the two-generation loop with generation 2's gate not recorded: (directory,
    loop.json's state, generation 2's record)."""
    import shutil

    directory = tmp_path / "L"
    shutil.copytree(two_generations[0], directory)
    state = json.loads((directory / "loop.json").read_text())
    last = state["generations"][1]
    del last["stages"]["gate"], last["match"], last["promoted"]
    return directory, state, last


def test_an_interrupted_loop_resumes_where_it_stopped(two_generations, tmp_path):
    directory, state, last = gate_undone(two_generations, tmp_path)
    # cut generation 2 short inside its match: the gate not recorded, the last piece
    # interrupted (the arena leaves the results of the games it finished, in the piece's
    # ".part" folder: here one of its two)
    pieces = sorted((directory / "gen-2" / "match").glob("piece-*"))
    assert pieces and not any(p.name.endswith(".part") for p in pieces)
    cut = pieces[-1].with_name(pieces[-1].name + ".part")
    pieces[-1].rename(cut)
    results = json.loads((cut / "results.json").read_text())
    first = results["players"][0]
    first["wins"], first["draws"], first["losses"] = 1, 0, 0
    (cut / "results.json").write_text(json.dumps(results))
    kept = {p: (p / "results.json").stat().st_mtime_ns for p in pieces[:-1]}
    state["best"] = last["parent"]
    (directory / "loop.json").write_text(json.dumps(state))
    again = run(directory, "--generations", "2")
    assert again["generations"][1]["stages"]["gate"]
    assert {p: (p / "results.json").stat().st_mtime_ns for p in pieces[:-1]} == kept
    assert (pieces[-1] / "results.json").is_file() and not cut.exists()
    # the replayed piece counts, the interrupted one's results do not: the gate's totals are
    # the pieces' (not the same as before: the match is timed, so a loaded machine can
    # change a game)
    before, after = two_generations[1]["generations"][1]["match"], again["generations"][1]["match"]
    totals = [0, 0, 0]
    for piece in pieces:
        player = json.loads((piece / "results.json").read_text())["players"][0]
        totals = [n + player[k] for n, k in zip(totals, ("wins", "draws", "losses"))]
    assert after["games"] == before["games"] == sum(totals)
    assert [after[k] for k in ("wins", "draws", "losses")] == totals
    with pytest.raises(SystemExit, match="other settings"):
        loop.main(["--dir", str(directory), *TINY, "--nodes", "61"])


def test_the_window_is_the_last_generations_that_exist(tmp_path):
    def window(size, g):
        return loop.Loop(loop.parse_args(["--dir", str(tmp_path / f"w{size}"),
                                          "--window", str(size)])).window(g)

    assert [window(3, g) for g in (1, 2, 3, 5)] == [[1], [1, 2], [1, 2, 3], [3, 4, 5]]
    assert window(1, 4) == [4]
    with pytest.raises(SystemExit):
        loop.parse_args(["--dir", str(tmp_path / "w0"), "--window", "0"])


def test_a_piece_must_not_split_a_start_between_seats(capsys, tmp_path):
    with pytest.raises(SystemExit):
        loop.parse_args(["--dir", str(tmp_path / "new"), "--gate-piece", "3"])
    assert "multiples of --gate-snakes" in capsys.readouterr().err
    # a loop begun before the rule resumes with the pieces it began with
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "loop.json").write_text("{}")
    assert loop.parse_args(["--dir", str(tmp_path / "old"), "--gate-piece", "3"]).gate_piece == 3


def test_the_gate_promotes_only_a_significant_win():
    assert loop.decide(Score(45, 0, 5), [0, 30], 0.05, 0.05) == ("H1", True)
    assert loop.decide(Score(5, 0, 45), [0, 30], 0.05, 0.05) == ("H0", False)
    assert loop.decide(Score(6, 1, 5), [0, 30], 0.05, 0.05) == ("undecided", False)
    # the cap came first, but the interval is wholly above one half
    assert loop.decide(Score(14, 0, 2), [100, 400], 0.01, 0.01) == ("undecided", True)
    assert loop.decide(Score(0, 0, 0), [0, 30], 0.05, 0.05) == ("undecided", False)


def test_a_significant_loss_ends_the_gate_with_futility():
    # 0 of 10: the 95 % interval is [0, 27.8 %], wholly below one half
    assert loop.decide(Score(0, 0, 10), [0, 30], 0.05, 0.05, futility=True) == ("worse", False)
    assert loop.decide(Score(0, 0, 10), [0, 30], 0.05, 0.05) == ("undecided", False)
    # 3 of 10 is not significant ([10.8, 60.3]); a decided SPRT keeps its own verdict
    assert loop.decide(Score(3, 0, 7), [0, 30], 0.05, 0.05, futility=True) == ("undecided", False)
    assert loop.decide(Score(5, 0, 45), [0, 30], 0.05, 0.05, futility=True) == ("H0", False)
    assert loop.decide(Score(45, 0, 5), [0, 30], 0.05, 0.05, futility=True) == ("H1", True)


def test_a_gate_lost_outright_is_worse_and_reported(two_generations, tmp_path):
    directory, state, last = gate_undone(two_generations, tmp_path)
    state["best"] = last["parent"]
    # every finished game of generation 2's match lost: 0-0-4, interval [0, 49.0 %]
    for piece in (directory / "gen-2" / "match").glob("piece-*"):
        results = json.loads((piece / "results.json").read_text())
        first = results["players"][0]
        first["wins"], first["draws"], first["losses"] = 0, 0, first["games"]
        (piece / "results.json").write_text(json.dumps(results))
    # a directory made before --futility existed takes it on its first resume
    del state["settings"]["futility"]
    (directory / "loop.json").write_text(json.dumps(state))
    again = run(directory, "--generations", "2")
    match = again["generations"][1]["match"]
    assert (match["wins"], match["losses"], match["verdict"]) == (0, 4, "worse")
    assert not again["generations"][1]["promoted"] and again["settings"]["futility"] is True
    assert "| worse (LLR" in (directory / "generations.md").read_text()
    with pytest.raises(SystemExit, match="other settings"):
        loop.main(["--dir", str(directory), *TINY, "--no-futility"])


def test_a_loop_killed_in_a_stage_records_the_stage_time(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    directory = tmp_path / "L"
    argv = [sys.executable, "-m", "training.loop", "--dir", str(directory), *TINY,
            "--generations", "1", "--gate-games", "400", "--no-futility"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.Popen(argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": root})
    try:
        deadline = time.monotonic() + 240
        # wait until the gate has finished a piece, then stop it as `kill` would
        while not any((directory / "gen-1" / "match").glob("piece-00[0-9]")):
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode not in (0, None) and "interrupted" in err.decode()
    record = json.loads((directory / "loop.json").read_text())["generations"][0]
    assert not record["stages"].get("gate") and record["seconds"]["gate"] > 0


def test_the_gate_measures_the_network_against_board_control_and_nothing_else(two_generations):
    """Generation 0 and a network generation differ only in what values a leaf: the same
    tree, replies, opponents searched and last chance."""
    from snake.search.strategy import make_search_strategy
    _, state = two_generations
    gen0 = state["generations"][0]["data"]["player"].split("=", 1)[1]
    board_control = make_search_strategy(gen0)
    assert board_control.evaluator_name == "voronoi"
    shared = ("engine", "replies", "max_opponents", "reach", "last_chance",
              "style", "multi_style", "value_head", "max_depth", "exact_root")
    for variant in loop.VARIANT_OF_WEIGHT.values():
        network = make_search_strategy(variant)
        assert network.evaluator_name == "auto" and network.network_weight in (0.5, 1.0)
        for option in shared:
            assert getattr(network, option) == getattr(board_control, option), (variant, option)
