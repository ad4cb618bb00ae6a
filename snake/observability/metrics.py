"""The service's Prometheus metrics (``GET /metrics``).

Under gunicorn every worker is a process: the metrics are kept in prometheus_client's
multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, made by gunicorn.conf.py before the app is
loaded; a dead worker's live gauges are dropped by its ``child_exit`` hook), and a scrape of
any worker reports the sum over all of them. Without that directory (``python app.py``,
tests) the process's own registry is reported.

The metrics:

- ``nuppeppou_move_seconds``: histogram: a /move's arrival to its answer
- ``nuppeppou_late_risk_total``: answers given within :data:`LATE_RISK_MS` of the game's timeout, or
  after it
- ``nuppeppou_search_depth``: histogram: depth of searched answers
- ``nuppeppou_engine_overhead_seconds``: histogram: per answered turn the engine took (not the
  missed ones), the engine's reported latency less our own time on it (the network both ways, the
  wait for a worker; :mod:`snake.serving.sessions`, with the adaptive margin on)
- ``nuppeppou_engine_missed_total``: answers the engine did not apply: the next turn shows it moved
  us otherwise (it repeats our last move for an answer that came late or not at all), whatever
  latency it reported (with the adaptive margin on)
- ``nuppeppou_answers_total{by}``: answers by what gave them (:func:`snake.decision.answered_by`):
  the fallbacks by kind
- ``nuppeppou_sessions``: game sessions open
- ``nuppeppou_pool_leased``, ``nuppeppou_pool_free``: accumulators on lease / on the stack
- ``nuppeppou_game_log_queue``: game-log records waiting for the writer (the server's writer
  process: the largest any worker reports)
- ``nuppeppou_game_log_dropped_total``: game-log records dropped on a full queue
- ``nuppeppou_requests_total{route,status}``: requests by route and HTTP status
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from snake.decision import Decision, answered_by

#: An answer this close to the game's timeout (ms) is at risk of arriving late.
LATE_RISK_MS = 50.0

MOVE_SECONDS = Histogram(
    "nuppeppou_move_seconds", "Time from a /move's arrival to its answer",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.75, 1.0, 2.0))
LATE_RISK = Counter("nuppeppou_late_risk",
                    f"Answers within {LATE_RISK_MS:g} ms of the game's timeout, or after it")
SEARCH_DEPTH = Histogram("nuppeppou_search_depth", "Depth of searched answers (turns)",
                         buckets=(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 30))
ENGINE_OVERHEAD = Histogram(
    "nuppeppou_engine_overhead_seconds",
    "The engine's reported latency for an answer less the server's own time on it",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0))
ENGINE_MISSED = Counter("nuppeppou_engine_missed",
                        "Answers the engine did not apply (late or lost on the way)")
ANSWERS = Counter("nuppeppou_answers", "Answers by what gave them", ["by"])
SESSIONS = Gauge("nuppeppou_sessions", "Game sessions open", multiprocess_mode="livesum")
POOL_LEASED = Gauge("nuppeppou_pool_leased", "Accumulators on lease",
                    multiprocess_mode="livesum")
POOL_FREE = Gauge("nuppeppou_pool_free", "Accumulators on the stack", multiprocess_mode="livesum")
# the largest, not the sum: under gunicorn.conf.py every worker reports the queue of the
# server's one writer process
GAME_LOG_QUEUE = Gauge("nuppeppou_game_log_queue", "Game-log records waiting for the writer",
                       multiprocess_mode="livemax")
GAME_LOG_DROPPED = Counter("nuppeppou_game_log_dropped",
                           "Game-log records dropped on a full queue")
REQUESTS = Counter("nuppeppou_requests", "Requests by route and status", ["route", "status"])


def observe_move(decision: Decision, answer_ms: float, timeout_ms: float) -> None:
    MOVE_SECONDS.observe(answer_ms / 1000.0)
    if answer_ms >= timeout_ms - LATE_RISK_MS:
        LATE_RISK.inc()
    ANSWERS.labels(by=answered_by(decision)).inc()
    if decision.search is not None and decision.search.move is not None:
        SEARCH_DEPTH.observe(decision.search.depth)


def observe_state(sessions: Any, game_log: Any | None) -> None:
    """Set the gauges from the session manager's and the game log's counts."""
    stats = sessions.stats()
    SESSIONS.set(stats["sessions"])
    if "free" in stats:
        POOL_FREE.set(stats["free"])
        POOL_LEASED.set(stats["created"] - stats["free"])
    if game_log is not None:
        GAME_LOG_QUEUE.set(game_log.queue_depth())


def exposition() -> tuple[bytes, str]:
    """The metrics in Prometheus' text format, and its content type."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
