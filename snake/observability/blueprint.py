"""The service's observability routes, a Flask blueprint: ``GET /health`` (public: load and
fallbacks, no file paths) and, behind the dashboard's access control
(:mod:`snake.observability.dashboard.access`: with no token, this machine only; with one,
only with it), the dashboard ``GET /games``, ``GET /games/<id>`` and Prometheus
``GET /metrics``."""

from __future__ import annotations

import functools
import os
from typing import Any, Callable
from urllib.parse import urlencode

from flask import Blueprint, Response, jsonify, redirect, request

from snake import __version__
from snake.observability import metrics
from snake.observability.dashboard import game_view, games_view
from snake.observability.dashboard.access import COOKIE
from snake.observability.dashboard.access import check as check_access
from snake.observability.gamelog import GameLog
from snake.observability.gamelog.reader import GameFilter

#: The dashboard's pages run their own inline script and styles and load nothing else.
DASHBOARD_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                 "img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")


def observability(*, sessions: Any, game_log: GameLog | None, strategy: str,
                  network: str | None, token: str | None) -> Blueprint:
    """The routes over a service's ``sessions`` (anything with ``stats()``, as
    :class:`snake.serving.sessions.SessionManager`) and ``game_log``; ``strategy`` names
    its strategy, ``network`` sums up its network (``None``: it has none); ``token`` is the
    dashboard's (``NUPPEPPOU_DASHBOARD_TOKEN``; ``None``: this machine only)."""
    routes = Blueprint("observability", __name__)
    about = {"version": __version__, "strategy": strategy, "network": network or "none",
             "game log": str(game_log.path) if game_log is not None else "off"}
    database = game_log.path if game_log is not None else None

    @routes.get("/health")
    def health():
        stats = sessions.stats()
        writing = game_log is None or game_log.writer_alive()
        problem = game_log.problem if game_log is not None else None
        body: dict[str, Any] = {
            # degraded: the game log's writer has stopped, or cannot write its records now
            # (the moves are still answered)
            "status": "ok" if writing and problem is None else "degraded",
            "version": __version__, "pid": os.getpid(),
            "strategy": strategy, "network": network is not None,
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

    def private(view: Callable[..., Any]) -> Callable[..., Any]:
        """``view`` for a request that may see the dashboard and metrics; another gets
        404 (no token set, not from this machine) or 401, and a browser that brings the
        token as ``?token=`` gets it as a cookie and is sent to the address without it."""
        @functools.wraps(view)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            verdict = check_access(request.remote_addr, request.headers, request.cookies,
                                   request.args.get("token"), token)
            if verdict.set_cookie:
                args_kept = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
                target = request.path + ("?" + urlencode(args_kept) if args_kept else "")
                response = redirect(target, code=303)
                response.set_cookie(COOKIE, request.args["token"], httponly=True,
                                    samesite="Strict", secure=request.is_secure)
                return response
            if not verdict.allowed:
                if verdict.status == 401:
                    return Response('{"error": "dashboard: a token is needed"}', 401,
                                    {"WWW-Authenticate": 'Bearer realm="nuppeppou"',
                                     "Content-Type": "application/json"})
                return jsonify(error=f"Not Found: {request.method} {request.path}"), 404
            return view(*args, **kwargs)
        return guarded

    @routes.get("/games")
    @private
    def games():
        which = GameFilter(request.args.get("ruleset", ""), request.args.get("result", ""),
                           request.args.get("opponent", ""))
        return _send(games_view(database, request.args.get("page"), about, which))

    @routes.get("/games/<path:game_id>")
    @private
    def game(game_id: str):
        return _send(game_view(database, game_id, request.args.get("you"),
                               request.args.get("format")))

    @routes.get("/metrics")
    @private
    def metrics_route():
        metrics.observe_state(sessions, game_log)
        body, content_type = metrics.exposition()
        return Response(body, 200, {"Content-Type": content_type})

    return routes


def _send(view: Any) -> Response:
    # The pages are self-contained: nothing may be fetched from anywhere, whatever a
    # request's text managed to put into them.
    return Response(view.body, view.status, {"Content-Type": view.content_type,
                                             "Content-Security-Policy": DASHBOARD_CSP})
