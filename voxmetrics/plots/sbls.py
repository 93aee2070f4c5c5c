"""Figures of SBLS, the Soft Biometric Leakage Score (the Soft biometrics page).

Every builder takes :class:`~voxmetrics.metrics.sbls.SBLSResult` objects (or one of their
:class:`~voxmetrics.metrics.sbls.AttributeLeakage` entries, bootstrap intervals, condition
reports) and returns a ``go.Figure``; none recomputes a metric. The only arithmetic is for
display: row shares of a confusion matrix, marker sizes, and the joint recovery rate of a
uniform random guess (1 / product of the class counts) drawn as a reference line.

SBLS and its components are protection scores: 1 = no measurable leakage, 0 = total leakage,
so higher is better, unlike LID (bits disclosed, higher = worse).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.sbls import AttributeLeakage, SBLSResult, SubgroupRow
from voxmetrics.plots.style import (
    CHANCE_COLOR,
    CONDITION_COLOR,
    MATED_COLOR,
    base_layout,
    condition_colors,
)

__all__ = [
    "COMPONENT_COLORS",
    "COMPONENT_LABELS",
    "WORST_COLOR",
    "auc_matrix_figure",
    "components_figure",
    "confusion_figure",
    "identity_figure",
    "short_group",
    "subgroup_figure",
]

COMPONENT_LABELS: dict[str, str] = {
    "p_attr": "P_attr (attribute inference)",
    "p_assoc": "P_assoc (systematic linkage)",
    "p_subgroup": "P_subgroup (subgroups)",
    "sbls": "SBLS",
}
"""Result attribute to legend label, in the order of the bars."""
COMPONENT_COLORS: dict[str, str] = {
    "p_attr": "#56B4E9",  # sky blue
    "p_assoc": "#009E73",  # bluish green
    "p_subgroup": "#E69F00",  # orange
    "sbls": "#0072B2",  # blue: the headline score
}
"""Okabe-Ito colours of the components (colour-blind safe)."""
WORST_COLOR = MATED_COLOR
"""The worst (most recovered) subgroup: vermillion."""
SKIPPED_COLOR = CHANCE_COLOR
"""Subgroups below the minimum size: grey."""


def short_group(group: str) -> str:
    """A compact label of a subgroup: ``"sex=F & age_group=18-35"`` -> ``"F · 18-35"``.

    Examples
    --------
    >>> short_group("sex=F & age_group=18-35")
    'F · 18-35'
    """
    return " · ".join(part.split("=", 1)[-1] for part in group.split(" & "))


def _error(intervals: Mapping[str, BootstrapInterval] | None, key: str, value: float | None):
    iv = (intervals or {}).get(key)
    if iv is None or value is None or iv.low is None or iv.high is None:
        return None, None
    return max(0.0, iv.high - value), max(0.0, value - iv.low)


def components_figure(
    results: Mapping[str, SBLSResult],
    intervals: Mapping[str, Mapping[str, BootstrapInterval]] | None = None,
    *,
    title: str = "SBLS and its components (higher = more protection)",
) -> go.Figure:
    """Grouped bars: P_attr, P_assoc, P_subgroup and SBLS of every condition.

    Parameters
    ----------
    results : mapping of str to SBLSResult
        Condition name to its result, in the order of the x axis.
    intervals : mapping of str to mapping of str to BootstrapInterval, optional
        Condition name to its intervals (keys ``p_attr``, ``p_assoc``, ``p_subgroup``,
        ``sbls``); drawn as 95 % error bars.
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        One bar trace per component, in the order of :data:`COMPONENT_LABELS`.
    """
    names = list(results)
    fig = go.Figure()
    for key, label in COMPONENT_LABELS.items():
        values = [getattr(results[n], key) for n in names]
        errors = [
            _error((intervals or {}).get(n), key, v) for n, v in zip(names, values, strict=True)
        ]
        plus = [e[0] for e in errors]
        minus = [e[1] for e in errors]
        has_error = any(p is not None for p in plus)
        fig.add_trace(
            go.Bar(
                x=names,
                y=values,
                name=label,
                marker={"color": COMPONENT_COLORS[key]},
                text=[f"{v:.2f}" if v is not None else "n/a" for v in values],
                textposition="outside" if not has_error else "none",
                cliponaxis=False,
                error_y=(
                    {
                        "type": "data",
                        "array": [p if p is not None else 0.0 for p in plus],
                        "arrayminus": [m if m is not None else 0.0 for m in minus],
                        "color": "#333333",
                        "thickness": 1.2,
                        "width": 3,
                    }
                    if has_error
                    else None
                ),
                hovertemplate=f"<b>%{{x}}</b><br>{label}: %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(
        **base_layout(
            title=title,
            barmode="group",
            bargap=0.25,
            height=440,
            margin={"l": 70, "r": 30, "t": 60, "b": 90},
        )
    )
    fig.update_yaxes(
        title="protection (1 = no leakage, 0 = total)", range=[0, 1.12], tickformat=".1f"
    )
    fig.update_xaxes(title=None)
    return fig


def confusion_figure(attribute: AttributeLeakage, *, title: str | None = None) -> go.Figure:
    """Heat map of true class x aligned predicted class; colour = share of the true class.

    Parameters
    ----------
    attribute : AttributeLeakage
        One attribute of a result (its ``confusion`` and ``classes``).
    title : str, optional
        Figure title (default names the attribute).

    Returns
    -------
    go.Figure
        One heatmap trace; ``z`` holds the row shares, the cell text the counts and shares.
    """
    counts = np.asarray(attribute.confusion, dtype=np.int64)
    totals = counts.sum(axis=1, keepdims=True)
    share = np.divide(counts, totals, out=np.zeros(counts.shape), where=totals > 0)
    classes = list(attribute.classes)
    text = [
        [f"{counts[i, j]}<br>{100 * share[i, j]:.0f} %" for j in range(len(classes))]
        for i in range(len(classes))
    ]
    fig = go.Figure(
        go.Heatmap(
            z=share,
            x=classes,
            y=classes,
            text=text,
            texttemplate="%{text}",
            colorscale="Blues",
            zmin=0,
            zmax=1,
            colorbar={"title": {"text": "share of<br>true class"}, "tickformat": ".0%"},
            hovertemplate="true %{y}, predicted %{x}<br>%{text}<extra></extra>",
            name="confusion",
        )
    )
    fig.update_layout(
        **base_layout(
            title=title or f"{attribute.name}: true vs predicted (aligned)",
            height=380,
            margin={"l": 80, "r": 30, "t": 60, "b": 70},
        )
    )
    fig.update_xaxes(title="predicted (after alignment)", type="category", side="bottom")
    fig.update_yaxes(title="true", type="category", autorange="reversed")
    return fig


def auc_matrix_figure(
    attribute: AttributeLeakage,
    *,
    column_labels: Sequence[str] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Heat map of the one-vs-rest AUC matrix with the chosen alignment marked.

    Cell (c, c') is the AUC of true class c using the attacker's score column c'; the
    Hungarian assignment picks one cell per row and column (the permutation pi), outlined.

    Parameters
    ----------
    attribute : AttributeLeakage
        One attribute of a result computed from scores (``auc_matrix`` not None).
    column_labels : sequence of str, optional
        The attacker's class names of its score columns (default "column 1", ...).
    title : str, optional
        Figure title.

    Returns
    -------
    go.Figure
        One heatmap trace; one outlined rectangle shape per cell (c, pi(c)) of the chosen
        permutation.

    Raises
    ------
    ValueError
        For hard predictions (no AUC matrix).
    """
    if attribute.auc_matrix is None:
        raise ValueError(f"attribute '{attribute.name}' has hard predictions: no AUC matrix.")
    m = np.asarray(attribute.auc_matrix, dtype=np.float64)
    k = m.shape[1]
    if column_labels is not None:
        cols = [str(c) for c in column_labels]
    else:
        cols = [f"column {j + 1}" for j in range(k)]
    rows = list(attribute.classes)
    fig = go.Figure(
        go.Heatmap(
            z=m,
            x=cols,
            y=rows,
            text=[[f"{v:.3f}" for v in row] for row in m],
            texttemplate="%{text}",
            colorscale="RdBu_r",
            zmin=0,
            zmax=1,
            zmid=0.5,
            colorbar={"title": {"text": "AUC"}},
            hovertemplate="true class %{y}<br>attacker column %{x}<br>AUC %{z:.3f}<extra></extra>",
            name="AUC",
        )
    )
    for c, p in enumerate(attribute.permutation):
        fig.add_shape(
            type="rect",
            x0=p - 0.5,
            x1=p + 0.5,
            y0=c - 0.5,
            y1=c + 0.5,
            xref="x",
            yref="y",
            line={"color": "#111111", "width": 4},
            name="chosen alignment",
        )
    fig.update_layout(
        **base_layout(
            title={
                "text": title or f"{attribute.name}: AUC of each true class with each score column",
                "subtitle": {"text": "outlined: the chosen alignment π (largest total AUC)"},
            },
            height=380,
            margin={"l": 80, "r": 30, "t": 60, "b": 100},
        )
    )
    fig.update_xaxes(title="attacker's score column", type="category")
    fig.update_yaxes(title="true class", type="category", autorange="reversed")
    return fig


def subgroup_figure(
    result: SBLSResult, *, title: str = "Joint recovery rate of each subgroup"
) -> go.Figure:
    """One marker per intersection of all attributes at its joint recovery rate L_g.

    Marker area grows with the subgroup's size n; the worst used subgroup (largest L_g, the
    one that sets 1 - max L_g in P_subgroup) is highlighted; subgroups below the minimum size
    are grey open markers. The dashed line is the joint recovery rate of a uniform random
    guess, 1 / (K_1 K_2 ...).

    Parameters
    ----------
    result : SBLSResult
        A result (its rows with attribute "all").
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        Traces "used", "worst" and, when any, "skipped (n < min)"; the guess line is a shape.
    """

    def leakage(r: SubgroupRow) -> float:
        return r.leakage if r.leakage is not None else -1.0

    rows = sorted((r for r in result.subgroups if r.attribute == "all"), key=leakage)
    used = [r for r in rows if r.used]
    worst = max(used, key=leakage) if used else None
    n_max = max((r.n for r in rows), default=1)

    def size(n: int) -> float:
        return 8 + 20 * math.sqrt(n / n_max)

    fig = go.Figure()
    groups = {
        "used": [r for r in used if r is not worst],
        "worst": [worst] if worst is not None else [],
        "skipped (n < min)": [r for r in rows if not r.used],
    }
    style: dict[str, dict[str, object]] = {
        "used": {"color": CONDITION_COLOR},
        "worst": {"color": WORST_COLOR},
        "skipped (n < min)": {"color": "white", "line": {"color": SKIPPED_COLOR, "width": 2}},
    }
    for name, members in groups.items():
        if not members and name != "used":
            continue
        fig.add_trace(
            go.Scatter(
                x=[r.leakage for r in members],
                y=[short_group(r.group) for r in members],
                mode="markers+text",
                text=[f"n = {r.n}" for r in members],
                textposition="middle right",
                customdata=[[r.group, r.n, r.used] for r in members],
                marker={
                    "size": [size(r.n) for r in members],
                    "opacity": 0.9,
                    **({"line": {"color": "white", "width": 1}} | style[name]),
                },
                name=(
                    f"worst: {short_group(worst.group)}"
                    if name == "worst" and worst is not None
                    else name
                ),
                hovertemplate=(
                    "<b>%{customdata[0]}</b><br>joint recovery L_g = %{x:.3f}<br>"
                    "n = %{customdata[1]}<extra></extra>"
                ),
            )
        )
    k = math.prod(len(a.classes) for a in result.attributes)
    fig.add_vline(
        x=1.0 / k,
        line={"color": CHANCE_COLOR, "dash": "dash", "width": 1.5},
        annotation_text=f"uniform guess 1/{k}",
        annotation_position="top",
        annotation_font_color=CHANCE_COLOR,
    )
    height = max(320, 120 + 48 * len(rows))
    fig.update_layout(
        **base_layout(
            title=title,
            height=height,
            margin={"l": 140, "r": 40, "t": 70, "b": 110},
            legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0},
        )
    )
    fig.update_xaxes(
        title="joint recovery rate L_g (share with every attribute recovered; higher = worse)",
        range=[0, 1.0],
        tickformat=".0%",
    )
    fig.update_yaxes(
        title=None,
        type="category",
        categoryorder="array",
        categoryarray=[short_group(r.group) for r in rows],
    )
    return fig


def identity_figure(
    results: Mapping[str, SBLSResult],
    reports: Sequence[ConditionReport],
    *,
    colors: Mapping[str, str] | None = None,
    title: str = "Attribute leakage beside identity leakage",
) -> go.Figure:
    """Two panels sharing the SBLS axis: SBLS vs EER and SBLS vs LIDmax, one marker each.

    Directions: SBLS higher = more protection of the attributes; EER higher = more
    protection of the identity (0.5 = chance); LIDmax higher = less protection (a trial
    discloses that many bits). A condition without LID is left out of the right panel.

    Parameters
    ----------
    results : mapping of str to SBLSResult
        Condition name to its SBLS result.
    reports : sequence of ConditionReport
        The conditions' reports (matched by name).
    colors : mapping of str to str, optional
        Condition colours (default :func:`voxmetrics.plots.style.condition_colors`).
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        One scatter trace per (condition, panel) with a result: first the EER panel, then
        the LIDmax panel; the legend names the conditions (entries of the EER panel).
    """
    by_name = {r.name: r for r in reports}
    names = [n for n in results if n in by_name and results[n].sbls is not None]
    colors = dict(colors) if colors is not None else condition_colors(list(results))
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.08,
        subplot_titles=(
            "identity, 1-to-1: EER (higher = more protection)",
            "identity, worst trial: LIDmax (higher = less protection)",
        ),
    )
    for col, panel in ((1, "eer"), (2, "lid_max")):
        for n in names:
            rep = by_name[n]
            if panel == "eer":
                x = rep.baseline.eer
            else:
                if rep.lid is None:
                    continue
                x = rep.lid.lid_max
            fig.add_trace(
                go.Scatter(
                    x=[x],
                    y=[results[n].sbls],
                    mode="markers",
                    marker={
                        "size": 14,
                        "color": colors.get(n, CONDITION_COLOR),
                        "line": {"color": "white", "width": 1},
                    },
                    name=n,
                    legendgroup=n,
                    showlegend=col == 1,
                    cliponaxis=False,
                    hovertemplate=(
                        f"<b>{n}</b><br>SBLS %{{y:.3f}}<br>"
                        + ("EER %{x:.3f}" if panel == "eer" else "LIDmax %{x:.2f} bits")
                        + "<extra></extra>"
                    ),
                ),
                row=1,
                col=col,
            )
    fig.add_vline(x=0.5, line={"color": CHANCE_COLOR, "dash": "dot"}, row=1, col=1)
    fig.update_layout(
        **base_layout(
            title=title,
            height=480,
            margin={"l": 70, "r": 30, "t": 90, "b": 110},
            legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
        )
    )
    fig.update_annotations(font_size=13)
    fig.update_xaxes(title="EER (0.5 = chance)", range=[-0.02, 0.58], row=1, col=1)
    fig.update_xaxes(title="LIDmax (bits)", rangemode="tozero", row=1, col=2)
    fig.update_yaxes(title="SBLS (higher = more protection)", range=[0, 1.08], row=1, col=1)
    return fig
