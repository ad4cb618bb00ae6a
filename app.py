"""Nuppeppou's HTTP service: the routes of the Battlesnake API v1.

    gunicorn app:app          # production (settings in gunicorn.conf.py)
    python app.py             # development server on $PORT (default 8000), 0.0.0.0

Routes only: the settings are :mod:`snake.settings` (every environment variable, checked
once: a bad one stops the start-up; README.md's table), what the routes need is built by
:mod:`snake.serving.service`, parsing is :func:`snake.board.parse_request`, decisions are
:mod:`snake.strategies`, and ``/health``, ``/games`` and ``/metrics`` with their access
control are :mod:`snake.observability.blueprint`.
"""

from __future__ import annotations

import os

# One BLAS thread per process: gunicorn runs several workers on few cores, and the network's
# small products gain nothing from threads. Must be set before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import dataclasses  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any, Mapping  # noqa: E402

from flask import Blueprint, Flask, Response, current_app, jsonify, request  # noqa: E402
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge  # noqa: E402

from snake import __version__  # noqa: E402
from snake.board import MoveRequest, RequestError, parse_request  # noqa: E402
from snake.decision import Strategy  # noqa: E402
from snake.observability import metrics  # noqa: E402
from snake.observability.blueprint import observability  # noqa: E402
from snake.observability.gamelog import GameInfo, GameLog, end_record, turn_record  # noqa: E402
from snake.rules import MOVES  # noqa: E402
from snake.serving import arrival  # noqa: E402
from snake.serving.service import BUILD, build_service, last_resort, load_settings  # noqa: E402
from snake.serving.sessions import SessionManager  # noqa: E402
from snake.settings import Settings, SettingsError  # noqa: E402

#: Requests larger than this get HTTP 413 (a 19x19 board with 8 snakes is about 20 kB).
MAX_BODY_BYTES = 1 << 20
SERVER_NAME = f"Nuppeppou/{__version__}"
INFO = {
    "apiversion": "1",
    "author": "daedalean",
    "color": "#E80978",
    "head": "pixel",
    "tail": "pixel",
    "version": __version__,
}

log = logging.getLogger("nuppeppou")
api = Blueprint("api", __name__)


def create_app(
    config: Mapping[str, Any] | None = None,
    *,
    settings: Settings | None = None,
    network: Any = BUILD,
    strategy: Strategy | str | None = None,
    sessions: SessionManager | None = None,
    game_log: GameLog | None | Any = BUILD,
    clock=time.monotonic,
) -> Flask:
    """Build the service from ``settings`` (default: the environment's, every one checked:
    :class:`snake.settings.SettingsError` names each bad one). ``network``, ``strategy``,
    ``sessions``, ``game_log``: parts given instead of built
    (:func:`snake.serving.service.build_service`). ``config`` updates Flask's config;
    ``IDLE_LIMIT`` sets the session idle limit in seconds, ``ADAPTIVE_MARGIN`` (bool)
    whether sessions set each move's margin from the engine's latencies, ``CHECK_MOVES``
    (bool) whether an answer the engine did not apply counts as late."""
    settings = load_settings() if settings is None else settings
    app = Flask(__name__)
    app.config.update(MAX_CONTENT_LENGTH=MAX_BODY_BYTES, IDLE_LIMIT=settings.idle_limit,
                      ADAPTIVE_MARGIN=settings.adaptive_margin,
                      CHECK_MOVES=settings.check_moves)
    app.json.sort_keys = False
    if config:
        app.config.update(config)
    settings = dataclasses.replace(settings, idle_limit=float(app.config["IDLE_LIMIT"]),
                                   adaptive_margin=bool(app.config["ADAPTIVE_MARGIN"]),
                                   check_moves=bool(app.config["CHECK_MOVES"]))
    service = build_service(settings, network=network, strategy=strategy, sessions=sessions,
                            game_log=game_log, clock=clock)
    app.extensions["nuppeppou"] = service.parts()
    app.register_blueprint(api)
    app.register_blueprint(observability(
        sessions=service.sessions, game_log=service.game_log, strategy=service.strategy.name,
        network=service.network_summary(), token=settings.dashboard_token))
    return app


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


@api.app_errorhandler(RequestError)
def bad_request(exc: RequestError):
    log.info("400 %s %s: %s", request.method, request.path, exc)
    return jsonify(error=str(exc)), 400


@api.app_errorhandler(HTTPException)
def http_error(exc: HTTPException):
    if exc.code == 413:
        message = f"body: larger than {MAX_BODY_BYTES} bytes"
    else:
        message = f"{exc.name}: {request.method} {request.path}"
    return jsonify(error=message), exc.code or 500


@api.app_errorhandler(Exception)
def unexpected(exc: Exception):  # a bug, never the client's input: say so and log it
    log.exception("unexpected error on %s %s", request.method, request.path)
    return jsonify(error="internal error"), 500


@api.after_app_request
def server_header(response: Response) -> Response:
    rule = request.url_rule.rule if request.url_rule is not None else "other"
    metrics.REQUESTS.labels(route=rule, status=str(response.status_code)).inc()
    # gunicorn.conf.py and the development server below name the project themselves;
    # elsewhere (other servers, the test client) the header is added here.
    if request.environ.get("SERVER_SOFTWARE") != SERVER_NAME:
        response.headers["Server"] = SERVER_NAME
    return response


@api.get("/")
def info():
    return jsonify(INFO)


@api.post("/start")
def start():
    parts = current_app.extensions["nuppeppou"]
    game_log = parts["game_log"]
    _, game = parsed()
    try:
        parts["sessions"].start(game)
    except Exception:
        log.exception("/start failed for game %s", game.state.game.id)
    if game_log is not None and not game_log.start(GameInfo.of(game)):
        metrics.GAME_LOG_DROPPED.inc()
    return jsonify({})


@api.post("/move")
def move():
    began = time.perf_counter()
    waiting = arrival.take()        # since its connection waited for a thread (gunicorn)
    if waiting is not None and waiting < began:
        began = waiting
    parts = current_app.extensions["nuppeppou"]
    strategy, sessions, game_log = parts["strategy"], parts["sessions"], parts["game_log"]
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
        decision = last_resort(game)
        decision.method = f"error, answered by {decision.method}"
    answer = {"move": decision.move}
    if decision.shout:
        answer["shout"] = decision.shout[:256]
    answer_ms = (time.perf_counter() - began) * 1000
    metrics.observe_move(decision, answer_ms, game.state.game.timeout)
    # Handed off before the answer is returned, never waited on: under gunicorn the record
    # is then in the kernel, on its way to the server's writer process, and outlives this
    # worker (snake/observability/gamelog/channel.py).
    if game_log is not None:
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


@api.post("/end")
def end():
    parts = current_app.extensions["nuppeppou"]
    sessions, game_log = parts["sessions"], parts["game_log"]
    raw, game = parsed()
    try:
        sessions.end(game)
    except Exception:
        log.exception("/end failed for game %s", game.state.game.id)
    if game_log is not None and not game_log.end(end_record(game, raw)):
        metrics.GAME_LOG_DROPPED.inc()
    metrics.observe_state(sessions, game_log)
    return jsonify({})


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

    try:
        settings = load_settings()
    except SettingsError as exc:
        sys.exit(f"nuppeppou: not started: {exc}")
    global _app
    _app = create_app(settings=settings)
    _app.run(host="0.0.0.0", port=settings.port, threaded=True, request_handler=Handler)


if __name__ == "__main__":
    main()
