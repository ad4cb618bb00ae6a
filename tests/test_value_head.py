"""The learned value head (snake.evaluation.value_head) and its training (training.fit_head).

The measurements the compiled search feeds the head (``measurements``, every snake's at
once) are checked against their readable reference (snake.evaluation.control.measure) over
the positions of tests/games.py, and by hand on drawn boards (tests/test_evaluation_twin.py
compares every term of the two evaluators); the compiled head against the numpy one; a
search with a head against the positions it is for; the training command on a few arena
records it plays itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from snake import core
from snake.arena.__main__ import main as arena_main
from snake.board import MoveRequest
from snake.diagram import from_ascii
from snake.evaluation.compiled.control import control_value, workspace
from snake.evaluation.control import MEASUREMENTS, N_MEASUREMENTS, board_control, measure
from snake.evaluation.value_head import HeadError, ValueHead, load_head, measurements
from snake.search.strategy import make_search_strategy, split_options
from tests import games


def small_head(seed: int = 0, hidden: int = 5, snakes=(2,), residual: bool = False) -> ValueHead:
    rng = np.random.default_rng(seed)
    return ValueHead(rng.normal(0, 1, (hidden, N_MEASUREMENTS)), rng.normal(0, 0.3, hidden),
                     rng.normal(0, 1, hidden), 0.1, snakes=tuple(snakes), residual=residual)


def test_measurements_follow_their_definition_over_the_test_games():
    compared = 0
    kinds = set()
    for state in games.positions(20261125, count=1500, max_turns=200):
        measured = measurements(core.encode(state))
        for i, snake in enumerate(state.board.snakes):
            if snake.eliminated_cause:
                assert measured[i].tolist() == [0.0] * N_MEASUREMENTS
                continue
            assert measured[i] == pytest.approx(measure(state, snake.id), abs=1e-12), \
                (state.game.ruleset.name, state.turn, snake.id)
            compared += 1
        kinds.add((state.game.ruleset.name, len(state.board.snakes)))
    assert compared > 3000 and len(kinds) >= 6


def test_a_duel_drawn_in_ascii_measured_by_hand():
    # A (length 4, health 30) owns more than half; B (length 3) the rest; one food, A's, 3 away.
    request = from_ascii("""
        . . . . .
        a a A . .
        a . . . *
        . . . . .
        . . B b b
    """, health={"A": 30})
    state = request.state
    x = dict(zip(MEASUREMENTS, measurements(core.encode(state))[0]))
    squares, food = board_control(state)["A"]
    assert x["own"] == squares / 25 > 0.5 and x["food"] == food / 10 == 0.3
    assert x["lead"] == pytest.approx(0.1) and x["lead_tanh"] == pytest.approx(math.tanh(1 / 3))
    assert (x["health"], x["no_food"], x["short_of_food"], x["opponents"], x["longer"]) == \
        (0.3, 0.0, 0.0, 1 / 3, 0.0)
    assert x["length"] == 4 / 25
    # Around A's head: up, down and right are open (left is its neck); B is shorter and 4
    # moves away, so nothing is risky, nothing is prey, and no longer snake threatens.
    assert (x["moves"], x["risky"], x["prey"], x["threat"]) == (3 / 4, 0.0, 0.0, 1.0)
    assert x["tail"] == 1.0


def test_what_lies_around_a_head_in_ascii():
    # A and B are length 3, C length 2. A's up is B's body and right its own neck: it has
    # two moves, and left lies next to B's head (a draw at best). C's head is two moves from
    # A's (and from B's), B's head two moves too. A's tail is A's in the partition; B's is
    # contested (A and B reach it on the same move).
    request = from_ascii("""
        . . . . . .
        . . B b b .
        . . . A a .
        . c C . a .
        . . . . . .
    """)
    state = request.state
    x = {snake.id: dict(zip(MEASUREMENTS, m))
         for snake, m in zip(state.board.snakes, measurements(core.encode(state)))}
    assert (x["A"]["moves"], x["A"]["risky"], x["A"]["prey"]) == (2 / 4, 1 / 4, 1 / 3)
    assert x["A"]["threat"] == 2 / 11 and x["A"]["tail"] == 1.0
    assert x["B"]["tail"] == 0.0 and x["B"]["prey"] == 1 / 3     # C, two moves below
    assert x["C"]["threat"] == 2 / 11 and x["C"]["prey"] == 0.0


def test_the_compiled_head_is_the_numpy_head_and_a_residual_head_of_zeros_is_the_style():
    head, residual = small_head(), small_head(1, residual=True)
    zero = ValueHead(np.zeros((3, N_MEASUREMENTS)), np.zeros(3), np.zeros(3), 0.0, residual=True)
    worst = worst_zero = 0.0
    compared = 0
    for state in games.positions(7, count=400, max_turns=150):
        packed = core.encode(state)
        works = [workspace(packed.g, "default", h.fields()) for h in (head, residual, zero)]
        plain = workspace(packed.g)
        measured = measurements(packed)
        for i, snake in enumerate(state.board.snakes):
            if snake.eliminated_cause:
                continue
            for h, work in zip((head, residual), works):
                got = control_value(packed.g, packed.s, i, work)
                worst = max(worst, abs(got - h.value(measured[i])))
            worst_zero = max(worst_zero, abs(control_value(packed.g, packed.s, i, works[2])
                                             - control_value(packed.g, packed.s, i, plain)))
            compared += 1
    assert compared >= 400 and worst < 1e-12 and worst_zero < 1e-12


def test_a_head_file_round_trips_and_bad_files_are_refused(tmp_path):
    head = ValueHead(small_head().w1, small_head().b1, small_head().w2, 0.1, "grower", (3, 4),
                     {"records": 3}, residual=True)
    head.save(tmp_path / "h.npz")
    back = load_head(tmp_path / "h.npz")
    assert back.digest == head.digest and back.style == "grower" and back.snakes == (3, 4)
    assert back.meta == {"records": 3} and back.covers(4) and not back.covers(2) and back.residual
    # one that names no boards covers any; one that names them, those only
    assert back.boards == () and back.covers(4, "royale 19x19")
    ValueHead(head.w1, head.b1, head.w2, 0.1, boards=("standard 11x11",)).save(tmp_path / "b.npz")
    named = load_head(tmp_path / "b.npz")
    assert named.boards == ("standard 11x11",) and named.covers(2, "standard 11x11")
    assert not named.covers(2, "standard 7x7") and not named.covers(2, "wrapped 11x11")
    with pytest.raises(HeadError, match="boards"):
        ValueHead(head.w1, head.b1, head.w2, 0.1, boards=("11x11",))
    # one that names how its games began covers those games only; an unknown start, any
    assert back.began == () and back.covers(4, "standard 11x11", 4)
    ValueHead(head.w1, head.b1, head.w2, 0.1, began=(2,)).save(tmp_path / "g.npz")
    duels = load_head(tmp_path / "g.npz")
    assert duels.began == (2,) and duels.covers(2, "standard 11x11", 2)
    assert not duels.covers(2, "standard 11x11", 4) and duels.covers(2, "standard 11x11")
    with pytest.raises(HeadError, match="begun"):
        ValueHead(head.w1, head.b1, head.w2, 0.1, began=(0,))
    with pytest.raises(HeadError, match="begun"):      # three alive in games begun with two
        ValueHead(head.w1, head.b1, head.w2, 0.1, snakes=(3,), began=(2,))
    with pytest.raises(HeadError, match="no such file|not a value head"):
        load_head(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(HeadError, match="not a value head"):
        load_head(tmp_path / "junk.npz")
    np.savez(tmp_path / "names.npz", w1=head.w1[:, :2], b1=head.b1, w2=head.w2, b2=[0.0],
             measurements=np.array(["own", "value"]), style="default", snakes=[2], meta="{}")
    with pytest.raises(HeadError, match="trained on measurements"):
        load_head(tmp_path / "names.npz")
    # A head from before the last measurements were added reads them with zero weights.
    np.savez(tmp_path / "older.npz", w1=head.w1[:, :14], b1=head.b1, w2=head.w2, b2=[0.1],
             measurements=np.array(MEASUREMENTS[:14]), style="default", snakes=[2], meta="{}")
    older = load_head(tmp_path / "older.npz")
    assert older.w1.shape == head.w1.shape and not older.w1[:, 14:].any()
    assert (older.w1[:, :14] == head.w1[:, :14]).all()
    with pytest.raises(HeadError, match="w1 must be"):
        ValueHead(np.zeros((3, 5)), np.zeros(3), np.zeros(3), 0.0)


def test_a_search_uses_its_head_only_where_it_was_trained(tmp_path):
    duel = from_ascii("""
        . . . . . . .
        . a A . . . .
        . . . . * . .
        . . . . B b .
        . . . . . . .
    """)
    four = from_ascii("""
        . . . . . . .
        . a A . . C c
        . . . . * . .
        . d D . B b .
        . . . . . . .
    """)

    def searched(head: ValueHead, request):
        head.save(tmp_path / "head.npz")
        name, options = split_options(f"search[value_head={tmp_path / 'head.npz'},max_nodes=3000,"
                                      "think_ms=600000]")  # nodes, not the clock
        return make_search_strategy(name, overrides=options).search(request)

    plain = make_search_strategy("search", overrides={"max_nodes": 3000, "think_ms": 600_000.0,
                                                        "value_head": None})
    # the default search values duels with the default style, four snakes with the hungry
    assert searched(small_head(snakes=(2,)), duel).evaluator == "voronoi + value head"
    assert searched(small_head(snakes=(2, 4)), four).evaluator == "voronoi (hungry)"
    hungry = small_head(snakes=(4,))
    hungry = ValueHead(hungry.w1, hungry.b1, hungry.w2, hungry.b2, "hungry", (2, 4))
    assert searched(hungry, four).evaluator == "voronoi (hungry) + value head"
    assert searched(hungry, duel).evaluator == "voronoi"
    # and only on the boards it names: this duel is a standard 7x5 board
    elsewhere = small_head(snakes=(2,))
    assert searched(ValueHead(elsewhere.w1, elsewhere.b1, elsewhere.w2, elsewhere.b2,
                              boards=("standard 11x11",)), duel).evaluator == "voronoi"
    assert searched(ValueHead(elsewhere.w1, elsewhere.b1, elsewhere.w2, elsewhere.b2,
                              boards=("standard 7x5",)), duel).evaluator == "voronoi + value head"
    # and only in the games it names: the duel as the last of a game begun with four snakes
    duels_only = ValueHead(elsewhere.w1, elsewhere.b1, elsewhere.w2, elsewhere.b2, began=(2,))
    assert searched(duels_only, duel).evaluator == "voronoi + value head"   # as far as known
    last_duel = MoveRequest(duel.state, duel.you, snakes_at_start=4)
    found = searched(duels_only, last_duel)
    assert found.evaluator == "voronoi" and "meant for games begun with 2 snakes" in found.note
    assert searched(small_head(snakes=(2,)), last_duel).evaluator == "voronoi + value head"
    # a head of zeros on top of the style is the style: the same tree, node for node
    zero = ValueHead(np.zeros((2, N_MEASUREMENTS)), np.zeros(2), np.zeros(2), 0.0, residual=True)
    with_zero, without = searched(zero, duel), plain.search(duel)
    assert (with_zero.move, with_zero.score, with_zero.nodes, with_zero.depth) == \
        (without.move, without.score, without.nodes, without.depth)
    assert without.evaluator == "voronoi"
    with pytest.raises(HeadError):
        make_search_strategy("search", overrides={"value_head": str(tmp_path / "none.npz")})
    with pytest.raises(ValueError, match="compiled engine"):
        make_search_strategy("search-py", overrides={"value_head": str(tmp_path / "head.npz")})
    # a head the search would never use is refused, not ignored
    never = ValueHead(hungry.w1, hungry.b1, hungry.w2, hungry.b2, "grower", (2,))
    never.save(tmp_path / "never.npz")
    with pytest.raises(ValueError, match="never|style"):
        make_search_strategy("search", overrides={"value_head": str(tmp_path / "never.npz")})


def test_results_of_a_record_and_the_split_by_game():
    from snake.records.replay import Replay, result_line
    from training.fit_head import record_results, split_games

    def replay(boards, winner="", draw=False):
        turns = [{"turn": turn, "board": {"snakes": [{"id": s} for s in board]}}
                 for turn, board in enumerate(boards)]
        return Replay({}, turns, result_line(winner, winner, draw))

    assert record_results(replay([["a", "b", "c"], ["a", "b"], ["b"]], "b")) == \
        {"a": 0.0, "b": 1.0, "c": 0.0}
    # a draw: the snakes left on the final board, or those before when none is left
    assert record_results(replay([["a", "b", "c"], ["a", "b"], []], draw=True)) == \
        {"a": 0.5, "b": 0.5, "c": 0.0}
    assert record_results(replay([["a", "b", "c"], ["a", "c"]], draw=True)) == \
        {"a": 0.5, "b": 0.0, "c": 0.5}
    # stopped with several alive (--until-decided), or without a result: skipped
    assert record_results(replay([["a", "b", "c"], ["a", "b"]], "a")) == "stopped early"
    assert record_results(replay([["a"], ["a"]])) == "no result"
    for count, holdout in ((3, 0.1), (4, 0.4), (6, 0.45), (100, 0.1)):
        split = split_games(count, holdout, seed=1)
        kinds = {k: int((split == k).sum()) for k in ("train", "val", "test")}
        assert min(kinds.values()) >= 1 and sum(kinds.values()) == count
        assert kinds["val"] == kinds["test"]
    assert (split_games(100, 0.1, 1) == split_games(100, 0.1, 1)).all()


def test_training_a_head_on_arena_records(tmp_path, capsys, monkeypatch):
    import torch

    import training.fit_head as training
    from training.fit_head import main as train_main

    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)   # the test process's own

    records = tmp_path / "records"
    assert arena_main(["search[max_nodes=300]", "floodfill", "--games", "4", "--size", "7",
                       "--parallel", "1", "--seed", "3", "-q", "-o", str(records)]) == 0
    out = tmp_path / "head.npz"
    assert train_main(["--records", str(records), "--out", str(out), "--hidden", "4",
                       "--epochs", "2", "--holdout", "0.25", "-q", "--every", "3",
                       "--label-nodes", "200", "--lambda", "0.5", "--residual",
                       "--cache", str(tmp_path / "cache")]) == 0
    printed = capsys.readouterr().out
    assert "4 records" in printed and "test loss" in printed
    head = load_head(out)
    assert head.hidden == 4 and head.snakes == (2,) and head.style == "default" and head.residual
    assert head.boards == ("standard 7x7",) and head.began == (2,)     # what its records were
    assert head.meta["records"] == 4 and len(head.meta["validation_loss"]) == 2
    assert set(head.meta["test"]) == {"positions", "constant", "style", "head", "search",
                                      "head_vs_search"}
    # the labelled positions were kept: a second run reads them back and searches nothing
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 4

    def no_search(*args):
        raise AssertionError("searched again: the cache was not read")
    searched_score = training.searched_score
    monkeypatch.setattr(training, "searched_score", no_search)
    again = tmp_path / "again.npz"
    assert train_main(["--records", str(records), "--out", str(again), "--hidden", "4",
                       "--epochs", "2", "--holdout", "0.25", "-q", "--every", "3",
                       "--label-nodes", "200", "--lambda", "0.5", "--residual",
                       "--cache", str(tmp_path / "cache")]) == 0
    assert load_head(again).digest == head.digest
    # positions cached with other measurements are measured again and keep their labels
    for kept_file in (tmp_path / "cache").glob("*.npz"):
        with np.load(kept_file) as data:
            part = {k: data[k] for k in data.files}
        if "x" in part:
            np.savez(kept_file, **{**part, "x": part["x"][:, :3] * 0,
                                   "measurements": np.array(MEASUREMENTS[:3])})
    assert train_main(["--records", str(records), "--out", str(again), "--hidden", "4",
                       "--epochs", "2", "--holdout", "0.25", "-q", "--every", "3",
                       "--label-nodes", "200", "--lambda", "0.5", "--residual",
                       "--cache", str(tmp_path / "cache")]) == 0
    assert load_head(again).digest == head.digest
    # a head without some inputs: its weights on them are zero
    without = tmp_path / "without.npz"
    assert train_main(["--records", str(records), "--out", str(without), "--hidden", "4",
                       "--epochs", "2", "--holdout", "0.25", "-q", "--every", "3",
                       "--label-nodes", "200", "--lambda", "0.5", "--residual",
                       "--without", "value", "own", "most",
                       "--cache", str(tmp_path / "cache")]) == 0
    kept = load_head(without)
    columns = [MEASUREMENTS.index(n) for n in ("value", "own", "most")]
    assert kept.meta["without"] == ["value", "own", "most"]
    assert not kept.w1[:, columns].any() and kept.w1.any()
    # positions moved on by random turns: the search's scores are the target and the truth
    monkeypatch.setattr(training, "searched_score", searched_score)
    played = tmp_path / "played.npz"
    assert train_main(["--records", str(records), "--out", str(played), "--hidden", "4",
                       "--epochs", "2", "--holdout", "0.25", "-q", "--every", "3",
                       "--label-nodes", "200", "--lambda", "0", "--playout", "4", "--residual",
                       "--cache", str(tmp_path / "cache")]) == 0
    printed = capsys.readouterr().out
    assert "test loss (binary cross-entropy of the search scores" in printed
    meta = load_head(played).meta
    assert meta["playout"] == 4 and meta["against"] == "search scores"
    assert set(meta["test"]) == {"positions", "constant", "style", "head", "head_vs_search"}
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 8     # kept apart from the others
    # bad arguments get a clear answer
    for bad in (["--playout", "4"], ["--playout", "4", "--label-nodes", "200"],
                ["--playout", "-1", "--label-nodes", "200", "--lambda", "0"]):
        assert train_main(["--records", str(records), "--out", str(out), *bad]) == 2
    assert "--playout" in capsys.readouterr().err
    assert train_main(["--records", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert train_main(["--records", str(records), "--out", str(out), "--snakes", "4"]) == 1
    assert "no positions" in capsys.readouterr().err
