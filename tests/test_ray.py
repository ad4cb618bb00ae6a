"""The tools on a Ray cluster (``--ray``), on a local Ray of two CPUs: an arena match plays
the same games as worker processes, a sequential test stops it where one process would,
a tuning plays each pair as a process plays it and resumes, and ``python -m
bench.arena_ray`` compares the two ways (tiny sizes: its figures are not asserted).

One Ray serves the module (starting one takes seconds): the commands, given ``--ray local``,
play on the connection this process already holds (:func:`snake.arena.cluster.connect`).
"""

from __future__ import annotations

import json
import re
import time

import pytest

ray = pytest.importorskip("ray")

from snake.arena.__main__ import main as arena  # noqa: E402
from training.tune import Tuning, play_pair  # noqa: E402
from training.tune import main as tune  # noqa: E402

#: Fixed-node searches and the seed step: built-in players without --builtin-timeout play
#: the same moves on any machine at any load; the seed step's network travels as bytes.
PLAYERS = ["search[max_nodes=200,think_ms=600000]",
           "nohead=search[max_nodes=100,think_ms=600000,value_head=none]", "seed"]
LAST_LINE = re.compile(r"arena: (\d+) wins, (\d+) draws, (\d+) losses")


@pytest.fixture(scope="module")
def local_ray():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_worker_niceness", "0")     # as connect() starts a local one
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            yield
        finally:
            ray.shutdown()


def _idle_within(seconds: float) -> bool:
    """Whether every CPU of the local Ray is free again within ``seconds``: no task of a
    finished run still plays."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ray.available_resources().get("CPU", 0) >= 2:
            return True
        time.sleep(0.2)
    return False


def test_a_match_on_ray_plays_the_same_games_as_worker_processes(local_ray, tmp_path, capsys):
    runs = {}
    for how in (["--parallel", "2"], ["--parallel", "2", "--ray", "local"]):
        folder = tmp_path / how[-1]
        assert arena([*PLAYERS, "-g", "20", "--size", "7", "--seed", "11", "-q",
                      "-o", str(folder), *how]) == 0
        entries = [json.loads(line) for line in (folder / "games.jsonl").read_text().splitlines()]
        runs[how[-1]] = (capsys.readouterr().out.splitlines()[-1], folder,
                         sorted(entries, key=lambda e: e["index"]))
    (line, folder, entries), (ray_line, ray_folder, ray_entries) = runs["2"], runs["local"]
    assert LAST_LINE.match(line) and ray_line == line
    assert len(entries) == len(ray_entries) == 20
    outcomes = {e["results"]["search[max_nodes=200,think_ms=600000]"] for e in entries}
    assert len(outcomes) > 1                 # a match of mixed results, not 20 alike
    for entry, ray_entry in zip(entries, ray_entries):
        # each game's record came back from its task and was written here, as a process
        # writes its own
        name = f"game-{entry['index']:05d}.jsonl"
        assert entry.pop("replay") == str(folder / name)
        assert ray_entry.pop("replay") == str(ray_folder / name)
        assert (ray_folder / name).read_bytes() == (folder / name).read_bytes()
        assert ray_entry == entry
    summary = json.loads((ray_folder / "results.json").read_text())
    assert summary["options"]["ray"] == "local" and len(summary["games_played"]) == 20
    assert _idle_within(10)


def test_a_sequential_test_on_ray_stops_where_one_process_would(local_ray, capsys):
    """Games finish on the cluster in any order; the test counts them in theirs, so it
    decides after the same games as one process, and the games still out are cancelled."""
    lines = []
    for how in (["--parallel", "1"], ["--parallel", "2", "--ray", "local"]):
        assert arena([PLAYERS[0], "seed", "-g", "400", "--size", "7", "--seed", "9",
                      "--sprt=0,100", "-q", *how]) == 0
        out = capsys.readouterr().out
        lines.append((out.splitlines()[-1], next(x for x in out.splitlines()
                                                 if x.startswith("sprt"))))
    assert lines[0] == lines[1] and "H1 accepted" in lines[1][1]
    games = sum(int(n) for n in LAST_LINE.match(lines[1][0]).groups())
    assert games < 40
    # the games not needed (350 or more, some 20 s of these two CPUs) were cancelled, not
    # played on
    assert _idle_within(5)


def test_a_tuning_on_ray_plays_each_pair_as_a_process_does_and_resumes(local_ray, tmp_path):
    folder = tmp_path / "tune"
    argv = ["--dir", str(folder), "--nodes", "150", "--size", "7", "--max-turns", "150",
            "--workers", "2", "-q", "--c", "0.5", "--step", "0.2", "--ray", "local"]
    assert tune(argv + ["--iterations", "2"]) == 0
    state = json.loads((folder / "tune.json").read_text())
    assert [p["k"] for p in state["iterations"]] == [0, 1]
    assert (folder / "tune.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the same pairs played here, in this process, from the same w
    fresh = Tuning(tmp_path / "fresh", state["settings"])
    for task, pair in zip(fresh.tasks(0, 2), state["iterations"]):
        here = play_pair(task)
        assert (here["k"], here["r"], here["results"], here["turns"]) == \
            (pair["k"], pair["r"], pair["results"], pair["turns"])
    # the same command resumes where it stopped, the next batch from the moved w
    assert tune(argv + ["--iterations", "4"]) == 0
    again = json.loads((folder / "tune.json").read_text())
    assert again["iterations"][:2] == state["iterations"]
    assert [p["from"] for p in again["iterations"]] == [0, 0, 2, 2]
    assert _idle_within(10)


def test_the_ray_benchmark_plays_the_same_games_both_ways_and_prints_its_figures(local_ray,
                                                                                   capsys):
    from bench import arena_ray

    assert arena_ray.main(["--games", "4", "--size", "7", "--nodes", "100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "the same 4 games both ways, best of 1" in lines[-2]
    assert re.fullmatch(r"arena_ray: parallel \d+ games/h, ray \d+ games/h, "
                        r"overhead [+-]\d+\.\d %", lines[-1])
    assert _idle_within(10)
