"""The overview scatters (voxmetrics/plots/overview.py): EER vs linkability, EER vs LIDmax."""

from __future__ import annotations

import dataclasses

import numpy as np
import plotly.graph_objects as go
import pytest
from score_cases import score_matrix

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Study
from voxmetrics.evaluation import evaluate, evaluate_study
from voxmetrics.plots import eer_linkability_figure
from voxmetrics.plots.overview import eer_lidmax_figure
from voxmetrics.synth import demo_study


@pytest.fixture
def reports():
    """Three conditions: perfect, inverted (EER 1) and mixed."""
    perfect = score_matrix([[0.9, 0.1, 0.2], [0.1, 0.8, 0.3], [0.2, 0.1, 0.7]])
    inverted = score_matrix([[0.1, 0.9, 0.2], [0.8, 0.1, 0.3], [0.2, 0.7, 0.1]])
    mixed = score_matrix([[0.9, 0.95, 0.2], [0.1, 0.8, 0.3], [0.2, 0.1, 0.7]])
    return [
        evaluate(sm, name=name)
        for name, sm in (("perfect", perfect), ("inverted", inverted), ("mixed", mixed))
    ]


# ---------------------------------------------------------------- eer_linkability_figure


def test_eer_linkability_figure_one_labelled_marker_per_condition(reports):
    fig = eer_linkability_figure(reports)
    assert isinstance(fig, go.Figure)
    conditions, chance = fig.data
    assert list(conditions.text) == ["perfect", "inverted", "mixed"]
    assert list(conditions.x) == [r.baseline.eer for r in reports]
    assert list(conditions.y) == [r.baseline.linkability for r in reports]
    assert conditions.mode == "markers+text"
    # one N for all: the chance level is one dashed horizontal line at 1/N
    assert chance.mode == "lines" and chance.line.dash == "dash"
    assert list(chance.y) == [pytest.approx(1 / 3)] * 2
    assert chance.name == "chance 1/N = 0.333"
    assert "EER" in fig.layout.xaxis.title.text
    assert "Linkability" in fig.layout.yaxis.title.text


def test_eer_linkability_figure_chance_per_condition_when_n_differs(reports):
    four = score_matrix(np.eye(4), speakers=("a", "b", "c", "d"))
    reports = [*reports, evaluate(four, name="four")]
    _, chance = eer_linkability_figure(reports).data
    assert chance.mode == "markers"
    np.testing.assert_allclose(np.asarray(chance.y), [1 / 3, 1 / 3, 1 / 3, 1 / 4])
    assert list(chance.text) == ["perfect", "inverted", "mixed", "four"]


def test_eer_linkability_figure_uses_report_names(reports):
    renamed = [dataclasses.replace(reports[0], name="renamed")]
    assert list(eer_linkability_figure(renamed).data[0].text) == ["renamed"]


def _matrix(t: int, n: int, *, signal: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    targets = np.arange(t) % n
    scores = rng.normal(size=(t, n))
    scores[np.arange(t), targets] += signal
    return scores, targets


def test_eer_lidmax_figure_one_marker_per_condition_with_lid():
    spk = ("a", "b", "c", "d")
    rng = np.random.default_rng(0)
    dev = ScoreMatrix.from_arrays(
        np.eye(4) + rng.normal(scale=0.5, size=(4, 4)),
        trial_ids=["d0", "d1", "d2", "d3"],
        trial_speakers=["e", "f", "g", "h"],
        enrol_speakers=["e", "f", "g", "h"],
    )
    ev = score_matrix(np.eye(4) * 0.5 + rng.normal(scale=0.5, size=(4, 4)), spk)
    with_dev = evaluate(ev, dev=dev, name="calibrated")
    without = evaluate(ev, name="no-dev")
    fig = eer_lidmax_figure([with_dev, without])
    marks = fig.data[0]
    assert list(marks.text) == ["calibrated"]
    assert list(marks.x) == [with_dev.baseline.eer]
    assert list(marks.y) == [with_dev.lid.lid_max]
    notes = [a.text for a in fig.layout.annotations]
    assert any("Without LID" in t and "no-dev" in t for t in notes)
    # 1 bit and the ceiling are horizontal lines; the chance EER a vertical one
    hlines = sorted(float(s.y0) for s in fig.layout.shapes if s.type == "line" and s.y0 == s.y1)
    assert hlines == pytest.approx([1.0, 2.0])
    assert 0.5 in [s.x0 for s in fig.layout.shapes if s.type == "line" and s.x0 == s.x1]
    assert "LIDmax" in fig.layout.yaxis.title.text and "EER" in fig.layout.xaxis.title.text


def test_eer_lidmax_figure_labels_cross_calibration():
    s, t = _matrix(40, 5, signal=1.0, seed=3)
    speakers = [f"s{j}" for j in range(5)]
    sm = ScoreMatrix.from_arrays(
        s,
        trial_ids=[f"t{i}" for i in range(40)],
        trial_speakers=[speakers[j] for j in t],
        enrol_speakers=speakers,
    )
    report = evaluate(sm, name="cv", cross_calibrate=5)
    fig = eer_lidmax_figure([report, dataclasses.replace(report, name="cv2")])
    # the two points coincide: one label names both (the hover names each)
    assert list(fig.data[0].text) == ["cv (cross-calibrated), cv2 (cross-calibrated)", ""]
    assert not [a for a in fig.layout.annotations if "Without LID" in a.text]


# ---------------------------------------------------------------- coinciding labels


@pytest.fixture(scope="module")
def twins():
    """Two conditions with the same scores (they coincide on every scatter) and a third."""
    demo = demo_study(n_speakers=6)
    plain = demo.get("plain")
    twin = dataclasses.replace(plain, name="plain-copy")
    study = Study(conditions=(plain, twin, demo.get("random")), name="twins")
    return evaluate_study(study, bootstrap=0)


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
def test_coinciding_conditions_share_one_label_and_keep_their_hover(twins):
    for fig in (eer_linkability_figure(twins), eer_lidmax_figure(twins)):
        points = fig.data[0]
        assert list(points.text) == ["plain, plain-copy", "", "random"]
        assert list(points.hovertext) == ["plain", "plain-copy", "random"]
        assert "%{hovertext}" in points.hovertemplate
