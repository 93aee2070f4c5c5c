"""ZEBRA (paper 004; shared/docs/metrics.md section 3): reference values and properties.

Every expected number is derived by hand in a comment, or produced by code written here from
the definitions of metrics.md: a stack-based pool-adjacent-violators loop in exact
``fractions.Fraction`` arithmetic, the ECE formula of section 3 integrated numerically with
``scipy.integrate.quad``, and Z(x) of paper 004 eq. 6 evaluated in 60-digit ``mpmath``
arithmetic. Nothing here comes from the authors' (LGPL) reference implementation, which is
neither copied nor imported (see the provenance test); the last sections compare with faithful
re-typings of its functions (read, not imported), and with the former element-by-element
implementation (``tests/reference_pooled.py``) under both tie rules. The bootstrap's kernels
(``_LeftIndex``, ``speaker_run_counts``, ``replicate_run_counts``) equal their former ones
(``tests/metrics/run_count_cases.py``) exactly.
"""

from __future__ import annotations

import ast
import math
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pool_cases
import pytest
import reference_pooled as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules
from scipy import integrate

from tests.metrics.run_count_cases import old_speaker_run_counts, tied_matrix
from voxmetrics import (
    TAGS,
    ScoreMatrix,
    VoxMetricsInputError,
    ZebraResult,
    d_ece_from_llrs,
    ece_curves,
    pav_llrs,
    pav_transform,
    zebra,
    zebra_bootstrap,
    zebra_tag,
)
from voxmetrics.metrics.bootstrap import speaker_resample_counts
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.metrics.zebra import _ece as _weighted_ece
from voxmetrics.metrics.zebra import (
    _LeftIndex,
    pav_transform_from_pools,
    replicate_run_counts,
    speaker_run_counts,
)

from .pav_cases import pav_blocks

ROOT = Path(__file__).resolve().parents[2]
ZEBRA_MODULE = sys.modules["voxmetrics.metrics.zebra"]
LN2, LN10 = math.log(2.0), math.log(10.0)
D_ECE_MAX = 1.0 / (2.0 * LN2)  # = 0.7213475204444817, paper 004 section 4.1
FAST = settings(max_examples=120, deadline=None)


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    # another test module in the same process may have imported SpeechBrain
    forget_unimportable_modules()


# --------------------------------------------------------------------------------------------
# Reference implementations (written from metrics.md section 3, slow and exact)
# --------------------------------------------------------------------------------------------


def ref_pav(labels: list[int]) -> list[Fraction]:
    """Plain pool-adjacent-violators on 0/1 labels: a stack of (sum, count) blocks.

    Each new label starts a block; while the block below has a larger mean than the top one,
    the two are merged. The fitted value of every label is the mean of its block.
    """
    blocks: list[list[int]] = []  # [sum of labels, count]
    for v in labels:
        blocks.append([v, 1])
        while len(blocks) > 1 and Fraction(*blocks[-2]) > Fraction(*blocks[-1]):
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    out: list[Fraction] = []
    for s, c in blocks:
        out += [Fraction(s, c)] * c
    return out


def ref_pav_llrs(
    tar: list[float], non: list[float], *, laplace: bool, targets_first: bool = True
) -> tuple[list[float], list[float]]:
    """PAV LLRs by the letter of metrics.md section 3, in the input order.

    Pooled scores are sorted ascending with targets before non-targets at equal scores (after
    them with ``targets_first=False``, the order of the ZEBRA reference code). With
    Laplace's rule a dummy target then a dummy non-target go below the lowest score and a dummy
    target then a dummy non-target above the highest; their four outputs are dropped. LLR =
    logit(P) - ln(N_tar / N_non) with the real counts, computed from the exact fraction
    P N_non / ((1 - P) N_tar); P = 0 or 1 gives -inf or +inf.
    """
    pooled = [(x, 0, i) for i, x in enumerate(tar)] + [(x, 1, i) for i, x in enumerate(non)]
    # kind 0 (target) first at ties, or last
    pooled.sort(key=lambda item: (item[0], item[1] if targets_first else 1 - item[1]))
    labels = [1 - kind for _, kind, _ in pooled]
    if laplace:
        labels = [1, 0, *labels, 1, 0]
    p = ref_pav(labels)
    if laplace:
        p = p[2:-2]
    n_t, n_n = len(tar), len(non)
    out_t, out_n = [0.0] * n_t, [0.0] * n_n
    for (_, kind, i), pk in zip(pooled, p, strict=True):
        if pk == 0:
            llr = -math.inf
        elif pk == 1:
            llr = math.inf
        else:
            llr = math.log(pk * n_n / ((1 - pk) * n_t))
        (out_t if kind == 0 else out_n)[i] = llr
    return out_t, out_n


def mp_z(llr: float) -> mpmath.mpf:
    """Z(x) of paper 004 eq. 6 at x = e^llr, 60 significant digits (Z(1) = 0, Z(inf) = 1/4)."""
    if llr == 0:
        return mpmath.mpf(0)
    if math.isinf(llr):
        return mpmath.mpf(1) / 4 if llr > 0 else -mpmath.inf
    with mpmath.workdps(60):
        x = mpmath.exp(mpmath.mpf(llr))
        return ((x - 3) * (x - 1) + 2 * mpmath.log(x)) / (4 * (x - 1) ** 2)


def ref_d_ece(tar_llr: list[float], non_llr: list[float]) -> float:
    """D_ECE = [mean_tar Z(e^l) + mean_non Z(e^-l)] / ln 2 with Z in 60-digit arithmetic."""
    with mpmath.workdps(60):
        zt = mpmath.fsum(mp_z(v) for v in tar_llr) / len(tar_llr)
        zn = mpmath.fsum(mp_z(-v) for v in non_llr) / len(non_llr)
        return float((zt + zn) / mpmath.log(2))


def ref_ece(tar_llr: np.ndarray, non_llr: np.ndarray, lam: float) -> float:
    """ECE(pi) of metrics.md section 3 at lambda = logit(pi), in bits.

    ECE = pi mean_tar log2(1 + e^-(l + lambda)) + (1 - pi) mean_non log2(1 + e^(l + lambda));
    log(1 + e^u) is ``np.logaddexp(0, u)``, which is 0 at u = -inf (a target at +inf, a
    non-target at -inf costs nothing).
    """
    pi = 1.0 / (1.0 + math.exp(-lam))
    c_tar = np.logaddexp(0.0, -(tar_llr + lam)).mean()
    c_non = np.logaddexp(0.0, non_llr + lam).mean()
    return float((pi * c_tar + (1.0 - pi) * c_non) / LN2)


def h2(pi: np.ndarray) -> np.ndarray:
    """Binary entropy in bits."""
    return -(pi * np.log2(pi) + (1.0 - pi) * np.log2(1.0 - pi))


def integral_of_disclosure(tar_llr: np.ndarray, non_llr: np.ndarray) -> float:
    """Paper 004 eq. 5: the integral over pi in (0, 1) of H2(pi) - ECE(pi), computed in lambda.

    d pi = pi (1 - pi) d lambda; outside |lambda| <= 60 the integrand is below e^-60 (the
    difference is at most H2 <= 1 bit for PAV LLRs and pi (1 - pi) <= e^-|lambda|).
    """
    zero = np.zeros(1)

    def f(lam: float) -> float:
        jac = 1.0 / ((1.0 + math.exp(-lam)) * (1.0 + math.exp(lam)))
        return (ref_ece(zero, zero, lam) - ref_ece(tar_llr, non_llr, lam)) * jac

    # break points where the integrand bends: lambda = -l for each finite PAV LLR
    finite = np.concatenate([tar_llr, non_llr])
    points = np.unique(np.clip(-finite[np.isfinite(finite)], -59.0, 59.0))[:40]
    value, err = integrate.quad(
        f, -60.0, 60.0, points=points, limit=800, epsabs=1e-12, epsrel=1e-12
    )
    assert err < 1e-8
    return value


# hypothesis strategies: halves in [-3, 3] force ties; floats exercise the general case
HALVES = st.integers(-6, 6).map(lambda k: k / 2)
FEW = st.integers(0, 3).map(float)
FLOATS = st.floats(-10, 10, allow_nan=False)


@st.composite
def pools(draw, elements=HALVES, max_size=14):
    tar = draw(st.lists(elements, min_size=1, max_size=max_size))
    non = draw(st.lists(elements, min_size=1, max_size=max_size))
    return tar, non


# --------------------------------------------------------------------------------------------
# D_ECE is the integral of the ECE gap (paper 004 eq. 5 = eq. 6)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_d_ece_equals_integral_of_h2_minus_minimum_ece(seed):
    rng = np.random.default_rng(seed)
    n_t, n_n = int(rng.integers(5, 60)), int(rng.integers(20, 300))
    shift = float(rng.uniform(0.0, 3.0))
    tar, non = rng.normal(shift, 1.0, n_t), rng.normal(0.0, 1.0, n_n)
    if seed % 2:  # force ties between and within the pools
        tar, non = np.round(tar, 1), np.round(non, 1)
    for ties in ("reference", "attacker"):  # targets first (ZEBRA's rocch_pava), or not
        t_llr, n_llr = pav_llrs(tar, non, ties=ties)  # may be +-inf
        expected = integral_of_disclosure(t_llr, n_llr)
        assert zebra(tar, non, ties=ties).d_ece == pytest.approx(expected, abs=1e-6)
        assert d_ece_from_llrs(t_llr, n_llr) == pytest.approx(expected, abs=1e-6)


def test_integral_of_binary_entropy_is_the_maximum():
    # perfectly separated pools: ECE_min = 0, so D_ECE = int_0^1 H2(pi) d pi
    # = 2 int_0^1 -pi log2(pi) d pi = 2 (1/4) / ln 2 = 1 / (2 ln 2)
    value, _ = integrate.quad(lambda p: float(h2(np.array(p))), 0.0, 1.0)
    assert value == pytest.approx(D_ECE_MAX, abs=1e-12)
    assert integral_of_disclosure(np.array([np.inf]), np.array([-np.inf])) == pytest.approx(
        D_ECE_MAX, abs=1e-9
    )


# --------------------------------------------------------------------------------------------
# Reference values
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_tar", "n_non", "worst_llr", "worst_is_mated", "tag"),
    [
        # Laplace on separated pools, sorted labels [1, 0 | 0 x n_non | 1 x n_tar | 1, 0]:
        # the bottom block [1, 0, 0 ... 0] has P = 1 / (n_non + 2), the top block
        # [1 ... 1, 1, 0] has P = (n_tar + 1) / (n_tar + 2). With prior odds n_tar / n_non:
        # target LLR = ln((n_tar + 1) n_non / n_tar),
        # non-target LLR = -ln((n_non + 1) n_tar / n_non)
        (3, 3, math.log(4.0), None, "A"),  # ln(4 * 3 / 3) = ln 4 both ways (a tie)
        (1, 1, math.log(2.0), None, "A"),  # ln(2 * 1 / 1) = ln 2 both ways (a tie)
        (2, 5, math.log(7.5), True, "A"),  # target ln(3 * 5 / 2); non -ln(6 * 2 / 5) = -ln 2.4
        (1, 99, math.log(198.0), True, "C"),  # ln(2 * 99 / 1) = ln 198: log10 = 2.2967
        (60, 3, math.log(4 * 60 / 3), False, "B"),  # target ln(61 * 3 / 60) = ln 3.05;
        # non-target -ln(4 * 60 / 3) = -ln 80: the worst case is non-mated, log10 80 = 1.903
    ],
)
def test_separated_pools(n_tar, n_non, worst_llr, worst_is_mated, tag):
    tar = np.arange(n_tar, dtype=float) + 1000.0
    non = np.arange(n_non, dtype=float)
    r = zebra(tar, non)
    assert r.d_ece == pytest.approx(D_ECE_MAX, abs=1e-12)  # every PAV LLR is +-inf: Z = 1/4
    assert r.log10_l == pytest.approx(worst_llr / LN10, rel=1e-12)
    assert r.tag == tag
    if worst_is_mated is not None:  # metrics.md does not say which of tied extremes is named
        assert r.worst_is_mated is worst_is_mated
    assert (r.n_tar, r.n_non) == (n_tar, n_non)


def test_separated_pools_worst_case_can_be_non_mated():
    # n_tar = 50, n_non = 2: target LLR ln(51 * 2 / 50) = ln 2.04,
    # non-target -ln(3 * 50 / 2) = -ln 75: the worst case is a non-mated score, log10 75 = 1.875
    r = zebra(np.arange(50.0) + 10.0, [0.0, 1.0])
    assert r.log10_l == pytest.approx(math.log10(75.0), rel=1e-12)
    assert not r.worst_is_mated and r.tag == "B"
    assert r.worst_score in (0.0, 1.0) and r.worst_index in (0, 1)


def test_three_targets_above_three_non_targets():
    # Laplace by hand: sorted labels with dummies [1, 0, 0, 0, 0, 1, 1, 1, 1, 0].
    # PAV stack: 1 | 0 -> {1,0} 1/2 | 0 -> 1/3 | 0 -> 1/4 | 0 -> 1/5 (5 labels);
    # 1 | 1 | 1 | 1 stay (1 > 1/5); the last 0 merges back through the four 1s: 1/2, 2/3,
    # 3/4, 4/5 (5 labels), and 4/5 > 1/5 stops. Dropping the dummies, the non-targets get
    # P = 1/5 and the targets P = 4/5; prior odds 3/3 = 1, so LLR = +-ln 4 and l = 4:
    # log10 l = log10 4 = 0.60206, tag A (0 < 0.602 <= 1).
    r = zebra([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])
    assert r.log10_l == pytest.approx(math.log10(4.0), rel=1e-12)
    assert r.tag == "A" and r.odds == "more disclosure than 50:50"
    t, n = pav_llrs([4.0, 5.0, 6.0], [1.0, 2.0, 3.0], laplace=True)
    np.testing.assert_allclose(t, [math.log(4.0)] * 3, rtol=1e-12)
    np.testing.assert_allclose(n, [-math.log(4.0)] * 3, rtol=1e-12)
    # without Laplace the pools are separated: +-inf, Z = 1/4 each, D_ECE = 1 / (2 ln 2)
    assert r.d_ece == pytest.approx(D_ECE_MAX, abs=1e-12)


@pytest.mark.parametrize(
    "values",
    [[0.3], [1.0, 2.0, 3.0], [5.0, 5.0, -1.0, 2.5], list(np.linspace(-1, 1, 17))],
)
def test_identical_pools_zero_evidence_only_with_targets_first(values):
    # same values, same sizes: at each distinct value c targets then c non-targets (targets
    # first at ties) pool to P = 1/2 = the prior, so every LLR is exactly 0 with and without
    # Laplace (the dummy pairs [1, 0] also pool to 1/2): D_ECE 0, log10 l 0
    rng = np.random.default_rng(len(values))
    other = rng.permutation(values)
    for laplace in (False, True):
        t, n = pav_llrs(values, other, laplace=laplace)
        assert set(t.tolist()) | set(n.tolist()) == {0.0}
        assert d_ece_from_llrs(t, n) == 0.0
    # ZEBRA's reference code sorts non-targets first: at each tied value [0.., 1..] is
    # increasing, so PAV separates them and the ties disclose (what its optimal_llr reports)
    r = zebra(values, other)
    ref_t, ref_n = ref_pav_llrs(values, list(other), laplace=True, targets_first=False)
    assert r.log10_l == pytest.approx(max(map(abs, ref_t + ref_n)) / LN10, rel=1e-12)
    assert r.log10_l > 0.0 and r.tag != "0"


# --------------------------------------------------------------------------------------------
# Tags (paper 004 table 1, with the reference code's (lo, hi] intervals: metrics.md section 3)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("log10_l", "tag"),
    [
        (0.0, "0"),
        (5e-324, "A"),  # the smallest positive double
        (1e-12, "A"),
        (0.5, "A"),
        (1.0, "A"),  # boundary: lower interval
        (math.nextafter(1.0, 2.0), "B"),
        (2.0, "B"),
        (math.nextafter(2.0, 3.0), "C"),
        (3.0, "C"),
        (4.0, "C"),
        (math.nextafter(4.0, 5.0), "D"),
        (5.0, "D"),
        (math.nextafter(5.0, 6.0), "E"),
        (6.0, "E"),
        (math.nextafter(6.0, 7.0), "F"),
        (1e6, "F"),
        (math.inf, "F"),
        (-1.5, "B"),  # a magnitude: symmetric in log-LR space (paper 004 section 4.2)
    ],
)
def test_tag_intervals(log10_l, tag):
    assert zebra_tag(log10_l) == tag


# paper 004 table 1, "Posterior odds ratio (flat prior)" column, as extracted from the paper
PAPER_TABLE_1 = {
    "0": "50:50 (flat posterior)",
    "A": "more disclosure than 50 : 50",
    "B": "one wrong in 10 to 100",
    "C": "one wrong in 100 to 10 000",
    "D": "one wrong in 10 000 to 100 000",
    "E": "one wrong in 100 000 to 1 000 000",
    "F": "one wrong in at least 1 000 000",
}


def test_tag_table_matches_paper_and_metrics_md():
    assert [t for t, *_ in TAGS] == list(PAPER_TABLE_1)
    for tag, _, _, odds in TAGS:
        assert odds.replace(" : ", ":") == PAPER_TABLE_1[tag].replace(" : ", ":"), tag
    # metrics.md: "0" for 0, A (0,1], B (1,2], C (2,4], D (4,5], E (5,6], F (6, inf)
    assert [(lo, hi) for _, lo, hi, _ in TAGS[1:]] == [
        (0, 1),
        (1, 2),
        (2, 4),
        (4, 5),
        (5, 6),
        (6, math.inf),
    ]


@pytest.mark.parametrize("tag", list(PAPER_TABLE_1))
def test_result_odds_follow_its_tag(tag):
    r = ZebraResult(0.1, 1.0, tag, True, 0, 0.0, 1, 1)
    assert r.odds.replace(" : ", ":") == PAPER_TABLE_1[tag].replace(" : ", ":")
    assert r.to_dict() == {"d_ece": 0.1, "log10_l": 1.0, "tag": tag, "odds": r.odds}
    assert r.d_ece_max == pytest.approx(D_ECE_MAX, abs=1e-15)


# --------------------------------------------------------------------------------------------
# PAV against the stack-based reference, with and without Laplace's rule
# --------------------------------------------------------------------------------------------


@FAST
@given(
    data=pools(elements=FEW) | pools(elements=HALVES) | pools(elements=FLOATS, max_size=8),
    laplace=st.booleans(),
)
def test_pav_llrs_match_the_reference_loop(data, laplace):
    tar, non = data
    got_t, got_n = pav_llrs(tar, non, laplace=laplace)
    ref_t, ref_n = ref_pav_llrs(tar, non, laplace=laplace)
    np.testing.assert_allclose(got_t, ref_t, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_n, ref_n, rtol=1e-12, atol=1e-12)
    if laplace:
        assert np.isfinite(got_t).all() and np.isfinite(got_n).all()


@FAST
@given(data=pools(elements=FEW) | pools(elements=HALVES))
def test_zebra_matches_the_reference_pipeline(data):
    tar, non = data
    plain_t, plain_n = ref_pav_llrs(tar, non, laplace=False, targets_first=True)  # rocch_pava
    lap_t, lap_n = ref_pav_llrs(tar, non, laplace=True, targets_first=False)
    r = zebra(tar, non)
    assert r.d_ece == pytest.approx(ref_d_ece(plain_t, plain_n), abs=1e-12)
    worst = max(abs(v) for v in lap_t + lap_n)
    assert r.log10_l == pytest.approx(worst / LN10, rel=1e-12, abs=1e-15)


@FAST
@given(data=pools(elements=FEW) | pools(elements=HALVES))
def test_pav_transform_is_the_step_function_of_the_reference(data):
    tar, non = data
    tf = pav_transform(tar, non)
    assert tf.scores.tolist() == sorted(set(tar) | set(non))
    for laplace, llr in ((False, tf.llr), (True, tf.llr_laplace)):
        # as ZEBRA: targets first without Laplace (a tied score has one LLR), non-targets
        # first with Laplace (a tied score has the targets' LLR in the transform)
        ref_t, ref_n = ref_pav_llrs(tar, non, laplace=laplace, targets_first=not laplace)
        by_score = dict(zip(non + tar, ref_n + ref_t, strict=True))
        for x, value in zip(tf.scores, llr, strict=True):
            assert value == pytest.approx(by_score[x], rel=1e-12, abs=1e-12)


def test_tied_scores_count_against_the_attacker():
    # one target and one non-target at the same score pool to P = 1/2 = the prior: LLR 0
    t, n = pav_llrs([1.0], [1.0])
    assert (t.tolist(), n.tolist()) == ([0.0], [0.0])
    # a target tied with a non-target above the other non-target: sorted [N(0), T(1), N(1)]
    # labels [0, 1, 0]: PAV pools {1, 0} to 1/2 and keeps 0 below: the tied pair has
    # P = 1/2, prior odds 1/2, LLR = ln(1 / (1/2)) = ln 2 (non-targets first would give +inf)
    t, n = pav_llrs([1.0], [0.0, 1.0])
    assert t.tolist() == [pytest.approx(math.log(2.0))]
    assert n[0] == -np.inf and n[1] == pytest.approx(math.log(2.0))


# --------------------------------------------------------------------------------------------
# Z(x): the closed form near x = 1, at x = infinity and for large finite LLRs
# --------------------------------------------------------------------------------------------


def test_tiny_llrs_contribute_nothing():
    # metrics.md: Z(1) = 0, and 0 is used whenever |l| < 1e-6
    assert d_ece_from_llrs([5e-7, -9.99e-7, 0.0], [3e-7, -0.0]) == 0.0


def test_infinite_llrs_contribute_a_quarter():
    # Z(inf) = 1/4: a target at +inf and a non-target at -inf (Z(e^-l) = Z(inf))
    assert d_ece_from_llrs([np.inf], [-np.inf]) == pytest.approx(0.5 / LN2, abs=1e-15)
    # one of two targets at +inf, the other at 0: mean_tar Z = 1/8; mean_non Z = 1/4
    assert d_ece_from_llrs([np.inf, 0.0], [-np.inf, -np.inf]) == pytest.approx(
        0.375 / LN2, abs=1e-15
    )


@pytest.mark.parametrize(
    "llr",
    [1e-5, -1e-5, 3e-6, -2e-6, 1.0000001e-6, -1.0000001e-6, 1e-4, 0.01, 0.5, -0.5, 3.0, 30.0],
)
def test_closed_form_matches_high_precision(llr):
    # a non-target at LLR 0 contributes Z(1) = 0, so D_ECE = Z(e^llr) / ln 2
    got = d_ece_from_llrs([llr], [0.0])
    expected = ref_d_ece([llr], [0.0])
    # near l = 0 the numerator (x-3)(x-1) + 2 ln x ~ 2 l^3 / 3 is a difference of terms of
    # size 2 l, so float64 keeps only ~5 significant digits of Z at |l| ~ 1e-6; what matters
    # for D_ECE (an average, reported in bits to ~1e-4) is the absolute error
    assert abs(got - expected) <= 1e-10
    if abs(llr) >= 1e-3:
        assert got == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("scale", [1.0, -1.0])
def test_d_ece_is_continuous_at_the_tiny_llr_cut_off(scale):
    # Z(e^l) ~ l / 6 near 0, so cutting it to 0 below |l| = 1e-6 moves D_ECE by < 3e-7 bits
    below = d_ece_from_llrs([scale * 0.999999e-6], [0.0])
    above = d_ece_from_llrs([scale * 1.000001e-6], [0.0])
    assert below == 0.0
    assert abs(above - below) < 1e-6
    assert above == pytest.approx(float(mp_z(scale * 1.000001e-6) / mpmath.log(2)), abs=1e-10)


BIG_LLR_OVERFLOW: list = []  # fixed: Z is divided through by (x - 1)^2 before squaring


@pytest.mark.parametrize(
    "llr",
    [
        50.0,
        354.0,
        pytest.param(355.0, marks=BIG_LLR_OVERFLOW),
        pytest.param(400.0, marks=BIG_LLR_OVERFLOW),
        pytest.param(709.0, marks=BIG_LLR_OVERFLOW),
        710.0,  # e^710 = inf: Z(inf) = 1/4
        1e4,
    ],
)
def test_large_finite_llrs(llr):
    # Z(e^l) -> 1/4 as l grows: a target at l and a non-target at -l give ~1 / (2 ln 2)
    got = d_ece_from_llrs([llr], [-llr])
    assert got == pytest.approx(ref_d_ece([llr], [-llr]), rel=1e-12)
    assert got == pytest.approx(D_ECE_MAX, rel=1e-12)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@FAST
@given(data=pools(elements=HALVES) | pools(elements=FLOATS))
def test_d_ece_is_bounded(data):
    r = zebra(*data)
    assert -1e-12 <= r.d_ece <= D_ECE_MAX + 1e-12


MAPS = {
    "affine": lambda x: 3.0 * x + 1.0,
    "cube": lambda x: x**3,  # exact on halves: (k / 2)^3 = k^3 / 8
    "exp": np.exp,
    "shifted-arctan": lambda x: np.arctan(x) + 100.0,
}


@FAST
@given(data=pools(elements=HALVES), name=st.sampled_from(sorted(MAPS)))
def test_invariant_to_a_strictly_increasing_map(data, name):
    tar, non = (np.asarray(p) for p in data)
    f = MAPS[name]
    a, b = zebra(tar, non), zebra(f(tar), f(non))
    assert b.d_ece == pytest.approx(a.d_ece, abs=1e-12)
    assert b.log10_l == pytest.approx(a.log10_l, rel=1e-12, abs=1e-15)
    assert (b.tag, b.worst_is_mated, b.worst_index) == (a.tag, a.worst_is_mated, a.worst_index)
    assert b.worst_score == f(np.array(a.worst_score))


@FAST
@given(data=pools(elements=HALVES) | pools(elements=FLOATS), seed=st.integers(0, 2**32 - 1))
def test_invariant_to_the_order_of_the_scores(data, seed):
    tar, non = (np.asarray(p) for p in data)
    rng = np.random.default_rng(seed)
    a, b = zebra(tar, non), zebra(rng.permutation(tar), rng.permutation(non))
    assert b.d_ece == pytest.approx(a.d_ece, abs=1e-12)
    assert b.log10_l == pytest.approx(a.log10_l, rel=1e-12, abs=1e-15)
    assert b.tag == a.tag


@FAST
@given(data=pools(elements=HALVES) | pools(elements=FLOATS))
def test_worst_case_points_at_its_score(data):
    tar, non = (np.asarray(p) for p in data)
    r = zebra(tar, non)
    assert r.log10_l >= 0.0 and math.isfinite(r.log10_l)
    t_lap, n_lap = pav_llrs(tar, non, laplace=True, ties="attacker")  # ZEBRA's order
    pool, llrs = (tar, t_lap) if r.worst_is_mated else (non, n_lap)
    assert 0 <= r.worst_index < pool.size
    assert r.worst_score == pool[r.worst_index]
    assert abs(llrs[r.worst_index]) == pytest.approx(r.log10_l * LN10, rel=1e-12, abs=1e-15)
    assert np.abs(np.concatenate([t_lap, n_lap])).max() == pytest.approx(
        r.log10_l * LN10, rel=1e-12, abs=1e-15
    )


def test_invalid_input_is_rejected():
    with pytest.raises(VoxMetricsInputError, match="tar"):
        zebra([], [1.0])
    with pytest.raises(VoxMetricsInputError, match="non"):
        zebra([1.0], [np.nan])


# --------------------------------------------------------------------------------------------
# ECE curves
# --------------------------------------------------------------------------------------------


@pytest.fixture
def scores() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return np.round(rng.normal(1.5, 1.0, 40), 1), np.round(rng.normal(0.0, 1.0, 400), 1)


def test_ece_curves_default_grid_and_zero_evidence(scores):
    c = ece_curves(*scores)
    np.testing.assert_array_equal(c.prior_log_odds, np.linspace(-10.0, 10.0, 201))
    np.testing.assert_allclose(c.log10_prior_odds, c.prior_log_odds / LN10, rtol=1e-15)
    pi = 1.0 / (1.0 + np.exp(-c.prior_log_odds))
    np.testing.assert_allclose(c.zero_evidence, h2(pi), rtol=1e-12)  # bits
    assert c.zero_evidence[100] == pytest.approx(1.0)  # pi = 1/2: one bit
    assert c.actual is None


def test_minimum_ece_is_the_ece_of_the_pav_llrs(scores):
    lam = np.linspace(-7.0, 7.0, 29)
    c = ece_curves(*scores, prior_log_odds=lam)
    t, n = pav_llrs(*scores)  # targets first, as ZEBRA's rocch_pava
    np.testing.assert_array_equal(c.prior_log_odds, lam)
    np.testing.assert_allclose(c.minimum, [ref_ece(t, n, v) for v in lam], rtol=1e-12)


def test_actual_ece_only_for_llr_scores(scores):
    lam = np.array([-2.0, 0.0, 1.5])
    c = ece_curves(*scores, scores_are_llrs=True, prior_log_odds=lam)
    assert c.actual is not None
    np.testing.assert_allclose(c.actual, [ref_ece(*scores, v) for v in lam], rtol=1e-12)
    # PAV is the best monotone calibration: its ECE is below the scores' own at every prior
    assert (c.minimum <= c.actual + 1e-12).all()


@FAST
@given(data=pools(elements=HALVES) | pools(elements=FLOATS))
def test_minimum_ece_never_exceeds_zero_evidence(data):
    c = ece_curves(*data, prior_log_odds=np.linspace(-12.0, 12.0, 49))
    assert (c.minimum <= c.zero_evidence + 1e-12).all()
    assert (c.minimum >= -1e-12).all()


# --------------------------------------------------------------------------------------------
# Speaker bootstrap
# --------------------------------------------------------------------------------------------


@pytest.fixture
def matrix() -> ScoreMatrix:
    rng = np.random.default_rng(5)
    spk = [f"s{k}" for k in range(8)]
    trial_speakers = [s for s in spk for _ in range(3)]
    scores = rng.normal(size=(24, 8))
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"t{i}" for i in range(24)],
        trial_speakers=trial_speakers,
        enrol_speakers=spk,
    )
    bumped = sm.scores.copy()
    bumped[np.arange(24), sm.targets] += 1.0
    return ScoreMatrix.from_arrays(
        bumped, trial_ids=sm.trial_ids, trial_speakers=trial_speakers, enrol_speakers=spk
    )


def _boot(sm: ScoreMatrix, **kw):
    return zebra_bootstrap(sm.scores, sm.targets, sm.trial_speakers, **kw)


def test_bootstrap_is_reproducible_and_estimates_the_full_matrix(matrix):
    calls = []
    a = _boot(matrix, n_boot=60, seed=4, progress=lambda f, m: calls.append(f))
    b = _boot(matrix, n_boot=60, seed=4)
    c = _boot(matrix, n_boot=60, seed=5)
    assert set(a) == {"d_ece", "log10_l", "log10_l_q95"}
    assert a == b
    assert a != c
    full = zebra(matrix.tar, matrix.non)
    assert a["d_ece"].estimate == full.d_ece
    assert a["log10_l"].estimate == full.log10_l
    # a maximum gets no percentile interval; its 0.95 quantile carries one
    assert a["log10_l"].low is None and a["log10_l"].high is None
    for key in ("d_ece", "log10_l_q95"):
        ci = a[key]
        assert ci.n_boot == ci.n_valid == 60 and ci.confidence == 0.95
        assert ci.low <= ci.high
    assert 0.0 <= a["d_ece"].low and a["d_ece"].high <= D_ECE_MAX
    assert calls and calls[-1] == 1.0


# --------------------------------------------------------------------------------------------
# Provenance: the authors' LGPL reference implementation is neither imported nor copied
# --------------------------------------------------------------------------------------------


def test_reference_implementation_is_not_imported_or_copied():
    for path in (ROOT / "voxmetrics").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                roots = {node.module.split(".")[0]}
            else:
                continue
            assert not roots & {"zebra", "pyllr", "bosaris"}, f"{path} imports {roots}"
        for marker in ("Lesser General Public", "LGPL", "Andreas Nautsch", "nautsch"):
            assert marker not in text, f"{path} contains {marker!r}"


@pytest.mark.parametrize("seed", range(4))
def test_speaker_run_counts_of_a_complete_matrix_equal_those_of_every_pair_listed(
    seed, monkeypatch
):
    """The complete matrix's per-speaker run counts equal the listed pairs' path with every pair
    listed, ties between and across pools included, over several row blocks."""
    import sys

    from voxmetrics.metrics.pools import SortedPools
    from voxmetrics.metrics.zebra import speaker_run_counts

    # several blocks, speakers split over two
    monkeypatch.setattr(sys.modules["voxmetrics.metrics.zebra"], "BLOCK_ELEMENTS", 40)
    rng = np.random.default_rng(seed)
    t_n, n = 37, 6
    s = np.round(rng.normal(size=(t_n, n)), 1 if seed % 2 else 3)  # coarse: many ties
    t = rng.integers(0, n, size=t_n)
    s[np.arange(t_n), t] += 0.5 * (seed < 2)
    inv = rng.integers(0, 5, size=t_n)
    pools = SortedPools.from_matrix(s, t)
    fast = speaker_run_counts(pools, s, t, inv, 5)
    cell = speaker_run_counts(pools, s, t, inv, 5, mask=np.ones(s.shape, dtype=bool))
    np.testing.assert_array_equal(fast.toarray(), cell.toarray())
    assert fast.toarray().sum() == s.size


# --------------------------------------------------------------------------------------------
# ZEBRA against faithful re-typings of the ZEBRA reference code (Nautsch et al. 2020)
# --------------------------------------------------------------------------------------------


# The reference code (the ZEBRA repository of Nautsch et al., LGPLv3) computes its numbers in
# ``PriorLogOddsPlots.set_system`` (file ``plo_plots.py``) from functions of ``helpers.py``:
#
# * D_ECE (``get_delta_ECE``) and the minimum-ECE profile (``minECE = ece(classA_llr, ...)``)
#   from ``rocch_pava(tar, non, laplace=False)`` then ``optimal_llr_from_Popt``: the scores are
#   concatenated as ``[tar, non]`` and sorted by a stable mergesort, so at equal scores the
#   targets come first;
# * the worst case (``max_abs_LLR`` of ``classA_llr_laplace`` / ``classB_llr_laplace``) from
#   ``optimal_llr(tar, non, laplace=True)``: concatenated as ``[non, tar]``, so non-targets
#   come first at equal scores.
#
# The functions below re-type those (``_pavx`` for ``helpers.pavx``, ``_rocch_pava`` for
# ``helpers.rocch_pava``, ``_optimal_llr_from_popt`` for ``helpers.optimal_llr_from_Popt``,
# ``_optimal_llr`` for ``helpers.optimal_llr``, ``_ece`` for ``helpers.ece`` / ``zebra.ece``,
# ``_delta_ece`` for ``PriorLogOddsPlots.get_delta_ECE``), keeping the reference code's
# ``monotonicity_epsilon`` (1e-6 spread over the sorted LLRs): the tolerances below (1e-6)
# absorb it.

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


# --- the cases of the issue, with the reference code's values


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


# --- the same orders in the bootstrap and the PAV transform


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


# --------------------------------------------------------------------------------------------
# The sorted-runs fast path against the former implementation, both tie orders
# --------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(pool_cases.pools())
def test_zebra_equals_reference_in_both_tie_orders(tn):
    # the worst case with non-targets first at ties under both rules (ZEBRA's optimal_llr);
    # D_ECE and the minimum ECE with targets first under "reference" (ZEBRA's rocch_pava),
    # non-targets first under "attacker"
    tar, non = tn
    _, log10_l, mated, index, score = ref.zebra(tar, non, targets_first=False)
    lam = np.linspace(-10, 10, 21)
    for ties, first in (("reference", True), ("attacker", False)):
        r = zebra(tar, non, ties=ties)
        d = ref.zebra(tar, non, targets_first=first)[0]
        assert r.d_ece == pytest.approx(d, rel=1e-12, abs=1e-15)
        assert r.log10_l == log10_l
        assert (r.worst_is_mated, r.worst_index, r.worst_score) == (mated, index, score)
        curves = ece_curves(tar, non, prior_log_odds=lam, ties=ties)
        expected = ref.ece_minimum(tar, non, lam, targets_first=first)
        assert np.allclose(curves.minimum, expected, rtol=1e-12, atol=1e-15)


def _zebra_style_llrs(tar, non, laplace, *, targets_first):
    """The ZEBRA code's PAV LLRs: ``rocch_pava`` concatenates [tar, non] (targets first at
    ties; D_ECE, minimum ECE), ``optimal_llr`` [non, tar] (non-targets first; the worst case);
    both then sort stably (the section above re-types them line by line)."""
    first, second = (tar, non) if targets_first else (non, tar)
    scores = np.concatenate([first, second])
    labels = np.concatenate([np.ones(len(first)), np.zeros(len(second))])
    if not targets_first:
        labels = 1.0 - labels
    perm = np.argsort(scores, kind="mergesort")
    y = labels[perm]
    if laplace:
        y = np.concatenate([[1, 0], y, [1, 0]])
    p = pav_blocks(y)
    if laplace:
        p = p[2:-2]
    with np.errstate(divide="ignore"):
        llr = np.log(p) - np.log(1 - p) - math.log(len(tar) / len(non))
    out = np.empty_like(llr)
    out[perm] = llr
    return (
        (out[: len(tar)], out[len(tar) :])
        if targets_first
        else (
            out[len(non) :],
            out[: len(non)],
        )
    )


@settings(max_examples=150, deadline=None)
@given(pool_cases.pools(n_max=15))
def test_zebra_equals_zebra_reference_ordering(tn):
    tar, non = (a.astype(np.float64) for a in tn)
    r = zebra(tar, non)
    lt, ln = _zebra_style_llrs(tar, non, laplace=True, targets_first=False)
    worst = max(np.abs(lt).max(), np.abs(ln).max()) / math.log(10.0)
    assert r.log10_l == pytest.approx(worst, rel=1e-12)
    t, n = _zebra_style_llrs(tar, non, laplace=False, targets_first=True)
    assert r.d_ece == pytest.approx(ref.d_ece_from_llrs(t, n), rel=1e-9, abs=1e-12)
    t, n = _zebra_style_llrs(tar, non, laplace=False, targets_first=False)
    assert zebra(tar, non, ties="attacker").d_ece == pytest.approx(
        ref.d_ece_from_llrs(t, n), rel=1e-9, abs=1e-12
    )


@pytest.mark.parametrize(("seed", "decimals"), [(5, 1), (6, 0), (7, 3)])
def test_zebra_bootstrap_equals_resampling(seed, decimals):
    rng = np.random.default_rng(seed)
    n_t, n_e = 40, 8
    spk_of_col = np.arange(n_e)
    t = rng.integers(0, n_e, n_t)
    s = rng.normal(0, 1, (n_t, n_e)).round(decimals)  # few to many ties
    s[np.arange(n_t), t] += 1.5
    speakers = np.array([f"s{j}" for j in spk_of_col[t]])
    ci = zebra_bootstrap(s, t, speakers, n_boot=60, seed=2)
    counts, inverse, _ = speaker_resample_counts(speakers, n_boot=60, rng=np.random.default_rng(2))
    trials_of = [np.flatnonzero(inverse == j) for j in range(counts.shape[1])]
    d, w = [], []
    for b in range(60):
        idx = np.concatenate([np.tile(trials_of[j], c) for j, c in enumerate(counts[b]) if c])
        pools_b = ref.mated_pools(s[idx], t[idx])
        d.append(ref.zebra(*pools_b, targets_first=True)[0])  # D_ECE: ZEBRA's rocch_pava
        w.append(ref.zebra(*pools_b, targets_first=False)[1])  # worst case: its optimal_llr
    lo, hi = np.quantile(d, [0.025, 0.975])
    assert (ci["d_ece"].low, ci["d_ece"].high) == (pytest.approx(lo), pytest.approx(hi))
    # a maximum has no percentile interval; its 0.95 quantile has (the replicates of log10 l
    # are checked against resampling in tests/metrics/test_uncertainty.py)
    assert (ci["log10_l"].low, ci["log10_l"].high) == (None, None)
    assert ci["log10_l"].estimate == zebra(*ref.mated_pools(s, t)).log10_l
    assert ci["log10_l_q95"].low <= ci["log10_l_q95"].estimate <= ci["log10_l"].estimate


def test_weighted_ece_equals_unweighted():
    lam = np.linspace(-5, 5, 11)
    x = np.array([0.5, 0.5, -1.0])
    y = np.array([-2.0, 0.0])
    got = _weighted_ece((np.array([0.5, -1.0]), np.array([2.0, 1.0])), (y, np.ones(2)), lam)
    assert np.allclose(got, ref._ece(x, y, lam), rtol=1e-14)


# ----------------------------------------------------------------------------------------------
# The bootstrap's fast kernels against the former ones (tests/metrics/run_count_cases.py),
# every comparison exact: _LeftIndex (a bucket table of the distinct target values) against
# np.searchsorted; speaker_run_counts (int32 CSR, a few speakers at a time) against the former
# kernel (searchsorted of every score, int64 COO parts summed by tocsr); replicate_run_counts
# (float64, slot by slot) against the former integer product
# ----------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=32), min_size=1
    ),
    extra=st.lists(st.floats(width=32), max_size=40),
    dtype=st.sampled_from([np.float32, np.float64]),
    per_value=st.sampled_from([1, 2, 16]),
)
def test_left_index_equals_searchsorted(values, extra, dtype, per_value):
    """Every score's position equals np.searchsorted's (left): the values themselves, their
    neighbours, NaN, +-inf, scores far outside, crowded buckets (few buckets a value)."""
    v = np.unique(np.asarray(values, dtype=dtype))
    old = ZEBRA_MODULE._BUCKETS_PER_VALUE
    ZEBRA_MODULE._BUCKETS_PER_VALUE = per_value
    try:
        index = _LeftIndex(v)
    finally:
        ZEBRA_MODULE._BUCKETS_PER_VALUE = old
    near = np.concatenate(
        [
            v,
            np.nextafter(v, dtype(np.inf)),
            np.nextafter(v, dtype(-np.inf)),
            np.asarray(extra, dtype=dtype),
            np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=dtype),
        ]
    )
    x = near.reshape(1, -1)
    np.testing.assert_array_equal(index(x), np.searchsorted(v, x, side="left"))


def test_left_index_clustered_values_and_outliers():
    """Values in a few tight clusters and far outliers (most buckets empty, some crowded)."""
    rng = np.random.default_rng(3)
    v = np.unique(
        np.concatenate(
            [rng.normal(0, 1e-4, 500), rng.normal(5, 1e-6, 300), [-1e30, 1e30, 7.0]]
        ).astype(np.float32)
    )
    index = _LeftIndex(v)
    assert index.crowded.any()
    x = np.concatenate([v, rng.normal(0, 1, 5000).astype(np.float32), rng.choice(v, 5000)])
    x = x.reshape(1, -1)
    np.testing.assert_array_equal(index(x), np.searchsorted(v, x, side="left"))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("block", "bins"), [(1 << 22, 1 << 20), (20, 1), (40, 70)])
def test_speaker_run_counts_equal_the_former_kernel(seed, dtype, block, bins, monkeypatch):
    """The same counts, speakers split over row blocks or grouped, ties everywhere, an
    absent speaker (row 5 of 7 may be empty), float32 and float64."""
    monkeypatch.setattr(ZEBRA_MODULE, "BLOCK_ELEMENTS", block)
    monkeypatch.setattr(ZEBRA_MODULE, "_SPEAKER_BINS", bins)
    s, t, spk = tied_matrix(seed, decimals=1 + seed % 3, dtype=dtype)
    spk[spk == 5] = 6  # speaker 5 has no trial
    pools = SortedPools.from_matrix(s, t)
    new = speaker_run_counts(pools, s, t, spk, 8)
    old = old_speaker_run_counts(pools, s, t, spk, 8, block=block)
    assert new.dtype == np.int32 and new.indices.dtype == np.int32
    assert new.has_sorted_indices and new.nnz == old.nnz
    np.testing.assert_array_equal(new.toarray(), old.toarray())
    np.testing.assert_array_equal(new.indptr, old.indptr)
    np.testing.assert_array_equal(new.indices, old.indices)


@pytest.mark.parametrize("seed", range(4))
def test_speaker_run_counts_of_listed_pairs_equal_the_former_kernel(seed, monkeypatch):
    """A sparse trial list (unlisted scores NaN): the same counts of the listed pairs."""
    monkeypatch.setattr(ZEBRA_MODULE, "BLOCK_ELEMENTS", 30)
    monkeypatch.setattr(ZEBRA_MODULE, "_SPEAKER_BINS", 50)
    s, t, spk = tied_matrix(seed)
    rng = np.random.default_rng(seed + 10)
    mask = rng.random(s.shape) < 0.6
    mask[np.arange(s.shape[0]), t] |= rng.random(s.shape[0]) < 0.8
    s = np.where(mask, s, np.nan)
    own = np.zeros(s.shape, dtype=bool)
    own[np.arange(s.shape[0]), t] = True
    pools = SortedPools.from_pools(s[mask & own], s[mask & ~own])
    new = speaker_run_counts(pools, s, t, spk, 7, mask=mask)
    old = old_speaker_run_counts(pools, s, t, spk, 7, mask=mask, block=30)
    np.testing.assert_array_equal(new.toarray(), old.toarray())
    assert new.toarray().sum() == mask.sum()


def test_speaker_run_counts_of_integer_scores_equal_the_former_kernel():
    """Scores of another dtype than the pools' values (integers listed by a mask: the pools
    are float64) are looked up by np.searchsorted, as before."""
    s, t, spk = tied_matrix(7)
    s = np.round(s * 3).astype(np.int64)
    mask = np.ones(s.shape, dtype=bool)
    own = np.zeros(s.shape, dtype=bool)
    own[np.arange(s.shape[0]), t] = True
    pools = SortedPools.from_pools(s[own], s[~own])
    assert pools.values.dtype == np.float64
    new = speaker_run_counts(pools, s, t, spk, 7, mask=mask)
    old = old_speaker_run_counts(pools, s, t, spk, 7, mask=mask, block=1 << 22)
    np.testing.assert_array_equal(new.toarray(), old.toarray())


@pytest.mark.parametrize("seed", range(3))
def test_replicate_run_counts_equal_the_integer_product(seed):
    s, t, spk = tied_matrix(seed, t_n=80)
    pools = SortedPools.from_matrix(s, t)
    per_speaker = speaker_run_counts(pools, s, t, spk, 7)
    old = old_speaker_run_counts(pools, s, t, spk, 7, block=1 << 22)
    counts = np.random.default_rng(seed).multinomial(7, np.full(7, 1 / 7), size=150)
    rows = np.concatenate([w for _, w in replicate_run_counts(per_speaker, counts, chunk=64)])
    former = np.concatenate(
        [np.asarray(old.T @ counts[b : b + 64].T).T.astype(np.float64) for b in range(0, 150, 64)]
    )
    assert rows.dtype == np.float64 and rows.flags.c_contiguous
    np.testing.assert_array_equal(rows, former)
