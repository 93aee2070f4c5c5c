"""The EER (VPC 2024 / SpeechBrain) and the ROCCH-EER (voxmetrics.metrics.eer).

Every expected number here is either computed by hand (the arithmetic is in a comment next to
it), produced by a slow, obviously-correct reference implementation written below with exact
``fractions.Fraction`` arithmetic (style.md items 8 and 9), or SpeechBrain's ``EER`` itself
(installed with the dev requirements; ``tests/reference_pooled.py`` keeps the former
element-by-element implementations). The definitions are those of ``shared/docs/metrics.md``
sections 0 and 1.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise

import numpy as np
import pool_cases
import pytest
import reference_pooled as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules

from voxmetrics import (
    baseline_metrics,
    eer,
    eer_result,
    eer_rocch,
    linkability,
    mated_pools,
)


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    # tests below or in another module of the same process import SpeechBrain
    forget_unimportable_modules()


@pytest.fixture(scope="module")
def speechbrain_eer():
    """SpeechBrain's own ``EER`` of two pools (the tests that use it skip without it)."""
    torch = pytest.importorskip("torch")
    metric_stats = pytest.importorskip("speechbrain.utils.metric_stats")
    forget_unimportable_modules()  # speechbrain's lazy modules break hypothesis' module scan

    def eer_and_threshold(tar, non):
        return metric_stats.EER(
            torch.from_numpy(np.asarray(tar)), torch.from_numpy(np.asarray(non))
        )

    return eer_and_threshold


# --------------------------------------------------------------------------------------------
# Reference implementations (slow loops, exact arithmetic)
# --------------------------------------------------------------------------------------------


def ref_eer(tar: list[float], non: list[float]) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """EER by SpeechBrain's scan, written as its loop: (eer, threshold, far, frr), rates exact.

    Candidate thresholds are the unique pooled scores plus the (float64) midpoints between
    consecutive ones, visited from the lowest up; FRR(t) = P(tar <= t), FAR(t) = P(non > t) as
    float32 rates; a candidate replaces the incumbent when |float32(FAR - FRR)| is below the
    incumbent's |FAR - FRR| (float64 of its float32 rates); the first candidate starts.
    """
    unique = sorted(set(tar) | set(non))
    candidates = sorted(unique + [(a + b) / 2 for a, b in pairwise(unique)])
    best = None
    for t in candidates:
        n_fr, n_fa = sum(x <= t for x in tar), sum(x > t for x in non)
        frr32 = np.float32(n_fr) / np.float32(len(tar))
        far32 = np.float32(n_fa) / np.float32(len(non))
        if best is None or abs(float(far32 - frr32)) < abs(float(best[0]) - float(best[1])):
            best = (far32, frr32, t, n_fa, n_fr)
    assert best is not None
    _, _, t, n_fa, n_fr = best
    far, frr = Fraction(n_fa, len(non)), Fraction(n_fr, len(tar))
    return (far + frr) / 2, Fraction(t), far, frr


def ref_roc_points(tar: list[float], non: list[float]) -> list[tuple[Fraction, Fraction]]:
    """(pfa, pmiss) at every threshold: below all scores, then at each unique pooled score."""
    tar_q = [Fraction(x) for x in tar]
    non_q = [Fraction(x) for x in non]
    points = [(Fraction(1), Fraction(0))]  # threshold -inf: accept everything
    for t in sorted(set(tar_q + non_q)):
        pmiss = Fraction(sum(x <= t for x in tar_q), len(tar_q))
        pfa = Fraction(sum(x > t for x in non_q), len(non_q))
        points.append((pfa, pmiss))
    return points


def ref_lower_hull(points: list[tuple[Fraction, Fraction]]) -> list[tuple[Fraction, Fraction]]:
    """Lower convex hull (Andrew's monotone chain), from the lowest leftmost point rightwards."""

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    hull: list[tuple[Fraction, Fraction]] = []
    for p in sorted(set(points)):
        while len(hull) >= 2 and cross(hull[-2], hull[-1], p) <= 0:
            hull.pop()
        hull.append(p)
    return hull


def ref_eer_rocch(tar: list[float], non: list[float]) -> Fraction:
    """Where the lower convex hull of the ROC points crosses pmiss = pfa (exact)."""
    hull = ref_lower_hull(ref_roc_points(tar, non))
    # Along the hull pfa increases and pmiss decreases, so pmiss - pfa decreases from >= 0
    # (pfa = 0) to -1 (the point (1, 0)): find the segment where it changes sign.
    for (x0, y0), (x1, y1) in pairwise(hull):
        f0, f1 = y0 - x0, y1 - x1
        if f0 >= 0 >= f1:
            return x0 + (x1 - x0) * f0 / (f0 - f1)
    raise AssertionError("the hull always crosses the diagonal")


# Hypothesis strategies: halves in [-3, 3] force ties; arbitrary floats exercise rounding.
halves = st.integers(-6, 6).map(lambda k: k / 2)


floats = st.floats(-10, 10, allow_nan=False)


pool = st.one_of(
    st.lists(halves, min_size=1, max_size=20),
    st.lists(floats, min_size=1, max_size=20),
)


FAST = settings(max_examples=100, deadline=None)


pools = pool_cases.pools


# --------------------------------------------------------------------------------------------
# 1. The worked example of metrics.md section 1
# --------------------------------------------------------------------------------------------


# Provenance: paper 000 eq. 1, reproduced as the worked example of metrics.md section 1.
# tar = [.9, .7, .5, .3] (the mated scores), non = 3 x [.8, .6, .4, .2] (T = 4, N - 1 = 3).
# Hand computation, (threshold: FRR = #tar <= t / 4, FAR = #non > t / 12, |FAR - FRR|):
#   .2: 0/4, 9/12 -> .75    .3: 1/4, 9/12 -> .5    .4: 1/4, 6/12 -> .25
#   .5: 2/4, 6/12 -> 0      .6: 2/4, 3/12 -> .25   ...
# so the EER is (1/2 + 1/2) / 2 = 0.5 exactly, first reached at threshold 0.5. metrics.md says
# "threshold 0.55": the midpoint 0.55 has the same counts and lies in the same tied interval
# [0.5, 0.6), whose lowest candidate, 0.5, is the one we report.
# ROC points (pfa, pmiss): (1, 0), (.75, 0), (.75, .25), (.5, .25), (.5, .5), (.25, .5),
# (.25, .75), (0, .75), (0, 1). Lower hull: (0, .75) - (.25, .5) - (.5, .25) - (.75, 0) - (1, 0),
# the first four on the line pfa + pmiss = .75, which meets pmiss = pfa at 0.375.
# Every mated score beats its row (.9 > .8, .7 > .6, .5 > .4, .3 > .2): linkability 1.0.
WORKED_S = [[0.9, 0.8, 0.8, 0.8], [0.7, 0.6, 0.6, 0.6], [0.4, 0.5, 0.4, 0.4], [0.2, 0.2, 0.3, 0.2]]


WORKED_TARGETS = [0, 0, 1, 2]


@pytest.mark.parametrize(
    ("name", "compute", "expected"),
    [
        ("eer", lambda s, t: eer(*mated_pools(s, t)), 0.5),
        ("eer_threshold", lambda s, t: eer_result(*mated_pools(s, t)).threshold, 0.5),
        ("linkability", linkability, 1.0),
        ("eer_rocch", lambda s, t: eer_rocch(*mated_pools(s, t)), 0.375),
        ("baseline.eer", lambda s, t: baseline_metrics(s, t).eer, 0.5),
        ("baseline.eer_threshold", lambda s, t: baseline_metrics(s, t).eer_threshold, 0.5),
        ("baseline.eer_rocch", lambda s, t: baseline_metrics(s, t).eer_rocch, 0.375),
        ("baseline.linkability", lambda s, t: baseline_metrics(s, t).linkability, 1.0),
    ],
)
def test_worked_example_section_1(name, compute, expected):
    value = compute(WORKED_S, WORKED_TARGETS)
    if name.endswith("eer_rocch"):
        assert value == pytest.approx(expected, abs=1e-12)
    else:
        assert value == expected  # exact: every rate is a multiple of 1/4 or 1/12 of .5


def test_worked_example_matches_references():
    tar, non = mated_pools(WORKED_S, WORKED_TARGETS)
    assert ref_eer(list(tar), list(non))[:2] == (Fraction(1, 2), Fraction(0.5))
    assert ref_eer_rocch(list(tar), list(non)) == Fraction(3, 8)


# --------------------------------------------------------------------------------------------
# 2. Agreement with SpeechBrain away from ties
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize(("n_tar", "n_non"), [(7, 33), (11, 37), (51, 149), (101, 399)])
def test_eer_matches_speechbrain_without_ties(seed, n_tar, n_non):
    torch = pytest.importorskip("torch")
    metric_stats = pytest.importorskip("speechbrain.utils.metric_stats")
    rng = np.random.default_rng(seed)
    tar = rng.normal(1.0, 1.0, n_tar)
    non = rng.normal(0.0, 1.0, n_non)
    # Continuous scores have no exact ties, and with odd pool sizes |FAR - FRR| cannot tie
    # either (a tie needs n_fa N_tar - n_fr N_non = N_tar / 2 or N_non / 2, not an integer).
    assert np.unique(np.concatenate([tar, non])).size == n_tar + n_non
    sb_eer, sb_threshold = metric_stats.EER(
        torch.tensor(tar, dtype=torch.float64), torch.tensor(non, dtype=torch.float64)
    )
    ours = eer_result(tar, non)
    assert ours.eer == pytest.approx(sb_eer, abs=1e-6)  # SpeechBrain's rates are float32
    # SpeechBrain may report the midpoint just above our threshold (same counts, float32
    # rounding of |FAR - FRR|), but never a threshold with other counts.
    above = np.sort(np.concatenate([tar, non]))
    next_score = above[above > ours.threshold]
    assert ours.threshold <= sb_threshold
    assert next_score.size == 0 or sb_threshold < next_score[0]


# --------------------------------------------------------------------------------------------
# 3. The exact tie-break rule
# --------------------------------------------------------------------------------------------


# (tar, non, threshold, eer, far, frr), all worked by hand. SpeechBrain casts both rates to
# float32 and keeps the first candidate only while no later one looks strictly better in that
# arithmetic, so on tied |FAR - FRR| its choice is not always the lowest threshold:
TIE_CASES = [
    # tar = [1, 3], non = [2]. t = 1: FRR 1/2, FAR 1 -> gap 1/2; t = 2: FRR 1/2, FAR 0 -> gap
    # 1/2; t = 3: FRR 1, FAR 0 -> gap 1. Tied at 1, 1.5, 2, 2.5, exact in float32: the first,
    # 1, stays, EER (1 + 1/2) / 2 = 3/4.
    ([1.0, 3.0], [2.0], 1.0, 0.75, 1.0, 0.5),
    # tar = [3, 8], non = [2, 3, 6, 6, 8, 9]. t = 3: FRR 1/2, FAR 4/6; t = 6: FRR 1/2, FAR 2/6;
    # both gaps 1/6 exactly, but |f32(2/3) - .5| = 0.16666669 > |f32(1/3) - .5| = 0.16666666,
    # so the later threshold 6 looks strictly better: EER (1/3 + 1/2) / 2 = 5/12.
    ([3.0, 8.0], [2.0, 3.0, 6.0, 6.0, 8.0, 9.0], 6.0, 5 / 12, 1 / 3, 0.5),
    # tar = [1, 3, 5, 6, 9, 10, 11] (7), non = [6, 6, 6] (3). t = 5: FRR 3/7, FAR 1 -> 4/7;
    # SpeechBrain stores |1 - f32(3/7)| in float64, 0.5714285671710968, then at the midpoint 5.5
    # (same counts) its float32 subtraction gives 0.5714285373687744 < that, so it moves to 5.5.
    ([1.0, 3.0, 5.0, 6.0, 9.0, 10.0, 11.0], [6.0, 6.0, 6.0], 5.5, 5 / 7, 1.0, 3 / 7),
]


@pytest.mark.parametrize(("tar", "non", "threshold", "value", "far", "frr"), TIE_CASES)
def test_eer_tie_follows_speechbrain(tar, non, threshold, value, far, frr):
    r = eer_result(tar, non)
    assert r.threshold == threshold
    assert r.eer == pytest.approx(value, abs=1e-15)
    assert (r.far, r.frr) == pytest.approx((far, frr), abs=1e-15)
    assert ref_eer(tar, non)[1] == Fraction(threshold)
    torch = pytest.importorskip("torch")
    metric_stats = pytest.importorskip("speechbrain.utils.metric_stats")
    sb_eer, sb_threshold = metric_stats.EER(
        torch.tensor(tar, dtype=torch.float64), torch.tensor(non, dtype=torch.float64)
    )
    assert (sb_threshold, sb_eer) == pytest.approx((threshold, value), abs=1e-6)


# --------------------------------------------------------------------------------------------
# 4. Fast implementations proven equal to the slow references
# --------------------------------------------------------------------------------------------


@FAST
@given(tar=pool, non=pool)
def test_eer_result_equals_reference(tar, non):
    value, threshold, far, frr = ref_eer(tar, non)
    r = eer_result(tar, non)
    assert Fraction(r.threshold) == threshold
    assert r.eer == pytest.approx(float(value), abs=1e-15)
    assert (r.far, r.frr) == pytest.approx((float(far), float(frr)), abs=1e-15)
    assert eer(tar, non) == r.eer


@FAST
@given(tar=pool, non=pool)
def test_eer_rocch_equals_reference_hull(tar, non):
    assert eer_rocch(tar, non) == pytest.approx(float(ref_eer_rocch(tar, non)), abs=1e-12)


# The SpeechBrain EER is not the ROCCH-EER and can be smaller: tar = [2], non = [1, 3].
# t = 1: FRR 0, FAR 1/2 -> gap 1/2 (tied with t = 2: FRR 1, FAR 1/2), so EER = 1/4.
# ROC points (pfa, pmiss): (1, 0), (1/2, 0), (1/2, 1), (0, 1); hull (0, 1) - (1/2, 0) - (1, 0);
# the line pmiss = 1 - 2 pfa meets pmiss = pfa at 1/3 > 1/4. So "eer_rocch <= eer" is not a
# property; what holds is eer_rocch <= max(FAR, FRR) at the EER threshold (see the property
# tests), here 1/3 <= 1/2.
def test_eer_rocch_can_exceed_eer():
    assert eer([2.0], [1.0, 3.0]) == 0.25
    assert eer_rocch([2.0], [1.0, 3.0]) == pytest.approx(1 / 3, abs=1e-12)


# --------------------------------------------------------------------------------------------
# 5. The sorted-runs fast path equals SpeechBrain's EER, ties included
# --------------------------------------------------------------------------------------------


def test_issue_example_equals_speechbrain(speechbrain_eer):
    tar = [1, 3, 7, 7, 9, 9, 13, 15]
    non = [2, 2, 8, 10, 10]
    r = eer_result(np.array(tar, float), np.array(non, float))
    sb_eer, sb_thr = speechbrain_eer(np.array(tar, float), np.array(non, float))
    assert r.threshold == sb_thr
    assert r.eer == pytest.approx(0.45) and sb_eer == pytest.approx(0.45, abs=1e-7)
    assert ref.eer_lowest(tar, non)[0] == pytest.approx(0.55)  # the former rule


@settings(max_examples=300, deadline=None)
@given(pools())
def test_eer_equals_speechbrain(speechbrain_eer, tn):
    tar, non = tn
    r = eer_result(tar, non)
    sb_eer, sb_thr = speechbrain_eer(tar, non)
    assert r.threshold == sb_thr
    # same operating point: SpeechBrain's float32 rates are ours rounded to float32
    assert r.eer == pytest.approx(sb_eer, abs=1e-7)
    assert float(np.float32(r.far)) + float(np.float32(r.frr)) == pytest.approx(2 * sb_eer, abs=0)


def test_eer_window_on_long_plateaus(speechbrain_eer):
    # many candidates tie at the minimum, far from the sign change of FAR - FRR
    tar = np.repeat([0.0, 1.0, 2.0], [50, 1, 50]).astype(float)
    non = np.repeat([0.0, 1.0, 2.0], [70, 3, 70]).astype(float)
    r = eer_result(tar, non)
    sb_eer, sb_thr = speechbrain_eer(tar, non)
    assert (r.threshold, r.eer) == (sb_thr, pytest.approx(sb_eer, abs=1e-7))
    rng = np.random.default_rng(3)
    tar = rng.normal(1, 1, 300).round(1)
    non = rng.normal(0, 1, 3000).round(1)
    r = eer_result(tar, non)
    sb_eer, sb_thr = speechbrain_eer(tar, non)
    assert (r.threshold, r.eer) == (sb_thr, pytest.approx(sb_eer, abs=1e-7))


int_lists = st.lists(st.integers(0, 6), min_size=1, max_size=25)


@settings(max_examples=150, deadline=None)
@given(int_lists, int_lists)
def test_eer_attacker_is_speechbrain_on_raised_targets(speechbrain_eer, tar, non):
    # "attacker": SpeechBrain's scan with every target raised by an infinitesimal (here 1/4,
    # below the gap of 1 between integer scores)
    tar, non = np.array(tar, float), np.array(non, float)
    r = eer_result(tar, non, ties="attacker")
    sb_eer, sb_thr = speechbrain_eer(tar + 0.25, non)
    assert r.eer == pytest.approx(sb_eer, abs=1e-7)
    # the same operating point: SpeechBrain's counts at its threshold in the raised scores
    n_fr = int(((tar + 0.25) <= sb_thr).sum())
    n_fa = int((non > sb_thr).sum())
    assert (r.frr, r.far) == (n_fr / tar.size, n_fa / non.size)
    # our threshold names the same place: a raised target v + 1/4 (or a midpoint next to it)
    # is reported at v, whose targets are accepted under this rule
    assert r.threshold in (sb_thr - 0.25, sb_thr, sb_thr - 0.125, sb_thr + 0.125)
