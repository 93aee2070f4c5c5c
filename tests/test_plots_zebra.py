"""ZEBRA figure builders and page helpers (AppTest cannot see Plotly figures)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.summary import score_histogram
from voxmetrics.metrics.zebra import ece_curves, pav_transform, zebra, zebra_bootstrap
from voxmetrics.plots.style import MATED_COLOR
from voxmetrics.plots.zebra import (
    CONDITION_PALETTE,
    ZERO_EVIDENCE_COLOR,
    ZebraProfile,
    condition_colors,
    ece_profile_figure,
    pav_transform_figure,
    zebra_legend,
)
from voxmetrics.synth import demo_study
from voxmetrics.ui.cache_zebra import worst_trial, worst_trial_frame, zebra_table

LN10 = math.log(10.0)


@pytest.fixture(scope="module")
def study():
    return demo_study(n_speakers=8)


def _profiles(study, *, llrs: bool = False) -> list[ZebraProfile]:
    return [
        ZebraProfile(
            c.name,
            zebra(c.eval.tar, c.eval.non),
            ece_curves(c.eval.tar, c.eval.non, scores_are_llrs=llrs),
        )
        for c in study.conditions
    ]


def test_legend_text_is_name_d_ece_log10_l_tag(study):
    p = _profiles(study)[0]
    r = p.result
    assert zebra_legend("plain", r) == f"plain ({r.d_ece:.3f}, {r.log10_l:.2f}, {r.tag})"


def test_profile_figure_traces_sorted_by_d_ece(study):
    profiles = _profiles(study)
    colors = condition_colors(study.names)
    fig = ece_profile_figure(profiles, colors=colors)
    assert isinstance(fig, go.Figure)
    assert len(fig.data) == 1 + len(profiles)  # zero evidence + one curve per condition
    zero = fig.data[0]
    assert zero.name == "zero evidence (perfect privacy)"
    assert zero.line.color == ZERO_EVIDENCE_COLOR
    # zero evidence = H2(pi) in bits, plotted against log10 prior odds
    lam = np.asarray(zero.x) * LN10
    pi = 1.0 / (1.0 + np.exp(-lam))
    h2 = -(pi * np.log2(pi) + (1 - pi) * np.log2(1 - pi))
    np.testing.assert_allclose(zero.y, h2, rtol=1e-12)
    assert zero.x[0] == pytest.approx(-10.0 / LN10) and zero.x[-1] == pytest.approx(10.0 / LN10)
    # conditions by decreasing D_ECE, legend "name (D_ECE, log10 l, tag)", study colours
    by_d = sorted(profiles, key=lambda p: p.result.d_ece, reverse=True)
    assert [t.name for t in fig.data[1:]] == [zebra_legend(p.name, p.result) for p in by_d]
    for trace, p in zip(fig.data[1:], by_d, strict=True):
        np.testing.assert_array_equal(trace.y, p.curves.minimum)
        assert trace.line.color == colors[p.name]
        assert trace.line.dash is None
    assert by_d[0].name == "plain" and fig.data[1].name.startswith("plain (0.")
    assert "prior log10 odds" in fig.layout.xaxis.title.text
    assert fig.layout.yaxis.title.text == "ECE (bits)"


def test_profile_figure_with_actual_curves(study):
    profiles = _profiles(study, llrs=True)
    fig = ece_profile_figure(profiles)
    assert len(fig.data) == 1 + 2 * len(profiles)
    dashed = [t for t in fig.data if t.line.dash == "dash"]
    assert len(dashed) == len(profiles)
    for t in dashed:
        name = t.name.split(":")[0]
        p = next(p for p in profiles if p.name == name)
        np.testing.assert_array_equal(t.y, p.curves.actual)
        assert t.legendgroup == name


def test_colors_follow_the_study_not_the_selection():
    names = ["a", "b", "c"]
    colors = condition_colors(names)
    assert colors == dict(zip(names, CONDITION_PALETTE[:3], strict=True))
    assert ZERO_EVIDENCE_COLOR not in CONDITION_PALETTE
    assert len(condition_colors([f"c{k}" for k in range(20)])) == 20  # cycles


def test_pav_figure_step_functions():
    tar, non = [2.0, 3.0, 0.5, 3.0], [0.0, 1.0, 0.7, -1.0, 1.0]
    tf = pav_transform(tar, non)
    r = zebra(tar, non)
    fig = pav_transform_figure(tf, name="x", result=r)
    lap, plain, star = fig.data
    assert lap.name.startswith("with Laplace") and plain.name.startswith("without")
    assert lap.line.shape == plain.line.shape == "hv"
    # every step of the Laplace transform, in log10 units (runs of equal values thinned)
    got = dict(zip(lap.x, lap.y, strict=True))
    for s, v in zip(tf.scores, tf.llr_laplace / LN10, strict=True):
        if s in got:
            assert got[s] == pytest.approx(v)
    assert lap.x[0] == tf.scores[0] and lap.x[-1] == tf.scores[-1]
    # +-inf without Laplace are drawn at the axis edge and labelled
    assert "+∞" in plain.text and "−∞" in plain.text
    edge = fig.layout.yaxis.range[1]
    assert max(plain.y) < edge and min(plain.y) > -edge
    # the worst case is marked at its score, |y| = log10 l
    assert star.x == (r.worst_score,)
    assert abs(star.y[0]) == pytest.approx(r.log10_l)
    assert f"log10 l = {r.log10_l:.2f} ({r.tag})" in star.text[0]


def test_pav_figure_with_histogram(study):
    sm = study.get("anon-mild").eval
    fig = pav_transform_figure(
        pav_transform(sm.tar, sm.non),
        name="anon-mild",
        result=zebra(sm.tar, sm.non),
        histogram=score_histogram(sm, bins=30),
    )
    bars = [t for t in fig.data if isinstance(t, go.Bar)]
    assert [b.name.split(" (")[0] for b in bars] == ["non-mated scores", "mated scores"]
    assert bars[1].marker.color == MATED_COLOR
    assert fig.layout.title.text == "PAV calibration of anon-mild"
    assert fig.layout.yaxis2.title.text == "density"
    # thinned: far fewer points than distinct scores, still a full step function
    assert len(fig.data[0].x) < pav_transform(sm.tar, sm.non).scores.size


def test_builders_accept_empty_selection():
    fig = ece_profile_figure([])
    assert len(fig.data) == 0


# ---------------------------------------------------------------- page helpers


def _sm(scores, targets_speakers, enrol) -> ScoreMatrix:
    scores = np.asarray(scores, dtype=float)
    return ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"t{i}" for i in range(scores.shape[0])],
        trial_speakers=targets_speakers,
        enrol_speakers=enrol,
    )


def test_worst_trial_maps_non_mated_indices_row_major():
    # 3 trials x 4 enrolled; targets in columns 1, 0, 3. sm.non is row-major without the
    # target column: row 0 -> columns 0, 2, 3; row 1 -> 1, 2, 3; row 2 -> 0, 1, 2
    scores = np.arange(12, dtype=float).reshape(3, 4) / 10
    sm = _sm(scores, ["b", "a", "d"], ["a", "b", "c", "d"])
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
