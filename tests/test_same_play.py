"""``python -m bench.same_play``: a record of node-limited decisions that two checkouts
compare line by line (docs/evidence/README.md uses it to say whether pieces pool)."""

from __future__ import annotations

import json

import pytest

from bench import same_play
from snake.search.strategy import make_search_strategy


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def write(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_record_repeats_itself_and_a_change_of_play_is_counted(tmp_path, capsys):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (first, second):
        assert same_play.main(["--out", str(path), "--games", "2", "--nodes", "200"]) == 0
    head, *lines = read(first)
    assert head["strategy"] == "search" and head["nodes"] == 200 and head["games"] == 2
    assert head["value_head"] == (make_search_strategy("search").value_head.digest
                                  + " for 2 alive on standard 11x11 in games begun with 2")
    assert [line["set"] for line in lines] == ["played", "hungry"] * (len(lines) // 2)
    assert {line["snakes"] for line in lines} >= {2, 4}
    assert {(line["began"], line["snakes"]) for line in lines} >= {(2, 2), (4, 4)}
    # each position searched twice, the hungry view another request than the played one
    assert all(p["position"] != h["position"] for p, h in zip(lines[::2], lines[1::2]))
    assert all(line["move"] in ("up", "down", "left", "right") for line in lines)
    # stopped by the node limit (or a proof, or a single move), never by the clock
    assert all(line["stopped"] != "deadline" for line in lines)
    assert any(line["stopped"] == "nodes" and line["nodes"] in (200, 201) for line in lines)
    assert first.read_text() == second.read_text()
    capsys.readouterr()

    assert same_play.main(["--compare", str(first), str(second)]) == 0
    assert "0 differ" in capsys.readouterr().out

    # a root score changed in its last bit: a difference, though the move is the same
    changed = read(second)
    target = next(line for line in changed[1:] if line["scores"])
    move = next(iter(target["scores"]))
    target["scores"][move] = target["scores"][move] + 1e-12
    write(second, changed)
    assert same_play.main(["--compare", str(first), str(second)]) == 1
    assert "1 differ (0 in their move)" in capsys.readouterr().out

    # another move as well: counted as a difference of move
    target["move"] = next(m for m in ("up", "down", "left", "right") if m != target["move"])
    write(second, changed)
    assert same_play.main(["--compare", str(first), str(second)]) == 1
    assert "1 differ (1 in their move)" in capsys.readouterr().out

    # records of other positions, of a run cut short or of other settings are not compared
    for edit in (lambda r: r[1].update(position="0" * 16), lambda r: r.pop(),
                 lambda r: r[0].update(nodes=300)):
        lines = read(first)
        edit(lines)
        write(second, lines)
        assert same_play.main(["--compare", str(first), str(second)]) == 2
        assert "not comparable" in capsys.readouterr().out

    # two names of one search (an older checkout's default, today's without its head) are
    # compared, and said to be two names
    lines = read(first)
    lines[0]["strategy"] = "search-joint"
    write(second, lines)
    assert same_play.main(["--compare", str(first), str(second)]) == 0
    assert "strategies 'search' and 'search-joint', compared as asked" in capsys.readouterr().out
    # so are two value heads, and the differences are counted where the games began
    lines = read(first)
    lines[0]["value_head"] = None
    lines[-1]["move"] = next(m for m in ("up", "down", "left", "right") if m != lines[-1]["move"])
    write(second, lines)
    assert same_play.main(["--compare", str(first), str(second)]) == 1
    out = capsys.readouterr().out
    assert f"value heads {head['value_head']} and None, compared as asked" in out
    last = lines[-1]
    assert any(row.split() == [last["set"], str(last["began"]), str(last["snakes"]),
                               row.split()[3], "1", "1"] for row in out.splitlines())
    # a record of an older version is refused by name
    lines[0]["format"] = "bench.same_play 2"
    write(second, lines)
    with pytest.raises(SystemExit, match="recorded by bench.same_play 2"):
        same_play.main(["--compare", str(first), str(second)])


def test_bad_records_and_network_searches_are_refused(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(SystemExit, match="not a record of bench.same_play"):
        same_play.main(["--compare", str(empty), str(empty)])
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    with pytest.raises(SystemExit, match="--compare"):
        same_play.main(["--compare", str(broken), str(broken)])
    with pytest.raises(SystemExit, match="values positions with the network"):
        same_play.main(["--out", str(tmp_path / "x.jsonl"), "--strategy", "search-net",
                        "--games", "1"])
