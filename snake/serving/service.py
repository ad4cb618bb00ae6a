"""What the service's routes need, built once from its settings: the log, the network, the
strategy, the game sessions with their accumulator stack, and the game log.

:func:`load_settings` reads and checks every setting (:mod:`snake.settings`), the strategy's
name against the registry included; :func:`build_service` makes the parts, each unless
given (tests give their own), and logs what the service plays with.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from snake.board import MoveRequest
from snake.decision import NO_SAFE_MOVE, Decision, Strategy
from snake.observability.gamelog import GameLog
from snake.observability.gamelog import from_settings as game_log_from_settings
from snake.seed import fallback_decision
from snake.serving.sessions import SessionManager
from snake.settings import Settings
from snake.strategies import check_name, get_strategy

#: Accumulators per process (SPEC §3): games at once before more are made.
POOL_CAPACITY = 32
DEFAULT_WEIGHTS = "weights/nnue.npz"

log = logging.getLogger("nuppeppou")
#: Marks a part not given, to be built (``None`` is a choice: no network, no game log).
BUILD: Any = object()

#: Control characters a request may put in its ids and names, as they are logged: escaped,
#: so that every record stays one line and no request can write a line of its own.
_ESCAPED = {c: f"\\x{c:02x}" for c in range(32)} | {0x7f: "\\x7f"}


class OneLineFormatter(logging.Formatter):
    """The service's log lines: a record is one line whatever its arguments hold (a
    traceback, appended after, keeps its own lines)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return super().formatMessage(record).translate(_ESCAPED)


def configure_logging(level: str = "INFO") -> None:
    """Send the ``nuppeppou`` loggers to stderr at ``level``. Idempotent."""
    log.setLevel(getattr(logging, level.upper(), logging.INFO))
    if not any(getattr(h, "_nuppeppou", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(OneLineFormatter(
            "%(asctime)s [%(process)d] %(levelname)s %(name)s: %(message)s"))
        handler._nuppeppou = True  # type: ignore[attr-defined]
        log.addHandler(handler)
        log.propagate = False


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings ``environ`` (default ``os.environ``) gives, every one checked, the
    strategy's name against the registry too: :class:`snake.settings.SettingsError`
    names each bad one."""
    return Settings.from_environ(os.environ if environ is None else environ,
                                 check_strategy=check_name)


def load_network(weights: str | None) -> Any | None:
    """The network the service plays with: the file ``weights`` if given (it must load),
    else ``weights/nnue.npz`` if present, else ``None``. A bad file raises: a broken
    network must stop the start-up, not be silently replaced by flood fill."""
    try:
        from nnue import network as nnue_network
    except ModuleNotFoundError as exc:
        if weights or not (exc.name or "").startswith("nnue"):
            raise
        log.warning("the nnue package is not available: no network")
        return None
    if weights:
        return nnue_network.Network.load(weights)
    return nnue_network.load_default()


@dataclass
class Service:
    """What the routes need."""

    settings: Settings
    network: Any | None
    strategy: Strategy
    sessions: SessionManager
    game_log: GameLog | None

    def parts(self) -> dict[str, Any]:
        """The parts by name, as ``app.extensions["nuppeppou"]`` holds them."""
        return {"network": self.network, "strategy": self.strategy,
                "sessions": self.sessions, "game_log": self.game_log}

    def network_summary(self) -> str | None:
        """One short line about the network (``None``: there is none)."""
        if self.network is None:
            return None
        return manifest_summary(getattr(self.network, "manifest", None) or {})


def build_service(settings: Settings, *, network: Any = BUILD,
                  strategy: Strategy | str | None = None, sessions: SessionManager | None = None,
                  game_log: GameLog | None | Any = BUILD,
                  clock: Callable[[], float] = time.monotonic) -> Service:
    """The service ``settings`` describe. ``network``: a network, ``None`` for none, or by
    default :func:`load_network` of ``settings.weights``. ``strategy``: a strategy or its
    name (default ``settings.strategy``). ``sessions``: a ready session manager (default:
    one over a :data:`POOL_CAPACITY`-slot accumulator stack of ``network``). ``game_log``:
    where games are recorded (default the settings' file; ``None``: nowhere)."""
    configure_logging(settings.log_level)
    if network is BUILD:
        network = load_network(settings.weights)
    if isinstance(strategy, str) or strategy is None:
        strategy = get_strategy(strategy or settings.strategy, network=network,
                                settings=settings)
    if game_log is BUILD:
        game_log = game_log_from_settings(settings)
    if sessions is None:
        pool = _make_pool(network) if network is not None else None
        # A game first seen mid-way (the other worker had it) began with its /start's
        # snakes, which the other worker wrote in the game log.
        sessions = SessionManager(pool, idle_limit=settings.idle_limit, clock=clock,
                                  adaptive_margin=settings.adaptive_margin,
                                  check_moves=settings.check_moves,
                                  began_with=(game_log.snakes_at_start if game_log is not None
                                              else None))
    service = Service(settings, network, strategy, sessions, game_log)
    _log_start(service)
    return service


def _log_start(service: Service) -> None:
    strategy = service.strategy
    if service.network is None:
        log.info("no network (%s absent): strategy %s runs without one (seed plays by flood "
                 "fill, the network's searches by board control)",
                 service.settings.weights or DEFAULT_WEIGHTS, strategy.name)
    else:
        log.info("network loaded (%s); strategy %s; accumulator stack of %d per process",
                 service.network_summary(), strategy.name, POOL_CAPACITY)
    head = getattr(strategy, "value_head", None)
    if head is not None:
        log.info("value head %s: corrects board control's value with %s snakes alive%s%s",
                 head.digest, " or ".join(map(str, head.snakes)),
                 f" on {', '.join(head.boards)}" if head.boards else "",
                 f" in games begun with {' or '.join(map(str, head.began))} snakes"
                 if head.began else "")
    if service.game_log is not None:
        log.info("game log: %s", service.game_log.path)


def _make_pool(network: Any) -> Any:
    from nnue.pool import AccumulatorPool

    return AccumulatorPool(network, capacity=POOL_CAPACITY)


def manifest_summary(manifest: Mapping[str, Any]) -> str:
    """One short line about a network: when it was trained, on how much, how well."""
    data = manifest.get("data") if isinstance(manifest.get("data"), dict) else {}
    parts = [f"trained {manifest['date']}" if "date" in manifest else "",
             f"{data['positions']} positions" if "positions" in data else "",
             f"validation loss {manifest['validation_loss']:.4f}"
             if isinstance(manifest.get("validation_loss"), float) else ""]
    return ", ".join(p for p in parts if p) or "no manifest"


def last_resort(game: MoveRequest) -> Decision:
    """The move when the strategy failed: flood fill, or if even that fails, anything."""
    try:
        return fallback_decision(game)
    except Exception:
        log.exception("flood fill failed too; answering %s", NO_SAFE_MOVE)
        return Decision(NO_SAFE_MOVE)
