"""The search budget: a wall-clock deadline and an optional node limit.

A move is due ``game.timeout`` ms after the request arrived, network time included. The
search thinks until ``arrival + timeout - margin`` (:func:`think_time_ms`); the margin
covers what happens outside the search: parsing and queueing before it starts, the last
node that is being expanded when the deadline passes, writing the answer, and the network
on the way back. :data:`DEFAULT_MARGIN_MS` is chosen for a shared 2-core machine (see
docs/search.md: measured overruns and why 150 ms).

:class:`Budget.tick` is called once per node. A node costs tens to a few hundred
microseconds in pure Python, and ``time.perf_counter`` about 0.1 µs, so checking the clock
at every node is cheap and keeps the overrun below one node's cost. When the deadline or
the node limit is reached, :class:`SearchTimeout` unwinds the search; the caller keeps the
result of the deepest completed iteration. A node limit (with no deadline) makes a search
reproducible, which is what tests use.

**The margin adapts to the network.** What the margin must cover outside our own handler
(the network both ways, the wait for a worker thread) is measured in every game: the engine
reports in each request how long our previous answer took from its side (``latency``), and
the server knows how long it spent on it, so the difference is that turn's overhead
(:mod:`snake.serving.sessions` keeps the last :data:`OVERHEAD_TURNS` of a game). Once a game has
one, its margin is :func:`adaptive_margin_ms`, the largest recent overhead plus
:data:`MARGIN_SAFETY_MS`, when that is more than the configured margin: the margin only
grows, so a snake far from the engine stops in time where the fixed margin would answer
late, and one close to it keeps the configured margin (set it lower for a snake known to
run close to the engine). A late answer (the engine reports the full timeout) only bounds
its overhead from below, so it counts double.
"""

from __future__ import annotations

import time

#: Default safety margin (ms) subtracted from ``game.timeout``.
DEFAULT_MARGIN_MS = 150.0
#: Whatever the margin, think at least this fraction of the timeout (tiny timeouts).
MIN_THINK_FRACTION = 0.25


#: The adaptive margin: the largest overhead of a game's last turns plus this (ms), for a
#: network that is slower than it was (a late answer makes the engine repeat our last move,
#: which can lose the game).
MARGIN_SAFETY_MS = 80.0
#: How many of a game's last turns the adaptive margin looks at.
OVERHEAD_TURNS = 10


def adaptive_margin_ms(overheads_ms) -> float:
    """The margin a game's recent overheads call for (ms, each the engine's latency for one
    of our answers minus our own time on it; see the module docstring)."""
    return max(overheads_ms) + MARGIN_SAFETY_MS


def overhead_ms(engine_latency_ms: float, answer_ms: float, timeout_ms: float) -> float:
    """One turn's overhead: the engine's latency for our answer minus our own time on it
    (at least 0), doubled when the answer was late (the engine then reports the timeout,
    which only bounds the overhead from below)."""
    overhead = max(0.0, engine_latency_ms - answer_ms)
    return 2.0 * overhead if engine_latency_ms >= timeout_ms else overhead


class SearchTimeout(Exception):
    """The budget ran out in the middle of an iteration."""


def think_time_ms(timeout_ms: float, margin_ms: float = DEFAULT_MARGIN_MS, *,
                  floor: bool = True) -> float:
    """Milliseconds the search may use for a move due ``timeout_ms`` after arrival:
    ``timeout - margin``, but at least :data:`MIN_THINK_FRACTION` of the timeout when
    ``floor`` (a configured margin wider than a tiny timeout); without it at least 0: a
    margin the game itself measured (its network takes that long) leaves what it leaves,
    and thinking beyond it only makes the answer late."""
    least = MIN_THINK_FRACTION * float(timeout_ms) if floor else 0.0
    return max(float(timeout_ms) - float(margin_ms), least)


class Budget:
    """A deadline (``time.perf_counter`` seconds, or ``None``) and a node limit (or ``None``).
    ``hard_deadline`` (default: the deadline): until when a compiled search may run while it
    has completed no iteration (a move's share of the cores that came late).

    ``nodes`` counts :meth:`tick` calls over the whole search (all iterations)."""

    __slots__ = ("deadline", "hard_deadline", "max_nodes", "nodes", "clock")

    def __init__(self, deadline: float | None = None, max_nodes: int | None = None,
                 clock=time.perf_counter) -> None:
        if max_nodes is not None and max_nodes < 1:
            raise ValueError("max_nodes must be at least 1")
        self.deadline = deadline
        self.hard_deadline = deadline
        self.max_nodes = max_nodes
        self.nodes = 0
        self.clock = clock

    @classmethod
    def after(cls, ms: float | None, *, started: float | None = None,
              max_nodes: int | None = None) -> Budget:
        """A budget ending ``ms`` milliseconds after ``started`` (default: now)."""
        if ms is None:
            return cls(None, max_nodes)
        start = time.perf_counter() if started is None else started
        return cls(start + ms / 1000.0, max_nodes)

    def tick(self) -> None:
        """Count one node; raise :class:`SearchTimeout` if the budget is spent."""
        self.nodes += 1
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise SearchTimeout
        if self.deadline is not None and self.clock() >= self.deadline:
            raise SearchTimeout
