"""Game setup and maps: start positions, starting food, hazards, reproducibility."""

from __future__ import annotations

import random

import pytest

from snake.board import GameState
from snake.diagram import from_ascii
from snake.rules import is_game_over, play_turn
from snake.rules.maps import MAPS, food_spawn_squares, get_map, spiral_square
from snake.rules.start import SetupError, make_ruleset, new_game


def ids(n: int) -> list[str]:
    return [f"s{i}" for i in range(n)]


def heads(state: GameState) -> list[tuple[int, int]]:
    return [s.head for s in state.board.snakes]


def test_fixed_start_positions_up_to_eight_snakes():
    corners = {(1, 1), (1, 9), (9, 1), (9, 9)}
    cardinals = {(1, 5), (5, 1), (5, 9), (9, 5)}
    state = new_game("standard", 11, 11, ids(8), rng=random.Random(1))
    assert set(heads(state)) == corners | cardinals
    for s in state.board.snakes:
        assert s.body == [s.head] * 3 and s.health == 100 and s.alive
    # the first four snakes take all the corners or all the cardinal spots
    seen_first = set()
    for seed in range(40):
        first4 = set(heads(new_game("standard", 11, 11, ids(4), rng=random.Random(seed))))
        assert first4 in (corners, cardinals)
        seen_first.add(frozenset(first4))
    assert len(seen_first) == 2


def test_starting_food_next_to_each_snake_and_in_the_centre():
    for seed in range(30):
        state = new_game("standard", 11, 11, ids(4), rng=random.Random(seed))
        food = state.board.food
        assert len(food) == 5 and food[-1] == (5, 5)
        for (hx, hy), (fx, fy) in zip(heads(state), food):
            assert abs(hx - fx) == 1 and abs(hy - fy) == 1  # a diagonal neighbour
            assert (fx, fy) not in {(0, 0), (0, 10), (10, 0), (10, 10)}
            # further from the centre than the head on at least one axis
            assert abs(fx - 5) > abs(hx - 5) or abs(fy - 5) > abs(hy - 5)


def test_small_board_with_many_snakes_gets_only_centre_food():
    state = new_game("standard", 7, 7, ids(6), rng=random.Random(2))
    assert state.board.food == [(3, 3)]
    big = new_game("standard", 19, 19, ids(8), rng=random.Random(2))
    assert len(big.board.food) == 9


def test_many_snakes_are_distributed_over_the_quadrants():
    state = new_game("standard", 19, 19, ids(12), rng=random.Random(3))
    spots = heads(state)
    assert len(set(spots)) == 12
    quadrant = [(x > 9) + 2 * (y > 9) for x, y in spots]
    assert sorted(quadrant.count(q) for q in range(4)) == [3, 3, 3, 3]
    # snakes rotate through the quadrants: any four consecutive snakes use all four
    assert all(len(set(quadrant[i:i + 4])) == 4 for i in range(9))


def test_odd_boards_place_snakes_randomly_on_even_squares():
    for seed in range(10):
        state = new_game("standard", 8, 13, ids(5), rng=random.Random(seed))
        spots = heads(state)
        assert len(set(spots)) == 5
        for x, y in spots:
            assert (x + y) % 2 == 0 and (x, y) != (3, 6)
            assert 0 <= x < 8 and 0 <= y < 13
        assert len(state.board.food) == 5
        assert not set(state.board.food) & set(spots)


def test_setup_refuses_impossible_games():
    with pytest.raises(SetupError, match="at most 8"):
        new_game("standard", 5, 5, ids(9), rng=random.Random(0))
    with pytest.raises(SetupError, match="at most 16"):
        new_game("standard", 25, 25, ids(17), rng=random.Random(0))
    with pytest.raises(SetupError, match="unique"):
        new_game("standard", 11, 11, ["a", "a"], rng=random.Random(0))
    with pytest.raises(SetupError, match="unknown map"):
        new_game("standard", 11, 11, ["a", "b"], map="lava", rng=random.Random(0))
    with pytest.raises(SetupError, match="squads"):
        new_game("squad", 11, 11, ["a", "b"], squads=["x"], rng=random.Random(0))
    with pytest.raises(ValueError):
        new_game("standard", 0, 11, ["a", "b"], rng=random.Random(0))


def test_squads_names_and_game_fields():
    state = new_game("squad", 11, 11, ["a", "b", "c", "d"], squads=["1", "1", "2", "2"],
                     rng=random.Random(0), game_id="g1", timeout=300, map="empty")
    assert [s.squad for s in state.board.snakes] == ["1", "1", "2", "2"]
    assert state.game.id == "g1" and state.game.timeout == 300 and state.game.map == "empty"
    settings = state.game.ruleset.settings
    assert settings.allow_body_collisions and settings.shared_elimination
    assert settings.shared_health and settings.shared_length
    assert state.board.food == []  # the empty map has no food, even at the start
    assert state.turn == 0


def test_make_ruleset_turns_the_squad_settings_on_and_keeps_the_rest():
    from snake.board import Settings
    mine = Settings(food_spawn_chance=30, minimum_food=2)
    squad = make_ruleset("squad", mine, version="arena")
    assert squad.version == "arena" and squad.settings.food_spawn_chance == 30
    assert squad.settings.minimum_food == 2
    assert squad.settings.allow_body_collisions and squad.settings.shared_elimination
    assert squad.settings.shared_health and squad.settings.shared_length
    assert not mine.allow_body_collisions          # the caller's settings are not changed
    assert make_ruleset("standard", mine).settings == mine
    assert make_ruleset("standard").settings == Settings()


def test_new_game_reproduces_from_its_seed():
    a = new_game("standard", 11, 11, ids(4), rng=random.Random(42))
    b = new_game("standard", 11, 11, ids(4), rng=random.Random(42))
    assert a == b
    assert any(new_game("standard", 11, 11, ids(4), rng=random.Random(s)) != a
               for s in range(43, 50))


# ---------------------------------------------------------------------------------------
# Maps


def test_static_hazard_maps():
    rings = new_game("standard", 11, 11, ids(2), map="hz_rings", rng=random.Random(0))
    hz = set(rings.board.hazards)
    assert (1, 1) in hz and (9, 9) in hz and (5, 1) in hz  # ring inset 2
    assert (3, 3) in hz and (7, 5) in hz                  # ring inset 4
    assert (0, 0) not in hz and (2, 2) not in hz and (5, 5) not in hz
    assert len(rings.board.hazards) == len(hz) == 32 + 16

    wall = new_game("standard", 11, 11, ids(2), map="hz_inner_wall", rng=random.Random(0))
    assert len(wall.board.hazards) == 32 and (1, 5) in wall.board.hazards

    columns = new_game("standard", 7, 7, ids(2), map="hz_columns", rng=random.Random(0))
    assert set(columns.board.hazards) == {(x, y) for x in (1, 3, 5) for y in (1, 3, 5)}
    assert columns.board.food  # standard food as well


def test_spiral_grows_every_three_turns_around_its_centre():
    assert [spiral_square((5, 5), i) for i in range(1, 10)] == [
        (5, 6), (6, 6), (6, 5), (6, 4), (5, 4), (4, 4), (4, 5), (4, 6), (4, 7)]
    rng = random.Random(5)
    state = new_game("solo", 11, 11, ["a"], map="hz_spiral", rng=rng)
    loop = ["right", "right", "up", "up", "left", "left", "down", "down"]
    hazards_by_turn = {}
    while state.turn < 12:
        state = play_turn(state, {"a": loop[state.turn % len(loop)]}, rng)
        hazards_by_turn[state.turn] = list(state.board.hazards)
    assert hazards_by_turn[2] == []
    centre = hazards_by_turn[3][0]
    assert len(hazards_by_turn[3]) == 1 and 3 <= centre[0] <= 7 and 3 <= centre[1] <= 7
    assert hazards_by_turn[5] == hazards_by_turn[3]
    assert hazards_by_turn[6] == [centre, spiral_square(centre, 1)]
    assert hazards_by_turn[12] == [centre] + [spiral_square(centre, i) for i in (1, 2, 3)]


def test_royale_map_shrinks_with_the_standard_ruleset():
    rng = random.Random(9)
    state = new_game("standard", 7, 7, ["a", "b"], map="royale", rng=rng)
    state.board.snakes[0].body = [(3, 3), (3, 2), (3, 1)]
    state.board.snakes[1].body = [(5, 3), (5, 2), (5, 1)]
    state.turn = 24
    after = play_turn(state, {"a": "up", "b": "up"}, rng)
    assert len(after.board.hazards) == 7  # one row or column
    zone = {(x, y) for x in range(7) for y in range(7)} - set(after.board.hazards)
    assert len(zone) == 42


def test_the_royale_ruleset_is_refused_on_a_map_that_adds_hazards():
    """Its zone is read from the hazards, which hz_spiral's would corrupt; the engine's
    royale stage redraws the zone from its seed instead. Refused, not played otherwise.
    A static hazard map's hazards are emptied on the first turn, as the engine does."""
    adding = [m for m in MAPS if get_map(m).adds_hazards]
    assert adding == ["hz_spiral"]
    with pytest.raises(SetupError, match="royale ruleset on map 'hz_spiral'"):
        new_game("royale", 11, 11, ids(2), map="hz_spiral", rng=random.Random(0))
    new_game("standard", 11, 11, ids(2), map="hz_spiral", rng=random.Random(0))
    for map_id in (m for m in MAPS if m not in adding):
        rng = random.Random(0)
        state = new_game("royale", 11, 11, ids(2), map=map_id, rng=rng)
        state = play_turn(state, {s.id: "up" for s in state.board.snakes}, rng)
        assert state.board.hazards == [], map_id


def test_food_spawn_squares_avoid_bodies_food_and_next_to_heads():
    state = from_ascii("""
        . . . . .
        . A a * .
        . . . . .
        . . . . .
        . . . . .
    """, "solo").state
    free = set(food_spawn_squares(state.board))
    assert (1, 3) not in free and (2, 3) not in free and (3, 3) not in free
    assert not free & {(0, 3), (1, 4), (1, 2)}  # next to the head
    assert (0, 0) in free and (2, 4) in free
    assert len(free) == 25 - 3 - 3


def test_every_map_plays_a_game():
    for map_id in MAPS:
        rng = random.Random(11)
        state = new_game("standard", 11, 11, ids(4), map=map_id, rng=rng)
        moves_rng = random.Random(12)
        while not is_game_over(state) and state.turn < 60:
            state = play_turn(state, {s.id: moves_rng.choice(("up", "down", "left", "right"))
                                      for s in state.board.living_snakes}, rng)
        if not get_map(map_id).has_food:
            assert state.board.food == []
