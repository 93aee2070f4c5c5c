"""Figures of score distributions (the Data page)."""

from __future__ import annotations

import plotly.graph_objects as go

from voxmetrics.data.summary import ScoreHistogram
from voxmetrics.plots.style import MATED_COLOR, NON_MATED_COLOR, base_layout

__all__ = ["score_histogram_figure"]


def score_histogram_figure(
    hist: ScoreHistogram, *, title: str = "Score distributions"
) -> go.Figure:
    """Overlaid density histograms of the mated and non-mated scores.

    Each pool is normalised to unit area, so a pool of T mated scores and one of T(N-1)
    non-mated scores can be compared by shape; their overlap is what the EER measures.

    Parameters
    ----------
    hist : ScoreHistogram
        Counts on common edges (:func:`voxmetrics.data.summary.score_histogram`).
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        Trace 0: non-mated bars, trace 1: mated bars, both ``hist.n_bins`` long.

    Examples
    --------
    >>> import numpy as np
    >>> from voxmetrics.data.summary import ScoreHistogram
    >>> h = ScoreHistogram(edges=np.array([0.0, 0.5, 1.0]), mated=np.array([0, 2]),
    ...                    non_mated=np.array([2, 0]))
    >>> fig = score_histogram_figure(h)
    >>> [t.name for t in fig.data], [float(v) for v in fig.data[1].y]
    (['non-mated (2)', 'mated (2)'], [0.0, 2.0])
    """
    fig = go.Figure()
    for label, density, count, color in (
        ("non-mated", hist.non_mated_density, hist.non_mated, NON_MATED_COLOR),
        ("mated", hist.mated_density, hist.mated, MATED_COLOR),
    ):
        fig.add_trace(
            go.Bar(
                x=hist.centers,
                y=density,
                width=hist.widths,
                customdata=count,
                name=f"{label} ({int(count.sum()):,})",
                marker={"color": color, "line": {"width": 0}},
                opacity=0.6,
                hovertemplate=(
                    f"{label}<br>score %{{x:.3g}}<br>density %{{y:.3g}}<br>"
                    "%{customdata:,} scores<extra></extra>"
                ),
            )
        )
    fig.update_layout(**base_layout(title={"text": title}, barmode="overlay", bargap=0))
    fig.update_xaxes(title_text="score")
    fig.update_yaxes(title_text="density")
    return fig
