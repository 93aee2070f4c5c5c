"""Figures of similarity rank disclosure (the SRD page; Bäckström et al. 2026).

Every builder takes the result objects of :mod:`voxmetrics.metrics.srd` (or the reports that
carry them) and only arranges their arrays for display: the rank probabilities are
``SRDResult.distribution``, the models ``BetaBinomialFit.pmf``, the statistics
``SRDStats``. The only arithmetic done here is for display: dropping zero probabilities from a
log axis, cumulative sums of a given distribution for a CDF, and the max / mean / std of a given
set of per-speaker MeanD values for a legend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from voxmetrics.analysis.srd import mean_d_summary
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.metrics.srd import BetaBinomialFit, SpeakerSRD, SRDResult
from voxmetrics.plots.style import (
    CHANCE_COLOR,
    CONDITION_PALETTE,
    base_layout,
    condition_colors,
    log_ticks,
)

__all__ = [
    "CONDITION_PALETTE",
    "LOSS_DASH",
    "condition_colors",
    "mean_d_bar_figure",
    "rank_distribution_figure",
    "speaker_mean_d_figure",
    "speaker_rank_figure",
]


LOSS_DASH: dict[str, str] = {
    "LL": "dash",
    "MS": "longdash",
    "WMS": "dashdot",
    "RWMS": "longdashdot",
    "CLL": "dot",
}
"""Line style of the model fitted with each loss (every model line is broken, data solid)."""


def _colors(names: Sequence[str], colors: Mapping[str, str] | None) -> dict[str, str]:
    default = condition_colors(names)
    return {n: (colors or {}).get(n, default[n]) for n in names}


def _fit_label(fit: BetaBinomialFit) -> str:
    return f"{fit.loss} model" + ("" if fit.converged else " (did not converge)")


def rank_distribution_figure(
    results: Mapping[str, SRDResult],
    fits: Mapping[str, Sequence[BetaBinomialFit]] | None = None,
    *,
    colors: Mapping[str, str] | None = None,
    log: bool = True,
    title: str = "Rank of the true speaker",
) -> go.Figure:
    """Empirical rank distributions, their beta-binomial models and the chance level 1/N.

    Bäckström et al. 2026, figure 5: the rank probabilities p_k = h_k / T of each condition as dots,
    the models of that condition as broken lines of the same colour (one dash style per loss), and
    the chance level 1/N dotted. On log-log axes (``log=True``) ranks with p_k = 0 are left out
    of the data trace (:func:`voxmetrics.analysis.srd.zero_rank_counts` says how many; a line
    would bridge them, so the data are dots only) and the y axis starts a little below the
    smallest non-zero probability, so models falling to tiny values do not squash the data. On
    linear axes every rank is drawn and the dots are joined.

    Parameters
    ----------
    results : mapping of condition name to SRDResult
    fits : mapping of condition name to sequence of BetaBinomialFit, optional
        Models drawn for each condition (fits that did not converge are labelled so).
    colors : mapping of condition name to colour, optional
        Defaults to :func:`condition_colors` of the names in ``results``.
    log : bool
        Log-log axes (default) or linear ones.
    title : str

    Returns
    -------
    go.Figure
        Each trace has ``meta = {"condition", "kind", "loss"}`` with ``kind`` in
        {"data", "model", "chance"}.

    Examples
    --------
    Ranks 1, 1, 2, 3 of 3 (so p = [1/2, 1/4, 1/4]) with their LL model:

    >>> from voxmetrics.metrics.srd import fit_beta_binomial, srd
    >>> S = [[.9, .1, .2], [.8, .3, .1], [.5, .4, .1], [.9, .8, .1]]
    >>> r = srd(S, [0, 0, 1, 2])
    >>> fig = rank_distribution_figure({"a": r}, {"a": [fit_beta_binomial(r.histogram, loss="LL")]})
    >>> [t.meta["kind"] for t in fig.data], [float(y) for y in fig.data[0].y]
    (['data', 'model', 'chance'], [0.5, 0.25, 0.25])
    """
    names = list(results)
    palette = _colors(names, colors)
    fig = go.Figure()
    smallest = 1.0
    for name in names:
        r = results[name]
        p = r.distribution
        ranks = np.arange(1, r.n_enrolled + 1)
        keep = p > 0 if log else np.ones(p.size, dtype=bool)
        if keep.any():
            smallest = min(smallest, float(p[keep & (p > 0)].min(initial=1.0)))
        color = palette[name]
        fig.add_trace(
            go.Scatter(
                x=ranks[keep],
                y=p[keep],
                customdata=r.histogram[keep],
                # on a log axis the zeros are dropped: a line would bridge them, so dots only
                mode="markers" if log else "lines+markers",
                line={"color": color, "width": 2},
                marker={"color": color, "size": 7 if log else 5},
                name=f"{name}: data",
                legendgroup=name,
                meta={"condition": name, "kind": "data", "loss": None},
                hovertemplate=(
                    f"<b>{name}</b><br>rank %{{x}}<br>p = %{{y:.3g}} (%{{customdata}} of "
                    f"{r.n_trials} trials)<extra></extra>"
                ),
            )
        )
        for fit in (fits or {}).get(name, ()):
            fig.add_trace(
                go.Scatter(
                    x=ranks,
                    y=fit.pmf,
                    mode="lines",
                    line={"color": color, "width": 1.5, "dash": LOSS_DASH.get(fit.loss, "dash")},
                    opacity=1.0 if fit.converged else 0.45,
                    name=f"{name}: {_fit_label(fit)}",
                    legendgroup=name,
                    meta={"condition": name, "kind": "model", "loss": fit.loss},
                    hovertemplate=(
                        f"<b>{name}</b>, {_fit_label(fit)}<br>α = {fit.alpha:.3g}, "
                        f"β = {fit.beta:.3g}<br>rank %{{x}}<br>γ = %{{y:.3g}}<extra></extra>"
                    ),
                )
            )
    for n in sorted({results[name].n_enrolled for name in names}):
        fig.add_trace(
            go.Scatter(
                x=[1, n],
                y=[1 / n, 1 / n],
                mode="lines",
                line={"color": CHANCE_COLOR, "dash": "dot", "width": 1.5},
                name=f"chance 1/N = {1 / n:.3g}" + (f" (N = {n})" if len(names) > 1 else ""),
                meta={"condition": None, "kind": "chance", "loss": None},
                hovertemplate=f"chance 1/N, N = {n}<extra></extra>",
            )
        )
    fig.update_layout(**base_layout(title={"text": title}, height=600))
    fig.update_layout(legend={"y": -0.14, "font": {"size": 12}}, margin={"b": 150})
    x_title = "rank of the true speaker among the N enrolled (1 = most similar)"
    if log:
        top = max((results[n].n_enrolled for n in names), default=2)
        fig.update_xaxes(
            type="log",
            title_text=x_title,
            range=[-0.05, math.log10(top) + 0.05],
            tickvals=_log_ticks(top),
            minor={"showgrid": False},
        )
        fig.update_yaxes(
            type="log",
            title_text="probability of the rank (log)",
            range=[math.log10(smallest) - 0.7, 0.15],
            dtick=1,
            exponentformat="power",
        )
    else:
        fig.update_xaxes(title_text=x_title, rangemode="tozero")
        fig.update_yaxes(title_text="probability of the rank", rangemode="tozero")
    return fig


def _log_ticks(top: int) -> list[int]:
    """Rank ticks 1, 2, 5, 10, 20, 50... up to N, and N itself, none overprinting."""
    return log_ticks(top)


def mean_d_bar_figure(
    reports: Sequence[ConditionReport],
    *,
    colors: Mapping[str, str] | None = None,
    title: str = "Mean disclosure per condition",
) -> go.Figure:
    """MeanD of the data (solid bars) and of the CLL model (hatched bars) per condition.

    Uses ``report.srd.stats.mean_d`` and ``report.srd_model.stats.mean_d``; the largest
    possible MeanD, log2 N (every trial at rank 1), is drawn as a dotted line per condition.
    Conditions without ranks (a sparse trial list without a complete trial) are left out.

    Returns
    -------
    go.Figure
        Trace 0: data bars, trace 1: model bars, trace 2: the log2 N markers.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate
    >>> from voxmetrics.data import ScoreMatrix
    >>> sm = ScoreMatrix.from_arrays(
    ...     [[.9, .1, .2], [.8, .3, .1], [.5, .4, .1], [.9, .8, .1]],
    ...     trial_ids=["t1", "t2", "t3", "t4"], trial_speakers=["a", "a", "b", "c"],
    ...     enrol_speakers=["a", "b", "c"])
    >>> fig = mean_d_bar_figure([evaluate(sm, name="x")])
    >>> [round(float(t.y[0]), 3) for t in fig.data]
    [0.085, 0.08, 1.585]
    """
    # no ranks: a sparse list without a complete trial; no model: ranks pooled over groups
    ranked = [(r.name, r.srd, r.srd_model) for r in reports if r.srd is not None]
    names = [name for name, _, _ in ranked]
    palette = _colors(names, colors)
    bar_colors = [palette[n] for n in names]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=names,
            y=[srd.stats.mean_d for _, srd, _ in ranked],
            marker={"color": bar_colors},
            name="data",
            offsetgroup="data",
            hovertemplate="<b>%{x}</b><br>data MeanD = %{y:.3f} bits<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            x=names,
            y=[None if model is None else model.stats.mean_d for _, _, model in ranked],
            marker={
                "color": "white",
                "line": {"color": bar_colors, "width": 1.5},
                "pattern": {"shape": "/", "fgcolor": bar_colors, "size": 8},
            },
            customdata=[
                ["" if model is None or model.converged else " (did not converge)"]
                for _, _, model in ranked
            ],
            name="CLL model",
            offsetgroup="model",
            hovertemplate=(
                "<b>%{x}</b><br>CLL model MeanD = %{y:.3f} bits%{customdata[0]}<extra></extra>"
            ),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=names,
            y=[math.log2(srd.n_enrolled) for _, srd, _ in ranked],
            mode="markers",
            marker={"symbol": "line-ew-open", "size": 40, "line": {"color": CHANCE_COLOR}},
            name="largest possible, log2 N",
            hovertemplate="%{x}: log2 N = %{y:.3f} bits<extra></extra>",
        )
    )
    fig.update_layout(**base_layout(title={"text": title}, height=420, barmode="group"))
    fig.update_yaxes(title_text="MeanD (bits)", rangemode="tozero")
    return fig


def speaker_rank_figure(
    speakers: SpeakerSRD,
    speaker: str,
    fits: Sequence[BetaBinomialFit] = (),
    *,
    color: str = CONDITION_PALETTE[0],
    title: str | None = None,
) -> go.Figure:
    """One speaker's rank distribution and its cumulative distribution, with models.

    Bäckström et al. 2026, figure 7, on linear axes (a speaker's histogram is mostly zeros): left,
    the speaker's rank probabilities h_k / T_s as bars and each model's pmf as a broken line; right,
    the empirical CDF as a step line and each model's CDF (cumulative sums of the given
    distributions).

    Parameters
    ----------
    speakers : SpeakerSRD
        Per-speaker histograms (:func:`voxmetrics.metrics.srd.srd_per_speaker`).
    speaker : str
        One of ``speakers.speakers``.
    fits : sequence of BetaBinomialFit
        Models of this speaker's histogram (e.g. its LL fit ``speakers.fits[i]`` and a CLL fit).
    color : str
        The condition's colour.
    title : str, optional

    Returns
    -------
    go.Figure
        Traces: data bars, one pmf line per fit (left), empirical CDF, one CDF per fit (right).

    Examples
    --------
    >>> from voxmetrics.metrics.srd import srd_per_speaker
    >>> sp = srd_per_speaker([1, 2, 1, 3], ["a", "a", "b", "b"], 3)
    >>> fig = speaker_rank_figure(sp, "a", [sp.fits[0]])
    >>> [float(v) for v in fig.data[0].y], [float(v) for v in fig.data[2].y]
    ([0.5, 0.5, 0.0], [0.0, 0.5, 1.0, 1.0])
    """
    matches = np.flatnonzero(speakers.speakers == speaker)
    if matches.size == 0:
        raise ValueError(f"speaker {speaker!r} is not in this SpeakerSRD.")
    i = int(matches[0])
    h = speakers.histograms[i]
    n_trials = int(h.sum())
    p = h / n_trials
    ranks = np.arange(1, h.size + 1)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("Rank distribution", "Cumulative distribution"),
        horizontal_spacing=0.1,
    )
    fig.add_trace(
        go.Bar(
            x=ranks,
            y=p,
            customdata=h,
            marker={"color": color, "line": {"width": 0}},
            opacity=0.55,
            name=f"data ({n_trials} trials)",
            legendgroup="data",
            meta={"kind": "data", "loss": None},
            hovertemplate="rank %{x}<br>p = %{y:.3f} (%{customdata} trials)<extra></extra>",
        ),
        row=1,
        col=1,
    )
    model_color = "#333333"
    for fit in fits:
        fig.add_trace(
            go.Scatter(
                x=ranks,
                y=fit.pmf,
                mode="lines",
                line={"color": model_color, "dash": LOSS_DASH.get(fit.loss, "dash"), "width": 2},
                name=f"{_fit_label(fit)}, α = {fit.alpha:.3g}, β = {fit.beta:.3g}",
                legendgroup=fit.loss,
                meta={"kind": "model", "loss": fit.loss},
                hovertemplate=f"{fit.loss} model<br>rank %{{x}}<br>γ = %{{y:.3g}}<extra></extra>",
            ),
            row=1,
            col=1,
        )
    cdf_ranks = np.arange(h.size + 1)  # from (0, 0), so the first step shows
    fig.add_trace(
        go.Scatter(
            x=cdf_ranks,
            y=np.concatenate([[0.0], np.cumsum(p)]),
            mode="lines",
            line={"color": color, "width": 2.5, "shape": "hv"},
            name="data CDF",
            legendgroup="data",
            showlegend=False,
            meta={"kind": "data_cdf", "loss": None},
            hovertemplate="rank ≤ %{x}: %{y:.3f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    for fit in fits:
        fig.add_trace(
            go.Scatter(
                x=cdf_ranks,
                y=np.concatenate([[0.0], np.cumsum(fit.pmf)]),
                mode="lines",
                line={"color": model_color, "dash": LOSS_DASH.get(fit.loss, "dash"), "width": 2},
                name=f"{fit.loss} model CDF",
                legendgroup=fit.loss,
                showlegend=False,
                meta={"kind": "model_cdf", "loss": fit.loss},
                hovertemplate=f"{fit.loss} model<br>rank ≤ %{{x}}: %{{y:.3f}}<extra></extra>",
            ),
            row=1,
            col=2,
        )
    fig.update_layout(
        **base_layout(title={"text": title or f"Speaker {speaker}"}, height=440, bargap=0.1)
    )
    fig.update_layout(legend={"y": -0.2}, margin={"b": 90})
    fig.update_xaxes(title_text="rank", range=[0.5, h.size + 0.5], row=1, col=1)
    fig.update_xaxes(title_text="rank k", range=[0, h.size + 0.5], row=1, col=2)
    fig.update_yaxes(title_text="probability", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="P(rank ≤ k)", range=[0, 1.05], row=1, col=2)
    return fig


def speaker_mean_d_figure(
    speakers: SpeakerSRD,
    *,
    source: str = "model",
    color: str = CONDITION_PALETTE[0],
    title: str | None = None,
    bins: int = 20,
) -> go.Figure:
    """Distribution of the per-speaker mean disclosure (Bäckström et al. 2026, figure 6).

    Bars count the speakers per MeanD bin between 0 and log2 N (``bins`` equal bins, the last
    one closed).

    Parameters
    ----------
    speakers : SpeakerSRD
    source : {"model", "empirical"}
        "model": ``model_mean_d``, the MeanD of each speaker's LL beta-binomial model, as in the
        paper; the speakers whose fit did not converge are not hidden but stacked on top, grey
        and hatched, at their empirical MeanD (their histograms are often degenerate, e.g. every
        trial at rank 1). "empirical": ``empirical_mean_d`` of every speaker.
    color : str
        The condition's colour.
    title : str, optional
    bins : int

    Returns
    -------
    go.Figure
        Trace 0: speakers per bin (its name carries their max, mean and std); with
        ``source="model"`` and failed fits, trace 1: the speakers whose fit did not converge.

    Examples
    --------
    >>> from voxmetrics.metrics.srd import srd_per_speaker
    >>> sp = srd_per_speaker([1, 2, 1, 3], ["a", "a", "b", "b"], 3)
    >>> fig = speaker_mean_d_figure(sp, source="empirical", bins=4)
    >>> [int(v) for v in fig.data[0].y], fig.data[0].name
    ([0, 2, 0, 0], 'empirical MeanD of 2 speakers: max 0.58, mean 0.58, std 0.00 bits')
    """
    if source not in ("model", "empirical"):
        raise ValueError(f"source must be 'model' or 'empirical', got {source!r}.")
    values = speakers.model_mean_d if source == "model" else speakers.empirical_mean_d
    summary = mean_d_summary(values)
    top = math.log2(speakers.histograms.shape[1])
    edges = np.linspace(0.0, top, bins + 1)
    centers = (edges[:-1] + edges[1:]) / 2
    width = top / bins

    def counts(v: np.ndarray) -> np.ndarray:
        # clip: a model's MeanD can exceed log2 N by rounding only
        return np.histogram(np.clip(v, 0.0, top), bins=edges)[0]

    label = "LL model" if source == "model" else "empirical"
    plural = "s" if summary.n != 1 else ""
    if summary.n:
        name = (
            f"{label} MeanD of {summary.n} speaker{plural}: max {summary.max:.2f}, "
            f"mean {summary.mean:.2f}, std {summary.std:.2f} bits"
        )
    else:
        name = f"{label} MeanD: no speaker has a value"
    shown = counts(values[np.isfinite(values)])
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=centers,
            y=shown,
            width=width,
            marker={"color": color, "line": {"color": "white", "width": 1}},
            name=name,
            showlegend=True,
            hovertemplate="MeanD %{x:.2f} bits<br>%{y} speakers<extra></extra>",
        )
    )
    failed = ~np.isfinite(values)
    total = shown
    if source == "model" and failed.any():
        stacked = counts(speakers.empirical_mean_d[failed])
        n_failed = int(failed.sum())
        total = shown + stacked
        fig.add_trace(
            go.Bar(
                x=centers,
                y=stacked,
                width=width,
                marker={
                    "color": "white",
                    "line": {"color": CHANCE_COLOR, "width": 1},
                    "pattern": {"shape": "/", "fgcolor": CHANCE_COLOR, "size": 6},
                },
                name=f"{n_failed} speaker{'s' if n_failed != 1 else ''} whose fit did not "
                "converge, at the MeanD of their data",
                hovertemplate="MeanD %{x:.2f} bits (data)<br>%{y} speakers<extra></extra>",
            )
        )
    fig.add_vline(x=top, line={"color": CHANCE_COLOR, "dash": "dot", "width": 1})
    fig.add_annotation(
        x=top,
        y=1.0,
        yref="paper",
        text="log2 N",
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        font={"color": CHANCE_COLOR, "size": 11},
    )
    fig.update_layout(
        **base_layout(
            title={"text": title or "Mean disclosure per speaker"},
            height=420,
            barmode="stack",
            bargap=0,
        )
    )
    fig.update_layout(legend={"y": -0.2, "traceorder": "normal"}, margin={"b": 110})
    fig.update_xaxes(title_text="MeanD of the speaker (bits)", range=[-0.05 * top, 1.05 * top])
    fig.update_yaxes(
        title_text="speakers", rangemode="tozero", dtick=1 if total.max(initial=0) <= 8 else None
    )
    return fig
