"""LID's calibration on binned moments equals the exactly solved model within 1e-9.

Beyond ``BINNED_PAIRS`` (trial, enrolled) pairs, ``calibrate_lid`` solves the logistic fit on
the pairs' binned moments (``voxmetrics.metrics.lid.binned``) instead of Newton's method over
every pair. Its w and b are not bit-identical to the former path; they must equal the exact
optimum within 1e-9 relative, and each trial's LID within 1e-9 bits. The references here: the
former path (Newton's method on every pair, float64 sums, to its 1e-12 step) and, on dev sets
small enough, Newton's method in extended precision (``np.longdouble``, 64-bit mantissa) on
the same objective. Both variants, separable pools, ties, tiny and large dev sets, float32 and
float64 scores. No timing is asserted here.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.metrics.lid import lid, row_znorm

calibration = importlib.import_module("voxmetrics.metrics.lid.calibration")
binned = importlib.import_module("voxmetrics.metrics.lid.binned")

VARIANTS = ["reference-code", "maximum-likelihood"]
REL = 1e-9  # the bound on w and b (relative) and on each LID (bits)


def shifted(t, n, shift, seed, *, dtype=np.float64, decimals=None):
    """t x n normal scores, each trial's mated one shifted up; rounded for ties."""
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, n, t)
    scores = rng.normal(size=(t, n))
    scores[np.arange(t), targets] += shift
    if decimals is not None:
        scores = np.round(scores, decimals)
    return scores.astype(dtype), targets


def fits(scores, targets, variant):
    """(binned, exact): the calibration forced onto each path."""
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        mp.setattr(calibration, "BINNED_PAIRS", -1)
        new = calibration.calibrate_lid(scores, targets, variant=variant)
        mp.setattr(calibration, "BINNED_PAIRS", 10**15)
        old = calibration.calibrate_lid(scores, targets, variant=variant)
    return new, old


def longdouble_fit(scores, targets, variant, start):
    """Newton's method in extended precision on the calibration's own objective.

    As the fit sums it: every pair's label-0 term from its z in the input's precision (a
    float32 matrix's z are float32), and each mated pair's label-1 term less its label-0 term
    from its float64 z; c_y the balanced weights or 1; the L2 penalty w^2 / (2 C).
    """
    class_weight, ddof, penalty_c = calibration.LID_VARIANTS[variant]
    z, deg = row_znorm(scores, ddof=ddof)
    keep = ~deg
    mated = z[np.arange(z.shape[0]), targets][keep].astype(np.longdouble)
    every = z[keep].astype(scores.dtype).astype(np.longdouble).ravel()
    n, n1 = every.size, mated.size
    one = np.longdouble(1)
    c1, c0 = (one * n / (2 * n1), one * n / (2 * (n - n1))) if class_weight else (one, one)
    w, b = np.longdouble(start[0]), np.longdouble(start[1])
    for _ in range(60):
        p_all = one / (one + np.exp(-(w * every + b)))
        p_mat = one / (one + np.exp(-(w * mated + b)))
        v_all, v_mat = p_all * (one - p_all), p_mat * (one - p_mat)
        g_w = (
            c0 * ((p_all * every).sum() - (p_mat * mated).sum()) + c1 * ((p_mat - 1) * mated).sum()
        )
        g_b = c0 * (p_all.sum() - p_mat.sum()) + c1 * (p_mat - 1).sum()
        h_ww = (
            c0 * ((v_all * every**2).sum() - (v_mat * mated**2).sum())
            + c1 * (v_mat * mated**2).sum()
        )
        h_wb = c0 * ((v_all * every).sum() - (v_mat * mated).sum()) + c1 * (v_mat * mated).sum()
        h_bb = c0 * (v_all.sum() - v_mat.sum()) + c1 * v_mat.sum()
        if penalty_c is not None:
            g_w += w / penalty_c
            h_ww += one / penalty_c
        det = h_ww * h_bb - h_wb * h_wb
        step_w, step_b = (h_bb * g_w - h_wb * g_b) / det, (h_ww * g_b - h_wb * g_w) / det
        w, b = w - step_w, b - step_b
        if abs(step_w) <= 1e-16 * max(1, abs(w)) and abs(step_b) <= 1e-16 * max(1, abs(b)):
            return float(w), float(b)
    raise AssertionError("the extended-precision reference did not converge")


def assert_within(cal, w_ref, b_ref, scores_eval, targets_eval, ref_cal):
    assert cal.w == pytest.approx(w_ref, rel=REL, abs=0)
    assert cal.b == pytest.approx(b_ref, rel=REL, abs=0)
    got = lid(scores_eval, targets_eval, cal).lid
    want = lid(scores_eval, targets_eval, ref_cal).lid
    np.testing.assert_allclose(got, want, rtol=0, atol=REL)


# dev sets: (label, scores, targets); every one small enough for the extended-precision solve
SMALL = [
    ("moderate", *shifted(300, 50, 2.0, 1)),
    ("ties, 1 decimal", *shifted(300, 50, 2.0, 1, decimals=1)),
    ("ties, integers", *shifted(300, 50, 2.0, 1, decimals=0)),
    ("tiny 20 x 5", *shifted(20, 5, 1.0, 2)),
    ("tiny 6 x 3", *shifted(6, 3, 0.5, 3)),
    ("near-separable", *shifted(300, 50, 4.0, 1)),
    ("no evidence", *shifted(600, 80, 0.0, 6)),
    ("float32", *shifted(600, 80, 3.0, 5, dtype=np.float32)),
    ("identity matrix", np.eye(40) + 0.01 * np.arange(40) / 40, np.arange(40)),
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("label", "scores", "targets"), SMALL, ids=[s[0] for s in SMALL])
def test_binned_fit_equals_the_extended_precision_optimum(label, scores, targets, variant):
    new, old = fits(scores, targets, variant)
    if not old.converged:  # separable pools of the unpenalised fit: the stated cap, both paths
        assert (new.w, new.b, new.converged) == (old.w, old.b, False)
        return
    assert new.converged
    w_ref, b_ref = longdouble_fit(scores, targets, variant, (old.w, old.b))
    ev_scores, ev_targets = shifted(200, scores.shape[1], 1.5, 99)
    ref = dataclasses.replace(old, w=w_ref, b=b_ref)
    assert_within(new, w_ref, b_ref, ev_scores, ev_targets, ref)
    assert_within(old, w_ref, b_ref, ev_scores, ev_targets, ref)  # the reference is the model


@pytest.mark.parametrize("variant", VARIANTS)
def test_separable_pools(variant):
    # every mated score far above every other: the unpenalised fit has no finite optimum (the
    # stated cap, the same on both paths); the penalised one has, and the binned fit finds it
    scores, targets = shifted(300, 50, 12.0, 4)
    new, old = fits(scores, targets, variant)
    if variant == "maximum-likelihood":
        assert not new.converged and (new.w, new.b) == (old.w, old.b)
        return
    w_ref, b_ref = longdouble_fit(scores, targets, variant, (old.w, old.b))
    assert new.converged and new.w > 0
    assert new.w == pytest.approx(w_ref, rel=REL) and new.b == pytest.approx(b_ref, rel=REL)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_dev_set_equals_the_newton_path(variant, dtype):
    # 2,400 x 1,000 pairs: the default path is the binned one; the reference is the former
    # Newton path (warm start on a subsample, then every pair to its 1e-12 step)
    scores, targets = shifted(2400, 1000, 4.0, 11, dtype=dtype)
    assert scores.size > binned.BINNED_PAIRS
    new = calibration.calibrate_lid(scores, targets, variant=variant)
    _, old = fits(scores, targets, variant)
    ev_scores, ev_targets = shifted(500, 1000, 3.0, 12, dtype=dtype)
    assert_within(new, old.w, old.b, ev_scores, ev_targets, old)
    assert (new.n_pairs, new.converged, new.variant) == (old.n_pairs, old.converged, variant)


def test_the_refinement_when_the_bound_is_not_met(monkeypatch):
    # a bound of 0 is never met: the binned optimum then starts Newton's method on every pair
    scores, targets = shifted(300, 50, 3.0, 8)
    calls = []
    fit = calibration.fit_w_b

    def counted(*args, **kwargs):
        calls.append(kwargs.get("start"))
        return fit(*args, **kwargs)

    monkeypatch.setattr(calibration, "fit_w_b", counted)
    monkeypatch.setattr(binned, "TOL", 0.0)
    monkeypatch.setattr(calibration, "BINNED_PAIRS", -1)
    refined = calibration.calibrate_lid(scores, targets)
    assert len(calls) == 1 and calls[0] is not None  # started from the binned optimum
    monkeypatch.setattr(calibration, "BINNED_PAIRS", 10**15)
    exact = calibration.calibrate_lid(scores, targets)
    assert refined.w == pytest.approx(exact.w, rel=1e-12)
    assert refined.b == pytest.approx(exact.b, rel=1e-12)


def test_a_badly_conditioned_fit_is_refined_on_every_pair(monkeypatch):
    # one mated score just below one other score keeps the unpenalised optimum finite but
    # large (w = 16.5) and badly conditioned (few pairs near the boundary carry the curvature):
    # the bound is not met and every pair refines the binned optimum. Float64 sums know this
    # optimum to about 5e-11 only (both paths are that far from the extended-precision one).
    scores, targets = shifted(3000, 100, 11.0, 9)
    scores[0, (targets[0] + 1) % 100] = scores[0, targets[0]] + 0.02
    accurate = []
    fit = calibration.fit_binned

    def recorded(*args, **kwargs):
        out = fit(*args, **kwargs)
        accurate.append(out[3])
        return out

    monkeypatch.setattr(calibration, "fit_binned", recorded)
    new, old = fits(scores, targets, "maximum-likelihood")
    assert accurate == [False] and new.converged and old.converged and new.w > 15
    w_ref, b_ref = longdouble_fit(scores, targets, "maximum-likelihood", (new.w, new.b))
    for cal in (new, old):
        assert cal.w == pytest.approx(w_ref, rel=REL) and cal.b == pytest.approx(b_ref, rel=REL)


def test_binned_fit_does_not_depend_on_the_threads(monkeypatch):
    scores, targets = shifted(3000, 200, 2.5, 10)
    runs = []
    for n in ("1", "2", "3"):
        monkeypatch.setenv("VOXMETRICS_THREADS", n)
        runs.append(calibration.calibrate_lid(scores, targets))
    assert runs[0] == runs[1] == runs[2]


def test_degenerate_rows_are_left_out_as_before(monkeypatch):
    scores, targets = shifted(400, 60, 2.0, 13)
    scores[[3, 50, 51]] = 0.25
    monkeypatch.setattr(calibration, "BINNED_PAIRS", -1)
    with pytest.warns(DegenerateDataWarning, match="3 dev trial"):
        new = calibration.calibrate_lid(scores, targets)
    _, old = fits(scores, targets, "reference-code")
    assert new.n_pairs == old.n_pairs == 397 * 60
    w_ref, b_ref = longdouble_fit(scores, targets, "reference-code", (old.w, old.b))
    assert new.w == pytest.approx(w_ref, rel=REL) and new.b == pytest.approx(b_ref, rel=REL)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(2, 40),
    st.integers(2, 30),
    st.floats(0.0, 5.0),
    st.integers(0, 2**32 - 1),
    st.sampled_from([None, 0, 1]),
    st.sampled_from(VARIANTS),
)
def test_binned_fit_of_any_small_dev_set(t, n, shift, seed, decimals, variant):
    scores, targets = shifted(t, n, shift, seed, decimals=decimals)
    try:
        new, old = fits(scores, targets, variant)
    except calibration.VoxMetricsInputError:  # every row degenerate (rounded to one value)
        return
    if not old.converged:
        assert not new.converged
        return
    w_ref, b_ref = longdouble_fit(scores, targets, variant, (old.w, old.b))
    # b's own rounding: the exact optimum is known to about 1e-15 of the gradient's scale,
    # which bounds b in absolute terms when b is near 0 (no evidence in the dev set)
    assert new.w == pytest.approx(w_ref, rel=REL, abs=1e-13)
    assert new.b == pytest.approx(b_ref, rel=REL, abs=1e-13)


def test_derivatives_equal_the_sigmoids_derivatives():
    # softplus, sigmoid and its derivatives up to ORDER + 1, against mpmath at 400 digits (enough
    # for sigma(700) = 1 - 1e-304)
    eta = np.array([-700.0, -40.0, -5.0, -0.3, 0.0, 1e-3, 0.7, 6.0, 35.0, 700.0])
    got = binned.derivatives(eta)
    assert len(got) == binned.ORDER + 3

    def sigma(u):
        return 1 / (1 + mpmath.exp(-u))

    with mpmath.workdps(400):
        for i, x in enumerate(eta):
            want = [mpmath.log1p(mpmath.exp(x))] + [
                mpmath.diff(sigma, mpmath.mpf(x), k) for k in range(binned.ORDER + 2)
            ]
            v = sigma(x) * (1 - sigma(x))
            for k, (g, w) in enumerate(zip([d[i] for d in got], want, strict=True)):
                # relative to the term itself (softplus, sigma) or to sigma' (the higher ones)
                scale = abs(w) if k < 2 else v
                assert abs(g - float(w)) <= 1e-13 * float(scale) + 1e-300, (x, k)


def test_the_remainder_bound_holds():
    # |sigma^(k)| / sigma over every eta, k <= ORDER + 1, from sigma^(k) as a polynomial in
    # p = sigma: d/deta P(p) = P'(p) p (1 - p)
    polys = [np.polynomial.Polynomial([0.0, 1.0])]
    for _ in range(binned.ORDER + 1):
        polys.append(polys[-1].deriv() * np.polynomial.Polynomial([0.0, 1.0, -1.0]))
    p = np.linspace(1e-12, 1 - 1e-12, 400_001)
    worst = max(float((np.abs(poly(p)) / p).max()) for poly in polys[1:])
    assert worst <= binned.REMAINDER_BOUND
    assert math.isclose(worst, 2.6386, rel_tol=1e-3)  # the docstring's number, k = 7


def two_valued_then_outliers(t, n, seed):
    """The first rows two-valued (z = +-1: a narrow first chunk), the others with an outlier."""
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, n, t)
    scores = rng.normal(size=(t, n))
    scores[np.arange(t), targets] += 2.0
    first = (1 << 18) // n + 30  # more rows than the first chunk holds
    scores[:first] = np.tile(np.arange(n) % 2, (first, 1))
    scores[np.arange(first), targets[:first]] = 1.0
    scores[first:, 0] += 50.0  # z up to about sqrt(n) in the other rows
    return scores, targets


@pytest.mark.parametrize("variant", VARIANTS)
def test_bins_grow_beyond_the_first_chunks_range(variant):
    # the first chunk's z are +-1; the others reach ~17 (n = 300): the bins grow from 4,096 to
    # about 37,000 and the fit is still the exact one
    scores, targets = two_valued_then_outliers(1200, 300, 14)
    new, old = fits(scores, targets, variant)
    assert new.converged and old.converged
    w_ref, b_ref = longdouble_fit(scores, targets, variant, (old.w, old.b))
    assert new.w == pytest.approx(w_ref, rel=REL) and new.b == pytest.approx(b_ref, rel=REL)


def test_bins_past_max_bins_fall_back_to_every_pair(monkeypatch):
    scores, targets = two_valued_then_outliers(1200, 300, 15)
    monkeypatch.setattr(binned, "MAX_BINS", 5000)  # the growth above passes it
    called = []
    monkeypatch.setattr(calibration, "fit_binned", lambda *a, **k: called.append(1))
    new, old = fits(scores, targets, "reference-code")
    assert not called and new == old  # no binned fit: Newton's method on every pair


def test_bin_sums_grow_and_merge_in_order():
    rng = np.random.default_rng(16)
    z = rng.normal(size=50_000) * 3
    whole = binned.BinSums(-1.0, 100.0)  # an anchor inside the range: negative bins too
    whole.add(z)
    parts = [binned.BinSums(-1.0, 100.0) for _ in range(3)]
    for part, piece in zip(parts, np.array_split(z, 3), strict=True):
        part.add(piece)
    merged = binned.BinSums(-1.0, 100.0)
    for part in parts:
        merged.merge(part)
    assert merged.first == whole.first == math.floor((z.min() + 1.0) * 100.0)
    assert merged.moments.shape == whole.moments.shape
    np.testing.assert_array_equal(merged.moments[0], whole.moments[0])  # counts: exact
    np.testing.assert_allclose(merged.moments, whole.moments, rtol=1e-12, atol=1e-12)
    # each bin's offsets: count and the sums of f^m, f in [-1/2, 1/2)
    k = np.floor((z + 1.0) * 100.0).astype(int) - whole.first
    f = (z + 1.0) * 100.0 - np.floor((z + 1.0) * 100.0) - 0.5
    for m in range(binned.ORDER + 1):
        want = np.bincount(k, f**m, whole.moments.shape[1])
        np.testing.assert_allclose(whole.moments[m], want, rtol=1e-12, atol=1e-12)
