"""A learned value head: a small network over board control's measurements.

Board control (:mod:`snake.evaluation.control`) divides the board among the snakes and then
weighs a handful of things it measured (squares owned, length lead, food, health) by hand.
A value head replaces that last step by a network learned from games: its inputs are the
partition's :data:`~snake.evaluation.control.MEASUREMENTS` of a snake (the hand-weighed
value among them), one hidden layer of ReLUs, and one output ``z`` (:func:`head_value`, the
readable twin of the compiled search's); the snake's value is
``2 sigmoid(z) - 1 = tanh(z / 2)``, the game's expected result for it on the search's scale.
A *residual* head adds ``z`` to the logit of the style's own value instead
(``tanh(atanh(v) + z / 2)``): it learns a correction, and a head of zeros is the style.
It costs a few hundred multiplications after the partition, so the search keeps its speed.

The head's file (``.npz``): ``w1`` (hidden x measurements), ``b1``, ``w2`` (hidden), ``b2``
(one), ``residual`` (module docstring), ``measurements`` (the names it was trained on,
checked against the core's; a head trained before later measurements were added to the
end of them is read with zero weights on those), ``style``
(the board-control weights of its ``value`` input), ``snakes`` (the numbers of living snakes
it learned from: a search uses it only for those), ``boards`` (the rulesets and sizes it
learned on, as ``"standard 11x11"``: a search uses it only on those; absent or empty, on
any), ``began`` (the numbers of snakes the games it learned from began with, a game
played from a position beginning there: a search uses it only in games that began so, as
far as it knows, :attr:`snake.board.MoveRequest.snakes_at_start`; absent or empty, in any)
and ``meta`` (JSON: the data, the training run, its loss). ``training.fit_head``
trains one, ``training.tune`` tunes one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from snake.core.state import G_N, Packed
from snake.evaluation.compiled.control import measure, workspace
from snake.evaluation.control import LIMIT, MEASUREMENTS, N_MEASUREMENTS, STYLES

_MILLION = 1_000_000


class HeadError(ValueError):
    """A value head file that cannot be used; ``str()`` says why."""


@dataclass(frozen=True, eq=False)
class ValueHead:
    """The weights of a value head (module docstring)."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: float
    style: str = "default"
    #: The numbers of living snakes it was trained on (a search uses it only for those).
    snakes: tuple[int, ...] = (2,)
    meta: dict[str, Any] = field(default_factory=dict)
    #: A residual head corrects the style's value: its output is added to that value's
    #: logit, so an untrained (zero) head is the style itself.
    residual: bool = False
    #: The boards it was trained on (:func:`board_of`); empty: any board.
    boards: tuple[str, ...] = ()
    #: The numbers of snakes the games it was trained in began with; empty: any game.
    began: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        hidden = self.w1.shape[0] if self.w1.ndim == 2 else 0
        if self.w1.shape != (hidden, N_MEASUREMENTS) or self.b1.shape != (hidden,) \
                or self.w2.shape != (hidden,) or hidden < 1:
            raise HeadError(f"value head: w1 must be (hidden, {N_MEASUREMENTS}), b1 and w2 "
                            f"(hidden,); got {self.w1.shape}, {self.b1.shape}, {self.w2.shape}")
        if self.style not in STYLES:
            raise HeadError(f"value head: unknown style {self.style!r}")
        if not self.snakes or min(self.snakes) < 1:
            raise HeadError(f"value head: snake counts {self.snakes!r}: at least one, each >= 1")
        if not all(np.isfinite(a).all() for a in (self.w1, self.b1, self.w2, self.b2)):
            raise HeadError("value head: weights that are not finite")
        if not all(isinstance(b, str) and len(b.split()) == 2 for b in self.boards):
            raise HeadError(f"value head: boards {self.boards!r}: each 'RULESET WxH'")
        if self.began and (min(self.began) < 1
                           or not any(n <= b for n in self.snakes for b in self.began)):
            raise HeadError(f"value head: games begun with {self.began!r} snakes: each >= 1, "
                            f"and some with at least {min(self.snakes)} (its snakes alive)")

    @property
    def hidden(self) -> int:
        return int(self.w1.shape[0])

    def fields(self) -> np.ndarray:
        """The weights as the compiled workspace holds them (int64 millionths): the hidden
        size, whether it is residual, then per hidden unit its weights and bias, then the
        output's weights and bias."""
        rows = np.concatenate([self.w1, self.b1[:, None]], axis=1).ravel()
        values = np.concatenate([rows, self.w2, [self.b2]])
        return np.concatenate([[self.hidden, int(self.residual)],
                               np.round(values * _MILLION)]).astype(np.int64)

    @cached_property
    def digest(self) -> str:
        """A short hash of the weights and style (salts a search's table entries)."""
        return hashlib.sha256(self.fields().tobytes() + self.style.encode()).hexdigest()[:16]

    def covers(self, alive: int, board: str | None = None, began: int | None = None) -> bool:
        """Whether it was trained on positions with ``alive`` living snakes (and on
        ``board``, :func:`board_of`, in games begun with ``began`` snakes, each when given
        and the head names them)."""
        return (alive in self.snakes
                and (board is None or not self.boards or board in self.boards)
                and (began is None or not self.began or began in self.began))

    def value(self, x: np.ndarray) -> np.ndarray:
        """The head's value of measurements ``x`` (``[..., N_MEASUREMENTS]``):
        :func:`head_value` clamped into [-LIMIT, LIMIT], as the compiled search values a
        leaf."""
        return np.clip(head_value(self, x), -LIMIT, LIMIT)

    def save(self, path: str | Path) -> None:
        np.savez(path, w1=self.w1.astype(np.float64), b1=self.b1.astype(np.float64),
                 w2=self.w2.astype(np.float64), b2=np.array([self.b2]),
                 measurements=np.array(MEASUREMENTS), style=np.array(self.style),
                 snakes=np.array(self.snakes, dtype=np.int64), residual=np.array(self.residual),
                 boards=np.array(self.boards, dtype=str),
                 began=np.array(self.began, dtype=np.int64),
                 meta=np.array(json.dumps(self.meta, sort_keys=True)))


def head_value(head: ValueHead, x: np.ndarray) -> np.ndarray:
    """The forward pass of ``head`` on measurements ``x`` (``[..., N_MEASUREMENTS]``), the
    readable twin of the compiled ``_head_value``, with the weights rounded to millionths as
    the compiled workspace holds them (:meth:`ValueHead.fields`)::

        hidden = max(0, w1 x + b1)                   (one ReLU per hidden unit)
        z = w2 . hidden + b2
        z += 2 atanh(clamp(x[0], -LIMIT, LIMIT))     (a residual head: the logit of the
                                                      style's value, x[0])
        value = tanh(z / 2)                          (= 2 sigmoid(z) - 1, not clamped)
    """
    w1, b1, w2 = (np.round(w * _MILLION) / _MILLION for w in (head.w1, head.b1, head.w2))
    b2 = round(head.b2 * _MILLION) / _MILLION
    x = np.asarray(x, dtype=np.float64)
    z = np.maximum(0.0, x @ w1.T + b1) @ w2 + b2
    if head.residual:
        z = z + 2.0 * np.arctanh(np.clip(x[..., 0], -LIMIT, LIMIT))
    return np.tanh(z / 2.0)


def board_of(ruleset: str, width: int, height: int) -> str:
    """A board as a head names the boards it was trained on: ``"standard 11x11"``."""
    return f"{ruleset} {width}x{height}"


def load_head(path: str | Path) -> ValueHead:
    """Read a value head file; raises :class:`HeadError` naming what is wrong."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            names = tuple(str(n) for n in np.atleast_1d(data["measurements"]))
            w1 = np.array(data["w1"], np.float64)
            if names != MEASUREMENTS[:len(names)] or w1.ndim != 2 or w1.shape[1] != len(names):
                raise HeadError(f"{path}: trained on measurements {names}, the core has "
                                f"{MEASUREMENTS}")
            # A head from before later measurements were added does not read them.
            w1 = np.pad(w1, ((0, 0), (0, N_MEASUREMENTS - len(names))))
            return ValueHead(w1, np.array(data["b1"], np.float64),
                             np.array(data["w2"], np.float64),
                             float(np.atleast_1d(data["b2"])[0]), str(data["style"]),
                             tuple(int(k) for k in np.atleast_1d(data["snakes"])),
                             json.loads(str(data["meta"])),
                             bool(data["residual"]) if "residual" in data.files else False,
                             tuple(str(b) for b in np.atleast_1d(data["boards"]))
                             if "boards" in data.files else (),
                             tuple(int(k) for k in np.atleast_1d(data["began"]))
                             if "began" in data.files else ())
    except HeadError as exc:
        message = str(exc)
        if not message.startswith(str(path)):
            message = f"{path}: {message}"
        raise HeadError(message) from None
    except (OSError, KeyError, ValueError, IndexError, TypeError, AttributeError) as exc:
        raise HeadError(f"{path}: not a value head file ({exc})") from None


def measurements(packed: Packed, style: str = "default") -> np.ndarray:
    """Every snake's measurements in ``packed`` (board order; zeros for a snake not alive),
    as the compiled search computes them at its leaves with ``style``'s weights."""
    g, s = packed.g, packed.s
    work = workspace(g, style)
    n = int(g[G_N])
    out = np.zeros((n, N_MEASUREMENTS))
    for i in range(n):
        measure(g, s, i, work, out[i])
    return out
