"""The cores a server's searches share, across all its processes.

A compiled search runs helper threads ("lazy SMP", :mod:`snake.search.compiled.threads`)
on cores no other search is using: one game in flight searches on every core, and its
helpers give their cores back as soon as more games arrive. For that every search must
know how many searches are in flight on the whole server, not only in its own process:
gunicorn's workers, or the arena's game processes, are separate processes.

**The ledger** (:data:`LEDGER`) is a page of shared memory made when this module is first
imported, which is in gunicorn's master (the app is loaded there, before the fork) or the
arena's parent process, so that every process forked from it sees the same page. Each
process counts its own searches in a slot of its own, claimed with its pid at its first
search: a count is only ever written by one process, and no lock is held while anyone
searches. The claim itself takes a POSIX record lock on the page's file, which the kernel
releases if the claimant dies, and takes back the slots of processes that no longer exist
(a worker killed mid-search leaves its count behind until then). A process made some other
way (a spawned one) has a ledger of its own and counts only its own searches.

**Shares.** A search starting while ``S`` searches are in flight on a server of ``C``
cores (this one counted) gets ``C // S`` threads at most (:meth:`CoreLedger.share`); its
helper ``h`` (1, 2, ...) gives its core back when ``S`` grows past ``C // (h + 1)``, which
it reads in the ledger with the clock (:func:`snake.search.compiled.tree.busy`).
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import tempfile
import threading
from collections.abc import Iterator

import numpy as np

#: Processes that can count searches at once (gunicorn's workers, the arena's games); a
#: process beyond them searches on one thread.
SLOTS = 64
_PID, _SEARCHES = 0, 1


def available_cores() -> int:
    """The cores this process may run on: the CPUs it is allowed (its affinity, which
    pinning and cpusets narrow), fewer when its container's CPU quota is lower (cgroup v2
    ``cpu.max``, v1 ``cpu.cfs_quota_us``; a quota of 1.5 CPUs counts 1). ``os.cpu_count()``
    counts the host's: in a 2-CPU container on a 32-core host it says 32, and searches
    sized to it would all answer late."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    if quota is not None:
        cores = min(cores, int(quota))
    return max(1, cores)


def cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> float | None:
    """The container's CPU quota in CPUs, from the cgroup files under ``root`` (``None``:
    no quota, or none known)."""
    try:
        with open(os.path.join(root, "cpu.max")) as f:      # v2: "max 100000", "200000 100000"
            quota, period = f.read().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(root, "cpu", "cpu.cfs_quota_us")) as f:     # v1
            quota = int(f.read())
        with open(os.path.join(root, "cpu", "cpu.cfs_period_us")) as f:
            period = int(f.read())
        return None if quota <= 0 or period <= 0 else quota / period
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:         # someone else's process: alive
        return True
    return True


class CoreLedger:
    """The searches in flight on this server, per process (module docstring).
    ``cores``: the server's cores (default: :func:`available_cores`)."""

    def __init__(self, cores: int | None = None) -> None:
        self.cores = available_cores() if cores is None else max(1, int(cores))
        size = SLOTS * 2 * 8
        try:
            self._file = tempfile.TemporaryFile(prefix="nuppeppou-cores-")
            self._file.truncate(size)
            self._page = mmap.mmap(self._file.fileno(), size)
        except OSError:
            # No temporary folder to write in: an anonymous page, still shared by forked
            # processes, whose slots are claimed without the record lock (two processes
            # claiming at the same instant could then share a slot and miscount).
            self._file = None
            self._page = mmap.mmap(-1, size)
        #: per slot: the pid that holds it (0: free) and its searches in flight; the
        #: compiled search reads it (:func:`snake.search.compiled.tree.busy`)
        self.slots = np.frombuffer(self._page, dtype=np.int64).reshape(SLOTS, 2)
        self._lock = threading.Lock()       # this process's threads, for its own slot
        self._slot: int | None = None
        self._slot_pid = 0

    def _own_slot(self) -> int | None:
        """This process's slot, claimed at its first search (``None``: every slot is
        held by a living process, or the lock could not be taken: uncounted, the search
        then takes the share of a server with no other search in flight)."""
        pid = os.getpid()
        if self._slot is not None and self._slot_pid == pid:
            return self._slot
        fd = None if self._file is None else self._file.fileno()
        try:
            if fd is not None:
                fcntl.lockf(fd, fcntl.LOCK_EX)  # released by the kernel if this process dies
        except OSError:
            return None                         # not counted: it searches on its share of one
        try:
            chosen = None
            for k in range(SLOTS):
                holder = int(self.slots[k, _PID])
                if holder == pid:
                    chosen = k
                elif holder != 0 and not _alive(holder):    # a dead process's count
                    self.slots[k, _SEARCHES] = 0
                    self.slots[k, _PID] = 0
                    holder = 0
                if holder == 0 and chosen is None:
                    chosen = k
            if chosen is not None:
                self.slots[chosen, _SEARCHES] = 0
                self.slots[chosen, _PID] = pid
        finally:
            if fd is not None:
                fcntl.lockf(fd, fcntl.LOCK_UN)
        self._slot, self._slot_pid = chosen, pid
        return chosen

    def in_flight(self) -> int:
        """Searches in flight on the server (every process's)."""
        return int(self.slots[:, _SEARCHES].sum())

    @contextlib.contextmanager
    def searching(self) -> Iterator[int]:
        """Count one search of this process while the block runs; gives the searches then
        in flight on the server (this one included)."""
        with self._lock:
            slot = self._own_slot()
            if slot is not None:
                self.slots[slot, _SEARCHES] += 1
        try:
            yield max(1, self.in_flight())
        finally:
            if slot is not None:
                with self._lock:
                    self.slots[slot, _SEARCHES] -= 1

    def share(self, in_flight: int) -> int:
        """The threads a search may start with while ``in_flight`` searches (itself
        included) are in flight: an equal share of the cores, at least one."""
        return max(1, self.cores // max(1, in_flight))


#: The ledger of this process and those forked from it.
LEDGER = CoreLedger()
