"""gunicorn settings for Nuppeppou: ``gunicorn app:app`` (this file is read automatically).

Worker and thread counts were chosen by measurement with ``python -m bench.server`` on a
2-core machine (figures and reasoning in docs/server.md). Override them with
``NUPPEPPOU_WORKERS`` / ``NUPPEPPOU_THREADS`` (or gunicorn's own ``-w`` / ``--threads``).
Every setting is read and checked here first (:mod:`snake.settings`): with a bad one the
service does not start, and says which and what it expects.

Each worker process has its own 32-slot accumulator stack and session table. The engine's
requests for one game may reach different workers; each worker answers correctly anyway
(an unknown session is opened with a full refresh, SPEC §3), at the cost of one more
accumulator per worker for that game and a full refresh whenever the previous turn was
served elsewhere.
"""

import os
import shutil
import sys
import tempfile

# One BLAS thread per worker, set before the app (and numpy) is imported: the workers
# already use the cores, and BLAS threads would fight them for it.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# The project's packages, wherever gunicorn was started from.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# Checked before anything is made (the metrics' folder, the app); as
# snake.serving.service.load_settings checks them, whose imports would make the metrics
# before their folder is set.
# The ledger of the server's searches in flight (snake/search/cores.py) is made here, in the
# master, so that every worker forked from it shares it, preloaded app or not.
import snake.search.cores  # noqa: E402, F401
from snake.settings import Settings, SettingsError  # noqa: E402
from snake.strategies import check_name  # noqa: E402

try:
    _SETTINGS = Settings.from_environ(check_strategy=check_name)
except SettingsError as _exc:
    # gunicorn would print "Failed to read config file" and a traceback: say only what is wrong
    raise SystemExit(f"nuppeppou: not started: {_exc}") from None

# The game log's channel to the server's writer process (snake/observability/gamelog/
# channel.py), made here in the master before the app is loaded and the workers forked:
# every worker inherits its sending end and hands each answered turn to the kernel before
# the answer leaves, so a worker killed with kill -9 loses none; the master keeps both ends
# open, so records wait in the kernel while a dead writer is replaced. The app's GameLog
# finds it (snake.observability.gamelog.store.from_settings). The writer is started in
# when_ready, looked at in pre_fork, and drained and stopped in on_exit.
_GAME_LOG = None
if _SETTINGS.game_log is not None:
    from snake.observability.gamelog.channel import open_server

    try:
        _GAME_LOG = open_server(_SETTINGS.game_log, max_games=_SETTINGS.game_log_max_games,
                                max_mb=_SETTINGS.game_log_max_mb)
    except OSError as _exc:
        # no socket pair or temporary file to be had: each worker writes with a thread of
        # its own, as outside gunicorn (a kill -9 then loses what a worker had queued)
        print(f"nuppeppou: the game log's writer process cannot be set up ({_exc}); the "
              "workers write it themselves", file=sys.stderr)


def _default_threads() -> int:
    """Threads per worker when ``NUPPEPPOU_THREADS`` is not set. A searching strategy
    holds its thread for the whole thinking time (350 ms of a 500 ms turn), and a request
    that waits for a free thread waits outside the search's clock, so every game in flight
    needs a thread of its own: 16 per worker serve 32 games at once. The one-shot
    strategies answer in milliseconds and do best with 4 (docs/server.md)."""
    from snake.search.strategy import VARIANTS

    # every search variant, options in brackets or not
    return 16 if _SETTINGS.strategy.split("[", 1)[0].strip() in VARIANTS else 4


# Prometheus metrics from every worker (snake/observability/metrics.py): prometheus_client's
# multiprocess mode keeps them in files in this directory, which must exist and be empty before the
# app is loaded, so it is made here (a fresh one per start unless given).
_METRICS_DIR = None
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _METRICS_DIR = tempfile.mkdtemp(prefix="nuppeppou-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _METRICS_DIR

# Imported here (once the folder is set), not in child_exit: that hook runs in the master's
# SIGCHLD handler, and two workers killed at once ran it again in the middle of the first
# one's import; the half-imported module's AttributeError ended the master's main loop, and
# the server with it.
from prometheus_client import multiprocess as _prometheus_multiprocess  # noqa: E402

bind = f"0.0.0.0:{_SETTINGS.port}"
workers = _SETTINGS.workers
# The compiled search shares each worker's part of the machine among its games in flight:
# set in post_fork from the workers gunicorn really runs (-w overrides this file), unless
# given.
_CORES_GIVEN = _SETTINGS.search_cores is not None
threads = _SETTINGS.threads or _default_threads()


def _arrival_worker():
    """gunicorn's gthread worker, which also marks when each request was ready to be read
    (its connection handed to the thread pool), in the thread that then handles it
    (:mod:`snake.serving.arrival`): a request that waited for a free thread counts its wait against
    its move's time, and its search gets what is left instead of a whole turn's thinking
    that would answer late. (gunicorn is pinned in requirements.txt: these two methods are
    its own, called once per request.)"""
    import time

    from gunicorn.workers.gthread import ThreadWorker

    from snake.serving import arrival

    class ArrivalThreadWorker(ThreadWorker):
        def enqueue_req(self, conn):
            conn.nuppeppou_ready = time.perf_counter()
            super().enqueue_req(conn)

        def handle_request(self, req, conn):
            arrival.mark(getattr(conn, "nuppeppou_ready", None))
            return super().handle_request(req, conn)

    return ArrivalThreadWorker


worker_class = _arrival_worker()
# Load the app, and with it the network, once in the master before forking: the workers
# share its pages copy-on-write instead of each reading the file.
preload_app = True
# The engine keeps connections open between turns; 500 ms turns leave no room for handshakes.
keepalive = 75
timeout = 30
graceful_timeout = 10
accesslog = _SETTINGS.access_log
# gunicorn's default line with the path instead of the whole request line: a query string
# may carry the dashboard's token (?token=..., docs/dashboard.md).
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(f)s" "%(a)s"'
loglevel = _SETTINGS.log_level.lower()


def _name_the_server() -> None:
    """Answer with ``Server: Nuppeppou/<version>`` (as the official starters name theirs)
    instead of gunicorn's; the app then does not add a second Server header."""
    from gunicorn.http import wsgi

    from snake import __version__

    wsgi.SERVER = wsgi.SERVER_SOFTWARE = f"Nuppeppou/{__version__}"


_name_the_server()


def when_ready(server):
    """The master is ready to fork the workers: start the game log's writer process."""
    if _GAME_LOG is not None:
        _GAME_LOG.start_writer()


def pre_fork(server, worker):
    """A worker is about to be forked (at start, or in place of one that died): the master
    looks whether the game log's writer still runs, and starts one if not (the workers look
    too, as they send)."""
    if _GAME_LOG is not None:
        _GAME_LOG.watch()


def post_fork(server, worker):
    """Hand the GIL between a worker's threads every 1 ms instead of Python's 5 ms: a
    search past its deadline then waits less for its turn to answer (measured in
    docs/server.md: at 32 searching games the p99 fell from 1.26 s to 0.79 s)."""
    sys.setswitchinterval(0.001)
    if not _CORES_GIVEN:
        # this worker's share of the cores the machine (or its container) gives us
        from snake.search.cores import available_cores

        os.environ["NUPPEPPOU_SEARCH_CORES"] = str(max(1, available_cores() // server.cfg.workers))
    # Everything loaded before the fork (the app, the network, the compiled code's Python
    # objects) lives as long as the worker: keep it out of the cyclic collector's scans,
    # which hold the GIL and otherwise stall every thread of the worker for milliseconds.
    import gc

    gc.freeze()


def child_exit(server, worker):
    """A worker is gone: its live gauges (sessions, pool, queue) no longer count."""
    _prometheus_multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    """The workers are gone: the game log's writer writes what they sent and stops."""
    if _GAME_LOG is not None and not _GAME_LOG.close(timeout=graceful_timeout):
        server.log.error("game log: the writer did not finish writing within %d s",
                         graceful_timeout)
    if _METRICS_DIR is not None:
        shutil.rmtree(_METRICS_DIR, ignore_errors=True)
