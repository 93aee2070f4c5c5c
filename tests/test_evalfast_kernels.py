"""Faster kernels of ``evaluate`` against the former ones, kept here as references.

- d''s non-target moments: the first pass takes the sum only (``non_sums(nan)``), where it
  also computed squared deviations from 0 that it dropped; the sum must be the same float.
- The chance ranks (``entry_ranks``) call ``ndarray.searchsorted`` instead of
  ``np.searchsorted``: the same integers (ties under both rules, -0.0 and +0.0, float32 and
  float64, one row, one column).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.pools import SortedPools, non_block_sums
from voxmetrics.metrics.ranks import entry_ranks


def reference_moments(sp: SortedPools) -> tuple[float, float, float, float]:
    """The former ``SortedPools.moments``: the sum from ``non_sums(0.0)``."""
    v = sp.values.astype(np.float64)
    w = sp.counts.tar_at
    if v.size == 1:
        mean_tar, var_tar = float(v[0]), 0.0
    else:
        mean_tar = float((w * v).sum() / sp.n_tar)
        var_tar = float((w * (v - mean_tar) ** 2).sum() / sp.n_tar)
    at = v[sp.counts.non_at > 0]
    lo = np.fmin(np.nanmin(sp.cell_first, initial=np.inf), at.min(initial=np.inf))
    hi = np.fmax(np.nanmax(sp.cell_last, initial=-np.inf), at.max(initial=-np.inf))
    if lo == hi:
        return mean_tar, var_tar, float(lo), 0.0
    total, _ = sp.non_sums(0.0)
    mean_non = total / sp.n_non
    _, sq = sp.non_sums(mean_non)
    return mean_tar, var_tar, mean_non, sq / sp.n_non


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


def matrix(seed: int, t: int, n: int, dtype: str, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "ties":  # few distinct values, -0.0 and +0.0 among them
        s = rng.integers(-3, 4, size=(t, n)).astype(dtype) * dtype_type(dtype)(0.5)
        s[rng.random((t, n)) < 0.3] *= -1
    elif kind == "zeros":
        s = np.where(rng.random((t, n)) < 0.5, -0.0, 0.0).astype(dtype)
    else:
        s = (rng.standard_normal((t, n)) * rng.choice([1e-3, 1.0, 1e3], (t, n))).astype(dtype)
    return s


def dtype_type(dtype: str):
    return np.dtype(dtype).type


shapes = st.sampled_from([(1, 1), (1, 7), (9, 1), (30, 4), (3, 200), (700, 500)])


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shape=shapes,
    dtype=st.sampled_from(["float32", "float64"]),
    kind=st.sampled_from(["ties", "zeros", "spread"]),
)
def test_sum_only_pass_is_the_same_sum(seed, shape, dtype, kind):
    s = matrix(seed, *shape, dtype, kind)
    t = np.random.default_rng(seed + 1).integers(0, shape[1], shape[0])
    total, sq = non_block_sums(s, t, math.nan)
    ref_total, _ = non_block_sums(s, t, 0.0)
    assert math.isnan(sq)
    assert np.float64(total).tobytes() == np.float64(ref_total).tobytes()
    if shape[1] == 1:  # no non-target: no pools
        return
    sp = SortedPools.from_matrix(s, t)
    assert sp.non_sums(math.nan)[0] == sp.non_sums(0.0)[0]
    got, ref = sp.moments, reference_moments(sp)
    assert np.array(got).tobytes() == np.array(ref).tobytes(), (got, ref)
    mated = np.zeros(s.shape, dtype=bool)  # the same pools, given as two 1-D arrays
    mated[np.arange(shape[0]), t] = True
    sp2 = SortedPools.from_pools(s[mated], s[~mated])
    assert np.array(sp2.moments).tobytes() == np.array(reference_moments(sp2)).tobytes()


def test_moments_hand_computed():
    sp = SortedPools.from_matrix(np.array([[3.0, 1.0, 2.0], [5.0, 4.0, 0.0]]), np.array([0, 1]))
    # targets 3 and 4; non-targets 1, 2, 5, 0: mean 2, variance (1 + 0 + 9 + 4) / 4 = 3.5
    assert sp.moments == (3.5, 0.25, 2.0, 3.5)


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


# ------------------------------------------ the matrix's finiteness, summed once on its way in


def _npz(path, scores):
    t, n = scores.shape
    enrol = np.array([f"s{j}" for j in range(n)])
    np.savez(
        path,
        scores=scores,
        trial_ids=np.array([f"u{i}" for i in range(t)]),
        trial_speakers=enrol[np.arange(t) % n],
        enrol_speakers=enrol,
    )
    return path


def test_npz_matrix_is_known_finite_and_not_summed_again(tmp_path):
    from voxmetrics.data import _finite, model, read_scores
    from voxmetrics.metrics._validation import check_matrix

    s = np.arange(12, dtype=np.float32).reshape(4, 3) - np.float32(-0.0)
    sm = read_scores(_npz(tmp_path / "x.npz", s))
    assert _finite.known_finite(sm.scores) and _finite.frozen(sm.scores)
    # the metrics take it as it is, known finite: not summed again
    got, _ = check_matrix(sm.scores, sm.targets)
    assert got is sm.scores
    again = model.ScoreMatrix.from_arrays(
        sm.scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        copy=False,
    )
    assert again.scores is sm.scores and _finite.known_finite(again.scores)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_npz_gives_the_same_message(tmp_path, bad):
    from voxmetrics.data import read_scores

    s = np.zeros((4, 3), dtype=np.float32)
    s[2, 1] = bad
    with pytest.raises(VoxMetricsInputError) as exc:
        read_scores(_npz(tmp_path / "x.npz", s))
    if np.isnan(bad):
        assert str(exc.value).startswith(
            "x.npz: array 'scores' holds 1 NaN value(s) of T x N = 4 x 3 = 12 (first: row 3, "
            "column 2) and no 'mask'"
        ), exc.value
    else:
        assert str(exc.value) == (
            f"x.npz: 1 score(s) are NaN or infinite (first: trial 'u2', enrolled 's1' = {bad}); "
            "every score must be a finite number."
        )


def test_a_writeable_matrix_is_never_taken_as_finite():
    from voxmetrics.data import _finite, model
    from voxmetrics.metrics._validation import check_matrix

    s = np.arange(6, dtype=np.float64).reshape(3, 2)
    labels = {"trial_ids": ["a", "b", "c"], "trial_speakers": ["x", "y", "x"]}
    sm = model.ScoreMatrix.from_arrays(s, enrol_speakers=["x", "y"], **labels)  # a copy
    assert _finite.known_finite(sm.scores) and not _finite.known_finite(s)
    s[0, 0] = np.inf  # the caller's array, changed afterwards, is checked again
    with pytest.raises(VoxMetricsInputError, match="NaN or infinite"):
        check_matrix(s, np.array([0, 1, 0]))
    ro = s.view()
    ro.flags.writeable = False  # read-only, but its base is not: never remembered
    with pytest.raises(VoxMetricsInputError, match="NaN or infinite"):
        check_matrix(ro, np.array([0, 1, 0]))
    assert not _finite.frozen(ro)


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
