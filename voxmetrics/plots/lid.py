"""Figures of LID, local information disclosure (the LID page; docs, Methods > LID, step 7).

Every builder takes LID results (or the arrays of one trial) and returns a ``go.Figure``; none
recomputes a metric. The CCDF curve comes from :func:`voxmetrics.metrics.lid.lid_ccdf`; the
histograms bin the per-trial values for display only.

A condition keeps one colour in every figure: :func:`condition_colors` assigns the colours of
:data:`CONDITION_PALETTE` by the condition's position in the study, so hiding a condition does
not recolour the others.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike
from plotly.subplots import make_subplots

from voxmetrics._types import LID_DISPLAY_FLOOR
from voxmetrics.metrics.lid import CalibrationCurve, LIDResult, lid_ccdf
from voxmetrics.plots.style import (
    CHANCE_COLOR,
    CONDITION_PALETTE,
    MATED_COLOR,
    base_layout,
    condition_colors,
)

__all__ = [
    "CONDITION_PALETTE",
    "OTHER_IDENTITY_COLOR",
    "calibration_figure",
    "condition_colors",
    "display_name",
    "lid_ccdf_figure",
    "lid_histogram_figure",
    "p_target_histogram_figure",
    "trial_figure",
]

OTHER_IDENTITY_COLOR = "#9DB4C8"
"""Bars of the enrolled identities other than the trial's own speaker."""
ZERO_COLOR = "#444444"
"""The x = 0 bits line: no information either way."""
PRIOR_COLOR = "#222222"
"""The prior 1/N of a random guess (not a condition colour, so it shows over every bar)."""


def display_name(name: str, result: LIDResult) -> str:
    """The condition's name, marked "(cross-calibrated)" when LID was not calibrated on dev.

    Examples
    --------
    >>> from voxmetrics.metrics.lid import LIDCalibration
    >>> cal = LIDCalibration(1.0, 0.0, 0.0, 0, source="cross-calibrated (5-fold on eval)")
    >>> r = LIDResult(np.zeros(2), np.full(2, 0.5), np.ones(2, dtype=int), 2, cal)
    >>> display_name("sys", r)
    'sys (cross-calibrated)'
    """
    return f"{name} (cross-calibrated)" if "cross-calibrated" in result.label else name


def _colors(results: Mapping[str, LIDResult], colors: Mapping[str, str] | None) -> dict[str, str]:
    fallback = condition_colors(list(results))
    return {n: (colors or {}).get(n, fallback[n]) for n in results}


def _ceilings(results: Mapping[str, LIDResult]) -> dict[int, float]:
    """Distinct N and their log2 N ceilings, ascending."""
    return {n: math.log2(n) for n in sorted({r.n_enrolled for r in results.values()})}


def _check(results: Mapping[str, LIDResult]) -> None:
    if not results:
        raise ValueError("no LID results to draw")


# ---------------------------------------------------------------- CCDF


def lid_ccdf_figure(
    results: Mapping[str, LIDResult],
    *,
    log_y: bool = False,
    colors: Mapping[str, str] | None = None,
    title: str = "Share of trials disclosing more than x bits",
) -> go.Figure:
    """CCDF of the per-trial LID of each condition, overlaid (Šterns et al. 2025, figure 4).

    Each curve is the right-continuous step function of
    :func:`~voxmetrics.metrics.lid.lid_ccdf`, preceded by the 100 % level left of the smallest
    LID. The log2 N ceiling is drawn as a dashed vertical line per distinct N, and x = 0 (no
    information) as a dotted one. LIDs below -64 bits are drawn at -64 bits (the display floor,
    :data:`~voxmetrics._types.LID_DISPLAY_FLOOR`), so one steep calibration cannot stretch the
    axis and flatten the other curves.

    Parameters
    ----------
    results : mapping of str to LIDResult
        Condition name to its LID, in display order.
    log_y : bool
        Logarithmic y axis (the tail of rare, large disclosures becomes visible).
    colors : mapping of str to str, optional
        Condition colours (:func:`condition_colors` of the whole study).
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        One line trace per condition: x = [min LID, *distinct LIDs], y = [100, *percent]; the
        ceilings and x = 0 are layout shapes.

    Examples
    --------
    >>> from voxmetrics.metrics.lid import LIDCalibration
    >>> cal = LIDCalibration(1.0, 0.0, 0.0, 0)
    >>> r = LIDResult(np.array([0.5, -1.0, 0.5, 2.0]), np.full(4, 0.3), np.ones(4, int), 8, cal)
    >>> fig = lid_ccdf_figure({"sys": r})
    >>> fig.data[0].x.tolist(), fig.data[0].y.tolist()
    ([-1.0, -1.0, 0.5, 2.0], [100.0, 75.0, 25.0, 0.0])
    """
    _check(results)
    col = _colors(results, colors)
    fig = go.Figure()
    lo, hi = 0.0, 0.0
    for name, r in results.items():
        x, pct = lid_ccdf(np.maximum(r.lid, LID_DISPLAY_FLOOR))
        lo, hi = min(lo, float(x[0])), max(hi, float(x[-1]))
        fig.add_trace(
            go.Scatter(
                x=np.concatenate([[x[0]], x]),
                y=np.concatenate([[100.0], pct]),
                mode="lines",
                line={"shape": "hv", "color": col[name], "width": 2.2},
                name=display_name(name, r),
                hovertemplate=(
                    f"<b>{display_name(name, r)}</b><br>%{{y:.1f}} % of {r.n_trials:,} trials "
                    "disclose more than %{x:.2f} bits<extra></extra>"
                ),
            )
        )
    fig.add_vline(x=0.0, line={"color": ZERO_COLOR, "dash": "dot", "width": 1.2})
    fig.add_annotation(
        x=0.0,
        y=1.0,
        yref="paper",
        text="0 bits",
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        xshift=-3,
        font={"color": ZERO_COLOR, "size": 11},
    )
    ceilings = _ceilings(results)
    for k, (n, c) in enumerate(ceilings.items()):
        hi = max(hi, c)
        fig.add_vline(x=c, line={"color": CHANCE_COLOR, "dash": "dash", "width": 1.5})
        fig.add_annotation(
            x=c,
            y=1.0 - 0.07 * k,
            yref="paper",
            text=f"log<sub>2</sub> N = {c:.2f} (N = {n:,})",
            showarrow=False,
            xanchor="right",
            yanchor="bottom",
            xshift=-3,
            font={"color": CHANCE_COLOR, "size": 11},
        )
    pad = 0.04 * (hi - lo or 1.0)
    fig.update_layout(**base_layout(title={"text": title}, hovermode="closest"))
    fig.update_xaxes(
        title_text="LID<sub>i</sub> (bits): information the trial discloses about its speaker",
        range=[lo - pad, hi + pad],
        zeroline=False,
    )
    if log_y:
        smallest = min(100.0 / r.n_trials for r in results.values())
        decades = [10.0**k for k in range(math.floor(math.log10(smallest)), 3)]
        fig.update_yaxes(
            type="log",
            range=[math.log10(smallest) - 0.15, math.log10(100) + 0.08],
            tickvals=decades,
            ticktext=[f"{d:g}" for d in decades],
            title_text="% of trials exceeding x (log scale)",
        )
    else:
        fig.update_yaxes(range=[-2, 105], title_text="% of trials exceeding x")
    return fig


# ---------------------------------------------------------------- histograms


def _grid(n: int, max_cols: int = 3) -> tuple[int, int]:
    cols = min(max_cols, n)
    return math.ceil(n / cols), cols


def _facet_figure(
    results: Mapping[str, LIDResult], colors: Mapping[str, str], max_cols: int = 3
) -> tuple[go.Figure, list[tuple[int, int]]]:
    rows, cols = _grid(len(results), max_cols)
    titles = [
        f"<b>{display_name(n, r)}</b><br><sup>T = {r.n_trials:,} trials, N = {r.n_enrolled:,}</sup>"
        for n, r in results.items()
    ]
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=titles,
        horizontal_spacing=0.07,
        vertical_spacing=0.32 / rows if rows > 1 else 0.0,
    )
    cells = [(1 + k // cols, 1 + k % cols) for k in range(len(results))]
    # the subplot titles are the first annotations, in the order of the results
    for annotation, name in zip(fig.layout.annotations, results, strict=True):
        annotation.font = {"size": 14, "color": colors[name]}
    return fig, cells


def _bars(values: ArrayLike, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype=np.float64)
    counts, _ = np.histogram(np.clip(v, edges[0], edges[-1]), bins=edges)
    return (edges[:-1] + edges[1:]) / 2, 100.0 * counts / max(1, v.size), counts


def p_target_histogram_figure(
    results: Mapping[str, LIDResult],
    *,
    bins: int = 40,
    colors: Mapping[str, str] | None = None,
    title: str = "Posterior of the true speaker, p(target)",
) -> go.Figure:
    """Histogram of the posterior p_i,m_i of each trial's own speaker, one panel per condition.

    Šterns et al. 2025, figure 2: the dotted line is the prior of a random guess, 1/N; trials to its
    right disclose information about their speaker (LID > 0), trials to its left mislead.

    Parameters
    ----------
    results : mapping of str to LIDResult
        Condition name to its LID, in display order.
    bins : int
        Equal-width bins over [0, 1].
    colors : mapping of str to str, optional
        Condition colours.
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        One bar trace per condition (x = bin centres, y = % of trials, customdata = counts)
        and one 1/N line shape per panel.

    Examples
    --------
    >>> from voxmetrics.metrics.lid import LIDCalibration
    >>> cal = LIDCalibration(1.0, 0.0, 0.0, 0)
    >>> r = LIDResult(np.zeros(4), np.array([.15, .15, .35, .95]), np.ones(4, int), 4, cal)
    >>> fig = p_target_histogram_figure({"sys": r}, bins=10)
    >>> fig.data[0].y[[1, 3, 9]].tolist()
    [50.0, 25.0, 25.0]
    """
    _check(results)
    col = _colors(results, colors)
    edges = np.linspace(0.0, 1.0, bins + 1)
    fig, cells = _facet_figure(results, col)
    for (name, r), (row, c) in zip(results.items(), cells, strict=True):
        centres, pct, counts = _bars(r.p_target, edges)
        fig.add_trace(
            go.Bar(
                x=centres,
                y=pct,
                width=edges[1] - edges[0],
                customdata=np.column_stack([edges[:-1], edges[1:], counts]),
                marker={"color": col[name], "line": {"width": 0}},
                name=display_name(name, r),
                showlegend=False,
                hovertemplate=(
                    f"<b>{display_name(name, r)}</b><br>p(target) in "
                    "[%{customdata[0]:.3f}, %{customdata[1]:.3f}]<br>%{y:.1f} % of trials "
                    "(%{customdata[2]:,})<extra></extra>"
                ),
            ),
            row=row,
            col=c,
        )
        chance = 1.0 / r.n_enrolled
        fig.add_vline(
            x=chance, line={"color": PRIOR_COLOR, "dash": "dot", "width": 1.8}, row=row, col=c
        )
        fig.add_annotation(
            x=chance,
            y=1,
            xref=f"x{_axis(row, c, cells)}",
            yref=f"y{_axis(row, c, cells)} domain",
            text=f"1/N = {chance:.3g}",
            showarrow=False,
            xanchor="left",
            yanchor="top",
            xshift=4,
            font={"color": PRIOR_COLOR, "size": 11},
        )
    fig.update_xaxes(range=[0, 1], title_text="p(target)", title_standoff=4)
    fig.update_yaxes(title_text="% of trials", rangemode="tozero")
    _facet_layout(fig, cells, title)
    return fig


def lid_histogram_figure(
    results: Mapping[str, LIDResult],
    *,
    bins: int = 40,
    colors: Mapping[str, str] | None = None,
    title: str = "Per-trial disclosure LID<sub>i</sub>",
) -> go.Figure:
    """Histogram of the per-trial LID (bits), a panel per condition (Šterns et al. 2025, figure 3).

    All panels share the bins (from the smallest LID to the largest log2 N), so they can be
    compared; x = 0 (no information) is dotted, the condition's log2 N ceiling dashed.

    Parameters
    ----------
    results : mapping of str to LIDResult
        Condition name to its LID, in display order.
    bins : int
        Number of equal-width bins.
    colors : mapping of str to str, optional
        Condition colours.
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        One bar trace per condition (x = bin centres, y = % of trials, customdata = bin edges
        and counts).

    Examples
    --------
    >>> from voxmetrics.metrics.lid import LIDCalibration
    >>> cal = LIDCalibration(1.0, 0.0, 0.0, 0)
    >>> r = LIDResult(np.array([-1.0, 0.5, 1.5, 2.0]), np.ones(4), np.ones(4, int), 4, cal)
    >>> fig = lid_histogram_figure({"sys": r}, bins=3)
    >>> fig.data[0].y.tolist(), fig.data[0].customdata[:, 2].tolist()
    ([25.0, 25.0, 50.0], [1.0, 1.0, 2.0])
    """
    _check(results)
    col = _colors(results, colors)
    # LIDs below the display floor (-64 bits) fall in the first bin
    lo = min(0.0, *(max(float(r.lid.min()), LID_DISPLAY_FLOOR) for r in results.values()))
    hi = max(r.ceiling for r in results.values())
    edges = np.linspace(lo, hi, bins + 1)
    fig, cells = _facet_figure(results, col)
    for (name, r), (row, c) in zip(results.items(), cells, strict=True):
        centres, pct, counts = _bars(np.maximum(r.lid, LID_DISPLAY_FLOOR), edges)
        fig.add_trace(
            go.Bar(
                x=centres,
                y=pct,
                width=edges[1] - edges[0],
                customdata=np.column_stack([edges[:-1], edges[1:], counts]),
                marker={"color": col[name], "line": {"width": 0}},
                name=display_name(name, r),
                showlegend=False,
                hovertemplate=(
                    f"<b>{display_name(name, r)}</b><br>LID in [%{{customdata[0]:.2f}}, "
                    "%{customdata[1]:.2f}] bits<br>%{y:.1f} % of trials (%{customdata[2]:,})"
                    "<extra></extra>"
                ),
            ),
            row=row,
            col=c,
        )
        fig.add_vline(
            x=0.0, line={"color": ZERO_COLOR, "dash": "dot", "width": 1.2}, row=row, col=c
        )
        fig.add_vline(
            x=r.ceiling, line={"color": CHANCE_COLOR, "dash": "dash", "width": 1.5}, row=row, col=c
        )
        fig.add_annotation(
            x=r.ceiling,
            y=1,
            xref=f"x{_axis(row, c, cells)}",
            yref=f"y{_axis(row, c, cells)} domain",
            text="log<sub>2</sub> N",
            showarrow=False,
            xanchor="right",
            yanchor="top",
            xshift=-3,
            font={"color": CHANCE_COLOR, "size": 11},
        )
    pad = 0.03 * (hi - lo)
    fig.update_xaxes(
        range=[lo - pad, hi + pad], title_text="LID<sub>i</sub> (bits)", title_standoff=4
    )
    fig.update_yaxes(title_text="% of trials", rangemode="tozero")
    _facet_layout(fig, cells, title)
    return fig


def _axis(row: int, col: int, cells: list[tuple[int, int]]) -> str:
    """Plotly's suffix of the axes of a subplot ("" for the first, then "2", "3", ...)."""
    cols = max(c for _, c in cells)
    k = (row - 1) * cols + col
    return "" if k == 1 else str(k)


def _facet_layout(fig: go.Figure, cells: list[tuple[int, int]], title: str) -> None:
    rows = max(r for r, _ in cells)
    # only the first column names the y axis; x titles on every panel (the grid may be ragged)
    for row, c in cells:
        if c != 1:
            fig.update_yaxes(title_text=None, row=row, col=c)
    fig.update_layout(
        **base_layout(
            title={"text": title},
            height=80 + 330 * rows,
            margin={"l": 70, "r": 30, "t": 70, "b": 50},
            showlegend=False,
            bargap=0,
        )
    )


# ---------------------------------------------------------------- calibration


def calibration_figure(
    curve: CalibrationCurve,
    *,
    name: str,
    matrix: str = "dev",
    color: str | None = None,
    log_y: bool = False,
    title: str | None = None,
) -> go.Figure:
    """The fitted logistic calibration over the empirical mated rate in row z-score bins.

    Parameters
    ----------
    curve : CalibrationCurve
        From :func:`~voxmetrics.metrics.lid.calibration_curve`.
    name : str
        Condition label (shown in the title).
    matrix : str
        Which matrix the bins come from ("dev", or "eval" for a cross-calibrated condition).
    color : str, optional
        Colour of the empirical markers (the condition's colour).
    log_y : bool
        Logarithmic y axis (mated rates are small, about 1/N, for most bins).
    title : str, optional
        Figure title; by default names the condition, w and b.

    Returns
    -------
    go.Figure
        Trace 0: empirical mated rate per bin (markers sized by the pairs in the bin,
        customdata = pairs). Trace 1: the fitted sigmoid(w z + b).

    Examples
    --------
    >>> c = CalibrationCurve(np.array([-1.0, 1.0]), np.array([0.1, 0.6]), np.array([90, 10]),
    ...                      np.linspace(-1, 1, 3), np.array([0.1, 0.3, 0.6]), w=1.5, b=-1.0)
    >>> fig = calibration_figure(c, name="sys")
    >>> [t.name for t in fig.data], fig.data[0].customdata.tolist()
    (['mated rate in the bin (dev)', 'fitted: sigmoid(1.5 z - 1)'], [90, 10])
    """
    b_text = f"- {abs(curve.b):.3g}" if curve.b < 0 else f"+ {curve.b:.3g}"
    fitted_name = f"fitted: sigmoid({curve.w:.3g} z {b_text})"
    counts = np.asarray(curve.counts, dtype=np.float64)
    sizes = 5 + 15 * np.sqrt(counts / counts.max()) if counts.size else []
    fig = go.Figure()
    rate = np.asarray(curve.mated_rate, dtype=np.float64)
    fig.add_trace(
        go.Scatter(
            x=curve.bin_centres,
            y=rate if not log_y else np.where(rate > 0, rate, np.nan),
            customdata=curve.counts,
            mode="markers",
            marker={
                "size": sizes,
                "color": color or CONDITION_PALETTE[0],
                "opacity": 0.8,
                "line": {"width": 1, "color": "white"},
            },
            name=f"mated rate in the bin ({matrix})",
            hovertemplate=(
                "z ≈ %{x:.2f}<br>mated rate %{y:.4f}<br>%{customdata:,} pairs<extra></extra>"
            ),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=curve.z_grid,
            y=curve.fitted,
            mode="lines",
            line={"color": "#222222", "width": 2},
            name=fitted_name,
            hovertemplate="z = %{x:.2f}<br>fitted P(mated) %{y:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        **base_layout(
            title={"text": title or f"{name}: calibration (w = {curve.w:.3g}, b = {curve.b:.3g})"},
            height=460,
        )
    )
    fig.update_xaxes(title_text="row z-score z<sub>ij</sub> of a (trial, enrolled) pair")
    if log_y:
        fig.update_yaxes(type="log", title_text="P(pair is mated) (log scale)")
    else:
        fig.update_yaxes(range=[-0.03, 1.03], title_text="P(pair is mated)")
    return fig


# ---------------------------------------------------------------- one trial


def trial_figure(
    scores: ArrayLike,
    posterior: ArrayLike,
    enrol_speakers: Sequence[str],
    target: int,
    *,
    title: str = "",
    max_bars: int = 60,
) -> go.Figure:
    """One trial: its raw scores and the attacker's posterior over the enrolled identities.

    Two panels share the x axis: the identities ordered by score (highest first, the target
    after identities with an equal score, as ranks count ties against the attacker). The
    target's bars are highlighted; the dotted line in the posterior panel is the prior 1/N.
    With more than ``max_bars`` identities, the highest-scoring ``max_bars - 1`` and the
    target are shown.

    Parameters
    ----------
    scores : array_like, shape (N,)
        The trial's row of the score matrix.
    posterior : array_like, shape (N,)
        Its posterior (:func:`voxmetrics.metrics.lid.posterior`).
    enrol_speakers : sequence of str, length N
        Labels of the enrolled identities.
    target : int
        Column of the trial's own speaker.
    title : str
        Figure title.
    max_bars : int
        Most identities drawn.

    Returns
    -------
    go.Figure
        Trace 0: score bars, trace 1: posterior bars (same x order; the target's bar has the
        colour ``MATED_COLOR``, the others ``OTHER_IDENTITY_COLOR``), trace 2: the 1/N line.

    Examples
    --------
    >>> fig = trial_figure([0.2, 0.9, 0.5], [0.2, 0.5, 0.3], ["a", "b", "c"], target=2)
    >>> list(fig.data[0].x), list(fig.data[0].marker.color)
    (['b', 'c', 'a'], ['#9DB4C8', '#D55E00', '#9DB4C8'])
    """
    s = np.asarray(scores, dtype=np.float64)
    p = np.asarray(posterior, dtype=np.float64)
    labels = np.asarray(enrol_speakers).astype(str)
    n = s.size
    is_target = np.arange(n) == target
    order = np.lexsort((is_target, -s))  # by score, descending; target last among ties
    shown = order[:max_bars]
    truncated = n > max_bars
    if truncated and target not in shown:
        shown = np.append(order[: max_bars - 1], target)
    rank_of = np.empty(n, dtype=np.int64)
    rank_of[order] = np.arange(1, n + 1)
    colors = [MATED_COLOR if j == target else OTHER_IDENTITY_COLOR for j in shown]
    x = labels[shown].tolist()
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
    )
    custom = np.column_stack([rank_of[shown], s[shown], p[shown]])
    fig.add_trace(
        go.Bar(
            x=x,
            y=s[shown],
            marker={"color": colors},
            customdata=custom,
            name="score",
            showlegend=False,
            hovertemplate=(
                "<b>%{x}</b> (position %{customdata[0]})<br>score %{y:.4g}<br>"
                "posterior %{customdata[2]:.4f}<extra></extra>"
            ),
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Bar(
            x=x,
            y=p[shown],
            marker={"color": colors},
            customdata=custom,
            name="posterior",
            showlegend=False,
            hovertemplate=(
                "<b>%{x}</b> (position %{customdata[0]})<br>posterior %{y:.4f}<br>"
                "score %{customdata[1]:.4g}<extra></extra>"
            ),
        ),
        row=2,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=[x[0], x[-1]],
            y=[1.0 / n, 1.0 / n],
            mode="lines",
            line={"color": CHANCE_COLOR, "dash": "dot", "width": 1.8},
            name=f"prior 1/N = {1.0 / n:.3g}",
            hovertemplate=f"prior 1/N = {1.0 / n:.4g}<extra></extra>",
        ),
        row=2,
        col=1,
    )
    # legend entries for the colours of the bars
    for label, color in (
        ("trial's own speaker", MATED_COLOR),
        ("other identities", OTHER_IDENTITY_COLOR),
    ):
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=label,
                marker={"symbol": "square", "size": 12, "color": color},
            ),
            row=1,
            col=1,
        )
    note = (
        f"identities ordered by score; the top {max_bars - 1} of {n:,} and the target are shown"
        if truncated
        else f"all {n} enrolled identities, ordered by score"
    )
    fig.update_layout(
        **base_layout(
            title={"text": f"{title}<br><sup>{note}</sup>" if title else note},
            height=620,
            bargap=0.15,
            margin={"l": 70, "r": 30, "t": 110, "b": 110},
            legend={"orientation": "h", "yanchor": "bottom", "y": 1.01, "x": 1, "xanchor": "right"},
        )
    )
    fig.update_xaxes(tickangle=-60, tickfont={"size": 10}, type="category")
    fig.update_xaxes(title_text="enrolled identity", row=2, col=1)
    fig.update_yaxes(title_text="raw score", row=1, col=1)
    fig.update_yaxes(
        title_text="attacker's posterior",
        range=[0, max(1.0 / n, float(p.max())) * 1.08],
        row=2,
        col=1,
    )
    return fig
