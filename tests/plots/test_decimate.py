"""Figures decimated for the browser: the helper's invariants and the figures built on it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from voxmetrics.plots.decimate import (
    DECIMATED_META,
    MAX_POINTS,
    block_means,
    curve_indices,
    decimate_figure,
    figure_points,
    trace_points,
)

finite = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    y=arrays(np.float64, st.integers(1, 600), elements=st.floats(-1e6, 1e6)),
    limit=st.integers(2, 700),
)
def test_curve_indices_within_limit_keep_ends_and_extremes(y, limit):
    idx = curve_indices(None, y, limit=limit)
    assert idx.size <= limit
    assert np.all(np.diff(idx) > 0)  # a subsequence, in order
    assert idx[0] == 0 and idx[-1] == y.size - 1  # both ends
    if y.size <= limit:
        assert idx.tolist() == list(range(y.size))  # under the limit: unchanged
    elif (limit - 2) // 5 >= 1:  # runs of points: every run's extremes, so the global ones
        finite_y = np.where(np.isnan(y), np.nan, y)
        if np.isfinite(finite_y).any():
            assert np.nanmax(y) == np.nanmax(y[idx])
            assert np.nanmin(y) == np.nanmin(y[idx])


@settings(max_examples=100, deadline=None)
@given(
    steps=arrays(np.float64, st.integers(3, 2000), elements=st.floats(0, 10)),
    limit=st.integers(2, 300),
)
def test_monotone_curve_stays_monotone(steps, limit):
    x, y = np.cumsum(steps), -np.cumsum(steps[::-1])  # x rising, y falling (a DET curve)
    idx = curve_indices(x, y, limit=limit)
    assert idx.size <= limit
    assert np.all(np.diff(x[idx]) >= 0) and np.all(np.diff(y[idx]) <= 0)
    assert (x[idx][0], x[idx][-1]) == (x[0], x[-1])


def test_curve_indices_keep_a_spike_and_a_gap():
    y = np.zeros(10_000)
    y[3_333], y[7_000] = 5.0, np.nan  # one peak, one break in the line
    idx = curve_indices(np.arange(y.size), y, limit=100)
    assert idx.size <= 100 and 3_333 in idx and 7_000 in idx


def test_curve_indices_labels_and_bad_limit():
    labels = [f"t{k}" for k in range(50)]
    assert curve_indices(labels, None, limit=10).size <= 10  # labels only: evenly spaced
    with pytest.raises(ValueError, match="at least 2"):
        curve_indices(None, [1.0, 2.0, 3.0], limit=1)


@settings(max_examples=100, deadline=None)
@given(
    rows=st.integers(1, 60),
    cols=st.integers(1, 60),
    limit=st.integers(1, 400),
    seed=st.integers(0, 2**16),
)
def test_block_means_within_limit_and_mean_preserving(rows, cols, limit, seed):
    z = np.random.default_rng(seed).random((rows, cols))
    means, f = block_means(z, limit=limit)
    assert means.size <= limit
    assert means.shape == (-(-rows // f), -(-cols // f))
    if z.size <= limit:
        assert f == 1 and np.array_equal(means, z)  # under the limit: unchanged
    assert z.min() - 1e-12 <= means.min() and means.max() <= z.max() + 1e-12
    if rows % f == 0 and cols % f == 0:  # equal blocks: the mean of means is the mean
        assert means.mean() == pytest.approx(z.mean())


def test_block_means_by_hand_with_nan():
    z = np.array([[1.0, 3.0, 5.0], [np.nan, 5.0, 7.0], [9.0, 9.0, 9.0]])
    means, f = block_means(z, limit=4)
    assert f == 2
    assert means.tolist() == [[3.0, 6.0], [9.0, 9.0]]  # NaN left out; short edge blocks


def test_figure_under_the_limit_is_the_same_object():
    fig = go.Figure(go.Scatter(x=np.arange(10.0), y=np.arange(10.0)))
    assert decimate_figure(fig) is fig
    assert figure_points(fig) == 10


def test_figure_over_200k_points_is_decimated_for_the_browser():
    rng = np.random.default_rng(0)
    n = 1_200_000  # e.g. every non-mated score of one condition as a curve
    x = np.sort(rng.normal(size=n))
    y = 1.0 - np.arange(n) / n  # a CCDF: falling
    fig = go.Figure(
        [
            go.Scatter(x=x, y=y, customdata=np.stack([x, y], axis=1), mode="lines", name="ccdf"),
            go.Scatter(x=[0.0, 1.0], y=[1.0, 0.0], name="line"),  # small: kept whole
            go.Heatmap(z=rng.random((800, 1000)), x=[f"s{k}" for k in range(1000)]),
        ]
    )
    assert figure_points(fig) > MAX_POINTS
    shown = decimate_figure(fig)
    assert figure_points(shown) <= MAX_POINTS
    assert figure_points(fig) == n + 2 + 800_000  # the full figure is left as it was
    curve, line, heat = shown.data
    assert curve.x[0] == x[0] and curve.x[-1] == x[-1]
    assert np.all(np.diff(curve.y) <= 0)  # still a CCDF
    assert curve.customdata.shape == (trace_points(curve), 2)  # per-point data follows
    assert np.array_equal(curve.customdata[:, 0], curve.x)
    assert list(line.x) == [0.0, 1.0]
    assert heat.z.shape[0] * heat.z.shape[1] == trace_points(heat) <= MAX_POINTS
    assert heat.zmin == pytest.approx(fig.data[2].z.min())  # colours on the full range
    meta = shown.layout.meta[DECIMATED_META]
    assert meta == {"shown": figure_points(shown), "total": figure_points(fig)}
    assert any("Decimated for display" in a.text for a in shown.layout.annotations)


def test_decimated_bars_keep_implicit_positions():
    y = np.zeros(1_000)
    y[777] = 1.0
    shown = decimate_figure(go.Figure(go.Bar(y=y)), limit=50)
    bars = shown.data[0]
    assert len(bars.x) == len(bars.y) <= 50
    assert 777 in list(bars.x) and bars.y[list(bars.x).index(777)] == 1.0


def test_heatmap_positions_keep_the_original_coordinates():
    z = np.arange(100.0 * 100).reshape(100, 100)
    shown = decimate_figure(go.Figure(go.Heatmap(z=z)), limit=100)
    heat = shown.data[0]
    assert heat.z.shape == (10, 10)
    assert heat.x[0] == pytest.approx(4.5) and heat.y[-1] == pytest.approx(94.5)


def test_builders_over_200k_points_are_decimated():
    """The DET and mean-score builders on a large condition: the browser gets <= the limit."""
    import pandas as pd

    from voxmetrics.metrics.dcf import det_curve
    from voxmetrics.plots.linkage import mean_score_figure
    from voxmetrics.plots.verification import det_figure

    rng = np.random.default_rng(1)
    curve = det_curve(rng.normal(1.0, size=150_000), rng.normal(size=150_000))
    det = det_figure({"big": curve})
    assert figure_points(det) > MAX_POINTS
    shown = decimate_figure(det)
    assert figure_points(shown) <= MAX_POINTS
    full, drawn = det.data[0], shown.data[0]
    assert (drawn.x[0], drawn.x[-1]) == (full.x[0], full.x[-1])
    assert np.all(np.diff(drawn.x) <= 0) and np.all(np.diff(drawn.y) >= 0)  # a DET curve

    n = 500  # 250,000 speaker pairs
    speakers = [f"spk{k}" for k in range(n)]
    table = pd.DataFrame(
        {
            "trial_speaker": np.repeat(speakers, n),
            "enrol_speaker": np.tile(speakers, n),
            "mean_score": rng.random(n * n),
            "n_trials": np.full(n * n, 3),
        }
    )
    heat = mean_score_figure(table)
    assert figure_points(heat) == n * n > MAX_POINTS
    assert figure_points(decimate_figure(heat)) <= MAX_POINTS


# ---------------------------------------------------------------- the page: ui.show_figure


def _big_figure_script():
    import numpy as np
    import plotly.graph_objects as go

    from voxmetrics import ui

    x = np.arange(300_000, dtype=np.float64)
    ui.show_figure(go.Figure(go.Scatter(x=x, y=np.sin(x / 1000.0))), "big")


def test_show_figure_sends_the_browser_at_most_the_limit():
    import base64
    import json

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_big_figure_script, default_timeout=120).run()
    assert not at.exception
    charts = [el for el in at.main if el.type == "plotly_chart"]
    assert len(charts) == 1
    spec = json.loads(charts[0].proto.spec)
    sent = spec["data"][0]["x"]  # a list, or plotly's typed array {"dtype", "bdata"}
    if isinstance(sent, dict):
        sent = np.frombuffer(base64.b64decode(sent["bdata"]), dtype=sent["dtype"])
    assert 1_000 < len(sent) <= MAX_POINTS
    assert spec["layout"]["meta"][DECIMATED_META]["total"] == 300_000
    assert any(b.label == "Figure (HTML)" for b in at.get("download_button"))
