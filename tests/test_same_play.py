"""``python -m bench.same_play``: a record of node-limited decisions that two checkouts
compare line by line (docs/evidence/README.md uses it to say whether pieces pool)."""

from __future__ import annotations

import json

from bench import same_play


def test_a_record_repeats_itself_and_a_change_of_play_is_counted(tmp_path, capsys):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (first, second):
        assert same_play.main(["--out", str(path), "--games", "2", "--nodes", "200"]) == 0
    lines = [json.loads(line) for line in first.read_text().splitlines()]
    assert {line["set"] for line in lines} == {"played", "hungry"}
    assert {line["snakes"] for line in lines} >= {2, 4}
    assert all(line["move"] in ("up", "down", "left", "right") for line in lines)
    assert all(0 < line["nodes"] <= 201 for line in lines if line["depth"])
    assert first.read_text() == second.read_text()
    capsys.readouterr()

    assert same_play.main(["--compare", str(first), str(second)]) == 0
    assert "0 differ" in capsys.readouterr().out

    # one search of the second record plays another move: counted as a difference of play
    changed = [json.loads(line) for line in second.read_text().splitlines()]
    target = next(line for line in changed if line["snakes"] == 4)
    target["move"] = next(m for m in ("up", "down", "left", "right") if m != target["move"])
    second.write_text("".join(json.dumps(line) + "\n" for line in changed))
    assert same_play.main(["--compare", str(first), str(second)]) == 1
    out = capsys.readouterr().out
    assert "1 differ (1 in their move)" in out

    # records of other positions are not compared as play
    changed[0]["position"] = "0" * 16
    second.write_text("".join(json.dumps(line) + "\n" for line in changed))
    assert same_play.main(["--compare", str(first), str(second)]) == 2
    assert "not comparable" in capsys.readouterr().out
