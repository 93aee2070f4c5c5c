"""A bounded, thread-safe least-recently-used map: the one cache structure of the package.

The dashboard's result store (:class:`voxmetrics.ui.computing.ResultStore`, which adds single
flight on top), a Dask worker's scored blocks (:mod:`voxmetrics.evaluation.blockwise`) and the
built-in SBLS attacker's predictions (:mod:`voxmetrics.analysis.sbls.attacks`) keep their
entries in an :class:`LRU`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["LRU"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A map that keeps at most ``max_entries`` entries, the least recently used dropped first.

    Reading an entry (:meth:`get`) or writing it (:meth:`put`) makes it the most recently
    used. Every method holds the map's lock, so threads may share one; values are kept as
    they are (no copy).

    Parameters
    ----------
    max_entries : int or None, default None
        The bound; None bounds nothing (the owner drops entries itself, e.g. by memory).

    Examples
    --------
    >>> cache = LRU(2)
    >>> cache.put("a", 1)
    >>> cache.put("b", 2)
    >>> cache.get("a")
    1
    >>> cache.put("c", 3)  # drops "b", the least recently used
    >>> cache.keys(), cache.get("b"), len(cache)
    (['a', 'c'], None, 2)
    """

    def __init__(self, max_entries: int | None = None) -> None:
        if max_entries is not None and max_entries < 0:
            raise ValueError(f"max_entries must be >= 0 or None, got {max_entries}.")
        self.max_entries = max_entries
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value of ``key`` (now the most recently used), or ``default``."""
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key``, now the most recently used; drop any beyond the bound."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            if self.max_entries is not None:
                while len(self._items) > self.max_entries:
                    self._items.popitem(last=False)

    def pop(self, key: K, default: V | None = None) -> V | None:
        """Remove ``key`` and return its value, or ``default`` when it is not kept."""
        with self._lock:
            return self._items.pop(key, default)

    def keys(self) -> list[K]:
        """The keys, least recently used first (a copy: the map may change meanwhile)."""
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._items.clear()

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is kept (it does not count as a use)."""
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
