"""The sorted-runs fast path of the pooled metrics, proven equal to the slow references.

* ``tests/reference_pooled.py``: the former element-by-element implementations;
* SpeechBrain's ``EER`` itself (installed with the dev requirements);
* small re-implementations of the tie orderings of the ZEBRA reference code (targets first in
  its ``rocch_pava``, for D_ECE and the minimum ECE; non-targets first in its ``optimal_llr``,
  for the worst case) and of PYLLR / BOSARIS (targets first, ``lexsort((-labels, scores))``).
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

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics import eer_result, eer_rocch, min_cllr, pav_llrs, rocch, zebra
from voxmetrics.metrics.pools import SortedPools, _rate32, check_ties
from voxmetrics.metrics.zebra import _ece, ece_curves, zebra_bootstrap

torch = pytest.importorskip("torch")
metric_stats = pytest.importorskip("speechbrain.utils.metric_stats")
forget_unimportable_modules()  # speechbrain's lazy modules break hypothesis' module scan


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    forget_unimportable_modules()


# --- strategies: tied integer scores, continuous scores, float32, separable pools ---------------


pools = pool_cases.pools


def _speechbrain(tar, non):
    eer, thr = metric_stats.EER(
        torch.from_numpy(np.asarray(tar)), torch.from_numpy(np.asarray(non))
    )
    return eer, thr


# --- EER vs SpeechBrain ----------------------------------------------------------------------


def test_issue_example_equals_speechbrain():
    tar = [1, 3, 7, 7, 9, 9, 13, 15]
    non = [2, 2, 8, 10, 10]
    r = eer_result(np.array(tar, float), np.array(non, float))
    sb_eer, sb_thr = _speechbrain(np.array(tar, float), np.array(non, float))
    assert r.threshold == sb_thr
    assert r.eer == pytest.approx(0.45) and sb_eer == pytest.approx(0.45, abs=1e-7)
    assert ref.eer_lowest(tar, non)[0] == pytest.approx(0.55)  # the former rule


@settings(max_examples=300, deadline=None)
@given(pools())
def test_eer_equals_speechbrain(tn):
    tar, non = tn
    r = eer_result(tar, non)
    sb_eer, sb_thr = _speechbrain(tar, non)
    assert r.threshold == sb_thr
    # same operating point: SpeechBrain's float32 rates are ours rounded to float32
    assert r.eer == pytest.approx(sb_eer, abs=1e-7)
    assert float(np.float32(r.far)) + float(np.float32(r.frr)) == pytest.approx(2 * sb_eer, abs=0)


def test_eer_window_on_long_plateaus():
    # many candidates tie at the minimum, far from the sign change of FAR - FRR
    tar = np.repeat([0.0, 1.0, 2.0], [50, 1, 50]).astype(float)
    non = np.repeat([0.0, 1.0, 2.0], [70, 3, 70]).astype(float)
    r = eer_result(tar, non)
    sb_eer, sb_thr = _speechbrain(tar, non)
    assert (r.threshold, r.eer) == (sb_thr, pytest.approx(sb_eer, abs=1e-7))
    rng = np.random.default_rng(3)
    tar = rng.normal(1, 1, 300).round(1)
    non = rng.normal(0, 1, 3000).round(1)
    r = eer_result(tar, non)
    sb_eer, sb_thr = _speechbrain(tar, non)
    assert (r.threshold, r.eer) == (sb_thr, pytest.approx(sb_eer, abs=1e-7))


def test_rate32_equals_torch():
    rng = np.random.default_rng(0)
    for total in (7, 1000, 2**24 + 1, 109_000_003):
        k = rng.integers(0, total + 1, 50)
        ours = _rate32(k.astype(np.int64), total)
        theirs = torch.from_numpy(k).float() / total
        assert np.array_equal(ours, theirs.numpy())


int_lists = st.lists(st.integers(0, 6), min_size=1, max_size=25)


@settings(max_examples=150, deadline=None)
@given(int_lists, int_lists)
def test_eer_attacker_is_speechbrain_on_raised_targets(tar, non):
    # "attacker": SpeechBrain's scan with every target raised by an infinitesimal (here 1/4,
    # below the gap of 1 between integer scores)
    tar, non = np.array(tar, float), np.array(non, float)
    r = eer_result(tar, non, ties="attacker")
    sb_eer, sb_thr = _speechbrain(tar + 0.25, non)
    assert r.eer == pytest.approx(sb_eer, abs=1e-7)
    # the same operating point: SpeechBrain's counts at its threshold in the raised scores
    n_fr = int(((tar + 0.25) <= sb_thr).sum())
    n_fa = int((non > sb_thr).sum())
    assert (r.frr, r.far) == (n_fr / tar.size, n_fa / non.size)
    # our threshold names the same place: a raised target v + 1/4 (or a midpoint next to it)
    # is reported at v, whose targets are accepted under this rule
    assert r.threshold in (sb_thr - 0.25, sb_thr, sb_thr - 0.125, sb_thr + 0.125)


# --- the other pooled metrics vs the former implementation -----------------------------------


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


@settings(max_examples=200, deadline=None)
@given(pools())
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


@settings(max_examples=100, deadline=None)
@given(pools(), st.integers(2, 5))
def test_from_matrix_equals_from_pools(tn, n_cols):
    tar, _ = tn
    rng = np.random.default_rng(tar.size)
    s = rng.integers(0, 5, (tar.size, n_cols)).astype(tar.dtype)
    t = rng.integers(0, n_cols, tar.size)
    s[np.arange(tar.size), t] = tar
    a = SortedPools.from_matrix(s, t)
    mt, mn = ref.mated_pools(s, t)
    b = SortedPools.from_pools(mt, mn)
    assert np.array_equal(a.values, b.values)
    for f in ("cells", "tar_at", "non_at"):
        assert np.array_equal(getattr(a.counts, f), getattr(b.counts, f))
    assert np.array_equal(a.cell_first, b.cell_first, equal_nan=True)
    assert a.eer_points == b.eer_points
    for v in np.unique(mn):
        assert a.locate(float(v), False) == b.locate(float(v), False)
        assert mn[a.locate(float(v), False)] == v


# --- the tie orderings of the reference codes, re-implemented --------------------------------


def _pav_blocks(y):
    """Plain pool-adjacent-violators (mean of each violating block), for the tests."""
    blocks = []  # [sum, count]
    for v in y:
        blocks.append([v, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    return np.concatenate([np.full(c, s / c) for s, c in blocks])


def _zebra_style_llrs(tar, non, laplace, *, targets_first):
    """The ZEBRA code's PAV LLRs: ``rocch_pava`` concatenates [tar, non] (targets first at
    ties; D_ECE, minimum ECE), ``optimal_llr`` [non, tar] (non-targets first; the worst case);
    both then sort stably (tests/test_zebra_reference.py re-types them line by line)."""
    first, second = (tar, non) if targets_first else (non, tar)
    scores = np.concatenate([first, second])
    labels = np.concatenate([np.ones(len(first)), np.zeros(len(second))])
    if not targets_first:
        labels = 1.0 - labels
    perm = np.argsort(scores, kind="mergesort")
    y = labels[perm]
    if laplace:
        y = np.concatenate([[1, 0], y, [1, 0]])
    p = _pav_blocks(y)
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
@given(pools(n_max=15))
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


@settings(max_examples=150, deadline=None)
@given(pools(n_max=15))
def test_rocch_and_min_cllr_equal_pyllr_ordering(tn):
    tar, non = (a.astype(np.float64) for a in tn)
    scores = np.concatenate([tar, non])
    labels = np.concatenate([np.ones(len(tar)), np.zeros(len(non))])
    ii = np.lexsort((-labels, scores))  # PYLLR: label 1 first at equal scores
    y = labels[ii]
    p = _pav_blocks(y)
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


def test_ties_change_what_they_should():
    # integer-rounded scores: ZEBRA's worst case puts non-targets first, so ties give evidence
    # to the attacker; min Cllr and D_ECE under the reference rule (targets first) do not
    tar = np.array([1.0, 2.0, 2.0, 3.0])
    non = np.array([0.0, 1.0, 2.0, 2.0])
    assert min_cllr(tar, non, ties="attacker") < min_cllr(tar, non)
    assert zebra(tar, non, ties="attacker").d_ece > zebra(tar, non).d_ece
    assert zebra([1.0, 2.0], [1.0, 2.0]).log10_l > 0
    assert eer_result([1.0, 2.0], [1.0, 2.0], ties="attacker").eer <= 0.5
    with pytest.raises(VoxMetricsInputError, match="ties"):
        check_ties("optimistic")


# --- bootstrap: reweighted runs == recomputing on resampled rows -----------------------------


@pytest.mark.parametrize(("seed", "decimals"), [(5, 1), (6, 0), (7, 3)])
def test_zebra_bootstrap_equals_resampling(seed, decimals):
    from voxmetrics.metrics.bootstrap import speaker_resample_counts

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
    got = _ece((np.array([0.5, -1.0]), np.array([2.0, 1.0])), (y, np.ones(2)), lam)
    assert np.allclose(got, ref._ece(x, y, lam), rtol=1e-14)


def test_pools_are_built_once_per_matrix():
    from voxmetrics.synth import demo_study

    sm = demo_study(n_speakers=6).conditions[0].eval
    a = SortedPools.of(sm)
    assert SortedPools.of(sm) is a
    b = SortedPools.from_pools(sm.tar, sm.non)
    assert np.array_equal(a.values, b.values) and a.eer_points == b.eer_points


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.DegenerateDataWarning")  # tiny SRD fit
def test_evaluate_passes_the_tie_rule():
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.evaluation import evaluate

    # integer scores: targets tied with non-targets in every row
    s = np.array([[2, 2, 1], [1, 1, 0], [3, 2, 3], [0, 1, 1]], dtype=float)
    sm = ScoreMatrix.from_arrays(
        s, trial_ids=list("wxyz"), trial_speakers=list("abca"), enrol_speakers=list("abc")
    )
    ref_r, att_r = evaluate(sm).to_dict(), evaluate(sm, ties="attacker").to_dict()
    assert (ref_r["ties"], att_r["ties"]) == ("reference", "attacker")
    tar, non = ref.mated_pools(s, sm.targets)
    assert ref_r["eer"] == eer_result(tar, non).eer
    assert att_r["eer"] == eer_result(tar, non, ties="attacker").eer
    assert att_r["min_cllr"] == min_cllr(tar, non, ties="attacker") < ref_r["min_cllr"]
    # the worst case puts non-targets first under both rules (ZEBRA's optimal_llr); D_ECE puts
    # targets first under the reference rule (ZEBRA's rocch_pava), so the ties disclose less
    assert ref_r["zebra"]["log10_l"] == att_r["zebra"]["log10_l"]
    assert ref_r["zebra"]["d_ece"] == zebra(tar, non).d_ece
    att_d_ece = zebra(tar, non, ties="attacker").d_ece
    assert att_r["zebra"]["d_ece"] == att_d_ece > ref_r["zebra"]["d_ece"]
    with pytest.raises(VoxMetricsInputError, match="ties"):
        evaluate(sm, ties="worst")


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(2, 6), st.sampled_from([np.float64, np.float32]))
def test_matrix_cllr_equals_cllr_of_the_pools(n_t, n_e, dtype):
    from voxmetrics.metrics.baseline import baseline_metrics, matrix_cllr

    rng = np.random.default_rng(n_t * 10 + n_e)
    s = (rng.normal(0, 3, (n_t, n_e)) * rng.choice([1, 40], (n_t, n_e))).astype(dtype)
    t = rng.integers(0, n_e, n_t)
    tar, non = ref.mated_pools(s.astype(np.float64), t)
    expected = ref._cllr(tar, non)
    tol = 1e-12 if dtype == np.float64 else 1e-6  # float32 terms for float32 scores
    assert matrix_cllr(s, t) == pytest.approx(expected, rel=tol)
    b = baseline_metrics(s, t)
    assert b.cllr == matrix_cllr(s, t)
    assert b.min_cllr == pytest.approx(ref.min_cllr(tar, non), rel=1e-12, abs=1e-15)
    assert b.eer_rocch == ref.eer_rocch(tar, non)


def test_non_sums_do_not_depend_on_the_blas_threads():
    """Dask workers run one BLAS thread: the sums must not follow BLAS's thread count (a BLAS
    dot of 400,000 values does, with 2 threads or more)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(0)
    s = rng.normal(size=(200, 2000))
    pools = SortedPools.from_matrix(s, rng.integers(0, 2000, 200))
    default = pools.non_sums(0.1)
    with threadpoolctl.threadpool_limits(1):
        assert pools.non_sums(0.1) == default


# ------------------------------------------- pav_llrs' positions: np.searchsorted, faster


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


# ------------------------------------------- pav_llrs' non-targets: merged cells, same numbers


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
