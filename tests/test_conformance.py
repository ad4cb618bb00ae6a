"""The rules engine against the official engine's recorded turns (tests/data/vectors/: their
format and how they were recorded are in that folder's README)."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from snake.conformance import check_file, main, read_lines

VECTORS = Path(__file__).resolve().parent / "data" / "vectors"
FILES = sorted(VECTORS.glob("*.jsonl.gz")) + sorted(VECTORS.glob("*.jsonl"))


def test_vectors_are_present():
    assert FILES, f"no vector files in {VECTORS}"


@pytest.mark.parametrize("engine", ["reference", "compiled"])
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_recorded_turn_matches(path, engine):
    result = check_file(path, engine=engine)
    assert result.turns >= 300
    assert result.mismatches == 0, "\n".join(result.reports)


def test_the_compiled_engine_reports_a_wrong_turn(tmp_path, capsys):
    lines = _lines("standard_11x11.jsonl.gz")[:3]
    lines[1]["after_rules"]["snakes"][0]["health"] += 1
    path = _write(tmp_path, lines)
    assert main(["--engine", "compiled", str(path)]) == 1
    out = capsys.readouterr().out
    assert "1 mismatches" in out and "health" in out


def _lines(name: str) -> list[dict]:
    return list(read_lines(VECTORS / name))


def _write(tmp_path: Path, lines: list[dict], name: str = "case.jsonl") -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.writelines(json.dumps(line) + "\n" for line in lines)
    else:
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_cli_reports_and_exits_zero_on_a_clean_file(tmp_path, capsys):
    lines = _lines("standard_7x7.jsonl.gz")[:20]
    path = _write(tmp_path, lines, "clean.jsonl.gz")
    assert main([str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{path}: 20 turns, 0 mismatches", "conformance: 1 passed, 0 failed"]


def test_a_wrong_health_is_a_mismatch_with_a_diff(tmp_path, capsys):
    lines = copy.deepcopy(_lines("standard_7x7.jsonl.gz")[:10])
    lines[4]["after_rules"]["snakes"][0]["health"] += 1
    good = _write(tmp_path, _lines("wrapped_7x7.jsonl.gz")[:5], "good.jsonl")
    bad = _write(tmp_path, lines, "bad.jsonl")
    assert main([str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}: 10 turns, 1 mismatches" in out
    assert "after_rules.snakes[0].health: expected" in out
    assert out.splitlines()[-1] == "conformance: 1 passed, 1 failed"


def test_every_field_is_compared(tmp_path):
    base = _lines("squad_7x7.jsonl.gz")
    line = next(candidate for candidate in base
                if any(s["eliminated_cause"] for s in candidate["after_rules"]["snakes"])
                and candidate["after_rules"]["food"])
    dead = next(i for i, s in enumerate(line["after_rules"]["snakes"]) if s["eliminated_cause"])
    edits = [
        lambda a: a["snakes"][dead].update(eliminated_cause="hazard"),
        lambda a: a["snakes"][dead].update(eliminated_by="nobody"),
        lambda a: a["snakes"][dead].update(eliminated_on_turn=0),
        lambda a: a["snakes"][0]["body"].append(a["snakes"][0]["body"][-1]),
        lambda a: a["food"].pop(),
        lambda a: a["hazards"].append({"x": 0, "y": 0}),
    ]
    for edit in edits:
        changed = copy.deepcopy(line)
        edit(changed["after_rules"])
        assert check_file(_write(tmp_path, [changed])).mismatches == 1


def test_spawned_food_must_obey_the_spawn_rule(tmp_path):
    lines = _lines("standard_11x11.jsonl.gz")
    line = next(candidate for candidate in lines
                if candidate["spawned_food"] and not candidate["last_turn"])
    head = line["after_rules"]["snakes"][0]["body"][0]
    for bad_food in ({"x": head["x"], "y": head["y"]},                   # on a body
                     {"x": head["x"] + 1 if head["x"] < 10 else head["x"] - 1, "y": head["y"]}):
        changed = copy.deepcopy(line)
        changed["spawned_food"] = [bad_food]
        changed["after"]["food"] = changed["after_rules"]["food"] + [bad_food]
        result = check_file(_write(tmp_path, [changed]), max_reports=1)
        assert result.mismatches == 1
        assert "may not use" in result.reports[0]
    two = copy.deepcopy(line)
    extra = next({"x": x, "y": y} for x in range(11) for y in range(11)
                 if {"x": x, "y": y} not in two["after"]["food"]
                 and all({"x": x, "y": y} not in s["body"] for s in two["after"]["snakes"]))
    two["spawned_food"].append(extra)
    two["after"]["food"].append(extra)
    assert check_file(_write(tmp_path, [two])).mismatches == 1


def test_the_empty_map_never_spawns(tmp_path):
    line = copy.deepcopy(_lines("constrictor-emptymap_7x7.jsonl.gz")[3])
    assert line["map"] == "empty" and line["spawned_food"] == []
    food = {"x": 0, "y": 0}
    line["spawned_food"] = [food]
    line["after"]["food"].append(food)
    result = check_file(_write(tmp_path, [line]), max_reports=1)
    assert result.mismatches == 1 and "never spawns" in result.reports[0]


def test_a_broken_chain_between_turns_is_a_mismatch(tmp_path):
    lines = copy.deepcopy(_lines("royale_7x7.jsonl.gz")[:6])
    lines[3]["before"]["food"].append({"x": 6, "y": 6})
    result = check_file(_write(tmp_path, lines), max_reports=1)
    assert result.mismatches >= 1 and "previous line" in result.reports[0]


def test_unreadable_file_fails(tmp_path, capsys):
    bad = tmp_path / "garbage.jsonl"
    bad.write_text("{not json\n")
    assert main([str(bad), str(tmp_path / "missing.jsonl")]) == 1
    out = capsys.readouterr().out
    assert "cannot read" in out and out.splitlines()[-1] == "conformance: 0 passed, 2 failed"


def test_recorded_settings_are_read_as_a_request_reads_them():
    from snake.board import RequestError, Settings, parse_request
    from snake.conformance import game_from_line
    wire = {"foodSpawnChance": 25, "minimumFood": None, "royale": {"shrinkEveryNTurns": 5},
            "squad": {"sharedHealth": True}, "hazardMap": ""}
    game = game_from_line({"game_id": "g", "ruleset": {"name": "squad", "settings": wire}})
    request = parse_request({
        "game": {"id": "g", "ruleset": {"name": "squad", "settings": wire}},
        "turn": 0, "board": {"width": 7, "height": 7, "food": [], "hazards": [], "snakes": []},
        "you": {"id": "a", "body": [{"x": 1, "y": 1}], "health": 100}})
    assert game.ruleset.settings == request.state.game.ruleset.settings == Settings(
        food_spawn_chance=25, shrink_every_n_turns=5, shared_health=True)
    assert game_from_line({"ruleset": {"name": "standard"}}).ruleset.settings == Settings()
    with pytest.raises(RequestError, match="ruleset.settings.minimumFood"):
        game_from_line({"ruleset": {"name": "standard", "settings": {"minimumFood": "1"}}})
