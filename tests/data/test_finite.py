"""voxmetrics.data._finite: matrices found finite are remembered by identity, while they live."""

from __future__ import annotations

import gc

import numpy as np

from voxmetrics.data import _finite
from voxmetrics.data._finite import frozen, known_finite, remember_finite


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def test_remembered_by_identity_not_by_value():
    a = _ro(np.ones((2, 2)))
    b = _ro(np.ones((2, 2)))
    assert not known_finite(a)
    remember_finite(a)
    assert known_finite(a)
    assert not known_finite(b)  # equal values, another object
    assert not known_finite(a[:1])  # a view is another object too


def test_an_entry_goes_with_its_array():
    a = _ro(np.zeros(3))
    key = id(a)
    remember_finite(a)
    assert key in _finite._FINITE
    del a
    gc.collect()
    assert key not in _finite._FINITE


def test_frozen():
    a = np.arange(6.0)
    assert not frozen(a)
    v = a.reshape(2, 3)
    v.setflags(write=False)
    assert not frozen(v)  # still writeable through its base
    a.setflags(write=False)
    assert frozen(v) and frozen(a)
    assert frozen(_ro(np.frombuffer(b"\x00" * 16)))  # a view of immutable bytes
    assert not frozen(_ro(np.frombuffer(bytearray(16))))  # its bytearray can still change
