"""When a request became ready to be read, as the server saw it before a thread took it up.

A move is due ``game.timeout`` after the engine sent it, and a request that waits for a free
thread (every one of a worker's threads busy with other games' searches) waits outside the
route's own clock. gunicorn.conf.py's worker marks, in the thread that will handle it, the
moment each request's connection was handed to the thread pool (:func:`mark`); the
``/move`` route takes it (:func:`take`) and counts the move's time from there, so that the
search is given what is left of the move's time, not all of it. Without the mark (Flask's
own server, tests) the route's clock starts when the route does.
"""

from __future__ import annotations

import threading

_local = threading.local()


def mark(at: float | None) -> None:
    """The request this thread is about to handle was ready at ``at``
    (``time.perf_counter``; ``None``: not known)."""
    _local.at = at


def take() -> float | None:
    """When this thread's request was ready, once (``None``: not marked)."""
    at = getattr(_local, "at", None)
    _local.at = None
    return at
