"""How the project's commands end: ``python -m snake.arena.tally ... | head`` included.

A reader that stops early (``head``, ``less`` quit before the end) closes the pipe; Python
then raises ``BrokenPipeError`` at the next print and, after the traceback, another at exit
when it flushes ``stdout``. Neither says anything about the command, so :func:`run_main`
ends it quietly instead, with the shell's status for a closed pipe (141, 128 + SIGPIPE).
"""

from __future__ import annotations

import os
import select
import sys
from typing import Callable, NoReturn

#: The exit status of a command whose reader closed the pipe (128 + SIGPIPE, as a shell has it).
CLOSED_PIPE = 141


def run_main(main: Callable[[], int | None]) -> NoReturn:
    """Call a command's ``main`` and exit with its status (``None`` is 0)."""
    try:
        status = main()
        sys.stdout.flush()      # a closed pipe shows here, while it can still be caught
    except BrokenPipeError:
        if _stdout_open():
            raise               # another pipe or socket broke: that is the command's error
        # stdout is gone: point it at /dev/null so the interpreter's final flush is quiet
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        sys.exit(CLOSED_PIPE)
    sys.exit(status)


def _stdout_open() -> bool:
    """Whether standard output still has a reader: a pipe whose reading end is closed
    reports an error condition when polled (where ``poll`` exists; elsewhere, assume the
    broken pipe was standard output's, as it almost always is)."""
    if not hasattr(select, "poll"):
        return False
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return not any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except (OSError, ValueError):
        return False
