"""Arena statistics against values worked out by hand, and scoring on drawn boards."""

import math

import pytest

from snake.arena.scoring import DRAW, LOSS, WIN, player_results, solo_result
from snake.arena.stats import Score, elo_difference, percentile, t95, wilson_interval
from snake.diagram import from_ascii


def test_wilson_half_score():
    # n = 10, p = 0.5, z² = 3.841459: centre 0.5, half = 1.416010 · sqrt(0.025 + 0.0096036)
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.236594, abs=1e-6)
    assert hi == pytest.approx(0.763406, abs=1e-6)


def test_wilson_perfect_and_null_scores_reach_the_ends():
    # p = 1: the lower end is n / (n + z²) = 10 / 13.841459
    assert wilson_interval(10, 10) == (pytest.approx(0.722467, abs=1e-6), 1.0)
    assert wilson_interval(0, 10) == (0.0, pytest.approx(0.277533, abs=1e-6))


def test_wilson_with_a_draw_counted_half():
    s = Score(wins=7, draws=2, losses=1)
    assert s.games == 10 and s.points == 8 and s.fraction == 0.8
    # p = 0.8: centre (0.8 + 0.192073) / 1.384146 = 0.716741,
    # half 1.416010 · sqrt(0.016 + 0.0096036) = 0.226585
    lo, hi = s.interval
    assert lo == pytest.approx(0.490156, abs=1e-5)
    assert hi == pytest.approx(0.943326, abs=1e-5)


def test_t_quantiles_are_the_tables():
    """Student's t at 97.5 % against the printed tables (to their 4 decimals; the
    expansion is within 0.004 at 3 degrees of freedom, 0.001 at 4 and 5), tending to z."""
    table = {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 10: 2.2281,
             20: 2.0860, 30: 2.0423, 60: 2.0003, 120: 1.9799}
    for df, t in table.items():
        assert t95(df) == pytest.approx(t, abs=0.004 if df == 3 else 0.001 if df < 10 else 1e-4)
    assert t95(10 ** 6) == pytest.approx(1.959964, abs=1e-5)
    with pytest.raises(ValueError):
        t95(0)


def test_elo_of_scores():
    assert elo_difference(0.5) == 0
    assert elo_difference(0.75) == pytest.approx(190.848, abs=1e-3)   # 400·log10(3)
    assert elo_difference(0.25) == pytest.approx(-190.848, abs=1e-3)
    assert elo_difference(1.0) == math.inf and elo_difference(0.0) == -math.inf


def test_elo_is_a_bound_at_perfect_and_null_scores():
    perfect = Score(10, 0, 0)
    # elo(10 / 13.841459) = -400·log10(0.384146) = +166.2
    assert perfect.elo_text() == "> +166"
    assert perfect.elo_interval_text() == "[+166, +inf]"
    assert Score(0, 0, 10).elo_text() == "< -166"
    assert Score(3, 4, 3).elo_text() == "+0"
    assert Score(0, 0, 0).elo_text() == "-"


def test_percentile_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50 and percentile(values, 99) == 99
    assert percentile([3.0, 1.0, 2.0], 99) == 3.0
    assert math.isnan(percentile([], 50))


def finished(drawing, eliminated, ruleset="standard", squads=None, turn=20):
    """A state from a drawing, with ``eliminated = {letter: (turn, cause)}`` applied."""
    state = from_ascii(drawing, ruleset, squads=squads, turn=turn).state
    for letter, (on_turn, cause) in eliminated.items():
        snake = state.board.snake(letter)
        snake.eliminated_cause, snake.eliminated_on_turn = cause, on_turn
    return state


BOARD = """
    A a . . .
    . . B b .
    . . . . .
    C c . . .
    . . . D d
"""


def test_one_seat_against_three_the_last_snake_left_wins():
    owners = {"A": 0, "B": 1, "C": 1, "D": 1}
    state = finished(BOARD, {"B": (5, "wall-collision"), "C": (9, "snake-collision"),
                             "D": (12, "head-collision")})
    assert player_results(state, owners) == {0: WIN, 1: LOSS}
    # the first player's snake died first: one of the others outlasted it
    state = finished(BOARD, {"A": (3, "wall-collision"), "C": (9, "snake-collision"),
                             "D": (12, "head-collision")})
    assert player_results(state, owners) == {0: LOSS, 1: WIN}


def test_eliminated_on_the_same_final_turn_is_a_draw():
    owners = {"A": 0, "B": 1, "C": 1, "D": 1}
    state = finished(BOARD, {"A": (12, "head-collision"), "B": (12, "head-collision"),
                             "C": (4, "wall-collision"), "D": (7, "out-of-health")})
    assert player_results(state, owners) == {0: DRAW, 1: DRAW}


def test_squads_are_sides():
    owners = {"A": 0, "B": 0, "C": 1, "D": 1}
    squads = {"A": "1", "B": "1", "C": "2", "D": "2"}
    state = finished(BOARD, {"A": (6, "wall-collision"), "C": (8, "wall-collision"),
                             "D": (8, "squad-eliminated")}, "squad", squads)
    assert player_results(state, owners, squads) == {0: WIN, 1: LOSS}
    # two players sharing a squad win together
    owners = {"A": 0, "B": 1, "C": 2, "D": 2}
    assert player_results(state, owners, squads) == {0: WIN, 1: WIN, 2: LOSS}


def test_a_player_alone_draws():
    state = finished(BOARD, {"B": (5, "wall-collision"), "C": (9, "wall-collision"),
                             "D": (12, "wall-collision")})
    assert player_results(state, {"A": 0, "B": 0, "C": 0, "D": 0}) == {0: DRAW}


def test_solo_wins_at_the_target_number_of_moves():
    state = finished("A a . .\n. . . .", {"A": (100, "wall-collision")}, "solo", turn=100)
    assert solo_result(state, "A", 100) == WIN
    assert solo_result(state, "A", 101) == LOSS


def test_sprt_bounds_and_decisions():
    from snake.arena.stats import sprt_bounds, sprt_llr
    low, high = sprt_bounds(0.05, 0.05)
    assert abs(low + 2.944) < 1e-3 and abs(high - 2.944) < 1e-3
    # a run of wins is evidence, but not after one game, and not after a handful: the
    # exact ratio (fishtest's) of 5 straight wins at [0, 100] is 1.23, 12 are needed
    assert 0 < sprt_llr(Score(1, 0, 0), 0, 50) < high
    assert abs(sprt_llr(Score(5, 0, 0), 0, 100) - 1.234) < 0.01
    assert sprt_llr(Score(11, 0, 0), 0, 100) < high < sprt_llr(Score(12, 0, 0), 0, 100)
    assert abs(sprt_llr(Score(0, 0, 5), 0, 100) + 1.643) < 0.01
    assert sprt_llr(Score(23, 0, 0), 0, 50) > high
    # an even score speaks against a positive difference, more so the more games
    assert low < sprt_llr(Score(50, 0, 50), 0, 50) < 0
    assert sprt_llr(Score(200, 0, 200), 0, 50) < low
    # a score right between the hypotheses decides nothing
    from snake.arena.stats import logistic_score
    mid = (logistic_score(0) + logistic_score(50)) / 2
    wins = round(1000 * mid)
    assert abs(sprt_llr(Score(wins, 0, 1000 - wins), 0, 50)) < 1.0
    assert sprt_llr(Score(0, 0, 0), 0, 50) == 0.0
    # the verdict: where the ratio stands against the bounds
    from snake.arena.stats import sprt_verdict
    assert sprt_verdict(Score(23, 0, 0), 0, 50) == "H1"
    assert sprt_verdict(Score(8, 0, 0), 0, 50) == "undecided"
    assert sprt_verdict(Score(200, 0, 200), 0, 50) == "H0"
    assert sprt_verdict(Score(1, 0, 0), 0, 50) == sprt_verdict(Score(0, 0, 0), 0, 50) == "undecided"
