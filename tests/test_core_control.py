"""Compiled board control (snake.evaluation.compiled.control) against its reference, the
board-control evaluator of snake.evaluation.control.

The differential test plays the games of tests/games.py (every ruleset, 7x7 / 11x11 /
19x19, the hazard maps) with the reference rules, encodes every position (and every other
one again with the snakes hungry), and compares each snake's compiled value (all at once
and one at a time, with one workspace reused through the game), squares and food distance
with the reference's. Random small boards try every geometry; drawn boards check the
definition by hand.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import numpy as np
import pytest

from snake import core, rules
from snake.board import Board, Game, GameState, Snake
from snake.diagram import from_ascii
from snake.evaluation.compiled.control import (
    CONTESTED,
    LIMIT,
    control_value,
    control_values,
    ownership,
    partition_any_size,
    partition_two_words,
    workspace,
)
from snake.evaluation.compiled.control import board_control as compiled_control
from snake.evaluation.control import board_control
from snake.evaluation.control import control_values as reference_values
from snake.rules import start
from tests import games


def positions(seed: int):
    """Positions of the test games (tests/games.py), every other one also with every snake
    hungry."""
    rng = random.Random(seed)
    for state in games.positions(seed, count=10**9, max_turns=250):
        yield state
        if state.turn % 2:           # health 1..60, often < 8
            hungry = state.copy()
            for snake in hungry.board.snakes:
                snake.health = rng.randint(1, rng.choice((8, 60)))
            yield hungry


def test_compiled_control_equals_the_reference_over_20000_snake_positions():
    pairs = contested = eliminated = hazard_squares = 0   # pairs; positions; pairs; positions
    branches = Counter()     # the food and health terms of the values compared
    kinds = set()
    work = key = None
    for count, state in enumerate(positions(seed=20261124)):
        packed = core.encode(state)
        g, s = packed.g, packed.s
        if key != (state.game.ruleset.name, state.board.width, len(state.board.snakes)):
            key = (state.game.ruleset.name, state.board.width, len(state.board.snakes))
            work = workspace(g)      # reused by every position while the board is the same
        ids = tuple(snake.id for snake in state.board.snakes)
        expected = reference_values(state, ids)
        out = np.full(len(ids), np.nan)
        control_values(g, s, out, work)
        for i, sid in enumerate(ids):
            assert abs(out[i] - expected[sid]) <= 1e-12, (state.game.ruleset.name, state.turn, sid)
            assert abs(control_value(g, s, i, work) - expected[sid]) <= 1e-12
        pairs += len(ids)
        kinds.add((state.game.ruleset.name, state.game.map, state.board.width))
        owners = ownership(g, s, work)
        if count % 4 == 0:       # nothing left over from earlier positions in the workspace
            assert (ownership(g, s, workspace(g)) == owners).all()
        contested += bool((owners == CONTESTED).any())
        eliminated += sum(1 for snake in state.board.snakes if snake.eliminated_cause)
        hazard_squares += any(owners[y, x] >= 0 for x, y in state.board.hazards)
        control = board_control(state)
        assert compiled_control(g, s, work) == [control.get(sid) for sid in ids]
        for snake in state.board.living_snakes:
            squares, food = control[snake.id]
            if food is None:
                branches["no food, hungry"] += snake.health <= squares // 2 or snake.health < 15
            else:
                branches["food out of reach"] += snake.health < food
                branches["food next to a hungry head"] += food == 1 and snake.health < 50
                branches["food further, hungry"] += 1 < food <= snake.health < 50
        if pairs >= 20_000 and len(kinds) >= len(games.KINDS) * 3:
            break
    assert len(kinds) == len(games.KINDS) * 3
    assert contested >= 1000 and eliminated >= 1000 and hazard_squares >= 500
    assert len(branches) == 4 and min(branches.values()) >= 500, branches


def random_small_state(rng: random.Random, width: int = 0, height: int = 0) -> GameState:
    """A board of 1..6 x 1..6 squares (or ``width`` x ``height``), any ruleset's geometry,
    up to four snakes laid as random walks (some stacked, some eliminated), random food and
    hazards."""
    width, height = width or rng.randint(1, 6), height or rng.randint(1, 6)
    ruleset = start.make_ruleset(rng.choice(("standard", "wrapped", "constrictor",
                                             "wrapped_constrictor")))
    squares = [(x, y) for x in range(width) for y in range(height)]
    taken: set = set()
    snakes = []
    for k in range(rng.randint(1, 4)):
        free = [p for p in squares if p not in taken]
        if not free:
            break
        body = [rng.choice(free)]
        for _ in range(rng.randint(0, 5)):
            steps = [rules.step(body[-1], m, width, height, ruleset.wraps) for m in rules.MOVES]
            steps = [p for p in steps if p in squares and p not in taken and p not in body]
            if not steps:
                break
            body.append(rng.choice(steps))
        body += [body[-1]] * rng.choice((0, 0, 1, 2))
        dead = rng.random() < 0.15
        if not dead:
            taken.update(body)
        snakes.append(Snake(f"s{k}", body, rng.randint(1, 100), f"s{k}",
                            eliminated_cause="out-of-health" if dead else ""))
    food = rng.sample(squares, rng.randint(0, len(squares) // 3))
    hazards = rng.sample(squares, rng.randint(0, len(squares) // 2))
    return GameState(Game("small", ruleset), 5, Board(width, height, food, hazards, snakes))


def test_small_boards_of_every_shape_equal_the_reference():
    rng = random.Random(7)
    for _ in range(3000):
        state = random_small_state(rng)
        packed = core.encode(state)
        work = workspace(packed.g)
        ids = tuple(s.id for s in state.board.snakes)
        reference = board_control(state)
        assert compiled_control(packed.g, packed.s, work) == [reference.get(sid) for sid in ids]
        out = np.zeros(len(ids))
        control_values(packed.g, packed.s, out, work)
        expected = reference_values(state, ids)
        assert out.tolist() == pytest.approx([expected[sid] for sid in ids], abs=1e-12)


def test_the_two_word_partition_divides_small_boards_as_the_any_size_one():
    """Boards of at most 128 squares (rows under 64) take the two-word partition; the
    any-size one, which the 19x19 games check against the reference, divides them alike
    (the owner of every square, the contested squares, each snake's squares and food
    distance): random small boards, rows of 7 to 63 squares, and the test games."""
    rng = random.Random(11)
    long_rows = ((w, rng.randint(1, 128 // w)) for w in (rng.randint(7, 63) for _ in range(500)))
    small = itertools.chain((random_small_state(rng) for _ in range(2000)),
                            (random_small_state(rng, w, h) for w, h in long_rows))
    played = (state for state in positions(seed=20261129) if state.board.width <= 11)
    compared = Counter()
    for state in itertools.chain(small, itertools.islice(played, 6000)):
        packed = core.encode(state)
        g, s = packed.g, packed.s
        if state.board.width * state.board.height > 128 or state.board.width >= 64:
            continue
        two, wide = workspace(g), workspace(g)
        assert np.array_equal(ownership(g, s, two, partition_two_words),
                              ownership(g, s, wide, partition_any_size))
        assert (compiled_control(g, s, two, partition_two_words)
                == compiled_control(g, s, wide, partition_any_size))
        compared[state.game.ruleset.name] += 1
        compared["contested"] += bool((ownership(g, s, two) == CONTESTED).any())
    assert compared["contested"] > 100 and {"standard", "wrapped", "constrictor", "royale",
                                             "squad", "solo"} <= set(compared)


def state_and_values(drawing: str, ruleset: str = "standard", **kw):
    state = from_ascii(drawing, ruleset, **kw).state
    packed = core.encode(state)
    work = workspace(packed.g)
    out = np.zeros(len(state.board.snakes))
    control_values(packed.g, packed.s, out, work)
    ids = tuple(s.id for s in state.board.snakes)
    assert out.tolist() == pytest.approx([reference_values(state, ids)[sid] for sid in ids],
                                         abs=1e-12)
    return state, packed, work, out


def test_a_drawn_board_with_a_hazard_food_and_low_health():
    # A (3 long) claims first; B's tail square frees on move 1, A's body on moves 2 and 3.
    # Move 1: A (0,2) (0,0); B (4,2) (4,0) (3,1). Move 2: A (1,2) (1,0); B (3,2) (3,0)
    # (2,1). Move 3: A (1,1) (2,2) (2,0): B reaches (2,2) and (2,0) too, but is shorter.
    state, packed, work, out = state_and_values("""
    . . * . .
    A a a b B
    ~ . . . .
    """, health={"A": 2, "B": 10})
    assert ownership(packed.g, packed.s, work)[::-1].tolist() == [
        [0, 0, 0, 1, 1],
        [0, 0, 1, 1, 1],
        [0, 0, 0, 1, 1]]
    assert board_control(state) == {"A": (6.25, 3), "B": (6.0, None)}
    edge = 0.5 * 0.25 / 15 + 0.25 * math.tanh(1 / 3)
    # A cannot reach its food (3 moves) on 2 health; B has no food and under 15 health.
    assert out[0] == pytest.approx(edge - 0.5, abs=1e-12)
    assert out[1] == pytest.approx(-edge - 0.5 * (1 - 0.10), abs=1e-12)


def test_equal_snakes_contest_and_stop_at_the_squares_they_reach_together():
    state, packed, work, out = state_and_values("""
    . . . . .
    A a . b B
    . . . . .
    """, health={"A": 40, "B": 100})
    # Move 2: both reach (2,1); move 3: (2,2) and (2,0) are reached by both, and the
    # contested (2,1) expands no further.
    assert ownership(packed.g, packed.s, work)[::-1].tolist() == [
        [0, 0, -2, 1, 1],
        [0, 0, -2, 1, 1],
        [0, 0, -2, 1, 1]]
    assert board_control(state) == {"A": (5.0, None), "B": (5.0, None)}
    assert out.tolist() == [0.0, 0.0]


def test_a_food_two_equal_snakes_reach_together_is_neither_s():
    """A and B, equally long, reach the food on the same move: the square is contested, so
    the food is nobody's (it was the food of whichever came first in board order), in
    either order of the board, in both partitions."""
    for drawing in ("""
    . . . . . . . . . . .
    . a a A . * . B b b .
    . . . . . . . . . . .
    """, """
    . . . . . . . . . . .
    . b b B . * . A a a .
    . . . . . . . . . . .
    """):
        state, packed, work, out = state_and_values(drawing, health={"A": 40, "B": 40})
        assert ownership(packed.g, packed.s, work)[::-1].tolist()[1][5] == -2
        control = board_control(state)
        assert control["A"][1] is None and control["B"][1] is None
        compiled = compiled_control(packed.g, packed.s, work)
        assert [c[1] for c in compiled if c is not None] == [None, None]


def test_a_wrapped_row_and_an_eliminated_snake_that_blocks_nothing():
    request = from_ascii("A a . B .", "wrapped")
    state = request.state
    # C died where B would go: its body is not an obstacle.
    state.board.snakes.append(Snake("C", [(2, 0), (2, 0)], 0, "C", eliminated_cause="out-of-health",
                                    eliminated_on_turn=3))
    packed = core.encode(state)
    work = workspace(packed.g)
    out = np.zeros(3)
    control_values(packed.g, packed.s, out, work)
    # A (2 long) takes (4,0) across the edge and its own tail square; B (2,0) only; up and
    # down lead back to the same square on a one-row board, which is no neighbour.
    assert ownership(packed.g, packed.s, work).tolist() == [[0, 0, 1, 1, 0]]
    edge = 0.5 * 1 / 5 + 0.25 * math.tanh(1 / 3)
    assert out.tolist() == pytest.approx([edge, -edge, -LIMIT], abs=1e-12)
    assert out.tolist() == pytest.approx(
        list(reference_values(state, ("A", "B", "C")).values()), abs=1e-12)
    assert control_value(packed.g, packed.s, 2, work) == -LIMIT


@pytest.mark.parametrize("drawing,ruleset", [
    ("A B", "wrapped"), ("A . B .", "wrapped"), ("A\n.\nB", "wrapped_constrictor"),
    ("A B\na b\n. .", "wrapped"), ("A . .\n. . .\n. . B", "wrapped"),
    ("A . .\n. . .\n. . B", "standard"),
    ("a A\nb B", "constrictor"), ("A", "standard"), ("A", "wrapped"),
])
def test_tiny_boards_equal_the_reference(drawing, ruleset):
    state_and_values(drawing, ruleset)


def test_styles_weigh_the_terms_and_the_default_is_the_reference():
    """A style only reweighs board control's terms: the default is the reference's value
    (the tests above), a grower values length more, a space-taker squares more, a hunter
    values cramped shorter opponents."""
    from snake.diagram import from_ascii
    from snake.evaluation.compiled.control import control_value
    from snake.evaluation.control import STYLES
    request = from_ascii("""
        . . . . . . .
        . A a a a . .
        . . . . a . .
        . . . . . . .
        B b . . . . .
        . b . . . . .
        . . . . . . .
    """)
    packed = core.encode(request.state)
    values = {style: control_value(packed.g, packed.s, 0, workspace(packed.g, style))
              for style in STYLES}
    from snake.evaluation.control import control_values as reference_values
    reference = reference_values(request.state, ("A",))["A"]
    assert abs(values["default"] - reference) < 1e-12
    # A is longer (5 against 3): the grower's length weight raises its value
    assert values["grower"] > values["default"]
    assert values["space"] != values["default"]
    assert set(STYLES) == {"default", "grower", "hunter", "space", "hungry"}


# A (3 long) owns no food: the one food is B's (10 long), 11 moves from A's head.
SHUT_IN = """
    . . . . . . *
    . . . . . . .
    b b b b . . .
    . . . b . . .
    a a . b . . .
    A . . b . . .
    . . . b b B .
"""


def test_a_hungry_snake_owning_no_food_counts_the_distance_to_any():
    """The hungry style is the grower's weights, plus, for a snake that owns no food, a
    penalty of ``hunger * min(1, (margin - (health - d)) / margin)`` once its health is
    within the margin of ``d``, the distance from its head to the nearest food: a snake
    that has fallen behind still heads for food before its health runs out."""
    from snake.diagram import from_ascii
    from snake.evaluation.compiled.control import control_value
    from snake.evaluation.control import HUNGER_MARGIN, STYLES
    hunger = STYLES["hungry"][-1]
    assert STYLES["hungry"][:-1] == STYLES["grower"][:-1] and hunger > 0
    d = 11
    for health, penalty in ((d + HUNGER_MARGIN + 5, 0.0), (d + HUNGER_MARGIN, 0.0),
                            (d + 22, hunger * 3 / HUNGER_MARGIN),
                            (d + 19, hunger * 6 / HUNGER_MARGIN)):
        packed = core.encode(from_ascii(SHUT_IN, health={"A": health, "B": 90}).state)
        grower = control_value(packed.g, packed.s, 0, workspace(packed.g, "grower"))
        hungry = control_value(packed.g, packed.s, 0, workspace(packed.g, "hungry"))
        assert hungry == pytest.approx(grower - penalty, abs=1e-12), health
    # B owns the food: its own value is the grower's
    packed = core.encode(from_ascii(SHUT_IN, health={"A": 20, "B": 30}).state)
    assert (control_value(packed.g, packed.s, 1, workspace(packed.g, "hungry"))
            == control_value(packed.g, packed.s, 1, workspace(packed.g, "grower")))


def test_a_hungry_value_keeps_apart_what_the_clamp_merges():
    """Far behind, the grower's value is clamped to -0.999 whatever the health; the hungry
    style squashes it smoothly instead, so more health is still better, and a living snake
    is still above one that is not alive (-0.999)."""
    from snake.diagram import from_ascii
    from snake.evaluation.compiled.control import LIMIT, control_value
    values = {}
    for health in (10, 5, 2):
        packed = core.encode(from_ascii(SHUT_IN, health={"A": health, "B": 90}).state)
        assert control_value(packed.g, packed.s, 0, workspace(packed.g, "grower")) == -LIMIT
        values[health] = control_value(packed.g, packed.s, 0, workspace(packed.g, "hungry"))
    assert -LIMIT < values[2] < values[5] < values[10] < -0.9


def test_the_hunter_likes_a_shorter_snake_cramped():
    """B (5 long, its tail stacked) is shut in a corner smaller than itself by A (6 long):
    the hunter values that more than the default does, beyond what its larger length weight
    adds."""
    from snake.diagram import from_ascii
    from snake.evaluation.compiled.control import control_value
    request = from_ascii("""
        B b a . . . .
        . b a . . . .
        a a a . . . .
        A . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, stacked={"B": 2})
    packed = core.encode(request.state)
    default = control_value(packed.g, packed.s, 0, workspace(packed.g, "default"))
    hunter = control_value(packed.g, packed.s, 0, workspace(packed.g, "hunter"))
    length_part = (0.35 - 0.25) * math.tanh((6 - 5) / 3.0)
    assert hunter - default - length_part > 0.01
