"""Hypothesis property tests, one per property, over the tagged registry (style.md item 10).

``metric_registry.REGISTRY`` lists every metric with the properties it claims; each test below
runs over the entries carrying its tag. Scores come either from halves in [-3, 3] (forcing ties,
and exact under the maps applied below) or from arbitrary floats in [-10, 10].
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import (
    BOUNDED,
    COLUMN_ORDER,
    IDENTICAL_POOLS,
    MONOTONE,
    ROW_AFFINE,
    SEPARATED_POOLS,
    TRIAL_ORDER,
    forget_unimportable_modules,
    with_tag,
)

from voxmetrics import cllr, eer_result, eer_rocch, min_cllr, pav_llrs

FAST = settings(max_examples=80, deadline=None)
HALVES = st.integers(-6, 6).map(lambda k: k / 2)
FLOATS = st.floats(-10, 10, allow_nan=False)


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    forget_unimportable_modules()


@st.composite
def matrices(draw, elements=None):
    """(scores, targets): a T x N matrix, T in 1..6, N in 2..6, and a target column per row."""
    if elements is None:
        elements = draw(st.sampled_from([HALVES, FLOATS]))
    t, n = draw(st.integers(1, 6)), draw(st.integers(2, 6))
    values = draw(st.lists(elements, min_size=t * n, max_size=t * n))
    targets = draw(st.lists(st.integers(0, n - 1), min_size=t, max_size=t))
    return np.array(values, dtype=np.float64).reshape(t, n), np.array(targets, dtype=np.intp)


@st.composite
def pools(draw, elements=None):
    """(tar, non): 1..20 scores each."""
    if elements is None:
        elements = draw(st.sampled_from([HALVES, FLOATS]))
    tar = draw(st.lists(elements, min_size=1, max_size=20))
    non = draw(st.lists(elements, min_size=1, max_size=20))
    return np.array(tar, dtype=np.float64), np.array(non, dtype=np.float64)


def close(a: float, b: float) -> bool:
    return a == pytest.approx(b, rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------------------------
# Invariances
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", with_tag(TRIAL_ORDER))
@FAST
@given(data=st.data())
def test_invariant_to_trial_order(spec, data):
    scores, targets = data.draw(matrices())
    perm = np.array(data.draw(st.permutations(range(scores.shape[0]))), dtype=np.intp)
    assert close(spec.on_matrix(scores[perm], targets[perm]), spec.on_matrix(scores, targets))


@pytest.mark.parametrize("spec", with_tag(COLUMN_ORDER))
@FAST
@given(data=st.data())
def test_invariant_to_enrolled_column_order(spec, data):
    scores, targets = data.draw(matrices())
    perm = np.array(data.draw(st.permutations(range(scores.shape[1]))), dtype=np.intp)
    # new column j is old column perm[j], so old target column m is now argsort(perm)[m]
    new_targets = np.argsort(perm)[targets]
    assert close(spec.on_matrix(scores[:, perm], new_targets), spec.on_matrix(scores, targets))


def _increasing(x):
    # strictly increasing and exact on halves in [-3, 3]: x^3 = k^3 / 8, x = k / 2
    return x**3 + x


@pytest.mark.parametrize("spec", with_tag(MONOTONE))
@FAST
@given(data=st.data())
def test_invariant_to_increasing_map(spec, data):
    scores, targets = data.draw(matrices(HALVES))
    assert spec.on_matrix(_increasing(scores), targets) == spec.on_matrix(scores, targets)
    if spec.on_pools is not None:
        tar, non = data.draw(pools(HALVES))
        assert spec.on_pools(_increasing(tar), _increasing(non)) == spec.on_pools(tar, non)


@pytest.mark.parametrize("spec", with_tag(ROW_AFFINE))
@FAST
@given(data=st.data())
def test_invariant_to_positive_affine_map_per_row(spec, data):
    scores, targets = data.draw(matrices(HALVES))
    t = scores.shape[0]
    # powers of two and halves keep every product and sum exact on halves
    a = data.draw(st.lists(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0]), min_size=t, max_size=t))
    b = data.draw(st.lists(HALVES, min_size=t, max_size=t))
    mapped = np.array(a)[:, None] * scores + np.array(b)[:, None]
    assert spec.on_matrix(mapped, targets) == spec.on_matrix(scores, targets)


# --------------------------------------------------------------------------------------------
# Ranges and known values
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", with_tag(BOUNDED))
@FAST
@given(data=st.data())
def test_bounded(spec, data):
    lo, hi = spec.bounds
    assert lo <= spec.on_matrix(*data.draw(matrices())) <= hi
    if spec.on_pools is not None:
        assert lo <= spec.on_pools(*data.draw(pools())) <= hi


@pytest.mark.parametrize("spec", with_tag(IDENTICAL_POOLS, pools=True))
@FAST
@given(
    x=st.lists(st.one_of(HALVES, FLOATS), min_size=1, max_size=15),
    k_tar=st.integers(1, 3),
    k_non=st.integers(1, 3),
)
def test_identical_pools(spec, x, k_tar, k_non):
    # tar = x and non = x, each possibly repeated: the same score distribution in both pools
    value = spec.on_pools(x * k_tar, x * k_non)
    assert value == pytest.approx(spec.identical_pools, abs=1e-12)


@pytest.mark.parametrize("spec", with_tag(SEPARATED_POOLS, pools=True))
@FAST
@given(
    tar=st.lists(st.one_of(HALVES, FLOATS), min_size=1, max_size=20),
    non=st.lists(st.one_of(HALVES, FLOATS), min_size=1, max_size=20),
    gap=st.sampled_from([0.5, 1.0, 3.0]),
)
def test_separated_pools(spec, tar, non, gap):
    # shift the targets above every non-target: min(tar) > max(non)
    tar_a = np.array(tar) - min(tar) + max(non) + gap
    assert tar_a.min() > max(non)
    assert spec.on_pools(tar_a, non) == spec.separated_pools


# --------------------------------------------------------------------------------------------
# Relations between metrics
# --------------------------------------------------------------------------------------------


@FAST
@given(tar_non=pools())
def test_min_cllr_at_most_cllr_for_calibrated_llrs(tar_non):
    # Laplace PAV LLRs (metrics.md section 3) are finite and calibrated
    tar_llr, non_llr = pav_llrs(*tar_non, laplace=True)
    assert np.isfinite(tar_llr).all() and np.isfinite(non_llr).all()
    assert min_cllr(tar_llr, non_llr) <= cllr(tar_llr, non_llr) + 1e-12


@FAST
@given(tar_non=pools())
def test_min_cllr_at_most_cllr_for_any_finite_scores(tar_non):
    # The PAV LLRs minimise Cllr over every non-decreasing map of the scores, the identity
    # (scores read as LLRs) included; ties get one LLR, as under any such map.
    assert min_cllr(*tar_non) <= cllr(*tar_non) + 1e-12


@FAST
@given(tar_non=pools())
def test_eer_rocch_at_most_worse_error_at_eer_threshold(tar_non):
    # "eer_rocch <= eer" is false (tar = [2], non = [1, 3]: eer 1/4, eer_rocch 1/3; see
    # test_eer_rocch_can_exceed_eer). What holds: every ROC point (x, y) = (FAR, FRR) lies on or
    # above the hull h, which is non-increasing with h(e) = e at the ROCCH-EER e; if x < e then
    # y >= h(x) >= e. So max(FAR, FRR) >= e at every threshold, the EER threshold included.
    r = eer_result(*tar_non)
    assert eer_rocch(*tar_non) <= max(r.far, r.frr) + 1e-12
