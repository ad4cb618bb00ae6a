"""The compiled turn step (snake.core) against the reference rules (snake.rules).

The differential test plays whole games of every ruleset, board size and the hazard maps
with the reference engine; the compiled core is encoded once per game and then steps on its
own, and after every turn its decoded state must equal the reference's field by field
(every snake's body in order, health, elimination cause, by and turn; food and hazards in
order; turn). The piece changes it reports must turn the position's pieces into the next
position's. Perft (tests/data/perft.jsonl) walks every joint move to a depth with both.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from snake import core, rules
from snake.board import GameState, Snake
from snake.core.state import G_BODY, G_CAPACITY, G_LENGTH, EncodeError
from snake.diagram import from_ascii
from snake.perft import check, read
from tests.games import choose_moves, new_game

PERFT = Path(__file__).parent / "data" / "perft.jsonl"

def rule_fields(state: GameState) -> tuple:
    snakes = [(s.id, s.body, s.health, s.eliminated_cause, s.eliminated_by, s.eliminated_on_turn)
              for s in state.board.snakes]
    return state.turn, snakes, state.board.food, state.board.hazards


def pieces(state: GameState, pw: int) -> Counter:
    """The position's pieces as the change report names them: (snake index or -1, cell, piece)."""
    def cell(p):
        return (p[1] + 1) * pw + p[0] + 1
    width, height = state.board.width, state.board.height
    out: Counter = Counter()
    for i, s in enumerate(state.board.snakes):
        if not s.alive:
            continue
        out[(i, cell(s.head), core.step.HEAD)] += 1
        for a, b in zip(s.body, s.body[1:]):
            dx, dy = a[0] - b[0], a[1] - b[1]
            if state.ruleset.wraps:
                dx = -1 if dx == width - 1 else 1 if dx == 1 - width else dx
                dy = -1 if dy == height - 1 else 1 if dy == 1 - height else dy
            piece = {(-1, 0): core.step.LEFT, (1, 0): core.step.RIGHT, (0, -1): core.step.DOWN,
                     (0, 1): core.step.UP, (0, 0): core.step.UNDER}[(dx, dy)]
            out[(i, cell(b), piece)] += 1
    for p in state.board.food:
        out[(-1, cell(p), core.step.FOOD)] += 1
    for p in state.board.hazards:
        out[(-1, cell(p), core.step.HAZARD)] += 1
    return out


def play_differential(seed: int, target_turns: int) -> tuple[int, int]:
    """Games until ``target_turns`` turns are checked; returns (turns, reports checked)."""
    rng = random.Random(seed)
    turns = reports = game = 0
    while turns < target_turns:
        state = new_game(game, rng)
        ruleset, map_name = state.game.ruleset.name, state.game.map
        side = state.board.width
        style = game % 2
        game += 1
        packed = core.encode(state)
        pw = side + 2
        while not rules.is_game_over(state) and state.turn < 600:
            moves = choose_moves(state, rng, style)
            side_drawn = None
            if ruleset == "royale" and rules.stages.is_royale_shrink_turn(
                    state.turn, state.game.ruleset.settings.shrink_every_n_turns):
                side_drawn = rng.randrange(4)
            after_rules = rules.apply_rules(state, moves, royale_side=side_drawn)
            report = turns % 5 == 0
            stepped, changes = core.apply_rules(packed, moves, royale_side=side_drawn,
                                                report=report)
            assert rule_fields(core.decode(stepped)) == rule_fields(after_rules), \
                f"{ruleset} {map_name} {side}x{side}, turn {state.turn}, moves {moves}"
            if report:
                expected = pieces(after_rules, pw)
                got = pieces(state, pw)
                for sign, snake, cell, piece in changes.tolist():
                    got[(snake, cell, piece)] += sign
                assert +got == expected and not -got, f"{ruleset} turn {state.turn}: report"
                reports += 1
            # The map stage (random food, map hazards) is the reference's; hand its outcome on.
            after = after_rules.copy()
            rules_food = list(after.board.food)
            rng_map = random.Random(rng.random())
            from snake.rules.maps import get_map
            get_map(state.game.map).update(after, rng_map)
            after.turn += 1
            spawned = after.board.food[len(rules_food):]
            assert after.board.food[:len(rules_food)] == rules_food
            hazards = (after.board.hazards if after.board.hazards != after_rules.board.hazards
                       else None)
            packed = core.end_turn(stepped, spawned, hazards)
            state = after
            turns += 1
    return turns, reports


def test_the_compiled_step_equals_the_reference_over_100000_turns():
    turns, reports = play_differential(seed=20261123, target_turns=100_000)
    assert turns >= 100_000 and reports >= 20_000


@pytest.mark.parametrize("line", read(PERFT), ids=lambda line: line["name"])
@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_perft(line, engine):
    assert check(line, engine) == ""


def test_perft_notices_a_different_engine(monkeypatch):
    line = read(PERFT)[0]
    real = rules.apply_rules

    def wrong(state, moves, **kw):   # starvation forgotten
        after = real(state, moves, **kw)
        for s in after.board.snakes:
            s.health += 1
        return after
    monkeypatch.setattr("snake.perft.apply_rules", wrong)
    assert "expected" in check(line, "reference")


def test_encode_and_decode_round_trip_eliminated_snakes_and_stacks():
    state = from_ascii("""
    . . . . .
    . a A * .
    . a . ~ .
    . . B b .
    . . . . .
    """, "standard").state
    gone = Snake("C", [(-1, 2), (0, 2), (0, 2)], 0, "c", eliminated_cause="wall-collision",
                 eliminated_on_turn=3)
    state.board.snakes.append(gone)
    state.board.snakes[0].body.append(state.board.snakes[0].body[-1])   # a stacked tail
    state.board.hazards.append(state.board.hazards[0])                   # a stacked hazard
    assert rule_fields(core.decode(core.encode(state))) == rule_fields(state)


def test_what_the_core_cannot_hold_is_refused():
    state = from_ascii("""
    . . .
    A a .
    . . .
    """).state
    state.board.snakes[0].body.append((2, 0))          # not a neighbour of (1, 1)
    with pytest.raises(EncodeError, match="not neighbours"):
        core.encode(state)
    state.board.snakes[0].body[-1] = (5, 5)
    with pytest.raises(EncodeError, match="off the board"):
        core.encode(state)
    state.board.snakes[0].body.pop()
    state.board.snakes[0].eliminated_cause = "gone fishing"
    with pytest.raises(EncodeError, match="unknown elimination cause"):
        core.encode(state)


def test_a_body_that_outgrows_its_buffer_is_an_error():
    state = from_ascii("""
    . . .
    A * .
    . . .
    """, "solo").state
    packed = core.encode(state)
    g, s = packed.g, packed.s
    s[g[G_LENGTH]] = g[G_CAPACITY]                    # pretend it is as long as the buffer
    s[g[G_BODY]:g[G_BODY] + g[G_CAPACITY]] = s[g[G_BODY]]
    with pytest.raises(OverflowError):
        core.apply_rules(packed, {"A": "right"})


def test_a_finished_game_does_not_move():
    state = from_ascii("""
    . . .
    A a .
    . . .
    B b .
    """).state
    # B fell on an earlier turn: a duel down to one snake is over (one snake alone from
    # the start would be played as solo, tests/test_rules.py)
    state.board.snake("B").eliminated_cause = "wall-collision"
    packed = core.encode(state)
    after, changes = core.apply_rules(packed, {"A": "right"}, report=True)
    assert np.array_equal(after.s, packed.s) and len(changes) == 0
