"""DET curve, minDCF / actDCF, APE curve and d' (voxmetrics.metrics.dcf)."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules

from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics.dcf import (
    ape_curve,
    d_prime,
    dcf,
    det_curve,
    operating_points,
    tar_at_far,
    verification,
)
from voxmetrics.metrics.eer import eer_rocch
from voxmetrics.metrics.pav import rocch


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
