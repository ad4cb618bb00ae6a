"""The server's cores, shared by its searches across processes (snake.search.cores): a
forked process counts its searches in the ledger its parent made, a dead process's count is
taken back, and a process beyond the ledger's slots still searches (on one thread)."""

from __future__ import annotations

import multiprocessing
import os
import signal

import pytest

from snake.search.cores import CoreLedger

fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                          reason="the ledger is shared by forked processes")


def _search_and_wait(ledger: CoreLedger, started, release) -> None:
    with ledger.searching():
        started.set()
        release.wait(30)


@fork
def test_forked_processes_count_their_searches_in_one_ledger():
    ledger = CoreLedger(cores=8)
    ctx = multiprocessing.get_context("fork")
    started = [ctx.Event() for _ in range(2)]
    release = ctx.Event()
    children = [ctx.Process(target=_search_and_wait, args=(ledger, s, release)) for s in started]
    for child in children:
        child.start()
    for s in started:
        assert s.wait(30)
    assert ledger.in_flight() == 2
    with ledger.searching() as in_flight:               # this process's own search too
        assert in_flight == 3 and ledger.share(in_flight) == 2
    release.set()
    for child in children:
        child.join(30)
    assert ledger.in_flight() == 0 and ledger.share(1) == 8


@fork
def test_a_killed_process_count_is_taken_back_by_the_next_claim():
    ledger = CoreLedger(cores=2)
    ctx = multiprocessing.get_context("fork")
    started, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_search_and_wait, args=(ledger, started, release))
    child.start()
    assert started.wait(30)
    os.kill(child.pid, signal.SIGKILL)                  # killed mid-search
    child.join(30)
    assert ledger.in_flight() == 1                      # its count is still there...
    late = ctx.Process(target=_claim_and_leave, args=(ledger,))
    late.start()                                        # ...until a new process claims
    late.join(30)
    assert late.exitcode == 0 and ledger.in_flight() == 0


def _claim_and_leave(ledger: CoreLedger) -> None:
    with ledger.searching():
        pass


def test_a_process_with_every_slot_held_still_searches_alone():
    ledger = CoreLedger(cores=4)
    ledger.slots[:, 0] = os.getppid()                   # every slot held by a living process
    with ledger.searching() as in_flight:
        assert in_flight == 1 and ledger.share(in_flight) == 4


def test_without_a_temporary_folder_the_ledger_still_counts(monkeypatch):
    import tempfile

    def refuse(*args, **kwargs):
        raise OSError("read-only file system")
    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    ledger = CoreLedger(cores=2)
    with ledger.searching() as in_flight:
        assert in_flight == 1 and ledger.in_flight() == 1
    assert ledger.in_flight() == 0
