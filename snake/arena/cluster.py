"""Work spread over the machines of a Ray cluster (``--ray ADDRESS``): arena games, tuning
pairs, self-play chunks.

``ADDRESS`` is a running cluster's ``host:port`` (its head was started with ``ray start
--head``, its other machines joined it with ``ray start --address=HOST:PORT``), ``auto``
for the cluster this machine belongs to, or ``local`` to start a one-machine Ray here with
``cpus`` CPUs, whose workers run at normal priority (Ray starts its own at nice 15, so that
its daemons stay responsive; here the workers are the job, and on a shared machine nice 15
starves them).

:func:`ray_map` runs one task per item, each on one CPU, and hands back the results as the
tasks finish. What every task needs (players, settings, a network's bytes) is ``shared``:
it goes to the object store once, and each worker process turns it into what its tasks use
(``setup``, e.g. loading the network) once, not once per task. The workers import this
project from the driver's current directory (Ray adds it to their ``sys.path``), so on a
cluster every machine holds the same checkout at the same path, with the same environment,
and the command is run from the checkout's root. Nothing a task writes to its own disk
reaches the driver: tasks return what the driver keeps.

Ray is a training requirement (requirements-train.txt): it is imported only here, and only
when a command is given ``--ray``; the server never imports it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any


class WorkerLost(RuntimeError):
    """A worker (a process, a machine) died while it played: what it was doing is lost,
    and the run stops instead of waiting for it for ever."""


def require_ray() -> None:
    """Raise ``ValueError`` saying how to install Ray when it is not installed (before a
    command plays anything)."""
    if importlib.util.find_spec("ray") is None:
        raise ValueError("--ray needs Ray, a training requirement: "
                         "pip install -r requirements-train.txt")


def connect(address: str, cpus: int) -> bool:
    """Join the cluster at ``address``, or start one of ``cpus`` CPUs here (``local``);
    whether it connected: a process already connected (a notebook, a test's shared Ray)
    plays on that connection, which its owner ends."""
    import ray

    if ray.is_initialized():
        return False
    if address == "local":
        os.environ.setdefault("RAY_worker_niceness", "0")
        ray.init(include_dashboard=False, log_to_driver=False, num_cpus=cpus)
    else:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return True


@contextlib.contextmanager
def session(address: str, cpus: int) -> Iterator[None]:
    """Connected to the cluster at ``address`` (:func:`connect`) for the block's
    :func:`ray_map` calls (a tuner's batches: one connection, not one a batch), and
    disconnected after it (a ``local`` Ray is then stopped)."""
    import ray

    connected = connect(address, cpus)
    try:
        yield
    finally:
        if connected:
            ray.shutdown()


def ray_map(function: Callable[[Any, Any], Any], items: Iterable[Any], *,
            address: str | None = None, cpus: int = 1, shared: Any = None,
            setup: Callable[[Any], Any] | None = None,
            env: dict[str, str] | None = None) -> Iterator[Any]:
    """``function(item, setup(shared))`` for every item, each a Ray task on one CPU of the
    cluster at ``address`` (:func:`connect`; ``None``: the :func:`session` open now),
    yielded as the tasks finish (completion order). ``env`` is set in a worker's
    environment before each task. Closing the generator (the caller has what it needs: a
    decided test, an interruption) cancels the tasks not yet finished, those running
    included (their processes are killed), and disconnects when it connected; a task that
    fails raises its error here. A task whose worker dies is run again by Ray (its task
    retries, three); one that has no retry left raises :class:`WorkerLost`. ``function``
    and ``setup`` must be module-level functions (the workers import them by name)."""
    import ray
    from ray.exceptions import RayError, RayTaskError

    connected = address is not None and connect(address, cpus)
    pending: list[Any] = []
    try:
        task = ray.remote(num_cpus=1)(_task)
        # Wrapped in a list, the reference reaches a task as a reference, which the
        # worker resolves (and sets up) once, rather than as the value, copied per task.
        common = [ray.put(shared)]
        pending = [task.remote(function, item, common, setup, env or {}) for item in items]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            try:
                yield ray.get(done[0])
            except RayTaskError:
                raise
            except RayError as exc:
                raise WorkerLost(f"a Ray worker died ({type(exc).__name__})") from exc
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if connected:
            ray.shutdown()


#: In a Ray worker: the set-up shared value of the run being played (one at a time).
_SHARED: dict[str, Any] = {}


def _task(function: Callable[[Any, Any], Any], item: Any, common: list[Any],
          setup: Callable[[Any], Any] | None, env: dict[str, str]) -> Any:
    import ray

    os.environ.update(env)
    key = common[0].hex()
    if key not in _SHARED:
        _SHARED.clear()          # a worker kept from an earlier run holds no stale networks
        value = ray.get(common[0])
        _SHARED[key] = setup(value) if setup is not None else value
    return function(item, _SHARED[key])
