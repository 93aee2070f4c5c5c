"""The DET / DCF / APE / d' of the sorted pools equal the old sort-both-pools code."""

from __future__ import annotations

import math

import numpy as np
import pool_cases
import pytest
import reference_pooled as ref
from hypothesis import example, given, settings
from metric_registry import forget_unimportable_modules

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.metrics.dcf import (
    ape_curve,
    ape_curve_from_pools,
    d_prime,
    dcf,
    dcf_from_pools,
    det_curve,
    verification,
    verification_from_pools,
)
from voxmetrics.metrics.pools import SortedPools


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    forget_unimportable_modules()


pools = pool_cases.pools
PRIORS = [0.001, 0.01, 0.2, 0.5, 0.9]
PLO = np.linspace(-6.0, 6.0, 49)  # includes integer LLR thresholds: ties with integer scores


def _matrix(tar, non):
    """A T x N matrix whose pools are ``tar`` and (a permutation-free layout of) ``non``."""
    n_cols = non.size + 1
    s = np.empty((tar.size, n_cols), dtype=np.result_type(tar.dtype, non.dtype))
    s[:] = non[0]
    s[:, 0] = tar
    s[0, 1:] = non
    t = np.zeros(tar.size, dtype=np.intp)
    mn = s[:, 1:].ravel()
    return s, t, mn


@settings(max_examples=300, deadline=None)
@given(pools())
def test_dcf_equals_reference(tn):
    tar, non = tn
    r = dcf(tar, non, p_targets=PRIORS, c_miss=2.0, scores_are_llrs=True)
    min_dcf, min_thr, act = ref.dcf_reference(tar, non, PRIORS, c_miss=2.0, scores_are_llrs=True)
    np.testing.assert_array_equal(r.min_dcf, min_dcf)
    np.testing.assert_array_equal(r.min_thresholds, min_thr)
    np.testing.assert_array_equal(r.act_dcf, act)


@settings(max_examples=300, deadline=None)
@given(pools())
def test_ape_equals_reference(tn):
    tar, non = tn
    c = ape_curve(tar, non, prior_log_odds=PLO, scores_are_llrs=True)
    minimum, actual = ref.ape_reference(tar, non, PLO, scores_are_llrs=True)
    np.testing.assert_allclose(c.minimum, minimum, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(c.actual, actual)


@settings(max_examples=300, deadline=None)
@given(pools())
def test_det_corners_draw_the_reference_curve(tn):
    tar, non = tn
    c = det_curve(tar, non)
    thr, pmiss, pfa, h_miss, h_fa = ref.det_reference(tar, non)
    assert c.n_points == thr.size
    np.testing.assert_array_equal(c.rocch_pmiss, h_miss)
    np.testing.assert_array_equal(c.rocch_pfa, h_fa)
    # the corners are operating points of the reference, in order
    pos = np.searchsorted(thr, c.thresholds)
    np.testing.assert_array_equal(thr[pos], c.thresholds)
    np.testing.assert_array_equal(pmiss[pos], c.pmiss)
    np.testing.assert_array_equal(pfa[pos], c.pfa)
    assert pos[0] == 0 and pos[-1] == thr.size - 1
    # every other operating point lies on the vertical segment ending at the next corner
    nxt = np.searchsorted(c.thresholds, thr, side="left")
    inner = thr > -np.inf
    nxt = nxt[inner]
    np.testing.assert_array_equal(pmiss[inner], c.pmiss[nxt])
    assert (pfa[inner] >= c.pfa[nxt]).all() and (pfa[inner] <= c.pfa[nxt - 1]).all()
    on_segment = pmiss[inner] == c.pmiss[nxt - 1]  # else it is the corner itself
    assert (on_segment | (thr[inner] == c.thresholds[nxt])).all()


@settings(max_examples=300, deadline=None)
@given(pools())
def test_d_prime_equals_reference(tn):
    tar, non = tn
    want = ref.d_prime_reference(tar, non)
    if math.isnan(want):
        with pytest.warns(Warning):
            got = d_prime(tar, non)
        assert got in (0.0, math.inf, -math.inf)
    else:
        assert d_prime(tar, non) == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.DegenerateDataWarning")
@settings(max_examples=150, deadline=None)
@given(pools())
# a non-target pool of tiny spread: its variance must not cancel against the targets'
@example((np.array([1.0], np.float32), np.array([0.0, 1.8841286e-34], np.float32)))
def test_matrix_pools_equal_array_pools(tn):
    """From a matrix (blockwise counts and sums, no non-target pool) = from the two arrays."""
    tar, non = tn
    s, t, mn = _matrix(tar, non)
    a = SortedPools.from_matrix(s, t)
    b = SortedPools.from_pools(s[np.arange(tar.size), t], mn)
    assert a.n_distinct == b.n_distinct
    np.testing.assert_array_equal(a.cell_last, b.cell_last)
    m64 = mn.astype(np.float64)  # thresholds at, just above and just below each score
    x = np.concatenate([PLO, m64, m64 + 1e-12, m64 - 1e-12, [-np.inf, np.inf, -1e300, 1e300]])
    np.testing.assert_array_equal(a.count_non_le(x), b.count_non_le(x))
    np.testing.assert_array_equal(
        a.count_non_le(x), (mn.astype(np.float64)[None, :] <= x[:, None]).sum(axis=1)
    )
    np.testing.assert_allclose(a.moments, b.moments, rtol=1e-9, atol=1e-12)
    va = verification_from_pools(a, p_targets=PRIORS, scores_are_llrs=True, max_det_points=None)
    vb = verification_from_pools(b, p_targets=PRIORS, scores_are_llrs=True, max_det_points=None)
    np.testing.assert_array_equal(va.dcf.min_dcf, vb.dcf.min_dcf)
    np.testing.assert_array_equal(va.dcf.act_dcf, vb.dcf.act_dcf)
    np.testing.assert_array_equal(va.det.pfa, vb.det.pfa)
    np.testing.assert_array_equal(va.ape.actual, vb.ape.actual)
    assert va.d_prime == pytest.approx(vb.d_prime, rel=1e-9, abs=1e-12) or (
        math.isinf(va.d_prime) and va.d_prime == vb.d_prime
    )


def test_act_dcf_rejects_a_score_at_the_bayes_threshold():
    # P_target 0.5: the Bayes threshold is 0; LLRs exactly 0 are rejected (accept s > t):
    # the target at 0 is a miss, the non-target at 0 is not a false alarm
    tar, non = np.array([0.0, 2.0]), np.array([0.0, -2.0])
    r = dcf(tar, non, p_targets=[0.5], scores_are_llrs=True)
    assert r.act_dcf.tolist() == [0.5]  # (0.5 * 1/2 + 0.5 * 0) / 0.5
    s, t, _ = _matrix(tar, non)
    sp = SortedPools.from_matrix(s.astype(np.float32), t)
    assert dcf_from_pools(sp, p_targets=[0.5], scores_are_llrs=True).act_dcf.tolist() == [0.5]
    c = ape_curve_from_pools(sp, prior_log_odds=[0.0], scores_are_llrs=True)
    assert c.actual.tolist() == [0.5]


def test_score_matrix_cached_pools():
    rng = np.random.default_rng(3)
    s = rng.normal(size=(40, 30)).astype(np.float32)
    t = rng.integers(0, 30, 40)
    s[np.arange(40), t] += 2.0
    spk = [f"s{j}" for j in range(30)]
    sm = ScoreMatrix.from_arrays(
        s,
        trial_ids=[f"u{i}" for i in range(40)],
        trial_speakers=[spk[j] for j in t],
        enrol_speakers=spk,
    )
    v = verification_from_pools(SortedPools.of(sm), p_targets=PRIORS, scores_are_llrs=True)
    w = verification(sm.tar, sm.non, p_targets=PRIORS, scores_are_llrs=True)
    np.testing.assert_array_equal(v.dcf.min_dcf, w.dcf.min_dcf)
    np.testing.assert_array_equal(v.dcf.act_dcf, w.dcf.act_dcf)
    np.testing.assert_array_equal(v.det.pmiss, w.det.pmiss)
    assert v.d_prime == pytest.approx(w.d_prime, rel=1e-9)
    # the bundle's one shared threshold pass equals the single functions' own passes
    d = dcf(sm.tar, sm.non, p_targets=PRIORS, scores_are_llrs=True)
    np.testing.assert_array_equal(v.dcf.act_dcf, d.act_dcf)
    np.testing.assert_array_equal(
        v.ape.actual, ape_curve(sm.tar, sm.non, scores_are_llrs=True).actual
    )


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
