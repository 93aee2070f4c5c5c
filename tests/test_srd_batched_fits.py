"""The batched beta-binomial fits equal the former one-at-a-time SciPy fits, float for float.

``fit_beta_binomials`` (and through it ``fit_beta_binomial`` and ``srd_per_speaker``) runs
every (histogram, start) Nelder-Mead problem in lock step (``metrics._neldermead``) and reads
only the ranks the LL and CLL losses use. The slow references below are the former code:
``scipy.optimize.minimize`` on the full-N objective, one start after the other. No timing is
asserted here (``benchmarks/bench_srd.py``, ``bench_dashboard.py`` measure it).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics._neldermead import nelder_mead_many
from voxmetrics.metrics.srd import (
    _BOUND,
    _STARTS,
    LOSSES,
    _beta_binomial_logpmf_of,
    _loss,
    _moment_start,
    fit_beta_binomial,
    fit_beta_binomials,
    srd_per_speaker,
)

FAST = settings(max_examples=20, deadline=None)
OPTIONS = {"xatol": 1e-10, "fatol": 1e-14, "maxiter": 4000, "maxfev": 8000}


def _reference_best(p, loss):
    """The former fit_beta_binomial's optimiser part: SciPy, full-N objective, start by start."""
    q = np.asarray(p, dtype=np.float64).ravel()
    q = q / q.sum()
    pos = q > 0
    logpmf = _beta_binomial_logpmf_of(q.size)

    def objective(x):
        if np.abs(x).max() > _BOUND + 3:
            return np.inf
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_gamma = logpmf(math.exp(x[0]), math.exp(x[1]))
            value = float(_loss(loss, q, pos, log_gamma))
        return value if math.isfinite(value) else np.inf

    starts = list(_STARTS)
    mom = _moment_start(q)
    if mom is not None:
        starts.append(mom)
    best = None
    for x0 in starts:
        res = minimize(objective, np.asarray(x0), method="Nelder-Mead", options=OPTIONS)
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    return best


def _assert_same_fit(fit, best):
    assert fit.alpha == math.exp(best.x[0])
    assert fit.beta == math.exp(best.x[1])
    assert fit.loss_value == float(best.fun)
    at_bound = bool(np.abs(best.x).max() >= _BOUND)
    assert fit.converged == (bool(best.success) and not at_bound)
    if not at_bound:
        assert fit.message == str(best.message)


def _histogram(rng, n, n_trials, p):
    h = np.zeros(n, dtype=np.int64)
    np.add.at(h, np.minimum(rng.geometric(p, n_trials), n) - 1, 1)
    return h


HISTOGRAMS = [
    np.array([5, 0, 0, 0, 0, 0, 0, 0]),  # every trial at rank 1: the fit runs to the bound
    np.array([0, 0, 0, 0, 0, 0, 0, 3]),  # every trial at rank N
    np.array([0, 2, 0, 2, 0, 0, 0, 0]),  # no rank 1 (CLL reads rank 1 on its own)
    np.array([1, 1, 1, 1, 1, 1, 1, 1]),  # uniform
    np.array([3, 0, 0, 0, 0, 0, 0, 3]),  # U-shaped, equal ends
    np.array([1, 0]),  # N = 2
    np.array([40, 22, 11, 9, 4, 3, 2, 1, 1, 0, 1, 0]),
]


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("index", range(len(HISTOGRAMS)))
def test_batched_fit_equals_the_scipy_fit(loss, index):
    h = HISTOGRAMS[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        fit = fit_beta_binomial(h, loss=loss)
    _assert_same_fit(fit, _reference_best(h, loss))


@pytest.mark.parametrize("loss", ["LL", "CLL"])
def test_many_sparse_histograms_at_once_equal_one_fit_each(loss):
    # a speaker's histogram: a few trials over N = 200 ranks, every count of read ranks
    rng = np.random.default_rng(3)
    hists = np.array(
        [_histogram(rng, 200, int(rng.integers(1, 14)), rng.uniform(0.02, 0.6)) for _ in range(12)]
    )
    fits = fit_beta_binomials(hists, loss=loss)
    for h, (fit, problem) in zip(hists, fits, strict=True):
        _assert_same_fit(fit, _reference_best(h, loss))
        assert (problem is None) == fit.converged


def test_a_dense_histogram_equals_the_scipy_fit():
    # a condition's histogram: 2,000 trials over 300 ranks (more than 128 terms per sum)
    rng = np.random.default_rng(5)
    h = _histogram(rng, 300, 2000, 0.02)
    for loss in ("LL", "CLL"):
        _assert_same_fit(fit_beta_binomial(h, loss=loss), _reference_best(h, loss))


@FAST
@given(
    st.lists(st.integers(0, 4), min_size=2, max_size=30).filter(lambda c: sum(c) > 0),
    st.sampled_from(["LL", "CLL"]),
)
def test_any_histogram_fits_as_scipy_fits_it(counts, loss):
    h = np.asarray(counts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        fit = fit_beta_binomial(h, loss=loss)
    _assert_same_fit(fit, _reference_best(h, loss))


def test_non_convergence_still_warns_once_per_fit():
    with pytest.warns(DegenerateDataWarning, match="did not converge"):
        fit = fit_beta_binomial([5, 0, 0, 0], loss="LL")
    assert not fit.converged


def test_per_speaker_fits_equal_one_fit_per_speaker():
    rng = np.random.default_rng(11)
    n, speakers = 60, [f"s{i:02d}" for i in range(15)]
    ranks = np.minimum(rng.geometric(0.1, 120), n)
    spk = np.asarray(speakers)[rng.integers(0, 15, 120)]
    result = srd_per_speaker(ranks, spk, n, loss="LL")
    for h, fit in zip(result.histograms, result.fits, strict=True):
        _assert_same_fit(fit, _reference_best(h, "LL"))
        assert np.array_equal(fit.pmf, fit_beta_binomial_quiet(h).pmf)


def fit_beta_binomial_quiet(h):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return fit_beta_binomial(h, loss="LL")


# ---------------------------------------------------------------- the optimiser itself


def _rosenbrock(x):
    return float((1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2)


def _plateau(x):
    # ties everywhere (a staircase) and an infinite region: sorting ties, inf vertices
    if x[0] > 3:
        return np.inf
    return float(np.floor(2 * abs(x[0] - 0.5)) + np.floor(abs(x[1] + 1)))


@pytest.mark.parametrize("objective", [_rosenbrock, _plateau])
@pytest.mark.parametrize("maxfev", [1, 2, 3, 4, 7, 25, 60, 8000])
@pytest.mark.parametrize("maxiter", [2, 30, 4000])
def test_nelder_mead_many_follows_scipy_step_for_step(objective, maxfev, maxiter):
    # small maxfev stop in the middle of a step (expansion, contraction, shrink)
    starts = [(0.0, 0.0), (-1.2, 1.0), (2.0, -3.0), (2.9, 0.4), (0.5, -1.0)]
    options = {"xatol": 1e-10, "fatol": 1e-14, "maxiter": maxiter, "maxfev": maxfev}

    def batch(problems, points):
        return [objective(p) for p in points]

    many = nelder_mead_many(batch, np.asarray(starts), **options)
    for i, x0 in enumerate(starts):
        res = minimize(objective, np.asarray(x0), method="Nelder-Mead", options=options)
        assert many.x[i].tolist() == res.x.tolist()
        assert many.fun[i] == res.fun
        assert many.nfev[i] == res.nfev
        assert many.nit[i] == res.nit
        assert many.message(i) == res.message
        assert (many.status[i] == 0) == res.success


def test_speaker_srd_in_one_batch_reports_progress_and_equals_the_groups():
    from voxmetrics.analysis.srd import speaker_srd
    from voxmetrics.metrics.srd import srd_from_ranks

    rng = np.random.default_rng(2)
    who = np.array([f"s{k}" for k in rng.integers(0, 9, 70)])
    ranks = np.minimum(rng.geometric(0.2, 70), 12)
    result = srd_from_ranks(ranks, 12)
    steps = []
    one = speaker_srd(result, who, progress=lambda f, m: steps.append((f, m)))
    grouped = speaker_srd(result, who, n_groups=4)
    assert [(f.alpha, f.beta, f.loss_value) for f in one.fits] == [
        (f.alpha, f.beta, f.loss_value) for f in grouped.fits
    ]
    np.testing.assert_array_equal(one.model_mean_d, grouped.model_mean_d)
    assert steps[-1] == (1.0, "Fitted 9 of 9 speakers…")
    assert [f for f, _ in steps] == sorted(f for f, _ in steps)


# ---------------------------------------------------------------- fits shared by many subsets


def _same_fit(a, b) -> bool:
    return (
        (a.alpha, a.beta, a.loss_value, a.converged, a.kl_bits, a.rank1_match, a.message)
        == (b.alpha, b.beta, b.loss_value, b.converged, b.kl_bits, b.rank1_match, b.message)
        and a.pmf.tobytes() == b.pmf.tobytes()
        and a.stats == b.stats
    )


def _counting(monkeypatch) -> list[int]:
    """The number of histograms each call of fit_beta_binomials fits, call by call."""
    import importlib

    srd_module = importlib.import_module("voxmetrics.metrics.srd")  # not the srd function
    calls: list[int] = []
    real = srd_module.fit_beta_binomials

    def counted(h, **kw):
        calls.append(len(h))
        return real(h, **kw)

    monkeypatch.setattr(srd_module, "fit_beta_binomials", counted)
    return calls


def test_shared_fits_fit_each_histogram_once_and_warn_each_time(monkeypatch):
    from voxmetrics.metrics.srd import shared_beta_binomial_fits

    calls = _counting(monkeypatch)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with shared_beta_binomial_fits():
            first = fit_beta_binomial([2, 0], loss="CLL")  # does not converge: warns
            again = fit_beta_binomial(np.array([2.0, 0.0]), loss="CLL")
            other_loss = fit_beta_binomial([2, 0], loss="LL")
        outside = fit_beta_binomial([2, 0], loss="CLL")
    assert again is first and calls == [1, 1, 1]
    assert other_loss.loss == "LL" and _same_fit(outside, first)
    degenerate = [w for w in seen if issubclass(w.category, DegenerateDataWarning)]
    assert len(degenerate) == 4  # the shared fit warns as its own fit does


def test_prefit_batches_the_fits_to_come_each_equal_to_its_own(monkeypatch):
    from voxmetrics.metrics.srd import prefit_beta_binomials, shared_beta_binomial_fits

    histograms = [[2, 0], [1, 1], [0, 2], [2, 0], [3, 1, 0], [1, 1, 2], [0, 0, 0], [-1, 2]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        own = [fit_beta_binomial(h, loss="CLL") for h in histograms[:6]]
        calls = _counting(monkeypatch)
        prefit_beta_binomials(histograms[:2])  # outside the sharing: nothing is done
        assert calls == []
        with shared_beta_binomial_fits():
            prefit_beta_binomials(histograms)  # the invalid ones are left to their own fits
            assert sorted(calls) == [2, 3]  # one batch per number of ranks, each distinct once
            shared = [fit_beta_binomial(h, loss="CLL") for h in histograms[:6]]
            assert sorted(calls) == [2, 3]
            with pytest.raises(VoxMetricsInputError):
                fit_beta_binomial(histograms[6], loss="CLL")
    assert all(_same_fit(a, b) for a, b in zip(own, shared, strict=True))
