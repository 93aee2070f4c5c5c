"""DET curve, minDCF / actDCF, APE curve and d' (voxmetrics.metrics.dcf).

Hand-computed values, SpeechBrain's minDCF re-implemented, properties, and the sorted pools'
path against the former sort-both-pools code (``tests/reference_pooled.py``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import pairwise

import numpy as np
import pool_cases
import pytest
import reference_pooled as ref
from hypothesis import example, given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics.dcf import (
    ape_curve,
    ape_curve_from_pools,
    d_prime,
    dcf,
    dcf_from_pools,
    det_curve,
    operating_points,
    tar_at_far,
    verification,
    verification_from_pools,
)
from voxmetrics.metrics.eer import eer_rocch
from voxmetrics.metrics.pav import rocch
from voxmetrics.metrics.pools import SortedPools


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    forget_unimportable_modules()


# small integer-valued pools make ties frequent
pool = st.lists(st.integers(-4, 4).map(float), min_size=1, max_size=12)
prior = st.floats(0.001, 0.999)


def speechbrain_min_dcf(tar, non, c_miss=1.0, c_fa=1.0, p_target=0.01):
    """A faithful re-implementation of ``speechbrain.utils.metric_stats.minDCF`` (unnormalised).

    Its thresholds are the unique pooled scores and the midpoints between consecutive ones;
    P_miss = P(tar <= t), P_fa = P(non > t); it never visits ``t = -inf``. Exact arithmetic.
    """
    u = sorted({Fraction(x) for x in [*tar, *non]})
    thresholds = sorted(u + [(a + b) / 2 for a, b in pairwise(u)])
    best = None
    for t in thresholds:
        pm = Fraction(sum(Fraction(x) <= t for x in tar), len(tar))
        pf = Fraction(sum(Fraction(x) > t for x in non), len(non))
        c = Fraction(c_miss) * pm * Fraction(p_target) + Fraction(c_fa) * pf * (
            1 - Fraction(p_target)
        )
        best = c if best is None else min(best, c)
    return best


def ref_min_dcf(tar, non, p_target, c_miss=1.0, c_fa=1.0):
    """Normalised minDCF by the letter: SpeechBrain's thresholds plus t = -inf (accept all)."""
    p = Fraction(p_target)
    a, b = Fraction(c_miss) * p, Fraction(c_fa) * (1 - p)
    c = min(speechbrain_min_dcf(tar, non, c_miss, c_fa, p_target), b)  # -inf: P_fa = 1
    return c / min(a, b)


# ------------------------------------------------------------------------------------------
# hand-computed values
# ------------------------------------------------------------------------------------------


def test_operating_points_hand_computed():
    t, pm, pf = operating_points([1.0, 1.0, 3.0], [0.0, 1.0])
    assert t.tolist() == [-math.inf, 0.0, 1.0, 3.0]
    assert pm.tolist() == pytest.approx([0, 0, 2 / 3, 1])
    assert pf.tolist() == [1.0, 0.5, 0.0, 0.0]


def test_min_dcf_hand_computed():
    # tar = [0.6, 0.7, 0.8, 0.5] vs non = [0.4, 0.3, 0.2, 0.1] (SpeechBrain's docstring): 0
    r = dcf([0.6, 0.7, 0.8, 0.5], [0.4, 0.3, 0.2, 0.1])
    assert r.min_dcf.tolist() == [0.0, 0.0]
    # tar = [0], non = [1] at P = 0.01: reject all costs .01 (P_miss 1), accept all .99 -> 1.0
    r = dcf([0.0], [1.0], p_targets=[0.01, 0.5])
    assert r.min_dcf.tolist() == pytest.approx([1.0, 1.0])
    # tar = [1, 2, 3, 4], non = [0, 1.5]; P = 0.2, C_miss 1, C_fa 1:
    # t = 0: P_miss 0, P_fa 1/2 -> .8 * .5 = .4;  t = 1.5: P_miss 1/4, P_fa 0 -> .2 * .25 = .05
    # normalised by min(.2, .8) = .2 -> 0.25
    r = dcf([1.0, 2.0, 3.0, 4.0], [0.0, 1.5], p_targets=0.2)
    assert r.min_dcf.tolist() == pytest.approx([0.25])
    assert r.min_thresholds.tolist() == [1.5]
    # with C_miss = 10: a = 2, b = .8; t = 0 -> .4, t = 1.5 -> .5, accept all .8 -> .4 / .8
    r = dcf([1.0, 2.0, 3.0, 4.0], [0.0, 1.5], p_targets=0.2, c_miss=10.0)
    assert r.min_dcf.tolist() == pytest.approx([0.5])
    assert r.p_effective.tolist() == pytest.approx([2 / 2.8])


def test_act_dcf_hand_computed():
    # LLRs; P = 0.01: Bayes threshold ln(99) = 4.595; tar above it: 5 and 6; tar 1 missed
    # non above it: 5 of [-2, 0, 5] -> P_miss 1/3, P_fa 1/3
    # C = .01/3 + .99/3 = 1/3, normalised by .01 -> 33.33
    r = dcf([1.0, 5.0, 6.0], [-2.0, 0.0, 5.0], p_targets=0.01, scores_are_llrs=True)
    assert r.act_dcf.tolist() == pytest.approx([100 / 3])
    assert r.to_dict()["0.01"]["act_dcf"] == pytest.approx(100 / 3)
    # a score exactly at the threshold is not accepted (a tie counts against the attacker)
    r = dcf([0.0], [0.0], p_targets=0.5, scores_are_llrs=True)
    assert r.act_dcf.tolist() == [1.0]  # target at 0 missed: .5 * 1 / .5
    assert dcf([1.0], [0.0]).act_dcf is None


def test_dcf_keys_and_defaults():
    d = dcf([1.0, 2.0], [0.0, 1.5]).to_dict()
    assert list(d) == ["0.01", "0.001"]
    assert set(d["0.01"]) == {"min_dcf", "act_dcf"}


def test_d_prime_hand_computed():
    # means 3 and 1; population variances 2/3 and 2/3 -> d' = 2 / sqrt(2/3)
    assert d_prime([2.0, 3.0, 4.0], [0.0, 1.0, 2.0]) == pytest.approx(2 / math.sqrt(2 / 3))
    assert d_prime([0.0, 2.0], [1.0, 3.0]) == pytest.approx(-1.0)
    with pytest.warns(DegenerateDataWarning):
        assert d_prime([1.0], [0.0]) == math.inf
    with pytest.warns(DegenerateDataWarning):
        assert d_prime([1.0], [1.0]) == 0.0


def test_det_curve_and_thinning():
    rng = np.random.default_rng(0)
    tar, non = rng.normal(2, 1, 300), rng.normal(0, 1, 3000)
    full = det_curve(tar, non)
    assert full.n_points == 3301
    # the corners only: -inf, the 300 targets and the highest non-target below each / overall
    t, pm, pf = operating_points(tar, non)
    below = np.searchsorted(np.sort(non), np.sort(tar))
    n_cells = np.unique(below[below > 0]).size + int(non.max() > tar.max())
    assert full.pmiss.size == 1 + 300 + n_cells < 3301
    pos = np.searchsorted(t, full.thresholds)
    np.testing.assert_array_equal(t[pos], full.thresholds)
    np.testing.assert_array_equal(pm[pos], full.pmiss)
    np.testing.assert_array_equal(pf[pos], full.pfa)
    thin = det_curve(tar, non, max_points=100)
    assert 90 <= thin.pmiss.size <= 100 and thin.n_points == 3301
    # an exact subset of the operating points
    pos = np.searchsorted(full.thresholds, thin.thresholds)
    np.testing.assert_array_equal(full.pmiss[pos], thin.pmiss)
    np.testing.assert_array_equal(full.pfa[pos], thin.pfa)
    assert thin.pmiss[0] == 0.0 and thin.pfa[0] == 1.0
    assert thin.pmiss[-1] == 1.0 and thin.pfa[-1] == 0.0
    assert np.isin(thin.thresholds, full.thresholds).all()
    d = thin.to_dict()
    assert d["thresholds"][0] is None and len(d["pmiss"]) == thin.pmiss.size


def test_ape_curve_hand_computed():
    # one target at 0, one non-target at 0 (identical pools): no threshold beats the prior
    c = ape_curve([0.0], [0.0], prior_log_odds=[-2.0, 0.0, 2.0], scores_are_llrs=True)
    assert c.minimum.tolist() == pytest.approx([1.0, 1.0, 1.0])
    # as LLRs (0): at plo -2 the Bayes threshold 2 rejects all: error P / min(P, 1-P) = 1;
    # at plo 2 threshold -2 accepts all: (1-P) / (1-P) = 1; at plo 0 threshold 0 rejects: 1
    assert c.actual.tolist() == pytest.approx([1.0, 1.0, 1.0])
    # well-calibrated but uncertain LLRs: tar = [1], non = [-1] -> separable, actual 0 at 0
    c = ape_curve([1.0], [-1.0], prior_log_odds=[0.0, 3.0], scores_are_llrs=True)
    assert c.minimum.tolist() == [0.0, 0.0]
    # plo 3 -> threshold -3: non at -1 accepted: (1-P) * 1 / (1 - P) = 1
    assert c.actual.tolist() == pytest.approx([0.0, 1.0])
    with pytest.raises(VoxMetricsInputError):
        ape_curve([1.0], [0.0], prior_log_odds=[math.nan])


def test_bad_priors_and_costs():
    for bad in ([0.0], [1.0], [], [0.5, 2.0]):
        with pytest.raises(VoxMetricsInputError, match="p_target"):
            dcf([1.0], [0.0], p_targets=bad)
    with pytest.raises(VoxMetricsInputError, match="c_miss"):
        dcf([1.0], [0.0], c_miss=0.0)
    with pytest.raises(VoxMetricsInputError, match="tar"):
        dcf([], [0.0])


# ------------------------------------------------------------------------------------------
# against SpeechBrain and the references
# ------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(tar=pool, non=pool, p=st.sampled_from([0.5, 0.2, 0.01, 0.001, 0.9]))
def test_min_dcf_equals_reference(tar, non, p):
    got = dcf(tar, non, p_targets=p).min_dcf[0]
    assert got == pytest.approx(float(ref_min_dcf(tar, non, p)), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("p_target", [0.01, 0.05, 0.5])
def test_min_dcf_matches_speechbrain(seed, p_target):
    torch = pytest.importorskip("torch")
    metric_stats = pytest.importorskip("speechbrain.utils.metric_stats")
    rng = np.random.default_rng(seed)
    tar, non = rng.normal(1.5, 1, 40).round(2), rng.normal(0, 1, 300).round(2)
    sb, _ = metric_stats.minDCF(
        torch.tensor(tar), torch.tensor(non), c_miss=1.0, c_fa=1.0, p_target=p_target
    )
    norm = min(p_target, 1 - p_target)
    ours = dcf(tar, non, p_targets=p_target).min_dcf[0]
    # SpeechBrain is unnormalised and never tries "accept all" (cost 1 - P here)
    assert ours == pytest.approx(min(sb, 1 - p_target) / norm, abs=1e-5)
    assert ours == pytest.approx(float(ref_min_dcf(tar, non, p_target)), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(tar=pool, non=pool, p=prior)
def test_min_dcf_equals_min_over_rocch_and_ape(tar, non, p):
    """The minimum over all operating points is reached on the ROC convex hull."""
    r = dcf(tar, non, p_targets=p)
    curve = det_curve(tar, non)
    hull = np.min(p * curve.rocch_pmiss + (1 - p) * curve.rocch_pfa) / min(p, 1 - p)
    assert r.min_dcf[0] == pytest.approx(min(hull, 1.0), abs=1e-12)
    ape = ape_curve(tar, non, prior_log_odds=[math.log(p / (1 - p))])
    assert ape.minimum[0] == pytest.approx(r.min_dcf[0], abs=1e-9)
    assert 0.0 <= r.min_dcf[0] <= 1.0


@settings(max_examples=100, deadline=None)
@given(tar=pool, non=pool)
def test_ape_minimum_peak_is_rocch_eer(tar, non):
    """max over priors of the (unnormalised) minimum Bayes error is the ROCCH-EER."""
    plo = np.linspace(-12, 12, 4801)
    c = ape_curve(tar, non, prior_log_odds=plo)
    p = 1 / (1 + np.exp(-plo))
    ber = c.minimum * np.minimum(p, 1 - p)
    assert ber.max() <= eer_rocch(tar, non) + 1e-12
    assert ber.max() == pytest.approx(eer_rocch(tar, non), abs=2e-3)


@settings(max_examples=100, deadline=None)
@given(tar=pool, non=pool, p=prior, shift=st.floats(-3, 3), scale=st.floats(0.1, 5))
def test_invariances(tar, non, p, shift, scale):
    """minDCF and the DET curve depend only on the order; d' is affine-invariant."""
    a = dcf(tar, non, p_targets=p).min_dcf[0]
    t2, n2 = np.exp(np.asarray(tar) / 4), np.exp(np.asarray(non) / 4)
    assert dcf(t2, n2, p_targets=p).min_dcf[0] == pytest.approx(a, abs=1e-12)
    c1, c2 = det_curve(tar, non), det_curve(t2, n2)
    np.testing.assert_array_equal(c1.pmiss, c2.pmiss)
    np.testing.assert_array_equal(c1.pfa, c2.pfa)
    if np.var(tar) + np.var(non) > 0:
        d = d_prime(tar, non)
        t3, n3 = np.asarray(tar) * scale + shift, np.asarray(non) * scale + shift
        assert d_prime(t3, n3) == pytest.approx(d, rel=1e-9, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(tar=pool, non=pool, plo=st.floats(-6, 6).filter(lambda x: abs(x - round(x)) > 1e-6))
def test_act_dcf_at_least_min_dcf(tar, non, plo):
    """The actual cost of any scores as LLRs is never below the minimum (same prior).

    The log-odds stay off the integer scores: a prior given as P or as logit(P) may round the
    threshold to either side of a tied score.
    """
    p = 1 / (1 + math.exp(-plo))
    if not 0 < p < 1:
        return
    r = dcf(tar, non, p_targets=p, scores_are_llrs=True)
    assert r.act_dcf[0] >= r.min_dcf[0] - 1e-12
    c = ape_curve(tar, non, prior_log_odds=[plo], scores_are_llrs=True)
    assert c.actual[0] == pytest.approx(r.act_dcf[0], rel=1e-9, abs=1e-12)


def test_identical_and_separated_pools():
    x = [0.0, 1.0, 2.0, 2.0]
    assert dcf(x, x).min_dcf.tolist() == [1.0, 1.0]
    assert dcf([3.0, 4.0], x).min_dcf.tolist() == [0.0, 0.0]


def test_verification_bundle():
    v = verification([1.0, 3.0], [0.0, 2.0], scores_are_llrs=True)
    d = v.to_dict()
    assert set(d) == {"dcf", "d_prime"}
    assert d["dcf"]["0.01"]["act_dcf"] is not None
    assert v.ape.actual is not None and v.det.n_points == 5


@settings(max_examples=200, deadline=None)
@given(tar=pool, non=pool)
def test_rocch_equals_pav_rocch(tar, non):
    """The hull from the cost candidates equals the PAV-based BOSARIS rocch."""
    c = det_curve(tar, non)
    pmiss, pfa = rocch(tar, non)
    np.testing.assert_allclose(c.rocch_pmiss, pmiss, atol=1e-12)
    np.testing.assert_allclose(c.rocch_pfa, pfa, atol=1e-12)
    t, pm, pf = operating_points(tar, non)
    assert c.n_points == t.size
    pos = np.searchsorted(t, c.thresholds)  # the corners are operating points
    np.testing.assert_array_equal(pf[pos], c.pfa)
    np.testing.assert_array_equal(pm[pos], c.pmiss)


@settings(max_examples=150, deadline=None)
@given(tar=pool, non=pool, p=prior)
def test_min_threshold_is_the_lowest_reaching_the_minimum(tar, non, p):
    r = dcf(tar, non, p_targets=p)
    t, pm, pf = operating_points(tar, non)
    cost = (p * pm + (1 - p) * pf) / min(p, 1 - p)
    best = np.flatnonzero(np.isclose(cost, cost.min(), rtol=0, atol=1e-12))[0]
    assert r.min_thresholds[0] == t[best]


def brute_tar_at_far(tar, non, f):
    """The TAR at FAR f over every operating point, by a loop (the definition)."""
    t, pm, pf = operating_points(tar, non)
    best = None
    for k in range(t.size):
        if Fraction(pf[k]).limit_denominator(10**6) <= Fraction(f) and (
            best is None or 1 - pm[k] > best[0]
        ):
            best = (1 - pm[k], pf[k], t[k])
    return best


@settings(max_examples=200, deadline=None)
@given(tar=pool, non=pool, f=st.sampled_from([0.0, 0.01, 0.1, 0.25, 0.5, 0.999]))
def test_tar_at_far_is_the_best_operating_point_within_the_far(tar, non, f):
    r = tar_at_far(tar, non, far_levels=[f])
    want_tar, _, _ = brute_tar_at_far(tar, non, f)
    assert r.tar[0] == pytest.approx(want_tar, abs=1e-12)
    assert r.far[0] <= f
    # the threshold reported gives that operating point (accept scores above it)
    thr = r.thresholds[0]
    assert np.mean(np.asarray(tar) > thr) == pytest.approx(r.tar[0], abs=1e-12)
    assert np.mean(np.asarray(non) > thr) == pytest.approx(r.far[0], abs=1e-12)


def test_tar_at_far_levels_and_bad_levels():
    r = tar_at_far([1.0, 2.0, 3.0], [0.0, 0.5, 2.5])
    assert r.to_dict() == {"0.01": pytest.approx(1 / 3), "0.001": pytest.approx(1 / 3)}
    assert verification([1.0, 3.0], [0.0, 2.0]).tar_at_far.to_dict() == {
        "0.01": 0.5,
        "0.001": 0.5,
    }
    for bad in ([1.0], [-0.1], []):
        with pytest.raises(VoxMetricsInputError, match="FAR levels"):
            tar_at_far([1.0], [0.0], far_levels=bad)


# --------------------------------------------------------------------------------------------
# The sorted pools equal the former sort-both-pools code
# --------------------------------------------------------------------------------------------


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
