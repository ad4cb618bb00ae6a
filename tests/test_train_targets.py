"""Training targets (SPEC section 5) on hand-built finished games, and the data generator's
games: random snakes through the rules engine, every living snake's view recorded."""

import numpy as np
import pytest

from snake.diagram import from_ascii
from snake.seed import random_move
from training.datagen import data_game, record_game, snake_counts
from training.targets import game_targets


def finished(drawing, ruleset="standard", *, eliminated, squads=None, turn=12):
    """A drawn board where the snakes in ``eliminated`` (letter -> turn) are dead."""
    state = from_ascii(drawing, ruleset, squads=squads, turn=turn).state
    for letter, on_turn in eliminated.items():
        snake = state.board.snake(letter)
        snake.eliminated_cause = "wall-collision"
        snake.eliminated_on_turn = on_turn
    return state


BOARD = """
. . . . .
. A a a .
. . . . .
. B b b .
. C c c .
"""


def test_win_and_loss():
    state = finished(BOARD, eliminated={"B": 12, "C": 5})
    assert game_targets(state, {"A": 12, "B": 12, "C": 5}) == {"A": 1.0, "B": 0.0, "C": 0.0}


def test_draw_when_every_snake_left_dies_on_the_final_turn():
    # B and C were both alive before turn 12 and both died on it; A died earlier.
    state = finished(BOARD, eliminated={"A": 7, "B": 12, "C": 12})
    assert game_targets(state, {"A": 7, "B": 12, "C": 12}) == {"A": 0.0, "B": 0.5, "C": 0.5}


def test_solo_target_is_moves_over_one_hundred_capped_at_one():
    drawing = """
    . . . .
    . A a .
    . . . .
    """
    state = finished(drawing, "solo", eliminated={"A": 37})
    assert game_targets(state, {"A": 37}) == {"A": pytest.approx(0.37)}
    state = finished(drawing, "solo", eliminated={"A": 250})
    assert game_targets(state, {"A": 250}) == {"A": 1.0}


def test_squad_wins_together_even_a_member_that_died_earlier():
    drawing = """
    . . . . . .
    . A a a . .
    . B b b . .
    . C c c . .
    . D d d . .
    """
    squads = {"A": "red", "B": "red", "C": "blue", "D": "blue"}
    state = finished(drawing, "squad", squads=squads, eliminated={"B": 4, "C": 9, "D": 9})
    got = game_targets(state, {"A": 9, "B": 4, "C": 9, "D": 9})
    assert got == {"A": 1.0, "B": 1.0, "C": 0.0, "D": 0.0}


def test_random_snake_never_moves_back_onto_its_neck():
    state = from_ascii("""
    . . . .
    . A a .
    . . . .
    """).state
    snake = state.board.snake("A")
    import random
    rng = random.Random(3)
    moves = {random_move(state, snake, rng) for _ in range(200)}
    assert moves == {"up", "down", "left"}
    # stacked at turn 0: the neck is the head's own square, all four moves are open
    start = from_ascii(". . .\n. A .\n. . .", stacked={"A": 2}).state
    s = start.board.snake("A")
    assert {random_move(start, s, rng) for _ in range(200)} == {"up", "down", "left", "right"}


def test_snake_counts_per_ruleset_and_board():
    assert snake_counts("solo", 19) == [1]
    assert snake_counts("standard", 7) == [2, 3, 4]
    assert snake_counts("wrapped", 11) == list(range(2, 9))
    assert snake_counts("squad", 7) == [4]
    assert snake_counts("squad", 19) == [4, 6, 8]


@pytest.mark.parametrize("number", range(18))
def test_played_games_record_each_living_snake_with_its_result(number):
    spec = data_game(5, number)
    game = record_game(spec)
    assert not game.capped
    assert len(game.features) == len(game.moves) == len(game.snake_ids) > 0
    assert set(game.targets) == {f"s{i}" for i in range(spec.snakes)}
    if spec.ruleset == "solo":
        # the same target for every position: min(moves made / 100, 1)
        assert game.targets["s0"] == min(len(game.moves) / 100, 1.0)
    else:
        assert set(game.targets.values()) <= {0.0, 0.5, 1.0}
        assert sum(t == 1.0 for t in game.targets.values()) <= (2 if spec.ruleset == "squad" else 1)
    # positions of a turn: one per snake alive at that turn, each seen from that snake
    for feats in game.features:
        assert feats.dtype == np.int32 and np.all(np.diff(feats) > 0)
    turns = np.array(game.turns)
    assert np.all(np.diff(turns) >= 0)
    assert game.length == turns.max() + 1


def test_data_game_is_deterministic_and_covers_every_block():
    specs = [data_game(9, n) for n in range(36)]
    assert specs == [data_game(9, n) for n in range(36)]
    assert {(s.ruleset, s.side) for s in specs[:18]} == {
        (r, b) for r in ("standard", "constrictor", "royale", "wrapped", "solo", "squad")
        for b in (7, 11, 19)}
    assert all(s.snakes in snake_counts(s.ruleset, s.side) for s in specs)
    splits = [data_game(9, n).split for n in range(2000)]
    assert 0.02 < splits.count("test") / 2000 < 0.08
    assert 0.02 < splits.count("val") / 2000 < 0.08


def test_data_games_of_a_seed_are_pinned():
    """Game ``n`` of a seed is the same game whatever the code's internals: a data set
    can be regenerated or extended (these were drawn before the block layout moved to
    :mod:`nnue.features`)."""
    pinned = [
        (1, 0, "standard", 7, 3, "train"), (1, 1, "standard", 11, 7, "train"),
        (1, 17, "squad", 19, 4, "train"), (1, 18, "standard", 7, 2, "train"),
        (1, 33, "squad", 7, 4, "test"), (1, 38, "standard", 19, 3, "test"),
        (1, 40, "constrictor", 11, 5, "train"), (1, 50, "solo", 19, 1, "val"),
        (1, 94, "constrictor", 11, 8, "val"), (3, 2, "standard", 19, 3, "train"),
        (7, 5, "constrictor", 19, 8, "train"), (7, 123, "squad", 7, 4, "train"),
        (7, 9999, "wrapped", 7, 4, "train"),
    ]
    for seed, n, ruleset, side, snakes, split in pinned:
        g = data_game(seed, n)
        assert (g.ruleset, g.side, g.snakes, g.split) == (ruleset, side, snakes, split)
        assert g.seed == f"nuppeppou-datagen/{seed}/{n}"
