"""Arena players: built-in strategies played in-process, and Battlesnakes spoken to over HTTP.

A player is given on the command line as ``TARGET`` or ``LABEL=TARGET``: ``TARGET`` is the
name of a strategy in :data:`snake.strategies.STRATEGIES` (a search strategy with options in
brackets, ``search[max_opponents=3]``) or an ``http://`` / ``https://``
URL. Each seat of each game gets its own *seat* object, built in the process that plays the
game:

- :class:`BuiltinSeat` owns a fresh strategy (seeded from the game) and, when a network is
  loaded, a fresh NNUE accumulator for that one snake; the strategy updates it itself. With
  ``--builtin-timeout`` an answer that took longer than the game's timeout is treated like
  a late HTTP answer (missed); by default built-ins may take their time, so that a run
  does not depend on the machine's load.
- :class:`HttpSeat` talks to a snake as the official engine does: ``POST`` of the request
  body to ``<url>/start``, ``<url>/move`` and ``<url>/end``, each with the game's timeout
  covering the whole exchange (connect, send, answer). A move that comes late, with a
  status other than 200, or without a valid ``{"move": ...}`` is no answer: the arena then
  repeats the snake's previous move (``up`` on the first turn), like the engine. Failed
  ``/start`` and ``/end`` calls are ignored, like the engine.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from snake.board import MoveRequest
from snake.rules import MOVES

#: Colours of built-in players on rendered boards (HTTP snakes bring their own).
BUILTIN_COLORS = {"random": "#9E9E9E", "floodfill": "#2E86DE", "seed": "#E80978"}
PALETTE = ("#F39C12", "#27AE60", "#8E44AD", "#16A085", "#C0392B", "#34495E", "#D35400")

MAX_ANSWER_BYTES = 64 * 1024
USER_AGENT = "Nuppeppou-arena/1"


class PlayerError(ValueError):
    """A player that cannot be played: unknown strategy, bad URL, unreachable snake."""


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """One player of an arena run. ``label`` is unique within the run."""

    label: str
    target: str
    color: str = "#888888"
    head: str = "default"
    tail: str = "default"
    #: a network file of its own (``STRATEGY@FILE``), instead of the run's ``--weights``
    weights: str = ""

    @property
    def is_http(self) -> bool:
        return self.target.startswith(("http://", "https://"))


def known_strategies() -> tuple[str, ...]:
    from snake.strategies import STRATEGIES
    return tuple(STRATEGIES)


def _strategy_base(text: str, name: str) -> str:
    """The strategy a built-in player's name is made from: ``search`` for
    ``search[max_opponents=3]`` (options only on search strategies)."""
    from snake.search.strategy import VARIANTS, split_options
    try:
        base, options = split_options(name)
    except ValueError as exc:
        raise PlayerError(f"player {text!r}: {exc}") from None
    if (options or base != name) and base not in VARIANTS:
        raise PlayerError(f"player {text!r}: only search strategies take options")
    return base


def parse_players(texts: Sequence[str]) -> list[PlayerSpec]:
    """Parse ``TARGET`` / ``LABEL=TARGET`` arguments. Repeated labels get ``#2``, ``#3``..."""
    strategies = known_strategies()
    players: list[PlayerSpec] = []
    seen: dict[str, int] = {}
    for i, text in enumerate(texts):
        text = text.strip()
        label, target, weights = "", text, ""
        bracket = text.find("[")
        if "=" in text and not text.startswith(("http://", "https://")) and (
                bracket < 0 or text.index("=") < bracket):   # not an option's '='
            label, target = (part.strip() for part in text.split("=", 1))
            if not label:
                raise PlayerError(f"player {text!r}: empty label before '='")
        if target.startswith(("http://", "https://")):
            parts = urllib.parse.urlsplit(target)
            if not parts.hostname:
                raise PlayerError(f"player {text!r}: URL without a host")
            try:
                parts.port
            except ValueError:
                raise PlayerError(f"player {text!r}: bad port in URL") from None
            label = label or target
            color = PALETTE[i % len(PALETTE)]
        elif _strategy_base(text, target.split("@", 1)[0]) in strategies:
            target, _, weights = target.partition("@")
            if _ and not weights:
                raise PlayerError(f"player {text!r}: no network file after '@'")
            label = label or (f"{target}@{Path(weights).stem}" if weights else target)
            color = BUILTIN_COLORS.get(_strategy_base(text, target), PALETTE[i % len(PALETTE)])
        else:
            raise PlayerError(f"player {text!r}: not a strategy ({', '.join(strategies)}) "
                              "nor an http:// URL")
        used = {q.color for q in players}
        if color in used:   # two players of one strategy: tell them apart on the board
            color = next((c for c in PALETTE if c not in used), color)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        players.append(PlayerSpec(label, target, color, weights=weights if not
                                  target.startswith(("http://", "https://")) else ""))
    if not players:
        raise PlayerError("no players")
    return players


# ---------------------------------------------------------------------------------------
# One answer to /move


@dataclass(slots=True)
class Answer:
    """What a seat said this turn. ``move`` is None when there was no valid answer in time;
    ``problem`` is then ``"timeout"`` or ``"invalid"`` and ``detail`` says why."""

    move: str | None
    latency_ms: float
    problem: str = ""
    detail: str = ""
    shout: str = ""


def parse_move_answer(status: int, data: bytes) -> tuple[str | None, str, str]:
    """(move, shout, detail) from an HTTP answer to ``/move``; move None if invalid."""
    if status != 200:
        return None, "", f"HTTP {status}"
    try:
        answer = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None, "", f"not JSON: {data[:60]!r}"
    if not isinstance(answer, dict):
        return None, "", "answer is not a JSON object"
    move = answer.get("move")
    if move not in MOVES:
        return None, "", f"invalid move {move!r}"
    shout = answer.get("shout")
    return move, shout[:256] if isinstance(shout, str) else "", ""


# ---------------------------------------------------------------------------------------
# Seats


class BuiltinSeat:
    """A built-in strategy playing one snake of one game, with its own accumulator."""

    is_http = False

    def __init__(self, strategy_name: str, *, network: Any = None, seed: int | None = None,
                 deadline_ms: float | None = None):
        from snake.strategies import get_strategy
        self.deadline_ms = deadline_ms
        self.strategy = get_strategy(strategy_name, network=network, seed=seed)
        self.accumulator = None
        if network is not None:
            from nnue.accumulator import Accumulator
            self.accumulator = Accumulator(network)
        #: the snakes of the game's first turn (as the server's sessions tell requests)
        self.snakes_at_start: int | None = None

    def start(self, body: dict[str, Any]) -> None:
        self.snakes_at_start = len(body["board"]["snakes"])

    def move(self, request: MoveRequest) -> Answer:
        t0 = time.perf_counter()
        if self.snakes_at_start is not None:
            request.snakes_at_start = self.snakes_at_start
        try:
            decision = self.strategy.choose(request, self.accumulator)
        except Exception as exc:  # a bug in a strategy is counted, not fatal to the run
            return Answer(None, _ms_since(t0), "invalid", f"{type(exc).__name__}: {exc}")
        elapsed = _ms_since(t0)
        if self.deadline_ms is not None and elapsed > self.deadline_ms:
            return Answer(None, elapsed, "timeout", f"thought {elapsed:.0f} ms, "
                          f"over the {self.deadline_ms:.0f} ms timeout")
        if decision.move not in MOVES:
            return Answer(None, elapsed, "invalid", f"invalid move {decision.move!r}")
        return Answer(decision.move, elapsed, shout=(decision.shout or "")[:256])

    def end(self, body: dict[str, Any]) -> None:
        if self.accumulator is not None:
            self.accumulator.reset()

    def close(self) -> None:
        pass


class HttpSeat:
    """A Battlesnake server playing one snake of one game, over one keep-alive connection."""

    is_http = True

    def __init__(self, url: str, timeout_ms: int):
        self.url = url
        self.parts = urllib.parse.urlsplit(url)
        self.timeout_ms = timeout_ms
        self.base_path = self.parts.path.rstrip("/")
        # a query in the snake's URL goes with every request, as the CLI keeps it
        self._query = f"?{self.parts.query}" if self.parts.query else ""
        self.conn: http.client.HTTPConnection | None = None

    def _connection(self, timeout_s: float) -> tuple[http.client.HTTPConnection, bool]:
        """The connection to use and whether it is one kept alive from before. A kept one
        the server has closed meanwhile (servers close idle connections after a few
        seconds: gunicorn's gthread 2, uvicorn and Node 5) reads as ready, with nothing or
        junk to read: it is dropped and a new one made, as Go's client dials again."""
        if self.conn is not None and self.conn.sock is not None:
            ready, _, _ = select.select([self.conn.sock], [], [], 0)
            if ready:
                self.close()
        if self.conn is None:
            cls = (http.client.HTTPSConnection if self.parts.scheme == "https"
                   else http.client.HTTPConnection)
            self.conn = cls(self.parts.hostname, self.parts.port, timeout=timeout_s)
            return self.conn, False
        self.conn.timeout = timeout_s
        if self.conn.sock is not None:
            self.conn.sock.settimeout(timeout_s)
        return self.conn, self.conn.sock is not None

    def post(self, route: str, payload: bytes) -> tuple[int, bytes, float, str]:
        """POST ``payload`` to ``route``; (status, body, elapsed ms, problem). ``problem`` is
        ``"timeout"`` when no full answer came within the timeout, ``"invalid"`` on any
        other failure (refused connection, broken answer, oversized body).

        The timeout bounds the whole exchange, connecting, sending and reading, as the
        official CLI's client timeout does: a socket's own timeout bounds each read only,
        and a server that trickles its answer a byte at a time would hold the game for
        ever; at the deadline the socket is shut and the answer is a timeout. A request on
        a kept-alive connection that could not be sent (the server had closed it) is sent
        once more on a new one; one that was sent is never sent again."""
        t0 = time.perf_counter()
        timeout_s = self.timeout_ms / 1000
        cut = threading.Event()
        held: list[http.client.HTTPConnection] = []

        def cut_off() -> None:
            cut.set()
            sock = held[0].sock if held else None
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        timer = threading.Timer(timeout_s, cut_off)
        timer.daemon = True
        timer.start()
        try:
            for attempt in (1, 2):
                remaining = timeout_s - (time.perf_counter() - t0)
                conn, reused = self._connection(max(remaining, 0.001))
                held[:] = [conn]
                try:
                    conn.request("POST", f"{self.base_path}/{route}{self._query}", body=payload,
                                 headers={"Content-Type": "application/json",
                                          "User-Agent": USER_AGENT})
                except (BrokenPipeError, ConnectionResetError):
                    # Not sent: the server had closed the kept connection. Once the request
                    # is out it is never sent again (the server may have read it), as Go's
                    # client does not resend a POST it wrote.
                    if attempt == 1 and reused and not cut.is_set():
                        self.close()
                        continue
                    raise
                break
            remaining = timeout_s - (time.perf_counter() - t0)
            if remaining <= 0:
                raise socket.timeout("send took the whole timeout")
            if conn.sock is not None:
                conn.sock.settimeout(remaining)
            response = conn.getresponse()
            data = response.read(MAX_ANSWER_BYTES + 1)
            if len(data) > MAX_ANSWER_BYTES:
                self.close()
                return response.status, b"answer over 64 KiB", _ms_since(t0), "invalid"
            if response.will_close or cut.is_set():
                self.close()
        except (socket.timeout, TimeoutError):
            self.close()
            return 0, b"", _ms_since(t0), "timeout"
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            if cut.is_set():
                return 0, b"", _ms_since(t0), "timeout"
            return 0, repr(exc).encode(), _ms_since(t0), "invalid"
        finally:
            timer.cancel()
            timer.join()      # a timer firing late must not shut the next request's socket
        elapsed = _ms_since(t0)
        if elapsed > self.timeout_ms or cut.is_set():
            return response.status, data, elapsed, "timeout"
        return response.status, data, elapsed, ""

    def start(self, body: dict[str, Any]) -> None:
        self.post("start", _dump(body))

    def move_payload(self, payload: bytes) -> Answer:
        status, data, elapsed, problem = self.post("move", payload)
        if problem == "timeout":
            return Answer(None, elapsed, "timeout", f"no answer within {self.timeout_ms} ms")
        if problem:
            return Answer(None, elapsed, "invalid", data.decode(errors="replace")[:120])
        move, shout, detail = parse_move_answer(status, data)
        if move is None:
            return Answer(None, elapsed, "invalid", detail)
        return Answer(move, elapsed, shout=shout)

    def end(self, body: dict[str, Any]) -> None:
        self.post("end", _dump(body))

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def fetch_metadata(url: str, timeout_ms: int) -> dict[str, Any]:
    """``GET <url>/`` (the snake's looks), as the CLI does before a game. Raises
    :class:`PlayerError` when the snake does not answer with a JSON object."""
    parts = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname, parts.port, timeout=max(timeout_ms, 1000) / 1000)
    try:
        conn.request("GET", parts.path.rstrip("/") + "/", headers={"User-Agent": USER_AGENT})
        response = conn.getresponse()
        data = response.read(MAX_ANSWER_BYTES)
    except (OSError, http.client.HTTPException) as exc:
        raise PlayerError(f"snake {url}: GET / failed ({exc})") from None
    finally:
        conn.close()
    if response.status != 200:
        raise PlayerError(f"snake {url}: GET / answered HTTP {response.status}")
    try:
        meta = json.loads(data)
    except ValueError:
        raise PlayerError(f"snake {url}: GET / did not answer JSON") from None
    if not isinstance(meta, dict):
        raise PlayerError(f"snake {url}: GET / did not answer a JSON object")
    return meta


def _dump(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def _ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000
