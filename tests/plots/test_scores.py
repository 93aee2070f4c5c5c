"""The score histogram figure (voxmetrics/plots/scores.py): counts drawn as densities."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from score_cases import score_matrix

from voxmetrics.data.summary import score_histogram
from voxmetrics.plots import score_histogram_figure


def test_score_histogram_figure_has_two_density_traces():
    h = score_histogram(score_matrix(np.eye(3) + 0.1 * np.arange(9).reshape(3, 3)), bins=5)
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
    sm = score_matrix(rng.normal(size=(300, 3)), trial_speakers=list("abc" * 100))
    fig = score_histogram_figure(score_histogram(sm, bins=60))
    assert all(len(t.x) == 60 for t in fig.data)
