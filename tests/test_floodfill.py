"""Flood fill (SPEC §2 step 4) on boards drawn as ASCII."""

from snake.diagram import from_ascii
from snake.floodfill import best_move, flood_fill_scores, room
from snake.strategies import get_strategy

# B just ate? Then its tail (0,3) stays and splits the board in two.
SPLIT = """
    . . . . .
    b b b b B
    . . A . .
    . . a . .
    . . a . .
"""


def scores(drawing, ruleset="standard", **kw):
    game = from_ascii(drawing, ruleset, **kw)
    return flood_fill_scores(game.state, game.you)


def test_regions_split_by_a_body():
    s = scores(SPLIT, stacked={"B": 1})
    # Below B: 15 squares minus A's head and neck (A's tail (2,0) moves away) = 13.
    assert s == {"up": 0.0, "down": 0.0, "left": 13.0, "right": 13.0}


def test_a_moving_tail_opens_the_way():
    s = scores(SPLIT)
    # B's tail (0,3) is free after the move and joins the top row: 13 + 1 + 5.
    assert s["left"] == s["right"] == 19.0


def test_the_room_of_a_snake_is_every_region_its_moves_enter():
    """B's body (its tail stacked: it just ate) cuts the board: A can reach the 13 squares
    below it; B, whose head touches both parts, those and the 5 of the top row. With B's
    tail moving, the parts join and A's room is B's."""
    game = from_ascii(SPLIT, stacked={"B": 1})
    board = game.state.board
    below = room(game.state, board.snake("A"))
    assert len(below) == 13
    assert room(game.state, board.snake("B")) == below | {4 * 5 + x for x in range(5)}
    game = from_ascii(SPLIT)
    board = game.state.board
    assert room(game.state, board.snake("A")) == room(game.state, board.snake("B"))
    assert len(room(game.state, board.snake("A"))) == 19


def test_food_is_worth_the_health_it_restores_and_hazards_a_sixteenth():
    drawing = """
        * . .
        . A .
        . a a
    """
    # A's tail (2,0) moves away: every square but (1,1) and (1,0) is reachable.
    assert scores(drawing, health={"A": 40})["up"] == 6 + 60
    assert scores(drawing, health={"A": 100})["up"] == 6 + 0
    with_hazard = scores(drawing, health={"A": 40}, hazards=[(2, 2), (2, 2)])
    assert with_hazard["up"] == 5 + 1 / 16 + 60  # stacked hazard squares count once
    food_on_hazard = scores(drawing, health={"A": 40}, hazards=[(0, 2)])
    assert food_on_hazard["up"] == 6 + 60


def test_wrapped_regions_join_across_edges():
    drawing = """
        . B . .
        . b . .
        A b . .
        a b . .
        a a . .
    """
    # B just ate: its whole body stays. A's tail (1,0) moves away.
    standard = scores(drawing, "standard", stacked={"B": 1})
    # Standard: up reaches only (0,3) and (0,4); left is off the board.
    assert standard["up"] == 2.0 and standard["left"] == 0.0
    wrapped = scores(drawing, "wrapped", stacked={"B": 1})
    # Wrapped: (0,4) wraps left onto (3,4), and left itself wraps to (3,2): both reach the
    # two right columns (10), A's old tail (1,0) and (0,3), (0,4): 13.
    assert wrapped["left"] == wrapped["up"] == 13.0


def test_constrictor_tails_stay():
    drawing = """
        . . . . .
        b b b b B
        . . A . .
        . . a . .
        . . a . .
    """
    s = scores(drawing, "constrictor")
    # Both tails stay: B's cuts off the top row, A's whole body the bottom middle column,
    # leaving two 2x3 pockets (in standard, A's tail would join them: 13).
    assert s["left"] == s["right"] == 6.0
    assert scores(drawing, "standard")["left"] == 19.0


def test_ties_break_up_down_left_right():
    game = from_ascii("""
        . . .
        . A .
        . . .
    """, stacked={"A": 2}, turn=0)
    s = flood_fill_scores(game.state, game.you)
    assert len(set(s.values())) == 1
    assert best_move(s, ("down", "left", "right", "up")) == "up"
    assert best_move(s, ("right", "left")) == "left"
    assert get_strategy("floodfill").choose(game, None).move == "up"


def test_seed_without_accumulator_plays_the_biggest_region():
    game = from_ascii(SPLIT, stacked={"B": 1})
    decision = get_strategy("seed").choose(game, None)
    assert decision.move == "left"  # 13 == 13: left before right
    assert decision.method == "flood fill"
    big = from_ascii("""
        . . . . . .
        . . . . . .
        b b b b B .
        . A . . . .
        . a a . . .
    """, stacked={"B": 1})
    d = get_strategy("seed").choose(big, None)
    # left enters the pocket {(0,1), (0,0)}; right the rest of the board.
    assert d.scores["left"] == 2.0
    assert d.scores["right"] == 21.0
    assert d.move == "right"


def test_food_decides_between_equal_regions():
    game = from_ascii("""
        . . . . .
        b b b b B
        . . A . *
        . . a . .
        . . a . .
    """, stacked={"B": 1}, health={"A": 50})
    s = flood_fill_scores(game.state, game.you)
    # The food is on the same region for left and right: equal.
    assert s["left"] == s["right"] == 12 + 50
