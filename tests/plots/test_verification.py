"""DET and APE figures (voxmetrics/plots/verification.py): probit axes, edges, priors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtri

from voxmetrics.metrics.dcf import APECurve, DETCurve, det_curve
from voxmetrics.plots.style import CONDITION_PALETTE
from voxmetrics.plots.verification import DET_TICKS, ape_figure, det_figure

EDGE = float(ndtri(0.0005))  # the axis edge: rates of 0 (and 1) are drawn there


def _arr(v) -> np.ndarray:
    return np.asarray(v, dtype=float)


def _det(pfa, pmiss, rocch_pfa, rocch_pmiss) -> DETCurve:
    """A DET curve of the given rates (thresholds -inf, 0, 1, ...)."""
    arr = _arr
    return DETCurve(
        thresholds=arr([-np.inf, *range(len(pfa) - 1)]),
        pmiss=arr(pmiss),
        pfa=arr(pfa),
        rocch_pmiss=arr(rocch_pmiss),
        rocch_pfa=arr(rocch_pfa),
        n_points=len(pfa),
    )


def test_det_figure_draws_rates_as_normal_deviates_clipped_to_the_axis():
    curve = _det([1.0, 0.5, 0.1587, 0.0], [0.0, 0.5, 0.5, 1.0], [1.0, 0.5, 0.0], [0.0, 0.5, 1.0])
    fig = det_figure({"a": curve})
    steps, hull, eer_line = fig.data
    assert [t.name for t in fig.data] == ["a", "a (ROCCH)", "EER line"]
    np.testing.assert_allclose(steps.x, [-EDGE, 0.0, -1.0, EDGE], atol=1e-3)
    np.testing.assert_allclose(steps.y, [EDGE, 0.0, 0.0, -EDGE], atol=1e-12)
    np.testing.assert_allclose(hull.x, [-EDGE, 0.0, EDGE], atol=1e-12)
    assert steps.mode == "lines" and hull.line.dash == "dot"
    # the hover shows the rates in percent, not the deviates
    np.testing.assert_allclose(np.asarray(steps.customdata)[:, 0], [100, 50, 15.87, 0])
    assert list(eer_line.x) == list(eer_line.y) == pytest.approx([EDGE, -EDGE])
    assert steps.legendgroup == hull.legendgroup == "a"


def test_det_figure_axes_are_labelled_in_percent():
    fig = det_figure({"a": det_curve([1.0, 2.0, 3.0], [0.0, 1.5, 2.5])}, title="T")
    assert fig.layout.title.text == "T"
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert list(axis.ticktext) == ["0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "40", "60"]
        np.testing.assert_allclose(axis.tickvals, ndtri(np.array(DET_TICKS)))
        assert axis.range == pytest.approx((EDGE, ndtri(0.6)))
    assert "P_fa" in fig.layout.xaxis.title.text and "P_miss" in fig.layout.yaxis.title.text
    assert fig.layout.yaxis.scaleanchor == "x"  # square: equal deviates, equal lengths


def test_det_figure_colours_by_position_or_as_given():
    curves = {n: det_curve([1.0, 2.0], [0.0, 1.5]) for n in ("a", "b")}
    fig = det_figure(curves)
    assert [t.line.color for t in fig.data[:4]] == [CONDITION_PALETTE[0]] * 2 + [
        CONDITION_PALETTE[1]
    ] * 2
    fig = det_figure(curves, colors={"b": "#123456"})
    assert fig.data[0].line.color == "#333333" and fig.data[2].line.color == "#123456"


def _ape(minimum, actual=None) -> APECurve:
    x = np.array([-2.0, 0.0, 2.0])
    return APECurve(x, np.asarray(minimum, float), None if actual is None else np.asarray(actual))


def test_ape_figure_default_minimum_and_actual():
    fig = ape_figure({"llr": _ape([0.1, 0.2, 0.1], [0.3, 0.4, 0.2]), "raw": _ape([0.5, 0.6, 0.5])})
    assert [t.name for t in fig.data] == [
        "default (prior only)", "llr (minimum)", "llr (actual)", "raw (minimum)"
    ]  # fmt: skip
    default, minimum, actual, raw = fig.data
    assert list(default.y) == [1.0, 1.0, 1.0] and default.line.dash == "dot"
    assert list(minimum.x) == [-2.0, 0.0, 2.0] and list(minimum.y) == [0.1, 0.2, 0.1]
    assert list(actual.y) == [0.3, 0.4, 0.2] and actual.line.dash == "dash"
    assert minimum.line.color == actual.line.color != raw.line.color
    assert fig.layout.yaxis.rangemode == "tozero"


def test_ape_figure_marks_each_prior_at_its_log_odds():
    fig = ape_figure({"x": _ape([0.1, 0.2, 0.1])}, p_targets=[0.5, 0.01])
    lines = sorted(fig.layout.shapes, key=lambda s: s.x0)
    assert [s.x0 for s in lines] == pytest.approx([math.log(0.01 / 0.99), 0.0])
    labels = sorted(a.text for a in fig.layout.annotations)
    assert labels == ["P = 0.01", "P = 0.5"]


def test_ape_figure_of_no_curve_is_empty():
    fig = ape_figure({})
    assert len(fig.data) == 0 and fig.layout.title.text == "Normalised Bayes error (APE plot)"
