"""Logistic-regression calibration and linear fusion (voxmetrics.metrics.calibration).

The fit is checked by what defines it: at the returned weights and offset the gradient of the
prior-weighted cross-entropy (BOSARIS' ``train_linear_fusion``) vanishes and its value is the
reported cost; a positive affine change of the scores gives the same LLRs; scores drawn so that
their true LLR is known get those weights; the thinning of large pools is a seeded draw.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics import calibration
from voxmetrics.metrics.calibration import LinearCalibration, fit_calibration, fit_fusion

# overlapping pools (0.5 and 1.0 among the targets lie below 1.0 and 1.5 among the
# non-targets): the optimum is finite
TAR = [2.0, 3.0, 0.5, 1.0, 2.5]
NON = [0.0, -1.0, 1.0, 1.5, -0.5, 0.2]


def _cost_and_gradient(tars, nons, weights, offset, prior):
    """C(w, b) in nats and its gradient (w, then b), written from the module's formula."""
    xt = np.stack([np.asarray(x, float) for x in tars], axis=1)
    xn = np.stack([np.asarray(x, float) for x in nons], axis=1)
    logit = math.log(prior / (1 - prior))
    lt = xt @ np.asarray(weights) + offset + logit
    ln = xn @ np.asarray(weights) + offset + logit
    wt, wn = prior / len(xt), (1 - prior) / len(xn)
    cost = wt * np.logaddexp(0, -lt).sum() + wn * np.logaddexp(0, ln).sum()
    gt, gn = -wt * expit(-lt), wn * expit(ln)
    return float(cost), np.concatenate([xt.T @ gt + xn.T @ gn, [gt.sum() + gn.sum()]])


def test_apply_is_the_weighted_sum_plus_the_offset():
    c = LinearCalibration(weights=(2.0, -1.0), offset=0.5)
    # 2 * 1 - 1 * 3 + .5 = -0.5 ; 2 * 2 - 1 * 0 + .5 = 4.5
    assert c.apply([1.0, 2.0], [3.0, 0.0]).tolist() == [-0.5, 4.5]
    assert c.apply(np.zeros((2, 2)), np.ones((2, 2))).shape == (2, 2)
    with pytest.raises(VoxMetricsInputError, match=r"combines 2 system\(s\), got 1"):
        c.apply([1.0, 2.0])


def test_to_dict_names_the_cost_in_bits():
    c = LinearCalibration(weights=(2.0,), offset=-1.0, prior=0.2, cost=0.5)
    assert c.to_dict() == {"weights": [2.0], "offset": -1.0, "prior": 0.2, "cost_bits": 0.5}
    assert LinearCalibration(weights=(1.0,), offset=0.0).to_dict()["cost_bits"] is None


@pytest.mark.parametrize("prior", [0.5, 0.1, 0.9])
def test_calibration_is_the_minimum_of_the_weighted_cross_entropy(prior):
    c = fit_calibration(TAR, NON, prior=prior)
    assert c.prior == prior and len(c.weights) == 1 and c.weights[0] > 0
    cost, grad = _cost_and_gradient([TAR], [NON], c.weights, c.offset, prior)
    np.testing.assert_allclose(grad, 0.0, atol=1e-5)  # a stationary point of a convex cost
    assert c.cost == pytest.approx(cost / math.log(2.0), rel=1e-9)  # reported in bits
    # and a minimum: moving either parameter costs more
    for dw, db in ((0.05, 0), (-0.05, 0), (0, 0.05), (0, -0.05)):
        moved, _ = _cost_and_gradient([TAR], [NON], [c.weights[0] + dw], c.offset + db, prior)
        assert moved > cost


def test_a_positive_affine_change_of_the_scores_gives_the_same_llrs():
    c = fit_calibration(TAR, NON)
    d = fit_calibration(3.0 * np.array(TAR) - 7.0, 3.0 * np.array(NON) - 7.0)
    assert d.weights[0] == pytest.approx(c.weights[0] / 3.0, rel=1e-5)
    x = np.linspace(-2.0, 4.0, 7)
    np.testing.assert_allclose(d.apply(3.0 * x - 7.0), c.apply(x), rtol=1e-5, atol=1e-5)


def test_fusion_recovers_the_true_llr_of_two_gaussian_systems():
    # targets ~ N(mu, I), non-targets ~ N(-mu, I) in two dimensions: the LLR of x is
    # ln N(x; mu, I) - ln N(x; -mu, I) = 2 mu . x, so weights 2 mu = (1, 2) and offset 0
    rng = np.random.default_rng(0)
    mu = np.array([0.5, 1.0])
    xt = rng.normal(size=(40_000, 2)) + mu
    xn = rng.normal(size=(40_000, 2)) - mu
    c = fit_fusion([xt[:, 0], xt[:, 1]], [xn[:, 0], xn[:, 1]])
    np.testing.assert_allclose(c.weights, [1.0, 2.0], atol=0.05)
    assert abs(c.offset) < 0.05
    _, grad = _cost_and_gradient(
        [xt[:, 0], xt[:, 1]], [xn[:, 0], xn[:, 1]], c.weights, c.offset, 0.5
    )
    np.testing.assert_allclose(grad, 0.0, atol=1e-5)


def test_large_pools_are_thinned_by_a_seeded_draw(monkeypatch):
    monkeypatch.setattr(calibration, "MAX_FIT_SCORES", 50)
    rng = np.random.default_rng(1)
    tar, non = rng.normal(1.0, 1.0, 200), rng.normal(-1.0, 1.0, 120)
    thinned = fit_calibration(tar, non, seed=3)
    assert fit_calibration(tar, non, seed=3) == thinned  # reproducible
    assert fit_calibration(tar, non, seed=4) != thinned  # another draw
    # the fit on the draw itself: the targets' 50 rows first, then the non-targets', sorted
    draw = np.random.default_rng(3)
    keep_t = np.sort(draw.choice(200, 50, replace=False))
    keep_n = np.sort(draw.choice(120, 50, replace=False))
    assert fit_calibration(tar[keep_t], non[keep_n], seed=99) == thinned
    # pools at the cap are not thinned: any seed, the same fit
    assert fit_calibration(tar[:50], non[:50], seed=1) == fit_calibration(tar[:50], non[:50])


@pytest.mark.parametrize(
    ("tars", "nons", "kw", "message"),
    [
        ([TAR], [NON], {"prior": 1.0}, r"the calibration prior must be in \(0, 1\), got 1\.0\."),
        ([TAR], [NON], {"prior": 0.0}, r"the calibration prior must be in \(0, 1\)"),
        ([[1.0, np.nan]], [NON], {}, r"calibration: the target scores must be finite numbers\."),
        ([TAR], [[0.0, np.inf]], {}, r"the non-target scores must be finite numbers"),
        ([[]], [NON], {}, r"fusion: the target scores of every system must be the same non-emp"),
        ([TAR, TAR[:2]], [NON, NON], {}, r"the target scores of every system must be the same"),
        ([], [], {}, r"fusion: the target scores of every system must be the same non-empty"),
        ([TAR, TAR], [NON], {}, r"fusion: give target and non-target scores of every system\."),
    ],
)
def test_bad_input_is_one_clear_message(tars, nons, kw, message):
    with pytest.raises(VoxMetricsInputError, match=message):
        fit_fusion(tars, nons, **kw)
