"""The whole pipeline on a tiny scale: datagen -> fit -> export -> a loadable weight file."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from nnue.network import Network  # noqa: E402
from training import datagen, evaluate, export, fit  # noqa: E402


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("data")
    datagen.generate(datagen.parse_args(["--out", str(out), "--games", "54", "--seed", "11",
                                         "--workers", "1", "--holdout", "0.2", "--quiet"]))
    return out


def fit_args(data_dir, run, *extra):
    return fit.parse_args(["--data", str(data_dir), "--run", str(run), "--hidden", "8", "4",
                           "--batch-size", "64", "--threads", "1", "--quiet", *extra])


def test_tiny_run_exports_a_loadable_network(data_dir, tmp_path, capsys):
    run = tmp_path / "run"
    state = fit.fit(fit_args(data_dir, run, "--epochs", "1", "--val-every", "5"))
    assert state["epoch"] == 1 and len(state["history"]) == 1
    assert [p["steps"] for p in state["val_points"]][:2] == [5, 10]
    history = json.loads((run / "history.json").read_text())
    assert history["history"][0]["val_loss"] > 0 and history["val_points"]
    assert (run / "best.pt").is_file() and (run / "checkpoint.pt").is_file()
    assert (run / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = tmp_path / "weights" / "nnue.npz"
    out.parent.mkdir()
    head = {"weights_file": "value-duel.npz", "games": 1800}  # the shipped head's account
    (out.parent / "MANIFEST.json").write_text(json.dumps({"weights_file": "old.npz",
                                                          "value_head": head}))
    manifest = export.export(run, data_dir, out, command="test", threads=1)
    net = Network.load(out)
    assert net.quantised and net.hidden == (8, 4)
    assert net.manifest["data"]["seed"] == 11
    assert net.manifest["training"]["epochs_run"] == 1
    assert (set(net.manifest["data"]["positions_per_block"]["train"])
            >= {"standard 7x7", "squad 19x19"})
    agreement = manifest["agreement_numpy_vs_torch"]
    assert agreement["positions"] > 0 and agreement["max_abs_diff"] < 0.02
    assert agreement["serving_path_max_abs_diff"] < export.SERVING_TOLERANCE
    mirror = json.loads((out.parent / "MANIFEST.json").read_text())
    assert mirror["manifest"] == net.manifest and mirror["bytes"] == out.stat().st_size
    assert mirror["weights_file"] == "nnue.npz" and mirror["value_head"] == head  # kept
    # the evaluation table runs on the exported file
    evaluate.main(["--data", str(data_dir), "--weights", str(out)])
    table = capsys.readouterr().out
    assert "standard 7x7" in table and "all" in table


def test_an_export_that_computes_otherwise_is_refused(data_dir, tmp_path, monkeypatch):
    """An output layer exported wrong (here its bias off by 3 logits; a second layer left
    untransposed fits the shapes too, but moves a barely trained network's outputs too
    little to tell) changes what the network computes: the export is refused and the
    shipped file and manifest stay as they were."""
    from training.model import NnueModel
    run = tmp_path / "run"
    fit.fit(fit_args(data_dir, run, "--epochs", "1"))
    out = tmp_path / "weights" / "nnue.npz"
    export.export(run, data_dir, out, command="good", threads=1)
    before = out.read_bytes(), (out.parent / "MANIFEST.json").read_text()
    right = NnueModel.float_weights

    def wrong(self):
        weights = right(self)
        weights["b3"] = weights["b3"] + 3.0
        return weights
    monkeypatch.setattr(NnueModel, "float_weights", wrong)
    with pytest.raises(export.ExportError, match="differ from the model"):
        export.export(run, data_dir, out, command="bad", threads=1)
    assert (out.read_bytes(), (out.parent / "MANIFEST.json").read_text()) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["MANIFEST.json", "nnue.npz"]


def test_resuming_a_run_that_stopped_early_changes_nothing(data_dir, tmp_path):
    """A run stopped early, resumed with the same command (the loop does so when it was cut
    off between training and recording it), keeps its epochs and its best weights; a
    larger --patience lets it go on."""
    run = tmp_path / "run"
    args = ["--epochs", "30", "--patience", "1", "--lr", "0.05"]
    first = fit.fit(fit_args(data_dir, run, *args))
    assert first["stopped"].startswith("early stop") and len(first["history"]) < 30
    best = (run / "best.pt").read_bytes()
    again = fit.fit(fit_args(data_dir, run, *args, "--resume"))
    assert again["stopped"] == first["stopped"]
    assert len(again["history"]) == len(first["history"])
    assert (run / "best.pt").read_bytes() == best
    more = fit.fit(fit_args(data_dir, run, "--epochs", "30", "--patience", "2", "--lr", "0.05",
                            "--resume"))
    assert len(more["history"]) > len(first["history"])


def test_self_play_data_trains_every_move_and_exports(data_dir, tmp_path):
    """Self-play shards carry a target per move: the trainer learns all four outputs
    (``--loss auto``), its validation loss is every move's, and the export loads."""
    from training import selfplay

    data = tmp_path / "sp"
    selfplay.main(["--out", str(data), "--games", "6", "--nodes", "60", "--chunk", "1",
                   "--seed", "11", "--workers", "1",
                   "--holdout", "0.25", "--quiet"])   # all 3 splits
    run = tmp_path / "run"
    state = fit.fit(fit_args(data, run, "--epochs", "2"))
    history = json.loads((run / "history.json").read_text())
    assert history["config"]["loss"] == "moves"
    val = fit.load_split(data, "val")
    model, _ = fit.load_model(run / "best.pt")
    assert state["best_val"] == pytest.approx(fit.mean_loss(model, val, all_moves=True))
    with pytest.raises(SystemExit, match="move targets"):     # random games have none
        fit.fit(fit_args(data_dir, tmp_path / "r2", "--loss", "moves"))
    net_path = tmp_path / "w" / "nnue.npz"
    export.export(run, data, net_path, command="test", threads=1)
    assert Network.load(net_path).hidden == (8, 4)


def test_resume_continues_where_the_run_stopped(data_dir, tmp_path):
    straight = tmp_path / "straight"
    fit.fit(fit_args(data_dir, straight, "--epochs", "2"))
    broken = tmp_path / "broken"
    # stop after the first batch (a checkpoint is written), then resume to the end
    stopped = fit.fit(fit_args(data_dir, broken, "--epochs", "2", "--time-limit", "1e-9"))
    assert stopped["stopped"].startswith("time limit") and stopped["steps"] == 1
    resumed = fit.fit(fit_args(data_dir, broken, "--epochs", "2", "--resume"))
    assert resumed["epoch"] == 2 and [h["epoch"] for h in resumed["history"]] == [1, 2]
    a = torch.load(straight / "checkpoint.pt", weights_only=False)
    b = torch.load(broken / "checkpoint.pt", weights_only=False)
    assert a["state"]["steps"] == b["state"]["steps"]
    for name, value in a["model"].items():
        np.testing.assert_allclose(b["model"][name].numpy(), value.numpy(), atol=1e-6, err_msg=name)


def test_resume_without_a_checkpoint_is_refused(data_dir, tmp_path):
    with pytest.raises(SystemExit, match="no checkpoint"):
        fit.fit(fit_args(data_dir, tmp_path / "none", "--resume"))


def test_freeze_dense_trains_only_the_rows_the_data_touches(data_dir, tmp_path):
    """``--freeze-dense``: the first layer's bias and every layer after it stay as ``--init``
    gave them, and so do the first-layer rows of features the data never shows (the blocks
    it does not cover); the rows it shows learn."""
    start = tmp_path / "start.npz"
    Network.random(5, hidden=(8, 4)).save(start, {"note": "init"})
    run = tmp_path / "frozen"
    fit.fit(fit_args(data_dir, run, "--epochs", "1", "--init", str(start), "--freeze-dense"))
    before, _ = fit.load_model(start)
    after, ck = fit.load_model(run / "best.pt")
    assert ck["config"]["freeze_dense"] is True
    for name, value in before.state_dict().items():
        if name != "ft.weight":
            assert torch.equal(after.state_dict()[name], value), name
    seen = np.zeros(before.ft.weight.shape[0], bool)
    seen[np.unique(fit.load_split(data_dir, "train").indices)] = True
    w_before, w_after = before.ft.weight.detach().numpy(), after.ft.weight.detach().numpy()
    assert np.array_equal(w_after[~seen], w_before[~seen])
    assert (np.abs(w_after[seen] - w_before[seen]).max(axis=1) > 0).mean() > 0.9
    with pytest.raises(SystemExit):
        fit.parse_args(["--data", str(data_dir), "--run", str(tmp_path / "x"), "--freeze-dense"])
    # a run that trains every layer is not frozen halfway by a resume
    whole = tmp_path / "whole"
    fit.fit(fit_args(data_dir, whole, "--epochs", "2", "--time-limit", "1e-9"))
    with pytest.raises(SystemExit, match="cannot be switched on"):
        fit.fit(fit_args(data_dir, whole, "--epochs", "2", "--resume", "--freeze-dense"))


def test_merge_joins_finished_chunks_of_several_runs(data_dir, tmp_path):
    """``training.merge``: the finished chunks of two self-play runs (other seeds, other
    turn caps) become one data directory the trainer and the exporter read; a chunk without
    its marker (cut short) is left out; mixing random games with self-play is refused."""
    from training import merge, selfplay
    from training.shards import load_meta, load_shard

    def positions(paths):
        return sum(len(load_shard(p)) for p in paths)

    a, b = tmp_path / "a", tmp_path / "b"
    # (seed 11: a training and a validation game; seed 4: a test and a training game)
    for out, seed, cap, rule in ((a, "11", "600", "draw"), (b, "4", "1000", "drop")):
        selfplay.main(["--out", str(out), "--games", "2", "--nodes", "60", "--chunk", "1",
                       "--seed", seed, "--max-turns", cap, "--capped", rule, "--workers", "1",
                       "--holdout", "0.3", "--opening", "0", "--quiet"])
    (b / "chunk-00001.json").unlink()          # b's second chunk was cut short
    merged = tmp_path / "m"
    meta = merge.merge(merged, [a, b])
    for split in ("train", "val", "test"):
        want = positions(a.glob(f"{split}-*.npz")) + positions(b.glob(f"{split}-00000.npz"))
        assert want and positions(merged.glob(f"{split}-*.npz")) == want, split
    assert meta["positions"] == positions(a.glob("*.npz")) + positions(b.glob("*-00000.npz"))
    assert load_meta(merged)["merged_from"][1]["max_turns"] == 1000
    assert meta["games"] == 3 and meta["capped_games"] == 0
    assert meta["max_turns"] == [600, 1000] and meta["seed"] == [11, 4]
    assert merge.merge(merged, [a, b]) == meta                  # again: the same
    fit.fit(fit_args(merged, tmp_path / "run", "--epochs", "1"))  # the trainer reads it
    manifest = export.export(tmp_path / "run", merged, tmp_path / "w" / "nnue.npz", threads=1)
    assert [m["seed"] for m in manifest["data"]["merged_from"]] == [11, 4]
    assert (manifest["data"]["capped_games_were"]
            == f"{a}: kept, the snakes still in drawing; {b}: dropped")
    with pytest.raises(merge.MergeError, match="other data"):
        merge.merge(merged, [a])
    with pytest.raises(merge.MergeError, match="different kinds"):
        merge.merge(tmp_path / "mixed", [a, data_dir])        # random games
    # a run with a's seed holds a's games (and, with another --holdout, in other splits)
    c = tmp_path / "c"
    selfplay.main(["--out", str(c), "--games", "1", "--nodes", "60", "--chunk", "1",
                   "--seed", "11", "--workers", "1", "--holdout", "0.1", "--opening", "0",
                   "--quiet"])
    with pytest.raises(merge.MergeError, match="share a --seed"):
        merge.merge(tmp_path / "same-seed", [a, c])
