"""Score matrices already found finite: each large matrix is checked once on its way in.

A reader, :meth:`~voxmetrics.data.model.ScoreMatrix.from_arrays` and every metric check that
a matrix holds no NaN or infinity (a float64 sum of all its scores: ~0.1 CPU s per 100 M
scores). A matrix that nothing can change (it and every array it views are read-only) and
that one of them found finite is remembered here, by identity, so the others do not sum it
again. An entry goes when its array does. :func:`readonly` makes the arrays of the data model
read-only on their way in (copied, or frozen in place when nothing else holds them).
"""

from __future__ import annotations

import weakref

import numpy as np

_FINITE: dict[int, weakref.ref[np.ndarray]] = {}
"""Read-only arrays found finite, by id (each entry dropped when its array goes)."""


def known_finite(a: np.ndarray) -> bool:
    """Whether ``a`` itself (this very object) was found finite and remembered."""
    ref = _FINITE.get(id(a))
    return ref is not None and ref() is a


def remember_finite(a: np.ndarray) -> None:
    """Remember ``a`` as finite; only for a :func:`frozen` array found finite."""
    key = id(a)
    _FINITE[key] = weakref.ref(a, lambda _: _FINITE.pop(key, None))


def frozen(a: np.ndarray) -> bool:
    """Whether nothing can change ``a``: it and every array it views are read-only."""
    base: object = a
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        base = base.base
    return base is None or isinstance(base, bytes)
