"""Shards: the on-disk position format, its loader, and the split by game."""

import json

import numpy as np
import pytest

from nnue.features import block_name, block_of
from training.datagen import generate, parse_args
from training.shards import (
    PositionBuilder,
    Positions,
    ShardError,
    load_shard,
    load_split,
    save_shard,
)


def sample() -> Positions:
    b = PositionBuilder()
    b.add(np.array([1, 5, 9], np.int32), 2, 1.0, block_of("standard", 11), 7, 0)
    b.add(np.array([63719], np.int32), 0, 0.5, block_of("squad", 19), 7, 1)
    b.add(np.array([4, 6], np.int32), 3, 0.37, block_of("solo", 7), 8, 0)
    return b.build()


def test_round_trip(tmp_path):
    pos = sample()
    save_shard(tmp_path / "train-00000.npz", pos)
    back = load_shard(tmp_path / "train-00000.npz")
    for name in ("indices", "offsets", "moves", "targets", "blocks", "games", "turns"):
        np.testing.assert_array_equal(getattr(back, name), getattr(pos, name))
    assert back.indices.dtype == np.int32 and back.moves.dtype == np.uint8
    assert back.features(1).tolist() == [63719]
    assert block_name(back.blocks[1]) == "squad 19x19"
    assert back.targets[2] == pytest.approx(0.37)


def test_shards_without_block_names_are_renumbered(tmp_path):
    """A shard written before the feature layout owned the block numbering (no
    ``block_names``; blocks numbered ruleset * 3 + size) loads with the layout's numbers."""
    pos = sample()
    old = {"standard 11x11": 1, "squad 19x19": 17, "solo 7x7": 12}
    path = tmp_path / "train-00000.npz"
    with open(path, "wb") as fh:
        np.savez(fh, indices=pos.indices, offsets=pos.offsets, moves=pos.moves,
                 targets=pos.targets, games=pos.games, turns=pos.turns,
                 blocks=np.array(list(old.values()), np.uint8))
    back = load_shard(path)
    assert [block_name(b) for b in back.blocks] == list(old)
    np.testing.assert_array_equal(back.blocks, pos.blocks)


def test_select_and_concatenate():
    pos = sample()
    sub = pos.select(np.array([2, 0]))
    assert [sub.features(i).tolist() for i in range(2)] == [[4, 6], [1, 5, 9]]
    assert sub.moves.tolist() == [3, 2]
    both = Positions.concatenate([pos, sub])
    assert len(both) == 5 and both.features(4).tolist() == [1, 5, 9]


def test_bad_shards_get_a_clear_error(tmp_path):
    path = tmp_path / "train-00000.npz"
    path.write_bytes(b"not a zip")
    with pytest.raises(ShardError, match="train-00000.npz"):
        load_shard(path)
    pos = sample()
    pos.offsets[-1] = 99
    save_shard(path, pos)
    with pytest.raises(ShardError, match="offsets"):
        load_shard(path)
    pos = sample()
    pos.targets[0] = 1.5
    save_shard(path, pos)
    with pytest.raises(ShardError, match="target"):
        load_shard(path)
    with pytest.raises(ShardError, match="no such data directory"):
        load_split(tmp_path / "missing", "train")


def test_datagen_splits_by_game_and_is_reproducible(tmp_path):
    a = generate(parse_args(["--out", str(tmp_path / "a"), "--games", "60", "--seed", "3",
                             "--workers", "1", "--chunk", "25", "--holdout", "0.2", "--quiet"]))
    splits = {s: load_split(tmp_path / "a", s) for s in ("train", "val", "test")}
    games = {s: set(p.games.tolist()) for s, p in splits.items()}
    assert games["train"] and games["val"] and games["test"]
    assert not (games["train"] & games["val"]) and not (games["train"] & games["test"])
    assert not (games["val"] & games["test"])
    assert sum(len(p) for p in splits.values()) == a["positions"]
    meta = json.loads((tmp_path / "a" / "meta.json").read_text())
    assert sum(meta["counts"]["test"]["positions"]) == len(splits["test"])
    assert sum(sum(meta["counts"][s]["games"]) for s in splits) == 60 - sum(meta["capped_games"])
    # another chunking of the same games gives the same positions
    generate(parse_args(["--out", str(tmp_path / "b"), "--games", "60", "--seed", "3",
                         "--workers", "1", "--chunk", "60", "--holdout", "0.2", "--quiet"]))
    other = load_split(tmp_path / "b", "train")
    np.testing.assert_array_equal(other.indices, splits["train"].indices)
    np.testing.assert_array_equal(other.targets, splits["train"].targets)
    # a rerun skips the finished chunks and refuses mismatched arguments
    again = generate(parse_args(["--out", str(tmp_path / "a"), "--games", "60", "--seed", "3",
                                 "--workers", "1", "--chunk", "25", "--holdout", "0.2", "--quiet"]))
    assert again["positions"] == a["positions"]
    with pytest.raises(SystemExit):
        generate(parse_args(["--out", str(tmp_path / "a"), "--games", "60", "--seed", "4",
                             "--workers", "1", "--chunk", "25", "--holdout", "0.2", "--quiet"]))


def test_datagen_resumed_with_other_settings_or_more_games(tmp_path, monkeypatch):
    """A run stopped before its end still refuses other settings (its settings are written
    before any game), so a game cannot land in two splits; a run given more --games plays
    its last chunk again in full instead of leaving the games past the old end out."""
    from training import datagen
    out = tmp_path / "d"
    args = ["--out", str(out), "--seed", "3", "--workers", "1", "--chunk", "20", "--quiet"]
    real = datagen.run_chunk

    def stops_at_chunk_1(task):
        if task[2] == 1:
            raise KeyboardInterrupt
        return real(task)
    monkeypatch.setattr(datagen, "run_chunk", stops_at_chunk_1)
    with pytest.raises(KeyboardInterrupt):
        generate(parse_args(args + ["--games", "30", "--holdout", "0.2"]))
    monkeypatch.setattr(datagen, "run_chunk", real)
    assert (out / "chunk-00000.json").is_file() and not (out / "chunk-00001.json").is_file()
    with pytest.raises(SystemExit, match="other"):
        generate(parse_args(args + ["--games", "30", "--holdout", "0.3"]))
    generate(parse_args(args + ["--games", "30", "--holdout", "0.2"]))     # the rest
    grown = generate(parse_args(args + ["--games", "50", "--holdout", "0.2"]))
    games = set()
    for split in ("train", "val", "test"):
        games |= set(load_split(out, split).games.tolist())
    assert sum(sum(grown["counts"][s]["games"]) for s in ("train", "val", "test")) \
        == 50 - sum(grown["capped_games"])
    assert max(games) >= 40                      # the games past the old end are there


def test_a_chunk_played_again_has_no_marker_until_its_new_shards_are_whole(tmp_path, monkeypatch):
    """The last chunk of a run given more --games is played again: its old marker goes
    before its shards are replaced, so a stop while they are written leaves a chunk that
    readers (``merge``) skip, not an old marker over new shards; finished, its marker
    names the new games."""
    from training import shards
    out = tmp_path / "d"
    args = ["--out", str(out), "--seed", "3", "--workers", "1", "--chunk", "20", "--quiet",
            "--holdout", "0.4"]
    generate(parse_args(args + ["--games", "30"]))
    old = json.loads((out / "chunk-00001.json").read_text())
    assert (old["first"], old["count"]) == (20, 10)
    real = shards.save_shard
    written = []

    def stops_after_one_shard(path, *a, **k):
        if written:
            raise KeyboardInterrupt
        written.append(path)
        real(path, *a, **k)
    monkeypatch.setattr(shards, "save_shard", stops_after_one_shard)
    with pytest.raises(KeyboardInterrupt):
        generate(parse_args(args + ["--games", "40"]))
    assert written and written[0].name.endswith("-00001.npz")
    assert not (out / "chunk-00001.json").exists()
    monkeypatch.setattr(shards, "save_shard", real)
    generate(parse_args(args + ["--games", "40"]))
    new = json.loads((out / "chunk-00001.json").read_text())
    assert (new["first"], new["count"]) == (20, 20)
    kept = {s: set(load_split(out, s).games.tolist()) for s in ("train", "val", "test")}
    assert max(set().union(*kept.values())) >= 30
    assert not (kept["train"] & kept["val"]) and not (kept["val"] & kept["test"])
