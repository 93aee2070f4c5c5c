"""The 1-to-1 baselines of one matrix as one result (voxmetrics.metrics.baseline).

Cllr of a matrix in row blocks (no pools built) against the Cllr of its pools
(``tests/reference_pooled.py``), the reused buffers of the row-block passes against fresh
blocks, bit for bit, and a sparse trial list's baselines against a complete matrix's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference_pooled as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.metrics.baseline import (
    baseline_metrics,
    mated_pools,
    pairs_baseline,
    pairs_cllr,
)
from voxmetrics.metrics.pools import SortedPools


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(2, 6), st.sampled_from([np.float64, np.float32]))
def test_matrix_cllr_equals_cllr_of_the_pools(n_t, n_e, dtype):
    from voxmetrics.metrics.baseline import matrix_cllr

    rng = np.random.default_rng(n_t * 10 + n_e)
    s = (rng.normal(0, 3, (n_t, n_e)) * rng.choice([1, 40], (n_t, n_e))).astype(dtype)
    t = rng.integers(0, n_e, n_t)
    tar, non = ref.mated_pools(s.astype(np.float64), t)
    expected = ref._cllr(tar, non)
    tol = 1e-12 if dtype == np.float64 else 1e-6  # float32 terms for float32 scores
    assert matrix_cllr(s, t) == pytest.approx(expected, rel=tol)
    b = baseline_metrics(s, t)
    assert b.cllr == matrix_cllr(s, t)
    assert b.min_cllr == pytest.approx(ref.min_cllr(tar, non), rel=1e-12, abs=1e-15)
    assert b.eer_rocch == ref.eer_rocch(tar, non)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_block_passes_with_reused_buffers_equal_fresh_blocks_bit_for_bit(dtype, monkeypatch):
    """d''s non-target sums and Cllr's softplus sum: one reused buffer, chunks inside blocks."""
    from voxmetrics.metrics import baseline, ranks

    # several blocks of 5 rows (ranks.row_blocks: both sums), the last one shorter
    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 70)
    monkeypatch.setattr(baseline, "CHUNK_ELEMENTS", 30)  # and several chunks in each block
    rng = np.random.default_rng(3)
    s = (rng.normal(size=(23, 13)) * 3).astype(dtype)
    t = rng.integers(0, 13, 23)
    sp = SortedPools.from_matrix(s, t)
    c = 0.25
    total = sq = 0.0
    all_terms = 0.0
    for r0 in range(0, 23, 5):  # fresh per-block arrays, the mated cells left out of both sums
        block = s[r0 : r0 + 5].astype(np.float64)
        mated = (np.arange(block.shape[0]), t[r0 : r0 + 5])
        block[mated] = 0.0
        total += float(block.sum())
        block -= c
        block[mated] = 0.0
        sq += float(np.square(block).sum())  # numpy's pairwise sum (not BLAS: no threads)
        all_terms += baseline.softplus_sum(s[r0 : r0 + 5])
    assert sp.non_sums(c) == (total, sq)
    tar = s[np.arange(23), t]
    c_non = all_terms - baseline.softplus_sum(tar)
    expected = 0.5 * (baseline.softplus_sum(-tar) / 23 + c_non / (23 * 12)) / np.log(2.0)
    assert baseline.matrix_cllr(s, t) == float(expected)
    # Fortran-ordered input takes the per-block path: the same sums
    assert baseline.matrix_cllr(np.asfortranarray(s), t) == pytest.approx(float(expected))


# NEWBASELINE


# metrics.md section 1's worked example (its EER, ROCCH-EER and linkability: test_eer.py)
WORKED_S = [[0.9, 0.8, 0.8, 0.8], [0.7, 0.6, 0.6, 0.6], [0.4, 0.5, 0.4, 0.4], [0.2, 0.2, 0.3, 0.2]]
WORKED_TARGETS = [0, 0, 1, 2]


def test_worked_example_as_one_result():
    r = baseline_metrics(WORKED_S, WORKED_TARGETS)
    assert (r.n_trials, r.n_enrolled) == (4, 4)
    assert r.chance_linkability == 0.25  # 1 / N
    # Cllr of the scores read as natural-log LLRs, by its formula: the mated .9 .7 .5 .3, the
    # non-mated .8 .6 .4 .2 three times each
    tar, non = [0.9, 0.7, 0.5, 0.3], [0.8, 0.6, 0.4, 0.2] * 3
    c_tar = sum(math.log2(1 + math.exp(-x)) for x in tar) / 4
    c_non = sum(math.log2(1 + math.exp(x)) for x in non) / 12
    assert r.cllr == pytest.approx((c_tar + c_non) / 2, rel=1e-14)
    assert list(r.to_dict()) == [
        "n_trials", "n_enrolled", "eer", "eer_threshold", "eer_rocch", "cllr", "min_cllr",
        "linkability",
    ]  # fmt: skip
    assert r.to_dict()["eer"] == 0.5 and r.to_dict()["linkability"] == 1.0


def test_mated_pools_split_the_matrix_row_by_row():
    tar, non = mated_pools(WORKED_S, WORKED_TARGETS)
    assert tar.tolist() == [0.9, 0.7, 0.5, 0.3]  # each row's target column
    # the other columns, row after row, in column order
    assert non.tolist() == [0.8, 0.8, 0.8, 0.6, 0.6, 0.6, 0.4, 0.4, 0.4, 0.2, 0.2, 0.2]


@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pairs_baseline_of_every_pair_equals_the_matrix_baseline(ties, seed):
    """A sparse trial list that lists every pair of a complete matrix has its baselines."""
    rng = np.random.default_rng(seed)
    s = rng.normal(size=(9, 5)).round(1)  # ties within and across the pools
    t = rng.integers(0, 5, 9)
    full = baseline_metrics(s, t, ties=ties)
    tar, non = mated_pools(s, t)
    listed = pairs_baseline(
        SortedPools.from_pools(tar, non),
        tar,
        non,
        n_trials=9,
        n_enrolled=5,
        linkability=None,  # a sparse list has no complete trial: no linkability
        ties=ties,
    )
    assert listed.linkability is None and full.linkability is not None
    for f in ("n_trials", "n_enrolled", "eer", "eer_threshold", "eer_rocch", "min_cllr"):
        assert getattr(listed, f) == getattr(full, f), f
    assert listed.cllr == pytest.approx(full.cllr, rel=1e-13)  # summed in another order
    assert pairs_cllr(tar, non) == listed.cllr
