"""voxmetrics._lru.LRU: the one bounded least-recently-used map of the package."""

from __future__ import annotations

import threading

import pytest

from voxmetrics._lru import LRU


def test_the_least_recently_used_goes_first():
    cache: LRU[str, int] = LRU(3)
    for k, v in zip("abc", range(3), strict=True):
        cache.put(k, v)
    assert cache.get("a") == 0  # a read is a use: "b" is now the oldest
    cache.put("d", 3)
    assert cache.keys() == ["c", "a", "d"] and "b" not in cache
    cache.put("c", 9)  # a write is a use too, and replaces the value
    cache.put("e", 4)
    assert cache.keys() == ["d", "c", "e"] and cache.get("c") == 9
    assert cache.get("zz", -1) == -1


def test_contains_is_not_a_use_and_pop_clear_forget():
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert "a" in cache  # not a use: "a" stays the oldest
    cache.put("c", 3)
    assert cache.keys() == ["b", "c"]
    assert cache.pop("b") == 2 and cache.pop("b") is None and len(cache) == 1
    cache.clear()
    assert len(cache) == 0 and not cache


def test_no_bound_keeps_everything_and_a_bad_bound_is_refused():
    cache: LRU[int, int] = LRU()
    for k in range(1000):
        cache.put(k, k)
    assert len(cache) == 1000 and cache.max_entries is None
    with pytest.raises(ValueError, match="max_entries"):
        LRU(-1)


def test_the_bound_holds_with_threads_writing_and_reading_at_once():
    cache: LRU[tuple[int, int], int] = LRU(16)
    start = threading.Barrier(8)
    sizes: list[int] = []

    def work(t: int) -> None:
        start.wait()
        for k in range(2000):
            cache.put((t, k), k)
            cache.get((t, k - 1))
            sizes.append(len(cache))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert max(sizes) <= 16 and len(cache) == 16
    assert all(cache.get(k) == k[1] for k in cache.keys())
