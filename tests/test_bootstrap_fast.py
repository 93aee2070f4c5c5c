"""The bootstrap's fast kernels, proven equal to the former ones (kept here as references).

* ``_LeftIndex`` (a bucket table of the distinct target values) against ``np.searchsorted``;
* ``speaker_run_counts`` (int32 CSR, a few speakers at a time) against the former kernel
  (``np.searchsorted`` of every score, int64 COO parts summed by ``tocsr``);
* ``replicate_run_counts`` (float64, slot by slot) against the former integer product;
* ``pav_runs`` (logs once per PAV bin) and the per-run sums of ROCCH-EER / min Cllr / D_ECE
  against the former element-by-element formulas;

every comparison exact (``array_equal``, NaN included), on scores with many ties. The former
kernels live in ``tests/metrics/run_count_cases.py``; the whole replicate set with them swapped
back in is tested in ``tests/metrics/test_uncertainty.py``. Left here: these are tests of
voxmetrics.metrics.zebra and voxmetrics.metrics.pools, whose test files another owner keeps.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules

from tests.metrics.run_count_cases import (
    old_d_ece_runs,
    old_min_cllr_terms,
    old_pav_runs,
    old_speaker_run_counts,
    tied_matrix,
)
from voxmetrics.metrics.pools import RunCounts, SortedPools, pav_runs
from voxmetrics.metrics.uncertainty import _rocch_eer_runs
from voxmetrics.metrics.zebra import (
    _LeftIndex,
    d_ece_from_runs,
    replicate_run_counts,
    speaker_run_counts,
)

ZEBRA = sys.modules["voxmetrics.metrics.zebra"]


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    forget_unimportable_modules()


# --- _LeftIndex --------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=32), min_size=1
    ),
    extra=st.lists(st.floats(width=32), max_size=40),
    dtype=st.sampled_from([np.float32, np.float64]),
    per_value=st.sampled_from([1, 2, 16]),
)
def test_left_index_equals_searchsorted(values, extra, dtype, per_value):
    """Every score's position equals np.searchsorted's (left): the values themselves, their
    neighbours, NaN, +-inf, scores far outside, crowded buckets (few buckets a value)."""
    v = np.unique(np.asarray(values, dtype=dtype))
    old = ZEBRA._BUCKETS_PER_VALUE
    ZEBRA._BUCKETS_PER_VALUE = per_value
    try:
        index = _LeftIndex(v)
    finally:
        ZEBRA._BUCKETS_PER_VALUE = old
    near = np.concatenate(
        [
            v,
            np.nextafter(v, dtype(np.inf)),
            np.nextafter(v, dtype(-np.inf)),
            np.asarray(extra, dtype=dtype),
            np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=dtype),
        ]
    )
    x = near.reshape(1, -1)
    np.testing.assert_array_equal(index(x), np.searchsorted(v, x, side="left"))


def test_left_index_clustered_values_and_outliers():
    """Values in a few tight clusters and far outliers (most buckets empty, some crowded)."""
    rng = np.random.default_rng(3)
    v = np.unique(
        np.concatenate(
            [rng.normal(0, 1e-4, 500), rng.normal(5, 1e-6, 300), [-1e30, 1e30, 7.0]]
        ).astype(np.float32)
    )
    index = _LeftIndex(v)
    assert index.crowded.any()
    x = np.concatenate([v, rng.normal(0, 1, 5000).astype(np.float32), rng.choice(v, 5000)])
    x = x.reshape(1, -1)
    np.testing.assert_array_equal(index(x), np.searchsorted(v, x, side="left"))


# --- speaker_run_counts ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("block", "bins"), [(1 << 22, 1 << 20), (20, 1), (40, 70)])
def test_speaker_run_counts_equal_the_former_kernel(seed, dtype, block, bins, monkeypatch):
    """The same counts, speakers split over row blocks or grouped, ties everywhere, an
    absent speaker (row 5 of 7 may be empty), float32 and float64."""
    monkeypatch.setattr(ZEBRA, "BLOCK_ELEMENTS", block)
    monkeypatch.setattr(ZEBRA, "_SPEAKER_BINS", bins)
    s, t, spk = tied_matrix(seed, decimals=1 + seed % 3, dtype=dtype)
    spk[spk == 5] = 6  # speaker 5 has no trial
    pools = SortedPools.from_matrix(s, t)
    new = speaker_run_counts(pools, s, t, spk, 8)
    old = old_speaker_run_counts(pools, s, t, spk, 8, block=block)
    assert new.dtype == np.int32 and new.indices.dtype == np.int32
    assert new.has_sorted_indices and new.nnz == old.nnz
    np.testing.assert_array_equal(new.toarray(), old.toarray())
    np.testing.assert_array_equal(new.indptr, old.indptr)
    np.testing.assert_array_equal(new.indices, old.indices)


@pytest.mark.parametrize("seed", range(4))
def test_speaker_run_counts_of_listed_pairs_equal_the_former_kernel(seed, monkeypatch):
    """A sparse trial list (unlisted scores NaN): the same counts of the listed pairs."""
    monkeypatch.setattr(ZEBRA, "BLOCK_ELEMENTS", 30)
    monkeypatch.setattr(ZEBRA, "_SPEAKER_BINS", 50)
    s, t, spk = tied_matrix(seed)
    rng = np.random.default_rng(seed + 10)
    mask = rng.random(s.shape) < 0.6
    mask[np.arange(s.shape[0]), t] |= rng.random(s.shape[0]) < 0.8
    s = np.where(mask, s, np.nan)
    own = np.zeros(s.shape, dtype=bool)
    own[np.arange(s.shape[0]), t] = True
    pools = SortedPools.from_pools(s[mask & own], s[mask & ~own])
    new = speaker_run_counts(pools, s, t, spk, 7, mask=mask)
    old = old_speaker_run_counts(pools, s, t, spk, 7, mask=mask, block=30)
    np.testing.assert_array_equal(new.toarray(), old.toarray())
    assert new.toarray().sum() == mask.sum()


def test_speaker_run_counts_of_integer_scores_equal_the_former_kernel():
    """Scores of another dtype than the pools' values (integers listed by a mask: the pools
    are float64) are looked up by np.searchsorted, as before."""
    s, t, spk = tied_matrix(7)
    s = np.round(s * 3).astype(np.int64)
    mask = np.ones(s.shape, dtype=bool)
    own = np.zeros(s.shape, dtype=bool)
    own[np.arange(s.shape[0]), t] = True
    pools = SortedPools.from_pools(s[own], s[~own])
    assert pools.values.dtype == np.float64
    new = speaker_run_counts(pools, s, t, spk, 7, mask=mask)
    old = old_speaker_run_counts(pools, s, t, spk, 7, mask=mask, block=1 << 22)
    np.testing.assert_array_equal(new.toarray(), old.toarray())


@pytest.mark.parametrize("seed", range(3))
def test_replicate_run_counts_equal_the_integer_product(seed):
    s, t, spk = tied_matrix(seed, t_n=80)
    pools = SortedPools.from_matrix(s, t)
    per_speaker = speaker_run_counts(pools, s, t, spk, 7)
    old = old_speaker_run_counts(pools, s, t, spk, 7, block=1 << 22)
    counts = np.random.default_rng(seed).multinomial(7, np.full(7, 1 / 7), size=150)
    rows = np.concatenate([w for _, w in replicate_run_counts(per_speaker, counts, chunk=64)])
    former = np.concatenate(
        [np.asarray(old.T @ counts[b : b + 64].T).T.astype(np.float64) for b in range(0, 150, 64)]
    )
    assert rows.dtype == np.float64 and rows.flags.c_contiguous
    np.testing.assert_array_equal(rows, former)


# --- PAV once per bin --------------------------------------------------------------------------


def _replicate_counts(seed):
    """Run counts of the full data and of replicates (integer weights, zero runs included)."""
    s, t, spk = tied_matrix(seed, t_n=120, n=11, decimals=1 + seed % 2)
    pools = SortedPools.from_matrix(s, t)
    per_speaker = speaker_run_counts(pools, s, t, spk, 7)
    counts = np.random.default_rng(seed).multinomial(7, np.full(7, 1 / 7), size=40)
    out = [pools.counts]
    for _, rows in replicate_run_counts(per_speaker, counts):
        for row in rows:
            rc = RunCounts(cells=row[0::3], tar_at=row[1::3], non_at=row[2::3])
            if rc.n_tar > 0 and rc.n_non > 0:
                out.append(rc)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_pav_runs_once_per_bin_equal_the_former_per_run_logs(seed):
    for rc in _replicate_counts(seed):
        for first in (True, False):
            for laplace in (True, False):
                new = pav_runs(rc, targets_first=first, laplace=laplace)
                old = old_pav_runs(rc, targets_first=first, laplace=laplace)
                for name in ("labels", "counts", "slots", "llr", "posterior"):
                    np.testing.assert_array_equal(getattr(new, name), getattr(old, name))
                assert new.bin_runs.sum() == new.llr.size
                np.testing.assert_array_equal(np.repeat(new.bin_llr, new.bin_runs), new.llr)
                assert d_ece_from_runs(new, rc.n_tar, rc.n_non) == old_d_ece_runs(
                    old, rc.n_tar, rc.n_non
                )
                if not laplace:
                    _, mc = _rocch_eer_runs(rc, targets_first=first, pav=new)
                    assert mc == old_min_cllr_terms(old, rc.n_tar, rc.n_non)


def test_per_run_without_bins_applies_f_to_every_run():
    r = old_pav_runs(
        RunCounts(np.array([1.0, 0.0, 2.0]), np.array([1.0, 3.0]), np.array([1.0, 0.0])),
        targets_first=True,
        laplace=False,
    )
    np.testing.assert_array_equal(r.per_run(np.negative), -r.llr)
