"""Threat-model figure builders (AppTest cannot see Plotly figures, so they are tested here)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from voxmetrics import plots
from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.evaluation.threat import (
    PAPER_EXAMPLE_SCORES,
    PAPER_EXAMPLE_TARGETS,
    PAPER_EXAMPLE_W,
    paper_matrix,
    threat_scenario,
    threat_view,
)
from voxmetrics.plots.lid import OTHER_IDENTITY_COLOR
from voxmetrics.plots.style import MATED_COLOR, NON_MATED_COLOR
from voxmetrics.plots.threat import (
    ATTACKER_PICK_COLOR,
    lid_per_trial_figure,
    pooled_view_figure,
    row_view_figure,
    scenario_metrics_figure,
)


@pytest.fixture(scope="module")
def paper():
    return threat_view(paper_matrix(), w=PAPER_EXAMPLE_W)


@pytest.fixture(scope="module")
def scenario():
    return threat_scenario(n_enrolled=20, n_trials=200, offset_spread=2.0)


def test_builders_are_exported():
    for name in ("pooled_view_figure", "row_view_figure", "lid_per_trial_figure"):
        assert name in plots.__all__ and getattr(plots, name) is not None
    assert "scenario_metrics_figure" in plots.__all__


# ---------------------------------------------------------------- pooled view


def test_pooled_view_of_the_paper_example(paper):
    fig = pooled_view_figure(paper)
    assert isinstance(fig, go.Figure)
    assert [t.type for t in fig.data] == ["histogram", "histogram"]
    non, tar = fig.data
    assert sorted(tar.x) == [0.3, 0.5, 0.7, 0.9]
    assert sorted(non.x) == sorted([0.8] * 3 + [0.6] * 3 + [0.4] * 3 + [0.2] * 3)
    assert tar.marker.color == MATED_COLOR and non.marker.color == NON_MATED_COLOR
    assert tar.histnorm == non.histnorm == "percent"
    assert tar.xbins.size == pytest.approx(0.1) and tar.xbins == non.xbins
    # the threshold is the library's, and the title names the EER
    (shape,) = fig.layout.shapes
    assert shape.x0 == shape.x1 == paper.baseline.eer_threshold
    assert "EER = 50.0%" in fig.layout.title.text
    assert fig.layout.barmode == "overlay"


def test_pooled_view_of_a_scenario(scenario):
    fig = pooled_view_figure(scenario)
    non, tar = fig.data
    assert len(tar.x) == 200 and len(non.x) == 200 * 19
    assert fig.layout.title.text.startswith(f"Pooled (1-to-1): EER = {scenario.baseline.eer:.1%}")
    edges = (tar.xbins.end - tar.xbins.start) / tar.xbins.size
    assert edges == pytest.approx(40)
    assert tar.xbins.start <= min(tar.x) and tar.xbins.end >= max(non.x)


def test_pooled_view_of_a_constant_matrix():
    """Every score equal: one bin, no division by a zero range."""
    with pytest.warns(DegenerateDataWarning):  # rows without evidence get LID = 0
        v = threat_view(paper_matrix([[0.5, 0.5], [0.5, 0.5]], [0, 1]), w=1.0)
    fig = pooled_view_figure(v)
    assert fig.data[0].xbins.size == 1.0
    assert len(row_view_figure(v).data[2].x) == 2


# ---------------------------------------------------------------- row view


def test_row_view_of_the_paper_example(paper):
    fig = row_view_figure(paper)
    others, own, picks = fig.data
    assert len(others.x) == 12 and len(own.x) == 4 and len(picks.x) == 4
    assert own.marker.color == MATED_COLOR
    assert others.marker.color == OTHER_IDENTITY_COLOR
    assert picks.marker.symbol == "circle-open"
    assert picks.marker.color == ATTACKER_PICK_COLOR
    # every trial's own speaker wins its row: the rings sit on the orange dots
    assert list(picks.x) == list(own.x) == [0.9, 0.7, 0.5, 0.3]
    assert list(picks.y) == list(own.y) == [0, 1, 2, 3]
    assert list(fig.layout.yaxis.ticktext) == [f"trial {i} ✓" for i in range(1, 5)]
    assert fig.layout.yaxis.range == (3.5, -0.5)  # trial 1 on top
    # the three equal other scores of each row are fanned out, not drawn on top of each other
    for k in range(4):
        ys = [y for y in others.y if round(y) == k]
        assert len(ys) == 3 and len(set(ys)) == 3
    assert "linkability = 100.0%" in fig.layout.title.text
    assert fig.layout.shapes[0].x0 == paper.baseline.eer_threshold


def test_row_view_marks_a_lost_trial():
    scores = [list(r) for r in PAPER_EXAMPLE_SCORES]
    scores[1][3] = 0.75  # trial 2: speaker 4 beats its own speaker (0.7)
    v = threat_view(paper_matrix(scores, PAPER_EXAMPLE_TARGETS), w=PAPER_EXAMPLE_W)
    fig = row_view_figure(v)
    _, own, picks = fig.data
    assert picks.x[1] == 0.75 and own.x[1] == 0.7
    assert list(own.customdata[:, 1].astype(int)) == [1, 2, 1, 1]
    assert fig.layout.yaxis.ticktext[1] == "trial 2 · rank 2"


def test_row_view_counts_a_tie_as_a_link_like_linkability():
    scores = [list(r) for r in PAPER_EXAMPLE_SCORES]
    scores[0][2] = 0.9  # trial 1: speaker 3 ties the own speaker
    v = threat_view(paper_matrix(scores, PAPER_EXAMPLE_TARGETS), w=PAPER_EXAMPLE_W)
    fig = row_view_figure(v)
    _, own, picks = fig.data
    # the ring goes on the own speaker's 0.9 (the authors' linkability links a tie)
    assert picks.x[0] == 0.9 and picks.y[0] == own.y[0]
    assert fig.layout.yaxis.ticktext[0] == "trial 1 ✓"
    assert v.ranks[0] == 2  # the rank still counts the tie against the attacker


def test_row_view_samples_many_trials(scenario):
    fig = row_view_figure(scenario, max_rows=20)
    others, own, picks = fig.data
    assert len(own.x) == len(picks.x) == 20
    assert len(others.x) == 20 * 19
    assert list(own.x) == sorted(own.x, reverse=True)  # ordered by the own-speaker score
    assert "20 of 200 trials" in fig.layout.title.text
    assert len(fig.layout.yaxis.ticktext) == 20
    # picks sit on the own speaker exactly for the rows marked linked
    linked = [t.endswith("✓") for t in fig.layout.yaxis.ticktext]
    assert linked == [p == o for p, o in zip(picks.x, own.x, strict=True)]


# ---------------------------------------------------------------- LID per trial


def test_lid_bars_of_the_paper_example(paper):
    fig = lid_per_trial_figure(paper)
    (bars,) = fig.data
    assert bars.type == "bar"
    assert list(bars.x) == ["trial 1", "trial 2", "trial 3", "trial 4"]
    np.testing.assert_allclose(bars.y, paper.lid.lid)
    assert list(bars.marker.color) == [MATED_COLOR] * 4  # all disclose
    lines = sorted(s.y0 for s in fig.layout.shapes)
    assert lines == [0.0, 2.0]  # 0 bits and the log2 N ceiling
    assert "ALID 1.87, LIDmax 1.87 bits" in fig.layout.title.text


def test_lid_histogram_of_a_scenario(scenario):
    fig = lid_per_trial_figure(scenario)
    (hist,) = fig.data
    assert hist.type == "histogram" and len(hist.x) == 200
    assert hist.histnorm == "percent"
    xs = sorted(s.x0 for s in fig.layout.shapes)
    assert xs == pytest.approx([0.0, math.log2(20)])


# ---------------------------------------------------------------- the numbers side by side


def test_scenario_metrics_figure(paper, scenario):
    fig = scenario_metrics_figure(paper)
    pct, chance, bits, ceiling = fig.data
    assert list(pct.x) == ["EER", "ROCCH-EER", "Linkability"]
    assert list(pct.y) == pytest.approx([50.0, 37.5, 100.0])
    assert list(chance.y) == pytest.approx([50.0, 50.0, 25.0])
    assert list(bits.x) == ["ALID", "LIDmax"]
    np.testing.assert_allclose(bits.y, [paper.lid.alid, paper.lid.lid_max])
    assert list(ceiling.y) == [2.0, 2.0]
    texts = [a.text for a in fig.layout.annotations]
    assert "50.0 %" in texts and "100.0 %" in texts and "1.87" in texts
    fig = scenario_metrics_figure(scenario, title="The numbers side by side")
    assert fig.layout.title.text == "The numbers side by side"
    assert fig.data[1].y[2] == pytest.approx(100 / 20)
