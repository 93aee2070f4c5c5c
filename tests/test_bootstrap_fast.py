"""The bootstrap's fast kernels, proven equal to the former ones (kept here as references).

* ``_LeftIndex`` (a bucket table of the distinct target values) against ``np.searchsorted``;
* ``speaker_run_counts`` (int32 CSR, a few speakers at a time) against the former kernel
  (``np.searchsorted`` of every score, int64 COO parts summed by ``tocsr``);
* ``replicate_run_counts`` (float64, slot by slot) against the former integer product;
* ``pav_runs`` (logs once per PAV bin) and the per-run sums of ROCCH-EER / min Cllr / D_ECE
  against the former element-by-element formulas;

every comparison exact (``array_equal``, NaN included), on scores with many ties.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules
from scipy import sparse
from scipy.optimize import isotonic_regression

from voxmetrics.metrics.pools import PAVRuns, RunCounts, SortedPools, pav_runs
from voxmetrics.metrics.uncertainty import SpeakerDraws, _rocch_eer_runs, condition_replicates
from voxmetrics.metrics.zebra import (
    _LeftIndex,
    _z,
    d_ece_from_runs,
    replicate_run_counts,
    speaker_run_counts,
)

ZEBRA = sys.modules["voxmetrics.metrics.zebra"]
_LN2 = np.log(2.0)


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    forget_unimportable_modules()


# --- the former kernels ------------------------------------------------------------------------


def old_speaker_run_counts(pools, scores, targets, speaker_index, n_speakers, mask=None, block=1):
    """The former kernel: searchsorted of every score, int64 COO parts, summed by tocsr."""
    v = pools.values
    n_slots = 3 * v.size + 1
    n = scores.shape[1]
    order = np.argsort(speaker_index, kind="stable")
    step = max(1, block // n)
    spk_parts, slot_parts, count_parts = [], [], []
    for r0 in range(0, order.size, step):
        rows = order[r0 : r0 + step]
        blk = scores[rows]
        spk = speaker_index[rows]
        first = int(spk.min())
        pos = np.searchsorted(v, blk, side="left")
        at = v[np.minimum(pos, v.size - 1)] == blk
        slot = np.where(at, 3 * pos + 2, 3 * pos)
        slot[np.arange(rows.size), targets[rows]] -= 1
        keys = ((spk - first)[:, None] * n_slots + slot).ravel()
        if mask is not None:
            keys = keys[mask[rows].ravel()]
        counts = np.bincount(keys, minlength=(int(spk.max()) - first + 1) * n_slots)
        hit = np.flatnonzero(counts)
        spk_parts.append(hit // n_slots + first)
        slot_parts.append(hit % n_slots)
        count_parts.append(counts[hit])
    coo = sparse.coo_array(
        (np.concatenate(count_parts), (np.concatenate(spk_parts), np.concatenate(slot_parts))),
        shape=(n_speakers, n_slots),
    )
    return coo.tocsr()


def old_pav_runs(rc, *, targets_first, laplace):
    labels, counts, slots = rc.runs(targets_first=targets_first)
    y, w = labels, counts
    if laplace:
        y = np.concatenate([[1.0, 0.0], y, [1.0, 0.0]])
        w = np.concatenate([[1.0, 1.0], w, [1.0, 1.0]])
    p = isotonic_regression(y, weights=w).x
    if laplace:
        p = p[2:-2]
    with np.errstate(divide="ignore"):
        llr = np.log(p) - np.log1p(-p) - np.log(rc.n_tar / rc.n_non)
    return PAVRuns(labels, counts, slots, llr, p)


def old_d_ece_runs(r, n_tar, n_non):
    is_tar = r.labels == 1.0
    t, n = r.llr[is_tar], r.llr[~is_tar]
    with np.errstate(over="ignore"):
        zt = r.counts[is_tar] @ _z(np.exp(t), t)
        zn = r.counts[~is_tar] @ _z(np.exp(-n), -n)
    return float((zt / n_tar + zn / n_non) / _LN2)


def old_min_cllr_terms(r, n_tar, n_non):
    is_tar = r.labels == 1.0
    c_tar = r.counts[is_tar] @ np.logaddexp(0.0, -r.llr[is_tar]) / n_tar
    c_non = r.counts[~is_tar] @ np.logaddexp(0.0, r.llr[~is_tar]) / n_non
    return min(float(0.5 * (c_tar + c_non) / _LN2), 1.0)


# --- data --------------------------------------------------------------------------------------


def tied_matrix(seed, t_n=60, n=9, decimals=1, dtype=np.float64):
    """Coarse scores (many ties within and across the pools) and trial speakers."""
    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=(t_n, n)), decimals).astype(dtype)
    t = rng.integers(0, n, size=t_n)
    s[np.arange(t_n), t] += dtype(0.5 if seed % 3 else 0.0)
    spk = rng.integers(0, 7, size=t_n)
    return s, t, spk


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


# --- the whole replicate set -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_condition_replicates_with_the_former_kernels_unchanged(seed, monkeypatch):
    """Every replicate of every pairwise number equals the one computed with the former
    run counts (the kernels swapped back in), on tied float32 scores."""
    s, t, spk = tied_matrix(seed, t_n=90, n=12, decimals=1, dtype=np.float32)
    names = np.array([f"s{i}" for i in spk])
    draws = SpeakerDraws.draw(names, n_boot=60, seed=seed)
    new = condition_replicates(s, t, names, draws)
    unc = sys.modules["voxmetrics.metrics.uncertainty"]

    def former_counts(per_speaker, counts, chunk=64):
        for b in range(0, counts.shape[0], chunk):
            yield b, np.asarray(per_speaker.T @ counts[b : b + chunk].T).T.astype(np.float64)

    monkeypatch.setattr(unc, "speaker_run_counts", old_speaker_run_counts)
    monkeypatch.setattr(unc, "replicate_run_counts", former_counts)
    monkeypatch.setattr(unc, "pav_runs", old_pav_runs)
    monkeypatch.setattr(unc, "d_ece_from_runs", old_d_ece_runs)
    old = condition_replicates(s, t, names, draws)
    assert new.estimates == old.estimates
    for k in old.reps:
        np.testing.assert_array_equal(new.reps[k], old.reps[k], err_msg=k)
