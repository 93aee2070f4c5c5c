"""LID calibration (steps 1-2): row z-norm, the variants, the fit of w and b.

Moved from the former tests/test_lid.py (its sections 2-4). The calibration is cross-checked
against a Newton-Raphson logistic fit written below and against scikit-learn; separable dev
pools get the stated cap. Reference values are re-derived from the functions and the formulas,
never re-typed from a run.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.special import expit, softmax
from sklearn.linear_model import LogisticRegression

from tests.metrics.lid.lid_cases import (
    GRID,
    ML,
    PROPS,
    matrices,
    quiet_calibrate,
    quiet_lid,
    reference_row_znorm,
    row_affine_maps,
    row_pass_matrices,
    shifted_normal,
)
from voxmetrics._types import DEFAULT_LID_VARIANT
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics.lid import (
    LID_VARIANTS,
    W_MAX,
    LIDCalibration,
    calibrate_lid,
    calibration_curve,
    lid,
    log_posteriors,
    pooled_calibration_curve,
    resolve_lid_variant,
    row_znorm,
)


def overlapping(scores, targets, margin=1e-3):
    """Whether the dev pools overlap in both directions, so the logistic MLE exists."""
    z, deg = row_znorm(scores)
    y = np.zeros(z.shape, dtype=bool)
    y[np.arange(z.shape[0]), targets] = True
    zm, zn = z[~deg][y[~deg]], z[~deg][~y[~deg]]
    if zm.size == 0:
        return False
    return zm.max() > zn.min() + margin and zm.min() < zn.max() - margin


@PROPS
@given(dev=matrices(elements=GRID), data=st.data())
def test_calibration_invariant_to_positive_affine_map_of_each_dev_row(dev, data):
    dev_s, dev_t = dev
    # the logistic MLE exists only when the pools overlap both ways (else w is unbounded)
    assume(overlapping(dev_s, dev_t))
    a, c = data.draw(row_affine_maps(dev_s.shape[0]))
    cal = quiet_calibrate(dev_s, dev_t)
    cal_mapped = quiet_calibrate(a * dev_s + c, dev_t)
    assert cal.converged and cal_mapped.converged
    assert cal_mapped.w == pytest.approx(cal.w, rel=1e-8, abs=1e-8)
    assert cal_mapped.b == pytest.approx(cal.b, rel=1e-8, abs=1e-8)
    assert cal_mapped.n_pairs == cal.n_pairs
    eval_s, eval_t = data.draw(matrices(elements=GRID, n=dev_s.shape[1]))
    np.testing.assert_allclose(
        quiet_lid(eval_s, eval_t, cal_mapped).lid,
        quiet_lid(eval_s, eval_t, cal).lid,
        rtol=0,
        atol=1e-8,
    )


def test_degenerate_dev_rows_are_left_out_of_the_calibration():
    rng = np.random.default_rng(3)
    dev = rng.normal(size=(30, 6))
    dev_t = rng.integers(0, 6, size=30)
    with_const = np.vstack([dev, np.full((4, 6), 0.25)])
    with pytest.warns(DegenerateDataWarning, match="4 dev trial"):
        cal = calibrate_lid(with_const, np.concatenate([dev_t, [0, 1, 2, 3]]))
    clean = calibrate_lid(dev, dev_t)
    assert cal.n_pairs == clean.n_pairs == 30 * 6
    assert cal.w == pytest.approx(clean.w, rel=1e-12) and cal.b == pytest.approx(clean.b, rel=1e-12)
    with pytest.raises(VoxMetricsInputError, match="nothing to calibrate"):
        calibrate_lid(np.ones((3, 4)), [0, 1, 2])


# --------------------------------------------------------------------------------------------
# 3. The calibration against a Newton-Raphson reference and scikit-learn
# --------------------------------------------------------------------------------------------


def pairs(scores, targets, ddof=0):
    """The flattened (z, y) pairs of metrics.md section 2 step 2, degenerate rows left out."""
    z, deg = row_znorm(scores, ddof=ddof)
    y = np.zeros(z.shape)
    y[np.arange(z.shape[0]), targets] = 1.0
    return z[~deg].ravel(), y[~deg].ravel()


def newton_logistic(z, y, sample_weight=None, max_iter=200):
    """Reference: maximise sum sw [y log p + (1-y) log(1-p)], p = expit(w z + b), by Newton.

    Plain Newton-Raphson in float64 from (0, 0), with step halving only if the
    log-likelihood would drop (a safeguard, not needed on the demo data).
    """
    x = np.column_stack([z, np.ones_like(z)])
    sw = np.ones_like(z) if sample_weight is None else sample_weight

    def loglik(beta):
        eta = x @ beta
        return float(np.sum(sw * (y * -np.logaddexp(0, -eta) + (1 - y) * -np.logaddexp(0, eta))))

    beta = np.zeros(2)
    for _ in range(max_iter):
        p = expit(x @ beta)
        grad = x.T @ (sw * (y - p))
        hess = (x * (sw * p * (1 - p))[:, None]).T @ x
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while loglik(beta + t * step) < loglik(beta) - 1e-9 and t > 1e-6:
            t /= 2
        beta = beta + t * step
        if np.max(np.abs(t * step)) < 1e-13 * max(1.0, np.max(np.abs(beta))):
            return float(beta[0]), float(beta[1])
    raise AssertionError("reference Newton did not converge")


def balanced_weights(y):
    # scikit-learn's "balanced": n_samples / (n_classes * count of the sample's class)
    n1 = y.sum()
    n0 = y.size - n1
    return np.where(y == 1, y.size / (2 * n1), y.size / (2 * n0))


CONDITIONS = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize("name", CONDITIONS)
def test_calibration_matches_newton_reference_and_sklearn(demo, name, class_weight):
    dev = demo.get(name).dev
    cal = calibrate_lid(dev.scores, dev.targets, class_weight=class_weight)
    assert cal.converged and cal.class_weight == class_weight
    z, y = pairs(dev.scores, dev.targets)
    sw = balanced_weights(y) if class_weight == "balanced" else None
    w_ref, b_ref = newton_logistic(z, y, sw)
    assert cal.w == pytest.approx(w_ref, rel=1e-6, abs=1e-6)
    assert cal.b == pytest.approx(b_ref, rel=1e-6, abs=1e-6)
    sk = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000, class_weight=class_weight)
    sk.fit(z[:, None], y.astype(int))
    assert cal.w == pytest.approx(float(sk.coef_[0, 0]), rel=1e-5, abs=1e-5)
    assert cal.b == pytest.approx(float(sk.intercept_[0]), rel=1e-5, abs=1e-5)
    n_trials, n = dev.scores.shape
    assert cal.n_pairs == n_trials * n
    assert cal.prior_log_odds == pytest.approx(math.log(1 / (n - 1)), rel=1e-15)


@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize("name", CONDITIONS)
def test_sample_sd_rescales_z_and_w_but_not_lid(demo, name, class_weight):
    cond = demo.get(name)
    dev, ev = cond.dev, cond.eval
    n = dev.scores.shape[1]
    factor = math.sqrt((n - 1) / n)
    z0, _ = row_znorm(dev.scores, ddof=0)
    z1, _ = row_znorm(dev.scores, ddof=1)
    np.testing.assert_allclose(z1, z0 * factor, rtol=1e-12, atol=1e-14)
    cal0 = calibrate_lid(dev.scores, dev.targets, class_weight=class_weight, ddof=0)
    cal1 = calibrate_lid(dev.scores, dev.targets, class_weight=class_weight, ddof=1)
    # w z is what the likelihood sees, so w scales by the inverse factor and b is unchanged
    assert cal1.w == pytest.approx(cal0.w / factor, rel=1e-8)
    assert cal1.b == pytest.approx(cal0.b, rel=1e-8, abs=1e-8)
    assert cal1.ddof == 1
    np.testing.assert_allclose(
        lid(ev.scores, ev.targets, cal1).lid,
        lid(ev.scores, ev.targets, cal0).lid,
        rtol=0,
        atol=1e-8,
    )


@pytest.mark.parametrize("name", CONDITIONS)
def test_only_balanced_weights_change_lid_values(demo, name):
    cond = demo.get(name)
    dev, ev = cond.dev, cond.eval
    metrics_cal = calibrate_lid(dev.scores, dev.targets, variant="maximum-likelihood")
    reference = calibrate_lid(dev.scores, dev.targets, class_weight="balanced", ddof=1)
    assert (metrics_cal.variant, reference.variant) == ("maximum-likelihood", "custom")
    a = lid(ev.scores, ev.targets, metrics_cal).lid
    b = lid(ev.scores, ev.targets, reference).lid
    assert np.max(np.abs(a - b)) > 1e-3
    # and that change is the change of w alone: LID depends on the calibration through w only
    w_only = LIDCalibration(w=reference.w, b=0.0, prior_log_odds=0.0, n_pairs=0, ddof=1)
    np.testing.assert_allclose(lid(ev.scores, ev.targets, w_only).lid, b, rtol=0, atol=1e-12)


def reference_code_lid(dev_scores, dev_targets, eval_scores, eval_targets):
    """The authors' LID, re-implemented from their description (never copied).

    Row z-norm with the sample sd, scikit-learn LogisticRegression(class_weight="balanced")
    with its default L2 penalty C = 1 on the (z, mated?) pairs, posterior = softmax of w z + b
    over each eval row, LID = log2(N p_target).
    """

    def znorm(scores):
        s = np.asarray(scores, dtype=np.float64)
        return (s - s.mean(axis=1, keepdims=True)) / s.std(axis=1, ddof=1, keepdims=True)

    zd = znorm(dev_scores)
    y = np.zeros(zd.shape, dtype=int)
    y[np.arange(zd.shape[0]), dev_targets] = 1
    model = LogisticRegression(class_weight="balanced", C=1.0, tol=1e-12, max_iter=10000)
    model.fit(zd.reshape(-1, 1), y.ravel())
    w, b = float(model.coef_[0, 0]), float(model.intercept_[0])
    s = np.asarray(eval_scores, dtype=np.float64)
    ze = znorm(s)
    p = softmax(w * ze + b, axis=1)[np.arange(s.shape[0]), eval_targets]
    return w, b, np.log2(s.shape[1] * p)


@pytest.mark.parametrize("name", CONDITIONS)
def test_reference_code_variant_equals_the_authors_recipe(demo, name):
    cond = demo.get(name)
    dev, ev = cond.dev, cond.eval
    cal = calibrate_lid(dev.scores, dev.targets, variant="reference-code")
    assert (cal.class_weight, cal.ddof, cal.penalty_c) == ("balanced", 1, 1.0)
    assert cal.converged and cal.variant == "reference-code"
    assert cal.to_dict()["variant"] == "reference-code"
    w, b, lid_ref = reference_code_lid(dev.scores, dev.targets, ev.scores, ev.targets)
    assert cal.w == pytest.approx(w, rel=1e-6, abs=1e-6)
    assert cal.b == pytest.approx(b, rel=1e-6, abs=1e-6)
    np.testing.assert_allclose(lid(ev.scores, ev.targets, cal).lid, lid_ref, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["plain"])
def test_the_penalty_changes_w_on_the_demo(demo, name):
    # the unpenalised balanced fit is a different number: the penalty is what the issue found
    dev = demo.get(name).dev
    penalised = calibrate_lid(dev.scores, dev.targets, variant="reference-code")
    unpenalised = calibrate_lid(dev.scores, dev.targets, class_weight="balanced", ddof=1)
    assert unpenalised.variant == "custom"
    assert abs(penalised.w - unpenalised.w) > 0.1
    assert abs(penalised.w) < abs(unpenalised.w)  # an L2 penalty shrinks w


def test_variant_names_and_alias():
    assert resolve_lid_variant("metrics") == "maximum-likelihood"
    assert set(LID_VARIANTS) == {"maximum-likelihood", "reference-code"}
    scores, targets = shifted_normal(30, 6, 1.0)
    old = calibrate_lid(scores, targets, variant="metrics")
    new = calibrate_lid(scores, targets, variant="maximum-likelihood")
    plain = calibrate_lid(scores, targets)  # the default: the authors' recipe
    assert old == new and new.variant == "maximum-likelihood"
    assert plain == calibrate_lid(scores, targets, variant="reference-code")
    assert plain.variant == "reference-code" == DEFAULT_LID_VARIANT
    # explicit options start from the unpenalised fit
    assert calibrate_lid(scores, targets, ddof=0) == new
    with pytest.raises(VoxMetricsInputError, match="unknown LID variant"):
        calibrate_lid(scores, targets, variant="sklearn")
    with pytest.raises(VoxMetricsInputError, match="not both"):
        calibrate_lid(scores, targets, variant="reference-code", ddof=1)
    with pytest.raises(VoxMetricsInputError, match="penalty_c"):
        calibrate_lid(scores, targets, penalty_c=0.0)


# --------------------------------------------------------------------------------------------
# 4. Separable dev pools: the maximum-likelihood w is infinite
# --------------------------------------------------------------------------------------------

SEPARABLE = [
    # every mated z = sqrt(2) ~ 1.41 above every non-mated z = -1/sqrt(2)
    pytest.param(np.eye(3), [0, 1, 2], +1, id="eye3"),
    # the mirror image: every mated z below every non-mated one, so w -> -inf
    pytest.param(-np.eye(3), [0, 1, 2], -1, id="minus-eye3"),
    # one row, mated z = 1.22 > others
    pytest.param(np.array([[2.0, 0.0, 1.0]]), [0], +1, id="one-row"),
    pytest.param(np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 1.0]]), [0, 1], +1, id="two-rows"),
    # identical rows: only two distinct z values
    pytest.param(np.array([[1.0, 0.0, 0.0, 0.0, 0.0]] * 4), [0] * 4, +1, id="same-rows"),
    # 20 x 5 normal scores with the mated one shifted up by 10
    pytest.param(*shifted_normal(20, 5, 10.0), +1, id="shifted-normal"),
]


# History: before commit 060e5ff ("LID calibration: detect separable dev pools, never accept
# an ascent step, cap |w|") eye3, one-row, two-rows and shifted-normal returned converged=True
# without a warning (eye3: w = -1.06e22): the line search accepted a loss-increasing step once
# t < 1e-10, and the step-size test was relative to |w|. These tests were xfail(strict) then.
@pytest.mark.parametrize(("scores", "targets", "sign"), SEPARABLE)
def test_separable_dev_pools_warn_and_do_not_converge(scores, targets, sign):
    z, y = pairs(scores, np.array(targets))
    if sign > 0:
        assert z[y == 1].min() > z[y == 0].max()  # really separable, mated above
    else:
        assert z[y == 1].max() < z[y == 0].min()  # really separable, mated below
    with pytest.warns(DegenerateDataWarning, match="did not converge"):
        cal = calibrate_lid(scores, targets, variant="maximum-likelihood")
    assert not cal.converged
    # the likelihood grows without bound as sign * w -> +inf; w is large, finite and capped
    assert sign * cal.w > 10 and abs(cal.w) <= 1e4 and math.isfinite(cal.b)
    # on the dev matrix itself every trial is then (almost) certainly linked: LID ~ log2 N
    r = lid(scores, targets, cal)
    np.testing.assert_allclose(r.lid, math.log2(scores.shape[1]), rtol=0, atol=1e-6)


@pytest.mark.parametrize(("scores", "targets", "sign"), SEPARABLE)
def test_separable_dev_pools_give_the_stated_cap_in_any_precision(scores, targets, sign):
    # the documented result: w = sign * W_MAX and the boundary w z + b = 0 in the middle of
    # the gap between the pools, the same for float32 and float64 copies of the same scores
    z, y = pairs(scores, np.array(targets))
    mid = (
        (z[y == 1].min() + z[y == 0].max()) / 2
        if sign > 0
        else (z[y == 1].max() + z[y == 0].min()) / 2
    )
    results = []
    for dtype in (np.float64, np.float32):
        with pytest.warns(DegenerateDataWarning, match="middle of the gap"):
            results.append(calibrate_lid(np.asarray(scores, dtype=dtype), targets, **ML))
    for cal in results:
        assert cal.w == sign * W_MAX and not cal.converged
        assert -cal.b / cal.w == pytest.approx(mid, rel=1e-6, abs=1e-6)
    assert results[0].w == results[1].w


@pytest.mark.parametrize(("scores", "targets", "sign"), SEPARABLE)
def test_separable_dev_pools_reference_code_is_finite_and_matches_sklearn(scores, targets, sign):
    z, y = pairs(scores, np.array(targets), ddof=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        cal = calibrate_lid(scores, targets, variant="reference-code")
    sk = LogisticRegression(class_weight="balanced", tol=1e-12, max_iter=10000)
    sk.fit(z[:, None], y.astype(int))
    assert cal.converged and sign * cal.w > 0
    assert cal.w == pytest.approx(float(sk.coef_[0, 0]), rel=1e-6, abs=1e-6)
    assert cal.b == pytest.approx(float(sk.intercept_[0]), rel=1e-6, abs=1e-6)


def test_quasi_separated_dev_pools_do_not_converge():
    # row 2 ties its mated score with a non-mated one: min mated z == max non-mated z
    scores, targets = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]), [0, 1]
    z, y = pairs(scores, np.array(targets))
    assert z[y == 1].min() == z[y == 0].max()
    with pytest.warns(DegenerateDataWarning, match="did not converge"):
        cal = calibrate_lid(scores, targets, **ML)
    assert not cal.converged and cal.w > 10


def test_nearly_separated_dev_pools_still_converge():
    # one mated score below one non-mated one is enough for a finite maximum-likelihood w
    scores, targets = shifted_normal(20, 5, 10.0)
    scores[0, (targets[0] + 1) % 5] = scores[0, targets[0]] + 0.5
    z, y = pairs(scores, np.array(targets))
    assert z[y == 1].min() < z[y == 0].max()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        cal = calibrate_lid(scores, targets, **ML)
    assert cal.converged and 0 < cal.w < 1e4
    w_ref, b_ref = newton_logistic(z, y)
    assert cal.w == pytest.approx(w_ref, rel=1e-6) and cal.b == pytest.approx(b_ref, rel=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(3, 12),
    st.integers(3, 7),
    st.floats(0.0, 3.0),
    st.integers(0, 2**32 - 1),
)
def test_reference_code_fit_is_the_penalised_optimum(t, n, shift, seed):
    # first-order optimality of sum_pairs c_y logloss(w z + b) + w^2 / 2 (scikit-learn's
    # objective with C = 1, balanced c_y), and the penalty can only shrink |w|
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(t, n))
    targets = rng.integers(0, n, size=t)
    scores[np.arange(t), targets] += shift
    cal = calibrate_lid(scores, targets, variant="reference-code")
    z, y = pairs(scores, targets, ddof=1)
    c = np.where(y == 1, y.size / (2 * y.sum()), y.size / (2 * (y.size - y.sum())))
    p = expit(cal.w * z + cal.b)
    grad_w = float(np.sum(c * (p - y) * z)) + cal.w
    grad_b = float(np.sum(c * (p - y)))
    assert cal.converged
    assert abs(grad_w) <= 1e-7 * max(1.0, float(np.sum(c))) and abs(grad_b) <= 1e-7 * y.size
    with warnings.catch_warnings():  # separable draws: the unpenalised fit warns, as it should
        warnings.simplefilter("ignore", DegenerateDataWarning)
        free = calibrate_lid(scores, targets, class_weight="balanced", ddof=1)
    if free.converged:
        assert abs(cal.w) <= abs(free.w) + 1e-9


# --------------------------------------------------------------------------------------------
# The row pass: row_znorm equals its reference formula bit for bit (the float64 power-of-two
# product for float32 scores may not move any number) and leaves its input alone
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("ddof", [0, 1])
def test_row_znorm_equals_its_reference_formula(seed, ddof):
    for s in row_pass_matrices(seed):
        z, deg = row_znorm(s, ddof=ddof)
        z_ref, deg_ref = reference_row_znorm(s, ddof)
        assert z.dtype == np.float64 and z.tobytes() == z_ref.tobytes()
        assert deg.tolist() == deg_ref.tolist()


def test_row_znorm_leaves_its_input_alone():
    s = np.array([[0.5, 0.25, 0.125]], dtype=np.float64)
    s32 = s.astype(np.float32)
    before, before32 = s.copy(), s32.copy()
    row_znorm(s)
    log_posteriors(s32, 3.0, 0.0, 0.0, 1)
    assert s.tobytes() == before.tobytes() and s32.tobytes() == before32.tobytes()


# ---------------------------------------------------------------- calibration curves


def _binned_by_hand(matrices, calibration, bins):
    """Every row z-scored over its own matrix (population sd for ddof 0), the pairs of all
    matrices binned on equal-width bins from the smallest to the largest z."""
    zs, mated = [], []
    for s, t in matrices:
        s = np.asarray(s, dtype=np.float64)
        sd = s.std(axis=1, ddof=calibration.ddof, keepdims=True)
        z = (s - s.mean(axis=1, keepdims=True)) / sd
        zs.append(z.ravel())
        mated.append(z[np.arange(len(t)), t])
    z_all, z_mated = np.concatenate(zs), np.concatenate(mated)
    edges = np.linspace(z_all.min(), z_all.max(), bins + 1)
    counts = np.histogram(z_all, bins=edges)[0]
    hits = np.histogram(z_mated, bins=edges)[0]
    keep = counts > 0
    return counts[keep], hits[keep] / counts[keep]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.tuples(st.integers(1, 6), st.integers(2, 7)),
                                          min_size=1, max_size=3))  # fmt: skip
def test_pooled_calibration_curve_bins_each_matrix_on_its_own_rows(seed, shapes):
    rng = np.random.default_rng(seed)
    matrices = [
        (rng.normal(size=(t, n)) + 0.01 * np.arange(n), rng.integers(0, n, size=t))
        for t, n in shapes
    ]
    cal = LIDCalibration(w=1.2, b=-0.5, prior_log_odds=0.0, n_pairs=0)
    curve = pooled_calibration_curve(matrices, cal, bins=7)
    counts, rate = _binned_by_hand(matrices, cal, bins=7)
    np.testing.assert_array_equal(curve.counts, counts)
    np.testing.assert_allclose(curve.mated_rate, rate, rtol=0, atol=1e-12)
    assert curve.counts.sum() == sum(s.size for s, _ in matrices)  # every pair binned once
    one = calibration_curve(*matrices[0], cal, bins=7)
    np.testing.assert_array_equal(
        one.counts, pooled_calibration_curve(matrices[:1], cal, bins=7).counts
    )


def test_pooled_calibration_curve_needs_a_matrix_and_refuses_unlisted_pairs():
    cal = LIDCalibration(w=1.0, b=0.0, prior_log_odds=0.0, n_pairs=0)
    with pytest.raises(VoxMetricsInputError, match="no matrix to bin"):
        pooled_calibration_curve([], cal)
    with pytest.raises(VoxMetricsInputError, match="NaN or infinite"):
        pooled_calibration_curve([([[0.1, np.nan]], [0])], cal)
