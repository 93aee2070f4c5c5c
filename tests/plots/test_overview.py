"""Figure builders and the score histogram (AppTest cannot see Plotly figures)."""

from __future__ import annotations

import dataclasses

import numpy as np
import plotly.graph_objects as go
import pytest

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.summary import ScoreHistogram, score_histogram
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate
from voxmetrics.plots import eer_linkability_figure, score_histogram_figure


def _sm(scores, speakers=("a", "b", "c"), trial_speakers=None) -> ScoreMatrix:
    scores = np.asarray(scores, dtype=float)
    trial_speakers = trial_speakers or list(speakers[: scores.shape[0]])
    return ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"t{i}" for i in range(scores.shape[0])],
        trial_speakers=trial_speakers,
        enrol_speakers=list(speakers),
    )


@pytest.fixture
def reports():
    """Three conditions: perfect, inverted (EER 1) and mixed."""
    perfect = _sm([[0.9, 0.1, 0.2], [0.1, 0.8, 0.3], [0.2, 0.1, 0.7]])
    inverted = _sm([[0.1, 0.9, 0.2], [0.8, 0.1, 0.3], [0.2, 0.7, 0.1]])
    mixed = _sm([[0.9, 0.95, 0.2], [0.1, 0.8, 0.3], [0.2, 0.1, 0.7]])
    return [
        evaluate(sm, name=name)
        for name, sm in (("perfect", perfect), ("inverted", inverted), ("mixed", mixed))
    ]


# ---------------------------------------------------------------- score_histogram


def test_histogram_counts_every_score_once():
    rng = np.random.default_rng(0)
    sm = _sm(
        rng.normal(size=(30, 4)),
        speakers=("a", "b", "c", "d"),
        trial_speakers=list("abcd" * 7 + "ab"),
    )
    h = score_histogram(sm, bins=17)
    assert h.edges.shape == (18,) and h.mated.shape == h.non_mated.shape == (17,)
    assert h.n_mated == 30 and h.n_non_mated == 30 * 3
    assert h.edges[0] == sm.scores.min() and h.edges[-1] == sm.scores.max()
    ref_tar, _ = np.histogram(sm.tar, bins=h.edges)
    ref_non, _ = np.histogram(sm.non, bins=h.edges)
    np.testing.assert_array_equal(h.mated, ref_tar)
    np.testing.assert_array_equal(h.non_mated, ref_non)
    for density in (h.mated_density, h.non_mated_density):
        assert np.sum(density * h.widths) == pytest.approx(1.0)
    assert not h.mated.flags.writeable


def test_histogram_of_constant_scores_has_a_visible_bin():
    h = score_histogram(_sm(np.ones((3, 3))), bins=4)
    assert h.edges[0] == 0.5 and h.edges[-1] == 1.5
    assert h.n_mated == 3 and h.n_non_mated == 6


@pytest.mark.parametrize("bins", [0, -3, 2.5, True, "60"])
def test_histogram_rejects_bad_bins(bins):
    with pytest.raises(VoxMetricsInputError, match="bins"):
        score_histogram(_sm(np.eye(3)), bins=bins)


def test_histogram_to_dict_is_json_safe():
    import json

    d = score_histogram(_sm(np.eye(3)), bins=3).to_dict()
    assert json.loads(json.dumps(d))["mated"] == [0, 0, 3]


# ---------------------------------------------------------------- score_histogram_figure


def test_score_histogram_figure_has_two_density_traces():
    h = score_histogram(_sm(np.eye(3) + 0.1 * np.arange(9).reshape(3, 3)), bins=5)
    fig = score_histogram_figure(h, title="t")
    assert isinstance(fig, go.Figure)
    assert [t.type for t in fig.data] == ["bar", "bar"]
    non, mated = fig.data
    assert non.name == "non-mated (6)" and mated.name == "mated (3)"
    assert len(non.x) == len(mated.x) == 5
    np.testing.assert_allclose(np.asarray(mated.y), h.mated_density)
    np.testing.assert_allclose(np.asarray(non.width), h.widths)
    assert fig.layout.barmode == "overlay"
    assert fig.layout.title.text == "t"
    assert non.marker.color != mated.marker.color


def test_score_histogram_figure_sends_counts_not_raw_scores():
    rng = np.random.default_rng(1)
    sm = _sm(rng.normal(size=(300, 3)), trial_speakers=list("abc" * 100))
    fig = score_histogram_figure(score_histogram(sm, bins=60))
    assert all(len(t.x) == 60 for t in fig.data)


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
    four = _sm(np.eye(4), speakers=("a", "b", "c", "d"))
    reports = [*reports, evaluate(four, name="four")]
    _, chance = eer_linkability_figure(reports).data
    assert chance.mode == "markers"
    np.testing.assert_allclose(np.asarray(chance.y), [1 / 3, 1 / 3, 1 / 3, 1 / 4])
    assert list(chance.text) == ["perfect", "inverted", "mixed", "four"]


def test_eer_linkability_figure_uses_report_names(reports):
    renamed = [dataclasses.replace(reports[0], name="renamed")]
    assert list(eer_linkability_figure(renamed).data[0].text) == ["renamed"]


def test_histogram_type_is_frozen():
    h = ScoreHistogram(edges=np.array([0.0, 1.0]), mated=np.array([1]), non_mated=np.array([2]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.source = "x"  # type: ignore[misc]
