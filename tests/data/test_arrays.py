"""voxmetrics.data.arrays: unit-norm rows at any scale, chunked cosine scores, read-only arrays."""

from __future__ import annotations

import numpy as np
import pytest

from voxmetrics.data.arrays import SCORE_CHUNK_ROWS, label_array, readonly, score_chunk, unit_rows
from voxmetrics.errors import VoxMetricsInputError


def test_unit_rows_hand_values_at_any_scale():
    got = unit_rows([[3.0, 4.0], [3e200, 4e200], [3e-200, -4e-200], [0.0, 5.0]])
    # neither overflow (1e400) nor underflow (1e-400) in the norm: within 1 ulp of 3-4-5
    want = [[0.6, 0.8], [0.6, 0.8], [0.6, -0.8], [0.0, 1.0]]
    np.testing.assert_allclose(got, want, rtol=2e-16, atol=0)
    assert got[0].tolist() == [0.6, 0.8] and got.dtype == np.float64


def test_unit_rows_keeps_the_precision_and_is_exact_for_ordinary_rows():
    x = np.array([[0.3, -1.7, 2.2], [5.0, 1.0, 0.5]], dtype=np.float32)
    got = unit_rows(x)
    assert got.dtype == np.float32
    # scaling by a power of two is exact: the same bits as the plain division
    assert np.array_equal(got, x / np.linalg.norm(x, axis=1, keepdims=True))
    assert unit_rows(np.array([[1, 0]])).dtype == np.float64  # integers become float64


def test_unit_rows_zero_rows_and_empty_input():
    got = unit_rows([[0.0, 0.0], [2.0, 0.0]])
    assert np.isnan(got[0]).all() and got[1].tolist() == [1.0, 0.0]
    assert unit_rows(np.zeros((0, 4))).shape == (0, 4)


def test_score_chunk_takes_a_fixed_block_of_rows():
    trials = unit_rows(np.arange(1, 2 * (SCORE_CHUNK_ROWS + 3) + 1, dtype=float).reshape(-1, 2))
    profiles = np.eye(2)
    first = score_chunk(trials, profiles, 0)
    last = score_chunk(trials, profiles, SCORE_CHUNK_ROWS)
    assert first.shape == (SCORE_CHUNK_ROWS, 2) and last.shape == (3, 2)
    assert np.array_equal(np.vstack([first, last]), trials @ profiles.T)
    assert score_chunk(np.array([[0.6, 0.8]]), np.array([[1.0, 0.0]]), 0).tolist() == [[0.6]]


def test_readonly_copies_by_default():
    a = np.arange(4.0)
    r = readonly(a)
    assert not r.flags.writeable and r is not a and a.flags.writeable
    a[0] = 9.0
    assert r[0] == 0.0  # the copy does not follow the original
    strided = readonly(np.arange(6.0)[::2])
    assert strided.flags.c_contiguous and strided.tolist() == [0.0, 2.0, 4.0]


def test_readonly_without_copy_freezes_in_place():
    a = np.arange(4.0)
    r = readonly(a, copy=False)
    assert r is a and not a.flags.writeable
    buf = np.arange(6.0)  # like the flat buffer np.load returns, reshaped
    v = readonly(buf.reshape(2, 3), copy=False)
    assert v.base is buf and not buf.flags.writeable and not v.flags.writeable
    with pytest.raises(ValueError):
        buf[0] = 1.0


def test_readonly_copies_a_view_whose_base_it_cannot_freeze():
    owner = np.arange(6.0)
    middle = owner.reshape(2, 3)
    middle.setflags(write=False)
    view = middle[:, :2]  # not contiguous: a fresh array anyway
    r = readonly(view, copy=False)
    assert not r.flags.writeable and np.shares_memory(r, owner) is False
    assert owner.flags.writeable  # not frozen from under its owner


def test_label_array():
    assert label_array([1, "b", 2.5], "x", "w").tolist() == ["1", "b", "2.5"]
    assert label_array(np.array(["007"]), "x", "w").tolist() == ["007"]
    with pytest.raises(VoxMetricsInputError, match=r"^w: `ids` must be a 1-D list of labels, got"):
        label_array([["a", "b"]], "ids", "w")
    for bad in (["a", None], ["a", float("nan")]):
        with pytest.raises(VoxMetricsInputError, match=r"^w: `ids` has empty values; give every"):
            label_array(np.array(bad, dtype=object), "ids", "w")
