"""Cllr and min Cllr (voxmetrics.metrics.cllr): hand values and exact references.

Every expected number is computed by hand (the arithmetic is in a comment next to it) or by a
slow reference written below: PAV by a stack loop with exact likelihood ratios, and
scikit-learn's isotonic regression as a second, independent reference. The definitions are
those of ``shared/docs/metrics.md`` sections 0 and 1.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules

from voxmetrics import cllr, min_cllr


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    # tests below or in another module of the same process import SpeechBrain
    forget_unimportable_modules()


# --------------------------------------------------------------------------------------------
# Reference implementations (slow loops, exact arithmetic)
# --------------------------------------------------------------------------------------------


def ref_pav_blocks(tar: list[float], non: list[float]) -> list[tuple[int, int]]:
    """PAV by a stack loop; returns (n_tar, n_non) of each pooled block, lowest scores first.

    Pooled scores are sorted ascending with targets before non-targets at equal scores
    (metrics.md sections 0 and 3).
    """
    labelled = sorted([(x, 0) for x in tar] + [(x, 1) for x in non])  # key 0 = target first
    blocks: list[list[int]] = []  # [n_tar, n_non]
    for _, is_non in labelled:
        blocks.append([1 - is_non, is_non])
        # pool while the previous block's target fraction exceeds the last one's
        while len(blocks) >= 2 and (
            blocks[-2][0] * sum(blocks[-1]) > blocks[-1][0] * sum(blocks[-2])
        ):
            nt, nn = blocks.pop()
            blocks[-1][0] += nt
            blocks[-1][1] += nn
    return [(nt, nn) for nt, nn in blocks]


def ref_min_cllr(tar: list[float], non: list[float]) -> float:
    """Cllr of the PAV LLRs, evaluated block by block with exact likelihood ratios.

    In a block with nt targets and nn non-targets, P = nt / (nt + nn) and
    LLR = logit(P) - ln(N_tar / N_non), so e^-LLR = (nn N_tar) / (nt N_non) exactly.
    """
    n_t, n_n = len(tar), len(non)
    c_tar = c_non = 0.0
    for nt, nn in ref_pav_blocks(tar, non):
        if nt:
            c_tar += nt * math.log2(1 + Fraction(nn * n_t, nt * n_n))
        if nn:
            c_non += nn * math.log2(1 + Fraction(nt * n_n, nn * n_t))
    return 0.5 * (c_tar / n_t + c_non / n_n)


def sklearn_min_cllr(tar: list[float], non: list[float]) -> float:
    """min Cllr through scikit-learn's isotonic regression (a second, independent reference).

    ``IsotonicRegression`` averages the labels of equal scores before its PAV, which gives the
    same fit as the targets-first order: a tied group sorted targets-first is decreasing, so PAV
    pools it whole.
    """
    isotonic = pytest.importorskip("sklearn.isotonic")
    x = np.concatenate([tar, non])
    y = np.concatenate([np.ones(len(tar)), np.zeros(len(non))])
    p = isotonic.IsotonicRegression().fit(x, y).predict(x)
    with np.errstate(divide="ignore"):
        llr = np.log(p) - np.log1p(-p) - np.log(len(tar) / len(non))
    lt, ln = llr[: len(tar)], llr[len(tar) :]
    return float(0.5 * (np.logaddexp(0, -lt).mean() + np.logaddexp(0, ln).mean()) / np.log(2))


# Hypothesis strategies: halves in [-3, 3] force ties; arbitrary floats exercise rounding.
halves = st.integers(-6, 6).map(lambda k: k / 2)


floats = st.floats(-10, 10, allow_nan=False)


pool = st.one_of(
    st.lists(halves, min_size=1, max_size=20),
    st.lists(floats, min_size=1, max_size=20),
)


FAST = settings(max_examples=100, deadline=None)


# --------------------------------------------------------------------------------------------
# Fast implementations proven equal to the slow references
# --------------------------------------------------------------------------------------------


@FAST
@given(tar=pool, non=pool)
def test_min_cllr_equals_reference_pav(tar, non):
    assert min_cllr(tar, non) == pytest.approx(ref_min_cllr(tar, non), abs=1e-9)


# scikit-learn merges scores closer than 1e-15 (``_make_unique`` in sklearn/_isotonic.pyx uses
# np.finfo(float).resolution), so this reference gets scores on a 1/1000 grid.
milli_pool = st.lists(st.integers(-10_000, 10_000).map(lambda k: k / 1000), min_size=1, max_size=20)


@FAST
@given(tar=st.one_of(milli_pool, st.lists(halves, min_size=1, max_size=20)), non=milli_pool)
def test_min_cllr_equals_sklearn_isotonic(tar, non):
    assert min_cllr(tar, non) == pytest.approx(sklearn_min_cllr(tar, non), abs=1e-9)


def test_reference_pav_pools_ties_targets_first():
    # tar = [1], non = [1]: sorted targets first -> labels [1, 0], a violation, one block.
    # (Non-targets first would give [0, 1]: two blocks, a perfect but spurious separation.)
    assert ref_pav_blocks([1.0], [1.0]) == [(1, 1)]
    assert ref_pav_blocks([2.0, 3.0], [0.0, 1.0]) == [(0, 1), (0, 1), (1, 0), (1, 0)]


# --------------------------------------------------------------------------------------------
# Cllr and min Cllr by hand
# --------------------------------------------------------------------------------------------


LN3 = math.log(3.0)


@pytest.mark.parametrize(
    ("tar", "non", "expected"),
    [
        # LLR 0 everywhere: 1/2 [log2(1 + 1) + log2(1 + 1)] = 1
        ([0.0, 0.0], [0.0], 1.0),
        # categorical and right: log2(1 + e^-inf) = log2(1 + 0) = 0 for both pools
        ([math.inf], [-math.inf], 0.0),
        # right about the target, no evidence on the non-target: 1/2 [0 + 1] = 1/2
        ([math.inf], [0.0], 0.5),
        # categorical and wrong: log2(1 + e^inf) = inf
        ([-math.inf], [0.0], math.inf),
        # tar LLR ln 3: log2(1 + 1/3) = log2(4/3) = 2 - log2 3; non LLR -ln 3: the same.
        # Cllr = 1/2 [(2 - log2 3) + (2 - log2 3)] = 2 - log2 3 = 0.41503749927884376
        ([LN3], [-LN3], 2.0 - math.log2(3.0)),
        # tar [ln 3, 0]: mean of (2 - log2 3) and log2 2 = 1 -> (3 - log2 3) / 2;
        # non [ln 7]: log2(1 + 7) = 3. Cllr = 1/2 [(3 - log2 3) / 2 + 3] = (9 - log2 3) / 4
        #   = 1.8537531248197813
        ([LN3, 0.0], [math.log(7.0)], (9.0 - math.log2(3.0)) / 4),
    ],
)
def test_cllr_hand_values(tar, non, expected):
    assert cllr(tar, non) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("tar", "non", "expected"),
    [
        # separable: PAV posteriors 0 / 1, LLRs -inf / +inf, Cllr 0
        ([2.0, 3.0], [0.0, 1.0], 0.0),
        ([10.0], [-10.0, 9.5, 9.9], 0.0),
        # identical pools: one block with P = N_tar / (N_tar + N_non), LLR 0, Cllr 1
        ([1.0, 2.0], [1.0, 2.0], 1.0),
        ([1.0, 2.0], [2.0, 1.0, 1.0, 2.0], 1.0),
        # tar [1, 3], non [0, 2]: sorted labels 0 1 0 1 -> PAV blocks [0] [1 0] [1], P = 0, 1/2,
        # 1; prior odds 1, so LLRs -inf, 0, 0, +inf. Targets cost 0 (at 3) and 1 (at 1), non-
        # targets 0 (at 0) and 1 (at 2): Cllr = 1/2 [1/2 + 1/2] = 1/2
        ([1.0, 3.0], [0.0, 2.0], 0.5),
    ],
)
def test_min_cllr_hand_values(tar, non, expected):
    assert min_cllr(tar, non) == pytest.approx(expected, abs=1e-12)
    assert ref_min_cllr(tar, non) == pytest.approx(expected, abs=1e-12)
