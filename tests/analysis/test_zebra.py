"""voxmetrics.analysis.zebra: the ZEBRA views of a matrix, the worst trial and the table.

The curves and the transform derive from the matrix's sorted pools (no non-mated pool); they
are checked against :mod:`voxmetrics.metrics.zebra` on the explicit pools.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from score_cases import score_matrix

from voxmetrics.analysis.zebra import (
    ece_curves_of,
    pav_transform_of,
    worst_trial,
    worst_trial_frame,
    zebra_intervals,
    zebra_of,
    zebra_table,
)
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.metrics.zebra import (
    ece_curves,
    ece_curves_of_matrix,
    pav_transform,
    pav_transform_from_pools,
    zebra,
    zebra_bootstrap,
)
from voxmetrics.plots.zebra import pav_transform_figure
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def study():
    return demo_study(n_speakers=8)


def _no_non_pool(monkeypatch):
    """Make building ScoreMatrix.non fail: the code under test must not need it."""

    def refuse(self):
        raise AssertionError("the non-mated pool was built")

    monkeypatch.setattr(ScoreMatrix, "non", property(refuse))


# ---------------------------------------------------------------- the transform from the pools


def test_transform_from_pools_by_hand():
    # targets 2, 3; non-targets 0, 0.5, 1 (one cell below the targets), 2.5 (between them)
    sp = SortedPools.from_pools([2.0, 3.0], [0.0, 0.5, 1.0, 2.5])
    t = pav_transform_from_pools(sp)
    # cell 0 keeps its lowest (0) and highest (1) score, not 0.5; then 2, 2.5, 3
    assert t.scores.tolist() == [0.0, 1.0, 2.0, 2.5, 3.0]
    full = pav_transform([2.0, 3.0], [0.0, 0.5, 1.0, 2.5])
    assert full.scores.tolist() == [0.0, 0.5, 1.0, 2.0, 2.5, 3.0]
    np.testing.assert_array_equal(t.llr, full.llr[[0, 2, 3, 4, 5]])
    np.testing.assert_array_equal(t.llr_laplace, full.llr_laplace[[0, 2, 3, 4, 5]])


def _random_matrix(seed: int, *, decimals: int, dtype) -> ScoreMatrix:
    rng = np.random.default_rng(seed)
    n_t, n_e = int(rng.integers(2, 25)), int(rng.integers(2, 9))
    t = rng.integers(0, n_e, n_t)
    s = rng.normal(0, 1, (n_t, n_e)).round(decimals)
    s[np.arange(n_t), t] += rng.normal(1.0, 1.0)
    return ScoreMatrix.from_arrays(
        s.astype(dtype),
        trial_ids=[f"t{i}" for i in range(n_t)],
        trial_speakers=[f"s{j}" for j in t],
        enrol_speakers=[f"s{j}" for j in range(n_e)],
    )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    decimals=st.integers(0, 3),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_transform_of_a_matrix_is_the_full_transform(seed, decimals, dtype):
    # every pooled score looked up in the reduced transform gets the full transform's LLR, and
    # the figure draws the same steps (ties included: few decimals make many)
    sm = _random_matrix(seed, decimals=decimals, dtype=dtype)
    full = pav_transform(sm.tar, sm.non)
    reduced = pav_transform_of(sm)
    assert set(reduced.scores.tolist()) <= set(full.scores.tolist())
    k = np.searchsorted(reduced.scores, full.scores)
    np.testing.assert_array_equal(reduced.llr[k], full.llr)
    np.testing.assert_array_equal(reduced.llr_laplace[k], full.llr_laplace)
    a, b = pav_transform_figure(full), pav_transform_figure(reduced)
    for ta, tb in zip(a.data, b.data, strict=True):
        np.testing.assert_array_equal(ta.x, tb.x)
        np.testing.assert_array_equal(ta.y, tb.y)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), decimals=st.integers(0, 3))
def test_actual_ece_from_the_rows_equals_the_pools(seed, decimals):
    sm = _random_matrix(seed, decimals=decimals, dtype=np.float64)
    want = ece_curves(sm.tar, sm.non, scores_are_llrs=True)
    got = ece_curves_of_matrix(sm.scores, sm.targets, scores_are_llrs=True)
    np.testing.assert_allclose(got.actual, want.actual, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(got.minimum, want.minimum)
    np.testing.assert_array_equal(got.zero_evidence, want.zero_evidence)


def test_actual_ece_by_hand():
    # one target LLR 0 and one non-target LLR 0: at prior log-odds 0 the ECE is 1 bit
    sm = ScoreMatrix.from_arrays(
        [[0.0, 0.0]], trial_ids=["t"], trial_speakers=["a"], enrol_speakers=["a", "b"]
    )
    c = ece_curves_of(sm, scores_are_llrs=True)
    mid = int(np.flatnonzero(c.prior_log_odds == 0.0)[0])
    assert c.actual[mid] == pytest.approx(1.0)
    assert c.zero_evidence[mid] == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["plain", "random", "anon-leaky"])
def test_demo_views_without_the_non_mated_pool(study, name, monkeypatch):
    sm = study.get(name).eval
    tar, non = sm.tar, sm.non  # the explicit pools, for the reference
    want_zebra = zebra(tar, non)
    want_curves = ece_curves(tar, non, scores_are_llrs=True)
    want_transform = pav_transform(tar, non)
    want_ci = zebra_bootstrap(sm.scores, sm.targets, sm.trial_speakers, n_boot=20, seed=3)
    fresh = dataclasses.replace(sm)  # a new matrix: no cached pools
    _no_non_pool(monkeypatch)
    assert zebra_of(fresh) == want_zebra
    curves = ece_curves_of(fresh, scores_are_llrs=True)
    np.testing.assert_array_equal(curves.minimum, want_curves.minimum)
    np.testing.assert_allclose(curves.actual, want_curves.actual, rtol=1e-12)
    transform = pav_transform_of(fresh)
    w = worst_trial(fresh, want_zebra, transform)
    assert w == worst_trial(sm, want_zebra, want_transform)
    assert zebra_intervals(fresh, n_boot=20, seed=3) == want_ci


# ---------------------------------------------------------------- worst trial and table


def test_worst_trial_maps_non_mated_indices_row_major():
    # 3 trials x 4 enrolled; targets in columns 1, 0, 3. sm.non is row-major without the
    # target column: row 0 -> columns 0, 2, 3; row 1 -> 1, 2, 3; row 2 -> 0, 1, 2
    scores = np.arange(12, dtype=float).reshape(3, 4) / 10
    sm = score_matrix(scores, ["a", "b", "c", "d"], ["b", "a", "d"])
    cells = [(0, 0), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3), (2, 0), (2, 1), (2, 2)]
    np.testing.assert_array_equal(sm.non, [scores[i, j] for i, j in cells])
    tf = pav_transform(sm.tar, sm.non)
    base = zebra(sm.tar, sm.non)
    for k, (row, col) in enumerate(cells):
        r = dataclasses.replace(
            base, worst_is_mated=False, worst_index=k, worst_score=float(sm.non[k])
        )
        w = worst_trial(sm, r, tf)
        assert (w.row, w.column) == (row, col)
        assert w.score == sm.scores[row, col] == sm.non[k]
        assert w.trial_id == f"t{row}" and w.enrolled == "abcd"[col] and not w.mated
    for i in range(3):
        r = dataclasses.replace(
            base, worst_is_mated=True, worst_index=i, worst_score=float(sm.tar[i])
        )
        w = worst_trial(sm, r, tf)
        assert (w.row, w.column) == (i, int(sm.targets[i])) and w.mated
        assert w.enrolled == w.trial_speaker


@pytest.mark.parametrize("name", ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"])
def test_worst_trial_on_the_demo(study, name):
    sm = study.get(name).eval
    r = zebra(sm.tar, sm.non)
    w = worst_trial(sm, r, pav_transform(sm.tar, sm.non))
    assert w.score == r.worst_score
    assert abs(w.log10_lr) == pytest.approx(r.log10_l)
    assert w.mated == (w.trial_speaker == w.enrolled) == r.worst_is_mated
    df = worst_trial_frame(name, w, r)
    assert df.loc[0, "Trial id"] == w.trial_id and df.loc[0, "Tag"] == r.tag


def test_zebra_table_columns_and_order(study):
    results = {c.name: zebra(c.eval.tar, c.eval.non) for c in study.conditions}
    df = zebra_table(results)
    assert list(df.columns) == [
        "Condition", "D_ECE (bits)", "log10 l", "Tag", "Posterior odds (flat prior)"
    ]  # fmt: skip
    assert list(df["D_ECE (bits)"]) == sorted(df["D_ECE (bits)"], reverse=True)
    assert df["D_ECE (bits)"].dtype == float
    sm = study.get("plain").eval
    ci = zebra_bootstrap(sm.scores, sm.targets, sm.trial_speakers, n_boot=20)
    df = zebra_table(results, {"plain": ci})
    assert list(df.columns)[1:4] == ["D_ECE (bits)", "D_ECE 95% low", "D_ECE 95% high"]
    plain = df.set_index("Condition").loc["plain"]
    assert plain["D_ECE 95% low"] == ci["d_ece"].low
    assert plain["|log10 LR| q95 95% low"] == ci["log10_l_q95"].low
    assert np.isnan(df.set_index("Condition").loc["random", "|log10 LR| q95 95% high"])
