"""ZEBRA figure builders (AppTest cannot see Plotly figures)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from voxmetrics.data.summary import score_histogram
from voxmetrics.metrics.zebra import ece_curves, pav_transform, zebra
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
