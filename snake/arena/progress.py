"""A one-line progress bar on stderr (no dependency).

On a terminal the line is redrawn in place; into a file or pipe it prints a line at every
tenth of the way, so logs stay short."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(self, total: int, *, stream: TextIO | None = None, width: int = 30,
                 enabled: bool = True):
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self._last_tenth = -1
        self._last_draw = 0.0

    def advance(self, note: str = "", step: int = 1) -> None:
        self.done += step
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            if self.done < self.total and now - self._last_draw < 0.1:
                return
            self._last_draw = now
            self.stream.write("\r" + self.line(note) + "\x1b[K")
            if self.done >= self.total:
                self.stream.write("\n")
        else:
            tenth = self.done * 10 // self.total
            if tenth == self._last_tenth:
                return
            self._last_tenth = tenth
            self.stream.write(self.line(note) + "\n")
        self.stream.flush()

    def line(self, note: str = "") -> str:
        fraction = min(self.done / self.total, 1.0)
        filled = int(fraction * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        text = f"[{bar}] {self.done}/{self.total} games {rate:.1f}/s eta {eta:.0f}s"
        return f"{text}  {note}" if note else text
