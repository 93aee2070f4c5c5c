"""Figures of the threat model: one score matrix read pooled (1-to-1) and row by row (1-to-N).

Šterns et al. 2025, section 4.1: the EER pools every mated and non-mated score of a matrix, while
the attacker of a closed-set 1-to-N search only compares the scores *within a row*. Every builder
takes a :class:`~voxmetrics.evaluation.threat.ThreatView` and returns a ``go.Figure``; none
recomputes a metric. The only arithmetic here is for display: splitting the
matrix into its two pools, ordering and sampling rows, choosing bins.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray
from plotly.subplots import make_subplots

from voxmetrics.evaluation.threat import ThreatView
from voxmetrics.plots.lid import OTHER_IDENTITY_COLOR
from voxmetrics.plots.style import CHANCE_COLOR, MATED_COLOR, NON_MATED_COLOR, base_layout

__all__ = [
    "ATTACKER_PICK_COLOR",
    "THRESHOLD_COLOR",
    "lid_per_trial_figure",
    "pooled_view_figure",
    "row_view_figure",
    "scenario_metrics_figure",
]

THRESHOLD_COLOR = "#222222"
"""The EER threshold: one global cut through every row."""
ATTACKER_PICK_COLOR = "#222222"
"""The ring around the highest score of a row: the 1-to-N attacker's pick."""
DISCLOSING_COLOR = MATED_COLOR
"""Bars of trials with LID > 0 (the trial points to its own speaker)."""
MISLEADING_COLOR = NON_MATED_COLOR
"""Bars of trials with LID <= 0 (the trial says nothing or points away)."""


def _own_scores(view: ThreatView) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """The matrix's scores and the mask of each row's own-speaker cell."""
    sm = view.matrix
    s = np.asarray(sm.scores, dtype=np.float64)
    own = np.zeros(s.shape, dtype=bool)
    own[np.arange(sm.n_trials), sm.targets] = True
    return s, own


def _threshold_line(fig: go.Figure, threshold: float, lo: float, hi: float, label: str) -> None:
    """The EER threshold as a dashed line, its label on the side with more room."""
    fig.add_vline(x=threshold, line={"color": THRESHOLD_COLOR, "dash": "dash", "width": 1.6})
    left = hi > lo and (threshold - lo) / (hi - lo) > 0.5
    fig.add_annotation(
        x=threshold,
        y=1.0,
        yref="paper",
        text=label,
        showarrow=False,
        xanchor="right" if left else "left",
        yanchor="bottom",
        xshift=-3 if left else 3,
        font={"color": THRESHOLD_COLOR, "size": 11},
    )


# ---------------------------------------------------------------- pooled (1-to-1) view


def pooled_view_figure(
    view: ThreatView, *, bins: int | None = None, title: str | None = None
) -> go.Figure:
    """The matrix as the EER sees it: mated and non-mated scores pooled, with the EER threshold.

    Every trial's own-speaker score goes into the mated pool and every other score into the
    non-mated pool; the row each score came from is forgotten. Both pools are drawn as
    overlaid histograms on the same bins, each normalised to 100 %, and the library's EER
    threshold (:attr:`~voxmetrics.metrics.baseline.BaselineResult.eer_threshold`; scores at or
    below it are rejected) as a dashed line.

    Parameters
    ----------
    view : ThreatView
        From :func:`~voxmetrics.evaluation.threat.threat_view` or
        :func:`~voxmetrics.evaluation.threat.threat_scenario`.
    bins : int, optional
        Number of bins, centred on the smallest and largest score. By default 8 for a small
        matrix (up to 64 scores, e.g. Šterns et al.'s (2025) 4x4 example: one bin per 0.1) and 40
        above.
    title : str, optional
        Figure title; by default it names the EER.

    Returns
    -------
    go.Figure
        Trace 0: the non-mated histogram, trace 1: the mated histogram (``histnorm="percent"``,
        shared ``xbins``). The threshold is a layout shape.

    Examples
    --------
    >>> from voxmetrics.evaluation.threat import paper_matrix, threat_view
    >>> fig = pooled_view_figure(threat_view(paper_matrix(), w=1.5))
    >>> [t.name for t in fig.data]
    ['non-mated (other speakers): 12 scores', 'mated (own speaker): 4 scores']
    >>> round(fig.data[0].xbins.size, 3), fig.layout.shapes[0].x0
    (0.1, 0.5)
    """
    s, own = _own_scores(view)
    tar, non = s[own], s[~own]
    n_bins = bins if bins is not None else (8 if s.size <= 64 else 40)
    lo, hi = float(s.min()), float(s.max())
    size = (hi - lo) / (n_bins - 1) if hi > lo and n_bins > 1 else 1.0
    xbins = {"start": lo - size / 2, "end": hi + size / 2, "size": size}
    b = view.baseline
    fig = go.Figure()
    for scores, name, color in (
        (non, f"non-mated (other speakers): {non.size:,} scores", NON_MATED_COLOR),
        (tar, f"mated (own speaker): {tar.size:,} scores", MATED_COLOR),
    ):
        fig.add_trace(
            go.Histogram(
                x=scores,
                xbins=xbins,
                autobinx=False,
                histnorm="percent",
                name=name,
                marker={"color": color, "line": {"width": 0}},
                opacity=0.6,
                hovertemplate=f"{name.split(':')[0]}<br>score %{{x}}<br>%{{y:.1f}} % of the pool"
                "<extra></extra>",
            )
        )
    _threshold_line(
        fig, b.eer_threshold, xbins["start"], xbins["end"], f"EER threshold {b.eer_threshold:.3g}"
    )
    subtitle = "every score of every trial in one of two pools; which row it came from is lost"
    text = title or f"Pooled (1-to-1): EER = {b.eer:.1%}<br><sup>{subtitle}</sup>"
    fig.update_layout(
        **base_layout(
            title={"text": text},
            barmode="overlay",
            bargap=0.05,
            height=420,
            margin={"l": 60, "r": 20, "t": 80, "b": 100},
            legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
        )
    )
    fig.update_xaxes(title_text="score", range=[xbins["start"], xbins["end"]])
    fig.update_yaxes(title_text="% of the pool", rangemode="tozero")
    return fig


# ---------------------------------------------------------------- row-by-row (1-to-N) view


def _shown_rows(own: NDArray[np.float64], max_rows: int) -> NDArray[np.int64]:
    """Rows by own-speaker score, highest first; at most ``max_rows``, evenly spread."""
    order = np.argsort(-own, kind="stable")
    if order.size <= max_rows:
        return order
    picks = np.unique(np.round(np.linspace(0, order.size - 1, max_rows)).astype(np.int64))
    return order[picks]


def _stacked_positions(sub: NDArray[np.float64]) -> NDArray[np.float64]:
    """Vertical position of each dot: its row index, equal scores of a row fanned out."""
    y = np.repeat(np.arange(sub.shape[0], dtype=np.float64)[:, None], sub.shape[1], axis=1)
    for k, row in enumerate(sub):
        _, inverse, counts = np.unique(row, return_inverse=True, return_counts=True)
        for v in np.flatnonzero(counts > 1):
            members = np.flatnonzero(inverse == v)
            step = min(0.16, 0.6 / (members.size - 1))
            y[k, members] += (np.arange(members.size) - (members.size - 1) / 2) * step
    return y


def row_view_figure(view: ThreatView, *, max_rows: int = 30, title: str | None = None) -> go.Figure:
    """The matrix as the 1-to-N attacker sees it: one line per trial, its N scores as dots.

    The trial's own speaker is the orange dot, the other enrolled speakers grey (equal scores of
    a row are fanned out vertically so that each stays visible); the ring marks the highest
    score of the row, the attacker's pick (among equal scores, the own speaker: a tie is a
    link, as linkability counts it). When the ring sits on the orange dot the trial is linked.
    The EER threshold is drawn too: one global cut for every row, blind to the order inside a
    row.
    Rows are ordered by their own-speaker score; with more than ``max_rows`` trials an evenly
    spread sample is shown.

    Parameters
    ----------
    view : ThreatView
        From :func:`~voxmetrics.evaluation.threat.threat_view` or
        :func:`~voxmetrics.evaluation.threat.threat_scenario`.
    max_rows : int
        Most trials drawn.
    title : str, optional
        Figure title; by default it names the linkability and its chance level.

    Returns
    -------
    go.Figure
        Trace 0: the other speakers' scores, trace 1: the own speaker's score (one point per
        shown trial, ``customdata`` = speaker and rank), trace 2: the ring on each row's
        highest score. The y axis is numeric (row k at y = k, top down); its tick labels name
        the trials and mark linked rows with ✓.

    Examples
    --------
    >>> from voxmetrics.evaluation.threat import paper_matrix, threat_view
    >>> fig = row_view_figure(threat_view(paper_matrix(), w=1.5))
    >>> [len(t.x) for t in fig.data], list(fig.layout.yaxis.ticktext)
    ([12, 4, 4], ['trial 1 ✓', 'trial 2 ✓', 'trial 3 ✓', 'trial 4 ✓'])
    """
    sm = view.matrix
    s, own_mask = _own_scores(view)
    t, n = s.shape
    own = s[own_mask]  # one per row, in row order
    rows = _shown_rows(own, max_rows)
    ids = np.asarray(sm.trial_ids).astype(str)
    speakers = np.asarray(sm.enrol_speakers).astype(str)
    ranks = np.asarray(view.ranks)
    linked = np.asarray(view.linked)
    sub, sub_own = s[rows], own_mask[rows]
    y = _stacked_positions(sub)
    col = np.broadcast_to(np.arange(n), sub.shape)
    # the attacker's pick: the row's highest score; among equal ones, the own speaker
    # (a tie is a link, as linkability counts it)
    top = sub == sub.max(axis=1, keepdims=True)
    preferred = top & sub_own
    pick = np.where(preferred.any(axis=1), preferred.argmax(axis=1), top.argmax(axis=1))
    at = np.arange(rows.size)
    dot = 9 if n <= 30 else 6
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=sub[~sub_own],
            y=y[~sub_own],
            text=np.repeat(ids[rows], n).reshape(sub.shape)[~sub_own],
            customdata=speakers[col[~sub_own]],
            mode="markers",
            marker={"color": OTHER_IDENTITY_COLOR, "size": dot, "opacity": 0.85},
            name="other enrolled speakers",
            cliponaxis=False,
            hovertemplate="%{text}<br>%{customdata}: score %{x:.3g}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=sub[sub_own],
            y=y[sub_own],
            text=ids[rows],
            customdata=np.column_stack([speakers[np.asarray(sm.targets)[rows]], ranks[rows]]),
            mode="markers",
            marker={
                "color": MATED_COLOR,
                "size": dot + 4,
                "line": {"width": 1, "color": "white"},
            },
            name="the trial's own speaker",
            cliponaxis=False,
            hovertemplate=(
                "%{text}<br>own speaker %{customdata[0]}: score %{x:.3g}<br>"
                "rank %{customdata[1]} of " + f"{n}<extra></extra>"
            ),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=sub[at, pick],
            y=y[at, pick],
            mode="markers",
            marker={
                "symbol": "circle-open",
                "color": ATTACKER_PICK_COLOR,
                "size": dot + 11,
                "line": {"width": 2},
            },
            name="highest score of the row (the attacker's pick)",
            cliponaxis=False,
            hoverinfo="skip",
        )
    )
    b = view.baseline
    _threshold_line(fig, b.eer_threshold, float(sub.min()), float(sub.max()), "EER threshold")
    ticktext = [
        f"{ids[i]} ✓" if linked[i] else f"{ids[i]} · rank {ranks[i]}" for i in rows.tolist()
    ]
    note = (
        f"all {t} trials" if rows.size == t else f"{rows.size} of {t:,} trials, evenly spread"
    ) + ", ordered by their own-speaker score; ✓ = linked"
    text = title or (
        f"Row by row (1-to-N): linkability = {b.linkability:.1%} "
        f"(chance {b.chance_linkability:.1%})<br><sup>{note}</sup>"
    )
    height = max(420, 190 + 19 * rows.size)
    fig.update_layout(
        **base_layout(
            title={"text": text},
            height=height,
            margin={"l": 20, "r": 20, "t": 80, "b": 110},
            # a fixed distance below the x axis title, whatever the number of rows
            legend={"orientation": "h", "yanchor": "top", "y": -55 / (height - 190), "x": 0},
            hovermode="closest",
        )
    )
    fig.update_yaxes(
        tickvals=list(range(rows.size)),
        ticktext=ticktext,
        range=[rows.size - 0.5, -0.5],  # the first row on top
        zeroline=False,
        tickfont={"size": 12 if rows.size <= 12 else 10},
        showgrid=True,
        automargin=True,
    )
    fig.update_xaxes(title_text="score", zeroline=False)
    return fig


# ---------------------------------------------------------------- LID per trial


def lid_per_trial_figure(
    view: ThreatView, *, max_bars: int = 40, title: str | None = None
) -> go.Figure:
    """How much each trial discloses about its speaker (LID, bits), with the log2 N ceiling.

    Up to ``max_bars`` trials: one bar per trial, orange when it discloses (LID > 0), blue
    when it says nothing or misleads. Beyond that, a histogram of the per-trial LID.

    Parameters
    ----------
    view : ThreatView
        From :func:`~voxmetrics.evaluation.threat.threat_view` or
        :func:`~voxmetrics.evaluation.threat.threat_scenario`.
    max_bars : int
        Most trials drawn as separate bars.
    title : str, optional
        Figure title; by default it names ALID, LIDmax and the ceiling.

    Returns
    -------
    go.Figure
        Trace 0: a bar per trial (x = trial ids, y = LID) or a histogram of LID
        (``histnorm="percent"``). The ceiling log2 N (dashed) and 0 bits (dotted) are layout
        shapes.

    Examples
    --------
    >>> from voxmetrics.evaluation.threat import paper_matrix, threat_view
    >>> fig = lid_per_trial_figure(threat_view(paper_matrix(), w=1.5))
    >>> fig.data[0].type, fig.data[0].y.round(3).tolist()
    ('bar', [1.871, 1.871, 1.871, 1.871])
    """
    r = view.lid
    values = np.asarray(r.lid, dtype=np.float64)
    ceiling = r.ceiling
    fig = go.Figure()
    if values.size <= max_bars:
        ids = np.asarray(view.matrix.trial_ids).astype(str)
        fig.add_trace(
            go.Bar(
                x=ids,
                y=values,
                customdata=np.asarray(r.p_target),
                marker={"color": [DISCLOSING_COLOR if v > 0 else MISLEADING_COLOR for v in values]},
                name="LID of the trial",
                showlegend=False,
                text=[f"{v:.2f}" for v in values],
                textposition="inside",
                insidetextanchor="end",
                hovertemplate=(
                    "%{x}<br>LID %{y:.3f} bits<br>p(own speaker) %{customdata:.3f}<extra></extra>"
                ),
            )
        )
        fig.update_xaxes(type="category", title_text="trial")
        fig.update_yaxes(title_text="LID (bits)")
        lo = min(0.0, float(values.min()))
        fig.update_yaxes(range=[lo - 0.15 * (ceiling - lo), ceiling * 1.18])
    else:
        lo = min(0.0, float(values.min()))
        edges_size = (ceiling - lo) / 40 if ceiling > lo else 1.0
        fig.add_trace(
            go.Histogram(
                x=values,
                xbins={"start": lo, "end": ceiling + edges_size, "size": edges_size},
                autobinx=False,
                histnorm="percent",
                marker={"color": DISCLOSING_COLOR, "line": {"width": 0}},
                name="trials",
                showlegend=False,
                hovertemplate="LID ≈ %{x:.2f} bits<br>%{y:.1f} % of trials<extra></extra>",
            )
        )
        fig.update_xaxes(title_text="LID of a trial (bits)", range=[lo, ceiling * 1.05])
        fig.update_yaxes(title_text="% of trials", rangemode="tozero")
    line = fig.add_hline if values.size <= max_bars else fig.add_vline
    line(0.0, line={"color": CHANCE_COLOR, "dash": "dot", "width": 1.2})
    line(ceiling, line={"color": CHANCE_COLOR, "dash": "dash", "width": 1.5})
    horizontal = values.size <= max_bars
    fig.add_annotation(
        x=1.0 if horizontal else ceiling,
        y=ceiling if horizontal else 1.0,
        xref="paper" if horizontal else "x",
        yref="y" if horizontal else "paper",
        text=f"log<sub>2</sub> N = {ceiling:.2f} bits: certain",
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        font={"color": CHANCE_COLOR, "size": 11},
    )
    text = title or (
        f"LID per trial: ALID {r.alid:.2f}, LIDmax {r.lid_max:.2f} bits<br><sup>bits a trial "
        f"gives away (at most log<sub>2</sub> N = {ceiling:.2f})</sup>"
    )
    fig.update_layout(
        **base_layout(
            title={"text": text},
            height=380,
            margin={"l": 60, "r": 20, "t": 80, "b": 60},
            bargap=0.3 if horizontal else 0.02,
        )
    )
    return fig


# ---------------------------------------------------------------- the numbers side by side


def scenario_metrics_figure(view: ThreatView, *, title: str | None = None) -> go.Figure:
    """The numbers that move apart: EER, ROCCH-EER and linkability; ALID and LIDmax in bits.

    Left panel (percent): the two 1-to-1 numbers and the 1-to-N linkability, each with its
    chance level as a black tick (50 % for the EERs, 1/N for linkability). Right panel (bits):
    ALID and LIDmax with the log2 N ceiling.

    Parameters
    ----------
    view : ThreatView
        From :func:`~voxmetrics.evaluation.threat.threat_scenario` or
        :func:`~voxmetrics.evaluation.threat.threat_view`.
    title : str, optional
        Figure title.

    Returns
    -------
    go.Figure
        Trace 0: bars EER, ROCCH-EER, Linkability (%). Trace 1: their chance levels (black
        ticks). Trace 2: bars ALID, LIDmax (bits). Trace 3: the log2 N ceiling (grey ticks).
        The values are annotations above the bars.

    Examples
    --------
    >>> from voxmetrics.evaluation.threat import paper_matrix, threat_view
    >>> fig = scenario_metrics_figure(threat_view(paper_matrix(), w=1.5))
    >>> list(fig.data[0].x), [round(v, 1) for v in fig.data[0].y]
    (['EER', 'ROCCH-EER', 'Linkability'], [50.0, 37.5, 100.0])
    """
    m = view.summary()
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.6, 0.4],
        horizontal_spacing=0.14,
        subplot_titles=(
            "1-to-1 (EER) vs 1-to-N (linkability), %",
            "Disclosure per trial, bits",
        ),
    )
    left = ["EER", "ROCCH-EER", "Linkability"]
    pct = [100 * m["eer"], 100 * m["eer_rocch"], 100 * m["linkability"]]
    chance = [50.0, 50.0, 100 * m["chance_linkability"]]
    right = ["ALID", "LIDmax"]
    bits = [m["alid"], m["lid_max"]]
    ceiling = m["lid_ceiling"]
    tick_line = {"width": 3}
    tick = {"symbol": "line-ew", "size": 46, "line": tick_line}
    for col, x, y, colors, unit in (
        (1, left, pct, [NON_MATED_COLOR, NON_MATED_COLOR, MATED_COLOR], "%"),
        (2, right, bits, [MATED_COLOR, MATED_COLOR], "bits"),
    ):
        fig.add_trace(
            go.Bar(
                x=x,
                y=y,
                marker={"color": colors},
                name=unit,
                showlegend=False,
                hovertemplate=f"%{{x}}: %{{y:.2f}} {unit}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        if col == 1:
            fig.add_trace(
                go.Scatter(
                    x=left,
                    y=chance,
                    mode="markers",
                    marker={**tick, "line": {**tick_line, "color": "#222222"}},
                    name="chance (EER 50 %, linkability 1/N)",
                    hovertemplate="%{x}: chance %{y:.1f} %<extra></extra>",
                ),
                row=1,
                col=1,
            )
    fig.add_trace(
        go.Scatter(
            x=right,
            y=[ceiling, ceiling],
            mode="markers",
            marker={**tick, "line": {**tick_line, "color": CHANCE_COLOR}},
            name=f"ceiling log<sub>2</sub> N = {ceiling:.2f} bits (certain)",
            hovertemplate=f"log2 N = {ceiling:.2f} bits<extra></extra>",
        ),
        row=1,
        col=2,
    )
    # each value above its bar, or above the reference tick when the tick is in the way
    for axis, x, y, ref, fmt, span in (
        ("", left, pct, chance, "{:.1f} %", 100.0),
        ("2", right, bits, [ceiling, ceiling], "{:.2f}", max(ceiling, *bits)),
    ):
        for xi, yi, ri in zip(x, y, ref, strict=True):
            clear = yi >= ri or ri - yi > 0.12 * span
            fig.add_annotation(
                x=xi,
                y=yi if clear else ri,
                xref=f"x{axis}",
                yref=f"y{axis}",
                text=fmt.format(yi),
                showarrow=False,
                yanchor="bottom",
                yshift=4,
                font={"size": 13},
            )
    fig.update_yaxes(range=[0, 112], title_text="%", row=1, col=1)
    lo = min(0.0, *bits)
    top = max(ceiling, *bits)
    fig.update_yaxes(
        range=[lo - 0.05 * (top - lo) if lo < 0 else 0, 1.15 * top if top > 0 else 1.0],
        title_text="bits",
        row=1,
        col=2,
    )
    fig.update_layout(
        **base_layout(
            title={"text": title} if title else None,
            height=380,
            margin={"l": 60, "r": 20, "t": 60 if title is None else 90, "b": 80},
            bargap=0.35,
            legend={"orientation": "h", "yanchor": "top", "y": -0.12, "x": 0},
        )
    )
    return fig
