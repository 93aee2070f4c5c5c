"""SRD figure builders (AppTest cannot see Plotly figures); tables: tests/analysis/test_srd.py."""

from __future__ import annotations

import math
import warnings

import numpy as np
import plotly.graph_objects as go
import pytest
import srd_cases

from voxmetrics.analysis.srd import mean_d_summary, zero_rank_counts
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.evaluation import evaluate
from voxmetrics.metrics.srd import (
    beta_binomial_pmf,
    fit_beta_binomial,
    srd,
    srd_per_speaker,
)
from voxmetrics.plots.srd import (
    CONDITION_PALETTE,
    LOSS_DASH,
    condition_colors,
    mean_d_bar_figure,
    rank_distribution_figure,
    speaker_mean_d_figure,
    speaker_rank_figure,
)


@pytest.fixture(scope="module")
def two_conditions():
    """Two conditions, N = 8: ranks spread out, and concentrated at rank 1."""
    return srd_cases.two_conditions()


rank_scores = srd_cases.rank_scores


def _traces(fig: go.Figure, kind: str, condition=None):
    return [
        t
        for t in fig.data
        if t.meta["kind"] == kind and (condition is None or t.meta["condition"] == condition)
    ]


def test_the_helper_matrix_has_the_ranks_asked_for():
    scores, targets = rank_scores([1, 3, 8, 2], 8)
    assert srd(scores, targets).ranks.tolist() == [1, 3, 8, 2]


# ---------------------------------------------------------------- rank distributions


def test_log_figure_draws_the_distribution_without_zeros(two_conditions):
    results, fits = two_conditions
    fig = rank_distribution_figure(results, fits, log=True)
    for name, r in results.items():
        (data,) = _traces(fig, "data", name)
        p = r.distribution
        keep = p > 0
        np.testing.assert_array_equal(np.asarray(data.x), np.arange(1, 9)[keep])
        np.testing.assert_allclose(np.asarray(data.y), p[keep])
        assert (np.asarray(data.y) > 0).all()
        np.testing.assert_array_equal(np.asarray(data.customdata), r.histogram[keep])
        assert data.mode == "markers"  # no line bridging the dropped zeros
    assert zero_rank_counts(results) == {"spread": 1, "sharp": 5}
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    # the y axis starts below the smallest non-zero probability, 1/12
    assert 10 ** fig.layout.yaxis.range[0] < 1 / 12


def test_linear_figure_draws_every_rank(two_conditions):
    results, fits = two_conditions
    fig = rank_distribution_figure(results, fits, log=False)
    for name, r in results.items():
        (data,) = _traces(fig, "data", name)
        np.testing.assert_array_equal(np.asarray(data.x), np.arange(1, 9))
        np.testing.assert_allclose(np.asarray(data.y), r.distribution)
    assert fig.layout.xaxis.type in (None, "linear", "-")


def test_model_traces_are_the_fitted_pmfs_in_the_condition_colour(two_conditions):
    results, fits = two_conditions
    colors = {"spread": "#123456", "sharp": "#abcdef"}
    fig = rank_distribution_figure(results, fits, colors=colors)
    for name, name_fits in fits.items():
        models = _traces(fig, "model", name)
        assert [t.meta["loss"] for t in models] == ["LL", "CLL"]
        (data,) = _traces(fig, "data", name)
        assert data.marker.color == colors[name]
        for trace, fit in zip(models, name_fits, strict=True):
            np.testing.assert_allclose(np.asarray(trace.y), fit.pmf)
            np.testing.assert_array_equal(np.asarray(trace.x), np.arange(1, 9))
            assert trace.line.color == colors[name]
            assert trace.line.dash == LOSS_DASH[fit.loss] and trace.line.dash != "solid"
            assert trace.legendgroup == name
            assert ("did not converge" in trace.name) is (not fit.converged)


def test_chance_line_is_one_over_n(two_conditions):
    results, _ = two_conditions
    fig = rank_distribution_figure(results)
    (chance,) = _traces(fig, "chance")
    assert list(chance.x) == [1, 8] and list(chance.y) == [1 / 8, 1 / 8]
    assert "1/N = 0.125" in chance.name
    assert not _traces(fig, "model")  # no fits given, no model drawn


def test_conditions_with_different_n_get_one_chance_line_each():
    results = {"n4": srd(*rank_scores([1, 2], 4)), "n10": srd(*rank_scores([1, 5], 10))}
    fig = rank_distribution_figure(results)
    chances = _traces(fig, "chance")
    assert sorted(t.y[0] for t in chances) == [0.1, 0.25]


def test_a_fit_that_did_not_converge_is_drawn_and_labelled():
    r = srd(*rank_scores([1, 1, 1], 6))
    with pytest.warns(DegenerateDataWarning):
        fit = fit_beta_binomial(r.histogram, loss="LL")
    fig = rank_distribution_figure({"x": r}, {"x": [fit]})
    (model,) = _traces(fig, "model")
    assert model.name == "x: LL model (did not converge)"
    assert model.opacity < 1


def test_condition_colours_follow_the_study_order():
    names = [f"c{k}" for k in range(9)]
    colors = condition_colors(names)
    assert colors["c0"] == CONDITION_PALETTE[0] and colors["c1"] == CONDITION_PALETTE[1]
    assert colors["c7"] == CONDITION_PALETTE[0]  # the palette cycles
    assert "#F0E442" not in CONDITION_PALETTE  # Okabe-Ito yellow is unreadable on white


# ---------------------------------------------------------------- MeanD per condition


def test_mean_d_bars_are_the_reports_numbers():
    reports = []
    for k, ranks in enumerate(([1, 1, 2, 3, 1, 4], [2, 3, 1, 4, 4, 3])):
        scores, _ = rank_scores(ranks, 4, seed=k)
        sm = ScoreMatrix.from_arrays(
            scores,
            trial_ids=[f"t{i}" for i in range(len(ranks))],
            trial_speakers=["a"] * len(ranks),
            enrol_speakers=["a", "b", "c", "d"],
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            reports.append(evaluate(sm, name=f"c{k}"))
    fig = mean_d_bar_figure(reports, colors={"c0": "#111111", "c1": "#222222"})
    data, model, top = fig.data
    assert list(data.x) == ["c0", "c1"]
    assert list(data.y) == [r.srd.stats.mean_d for r in reports]
    assert list(model.y) == [r.srd_model.stats.mean_d for r in reports]
    assert list(data.marker.color) == ["#111111", "#222222"]
    assert list(top.y) == [2.0, 2.0]  # log2 4


# ---------------------------------------------------------------- per speaker


@pytest.fixture(scope="module")
def speakers():
    # a: ranks spread over 1..6; b: every trial at rank 1 (its LL fit cannot converge)
    ranks = [1, 2, 2, 4, 6, 3, 1, 1, 1]
    who = ["a", "a", "a", "a", "a", "a", "b", "b", "b"]
    return srd_per_speaker(ranks, who, 6)


def test_speaker_figure_shows_the_histogram_cdf_and_models(speakers):
    i = 0  # speaker "a"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        cll = fit_beta_binomial(speakers.histograms[i], loss="CLL")
    fits = [speakers.fits[i], cll]
    fig = speaker_rank_figure(speakers, "a", fits, color="#00aa00")
    kinds = [t.meta["kind"] for t in fig.data]
    assert kinds == ["data", "model", "model", "data_cdf", "model_cdf", "model_cdf"]
    h = speakers.histograms[i]
    p = h / h.sum()
    np.testing.assert_allclose(np.asarray(fig.data[0].y), p)
    assert fig.data[0].marker.color == "#00aa00"
    for trace, fit in zip(fig.data[1:3], fits, strict=True):
        np.testing.assert_allclose(np.asarray(trace.y), fit.pmf)
    cdf = np.asarray(fig.data[3].y)
    np.testing.assert_allclose(cdf, np.concatenate([[0], np.cumsum(p)]))
    assert cdf[-1] == pytest.approx(1.0)
    for trace, fit in zip(fig.data[4:], fits, strict=True):
        np.testing.assert_allclose(np.asarray(trace.y)[1:], np.cumsum(fit.pmf))
    # linear axes (paper 002, fig. 7)
    assert fig.layout.xaxis.type in (None, "linear", "-")
    assert "6 trials" in fig.data[0].name


def test_speaker_figure_rejects_an_unknown_speaker(speakers):
    with pytest.raises(ValueError, match="'zz'"):
        speaker_rank_figure(speakers, "zz")


def test_speaker_mean_d_figure_counts_every_speaker(speakers):
    top = math.log2(6)
    fig = speaker_mean_d_figure(speakers, source="model", bins=10)
    shown, failed = fig.data
    assert not speakers.fits[1].converged  # b: all at rank 1
    assert int(np.sum(shown.y)) == 1 and int(np.sum(failed.y)) == 1
    assert failed.name == "1 speaker whose fit did not converge, at the MeanD of their data"
    # b's empirical MeanD is log2 6, in the last bin
    assert failed.y[-1] == 1 and fig.data[1].x[-1] == pytest.approx(top * 0.95)
    summary = mean_d_summary(speakers.model_mean_d)
    assert summary.n == 1 and summary.n_missing == 1
    assert f"max {summary.max:.2f}" in shown.name
    empirical = speaker_mean_d_figure(speakers, source="empirical", bins=10)
    assert len(empirical.data) == 1 and int(np.sum(empirical.data[0].y)) == 2
    with pytest.raises(ValueError, match="source"):
        speaker_mean_d_figure(speakers, source="both")


def test_builders_use_the_result_arrays_not_a_recomputation():
    # a pmf that srd would never produce: the figure draws what it is given
    r = srd(*rank_scores([1, 2, 3], 3))
    fit = fit_beta_binomial(beta_binomial_pmf(3, 2.0, 5.0), loss="LL")
    fig = rank_distribution_figure({"x": r}, {"x": [fit]})
    np.testing.assert_allclose(np.asarray(_traces(fig, "model")[0].y), fit.pmf)
