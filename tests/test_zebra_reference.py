"""ZEBRA against faithful re-typings of the ZEBRA reference code (Nautsch et al. 2020).

The reference code (the ZEBRA repository of Nautsch et al., LGPLv3) computes its numbers in
``PriorLogOddsPlots.set_system`` (file ``plo_plots.py``) from functions of ``helpers.py``:

* D_ECE (``get_delta_ECE``) and the minimum-ECE profile (``minECE = ece(classA_llr, ...)``)
  from ``rocch_pava(tar, non, laplace=False)`` then ``optimal_llr_from_Popt``: the scores are
  concatenated as ``[tar, non]`` and sorted by a stable mergesort, so at equal scores the
  targets come first;
* the worst case (``max_abs_LLR`` of ``classA_llr_laplace`` / ``classB_llr_laplace``) from
  ``optimal_llr(tar, non, laplace=True)``: concatenated as ``[non, tar]``, so non-targets
  come first at equal scores.

The functions below re-type those (``_pavx`` for ``helpers.pavx``, ``_rocch_pava`` for
``helpers.rocch_pava``, ``_optimal_llr_from_popt`` for ``helpers.optimal_llr_from_Popt``,
``_optimal_llr`` for ``helpers.optimal_llr``, ``_ece`` for ``helpers.ece`` / ``zebra.ece``,
``_delta_ece`` for ``PriorLogOddsPlots.get_delta_ECE``), keeping the reference code's
``monotonicity_epsilon`` (1e-6 spread over the sorted LLRs): the tolerances below (1e-6)
absorb it.
"""

from __future__ import annotations

import math

import numpy as np
import pool_cases
import pytest
from hypothesis import given, settings

from voxmetrics.metrics import zebra
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.metrics.zebra import (
    ece_curves,
    pav_transform,
    pav_transform_from_pools,
    zebra_bootstrap,
)

EPS = 1e-6  # the reference code's monotonicity_epsilon
PLO = np.linspace(-10, 10, 201)  # PriorLogOddsPlots' default prior log-odds


def _pavx(y):
    """``helpers.pavx``: pool-adjacent-violators; returns (ghat, width)."""
    blocks = []  # [mean, width]
    for v in y:
        blocks.append([float(v), 1])
        while len(blocks) > 1 and blocks[-2][0] >= blocks[-1][0]:
            m, w = blocks.pop()
            nw = blocks[-1][1] + w
            blocks[-1][0] += (w / nw) * (m - blocks[-1][0])
            blocks[-1][1] = nw
    ghat = np.concatenate([np.full(w, m) for m, w in blocks])
    return ghat, np.array([w for _, w in blocks])


def _logit(p):
    """``helpers.logit``: log(p / (1 - p)), +-inf at 1 and 0."""
    out = np.zeros(p.shape)
    f = (p > 0) & (p < 1)
    out[f] = np.log(p[f] / (1 - p[f]))
    out[p == 0] = -np.inf
    out[p == 1] = np.inf
    return out


def _rocch_pava(tar, non):
    """``helpers.rocch_pava(tar, non, laplace=False)``: (Popt, perturb); targets first at ties."""
    scores = np.concatenate((tar, non))
    p_ideal = np.concatenate((np.ones(len(tar)), np.zeros(len(non))))
    perturb = np.argsort(scores, kind="mergesort")
    popt, _ = _pavx(p_ideal[perturb])
    return popt, perturb


def _optimal_llr_from_popt(popt, perturb, n_tar, n_non):
    """``helpers.optimal_llr_from_Popt``: LLRs of [tar, non] in input order."""
    n = n_tar + n_non
    llrs = _logit(popt) - np.log(n_tar / n_non) + np.arange(n) * EPS / n
    idx_reverse = np.zeros(n, dtype=int)
    idx_reverse[perturb] = np.arange(n)
    back = llrs[idx_reverse]
    return back[:n_tar], back[n_tar:]


def _optimal_llr(tar, non, laplace):
    """``helpers.optimal_llr``: [non, tar] concatenated, so non-targets first at ties."""
    scores = np.concatenate([non, tar])
    p_ideal = np.concatenate([np.zeros(len(non)), np.ones(len(tar))])
    perturb = np.argsort(scores, kind="mergesort")
    y = p_ideal[perturb]
    if laplace:
        y = np.hstack([1, 0, y, 1, 0])
    popt, _ = _pavx(y)
    if laplace:
        popt = popt[2:-2]
    n = len(tar) + len(non)
    llrs = _logit(popt) - np.log(len(tar) / len(non)) + np.arange(n) * EPS / n
    idx_reverse = np.zeros(n, dtype=int)
    idx_reverse[perturb] = np.arange(n)
    return llrs[idx_reverse][len(non) :], llrs[idx_reverse][: len(non)]


def _ece(tar, non, plo):
    """``ece(tar, non, plo)`` of the reference code (bits)."""
    out = np.zeros(plo.shape)
    for i, p in enumerate(plo):
        out[i] = (1 / (1 + np.exp(-p))) * np.logaddexp(0, -(tar + p)).mean()
        out[i] += (1 / (1 + np.exp(p))) * np.logaddexp(0, non + p).mean()
    return out / np.log(2)


def _int_ece(x, epsilon=1e-6):
    """``get_delta_ECE``'s inner ``int_ece``: mean Z(e^x) (Z(inf) = 1/4, Z = 0 near 0)."""
    idx = ~np.isinf(x) & (np.abs(x) > epsilon)
    contrib = np.zeros(len(x))
    lrm1 = np.expm1(x[idx])
    contrib[idx] = (x[idx] - lrm1) / lrm1**2
    contrib[np.abs(x) <= epsilon] = -0.5
    return 0.25 + contrib.mean() / 2


def reference(tar, non):
    """(D_ECE, minimum ECE on PLO, log10 l) as ``PriorLogOddsPlots`` computes them."""
    tar, non = np.asarray(tar, float), np.asarray(non, float)
    popt, perturb = _rocch_pava(tar, non)
    a, b = _optimal_llr_from_popt(popt, perturb, len(tar), len(non))
    d_ece = (_int_ece(a) + _int_ece(-b)) / np.log(2)
    a_lap, b_lap = _optimal_llr(tar, non, laplace=True)
    log10_l = np.abs(np.hstack((a_lap, b_lap))).max() / np.log(10)
    return d_ece, _ece(a, b, PLO), log10_l


def _check(tar, non):
    d_ece, min_ece, log10_l = reference(tar, non)
    r = zebra(tar, non)
    assert r.d_ece == pytest.approx(d_ece, abs=1e-6)
    assert r.log10_l == pytest.approx(log10_l, abs=1e-6)
    np.testing.assert_allclose(ece_curves(tar, non).minimum, min_ece, atol=1e-6)
    return r


# --- the cases of the issue, with the reference code's values ------------------------------


@pytest.mark.parametrize(
    "values", [[0.3], [1.0, 2.0, 3.0], [5.0, 5.0, -1.0, 2.5], list(np.linspace(-1, 1, 17))]
)
def test_two_identical_pools_disclose_nothing_on_average(values):
    other = np.random.default_rng(len(values)).permutation(values)
    r = _check(np.array(values), other)
    assert r.d_ece == 0.0  # exactly: every PAV LLR is 0 (targets first at each tie)
    np.testing.assert_allclose(ece_curves(values, other).minimum, ece_curves([0.0], [0.0]).minimum)
    # the worst case keeps the Laplace order (non-targets first): the ties still disclose
    assert r.log10_l > 0.0
    # the attacker's tie rule puts non-targets first for D_ECE too
    assert zebra(values, other, ties="attacker").d_ece > 0.0


@pytest.mark.parametrize(("n_tar", "n_non"), [(1, 1), (4, 6), (30, 7)])
def test_all_equal_scores_give_zero_expected_disclosure(n_tar, n_non):
    r = _check(np.full(n_tar, 0.5), np.full(n_non, 0.5))
    assert r.d_ece == 0.0
    assert zebra(np.full(n_tar, 0.5), np.full(n_non, 0.5), ties="attacker").d_ece == (
        pytest.approx(1 / (2 * math.log(2)))
    )


def test_integer_rounded_gaussian_scores():
    rng = np.random.default_rng(0)
    tar = np.round(rng.normal(1.0, 1.0, 300))
    non = np.round(rng.normal(0.0, 1.0, 900))
    r = _check(tar, non)
    # the reference code's D_ECE, not the 0.354 of non-targets first
    assert r.d_ece == pytest.approx(0.119755, abs=1e-6)
    assert zebra(tar, non, ties="attacker").d_ece == pytest.approx(0.353653, abs=1e-6)


def test_separated_and_partly_tied_pools():
    _check(np.array([4.0, 5.0, 6.0]), np.array([1.0, 2.0, 3.0]))
    r = _check(np.array([1.0, 2.0, 2.0, 3.0]), np.array([0.0, 1.0, 2.0, 2.0]))
    assert r.d_ece == pytest.approx(0.180337, abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(pool_cases.pools(n_max=15))
def test_zebra_equals_reference_code(tn):
    tar, non = (a.astype(np.float64) for a in tn)
    _check(tar, non)


# --- the same orders in the bootstrap and the PAV transform --------------------------------


def test_bootstrap_full_estimate_uses_the_reference_orders():
    scores = np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 2.0], [0.0, 1.0, 1.0]])
    targets = np.array([0, 1, 2])
    out = zebra_bootstrap(scores, targets, ["a", "b", "c"], n_boot=20, seed=1)
    own = np.zeros(scores.shape, bool)
    own[np.arange(3), targets] = True
    d_ece, _, log10_l = reference(scores[own], scores[~own])
    assert out["d_ece"].estimate == pytest.approx(d_ece, abs=1e-6)
    assert out["log10_l"].estimate == pytest.approx(log10_l, abs=1e-6)


def test_pav_transform_gives_a_tied_score_one_llr_without_laplace():
    t = pav_transform([1.0, 2.0, 2.0], [0.0, 2.0, 2.0])
    # labels 0 | 1 | 1 1 0 0 (targets first at 2.0): the last five pool to P = 3/5, so 1.0 and
    # 2.0 (its targets and its non-targets) share LLR = logit(3/5) - ln(3/3) = ln 1.5
    assert t.scores.tolist() == [0.0, 1.0, 2.0]
    np.testing.assert_allclose(t.llr, [-math.inf, math.log(1.5), math.log(1.5)], rtol=1e-12)
    sp = SortedPools.from_pools([1.0, 2.0, 2.0], [0.0, 2.0, 2.0])
    u = pav_transform_from_pools(sp)
    k = np.searchsorted(u.scores, t.scores)
    assert u.llr[k].tolist() == t.llr.tolist()
    assert u.llr_laplace[k].tolist() == t.llr_laplace.tolist()
