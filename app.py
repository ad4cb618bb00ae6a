"""Nuppeppou's HTTP service: the four routes of the Battlesnake API v1.

    gunicorn app:app          # production (settings in gunicorn.conf.py)
    python app.py             # development server on $PORT (default 8000), 0.0.0.0

Routes only: parsing is :func:`snake.board.parse_request`, sessions are
:class:`snake.serving.sessions.SessionManager`, decisions are :mod:`snake.strategies`.

Environment:

``NUPPEPPOU_STRATEGY``   strategy for ``/move`` (default ``search``; see snake/seed.py)
``NUPPEPPOU_WEIGHTS``    network file (default ``weights/nnue.npz``; absent default: no network)
``NUPPEPPOU_IDLE_LIMIT`` seconds after which an idle game session is reclaimed (default 120)
``NUPPEPPOU_ADAPTIVE_MARGIN``  ``off`` keeps the search's margin fixed (default ``on``: each
                         game measures its network from the engine's latencies and widens
                         the margin when it needs more; snake/search/clock.py)
``NUPPEPPOU_CHECK_MOVES``  ``off``: an answer the engine did not apply (the next turn shows
                         another move) is not counted late; for benchmarks that replay
                         recorded games through the service (default ``on``)
``NUPPEPPOU_LOG_LEVEL``  ``DEBUG`` adds one line per move with its latency (default ``INFO``)
``NUPPEPPOU_GAME_LOG``   the game log's SQLite file (default ``games.db``; ``off`` disables;
                         see snake/observability/gamelog/store.py and docs/dashboard.md)
``NUPPEPPOU_DASHBOARD_TOKEN``  lets other machines than this one see ``/games`` and
                         ``/metrics`` (snake/observability/dashboard/access.py); unset, only loopback can
``PORT``                 port for ``python app.py`` and gunicorn.conf.py (default 8000)
"""

from __future__ import annotations

import os

# One BLAS thread per process: gunicorn runs several workers on few cores, and the network's
# small products gain nothing from threads. Must be set before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import logging  # noqa: E402
import time  # noqa: E402
from urllib.parse import urlencode  # noqa: E402
from typing import Any, Mapping  # noqa: E402

from flask import Flask, Response, jsonify, redirect, request  # noqa: E402
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge  # noqa: E402

from snake import __version__  # noqa: E402
from snake.board import MoveRequest, RequestError, parse_request  # noqa: E402
from snake.rules import MOVES  # noqa: E402
from snake.serving.sessions import DEFAULT_IDLE_LIMIT, SessionManager  # noqa: E402
from snake.observability import metrics  # noqa: E402
from snake.serving import arrival  # noqa: E402
from snake.observability.dashboard import game_view, games_view  # noqa: E402
from snake.observability.gamelog.reader import GameFilter  # noqa: E402
from snake.observability.dashboard.access import COOKIE, check as check_access  # noqa: E402
from snake.decision import NO_SAFE_MOVE, Decision, Strategy  # noqa: E402
from snake.observability.gamelog import GameInfo, GameLog, end_record, turn_record  # noqa: E402
from snake.observability.gamelog import from_environment as game_log_from_environment  # noqa: E402
from snake.strategies import DEFAULT_STRATEGY, get_strategy  # noqa: E402
from snake.seed import fallback_decision  # noqa: E402

#: Requests larger than this get HTTP 413 (a 19x19 board with 8 snakes is about 20 kB).
MAX_BODY_BYTES = 1 << 20
SERVER_NAME = f"Nuppeppou/{__version__}"
POOL_CAPACITY = 32
INFO = {
    "apiversion": "1",
    "author": "daedalean",
    "color": "#E80978",
    "head": "pixel",
    "tail": "pixel",
    "version": __version__,
}

log = logging.getLogger("nuppeppou")
_DEFAULT: Any = object()


#: Control characters a request may put in its ids and names, as they are logged: escaped,
#: so that every record stays one line and no request can write a line of its own.
_ESCAPED = {c: f"\\x{c:02x}" for c in range(32)} | {0x7f: "\\x7f"}


class OneLineFormatter(logging.Formatter):
    """The service's log lines: a record is one line whatever its arguments hold (a
    traceback, appended after, keeps its own lines)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return super().formatMessage(record).translate(_ESCAPED)


def configure_logging(level: str | None = None) -> None:
    """Send the ``nuppeppou`` loggers to stderr at ``level`` (or ``$NUPPEPPOU_LOG_LEVEL``,
    default INFO). Idempotent."""
    name = (level or os.environ.get("NUPPEPPOU_LOG_LEVEL") or "INFO").upper()
    log.setLevel(getattr(logging, name, logging.INFO))
    if not any(getattr(h, "_nuppeppou", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(OneLineFormatter(
            "%(asctime)s [%(process)d] %(levelname)s %(name)s: %(message)s"))
        handler._nuppeppou = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.propagate = False


def load_network() -> Any | None:
    """The network the service plays with: ``$NUPPEPPOU_WEIGHTS`` if set (it must exist),
    else ``weights/nnue.npz`` if present, else ``None``. A bad file raises: a broken
    network must stop the start-up, not be silently replaced by flood fill."""
    path = os.environ.get("NUPPEPPOU_WEIGHTS")
    try:
        from nnue import network as nnue_network
    except ModuleNotFoundError as exc:
        if path or not (exc.name or "").startswith("nnue"):
            raise
        log.warning("the nnue package is not available: no network")
        return None
    if path:
        return nnue_network.Network.load(path)
    return nnue_network.load_default()


def _switch(name: str) -> bool:
    """An on/off environment setting, on unless set to off, 0, no or false."""
    return os.environ.get(name, "on").strip().lower() not in ("off", "0", "no", "false")


def _make_pool(network: Any) -> Any:
    from nnue.pool import AccumulatorPool

    return AccumulatorPool(network, capacity=POOL_CAPACITY)


def create_app(
    config: Mapping[str, Any] | None = None,
    *,
    network: Any = _DEFAULT,
    strategy: Strategy | str | None = None,
    sessions: SessionManager | None = None,
    game_log: GameLog | None | Any = _DEFAULT,
    clock=time.monotonic,
) -> Flask:
    """Build the service.

    ``network``: an :class:`nnue.network.Network`, ``None`` for none, or by default
    :func:`load_network`. ``strategy``: a strategy or its name (default
    ``$NUPPEPPOU_STRATEGY`` or ``search``). ``sessions``: a ready session manager (default:
    one over a 32-slot accumulator stack of ``network``). ``game_log``: where games are
    recorded (default :func:`snake.observability.gamelog.from_environment`; ``None``: nowhere).
    ``config`` updates Flask's config; ``IDLE_LIMIT`` sets the session idle limit in
    seconds, ``ADAPTIVE_MARGIN`` (bool) whether sessions set each move's margin from the
    engine's latencies, ``CHECK_MOVES`` (bool) whether an answer the engine did not apply
    counts as late."""
    configure_logging()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.config["IDLE_LIMIT"] = float(os.environ.get("NUPPEPPOU_IDLE_LIMIT", DEFAULT_IDLE_LIMIT))
    app.config["ADAPTIVE_MARGIN"] = _switch("NUPPEPPOU_ADAPTIVE_MARGIN")
    app.config["CHECK_MOVES"] = _switch("NUPPEPPOU_CHECK_MOVES")
    app.json.sort_keys = False
    if config:
        app.config.update(config)

    if network is _DEFAULT:
        network = load_network()
    if isinstance(strategy, str) or strategy is None:
        name = strategy or os.environ.get("NUPPEPPOU_STRATEGY") or DEFAULT_STRATEGY
        strategy = get_strategy(name, network=network)
    if game_log is _DEFAULT:
        game_log = game_log_from_environment()
    if sessions is None:
        pool = _make_pool(network) if network is not None else None
        # A game first seen mid-way (the other worker had it) began with its /start's
        # snakes, which the other worker wrote in the game log.
        sessions = SessionManager(pool, idle_limit=float(app.config["IDLE_LIMIT"]), clock=clock,
                                  adaptive_margin=bool(app.config["ADAPTIVE_MARGIN"]),
                                  check_moves=bool(app.config["CHECK_MOVES"]),
                                  began_with=(game_log.snakes_at_start if game_log is not None
                                              else None))
    if network is None:
        log.info("no network (%s absent): strategy %s runs without one (seed plays by flood "
                 "fill, the network's searches by board control)",
                 os.environ.get("NUPPEPPOU_WEIGHTS") or "weights/nnue.npz", strategy.name)
    else:
        log.info("network loaded (%s); strategy %s; accumulator stack of %d per process",
                 _manifest_summary(getattr(network, "manifest", None) or {}),
                 strategy.name, POOL_CAPACITY)
    head = getattr(strategy, "value_head", None)
    if head is not None:
        log.info("value head %s: corrects board control's value with %s snakes alive%s%s",
                 head.digest, " or ".join(map(str, head.snakes)),
                 f" on {', '.join(head.boards)}" if head.boards else "",
                 f" in games begun with {' or '.join(map(str, head.began))} snakes"
                 if head.began else "")
    if game_log is not None:
        log.info("game log: %s", game_log.path)
    app.extensions["nuppeppou"] = {"network": network, "strategy": strategy, "sessions": sessions,
                                   "game_log": game_log}

    def parsed() -> tuple[bytes, MoveRequest]:
        """The request body, as received and as a model; RequestError (400) names what is
        wrong."""
        raw = request.get_data(cache=False)  # raises 413 past MAX_CONTENT_LENGTH
        if request.content_length is None and len(raw) >= MAX_BODY_BYTES:
            # A streamed (chunked) body is cut at the limit rather than refused: refuse it.
            raise RequestEntityTooLarge()
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise RequestError(f"body: not valid JSON ({str(exc)[:120]})") from None
        return raw, parse_request(body)

    @app.errorhandler(RequestError)
    def bad_request(exc: RequestError):
        log.info("400 %s %s: %s", request.method, request.path, exc)
        return jsonify(error=str(exc)), 400

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        if exc.code == 413:
            message = f"body: larger than {MAX_BODY_BYTES} bytes"
        else:
            message = f"{exc.name}: {request.method} {request.path}"
        return jsonify(error=message), exc.code or 500

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):  # a bug, never the client's input: say so and log it
        log.exception("unexpected error on %s %s", request.method, request.path)
        return jsonify(error="internal error"), 500

    @app.after_request
    def server_header(response: Response) -> Response:
        rule = request.url_rule.rule if request.url_rule is not None else "other"
        metrics.REQUESTS.labels(route=rule, status=str(response.status_code)).inc()
        # gunicorn.conf.py and the development server below name the project themselves;
        # elsewhere (other servers, the test client) the header is added here.
        if request.environ.get("SERVER_SOFTWARE") != SERVER_NAME:
            response.headers["Server"] = SERVER_NAME
        return response

    @app.get("/")
    def info():
        return jsonify(INFO)

    @app.post("/start")
    def start():
        _, game = parsed()
        try:
            sessions.start(game)
        except Exception:
            log.exception("/start failed for game %s", game.state.game.id)
        if game_log is not None and not game_log.start(GameInfo.of(game)):
            metrics.GAME_LOG_DROPPED.inc()
        return jsonify({})

    @app.post("/move")
    def move():
        began = time.perf_counter()
        waiting = arrival.take()        # since its connection waited for a thread (gunicorn)
        if waiting is not None and waiting < began:
            began = waiting
        raw, game = parsed()
        game.received = began
        try:
            with sessions.use(game) as accumulator:
                decision = strategy.choose(game, accumulator)
                if decision.move not in MOVES:
                    raise ValueError(f"strategy {strategy.name} answered {decision.move!r}")
                game.answer = decision.move   # the next turn shows if the engine took it
        except Exception:
            log.exception("/move failed for game %s turn %d; answering by flood fill",
                          game.state.game.id, game.state.turn)
            decision = _last_resort(game)
            decision.method = f"error, answered by {decision.method}"
        answer = {"move": decision.move}
        if decision.shout:
            answer["shout"] = decision.shout[:256]
        answer_ms = (time.perf_counter() - began) * 1000
        metrics.observe_move(decision, answer_ms, game.state.game.timeout)
        if game_log is not None:   # queued, never waited on
            if not game_log.turn(turn_record(game, raw, decision, answer_ms, strategy.name)):
                metrics.GAME_LOG_DROPPED.inc()
        metrics.observe_state(sessions, game_log)
        if log.isEnabledFor(logging.DEBUG):
            how = decision.method or strategy.name
            if decision.search is not None:
                how += f", depth {decision.search.depth}"
            log.debug("move %s you=%s turn=%d -> %s by %s in %.2f ms", game.state.game.id,
                      game.you.id, game.state.turn, decision.move, how,
                      (time.perf_counter() - began) * 1000)
        return jsonify(answer)

    @app.post("/end")
    def end():
        raw, game = parsed()
        try:
            sessions.end(game)
        except Exception:
            log.exception("/end failed for game %s", game.state.game.id)
        if game_log is not None and not game_log.end(end_record(game, raw)):
            metrics.GAME_LOG_DROPPED.inc()
        metrics.observe_state(sessions, game_log)
        return jsonify({})

    @app.get("/health")
    def health():
        stats = sessions.stats()
        writing = game_log is None or game_log.writer_alive()
        problem = game_log.problem if game_log is not None else None
        body: dict[str, Any] = {
            # degraded: the game log's writer has stopped, or cannot write its records now
            # (the moves are still answered)
            "status": "ok" if writing and problem is None else "degraded",
            "version": __version__, "pid": os.getpid(),
            "strategy": strategy.name, "network": network is not None,
            "sessions": stats["sessions"],
            "pool": ({"capacity": stats["capacity"], "free": stats["free"],
                      "created": stats["created"]} if "free" in stats else None),
            # public: no file paths here (the dashboard, which is not, shows the log's file)
            "game_log": ({"queue": game_log.queue_depth(), "dropped": game_log.dropped,
                          "written": game_log.written, "errors": game_log.errors,
                          "writer": writing, "problem": problem}
                         if game_log is not None else None),
        }
        return jsonify(body)

    def private() -> Response | None:
        """None when this request may see the dashboard and metrics, else the answer."""
        verdict = check_access(request.remote_addr, request.headers, request.cookies,
                               request.args.get("token"),
                               os.environ.get("NUPPEPPOU_DASHBOARD_TOKEN"))
        if verdict.set_cookie:       # a browser came with ?token=: remember it, drop it
            args = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
            target = request.path + ("?" + urlencode(args) if args else "")
            response = redirect(target, code=303)
            response.set_cookie(COOKIE, request.args["token"], httponly=True, samesite="Strict",
                                secure=request.is_secure)
            return response
        if not verdict.allowed:
            if verdict.status == 401:
                return Response('{"error": "dashboard: a token is needed"}', 401,
                                {"WWW-Authenticate": 'Bearer realm="nuppeppou"',
                                 "Content-Type": "application/json"})
            return jsonify(error=f"Not Found: {request.method} {request.path}"), 404
        return None

    def about() -> dict[str, str]:
        return {"version": __version__, "strategy": strategy.name,
                "network": _manifest_summary(getattr(network, "manifest", None) or {})
                if network is not None else "none",
                "game log": str(game_log.path) if game_log is not None else "off"}

    def send(view) -> Response:
        # The pages are self-contained: nothing may be fetched from anywhere, whatever a
        # request's text managed to put into them.
        return Response(view.body, view.status, {"Content-Type": view.content_type,
                                                 "Content-Security-Policy": DASHBOARD_CSP})

    @app.get("/games")
    def games():
        denied = private()
        if denied is not None:
            return denied
        which = GameFilter(request.args.get("ruleset", ""), request.args.get("result", ""),
                           request.args.get("opponent", ""))
        return send(games_view(game_log.path if game_log else None, request.args.get("page"),
                               about(), which))

    @app.get("/games/<path:game_id>")
    def game(game_id: str):
        denied = private()
        if denied is not None:
            return denied
        return send(game_view(game_log.path if game_log else None, game_id,
                              request.args.get("you"), request.args.get("format")))

    @app.get("/metrics")
    def metrics_route():
        denied = private()
        if denied is not None:
            return denied
        metrics.observe_state(sessions, game_log)
        body, content_type = metrics.exposition()
        return Response(body, 200, {"Content-Type": content_type})

    return app


def _manifest_summary(manifest: Mapping[str, Any]) -> str:
    """One short line about a network: when it was trained, on how much, how well."""
    data = manifest.get("data") if isinstance(manifest.get("data"), dict) else {}
    parts = [f"trained {manifest['date']}" if "date" in manifest else "",
             f"{data['positions']} positions" if "positions" in data else "",
             f"validation loss {manifest['validation_loss']:.4f}"
             if isinstance(manifest.get("validation_loss"), float) else ""]
    return ", ".join(p for p in parts if p) or "no manifest"


def _last_resort(game: MoveRequest) -> Decision:
    try:
        return fallback_decision(game)
    except Exception:
        log.exception("flood fill failed too; answering %s", NO_SAFE_MOVE)
        return Decision(NO_SAFE_MOVE)


#: The dashboard's pages run their own inline script and styles and load nothing else.
DASHBOARD_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                 "img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")

_app: Flask | None = None


def __getattr__(name: str) -> Any:
    """``app``, built on first use: ``gunicorn app:app`` (which loads it before forking,
    preload_app) and ``python app.py`` get it; ``from app import create_app`` in tests does
    not load the network."""
    global _app
    if name == "app":
        if _app is None:
            _app = create_app()
        return _app
    raise AttributeError(name)


def main() -> None:
    from werkzeug.serving import WSGIRequestHandler

    class Handler(WSGIRequestHandler):
        server_version = SERVER_NAME
        sys_version = ""

        def version_string(self) -> str:
            return SERVER_NAME

        def make_environ(self):
            environ = super().make_environ()
            environ["SERVER_SOFTWARE"] = SERVER_NAME
            return environ

    port = int(os.environ.get("PORT", "8000"))
    __getattr__("app").run(host="0.0.0.0", port=port, threaded=True, request_handler=Handler)


if __name__ == "__main__":
    main()
