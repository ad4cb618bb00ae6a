"""The move filter (SPEC §2 step 1) on boards drawn as ASCII."""

from snake.board import Settings
from snake.diagram import from_ascii
from snake.moves import BODY, DEAD, HEALTH, NECK, RISKY, WALL, filter_moves
from snake.strategies import get_strategy


def verdict(drawing, ruleset="standard", **kw):
    game = from_ascii(drawing, ruleset, **kw)
    return filter_moves(game.state, game.you)


def test_walls_and_neck_in_a_corner():
    f = verdict("""
        A a a . .
        . . . . .
    """)
    assert f.allowed == ("down",)
    assert f.removed == {"up": WALL, "left": WALL, "right": NECK}


def test_stacked_start_has_no_neck_to_avoid():
    f = verdict("""
        . . .
        . A .
        . . .
    """, stacked={"A": 2}, turn=0)
    assert f.allowed == ("up", "down", "left", "right")


def test_own_body_blocks_but_own_moving_tail_does_not():
    game = from_ascii("""
        . . . .
        . . . .
        . A . .
        . . . .
    """)
    you = game.you
    # A coiled body: head (1,1), neck (1,2), then around to the tail at (0,1).
    you.body = [(1, 1), (1, 2), (2, 2), (2, 1), (2, 0), (1, 0), (0, 0), (0, 1)]
    f = filter_moves(game.state, you)
    assert f.removed == {"up": NECK, "down": BODY, "right": BODY}
    assert f.allowed == ("left",)  # the tail square moves away this turn


def test_own_stacked_tail_stays():
    game = from_ascii("""
        . . . .
        . A . .
        . . . .
    """)
    you = game.you
    you.body = [(1, 1), (1, 2), (2, 2), (2, 1), (2, 0), (1, 0), (0, 0), (0, 1), (0, 1)]
    f = filter_moves(game.state, you)
    assert f.removed["left"] == BODY
    assert f.allowed == ()


def test_other_body_blocks_and_its_moving_tail_is_free():
    drawing = """
        . . . . .
        . b B . .
        . b A . .
        . b a . .
        . . a . .
    """
    f = verdict(drawing)
    # left (1,2) is B's body; up (2,3) is B's head (its neck after the move).
    assert f.removed["left"] == BODY and f.removed["up"] == BODY and f.removed["down"] == NECK
    assert f.allowed == ("right",)
    # B's tail at (1,1): free while B does not eat, occupied when it just ate.
    tail_drawing = """
        . . . . .
        . . . . .
        b b A . .
        b . a . .
        B . a . .
    """
    assert verdict(tail_drawing).allowed == ("up", "left", "right")
    # B (4 segments) is longer than A (3), but its head (0,0) is not next to (1,2).
    stacked = verdict(tail_drawing, stacked={"B": 1})
    assert stacked.removed["left"] == BODY
    assert stacked.allowed == ("up", "right")


def test_constrictor_tails_never_move():
    drawing = """
        . . . .
        b b A .
        B . a .
        . . a .
    """
    assert "left" in verdict(drawing, "standard").allowed
    f = verdict(drawing, "constrictor")
    assert f.removed["left"] == BODY
    assert verdict(drawing, "wrapped_constrictor").removed["left"] == BODY


def test_head_to_head_against_longer_equal_and_shorter():
    # A (length 3) at (2,2); B's head at (4,2): the square (3,2) is next to it.
    three = """
        . . . . .
        . . . . .
        . . A . B
        . . a . b
        . . a . b
    """
    two = """
        . . . . .
        . . . . .
        . . A . B
        . . a . b
        . . a . .
    """
    for drawing, extra in ((three, {"B": 1}), (three, {})):  # longer (4), equal (3)
        f = verdict(drawing, stacked=extra)
        assert f.removed["right"] == RISKY and f.risky == ("right",)
        assert f.allowed == ("up", "left")
    shorter = verdict(two)
    assert shorter.allowed == ("up", "left", "right") and shorter.risky == ()


def test_risky_moves_kept_when_nothing_else_is_left():
    f = verdict("""
        . B . .
        A . . .
        a . . .
        a . . .
        . . . .
    """, stacked={"B": 3})
    # up (0,4) and right (1,3) are both next to B's head (1,4); left is the wall.
    assert f.risky == ("up", "right")
    assert f.allowed == ("up", "right")
    assert f.removed == {"down": NECK, "left": WALL}


def test_squadmates_are_no_threat_and_passable_with_body_collisions():
    drawing = """
        . . . . .
        . b B . .
        . b A . .
        . b a . .
        . . a . .
    """
    squads = {"A": "red", "B": "red"}
    blocked = verdict(drawing, "squad", squads=squads)
    assert blocked.removed["left"] == BODY
    settings = Settings(allow_body_collisions=True)
    passable = verdict(drawing, "squad", squads=squads, settings=settings)
    assert passable.allowed == ("up", "left", "right")
    # The same snakes in different squads: B is a body again and a threat (longer).
    foes = verdict(drawing, "squad", squads={"A": "red", "B": "blue"}, settings=settings)
    assert foes.removed["left"] == BODY


def test_squadmate_head_is_not_risky():
    drawing = """
        . . . . .
        . . A . B
        . . a . b
        . . a . b
    """
    assert verdict(drawing).removed.get("right") == RISKY
    mates = verdict(drawing, "squad", squads={"A": "s", "B": "s"})
    assert "right" in mates.allowed and mates.risky == ()


def test_wrapped_edges():
    drawing = """
        . . . A
        . . . a
        . . . a
        b b B .
    """
    standard = verdict(drawing, "standard")
    assert standard.removed == {"up": WALL, "right": WALL, "down": NECK}
    wrapped = verdict(drawing, "wrapped")
    # up wraps to (3,0) and left is (2,3): both next to B's head (2,0) across the bottom
    # edge, and B is as long as A. right wraps to (0,3): free.
    assert wrapped.removed == {"up": RISKY, "left": RISKY, "down": NECK}
    assert wrapped.allowed == ("right",)


def test_wrapped_move_into_a_body_across_the_edge():
    drawing = """
        . . . .
        B . . .
        b . . A
        b . . a
        b . . a
    """
    standard = verdict(drawing, "standard")
    assert standard.removed == {"right": WALL, "down": NECK}
    wrapped = verdict(drawing, "wrapped")
    # right wraps to (0,2), B's body; up (3,3) is next to B's head (0,3) across the edge.
    assert wrapped.removed == {"right": BODY, "up": RISKY, "down": NECK}
    assert wrapped.allowed == ("left",)


def test_hazard_damage_and_food_on_hazard():
    drawing = """
        . . . .
        . A . .
        . a . .
        . a . .
    """
    # health 15: 15 - 1 - 14 = 0 on a hazard square: dead; elsewhere fine.
    f = verdict(drawing, health={"A": 15}, hazards=[(2, 2)])
    assert f.removed["right"] == HEALTH
    assert f.allowed == ("up", "left")
    g = from_ascii(drawing, health={"A": 15}, hazards=[(2, 2)])
    g.state.board.food.append((2, 2))
    assert "right" in filter_moves(g.state, g.you).allowed


def test_stacked_hazards_damage_once_per_copy():
    drawing = """
        . . . .
        . A . .
        . a . .
        . a . .
    """
    two = verdict(drawing, health={"A": 30}, hazards=[(2, 2), (2, 2)])
    assert "right" in two.allowed  # 30 - 1 - 28 = 1
    three = verdict(drawing, health={"A": 30}, hazards=[(2, 2)] * 3)
    assert three.removed["right"] == HEALTH
    custom = verdict(drawing, health={"A": 30}, hazards=[(2, 2)],
                     settings=Settings(hazard_damage_per_turn=29))
    assert custom.removed["right"] == HEALTH


def test_starving_snake_must_eat():
    f = verdict("""
        . * . .
        . A . .
        . a . .
        . a . .
    """, health={"A": 1})
    assert f.allowed == ("up",)
    assert f.removed == {"down": NECK, "left": HEALTH, "right": HEALTH}


def test_a_snake_that_starves_whatever_it_plays_blocks_nothing():
    """The rules eliminate by health before they look for collisions: B, at health 1 with
    no food in reach, is gone before A's head reaches its body, so A's one way out is
    through it (every strategy takes it; the search's move generation, compiled, too); and
    a longer B about to starve is no head-to-head threat. With food in B's reach it could
    live, and its body blocks as ever."""
    boxed = """
        A b b b . . .
        a b . b . . .
        a a . B . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """
    f = verdict(boxed, health={"B": 1})
    assert f.allowed == ("right",) and f.removed == {"up": WALL, "down": NECK, "left": WALL}
    for name in ("seed", "floodfill", "search"):
        assert get_strategy(name).choose(from_ascii(boxed, health={"B": 1}), None).move == "right"
    fed = verdict(boxed.replace("a a . B", "a a * B"), health={"B": 1})
    assert fed.allowed == () and fed.removed["right"] == BODY
    threat = """
        . . . . .
        . . . . .
        . . A . B
        . . a . b
        . . a . b
    """
    assert verdict(threat, stacked={"B": 1}, health={"B": 1}).allowed == ("up", "left", "right")
    assert verdict(threat, stacked={"B": 1}, health={"B": 2}).risky == ("right",)


def test_no_safe_move_answers_up():
    game = from_ascii("""
        b b b
        a A b
        a C B
    """, stacked={"C": 1})  # C: two stacked segments, its square stays occupied
    f = filter_moves(game.state, game.you)
    assert f.allowed == ()
    assert get_strategy("seed").choose(game, None).move == "up"
    assert get_strategy("floodfill").choose(game, None).move == "up"


def test_you_not_on_the_board():
    game = from_ascii("""
        . . .
        . A .
        . a .
        . B .
    """)
    game.state.board.snakes.remove(game.you)
    game.you.eliminated_cause = "not-on-board"
    f = filter_moves(game.state, game.you)
    assert f.allowed == () and set(f.removed.values()) == {DEAD}
    assert get_strategy("seed").choose(game, None).move == "up"
