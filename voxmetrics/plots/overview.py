"""Figures comparing the conditions of a study (the Overview page)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.evaluation.threat import CALLOUT_EER, CALLOUT_LID_MAX
from voxmetrics.metrics.lid import clamp_lid_bits
from voxmetrics.plots.style import CHANCE_COLOR, CONDITION_COLOR, base_layout, merged_labels

__all__ = ["eer_lidmax_figure", "eer_linkability_figure"]

LOCAL_EER = CALLOUT_EER
"""An EER at or above this looks like chance on the 1-to-1 view (the threat call-outs')."""
LOCAL_LID_MAX = CALLOUT_LID_MAX
"""A worst-case disclosure of at least this many bits singles some trials out."""
LABEL_TOL = 0.02
"""Markers closer than this share of each axis's span share one label."""


def _label_position(eer: float) -> str:
    """Labels point inwards so that they stay inside the axes near both ends."""
    if eer > 0.35:
        return "top left"
    if eer < 0.05:
        return "top right"
    return "top center"


def eer_linkability_figure(
    reports: Sequence[ConditionReport], *, title: str = "EER vs linkability"
) -> go.Figure:
    """One labelled marker per condition at (EER, linkability), with the chance levels.

    The 1-to-1 EER and the 1-to-N linkability answer different questions: a condition far to
    the right (EER near 0.5, "verification at chance") can still sit high up (its trials are
    often linked to the right speaker among N). The chance linkability 1/N is drawn as a
    dashed line when every condition has the same N, else as one dashed marker per condition;
    the chance EER 0.5 as a dotted vertical line.

    Parameters
    ----------
    reports : sequence of ConditionReport
        One report per condition (:func:`voxmetrics.evaluation.evaluate_study`).
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        Trace 0: the conditions (markers with text labels). Trace 1: the chance linkability.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> fig = eer_linkability_figure(evaluate_study(demo_study(n_speakers=6)))
    >>> [t.name for t in fig.data], len(fig.data[0].x)
    (['conditions', 'chance 1/N = 0.167'], 5)
    """
    names = [r.name for r in reports]
    eers = [r.baseline.eer for r in reports]
    links = [r.baseline.linkability for r in reports]
    ns = [r.baseline.n_enrolled for r in reports]
    chance = [r.baseline.chance_linkability for r in reports]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=eers,
            y=links,
            # conditions at the same point share one label (no overprint); hover names each
            text=merged_labels(eers, links, names, x_tol=LABEL_TOL, y_tol=LABEL_TOL),
            hovertext=names,
            customdata=[[n, c, r.attacker] for n, c, r in zip(ns, chance, reports, strict=True)],
            mode="markers+text",
            textposition=[_label_position(x) for x in eers],
            marker={"size": 12, "color": CONDITION_COLOR, "line": {"width": 1, "color": "white"}},
            name="conditions",
            hovertemplate=(
                "<b>%{hovertext}</b> (%{customdata[2]})<br>EER %{x:.3f}<br>"
                "linkability %{y:.3f}<br>chance 1/N = %{customdata[1]:.3f} (N = %{customdata[0]})"
                "<extra></extra>"
            ),
        )
    )
    line = {"color": CHANCE_COLOR, "dash": "dash", "width": 1.5}
    if len(set(ns)) == 1:
        fig.add_trace(
            go.Scatter(
                x=[0.0, 0.5],
                y=[chance[0], chance[0]],
                mode="lines",
                line=line,
                name=f"chance 1/N = {chance[0]:.3g}",
                hovertemplate=f"chance linkability 1/N, N = {ns[0]}<extra></extra>",
            )
        )
    else:
        fig.add_trace(
            go.Scatter(
                x=eers,
                y=chance,
                text=names,
                mode="markers",
                marker={"symbol": "line-ew-open", "size": 22, "line": line},
                name="chance 1/N of each condition",
                hovertemplate="%{text}: chance 1/N = %{y:.3f}<extra></extra>",
            )
        )
    fig.add_vline(x=0.5, line={"color": CHANCE_COLOR, "dash": "dot", "width": 1})
    fig.add_annotation(
        x=0.5,
        y=1.0,
        yref="paper",
        text="EER chance",
        showarrow=False,
        xanchor="right",
        yanchor="top",
        font={"color": CHANCE_COLOR, "size": 11},
    )
    fig.update_layout(**base_layout(title={"text": title}))
    fig.update_xaxes(
        title_text="EER (1-to-1 verification; 0.5 = chance)", range=[-0.02, 0.56], zeroline=False
    )
    fig.update_yaxes(
        title_text="Linkability (1-to-N: own speaker ranked first)",
        range=[-0.03, 1.08],
        zeroline=False,
    )
    return fig


def eer_lidmax_figure(
    reports: Sequence[ConditionReport], *, title: str = "EER vs worst-case disclosure LIDmax"
) -> go.Figure:
    """One labelled marker per condition with LID at (EER, LIDmax), Šterns et al. 2025 figure 5.

    Conditions with a near-chance EER can differ widely in their worst trial: the shaded
    corner (EER >= 0.45 and LIDmax >= 1 bit) holds the conditions that look safe on the pooled
    1-to-1 error yet single out some trials. Conditions without LID (no dev set and no
    cross-calibration) cannot be placed; they are named in a note under the axes.

    Parameters
    ----------
    reports : sequence of ConditionReport
        One report per condition; those with ``lid`` None are listed, not drawn.
    title : str
        Figure title.

    Returns
    -------
    go.Figure
        Trace 0: the conditions with LID (markers with text labels, y = LIDmax in bits).
        Layout: the chance EER 0.5 (dotted), 1 bit (dashed), the log2 N ceiling when every
        condition has the same N, the shaded corner, and the note of conditions without LID.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> fig = eer_lidmax_figure(evaluate_study(demo_study(n_speakers=6)))
    >>> fig.data[0].name, len(fig.data[0].x)
    ('conditions', 5)
    """
    with_lid = [r for r in reports if r.lid is not None]
    without = [r.name for r in reports if r.lid is None]
    eers = [r.baseline.eer for r in with_lid]
    maxima = [  # shown within [-64 bits, log2 N]
        clamp_lid_bits(r.lid.lid_max, r.lid.n_enrolled) for r in with_lid if r.lid is not None
    ]
    labels = [
        f"{r.name} (cross-calibrated)"
        if r.lid is not None and "cross-calibrated" in r.lid.label
        else r.name
        for r in with_lid
    ]
    ceilings = sorted({r.lid.ceiling for r in with_lid if r.lid is not None})
    known = [m for m in maxima if m is not None]  # all of them: LIDmax is a number
    top = max([*known, *ceilings, LOCAL_LID_MAX]) + 0.5
    bottom = min([0.0, *known]) - 0.3
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=eers,
            y=maxima,
            # conditions at the same point share one label (no overprint); hover names each
            text=merged_labels(
                eers, maxima, labels, x_tol=LABEL_TOL, y_tol=LABEL_TOL * (top - bottom)
            ),
            hovertext=labels,
            customdata=[
                [r.attacker, r.lid.n_enrolled, r.lid.ceiling] for r in with_lid if r.lid is not None
            ],
            mode="markers+text",
            textposition=[_label_position(x) for x in eers],
            marker={"size": 12, "color": CONDITION_COLOR, "line": {"width": 1, "color": "white"}},
            name="conditions",
            hovertemplate=(
                "<b>%{hovertext}</b> (%{customdata[0]})<br>EER %{x:.3f}<br>LIDmax %{y:.2f} bits "
                "(ceiling log2 N = %{customdata[2]:.2f}, N = %{customdata[1]})<extra></extra>"
            ),
        )
    )
    fig.add_shape(
        type="rect",
        x0=LOCAL_EER,
        x1=0.56,
        y0=LOCAL_LID_MAX,
        y1=top,
        layer="below",
        line={"width": 0},
        fillcolor="rgba(213, 94, 0, 0.08)",
    )
    fig.add_annotation(
        x=1.0,
        xref="paper",
        y=LOCAL_LID_MAX,
        text="near-chance EER,<br>LIDmax ≥ 1 bit",
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        align="right",
        xshift=-4,
        yshift=2,
        font={"color": "#D55E00", "size": 11},
    )
    fig.add_hline(y=LOCAL_LID_MAX, line={"color": CHANCE_COLOR, "dash": "dash", "width": 1})
    fig.add_annotation(
        x=0.0,
        y=LOCAL_LID_MAX,
        text="1 bit",
        showarrow=False,
        xanchor="left",
        yanchor="bottom",
        font={"color": CHANCE_COLOR, "size": 11},
    )
    fig.add_vline(x=0.5, line={"color": CHANCE_COLOR, "dash": "dot", "width": 1})
    if len(ceilings) == 1:
        fig.add_hline(y=ceilings[0], line={"color": CHANCE_COLOR, "dash": "dot", "width": 1})
        fig.add_annotation(
            x=1.0,
            xref="paper",
            y=ceilings[0],
            text=f"ceiling log<sub>2</sub> N = {ceilings[0]:.2f}",
            showarrow=False,
            xanchor="right",
            yanchor="top",
            xshift=-4,
            bgcolor="rgba(255, 255, 255, 0.85)",
            font={"color": CHANCE_COLOR, "size": 11},
        )
    if without:
        fig.add_annotation(
            x=0,
            y=-0.2,
            xref="paper",
            yref="paper",
            xanchor="left",
            yanchor="top",
            showarrow=False,
            font={"size": 12, "color": "#555555"},
            text="Without LID (no dev set): " + ", ".join(without),
        )
    fig.update_layout(**base_layout(title={"text": title}, showlegend=False))
    fig.update_xaxes(
        title_text="EER (1-to-1 verification; 0.5 = chance)", range=[-0.02, 0.56], zeroline=False
    )
    fig.update_yaxes(
        title_text="LIDmax (bits): the most any single trial discloses",
        range=[bottom, top],
        zeroline=True,
    )
    return fig
