"""A small progress bar (no third-party dependency).

On a terminal it redraws one line in place; when the output is a file (a background run
logging with nohup) it prints a full line at most every ``interval`` seconds instead, so the
log stays readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """``Progress(total, label)``; call :meth:`update` with the number of items done since
    the last call (and optional ``key=value`` figures to show), then :meth:`close`."""

    def __init__(self, total: int, label: str = "", *, unit: str = "it", start: int = 0,
                 stream: TextIO | None = None, interval: float | None = None,
                 width: int = 28) -> None:
        self.total = max(0, int(total))
        self.label = label
        self.unit = unit
        self.done = int(start)
        self._start_done = int(start)
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.2 if self.tty else 30.0)
        self.width = width
        self.figures: dict[str, str] = {}
        self._t0 = time.monotonic()
        self._last = 0.0
        self._closed = False
        self._drawn = -1  # items done at the last draw

    def update(self, n: int = 1, **figures: object) -> None:
        self.done += n
        for k, v in figures.items():
            self.figures[k] = f"{v:.4f}" if isinstance(v, float) else str(v)
        now = time.monotonic()
        if now - self._last >= self.interval or self.done >= self.total:
            self._last = now
            self._draw(final=False)

    def line(self) -> str:
        elapsed = time.monotonic() - self._t0
        rate = (self.done - self._start_done) / elapsed if elapsed > 0 else 0.0
        frac = self.done / self.total if self.total else 1.0
        filled = int(round(self.width * min(frac, 1.0)))
        bar = "#" * filled + "-" * (self.width - filled)
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        extra = " ".join(f"{k}={v}" for k, v in self.figures.items())
        return (f"{self.label} [{bar}] {self.done}/{self.total} {100 * frac:5.1f}% "
                f"{rate:,.0f} {self.unit}/s elapsed {_duration(elapsed)} "
                f"eta {_duration(left)} {extra}").rstrip()

    def _draw(self, final: bool) -> None:
        if final and not self.tty and self._drawn == self.done:
            return  # the log already has this line
        self._drawn = self.done
        text = self.line()
        if self.tty:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._draw(final=True)
