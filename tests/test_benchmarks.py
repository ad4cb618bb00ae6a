"""Every benchmark under ``bench/`` runs end to end on tiny sizes and prints each figure it
promises. The figures are for a person to read on an idle machine and are not asserted (the
machine is shared); what is asserted is what does not depend on the clock: every row is
there, the last line has its documented form, and the checks the benchmarks make on the way
(compiled values equal to the reference, every turn recorded in the game log, an incremental
update touching fewer columns than a refresh) hold."""

from __future__ import annotations

import json
import re

from bench import control as bench_control
from bench import nnue as bench_nnue
from bench import rules as bench_rules
from bench import search as bench_search
from bench import server as bench_server
from nnue.network import DEFAULT_WEIGHTS

RATE = r"[\d,]+"


def test_the_rules_benchmark_measures_both_boards_and_the_compiled_twin(capsys):
    bench_rules.main(["--seconds", "0.05"])
    out = capsys.readouterr().out.splitlines()
    # (the benchmark raises if a snake died: every row is of the board it names)
    for board in ("11x11, 4 snakes", "19x19, 8 snakes"):
        assert any(re.fullmatch(
            rf"{board} of length 10: apply_rules {RATE} turns/s \(CPU time {RATE}\), "
            rf"play_turn {RATE} turns/s \(CPU time {RATE}\), state\.copy\(\) {RATE}/s; "
            rf"compiled {RATE} turns/s \(CPU time {RATE}\), \d+x apply_rules", line)
            for line in out), board
    assert re.fullmatch(r"rules: \d+ turns/s on 11x11 with 4 snakes", out[-1])


def test_the_control_benchmark_checks_the_compiled_values_on_every_scenario(capsys):
    # measure() raises unless the compiled evaluator's values equal the Python reference's
    bench_control.main(["--seconds", "0.05", "--positions", "12"])
    out = capsys.readouterr().out.splitlines()
    boards = [m.group(1) for line in out
              if (m := re.fullmatch(rf"(\d+x\d+, \d snakes): python {RATE} evaluations/s "
                                    rf"\(CPU time {RATE}\), compiled {RATE} evaluations/s "
                                    rf"\(CPU time {RATE}, {RATE} ns each\), \d+x python; "
                                    rf"partition {RATE} ns, the any-size way {RATE} ns "
                                    rf"\(\d+\.\dx as fast\)", line))]
    assert boards == ["11x11, 2 snakes", "11x11, 4 snakes", "19x19, 8 snakes"]
    assert re.fullmatch(r"control: \d+ evaluations/s on 11x11 with 4 snakes", out[-1])


def test_the_nnue_benchmark_reports_every_path_on_every_board(capsys):
    bench_nnue.main(["--quick"])
    out = capsys.readouterr().out
    boards = re.findall(r"^(.+) \(\d+ turns, 64 siblings\):$", out, re.M)
    assert boards == ["11x11, 4 snakes", "19x19, 8 snakes",
                      "19x19 royale, 8 snakes, 2 hazard rings"]
    # an incremental update touches what the move changed, a refresh every active feature
    touched = re.findall(r"columns touched: refresh ([\d.]+), incremental ([\d.]+)", out)
    assert len(touched) == 3
    assert all(float(inc) < float(refresh) / 2 for refresh, inc in touched)
    for row in ("features", "refresh", "update", "forward", "turn: update_to + forward",
                "64 siblings batched, per state", "compiled update+forward",
                "compiled update+forward, float32 W2", "numpy update+forward"):
        assert len(re.findall(rf"^  {re.escape(row)} +[\d.]+ us$", out, re.M)) == 3, row
    # the int8 network keeps the float one's choice almost everywhere
    changed = re.search(r"best move changed in ([\d.]+)% of states", out)
    assert changed and float(changed.group(1)) < 10
    assert re.search(r"^nnue: compiled update\+forward [\d.]+ us \(int8 W2; [\d.]+ us with "
                     r"float32 W2\), numpy path [\d.]+ us; session turn \(update_to \+ "
                     r"forward\) \d+ us, refresh\+forward \d+ us on 11x11 with 4 snakes\n\Z",
                     out, re.M)


def test_the_server_benchmark_plays_through_gunicorn_and_the_game_log_keeps_every_turn(capsys):
    bench_server.main(["--strategies", "seed,search", "--games", "1", "--turns", "4",
                       "--concurrency", "2", "--weights", str(DEFAULT_WEIGHTS)])
    out = capsys.readouterr().out.splitlines()
    for strategy in ("seed", "search"):
        rows = [line for line in out if re.fullmatch(
            rf" *{strategy} (?:11x11 4 snakes, 1 game|19x19 8 snakes, 1 game|mixed, 2 games "
            rf"at once): +p50 [\d.]+ ms, p99 [\d.]+ ms \(\d+ moves, \d+ later than 500 ms\)",
            line)]
        assert len(rows) == 3, strategy
    # every move answered is a turn in the service's game log, for each strategy
    logs = [re.search(r"game log: (\d+) turns recorded of (\d+) answered, 0 dropped", line)
            for line in out if "game log:" in line]
    assert len(logs) == 2 and all(m and m.group(1) == m.group(2) != "0" for m in logs)
    # under load the default strategy's answers are counted from the service's own log: as
    # many as the client had answered; two games at once fit the two searches a process
    # runs at once, though a loaded machine may leave some moves no time to search
    loaded = [int(m.group(1)) for line in out
              if (m := re.search(r"search mixed, 2 games at once: .*\((\d+) moves", line))]
    counted = [m.groups() for line in out if (m := re.fullmatch(
        r" +(\d+) of (\d+) moves searched, (\d+) by a fallback(?:, depth median [\d.]+, "
        r"lowest \d+)?", line))]
    assert len(loaded) == 1 and len(counted) == 1
    searched, answered, _ = map(int, counted[0])
    assert answered == loaded[0] > 0 and searched >= 1
    assert re.fullmatch(r"server: p50 [\d.]+ ms, p99 [\d.]+ ms at 2 games", out[-1])


def test_the_search_benchmark_measures_every_row_and_names_the_default(capsys):
    bench_search.main(["--ms", "5", "--positions", "1"])
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if re.match(r"11x11 .+: +[\d,]+ nodes/s", line)]
    # board control in both engines and the default, for 1v1 and four snakes
    for label in ("1v1", "4 snakes"):
        named = {tuple(line.split(":")[0].split()[-2:]) for line in rows if label in line}
        assert named == {("compiled", "voronoi"), ("python", "voronoi"), ("compiled", "default")}
    assert re.fullmatch(r"search: \d+ nodes/s, depth \d+ on 11x11 1v1", out[-1])


def test_the_search_comparison_probes_a_checkout_and_times_depths_alike():
    """``--against``: the probe runs in a checkout of its own (here this one) and says when
    each depth was completed; time to depth compares the deepest depth every run
    completed."""
    from pathlib import Path
    root = Path(bench_search.__file__).resolve().parents[1]
    searches = bench_search.probe(root, 20, 1, 1)
    assert [s["snakes"] for s in searches] == [2, 4]
    assert all(s["nodes"] > 0 and s["threads"] == 1 and "1" in s["times"] for s in searches)
    limited = bench_search.probe(root, 60_000, 1, 1, nodes=500)
    assert len(limited) == 2 and all(s["nodes"] in (500, 501) for s in limited)   # (stops past it)
    old = [[{"times": {"1": 1.0, "2": 4.0, "3": 10.0}}]]
    new = [[{"times": {"1": 1.0, "2": 2.0}}], [{"times": {"1": 1.0, "2": 3.0}}]]
    assert bench_search.time_to_depth(old, new) == 2.5 / 4.0    # depth 2: both completed it


def test_the_threads_figure_comes_with_an_interval_that_says_how_far_to_trust_it():
    """``--smp``: the geometric mean of the per-position ratios and a 95 % interval over
    the positions: the same ratios give the same interval, ratios that agree a narrow one,
    ratios that scatter (as lazy SMP's do from run to run) a wide one."""
    agree = [0.62, 0.63, 0.64, 0.63] * 4
    scatter = [0.43, 0.95, 0.5, 0.78] * 4
    mean, low, high = bench_search.geometric_mean_interval(agree)
    assert low < mean < high and abs(mean - 0.63) < 0.005 and high - low < 0.02
    wide = bench_search.geometric_mean_interval(scatter)
    assert wide == bench_search.geometric_mean_interval(scatter)
    assert wide[1] < 0.6 < 0.7 < wide[2]


def test_the_blended_play_record_is_the_same_twice_and_names_every_search(tmp_path, capsys):
    """``bench.blended_play``: node-limited searches with a random network blended in write
    a record that depends on nothing but the checkout (two runs, the same bytes), a line per
    position, kind and weight."""
    from bench import blended_play

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (first, second):
        assert blended_play.main(["--out", str(out), "--nodes", "60", "--positions", "1"]) == 0
    assert first.read_bytes() == second.read_bytes()
    lines = [json.loads(line) for line in first.read_text().splitlines()]
    assert [(x["snakes"], x["weight"]) for x in lines] == [(2, 0.5), (2, 1.0), (4, 0.5), (4, 1.0)]
    assert all(x["nodes"] in (60, 61) and x["move"] in ("up", "down", "left", "right")
               for x in lines)
    assert capsys.readouterr().out.startswith("4 searches at 60 nodes")
