"""Figures of ZEBRA (Nautsch et al. 2020): ECE profiles and the PAV transform.

The builders take the results of :mod:`voxmetrics.metrics.zebra` (``ZebraResult``,
``ECECurves``, ``PAVTransform``) and never recompute a metric; their arithmetic is for display
only (natural-log LLRs shown in base 10, infinite LLRs drawn at the edge of the axis, runs of
equal LLRs thinned to their ends).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray
from plotly.subplots import make_subplots

from voxmetrics.data.summary import ScoreHistogram
from voxmetrics.metrics.zebra import ECECurves, PAVTransform, ZebraResult
from voxmetrics.plots.style import (
    CONDITION_PALETTE,
    MATED_COLOR,
    NON_MATED_COLOR,
    base_layout,
    condition_colors,
)

__all__ = [
    "CONDITION_PALETTE",
    "ZERO_EVIDENCE_COLOR",
    "ZebraProfile",
    "condition_colors",
    "ece_profile_figure",
    "pav_transform_figure",
    "zebra_legend",
]

_LN10 = math.log(10.0)

ZERO_EVIDENCE_COLOR = "#000000"
"""The zero-evidence (perfect privacy) ECE profile: black, as in Nautsch et al. 2020 figures 2-3."""


@dataclass(frozen=True)
class ZebraProfile:
    """One condition's ZEBRA result and ECE curves, as drawn in :func:`ece_profile_figure`."""

    name: str
    """Condition label."""
    result: ZebraResult
    """D_ECE, log10 l and tag."""
    curves: ECECurves
    """The ECE profiles (zero evidence, minimum, optionally actual)."""


def zebra_legend(name: str, result: ZebraResult) -> str:
    """Legend text "name (D_ECE, log10 l, tag)", as in Nautsch et al. 2020 figure 3.

    Examples
    --------
    >>> r = ZebraResult(0.58, 3.98, "C", True, 0, 1.0, 10, 90)
    >>> zebra_legend("plain", r)
    'plain (0.580, 3.98, C)'
    """
    return f"{name} ({result.d_ece:.3f}, {result.log10_l:.2f}, {result.tag})"


def ece_profile_figure(
    profiles: Sequence[ZebraProfile],
    *,
    colors: Mapping[str, str] | None = None,
    title: str = "ECE profiles",
) -> go.Figure:
    """The ECE of each condition against the prior log10 odds, over the zero-evidence profile.

    The black curve is the ECE of LLRs that are all 0 (zero evidence, perfect privacy): H2(pi)
    bits. Each condition's solid curve is the ECE of its PAV-calibrated LLRs (the adversary's,
    oracle calibration); the further below the black curve, the more is disclosed, and the
    area between them, integrated over pi, is D_ECE. A dashed curve in the same colour is the
    actual ECE of the scores taken as LLRs, when the curves have it.

    Parameters
    ----------
    profiles : sequence of ZebraProfile
        One per condition, all on the same prior grid. Drawn (and listed) by decreasing
        D_ECE: the most disclosing condition first.
    colors : mapping of str to str, optional
        Colour of each condition (:func:`condition_colors`); by default in the given order.
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        Trace 0: zero evidence. Then per condition (by decreasing D_ECE): the minimum ECE named
        "name (D_ECE, log10 l, tag)" and, when present, the actual ECE.

    Examples
    --------
    >>> import numpy as np
    >>> from voxmetrics.metrics.zebra import ece_curves, zebra
    >>> tar, non = [2.0, 3.0, 0.5], [0.0, 1.0, 0.7, -1.0]
    >>> fig = ece_profile_figure([ZebraProfile("x", zebra(tar, non), ece_curves(tar, non))])
    >>> [t.name for t in fig.data]
    ['zero evidence (perfect privacy)', 'x (0.429, 0.60, A)']
    """
    ordered = sorted(profiles, key=lambda p: p.result.d_ece, reverse=True)
    palette = dict(colors) if colors is not None else condition_colors([p.name for p in profiles])
    fig = go.Figure()
    if ordered:
        c0 = ordered[0].curves
        fig.add_trace(
            go.Scatter(
                x=c0.log10_prior_odds,
                y=c0.zero_evidence,
                mode="lines",
                line={"color": ZERO_EVIDENCE_COLOR, "width": 2.5},
                name="zero evidence (perfect privacy)",
                hovertemplate=(
                    "zero evidence<br>prior log10 odds %{x:.2f}<br>ECE %{y:.3f} bits<extra></extra>"
                ),
            )
        )
    for p in ordered:
        color = palette.get(p.name, CONDITION_PALETTE[0])
        label = zebra_legend(p.name, p.result)
        fig.add_trace(
            go.Scatter(
                x=p.curves.log10_prior_odds,
                y=p.curves.minimum,
                mode="lines",
                line={"color": color, "width": 2},
                name=label,
                legendgroup=p.name,
                hovertemplate=(
                    f"<b>{p.name}</b> (PAV-calibrated)<br>prior log10 odds %{{x:.2f}}<br>"
                    "ECE %{y:.3f} bits<extra></extra>"
                ),
            )
        )
        if p.curves.actual is not None:
            fig.add_trace(
                go.Scatter(
                    x=p.curves.log10_prior_odds,
                    y=p.curves.actual,
                    mode="lines",
                    line={"color": color, "width": 1.5, "dash": "dash"},
                    name=f"{p.name}: actual ECE (scores as LLRs)",
                    legendgroup=p.name,
                    hovertemplate=(
                        f"<b>{p.name}</b> (scores as LLRs)<br>prior log10 odds %{{x:.2f}}<br>"
                        "ECE %{y:.3f} bits<extra></extra>"
                    ),
                )
            )
    fig.update_layout(
        **base_layout(
            title={"text": title},
            height=560,
            margin={"l": 70, "r": 30, "t": 60, "b": 140},
            legend={
                "orientation": "h",
                "yanchor": "top",
                "y": -0.17,
                "x": 0,
                "title": {"text": "condition (D_ECE bits, log10 l, tag)   "},
            },
        )
    )
    fig.update_xaxes(
        title_text="prior log10 odds  log10(π / (1 − π))   [λ = logit π from −10 to 10 nats]",
        zeroline=False,
    )
    top = max(
        [1.0, *(float(np.max(p.curves.actual)) for p in ordered if p.curves.actual is not None)]
    )
    fig.update_yaxes(title_text="ECE (bits)", range=[0.0, min(top, 1.6) * 1.05], zeroline=False)
    return fig


def _runs(*values: NDArray[np.float64]) -> NDArray[np.intp]:
    """Indices of the first point of every run of equal values (and the last point)."""
    n = values[0].size
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for v in values:
        change[1:] |= v[1:] != v[:-1]
    change[-1] = True
    return np.flatnonzero(change)


def pav_transform_figure(
    transform: PAVTransform,
    *,
    name: str = "",
    result: ZebraResult | None = None,
    histogram: ScoreHistogram | None = None,
    title: str | None = None,
) -> go.Figure:
    """The score-to-LLR step function that PAV learned, with and without Laplace's rule.

    LLRs are shown in base 10 (log10 LR), the unit of the worst case log10 l. Without Laplace's
    rule the lowest and highest bins can be -inf and +inf; those steps are drawn at the edge of
    the axis and labelled. With ``result`` the worst case (the largest |log10 LR| with Laplace)
    is marked; with ``histogram`` a lower panel shows the mated and non-mated score densities.

    Parameters
    ----------
    transform : PAVTransform
        From :func:`voxmetrics.metrics.zebra.pav_transform`.
    name : str
        Condition label, for the title.
    result : ZebraResult, optional
        The condition's ZEBRA result (worst case).
    histogram : ScoreHistogram, optional
        Mated / non-mated score counts of the same matrix.
    title : str, optional
        Figure title; by default "PAV calibration of <name>".

    Returns
    -------
    go.Figure
        Traces: "with Laplace's rule" (solid), "without (D_ECE)" (dashed), then the worst-case
        marker and the two histograms when given.

    Examples
    --------
    >>> from voxmetrics.metrics.zebra import pav_transform
    >>> fig = pav_transform_figure(pav_transform([2.0, 3.0], [0.0, 1.0]), name="x")
    >>> [t.name for t in fig.data]
    ["with Laplace's rule (worst case)", 'without (for D_ECE)']
    """
    rows = 2 if histogram is not None else 1
    fig = make_subplots(
        rows=rows,
        cols=1,
        shared_xaxes=True,
        row_heights=[0.68, 0.32] if rows == 2 else [1.0],
        vertical_spacing=0.06,
    )
    steps, edge = _pav_steps(transform)
    for trace in steps:
        fig.add_trace(trace, row=1, col=1)
    if result is not None:
        fig.add_trace(_worst_case_marker(transform, result), row=1, col=1)
    fig.add_hline(y=0.0, line={"color": "#bbbbbb", "width": 1}, row=1, col=1)
    if histogram is not None:
        for bar in _score_density_bars(histogram):
            fig.add_trace(bar, row=2, col=1)
        fig.update_yaxes(title_text="density", row=2, col=1)
    heading = title if title is not None else f"PAV calibration of {name}".strip()
    fig.update_layout(
        **base_layout(
            title={"text": heading},
            height=620 if rows == 2 else 480,
            barmode="overlay",
            bargap=0,
            margin={"l": 70, "r": 30, "t": 60, "b": 110},
            legend={"orientation": "h", "yanchor": "top", "y": -0.12, "x": 0},
        )
    )
    fig.update_yaxes(
        title_text="log10 LR", range=[-edge * 1.08, edge * 1.08], zeroline=False, row=1, col=1
    )
    fig.update_xaxes(title_text="score", row=rows, col=1)
    return fig


def _pav_steps(transform: PAVTransform) -> tuple[list[go.Scatter], float]:
    """The two step functions (with and without Laplace's rule, log10 LR) and the axis edge.

    Infinite LLRs without Laplace's rule are drawn at the edge and labelled once per run:
    -inf at its left end, +inf at its right end.
    """
    keep = _runs(transform.llr, transform.llr_laplace)
    x = transform.scores[keep]
    lap = transform.llr_laplace[keep] / _LN10
    plain = transform.llr[keep] / _LN10
    finite = np.concatenate([lap, plain[np.isfinite(plain)], [0.0]])
    edge = float(np.max(np.abs(finite))) * 1.15 + 0.3
    shown = np.clip(plain, -edge, edge)
    plain_text = np.full(plain.size, "", dtype=object)
    if plain[0] == -np.inf:
        plain_text[0] = "−∞"
    if plain[-1] == np.inf:
        plain_text[-1] = "+∞"
    plain_hover = [f"{v:+.3f}" if math.isfinite(v) else ("+∞" if v > 0 else "−∞") for v in plain]
    with_laplace = go.Scatter(
        x=x,
        y=lap,
        mode="lines",
        line={"shape": "hv", "color": "#000000", "width": 2},
        name="with Laplace's rule (worst case)",
        hovertemplate="score ≥ %{x:.4g}<br>log10 LR %{y:+.3f} (Laplace)<extra></extra>",
    )
    without = go.Scatter(
        x=x,
        y=shown,
        mode="lines+text",
        text=plain_text,
        textposition=["bottom left" if v > 0 else "top right" for v in plain],
        textfont={"color": "#7f7f7f"},
        customdata=plain_hover,
        line={"shape": "hv", "color": "#7f7f7f", "width": 1.5, "dash": "dash"},
        name="without (for D_ECE)",
        hovertemplate="score ≥ %{x:.4g}<br>log10 LR %{customdata} (PAV)<extra></extra>",
    )
    return [with_laplace, without], edge


def _worst_case_marker(transform: PAVTransform, result: ZebraResult) -> go.Scatter:
    """A star at the worst case's score, on the Laplace step function."""
    idx = int(np.searchsorted(transform.scores, result.worst_score))
    idx = min(idx, transform.scores.size - 1)
    signed = float(transform.llr_laplace[idx] / _LN10)
    kind = "mated" if result.worst_is_mated else "non-mated"
    return go.Scatter(
        x=[result.worst_score],
        y=[signed],
        mode="markers+text",
        marker={
            "symbol": "star",
            "size": 16,
            "color": MATED_COLOR if result.worst_is_mated else NON_MATED_COLOR,
            "line": {"width": 1, "color": "#000000"},
        },
        text=[f"worst case: log10 l = {result.log10_l:.2f} ({result.tag})"],
        textposition="middle left" if signed > 0 else "middle right",
        name=f"worst case ({kind} score)",
        hovertemplate=(
            f"worst case, {kind} score %{{x:.4g}}<br>log10 LR %{{y:+.3f}}<br>"
            f"tag {result.tag}<extra></extra>"
        ),
    )


def _score_density_bars(histogram: ScoreHistogram) -> list[go.Bar]:
    """The non-mated and mated score densities, overlaid."""
    return [
        go.Bar(
            x=histogram.centers,
            y=density,
            width=histogram.widths,
            customdata=count,
            name=f"{label} scores ({int(count.sum()):,})",
            marker={"color": color, "line": {"width": 0}},
            opacity=0.55,
            hovertemplate=(
                f"{label}<br>score %{{x:.3g}}<br>density %{{y:.3g}}<br>"
                "%{customdata:,} scores<extra></extra>"
            ),
        )
        for label, density, count, color in (
            ("non-mated", histogram.non_mated_density, histogram.non_mated, NON_MATED_COLOR),
            ("mated", histogram.mated_density, histogram.mated, MATED_COLOR),
        )
    ]
