"""What the game log keeps of a request: built on the request's thread, cheaply.

The /move path must not wait on the game log, so a record holds only what the request
already has: the body's bytes as received (compressed later, by the writer), the parsed
game's identity, and the decision turned into plain data (:func:`reasons`). Under gunicorn
the request pickles it for the server's writer process (:mod:`.channel`); everything else
(compression, JSON, SQL) happens in the writer (that process, or a thread of this one).

Results are :func:`snake.rules.outcome_at_end`: what the ``/end`` body shows, with our last
answered turn (from the log) telling a draw from an earlier death.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from snake.board import MoveRequest
from snake.decision import Decision, answered_by
from snake.rules import final_turn_at_end, outcome_at_end

#: Results a game can have in the log (``None`` while it is being played): those of
#: :func:`snake.rules.outcome_at_end`, and ``abandoned`` when no ``/end`` came.
RESULTS = ("win", "loss", "draw", "unfinished", "ended", "abandoned")
#: The results of a game played to its end: what the dashboard lists by default and the
#: training pipeline reads. The others (``unfinished``: stopped with us and others alive,
#: such as a one-position probe; ``abandoned``; none yet) are listed on request.
FINISHED = ("win", "loss", "draw", "ended")


@dataclass(frozen=True, slots=True)
class GameInfo:
    """A game as one of our snakes sees it: the row of the ``games`` table."""

    game_id: str
    you_id: str
    you_name: str
    ruleset: str
    map: str
    width: int
    height: int
    timeout: int
    source: str
    snakes: tuple[tuple[str, str], ...]      # (id, name) of every snake on the board

    @classmethod
    def of(cls, request: MoveRequest) -> "GameInfo":
        state = request.state
        return cls(
            game_id=state.game.id, you_id=request.you.id, you_name=request.you.name,
            ruleset=state.game.ruleset.name, map=state.game.map,
            width=state.board.width, height=state.board.height,
            timeout=state.game.timeout, source=state.game.source,
            snakes=tuple((s.id, s.name) for s in state.board.snakes))


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One answered /move: the body as received, the answer and why."""

    game: GameInfo
    turn: int
    received_at: float           # wall clock (epoch seconds)
    body: bytes                  # the request body exactly as received
    move: str
    shout: str
    answered_by: str             # see snake.decision.answered_by
    method: str
    depth: int | None
    score: float | None
    nodes: int | None
    think_ms: float | None       # the search's own time
    engine_latency_ms: float | None   # ``you.latency``: the engine's time for our last answer
    answer_ms: float | None      # from the request's arrival to the answer (None: imported)
    reasons: dict[str, Any]      # the decision as plain data


@dataclass(frozen=True, slots=True)
class EndRecord:
    """The /end of a game: its final state as received."""

    game: GameInfo
    request: MoveRequest
    received_at: float
    body: bytes

    @property
    def turn(self) -> int:
        """The game's final turn: the ``/end`` body shows a finished game one turn on
        (:data:`snake.rules.END_AFTER_FINAL`)."""
        return final_turn_at_end(self.request.state)

    def result(self, last_answered_turn: int | None) -> str:
        return outcome_at_end(self.request.state, self.request.you, last_answered_turn)


def turn_record(request: MoveRequest, body: bytes, decision: Decision, answer_ms: float,
                strategy: str = "") -> TurnRecord:
    search = decision.search
    return TurnRecord(
        game=GameInfo.of(request), turn=request.state.turn, received_at=time.time(),
        body=body, move=decision.move, shout=decision.shout[:256],
        answered_by=answered_by(decision), method=decision.method or strategy,
        depth=search.depth if search is not None else None,
        score=search.score if search is not None else None,
        nodes=search.nodes if search is not None else None,
        think_ms=search.elapsed_ms if search is not None else None,
        engine_latency_ms=request.you.latency_ms,
        answer_ms=answer_ms, reasons=reasons(decision))


def end_record(request: MoveRequest, body: bytes) -> EndRecord:
    return EndRecord(game=GameInfo.of(request), request=request, received_at=time.time(),
                     body=body)


def reasons(decision: Decision) -> dict[str, Any]:
    """The decision as JSON-ready data: what ``python -m snake.explain`` prints, by field."""
    out: dict[str, Any] = {"move": decision.move, "method": decision.method}
    if decision.filter is not None:
        out["filter"] = {"removed": dict(decision.filter.removed),
                         "risky": sorted(decision.filter.risky)}
    if decision.scores:
        out["scores"] = {m: round(v, 4) for m, v in decision.scores.items()}
    if decision.note:
        out["note"] = decision.note
    if decision.candidates:
        out["candidates"] = list(decision.candidates)
    search = decision.search
    if search is not None:
        out["search"] = {
            "algorithm": search.algorithm, "engine": search.engine,
            "evaluator": search.evaluator, "depth": search.depth, "nodes": search.nodes,
            "score": round(search.score, 4), "stopped": search.stopped,
            "elapsed_ms": round(search.elapsed_ms, 2),
            "since_arrival_ms": round(search.since_arrival_ms, 2),
            "scores": {m: round(v, 4) for m, v in search.scores.items()},
            "pv": search.pv,
            "iterations": [[d, m, round(s, 4), n, ms] for d, m, s, n, ms in search.iterations],
            "opponents": list(search.opponents), "cheap": list(search.cheap),
            "threads": search.threads, "answered_by": search.answered_by,
        }
        if search.note:
            out["search"]["note"] = search.note
        if search.replies != "joint":
            out["search"]["replies"] = search.replies
    return out
