"""Figures of the Linkage page (Vauquier et al. 2025).

Every builder takes result objects of :mod:`voxmetrics.metrics.legal` and
:mod:`voxmetrics.metrics.similarity` (or the reports that carry them) and only arranges their
arrays for display. The arithmetic done here is for display only: the chance curve 1/N' drawn
densely between the grid points of a :class:`~voxmetrics.metrics.legal.LinkabilityCurve`,
reordering a similarity matrix's rows and columns, and pivoting a long table into a heat map.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.metrics.legal import (
    ConversationLengthCurve,
    LegalEvaluation,
    LinkabilityCurve,
    SinglingOutCurve,
    SinglingOutResult,
)
from voxmetrics.metrics.similarity import SimilarityMatrix, SimilarityResult
from voxmetrics.plots.style import (
    CHANCE_COLOR,
    CONDITION_PALETTE,
    base_layout,
    condition_colors,
    log_ticks,
)

__all__ = [
    "CONDITION_PALETTE",
    "condition_colors",
    "conversation_length_figure",
    "legal_figure",
    "linkability_vs_n_figure",
    "mean_score_figure",
    "similarity_matrices_figure",
    "singling_out_figure",
    "singling_out_vs_n_figure",
]


MATRIX_COLORSCALE = "Viridis"
"""Colour scale of the heat maps (perceptually uniform, colour-blind safe)."""

TICK_LABEL_LIMIT = 24
"""Heat maps with more speakers than this hide their tick labels (the hover names them)."""


def _colors(names: Sequence[str], colors: Mapping[str, str] | None) -> dict[str, str]:
    fallback = condition_colors(names)
    return {n: (colors or {}).get(n, fallback[n]) for n in names}


def _log_ticks(top: int, *, min_fraction: float = 0.05) -> list[int]:
    """1, 2, 5 per decade from 2 up to ``top``, and ``top`` itself, none overprinting."""
    return log_ticks(top, low=2, min_fraction=min_fraction)


# ---------------------------------------------------------------- linkability vs N'


def linkability_vs_n_figure(
    curves: Mapping[str, LinkabilityCurve],
    *,
    colors: Mapping[str, str] | None = None,
    title: str = "Linkability vs number of enrolled speakers N'",
    bands: Mapping[str, Any] | None = None,
) -> go.Figure:
    """Linkability against N' on a log axis, one curve per condition, with chance 1/N'.

    Vauquier et al. 2025, figure 1 (row 2): the exact expectation over random candidate sets of N'
    enrolled speakers that contain the true one is drawn as a line with markers; when a curve
    carries a sampled estimate (``n_draws`` > 0) it is drawn beside it as open markers with
    error bars of one standard deviation of the per-draw linkability. The chance level 1/N' is
    a dashed grey curve.

    Parameters
    ----------
    curves : mapping of condition name to LinkabilityCurve
    colors : mapping of condition name to colour, optional
        Defaults to :func:`condition_colors` of the names in ``curves``.
    title : str
    bands : mapping of condition name to array (G, 3), optional
        Rows [N', low, high]: the 95 % speaker-bootstrap band of the curve
        (:meth:`~voxmetrics.metrics.uncertainty.ConditionReplicates.curve_band`), drawn as a
        shaded area behind it.

    Returns
    -------
    go.Figure
        Each trace has ``meta = {"condition", "kind"}`` with ``kind`` in
        {"band", "expected", "sampled", "sampled-legend", "chance"}; the sampled traces share
        one legend entry ("sampled-legend", no data).

    Examples
    --------
    >>> from voxmetrics.metrics.legal import linkability_curve
    >>> S = [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]]
    >>> fig = linkability_vs_n_figure({"a": linkability_curve(S, [0, 0, 1, 2], n_draws=3)})
    >>> [t.meta["kind"] for t in fig.data], fig.layout.xaxis.type
    (['expected', 'sampled', 'sampled-legend', 'chance'], 'log')
    """
    names = list(curves)
    palette = _colors(names, colors)
    fig = go.Figure()
    for name in names:
        c = curves[name]
        color = palette[name]
        band = (bands or {}).get(name)
        if band is not None:
            band = np.asarray(band, dtype=np.float64)
            fig.add_trace(
                go.Scatter(
                    x=np.concatenate([band[:, 0], band[::-1, 0]]),
                    y=np.concatenate([band[:, 1], band[::-1, 2]]),
                    fill="toself",
                    fillcolor=color,
                    opacity=0.18,
                    line={"width": 0},
                    name=f"{name}: 95% band",
                    legendgroup=name,
                    showlegend=False,
                    hoverinfo="skip",
                    meta={"condition": name, "kind": "band"},
                )
            )
        fig.add_trace(
            go.Scatter(
                x=c.n,
                y=c.expected,
                mode="lines+markers",
                line={"color": color, "width": 2},
                marker={"color": color, "size": 7},
                name=name,
                legendgroup=name,
                meta={"condition": name, "kind": "expected"},
                hovertemplate=(
                    f"<b>{name}</b><br>N' = %{{x}}<br>linkability %{{y:.3f}} (exact expectation)"
                    "<extra></extra>"
                ),
            )
        )
        if c.sampled is not None:
            fig.add_trace(
                go.Scatter(
                    x=c.n,
                    y=c.sampled,
                    mode="markers",
                    marker={
                        "color": color,
                        "size": 10,
                        "symbol": "circle-open",
                        "line": {"width": 2},
                    },
                    error_y={
                        "type": "data",
                        "array": c.sampled_sd,
                        "color": color,
                        "thickness": 1.5,
                        "width": 5,
                    },
                    customdata=c.sampled_sd,
                    name=f"{name}: sampled",
                    legendgroup=name,
                    showlegend=False,  # one neutral legend entry below stands for them all
                    meta={"condition": name, "kind": "sampled"},
                    hovertemplate=(
                        f"<b>{name}</b><br>N' = %{{x}}<br>sampled %{{y:.3f}} ± %{{customdata:.3f}}"
                        f" (mean ± SD over {c.n_draws} draws)<extra></extra>"
                    ),
                )
            )
    draws = sorted({curves[n].n_draws for n in names if curves[n].sampled is not None})
    if draws:
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                marker={"color": CHANCE_COLOR, "size": 10, "symbol": "circle-open"},
                error_y={"type": "data", "array": [0], "color": CHANCE_COLOR},
                name=f"sampled, {' / '.join(map(str, draws))} draws (± 1 SD)",
                meta={"condition": None, "kind": "sampled-legend"},
            )
        )
    _chance_on_log_n(
        fig,
        top=max((int(curves[n].n[-1]) for n in names), default=2),
        chance=lambda n: 1.0 / n,
        chance_name="chance 1/N'",
        x_title="N', enrolled speakers the attacker searches among (log scale)",
        y_title="Linkability (own speaker first; a tie is a link)",
    )
    fig.update_layout(**base_layout(title={"text": title}, height=480))
    return fig


def _chance_on_log_n(
    fig: go.Figure,
    *,
    top: int,
    chance: Callable[[np.ndarray], np.ndarray],
    chance_name: str,
    x_title: str,
    y_title: str,
) -> None:
    """Add a dashed chance curve over N = 2..top and a log-N x axis with readable ticks.

    The chance curve is drawn densely, so it is exact between the grid points on the log axis.
    """
    dense = np.unique(np.round(np.geomspace(2, top, 200)).astype(int))
    fig.add_trace(
        go.Scatter(
            x=dense,
            y=chance(dense),
            mode="lines",
            line={"color": CHANCE_COLOR, "dash": "dash", "width": 1.5},
            name=chance_name,
            meta={"condition": None, "kind": "chance"},
            hovertemplate=f"{chance_name} at N = %{{x}}: %{{y:.3f}}<extra></extra>",
        )
    )
    fig.update_xaxes(
        type="log",
        title_text=x_title,
        tickvals=_log_ticks(top),
        range=[math.log10(1.8), math.log10(top * 1.12)],
        minor={"showgrid": False},
    )
    fig.update_yaxes(title_text=y_title, range=[-0.02, 1.04])


# ---------------------------------------------------------------- singling out


def singling_out_vs_n_figure(
    curves: Mapping[str, SinglingOutCurve],
    *,
    colors: Mapping[str, str] | None = None,
    title: str = "Singling out vs population size N",
) -> go.Figure:
    """Singling out against the population size (log x), one curve per condition, with chance.

    Vauquier et al. 2025, figure 1 (row 1). Error bars: one standard deviation over the random
    populations of each size. Chance (1 - 1/N)^(N-1) is a dashed grey curve.

    Examples
    --------
    >>> import numpy as np
    >>> c = SinglingOutCurve(n=np.array([2, 4]), value=np.array([0.9, 0.8]),
    ...                      sd=np.array([0.1, 0.0]), n_draws=5)
    >>> [t.meta["kind"] for t in singling_out_vs_n_figure({"a": c}).data]
    ['curve', 'chance']
    """
    names = list(curves)
    palette = _colors(names, colors)
    fig = go.Figure()
    for name in names:
        c = curves[name]
        fig.add_trace(
            go.Scatter(
                x=c.n,
                y=c.value,
                error_y={"type": "data", "array": c.sd, "color": palette[name], "thickness": 1},
                mode="lines+markers",
                line={"color": palette[name], "width": 2},
                marker={"color": palette[name], "size": 7},
                name=name,
                meta={"condition": name, "kind": "curve"},
                hovertemplate=(
                    f"<b>{name}</b><br>N = %{{x}}<br>singling out %{{y:.3f}} (mean over "
                    f"{c.n_draws} random populations)<extra></extra>"
                ),
            )
        )
    _chance_on_log_n(
        fig,
        top=max((int(curves[n].n[-1]) for n in names), default=2),
        chance=lambda n: (1.0 - 1.0 / n) ** (n - 1),
        chance_name="chance (1 - 1/N)^(N-1)",
        x_title="N, speakers in the population (log scale)",
        y_title="Singling out (isolation probability)",
    )
    fig.update_layout(**base_layout(title={"text": title}, height=440))
    return fig


def singling_out_figure(
    results: Mapping[str, SinglingOutResult],
    *,
    colors: Mapping[str, str] | None = None,
    title: str = "Singling out at the full population",
) -> go.Figure:
    """One bar per condition: the probability of isolation, with its chance level.

    The chance level (1 - 1/N)^(N-1) depends on the population size N, so it is drawn as a
    dashed tick across each bar (:attr:`SinglingOutResult.chance`).

    Parameters
    ----------
    results : mapping of condition name to SinglingOutResult
    colors : mapping of condition name to colour, optional
    title : str

    Returns
    -------
    go.Figure
        Trace 0: the bars (one per condition); trace 1: the chance ticks.

    Examples
    --------
    >>> from voxmetrics.metrics.legal import singling_out
    >>> r = singling_out([[1, 0], [0, 1]], ["a", "b"],
    ...                  [[1, .1], [1, -.1], [.1, 1], [-.1, 1]], ["a", "a", "b", "b"])
    >>> fig = singling_out_figure({"x": r})
    >>> fig.data[0].y, fig.data[1].y
    ((1.0,), (0.5,))
    """
    names = list(results)
    palette = _colors(names, colors)
    values = [results[n].value for n in names]
    custom = [
        [results[n].n_speakers, results[n].folds, results[n].n_predicates, results[n].chance]
        for n in names
    ]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=names,
            y=values,
            marker={"color": [palette[n] for n in names]},
            text=[f"{v:.2f}" for v in values],
            textposition="inside",
            insidetextanchor="start",  # at the base, clear of the chance ticks
            textfont={"color": "white", "size": 13},
            customdata=custom,
            name="singling out",
            hovertemplate=(
                "<b>%{x}</b><br>singling out %{y:.3f}<br>N = %{customdata[0]} speakers, "
                "%{customdata[2]} predicates, %{customdata[1]} folds<br>"
                "chance %{customdata[3]:.3f}<extra></extra>"
            ),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=names,
            y=[results[n].chance for n in names],
            mode="markers",
            # an open symbol is stroked with marker.color
            marker={
                "symbol": "line-ew-open",
                "size": 54,
                "color": CHANCE_COLOR,
                "line": {"width": 3},
            },
            name="chance (1 − 1/N)^(N−1) → 1/e",
            hovertemplate="chance %{y:.3f}<extra></extra>",
        )
    )
    fig.update_layout(**base_layout(title={"text": title}, height=420, showlegend=True))
    fig.update_layout(legend={"y": -0.2}, bargap=0.45)
    fig.update_yaxes(title_text="Probability of isolation", range=[0, 1.12])
    return fig


def conversation_length_figure(
    curves: Mapping[str, ConversationLengthCurve],
    reports: Mapping[str, ConditionReport] | None = None,
    *,
    colors: Mapping[str, str] | None = None,
    title: str = "Conversation length: embeddings averaged over L utterances",
) -> go.Figure:
    """Singling out (left) and linkability (right) against the conversation length L.

    Vauquier et al. 2025, figure 1 (columns L = 1, 3, 30): longer conversations give the attacker a
    cleaner voice profile. Chance lines come from the reports (singling out
    :attr:`SinglingOutResult.chance`, linkability 1/N): one dashed grey line per panel when
    every condition has the same value, else one dotted line per condition in its colour.
    Lengths where singling out is undefined (fewer than 2 groups per speaker; NaN) are gaps.

    Parameters
    ----------
    curves : mapping of condition name to ConversationLengthCurve
    reports : mapping of condition name to ConditionReport, optional
        Where the chance levels come from; without it no chance line is drawn.
    colors : mapping of condition name to colour, optional
    title : str

    Returns
    -------
    go.Figure
        Two panels; traces have ``meta = {"condition", "kind", "panel"}`` with ``kind`` in
        {"curve", "chance"} and ``panel`` in {"singling_out", "linkability"}.
    """
    names = list(curves)
    palette = _colors(names, colors)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("Singling out", "Linkability (all N enrolled)"),
        horizontal_spacing=0.1,
    )
    top = 1
    for name in names:
        c = curves[name]
        top = max(top, int(c.lengths.max()))
        for col, (panel, values) in enumerate(
            (("singling_out", c.singling_out), ("linkability", c.linkability)), start=1
        ):
            fig.add_trace(
                go.Scatter(
                    x=c.lengths,
                    y=values,
                    mode="lines+markers",
                    line={"color": palette[name], "width": 2},
                    marker={"color": palette[name], "size": 8},
                    name=name,
                    legendgroup=name,
                    showlegend=col == 1,
                    meta={"condition": name, "kind": "curve", "panel": panel},
                    hovertemplate=(
                        f"<b>{name}</b><br>L = %{{x}}<br>{panel.replace('_', ' ')} %{{y:.3f}}"
                        "<extra></extra>"
                    ),
                ),
                row=1,
                col=col,
            )
    for col, panel in enumerate(("singling_out", "linkability"), start=1):
        chance: dict[str, float] = {}
        for name in names:
            r = (reports or {}).get(name)
            if r is None:
                continue
            if panel == "linkability":
                chance[name] = r.baseline.chance_linkability
            elif r.singling_out is not None:
                chance[name] = r.singling_out.chance
        distinct = sorted(set(chance.values()))
        for name, value in chance.items():
            shared = len(distinct) == 1
            if shared and name != next(iter(chance)):
                continue
            label = "chance" if shared else f"{name}: chance"
            fig.add_trace(
                go.Scatter(
                    x=[1, top],
                    y=[value, value],
                    mode="lines",
                    line={
                        "color": CHANCE_COLOR if shared else palette[name],
                        "dash": "dash" if shared else "dot",
                        "width": 1.5,
                    },
                    name=label,
                    legendgroup="chance" if shared else name,
                    showlegend=col == 1 or not shared,
                    meta={"condition": None if shared else name, "kind": "chance", "panel": panel},
                    hovertemplate=f"{label} {value:.3f}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_layout(**base_layout(title={"text": title}, height=440))
    # powers of 2 and 30 (VoicePrivacy's longest conversation), none overprinting ("3032")
    ticks = log_ticks(max(top, 2), candidates=(1, 2, 4, 8, 16, 30, 32, 64, 128), min_fraction=0.1)
    fig.update_xaxes(
        type="log",
        tickvals=ticks,
        title_text="L, utterances averaged per profile",
        range=[-0.08, math.log10(max(top, 2)) + 0.08],
        minor={"showgrid": False},
    )
    fig.update_yaxes(range=[-0.02, 1.04])
    fig.update_yaxes(title_text="Probability", row=1, col=1)
    return fig


# ---------------------------------------------------------------- similarity matrices


def _reordered(m: SimilarityMatrix, order: Sequence[str] | None) -> tuple[list[str], np.ndarray]:
    labels = m.speakers.tolist()
    if order is None:
        return labels, np.arange(len(labels))
    position = {s: k for k, s in enumerate(labels)}
    keep = [s for s in order if s in position]
    keep += [s for s in labels if s not in set(keep)]
    return keep, np.asarray([position[s] for s in keep])


def similarity_matrices_figure(
    result: SimilarityResult,
    *,
    order: Sequence[str] | None = None,
    groups: Mapping[str, str] | None = None,
    original: str = "original",
    anonymised: str = "anonymised",
    title: str | None = None,
) -> go.Figure:
    """The three voice similarity matrices side by side on one colour scale (0 to 1).

    VoicePrivacy 2022: M_oo (original vs original), M_oa (original vs anonymised) and M_aa
    (anonymised vs anonymised). A clear diagonal means speakers are told apart; DeID measures
    how much of M_oo's diagonal M_oa has lost, G_VD how distinctive the anonymised voices stay.
    The hover shows the speaker pair, the matrix value, the mean raw cosine score and the
    number of utterance pairs behind the cell.

    Parameters
    ----------
    result : SimilarityResult
    order : sequence of str, optional
        Display order of the speakers (e.g. by sex then id); speakers not listed follow.
    groups : mapping of speaker to group label, optional
        E.g. each speaker's sex: shown in the hover, with thin lines between groups.
    original, anonymised : str
        Names of the two conditions, for titles and hover.
    title : str, optional
        Defaults to "DeID ... · G_VD ... dB".

    Returns
    -------
    go.Figure
        Traces 0, 1, 2: heat maps of M_oo, M_oa, M_aa (``meta = {"matrix"}``); one colour bar.
    """
    d = result.distinctiveness
    if title is None:
        title = f"{anonymised} against {original}: DeID {d.deid:.3f} · G_VD {d.g_vd:.2f} dB"
    panels = (
        ("oo", result.oo, original, original),
        ("oa", result.oa, original, anonymised),
        ("aa", result.aa, anonymised, anonymised),
    )
    fig = make_subplots(
        rows=1,
        cols=3,
        horizontal_spacing=0.05,
        subplot_titles=[
            f"M<sub>{k}</sub>: {rows} vs {cols}<br>D<sub>diag</sub> = {m.d_diag:.3f}"
            for k, m, rows, cols in panels
        ],
    )
    for col, (key, m, rows, cols) in enumerate(panels, start=1):
        labels, idx = _reordered(m, order)
        sub = np.ix_(idx, idx)
        shown = [f"{s} ({groups[s]})" if groups and s in groups else s for s in labels]
        custom = np.dstack([m.mean_score[sub], m.n_pairs[sub]])
        fig.add_trace(
            go.Heatmap(
                z=m.matrix[sub],
                x=shown,
                y=shown,
                zmin=0.0,
                zmax=1.0,
                colorscale=MATRIX_COLORSCALE,
                showscale=col == 3,
                colorbar={"title": {"text": "M", "side": "right"}, "len": 0.9, "thickness": 14},
                customdata=custom,
                meta={"matrix": key},
                hovertemplate=(
                    f"{rows}: %{{y}}<br>{cols}: %{{x}}<br>M<sub>{key}</sub> = %{{z:.3f}}<br>"
                    "mean raw score %{customdata[0]:.3f}<br>"
                    "%{customdata[1]} ordered utterance pairs<extra></extra>"
                ),
            ),
            row=1,
            col=col,
        )
        if groups:
            kinds = [groups.get(s) for s in labels]
            cuts = [k for k in range(1, len(kinds)) if kinds[k] != kinds[k - 1]]
            for k in cuts:
                for axis in ("x", "y"):
                    ref = "" if col == 1 else str(col)
                    line = {"color": "white", "width": 1.5}
                    if axis == "x":
                        fig.add_shape(
                            type="line",
                            x0=k - 0.5,
                            x1=k - 0.5,
                            y0=-0.5,
                            y1=len(labels) - 0.5,
                            xref=f"x{ref}",
                            yref=f"y{ref}",
                            line=line,
                        )
                    else:
                        fig.add_shape(
                            type="line",
                            y0=k - 0.5,
                            y1=k - 0.5,
                            x0=-0.5,
                            x1=len(labels) - 0.5,
                            xref=f"x{ref}",
                            yref=f"y{ref}",
                            line=line,
                        )
        many = len(labels) > TICK_LABEL_LIMIT
        axis_note = " (sorted by sex, then id)" if groups else ""
        fig.update_xaxes(
            showticklabels=not many,
            title_text=f"{cols} speakers",
            row=1,
            col=col,
            constrain="domain",
            scaleanchor=f"y{'' if col == 1 else col}",
        )
        fig.update_yaxes(
            showticklabels=not many and col == 1,
            autorange="reversed",
            title_text=f"{rows} speakers{axis_note}" if col == 1 else None,
            constrain="domain",
            row=1,
            col=col,
        )
    fig.update_layout(
        **base_layout(
            title={"text": title}, height=470, margin={"l": 60, "r": 30, "t": 120, "b": 50}
        )
    )
    fig.update_annotations(font={"size": 13})
    return fig


# ---------------------------------------------------------------- mean scores (score matrix)


def mean_score_figure(
    table: pd.DataFrame,
    *,
    title: str = "Mean score of each trial speaker against each enrolled speaker",
) -> go.Figure:
    """Heat map of trial-speaker x enrolled-speaker mean scores (docs, Methods > Linkability).

    Parameters
    ----------
    table : DataFrame
        Long format, one row per (trial speaker, enrolled speaker): columns ``trial_speaker``,
        ``enrol_speaker``, ``mean_score`` and ``n_trials``, in display order (rows in order of
        first appearance of ``trial_speaker``, columns of ``enrol_speaker``).
    title : str

    Returns
    -------
    go.Figure
        Trace 0: the heat map (rows: trial speakers; columns: enrolled speakers).

    Examples
    --------
    >>> t = pd.DataFrame({"trial_speaker": ["a", "a", "b", "b"],
    ...                   "enrol_speaker": ["a", "b", "a", "b"],
    ...                   "mean_score": [0.9, 0.1, 0.2, 0.8], "n_trials": [2, 2, 3, 3]})
    >>> mean_score_figure(t).data[0].z.tolist()
    [[0.9, 0.1], [0.2, 0.8]]
    """
    rows = list(dict.fromkeys(table["trial_speaker"]))
    cols = list(dict.fromkeys(table["enrol_speaker"]))
    z = table.pivot(index="trial_speaker", columns="enrol_speaker", values="mean_score")
    n = table.pivot(index="trial_speaker", columns="enrol_speaker", values="n_trials")
    z, n = z.loc[rows, cols], n.loc[rows, cols]
    many = max(len(rows), len(cols)) > TICK_LABEL_LIMIT
    fig = go.Figure(
        go.Heatmap(
            z=z.to_numpy(),
            x=cols,
            y=rows,
            customdata=n.to_numpy(),
            colorscale=MATRIX_COLORSCALE,
            colorbar={"title": {"text": "mean score", "side": "right"}, "thickness": 14},
            hovertemplate=(
                "trial speaker %{y}<br>enrolled speaker %{x}<br>mean score %{z:.3f}<br>"
                "over %{customdata} trials<extra></extra>"
            ),
        )
    )
    fig.update_layout(
        **base_layout(
            title={"text": title}, height=560, margin={"l": 70, "r": 30, "t": 60, "b": 60}
        )
    )
    fig.update_xaxes(
        title_text="enrolled speaker (column of the score matrix)",
        showticklabels=not many,
        constrain="domain",
    )
    fig.update_yaxes(
        title_text="trial speaker (its trials averaged)",
        autorange="reversed",
        showticklabels=not many,
        scaleanchor="x",
        constrain="domain",
    )
    return fig


# ---------------------------------------------------------------- Vauquier et al. 2025, figure 1

LEGAL_ROWS = ("Singling out", "Linkability", "1 - EER")
"""Rows of :func:`legal_figure`, top to bottom, as in the paper."""


def legal_figure(
    evaluations: Mapping[str, LegalEvaluation],
    *,
    attackers: Mapping[str, str] | None = None,
    colors: Mapping[str, str] | None = None,
    title: str = "Singling out, linkability and 1 - EER vs number of speakers",
) -> go.Figure:
    """Vauquier et al. 2025, figure 1: metric rows x conversation-length columns.

    Rows: singling out against the population size N, linkability and 1 - EER against the
    number N' of enrolled candidates. One column per conversation length L found in any
    evaluation; one curve per condition (legend: condition and attacker), the same colour in
    every panel; chance in dashed grey: (1 - 1/N)^(N-1), 1/N' and 0.5. A condition without a
    curve in a panel (too few utterances at that L) is simply absent there.

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> from voxmetrics.metrics.legal import legal_evaluation
    >>> ev = legal_evaluation(demo_study(n_speakers=8).get("plain").embeddings, [1, 2],
    ...                       n_draws=1)
    >>> fig = legal_figure({"plain": ev}, attackers={"plain": "original"})
    >>> sorted({t.meta["kind"] for t in fig.data}), len(fig.layout.annotations)
    (['chance', 'curve'], 6)
    """
    names = list(evaluations)
    palette = _colors(names, colors)
    lengths = sorted({length for ev in evaluations.values() for length in ev.lengths})
    if not lengths:
        lengths = [1]
    fig = make_subplots(
        rows=3,
        cols=len(lengths),
        shared_yaxes=True,
        vertical_spacing=0.09,
        horizontal_spacing=0.04,
        subplot_titles=[f"{row}, L = {length}" for row in LEGAL_ROWS for length in lengths],
    )
    tops = {length: 2 for length in lengths}
    for name in names:
        label = name if not attackers or name not in attackers else f"{name} ({attackers[name]})"
        for r in evaluations[name].results:
            col = lengths.index(r.length) + 1
            curves = []
            if r.singling_out is not None:
                curves.append((1, r.singling_out.n, r.singling_out.value, "singling out"))
            curves.append((2, r.linkability.n, r.linkability.expected, "linkability"))
            curves.append((3, r.eer.n, r.eer.one_minus_eer, "1 - EER"))
            for row, x, y, what in curves:
                tops[r.length] = max(tops[r.length], int(np.max(x)))
                fig.add_trace(
                    go.Scatter(
                        x=x,
                        y=y,
                        mode="lines+markers",
                        line={"color": palette[name], "width": 2},
                        marker={"color": palette[name], "size": 6},
                        name=label,
                        legendgroup=name,
                        showlegend=row == 2 and col == 1,
                        meta={"condition": name, "kind": "curve", "row": what, "L": r.length},
                        hovertemplate=(
                            f"<b>{label}</b><br>L = {r.length}, N = %{{x}}<br>{what} "
                            "%{y:.3f}<extra></extra>"
                        ),
                    ),
                    row=row,
                    col=col,
                )
    chances = (
        (1, lambda n: (1.0 - 1.0 / n) ** (n - 1)),
        (2, lambda n: 1.0 / n),
        (3, lambda n: np.full(n.shape, 0.5)),
    )
    for length in lengths:
        col = lengths.index(length) + 1
        dense = np.unique(np.round(np.geomspace(2, tops[length], 120)).astype(int))
        for row, chance in chances:
            fig.add_trace(
                go.Scatter(
                    x=dense,
                    y=chance(dense.astype(float)),
                    mode="lines",
                    line={"color": CHANCE_COLOR, "dash": "dash", "width": 1.5},
                    name="chance",
                    legendgroup="chance",
                    showlegend=row == 1 and col == 1,
                    meta={"condition": None, "kind": "chance", "row": LEGAL_ROWS[row - 1]},
                    hovertemplate="chance at N = %{x}: %{y:.3f}<extra></extra>",
                ),
                row=row,
                col=col,
            )
        fig.update_xaxes(
            type="log",
            # panels side by side are narrow: fewer ticks, none overprinting
            tickvals=_log_ticks(tops[length], min_fraction=0.05 * len(lengths)),
            minor={"showgrid": False},
            col=col,
        )
    fig.update_xaxes(title_text="speakers N or N' (log)", row=3)
    fig.update_yaxes(range=[-0.02, 1.04])
    for row, name in enumerate(LEGAL_ROWS, start=1):
        fig.update_yaxes(title_text=name, row=row, col=1)
    fig.update_layout(**base_layout(title={"text": title}, height=820))
    return fig
