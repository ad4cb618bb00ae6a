"""Self-play data (training.selfplay) on tiny sizes: positions, blended targets,
reproducibility, resuming, and the same run on Ray."""

from __future__ import annotations

import json

import numpy as np
import pytest

from training.selfplay import blend_moves, main, score_target
from training.shards import load_split, shard_paths


def run(out, *extra):
    # Games capped at 80 turns: the data's format, targets, reproducibility and resuming
    # show as well in short games (uncapped, the 19x19 game ran to 1,000 turns and the
    # module took a minute); results of finished games are tests/test_train_targets.py's.
    main(["--out", str(out), "--games", "2", "--nodes", "100", "--chunk", "1", "--seed", "4",
          "--workers", "1", "--quiet", "--lambda", "0.25", "--max-turns", "80", *extra])
    return json.loads((out / "meta.json").read_text())


def shards(out):
    data = {}
    for split in ("train", "val", "test"):
        for path in shard_paths(out, split):
            with np.load(path) as z:
                data[path.name] = {k: z[k].copy() for k in z.files}
    return data


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One run, shared by the tests that compare against it."""
    out = tmp_path_factory.mktemp("selfplay") / "a"
    return out, run(out)


def test_selfplay_writes_positions_with_blended_targets(reference, tmp_path):
    out, meta = reference
    assert meta["games"] == 2 and meta["positions"] > 100 and meta["capped"] == "draw"
    assert meta["positions_per_hour"] > 0 and meta["lambda"] == 0.25
    written = shards(out)
    assert written
    for z in written.values():
        assert np.allclose(z["targets"], 0.25 * z["results"] + 0.75 * z["scores"], atol=1e-6)
        assert set(np.unique(z["results"])) <= {0.0, 0.5, 1.0} or z["results"].max() <= 1
        assert ((0 <= z["scores"]) & (z["scores"] <= 1)).all()
        # every move has a target: its search score (kept as move_scores; certain death 0)
        # blended with the result like the played one's, a proven value (0 or 1) as it is;
        # all four scores from one completed iteration, so the targets rank the moves as
        # the scores do
        each, raw = z["move_targets"], z["move_scores"]
        assert each.shape == raw.shape == (len(z["moves"]), 4)
        assert ((0 <= each) & (each <= 1)).all()
        rows = np.arange(len(z["moves"]))
        assert np.allclose(each[rows, z["moves"]], z["targets"])
        assert np.allclose(raw[rows, z["moves"]], z["scores"])
        for i in range(len(rows)):
            assert np.allclose(each[i], blend_moves(raw[i], z["moves"][i], z["targets"][i],
                                                    z["results"][i], 0.25))
        open_ = (raw > 0) & (raw < 1)
        assert open_.any() and (raw == 0).any()       # real scores, and certain deaths
        for i in np.flatnonzero(open_.sum(axis=1) >= 2):
            m = np.flatnonzero(open_[i])
            higher = raw[i, m][:, None] > raw[i, m][None, :] + 1e-6
            assert (each[i, m][:, None] >= each[i, m][None, :] - 1e-6)[higher].all()
    train = load_split(out, "train")     # what the trainer reads
    assert len(train) == sum(len(z["moves"]) for name, z in written.items()
                             if name.startswith("train"))
    assert train.move_targets is not None and train.move_targets.shape == (len(train), 4)


def test_selfplay_is_reproducible_and_resumes(reference, tmp_path):
    run(tmp_path / "b")
    a, b = shards(reference[0]), shards(tmp_path / "b")
    assert a.keys() == b.keys()
    for name in a:
        for key in a[name]:
            assert np.array_equal(a[name][key], b[name][key]), (name, key)
    # an interrupted run: one chunk lost; the rerun plays only that one, same result
    for path in (tmp_path / "b").glob("*-00001*"):
        path.unlink()
    (tmp_path / "b" / "chunk-00001.json").unlink(missing_ok=True)
    meta = run(tmp_path / "b")
    assert meta["games"] == 2
    assert shards(tmp_path / "b").keys() == a.keys()
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "b"), "--games", "2", "--nodes", "999", "--quiet"])


def test_the_same_run_on_a_ray_cluster(reference, tmp_path):
    run(tmp_path / "ray", "--ray", "local")
    a, b = shards(reference[0]), shards(tmp_path / "ray")
    assert a.keys() == b.keys()
    for name in a:
        assert np.array_equal(a[name]["targets"], b[name]["targets"])
        assert np.array_equal(a[name]["indices"], b[name]["indices"])


def test_other_moves_are_blended_like_the_played_one():
    from training.selfplay import blend_moves
    out = blend_moves(np.array([0.6, 0.0, 1.0, 0.4], np.float32), 0, 0.3, 0.0, 0.5)
    # played: its own target; open scores blended with the loss; proven ones kept
    assert np.allclose(out, [0.3, 0.0, 1.0, 0.2])


def test_scores_as_probabilities():
    assert score_target(999.0) == 1.0 and score_target(-990.0) == 0.0
    assert score_target(0.0) == 0.5 and score_target(0.5) == 0.75 and score_target(-1.0) == 0.0


def test_a_generation_plays_with_its_network_in_the_leaves(reference, tmp_path):
    """``--weights``: the search values leaves with that network (the learning loop's later
    generations), so the same games are scored differently; a bad file stops the run."""
    from pathlib import Path
    weights = Path(__file__).resolve().parents[1] / "weights" / "nnue.npz"
    meta = run(tmp_path / "net", "--weights", str(weights), "--network-weight", "0.5")
    assert meta["weights"] == str(weights) and meta["network_weight"] == 0.5
    a, b = shards(reference[0]), shards(tmp_path / "net")
    common = [name for name in a if name in b and len(a[name]["scores"]) and len(b[name]["scores"])]
    assert common
    assert any(not np.array_equal(a[n]["scores"][:20], b[n]["scores"][:20]) for n in common)
    with pytest.raises(SystemExit):
        run(tmp_path / "bad", "--weights", str(tmp_path / "missing.npz"))


def test_games_stopped_at_the_cap_are_draws_for_the_snakes_still_in(tmp_path):
    """A game still going at ``--max-turns`` is kept, scored as the arena scores it: each
    snake still in draws (0.5), one already out has lost (0); ``--capped drop`` drops it."""
    kept = run(tmp_path / "kept", "--max-turns", "12", "--opening", "0")
    assert kept["capped_games"] == 2 and kept["games"] == 2
    written = shards(tmp_path / "kept").values()
    results = np.concatenate([z["results"] for z in written])
    turns = np.concatenate([z["turns"] for z in written])
    solo = np.concatenate([np.char.startswith(z["block_names"][z["blocks"]], "solo")
                           for z in written])
    assert len(results) and turns.max() == 11
    assert set(np.unique(results[~solo])) <= {0.0, 0.5}
    assert np.allclose(results[solo], 12 / 100)       # solo: min(T / 100, 1), T = 12 moves
    dropped = run(tmp_path / "dropped", "--max-turns", "12", "--opening", "0", "--capped", "drop")
    assert dropped["capped_games"] == 2 and dropped["games"] == 0 and dropped["positions"] == 0
    # a directory is resumed with its own rule; asking for the other one is refused
    again = run(tmp_path / "dropped", "--max-turns", "12", "--opening", "0")
    assert again["capped"] == "drop" and again["games"] == 0
    with pytest.raises(SystemExit, match="other settings"):
        run(tmp_path / "dropped", "--max-turns", "12", "--opening", "0", "--capped", "draw")
    # one made before the rule existed (no "capped" in its meta) dropped capped games
    meta = json.loads((tmp_path / "dropped" / "meta.json").read_text())
    del meta["capped"]
    (tmp_path / "dropped" / "meta.json").write_text(json.dumps(meta))
    assert run(tmp_path / "dropped", "--max-turns", "12", "--opening", "0")["capped"] == "drop"


def test_capped_targets_by_who_is_still_in():
    """At the cap a snake still in draws and one already out has lost; in squad a snake out
    whose squadmate lives is still in; solo scores the moves made."""
    from snake.diagram import from_ascii
    from training.targets import capped_targets

    drawing = """
        . . . . . . .
        . A a . B b .
        . . . . . . .
        . C c . D d .
        . . . . . . .
    """
    state = from_ascii(drawing).state
    state.board.snake("C").eliminated_cause = "wall-collision"
    made = {sid: 40 for sid in "ABCD"}
    assert capped_targets(state, made) == {"A": 0.5, "B": 0.5, "C": 0.0, "D": 0.5}
    squad = from_ascii(drawing, "squad", squads={"A": "x", "C": "x", "B": "y", "D": "y"}).state
    squad.board.snake("C").eliminated_cause = "wall-collision"
    squad.board.snake("B").eliminated_cause = "wall-collision"
    squad.board.snake("D").eliminated_cause = "wall-collision"
    assert capped_targets(squad, made) == {"A": 0.5, "B": 0.0, "C": 0.5, "D": 0.0}
    solo = from_ascii(". . .\n. A a\n. . .", "solo").state
    assert capped_targets(solo, {"A": 37}) == {"A": 0.37}


def _dies(task):
    """A worker that dies as a killed one does (no exception, no result)."""
    import os
    if task == "die":
        os._exit(9)
    return task


def test_a_worker_that_dies_stops_the_run_instead_of_hanging():
    """A process pool waits for ever for the chunk of a worker that was killed; the run's
    pool stops with an error that says how to go on."""
    from training.selfplay import _process_results
    with pytest.raises(SystemExit, match="worker process died"):
        list(_process_results(["live", "die", "live"], 2, play=_dies))
