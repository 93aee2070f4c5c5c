"""Ranks of scores within their rows (voxmetrics.metrics.ranks).

``entry_ranks`` calls ``ndarray.searchsorted`` where it called ``np.searchsorted`` row by row
(the former loop is kept below as the reference): the same integers under both tie rules, -0.0
and +0.0, float32 and float64, one row, one column; ``entry_ranks_and_max`` reads each row's
maximum from its sorted scores.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.metrics.ranks import entry_ranks

from .matrix_cases import matrix, shapes


def reference_entry_ranks(block, cols, ties):
    """The former ``entry_ranks``: ``np.searchsorted`` row by row."""
    b = np.asarray(block)
    c = np.asarray(cols, dtype=np.intp)
    n_rows, n = b.shape
    rows = np.arange(n_rows)
    query = b[rows[:, None], c.T]
    ordered = np.sort(b, axis=1)
    side = "left" if ties == "reference" else "right"
    lo = np.empty(query.shape, dtype=np.int64)
    for i in range(n_rows):
        lo[i] = np.searchsorted(ordered[i], query[i], side=side)
    return np.ascontiguousarray((n - lo if ties == "reference" else 1 + n - lo).T)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shape=shapes,
    d=st.integers(1, 5),
    dtype=st.sampled_from(["float32", "float64"]),
    kind=st.sampled_from(["ties", "zeros", "spread"]),
    ties=st.sampled_from(["reference", "attacker"]),
)
def test_entry_ranks_as_the_former_loop(seed, shape, d, dtype, kind, ties):
    s = matrix(seed, *shape, dtype, kind)
    cols = np.random.default_rng(seed + 2).integers(0, shape[1], (d, shape[0]))
    got = entry_ranks(s, cols, ties=ties)
    ref = reference_entry_ranks(s, cols, ties)
    assert got.dtype == ref.dtype and got.flags.c_contiguous
    np.testing.assert_array_equal(got, ref)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shape=shapes,
    dtype=st.sampled_from(["float32", "float64"]),
    kind=st.sampled_from(["ties", "zeros", "spread"]),
)
def test_top_count_from_the_sorted_rows_as_from_np_max(seed, shape, dtype, kind):
    """chance_block counts the cells equal to their row's maximum with the last sorted score
    (where it took ``np.max``): the same count, -0.0 and +0.0 maxima included."""
    from voxmetrics.metrics.chance import chance_block
    from voxmetrics.metrics.ranks import entry_ranks_and_max

    s = matrix(seed, *shape, dtype, kind)
    cols = np.random.default_rng(seed + 3).integers(0, shape[1], (3, shape[0]))
    ranks, top = entry_ranks_and_max(s, cols)
    np.testing.assert_array_equal(ranks, entry_ranks(s, cols))
    assert top.shape == (shape[0], 1) and top.dtype == s.dtype
    expected = int(np.count_nonzero(s == s.max(axis=1, keepdims=True)))
    assert int(np.count_nonzero(s == top)) == expected
    assert chance_block(s, cols).n_top == expected


# NEWRANKS
