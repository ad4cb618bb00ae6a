"""The rules engine on drawn boards: every elimination cause, every mode stage."""

from __future__ import annotations

import random

import pytest

from snake.board import GameState, Settings
from snake.diagram import from_ascii
from snake.rules import apply_rules, is_game_over, outcome, play_turn
from snake.rules.start import new_game


def board(drawing: str, ruleset: str = "standard", **kwargs) -> GameState:
    return from_ascii(drawing, ruleset, **kwargs).state


def snake(state: GameState, snake_id: str):
    s = state.board.snake(snake_id)
    assert s is not None
    return s


def eliminated(state: GameState, snake_id: str) -> tuple[str, str, int]:
    s = snake(state, snake_id)
    return (s.eliminated_cause, s.eliminated_by, s.eliminated_on_turn)


# ---------------------------------------------------------------------------------------
# Movement, health, feeding


def test_move_drops_tail_and_costs_one_health():
    state = board("""
        . . . . .
        . A a a .
        . . . . .
        . . . . .
        B b b . .
    """, health={"A": 50})
    after = apply_rules(state, {"A": "up", "B": "up"})
    assert snake(after, "A").body == [(1, 4), (1, 3), (2, 3)]
    assert snake(after, "A").health == 49
    assert snake(after, "B").body == [(0, 1), (0, 0), (1, 0)]
    assert after.turn == state.turn  # apply_rules does not advance the turn


def test_input_state_is_untouched():
    state = board("""
        . * . . .
        . A a a .
        . . . . .
        . . . . .
        B b b . .
    """)
    before = state.copy()
    apply_rules(state, {"A": "up", "B": "up"})
    assert state == before


def test_missing_or_invalid_move_repeats_last_move():
    state = board("""
        . . . . . .
        . a A . . .
        . . . . . .
        . . . . B .
        . . . . b .
        . . . . . .
    """)
    after = apply_rules(state, {"B": "sideways"})
    assert snake(after, "A").head == (3, 4)  # last move right, from head and neck
    assert snake(after, "B").head == (4, 3)  # last move up


def test_first_move_of_stacked_snake_defaults_up():
    state = board("""
        . . . . .
        . . . . .
        . A . B .
        . . . . .
        . . . . .
    """, stacked={"A": 2, "B": 2})
    after = apply_rules(state, {"B": "down"})
    assert snake(after, "A").body == [(1, 3), (1, 2), (1, 2)]


def test_eating_restores_health_and_grows_tail():
    state = board("""
        . * . . .
        . A a a .
        . . . . *
        . . . . .
        B b b . .
    """, health={"A": 30})
    after = apply_rules(state, {"A": "up", "B": "up"})
    a = snake(after, "A")
    assert a.health == 100
    assert a.body == [(1, 4), (1, 3), (2, 3), (2, 3)]
    assert after.board.food == [(4, 2)]


def test_two_snakes_eat_the_same_food():
    # A (4) and B (3) meet on the food: both eat, then B loses the head-to-head.
    state = board("""
        . . . . .
        a a a A .
        b b B * .
        . . . . .
        . . . . .
    """)
    after = apply_rules(state, {"A": "down", "B": "right"})
    a, b = snake(after, "A"), snake(after, "B")
    assert len(a.body) == 5 and a.health == 100 and a.alive
    assert len(b.body) == 4 and b.health == 100
    assert eliminated(after, "B") == ("head-collision", "A", state.turn + 1)
    assert after.board.food == []


def test_tail_chasing_is_safe_unless_the_tail_just_grew():
    drawing = """
        . . . .
        . A . .
        . . . .
        . . . .
    """
    # A curled in a square, its head next to its tail (a drawing cannot show which way
    # such a body runs, so it is given as a list).
    state = board(drawing, "solo")
    snake(state, "A").body = [(1, 2), (2, 2), (2, 1), (1, 1)]
    after = apply_rules(state, {"A": "down"})  # onto its own tail, which moves away
    assert snake(after, "A").alive
    ate = state.copy()
    snake(ate, "A").body.append((1, 1))
    after = apply_rules(ate, {"A": "down"})
    assert eliminated(after, "A") == ("snake-self-collision", "A", ate.turn + 1)


def test_other_snakes_tail_is_safe_unless_it_just_ate():
    drawing = """
        . . . . .
        . . . B .
        . A b b .
        . a . . .
        . a . . .
    """
    state = board(drawing)
    after = apply_rules(state, {"A": "right", "B": "up"})
    assert snake(after, "A").alive
    ate = board(drawing, stacked={"B": 1})
    after = apply_rules(ate, {"A": "right", "B": "up"})
    assert eliminated(after, "A") == ("snake-collision", "B", ate.turn + 1)


# ---------------------------------------------------------------------------------------
# Elimination causes


def test_wall_collision_keeps_off_board_head():
    state = board("""
        A a a .
        . . . .
        B b . .
        . . . .
    """)
    after = apply_rules(state, {"A": "up", "B": "down"})
    assert eliminated(after, "A") == ("wall-collision", "", state.turn + 1)
    assert snake(after, "A").body == [(0, 4), (0, 3), (1, 3)]
    assert snake(after, "B").alive


def test_self_collision():
    state = board("""
        . . . . .
        . A . . .
        . . . . .
        . . . . .
        . . . B b
    """)
    snake(state, "A").body = [(1, 3), (2, 3), (2, 2), (1, 2), (1, 1)]
    after = apply_rules(state, {"A": "down", "B": "up"})
    assert eliminated(after, "A") == ("snake-self-collision", "A", state.turn + 1)


def test_body_collision_is_credited_to_the_body_owner():
    state = board("""
        . . . . .
        . A . . .
        . b b B .
        . b . . .
        . . . . .
    """)
    after = apply_rules(state, {"A": "down", "B": "up"})
    assert eliminated(after, "A") == ("snake-collision", "B", state.turn + 1)
    assert snake(after, "B").alive


def test_head_to_head_shorter_dies():
    state = board("""
        . . . . . . .
        a a a A . B b
        . . . . . . b
        . . . . . . .
    """)
    after = apply_rules(state, {"A": "right", "B": "left"})
    assert eliminated(after, "B") == ("head-collision", "A", state.turn + 1)
    assert snake(after, "A").alive


def test_head_to_head_equal_lengths_both_die():
    state = board("""
        . . . . .
        a A . B b
        . . . . .
    """)
    after = apply_rules(state, {"A": "right", "B": "left"})
    assert eliminated(after, "A") == ("head-collision", "B", state.turn + 1)
    assert eliminated(after, "B") == ("head-collision", "A", state.turn + 1)
    assert is_game_over(after)
    assert outcome(after, "A") == outcome(after, "B") == "draw"


def test_head_to_head_of_three_is_credited_to_the_longest():
    state = board("""
        . . b . .
        . . B . .
        a A . C c
        . . . . c
        . . . . c
    """)
    after = apply_rules(state, {"A": "right", "B": "down", "C": "left"})
    assert eliminated(after, "A") == ("head-collision", "C", state.turn + 1)
    assert eliminated(after, "B") == ("head-collision", "C", state.turn + 1)
    assert snake(after, "C").alive


def test_body_collision_and_head_to_head_in_one_turn_are_applied_together():
    # B runs into A's body while A wins a head-to-head against C: all decided on the
    # moved bodies, then applied at once.
    state = board("""
        . . . . . .
        a a A . C c
        . . B . . .
        . . b . . .
    """)
    after = apply_rules(state, {"A": "right", "B": "up", "C": "left"})
    assert eliminated(after, "B") == ("snake-collision", "A", state.turn + 1)
    assert eliminated(after, "C") == ("head-collision", "A", state.turn + 1)
    assert snake(after, "A").alive


def test_out_of_health():
    state = board("""
        . * . .
        . A . .
        . a . .
        . . B b
    """, health={"A": 1, "B": 1})
    after = apply_rules(state, {"A": "up", "B": "left"})
    assert snake(after, "A").alive and snake(after, "A").health == 100  # ate in time
    assert eliminated(after, "B") == ("out-of-health", "", state.turn + 1)
    assert snake(after, "B").health == 0


def test_hazard_damage_and_hazard_elimination():
    state = board("""
        . ~ . . @ .
        . A . . B .
        . a . . b .
        . . . C c .
    """, health={"A": 50, "B": 5, "C": 10})
    state.board.hazards.append((3, 1))
    after = apply_rules(state, {"A": "up", "B": "up", "C": "up"})
    assert snake(after, "A").health == 50 - 1 - 14
    assert snake(after, "B").health == 100  # food on the hazard: no damage, then eats
    assert eliminated(after, "C") == ("hazard", "", state.turn + 1)
    assert snake(after, "C").health == 0


def test_stacked_hazards_damage_once_per_copy():
    state = board("""
        . ~ . .
        . A . .
        . a . .
        . . B b
    """, health={"A": 90})
    state.board.hazards.append((1, 3))
    after = apply_rules(state, {"A": "up", "B": "left"})
    assert snake(after, "A").health == 90 - 1 - 2 * 14


def test_hazard_damage_uses_the_settings():
    settings = Settings(hazard_damage_per_turn=30)
    state = board("""
        . ~ . .
        . A . .
        . a . .
        . . B b
    """, health={"A": 90}, settings=settings)
    after = apply_rules(state, {"A": "up", "B": "left"})
    assert snake(after, "A").health == 59


def test_eliminated_snakes_stay_frozen():
    state = board("""
        A a a .
        . . . .
        . . . .
        B b b .
    """)
    after = apply_rules(state, {"A": "up", "B": "up"})
    frozen = snake(after, "A").body
    later = apply_rules(after, {"B": "up"})
    assert snake(later, "A").body == frozen
    assert eliminated(later, "A") == eliminated(after, "A")


# ---------------------------------------------------------------------------------------
# Modes


def test_constrictor_grows_every_snake_every_turn_and_removes_food():
    state = board("""
        . * . . .
        . A . . .
        . . . . .
        . . . B .
        . . . b .
    """, "constrictor", stacked={"A": 2}, health={"A": 40, "B": 40})
    after = apply_rules(state, {"A": "right", "B": "up"})
    # A's first move from a stacked start: tail still doubled, so no extra growth.
    assert snake(after, "A").body == [(2, 3), (1, 3), (1, 3)]
    # B's tail moved, so it grows: the tail is duplicated.
    assert snake(after, "B").body == [(3, 2), (3, 1), (3, 1)]
    assert snake(after, "A").health == snake(after, "B").health == 100
    assert after.board.food == []


def test_constrictor_grows_eliminated_snakes_too():
    state = board("""
        A a . .
        . . . .
        . . B b
        . . . .
    """, "constrictor")
    after = apply_rules(state, {"A": "up", "B": "left"})
    a = snake(after, "A")
    assert a.eliminated_cause == "wall-collision"
    assert a.body == [(0, 4), (0, 3), (0, 3)] and a.health == 100


def test_wrapped_heads_come_back_on_the_opposite_edge():
    state = board("""
        . . . .
        A a . .
        . . . b
        . . . B
    """, "wrapped")
    after = apply_rules(state, {"A": "left", "B": "down"})
    assert snake(after, "A").head == (3, 2)
    assert snake(after, "B").head == (3, 3)  # wrapped from the bottom row to the top
    assert snake(after, "A").alive and snake(after, "B").alive


def test_wrapped_collision_across_the_edge():
    state = board("""
        . . . b
        . . . b
        A a . B
        . . . .
    """, "wrapped")
    after = apply_rules(state, {"A": "left", "B": "down"})
    assert eliminated(after, "A") == ("snake-collision", "B", state.turn + 1)


def test_wrapped_constrictor_wraps_and_grows():
    state = board("""
        A a . .
        . . . .
        . . B b
        . . . .
    """, "wrapped_constrictor")
    after = apply_rules(state, {"A": "up", "B": "left"})
    assert snake(after, "A").alive and snake(after, "A").head == (0, 0)
    assert len(snake(after, "A").body) == 3


ROYALE = Settings(shrink_every_n_turns=25)


def test_royale_shrinks_one_side_on_a_shrink_turn():
    drawing = """
        . . . . .
        . . . . .
        . A a . .
        . . . . .
        . . B b .
    """
    state = board(drawing, "royale", turn=24, settings=ROYALE)
    after = apply_rules(state, {"A": "up", "B": "up"}, royale_side=0)
    after.turn += 1
    assert after.board.hazards == [(0, y) for y in range(5)]  # left column
    # the new hazards hurt from the next turn on
    assert snake(after, "A").health == 99
    after2 = apply_rules(after, {"A": "left", "B": "up"})
    assert snake(after2, "A").health == 99 - 1 - 14
    assert after2.board.hazards == after.board.hazards  # not a shrink turn
    top = apply_rules(after, {"A": "up", "B": "up"}, royale_side=3)
    assert top.board.hazards == after.board.hazards  # turn 25 is no shrink turn either
    later = board(drawing, "royale", turn=49, settings=ROYALE)
    later.board.hazards = list(after.board.hazards)
    shrunk = apply_rules(later, {"A": "up", "B": "up"}, royale_side=3)
    assert set(shrunk.board.hazards) == set(after.board.hazards) | {(x, 4) for x in range(5)}


def test_royale_has_no_hazards_before_the_first_shrink():
    state = board("""
        . . . .
        . A a .
        . . . .
        B b . .
    """, "royale", turn=5, hazards=[(3, 3)], settings=ROYALE)
    after = apply_rules(state, {"A": "up", "B": "up"}, royale_side=1)
    assert after.board.hazards == []


def test_royale_play_turn_draws_the_side_from_the_rng():
    state = board("""
        . . . . .
        . . . . .
        . A a . .
        . . . . .
        . . B b .
    """, "royale", turn=24, settings=ROYALE)
    after = play_turn(state, {"A": "up", "B": "up"}, random.Random(3))
    assert after.turn == 25
    assert len(after.board.hazards) == 5


SQUAD = Settings(allow_body_collisions=True, shared_elimination=True,
                 shared_health=True, shared_length=True)


def test_squad_mates_pass_through_each_other():
    state = board("""
        . . . . .
        . A . . .
        . b b B .
        . b . . .
        . . . . .
    """, "squad", squads={"A": "red", "B": "red"}, settings=SQUAD)
    after = apply_rules(state, {"A": "down", "B": "up"})
    assert snake(after, "A").alive
    assert eliminated(after, "A") == ("", "", 0)


def test_squad_body_collision_with_an_enemy_still_counts_and_eliminates_the_squad():
    state = board("""
        . . . . . .
        . A . . . .
        . b b B . .
        . b . . . .
        . . . . C c
    """, "squad", squads={"A": "red", "B": "blue", "C": "red"}, settings=SQUAD)
    after = apply_rules(state, {"A": "down", "B": "up", "C": "left"})
    assert eliminated(after, "A") == ("snake-collision", "B", state.turn + 1)
    assert eliminated(after, "C") == ("squad-eliminated", "", state.turn + 1)
    assert is_game_over(after)
    assert outcome(after, "B") == "win"
    assert outcome(after, "A") == outcome(after, "C") == "loss"


def test_squad_head_to_head_between_mates_still_counts():
    state = board("""
        . . . . .
        a A . B b
        . . . . .
        . . . C c
    """, "squad", squads={"A": "red", "B": "red", "C": "blue"}, settings=SQUAD)
    after = apply_rules(state, {"A": "right", "B": "left", "C": "down"})
    assert eliminated(after, "A")[0] == "head-collision"
    assert eliminated(after, "B")[0] == "head-collision"


def test_squad_shares_health_and_length():
    state = board("""
        . * . . . .
        . A . . . .
        . a . . . .
        . . . . B .
        . . . . b .
        D d d . . C
    """, "squad", squads={"A": "red", "B": "red", "C": "blue", "D": "blue"},
        health={"A": 20, "B": 70, "C": 60, "D": 30}, stacked={"C": 2}, settings=SQUAD)
    after = apply_rules(state, {"A": "up", "B": "up", "C": "up", "D": "up"})
    a, b = snake(after, "A"), snake(after, "B")
    assert a.health == b.health == 100  # A ate: the squad gets its health
    assert len(a.body) == len(b.body) == 3  # and its new length
    c, d = snake(after, "C"), snake(after, "D")
    assert c.health == d.health == 59
    assert len(c.body) == len(d.body) == 3


def test_squad_without_shared_elimination_keeps_mates():
    settings = Settings(allow_body_collisions=True)
    state = board("""
        A a a . . .
        . . . . . .
        . . . B b b
        . . . . . .
        C c c . . .
    """, "squad", squads={"A": "red", "B": "red", "C": "blue"}, settings=settings)
    after = apply_rules(state, {"A": "up", "B": "up", "C": "up"})
    assert snake(after, "A").eliminated_cause == "wall-collision"
    assert snake(after, "B").alive


# ---------------------------------------------------------------------------------------
# Game over and outcome


def test_game_over_rules():
    two = board("""
        . . . .
        A a . .
        . . . .
        B b . .
    """)
    assert not is_game_over(two)
    after = apply_rules(two, {"A": "up", "B": "left"})
    assert is_game_over(after)  # B hit the wall
    assert outcome(after, "A") == "win" and outcome(after, "B") == "loss"
    # once over, the rule stages change nothing
    assert apply_rules(after, {"A": "up"}) == after
    with pytest.raises(ValueError):
        outcome(two, "A")

    solo = board("""
        . . . .
        . A a .
        . . . .
    """, "solo")
    assert not is_game_over(solo)
    gone = apply_rules(solo, {"A": "up"})
    assert not is_game_over(gone)
    gone = apply_rules(gone, {"A": "up"})
    assert is_game_over(gone) and outcome(gone, "A") == "loss"

    squad = board("""
        . . . .
        A a . .
        . . . .
        B b . .
    """, "squad", squads={"A": "x", "B": "x"}, settings=SQUAD)
    assert is_game_over(squad)


def test_draw_only_for_snakes_dying_on_the_final_turn():
    state = board("""
        . . . . . .
        a A . . B b
        . . . . . .
        C c . . . .
    """)
    after = apply_rules(state, {"A": "right", "B": "left", "C": "left"})
    after.turn += 1
    assert not is_game_over(after)  # C died at the wall; A and B go on
    final = apply_rules(after, {"A": "right", "B": "left"})
    assert is_game_over(final)
    assert outcome(final, "A") == outcome(final, "B") == "draw"
    assert outcome(final, "C") == "loss"


# ---------------------------------------------------------------------------------------
# Whole turns


def test_play_turn_advances_the_turn_and_spawns_minimum_food():
    state = board("""
        . . . . .
        . A a . .
        . . . . .
        . . . . .
        B b . . .
    """, turn=7)
    assert state.board.food == []
    after = play_turn(state, {"A": "up", "B": "up"}, random.Random(0))
    assert after.turn == 8
    assert len(after.board.food) == 1  # minimumFood 1
    fx, fy = after.board.food[0]
    for s in after.board.living_snakes:
        hx, hy = s.head
        assert abs(fx - hx) + abs(fy - hy) >= 2
        assert (fx, fy) not in s.body


def test_empty_map_never_spawns_food():
    state = board("""
        . . . . .
        . A a . .
        . . . . .
        . . . . .
        B b . . .
    """)
    state.game.map = "empty"
    rng = random.Random(0)
    for _ in range(20):
        state = play_turn(state, {"A": "right" if state.turn % 2 else "left", "B": "up"
                                  if state.turn % 2 else "down"}, rng)
    assert state.board.food == []


def test_unknown_map_is_refused():
    state = board("""
        . A a
        . . .
        B b .
    """)
    state.game.map = "no-such-map"
    with pytest.raises(ValueError, match="unknown map"):
        play_turn(state, {"A": "down", "B": "up"}, random.Random(0))


def _play(seed: int, ruleset: str, map_id: str = "standard") -> GameState:
    rng = random.Random(seed)
    state = new_game(ruleset, 11, 11, ["a", "b", "c", "d"], map=map_id, rng=rng,
                     squads=["1", "1", "2", "2"] if ruleset == "squad" else None)
    moves_rng = random.Random(seed + 1000)
    while not is_game_over(state) and state.turn < 400:
        moves = {s.id: moves_rng.choice(("up", "down", "left", "right"))
                 for s in state.board.living_snakes}
        state = play_turn(state, moves, rng)
    return state


def test_a_game_of_one_snake_is_played_as_solo_whatever_the_ruleset():
    """The official CLI plays one snake (``battlesnake play`` with one URL) with the solo
    game-over test in any ruleset: the game goes on until that snake is out, and the
    compiled core and the search play it so."""
    from snake import core
    from snake.search.strategy import SearchStrategy
    drawing = """
        . . . . . . .
        . . . . . . .
        . A a a . . .
        . . . . . . .
        . . . . . . .
    """
    for ruleset in ("standard", "royale", "wrapped", "constrictor"):
        state = board(drawing, ruleset=ruleset)
        assert not is_game_over(state)
        packed = core.encode(state)
        assert not core.step.is_game_over(packed.g, packed.s)
        after = apply_rules(state, {"A": "left"})
        assert snake(after, "A").body[0] == (0, 2) and not is_game_over(after)
        out = apply_rules(after, {"A": "left"})
        if ruleset != "wrapped":
            assert snake(out, "A").eliminated_cause == "wall-collision" and is_game_over(out)
            assert outcome(out, "A") == "loss"
    from snake.diagram import from_ascii
    result = SearchStrategy(engine="compiled", max_depth=6, think_ms=60_000).search(
        from_ascii(drawing))
    assert result.stopped != "proven" and result.depth == 6 and abs(result.score) < 1


@pytest.mark.parametrize("ruleset,map_id", [
    ("standard", "standard"), ("royale", "standard"), ("constrictor", "standard"),
    ("wrapped", "hz_spiral"), ("squad", "standard"), ("standard", "royale"),
    ("solo", "hz_rings"),
])
def test_games_reproduce_from_their_seed(ruleset, map_id):
    first, again = _play(7, ruleset, map_id), _play(7, ruleset, map_id)
    assert first == again
    assert is_game_over(first) or first.turn == 400
    others = [_play(seed, ruleset, map_id) for seed in (8, 9, 10)]
    assert any(o != first for o in others)


def test_play_turn_on_a_finished_game_only_runs_the_map_and_the_turn():
    state = board("""
        . . . .
        A a . .
        . . . .
        . . B b
    """, turn=3)
    # B fell on an earlier turn: a duel down to one snake is over
    snake(state, "B").eliminated_cause, snake(state, "B").eliminated_on_turn = "wall-collision", 2
    assert is_game_over(state)
    after = play_turn(state, {"A": "up"}, random.Random(0))
    assert after.turn == 4
    assert snake(after, "A").body == snake(state, "A").body
    assert len(after.board.food) == 1  # the standard map still keeps its minimum food
