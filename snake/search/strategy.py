"""The ``search`` strategy: look ahead within the time budget.

``choose`` takes the clock when it is called, works out the seed move first (SPEC §2:
the answer if the search completes nothing, and the filter's verdict for ``snake.explain``),
then runs the search (:mod:`.alphabeta`, in Python or compiled: :mod:`.compiled`) with the
configured evaluator (:mod:`.evaluate`) until ``timeout - margin`` ms after that moment
(:mod:`.clock`), and answers the best move of the deepest completed iteration.

The session's accumulator (when there is one) is brought up to date with this turn's
features by the seed step, as the seed strategy does, and the NNUE evaluator copies it for
the root of its node stack, so the session's sums are never disturbed by the search.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from pathlib import Path
from typing import Any

from snake.board import MoveRequest
from snake.core import EncodeError
from snake.decision import Decision, SearchResult
from snake.evaluation.control import (
    SHIPPED_STYLES,
    STYLE_FILE,
    STYLES,
    BoardControlEvaluator,
    resolve_style,
)
from snake.evaluation.network import NnueEvaluator
from snake.evaluation.value_head import ValueHead, board_of, load_head
from snake.search.alphabeta import MAX_DEPTH, AlphaBeta
from snake.search.clock import DEFAULT_MARGIN_MS, Budget, think_time_ms
from snake.search.compiled.alphabeta import DEFAULT_TABLE_MB, CompiledAlphaBeta, warm_up
from snake.search.cores import LEDGER, CoreLedger, available_cores
from snake.search.last_chance import LOST_THIS_TURN, last_chance
from snake.search.plan import plan_snakes
from snake.seed import SeedStrategy

# (the engines and evaluators are named with the settings that choose among them)
from snake.settings import ENGINES, EVALUATORS, Settings
from snake.settings import read as read_setting

#: How the searched opponents answer your move: ``joint`` (every combination of their
#: moves: paranoid) or ``best`` (best-reply search: one opponent at a time plays each of its
#: moves while the others play their cheap move: :mod:`.alphabeta`).
REPLIES = ("joint", "best")
#: how many opponents alpha-beta branches on (its branching is the product of their moves)
DEFAULT_MAX_OPPONENTS = 2
DEFAULT_REACH = 6
#: Searches run at once per process (the GIL gives a process one core at most): beyond
#: this, a move is answered by the seed step at once. Measured in docs/server.md.
DEFAULT_MAX_CONCURRENT = 2
#: The default's value head for games begun as duels (:mod:`snake.evaluation.value_head`): board
#: control's value corrected by weights tuned by play (SPSA, docs/training.md), shipped
#: beside the network and described in its manifest (``MANIFEST.json``, ``value_head``);
#: ``search[value_head=none]`` is the default without it.
DEFAULT_VALUE_HEAD = Path(__file__).resolve().parents[2] / "weights" / "value-duel.npz"
log = logging.getLogger("nuppeppou.search")  # the service's log (snake.serving.service)

#: The least thinking time of a compiled search sharing the cores with many others.
MIN_SHARE_MS = 10.0


def default_cores() -> int:
    """Cores one server process may search on: ``NUPPEPPOU_SEARCH_CORES`` (gunicorn.conf.py
    sets it in each worker, after the fork, to the cores available divided among the
    workers: so it is read here, at each move), else every core available
    (:func:`available_cores`)."""
    cores = read_setting("NUPPEPPOU_SEARCH_CORES")
    return available_cores() if cores is None else cores


class SearchStrategy:
    """Search within the time budget: paranoid alpha-beta, iterative deepening. Options:

    ``evaluator``: ``voronoi`` (board control), ``nnue`` (needs ``network``; positions it
    has no features for are searched with board control), or
    ``auto`` (``nnue`` when a network is given). ``margin_ms``: subtracted from
    ``game.timeout``; ``think_ms`` overrides the thinking time altogether (``None``: from the
    timeout). ``max_nodes``: a node limit (reproducible searches). ``max_opponents`` /
    ``reach``: which opponents are searched (:func:`snake.search.plan.plan_snakes`;
    ``reach=None``: the nearest ``max_opponents``, however far).
    ``max_concurrent``: searches this strategy runs at once (per process); a move that
    arrives while that many are running is answered by the seed step without searching,
    on time rather than late (``None``: no limit). ``engine``: ``python`` or ``compiled``
    (alpha-beta; it releases the GIL, so it needs no concurrency limit; a state the core
    cannot hold is answered by the seed step). With the compiled engine the ``nnue`` evaluator
    values a leaf ``(1 - network_weight) * board control + network_weight * network``, the
    accumulator kept along the path from the step's change reports. ``table_mb``: the
    compiled search's transposition table per thread. ``exact_root``: every root move gets
    an exact score, not only the best (compiled engine; self-play's training targets).
    ``last_chance``: when the search proves that every move can be killed this turn, play
    the move that survives the most replies (:mod:`snake.search.last_chance`).
    ``replies``: ``joint`` or ``best`` (:data:`REPLIES`). ``style``: board control's
    weights (compiled engine; :data:`snake.evaluation.control.STYLES`, or a style file:
    :func:`snake.evaluation.control.resolve_style`); ``multi_style``:
    the weights while three snakes or more are alive (``None``: ``style`` throughout).
    ``value_head``: a learned value head or its file (:mod:`snake.evaluation.value_head`,
    compiled engine) that values the leaves from board control's measurements in the
    positions it was trained for: the number of living snakes at the root, the board
    (ruleset and size) and the number of snakes the game began with
    (``request.began_with``) it names, valued with the style it was trained with (a head
    this search would never use is refused).
    ``threads``: the most threads one compiled search uses (lazy SMP:
    :func:`snake.search.compiled.threads.run`; ``None``: every core of the server): a
    search takes its share of the server's cores while others are in flight, in any of
    its processes, and its helpers give theirs back as more searches start
    (:mod:`snake.search.cores`, :meth:`search_threads`); a node-limited search uses one."""

    def __init__(self, network: Any | None = None, *, name: str = "search",
                 evaluator: str = "voronoi",
                 margin_ms: float = DEFAULT_MARGIN_MS, think_ms: float | None = None,
                 max_nodes: int | None = None, max_depth: int = MAX_DEPTH,
                 max_opponents: int | None = None, reach: int | None = DEFAULT_REACH,
                 max_concurrent: int | None = DEFAULT_MAX_CONCURRENT, engine: str = "python",
                 table_mb: float = DEFAULT_TABLE_MB, network_weight: float = 1.0,
                 style: str = "default", exact_root: bool = False,
                 last_chance: bool = False, replies: str = "joint",
                 multi_style: str | None = None, value_head: str | ValueHead | None = None,
                 threads: int | None = None) -> None:
        if engine not in ENGINES:
            raise ValueError(f"unknown search engine {engine!r}; choose one of {ENGINES}")
        if not 0.0 <= network_weight <= 1.0:
            raise ValueError("network_weight must be in [0, 1]")
        style = resolve_style(style)
        multi_style = resolve_style(multi_style) if multi_style is not None else None
        for weights in (style, multi_style):
            if weights is not None and (weights not in STYLES
                                        or (weights != "default" and engine != "compiled")):
                raise ValueError(f"style {weights!r}: one of {', '.join(SHIPPED_STYLES)} "
                                 "or a style file "
                                 f"(*{STYLE_FILE}), "
                                 "in the compiled engine")
        if replies not in REPLIES:
            raise ValueError(f"replies {replies!r}: one of {', '.join(REPLIES)}")
        self.value_head = None
        if value_head is not None:
            if engine != "compiled":
                raise ValueError("value_head: in the compiled engine only")
            self.value_head = (value_head if isinstance(value_head, ValueHead)
                               else load_head(value_head))
            if not head_used(self.value_head, style, multi_style):
                named = "given" if isinstance(value_head, ValueHead) else value_head
                raise ValueError(
                    f"value_head {named}: trained with the {self.value_head.style!r} "
                    f"style for {self.value_head.snakes} snakes, which this search values "
                    f"with style {style!r}" + (f" ({multi_style!r} with three or more)"
                                               if multi_style is not None else ""))
        if evaluator not in EVALUATORS:
            raise ValueError(f"unknown evaluator {evaluator!r}; choose one of {EVALUATORS}")
        if evaluator == "nnue" and network is None:
            raise ValueError("the nnue evaluator needs a network (weights/nnue.npz)")
        if margin_ms < 0:
            raise ValueError("margin_ms must be >= 0")
        if max_nodes is not None and max_nodes < 1:
            raise ValueError("max_nodes must be at least 1 (or None: no limit)")
        if max_concurrent is not None and max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1 (or None: no limit)")
        if threads is not None and threads < 1:
            raise ValueError("threads must be at least 1 (or None: every core)")
        self.name = name
        self.network = network
        self.evaluator_name = evaluator
        self.margin_ms = float(margin_ms)
        self.think_ms = think_ms
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.max_opponents = DEFAULT_MAX_OPPONENTS if max_opponents is None else max_opponents
        self.reach = reach
        self.engine = engine
        self.table_mb = float(table_mb)
        self.network_weight = float(network_weight)
        self.style = style
        self.multi_style = multi_style
        self.exact_root = bool(exact_root)
        self.last_chance = bool(last_chance)
        self.replies = replies
        self._cores: int | None = None     # None: default_cores(), read at each move
        default_cores()                     # (a bad NUPPEPPOU_SEARCH_CORES fails here)
        self.threads = None if threads is None else int(threads)
        self._in_flight = 0
        self._in_flight_lock = threading.Lock()
        self.max_concurrent = max_concurrent
        self._slots = None if max_concurrent is None else threading.BoundedSemaphore(max_concurrent)
        self._seed = SeedStrategy()
        self._voronoi = BoardControlEvaluator()
        if engine == "compiled":
            warm_up(network if evaluator in ("nnue", "auto") else None)

    def _evaluator(self, request: MoveRequest) -> tuple[Any, str]:
        """The evaluator for this position, and a note when NNUE could not be used."""
        wanted = self.evaluator_name
        if wanted == "auto":
            wanted = "nnue" if self.network is not None else "voronoi"
        if wanted == "voronoi":
            return self._voronoi, ""
        evaluator = NnueEvaluator(self.network)
        if not evaluator.covers(request.state, request.you.id):
            return self._voronoi, "no NNUE features for this ruleset or board size"
        return evaluator, ""

    def budget(self, request: MoveRequest, started: float | None = None) -> Budget:
        """The budget of one decision: thinking time from ``game.timeout`` and the margin
        (or ``think_ms``), and the node limit. The compiled search shares the process's
        cores fairly: with more searches in flight than :attr:`cores`, each thinks
        ``cores / in flight`` of its time, so that the Python around every search (parsing,
        the seed step, answering) still gets the CPU and every game is searched, shallower,
        and answered on time. A move whose share had passed before its search could start
        (it waited for the CPU) still thinks :data:`MIN_SHARE_MS` from now while that ends
        within its whole thinking time, and any search may complete its first iteration
        within that whole time (:attr:`Budget.hard_deadline`): every move is searched that
        can be."""
        ms = self.think_ms
        if ms is None:
            # the game's own measure of its network only ever widens the margin
            margin = max(self.margin_ms, request.margin_ms or 0.0)
            ms = think_time_ms(request.state.game.timeout, margin,
                               floor=margin <= self.margin_ms)
            if self.engine == "compiled" and self._in_flight > self.cores:
                budget = Budget.after(ms, started=started, max_nodes=self.max_nodes)
                whole = budget.deadline
                share = whole - ms * (1.0 - self.cores / self._in_flight) / 1000.0
                budget.deadline = min(whole, max(share,
                                                 time.perf_counter() + MIN_SHARE_MS / 1000.0))
                budget.hard_deadline = whole        # for its first iteration
                return budget
        return Budget.after(ms, started=started, max_nodes=self.max_nodes)

    @property
    def cores(self) -> int:
        """The cores this process's searches share: :func:`default_cores` when the move is
        asked (gunicorn's workers set theirs after the fork, when the strategy already
        exists), unless set."""
        return self._cores if self._cores is not None else default_cores()

    @cores.setter
    def cores(self, value: int) -> None:
        self._cores = int(value)

    def search_threads(self, in_flight: int, ledger: CoreLedger = LEDGER) -> int:
        """Threads a compiled search starting now gets while ``in_flight`` searches (this
        one counted) are in flight on the server: an equal share of its cores
        (:meth:`snake.search.cores.CoreLedger.share`), at most :attr:`threads`."""
        share = ledger.share(in_flight)
        return share if self.threads is None else min(self.threads, share)

    def search(self, request: MoveRequest, accumulator: Any | None = None, *,
               started: float | None = None) -> SearchResult:
        """Run the search alone (no seed fallback); ``started`` is when the request
        arrived (``time.perf_counter``), default now. The compiled engine raises
        :class:`snake.core.EncodeError` for a state it cannot hold (:meth:`choose` then
        plays the seed step)."""
        budget = self.budget(request, started)
        evaluator, note = self._evaluator(request)
        state, you = request.state, request.you
        plan = plan_snakes(state, you.id, max_opponents=self.max_opponents, reach=self.reach)
        if self.engine == "compiled":
            network = self.network if evaluator is not self._voronoi else None
            style = plan.style(self.style, self.multi_style)
            head = self.value_head
            if head is not None:
                alive = len(plan.opponents) + len(plan.cheap) + 1
                board = board_of(state.ruleset.name, state.board.width, state.board.height)
                if head.style != style or not head.covers(alive, board):
                    head = None     # not where it was trained: board control's value alone
                elif not head.covers(alive, board, request.began_with):
                    # the one case a position alone does not show: say it
                    note = ((f"{note}; " if note else "") + "value head not used: meant for "
                            f"games begun with {' or '.join(map(str, head.began))} snakes, "
                            f"this one began with {request.began_with}")
                    head = None
            with LEDGER.searching() as in_flight:
                threads = 1 if budget.max_nodes is not None else self.search_threads(in_flight)
                found = CompiledAlphaBeta(plan, budget, self.max_depth, self.table_mb, network,
                                          self.network_weight if network is not None else 0.0,
                                          style, self.exact_root, self.replies,
                                          head, threads, LEDGER).search(state)
            found.note = note
            return found
        context = evaluator.root(state, (you.id,), accumulator)
        searcher = AlphaBeta(evaluator, plan, budget, self.max_depth, self.replies)
        # The search makes many short-lived, acyclic objects (states, node contexts) that
        # reference counting frees; the cyclic collector could only add pauses, so it is
        # off meanwhile (docs/search.md, "Time").
        collecting = gc.isenabled()
        gc.disable()
        try:
            result = searcher.search(state, context)
        finally:
            if collecting:
                gc.enable()
        result.note = note
        return result

    def choose(self, request: MoveRequest, accumulator: Any | None) -> Decision:
        # The deadline counts from the request's arrival when the server recorded it.
        started = request.received if request.received is not None else time.perf_counter()
        seed = self._seed.choose(request, accumulator)
        if not seed.filter or not seed.filter.allowed or not request.you.alive:
            seed.method = f"seed ({seed.method}): nothing to search"
            return seed
        # Searches in one process share its one core (the GIL): past a few at once, each
        # gets too little CPU to stop and answer on time, so a busy process plays the
        # seed move instead of a late one.
        if self._slots is not None and not self._slots.acquire(blocking=False):
            seed.method = f"seed ({seed.method}): {self.max_concurrent} searches already running"
            return seed
        deadline = self.budget(request, started).deadline
        if deadline is not None and time.perf_counter() >= deadline:
            # (a huge body's parsing and the seed step used the time: answer now, not after
            # encoding it for a search that could complete nothing)
            if self._slots is not None:
                self._slots.release()
            seed.method = f"seed ({seed.method}): no time left to search"
            return seed
        with self._in_flight_lock:
            self._in_flight += 1
        try:
            result = self.search(request, accumulator, started=started)
        except EncodeError as e:
            # A state no engine sends (a living body off the board, or broken). The readable
            # search could play it, but it would hold the GIL for its whole thinking time,
            # with no limit on how many run at once: the seed step answers at once instead.
            seed.method = f"seed ({seed.method}): the compiled core cannot hold this state ({e})"
            return seed
        finally:
            with self._in_flight_lock:
                self._in_flight -= 1
            if self._slots is not None:
                self._slots.release()
        result.since_arrival_ms = round((time.perf_counter() - started) * 1000.0, 2)
        if result.move is None:
            return Decision(seed.move, method=f"seed ({seed.method}): search completed nothing",
                            filter=seed.filter, scores=seed.scores, search=result)
        method = f"search ({result.algorithm}, {result.evaluator})"
        move = result.move
        if self.last_chance and result.score <= LOST_THIS_TURN:
            # within the search's own deadline: the answer is still due on time
            chance = last_chance(request.state, request.you, result.move,
                                 deadline=self.budget(request, started).deadline)
            move = chance.move
            method += ", last chance"
            counts = ", ".join(
                f"{m} {n}" + (f" (+{chance.trapped[m]} with no way out)"
                              if chance.trapped and chance.trapped[m] else "")
                for m, n in chance.survives.items())
            if chance.tried == 0:
                said = f"no reply could be tried before the deadline: {move}, the search's move"
            else:
                of = (f"{chance.replies}" if chance.tried is None
                      else f"{chance.tried} of the {chance.replies} (the deadline came)")
                if chance.survives.get(move, 0) > 0:
                    said = (f"{move} survives the most of {of} replies this turn with a way "
                            f"out ({counts})")
                elif chance.trapped and chance.trapped.get(move, 0) > 0:
                    said = (f"no move survives any of {of} replies with a way out; {move} "
                            f"survives the most of them at all ({counts})")
                else:
                    said = (f"no move survives any of {of} replies this turn: {move}, the "
                            f"search's move ({counts})")
            result.note = (f"{result.note}; " if result.note else "") + (
                f"every move can be killed this turn: {said}")
            # (the time since arrival is the answer's, the last chance's included)
            result.since_arrival_ms = round((time.perf_counter() - started) * 1000.0, 2)
        return Decision(move, method=method, filter=seed.filter, search=result)


#: The search strategies offered by name, and their options (the one table of variants).
#: ``search-py`` is the readable Python search the compiled one replaced, kept to compare.
VARIANTS: dict[str, dict[str, Any]] = {
    # the default; when every move can be killed this turn it plays the one that survives
    # the most replies (snake.search.last_chance). With three snakes or more it searches
    # the three nearest opponents, however far, by best replies (one at a time), and values
    # positions by the hungry weights (the grower's, where length and food count more, and
    # owning no food, the nearest food once health runs low): in the four-snake screens
    # (docs/arena.md) these placed better than joint replies of the two nearest within six
    # moves and the default weights, which is search-joint. In games begun as duels on
    # standard 11x11 it values positions by board control corrected by the shipped value
    # head (DEFAULT_VALUE_HEAD; against board control alone at 500 ms, 58.0 % [51.1, 64.6]
    # in 200 duels, docs/training.md; not in the last duels of games begun with more
    # snakes, where it has not been shown to win); without the head
    # (search[value_head=none]), and elsewhere, its duels are search-joint's, node for node
    "search": {"evaluator": "voronoi", "engine": "compiled",
               "max_concurrent": None, "last_chance": True, "replies": "best",
               "max_opponents": 3, "reach": None, "multi_style": "hungry",
               "value_head": str(DEFAULT_VALUE_HEAD)},
    # the default until 2026-11-24: joint replies of the two nearest opponents within six
    # moves, the others played cheaply (issue 14 measures the default against it)
    "search-joint": {"engine": "compiled", "max_concurrent": None, "last_chance": True},
    "search-py": {"evaluator": "voronoi"},
    "search-nnue": {"evaluator": "auto"},
    # the compiled search valuing leaves by the network (alone, or half and half with
    # board control), otherwise search-joint (its tree and last chance), so that the
    # learning loop's gate against search-joint measures the leaf value and nothing else;
    # the default uses it only once it wins (issue 12)
    "search-net": {"evaluator": "auto", "engine": "compiled",
                   "max_concurrent": None, "last_chance": True, "network_weight": 1.0},
    "search-blend": {"evaluator": "auto", "engine": "compiled",
                     "max_concurrent": None, "last_chance": True, "network_weight": 0.5},
    # opponents for the arena, each the compiled search with board control weighted to play
    # a way strong snakes play four-snake games (docs/arena.md)
    "grower": {"engine": "compiled", "max_concurrent": None, "style": "grower",
              "last_chance": True},
    "hunter": {"engine": "compiled", "max_concurrent": None, "style": "hunter",
              "last_chance": True},
    "space-taker": {"engine": "compiled", "max_concurrent": None, "style": "space",
                   "last_chance": True},
}


#: Options a search strategy's name may set in brackets, ``search[max_opponents=3,reach=8]``
#: (the arena, ``NUPPEPPOU_STRATEGY``): experiments without a new entry in :data:`VARIANTS`.
OPTION_TYPES: dict[str, type] = {
    "max_opponents": int, "reach": int, "style": str, "multi_style": str, "last_chance": bool,
    "network_weight": float, "max_nodes": int, "max_depth": int, "table_mb": float,
    "margin_ms": float, "think_ms": float, "replies": str, "value_head": str, "threads": int,
}


def split_options(name: str) -> tuple[str, dict[str, Any]]:
    """``"search[max_opponents=3,last_chance=no]"`` -> ``("search", {"max_opponents": 3,
    "last_chance": False})``; a name without brackets has no options. ``ValueError``
    names what is wrong (unknown option, bad value, unbalanced brackets)."""
    if "[" not in name and "]" not in name:
        return name, {}
    base, bracket, rest = name.partition("[")
    if not bracket or not rest.endswith("]") or "[" in rest or "]" in rest[:-1]:
        raise ValueError(f"strategy {name!r}: options go in one pair of brackets, "
                         "e.g. search[max_opponents=3]")
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest[:-1].split(","))):
        key, equals, text = (part.strip() for part in item.partition("="))
        if not equals or key not in OPTION_TYPES:
            raise ValueError(f"strategy {name!r}: {item!r} is not OPTION=VALUE with an option "
                             f"among {', '.join(OPTION_TYPES)}")
        kind = OPTION_TYPES[key]
        try:
            if key in ("reach", "multi_style", "value_head") and text.lower() == "none":
                options[key] = None         # no distance limit; one style throughout; no head
            elif kind is bool:
                if text.lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError
                options[key] = text.lower() in ("1", "true", "yes", "on")
            else:
                options[key] = kind(text)
        except ValueError:
            raise ValueError(f"strategy {name!r}: {key}={text!r} is not "
                             f"""{'a yes/no' if kind is bool
                                  else 'an integer or none' if key == 'reach'
                                  else 'an integer' if kind is int
                                  else 'a number' if kind is float else 'a name'}""") from None
    return base.strip(), options


def make_search_strategy(name: str = "search", network: Any | None = None,
                         seed: int | None = None, overrides: dict[str, Any] | None = None,
                         settings: Settings | None = None) -> SearchStrategy:
    """The search strategy ``name`` (:data:`VARIANTS`). ``settings`` (default: the
    environment's, :class:`snake.settings.Settings`) may override the default ``search``'s
    engine and evaluator (``NUPPEPPOU_SEARCH_ENGINE``, ``NUPPEPPOU_SEARCH_EVAL``; anything
    but board control is searched in Python), and every variant's margin, searches at once
    per process, transposition table, node limit and threads (``NUPPEPPOU_SEARCH_MARGIN_MS``,
    ``_MAX_CONCURRENT``, ``_TABLE_MB``, ``_MAX_NODES``, ``_THREADS``). ``seed`` is accepted
    for the registry's signature; the search is deterministic. ``overrides``
    (:func:`split_options`) replace the variant's and the settings' options. A
    variant's own value head (the default's, for duels) is dropped where the search would
    not use it: searched in Python (the settings above), told to weigh board control by
    another ``style``, or its file absent (logged: :func:`_variant_head`)."""
    if name not in VARIANTS:
        raise ValueError(f"unknown search strategy {name!r}; choose one of {', '.join(VARIANTS)}")
    settings = Settings.from_environ() if settings is None else settings
    options: dict[str, Any] = dict(VARIANTS[name])
    if name == "search":
        for option, value in (("engine", settings.search_engine),
                              ("evaluator", settings.search_eval)):
            if value is not None:
                options[option] = value
        if options["engine"] == "compiled" and options["evaluator"] != "voronoi":
            options["engine"] = "python"
        if options["engine"] == "python":
            options.pop("max_concurrent")     # the GIL: the Python search's own limit
            options.pop("multi_style", None)  # it values board control by the reference only
            options.pop("value_head", None)
    for option, value in (("margin_ms", settings.search_margin_ms),
                          ("max_concurrent", settings.search_max_concurrent),
                          ("table_mb", settings.search_table_mb),
                          ("max_nodes", settings.search_max_nodes),
                          ("threads", settings.search_threads)):
        if value is not None:
            options[option] = value
    overrides = overrides or {}
    unknown = set(overrides) - set(OPTION_TYPES)
    if unknown:
        raise ValueError(f"unknown search options {sorted(unknown)}")
    options.update(overrides)
    if options.get("value_head") is not None and "value_head" not in overrides:
        options["value_head"] = _variant_head(options["value_head"],
                                              options.get("style", "default"),
                                              options.get("multi_style"))
    strategy = SearchStrategy(network, name=name, **options)
    if settings.search_cores is not None:
        strategy.cores = settings.search_cores      # given: fixed; else read at each move
    return strategy


def _variant_head(path: str, style: str, multi_style: str | None) -> ValueHead | None:
    """A variant's own value head (the default's, for duels), read once; ``None`` where the
    search would not use it: told to weigh board control by other weights than the head was
    tuned with, or the file is absent (logged; the search runs on board control alone, as
    the service runs on without its network). A file present but bad raises HeadError."""
    if not Path(path).exists():
        log.warning("value head %s absent: the search values its positions by board control "
                    "alone", path)
        return None
    head = load_head(path)
    return head if head_used(head, style, multi_style) else None


def head_used(head: ValueHead, style: str, multi_style: str | None) -> bool:
    """Whether a search valuing positions by ``style`` (``multi_style`` while three snakes
    or more are alive) would use value head ``head``: for some number of snakes it was
    trained on, the search's weights there are the head's style."""
    return any((multi_style if multi_style is not None and n >= 3 else style) == head.style
               for n in head.snakes)
