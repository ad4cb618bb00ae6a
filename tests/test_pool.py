"""The recycle stack of accumulators (SPEC §3)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from nnue.accumulator import Accumulator
from nnue.network import Network
from nnue.pool import AccumulatorPool, PoolError


@pytest.fixture(scope="module")
def net() -> Network:
    return Network.random(3, hidden=(16, 8), quantise=True)


def test_32_leases_then_none(net):
    pool = AccumulatorPool(net)
    assert pool.capacity == 32 and pool.created == 0 and pool.free_count == 0
    leased = [pool.lease() for _ in range(32)]
    assert all(isinstance(a, Accumulator) for a in leased)
    assert len({id(a) for a in leased}) == 32
    assert pool.created == 32 and pool.free_count == 0
    assert pool.lease() is None
    assert pool.lease() is None
    assert pool.created == 32


def test_release_resets_and_reuses_lifo(net):
    pool = AccumulatorPool(net, capacity=4)
    a, b, c = pool.lease(), pool.lease(), pool.lease()
    a.refresh(np.array([1, 2, 3], dtype=np.int32))
    b.refresh(np.array([4, 5], dtype=np.int32))
    pool.release(a)
    pool.release(b)
    assert pool.free_count == 2 and pool.created == 3
    assert b.active is None and not b.acc.any() and b.refreshes == 0
    assert a.active is None and not a.acc.any()
    assert pool.lease() is b       # last in, first out
    assert pool.lease() is a
    d = pool.lease()               # a fourth is created
    assert d not in (a, b, c) and pool.created == 4
    assert pool.lease() is None
    pool.release(c)
    assert pool.lease() is c


def test_release_refuses_double_and_foreign(net):
    pool = AccumulatorPool(net, capacity=2)
    a = pool.lease()
    pool.release(a)
    with pytest.raises(PoolError, match="twice"):
        pool.release(a)
    with pytest.raises(PoolError, match="does not belong"):
        pool.release(Accumulator(net))
    other = AccumulatorPool(net, capacity=2)
    with pytest.raises(PoolError, match="does not belong"):
        other.release(pool.lease())
    assert pool.free_count == 0 and pool.created == 1 and other.created == 0


def test_zero_capacity_and_bad_capacity(net):
    assert AccumulatorPool(net, capacity=0).lease() is None
    with pytest.raises(ValueError):
        AccumulatorPool(net, capacity=-1)


def test_many_threads(net):
    pool = AccumulatorPool(net)
    holders: dict[int, int] = {}
    guard = threading.Lock()
    errors: list[str] = []
    refused = [0]
    start = threading.Barrier(12)
    active = np.array([7, 77, 777], dtype=np.int32)

    def worker(k: int) -> None:
        start.wait()
        for _ in range(300):
            held = [pool.lease() for _ in range(3)]
            for acc in held:
                if acc is None:
                    with guard:
                        refused[0] += 1
                    continue
                with guard:
                    if id(acc) in holders:
                        errors.append("one accumulator leased twice at once")
                    holders[id(acc)] = k
                if acc.active is not None:
                    errors.append("leased accumulator not reset")
                acc.refresh(active)
            for acc in held:
                if acc is not None:
                    with guard:
                        del holders[id(acc)]
                    pool.release(acc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert pool.created <= 32 and pool.free_count == pool.created     # every one back
    assert pool.created >= 3
