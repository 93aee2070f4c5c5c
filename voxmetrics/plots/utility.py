"""Privacy against utility: one point per condition and attacker, the Pareto front drawn.

Presentation only: the points, their intervals and the front come from
:class:`~voxmetrics.analysis.tradeoff.Tradeoff`; nothing here compares two conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from voxmetrics.analysis.anonymisers import anonymiser_of
from voxmetrics.analysis.tradeoff import Tradeoff, TradeoffPoint
from voxmetrics.plots.style import base_layout, condition_colors

__all__ = ["ATTACKER_SYMBOLS", "label_groups", "tradeoff_figure"]

ATTACKER_SYMBOLS: dict[str, str] = {
    "original": "star",
    "ignorant": "square",
    "lazy-informed": "diamond",
    "semi-informed": "circle",
    "informed": "triangle-up",
}
"""Marker symbol of each attacker knowledge level (the original speech: a star)."""

REFERENCE_COLOR = "#000000"
"""The original speech's marker: black, the colour kept for references."""
FRONT_COLOR = "#444444"
"""The Pareto front's line."""

_NEAR_X = 0.12
"""Points closer than this share of the x span (about a label's width) ..."""
_NEAR_Y = 0.05
"""... and this share of the y span (about a label's height) share one label."""
_CHAR_X = 0.012
"""About one character's width as a share of the x span: longer labels need more room."""


def _span(values: Sequence[float]) -> float:
    return (max(values) - min(values)) or 1.0


def _xy(p: TradeoffPoint) -> tuple[float, float]:
    """A plotted point's privacy and utility (both known: see ``TradeoffPoint.plotted``)."""
    assert p.privacy is not None and p.utility is not None
    return p.privacy, p.utility


def label_groups(
    points: Sequence[TradeoffPoint], names: Sequence[str] | None = None
) -> list[list[int]]:
    """Indices of ``points`` grouped so that each group gets one label (no overprinting).

    Points at the same place, or closer than about a label's size (12 % of the x span, or
    more for long ``names``: about 1.2 % a character, and 5 % of the y span), form one group;
    the first point of a group carries the names of all of them.

    Examples
    --------
    >>> p = [TradeoffPoint("a", "semi-informed", 0.3, 0.05),
    ...      TradeoffPoint("b", "semi-informed", 0.3, 0.05),
    ...      TradeoffPoint("c", "semi-informed", 0.1, 0.50)]
    >>> label_groups(p)
    [[0, 1], [2]]
    """
    xs = [p.privacy for p in points]
    ys = [p.utility for p in points]
    if not points:
        return []
    sx, sy = _span(xs), _span(ys)  # type: ignore[arg-type]
    width = [len(n) for n in names] if names is not None else [0] * len(points)
    groups: list[list[int]] = []
    for k, p in enumerate(points):
        for g in groups:
            q = points[g[0]]
            room = max(_NEAR_X, _CHAR_X * (width[k] + width[g[0]]) / 2)
            if (
                abs(p.privacy - q.privacy) <= room * sx  # type: ignore[operator]
                and abs(p.utility - q.utility) <= _NEAR_Y * sy  # type: ignore[operator]
            ):
                g.append(k)
                break
        else:
            groups.append([k])
    return groups


def _positions(xs: Sequence[float], lo: float, hi: float, side: str) -> list[str]:
    """Labels point inwards near both ends of the x axis, so they stay inside the axes."""
    span = (hi - lo) or 1.0
    return [
        f"{side} right"
        if x < lo + 0.15 * span
        else f"{side} left"
        if x > hi - 0.15 * span
        else f"{side} center"
        for x in xs
    ]


def _name(p: TradeoffPoint, several_attackers: bool, attacker: str | None = None) -> str:
    """A point's label: its anonymiser alone in one attacker's plane (the title names it)."""
    if attacker is not None:
        return anonymiser_of(p.condition, p.attacker)
    return f"{p.condition} ({p.attacker})" if several_attackers else p.condition


def _fronts(tradeoff: Tradeoff) -> tuple[list[float | None], list[float | None]]:
    """Each attacker's front, one after the other, a gap (None) between two attackers'."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for k, attacker in enumerate(tradeoff.attackers):
        front = tradeoff.front_of(attacker)
        if k and front and xs:
            xs.append(None)
            ys.append(None)
        xs += [p.privacy for p in front]
        ys += [p.utility for p in front]
    return xs, ys


def _errors(points: Sequence[TradeoffPoint], axis: str) -> dict[str, object] | None:
    ivs = [p.privacy_interval if axis == "x" else p.utility_interval for p in points]
    if all(iv is None for iv in ivs):
        return None
    vals = [_xy(p)[0 if axis == "x" else 1] for p in points]  # the points are plotted
    return {
        "type": "data",
        "symmetric": False,
        "array": [None if iv is None else iv[1] - v for iv, v in zip(ivs, vals, strict=True)],
        "arrayminus": [None if iv is None else v - iv[0] for iv, v in zip(ivs, vals, strict=True)],
        "thickness": 1.2,
        "width": 3,
        "visible": True,
    }


def tradeoff_figure(
    tradeoff: Tradeoff,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = None,
    attacker: str | None = None,
) -> go.Figure:
    """Privacy (x) against utility (y), one marker per condition and attacker.

    Each condition is a marker in its colour, shaped by its attacker, with its 95 % intervals
    as error bars where known; each attacker's Pareto front joins its anonymised conditions no
    other one of that attacker dominates (a dashed staircase, the edge of the region they
    dominate; two attackers' fronts are never joined); the original speech (every condition
    under the ``original`` attacker, and the chosen reference) is a black star. The axis titles
    say which way is better. Coinciding or nearly coinciding points share one label
    (:func:`label_groups`), so no label overprints another.

    With ``attacker`` only that attacker's conditions are drawn, with its front and the
    original speech, labelled by their anonymiser alone (the title names the attacker).

    Parameters
    ----------
    tradeoff : Tradeoff
        The points (:func:`voxmetrics.analysis.tradeoff.report_tradeoff`).
    colors : mapping, optional
        Condition name -> colour (:func:`~voxmetrics.plots.style.condition_colors` of the
        study, so each condition keeps its colour on every page).
    title : str, optional
        Figure title (default: "<privacy> vs <utility>", and the attacker when given).
    attacker : str, optional
        Draw this attacker's plane only.

    Returns
    -------
    go.Figure
        Trace 0: the anonymised conditions; trace 1: the Pareto front; trace 2 (when present):
        the original speech.

    Examples
    --------
    >>> from voxmetrics.analysis.tradeoff import ConditionNumbers, privacy_utility_tradeoff
    >>> t = privacy_utility_tradeoff([
    ...     ConditionNumbers("orig", "original", {"eer": 0.02, "wer": 0.02}),
    ...     ConditionNumbers("a", "semi-informed", {"eer": 0.3, "wer": 0.05}),
    ...     ConditionNumbers("b", "semi-informed", {"eer": 0.45, "wer": 0.5})])
    >>> [t.name for t in tradeoff_figure(t).data]
    ['conditions', 'Pareto front', 'original speech']
    """
    colors = dict(colors or condition_colors([p.condition for p in tradeoff.points]))
    if attacker is not None:
        tradeoff = tradeoff.of_attacker(attacker)
    plotted = [p for p in tradeoff.points if p.plotted and not p.reference]
    several = len({p.attacker for p in tradeoff.points if p.plotted}) > 1
    refs = [p for p in tradeoff.references if p.plotted]
    everything = plotted + refs
    names = [_name(p, several, attacker) for p in everything]
    labels = [""] * len(everything)  # one per group of nearby points, on its first point
    for group in label_groups(everything, names):
        shown = ", ".join(dict.fromkeys(names[k] for k in group))
        if group[0] >= len(plotted):  # the original speech's star says so once
            shown = "original speech" if shown == "original" else f"{shown}: original speech"
        labels[group[0]] = shown
    xs = [_xy(p)[0] for p in plotted]
    ys = [_xy(p)[1] for p in plotted]
    all_x = [_xy(p)[0] for p in everything]
    lo, hi = (min(all_x), max(all_x)) if all_x else (0.0, 1.0)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers+text",
            text=labels[: len(plotted)],
            textposition=_positions(xs, lo, hi, "top"),
            customdata=[[p.condition, p.attacker, p.on_front] for p in plotted],
            marker={
                "size": 12,
                "color": [colors.get(p.condition, "#0072B2") for p in plotted],
                "symbol": [ATTACKER_SYMBOLS.get(p.attacker, "circle") for p in plotted],
                "line": {"width": 1, "color": "white"},
            },
            error_x=_errors(plotted, "x"),
            error_y=_errors(plotted, "y"),
            name="conditions",
            hovertemplate=(
                "<b>%{customdata[0]}</b> (%{customdata[1]})<br>"
                f"{tradeoff.privacy_label} %{{x:.3f}}<br>{tradeoff.utility_label} %{{y:.3f}}"
                "<br>on the front: %{customdata[2]}<extra></extra>"
            ),
        )
    )
    front_x, front_y = _fronts(tradeoff)
    fig.add_trace(
        go.Scatter(
            x=front_x,
            y=front_y,
            mode="lines",
            # a staircase: the edge of what the front's points dominate, x (privacy) first
            line={"color": FRONT_COLOR, "dash": "dash", "width": 1.5, "shape": "hv"},
            name="Pareto front",
            hoverinfo="skip",
        )
    )
    if refs:
        fig.add_trace(
            go.Scatter(
                x=[_xy(p)[0] for p in refs],
                y=[_xy(p)[1] for p in refs],
                mode="markers+text",
                text=labels[len(plotted) :],
                textposition=_positions([_xy(p)[0] for p in refs], lo, hi, "bottom"),
                customdata=[[p.condition] for p in refs],
                marker={"size": 16, "color": REFERENCE_COLOR, "symbol": "star"},
                error_x=_errors(refs, "x"),
                error_y=_errors(refs, "y"),
                name="original speech",
                hovertemplate=(
                    f"<b>%{{customdata[0]}}</b> (original speech)<br>{tradeoff.privacy_label} "
                    f"%{{x:.3f}}<br>{tradeoff.utility_label} %{{y:.3f}}<extra></extra>"
                ),
            )
        )
    p_dir = "higher" if tradeoff.privacy_higher_is_better else "lower"
    u_dir = "higher" if tradeoff.utility_higher_is_better else "lower"
    return fig.update_layout(
        base_layout(
            title=title
            or f"{tradeoff.privacy_label} vs {tradeoff.utility_label}"
            + ("" if attacker is None else f": {attacker} attacker"),
            xaxis_title=f"{tradeoff.privacy_label} ({p_dir} is more private)",
            yaxis_title=f"{tradeoff.utility_label} ({u_dir} is more useful)",
        )
    )
