"""A one-line progress bar on stderr (no third-party dependency), for the arena and for
training (data generation, epochs).

On a terminal the line is redrawn in place (at most every ``interval`` seconds, 0.2 by
default). Into a file or pipe (a background run logging with nohup) it prints a full line
at every tenth of the way, and otherwise at most every ``interval`` seconds (30 by
default), so logs stay short but a long run still shows it is alive.
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
    """``Progress(total, label, unit=...)``; call :meth:`update` with the number of items
    done since the last call (and a ``note`` or ``key=value`` figures to show), then
    :meth:`close`. ``start`` counts items already done before (a resumed run);
    ``enabled=False`` draws nothing."""

    def __init__(self, total: int, label: str = "", *, unit: str = "it", start: int = 0,
                 stream: TextIO | None = None, interval: float | None = None,
                 width: int = 28, enabled: bool = True) -> None:
        self.total = max(0, int(total))
        self.label = label
        self.unit = unit
        self.done = int(start)
        self._start_done = int(start)
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.2 if self.tty else 30.0)
        self.width = width
        self.enabled = enabled
        self.note = ""
        self.figures: dict[str, str] = {}
        self._t0 = time.monotonic()
        self._last = 0.0 if self.tty else self._t0
        self._tenth = self._tenth_of(self.done)
        self._closed = False
        self._drawn = -1  # items done at the last draw

    def _tenth_of(self, done: int) -> int:
        return done * 10 // self.total if self.total else 10

    def update(self, n: int = 1, note: str | None = None, **figures: object) -> None:
        self.done += n
        if note is not None:
            self.note = note
        for k, v in figures.items():
            self.figures[k] = f"{v:.4f}" if isinstance(v, float) else str(v)
        if not self.enabled:
            return
        now = time.monotonic()
        tenth = self._tenth_of(self.done)
        if (now - self._last >= self.interval or self.done >= self.total
                or (not self.tty and tenth != self._tenth)):
            self._last = now
            self._tenth = tenth
            self._draw(final=False)

    def line(self) -> str:
        elapsed = time.monotonic() - self._t0
        rate = (self.done - self._start_done) / elapsed if elapsed > 0 else 0.0
        frac = self.done / self.total if self.total else 1.0
        filled = int(round(self.width * min(frac, 1.0)))
        bar = "#" * filled + "-" * (self.width - filled)
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        extra = " ".join([*(f"{k}={v}" for k, v in self.figures.items()), self.note])
        return (f"{self.label} [{bar}] {self.done}/{self.total} {100 * frac:5.1f}% "
                f"{rate:,.1f} {self.unit}/s elapsed {_duration(elapsed)} "
                f"eta {_duration(left)} {extra}").strip()

    def _draw(self, final: bool) -> None:
        if not self.tty and self._drawn == self.done:
            return  # the log already has this line
        self._drawn = self.done
        text = self.line()
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K" + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Draw the last line (on a terminal: and end it)."""
        if not self._closed:
            self._closed = True
            if self.enabled:
                self._draw(final=True)
