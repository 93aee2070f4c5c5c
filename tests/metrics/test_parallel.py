"""Row blocks on threads (order, thread count) and BLAS on one thread."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from voxmetrics.metrics.parallel import map_blocks, single_blas_thread, threads


def test_map_blocks_keeps_the_block_order_whatever_finishes_first(monkeypatch):
    monkeypatch.setenv("VOXMETRICS_THREADS", "4")

    def slow_first(b: int) -> int:
        time.sleep(0.02 if b < 3 else 0.0)  # the first blocks finish last
        return b * b

    assert map_blocks(slow_first, list(range(12))) == [b * b for b in range(12)]


def test_map_blocks_runs_on_several_threads(monkeypatch):
    monkeypatch.setenv("VOXMETRICS_THREADS", "3")
    seen: set[int] = set()
    lock = threading.Lock()

    def record(b: int) -> int:
        time.sleep(0.005)
        with lock:
            seen.add(threading.get_ident())
        return b

    assert map_blocks(record, list(range(30))) == list(range(30))
    assert 1 < len(seen) <= 3 and threading.get_ident() not in seen


def test_one_thread_runs_the_blocks_in_the_callers_thread(monkeypatch):
    monkeypatch.setenv("VOXMETRICS_THREADS", "1")
    me = threading.get_ident()
    assert map_blocks(lambda b: threading.get_ident() == me, [0, 1, 2]) == [True] * 3


@pytest.mark.parametrize(("value", "expected"), [("3", 3), ("0", 1), ("-2", 1), (" 2 ", 2)])
def test_threads_reads_voxmetrics_threads(monkeypatch, value, expected):
    monkeypatch.setenv("VOXMETRICS_THREADS", value)
    assert threads() == expected


def test_threads_without_a_number_uses_the_cpus(monkeypatch):
    monkeypatch.setenv("VOXMETRICS_THREADS", "many")
    assert threads() >= 1
    monkeypatch.delenv("VOXMETRICS_THREADS")
    assert threads() >= 1


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


def test_lid_on_threads_equals_the_serial_loop(monkeypatch):
    from voxmetrics.metrics import ranks
    from voxmetrics.metrics.lid import LIDCalibration, lid

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 40)  # 5 rows per block: 9 blocks
    rng = np.random.default_rng(2)
    s, t = rng.normal(size=(43, 8)), rng.integers(0, 8, size=43)
    cal = LIDCalibration(w=1.4, b=-0.2, prior_log_odds=-2.0, n_pairs=0)
    got = {}
    for n in ("1", "3"):
        monkeypatch.setenv("VOXMETRICS_THREADS", n)
        r = lid(s, t, cal)
        got[n] = (r.lid.tobytes(), r.p_target.tobytes(), r.rank.tobytes())
    assert got["1"] == got["3"]
