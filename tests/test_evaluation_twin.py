"""The compiled evaluator (snake.evaluation.compiled.control) against its readable reference
(snake.evaluation.control, and snake.evaluation.value_head.head_value for a head's forward
pass), term for term: every style's value, the measurements and a learned head's value.

The positions are the test games of tests/games.py (every ruleset: standard and its hazard
maps, constrictor, royale, wrapped, wrapped_constrictor, solo, squad; 7x7 / 11x11 / 19x19;
1 to 4 snakes) and crowded games of 5 to 8 snakes, every other position also with every
snake's health drawn low (1..60, often below 8), where the starving and hunger terms play.
On each: every style's value of every snake; the measurements by one style (each in turn);
and the value through one head (each in turn: the shipped weights/value-duel.npz, random
heads plain and residual), compared with the reference to 1e-9 (relative).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import numpy as np

from snake import core
from snake.evaluation.compiled.control import control_value, control_values, measure, workspace
from snake.evaluation.control import (
    HUNGER_MARGIN,
    MEASUREMENTS,
    N_MEASUREMENTS,
    SOFT,
    STYLES,
    BoardControlEvaluator,
    nearest_food,
    partition,
)
from snake.evaluation.control import control_value as reference_value
from snake.evaluation.control import measure as reference_measure
from snake.evaluation.value_head import ValueHead, head_value, load_head
from snake.rules import is_game_over, play_turn
from snake.rules.start import new_game
from tests import games

ROOT = Path(__file__).resolve().parents[1]
POSITIONS = 10_000


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def random_head(seed: int, hidden: int, residual: bool, style: str) -> ValueHead:
    rng = np.random.default_rng(seed)
    return ValueHead(rng.normal(0, 1, (hidden, N_MEASUREMENTS)), rng.normal(0, 0.3, hidden),
                     rng.normal(0, 1, hidden), float(rng.normal(0, 0.5)), style=style,
                     residual=residual)


#: (head, the style of its ``value`` input): the shipped head, random heads plain and residual.
HEADS = (
    (load_head(ROOT / "weights" / "value-duel.npz"), "default"),
    (random_head(1, 5, False, "default"), "default"),
    (random_head(2, 4, True, "hungry"), "hungry"),
    (random_head(3, 3, True, "hunter"), "hunter"),
    (random_head(4, 6, False, "grower"), "grower"),
)


def crowded(seed: int):
    """Games of 5 to 8 snakes on 11x11 and 19x19 (standard and wrapped), every turn."""
    rng = random.Random(seed)
    number = 0
    while True:
        n, side = rng.randint(5, 8), rng.choice((11, 19))
        state = new_game(rng.choice(("standard", "wrapped")), side, side,
                         [f"s{k}" for k in range(n)], rng=rng)
        style = number % 2
        number += 1
        while not is_game_over(state) and state.turn < 150:
            yield state
            state = play_turn(state, games.choose_moves(state, rng, style), rng)


def positions(seed: int, count: int):
    """``count`` positions: the test games' and, one in eight, crowded games'; every other
    one with the snakes' health drawn low."""
    rng = random.Random(seed)
    plain, many = games.positions(seed, count=10**9, max_turns=250), crowded(seed)
    for k in range(count):
        state = next(many) if k % 8 == 7 else next(plain)
        if k % 2:
            state = state.copy()
            for snake in state.board.snakes:
                snake.health = rng.randint(1, rng.choice((8, 60)))
        yield state


def test_the_compiled_evaluator_equals_its_reference_over_10000_positions():
    works: dict = {}

    def work(g, key, style, head=None):
        k = (key, style, None if head is None else id(head))
        if k not in works:        # one workspace per board and evaluator, reused
            works[k] = workspace(g, style, None if head is None else head.fields())
        return works[k]

    seen = Counter()
    styles = tuple(STYLES)
    for count, state in enumerate(positions(20261128, POSITIONS)):
        packed = core.encode(state)
        g, s = packed.g, packed.s
        board = state.board
        key = (state.game.ruleset.name, board.width, len(board.snakes))
        ids = [snake.id for snake in board.snakes]
        part = partition(state)
        where = (state.game.ruleset.name, board.width, state.turn, count)
        out = np.full(len(ids), np.nan)
        for style in styles:
            control_values(g, s, out, work(g, key, style))
            for i, sid in enumerate(ids):
                expected = reference_value(state, sid, style, part=part)
                assert close(out[i], expected), (where, style, sid, out[i], expected)
        style = styles[count % len(styles)]
        head, head_style = HEADS[count % len(HEADS)]
        measured = np.zeros(N_MEASUREMENTS)
        for i, snake in enumerate(board.snakes):
            measure(g, s, i, work(g, key, style), measured)
            valued = control_value(g, s, i, work(g, key, head_style, head))
            if snake.eliminated_cause:
                assert not measured.any() and valued == reference_value(state, snake.id, head=head)
                seen["eliminated"] += 1
                continue
            expected = reference_measure(state, snake.id, style, part)
            for name, a, b in zip(MEASUREMENTS, measured, expected):
                assert close(a, b), (where, style, snake.id, name, a, b)
            expected = reference_value(state, snake.id, head_style, head, part)
            assert close(valued, expected), (where, head_style, snake.id, valued, expected)
            seen[f"head {count % len(HEADS)}"] += 1
            seen[f"{style} measured"] += 1
            _tally(seen, state, snake, part)
        seen[("ruleset", state.game.ruleset.name)] += 1
        seen[("size", board.width)] += 1
        seen[("snakes", min(len(board.living_snakes), 5))] += 1
    # What the positions covered: every ruleset, size, snake count, and term.
    assert {k[1] for k in seen if k[0] == "ruleset"} == {
        "standard", "constrictor", "royale", "wrapped", "solo", "squad", "wrapped_constrictor"}
    assert {k[1] for k in seen if k[0] == "size"} == {7, 11, 19}
    assert min(seen[("snakes", n)] for n in range(1, 6)) >= 200, seen
    terms = ("starving", "short of food", "food distance", "hunger", "hunger in full",
             "squashed", "hunted", "eliminated", "risky", "prey", "tail not its own")
    assert min(seen[t] for t in terms) >= 100, {t: seen[t] for t in terms}
    assert min(seen[f"head {k}"] for k in range(len(HEADS))) >= 1000


def _tally(seen: Counter, state, snake, part) -> None:
    """Count the terms that played for ``snake`` (so that the test shows it compared them)."""
    squares, food, hp = part.squares[snake.id], part.food[snake.id], snake.health
    if food is None:
        seen["starving"] += hp <= squares // 2 or hp < 15
        d = nearest_food(state, snake.id)
        seen["hunger"] += d is not None and hp - d < HUNGER_MARGIN
        seen["hunger in full"] += d is not None and hp - d <= 0
    else:
        seen["short of food"] += hp < food
        seen["food distance"] += food <= hp < 50
    seen["squashed"] += abs(reference_value(state, snake.id, "hungry", part=part)) > SOFT
    seen["hunted"] += any(len(o.body) < len(snake.body) and part.squares[o.id] < len(o.body)
                          for o in part.snakes)
    x = dict(zip(MEASUREMENTS, reference_measure(state, snake.id, "default", part)))
    seen["risky"] += x["risky"] > 0
    seen["prey"] += x["prey"] > 0
    seen["tail not its own"] += x["tail"] == 0


def test_the_head_forward_pass_by_hand():
    """One hidden unit, weights chosen so the pass can be followed by hand."""
    w1 = np.zeros((2, N_MEASUREMENTS))
    w1[0, 1], w1[1, 7] = 2.0, -1.0          # own, health
    head = ValueHead(w1, np.array([0.5, -0.2]), np.array([1.5, 3.0]), -0.25)
    x = np.zeros(N_MEASUREMENTS)
    x[0], x[1], x[7] = 0.4, 0.3, 0.6
    # hidden: relu(0.6 + 0.5) = 1.1, relu(-0.6 - 0.2) = 0; z = 1.65 - 0.25 = 1.4
    assert math.isclose(head_value(head, x), math.tanh(1.4 / 2))
    residual = ValueHead(w1, head.b1, head.w2, head.b2, residual=True)
    assert math.isclose(head_value(residual, x), math.tanh(math.atanh(0.4) + 1.4 / 2))
    # the compiled head sees weights in millionths: so does the reference
    fine = ValueHead(w1 + 1e-8, head.b1, head.w2, head.b2)
    assert head_value(fine, x) == head_value(head, x)


def test_the_readable_search_plays_a_style():
    state = next(s for s in games.positions(3, count=200) if len(s.board.living_snakes) == 3)
    sid = state.board.snakes[0].id
    for style in STYLES:
        assert BoardControlEvaluator(style).value(None, state, sid) == \
            reference_value(state, sid, style)
    assert BoardControlEvaluator().value(None, state, sid) == reference_value(state, sid)


def test_the_compiled_twin_has_every_stage_of_the_reference_by_name():
    """A twin: each term the reference defines is a compiled function of the same name
    (private where only the compiled module calls it), and the data are the reference's."""
    from snake.evaluation import control as reference
    from snake.evaluation import value_head
    from snake.evaluation.compiled import control as twin
    stages = ("partition", "board_control", "ownership", "style_value", "nearest_food", "soft",
              "measure", "around_head", "control_value", "control_values")
    missing = [name for name in stages
               if not (hasattr(twin, name) or hasattr(twin, "_" + name))
               or not hasattr(reference, name)]
    assert not missing and hasattr(value_head, "head_value") and hasattr(twin, "_head_value")
    for name in ("STYLES", "HUNGER_MARGIN", "SOFT", "LIMIT", "N_MEASUREMENTS"):
        assert getattr(twin, name) is getattr(reference, name), name
