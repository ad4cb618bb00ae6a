"""bench.gate: the learning loop's stopping rules simulated (tiny sizes)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("torch")  # bench.gate uses training.loop's decide

from bench import gate  # noqa: E402


def test_the_futility_stop_ends_a_losing_match_sooner_on_the_same_games(capsys):
    gate.main(["--matches", "30", "--scores", "0.25,0.6", "--seed", "3"])
    out = capsys.readouterr().out
    rows = dict(re.findall(r"score (0\.\d+, (?:SPRT only|futility)): mean ([\d.]+) games", out))
    assert set(rows) == {"0.250, SPRT only", "0.250, futility",
                         "0.600, SPRT only", "0.600, futility"}
    # a candidate scoring 25 %: SPRT needs dozens of games, the futility stop far fewer
    assert float(rows["0.250, futility"]) < float(rows["0.250, SPRT only"]) / 2
    assert "0.250, futility: mean" in out and "worse 100.0 %" in out
    # a winner is never stopped as worse, and the two rules agree on it game for game
    assert float(rows["0.600, futility"]) == float(rows["0.600, SPRT only"])
    winner = [line for line in out.splitlines() if line.startswith("score 0.600")]
    assert all("worse" not in line and "promoted 100.0 %" in line for line in winner)


def test_bad_settings_are_refused(capsys):
    with pytest.raises(SystemExit):
        gate.main(["--scores", "1.2"])
    assert "every score must" in capsys.readouterr().err
