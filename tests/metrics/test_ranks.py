"""Ranks of scores within their rows (voxmetrics.metrics.ranks).

``entry_ranks`` calls ``ndarray.searchsorted`` where it called ``np.searchsorted`` row by row
(the former loop is kept below as the reference): the same integers under both tie rules, -0.0
and +0.0, float32 and float64, one row, one column; ``entry_ranks_and_max`` reads each row's
maximum from its sorted scores. ``target_ranks`` and ``row_blocks`` are checked by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.ranks import entry_ranks, row_blocks, target_ranks

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


# ------------------------------------------------------------------------------- by hand


ROWS = [[0.9, 0.8, 0.1], [0.5, 0.5, 0.1], [0.1, 0.2, 0.3], [0.4, 0.4, 0.4], [0.2, 0.7, 0.7]]
TARGETS = [0, 0, 0, 1, 2]


def test_target_ranks_by_hand_under_both_tie_rules():
    # reference: r = #{j : s_j >= s_m} (the target counted once by itself)
    #   [.9 | .8 .1] -> 1; [.5 | .5 .1] -> 2 (one tie); [.1 | .2 .3] -> 3; [.4 .4 .4] -> 3
    #   (two ties); [.2 .7 | .7] -> 2 (one tie, nothing higher)
    assert target_ranks(ROWS, TARGETS).tolist() == [1, 2, 3, 3, 2]
    # attacker: r = 1 + #{j : s_j > s_m}: the ties no longer count
    assert target_ranks(ROWS, TARGETS, ties="attacker").tolist() == [1, 1, 3, 1, 1]


def test_target_ranks_in_many_row_blocks_equal_one_block(monkeypatch):
    from voxmetrics.metrics import ranks

    rng = np.random.default_rng(1)
    s = rng.integers(0, 4, size=(41, 7)).astype(np.float64)  # ties in every row
    t = rng.integers(0, 7, 41)
    whole = {ties: target_ranks(s, t, ties=ties) for ties in ("reference", "attacker")}
    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 21)  # 3 rows per block
    monkeypatch.setattr(ranks, "CHUNK_ELEMENTS", 14)  # 2 rows per chunk
    for ties, expected in whole.items():
        np.testing.assert_array_equal(target_ranks(s, t, ties=ties), expected)
    # each rank by its definition, row by row
    expected = [int((row >= row[m]).sum()) for row, m in zip(s, t, strict=True)]
    assert whole["reference"].tolist() == expected


def test_target_ranks_refuse_bad_input():
    with pytest.raises(VoxMetricsInputError, match="`targets`"):
        target_ranks(ROWS, [0, 0, 0, 1, 3])  # column 3 of 3
    with pytest.raises(VoxMetricsInputError, match="ties"):
        target_ranks(ROWS, TARGETS, ties="worst")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("n_rows", "n_cols", "elements", "starts"),
    [
        (10, 4, 12, [0, 3, 6, 9]),  # 12 // 4 = 3 rows per block, the last one shorter
        (10, 4, 40, [0]),  # everything in one block
        (3, 50, 10, [0, 1, 2]),  # a row wider than a block: one row per block
        (0, 5, 10, []),  # no rows: no blocks
        (5, 0, 10, [0]),  # no columns: one block of every row
    ],
)
def test_row_blocks_cut_consecutive_rows(n_rows, n_cols, elements, starts):
    blocks = row_blocks(n_rows, n_cols, elements)
    assert [b.start for b in blocks] == starts
    covered = [i for b in blocks for i in range(b.start, b.stop)]
    assert covered == list(range(n_rows))  # in order, each row once


# ----------------------------------------------------------------------------------------------
# entry_ranks against scipy's rankdata of every entry, and by hand
# ----------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(2, 9),
    st.integers(1, 4),
    st.integers(0, 10_000),
    st.sampled_from([np.float32, np.float64]),
    st.sampled_from(["reference", "attacker"]),
)
def test_entry_ranks_equal_rankdata_of_every_entry(n_rows, n, d, seed, dtype, ties):
    from scipy.stats import rankdata

    rng = np.random.default_rng(seed)
    s = rng.integers(-3, 3, size=(n_rows, n)).astype(dtype)  # many ties, -0.0 and +0.0 alike
    s[s == 0] *= -1
    cols = rng.integers(0, n, size=(d, n_rows))
    ref = rankdata(-s.astype(np.float64), method="max" if ties == "reference" else "min", axis=1)
    got = entry_ranks(s, cols, ties=ties)
    np.testing.assert_array_equal(got, ref[np.arange(n_rows), cols])


def test_entry_ranks_hand_computed():
    s = np.array([[2.0, 1.0, 2.0], [0.0, 5.0, -1.0]])
    assert entry_ranks(s, [[0, 0], [1, 2]]).tolist() == [[2, 2], [3, 3]]
    assert entry_ranks(s, [[0, 0], [1, 2]], ties="attacker").tolist() == [[1, 2], [3, 3]]
