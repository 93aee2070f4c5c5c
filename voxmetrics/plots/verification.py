"""Figures of the standard speaker-verification outputs: DET curves and APE plots.

The builders take results of :mod:`voxmetrics.metrics.dcf` (``DETCurve``, ``APECurve``,
``VerificationResult``) and never recompute a metric; their arithmetic is for display only (the
probit warping of the DET axes, rates of 0 and 1 drawn at the edge of the axis).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray
from scipy.special import ndtri

from voxmetrics.metrics.dcf import APECurve, DETCurve
from voxmetrics.plots.style import base_layout, condition_colors

__all__ = ["DET_TICKS", "ape_figure", "det_figure"]

DET_TICKS: tuple[float, ...] = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6)
"""Error rates labelled on the DET axes (as fractions; shown in percent)."""

_EDGE = 0.0005  # rates below this (or above 1 - this) are drawn at the edge of the axis


def _probit(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Normal deviate of a rate, clipped to the axis."""
    return ndtri(np.clip(p, _EDGE, 1.0 - _EDGE))


def _percent(p: float) -> str:
    return f"{100 * p:g}"


def det_figure(
    curves: Mapping[str, DETCurve],
    *,
    colors: Mapping[str, str] | None = None,
    title: str = "DET curves",
) -> go.Figure:
    """Detection error trade-off of each condition on normal-deviate (probit) axes.

    Parameters
    ----------
    curves : mapping of str to DETCurve
        One per condition, in display order.
    colors : mapping of str to str, optional
        Colour of each condition (default: by position).
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        Per condition: the steppy curve of every operating point (solid) and the ROC convex
        hull points (markers on a dotted line); then the EER line P_miss = P_fa.

    Examples
    --------
    >>> from voxmetrics.metrics.dcf import det_curve
    >>> fig = det_figure({"x": det_curve([1.0, 2.0, 3.0], [0.0, 1.5, 2.5])})
    >>> [t.name for t in fig.data]
    ['x', 'x (ROCCH)', 'EER line']
    """
    palette = dict(colors) if colors is not None else condition_colors(list(curves))
    fig = go.Figure()
    for name, c in curves.items():
        color = palette.get(name, "#333333")
        fig.add_trace(
            go.Scatter(
                x=_probit(c.pfa),
                y=_probit(c.pmiss),
                mode="lines",
                line={"color": color, "width": 2},
                name=name,
                legendgroup=name,
                customdata=np.stack([100 * c.pfa, 100 * c.pmiss], axis=1),
                hovertemplate=f"{name}<br>P_fa %{{customdata[0]:.3g}}%<br>"
                "P_miss %{customdata[1]:.3g}%<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=_probit(c.rocch_pfa),
                y=_probit(c.rocch_pmiss),
                mode="lines+markers",
                line={"color": color, "width": 1, "dash": "dot"},
                marker={"size": 6, "symbol": "circle-open"},
                name=f"{name} (ROCCH)",
                legendgroup=name,
                customdata=np.stack([100 * c.rocch_pfa, 100 * c.rocch_pmiss], axis=1),
                hovertemplate=f"{name} ROCCH<br>P_fa %{{customdata[0]:.3g}}%<br>"
                "P_miss %{customdata[1]:.3g}%<extra></extra>",
            )
        )
    lim = float(ndtri(_EDGE)), float(ndtri(1 - _EDGE))
    fig.add_trace(
        go.Scatter(
            x=list(lim),
            y=list(lim),
            mode="lines",
            line={"color": "#7f7f7f", "width": 1, "dash": "dash"},
            name="EER line",
            hoverinfo="skip",
        )
    )
    ticks = {"tickvals": [float(ndtri(p)) for p in DET_TICKS],
             "ticktext": [_percent(p) for p in DET_TICKS]}  # fmt: skip
    fig.update_layout(
        **base_layout(height=560),
        title=title,
        xaxis={"title": "False-alarm rate P_fa (%)", "range": [lim[0], float(ndtri(0.6))],
               **ticks},
        yaxis={"title": "Miss rate P_miss (%)", "range": [lim[0], float(ndtri(0.6))],
               "scaleanchor": "x", **ticks},
    )  # fmt: skip
    return fig


def ape_figure(
    curves: Mapping[str, APECurve],
    *,
    colors: Mapping[str, str] | None = None,
    p_targets: Sequence[float] = (),
    title: str = "Normalised Bayes error (APE plot)",
) -> go.Figure:
    """Normalised Bayes error rate against the prior log-odds, per condition.

    Parameters
    ----------
    curves : mapping of str to APECurve
        One per condition.
    colors : mapping of str to str, optional
        Colour of each condition (default: by position).
    p_targets : sequence of float
        Target priors to mark with vertical lines (those of the DCF table).
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        The default system (black dotted, 1), then per condition the minimum (solid) and, for
        LLR scores, the actual error (dashed).

    Examples
    --------
    >>> from voxmetrics.metrics.dcf import ape_curve
    >>> fig = ape_figure({"x": ape_curve([1.0, 2.0], [0.0, 1.5], scores_are_llrs=True)})
    >>> [t.name for t in fig.data]
    ['default (prior only)', 'x (minimum)', 'x (actual)']
    """
    palette = dict(colors) if colors is not None else condition_colors(list(curves))
    fig = go.Figure()
    first = next(iter(curves.values()), None)
    if first is not None:
        fig.add_trace(
            go.Scatter(
                x=first.prior_log_odds,
                y=first.default,
                mode="lines",
                line={"color": "#000000", "width": 2, "dash": "dot"},
                name="default (prior only)",
            )
        )
    for name, c in curves.items():
        color = palette.get(name, "#333333")
        fig.add_trace(
            go.Scatter(
                x=c.prior_log_odds,
                y=c.minimum,
                mode="lines",
                line={"color": color, "width": 2},
                name=f"{name} (minimum)",
                legendgroup=name,
            )
        )
        if c.actual is not None:
            fig.add_trace(
                go.Scatter(
                    x=c.prior_log_odds,
                    y=c.actual,
                    mode="lines",
                    line={"color": color, "width": 2, "dash": "dash"},
                    name=f"{name} (actual)",
                    legendgroup=name,
                )
            )
    for k, p in enumerate(sorted(p_targets)):
        fig.add_vline(
            x=math.log(p / (1 - p)),
            line={"color": "#7f7f7f", "width": 1, "dash": "dash"},
            annotation_text=f"P = {p:g}",
            # alternate sides so that labels of nearby priors do not overlap
            annotation_position="top left" if k % 2 == 0 else "top right",
        )
    fig.update_layout(
        **base_layout(),
        title=title,
        xaxis={"title": "Prior log-odds logit(P_target) (natural log)"},
        yaxis={"title": "Normalised Bayes error rate", "rangemode": "tozero"},
    )
    return fig
