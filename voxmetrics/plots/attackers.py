"""Figures of the attackers of one condition: every back-end side by side, the strongest marked.

The builder takes an :class:`~voxmetrics.evaluation.attackers.AttackerComparison` (the sweep
and each back-end's report) and reads its table; it never recomputes a metric. What it is not:
the choice of the strongest (:mod:`voxmetrics.analysis.attackers`) nor the page.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from voxmetrics.evaluation.attackers import AttackerComparison
from voxmetrics.plots.style import CHANCE_COLOR, MATED_COLOR, NON_MATED_COLOR, base_layout

__all__ = ["STRONGEST_MARK", "attackers_figure"]

STRONGEST_MARK = "★"
"""Marks the strongest back-end (chosen on dev) on the figure's axis."""
_DEV_COLOR = "#9ECAE9"  # a light tint of the eval blue: the dev figure it was chosen by


def _number(v: object) -> float | None:
    if v is None:
        return None
    x = float(v)  # type: ignore[arg-type]
    return x if math.isfinite(x) else None


def attackers_figure(comparison: AttackerComparison, *, title: str | None = None) -> go.Figure:
    """Every tried back-end's EER (dev and eval) and its linkability (eval), side by side.

    Left: the dev EER each back-end was compared by (light) beside its eval EER (the number
    reported), with chance (0.5) dotted. Right: its linkability on eval, against the chance
    level 1/N (dashed). The strongest (chosen on dev) is marked :data:`STRONGEST_MARK` on the
    axis and its eval bars are vermillion (a legend entry of their own); skipped back-ends are
    left out.

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> from voxmetrics.evaluation.attackers import compare_attackers
    >>> cmp = compare_attackers(demo_study(n_speakers=6).get("anon-mild"),
    ...                         backends=["cosine", "lda"])
    >>> fig = attackers_figure(cmp)
    >>> [t.name for t in fig.data][::3]
    ['Dev EER (chosen on)', 'Linkability (eval)']
    >>> fig.data[2].name
    'Eval EER of the strongest ★'
    """
    frame = comparison.frame()
    frame = frame[frame["Skipped"] == ""]
    strongest = comparison.strongest
    labels = [
        f"{STRONGEST_MARK} {b}" if b == strongest else str(b) for b in frame["Back-end"].tolist()
    ]
    eval_colors = [MATED_COLOR if b == strongest else NON_MATED_COLOR for b in frame["Back-end"]]
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.1,
        subplot_titles=(
            "EER: dev (chosen on) and eval (reported)",
            "Linkability on eval (dashed: chance 1/N)",
        ),
    )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[_number(v) for v in frame["Dev EER"]],
            name="Dev EER (chosen on)",
            marker_color=_DEV_COLOR,
            offsetgroup="dev",
            hovertemplate="%{x}<br>dev EER %{y:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    eers = [_number(v) for v in frame["EER"]]
    chosen = [b == strongest for b in frame["Back-end"]]
    for name, color, keep in (
        ("Eval EER (reported)", NON_MATED_COLOR, False),
        (f"Eval EER of the strongest {STRONGEST_MARK}", MATED_COLOR, True),
    ):  # one slot per back-end: the strongest's bar is drawn in its own colour
        fig.add_trace(
            go.Bar(
                x=labels,
                y=[e if c == keep else None for e, c in zip(eers, chosen, strict=True)],
                name=name,
                marker_color=color,
                offsetgroup="eval",
                hovertemplate="%{x}<br>eval EER %{y:.3f}<extra></extra>",
            ),
            row=1,
            col=1,
        )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[_number(v) for v in frame["Linkability"]],
            name="Linkability (eval)",
            marker_color=eval_colors,
            hovertemplate="%{x}<br>linkability %{y:.3f}<extra></extra>",
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    fig.add_hline(
        y=0.5, line_dash="dot", line_color=CHANCE_COLOR, row=1, col=1,
        annotation_text="chance", annotation_position="top left",
    )  # fmt: skip
    chance = [_number(v) for v in frame["Chance (1/N)"]]
    known = [c for c in chance if c is not None]
    if known:
        fig.add_hline(y=max(known), line_dash="dash", line_color=CHANCE_COLOR, row=1, col=2)
    fig.update_yaxes(title_text="EER", range=[0, 0.55], row=1, col=1)
    fig.update_yaxes(title_text="Linkability", rangemode="tozero", row=1, col=2)
    fig.update_layout(
        **base_layout(
            title=title
            or f"Attackers of {comparison.name}: {STRONGEST_MARK} {strongest}, the strongest "
            f"on dev ({comparison.select_by})",
            barmode="group",
            height=460,
        )
    )
    return fig
