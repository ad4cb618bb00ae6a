"""The settings: every environment variable in one table (snake/settings.py), parsed and
checked once, refused at start-up with an error naming each bad one; README.md shows the
same table; no ``NUPPEPPOU_*`` name in the project is missing from it."""

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from snake import settings as settings_module
from snake.settings import (
    INTERNAL,
    TEST_SWITCHES,
    VARIABLES,
    Settings,
    SettingsError,
    markdown,
    read,
)

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- settings: begin -->", "<!-- settings: end -->"


def test_nothing_set_gives_the_defaults():
    assert Settings.from_environ({}) == Settings()
    assert Settings.from_environ({"NUPPEPPOU_WORKERS": "", "PORT": "  "}) == Settings()


def test_values_are_read_as_their_types():
    given = Settings.from_environ({
        "PORT": "9000", "NUPPEPPOU_IDLE_LIMIT": "30.5", "NUPPEPPOU_ADAPTIVE_MARGIN": "Off",
        "NUPPEPPOU_CHECK_MOVES": "no", "NUPPEPPOU_LOG_LEVEL": "debug",
        "NUPPEPPOU_GAME_LOG": "off", "NUPPEPPOU_SEARCH_ENGINE": "python",
        "NUPPEPPOU_SEARCH_MAX_NODES": "400", "NUPPEPPOU_SEARCH_MARGIN_MS": "0",
        "NUPPEPPOU_DASHBOARD_TOKEN": "s3cret"})
    assert (given.port, given.idle_limit, given.adaptive_margin, given.check_moves) == \
        (9000, 30.5, False, False)
    assert (given.log_level, given.game_log, given.search_engine) == ("DEBUG", None, "python")
    assert (given.search_max_nodes, given.search_margin_ms) == (400, 0.0)
    assert given.dashboard_token == "s3cret" and "s3cret" not in repr(given)
    # an empty game log is none, as before: not the default file
    assert Settings.from_environ({"NUPPEPPOU_GAME_LOG": ""}).game_log is None


@pytest.mark.parametrize("name, value, expected", [
    ("NUPPEPPOU_SEARCH_THREADS", "x", "NUPPEPPOU_SEARCH_THREADS='x': expected an integer ≥ 1"),
    ("NUPPEPPOU_WORKERS", "0", "NUPPEPPOU_WORKERS='0': expected an integer ≥ 1"),
    ("NUPPEPPOU_SEARCH_CORES", "-2", "expected an integer ≥ 1"),
    ("NUPPEPPOU_GAME_LOG_MAX_MB", "-1", "expected a number > 0"),
    ("NUPPEPPOU_IDLE_LIMIT", "nan", "expected a number > 0"),
    ("NUPPEPPOU_SEARCH_TABLE_MB", "0", "expected a number > 0"),
    ("NUPPEPPOU_SEARCH_MARGIN_MS", "-5", "expected a number ≥ 0"),
    ("PORT", "70000", "PORT='70000': expected an integer from 1 to 65535"),
    ("NUPPEPPOU_ADAPTIVE_MARGIN", "maybe", "expected on or off"),
    ("NUPPEPPOU_LOG_LEVEL", "loud", "expected one of DEBUG, INFO"),
    ("NUPPEPPOU_SEARCH_EVAL", "magic", "expected one of voronoi, nnue, auto"),
    ("NUPPEPPOU_DASHBOARD_TOKEN", "two words", "expected visible ASCII"),
])
def test_a_bad_value_is_named_with_what_it_expects(name, value, expected):
    with pytest.raises(SettingsError) as raised:
        Settings.from_environ({name: value})
    assert expected in str(raised.value) and name in str(raised.value)


def test_every_bad_value_is_named_at_once():
    with pytest.raises(SettingsError) as raised:
        Settings.from_environ({"NUPPEPPOU_WORKERS": "many", "NUPPEPPOU_SEARCH_MAX_NODES": "0",
                               "NUPPEPPOU_THREADS": "4"},
                              check_strategy=lambda name: None)
    assert str(raised.value).startswith("2 bad settings:")
    assert [p.split("=")[0] for p in raised.value.problems] == \
        ["NUPPEPPOU_WORKERS", "NUPPEPPOU_SEARCH_MAX_NODES"]


def test_the_strategy_is_checked_against_the_registry():
    from snake.strategies import check_name
    assert Settings.from_environ({"NUPPEPPOU_STRATEGY": "search[max_opponents=3]"},
                                 check_strategy=check_name).strategy == "search[max_opponents=3]"
    for bad, said in (("telepathy", "unknown strategy"), ("seed[reach=2]", "only search"),
                      ("search[speed=9]", "not OPTION=VALUE")):
        with pytest.raises(SettingsError, match=rf"NUPPEPPOU_STRATEGY='.*': .*{said}"):
            Settings.from_environ({"NUPPEPPOU_STRATEGY": bad}, check_strategy=check_name)


def test_an_unknown_variable_is_warned_about_once_not_refused(monkeypatch):
    monkeypatch.setattr(settings_module, "_warned", set())
    environ = {"NUPPEPPOU_SEARCH_THRADS": "2", "NUPPEPPOU_SEARCH_ALGORITHM": "alphabeta",
               "NUPPEPPOU_REQUIRE_BROWSER_TESTS": "1", "NUPPEPPOU_NUMBA_CACHE_BASE": "/tmp"}
    # (on the logger itself: the service's log, once set up, does not reach pytest's)
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    settings_module.log.addHandler(handler)
    try:
        assert Settings.from_environ(environ) == Settings()
        Settings.from_environ(environ)
    finally:
        settings_module.log.removeHandler(handler)
    warned = [r.getMessage().split()[0] for r in records]
    # the retired algorithm switch is no setting any more
    assert sorted(warned) == ["NUPPEPPOU_SEARCH_ALGORITHM", "NUPPEPPOU_SEARCH_THRADS"]


def test_one_setting_is_read_as_the_table_says():
    assert read("NUPPEPPOU_SEARCH_CORES", {}) is None
    assert read("NUPPEPPOU_SEARCH_CORES", {"NUPPEPPOU_SEARCH_CORES": "3"}) == 3
    with pytest.raises(SettingsError, match="NUPPEPPOU_SEARCH_CORES='0'"):
        read("NUPPEPPOU_SEARCH_CORES", {"NUPPEPPOU_SEARCH_CORES": "0"})


def test_the_table_shows_the_parts_own_defaults():
    """Where a part keeps its own default (the search, the game log, the sessions), the
    table says the same."""
    from snake.observability.gamelog.store import DEFAULT_MAX_GAMES, DEFAULT_MAX_MB
    from snake.search.clock import DEFAULT_MARGIN_MS
    from snake.search.compiled.alphabeta import DEFAULT_TABLE_MB
    from snake.search.strategy import DEFAULT_MAX_CONCURRENT, SearchStrategy
    from snake.serving.sessions import DEFAULT_IDLE_LIMIT
    from snake.strategies import DEFAULT_STRATEGY

    shown = {v.name: v.default_text() for v in VARIABLES}
    assert Settings().idle_limit == DEFAULT_IDLE_LIMIT
    assert (Settings().game_log_max_games, Settings().game_log_max_mb) == \
        (DEFAULT_MAX_GAMES, DEFAULT_MAX_MB)
    assert Settings().strategy == DEFAULT_STRATEGY
    assert shown["NUPPEPPOU_SEARCH_MARGIN_MS"] == f"{DEFAULT_MARGIN_MS:g}"
    assert shown["NUPPEPPOU_SEARCH_TABLE_MB"] == f"{DEFAULT_TABLE_MB:g}"
    assert SearchStrategy().threads is None and shown["NUPPEPPOU_SEARCH_THREADS"] == "every core"
    assert f"{DEFAULT_MAX_CONCURRENT} for the Python" in shown["NUPPEPPOU_SEARCH_MAX_CONCURRENT"]


def test_the_readme_shows_the_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(BEGIN) == 1 and readme.count(END) == 1
    between = readme.split(BEGIN, 1)[1].split(END, 1)[0]
    assert between.strip() == markdown().strip(), \
        "README.md's table differs: paste `python -m snake.settings --markdown` between the markers"


def test_the_table_prints_from_the_command_line():
    done = subprocess.run([sys.executable, "-m", "snake.settings", "--markdown"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    assert done.stdout == markdown()
    bad = subprocess.run([sys.executable, "-m", "snake.settings"], cwd=ROOT, text=True,
                         capture_output=True, env={"NUPPEPPOU_WORKERS": "zero"})
    assert bad.returncode == 2 and "NUPPEPPOU_WORKERS='zero': expected" in bad.stderr


def _project_files():
    """The project's code, documents and scripts (not this file, which names some wrong
    on purpose, nor the recorded data)."""
    yield from (p for p in ROOT.glob("*") if p.is_file() and p.suffix in (".py", ".md"))
    for folder in ("snake", "nnue", "training", "bench", "tests", "docs", ".ci"):
        for path in (ROOT / folder).rglob("*"):
            if (path.is_file() and path.suffix in (".py", ".md", ".sh", "")
                    and not {"data", "__pycache__"} & set(path.parts)
                    and path != Path(__file__).resolve()):
                yield path


def test_every_nuppeppou_name_in_the_project_is_in_the_table():
    """No variable is read, set or written about that the settings module does not list
    (as a setting, one the code sets, or a test switch)."""
    known = {v.name for v in VARIABLES} | set(INTERNAL) | set(TEST_SWITCHES)
    found: dict[str, set[str]] = {}
    for path in _project_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for name in re.findall(r"NUPPEPPOU_[A-Z0-9_]+", text):
            if not name.endswith("_"):        # NUPPEPPOU_SEARCH_*: a family, not a name
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    assert {"NUPPEPPOU_SEARCH_CORES", "NUPPEPPOU_SCREENSHOTS"} <= set(found)
    missing = {name: sorted(where) for name, where in found.items() if name not in known}
    assert not missing, f"not in snake/settings.py: {missing}"
