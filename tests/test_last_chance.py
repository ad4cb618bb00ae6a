"""The last chance: when every move is proven lost, the move that survives the turn
against the most replies."""

from __future__ import annotations

from snake.diagram import from_ascii
from snake.search.last_chance import LOST_THIS_TURN, last_chance
from snake.search.strategy import SearchStrategy

# A (3 long) has two moves, both of which a longer snake can meet head on: up, where B and
# D can both come (8 of the 18 joint replies of B, C and D leave A alive), and down, where
# only C can (9 of 18). Left is B's body, right A's neck.
SQUEEZED = """
    . . . . . . .
    . . . D d d d
    . . B . . . .
    . . b A a a .
    . . b . C . .
    . . b . c . .
    . . . . c c .
"""


def test_the_move_that_survives_the_most_replies_is_played():
    request = from_ascii(SQUEEZED)
    chance = last_chance(request.state, request.you, "up")
    assert chance.survives == {"up": 8, "down": 9}
    assert chance.replies == 18
    assert chance.move == "down"


def test_a_pocket_with_no_way_out_is_no_chance():
    """Every move of A can be killed this turn. Down survives more of the replies (only Q
    can meet it), but leads into a pocket: A's own body, E's body and D's neck close it next
    turn whatever anyone plays. Up survives fewer, with a way out: up it is.

        b b c c c . .
        b . c C c e E
        b b B . . e .
        . . a A e e .
        . a a . e e e
        . a . D d d d
        . a . . d d d
    """
    from snake.board import parse_request

    def snake(sid, body):
        return {"id": sid, "health": 90, "body": [{"x": x, "y": y} for x, y in body]}
    you = snake("A", [(3, 3), (2, 3), (2, 2), (1, 2), (1, 1), (1, 0)])
    others = [snake("B", [(2, 4), (1, 4), (0, 4), (0, 5), (0, 6), (1, 6)]),
              snake("C", [(3, 5), (4, 5), (4, 6), (3, 6), (2, 6), (2, 5)]),
              snake("D", [(3, 1), (4, 1), (5, 1), (6, 1), (6, 0), (5, 0), (4, 0)]),
              snake("E", [(6, 5), (5, 5), (5, 4), (5, 3), (4, 3), (4, 2), (5, 2), (6, 2)])]
    request = parse_request({
        "game": {"id": "pocket", "ruleset": {"name": "standard"}, "timeout": 500}, "turn": 30,
        "board": {"width": 7, "height": 7, "food": [], "snakes": [you, *others]}, "you": you})
    chance = last_chance(request.state, request.you, "down")
    assert chance.replies == 12
    assert chance.survives == {"up": 3, "down": 0} and chance.trapped == {"up": 0, "down": 8}
    assert chance.move == "up"


def test_the_count_stops_at_the_deadline_with_every_move_judged_on_the_same_replies():
    """On a huge board each reply is a turn of the rules; the deadline stops the count
    where it is (each reply has been played against every move), and with no reply tried
    the search's move stands."""
    request = from_ascii(SQUEEZED)
    ticks = iter(range(1000))

    def clock():                      # one tick per reply begun
        return float(next(ticks))
    chance = last_chance(request.state, request.you, "up", deadline=5.0, clock=clock)
    assert chance.tried == 5 and chance.replies == 18
    full = last_chance(request.state, request.you, "up")
    assert full.tried is None
    # the first five replies, against both moves: no more than the whole count
    assert sum(chance.survives.values()) + sum(chance.trapped.values()) <= 2 * 5
    assert all(chance.survives[m] <= full.survives[m] for m in ("up", "down"))
    late = last_chance(request.state, request.you, "up", deadline=0.0, clock=lambda: 1.0)
    assert late.move == "up" and late.tried == 0 and late.survives == {"up": 0, "down": 0}


def test_a_huge_board_in_its_last_chance_is_answered_on_time():
    """100×100 royale, 44 snakes, every square outside the zone a hazard (9,100), and our
    head where two longer snakes can meet each of its moves: every move is lost this turn,
    and the last chance must end within the move's time (it ran 0.65–0.86 s at 500 ms
    before it kept the deadline). Judged by the deadline it was given, not by wall time:
    the count stops at the first reply begun after it."""
    from snake.board import parse_request

    def column(sid, x, y0, n):
        return {"id": sid, "health": 90, "body": [{"x": x, "y": y0 + k} for k in range(n)]}
    you = {"id": "a", "health": 90, "body": [{"x": 50, "y": 50}, {"x": 50, "y": 49},
                                            {"x": 50, "y": 48}]}
    snakes = [you, column("b", 49, 51, 40), column("c", 51, 51, 40), column("d", 48, 50, 40)]
    snakes += [column(f"f{x}", x, 0, 40) for x in [*range(0, 40, 2), *range(60, 100, 2)][:40]]
    hazards = [{"x": x, "y": y} for x in range(100) for y in range(100)
               if not (35 <= x < 65 and 35 <= y < 65)]
    request = parse_request({
        "game": {"id": "royale", "ruleset": {"name": "royale"}, "timeout": 500}, "turn": 50,
        "board": {"width": 100, "height": 100, "food": [], "hazards": hazards,
                  "snakes": snakes}, "you": you})
    calls = []

    def clock():
        calls.append(len(calls))
        return float(len(calls))
    # the clock is read once per far snake (its cheap move), then once per reply begun
    far = len(snakes) - 1 - 3
    chance = last_chance(request.state, request.you, "up", deadline=far + 2.5, clock=clock)
    assert chance.tried == 2 and len(calls) == far + 3      # the third reply was not begun
    calls.clear()
    early = last_chance(request.state, request.you, "up", deadline=10.5, clock=clock)
    assert early.tried == 0 and early.move == "up" and len(calls) == 11   # stopped among them
    assert chance.move in ("up", "left", "right")


def test_ties_keep_the_searched_move():
    # each of A's three moves can be met by one longer snake (B, C, D: one of its three
    # moves each), so each survives 18 of the 27 joint replies
    request = from_ascii("""
        . d d d . . .
        . . . D . . .
        . . . . . . .
        b B . A . C c
        b . . a . . c
        b . . a . . c
        . . . . . . .
    """)
    state, you = request.state, request.you
    chance = last_chance(state, you, "left")
    assert chance.survives == {"up": 18, "left": 18, "right": 18}
    assert chance.replies == 27
    assert chance.move == "left"
    assert last_chance(state, you, "right").move == "right"


def test_the_search_strategy_plays_its_last_chance_only_when_every_move_is_lost():
    request = from_ascii(SQUEEZED)
    for engine in ("compiled", "python"):
        plain = SearchStrategy(engine=engine, max_nodes=3000, think_ms=60_000, max_opponents=3)
        chance = SearchStrategy(engine=engine, max_nodes=3000, think_ms=60_000, max_opponents=3,
                                last_chance=True)
        found = plain.search(request)
        assert found.score == LOST_THIS_TURN     # every move loses now against the right reply
        decision = chance.choose(request, None)
        assert decision.move == "down"
        assert "last chance" in decision.method
        assert ("down survives the most of 18 replies this turn with a way out"
                in decision.search.note)
    # a position that is not lost this turn is left to the search
    open_board = from_ascii("""
        . . . . . . .
        . . . . . . .
        . . . A a a .
        . . . . . . .
        . . . . . . .
        . B b b . . .
        . . . . . . .
    """)
    decision = SearchStrategy(engine="compiled", max_nodes=2000, think_ms=60_000,
                              last_chance=True).choose(open_board, None)
    assert "last chance" not in decision.method


def test_explain_says_why_the_last_chance_was_played():
    from snake.explain import explain
    from snake.strategies import get_strategy
    request = from_ascii(SQUEEZED)
    decision = get_strategy("search").choose(request, None)
    text = explain(request, decision, "search")
    assert "note: every move can be killed this turn: down survives the most of 18 replies" in text
    assert "(up 8, down 9)" in text
    assert text.splitlines()[-1].startswith("move: down")
