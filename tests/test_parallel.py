"""Row blocks on threads: order, per-thread scratch arrays, the thread count."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from voxmetrics.metrics.parallel import Scratch, map_blocks, single_blas_thread, threads


def test_map_blocks_keeps_the_block_order_whatever_finishes_first(monkeypatch):
    monkeypatch.setenv("VOXMETRICS_THREADS", "4")

    def slow_first(b: int, scratch: Scratch) -> int:
        time.sleep(0.02 if b < 3 else 0.0)  # the first blocks finish last
        return b * b

    assert map_blocks(slow_first, list(range(12))) == [b * b for b in range(12)]


def test_each_thread_has_its_own_scratch_and_keeps_it(monkeypatch):
    monkeypatch.setenv("VOXMETRICS_THREADS", "3")
    seen: dict[int, set[int]] = {}
    lock = threading.Lock()

    def record(b: int, scratch: Scratch) -> int:
        buf = scratch.array(1000)
        buf[:] = b  # another thread writing into this buffer would show up below
        time.sleep(0.005)
        with lock:
            seen.setdefault(threading.get_ident(), set()).add(id(scratch))
        return int(buf.min() == buf.max() == b)

    assert map_blocks(record, list(range(30))) == [1] * 30
    per_thread = [ids for ids in seen.values()]
    assert all(len(ids) == 1 for ids in per_thread)  # one scratch per thread, reused
    assert len({next(iter(ids)) for ids in per_thread}) == len(per_thread)  # none shared
    assert 1 < len(seen) <= 3


def test_one_thread_runs_the_blocks_in_the_callers_thread(monkeypatch):
    monkeypatch.setenv("VOXMETRICS_THREADS", "1")
    me = threading.get_ident()
    assert map_blocks(lambda b, scratch: threading.get_ident() == me, [0, 1, 2]) == [True] * 3


@pytest.mark.parametrize(("value", "expected"), [("3", 3), ("0", 1), ("-2", 1), (" 2 ", 2)])
def test_threads_reads_voxmetrics_threads(monkeypatch, value, expected):
    monkeypatch.setenv("VOXMETRICS_THREADS", value)
    assert threads() == expected


def test_threads_without_a_number_uses_the_cpus(monkeypatch):
    monkeypatch.setenv("VOXMETRICS_THREADS", "many")
    assert threads() >= 1
    monkeypatch.delenv("VOXMETRICS_THREADS")
    assert threads() >= 1


def test_scratch_grows_and_keeps_one_array_per_dtype():
    sc = Scratch()
    a = sc.array(10)
    assert sc.array(5) is a and a.dtype == np.float64
    b = sc.array(20)
    assert b.size >= 20 and b is not a
    assert sc.array(3, np.float32).dtype == np.float32


def test_single_blas_thread_limits_blas_inside_and_restores_it(monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    monkeypatch.delenv("VOXMETRICS_BLAS_THREADS", raising=False)

    def blas_threads() -> list[int]:
        info = threadpoolctl.threadpool_info()
        return [i["num_threads"] for i in info if i["user_api"] == "blas"]

    before = blas_threads()
    with single_blas_thread():
        assert all(n == 1 for n in blas_threads())
    assert blas_threads() == before
    monkeypatch.setenv("VOXMETRICS_BLAS_THREADS", "keep")
    with single_blas_thread():
        assert blas_threads() == before


def test_pooled_dot_products_do_not_depend_on_the_blas_threads():
    """min Cllr and d' sum their products with NumPy (pairwise), not a BLAS dot, whose last bits
    change with the number of threads that computed it."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from voxmetrics.metrics.cllr import min_cllr_from_pools
    from voxmetrics.metrics.pools import SortedPools

    rng = np.random.default_rng(0)
    tar, non = rng.normal(1, 1, 40_000), rng.normal(0, 1, 60_000)
    got = []
    for n in (1, 2, 4):
        with threadpoolctl.threadpool_limits(n, user_api="blas"):
            pools = SortedPools.from_pools(tar, non)
            got.append((min_cllr_from_pools(pools), pools.moments))
    assert got[0] == got[1] == got[2]
