"""Every setting of the service, read from its environment: one table, parsed and checked once.

:meth:`Settings.from_environ` reads each variable of :data:`VARIABLES` and raises one
:class:`SettingsError` that names every bad one and what it expects, so that a service
with a bad value does not start (app.py, gunicorn.conf.py); an unknown ``NUPPEPPOU_*``
variable, a typo most likely, is warned about (logged once). An empty value counts as unset.

    python -m snake.settings              # the settings this environment gives, checked
    python -m snake.settings --markdown   # the table README.md shows

The variables only the code sets (:data:`INTERNAL`) or only the tests read
(:data:`TEST_SWITCHES`) are listed too, as such. This module is the house's ground floor:
what a setting chooses among (:data:`ENGINES`, :data:`EVALUATORS`) is named here, and
the parts that use the settings import them from here.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping

#: The strategy the service plays when ``NUPPEPPOU_STRATEGY`` is not set.
DEFAULT_STRATEGY = "search"
#: The search engines: ``python`` (snake.search, readable, every evaluator) and
#: ``compiled`` (snake.search.compiled: alpha-beta with board control, no GIL).
ENGINES = ("python", "compiled")
#: The search's evaluators: board control, the network, or the network when there is one.
EVALUATORS = ("voronoi", "nnue", "auto")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
log = logging.getLogger("nuppeppou.settings")
_warned: set[str] = set()
_ON = ("on", "1", "yes", "true")
_OFF = ("off", "0", "no", "false")


@dataclass(frozen=True)
class Settings:
    """The service's settings; the defaults are the service's when nothing is set
    (``None``: unset, the part's own default, as :data:`VARIABLES` says)."""

    port: int = 8000
    strategy: str = DEFAULT_STRATEGY
    weights: str | None = None
    idle_limit: float = 120.0
    adaptive_margin: bool = True
    check_moves: bool = True
    log_level: str = "INFO"
    access_log: str | None = None
    workers: int = 2
    threads: int | None = None
    game_log: str | None = "games.db"
    game_log_max_games: int = 10_000
    game_log_max_mb: float = 1024.0
    dashboard_token: str | None = dataclasses.field(default=None, repr=False)
    search_engine: str | None = None
    search_eval: str | None = None
    search_margin_ms: float | None = None
    search_max_concurrent: int | None = None
    search_table_mb: float | None = None
    search_max_nodes: int | None = None
    search_threads: int | None = None
    search_cores: int | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, *,
                     check_strategy: Callable[[str], Any] | None = None) -> Settings:
        """The settings ``environ`` (default ``os.environ``) gives; :class:`SettingsError`
        names every bad value. ``check_strategy(name)`` raises ``ValueError`` for a
        strategy name the registry does not know (the service passes
        :func:`snake.strategies.check_name`: this floor cannot see the registry)."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        problems: list[str] = []
        for variable in VARIABLES:
            try:
                value = variable.read(environ)
                if variable.field == "strategy" and check_strategy is not None:
                    try:
                        check_strategy(value)
                    except ValueError as exc:
                        raise SettingsError([f"{variable.name}={value!r}: {exc}"]) from None
            except SettingsError as exc:
                problems.extend(exc.problems)
                continue
            values[variable.field] = value
        for name in sorted(set(unknown_variables(environ)) - _warned):
            _warned.add(name)      # once a process: the arena reads the settings every game
            log.warning("%s is no setting of Nuppeppou (a typo?), ignored; `python -m "
                        "snake.settings --markdown` lists them", name)
        if problems:
            raise SettingsError(problems)
        return cls(**values)


class SettingsError(ValueError):
    """Bad values in the environment; ``problems``: one line for each, naming the variable,
    its value and what it expects."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        if len(self.problems) == 1:
            super().__init__(self.problems[0])
        else:
            super().__init__(f"{len(self.problems)} bad settings:\n  "
                             + "\n  ".join(self.problems))


@dataclass(frozen=True)
class Variable:
    """One environment variable: its :class:`Settings` field, how its text is read (a
    ``ValueError`` means a bad value), what it expects in words, its default as the table
    shows it (``None``: the field's default), and what it means."""

    name: str
    field: str
    parse: Callable[[str], Any]
    expects: str
    meaning: str
    shown: str | None = None
    empty_is_unset: bool = True

    @property
    def default(self) -> Any:
        return _FIELDS[self.field].default

    def read(self, environ: Mapping[str, str] | None = None) -> Any:
        """This variable's value in ``environ`` (default ``os.environ``), or its default."""
        text = (os.environ if environ is None else environ).get(self.name)
        if text is None or (self.empty_is_unset and not text.strip()):
            return self.default
        try:
            return self.parse(text)
        except ValueError:
            raise SettingsError([f"{self.name}={text!r}: expected {self.expects}"]) from None

    def default_text(self) -> str:
        return self.shown if self.shown is not None else text_of(self.default)


def _integer(least: int, most: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text.strip())
        if value < least or (most is not None and value > most):
            raise ValueError(text)
        return value
    return parse


def _number(least: float, *, above: bool = False) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = float(text.strip())
        if not math.isfinite(value) or value < least or (above and value == least):
            raise ValueError(text)
        return value
    return parse


def _choice(options: tuple[str, ...], *, upper: bool = False) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().upper() if upper else text.strip()
        if value not in options:
            raise ValueError(text)
        return value
    return parse


def _switch(text: str) -> bool:
    word = text.strip().lower()
    if word not in _ON + _OFF:
        raise ValueError(text)
    return word in _ON


def _text(text: str) -> str:
    return text.strip()


def _game_log(text: str) -> str | None:
    path = text.strip()
    return None if path.lower() in _OFF + ("",) else path


def _token(text: str) -> str:
    # What a header, a cookie and a query string all carry unchanged (the Bearer value
    # is read stripped): visible ASCII, no spaces.
    if not text or any(not 33 <= ord(c) <= 126 for c in text):
        raise ValueError(text)
    return text


_AT_LEAST_1 = "an integer ≥ 1"
_SEARCH = "every search variant"

#: Every setting, in the order README.md's table shows them.
VARIABLES: tuple[Variable, ...] = (
    Variable("PORT", "port", _integer(1, 65535), "an integer from 1 to 65535",
             "the port of `python app.py` and of gunicorn.conf.py's bind (`-b` overrides it)"),
    Variable("NUPPEPPOU_STRATEGY", "strategy", _text, "a strategy's name",
             "the strategy that answers `/move` (snake/strategies.py: `search`, "
             "`search-joint`, `seed`, `floodfill`...; a search variant may take options, "
             "`search[max_opponents=3]`, docs/arena.md)"),
    Variable("NUPPEPPOU_WEIGHTS", "weights", _text, "a file",
             "the network file; set, it must load; unset and the default absent, the service "
             "plays without a network (logged at start-up)", shown="`weights/nnue.npz`"),
    Variable("NUPPEPPOU_IDLE_LIMIT", "idle_limit", _number(0, above=True), "a number > 0",
             "seconds after which an idle game's session (and its accumulator) is reclaimed"),
    Variable("NUPPEPPOU_ADAPTIVE_MARGIN", "adaptive_margin", _switch, "on or off",
             "from its second move a game widens the search's margin when the engine's "
             "reported latencies, or a move it did not take from us, show its network needs "
             "more (docs/search.md, \"Time\"); `off`: the fixed margin", shown="`on`"),
    Variable("NUPPEPPOU_CHECK_MOVES", "check_moves", _switch, "on or off",
             "`off`: an answer the engine did not apply is not counted late; for tools that "
             "replay recorded games through the service (bench.server)", shown="`on`"),
    Variable("NUPPEPPOU_LOG_LEVEL", "log_level", _choice(LOG_LEVELS, upper=True),
             f"one of {', '.join(LOG_LEVELS)}",
             "the service's and gunicorn's log level; `DEBUG` adds a line per move with its "
             "latency and method"),
    Variable("NUPPEPPOU_ACCESS_LOG", "access_log", _text, "a file or -",
             "gunicorn's access log (`-`: standard output)", shown="none"),
    Variable("NUPPEPPOU_WORKERS", "workers", _integer(1), _AT_LEAST_1,
             "gunicorn's worker processes (docs/server.md)"),
    Variable("NUPPEPPOU_THREADS", "threads", _integer(1), _AT_LEAST_1,
             "threads per worker: a searching strategy holds one for its whole thinking time "
             "(docs/server.md)", shown="16 for the search strategies, 4 for the others"),
    Variable("NUPPEPPOU_GAME_LOG", "game_log", _game_log, "a file, or off",
             "the game log's SQLite file, relative to the working directory; `off` (or "
             "empty) keeps no log and no dashboard (docs/dashboard.md)",
             empty_is_unset=False),
    Variable("NUPPEPPOU_GAME_LOG_MAX_GAMES", "game_log_max_games", _integer(1), _AT_LEAST_1,
             "past this many games the oldest are deleted"),
    Variable("NUPPEPPOU_GAME_LOG_MAX_MB", "game_log_max_mb", _number(0, above=True),
             "a number > 0", "past this many megabytes of data the oldest games are deleted"),
    Variable("NUPPEPPOU_DASHBOARD_TOKEN", "dashboard_token", _token,
             "visible ASCII characters, no spaces",
             "set, every request to `/games` and `/metrics` needs it, from this machine too; "
             "unset, only this machine gets in (docs/dashboard.md)"),
    Variable("NUPPEPPOU_SEARCH_ENGINE", "search_engine", _choice(ENGINES),
             f"one of {', '.join(ENGINES)}",
             "the default `search`'s engine: `python` for the readable search",
             shown="`compiled`"),
    Variable("NUPPEPPOU_SEARCH_EVAL", "search_eval", _choice(EVALUATORS),
             f"one of {', '.join(EVALUATORS)}",
             "the default `search`'s evaluator; anything but `voronoi` (board control) is "
             "searched in Python", shown="`voronoi`"),
    Variable("NUPPEPPOU_SEARCH_MARGIN_MS", "search_margin_ms", _number(0), "a number ≥ 0",
             f"the safety margin of {_SEARCH}: it thinks until `game.timeout` less this many "
             "ms after the request arrived", shown="150"),
    Variable("NUPPEPPOU_SEARCH_MAX_CONCURRENT", "search_max_concurrent", _integer(1),
             _AT_LEAST_1, f"searches at once per process, {_SEARCH}; a move past them is "
             "answered by the seed step", shown="none for the compiled search, 2 for the Python"),
    Variable("NUPPEPPOU_SEARCH_TABLE_MB", "search_table_mb", _number(0, above=True),
             "a number > 0", "the compiled search's transposition table per thread, in "
             f"megabytes (a search on several threads shares one of them all), {_SEARCH}",
             shown="4"),
    Variable("NUPPEPPOU_SEARCH_MAX_NODES", "search_max_nodes", _integer(1), _AT_LEAST_1,
             f"a node limit besides the clock, {_SEARCH}: reproducible arena experiments at "
             "equal nodes", shown="none"),
    Variable("NUPPEPPOU_SEARCH_THREADS", "search_threads", _integer(1), _AT_LEAST_1,
             f"the most threads one compiled search uses, {_SEARCH} (lazy SMP, the threads "
             "dividing a node's replies: a search takes its share of the server's cores, "
             "whatever the worker layout, and its helpers give them back as other games' "
             "searches start; docs/core.md)",
             shown="every core"),
    Variable("NUPPEPPOU_SEARCH_CORES", "search_cores", _integer(1), _AT_LEAST_1,
             "the cores one process's searches share (read at each move: gunicorn.conf.py "
             "and the arena set it in each worker unless given)",
             shown="the cores available, divided among the workers"),
)

#: Variables the code sets for the processes it starts; never set by hand.
INTERNAL = {
    "NUPPEPPOU_NUMBA_CACHE_BASE": "the folder snake/core/jit.py put the compiled code's cache "
                                  "in, handed to the processes it starts",
}
#: Variables only the tests read.
TEST_SWITCHES = {
    "NUPPEPPOU_REQUIRE_BROWSER_TESTS": "`1`: no Chromium fails the dashboard's browser test "
                                       "instead of skipping it (.ci/run sets it)",
    "NUPPEPPOU_SCREENSHOTS": "a folder for the browser test's screenshots",
}

_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
BY_NAME = {v.name: v for v in VARIABLES}
assert sorted(v.field for v in VARIABLES) == sorted(_FIELDS), "one variable per field"


def text_of(value: Any) -> str:
    """A setting's value as the table shows it."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`on`" if value else "`off`"
    if isinstance(value, (int, float)):
        return f"{value:g}"
    return f"`{value}`"


def read(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """One setting's value (for one read more than once, after start-up: the cores a
    worker is given after the fork); :class:`SettingsError` for a bad value."""
    return BY_NAME[name].read(environ)


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """The ``NUPPEPPOU_*`` names in ``environ`` that no table here knows."""
    known = set(BY_NAME) | set(INTERNAL) | set(TEST_SWITCHES)
    return sorted(n for n in environ if n.startswith("NUPPEPPOU_") and n not in known)


def markdown() -> str:
    """README.md's table of the settings, then the variables that are none: set by the code
    (:data:`INTERNAL`) or read by the tests (:data:`TEST_SWITCHES`)."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    rows += [f"| `{v.name}` | {v.default_text()} | {v.meaning} |" for v in VARIABLES]
    rows += [f"| `{n}` | set by the code | {m} |" for n, m in INTERNAL.items()]
    rows += [f"| `{n}` | tests only | {m} |" for n, m in TEST_SWITCHES.items()]
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snake.settings",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true",
                        help="print README.md's table of the settings")
    args = parser.parse_args(argv)
    if args.markdown:
        sys.stdout.write(markdown())
        return 0
    try:
        settings = Settings.from_environ(os.environ)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for variable in VARIABLES:
        value = getattr(settings, variable.field)
        if value is None:
            shown = variable.default_text()
            print(f"{variable.name}: unset" + (f" ({shown})" if shown != "unset" else ""))
        elif variable.field == "dashboard_token":
            print(f"{variable.name}: set")       # a secret: not printed
        else:
            print(f"{variable.name}={text_of(value).strip('`')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
