"""SRD: rank statistics, ties, beta-binomial model and fits, per-speaker view (metrics.md 4).

Hand-computed values carry their arithmetic in comments; the batched beta-binomial fits equal
the former one-at-a-time SciPy fits, float for float. Timing is not asserted here:
``benchmarks/bench_srd.py`` measures it.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules
from scipy.optimize import minimize
from scipy.special import betaln, comb
from scipy.stats import betabinom

from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics.legal import linkability
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.srd import (
    _BOUND,
    _STARTS,
    LOSSES,
    _beta_binomial_logpmf_of,
    _loss,
    _moment_start,
    beta_binomial_pmf,
    fit_beta_binomial,
    fit_beta_binomials,
    rank_histogram,
    srd,
    srd_per_speaker,
    srd_stats,
)

FAST = settings(max_examples=60, deadline=None)
HALVES = st.integers(-4, 4).map(lambda k: k / 2)  # few values: many ties
FLOATS = st.floats(-10, 10, allow_nan=False)

# metrics.md section 1 worked example (paper 000, eq. 1)
WORKED_S = [[0.9, 0.8, 0.8, 0.8], [0.7, 0.6, 0.6, 0.6], [0.4, 0.5, 0.4, 0.4], [0.2, 0.2, 0.3, 0.2]]
WORKED_TARGETS = [0, 0, 1, 2]


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    forget_unimportable_modules()


def _stats(p) -> tuple[float, float, float, float, float]:
    s = srd_stats(p)
    return s.mean_d, s.idr, s.std_d, s.max_d, s.spread


# ---------------------------------------------------------------- statistics by hand


@pytest.mark.parametrize("n", [2, 4, 8, 40])
def test_all_mass_at_rank_1_discloses_log2_n(n):
    # p = [1, 0, ..., 0]: e_1 = log2(N * 1) = log2 N is the only disclosure, so
    # MeanD = MaxD = log2 N, StDD = 0, IdR = p_1 = 1, Spread = #{p_k > 1/N} / N = 1/N
    p = np.zeros(n)
    p[0] = 1.0
    assert _stats(p) == pytest.approx((math.log2(n), 1.0, 0.0, math.log2(n), 1 / n), abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5, 7, 10, 40, 49])
def test_uniform_ranks_disclose_nothing(n):
    # p_k = 1/N: e_k = log2(N / N) = 0 at every rank, so MeanD = MaxD = StDD = 0; no rank is
    # above chance, Spread = 0 (also when N / N is not exact in floating point); IdR = 1/N
    for counts in (np.ones(n), np.full(n, 7)):
        assert _stats(counts) == pytest.approx((0.0, 1 / n, 0.0, 0.0, 0.0), abs=1e-12)


def test_two_equal_bins():
    # N = 4, p = [1/2, 0, 1/2, 0]: e_1 = e_3 = log2(4 / 2) = 1 (ranks 2, 4 have p = 0 and no e);
    # MeanD = 1/2 * 1 + 1/2 * 1 = 1, StDD = 0, MaxD = 1, IdR = 1/2,
    # Spread = #{1/2 > 1/4} / 4 = 2 / 4 = 1/2
    assert _stats([0.5, 0, 0.5, 0]) == pytest.approx((1.0, 0.5, 0.0, 1.0, 0.5), abs=1e-12)
    # a histogram (counts) gives the same: it is normalised
    assert _stats([3, 0, 3, 0]) == pytest.approx((1.0, 0.5, 0.0, 1.0, 0.5), abs=1e-12)


def test_unequal_bins_have_a_positive_stdd():
    # N = 4, p = [1/2, 1/4, 1/4, 0]: e = [log2 2, log2 1, log2 1] = [1, 0, 0];
    # MeanD = 1/2 * 1 = 1/2; StDD^2 = 1/2 (1 - 1/2)^2 + 1/4 (0 - 1/2)^2 + 1/4 (0 - 1/2)^2 = 1/4,
    # StDD = 1/2; MaxD = 1; IdR = 1/2; Spread = #{1/2 > 1/4} / 4 = 1/4 (1/4 is not > 1/4)
    assert _stats([2, 1, 1, 0]) == pytest.approx((0.5, 0.5, 0.5, 1.0, 0.25), abs=1e-12)


def test_two_ranks_with_a_negative_disclosure():
    # N = 2, p = [3/4, 1/4]: e_1 = log2(3/2) = 0.5849625, e_2 = log2(1/2) = -1;
    # MeanD = 3/4 log2(3/2) - 1/4 = 0.1887219 (= 1 - H2(1/4), the KL from uniform);
    # a two-point distribution has StDD = sqrt(p q) |e_1 - e_2| = (sqrt 3 / 4) log2 3 = 0.6863089;
    # MaxD = e_1; Spread = 1/2
    mean_d = 0.75 * math.log2(1.5) - 0.25
    std_d = math.sqrt(3) / 4 * math.log2(3)
    expected = (mean_d, 0.75, std_d, math.log2(1.5), 0.5)
    assert _stats([3, 1]) == pytest.approx(expected, abs=1e-12)
    assert mean_d == pytest.approx(0.1887219, abs=1e-7)
    assert std_d == pytest.approx(0.6863089, abs=1e-7)


@pytest.mark.parametrize("p", [[1], [], [1, -1, 1], [0, 0, 0], [1, np.nan], [1, np.inf]], ids=str)
def test_srd_stats_rejects_what_is_not_a_distribution(p):
    with pytest.raises(VoxMetricsInputError, match="N >= 2"):
        srd_stats(p)


def test_rank_histogram_counts_and_rejects_ranks_out_of_range():
    assert rank_histogram([1, 1, 3], 4).tolist() == [2, 0, 1, 0]
    for bad in ([0, 1], [1, 5]):
        with pytest.raises(VoxMetricsInputError, match=r"1\.\.4"):
            rank_histogram(bad, 4)


# ---------------------------------------------------------------- ties (metrics.md section 0)


@pytest.mark.parametrize(
    ("row", "rank"),
    [
        ([0.5, 0.4, 0.1], 1),  # strictly highest
        ([0.5, 0.5, 0.1], 2),  # one tie: the target takes the worse rank
        ([0.5, 0.5, 0.5], 3),  # two ties: the worst of three
        ([0.5, 0.6, 0.5], 3),  # one higher, one tie
    ],
)
def test_a_tie_counts_against_the_attacker(row, rank):
    r = srd([row], [0])
    assert r.ranks.tolist() == [rank]
    assert r.histogram.tolist() == [int(k == rank) for k in (1, 2, 3)]
    assert r.stats.idr == (1.0 if rank == 1 else 0.0)


@pytest.mark.parametrize(
    ("row", "rank"),
    [
        ([0.5, 0.4, 0.1], 1),
        ([0.5, 0.5, 0.1], 1),  # one tie: the target takes the better rank
        ([0.5, 0.5, 0.5], 1),
        ([0.5, 0.6, 0.5], 2),  # one higher, one tie
    ],
)
def test_ties_for_the_attacker_give_the_best_rank(row, rank):
    r = srd([row], [0], ties="attacker")
    assert r.ranks.tolist() == [rank]
    # and the rank-1 rate is then the linkability (whose ties go to the true speaker)
    assert linkability([row], [0]) == r.stats.idr == (1.0 if rank == 1 else 0.0)


def test_worked_example_puts_every_trial_at_rank_1():
    # metrics.md section 1: each trial's own column is strictly the largest of its row
    # (.9 > .8; .7 > .6; .5 > .4; .3 > .2), so h = [4, 0, 0, 0], MeanD = MaxD = log2 4 = 2
    r = srd(WORKED_S, WORKED_TARGETS)
    assert r.ranks.tolist() == [1, 1, 1, 1]
    assert r.histogram.tolist() == [4, 0, 0, 0]
    assert (r.stats.mean_d, r.stats.idr, r.stats.std_d, r.stats.max_d, r.stats.spread) == (
        2.0, 1.0, 0.0, 2.0, 0.25,
    )  # fmt: skip
    assert r.n_trials == 4 and r.n_enrolled == 4
    assert r.sparse  # 4 trials < 10 per rank x 4 ranks
    assert r.to_dict() == {"mean_d": 2.0, "idr": 1.0, "std_d": 0.0, "max_d": 2.0, "spread": 0.25}


def test_result_arrays_are_read_only():
    r = srd(WORKED_S, WORKED_TARGETS)
    assert not r.ranks.flags.writeable and not r.histogram.flags.writeable


def test_sparse_threshold_is_ten_trials_per_rank():
    n = 3
    dense = np.tile(np.eye(n), (10, 1))  # 30 trials = 10 per rank bin
    assert not srd(dense, np.tile(np.arange(n), 10)).sparse
    assert srd(dense[:-1], np.tile(np.arange(n), 10)[:-1]).sparse


# ---------------------------------------------------------------- properties


@st.composite
def matrices(draw):
    """(scores, targets): T in 1..8, N in 2..6; halves give many ties."""
    elements = draw(st.sampled_from([HALVES, FLOATS]))
    t, n = draw(st.integers(1, 8)), draw(st.integers(2, 6))
    values = draw(st.lists(elements, min_size=t * n, max_size=t * n))
    targets = draw(st.lists(st.integers(0, n - 1), min_size=t, max_size=t))
    return np.array(values, dtype=np.float64).reshape(t, n), np.array(targets, dtype=np.intp)


@FAST
@given(st_=matrices())
def test_idr_equals_linkability(st_):
    scores, targets = st_
    assert srd(scores, targets, ties="attacker").stats.idr == linkability(scores, targets)
    # against the attacker, a tie can only lower the rank-1 rate
    assert srd(scores, targets).stats.idr <= linkability(scores, targets)


@FAST
@given(st_=matrices())
def test_attacker_ranks_are_one_plus_the_strictly_higher(st_):
    # slow reference: count by a loop
    scores, targets = st_
    expected = [
        1 + sum(s > row[m] for j, s in enumerate(row) if j != m)
        for row, m in zip(scores, targets, strict=True)
    ]
    assert srd(scores, targets, ties="attacker").ranks.tolist() == expected


@FAST
@given(st_=matrices())
def test_statistics_stay_in_their_ranges(st_):
    scores, targets = st_
    r = srd(scores, targets)
    n = scores.shape[1]
    s = r.stats
    assert r.histogram.sum() == r.n_trials == scores.shape[0]
    np.testing.assert_array_equal(r.ranks, target_ranks(scores, targets))
    assert s.mean_d >= 0.0
    assert s.max_d <= math.log2(n) + 1e-12
    assert s.mean_d <= s.max_d + 1e-12  # an expectation is at most its largest value
    assert s.std_d >= 0.0
    assert 0.0 <= s.spread <= 1.0
    assert 0.0 <= s.idr <= 1.0


@FAST
@given(data=st.data())
def test_invariant_to_trial_and_enrolled_column_order(data):
    scores, targets = data.draw(matrices())
    rows = np.array(data.draw(st.permutations(range(scores.shape[0]))), dtype=np.intp)
    cols = np.array(data.draw(st.permutations(range(scores.shape[1]))), dtype=np.intp)
    ref = srd(scores, targets)
    by_rows = srd(scores[rows], targets[rows])
    # new column j is old column cols[j], so old target column m is now argsort(cols)[m]
    by_cols = srd(scores[:, cols], np.argsort(cols)[targets])
    for other in (by_rows, by_cols):
        np.testing.assert_array_equal(other.histogram, ref.histogram)
        assert other.stats == ref.stats
    np.testing.assert_array_equal(by_rows.ranks, ref.ranks[rows])


@settings(max_examples=20, deadline=None)
@given(
    counts=st.lists(st.integers(0, 30), min_size=2, max_size=12).filter(lambda c: sum(c) > 0),
    loss=st.sampled_from(LOSSES),
)
def test_a_fitted_model_has_finite_statistics(counts, loss):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # degenerate draws may not converge
        fit = fit_beta_binomial(counts, loss=loss)
    assert fit.alpha > 0 and fit.beta > 0
    assert fit.pmf.shape == (len(counts),)
    # scipy's betabinom loses ~1e-8 of precision where non-converged fits end up, alpha and
    # beta ~ 1e6 (counts [0, 1, 0], LL: alpha = beta = 3e6, the pmf sums to 1 + 3e-8)
    assert fit.pmf.sum() == pytest.approx(1.0, abs=1e-9 if fit.converged else 1e-6)
    s = fit.stats
    assert all(math.isfinite(v) for v in (s.mean_d, s.idr, s.std_d, s.max_d, s.spread))
    assert s.mean_d >= 0.0 and s.max_d <= math.log2(len(counts)) + 1e-9
    assert math.isfinite(fit.loss_value) and fit.kl_bits >= -1e-12
    json.dumps(fit.to_dict(), allow_nan=False)  # JSON-safe: infinities became None


# ---------------------------------------------------------------- the beta-binomial model


def _hand_pmf(n: int, a: float, b: float) -> np.ndarray:
    # metrics.md section 4 (the corrected eq. 3 of paper 002): with j = k - 1 in 0..N-1,
    # gamma_k = C(N-1, j) B(j + alpha, N-1-j + beta) / B(alpha, beta); N-1-j = N-k
    k = np.arange(1, n + 1)
    log_b = betaln(k - 1 + a, n - k + b) - betaln(a, b)
    return comb(n - 1, k - 1) * np.exp(log_b)


@pytest.mark.parametrize(
    ("n", "a", "b"), [(2, 0.5, 3.0), (4, 1.0, 1.0), (10, 0.3, 4.0), (50, 1.5, 0.7), (40, 2, 2)]
)
def test_beta_binomial_pmf_is_the_corrected_formula(n, a, b):
    pmf = beta_binomial_pmf(n, a, b)
    np.testing.assert_allclose(pmf, _hand_pmf(n, a, b), rtol=1e-10, atol=1e-15)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    if a != b:
        # the extracted paper's typo B(j + alpha, N - j + alpha) is a different distribution
        k = np.arange(1, n + 1)
        typo = comb(n - 1, k - 1) * np.exp(betaln(k - 1 + a, n - k + a) - betaln(a, b))
        assert not np.allclose(typo, pmf)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 200),
    a=st.floats(0.01, 50),
    b=st.floats(0.01, 50),
)
def test_beta_binomial_pmf_sums_to_one(n, a, b):
    pmf = beta_binomial_pmf(n, a, b)
    assert pmf.shape == (n,) and (pmf >= 0).all()
    assert pmf.sum() == pytest.approx(1.0, abs=1e-9)


def test_alpha_beta_one_is_uniform_and_alpha_small_concentrates_at_rank_1():
    np.testing.assert_allclose(beta_binomial_pmf(7, 1.0, 1.0), np.full(7, 1 / 7), rtol=1e-12)
    assert beta_binomial_pmf(40, 0.05, 5.0)[0] > 0.5


# ---------------------------------------------------------------- fitting

# Where every loss is informative: mass concentrated at low ranks (RWMS weighs rank k by
# e^-k, so it only sees the first few ranks).
LOW_RANKS = (0.3, 4.0, 50)
# Mass at high ranks: the first few ranks hold ~1e-3 each. LL, MS, WMS and CLL still recover
# it; RWMS does not (see test_rwms_sees_only_the_first_ranks).
HIGH_RANKS = (1.5, 0.7, 50)


def _sample(a: float, b: float, n: int, seed: int = 0, size: int = 200_000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rank_histogram(betabinom.rvs(n - 1, a, b, size=size, random_state=rng) + 1, n)


@pytest.fixture(scope="module")
def low_ranks_sample() -> np.ndarray:
    return _sample(*LOW_RANKS)


@pytest.fixture(scope="module")
def high_ranks_sample() -> np.ndarray:
    return _sample(*HIGH_RANKS)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("shape", [LOW_RANKS, HIGH_RANKS], ids=["low-ranks", "high-ranks"])
def test_every_loss_recovers_the_parameters_of_an_exact_model(loss, shape):
    # p = gamma(alpha, beta) exactly: every loss is 0 there, so it is the optimum
    a, b, n = shape
    fit = fit_beta_binomial(beta_binomial_pmf(n, a, b), loss=loss)
    assert fit.converged, fit.message
    assert (fit.alpha, fit.beta) == pytest.approx((a, b), rel=1e-3)
    assert fit.kl_bits == pytest.approx(0.0, abs=1e-8)


@pytest.mark.parametrize("loss", LOSSES)
def test_every_loss_recovers_a_low_rank_sample(loss, low_ranks_sample):
    # 200,000 seeded ranks from BetaBinomial(49, 0.3, 4) + 1; seeds 0-3 all land within 4 %
    # for every loss (the squared-error losses weigh the noisy first ranks most)
    a, b, _ = LOW_RANKS
    fit = fit_beta_binomial(low_ranks_sample, loss=loss)
    assert fit.converged
    assert fit.alpha == pytest.approx(a, rel=0.05)
    assert fit.beta == pytest.approx(b, rel=0.05)


@pytest.mark.parametrize("loss", ["LL", "MS", "WMS", "CLL"])
def test_losses_using_every_rank_recover_a_high_rank_sample(loss, high_ranks_sample):
    # BetaBinomial(49, 1.5, 0.7) + 1: within 1.5 % on seeds 0-3 for these four losses
    a, b, _ = HIGH_RANKS
    fit = fit_beta_binomial(high_ranks_sample, loss=loss)
    assert fit.converged
    assert fit.alpha == pytest.approx(a, rel=0.03)
    assert fit.beta == pytest.approx(b, rel=0.03)


def test_rwms_sees_only_the_first_ranks(high_ranks_sample):
    # RWMS weighs rank k by e^-k: ranks beyond ~5 carry < 1 % of the weight. With mass at high
    # ranks (1.5, 0.7), the first ranks hold ~1e-3 each, so RWMS fits their sampling noise:
    # beta comes out 7-11 % off depending on the seed (+8 % on seed 0), against < 1 % for LL.
    # It is not a bug of the fit (the exact model is recovered, test above); the loss simply
    # carries no information about the bulk of such a distribution, which is why the paper
    # prefers CLL. What RWMS does get right is the first ranks.
    _, b, _ = HIGH_RANKS
    p = high_ranks_sample / high_ranks_sample.sum()
    rwms = fit_beta_binomial(high_ranks_sample, loss="RWMS")
    ll = fit_beta_binomial(high_ranks_sample, loss="LL")
    assert abs(rwms.beta / b - 1) > 0.05 > 3 * abs(ll.beta / b - 1)
    np.testing.assert_allclose(rwms.pmf[:3], p[:3], atol=2e-4)
    assert rwms.rank1_match < ll.rank1_match


@pytest.mark.parametrize("sample", ["low_ranks_sample", "high_ranks_sample"])
def test_cll_matches_the_rank_1_share(sample, request):
    h = request.getfixturevalue(sample)
    p = h / h.sum()
    fit = fit_beta_binomial(h, loss="CLL")
    assert abs(p[0] - fit.pmf[0]) < 1e-3
    assert fit.rank1_match == pytest.approx(abs(math.log2(p[0] / fit.pmf[0])))
    assert fit.rank1_match < 0.01
    assert fit.stats.idr == pytest.approx(p[0], abs=1e-3)
    # and better than plain LL at rank 1 (paper 002, table III)
    assert fit.rank1_match <= fit_beta_binomial(h, loss="LL").rank1_match


def test_fit_reports_kl_in_bits_and_the_model_statistics(low_ranks_sample):
    h = low_ranks_sample
    p = h / h.sum()
    fit = fit_beta_binomial(h, loss="LL")
    pos = p > 0
    assert fit.kl_bits == pytest.approx(float((p[pos] * np.log2(p[pos] / fit.pmf[pos])).sum()))
    np.testing.assert_allclose(fit.pmf, beta_binomial_pmf(h.size, fit.alpha, fit.beta))
    assert fit.stats == srd_stats(fit.pmf)
    d = fit.to_dict()
    assert d["loss"] == "LL" and d["converged"] is True and "pmf" not in d
    assert d["mean_d"] == fit.stats.mean_d


@pytest.mark.parametrize("loss", LOSSES)
def test_all_mass_at_rank_1_cannot_converge_and_says_so(loss):
    # the optimum is the point mass at rank 1: alpha -> 0 (or beta -> inf), off every bound
    with pytest.warns(DegenerateDataWarning, match=f"{loss} fit did not converge"):
        fit = fit_beta_binomial([10, 0, 0, 0, 0, 0, 0, 0], loss=loss)
    assert not fit.converged
    assert fit.alpha / fit.beta < 1e-6  # heading for the point mass, not garbage elsewhere
    assert fit.pmf[0] == pytest.approx(1.0, abs=1e-4)
    assert json.loads(json.dumps(fit.to_dict()))["converged"] is False


def test_all_mass_at_rank_n_cannot_converge_either():
    with pytest.warns(DegenerateDataWarning, match="did not converge"):
        fit = fit_beta_binomial([0, 0, 0, 5], loss="LL")
    assert not fit.converged
    assert fit.pmf[-1] == pytest.approx(1.0, abs=1e-4)
    assert fit.rank1_match == math.inf and fit.to_dict()["rank1_match"] is None


def test_fit_rejects_an_unknown_loss():
    with pytest.raises(VoxMetricsInputError, match="LL, MS, WMS, RWMS, CLL"):
        fit_beta_binomial([1, 2, 3], loss="L2")  # type: ignore[arg-type]


# ---------------------------------------------------------------- per speaker


@pytest.fixture(scope="module")
def per_speaker():
    rng = np.random.default_rng(3)
    n = 12
    speakers = np.repeat(["c", "a", "b", "d"], [9, 7, 3, 5])  # unsorted on purpose
    rng.shuffle(speakers)
    ranks = rng.integers(1, n + 1, size=speakers.size)
    ranks[speakers == "b"] = [1, 2, 4]
    ranks[speakers == "d"] = 1  # d: every trial at rank 1, a degenerate fit
    with warnings.catch_warnings():
        # the library silences its per-speaker non-convergence warnings (model_mean_d is NaN)
        warnings.simplefilter("error", DegenerateDataWarning)
        result = srd_per_speaker(ranks, speakers, n)
    return ranks, speakers, n, result


def test_per_speaker_histograms_sum_to_each_speakers_trials(per_speaker):
    ranks, speakers, n, sp = per_speaker
    assert sp.speakers.tolist() == ["a", "b", "c", "d"]
    assert sp.histograms.shape == (4, n)
    for k, s in enumerate(sp.speakers):
        mine = ranks[speakers == s]
        assert sp.histograms[k].sum() == mine.size
        np.testing.assert_array_equal(sp.histograms[k], rank_histogram(mine, n))
    assert sp.histograms.sum() == ranks.size


def test_per_speaker_mean_disclosures(per_speaker):
    _, _, _, sp = per_speaker
    for k, h in enumerate(sp.histograms):
        assert sp.empirical_mean_d[k] == srd_stats(h).mean_d
        fit = sp.fits[k]
        assert fit.loss == "LL"
        if fit.converged:
            assert sp.model_mean_d[k] == fit.stats.mean_d
        else:
            assert math.isnan(sp.model_mean_d[k])
    d = list(sp.speakers).index("d")
    assert sp.empirical_mean_d[d] == pytest.approx(math.log2(12))
    assert not sp.fits[d].converged  # all at rank 1
    df = sp.to_frame()
    assert list(df["speaker"]) == ["a", "b", "c", "d"]
    assert list(df["n_trials"]) == [7, 3, 9, 5]
    assert list(df["converged"]) == [f.converged for f in sp.fits]


def test_per_speaker_checks_lengths():
    with pytest.raises(VoxMetricsInputError, match="same length"):
        srd_per_speaker([1, 2], ["a"], 3)


def test_per_speaker_rejects_rank_0():
    # used to wrap rank 0 to rank N through np.add.at(hist, (inverse, r - 1), 1)
    with pytest.raises(VoxMetricsInputError, match=r"ranks must lie in 1\.\.3"):
        srd_per_speaker([0, 1], ["a", "a"], 3)


def test_per_speaker_rejects_rank_above_n():
    # used to raise a bare IndexError
    with pytest.raises(VoxMetricsInputError, match=r"ranks must lie in 1\.\.3"):
        srd_per_speaker([1, 4], ["a", "a"], 3)


@pytest.mark.parametrize(("n", "a", "b"), [(2, 0.5, 3.0), (50, 0.3, 4.0), (400, 7.0, 0.2)])
def test_the_fit_objective_equals_the_direct_log_pmf_bit_for_bit(n, a, b):
    # fit_beta_binomial computes the binomial coefficients once per fit: same numbers
    from scipy.special import betaln, gammaln

    from voxmetrics.metrics.srd import _beta_binomial_logpmf_of

    k = np.arange(n, dtype=np.float64)
    m = n - 1.0
    direct = (
        gammaln(m + 1.0) - gammaln(k + 1.0) - gammaln(m - k + 1.0)
        + betaln(k + a, m - k + b) - betaln(a, b)
    )  # fmt: skip
    np.testing.assert_array_equal(_beta_binomial_logpmf_of(n)(a, b), direct)


# ------------------------------------------------------------ batched fits = the former SciPy fits
#
# The batched beta-binomial fits equal the former one-at-a-time SciPy fits, float for float.
# ``fit_beta_binomials`` (and through it ``fit_beta_binomial`` and ``srd_per_speaker``) runs
# every (histogram, start) Nelder-Mead problem in lock step (``metrics._neldermead``) and reads
# only the ranks the LL and CLL losses use. The slow references below are the former code:
# ``scipy.optimize.minimize`` on the full-N objective, one start after the other. No timing is
# asserted here (``benchmarks/bench_srd.py``, ``bench_dashboard.py`` measure it).


FAST_FITS = settings(max_examples=20, deadline=None)


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


@FAST_FITS
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
