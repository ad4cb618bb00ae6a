"""Tuning a value head by the results of its games (training.tune): tiny runs on 7x7."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from snake.arena.__main__ import main as arena_main
from snake.evaluation.control import MEASUREMENTS, N_MEASUREMENTS, STYLES, Style, resolve_style
from snake.evaluation.value_head import load_head
from training.tune import MIN_SPREAD, MIN_TUNED_SPREAD, POINTS, gains, linear_head, main, signs


def test_a_linear_head_adds_its_weighed_measurements_to_the_style_logit():
    rng = np.random.default_rng(5)
    w = rng.normal(0, 0.5, N_MEASUREMENTS)
    head = linear_head(w)
    for x in rng.uniform(-0.9, 0.9, (50, N_MEASUREMENTS)):
        expected = math.tanh(math.atanh(x[0]) + float(w @ x) / 2)
        assert head.value(x) == pytest.approx(expected, abs=1e-5)    # weights in millionths
    assert (linear_head(np.zeros(N_MEASUREMENTS)).value(np.full(N_MEASUREMENTS, 0.3))
            == pytest.approx(0.3))
    # centred on the records' means: z = w . (x - m), and at the means the style itself
    m = rng.uniform(-0.5, 0.5, N_MEASUREMENTS)
    centred = linear_head(w, means=m)
    for x in rng.uniform(-0.9, 0.9, (50, N_MEASUREMENTS)):
        expected = math.tanh(math.atanh(x[0]) + float(w @ (x - m)) / 2)
        assert centred.value(x) == pytest.approx(expected, abs=1e-5)
    assert centred.value(m) == pytest.approx(m[0], abs=1e-6)


def test_tuning_moves_the_weights_by_the_pairs_results_and_resumes(tmp_path, capsys):
    folder = tmp_path / "tune"
    argv = ["--dir", str(folder), "--nodes", "150", "--size", "7", "--max-turns", "150",
            "--workers", "1", "-q", "--c", "0.5", "--step", "0.2"]
    assert main(argv + ["--iterations", "2"]) == 0
    assert "screen it with" in capsys.readouterr().out
    state = json.loads((folder / "tune.json").read_text())
    settings, pairs = state["settings"], state["iterations"]
    assert [p["k"] for p in pairs] == [0, 1] and settings["stability"] == 1
    tuned = np.array([n != "opponents" for n in MEASUREMENTS])
    for pair in pairs:
        # each game of the pair: the plus head's points minus the minus head's
        assert pair["r"] == sum(2 * POINTS[r] - 1 for r in pair["results"])
        assert len(pair["turns"]) == 2
    assert any(p["r"] for p in pairs)     # these seeds' games are decided (deterministic)
    assert settings["spreads"] == [1.0] * N_MEASUREMENTS      # no --records
    expected = sum(gains(settings, p["k"])[1] * p["r"] / 2 * signs(settings["seed"], p["k"], tuned)
                   for p in pairs)
    assert np.allclose(state["w"], expected) and np.any(state["w"])
    assert state["w"][MEASUREMENTS.index("opponents")] == 0.0
    head = load_head(folder / "head.npz")
    assert head.residual and head.snakes == (2,) and head.meta["iterations"] == 2
    assert head.boards == ("standard 7x7",) and head.began == (2,)   # where its games were
    assert np.allclose(head.w1[0], state["w"]) and np.allclose(head.w1[1], -np.array(state["w"]))
    assert not list((folder / "work").glob("*.npz"))    # the pairs' heads are cleaned up

    # a rerun resumes where it stopped; other settings in the same directory are refused
    assert main(argv + ["--iterations", "3"]) == 0
    again = json.loads((folder / "tune.json").read_text())
    assert again["iterations"][:2] == pairs and len(again["iterations"]) == 3
    # A (stability) is the first run's, whatever --iterations says now
    again["settings"]["stability"] = 5
    (folder / "tune.json").write_text(json.dumps(again))
    assert main(argv + ["--iterations", "3"]) == 0
    assert json.loads((folder / "tune.json").read_text())["settings"]["stability"] == 5
    printed = capsys.readouterr().out
    assert "think_ms=600000" in printed and "--size 7x7" in printed
    assert main(argv[:-2] + ["--step", "0.3", "--iterations", "4"]) == 2
    assert "other settings" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--dir", str(folder), "--without", "nothing"])
    with pytest.raises(SystemExit):
        main(["--dir", str(folder), "--nodes", "0"])


def test_with_records_each_weight_moves_in_units_of_its_measurements_spread(tmp_path):
    records = tmp_path / "records"
    assert arena_main(["search[max_nodes=200]", "floodfill", "--games", "2", "--size", "7",
                       "--parallel", "1", "--seed", "4", "-q", "-o", str(records)]) == 0
    folder = tmp_path / "tune"
    assert main(["--dir", str(folder), "--nodes", "150", "--size", "7", "--max-turns", "150",
                 "--workers", "1", "-q", "--iterations", "2", "--records", str(records)]) == 0
    state = json.loads((folder / "tune.json").read_text())
    settings, pairs = state["settings"], state["iterations"]
    spreads, means = np.array(settings["spreads"]), np.array(settings["means"])
    assert len(spreads) == len(means) == N_MEASUREMENTS and (spreads >= MIN_SPREAD).all()
    assert len(set(spreads.tolist())) > 3                  # measured, not a constant
    # in a duel the others are the one other snake: "others" is "most", so not tuned
    assert settings["untuned"]["others"] == "equal to most"
    assert all(why.startswith("nearly constant") for name, why in settings["untuned"].items()
               if name != "others")
    assert all(spreads[MEASUREMENTS.index(n)] < MIN_TUNED_SPREAD
               for n, why in settings["untuned"].items() if why.startswith("nearly"))
    tuned = np.array([n != "opponents" and n not in settings["untuned"] for n in MEASUREMENTS])
    expected = sum(gains(settings, p["k"])[1] / spreads * p["r"] / 2
                   * signs(settings["seed"], p["k"], tuned) for p in pairs)
    assert any(p["r"] for p in pairs) and np.allclose(state["w"], expected)
    assert all(state["w"][MEASUREMENTS.index(n)] == 0.0 for n in settings["untuned"])
    assert [p["from"] for p in pairs] == [0, 1]            # one worker: each from the last w
    head = load_head(folder / "head.npz")
    shift = float(np.array(state["w"]) @ means)
    assert np.allclose(head.b1, [-shift, shift], atol=1e-5)


#: Two duels on 7x7, to be played from (tune --positions).
DUELS = ["""
    . . . . . . .
    . A a a a a .
    . . . . . a .
    . . . * . a .
    . . . . . a .
    . . . . . . .
    . . . B b b .
""", """
    . . . . . . .
    . . . . . . .
    . A a a . . .
    . . . a . * .
    . . . . . . .
    . B b b b . .
    . . . . . . .
"""]


def test_with_positions_pair_k_is_played_from_duel_k(tmp_path, capsys):
    from snake.board import state_to_request
    from snake.diagram import from_ascii
    suite = tmp_path / "duels.jsonl"
    lines = []
    for drawing, turn in zip(DUELS, (150, 300)):
        request = from_ascii(drawing, turn=turn)
        lines.append(json.dumps(state_to_request(request.state, "A")))
    suite.write_text("\n".join(lines) + "\n")
    folder = tmp_path / "tune"
    argv = ["--dir", str(folder), "--nodes", "150", "--size", "7", "--max-turns", "1000",
            "--workers", "1", "-q", "--positions", str(suite)]
    assert main(argv + ["--iterations", "3"]) == 0
    assert f"--positions {suite} -g 4" in capsys.readouterr().out
    state = json.loads((folder / "tune.json").read_text())
    assert state["settings"]["positions"] == str(suite)
    first_turns = [150, 300, 150]                       # pair k from duel k % 2
    for pair, start in zip(state["iterations"], first_turns):
        assert all(t > start for t in pair["turns"])
    assert main(["--dir", str(tmp_path / "other"), "--size", "11", "--iterations", "1",
                 "--positions", str(suite), "-q"]) == 2
    assert "are played on 11x11 (--size) but are 7x7" in capsys.readouterr().err


def test_a_style_s_weights_are_tuned_in_units_of_their_values(tmp_path, capsys):
    """``--tune style``: the style's own weights to start, each moved in units of its
    value, the terms it does not play left alone; the result is a style file a search
    plays (``style=FILE``), and the run plots its weights and results."""
    folder = tmp_path / "style"
    assert main(["--dir", str(folder), "--tune", "style", "--nodes", "150", "--size", "7",
                 "--max-turns", "150", "--workers", "1", "-q", "--c", "0.5", "--step", "0.2",
                 "--iterations", "4"]) == 0
    printed = capsys.readouterr().out
    state = json.loads((folder / "tune.json").read_text())
    settings, pairs = state["settings"], state["iterations"]
    assert settings["target"] == "style" and state["terms"] == list(Style._fields)
    base = np.array(STYLES["default"])
    assert settings["scales"] == np.abs(base).tolist()
    assert set(settings["untuned"]) == {"hunt", "hunger"}          # 0 in the default style
    tuned = base != 0
    assert any(p["r"] for p in pairs)
    expected = base + sum(gains(settings, p["k"])[1] * np.abs(base) * p["r"] / 2
                          * signs(settings["seed"], p["k"], tuned) for p in pairs)
    assert np.allclose(state["w"], expected) and not np.allclose(state["w"], base)
    style_file = folder / "style.json"
    assert f"style={style_file}" in printed and "value_head=none" in printed
    assert STYLES[resolve_style(str(style_file))] == Style(*state["w"])
    assert (folder / "tune.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert arena_main([f"tuned=search[value_head=none,max_nodes=100,think_ms=600000,"
                       f"style={style_file}]", "floodfill", "-g", "1", "--size", "7",
                       "-p", "1", "-q"]) == 0
    with pytest.raises(ValueError, match="style file .*missing.json"):
        resolve_style(str(tmp_path / "missing.json"))
    with pytest.raises(SystemExit):     # a style's terms, not a head's measurements
        main(["--dir", str(tmp_path / "x"), "--tune", "style", "--without", "opponents"])
