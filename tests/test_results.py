"""A game's results read from its record (snake.rules.results through snake.records.replay):
small games played by the rules, written as the official CLI writes them and read back."""

from __future__ import annotations

import random

from snake.diagram import from_ascii
from snake.records.replay import (
    Replay,
    game_object,
    read_replay,
    request_body,
    result_line,
    write_replay,
)
from snake.rules import outcome, play_turn
from tests.games import AT_THE_TOP, THREE


def recorded(tmp_path, board, moves, verdict=None, skip=(), **drawn):
    """The game played from ``board`` with ``moves`` (one dict per turn), written as a record
    (lines of the turns in ``skip`` left out, as a game log may lack them) with the result
    line ``verdict`` (winner id, is draw), by default the CLI's (the snake left wins; no
    snake left is a draw), and read back; also the rules' own final state."""
    state = from_ascii(board, turn=0, **drawn).state
    states = [state]
    for turn in moves:
        state = play_turn(state, turn, random.Random(1))
        states.append(state)
    if verdict is None:
        living = state.board.living_snakes
        verdict = (living[0].id, False) if len(living) == 1 else ("", not living)
    replay = Replay(game_object(states[0]),
                    [request_body(s, "A", {}) for s in states if s.turn not in skip],
                    result_line(verdict[0], verdict[0], verdict[1]))
    write_replay(tmp_path / "game.jsonl", replay)
    return read_replay(tmp_path / "game.jsonl"), state


def test_a_record_gives_the_results_of_the_game_it_records(tmp_path):
    """C falls first, then A and B together on the final turn: A and B draw, C lost, as the
    rules say of the finished game; A and B share places 1 and 2, C is third."""
    replay, final = recorded(tmp_path, AT_THE_TOP, [{"A": "up", "B": "up", "C": "left"},
                                                    {"A": "up", "B": "up"}])
    assert replay.result["isDraw"]
    for sid in "ABC":
        assert replay.outcome(sid) == outcome(final, sid)
    assert replay.results() == {"A": "draw", "B": "draw", "C": "loss"}
    assert [replay.place(sid) for sid in "ABC"] == [1.5, 1.5, 3.0]

    replay, final = recorded(tmp_path, THREE, [{"A": "up", "B": "left", "C": "left"}])
    assert replay.results() == {sid: outcome(final, sid) for sid in "ABC"} == \
        {"A": "win", "B": "loss", "C": "loss"}
    assert [replay.place(sid) for sid in "ABC"] == [1.0, 2.5, 2.5]


def test_a_game_stopped_at_the_turn_cap_is_a_draw_for_the_snakes_still_alive(tmp_path):
    replay, _ = recorded(tmp_path, THREE, [{"A": "up", "B": "up", "C": "left"}],
                         verdict=("", True))
    assert replay.results() == {"A": "draw", "B": "draw", "C": "loss"}
    assert [replay.place(sid) for sid in "ABC"] == [1.5, 1.5, 3.0]


def test_a_game_stopped_once_decided_settles_the_players_not_every_snake(tmp_path):
    """``--until-decided``: C (the other player) is out and the record names A, one of the
    player's two snakes, the winner: the player won and C lost, but each snake's own result
    is not known (A and B would have played on)."""
    replay, _ = recorded(tmp_path, THREE, [{"A": "up", "B": "up", "C": "left"}],
                         verdict=("A", False))
    assert replay.outcome(frozenset("AB")) == "win" and replay.outcome("C") == "loss"
    assert replay.results() == "stopped early"


def test_a_squad_wins_with_the_snake_the_record_names(tmp_path):
    replay, _ = recorded(tmp_path, THREE, [{"A": "up", "B": "left", "C": "up"}],
                         verdict=("A", False), ruleset="squad", squads={"A": "x", "C": "x",
                                                                       "B": "y"})
    assert replay.outcome(frozenset("AC")) == "win" and replay.outcome("B") == "loss"


def test_a_record_without_the_turn_before_the_last_shows_no_draw(tmp_path):
    """A game log's record of C holds its turns and the final board: that no snake is left
    at the end does not make C, gone long before, one of those who drew."""
    moves = [{"A": "up", "B": "up", "C": "left"}, {"A": "up", "B": "up"}]
    whole, _ = recorded(tmp_path, AT_THE_TOP, moves)
    assert whole.outcome("C") == "loss"
    logged, _ = recorded(tmp_path, AT_THE_TOP, moves, skip={1})
    assert [t["turn"] for t in logged.turns] == [0, 2] and logged.result["isDraw"]
    assert logged.outcome("C") == "loss"


def test_a_solo_game_has_no_winner_but_its_survivor(tmp_path):
    board = """
        . . . .
        . A a .
        . . . .
    """
    # out after two moves: no snake left, and no draw in solo (the CLI's result line)
    replay, _ = recorded(tmp_path, board, [{"A": "up"}, {"A": "up"}], verdict=("", False),
                         ruleset="solo")
    assert not replay.turns[-1]["board"]["snakes"] and replay.outcome("A") == "loss"
    assert replay.results() == "no result"
    # stopped at the cap with it alive: the arena names it the winner
    replay, _ = recorded(tmp_path, board, [{"A": "up"}], verdict=("A", False), ruleset="solo")
    assert replay.outcome("A") == "win" and replay.results() == {"A": "win"}
