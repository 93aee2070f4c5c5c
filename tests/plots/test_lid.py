"""LID figure builders (voxmetrics/plots/lid.py; AppTest cannot see Plotly figures)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from voxmetrics.metrics.lid import (
    CalibrationCurve,
    LIDCalibration,
    calibration_curve,
    lid,
    lid_ccdf,
    lid_cross_calibrated,
    posterior,
)
from voxmetrics.plots.lid import (
    CONDITION_PALETTE,
    OTHER_IDENTITY_COLOR,
    calibration_figure,
    condition_colors,
    display_name,
    lid_ccdf_figure,
    lid_histogram_figure,
    p_target_histogram_figure,
    trial_figure,
)
from voxmetrics.plots.style import MATED_COLOR

CAL = LIDCalibration(w=1.5, b=-1.0, prior_log_odds=math.log(1 / 5), n_pairs=0)


def _matrix(t: int, n: int, *, signal: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    targets = np.arange(t) % n
    scores = rng.normal(size=(t, n))
    scores[np.arange(t), targets] += signal
    return scores, targets


@pytest.fixture
def results():
    """Three conditions: strong, weak (both N = 6) and one with N = 10."""
    out = {}
    for name, (t, n, signal, seed) in {
        "strong": (30, 6, 3.0, 0),
        "weak": (24, 6, 0.3, 1),
        "wide": (20, 10, 1.0, 2),
    }.items():
        s, tg = _matrix(t, n, signal=signal, seed=seed)
        out[name] = lid(s, tg, CAL)
    return out


def _vlines(fig: go.Figure) -> list[float]:
    return sorted(float(s.x0) for s in fig.layout.shapes if s.x0 == s.x1)


# ---------------------------------------------------------------- colours and names


def test_condition_colors_follow_study_order_and_cycle():
    names = [f"c{k}" for k in range(len(CONDITION_PALETTE) + 2)]
    colors = condition_colors(names)
    assert colors["c0"] == CONDITION_PALETTE[0]
    assert colors[f"c{len(CONDITION_PALETTE)}"] == CONDITION_PALETTE[0]
    # the colour of a condition depends on the study, not on what a figure shows
    fig = lid_ccdf_figure({"c2": lid(*_matrix(6, 3, signal=1, seed=0), CAL)}, colors=colors)
    assert fig.data[0].line.color == CONDITION_PALETTE[2]


def test_display_name_marks_cross_calibration():
    s, t = _matrix(40, 5, signal=1.0, seed=3)
    cv = lid_cross_calibrated(s, t, [f"spk{j}" for j in t], k=5)
    assert display_name("x", cv) == "x (cross-calibrated)"
    assert display_name("x", lid(s, t, CAL)) == "x"
    fig = lid_ccdf_figure({"x": cv})
    assert fig.data[0].name == "x (cross-calibrated)"


# ---------------------------------------------------------------- CCDF


def test_ccdf_traces_are_the_library_ccdf(results):
    fig = lid_ccdf_figure(results)
    assert isinstance(fig, go.Figure)
    assert [t.name for t in fig.data] == list(results)
    for trace, r in zip(fig.data, results.values(), strict=True):
        x, pct = lid_ccdf(r.lid)
        np.testing.assert_allclose(np.asarray(trace.x)[1:], x)
        np.testing.assert_allclose(np.asarray(trace.y)[1:], pct)
        # 100 % of the trials exceed anything left of the smallest LID
        assert trace.x[0] == x[0] and trace.y[0] == 100.0
        assert trace.line.shape == "hv"


def test_ccdf_marks_zero_and_one_ceiling_per_distinct_n(results):
    fig = lid_ccdf_figure(results)
    assert _vlines(fig) == pytest.approx([0.0, math.log2(6), math.log2(10)])
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "N = 6" in texts and "N = 10" in texts and "0 bits" in texts
    assert fig.layout.xaxis.range[1] >= math.log2(10)


def test_ccdf_log_axis(results):
    linear = lid_ccdf_figure(results)
    log = lid_ccdf_figure(results, log_y=True)
    assert linear.layout.yaxis.type in (None, "linear")
    assert log.layout.yaxis.type == "log"
    # the smallest non-zero share (1 trial of the largest T) is inside the range
    assert log.layout.yaxis.range[0] < math.log10(100 / 30)
    assert "log" in log.layout.yaxis.title.text


def test_builders_refuse_no_results():
    with pytest.raises(ValueError):
        lid_ccdf_figure({})


# ---------------------------------------------------------------- histograms


def test_p_target_histogram_one_panel_per_condition_with_the_prior(results):
    fig = p_target_histogram_figure(results, bins=20)
    assert [t.type for t in fig.data] == ["bar"] * 3
    for trace, r in zip(fig.data, results.values(), strict=True):
        counts = np.asarray(trace.customdata)[:, 2]
        assert counts.sum() == r.n_trials
        assert np.asarray(trace.y).sum() == pytest.approx(100.0)
        ref, _ = np.histogram(r.p_target, bins=np.linspace(0, 1, 21))
        np.testing.assert_array_equal(counts, ref)
    assert _vlines(fig) == pytest.approx(sorted([1 / 6, 1 / 6, 1 / 10]))
    # each panel is titled with its condition
    titles = [a.text for a in fig.layout.annotations]
    for name in results:
        assert any(t.startswith(f"<b>{name}</b>") for t in titles)


def test_lid_histogram_shares_bins_and_marks_zero_and_ceiling(results):
    fig = lid_histogram_figure(results, bins=25)
    xs = [np.asarray(t.x) for t in fig.data]
    for x in xs[1:]:
        np.testing.assert_allclose(x, xs[0])  # the same bins in every panel
    for trace, r in zip(fig.data, results.values(), strict=True):
        assert np.asarray(trace.customdata)[:, 2].sum() == r.n_trials
    assert np.asarray(fig.data[0].customdata)[-1, 1] == pytest.approx(math.log2(10))
    lines = _vlines(fig)
    assert lines.count(0.0) == 3
    assert lines.count(pytest.approx(math.log2(6))) == 2
    assert lines.count(pytest.approx(math.log2(10))) == 1


def test_histogram_colours_follow_the_mapping(results):
    colors = {"strong": "#111111", "weak": "#222222", "wide": "#333333"}
    fig = lid_histogram_figure(results, colors=colors)
    assert [t.marker.color for t in fig.data] == list(colors.values())


# ---------------------------------------------------------------- calibration


def test_calibration_figure_draws_the_curve_object():
    s, t = _matrix(50, 6, signal=2.0, seed=4)
    curve = calibration_curve(s, t, CAL, bins=12)
    fig = calibration_figure(curve, name="sys", color="#123456")
    empirical, fitted = fig.data
    np.testing.assert_allclose(np.asarray(empirical.x), curve.bin_centres)
    np.testing.assert_allclose(np.asarray(empirical.y), curve.mated_rate)
    np.testing.assert_array_equal(np.asarray(empirical.customdata), curve.counts)
    np.testing.assert_allclose(np.asarray(fitted.y), curve.fitted)
    assert fitted.name == "fitted: sigmoid(1.5 z - 1)"
    assert empirical.marker.color == "#123456"
    assert "w = 1.5" in fig.layout.title.text


def test_calibration_figure_log_axis_drops_empty_rates():
    curve = CalibrationCurve(
        np.array([-1.0, 0.0, 1.0]),
        np.array([0.0, 0.1, 0.8]),
        np.array([10, 10, 5]),
        np.linspace(-1, 1, 5),
        np.linspace(0.05, 0.9, 5),
        w=2.0,
        b=0.5,
    )
    fig = calibration_figure(curve, name="sys", matrix="eval", log_y=True)
    assert np.isnan(fig.data[0].y[0]) and fig.data[0].y[2] == 0.8
    assert fig.layout.yaxis.type == "log"
    assert fig.data[0].name == "mated rate in the bin (eval)"


# ---------------------------------------------------------------- one trial


def test_trial_figure_highlights_the_target_and_orders_by_score():
    scores = np.array([0.9, 0.7, 0.4, 1.1, 1.2, 0.4])
    p = posterior(scores, CAL)
    labels = ["a", "b", "c", "d", "e", "f"]
    fig = trial_figure(scores, p, labels, target=3, title="t")
    bars, post, prior = fig.data[:3]
    assert list(bars.x) == ["e", "d", "a", "b", "c", "f"]
    np.testing.assert_allclose(np.asarray(bars.y), scores[[4, 3, 0, 1, 2, 5]])
    np.testing.assert_allclose(np.asarray(post.y), p[[4, 3, 0, 1, 2, 5]])
    for trace in (bars, post):
        colors = list(trace.marker.color)
        assert colors[1] == MATED_COLOR  # "d", the target, in second place
        assert colors.count(MATED_COLOR) == 1
        assert set(colors) - {MATED_COLOR} == {OTHER_IDENTITY_COLOR}
    assert list(prior.y) == [pytest.approx(1 / 6)] * 2
    assert post.xaxis == "x2" and post.yaxis == "y2"
    # the metrics.md worked example: the target's posterior is 0.31
    assert post.y[1] == pytest.approx(0.31, abs=0.005)


def test_trial_figure_ties_count_against_the_attacker():
    fig = trial_figure([0.5, 0.5, 0.1], [0.45, 0.45, 0.1], ["a", "b", "c"], target=0)
    assert list(fig.data[0].x) == ["b", "a", "c"]


def test_trial_figure_keeps_the_target_when_n_is_large():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=200)
    target = int(np.argmin(scores))
    labels = [f"id{j}" for j in range(200)]
    fig = trial_figure(scores, np.full(200, 1 / 200), labels, target=target, max_bars=30)
    bars = fig.data[0]
    assert len(bars.x) == 30
    assert bars.x[-1] == f"id{target}" and bars.marker.color[-1] == MATED_COLOR
    assert "top 29 of 200" in fig.layout.title.text
    assert bars.customdata[-1][0] == 200  # shown at its true position
