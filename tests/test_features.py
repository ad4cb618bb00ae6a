"""NNUE input features (SPEC §4): layout, every piece type on drawn boards, sets, None cases."""

from __future__ import annotations

import numpy as np
import pytest

from nnue.features import (
    BLOCK_OFFSET,
    BLOCKS,
    BOARD_OFFSET,
    N_FEATURES,
    RULESETS,
    active_features,
)
from snake.board import Snake
from snake.diagram import from_ascii

# Piece numbers as SPEC §4 lists them.
HEAD, LEFT, RIGHT, DOWN, UP, UNDER = 0, 1, 2, 3, 4, 5
SQUADMATE, OPPONENT = 6, 12
FOOD, HAZARD = 18, 19
#: SPEC §4's G, by ruleset, and offset(B), by board side.
SPEC_G = {"standard": 0, "constrictor": 1, "royale": 2, "wrapped": 3, "solo": 4, "squad": 5}
SPEC_OFFSET = {7: 0, 11: 5880, 19: 20400}


def spec_index(g: int, side: int, x: int, y: int, piece: int) -> int:
    """SPEC §4: ``index(G, B, x, y, P) = offset(B) + ((G·S + y)·S + x)·20 + P``."""
    return SPEC_OFFSET[side] + ((g * side + y) * side + x) * 20 + piece


def spec_tuple(index: int) -> tuple[int, int, int, int, int]:
    """``(G, side, x, y, P)`` of a feature index, by SPEC §4's formula read backwards."""
    assert 0 <= index < 63720
    side = max(s for s, offset in SPEC_OFFSET.items() if index >= offset)
    rest, piece = divmod(index - SPEC_OFFSET[side], 20)
    rest, x = divmod(rest, side)
    g, y = divmod(rest, side)
    return g, side, x, y, piece


def tuples(request) -> set[tuple[int, int, int]]:
    """The active features of a drawn request as (x, y, piece), checking they all lie in
    the block of the request's ruleset and board."""
    active = active_features(request.state, request.you)
    assert active is not None
    assert active.dtype == np.int32
    assert list(active) == sorted(set(active.tolist())), "sorted and unique"
    g = SPEC_G[request.state.game.ruleset.name]
    side = request.state.board.width
    out = set()
    for index in active.tolist():
        fg, fside, x, y, piece = spec_tuple(index)
        assert (fg, fside) == (g, side)
        out.add((x, y, piece))
    return out


# --- layout ---------------------------------------------------------------------------


def test_layout_totals_and_offsets():
    assert N_FEATURES == 63720
    assert BOARD_OFFSET == {7: 0, 11: 5880, 19: 20400}
    assert 6 * 7 * 7 * 20 == 5880 and 5880 + 6 * 11 * 11 * 20 == 20400
    assert 20400 + 6 * 19 * 19 * 20 == N_FEATURES
    assert RULESETS == tuple(SPEC_G)
    # every block starts where the formula puts its first square's first piece
    assert len(BLOCKS) == 18
    for block, (ruleset, side) in enumerate(BLOCKS):
        assert BLOCK_OFFSET[block] == spec_index(SPEC_G[ruleset], side, 0, 0, 0)


# --- pieces on drawn boards -----------------------------------------------------------


def test_your_head_and_body_directions():
    # A: head (1,3), body up to (1,5), right along row 5, down to (3,3), then right to (4,3).
    req = from_ascii("""
        . . . . . . .
        . a a a . . .
        . a . a . . .
        . A . a a . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, you="A")
    assert req.you.body == [(1, 3), (1, 4), (1, 5), (2, 5), (3, 5), (3, 4), (3, 3), (4, 3)]
    assert tuples(req) == {
        (1, 3, HEAD),
        (1, 4, DOWN), (1, 5, DOWN),      # moving onto the segment below
        (2, 5, LEFT), (3, 5, LEFT),
        (3, 4, UP), (3, 3, UP),
        (4, 3, LEFT),
    }


def test_opponent_pieces_and_right_direction():
    req = from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . A . . .
        . . . . . . .
        b b B . . . .
        b . . . . . .
    """, you="A")
    assert tuples(req) == {
        (3, 3, HEAD),
        (2, 1, OPPONENT + HEAD), (1, 1, OPPONENT + RIGHT), (0, 1, OPPONENT + RIGHT),
        (0, 0, OPPONENT + UP),
    }
    # Seen from B, the roles swap.
    req_b = from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . A . . .
        . . . . . . .
        b b B . . . .
        b . . . . . .
    """, you="B")
    assert tuples(req_b) == {
        (3, 3, OPPONENT + HEAD),
        (2, 1, HEAD), (1, 1, RIGHT), (0, 1, RIGHT), (0, 0, UP),
    }


def test_stacked_segments_at_game_start_are_one_head_and_one_under():
    req = from_ascii("""
        . . . . . . .
        . A . . . B .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, stacked={"A": 2, "B": 2}, turn=0)
    assert req.you.body == [(1, 5)] * 3
    assert tuples(req) == {
        (1, 5, HEAD), (1, 5, UNDER),
        (5, 5, OPPONENT + HEAD), (5, 5, OPPONENT + UNDER),
    }


def test_after_eating_the_tail_is_under_a_piece():
    req = from_ascii("""
        . . . . . . .
        . A a a . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, stacked={"A": 1})
    assert req.you.body == [(1, 5), (2, 5), (3, 5), (3, 5)]
    assert tuples(req) == {(1, 5, HEAD), (2, 5, LEFT), (3, 5, LEFT), (3, 5, UNDER)}


def test_first_move_from_a_stack():
    # Turn 1: head moved up from a stack of three: body (3,4), (3,3), (3,3).
    req = from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . A . . .
        . . . a . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, stacked={"A": 1}, turn=1)
    assert tuples(req) == {(3, 4, HEAD), (3, 3, UP), (3, 3, UNDER)}


def test_wrapped_directions_across_edges():
    drawing = """
        . . . b . . .
        . . . . . . .
        . . . . . . .
        a . . . . . A
        . . . . . . .
        . . . . . . .
        . . . B . . .
    """
    req = from_ascii(drawing, "wrapped")
    # A's head (6,3); its next segment (0,3) moves left across the edge onto x = 6.
    # B's head (3,0); its next segment (3,6) moves up across the top edge onto y = 0.
    assert tuples(req) == {
        (6, 3, HEAD), (0, 3, LEFT),
        (3, 0, OPPONENT + HEAD), (3, 6, OPPONENT + UP),
    }
    # The mirror images: moving right and down across edges.
    req2 = from_ascii("""
        . . . B . . .
        . . . . . . .
        . . . . . . .
        A . . . . . a
        . . . . . . .
        . . . . . . .
        . . . b . . .
    """, "wrapped")
    assert tuples(req2) == {
        (0, 3, HEAD), (6, 3, RIGHT),
        (3, 6, OPPONENT + HEAD), (3, 0, OPPONENT + DOWN),
    }


def test_wrapped_adjacent_steps_inside_the_board_are_ordinary():
    req = from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . A a a . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, "wrapped")
    assert tuples(req) == {(2, 3, HEAD), (3, 3, LEFT), (4, 3, LEFT)}


def test_squadmates_and_opponents():
    drawing = """
        . . . . . . .
        . A a . . . .
        . . . . . . .
        . B b . . . .
        . . . . . . .
        . C c . . . .
        . . . . . . .
    """
    req = from_ascii(drawing, "squad", squads={"A": "red", "B": "red", "C": "blue"})
    assert tuples(req) == {
        (1, 5, HEAD), (2, 5, LEFT),
        (1, 3, SQUADMATE + HEAD), (2, 3, SQUADMATE + LEFT),
        (1, 1, OPPONENT + HEAD), (2, 1, OPPONENT + LEFT),
    }
    # Empty squad strings make nobody a squadmate.
    req = from_ascii(drawing, "squad", squads={"A": "", "B": "", "C": ""})
    assert {p for _, _, p in tuples(req)} == {HEAD, LEFT, OPPONENT + HEAD, OPPONENT + LEFT}


def test_squadmate_stacked_and_all_directions():
    req = from_ascii("""
        . . . . . . .
        . . . . . . .
        . b b . . . .
        . b . . A . .
        . b B . . . .
        . . . . . . .
        . . . . . . .
    """, "squad", squads={"A": "s", "B": "s"}, stacked={"B": 1})
    assert req.state.board.snake("B").body == [(2, 2), (1, 2), (1, 3), (1, 4), (2, 4), (2, 4)]
    assert tuples(req) == {
        (4, 3, HEAD),
        (2, 2, SQUADMATE + HEAD), (1, 2, SQUADMATE + RIGHT), (1, 3, SQUADMATE + DOWN),
        (1, 4, SQUADMATE + DOWN), (2, 4, SQUADMATE + LEFT), (2, 4, SQUADMATE + UNDER),
    }


def test_food_hazards_stacked_and_off_board():
    req = from_ascii("""
        * . . . . . ~
        . . . . . . .
        . . . . . . .
        . . . A . . .
        . . . . . . .
        . . . . . . .
        @ . . . . . .
    """, "royale", hazards=[(6, 6), (6, 6), (5, 0)])
    board = req.state.board
    board.food += [(-1, 3), (7, 0), (3, 9)]
    board.hazards += [(0, -1), (7, 7), (5, 0)]
    assert tuples(req) == {
        (3, 3, HEAD),
        (0, 6, FOOD), (0, 0, FOOD), (0, 0, HAZARD), (6, 6, HAZARD), (5, 0, HAZARD),
    }


def test_off_board_segments_of_a_snake_are_ignored():
    req = from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        A a . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, stacked={"A": 0})
    req.state.board.snakes.append(Snake("Z", [(-1, 1), (0, 1), (1, 1)]))
    assert tuples(req) == {(0, 3, HEAD), (1, 3, LEFT), (0, 1, OPPONENT + LEFT),
                           (1, 1, OPPONENT + LEFT)}


def test_only_living_snakes_count():
    req = from_ascii("""
        . . . . . . .
        . A a . . . .
        . . . . . . .
        . . . . . . .
        . B b . . . .
        . . . . . . .
        . . . . . . .
    """)
    req.state.board.snake("B").eliminated_cause = "snake-collision"
    assert tuples(req) == {(1, 5, HEAD), (2, 5, LEFT)}


def test_dead_or_absent_you_has_no_features():
    req = from_ascii("""
        . . . . . . .
        . A a . . . .
        . . . . . . .
        . . . . . . .
        . B b . . . .
        . . . . . . .
        . . . . . . .
    """)
    req.you.eliminated_cause = "wall-collision"
    assert active_features(req.state, req.you) is None
    assert active_features(req.state, Snake("nobody", [(0, 0)])) is None


def test_you_is_matched_by_id_in_the_state():
    req = from_ascii("""
        . . . . . . .
        . A a . . . .
        . . . . . . .
        . . . . . . .
        . B b . . . .
        . . . . . . .
        . . . . . . .
    """)
    stale = req.you.copy()
    stale.body = [(6, 6)]
    assert np.array_equal(active_features(req.state, stale),
                          active_features(req.state, req.you))


def test_malformed_body_does_not_crash():
    req = from_ascii("""
        . . . . . . .
        . A . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    req.you.body = [(1, 5), (4, 4), (4, 0)]   # not a chain of neighbours
    assert tuples(req) == {(1, 5, HEAD), (4, 4, LEFT), (4, 0, UP)}


@pytest.mark.parametrize("side", [7, 11, 19])
@pytest.mark.parametrize("ruleset", ["standard", "constrictor", "royale", "wrapped", "solo",
                                     "squad"])
def test_all_sizes_and_rulesets(ruleset, side):
    rows = [["."] * side for _ in range(side)]
    rows[side - 1 - 0][0] = "A"       # head (0, 0)
    rows[side - 1 - 0][1] = "a"       # (1, 0) moves left
    rows[side - 1 - 1][1] = "a"       # (1, 1) moves down
    rows[side - 1 - 5][5] = "B"
    rows[side - 1 - 5][6] = "b"
    rows[side - 1 - 3][side - 1] = "*"
    rows[side - 1 - (side - 1)][2] = "~"
    drawing = "\n".join(" ".join(r) for r in rows)
    squads = {"A": "t", "B": "t"} if ruleset == "squad" else None
    req = from_ascii(drawing, ruleset, squads=squads)
    g = SPEC_G[ruleset]
    other = SQUADMATE if squads else OPPONENT
    expected = {
        (0, 0, HEAD), (1, 0, LEFT), (1, 1, DOWN),
        (5, 5, other + HEAD), (6, 5, other + LEFT),
        (side - 1, 3, FOOD), (2, side - 1, HAZARD),
    }
    assert tuples(req) == expected
    active = active_features(req.state, req.you)
    base = BOARD_OFFSET[side] + g * side * side * 20
    assert base <= active.min() and active.max() < base + side * side * 20
    assert active[0] == spec_index(g, side, 0, 0, HEAD)


@pytest.mark.parametrize("ruleset,width,height", [
    ("wrapped_constrictor", 11, 11), ("mystery", 11, 11), ("standard", 9, 9),
    ("standard", 25, 25), ("standard", 11, 7), ("squad", 7, 11),
])
def test_no_block_gives_none(ruleset, width, height):
    rows = [["."] * width for _ in range(height)]
    rows[0][0] = "A"
    req = from_ascii("\n".join(" ".join(r) for r in rows), ruleset)
    assert active_features(req.state, req.you) is None


def reference_features(state, you) -> set[int] | None:
    """SPEC §4 written out plainly, one tuple at a time, for cross-checking."""
    g = SPEC_G.get(state.game.ruleset.name)
    side = state.board.width
    if g is None or side != state.board.height or side not in BOARD_OFFSET:
        return None
    living = [s for s in state.board.snakes if not s.eliminated_cause]
    if you.id not in {s.id for s in living}:
        return None
    wraps = state.game.ruleset.name == "wrapped"
    on_board = state.board.in_bounds
    out = set()
    for s in living:
        owner = 0 if s.id == you.id else SQUADMATE if you.is_squadmate(s) else OPPONENT
        for i, p in enumerate(s.body):
            if not on_board(p):
                continue
            if i == 0:
                piece = HEAD
            else:
                q = s.body[i - 1]
                if q == p:
                    piece = UNDER
                else:
                    moves = {m: ((p[0] + dx) % side, (p[1] + dy) % side) if wraps else
                             (p[0] + dx, p[1] + dy)
                             for m, (dx, dy) in (("left", (-1, 0)), ("right", (1, 0)),
                                                 ("down", (0, -1)), ("up", (0, 1)))}
                    move = next(m for m, r in moves.items() if r == q)
                    piece = {"left": LEFT, "right": RIGHT, "down": DOWN, "up": UP}[move]
            out.add(spec_index(g, side, p[0], p[1], owner + piece))
    for p in state.board.food:
        if on_board(p):
            out.add(spec_index(g, side, p[0], p[1], FOOD))
    for p in state.board.hazards:
        if on_board(p):
            out.add(spec_index(g, side, p[0], p[1], HAZARD))
    return out


def test_matches_a_plain_reference_in_played_games():
    import random

    from snake.rules import candidate_moves, is_game_over, obstacles_after_move, play_turn
    from snake.rules.start import new_game

    rng = random.Random(2)
    checked = 0
    for k in range(18):
        ruleset = ("standard", "constrictor", "royale", "wrapped", "solo", "squad")[k % 6]
        side = (7, 11, 19)[k // 6]
        ids = ["s0"] if ruleset == "solo" else ["s0", "s1", "s2", "s3"]
        state = new_game(ruleset, side, side, ids, map="royale" if ruleset == "royale" else
                         "standard", rng=rng, squads=["a", "a", "b", "b"]
                         if ruleset == "squad" else None)
        while not is_game_over(state) and state.turn < 120:
            for you in state.board.snakes:
                got = active_features(state, you)
                want = reference_features(state, you)
                assert (got is None) == (want is None)
                if got is not None:
                    assert set(got.tolist()) == want
                    checked += 1
            obstacles = obstacles_after_move(state)
            moves = {s.id: rng.choice(candidate_moves(state, s, obstacles))
                     for s in state.board.living_snakes}
            state = play_turn(state, moves, rng)
    assert checked > 1000
