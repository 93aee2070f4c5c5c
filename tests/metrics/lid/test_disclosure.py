"""LID (paper 000; shared/docs/metrics.md section 2): worked example, properties, calibration.

Reference values are re-derived from the functions and the formulas of metrics.md, never
re-typed from a run (style.md items 8-10). The calibration is cross-checked against a
Newton-Raphson logistic fit written below and against scikit-learn.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from metric_registry import forget_unimportable_modules
from scipy.special import expit, softmax
from sklearn.linear_model import LogisticRegression

from voxmetrics._types import DEFAULT_LID_VARIANT
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics.lid import (
    LID_VARIANTS,
    W_MAX,
    LIDCalibration,
    calibrate_lid,
    lid,
    lid_cross_calibrated,
    resolve_lid_variant,
    row_znorm,
)
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.synth import demo_study

PROPS = settings(max_examples=60, deadline=None)
SCORES = st.floats(-5, 5, allow_nan=False, allow_infinity=False)
# Scores on a 0.001 grid: a row is either exactly constant or spread by >= 0.001, so after
# s -> a s + c with a >= 0.1, |c| <= 10 the spread (>= 1e-4) stays ~1e11 ulps of the values
# (<= 60): z keeps ~11 significant digits and no row becomes (or stops being) degenerate.
GRID = st.integers(-5000, 5000).map(lambda k: k / 1000)


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    # other test modules import SpeechBrain, whose lazy modules break hypothesis' module scan
    forget_unimportable_modules()


@pytest.fixture(scope="module")
def demo():
    return demo_study()


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------


@st.composite
def matrices(draw, elements=SCORES, max_t=12, min_n=2, max_n=8, n=None):
    """(scores, targets): T x N float64 scores, T in 1..max_t, N in min_n..max_n."""
    n = draw(st.integers(min_n, max_n)) if n is None else n
    t = draw(st.integers(1, max_t))
    scores = draw(arrays(np.float64, (t, n), elements=elements))
    targets = draw(arrays(np.int64, (t,), elements=st.integers(0, n - 1)))
    return scores, targets


fixed_calibrations = st.builds(
    lambda w, b, prior: LIDCalibration(w=w, b=b, prior_log_odds=prior, n_pairs=0),
    st.floats(-10, 50),
    st.floats(-50, 50),
    st.floats(-20, 0),
)


ML = {"variant": "maximum-likelihood"}
"""The unpenalised fit (no longer the default)."""


def quiet_calibrate(scores, targets, **options):
    """calibrate_lid without its degenerate-data warnings (the fit is what matters here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return calibrate_lid(scores, targets, **options)


@st.composite
def learned_calibrations(draw, n):
    """calibrate_lid on a drawn dev matrix with N = n columns."""
    dev, dev_t = draw(matrices(elements=draw(st.sampled_from([SCORES, GRID])), n=n))
    try:
        return quiet_calibrate(dev, dev_t)
    except VoxMetricsInputError:  # every dev row constant: nothing to calibrate on
        assume(False)


@st.composite
def problems(draw, elements=SCORES):
    """(scores, targets, calibration): a fixed calibration or one learned on a dev matrix."""
    scores, targets = draw(matrices(elements=elements))
    cal = draw(st.one_of(fixed_calibrations, learned_calibrations(scores.shape[1])))
    return scores, targets, cal


def quiet_lid(scores, targets, cal):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return lid(scores, targets, cal)


def lid_atol(cal, base=1e-8):
    """LID tolerance under a change that moves z by ~1e-11: |dLID| <~ |w| |dz| / ln 2.

    Learned calibrations on separable drawn dev matrices have large |w| (capped at 1e4, section 4).
    """
    return base + 1e-10 * abs(cal.w)


def overlapping(scores, targets, margin=1e-3):
    """Whether the dev pools overlap in both directions, so the logistic MLE exists."""
    z, deg = row_znorm(scores)
    y = np.zeros(z.shape, dtype=bool)
    y[np.arange(z.shape[0]), targets] = True
    zm, zn = z[~deg][y[~deg]], z[~deg][~y[~deg]]
    if zm.size == 0:
        return False
    return zm.max() > zn.min() + margin and zm.min() < zn.max() - margin


# --------------------------------------------------------------------------------------------
# 1. The worked example of metrics.md section 2 (paper 000, section 5.2)
# --------------------------------------------------------------------------------------------

# Paper 000 section 5.2: "consider a trial compared against N = 6 enrolments yielding raw scores
# [0.9, 0.7, 0.4, 1.1, 1.2, 0.4] (true target in bold [index 3]). Row-wise z-normalisation
# yields [0.37, -0.27, -1.22, 1.01, 1.33, -1.22]. Applying calibration (Equation 3, with
# w = 1.5, b = -1.0, and a prior odds ratio of 1/5) yields [1.17, 0.21, -1.23, 2.12, 2.61,
# -1.23] ... probabilities [0.12, 0.05, 0.01, 0.31, 0.50, 0.01] ... LID = log2(6 x 0.31)
# ~ 0.90 bits." metrics.md section 2 repeats it with 2.13 for the target LLR.
#
# Which is right: in exact arithmetic mean = 4.7/6, population sd = sqrt(0.5883.../6)
# = 0.31314..., z_3 = (1.1 - 0.78333...)/0.31314... = 1.011268 and LLR_3 = 1.5 z_3 - 1.0 - ln(1/5)
# = 1.516902 - 1.0 + 1.609438 = 2.126340, which rounds to 2.13 (metrics.md). The paper's 2.12
# is that value truncated; it is not the "rounded z first" value either, since 1.5 x 1.01 - 1
# + ln 5 = 2.1244 would also turn its 1.17 into 1.16, 0.21 into 0.20 and 2.61 into 2.60.
WORKED_RAW = [0.9, 0.7, 0.4, 1.1, 1.2, 0.4]
WORKED_TARGET = 3
WORKED_CAL = LIDCalibration(w=1.5, b=-1.0, prior_log_odds=math.log(1 / 5), n_pairs=0)


def worked_llr() -> np.ndarray:
    """LLR_j = w z_j + b - prior_log_odds (metrics.md section 2, step 3) from row_znorm's z."""
    z, _ = row_znorm([WORKED_RAW])
    c = WORKED_CAL
    return c.w * z[0] + c.b - c.prior_log_odds


@pytest.mark.parametrize(
    ("j", "z_j", "llr_j", "p_j"),
    [
        (0, 0.37, 1.17, 0.12),
        (1, -0.27, 0.21, 0.05),
        (2, -1.22, -1.23, 0.01),
        (3, 1.01, 2.13, 0.31),  # the target; the paper prints 2.12 (see above)
        (4, 1.33, 2.61, 0.50),
        (5, -1.22, -1.23, 0.01),
    ],
)
def test_worked_example_per_column(j, z_j, llr_j, p_j):
    z, degenerate = row_znorm([WORKED_RAW])
    assert not degenerate[0]
    assert round(float(z[0, j]), 2) == z_j
    llr = worked_llr()
    assert round(float(llr[j]), 2) == llr_j
    # the full posterior vector: the library exposes p of the target only, so the vector is
    # softmax of the LLRs, and its target entry must agree with lid(...).p_target below
    assert round(float(softmax(llr)[j]), 2) == p_j


def test_worked_example_lid_and_posterior():
    r = lid([WORKED_RAW], [WORKED_TARGET], WORKED_CAL)
    p = softmax(worked_llr())
    assert r.p_target[0] == pytest.approx(p[WORKED_TARGET], rel=1e-12)
    assert round(float(r.lid[0]), 3) == 0.900
    # step 5: LID = log2(N p_target), and it exceeds 0 because p_target > 1/6
    assert r.lid[0] == pytest.approx(math.log2(6 * p[WORKED_TARGET]), rel=1e-12)
    # the target (1.1) is ranked below 1.2: rank 2, as the paper says ("not the top-ranked")
    assert r.rank.tolist() == [2]
    assert (r.n_trials, r.n_enrolled, r.n_degenerate) == (1, 6, 0)
    assert r.ceiling == pytest.approx(math.log2(6))


def test_worked_example_exact_target_llr_is_2_13_not_2_12():
    # exact arithmetic with Fraction for the mean / variance, then one sqrt and log
    from fractions import Fraction

    raw = [Fraction(str(v)) for v in WORKED_RAW]
    mean = sum(raw) / 6
    var = sum((v - mean) ** 2 for v in raw) / 6
    z3 = float(raw[3] - mean) / math.sqrt(var)
    llr3 = 1.5 * z3 - 1.0 - math.log(1 / 5)
    assert round(llr3, 2) == 2.13 and math.floor(llr3 * 100) / 100 == 2.12
    assert worked_llr()[WORKED_TARGET] == pytest.approx(llr3, rel=1e-14)


# --------------------------------------------------------------------------------------------
# 2. Properties
# --------------------------------------------------------------------------------------------


@PROPS
@given(problem=problems())
def test_lid_bounded_by_log2_n_and_p_in_unit_interval(problem):
    scores, targets, cal = problem
    r = quiet_lid(scores, targets, cal)
    n = scores.shape[1]
    assert np.isfinite(r.lid).all()
    assert (r.lid <= math.log2(n) + 1e-12).all()
    assert ((r.p_target >= 0) & (r.p_target <= 1)).all()
    assert r.lid_max <= r.ceiling + 1e-12
    # step 5 by its definition, from the returned posterior
    ok = r.p_target > 1e-300
    np.testing.assert_allclose(r.lid[ok], np.log2(n * r.p_target[ok]), rtol=1e-9, atol=1e-9)


@PROPS
@given(problem=problems())
def test_alid_is_pdr_lidplus_plus_ndr_lidminus(problem):
    scores, targets, cal = problem
    r = quiet_lid(scores, targets, cal)
    plus = 0.0 if r.lid_plus is None else r.lid_plus
    minus = 0.0 if r.lid_minus is None else r.lid_minus
    assert (r.lid_plus is None) == (r.pdr == 0) and (r.lid_minus is None) == (r.ndr == 0)
    assert r.alid == pytest.approx(r.pdr * plus + r.ndr * minus, rel=1e-12, abs=1e-12)
    assert r.pdr + r.ndr == pytest.approx(1.0)
    assert r.alid == pytest.approx(float(np.mean(r.lid)), rel=1e-12, abs=1e-12)
    assert r.lid_max == float(np.max(r.lid))


@st.composite
def row_affine_maps(draw, t):
    a = draw(arrays(np.float64, (t, 1), elements=st.floats(0.1, 10)))
    c = draw(arrays(np.float64, (t, 1), elements=st.floats(-10, 10)))
    return a, c


@PROPS
@given(problem=problems(elements=GRID), data=st.data())
def test_eval_lid_invariant_to_positive_affine_map_of_each_row(problem, data):
    scores, targets, cal = problem
    a, c = data.draw(row_affine_maps(scores.shape[0]))
    before = quiet_lid(scores, targets, cal)
    after = quiet_lid(a * scores + c, targets, cal)
    assert after.n_degenerate == before.n_degenerate
    np.testing.assert_allclose(after.lid, before.lid, rtol=0, atol=lid_atol(cal))


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


@PROPS
@given(problem=problems(elements=GRID), data=st.data())
def test_invariant_to_enrolled_column_order(problem, data):
    scores, targets, cal = problem
    n = scores.shape[1]
    perm = np.array(data.draw(st.permutations(range(n))), dtype=np.intp)
    # new column k holds old column perm[k]; the target moves to where its column went
    new_position = np.argsort(perm)
    after = quiet_lid(scores[:, perm], new_position[targets], cal)
    before = quiet_lid(scores, targets, cal)
    np.testing.assert_allclose(after.lid, before.lid, rtol=0, atol=lid_atol(cal, 1e-9))
    np.testing.assert_array_equal(after.rank, before.rank)


@PROPS
@given(problem=problems(), data=st.data())
def test_trial_order_permutes_the_lid_vector(problem, data):
    scores, targets, cal = problem
    perm = np.array(data.draw(st.permutations(range(scores.shape[0]))), dtype=np.intp)
    before = quiet_lid(scores, targets, cal)
    after = quiet_lid(scores[perm], targets[perm], cal)
    np.testing.assert_allclose(after.lid, before.lid[perm], rtol=0, atol=1e-12)
    np.testing.assert_allclose(after.p_target, before.p_target[perm], rtol=0, atol=1e-15)
    assert after.alid == pytest.approx(before.alid, rel=1e-12, abs=1e-12)


@PROPS
@given(
    problem=problems(),
    b=st.floats(-100, 100),
    prior=st.floats(-20, 0),
)
def test_b_and_prior_cancel_but_are_reported(problem, b, prior):
    scores, targets, cal = problem
    other = LIDCalibration(w=cal.w, b=b, prior_log_odds=prior, n_pairs=cal.n_pairs, ddof=cal.ddof)
    r0, r1 = quiet_lid(scores, targets, cal), quiet_lid(scores, targets, other)
    # identical up to the rounding of adding a constant to every LLR of a row
    scale = 1.0 + abs(cal.w) * math.sqrt(scores.shape[1]) + abs(b) + abs(cal.b) + 20
    np.testing.assert_allclose(r1.lid, r0.lid, rtol=0, atol=1e-13 * scale)
    assert other.to_dict()["b"] == b and other.to_dict()["prior_log_odds"] == prior
    assert r1.to_dict()["b"] == b and r1.b == b and r1.calibration.prior_log_odds == prior
    assert r0.to_dict()["b"] == cal.b


@PROPS
@given(
    problem=matrices(elements=st.floats(-1e6, 1e6)),
    w=st.floats(-1e4, 1e4),
    b=st.floats(-1e4, 1e4),
)
def test_no_overflow_or_nan_for_large_scores_and_weights(problem, w, b):
    scores, targets = problem
    cal = LIDCalibration(w=w, b=b, prior_log_odds=math.log(1 / (scores.shape[1] - 1)), n_pairs=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", DegenerateDataWarning)
        r = lid(scores, targets, cal)
        try:
            learned = calibrate_lid(scores, targets)
        except VoxMetricsInputError:  # every row constant
            learned = None
        r_learned = None if learned is None else lid(scores, targets, learned)
    for res in (r, r_learned):
        if res is None:
            continue
        assert np.isfinite(res.lid).all() and np.isfinite(res.p_target).all()
        assert (res.lid <= math.log2(scores.shape[1]) + 1e-12).all()
        assert math.isfinite(res.alid) and math.isfinite(res.w) and math.isfinite(res.b)


@PROPS
@given(problem=problems(elements=GRID), data=st.data())
def test_degenerate_rows_get_zero_lid_and_are_counted(problem, data):
    scores, targets, cal = problem
    scores = scores.copy()
    t = scores.shape[0]
    rows = data.draw(st.sets(st.integers(0, t - 1), min_size=1, max_size=t))
    for i in rows:
        scores[i] = data.draw(GRID)
    expected = sum(np.ptp(row) == 0 for row in scores)  # the forced rows and any drawn ones
    with pytest.warns(DegenerateDataWarning, match="identical scores"):
        r = lid(scores, targets, cal)
    assert r.n_degenerate == expected
    z, degenerate = row_znorm(scores)
    assert degenerate.sum() == expected and (z[degenerate] == 0).all()
    for i in rows:
        assert r.lid[i] == pytest.approx(0.0, abs=1e-12)
        assert r.p_target[i] == pytest.approx(1 / scores.shape[1], rel=1e-12)


def test_no_degenerate_warning_without_degenerate_rows():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        r = lid([[0.0, 1.0, 2.0], [3.0, 1.0, 2.0]], [0, 0], WORKED_CAL)
    assert r.n_degenerate == 0


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


def test_random_scores_disclose_nothing():
    # i.i.d. normal scores carry no identity. With dev from the same distribution the fitted w
    # is ~N(0, se^2), se ~ 1/sqrt(Fisher info) = 1/sqrt(T N p (1-p) var z) with p = 1/N:
    # 1/sqrt(2000 * 50 * 0.0196) ~ 0.023. For small w, LID_i ~ (w z_i,m - w^2/2)/ln 2, so on eval
    # ALID ~ (w mean(z_m) - w^2/2)/ln 2 with mean(z_m) ~ N(0, 1/2000) (sd 0.022): even at a 4-sd
    # w of 0.09 and a 4-sd mean of 0.09, |ALID| < (0.0081 + 0.004)/0.69 ~ 0.018 < 0.05.
    # PDR = share of trials with sign(w) z_m > |w|/2 ~ 0.5 - 0.4 |w| / 2 >= 0.48 in expectation,
    # with binomial sd sqrt(0.25/2000) = 0.011, so 0.5 +- 0.1 is ~ 8 sd wide.
    rng = np.random.default_rng(20261122)
    t, n = 2000, 50
    dev = rng.standard_normal((t, n))
    dev_t = rng.integers(0, n, size=t)
    ev = rng.standard_normal((t, n))
    ev_t = rng.integers(0, n, size=t)
    cal = calibrate_lid(dev, dev_t)
    assert cal.converged and abs(cal.w) < 0.1
    assert cal.prior_log_odds == pytest.approx(math.log(1 / (n - 1)))
    r = lid(ev, ev_t, cal)
    assert abs(r.alid) < 0.05
    assert 0.4 <= r.pdr <= 0.6
    assert r.lid_max < 0.5


def test_lid_result_rank_and_dict():
    rng = np.random.default_rng(5)
    s = rng.normal(size=(25, 7))
    t = rng.integers(0, 7, size=25)
    r = lid(s, t, WORKED_CAL)
    np.testing.assert_array_equal(r.rank, target_ranks(s, t))
    assert set(r.to_dict()) == {"w", "b", "alid", "pdr", "ndr", "lid_plus", "lid_minus", "lid_max"}
    assert r.label == "dev" and r.w == 1.5
    with pytest.raises(ValueError, match="read-only"):
        r.lid[0] = 1.0


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


def test_cross_calibration_takes_the_variant(demo):
    ev = demo.get("anon-mild").eval
    r = lid_cross_calibrated(
        ev.scores, ev.targets, ev.trial_speakers, k=3, variant="reference-code"
    )
    assert r.calibration.variant == "reference-code"
    explicit = lid_cross_calibrated(
        ev.scores,
        ev.targets,
        ev.trial_speakers,
        k=3,
        class_weight="balanced",
        ddof=1,
        penalty_c=1.0,
    )
    np.testing.assert_array_equal(r.lid, explicit.lid)


# --------------------------------------------------------------------------------------------
# 4. Separable dev pools: the maximum-likelihood w is infinite
# --------------------------------------------------------------------------------------------


def shifted_normal(t, n, shift, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(t, n))
    targets = rng.integers(0, n, size=t)
    scores[np.arange(t), targets] += shift
    return scores, targets.tolist()


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


# --------------------------------------------------------------------------------------------
# 5. Cross-calibration (k-fold on eval)
# --------------------------------------------------------------------------------------------


def infer_folds(result, scores, targets):
    """Which fold each trial belongs to: the fold_w under which lid() reproduces its LID."""
    match = np.array(
        [
            np.isclose(
                lid(
                    scores, targets, LIDCalibration(w=fw, b=0.0, prior_log_odds=0.0, n_pairs=0)
                ).lid,
                result.lid,
                rtol=0,
                atol=1e-12,
            )
            for fw in result.fold_w
        ]
    )
    assert (match.sum(axis=0) == 1).all(), "each trial must match exactly one fold's w"
    return match.argmax(axis=0)


@pytest.mark.parametrize("k", [2, 5])
def test_cross_calibration_uses_the_other_folds(demo, k):
    ev = demo.get("anon-mild").eval
    s, t, spk = ev.scores, ev.targets, np.asarray(ev.trial_speakers)
    r = lid_cross_calibrated(s, t, spk, k=k, seed=1, **ML)
    label = f"cross-calibrated ({k}-fold on eval)"
    assert r.label == label and r.calibration.source == label
    assert r.label.startswith("cross-calibrated") and "on eval" in r.label
    assert len(r.fold_w) == k and r.calibration.converged
    assert r.w == pytest.approx(float(np.mean(r.fold_w)))
    fold = infer_folds(r, s, t)
    assert set(fold.tolist()) == set(range(k))
    for f in range(k):
        held = fold == f
        # folds never split a speaker
        assert not set(spk[held]) & set(spk[~held])
        # the held-out trials get exactly the calibration learned on the other folds' trials
        cal = calibrate_lid(s[~held], t[~held], **ML)
        assert cal.w == pytest.approx(r.fold_w[f], rel=1e-12)
        np.testing.assert_allclose(lid(s[held], t[held], cal).lid, r.lid[held], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(r.rank, target_ranks(s, t))


def test_cross_calibration_is_seeded(demo):
    ev = demo.get("anon-leaky").eval
    args = (ev.scores, ev.targets, ev.trial_speakers)
    a = lid_cross_calibrated(*args, k=5, seed=3)
    b = lid_cross_calibrated(*args, k=5, seed=3)
    c = lid_cross_calibrated(*args, k=5, seed=4)
    np.testing.assert_array_equal(a.lid, b.lid)
    assert a.fold_w == b.fold_w
    assert a.fold_w != c.fold_w and not np.array_equal(a.lid, c.lid)


@pytest.mark.parametrize("k", [-1, 0, 1, 41, 100])
def test_cross_calibration_k_out_of_range(demo, k):
    ev = demo.get("plain").eval  # 40 trial speakers
    with pytest.raises(VoxMetricsInputError, match="2 <= k <= number of trial speakers"):
        lid_cross_calibrated(ev.scores, ev.targets, ev.trial_speakers, k=k)


def test_cross_calibration_k_equal_to_speakers_is_leave_one_speaker_out(demo):
    ev = demo.get("anon-strong").eval
    spk = np.asarray(ev.trial_speakers)
    r = lid_cross_calibrated(ev.scores, ev.targets, spk, k=40, **ML)
    fold = infer_folds(r, ev.scores, ev.targets)
    for f in range(40):
        assert len(set(spk[fold == f])) == 1


def test_cross_calibration_needs_one_speaker_per_trial(demo):
    ev = demo.get("plain").eval
    with pytest.raises(VoxMetricsInputError, match="one speaker label per trial"):
        lid_cross_calibrated(ev.scores, ev.targets, ev.trial_speakers[:-1], k=5)


# History: before commit 060e5ff lid_cross_calibrated counted constant eval rows in
# n_degenerate but its catch_warnings block silenced the warning (xfail(strict) then).
def test_cross_calibration_warns_on_degenerate_eval_rows(demo):
    ev = demo.get("anon-mild").eval
    s = ev.scores.copy()
    s[0] = 0.5
    with pytest.warns(DegenerateDataWarning, match="1 eval trial.*identical scores"):
        r = lid_cross_calibrated(s, ev.targets, ev.trial_speakers, k=5)
    assert r.n_degenerate == 1 and r.lid[0] == pytest.approx(0.0, abs=1e-12)
    assert r.calibration.converged


def test_cross_calibration_warns_when_a_fold_does_not_converge():
    # 8 speakers, 2 trials each; scores separable (mated +10): every fold's fit is separable
    scores, targets = shifted_normal(16, 8, 10.0, seed=2)
    speakers = np.repeat([f"s{k}" for k in range(8)], 2)
    with pytest.warns(DegenerateDataWarning, match="did not converge in 4 of 4 folds"):
        r = lid_cross_calibrated(scores, targets, speakers, k=4, **ML)
    assert not r.calibration.converged and all(abs(w) <= 1e4 for w in r.fold_w)


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
