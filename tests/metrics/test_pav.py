"""PAV LLRs and the ROC convex hull (voxmetrics.metrics.pav).

Proven equal to the former element-by-element implementation (``tests/reference_pooled.py``)
under both tie rules, to the tie order of PYLLR / BOSARIS (targets first,
``lexsort((-labels, scores))``) re-implemented here, and, for the fast lookups of each score's
LLR (``np.searchsorted`` positions, merged non-target cells), to the plain lookups.
"""

from __future__ import annotations

import math

import numpy as np
import pool_cases
import pytest
import reference_pooled as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules

from voxmetrics.metrics import eer_rocch, min_cllr, pav_llrs, rocch
from voxmetrics.metrics.pools import SortedPools

from .pav_cases import pav_blocks


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    # tests below or in another module of the same process import SpeechBrain
    forget_unimportable_modules()


pools = pool_cases.pools


# --------------------------------------------------------------------------------------------
# The pooled metrics of PAV against the former implementation
# --------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(pools())
def test_rocch_min_cllr_pav_equal_reference(tn):
    tar, non = tn
    for ties, first in (("reference", True), ("attacker", False)):
        pm, pf = rocch(tar, non, ties=ties)
        rpm, rpf = ref.rocch(tar, non, first)
        assert np.array_equal(pm, rpm) and np.array_equal(pf, rpf)
        assert eer_rocch(tar, non, ties=ties) == ref.eer_rocch(tar, non, first)
        assert min_cllr(tar, non, ties=ties) == pytest.approx(
            ref.min_cllr(tar, non, first), rel=1e-12, abs=1e-15
        )
        for laplace in (False, True):
            t, n = pav_llrs(tar, non, laplace=laplace, ties=ties)
            rt, rn = ref.pav_llrs(tar, non, laplace=laplace, targets_first=first)
            assert np.array_equal(t, rt) and np.array_equal(n, rn)


# --------------------------------------------------------------------------------------------
# The tie order of PYLLR / BOSARIS, re-implemented
# --------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(pools(n_max=15))
def test_rocch_and_min_cllr_equal_pyllr_ordering(tn):
    tar, non = (a.astype(np.float64) for a in tn)
    scores = np.concatenate([tar, non])
    labels = np.concatenate([np.ones(len(tar)), np.zeros(len(non))])
    ii = np.lexsort((-labels, scores))  # PYLLR: label 1 first at equal scores
    y = labels[ii]
    p = pav_blocks(y)
    ends = np.flatnonzero(np.diff(p) != 0)
    pmiss = np.concatenate([[0.0], np.cumsum(y)[ends] / len(tar), [1.0]])
    pfa = np.concatenate([[1.0], (len(non) - np.cumsum(1 - y)[ends]) / len(non), [0.0]])
    got_pm, got_pf = rocch(tar, non)
    assert np.allclose(got_pm, pmiss) and np.allclose(got_pf, pfa)
    with np.errstate(divide="ignore"):
        llr = np.log(p) - np.log(1 - p) - math.log(len(tar) / len(non))
    c = (
        0.5
        * (np.logaddexp(0, -llr[y == 1]).mean() + np.logaddexp(0, llr[y == 0]).mean())
        / math.log(2)
    )
    assert min_cllr(tar, non) == pytest.approx(min(c, 1.0), rel=1e-9, abs=1e-12)


# --------------------------------------------------------------------------------------------
# pav_llrs' positions: np.searchsorted, faster
# --------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    v=st.lists(st.integers(-20, 20), min_size=1, max_size=12, unique=True),
    x=st.lists(st.integers(-25, 25), min_size=0, max_size=200),
    scale=st.sampled_from([1.0, 0.1, 0.5]),
    float32=st.booleans(),
)
def test_positions_are_searchsorted_left(v, x, scale, float32):
    from voxmetrics.metrics.pav import _positions

    dtype = np.float32 if float32 else np.float64
    vv = np.sort(np.asarray(v, dtype=np.float64) * scale).astype(dtype)
    xx = (np.asarray(x, dtype=np.float64) * scale).astype(dtype)  # ties with v and each other
    got = _positions(vv, xx)
    np.testing.assert_array_equal(got, np.searchsorted(vv, xx, side="left"))
    assert got.dtype == np.intp


def test_positions_on_many_scores_and_pav_llrs_unchanged():
    from voxmetrics.metrics.pav import _positions

    rng = np.random.default_rng(7)
    tar = np.round(rng.normal(1.0, 1.0, 3000), 2)  # ties within and across the pools
    non = np.round(rng.normal(-1.0, 1.0, 200_000), 2)
    v = np.unique(tar)
    np.testing.assert_array_equal(_positions(v, non), np.searchsorted(v, non, side="left"))
    t_llr, n_llr = pav_llrs(tar, non, laplace=True)
    # every score's LLR is that of its value: PAV of the sorted pool, looked up by value
    assert np.isfinite(t_llr).all() and np.isfinite(n_llr).all()
    for pool, llr in ((tar, t_llr), (non, n_llr)):
        _, first = np.unique(pool, return_index=True)
        by_value = dict(zip(pool[first].tolist(), llr[first].tolist(), strict=True))
        np.testing.assert_array_equal(llr, [by_value[s] for s in pool.tolist()])


# --------------------------------------------------------------------------------------------
# pav_llrs' non-targets: merged cells, same numbers
# --------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    tar=st.lists(st.integers(-15, 15), min_size=1, max_size=10),
    non=st.lists(st.integers(-20, 20), min_size=1, max_size=300),
    scale=st.sampled_from([1.0, 0.1, 0.5]),
    laplace=st.booleans(),
    ties=st.sampled_from(["reference", "attacker"]),
)
def test_non_llrs_equal_the_slot_lookup(tar, non, scale, laplace, ties):
    from voxmetrics.metrics.pav import _non_llrs, _slots

    t = np.asarray(tar, dtype=np.float64) * scale
    n = np.asarray(non, dtype=np.float64) * scale  # ties with the targets and each other
    pools = SortedPools.from_pools(t, n)
    r = pools.pav(targets_first=ties == "reference", laplace=laplace)
    by_slot = np.zeros(3 * pools.values.size + 1)
    by_slot[r.slots] = r.llr
    expected = by_slot[_slots(pools, n, mated=False)]
    np.testing.assert_array_equal(_non_llrs(pools, by_slot, n), expected)
    assert np.array_equal(pav_llrs(t, n, laplace=laplace, ties=ties)[1], expected)


def test_non_llrs_on_a_large_pool_equal_the_slot_lookup():
    from voxmetrics.metrics.pav import _non_llrs, _slots

    rng = np.random.default_rng(3)
    tar = rng.normal(1.0, 1.0, 5_000)
    non = np.concatenate([rng.normal(-1.0, 1.0, 400_000), tar[:50]])  # 50 equal to a target
    pools = SortedPools.from_pools(tar, non)
    r = pools.pav(targets_first=True, laplace=True)
    by_slot = np.zeros(3 * pools.values.size + 1)
    by_slot[r.slots] = r.llr
    expected = by_slot[_slots(pools, non, mated=False)]
    np.testing.assert_array_equal(_non_llrs(pools, by_slot, non), expected)
